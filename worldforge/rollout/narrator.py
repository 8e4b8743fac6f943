"""What the oracle says in a turn, from the events of its research.

The research (`oracle.py`) records *events* as it decides: a candidate kept or dropped with the
value that decided it and where it was read, a page that failed or came back cut, a list found
and how long it is, a conflict and how it was settled, the work left and the next calls with
what each is for. `Narrator.compose` turns one turn's events into the message a person
researching would write: what they concluded from what they just read, then what is left and
what they will do next, and why.

The wording comes from a grammar per language (`narration/<lang>.yaml`): each move has several
clause forms, one for a single item and one for several (a turn's decisions on one condition
are one sentence: "Orside (267 m), Isburgh (388 m) and Lostad (881 m) stay under 1,000 m"), and
the content picks among them and adds to them: how close a value is to the condition's bound,
whether it came from the page, a search snippet or the list, how many candidates are left and
which columns are still empty, why a page is opened. Discourse markers depend on what came
before (a contrast before the rejections that follow kept rows, a consequence before the next
step), never on position alone; the first message of a task opens it (no connective). Every
choice is drawn from the episode's seeded generator, so a trajectory always reads the same.

Claims: an event may carry the counts it states, as (kind, value, ref, slot); a count is a claim
only where the clause drawn states its slot, and the grounding check holds it to the actions
(`grounding.py`).
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from ..language import get as get_language

BANKS = Path(__file__).parent / "narration"

# The order a turn's message follows: what went wrong, what was read, what was decided, where
# that leaves the task, what comes next, and (last turn) the answer.
PHASES = {
    "trouble": ("failed", "cut", "archived", "moot", "gave_up", "search_failed", "no_results", "give_up_search",
                "other_source", "archived_kept", "partial_kept", "unreadable"),
    "found": ("found_list", "paging", "list_step", "list_done", "candidates_found", "full_list", "from_listing", "off_article", "not_on_profile",
              "follow", "chain_broken", "answer_found", "ranked_done"),
    "verdict": ("keep", "reject", "reject_excluded", "reject_many", "conflict", "agree", "namesake", "older_copy"),
    "status": ("progress",),
    "next": ("search_list", "search_entity", "search_again", "search_retry", "search_ahead", "open_list", "open_candidates",
             "open_rows", "open_entity", "open_source", "open_walk", "open_hop", "open_linked", "copy_check"),
    "end": ("final_table", "final_chain", "out_of_room", "out_of_turns"),
}
_PHASE_OF = {m: p for p, ms in PHASES.items() for m in ms}
GROUPED = ("keep", "reject", "reject_excluded")  # a turn's decisions on one condition: one sentence
# Slots a clause may leave empty (a tail, a plural ending); any other slot must be filled for the
# clause to be drawn, so that no sentence has a hole.
OPTIONAL = frozenset({"where_tail", "source_text", "scope", "period", "s", "ps", "ds", "ls"})


@dataclass
class Event:
    """One thing the research did or found: a move and its slots; `claims` are the counts it
    may state, as (kind, value, ref, slot)."""

    move: str
    slots: dict = field(default_factory=dict)
    claims: list = field(default_factory=list)


@lru_cache(maxsize=4)
def bank(language: str) -> dict:
    """The grammar of one language (`narration/<lang>.yaml`)."""
    return yaml.safe_load((BANKS / f"{language}.yaml").read_text(encoding="utf-8"))


def languages() -> list[str]:
    return sorted(p.stem for p in BANKS.glob("*.yaml"))


class Narrator:
    """One episode's narration: the grammar of its language, its own seeded generator."""

    def __init__(self, language: str, seed: int):
        self.language = get_language(language)
        self.lang = self.language.code
        self.bank = bank(self.lang)
        self._starters = frozenset(self.bank["starters"])  # the words its clauses start with
        self.rng = random.Random(seed)
        self.recent: list[str] = []  # the templates of the last turns: not drawn again right away

    # ------------------------------------------------------------------ small helpers

    def pick(self, options) -> str:
        """One option, avoiding those used in the last two turns where others remain."""
        options = list(options)
        fresh = [o for o in options if o not in self.recent] or options
        choice = self.rng.choice(fresh)
        self.recent.append(choice)
        self.recent = self.recent[-24:]
        return choice

    def names(self, names: list[str], limit: int = 4) -> str:
        names = [n for n in dict.fromkeys(names) if n]
        b = self.bank["list"]
        if not names:
            return ""
        if len(names) > limit:
            return b["more"].format(head=b["sep"].join(names[:limit]), n=len(names) - limit)
        if len(names) == 1:
            return names[0]
        return b["sep"].join(names[:-1]) + b["and"] + names[-1]

    def error(self, text: str) -> str:
        """A tool's error, short, in the message's language ('429: Too Many Requests', '请求过多')."""
        head = text.split(". ")[0].replace("Error: ", "").replace("Error ", "").split(" while fetching")[0]
        for key, said in (self.bank.get("errors") or {}).items():
            if key in head:
                return said
        return (self.bank.get("error_other") or "{head}").format(head=head)  # 'Error 418', '出错'

    def phrase(self, key: str, form: str | None = None, **slots) -> str:
        """A piece of a sentence from the bank's `phrases` ('{A}, but not {B}'); `form` picks
        one of a mapping's forms ('' where the bank has none)."""
        text = self.bank["phrases"][key]
        if form is not None:
            text = text.get(form, "")
        return text.format(**slots) if text else ""

    def own_page(self) -> str:
        return self.rng.choice(self.bank["where"]["own"])

    def snippet_where(self) -> str:
        return self.rng.choice(self.bank["where"]["snippet"])

    def why(self, key: str) -> str:
        return self.bank["why"][key]

    def number(self, n: int) -> str:
        """A small count in words where a person would write it so ('three'), else digits."""
        words = self.bank.get("numbers") or []
        return words[n] if 0 <= n < len(words) and self.rng.random() < 0.5 else f"{n:,}"

    # ------------------------------------------------------------------ rendering

    def _fill(self, template: str, slots: dict) -> tuple[str, set[str]]:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        return template.format(**{k: slots.get(k, "") for k in fields}), fields

    def clause(self, move: str, slots: dict, form: str = "one") -> tuple[str, set[str]]:
        """One clause of a move (a template of its `form` whose slots the event fills; `many`
        where the event names several)."""
        entry = self.bank["moves"][move]
        if isinstance(entry, dict) and slots.get("count_names", 1) > 1 and "many" in entry:
            form = "many"
        options = entry[form] if isinstance(entry, dict) else entry
        usable = [o for o in options if all(slots.get(f) not in (None, "") or f in OPTIONAL
                                            for _, f, _, _ in string.Formatter().parse(o) if f)]
        return self._fill(self.pick(usable or options), slots)

    def compose(self, events: list[Event], opening: bool = False) -> tuple[str, list[tuple]]:
        """The message of one turn and the claims it states (see the module docstring)."""
        claims: list[tuple] = []
        sentences: list[tuple[str, str]] = []  # (phase, sentence)
        seen: set[str] = set()

        def add(phase: str, text: str, ev_claims=(), fields=frozenset()) -> None:
            text = text.strip()
            if not text or text in seen:
                return
            seen.add(text)
            sentences.append((phase, text))
            claims.extend((k, v, ref) for k, v, ref, slot in ev_claims if slot in fields)

        by_phase: dict[str, list[Event]] = {p: [] for p in ("open", *PHASES)}
        finished = any(e.move == "list_done" for e in events)
        for e in events:
            if e.move == "found_list" and finished:  # the list read to its end says how long it was
                continue
            by_phase[_PHASE_OF.get(e.move, "open")].append(e)
        for e in by_phase["open"]:
            text, f = self.clause(e.move, e.slots)
            add("open", text, e.claims, f)
        self._fold_paging(by_phase)
        for phase in ("trouble", "found"):
            for e in self._merge_alike(by_phase[phase]):
                text, f = self.clause(e.move, e.slots, e.slots.get("_form", "one"))
                add(phase, text, e.claims, f)
        self._verdicts(by_phase["verdict"], add)
        for e in by_phase["status"]:
            text, f = self._status(e)
            add("status", text, e.claims, f)
        for e in self._merge_alike(by_phase["next"]):
            text, f = self.clause(e.move, e.slots, e.slots.get("_form", "one"))
            add("next", text, e.claims, f)
        for e in by_phase["end"]:
            text, f = self.clause(e.move, e.slots)
            add("end", text, e.claims, f)
        return self._join(sentences, opening), claims

    def _fold_paging(self, by_phase: dict[str, list[Event]]) -> None:
        """A list page read and the next one opened: one clause ('4 of 12 pages read, 80 entries so
        far; page 5 next'), not two."""
        paging = next((e for e in by_phase["found"] if e.move == "paging"), None)
        nxt = next((e for e in by_phase["next"] if e.move == "open_list" and e.slots.get("page")), None)
        if paging is None or nxt is None:
            return
        by_phase["found"].remove(paging)
        by_phase["next"].remove(nxt)
        by_phase["found"].append(Event("list_step", {**paging.slots, "page": nxt.slots["page"], "title": nxt.slots.get("names", "")},
                                       paging.claims))

    def _merge_alike(self, events: list[Event]) -> list[Event]:
        """Events of one move that name a page or a name each become one event with a list
        (three pages failing alike, four candidates to open for one reason)."""
        out: list[Event] = []
        groups: dict[tuple, list[Event]] = {}
        for e in events:
            key = (e.move, e.slots.get("why"), e.slots.get("what"), e.slots.get("label"), e.slots.get("col"), e.slots.get("cond"),
                   e.slots.get("site"))
            if e.move in self.bank.get("mergeable", ()) and not e.claims:
                groups.setdefault(key, []).append(e)
            else:
                out.append(e)
        for (move, *_), es in groups.items():
            if len(es) == 1:
                out.append(es[0])
                continue
            slots = dict(es[0].slots)
            item = next(k for k in ("page", "names", "q", "name") if k in slots)
            slots[item] = self.names([x.slots.get(item, "") for x in es])
            slots["count_names"] = len(es)
            slots["_form"] = "many" if isinstance(self.bank["moves"][move], dict) and "many" in self.bank["moves"][move] else "one"
            out.append(Event(move, slots))
        return out

    # ------------------------------------------------------------------ decisions

    def _verdicts(self, events: list[Event], add) -> None:
        groups: dict[tuple, list[Event]] = {}
        rest = []
        for e in events:
            if e.move in GROUPED:
                groups.setdefault((e.move, e.slots.get("cond", ""), e.slots.get("label", "")), []).append(e)
            else:
                rest.append(e)
        order = sorted(groups, key=lambda k: ("keep", "reject", "reject_excluded").index(k[0]))
        kept_said = False
        for key in order:
            es = groups[key]
            move = key[0]
            slots = dict(es[0].slots)
            if len(es) == 1:
                slots.update(self._item_detail(es[0]))
                text, f = self.clause(move, slots, "one")
            else:
                items = [self._item(x) for x in es]
                slots.update(items=self.names(items, limit=6), n=len(es), count=self.number(len(es)),
                             where_tail=self._common_where(es))
                slots.update(self._span(es))
                text, f = self.clause(move, slots, "many")
            if move != "keep" and kept_said and self.rng.random() < 0.7:
                text = self._lead("contrast", text)
            kept_said |= move == "keep"
            add("verdict", text, [c for x in es for c in x.claims], f)
        for e in rest:
            text, f = self.clause(e.move, e.slots)
            add("verdict", text, e.claims, f)

    def _item(self, e: Event) -> str:
        """'Orside (267 m)': a name with the value that decided it."""
        v = e.slots.get("value")
        return self.bank["item"].format(name=e.slots["name"], value=v) if v not in (None, "", "—") else e.slots["name"]

    def _common_where(self, es: list[Event]) -> str:
        kinds = {x.slots.get("source") for x in es}
        if len(kinds) == 1 and None not in kinds:
            return self.bank["where_tail"].get(next(iter(kinds)), "")
        return ""

    def _item_detail(self, e: Event) -> dict:
        """A single decision's extra content: how near the value is to the condition's bound."""
        return {"margin": self._margin(e.slots), "source_text": self.bank["source"].get(e.slots.get("source") or "", "")}

    def _margin(self, slots: dict) -> str:
        """'just under the 1,000 m limit' / 'well clear of it': where a number or a year lies
        against the bound it was tested on (empty for other conditions)."""
        bound, value = slots.get("bound"), slots.get("number")
        if bound is None or value is None:
            return ""
        side, limit, shown = bound
        gap = abs(value - limit) / max(abs(limit), 1.0)
        m = self.bank["margin"]
        kept = slots.get("kept", True)
        if gap <= 0.05:
            options = m["close_in"] if kept else m["close_out"]
        elif gap >= 0.5:
            options = m["far_in"] if kept else m["far_out"]
        else:
            return ""
        return self.rng.choice(options).format(limit=shown, side=m["sides"][side])

    def _span(self, es: list[Event]) -> dict:
        """Several numeric decisions: the lowest and highest value among them, named."""
        nums = [(x.slots.get("number"), x.slots["name"], x.slots.get("value")) for x in es if x.slots.get("number") is not None]
        if len(nums) < 3:
            return {"range": ""}
        lo, hi = min(nums), max(nums)
        return {"range": self.bank["range"].format(lo_name=lo[1], lo=lo[2], hi_name=hi[1], hi=hi[2])}

    # ------------------------------------------------------------------ status

    def _status(self, e: Event) -> tuple[str, set[str]]:
        s = dict(e.slots)
        text, f = self.clause("progress", s)
        missing = s.get("missing") or []
        if missing and self.rng.random() < 0.8:
            lack = self.names([self.bank["missing_item"].format(col=c, n=n) for c, n in missing[:3]], limit=3)
            more, f2 = self._fill(self.pick(self.bank["moves"]["missing"]), {"what": lack})
            text = f"{text}{self.bank['space']}{more}"
            f = f | f2
        return text, f

    # ------------------------------------------------------------------ joining

    def _lead(self, kind: str, text: str) -> str:
        lead = self.pick(self.bank["leads"][kind])
        if not lead:
            return text
        if self.language.cased and text[:1].isupper() and not _keeps_capital(text, self._starters):
            text = text[0].lower() + text[1:]
        return lead + text

    def _join(self, sentences: list[tuple[str, str]], opening: bool) -> str:
        out = []
        prev = None
        for i, (phase, text) in enumerate(sentences):
            if i == 0 and not opening and phase in ("found", "verdict") and self.rng.random() < 0.35:
                text = self._lead("read", text)
            elif prev in ("verdict", "status", "found") and phase == "next" and self.rng.random() < 0.5:
                text = self._lead("next", text)
            elif prev == "verdict" and phase == "status" and self.rng.random() < 0.4:
                text = self._lead("so", text)
            out.append(text)
            prev = phase
        text = self.bank["space"].join(out)
        if opening:  # the first message opens the task: no connective
            text = _strip_connective(text, self.bank["leads"])
        return self.language.cap(self.language.agree(text))  # articles that agree ('la ciudad', 'del país')


def _keeps_capital(text: str, starters: frozenset[str]) -> bool:
    """A sentence that starts with a name (a word the bank's `starters` never holds: the words its
    clauses start with) keeps its capital after a lead-in."""
    m = re.match(r"[^\W\d_]+", text)
    return m is None or m.group(0) not in starters


def _strip_connective(text: str, leads: dict) -> str:
    for options in leads.values():
        for lead in options:
            if lead and text.startswith(lead):
                return text[len(lead):]
    return text



