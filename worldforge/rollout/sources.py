"""Where the honest oracle's candidates come from, and how it reads a list through its pages.

Every `step(r)` takes the episode's research (`oracle.Research`): what it has read, and the
calls it asks for (`r.page`, `r.search`, `r.find_article`, `r.back_targets`).

A *source* yields the candidate rows of a table once it has read what it needs (`NEED` until
then, having asked the research for the pages or searches it wants): a country's list of a type
(`PartList`, found by searching for it or through the country's article), the entities that
link to an entity a condition names (`BackList`, walked back hop by hop), several countries'
lists (`PartsOf`, the countries from `PartIndex`, the list of countries, or from a `BackList`),
both sides of an "or" (`Union`), or the one entity a history question names (`Named`).
`ListReader` reads a paginated list: several pages a turn where numbered links allow, the pages
no page links to found by searching for the list.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

from ..language import Language
from ..web import word
from .reading import PAGE_OF, Page, Span, page_links, read_date, read_number

PAGE_TAG = re.compile(r"\s*[（(](?:" + PAGE_OF.pattern + r")[）)]$")  # ' (page 2 of 5)' in any language
_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")


class _Need:
    """A value that needs pages not read yet (they are added to the turn's wants)."""

    def __repr__(self) -> str:
        return "NEED"


NEED = _Need()


@lru_cache(maxsize=65536)
def norm(s: str) -> str:
    return " ".join(str(s).split()).casefold()


@lru_cache(maxsize=65536)
def host(url: str) -> str:
    return urlsplit(url).netloc


ENCYCLOPEDIA_HOSTS = ("pedia.org", "baike.org")  # the reference sites, as people know Wikipedia by name


@lru_cache(maxsize=65536)
def is_encyclopedia(url: str) -> bool:
    """An encyclopedia article: `<x>pedia.org/wiki/...` (`<x>baike.org` in Chinese), not a
    list site's scraped copy at the same path, nor an old revision at its permanent link
    (`?oldid=`)."""
    return "/wiki/" in url and host(url).endswith(ENCYCLOPEDIA_HOSTS) and "oldid=" not in url


def strip_links(text: str) -> str:
    return _LINK.sub(lambda m: m.group(1), text).strip()


@dataclass
class Candidate:
    """A possible row: an entity found on a list, or (timeline, events) a link of an anchor."""

    name: str
    url: str | None
    listed: dict[str, str] = field(default_factory=dict)  # header -> cell, as the list showed it
    source: str = ""  # the list it came from
    state: str = "open"  # open | kept | rejected | lost
    implied: frozenset = frozenset()  # condition letters the list it came from already settles
    other: tuple[str, str | None] | None = None  # link rows: the other end (name, url)
    span: Span | None = None  # timeline rows: the tenure's years
    date: dt.date | None = None  # event rows: the event's date
    anchor: Candidate | None = None  # link rows: the entity whose page listed the link
    cells: dict[str, str] = field(default_factory=dict)
    where: dict[str, tuple[str, str]] = field(default_factory=dict)  # column -> the page its cell was read on: (url, name)
    rank_value: float | None = None
    rank_text: str | None = None  # the ranking value as the page wrote it
    links: list[Candidate] | None = None  # timeline/events: the kept entity's link rows
    waiting: list | None = None  # the pages (and searches) its next step waits for


# --------------------------------------------------------------------------- candidate sources


class ListReader:
    """A paginated list (a directory or a full list): every page, several at a time where the
    pages' numbered links allow. It keeps what each page listed (not the page itself), which is
    what a research state carries over a compaction."""

    def __init__(self, url: str, title: str = ""):
        self.first = url
        self.title = title
        self.pages: dict[int, tuple[list[str], list[tuple[str, str, list[str]]], int]] = {}  # page -> headers, rows, total
        self.urls: dict[int, str] = {}  # page -> the address it was read at
        self.known: dict[int, str] = {}
        self.lost: set[int] = set()
        self.partial: set[int] = set()  # pages read only from a cut or archived copy
        self.told: set[int] = set()  # page counts it has said it read
        self.page_of: dict[str, int] = {}  # an entry's address -> the page of the list that shows it

    def whole(self) -> bool:
        """Every page of the list read in full (a page that never loaded, or only a cut or old
        copy of it, leaves the list known in part: its entries are not its count)."""
        return not (self.lost - set(self.pages)) and not self.partial

    def _add(self, page: Page) -> None:
        if page.state != "ok":
            self.partial.add(page.page)
        if page.page not in self.pages:
            self.pages[page.page] = (list(page.headers), [(n, u, list(c)) for n, u, c in page.rows], page.pages)
            self.urls[page.page] = page.url
            for _, u, _ in page.rows:
                self.page_of.setdefault(u, page.page)
        for n, u in page_links(page).items():
            self.known.setdefault(n, u)
        if not self.title:
            self.title = PAGE_TAG.sub("", page.title)

    def rows(self) -> list[tuple[str, str, dict[str, str]]]:
        return [(n, u, dict(zip(headers[1:], cells))) for k in sorted(self.pages) for headers, rows, _ in [self.pages[k]]
                for n, u, cells in rows]

    def page_url(self, k: int) -> str | None:
        """The address of the list's page `k`, where one was read or linked."""
        return self.urls.get(k) or self.known.get(k)

    def pages_read(self) -> list[str]:
        """The addresses of the list's pages read so far, in page order."""
        return [self.urls[k] for k in sorted(self.urls)]

    def missing(self) -> list[tuple[int, str | None]]:
        """Pages not read yet: (page number, its address when a page read links to it)."""
        return [(n, self.known.get(n)) for n in range(1, (self.total or 1) + 1) if n not in self.pages and n not in self.lost]

    def _search_pages(self, r):
        """Other pages of the list from a search for its title (results name them 'page N of M')."""
        res = r.search(self.title, "list")
        if res is NEED:
            return NEED
        for x in res:
            if norm(PAGE_TAG.sub("", x.title)) == norm(self.title):
                m = PAGE_OF.search(x.title)
                self.known.setdefault(int(m.group("p" + m.lastgroup[1:])) if m else 1, x.url)
        return None

    @property
    def total(self) -> int | None:
        return max((p[2] for p in self.pages.values()), default=None)

    def step(self, r):
        """Every row of the list, or NEED while pages are still to be read."""
        if not self.pages:
            page = r.page(self.first, ("list", self.title or self.first, ""))
            if page is NEED:
                return NEED
            if page is None:  # the list would not load: none of it is known
                self.lost.add(1)
                return []
            self._add(page)
        while True:
            missing = [n for n in range(1, (self.total or 1) + 1) if n not in self.pages and n not in self.lost]
            if not missing:
                return self.rows()
            urls = [(n, self.known[n]) for n in missing if n in self.known]
            if not urls:  # pages no page read links to (a page cut off before its links): search for the list
                found = self._search_pages(r)
                if found is NEED:
                    return NEED
                urls = [(n, self.known[n]) for n in missing if n in self.known]
                if not urls:  # pages nothing links to: the list is known only in part
                    self.lost.update(missing)
                    return self.rows()
            need = progressed = False
            for n, u in urls:
                page = r.page(u, ("list", self.title, ""))
                if page is NEED:
                    need = True
                elif page is None:
                    self.lost.add(n)
                else:
                    self._add(page)
                    progressed = True
            if need:
                done, total = len(self.pages), self.total or 1
                if 1 < done < total and done not in self.told:
                    self.told.add(done)
                    r.told.note("paging", claims=[("list_pages_read", done, self.pages_read(), "done")], done=done, pages=total,
                           left=total - done, s="s" if total - done != 1 else "", entries=len(self.rows()))
                return NEED
            if not progressed:
                return self.rows()


def gather(sources: list[Source], r):
    """Every source's candidates, in order; NEED while any still waits for pages (all of them
    ask for theirs in the same turn)."""
    out: list[Candidate] = []
    need = False
    for src in sources:
        got = src.step(r)
        if got is NEED:
            need = True
        else:
            out += got
    return NEED if need else out


class Source:
    """Where candidates come from; `step` returns them once complete (NEED until then)."""

    implied: frozenset = frozenset()

    def step(self, r):
        raise NotImplementedError


class PartList(Source):
    """A directory of a type in a country ("Companies in Braeria"): found by searching for it, or
    through the country's article, whose "Lists" section links it."""

    def __init__(self, plural: str, place: str, implied: frozenset, former: bool = False, phrase: str | None = None):
        self.plural = plural
        self.place = place
        self.implied = implied
        self.former = former  # the list of those that were in the country (dissolved, moved), found through its page
        # how the list names its part when the type is placed in it through a link that is no
        # location ("won by albums from {group}": "Award ceremonies won by albums from Riia")
        self.phrase = phrase
        self.reader: ListReader | None = None
        self.via_article = former

    def _title_ok(self, title: str, lang: Language) -> bool:
        """The list's own title, whole: "电影" must not take "电影节"'s list, nor "Clubs in X" a
        "Clubs in X Province" one; only a page tag may follow."""
        t = norm(PAGE_TAG.sub("", title))
        if self.former:
            return t == norm(word(lang.code, "former_title", plural=self.plural, group=self.place))
        return t == norm(self.title_in(lang))

    def title_in(self, lang: Language) -> str:
        """The list's title as the web writes it: "Companies in Braeria", "Award ceremonies won by
        albums from Riia" (a pack's own phrase for the part), "布雷里亚的公司"."""
        if self.phrase:
            return f"{self.plural} {self.phrase.format(group=self.place)}"
        return word(lang.code, "part_title", plural=self.plural, group=self.place)

    def step(self, r):
        if self.reader is None:
            q = self.title_in(r.lang)
            if not self.via_article:
                res = r.search(q, "list")
                if res is NEED:
                    return NEED
                hit = next((x for x in res if self._title_ok(x.title, r.lang)), None)
                if hit is None:
                    if r.opt.reformulate:
                        alt = r.told.voice.phrase("search_list", place=self.place, plural=self.plural, title=self.title_in(r.lang))
                        res2 = r.search(alt, "list", again=True)
                        if res2 is NEED:
                            return NEED
                        hit = next((x for x in res2 if self._title_ok(x.title, r.lang)), None)
                    if hit is None:
                        self.via_article = True
                if hit is not None:
                    self.reader = ListReader(hit.url, PAGE_TAG.sub("", hit.title))
            if self.via_article:
                url = r.find_article(self.place)
                if url is NEED:
                    return NEED
                if url is None:
                    return []
                page = r.page(url, ("entity", self.place, ""))
                if page is NEED:
                    return NEED
                if page is None:
                    return []
                hit = next(((t, u) for t, u, _ in page.lists if self._title_ok(t, r.lang)), None)
                if hit is None:
                    return []
                self.reader = ListReader(hit[1], hit[0])
        rows = self.reader.step(r)
        if rows is NEED:
            return NEED
        if not rows and self.reader.lost and not self.via_article and not self.former:  # the list would not load: through the country's page
            self.via_article, self.reader = True, None
            return self.step(r)
        if self.reader.total:
            total = self.reader.total  # a one-page list says no page count; a longer one says "page 1 of N"
            r.told.note("found_list", claims=[("list_pages_total", total, self.reader.first, "pages")] if total > 1 else [],
                   title=self.reader.title,
                   pages=self.reader.total, s="s" if self.reader.total != 1 else "")
        return [Candidate(n, u, cells, self.reader.title, implied=self.implied) for n, u, cells in rows]


class BackList(Source):
    """The entities that link to a named entity through a chain of hops (the chain of a condition,
    walked backwards): the named entity's page lists the first level, each of those the next."""

    def __init__(self, name: str, hops: list[dict], implied: frozenset):
        self.name = name
        self.hops = hops  # from the row to the named entity, in row order
        self.implied = implied
        self.level_urls: list[tuple[str, str]] | None = None  # (name, url) at the current level
        self.level = len(hops)
        self.readers: dict[str, ListReader] = {}

    def step(self, r):
        if self.level_urls is None:
            url = r.find_article(self.name)
            if url is NEED:
                return NEED
            if url is None:
                return []
            self.level_urls = [(self.name, url)]
        while self.level > 0:
            hop = self.hops[self.level - 1]
            nxt: list[tuple[str, str]] = []
            need = False
            r.agenda.why = ("walk", hop["back"] or "")
            for name, url in self.level_urls:
                items = r.entities.back_targets(url, name, hop)
                if items is NEED:
                    need = True
                    continue
                nxt += [(i.name, i.url) for i in items if i.url]
            if need:
                return NEED
            self.level_urls = list(dict.fromkeys(nxt))
            self.level -= 1
        return [Candidate(n, u, {}, self.name, implied=self.implied) for n, u in self.level_urls]


class Union(Source):
    def __init__(self, sources: list[Source]):
        self.sources = sources
        self.implied = frozenset()

    def step(self, r):
        out = gather(self.sources, r)
        if out is NEED:
            return NEED
        seen: dict[str, Candidate] = {}
        for c in out:  # an 'or' is settled by checking each candidate, not by the list it came from
            c.implied = frozenset()
            seen.setdefault(c.url or c.name, c)
        return list(seen.values())


class PartsOf(Source):
    """Rows of a type in several parts: first the parts (countries whose capital is X, countries
    with a federal government), then each part's list of the type."""

    def __init__(self, plural: str, parts: Source, implied: frozenset, former: bool = False, phrase: str | None = None):
        self.plural = plural
        self.parts = parts
        self.implied = implied
        self.former = former  # also each part's list of former members (every entity of the type, ever)
        self.phrase = phrase  # how each part's list names it (see `PartList.phrase`)
        self.lists: list[PartList] | None = None

    def step(self, r):
        if self.lists is None:
            got = self.parts.step(r)
            if got is NEED:
                return NEED
            self.lists = [PartList(self.plural, c.name, self.implied, phrase=self.phrase) for c in got]
            if self.former:
                self.lists += [PartList(self.plural, c.name, self.implied, former=True) for c in got]
                for c in got:  # the part's article, whose list of lists names the former members' list
                    if c.url:
                        r.pages.name_url.setdefault(norm(c.name), c.url)
        out = gather(self.lists, r)
        if out is NEED:
            return NEED
        return list({(c.url or c.name): c for c in out}.values())


class PartIndex(Source):
    """Every part ("List of countries"), optionally only those meeting a condition on their own
    attribute, read from the list's columns where it shows it, else from each part's article."""

    def __init__(self, plural: str, cond: dict | None):
        self.plural = plural
        self.cond = cond
        self.reader: ListReader | None = None

    def step(self, r):
        if self.reader is None:
            q = r.told.voice.phrase("search_all", plural=self.plural)
            res = r.search(q, "list")
            if res is NEED:
                return NEED
            hit = next((x for x in res if norm(PAGE_TAG.sub("", x.title)) == norm(q)), None)
            if hit is None:
                return []
            self.reader = ListReader(hit.url, PAGE_TAG.sub("", hit.title))
        rows = self.reader.step(r)
        if rows is NEED:
            return NEED
        parts = [Candidate(n, u, cells, self.reader.title) for n, u, cells in rows]
        if self.cond is None:
            return parts
        out, need = [], False
        for c in parts:
            cell = c.listed.get(header_for(c.listed, self.cond.get("label", "")))
            if cell is None:
                r.agenda.why = ("check", self.cond["text"])
                cell = r.entities.attribute(c.url, self.cond["label"], c.name)
            if cell is NEED:
                need = True
            elif cell_meets(self.cond, cell):
                out.append(c)
        return NEED if need else out


class Named(Source):
    """One named entity (a timeline question about one company's chief executives)."""

    def __init__(self, name: str):
        self.name = name

    def step(self, r):
        url = r.find_article(self.name)
        if url is NEED:
            return NEED
        return [Candidate(self.name, url, {}, self.name)] if url else []


def header_for(listed: dict[str, str], label: str) -> str | None:
    if not listed or not label:
        return None
    want = norm(label)
    return next((h for h in listed if norm(h) == want), None)




def readers_of(src: Source | None) -> list[ListReader]:
    """The list readers a source has used so far (its lists, its parts' lists), in order."""
    if src is None:
        return []
    if isinstance(src, (PartList, PartIndex)):
        return [src.reader] if src.reader is not None else []
    if isinstance(src, PartsOf):
        return readers_of(src.parts) + [x for lst in (src.lists or []) for x in readers_of(lst)]
    if isinstance(src, Union):
        return [x for s in src.sources for x in readers_of(s)]
    return []


def cell_meets(cond: dict, cell) -> bool:
    """Whether a cell as a page writes it meets a condition: equal to its value, or within its
    range of dates or figures."""
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
