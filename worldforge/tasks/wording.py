"""Questions in a user's voice: why they ask (a purpose), what they want (the rows, with the
constraints worded from the packs' `ask` phrases), when (the date the answer should hold at,
or the period it covers), and how (every column with a short formatting instruction), then
how to answer. Every part has several phrasings, picked by the task's generator, so the
questions do not read alike; their length is in WideSearch's range (a few hundred to a
thousand characters).

One class for every language: the words and their order are the language's question bank
(`questions/<code>.yaml`): how conditions join (`combos`), where the rows' noun stands beside
them (`rows`: after them in Chinese, "总部所在地为怀和市且成立日期在1990年代的公司", before them in
English, "companies headquartered in Huaihe and founded in the 1990s"), and each shape's frame.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import numpy as np

from ..language import BASE
from ..language import get as get_language
from ..plumbing import stable_hash
from ..world import CountAttr, part_phrase
from .banks import balanced, question_bank, question_date
from .schema import DATE, LIST, NUMBER, STRING, URL, Atom, Column, TaskSchema
from .table import fill, range_text

# Units whose figure is a head count or an area: a ranking of them is by the most or the largest
# (`extremes` in a bank; English says 'highest' of all, Chinese 最多, 最大, 最高).
COUNTED = {"people", "employees", "students", "citations", "seats"}
AREAS = {"km²"}


class Wording:
    """A question's words, in the task's language: its bank's phrasings and word order."""

    def __init__(self, schema: TaskSchema, rng: np.random.Generator, as_of: dt.date, language: str = BASE):
        self.s = schema
        self.rng = rng
        self.as_of = as_of
        self.language = language
        self.bank = question_bank(language)
        self.order = self.bank["order"]  # a question's word order, as data
        self.ended_only = False  # the task being worded keeps ended tenures only (its end column has no 'present')
        self.openings: Counter = Counter()  # how often each opening was said in the world (`banks.balanced`)

    def pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    def choose(self, xs):
        """`pick`, where there is a choice: one phrasing is taken without a draw."""
        return xs[0] if len(xs) == 1 else self.pick(xs)

    def date(self) -> str:
        return question_date(self.as_of, self.language)

    # ------------------------------------------------------------------ constraints

    def atom_text(self, t: str, atom: Atom) -> tuple[str, list[str]]:
        """The qualifier for a constraint ('headquartered in a city in Braeria') and the values it names."""
        s = self.s
        if atom.scope:
            name = s.a.name(atom.value)
            st = atom.path[0]
            if len(atom.path) == 1:
                return fill(self.pick(s.asks(st.source, st.name)), name), [name]
            phrase = part_phrase(s.world, st.source, st.name, s.plural(st.target), self.language)
            if phrase is not None:  # through a link that is no location, as the web's list names it ("won by albums from Riia")
                return phrase.format(group=name), [name]
            return self.order["scope_in"].format(name=name), [name]
        if atom.test == "entity":
            name = s.a.name(atom.value)
            inner, vals = name, [name]
        elif atom.test == "eq":
            inner, vals = str(atom.value), [str(atom.value)]
        else:
            tt = atom.end_type or t
            kind = s.attr_kind(tt, atom.attr)
            inner, vals = range_text(*atom.value, kind, s.dtype(tt, atom.attr) == "int", language=self.language)
        if atom.test in ("eq", "range"):
            tt = atom.end_type or t
            inner = s.lang.joined(fill(self.pick(s.asks(tt, atom.attr)), inner))
            path = atom.path
        else:
            path = atom.path[:-1]
            last = atom.path[-1]
            inner = fill(self.pick(s.asks(last.source, last.name)), inner)
        for st in reversed(path):
            inner = fill(self.pick(self.nested_asks(st.source, st.name)),
                         self.order["nested_rows"].format(plural=s.plural(st.target), inner=inner), nested=True)
        return inner, vals

    def nested_asks(self, source: str, pred: str) -> list[str]:
        """Qualifiers that can take a noun phrase with its own clause ("countries on Sundara"):
        those ending at {object} ("who are citizens of {object}", not "holding {object}
        citizenship", which read "holding countries on Sundara citizenship", nor "whose birthplace
        is {object}", which read "whose birthplace is cities in Braeria")."""
        s = self.s
        asks = s.asks(source, pred)
        rule = self.order["nested_asks"]
        if rule is None:  # a language whose qualifiers all take one (the noun stands after them)
            return asks
        # "whose birthplace is {object}" would read "whose birthplace is cities in Braeria"
        ending = [a for a in asks if a.rstrip().endswith("{object}") and not re.search(rule["refuse"], a.rstrip())]
        if ending:
            return ending
        rs = s.relations.get(pred)
        to_one = rs is None or rs.cardinality in ("1:1", "N:1") and not rs.history
        return [rule["to_one" if to_one else "to_many"].replace("{label}", s.lang.mid(s.label(source, pred)))]

    def combine(self, combo: str, texts: dict[str, str], plural: str) -> str:
        """The conditions joined as the combination says ('A and B', 'A, excluding those B'), with
        the rows' noun where the language puts it inside them (Chinese: 'A的公司（不包括B的）')."""
        if not combo:
            return ""
        a, b, c = texts.get("A"), texts.get("B"), texts.get("C")
        tmpl = self.order["combos"][combo]
        words = {}
        if "{or_b}" in tmpl:
            words["or_b"] = self.choose(self.bank["or_words"]).format(x=b)
        for x, v in (("b", b), ("c", c)):
            if f"{{not_{x}}}" in tmpl:
                words[f"not_{x}"] = self.choose(self.bank["not_words"]).format(x=v)
        return tmpl.format(a=a, b=b, c=c, plural=plural, **words)

    def rows(self, shape: str, cond: str, scope: str, plural: str) -> str:
        """The rows asked for as one noun phrase: the noun, where they are (`scope`), what they
        meet (`cond`, from `combine`), in the order the language and the task's shape put them."""
        have = "both" if cond and scope else "cond" if cond else "scope" if scope else "none"
        return self.order["rows"][shape][have].format(plural=plural, cond=cond, scope=scope)

    def extreme(self, t: str, a: str, desc: bool, noun: str = "") -> str:
        """The word for the top of a ranking: 'highest'; 'most' of a plural noun ("the most
        employees", never "the highest employees"); 最多 for head counts, 最大 for areas."""
        unit = self.s.unit(t, a)
        ex = self.order["extremes"]
        plural = get_language(self.language).plural
        kind = ("plural" if any(plural(w) for w in noun.split()) else "area" if unit in AREAS
                else "count" if unit in COUNTED or _counts_links(self.s.types[t].attributes.get(a)) else "other")
        return ex[kind][0 if desc else 1]

    # ------------------------------------------------------------------ columns

    def hint(self, c: Column, one: str, rank_word: str = "") -> str:
        """A short formatting instruction for one column."""
        h = self.bank["hints"]
        if c.base == "rank":
            return h["rank"].format(rank_word=rank_word) if rank_word else h["rank_first"]
        if c.base == "link" and c.attr == "end":
            hint = self.pick(h["end"])
            return h["year"] if self.ended_only else hint  # (a rule keeping ended tenures only: no 'or present')
        if c.base == "link" and c.attr == "start":
            return self.pick(h["start"])
        if c.kind == LIST:
            return self.pick(h["list"]).format(items=c.items)
        if c.kind == DATE:
            return self.pick(h["date"])
        if c.kind == NUMBER:
            if c.agg == "count":
                return h["count"]
            if c.agg == "latest":
                return h["year"]
            return self.pick(h["number"])
        if c.kind == URL:
            return h["url"]
        if c.kind == STRING and c.base == "row" and not c.path and c.attr is None:
            # named after the column's own entity ("person (the person's name)"), not the row's
            # noun: a timeline's row is a tenure, an event list's an event
            who = c.name if c.name and c.name.lower() != "name" else one
            return self.pick(h["name"]).format(who=who)
        return ""

    def columns_text(self, columns: list[Column], one: str, rank_word: str = "") -> str:
        parts = []
        for c in columns:
            h = self.hint(c, one, rank_word)
            parts.append(self.bank["column"].format(name=c.name, hint=h) if h else c.name)
        return self.pick(self.bank["column_leads"]).format(cols=self.bank["column_sep"].join(parts))

    # ------------------------------------------------------------------ questions

    def table(self, shape: str, what: str, plural: str, one: str, columns: list[Column], when: str,
              rank_word: str = "", gaps: bool = False, domain: str = "") -> str:
        """The question: why it is asked, what, as of when, a rule where one applies (`domain`: a
        rule that decides membership, in place of a general one), the columns, how to answer; what
        to write for a missing value only where the table has one (`gaps`)."""
        b = self.bank
        purpose = balanced(b["purposes"][shape], self.openings, lambda n: int(self.rng.integers(n))).format(plural=plural)
        ask = self.pick(b["asks"][shape]).format(what=what)
        cols = self.columns_text(columns, one, rank_word)
        closing = self.pick(b["closings"]).format(one=one)
        if gaps:
            closing = b["sentence_sep"].join((b["missing"], closing))
        # most tasks state a rule, some leave it to the reader; chosen by the question's own words,
        # so the task draws that follow are those they were without rules
        rules = [*b["rules"].get(shape, []), ""]
        rule = domain or rules[stable_hash("rule", purpose, ask, when) % len(rules)]
        return b["sentence_sep"].join(x for x in (purpose, ask, when, rule, cols, closing) if x)

    def when_now(self) -> str:
        return self.pick(self.bank["when_now"]).format(date=self.date())

    def when_history(self) -> str:
        return self.pick(self.bank["when_history"]).format(date=self.date())

    def period(self, window, verb: str) -> tuple[str, list[str]]:
        lo, hi = window
        text, vals = range_text(lo, hi, DATE, language=self.language)
        return self.order["period"].format(verb=verb, range=text), vals

    # ------------------------------------------------------------------ a table task

    @staticmethod
    def gaps(task) -> bool:
        """Whether the table's gold leaves a cell empty (a value the world does not have): only
        then does the question say what to write for one."""
        return any(v is None or v == "" for row in task.gold_rows for v in row)

    def describe(self, task) -> tuple[str, list[str], list[str], str]:
        """The question of a table task, its constraints as worded, the values it names (a
        paraphrase must keep them) and a natural search query for the rows; its articles agree
        with their nouns where the language's do ('las empresas')."""
        q, texts, values, query = self._describe(task)
        agree = self.s.lang.agree
        return agree(q), [agree(x) for x in texts], values, agree(query)

    def _describe(self, task) -> tuple[str, list[str], list[str], str]:
        s = self.s
        o = self.order
        c = task.cand
        t = c.t
        texts, values = {}, []
        for k in sorted(c.atoms):
            if k != "R":
                texts[k], vals = self.atom_text(t, c.atoms[k])
                values += vals
        scope = texts.get("S", "")
        plural, one = s.plural(t), s.singular(t)
        domain = ""
        if "R" in c.atoms:  # a domain rule (issue 58): said as a sentence of its own; last among the constraints
            r = self.bank["domain_rules"]["ended_person" if s.lexicon.person(t) else "ended_other"]
            texts["R"] = r["cond"]
            says = r["say"]
            domain = says[stable_hash("domain", t, c.rows.codes.tobytes()) % len(says)].format(plural=plural, date=self.date())
        cond = self.combine(c.combo, texts, plural)
        cols = task.columns
        if c.shape == "filter":
            what = self.rows("filter", cond, scope, plural)
            q = self.table("filter", what, plural, one, cols, self.when_now(), gaps=self.gaps(task), domain=domain)
            return q, list(texts.values()), values, o["query"].format(plural=plural, a=texts.get("A") or scope).strip()
        if c.shape == "ranked":
            noun = s.attr_noun(t, c.rank_attr)
            word = o["rank_word"].format(extreme=self.extreme(t, c.rank_attr, c.rank_desc, noun), noun=noun)
            n = len(task.gold_rows)
            what = o["ranked"].format(n=n, rows=self.rows("ranked", cond, scope, plural), word=word, noun=noun,
                                      plural=plural, order=o["rank_order"][0 if c.rank_desc else 1])
            values.append(str(n))
            q = self.table("ranked", what, plural, one, cols, self.when_now(), rank_word=word, gaps=self.gaps(task), domain=domain)
            where = " ".join(x for x in (cond, scope) if x)
            where_a = " ".join(x for x in (texts.get("A"), scope) if x)
            return q, list(texts.values()), values, \
                o["query_ranked"].format(plural=plural, where=where, where_a=where_a, noun=noun).replace("  ", " ").strip()
        st = c.rows.step
        rs = s.relations[st.name]
        self.ended_only = c.tenure == "ended"
        if c.shape == "timeline":
            role = cols[[i for i, x in enumerate(cols) if x.base == "other"][0]].name
            other_t = st.target
            if c.anchor:
                anchor = s.a.name(c.anchor)
                values.append(anchor)
                target = anchor
            else:
                target = self.rows("timeline", cond, scope, plural)
            if st.reverse:
                asks = s.asks(rs.source, st.name) if c.anchor else self.nested_asks(rs.source, st.name)
                what = o["timeline_reverse"].format(others=s.plural(other_t), ask=fill(self.pick(asks), target, nested=not c.anchor))
            else:  # "every chief executive of X"; a label that names no role reads as itself ("every affiliation of X")
                label = s.lang.mid(s.label(st.source, st.name))
                one_label = s.lang.singular(label) or label
                what = o["timeline_every"].format(role=role if o["role_by_label"] is False or role == one_label else one_label,
                                                  target=target)
            if c.window:
                text, vals = range_text(*c.window, DATE, language=self.language)
                what += o["timeline_window"]["say"].format(range=text.removeprefix(o["timeline_window"]["drop"]))
                values += vals
            if c.note:
                label = s.lang.mid(dict(s.link_notes(st.name))[c.note[0]])
                what += self.choose(o["timeline_note"]["more" if c.window else "first"]).format(label=label, value=c.note[1])
                values.append(c.note[1])
            one = o["tenure"]  # a holder may come back: a row is a tenure
            shape, when = "timeline", self.when_history()
            if c.tenure:  # a domain rule (issue 58): only the tenures under way, or only those ended
                says = self.bank["domain_rules"][f"{c.tenure}_only"]["say"]
                domain = says[stable_hash("domain", t, c.rows.link.tobytes()) % len(says)].format(plural=plural, date=self.date())
                when = self.when_now()  # not 'the whole history, current holders included'
                if c.tenure == "current":  # a need of the present: no 'full succession', no 'when each ended'
                    shape = "timeline_current"
            q = self.table(shape, what, plural, one, cols, when, gaps=self.gaps(task), domain=domain)
            return q, list(texts.values()) + ([anchor] if c.anchor else []), values, f"{target} {role}".strip()
        label = s.lang.mid(s.label(rs.source, st.name))
        events = s.lang.plural_of(label)
        p, vals = self.period(c.window, o["dated"])
        values += vals
        what = o["events"].format(events=events, period=p)
        if c.combo or scope:
            what += o["events_involving"].format(rows=self.rows("events", cond, scope, plural))
        if c.note:  # only the events whose own attribute has this value ("only those where the supervisor was X")
            label = s.lang.mid(dict(s.link_notes(st.name))[c.note[0]])
            what += self.choose(o["timeline_note"]["more"]).format(label=label, value=c.note[1])
            values.append(c.note[1])
        q = self.table("events", what, plural, o["event"], cols, "", gaps=self.gaps(task))
        return q, list(texts.values()), values, o["query_events"].format(events=events, period=p)


def _counts_links(attr) -> bool:
    """A count of links ('the most employees'), not a sum of their numbers ('the highest spending')."""
    return isinstance(attr, CountAttr) and attr.sum is None
