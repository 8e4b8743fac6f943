"""What an entity's pages give the research: an attribute's cell, the entities it links, how
many, read from the research's notes, a result's snippet, the entity's article or the profile
or official site the article sends it to (`EntityReader`). Each answer is the value, None when
no page states it, or `sources.NEED` while a page or search it needs is wanted this turn."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..language import scale_words
from .reading import (
    RANGE_SEP,
    SINCE_WORDS,
    Page,
    Span,
    in_unit,
    note_at,
    note_parts,
    own_pages,
    plain_number,
    prose_value,
    read_date,
    read_note,
    read_number,
    read_span,
    snippet_confirms,
    snippet_value,
)
from .sources import NEED, ListReader, host, is_encyclopedia, norm, strip_links

MISSING = object()  # nothing noted
_DIGIT = re.compile(r"\d")
_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")


class EntityReader:
    """The research's reading of entities' pages (`r`: the episode's `oracle.Research`, whose
    stores it reads and notes into, and whose `page` and `search` it asks for what it needs)."""

    def __init__(self, r):
        self.r = r

    def article(self, url: str | None, name: str = ""):
        if not url:
            return None
        got = self.r.page(url, (self.r.agenda.why[0], name or self.r.label_of(url), self.r.agenda.why[1]))
        if got is not None and got is not NEED:
            self.r.values.read_from = got.url if got.url in self.r.pages.read else url  # where the value being read comes from
        return got

    def noted(self, url: str | None, key: tuple):
        """What the page at `url` gave for `key` when it was read (its notes survive a compaction
        where the state carries them), or MISSING."""
        got = self.r.values.memo.get((url, key), MISSING)
        if got is not MISSING:
            self.r.values.read_from = url
            return got[1]
        return MISSING

    def _note_value(self, url: str, key: tuple, label: str, value) -> None:
        if value is not NEED:
            self.r.values.memo[(url, key)] = (label, value)
            if key[0] == "attr" and isinstance(value, str):
                self.know(label, value)

    def know(self, label: str, cell: str) -> None:
        """A value seen for `label` (a category a later page's prose may name)."""
        v = strip_links(cell).strip()
        if v and not _DIGIT.search(v):  # not a date or a figure
            self.r.values.vocab.setdefault(norm(label), set()).add(v)

    def back_targets(self, url: str, name: str, hop: dict):
        """Entities linking to the entity at `url` through `hop` (read from its page: the section
        headed with the hop's `back` label, and the full list it links to when cut short)."""
        if hop["kind"] == "lookup" or not hop.get("back"):
            return []
        key = ("back", norm(hop["back"]), bool(hop.get("current")))
        got = self.noted(url, key)
        if got is not MISSING:
            return got
        page = self.article(url, name)
        if page is NEED:
            return NEED
        if page is None:
            return []
        out = self._section_items(page, hop["back"], name, current=hop.get("current", False))
        self._note_value(url, key, hop["back"], out)
        return out

    def targets(self, url: str, hop: dict, name: str = ""):
        """Entities the entity at `url` reaches through `hop`: its infobox rows (a to-one link, a
        lookup) or its list section; `current` keeps only links still in force."""
        if hop["kind"] == "held":  # the entity a link names after it ('supervisor Isaac Wilkinson'): found by name
            links = self.targets(url, {**hop, "kind": "rel"}, name)
            if links is NEED or links is None:
                return links
            parts = [note_parts(i.span) for i in links]
            named = [note_at(p, hop["note"], hop["note_label"], hop.get("labelled")) for p in parts]
            return [_Item(n, None, Span()) for n in named if n]
        box = _in_box(hop)
        key = ("to", norm(hop["label"]), bool(hop.get("current")), box, bool(hop["to_one"]))
        got = self.noted(url, key)
        if got is not MISSING:
            return got
        page = self.article(url, name)
        if page is NEED:
            return NEED
        if page is None:
            return None
        out = self._targets(page, hop, name)
        if out == [] and not box and page.section(hop["label"]) is None:  # a profile without the list: its article has it
            art = self._article_link(page, url, name)
            if art is not None:
                out = self.targets(art, hop, name)
                if out is NEED:
                    return NEED
        self._note_value(url, key, hop["label"], out)
        return out

    def count_of(self, url: str | None, hop: dict, name: str = ""):
        """How many entities the entity at `url` links through `hop`, from what a page states: a
        count a cut-short list gives ('the full list of 43 titles'), else the items of a list
        shown in full, else none where its encyclopedia article (which lists every link an
        entity has, or links the full list) has no such list. Another page of the entity (a
        profile) lists nothing for sure: its article is read instead. None: no page says."""
        key = ("count", norm(hop["label"]), bool(hop.get("current")))
        got = self.noted(url, key)
        if got is not MISSING:
            return got
        # the same entity counted for another row (its notes say so): by its page, since namesakes
        # (two people of one name, two clubs called United) link different lists
        who = url or norm(name)
        known = self.r.values.counted.get((who, *key))
        if known is not None:
            return known
        page = self.article(url, name)
        if page is NEED:
            return NEED
        if page is None:
            return None
        sec = page.section(hop["label"])
        box = _in_box(hop)
        if page.state == "archived":
            n = None  # an old snapshot: what it lists (or says it lists) is not the count now
        elif box or (sec is None and page.infobox_rows(hop["label"])):
            items = self._targets(page, hop, name)
            n = NEED if items is NEED else len(items)
        elif sec is not None and sec.more_count and not hop.get("current"):
            n = sec.more_count  # stated: no need to read the whole list to count it
        elif sec is not None and sec.cut and not sec.more_url:
            n = None  # the page stops inside the list: its items so far are not its count
        elif sec is not None:
            items = self._section_items(page, hop["label"], page.name or name, current=hop.get("current", False))
            reader = self.r.pages.full_lists.get(sec.more_url) if sec.more_url else None
            n = NEED if items is NEED else None if reader is not None and not reader.whole() else len(items)
        elif page.state != "ok" or (page.url and page.url != url):
            n = None  # a page cut short, an old copy, or another site standing in for one that failed may not show it
        else:
            art = self._article_link(page, url, name)
            # the entity's article, or a profile that links none (the entity's only page), lists every
            # link it has (a long list cut short, with its count): none here
            n = 0 if art is None else self.count_of(art, hop, name)
        if n is NEED:
            return NEED
        self._note_value(url, key, hop["label"], n)
        if n is not None and who:
            self.r.values.counted[(who, *key)] = n
        return n

    def _article_link(self, page: Page, url: str, name: str) -> str | None:
        """Where an entity's lists are, when `page` (read at `url`) has none: None when the page
        is its encyclopedia article, or a profile or official site that links no article (it is
        the entity's only page, and lists everything); else the article it links ('More about X')."""
        if page.kind == "article" and is_encyclopedia(url):
            return None
        names = {norm(name), norm(page.name or "")}
        art = next((u for t, u in page.links if is_encyclopedia(u) and (norm(t) in names or u.rsplit("/", 1)[-1].replace("_", " ")
                                                                       .lower() in names)), None)
        return art if art and art != url else None

    def _targets(self, page: Page, hop: dict, name: str):
        label = hop["label"]
        box = _in_box(hop)
        # a profile gives its links as key facts, one row per link, where an article has a section
        if box or (not hop["reverse"] and page.section(label) is None and page.infobox_rows(label)):
            out = []
            for cell in page.infobox_rows(label):
                m = _LINK.search(cell)
                tail = cell[m.end():] if m else ""
                if hop.get("current") and RANGE_SEP.search(tail):
                    continue  # an ended link ('(June 1, 2001 – May 2, 2005)')
                if m:
                    out.append(_Item(m.group(1), m.group(2), tag_span(tail)))
                elif cell.strip():
                    out.append(_Item(cell.strip(), None, Span()))
            if hop["to_one"] and len(out) > 1 and not hop.get("current"):
                out = out[:1]
            return out
        return self._section_items(page, label, page.name or name, current=hop.get("current", False))

    def _section_items(self, page: Page, label: str, name: str, current: bool):
        sec = page.section(label)
        if sec is None:
            return []
        items = [_Item(i.name, i.url, i.span) for i in sec.items]
        if sec.more_url:
            reader = self.r.pages.full_lists.get(sec.more_url)
            if reader is None:
                reader = self.r.pages.full_lists[sec.more_url] = ListReader(sec.more_url, f"{name}: {label}")
                self.r.told.note("full_list", name=name, count=sec.more_count or "?")
            rows = reader.step(self.r)
            if rows is NEED:
                return NEED
            items = []
            for n, u, cells in rows:
                vals = list(cells.values())
                start = read_date(vals[0]) if vals else None
                spans = len(vals) > 1 and (read_date(vals[1]) is not None or norm(vals[1]) == norm(self.r.lang.present))
                if start is None and not (spans and not vals[0].strip()):  # an undated relation's list: the attributes alone
                    span, rest = Span(), vals
                elif spans:  # a tenure's span (its start may be blank)
                    end = read_date(vals[1])
                    span, rest = Span(start.year if start else None, end.year if end else None, end is None), vals[2:]
                else:  # an event's day
                    span, rest = Span(start.year), vals[1:]
                # the links' own attributes follow their dates, a column each ('Department')
                # (a blank cell keeps its place among them)
                note = ", ".join(v if v != "–" else "" for v in rest) if any(v and v != "–" for v in rest) else None
                items.append(_Item(n, u, replace(span, note=note)))
        if current:
            items = [i for i in items if i.span.start is None or i.span.open]
        return items

    def attribute(self, url: str | None, label: str, name: str = "", figure: bool = False, expect: str | None = None,
                  unit: str | None = None, kind: str | None = None):
        """An attribute's cell on an entity's article (None when the page does not state it). A
        date or a figure (`figure`) a search result's snippet of that page states settles it
        without opening the page, and so does a snippet confirming the value a condition expects
        (`expect`; a snippet never rules one out). A figure prose writes with a scale is read in
        the unit it is counted in (`in_unit`: '1.856亿美元' as 185.6 百万美元)."""
        cell = self._attribute(url, label, name, figure, expect, unit, kind)
        return in_unit(cell, unit) if isinstance(cell, str) and figure else cell

    def _attribute(self, url: str | None, label: str, name: str, figure: bool, expect: str | None,
                   unit: str | None, kind: str | None):
        key = ("attr", norm(label))
        self.r.values.from_snippet = False
        for where in (url, self.r.pages.profile_of.get(url)):
            got = self.noted(where, key) if where else MISSING
            if got is not MISSING:
                self.r.values.from_snippet = (where, key) in self.r.searches.snippet_read
                return got
        if figure and url not in self.r.pages.read and url in self.r.searches.snippets:
            who = name or self.r.label_of(url)
            value = next((v for sn in self.r.searches.snippets[url] if (v := snippet_value(sn, label, who)) is not None), None)
            if value is not None:
                return self._from_snippet(url, key, label, value)
        if expect is not None and url not in self.r.pages.read and url in self.r.searches.snippets:
            said = (url, ("is", norm(label), norm(expect)))
            if said in self.r.searches.snippet_read or any(snippet_confirms(sn, label, name or self.r.label_of(url), expect)
                                                for sn in self.r.searches.snippets[url]):
                self.r.values.from_snippet = True
                self.r.values.read_from = url
                self.r.values.stats["snippet_values"] += said not in self.r.searches.snippet_read
                self.r.searches.snippet_read.add(said)
                return expect  # not noted as the attribute: only this condition is settled
        kinds = (kind,) if kind in ("date", "number") else ("date", "number") if figure else ("string",)
        if (url, key) in self.r.pages.off_article and url in self.r.pages.profile_of and url not in self.r.pages.read:
            return self._on_profile(self.r.pages.profile_of[url], key, label, name or self.r.label_of(url), figure, expect, unit, kinds)
        self.r.agenda.asking_figure = label if figure or expect is not None else None
        page = self.article(url, name)
        self.r.agenda.asking_figure = None
        if page is NEED:
            return NEED
        if page is None:
            return None
        cells = page.infobox_rows(label)
        cell = cells[0] if cells else None
        if page.kind == "article":
            (self.r.agenda.on_article if cell is not None else self.r.agenda.off_count)[norm(label)] += 1
        if cell is None and page.kind == "article":
            return self._elsewhere(page, key, label, name or page.name, figure, expect, unit, kinds)
        if cell is None and page.kind != "directory":  # the entity's own profile, written as prose
            cell = from_prose(page.text, label, kinds, self.known_values(label) | ({expect} if expect else set()), unit)
            self.r.values.stats["prose_values"] += cell is not None
            self._note_value(url, key, label, cell)
            return cell
        self.r.values.stats["page_values"] += cell is not None
        self._note_value(url, key, label, cell)
        return cell

    def _from_snippet(self, url: str, key: tuple, label: str, value: str) -> str:
        """A value a search result's snippet of `url` settled: noted as that page's."""
        self.r.values.from_snippet = True
        self.r.values.read_from = url
        self.r.values.stats["snippet_values"] += 1
        self.r.agenda.ahead_hit[norm(label)] += 1
        self._note_value(url, key, label, value)
        self.r.searches.snippet_read.add((url, key))
        return value

    def _elsewhere(self, art: Page, key: tuple, label: str, name: str, figure: bool, expect: str | None, unit: str | None,
                   kinds: tuple[str, ...]):
        """An attribute an article leaves out, read on the subject's own page the article links
        (its profile or official site): from its key facts, else from its prose (a date or a figure
        in a clause naming the label, or a value of that label seen elsewhere). NEED while it is
        read; None when that page does not settle it either."""
        profiles = self.r.pages.own.get((art.url, len(art.text)))  # a cut copy of the page may lack its links
        if profiles is None:
            profiles = self.r.pages.own[(art.url, len(art.text))] = own_pages(art)
        if not profiles:
            self._note_value(art.url, key, label, None)
            return None
        url = profiles[0]
        self.r.pages.profile_of[art.url] = url
        self.r.pages.off_article.add((art.url, key))
        return self._on_profile(url, key, label, name, figure, expect, unit, kinds)

    def _on_profile(self, url: str, key: tuple, label: str, name: str, figure: bool, expect: str | None, unit: str | None,
                    kinds: tuple[str, ...]):
        """An attribute read on an entity's own page (`url`), which its article sent the research to."""
        got = self.noted(url, key)
        if got is not MISSING:
            self.r.values.from_snippet = (url, key) in self.r.searches.snippet_read
            return got
        known = self.known_values(label) | ({expect} if expect else set())
        if url not in self.r.pages.read and url in self.r.searches.snippets:  # a result's snippet of that page may settle it
            for sn in self.r.searches.snippets[url]:
                v = from_prose(sn, label, kinds, known, unit)
                if v is not None:
                    return self._from_snippet(url, key, label, v)
        self.r.pages.beside_name.setdefault(url, name)
        if url not in self.r.pages.read and url not in self.r.agenda.wants and url not in self.r.pages.failed:
            self.r.told.note("off_article", page=name, label=label, site=host(url))
        self.r.agenda.asking_figure = label if figure or expect is not None else None
        page = self.r.page(url, (self.r.agenda.why[0], name, self.r.agenda.why[1]))
        self.r.agenda.asking_figure = None
        if page is NEED:
            return NEED
        if page is None:
            return None
        self.r.values.read_from = url
        cells = page.infobox_rows(label)
        cell = cells[0] if cells else None
        if cell is None:
            cell = from_prose(page.text, label, kinds, known, unit)
            self.r.values.stats["prose_values"] += cell is not None
            if cell is None:
                self.r.told.note("not_on_profile", page=name, label=label, site=host(url))
        else:
            self.r.values.stats["page_values"] += 1
        self._note_value(url, key, label, cell)
        return cell

    def known_values(self, label: str) -> set[str]:
        """The values pages read so far gave `label` (what the research has seen it take), as plain
        text: categories, not dates or figures."""
        return self.r.values.vocab.get(norm(label), set())


@dataclass(frozen=True, slots=True)
class _Item:
    name: str
    url: str | None
    span: Span


def _in_box(hop: dict) -> bool:
    """Whether a hop's targets are infobox rows (a lookup, a to-one link from the entity that holds
    it) rather than a list section."""
    return hop["kind"] == "lookup" or (hop["to_one"] and not hop["reverse"])


def tag_span(tail: str) -> Span:
    """The dates after an infobox link: ' (since June 25, 2016)', ' (June 1, 2001 – May 2, 2005)',
    with the link's own attributes written before them (', sales (since ...)')."""
    note = read_note(tail)
    span = tag_dates(tail)
    return replace(span, note=note) if note else span


def tag_dates(tail: str) -> Span:
    if not tail.strip():
        return Span()
    d = [read_date(x) for x in RANGE_SEP.split(tail)]
    if len(d) == 2 and d[0] and d[1]:
        return Span(d[0].year, d[1].year)
    if d and d[0]:
        return Span(d[0].year, None, any(w in tail for w in SINCE_WORDS))
    _, span = read_span(tail.strip())
    return span


def from_prose(text: str, label: str, kinds: tuple[str, ...], known: set[str], unit: str | None) -> str | None:
    """`prose_value` of the first of `kinds` the text settles (a figure written with a scale word
    read whole, '48.1万' -> 481000, unless the unit has it), never a value the text ends on (a
    snippet's cut may have shortened it)."""
    for kind in kinds:
        v = prose_value(text, label, kind, known, unit)
        at = text.find(v, max(0, text.lower().find(label.lower()))) if v is not None else -1  # after its label
        at = text.find(v) if v is not None and at < 0 else at
        tail = text[at + len(v):] if at >= 0 else ""
        if v is None or len(tail.strip()) < 2 or re.match(r"[,.]?\d", tail):  # at the cut, or cut inside a figure ('20,63')
            continue
        if kind == "number" and not any(w in (unit or "") for w in scale_words()):
            n = read_number(v, scaled=True)  # prose rounds big figures ('1.2 million people')
            v = plain_number(n) if n is not None else v
        return v
    return None


