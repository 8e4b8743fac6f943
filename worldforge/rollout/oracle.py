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
from dataclasses import dataclass

from ..language import get as get_language
from ..plumbing import stable_hash
from ..records import Shape
from ..tasks import AllOf, Expr, combo_alternatives, combo_musts, parse_combo
from .absorb import absorb
from .compare import disagree
from .deciding import decide_candidate, format_cell, read_cell
from .entities import EntityReader
from .env import Episode, ToolCall, markdown_table
from .memory import Agenda, Comparisons, Narration, PagesRead, SearchesRun, ValuesRead
from .narrator import Event, Narrator
from .reading import (
    Span,
    is_news_url,
    note_at,
    note_parts,
    read_date,
    read_number,
)
from .schedule import READ_LOAD, eligible, pages_to_open, searches_ahead
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
from .telling import dropped_ref, open_events, plan_event, strategy_event, told_events

SEARCH_QUERIES_MAX = 5  # queries one web_search call carries at most
STALL_NOTES = 4  # notes in a row with nothing settled (every slot used) before the research submits what it has

_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")


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

    def absorb(self, calls: list[ToolCall], results: list[dict]) -> None:
        """Take a turn's results in (`absorb.absorb`): what a loop that drives the research calls."""
        absorb(self, calls, results)

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
                ok = self._step(c, decide_candidate, self, c)
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
            v = read_cell(self, col, row)
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
            parts.append(plan_event(self))
            if self.brief.kind == Shape.TABLE:
                self.source = self.plan()
                strategy = strategy_event(self, self.source)
                if strategy is not None:
                    parts.append(strategy)
        ready = self.advance()
        for move, url, slots in self.agenda.trouble:  # a failed page is retried only if something still needs it
            self.told.note(move if url in self.agenda.wants else "moot", **slots)
        self.agenda.trouble = []
        parts += told_events(self)
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
        later = {u for u in pending if u in need and eligible(self, u)}  # searched first (now or later), then opened
        ahead = [] if qs else searches_ahead(self, pending)
        # a search ahead (the results of several queries to read) takes a slot and some of the reading
        opens = pages_to_open(self, [u for u in pending if u not in later], self.k - (1 if qs or ahead else 0),
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
            intents += open_events(self, opens)
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
                               [("rows", n, None, "n"), ("dropped", len(dropped), dropped_ref(self, dropped), "dropped")]))
        self.final = self.answer()
        return self.told.speak(parts, opening)

    def submit_now(self) -> str:
        """The text of a last turn the budget forces: what is verified is the answer (`final`)."""
        self.agenda.turn_out = True
        self.rows = self.verified_rows()
        return self._final_text(told_events(self))

    def submit_stalled(self) -> str:
        """The text of a last turn when the research state it just wrote is one it wrote before
        (the state fills the context, and what fits after it never settles anything new: it
        would go round until the turns run out): it says so, and what is verified is the
        answer (`final`)."""
        self.rows = self.verified_rows()
        n = len(self.rows)
        left = sum(1 for c in self.candidates or [] if c.state == "open")
        parts = told_events(self) + [Event("out_of_room", dict(n=n, s=_s(n), left=left, ls=_s(left)), [("rows", n, None, "n")])]
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







def _own_page(results, name: str) -> str | None:
    """The result that is the entity's own page: its encyclopedia article, else (an entity without
    one) a page titled with its name alone, not a news item."""
    named = [x for x in results if norm(x.title) == norm(name)]
    hit = next((x.url for x in named if is_encyclopedia(x.url)), None)
    return hit or next((x.url for x in named if not is_news_url(x.url)), None)


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
        return self._answer(format_cell(cell, ans["kind"]) if cell else None, name)

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
