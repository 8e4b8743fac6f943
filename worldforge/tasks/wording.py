"""Questions in a user's voice: why they ask (a purpose), what they want (the rows, with the
constraints worded from the packs' `ask` phrases), when (the date the answer should hold at,
or the period it covers), and how (every column with a short formatting instruction), then
how to answer. Every part has several phrasings, picked by the task's generator, so the
questions do not read alike; their length is in WideSearch's range (a few hundred to a
thousand characters).
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np

from ..plumbing import stable_hash
from ..web.text import format_date
from ..world.parts import part_phrase
from .schema import DATE, LIST, NUMBER, STRING, URL, Atom, Column, TaskSchema
from .table import fill, range_text

PURPOSES = {
    "filter": [
        "I'm putting together a reference sheet on {plural} for a research project, and it has to be complete.",
        "For a market overview I'm writing, I need an exhaustive list of certain {plural}.",
        "I'm building a small dataset about {plural} and I want it to cover every case, not just the well-known ones.",
        "My team is checking our internal records on {plural} against public sources.",
        "I'm preparing a briefing and need reliable, complete data on some {plural}.",
        "I'm doing background research and want one clean table of {plural} I can sort and filter.",
        "Our newsletter is running a feature on {plural}, and the editor wants the list checked against sources.",
        "I'm auditing a spreadsheet someone else made about {plural}; it looks incomplete.",
        "A client asked for a one-page summary of {plural}, and it must not miss any.",
        "I'm a student writing a term paper, and my supervisor wants every relevant {plural} accounted for."],
    "ranked": [
        "I'm writing a comparison piece and want to see which {plural} come out on top.",
        "For a chart in my report I need a ranked list of {plural}.",
        "I'm trying to get a sense of scale: which {plural} lead the field?",
        "I need a league table of {plural} for a presentation next week.",
        "I'm shortlisting {plural} for a comparison and only want the extremes.",
        "A reader wrote in asking which {plural} stand out, and I want to answer with sources."],
    "timeline": [
        "I'm writing a short history and need the full succession, not just the recent years.",
        "I'm tracing how leadership and membership changed over time, so every period matters.",
        "For a timeline graphic I'm designing I need every tenure, start to finish.",
        "I'm reconstructing a history from scattered sources and want it in one table.",
        "For an anniversary piece I need the complete record of who was where and when.",
        "I'm checking a biography draft whose dates don't add up."],
    "events": [
        "I'm compiling a chronology and need every event of one kind in a period.",
        "For a timeline I'm drawing up, I want each occurrence with its exact date.",
        "I'm studying activity over a period and need the complete record, one row per event.",
        "I'm fact-checking an article and need every such event in the period, dated.",
        "I'm putting numbers on a trend and need each event, not a rough count.",
        "For an archive project I volunteer on, I need the entries this period is missing."],
}
# Task rules: what counts and where to look; each true of how the gold is built.
# (no rule says how hard the search is or where lists fall short: that is the agent's to find)
RULES = {
    "filter": ["Only count those that meet every condition on that date; former ones don't count."],
    "ranked": ["Use each one's figure as of that date, not an older one.",
               "Rank them on the figure itself; rounded numbers in summaries are not enough to decide close calls."],
    "timeline": ["Include tenures that had already ended as well as current ones."],
    "events": ["Date each event by when it happened, not by when it was reported."],
}
ASKS = {
    "filter": ["Please find every one of the {what}.", "Could you list all {what}?", "I need all {what}.",
               "Find each of the {what}, without skipping any.", "Which are the {what}? I need every one of them."],
    "ranked": ["Please list {what}.", "Which are {what}?", "Find {what}.", "I need {what}."],
    "timeline": ["Please list {what}.", "Could you find {what}?", "I need {what}.", "Find {what}, with when each began and ended."],
    "events": ["Please list {what}.", "Could you find {what}?", "I need {what}.", "Find {what}."],
}
WHEN_NOW = ["Give the situation as of {date}.", "Everything should hold as of {date}.", "Use the facts as they stand on {date}.",
            "Where something has changed over time, report it as of {date}."]
WHEN_HISTORY = ["Cover the whole history up to {date}, current holders included.", "Go back as far as the records go, up to {date}.",
                "Include past and present tenures, up to {date}."]
COLUMN_LEADS = ["The table should have these columns: {cols}.", "Use exactly these columns: {cols}.",
                "Columns, in this order: {cols}.", "I need the following columns: {cols}."]
CLOSINGS = [
    "Include every {one} that qualifies, even if the list gets long, and nothing that doesn't. Reply with a single "
    "Markdown table with exactly those column headers, one row per {one}.",
    "Don't leave any {one} out and don't add any that don't fit. Answer with one markdown table using those headers, "
    "one row for each {one}.",
    "Completeness matters more than speed here. Return the result as one Markdown table with exactly these column "
    "names, one {one} per row.",
    "If a value is genuinely missing, write 'unknown' rather than guessing. Put everything in a single markdown table "
    "with those column headers and one row per {one}."]
NOT_WORDS = ["excluding those {x}", "except those {x}", "leaving out those {x}"]
OR_WORDS = ["as well as those {x}", "and also those {x}"]


class Wording:
    def __init__(self, schema: TaskSchema, rng: np.random.Generator, as_of: dt.date):
        self.s = schema
        self.rng = rng
        self.as_of = as_of

    def pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    def date(self) -> str:
        return format_date(self.as_of, 0)

    # ------------------------------------------------------------------ constraints

    def atom_text(self, t: str, atom: Atom) -> tuple[str, list[str]]:
        """The qualifier for a constraint ('headquartered in a city in Braeria') and the values it names."""
        s = self.s
        if atom.scope:
            name = s.a.name(atom.value)
            st = atom.path[0]
            if len(atom.path) == 1:
                return fill(self.pick(s.asks(st.source, st.name)), name), [name]
            phrase = part_phrase(s.world, st.source, st.name, s.plural(st.target))
            if phrase is not None:  # through a link that is no location, as the web's list names it ("won by albums from Riia")
                return phrase.format(group=name), [name]
            return f"in {name}", [name]
        if atom.test == "entity":
            name = s.a.name(atom.value)
            inner, vals = name, [name]
        elif atom.test == "eq":
            inner, vals = str(atom.value), [str(atom.value)]
        else:
            tt = atom.end_type or t
            kind = s.attr_kind(tt, atom.attr)
            inner, vals = range_text(*atom.value, kind, s.dtype(tt, atom.attr) == "int")
        if atom.test in ("eq", "range"):
            tt = atom.end_type or t
            inner = fill(self.pick(s.asks(tt, atom.attr)), inner)
            path = atom.path
        else:
            path = atom.path[:-1]
            last = atom.path[-1]
            inner = fill(self.pick(s.asks(last.source, last.name)), inner)
        for st in reversed(path):
            inner = fill(self.pick(self.nested_asks(st.source, st.name)), f"{s.plural(st.target)} {inner}", nested=True)
        return inner, vals

    def nested_asks(self, source: str, pred: str) -> list[str]:
        """Qualifiers that can take a noun phrase with its own clause ("countries on Sundara"):
        those ending at {object} ("who are citizens of {object}", not "holding {object}
        citizenship", which read "holding countries on Sundara citizenship", nor "whose birthplace
        is {object}", which read "whose birthplace is cities in Braeria")."""
        s = self.s
        asks = s.asks(source, pred)
        # "whose birthplace is {object}" would read "whose birthplace is cities in Braeria"
        ending = [a for a in asks if a.rstrip().endswith("{object}") and not re.search(r"\b(is|are|include) \{object\}$", a.rstrip())]
        if ending:
            return ending
        rs = s.relations.get(pred)
        to_one = rs is None or rs.cardinality in ("1:1", "N:1") and not rs.history
        lab = s.label(source, pred).lower()
        return [f"whose {lab} is one of the {{object}}" if to_one else f"whose {lab} include one of the {{object}}"]

    def combine(self, combo: str, texts: dict[str, str]) -> str:
        a, b, c = texts.get("A"), texts.get("B"), texts.get("C")
        if not combo:
            return ""
        if combo == "A":
            return a
        if combo == "A&B":
            return f"{a} and {b}"
        if combo == "A|B":
            return f"{a}, " + self.pick(OR_WORDS).format(x=b)
        if combo == "A&!B":
            return f"{a}, " + self.pick(NOT_WORDS).format(x=b)
        if combo == "A&B&C":
            return f"{a}, {b} and {c}"
        if combo == "(A|B)&C":
            return f"{c}, but only those {a} or those {b}"
        return f"{a} and {b}, " + self.pick(NOT_WORDS).format(x=c)  # A&B&!C

    # ------------------------------------------------------------------ columns

    def hint(self, c: Column, one: str, rank_word: str = "") -> str:
        """A short formatting instruction for one column."""
        if c.base == "rank":
            return f"1 for the {rank_word}" if rank_word else "1 for the first"
        if c.base == "link" and c.attr == "end":
            return self.pick(["the year it ended, or 'present'", "end year, or 'present' if ongoing"])
        if c.base == "link" and c.attr == "start":
            return self.pick(["the year it began", "a four-digit year"])
        if c.kind == LIST:
            return self.pick([f"all {c.items}, separated by semicolons", f"every one of the {c.items}, semicolon-separated"])
        if c.kind == DATE:
            return self.pick(["YYYY-MM-DD", "as YYYY-MM-DD", "full date, YYYY-MM-DD"])
        if c.kind == NUMBER:
            if c.agg == "count":
                return "a whole number"
            if c.agg == "latest":
                return "a four-digit year"
            return self.pick(["a plain number", "digits only, no units", "a number without units"])
        if c.kind == URL:
            return "the full URL"
        if c.kind == STRING and c.base == "row" and not c.path and c.attr is None:
            # named after the column's own entity ("person (the person's name)"), not the row's
            # noun: a timeline's row is a tenure, an event list's an event
            who = c.name if c.name and c.name.lower() != "name" else one
            return self.pick([f"the {who}'s name", "its full name", "name as commonly written"])
        return ""

    def columns_text(self, columns: list[Column], one: str, rank_word: str = "") -> str:
        parts = []
        for c in columns:
            h = self.hint(c, one, rank_word)
            parts.append(f"{c.name} ({h})" if h else c.name)
        return self.pick(COLUMN_LEADS).format(cols=", ".join(parts))

    # ------------------------------------------------------------------ questions

    def table(self, shape: str, what: str, plural: str, one: str, columns: list[Column], when: str,
              rank_word: str = "") -> str:
        purpose = self.pick(PURPOSES[shape]).format(plural=plural)
        ask = self.pick(ASKS[shape]).format(what=what)
        cols = self.columns_text(columns, one, rank_word)
        closing = self.pick(CLOSINGS).format(one=one)
        # most tasks state a rule, some leave it to the reader; chosen by the question's own words,
        # so the task draws that follow are those they were without rules
        rules = [*RULES[shape], ""]
        rule = rules[stable_hash("rule", purpose, ask, when) % len(rules)]
        return " ".join(x for x in (purpose, ask, when, rule, cols, closing) if x)

    def when_now(self) -> str:
        return self.pick(WHEN_NOW).format(date=self.date())

    def when_history(self) -> str:
        return self.pick(WHEN_HISTORY).format(date=self.date())

    def period(self, window, verb: str) -> tuple[str, list[str]]:
        lo, hi = window
        text, vals = range_text(lo, hi, DATE)
        return f"{verb} {text}", vals

    # ------------------------------------------------------------------ a table task

    def describe(self, task) -> tuple[str, list[str], list[str], str]:
        """The question of a table task, its constraints as worded, the values it names (a
        paraphrase must keep them) and a natural search query for the rows."""
        s = self.s
        c = task.cand
        t = c.t
        texts, values = {}, []
        for k in sorted(c.atoms):
            texts[k], vals = self.atom_text(t, c.atoms[k])
            values += vals
        cond = self.combine(c.combo, texts)
        scope = texts.get("S", "")
        plural, one = s.plural(t), s.singular(t)
        cols = task.columns
        if c.shape == "filter":
            what = plural + "".join(f" {x}" for x in (scope,) if x) + (f", {cond}" if cond and scope else f" {cond}" if cond else "")
            q = self.table("filter", what, plural, one, cols, self.when_now())
            return q, list(texts.values()), values, f"{plural} {texts.get('A') or scope}".strip()
        if c.shape == "ranked":
            noun = s.attr_noun(t, c.rank_attr)
            word = f"{'highest' if c.rank_desc else 'lowest'} {noun}"
            n = len(task.gold_rows)
            where = " ".join(x for x in (cond, scope) if x)
            what = f"the {n} {plural}{' ' + where if where else ''} with the {word}, ranked"
            values.append(str(n))
            q = self.table("ranked", what, plural, one, cols, self.when_now(), rank_word=word)
            return q, list(texts.values()), values, f"{plural} {where} by {noun}".replace("  ", " ").strip()
        st = c.rows.step
        rs = s.relations[st.name]
        if c.shape == "timeline":
            role = cols[[i for i, x in enumerate(cols) if x.base == "other"][0]].name
            other_t = st.target
            if c.anchor:
                anchor = s.a.name(c.anchor)
                values.append(anchor)
                target = anchor
            else:
                target = f"{plural} {' '.join(x for x in (cond, scope) if x)}".strip()
            if st.reverse:
                asks = s.asks(rs.source, st.name) if c.anchor else self.nested_asks(rs.source, st.name)
                what = f"all {s.plural(other_t)} " + fill(self.pick(asks), target, nested=not c.anchor)
            else:  # "every chief executive of X"; a label that names no role reads as itself ("every affiliation of X")
                label = s.label(st.source, st.name).lower()
                one_label = label[:-3] + "y" if label.endswith("ies") else label[:-1] if label.endswith("s") else label
                what = f"every {role if role == one_label else one_label} of {target}"
            if c.window:
                p, vals = self.period(c.window, "starting")
                what += f", counting only tenures {p}"
                values += vals
            if c.note:
                label = dict(s.link_notes(st.name))[c.note[0]].lower()
                what += self.pick([f"{' and' if c.window else ','} only those where the {label} was {c.note[1]}",
                                   f"{' and' if c.window else ','} only those with {c.note[1]} as the {label}"])
                values.append(c.note[1])
            one = "tenure"  # a holder may come back: a row is a tenure
            q = self.table("timeline", what, plural, one, cols, self.when_history())
            return q, list(texts.values()) + ([anchor] if c.anchor else []), values, f"{target} {role}".strip()
        label = s.label(rs.source, st.name).lower()
        events = label if label.endswith("s") else label + "s"
        p, vals = self.period(c.window, "dated")
        values += vals
        what = f"all {events} {p}"
        if cond or scope:
            what += f" involving {plural} " + " ".join(x for x in (cond, scope) if x)
        q = self.table("events", what, plural, "event", cols, "")
        return q, list(texts.values()), values, f"{events} {p}"
