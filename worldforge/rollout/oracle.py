"""The oracle policy: a careful researcher that knows only the question and what it reads.

It receives the task's question (the text, and its reading in the packs' vocabulary: the row
type, the conditions, the columns, the period; see `tasks/question.py`) and the results of its
own tool calls. It never sees the world store, the gold table, the evidence pages or the render
stage's provenance. Like a person with a browser it:

- plans from the question: which kind of thing to list, where a list of candidates can come
  from (a directory of the type in a country, the page of an entity named in a condition, both
  sides of an "or", the named entity of a history question);
- searches for that list, opens it, follows its pagination, and builds the candidate list;
- checks every condition on each candidate from what the pages say (a directory's columns
  where they show it, else the candidate's article and the pages it links to), keeps the ones
  that pass and drops the ones that fail, saying which value it read where;
- fills every cell from the pages (following links for linked columns, reading list sections
  and full lists for lists and counts, timelines for dates), ranks by the values it read;
- recovers like a person: retries failed calls, rephrases searches that found nothing,
  reloads cut-off pages (it sees the text stop mid-sentence) and archived snapshots, compares a
  second page where the results look suspicious, and when two sources disagree prefers the
  encyclopedia and the fresher page and says so;
- spends its context like a long-horizon agent: when the context fills, it writes its research
  state (candidates with their addresses, values read and where, what is left) and goes on from
  that state alone, forgetting the pages it had read (`state.py`).

Its answer is built from what it read, so when the web misleads it (a page that keeps failing,
an older duplicate's figures, an archived snapshot it had to rely on) it gets the task wrong: rewards
vary, and rejection sampling has something to reject.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections import Counter
from dataclasses import dataclass

from ..language import BASE
from ..language import get as get_language
from ..plumbing import stable_hash
from ..records import Shape
from ..tasks import AllOf, Expr, combo_alternatives, combo_musts, evaluate_combo, parse_combo
from .compare import disagree, notice, weigh
from .entities import EntityReader
from .env import Episode, ToolCall, markdown_table
from .memory import Agenda, Comparisons, Narration, PagesRead, SearchesRun, ValuesRead
from .narrator import Event, Narrator
from .reading import (
    Span,
    is_news_url,
    note_at,
    note_parts,
    plain_number,
    read_date,
    read_number,
    read_page,
    read_search,
)
from .sources import (
    NEED,
    BackList,
    Candidate,
    ListReader,
    Named,
    PartIndex,
    PartList,
    PartsOf,
    Source,
    Union,
    header_for,
    host,
    is_encyclopedia,
    norm,
    readers_of,
    strip_links,
)

SEARCH_QUERIES_MAX = 5  # queries one web_search call carries at most
AHEAD_TRIAL, AHEAD_WORTH = 12, 0.25  # searches ahead of a label tried before judging them; the hit rate that keeps them
CROSS_CHECKS_MAX = 4  # second sources an episode opens to compare, at most
STALL_NOTES = 4  # notes in a row with nothing settled (every slot used) before the research submits what it has
STALE_DAYS = 180  # an article last edited longer ago than this is read as out of date (live ones: weeks)

_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")
_PAGE_NO = re.compile(r"[?&]page=(\d+)")


@dataclass
class Brief:
    """Everything the oracle is told: the question (text, language, and its reading)."""

    id: str
    query: str
    language: str
    kind: str
    q: dict
    combo: Expr = AllOf(())  # how the question's conditions combine (`tasks.parse_combo` of its `combo`)

    @classmethod
    def of(cls, record: dict) -> Brief:
        q = record["question"]
        return cls(record["instance_id"], record["query"], record.get("language", "en"), record["kind"], q,
                   parse_combo(q.get("combo") or ""))


# --------------------------------------------------------------------------- the research


class Research:
    """One episode's research, turn by turn."""

    def __init__(self, ep: Episode, brief: Brief, calls: int, seed: int, opt):
        self.ep = ep
        self.brief = brief
        self.q = brief.q
        self.k = max(1, calls)
        self.opt = opt  # OracleSpec
        self.lang = get_language(brief.language)
        self.rng = random.Random(stable_hash(seed, "oracle", ep.key))
        self.pages = PagesRead()
        self.searches = SearchesRun()
        self.values = ValuesRead()
        self.agenda = Agenda()
        self.compared = Comparisons()
        self.entities = EntityReader(self)
        self.told = Narration(Narrator(brief.language, stable_hash(seed, "voice", ep.key)))
        self.source: Source | None = None
        self.candidates: list[Candidate] | None = None
        self.rows: list[Candidate] = []  # the answer's rows, once every candidate is decided
        self.ranked: list[Candidate] | None = None
        self.final: str | None = None
        # today: the system prompt's date, else the date the question holds things as of (a policy
        # driven by another loop, as in the verl kit, gets the question but not the episode)
        msgs = getattr(ep, "messages", None)
        self.today = (read_date(msgs[0]["content"]) if msgs else None) or read_date(brief.query)

    # ------------------------------------------------------------------ observation helpers

    def search(self, q: str, purpose: str, again: bool = False):
        """The results of a search (NEED until it has run successfully)."""
        key = norm(q)
        if key in self.searches.results:
            return self.searches.results[key]
        if self.searches.search_tries[key] > self.opt.max_retries:
            return []
        self.agenda.search_wants.setdefault(q, purpose if not again else "again")
        self.agenda.asking.append((None, q))
        return NEED

    def page(self, url: str, purpose: tuple):
        """A page as read (None: it could not be had), or NEED (wanted this turn)."""
        if url in self.pages.read:
            return self.pages.read[url]
        if url in self.pages.failed:
            return self.pages.fallback.get(url) or self._other_source(url, purpose)
        if url not in self.pages.seen:  # never open an address no observation showed: find it first
            again, title = self._list_page_of(url)
            if again is not None and again not in self.pages.read:  # on a list page the notes point to: read it again
                if again not in self.agenda.wants and any(u in self.agenda.wants and u not in self.pages.read for u in self.agenda.rereads):
                    return NEED  # one list page read again at a time: the candidates further on wait for theirs
                self.agenda.rereads.add(again)
                self.agenda.wants.setdefault(again, ("list", title, ""))
                self.agenda.asking.append((again, ("list", title, "")))
                self.agenda.other_need.add(again)
                return NEED
            if url in self.pages.forgotten:
                self.pages.state_misses += 1  # known before a compaction, left out of the state
            return None
        self.agenda.wants.setdefault(url, purpose)
        self.agenda.asking.append((url, purpose))
        if self.agenda.asking_figure:
            self.agenda.figure_need.setdefault(url, self.agenda.asking_figure)
            if self.agenda.why[0] == "check":
                self.agenda.deciding.add(url)
        else:
            self.agenda.other_need.add(url)
        return NEED

    def _list_page_of(self, url: str) -> tuple[str | None, str]:
        """The address of a list page that shows `url` and is in view (the notes name it), and the list's title."""
        for reader in self.list_readers():
            k = reader.page_of.get(url)
            if k is not None:
                lp = reader.page_url(k)
                if lp is not None and lp in self.pages.seen:
                    return lp, reader.title or self.label_of(lp)
        return None, ""

    def list_readers(self) -> list[ListReader]:
        """Every list being read or read: the candidates' source's and the full lists sections link."""
        return [*readers_of(self.source), *self.pages.full_lists.values()]

    def _other_source(self, url: str, purpose: tuple):
        """When an article never loads: another site's page about the same entity (a profile or an
        official site, from search results), whose key facts carry the same labels. NEED while it is
        being found or read; None when there is none."""
        if not is_encyclopedia(url):
            return None
        name = self.pages.link_names.get(url) or ""
        if not name:
            return None
        res = self.search(name, "entity")
        if res is NEED:
            return NEED
        alts = [x.url for x in res if not is_encyclopedia(x.url) and x.url not in self.pages.failed
                and norm(x.title) == norm(name) and "(page " not in x.title][:2]
        if not alts:
            return None
        for alt in alts:
            if alt not in self.pages.read and alt not in self.agenda.wants:
                self.told.note("other_source", page=name, site=host(alt))
        got = [self.page(alt, purpose) for alt in alts]  # two pages of that name: read both, keep the current one
        if any(g is NEED for g in got):
            return NEED
        got = [g for g in got if g is not None]
        if len(got) > 1:  # a living profile before a dated piece; of dated ones, the latest
            got.sort(key=lambda g: (g.dated is not None, -(g.dated.toordinal() if g.dated else 0)))
            if got[1].dated is not None and got[1].url not in self.pages.set_aside and disagree(got[0], got[1]):
                self.pages.set_aside.add(got[1].url)
                self.told.note("older_copy", page=name, site=host(got[1].url), date=got[1].dated.isoformat())
        return got[0] if got else None

    def label_of(self, url: str) -> str:
        p = self.pages.read.get(url)
        if p is not None:
            return p.name or p.title
        # a profile read for an entity is named after it, not after the link that led there ('官方网站')
        return self.pages.beside_name.get(url) or self.pages.link_names.get(url, url)

    def find_article(self, name: str):
        """The encyclopedia article of a named entity: a link seen earlier, else a search (NEED),
        else None once searching has failed."""
        url = self.pages.name_url.get(norm(name))
        if url:
            return url
        res = self.search(name, "entity")
        if res is NEED:
            return NEED
        hit = _own_page(res, name)
        if hit is None and self.opt.reformulate:
            alt = f"\"{name}\""
            res2 = self.search(alt, "entity", again=True)
            if res2 is NEED:
                return NEED
            hit = _own_page(res2, name)
        if hit is None:
            self.told.note("give_up_search", name=name)
            return None
        self.pages.name_url[norm(name)] = hit
        return hit

    # ------------------------------------------------------------------ conditions

    def test(self, cond: dict, c: Candidate):
        """Whether a candidate meets one condition: True, False, or NEED; with what was read, for
        the telling: (value, where, source), source one of list, own, snippet, other."""
        path = cond["path"]
        self.agenda.why = ("check", cond["text"])
        if not path:
            cell = c.listed.get(header_for(c.listed, cond.get("label", "")))
            where, source = c.source, "list"
            listed = None
            if cell is not None and cond.get("negated") and self.matches(cond, cell) and not cond.get("rule"):
                listed, cell = cell, None  # a list's value would exclude the row: confirm it on the row's own page first
                # (not for the question's rule: a list's date of death or closure settles that one is out)
            if cell is not None and cond["letter"] not in self.told.listing_said:
                self.told.listing_said.add(cond["letter"])
                self.told.note("from_listing", col=self.lang.mid(cond.get("label", "")))
            if cell is None:
                cell = self.entities.attribute(c.url, cond["label"], c.name, figure=cond["test"] != "eq",
                                      expect=cond["value"] if cond["test"] == "eq" and not cond.get("negated") else None,
                                      unit=cond.get("unit"), kind=_cond_kind(cond))
                if cell is NEED:
                    return NEED, None
                where = self.told.voice.snippet_where() if self.values.from_snippet else self.told.voice.own_page()
                source = "snippet" if self.values.from_snippet else "own"
                if cell is None and listed is not None:  # its own pages do not say: the list's value stands
                    cell, where, source = listed, c.source, "list"
            return self.matches(cond, cell), (cell, where, source)
        ents = [(c.name, c.url)]
        for i, hop in enumerate(path):
            nxt = []
            need = False
            self.agenda.why = ("check", cond["text"]) if i == 0 else ("hop", cond["text"])
            for name, url in ents:
                if url is None:
                    continue
                got = self.entities.targets(url, hop, name)
                if got is NEED:
                    need = True
                    continue
                if got is None:
                    continue
                nxt += [(x.name, x.url) for x in got]
            if need:
                return NEED, None
            ents = nxt
        if cond["test"] == "entity":
            ok = any(norm(n) == norm(cond["value"]) for n, _ in ents)
            shown = "; ".join(dict.fromkeys(n for n, _ in ents)) or "—"
            return ok, (shown, self.told.voice.own_page() if len(path) == 1 else self.where(c.url), "own" if len(path) == 1 else "other")
        need = False
        seen_vals = []
        self.agenda.why = ("hop", cond["text"])
        for name, url in ents:  # (the value an equality expects is one prose may name: 'The form of government of X is republic')
            cell = self.entities.attribute(url, cond["label"], name, figure=cond["test"] != "eq", unit=cond.get("unit"), kind=_cond_kind(cond),
                                  expect=cond["value"] if cond["test"] == "eq" and not cond.get("negated") else None)
            if cell is NEED:
                need = True
                continue
            seen_vals.append((cell, name, url))
            if cell is not None and self.matches(cond, cell):
                return True, (f"{strip_links(cell)}", self.where(url), "other")
        if need:
            return NEED, None
        shown = "; ".join(strip_links(v) for v, _, _ in seen_vals if v) or "—"
        names = [n for _, n, _ in seen_vals]
        where = (self.where(seen_vals[0][2]) if len(names) == 1 else self.told.voice.names(names, limit=3)) if names else self.where(c.url)
        return False, (shown, where, "other")

    def matches(self, cond: dict, cell) -> bool:
        if cell is None:
            return False
        text = strip_links(cell)
        if cond["test"] == "eq":
            return norm(text) == norm(cond["value"])
        lo, hi = cond["value"]
        if cond.get("kind") == "date":
            d = read_date(text)
            if d is None:
                return False
            return (lo is None or d >= dt.date.fromisoformat(lo)) and (hi is None or d <= dt.date.fromisoformat(hi))
        v = read_number(text)
        if v is None:
            return False
        return (lo is None or v >= float(lo) - 1e-9) and (hi is None or v <= float(hi) + 1e-9)

    def where(self, url: str | None) -> str:
        if not url:
            return "the list"
        p = self.pages.read.get(url)
        if p is not None and p.title:
            return f"{p.title} ({host(url)})" if not is_encyclopedia(url) else p.title
        return self.label_of(url)

    def decide(self, c: Candidate):
        """Keep, reject, or NEED: every condition the candidate's list does not already settle.
        A candidate whose page never loads (and no other source stands in) is left out, and said so."""
        if c.url in self.pages.failed and self.page(c.url, ("check", c.name, "")) is None:
            self.told.note("unreadable", names=c.name)
            return None
        conds = {x["letter"]: x for x in self.q.get("conditions", [])}
        letters = [k for k in conds if k not in c.implied]
        vals: dict[str, object] = {}
        told: dict[str, tuple] = {}
        for k in letters:
            v, seen = self.test(conds[k], c)
            vals[k] = v
            if seen is not None:
                told[k] = seen
        for k in c.implied:
            vals[k] = True
        # the conditions, the part ('in Braeria') and the question's rule ('living people only':
        # R holds of what it leaves out)
        verdict = evaluate_combo(_RULED, {"A": evaluate_combo(self.brief.combo, vals, NEED), "B": vals.get("S", True), "C": vals.get("R", False)},
                           NEED)
        if verdict is NEED:
            return NEED
        ok = verdict is True
        # the telling: the condition that decided it
        if ok:
            k = next((k for k in letters if vals.get(k) is True and k in told and not conds[k].get("negated")), None)
            if k:
                self.told.decisions.append(("keep", self._verdict(c, conds[k], told[k], True)))
            return True
        k = next((k for k in letters if k in told and ((vals[k] is False and not conds[k].get("negated"))
                                                       or (vals[k] is True and conds[k].get("negated")))), None)
        if k:
            move = "reject_excluded" if conds[k].get("negated") else "reject"
            self.told.decisions.append((move, self._verdict(c, conds[k], told[k], False)))
        return False

    def _verdict(self, c: Candidate, cond: dict, seen: tuple, kept: bool) -> dict:
        """What a decision tells: the value that decided it and where it was read, and for a
        number or a date tested against a bound, the value and the bound it lies nearest
        (the narration says how close it came)."""
        value, where, source = seen
        out = dict(name=c.name, cond=cond["text"], label=self._cond_label(cond), value=strip_links(str(value)), where=where,
                   source=source, listing=source == "list", kept=kept)
        if cond.get("test") in ("eq", "entity") or not isinstance(cond.get("value"), (list, tuple)):
            return out
        lo, hi = cond["value"]
        if cond.get("kind") == "date":
            d = read_date(out["value"])
            num = d.year if d else None
            lo_n, hi_n = (int(lo[:4]) if lo else None), (int(hi[:4]) if hi else None)
            shown = {"lo": str(lo_n), "hi": str(hi_n)}
        else:
            num = read_number(out["value"])
            lo_n, hi_n = (float(lo) if lo is not None else None), (float(hi) if hi is not None else None)
            unit = self.lang.with_unit("", cond.get("unit"))
            shown = {side: f"{v:,.0f}{unit}" if v is not None and v == int(v) else f"{v:,}{unit}"
                     for side, v in (("lo", lo_n), ("hi", hi_n)) if v is not None}
        if num is None:
            return out
        sides = [(side, v) for side, v in (("lo", lo_n), ("hi", hi_n)) if v is not None]
        if not sides:
            return out
        side, limit = min(sides, key=lambda sv: abs(num - sv[1]))
        out.update(number=float(num), bound=(side, float(limit), shown[side]))
        return out

    def _cond_label(self, cond: dict) -> str:
        if cond["test"] == "entity":
            hop = cond["path"][-1]
            lab = hop["label"]
        else:
            lab = cond.get("label") or ""
        return self.lang.mid(lab)

    # ------------------------------------------------------------------ cells

    def cell(self, col: dict, c: Candidate):
        base = col["base"]
        if base == "rank":
            return c.cells.get(col["name"], "")
        if base == "link":
            if col["attribute"] == "date":
                return c.date.isoformat() if c.date else "unknown"
            if col.get("note") is not None:  # the link's own attribute, written after it ('sales')
                parts = note_parts(c.span)
                return note_at(parts, col["note"], col.get("label") or "", col.get("labelled")) or "unknown"
            if c.span is None or c.span.start is None:
                return "unknown"
            if col["attribute"] == "start":
                return str(c.span.start)
            if c.span.open or c.span.end is None:  # the word the question asks for: 'present', '至今'
                return self.lang.present
            return str(c.span.end)
        if base == "other" and c.other is not None:
            name, url = c.other
        elif base == "row" and c.anchor is not None:
            name, url = c.anchor.name, c.anchor.url
        else:
            name, url = c.name, c.url
        self.agenda.why = ("row", col["name"])
        for hop in col["path"]:
            got = self.entities.targets(url, hop, name)
            self.agenda.why = ("linked", col["name"])
            if got is NEED:
                return NEED
            if not got:
                return "unknown"
            name, url = got[0].name, got[0].url
        if col.get("agg") == "count":
            n = self.entities.count_of(url, col["via"], name)
            self.agenda.why = ("linked", col["name"])
            return n if n is NEED else "unknown" if n is None else str(n)
        if col.get("agg"):
            items = self.entities.targets(url, col["via"], name)
            self.agenda.why = ("linked", col["name"])
            if items is NEED:
                return NEED
            items = items or []
            if col.get("only"):  # only the links whose own attribute has the value (a grant's principal investigator)
                only = col["only"]
                items = [i for i in items
                         if norm(note_at(note_parts(i.span), only["note"], only["label"], only.get("labelled")) or "") == norm(only["value"])]
            if col["agg"] == "latest":
                years = [i.span.start for i in items if i.span.start is not None]
                return str(max(years)) if years else "unknown"
            return "; ".join(sorted(i.name for i in items)) if items else "unknown"
        if col["attribute"] is None:
            return name
        listed = c.listed.get(header_for(c.listed, col.get("label", ""))) if not col["path"] and base != "other" else None
        cell = listed if listed is not None else self.entities.attribute(url, col["label"], name, figure=col["kind"] in ("number", "date"),
                                                                         unit=col.get("unit"), kind=col["kind"])
        if cell is NEED:
            return NEED
        if cell is None:
            return "unknown"
        return _format(cell, col["kind"])

    # ------------------------------------------------------------------ planning

    def plan(self) -> Source:
        """Where the candidates come from: the smallest list the question's conditions point to."""
        q = self.q
        conds = {c["letter"]: c for c in q.get("conditions", [])}
        musts = combo_musts(self.brief.combo) | ({"S"} if "S" in conds else set())
        if q["shape"] == "timeline" and q.get("anchor"):
            return Named(q["anchor"])
        home = _expand(q["home"]) if q.get("home") else None
        part = q.get("part") or {}

        def source(k: str, max_hops: int = 3) -> tuple[int, Source] | None:
            """A source of candidates that every row meeting condition k is on, and its rank (lower first)."""
            c = conds[k]
            path = _expand(c["path"])
            if home and _same_path(path, home):
                if c["test"] == "entity":
                    return 2, PartList(q["plural"], c["value"], frozenset({k}), phrase=part.get("phrase"))
                return 5, PartsOf(q["plural"], PartIndex(part["plural"], c), frozenset({k}), phrase=part.get("phrase"))
            if c["test"] != "entity":
                return None
            if home and _same_path(path[:len(home)], home) and all(h.get("back") for h in path[len(home):]):
                return 3, PartsOf(q["plural"], BackList(c["value"], path[len(home):], frozenset()), frozenset(), phrase=part.get("phrase"))
            if path and len(path) <= max_hops and all(h.get("back") for h in path):
                # a named entity's own list first (narrow), then the country's list, then longer walks back
                return {1: 0, 2: 1}.get(len(path), 4), BackList(c["value"], path, frozenset({k}))
            return None

        options = [x for x in (source(k) for k in sorted(musts)) if x is not None]
        if options:
            return min(options, key=lambda x: x[0])[1]
        alts = combo_alternatives(self.brief.combo)
        if alts:
            srcs = [source(k) for k in alts]
            if all(srcs):
                return Union([x[1] for x in srcs])
        if home:  # nothing narrower: every part's lists, of its current and its former members
            return PartsOf(q["plural"], PartIndex(part["plural"], None), frozenset(), former=True, phrase=part.get("phrase"))
        return Union([])

    # ------------------------------------------------------------------ the turn

    def advance(self) -> bool:
        """Work through what can be decided with the pages read; True when the answer is ready."""
        q = self.q
        if self.source is None:
            self.source = self.plan()
        if self.candidates is None:
            self.agenda.why = ("source", q["plural"]) if self.brief.kind == Shape.TABLE and q.get("plural") else ("entity", "")
            got = self.source.step(self)
            if got is NEED:
                return False
            self.candidates = got
            pages = sum(len(x.pages) for x in readers_of(self.source))
            n = len(got)
            # the names counted are in view, unless a note was written while the list was read (the note
            # gives the pages read and how many entries they hold, not the names: then the count stands
            # on those figures, and the pages read are counted by their addresses)
            written = self.values.notebook is not None
            counted = [] if written else [("candidates", n, [c.name for c in got], "n")]
            if pages:
                read_pages = [] if written else [("list_pages_read", pages, [u for x in readers_of(self.source) for u in x.pages_read()],
                                                  "pages")]
                self.told.note("list_done", claims=counted + read_pages, n=n, s=_s(n), pages=pages, ps=_s(pages))
            else:
                self.told.note("candidates_found", claims=counted, n=n, s=_s(n))
        shape = q["shape"]
        pending = False
        ncols = len(q.get("columns", []))
        for c in self.candidates:
            if c.state == "open":
                ok = self._step(c, self.decide, c)
                if ok is NEED:
                    pending = True
                    continue
                c.state = "lost" if ok is None else "kept" if ok else "rejected"
            if c.state != "kept" or shape == "ranked":
                continue
            if shape in ("timeline", "events"):  # rows are the kept entity's links
                if c.links is None:
                    got = self._step(c, self._link_rows, c)
                    if got is NEED:
                        pending = True
                        continue
                    c.links = got
                rows = c.links
            else:
                rows = [c]
            for row in rows:
                if len(row.cells) < ncols:  # a row with every cell is done (most, late in a long task)
                    pending |= self._step(row, self._fill, row) is not True
        if shape == "ranked" and not pending:
            top = self._ranked([c for c in self.candidates if c.state == "kept"])
            if top is NEED:
                return False
            for row in top:
                pending |= self._step(row, self._fill, row) is not True
            self.rows = top
        if pending:
            return False
        if shape != "ranked":
            self.rows = [r for c in self.candidates if c.state == "kept" for r in (c.links if c.links is not None else [c])]
        return True

    def _step(self, holder: Candidate, fn, *args):
        """Run one step of a candidate (deciding it, listing its links, filling a row) unless what
        it waited for last time is still not in: then only ask for that again (a candidate is not
        worked through again until one of its pages has come)."""
        waiting = holder.waiting
        if waiting:
            read, failed = self.pages.read, self.pages.failed
            for w in waiting:
                if w[0] is None:
                    if self._arrived(w):
                        break
                elif w[0] in read or w[0] in failed or w[0] in self.searches.fresh_snippets:
                    break
            else:
                for url, purpose in waiting:
                    if url is None:
                        self.agenda.search_wants.setdefault(purpose, "entity")
                    else:
                        self.agenda.wants.setdefault(url, purpose)
                return NEED
        self.agenda.asking = []
        got = fn(*args)
        holder.waiting = list(self.agenda.asking) if got is NEED or got is False else None
        return got

    def _arrived(self, w: tuple) -> bool:
        url, purpose = w
        if url is None:
            key = norm(purpose)
            return key in self.searches.results or self.searches.search_tries[key] > self.opt.max_retries
        return url in self.pages.read or url in self.pages.failed

    def _fill(self, row: Candidate) -> bool:
        """Every cell of a row that the pages read so far can give; False while some need pages."""
        done = True
        for col in self.q["columns"]:
            if col["name"] in row.cells:
                continue
            self.values.read_from = None
            v = self.cell(col, row)
            if v is NEED:
                done = False
                continue
            row.cells[col["name"]] = v
            if self.values.read_from:
                row.where[col["name"]] = (self.values.read_from, self.label_of(self.values.read_from))
        return done

    def _ranked(self, kept: list[Candidate]):
        rk = self.q["rank"]
        need = False
        self.agenda.why = ("rank", rk.get("label") or rk["attribute"])  # the pages opened now are for the ranking's figure
        for c in kept:
            if c.rank_value is not None:
                continue
            cell = c.listed.get(header_for(c.listed, rk.get("label", "")))
            if cell is None:
                cell = self.entities.attribute(c.url, rk["label"], c.name, figure=True, unit=rk.get("unit"), kind=rk.get("kind"))
            if cell is NEED:
                need = True
                continue
            v = read_number(strip_links(cell)) if cell else None
            c.rank_value = v if v is not None else float("nan")
            c.rank_text = strip_links(cell) if cell else None
        if need:
            return NEED
        valued = [c for c in kept if c.rank_value == c.rank_value]
        valued.sort(key=lambda c: (-c.rank_value if rk["descending"] else c.rank_value, c.name))
        top = valued[: rk["n"]]
        rank_col = next((x["name"] for x in self.q["columns"] if x["base"] == "rank"), None)
        for c in top:
            better = sum(1 for x in valued if (x.rank_value > c.rank_value if rk["descending"] else x.rank_value < c.rank_value))
            if rank_col:
                c.cells[rank_col] = str(better + 1)
        if self.ranked is None:
            self.ranked = top
            # the values it orders, by name: a rank cell is grounded where these are visible
            self.told.note("ranked_done", claims=[("ranked", len(valued), [[c.name, c.rank_text] for c in valued], "n")],
                      attr=self.lang.mid(rk.get("label", rk["attribute"])), n=len(valued), k=len(top))
        return top

    def _link_rows(self, a: Candidate):
        """The rows of one kept entity in a timeline (its tenures) or an events table (its dated links)."""
        hop = self.q["links"]
        period = self.q.get("period")
        lo = dt.date.fromisoformat(period[0]) if period and period[0] else None
        hi = dt.date.fromisoformat(period[1]) if period and period[1] else None
        rows: list[Candidate] = []
        self.agenda.why = ("row", "")
        only = self.q.get("note_filter")  # only links whose own attribute has a value ("jobs in sales")
        if self.q["shape"] == "events":
            page = self.entities.article(a.url, a.name)
            if page is NEED:
                return NEED
            for d in page.timeline if page is not None else []:
                if norm(d.label) != norm(hop["label"]) or d.name is None:
                    continue
                if (lo and d.date < lo) or (hi and d.date > hi):
                    continue
                if only is not None:
                    parts = note_parts(Span(note=d.note))
                    if norm(note_at(parts, only["note"], only["label"], only.get("labelled")) or "") != norm(only["value"]):
                        continue
                rows.append(Candidate(a.name, a.url, {}, a.source, "kept", other=(d.name, d.url), date=d.date, anchor=a,
                                      span=Span(note=d.note) if d.note else None))
            return rows
        items = self.entities.targets(a.url, hop, a.name)
        if items is NEED:
            return NEED
        tenure = self.q.get("tenure_rule")  # the question's rule: only tenures under way ("current"), or ended
        for i in items or []:
            if (lo or hi) and (i.span.start is None or (lo and i.span.start < lo.year) or (hi and i.span.start > hi.year)):
                continue
            if tenure is not None and (i.span is None or i.span.end is None) != (tenure == "current"):
                continue
            if only is not None:
                parts = note_parts(i.span)
                if norm(note_at(parts, only["note"], only["label"], only.get("labelled")) or "") != norm(only["value"]):
                    continue
            rows.append(Candidate(a.name, a.url, {}, a.source, "kept", other=(i.name, i.url), span=i.span, anchor=a))
        return rows

    # ------------------------------------------------------------------ the turn's calls and text

    def turn(self) -> tuple[str, list[ToolCall]]:
        self.agenda.turns_taken += 1
        self.agenda.wants = {}
        self.agenda.search_wants = {}
        parts: list[Event] = []
        opening = not self.told.plan_said
        if opening:
            self.told.plan_said = True
            parts.append(self._plan_event())
            if self.brief.kind == Shape.TABLE:
                self.source = self.plan()
                strategy = self._strategy_event(self.source)
                if strategy is not None:
                    parts.append(strategy)
        ready = self.advance()
        for move, url, slots in self.agenda.trouble:  # a failed page is retried only if something still needs it
            self.told.note(move if url in self.agenda.wants else "moot", **slots)
        self.agenda.trouble = []
        parts += self._told()
        if ready:
            return self._final_text(parts, opening), []
        calls: list[ToolCall] = []
        intents: list[Event] = []
        # searches this turn: one call, several queries
        qs = [q for q in self.agenda.search_wants if self.searches.search_tries[norm(q)] <= self.opt.max_retries][:SEARCH_QUERIES_MAX]
        # a rejected candidate's own page is not opened: other conditions asked for it before the
        # one that ruled the candidate out was settled (from a snippet, or a linked page)
        dropped = {c.url for c in self.candidates or [] if c.state in ("rejected", "lost")
                   and self.agenda.wants.get(c.url, ("",))[:2] == ("check", c.name)}
        pending = [u for u in self.agenda.wants if u in self.pages.seen and u not in self.pages.read and u not in dropped]
        # pages wanted only for a date or a figure are searched for first (the name and that label,
        # four at a time): a snippet may show the value, and only the pages it leaves open are read
        need = self.agenda.figure_need
        later = {u for u in pending if u in need and self._eligible(u)}  # searched first (now or later), then opened
        ahead = [] if qs else self._ahead(pending)
        # a search ahead (the results of several queries to read) takes a slot and some of the reading
        opens = self._focus([u for u in pending if u not in later], self.k - (1 if qs or ahead else 0),
                            READ_LOAD - (len(ahead) >= 3))
        if qs:
            purpose = self.agenda.search_wants[qs[0]]
            if self.searches.search_tries[norm(qs[0])]:  # the same search again, after an error or nothing found
                intents.append(Event("search_retry", dict(q=qs[0])))
            elif purpose == "again":
                intents.append(Event("search_again", dict(q=qs[0])))
            elif purpose == "entity" and len(qs) == 1:
                intents.append(Event("search_entity", dict(name=qs[0])))
            else:
                intents.append(Event("search_list", dict(q=qs[0] if len(qs) == 1 else "\", \"".join(qs))))
            calls.append(ToolCall("web_search", _args(query=qs[0]) if len(qs) == 1 else _args(query=qs[0], queries=qs[1:])))
            for x in qs:
                self.searches.search_tries[norm(x)] += 1
        elif ahead:
            qs = [f"{n} {lab}" for n, lab in ahead]
            labels = list(dict.fromkeys(self.lang.mid(lab) for _, lab in ahead))
            if len(labels) == 1:
                names, label = [n for n, _ in ahead], labels[0]
            else:  # one label each: name it beside each name
                names, label = [n + self.lang.paren(self.lang.mid(lab)) for n, lab in ahead], self.told.voice.phrase("figures")
            intents.append(Event("search_ahead", dict(names=self.told.voice.names(names), label=label)))
            calls.append(ToolCall("web_search", _args(query=qs[0]) if len(qs) == 1 else _args(query=qs[0], queries=qs[1:])))
        # a second source about an entity whose article it has read, to compare: a slot of its own
        rejected = {c.url for c in self.candidates or [] if c.state == "rejected"}
        for a in [a for a in self.compared.second if a in rejected]:  # decided already: nothing left to check
            del self.compared.second[a]
        art = next((a for a in self.compared.second if a in self.pages.read and self.compared.second[a] not in later), None)  # not one searched for first
        if art is not None and self.k - len(calls) > 0:
            other = self.compared.second.pop(art)
            self.compared.second_of[other] = art
            self.values.stats["rejected_cross_checks"] += art in rejected
            opens = [other] + [u for u in opens if u != other][: self.k - len(calls) - 1]
            self.agenda.wants.setdefault(other, ("copy", self.label_of(art), ""))
            intents.append(Event("copy_check", dict(site=host(other), name=self.label_of(art))))
        if opens:
            intents += self._open_text(opens)
        for u in opens:
            self.pages.tries[u] += 1
            self.pages.purpose_of[u] = self.agenda.wants.get(u, ("",))[0]
            calls.append(ToolCall("web_extractor", _args(url=u)))
        if not calls:  # nothing left to fetch and not ready: pages that cannot be had; answer with what is known
            self._give_up()
            return self._final_text(parts, opening), []
        for c in calls:
            self.agenda.calls_made[c.name] += 1
        return self.told.speak(parts + intents, opening), calls

    def _focus(self, pending: list[str], slots: int, budget: int = 0) -> list[str]:
        """The pages to open this turn: those wanted for the same purpose as the first one waiting
        (checking candidates, collecting a row's columns, following a link, reading a list), as
        many as the turn has slots for: one kind of work a turn, so the batch follows the need;
        every slot when the turns left are few for the pages still wanted."""
        if not pending:
            return []
        budget = budget or READ_LOAD
        env = getattr(self.ep, "env", None)
        limit = getattr(self.ep, "max_turns", None) or (env.options.max_turns if env is not None else None)
        if self.agenda.pressed or (limit is not None and (limit - self.agenda.turns_taken) * slots < 3 * len(pending)):
            return pending[:slots]  # short of turns (or of room) for what is left: every slot, whatever it is for
        focus = self.agenda.wants.get(pending[0], ("",))[0]
        same = [u for u in pending if self.agenda.wants.get(u, ("",))[0] == focus][:slots]
        # as much as a turn can read with care (`_weight`, five a turn; the first page whatever it
        # weighs; `budget` when a search ahead takes some), then a short page wanted for something else
        # if the turn has room
        out, load = [], 0
        for u in same:
            w = self._weight(u)
            if out and load + w > budget:
                break
            out.append(u)
            load += w
        # what the turn can still read goes to a short page wanted for something else
        for u in pending:
            if len(out) >= slots or load >= budget:
                break
            if u not in out and load + self._weight(u) <= budget:
                out.append(u)
                load += self._weight(u)
        return out

    def _weight(self, url: str) -> int:
        """What a page costs a turn to read: a list page three, an article two, any other one."""
        return 3 if self.agenda.wants.get(url, ("",))[0] == "list" else 2 if is_encyclopedia(url) else 1

    def _eligible(self, url: str) -> bool:
        """A page wanted only for dates, figures or values a snippet may show, or wanted to decide a
        condition (a snippet may rule the candidate out before its page is read), whose name has
        not been searched with that label yet."""
        if url not in self.agenda.figure_need:  # an entity's page (an article, or the profile that is its page)
            return False
        label = norm(self.agenda.figure_need[url])
        if self.agenda.ahead_tried[label] >= AHEAD_TRIAL and self.agenda.ahead_hit[label] < AHEAD_WORTH * self.agenda.ahead_tried[label]:
            return False  # the snippets seldom state this label: its pages are opened without a search first
        if self.q.get("shape") in ("timeline", "events") and self.agenda.wants.get(url, ("",))[0] == "check":
            # a kept candidate's article is read anyway (it lists the rows): a snippet saves a page only
            # when it rules the candidate out, or when the articles leave the value to a profile
            decided = [c.state for c in self.candidates or [] if c.state in ("kept", "rejected")]
            on, off = self.agenda.on_article[label], self.agenda.off_count[label]
            if (len(decided) >= AHEAD_TRIAL and decided.count("rejected") < AHEAD_WORTH * len(decided)
                    and on + off >= AHEAD_TRIAL and off < 0.5 * (on + off)):
                return False
        if url in self.agenda.other_need and url not in self.agenda.deciding:
            return False  # the page is read anyway: a snippet could not save it
        if url in self.pages.beside_name:  # a profile an article sent the research to, for one value
            if any(p == url and a in self.agenda.wants and a not in self.pages.read for a, p in self.pages.profile_of.items()):
                return False  # its article is about to be read (for another cell): no search by the same name beside it
            return norm(f"{self.pages.beside_name[url]} {self.agenda.figure_need[url]}") not in self.searches.searched_names
        n = self.label_of(url)
        return bool(n) and n != url and norm(n) not in self.searches.searched_names

    def _ahead(self, pending: list[str]) -> list[tuple[str, str]]:
        """(name, label) for the next four pages wanted only for a date or a figure, now searched."""
        out = []
        for u in pending:
            if u not in self.agenda.figure_need or not self._eligible(u):
                continue
            label = self.agenda.figure_need[u]
            if u in self.pages.beside_name:  # the name and that label: its result's snippet may show the value
                n = self.pages.beside_name[u]
                self.searches.searched_names.add(norm(f"{n} {label}"))
                out.append((n, label))
            else:
                n = self.label_of(u)
                out.append((n, label))
                self.searches.searched_names.add(norm(n))
                self.agenda.verifying[norm(f"{n} {label}")] = (u, n)
            self.agenda.ahead_tried[norm(label)] += 1
            if len(out) == 4:
                break
        return out

    def _open_text(self, opens: list[str]) -> list[Event]:
        """What the pages opened this turn are for, one event per purpose."""
        groups: dict[tuple[str, str], list[str]] = {}
        cols: dict[tuple[str, str], list[str]] = {}
        for u in opens:
            kind, name, what = self.agenda.wants.get(u, ("copy", "", ""))
            if kind == "copy":
                continue
            key = (kind, what if kind in ("hop", "linked", "walk", "check", "rank", "source") else "")
            groups.setdefault(key, []).append(name)
            if kind == "row" and what:
                cols.setdefault(key, []).append(what)
        out = []
        v = self.told.voice
        q = self.lang.quote
        for (kind, what), names in groups.items():
            ns = v.names(list(dict.fromkeys(names)))
            if kind == "list":
                nums = [m.group(1) for u in opens if self.agenda.wants.get(u, ("",))[0] == "list" for m in [_PAGE_NO.search(u)] if m]
                out.append(Event("open_list", dict(names=ns, page=nums[0] if len(nums) == 1 else "", count_names=len(set(names)))))
                continue
            elif kind == "check" and (self._checking() or what):
                out.append(Event("open_candidates", dict(names=ns, what=self._checking() or q(what), count_names=len(set(names)))))
            elif kind == "hop":
                out.append(Event("open_hop", dict(names=ns, cond=q(what), count_names=len(set(names)))))
            elif kind == "linked":
                out.append(Event("open_linked", dict(names=ns, col=q(what), count_names=len(set(names)))))
            elif kind == "rank":  # a candidate's figure for the ranking
                out.append(Event("open_rows", dict(names=ns, cols=q(self.lang.mid(what)), count_names=len(set(names)))))
            elif kind == "source":  # pages read for the candidates: a part's article or a list that names them
                out.append(Event("open_source", dict(names=ns, what=what, count_names=len(set(names)))))
            elif kind == "entity":
                out.append(Event("open_entity", dict(names=ns, count_names=len(set(names)))))
            elif kind == "walk":
                out.append(Event("open_walk", dict(names=ns, label=what, count_names=len(set(names)))))
            else:  # a row's columns: the ones its cells still lack
                lack = self._lacking(names) or list(dict.fromkeys(cols.get((kind, what), [])))
                out.append(Event("open_rows", dict(names=ns, cols=v.names(lack, limit=3) if lack else "", count_names=len(set(names)))))
        return out

    def _lacking(self, names: list[str]) -> list[str]:
        """The columns the kept rows of `names` still lack, commonest first."""
        cols = [c["name"] for c in self.q.get("columns", []) if c.get("base") != "rank"]
        want = {norm(n) for n in names}
        miss: Counter = Counter()
        for c in self.candidates or []:
            for row in (c.links if c.links is not None else [c]):
                if norm(row.name) in want:
                    miss.update(n for n in cols if n not in row.cells)
        return [n for n, _ in miss.most_common()]

    def _checking(self) -> str:
        implied = self.source.implied if self.source is not None else frozenset()
        texts = [c["text"] for c in self.q.get("conditions", []) if c["letter"] not in implied and not c.get("scope")
                 and not c.get("rule")]
        if not texts:
            return ""
        return self.lang.join(self.lang.quote(t) for t in texts[:2])

    def _plan_event(self) -> Event:
        q, v = self.q, self.told.voice
        if self.brief.kind == Shape.MULTIHOP:
            return Event("plan_chain", dict(n=len(q["hops"]), start=q["start"]))
        cols = [c["name"] for c in q.get("columns", [])]
        colnames = v.names(cols, limit=6)
        texts = {c["letter"]: c["text"] for c in q.get("conditions", []) if not c.get("scope")}
        conds = list(texts.values())
        scope = next((c["text"] for c in q.get("conditions", []) if c.get("scope")), "")
        cond_text = v.phrase("combo", q.get("combo") or "", A=texts.get("A", ""), B=texts.get("B", ""), C=texts.get("C", ""))
        cond_text = v.phrase("scoped", conds=cond_text, scope=scope) if cond_text and scope else cond_text or scope
        cond_text = cond_text or v.phrase("all")
        # one of the rows: the pack's type name in its own language, else the language's singular
        # of the question's plural ('empresa', 公司; the type's English name was written into both)
        one = q["type"].replace("_", " ") if self.lang.code == BASE else self.lang.singular(q["plural"]) or q["plural"]
        shape = q["shape"]
        if shape == "ranked":
            rk = q["rank"]
            dirw = v.phrase("highest" if rk["descending"] else "lowest")
            sc = self.lang.space + self.lang.space.join(conds + ([scope] if scope else []))
            return Event("plan_ranked", dict(n=rk["n"], plural=q["plural"], scope=sc, attr=self.lang.mid(rk.get("label") or rk["attribute"]),
                                             dir=dirw, cols=colnames))
        if shape in ("timeline", "events"):
            label = self.lang.mid(q["links"]["label"])
            period = q.get("period")
            ptxt = ""
            if period:
                a, b = period
                ptxt = self.lang.years(a[:4] if a else None, b[:4] if b else None)
            target = q.get("anchor") or v.phrase("target", plural=q["plural"], conds=cond_text)
            if shape == "timeline":
                return Event("plan_timeline", dict(label=label, target=target, period=ptxt, cols=colnames))
            return Event("plan_events", dict(label=label, period=ptxt.strip() or v.phrase("in_period"),
                                             scope=v.phrase("involving", plural=q["plural"], conds=cond_text), cols=colnames))
        return Event("plan_table", dict(one=one, plural=q["plural"], conds=cond_text, ncols=len(cols), cols=colnames))

    def _strategy_event(self, src: Source) -> Event | None:
        """Where the candidates will come from, said once at the start."""
        q = self.q
        if isinstance(src, PartList) and src.place:
            return Event("strategy_part", dict(what=src.title_in(self.lang)))
        if isinstance(src, BackList):
            return Event("strategy_back", dict(name=src.name, plural=q["plural"]))
        if isinstance(src, Union):
            return Event("strategy_union", {})
        if isinstance(src, Named):
            return Event("strategy_anchor", dict(name=src.name))
        if isinstance(src, PartsOf):
            return Event("strategy_parts", dict(plural=q["plural"]))
        return None

    def _told(self) -> list[Event]:
        """This turn's observations and decisions, and where they leave the task."""
        out = list(self.told.notes)
        self.told.notes = []
        v = self.told.voice
        rejected_listing = [d for m, d in self.told.decisions if m in ("reject", "reject_excluded") and d.get("listing")]
        others = [(m, d) for m, d in self.told.decisions if not ((m in ("reject", "reject_excluded")) and d.get("listing"))]
        self.told.decisions = []
        if len(rejected_listing) > 2:
            names = [d["name"] for d in rejected_listing]
            out.append(Event("reject_many", dict(n=len(names), label=rejected_listing[0]["label"], examples=v.names(names[:3], limit=3)),
                             [("rejected", len(names), names, "n")]))
        else:
            others = [(("reject" if not d.get("excluded") else "reject_excluded"), d) for d in rejected_listing] + others
        out += [Event(move, d) for move, d in others]
        if self.candidates is not None and self.brief.kind == Shape.TABLE:
            done = sum(1 for c in self.candidates if c.state != "open")
            total = len(self.candidates)
            decided_now = any(m in ("keep", "reject", "reject_excluded") for m, _ in others) or rejected_listing
            # said at milestones, not after every decision: a researcher takes stock now and then
            if 0 < done < total and decided_now and self.rng.random() < 0.6 and done - self.told.progress_said >= max(3, total // 10):
                self.told.progress_said = done
                kept = [c for c in self.candidates if c.state == "kept"]
                out.append(Event("progress", dict(done=done, total=total, kept=len(kept), left=total - done,
                                                  missing=self._missing(kept)),
                                 [("progress", done, {"total": total, "kept": len(kept), "left": total - done}, "total")]))
        return out

    def _missing(self, kept: list[Candidate]) -> list[tuple[str, int]]:
        """(column, rows) the kept rows still lack, commonest first."""
        cols = [c["name"] for c in self.q.get("columns", []) if c.get("base") != "rank"]
        miss: Counter = Counter()
        for c in kept:
            for row in (c.links if c.links is not None else [c]):
                miss.update(n for n in cols if n not in row.cells)
        return miss.most_common(3)

    def _give_up(self) -> None:
        for c in self.candidates or []:
            if c.state == "open":
                c.state = "lost"

    def _final_text(self, parts: list[Event], opening: bool = False) -> str:
        n = len(self.rows)
        if self.agenda.turn_out:
            parts.append(Event("out_of_turns", dict(n=n, s=_s(n)), [("rows", n, None, "n")]))
        elif self.brief.kind == Shape.MULTIHOP:
            parts.append(Event("final_chain", {}))
        else:
            dropped = [c.name for c in self.candidates or [] if c.state == "rejected"]
            parts.append(Event("final_table", dict(n=n, s=_s(n), dropped=len(dropped), ds=_s(len(dropped))),
                               [("rows", n, None, "n"), ("dropped", len(dropped), self._dropped_ref(dropped), "dropped")]))
        self.final = self.answer()
        return self.told.speak(parts, opening)

    def _dropped_ref(self, dropped: list[str]) -> dict:
        """The names a 'dropped' count stands for, with those a kept row shares (namesakes: one
        kept, another dropped) apart, so that the grounding check holds the others to the answer."""
        kept = {norm(c.name) for c in self.candidates or [] if c.state == "kept"}
        return {"names": [n for n in dropped if norm(n) not in kept], "shared": [n for n in dropped if norm(n) in kept]}

    def submit_now(self) -> str:
        """The text of a last turn the budget forces: what is verified is the answer (`final`)."""
        self.agenda.turn_out = True
        self.rows = self.verified_rows()
        return self._final_text(self._told())

    def submit_stalled(self) -> str:
        """The text of a last turn when the research state it just wrote is one it wrote before
        (the state fills the context, and what fits after it never settles anything new: it
        would go round until the turns run out): it says so, and what is verified is the
        answer (`final`)."""
        self.rows = self.verified_rows()
        n = len(self.rows)
        left = sum(1 for c in self.candidates or [] if c.state == "open")
        parts = self._told() + [Event("out_of_room", dict(n=n, s=_s(n), left=left, ls=_s(left)), [("rows", n, None, "n")])]
        self.final = self.answer()
        return self.told.speak(parts)

    def verified_rows(self) -> list[Candidate]:
        """Out of turns: the rows whose every cell is known."""
        names = [c["name"] for c in self.q.get("columns", [])]
        if self.rows:
            pool = self.rows
        else:
            kept = [c for c in (self.ranked or self.candidates or []) if c.state == "kept"]
            pool = [r for c in kept for r in (c.links if c.links is not None else [c])]
        return [c for c in pool if all(n in c.cells for n in names)]

    def answer(self) -> str:
        cols = [c["name"] for c in self.q["columns"]]
        rows = [[c.cells.get(name, "unknown") for name in cols] for c in self.rows]
        return markdown_table(cols, rows)

    # ------------------------------------------------------------------ absorbing results

    def absorb(self, calls: list[ToolCall], results: list[dict]) -> None:
        self.searches.fresh_snippets = set()
        for c, res in zip(calls, results):
            args = json.loads(c.arguments)
            text = res["content"]
            cid = res["tool_call_id"]
            if c.name == "web_search":
                self._absorb_search(args, text, cid)
            else:
                self._absorb_page(args["url"], text, cid)

    def _absorb_search(self, args: dict, text: str, cid: str) -> None:
        qs = [args["query"], *args.get("queries", [])]
        blocks = read_search(text)
        if len(blocks) == 1 and blocks[0].error:
            self.told.note("search_failed", why=self.told.voice.error(blocks[0].error))
            return
        compared = False  # at most one second source per search
        for q, b in zip(qs, blocks):
            if not b.results:
                self.told.note("no_results", q=q)
                continue
            self.searches.results[norm(q)] = b.results
            art, q = self.agenda.verifying.get(norm(q), (None, q))  # q: the name the search was about
            if art is not None and len(self.compared.second) + len(self.compared.second_of) < CROSS_CHECKS_MAX and not compared:
                # a second source about the candidate, to compare with its article
                alike = [x for x in b.results if x.url != art and _names(x.title, q)
                         and not is_encyclopedia(x.url) and "(page " not in x.title]
                # two pages of one name on one site, one on a news site with the name alone for a title,
                # or a profile dated by its last update are worth comparing (one may be out of date);
                # a lone profile now and then
                hosts = Counter(host(x.url) for x in alike)
                news = [is_news_url(x.url) for x in alike]
                odd = [x for x, n in zip(alike, news) if hosts[host(x.url)] > 1 or (norm(x.title) == norm(q) and n)
                       or (not n and read_date(x.date))]  # a profile with an update date: maybe out of date
                alike = odd[-1:] + [x for x in alike if x not in odd[-1:]]
                chance = self.opt.cross_check if odd else self.opt.cross_check / 3
                if alike and art not in self.compared.second and self.rng.random() < chance:
                    self.compared.second[art] = alike[0].url
                    self.pages.seen.add(alike[0].url)
                    compared = True
            for x in b.results:
                if x.snippet not in self.searches.snippets.setdefault(x.url, []):
                    self.searches.snippets[x.url].append(x.snippet)
                    self.searches.fresh_snippets.add(x.url)
                self.pages.seen.add(x.url)
                self.pages.link_names.setdefault(x.url, x.title)
                if is_encyclopedia(x.url) and "(" not in x.title:
                    self.pages.name_url.setdefault(norm(x.title), x.url)

    def _absorb_page(self, url: str, text: str, cid: str) -> None:
        page = read_page(url, text)
        if page.state == "ok" and page.edited and self.today and (self.today - page.edited).days > STALE_DAYS:
            page.state, page.archived = "archived", page.edited  # last edited long ago: a stale copy
        art = self.compared.second_of.get(url)
        if art is not None:
            if page.state == "ok":
                weigh(self, art, page)
            else:
                return  # opened only to compare: not tried again
        name = self.label_of(url)
        # no more tries after this one (a list page, which every row depends on, gets two more)
        last = self.pages.tries[url] > self.opt.max_retries + (2 if self.pages.purpose_of.get(url) == "list" else 0)
        if page.state == "archived" and "oldid=" in url:
            last = True  # a permanent link to an old revision reads the same however often it is loaded
        if page.state == "truncated":
            self.pages.fallback.setdefault(url, page)  # what it did show, if the whole page never comes
        elif page.state == "archived":
            self.pages.fallback[url] = page
        elif page.state == "missing":
            self.pages.failed.add(url)
        if page.state != "ok":
            if last or page.state == "missing":
                self.pages.failed.add(url)
                kept = self.pages.fallback.get(url)
                if kept is not None and kept.state == "archived":
                    self.told.note("archived_kept", page=name, date=kept.archived)
                elif kept is not None:
                    self.told.note("partial_kept", page=name)
                else:
                    self.told.note("gave_up", claims=[("tries", self.pages.tries[url], url, "n")], page=name, n=self.pages.tries[url])
            elif page.state == "error":  # told next turn, once it is known whether the page is still needed
                self.agenda.trouble.append(("failed", url, dict(page=name, why=self.told.voice.error(page.error))))
            elif page.state == "truncated":
                self.agenda.trouble.append(("cut", url, dict(page=name)))
            elif page.state == "archived":
                self.agenda.trouble.append(("archived", url, dict(page=name, date=page.archived.isoformat() if page.archived else "?")))
            return
        self.pages.read[url] = page  # a second source too: an article may leave a value to it
        if art is not None:
            return
        if page.rows and self.candidates:  # a list page read again: what it shows of the candidates still open, or
            # kept with cells to fill (a ranked row kept before a note, whose list cells the note left out)
            at = {c.url: c for c in self.candidates if c.state in ("open", "kept") and not c.listed}
            for _n, u, cells in page.rows:
                if u in at:
                    at[u].listed = dict(zip(page.headers[1:], cells))
        notice(self, url, page)
        for lab, cell in page.infobox + page.fields:  # the values a label takes, for reading prose later
            self.entities.know(lab, cell)
        for k, lab in enumerate(page.headers[1:]):
            for r in page.rows:
                if k < len(r[2]):
                    self.entities.know(lab, r[2][k])
        for t, u in page.links:
            self.pages.seen.add(u)
            if t and u not in self.pages.link_names:
                self.pages.link_names[u] = t
            if is_encyclopedia(u) and t:
                self.pages.name_url.setdefault(norm(t), u)
        for _, u, _ in page.lists:
            self.pages.seen.add(u)
        self.pages.seen.update(page.page_urls.values())
        for u in (page.next_url, page.prev_url):
            if u:
                self.pages.seen.add(u)
        if page.name:
            self.pages.link_names[url] = page.name


READ_LOAD = 5  # what one turn opens, by weight (`Research._focus`)


def _own_page(results, name: str) -> str | None:
    """The result that is the entity's own page: its encyclopedia article, else (an entity without
    one) a page titled with its name alone, not a news item."""
    named = [x for x in results if norm(x.title) == norm(name)]
    hit = next((x.url for x in named if is_encyclopedia(x.url)), None)
    return hit or next((x.url for x in named if not is_news_url(x.url)), None)


def _names(title: str, name: str) -> bool:
    """A result's title names this entity: the name whole, alone or before a qualifier ('Liu Feng',
    'Liu Feng (player)'), never a longer name it begins ('刘峰' is not '刘峰亮', 'Ann Lee' not 'Ann Leeds')."""
    t, n = norm(title), norm(name)
    return t.startswith(n) and (len(t) == len(n) or not t[len(n)].isalnum())


def _cond_kind(cond: dict) -> str:
    """The kind of value a condition reads: a date or a figure for a range, else a category."""
    return "string" if cond["test"] == "eq" else "date" if cond.get("kind") == "date" else "number"


def _format(cell: str, kind: str) -> str:
    text = strip_links(cell)
    if kind == "date":
        d = read_date(text)
        return d.isoformat() if d else text
    if kind == "number":
        v = read_number(text)
        return plain_number(v) if v is not None else text
    if kind == "url":
        m = re.search(r"https?://\S+", text)
        return m.group(0) if m else text
    return text


def _expand(path: list[dict]) -> list[dict]:
    """A path with every lookup replaced by the links it follows (a city's country: region, country)."""
    out = []
    for h in path:
        out += h["through"] if h["kind"] == "lookup" and h.get("through") else [h]
    return out


def _same_path(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(x["via"] == y["via"] and x["kind"] == y["kind"] and x["reverse"] == y["reverse"]
                                    for x, y in zip(a, b))


# A row is kept when the question's conditions hold (A), it lies in the question's part (B: the
# condition S, 'in Braeria') and the question's rule does not leave it out (C: R, 'living people only').
_RULED = parse_combo("A&B&!C")


def _s(n: int) -> str:
    """The plural ending of an English count ('1 row', '2 rows')."""
    return "" if n == 1 else "s"


def _args(**kw) -> str:
    return json.dumps(kw, ensure_ascii=False)


# --------------------------------------------------------------------------- multi-hop chains


class ChainResearch(Research):
    """A multi-hop question: find the start's page, follow each hop from page to page, answer."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.followed: set[tuple[int, str]] = set()
        self.value = "unknown"
        self.path: list[tuple[str, str | None]] = []  # the chain followed so far: (name, url)

    def advance(self) -> bool:
        q = self.q
        url = self.find_article(q["start"])
        if url is NEED:
            return False
        name = q["start"]
        if url is None:
            return self._answer(None, name)
        self.path = [(name, url)]
        for i, hop in enumerate(q["hops"]):
            got = self.entities.targets(url, hop, name)
            if got is NEED:
                return False
            if not got:
                return self._answer(None, name)
            nxt = got[0]
            if (i, nxt.name) not in self.followed:
                self.followed.add((i, nxt.name))
                self.told.note("follow", from_name=name, label=self.lang.mid(hop.get("note_label") or hop["label"]), to_name=nxt.name)
            name, url = nxt.name, nxt.url
            self.path.append((name, url))
            if url is None and (i < len(q["hops"]) - 1 or q["answer"]["attribute"] is not None):  # named, not linked: its page
                found = self.find_article(name)
                if found is NEED:
                    return False
                url = found
        ans = q["answer"]
        if ans["attribute"] is None:
            return self._answer(name, name)
        # the answer read as what it is: a date or a figure (with its unit) in prose as well as in an infobox
        cell = self.entities.attribute(url, ans["label"], name, figure=ans.get("kind") in ("number", "date"), unit=ans.get("unit"),
                              kind=ans.get("kind"))
        if cell is NEED:
            return False
        return self._answer(_format(cell, ans["kind"]) if cell else None, name)

    def _answer(self, value: str | None, at: str) -> bool:
        """The chain's end: its answer, or where it broke off ('unknown')."""
        if value is None:
            self.told.note("chain_broken", name=at)
        else:
            self.value = value
            self.told.note("answer_found", value=value)
        return True

    def answer(self) -> str:
        return markdown_table(list(self.q["columns"]), [[self.q["start"], self.value]])


def run_oracle(episodes: list[Episode], options) -> None:
    """Drive every episode to its end with the honest oracle (episodes are independent)."""
    from .state import forget, progress_signature, write_state

    for ep in episodes:
        brief = Brief.of(ep.task.record)
        r = (ChainResearch if brief.kind == Shape.MULTIHOP else Research)(ep, brief, options.parallel_calls, ep.env.seed, options.oracle)
        limit = ep.max_turns or ep.env.options.max_turns
        last_sig, idle = None, 0  # notes in a row written with nothing settled since the one before
        while not ep.done:
            if ep.compacting:  # the context is full: write a research note and go on from the notes alone
                # what the last results gave goes into the note (read before it is written: the
                # pages just opened are visible until then, and forgotten after)
                r.agenda.wants, r.agenda.search_wants = {}, {}
                r.advance()
                text = write_state(r, consolidate=getattr(ep, "consolidating", False))
                ep.write_state(text)
                forget(r, text)
                sig = progress_signature(r)
                idle = idle + 1 if sig == last_sig else 0
                last_sig = sig
                if idle >= STALL_NOTES and r.agenda.pressed:  # round in circles even with every slot used: it stops
                    ep.act(r.submit_stalled(), [ToolCall("final_answer", _args(answer=r.final))], claims=r.told.take_claims())
                    break
                if idle >= 2:  # nothing settled over the last notes: it uses every slot from now on
                    r.agenda.pressed = True
                continue
            if ep.turns >= limit - 1:  # the last turn: submit what is verified
                ep.act(r.submit_now(), [ToolCall("final_answer", _args(answer=r.final))], claims=r.told.take_claims())
                break
            text, calls = r.turn()
            if not calls:
                ep.act(text, [ToolCall("final_answer", _args(answer=r.final))], claims=r.told.take_claims())
                break
            results = ep.act(text, calls, claims=r.told.take_claims())
            r.absorb(calls, results)
        ep.context["state_misses"] = r.pages.state_misses
        ep.research = dict(r.values.stats, conflicts=r.compared.conflicts)


def clean_oracle(world, kinds: tuple[str, ...] | None = None) -> list[Episode]:
    """Every task of a world (or those of `kinds`: 'table', 'multihop') answered by the oracle on
    the web as written, without perturbations, with the world's own rollout options: the
    ceiling the tests and benchmarks hold the tasks to."""
    from ..world import open_world
    from .env import Environment, load_tasks

    opt = open_world(world).world.spec.stages.rollout.model_copy(update={"perturbations": {}})
    env = Environment.for_world(world, opt)
    try:
        eps = [env.episode(t) for t in load_tasks(world) if kinds is None or t.record["kind"] in kinds]
        run_oracle(eps, opt)
    finally:
        env.close()
    return eps
