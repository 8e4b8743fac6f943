"""Reading what the tools return, as an agent reads it: search results and pages as Markdown.

The honest oracle (`oracle.py`) knows nothing but the question and these observations, so
everything it uses comes through here: the numbered results of a search, and a page's parts
as the simulated web's site styles lay them out (a title, an encyclopedia article's lead,
infobox, list sections with their tenure spans, timeline and lists of lists; a directory's
table, paging and numbered page links; a profile's fields), plus the signs of trouble a reader
notices (an error, a page that stops mid-sentence or mid-row, the date it says it was last
edited, the date a by-line gives, a 404).

Values are read as they are written on pages: dates in any of the sites' styles (English and
Chinese), numbers with their grouping, tenure spans ("since 2016", "2018–2021", "2019年起").
Nothing here knows the world: a page that says something wrong is read as saying it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from urllib.parse import urlsplit

from ..language import Language, date_of, date_regex, languages, scale_alternation, scale_words, scaled_unit, written_in
from ..language import get as get_language
from ..plumbing import URL_PATTERN
from ..web import BANKS, bank_forms
from . import perturb

DATE_RE = date_regex()  # a full date in any language's date styles, or ISO (`language.date_regex`)
# A figure: not a part of a word or code (Latin letters and digits before it; CJK text may be)
NUMBER_RE = re.compile(r"(?<![A-Za-z0-9_.])[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![A-Za-z0-9_.,])[-−]?\d+(?:\.\d+)?")
_YEAR_RE = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_LINK_RE = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")
URL_RE = re.compile(URL_PATTERN)  # a URL in running text (`plumbing.URL_PATTERN`)
_PAGE_REF_RE = re.compile(r"(?<![\w/?=&.])\?page=\d+\b")


def paged(urls: list[str]) -> list[str]:
    """A list's pages as a researcher notes them: the first address in full, the next ones of the
    same list by their page query alone (`https://x/list, ?page=2, ?page=3`), not five copies of
    one address; `urls_in` reads them back."""
    out: list[str] = []
    base = None
    for u in urls:
        b = u.split("?page=", 1)[0]
        out.append(u[len(b):] if b == base and u != b else u)
        base = b
    return out


def urls_in(text: str) -> list[str]:
    """The addresses a text gives: its URLs, and a list's next pages noted by their query alone
    after the list's address on the same line (`https://x/list, ?page=2, ?page=3`: a research
    note's way, `paged`), resolved against it."""
    out = [u.rstrip(".,;:") for u in URL_RE.findall(text)]
    if "?page=" in text:
        for line in text.splitlines():
            refs = list(_PAGE_REF_RE.finditer(line))
            if not refs:
                continue
            for m in refs:
                before = [u.rstrip(".,;:") for u in URL_RE.findall(line[:m.start()])]
                if before:
                    out.append(before[-1].split("?", 1)[0] + m.group(0))
    return out
_RESULT_RE = re.compile(r"^\[(\d+)\] (\S+)\nTitle: (.*)\nSnippet: (.*)\nDate: (.*)$", re.M)
_SEARCH_HEAD_RE = re.compile(r'^Search results for "(.*)" \((\d+)-(\d+) of about (\d+)\):', re.M)
_NO_RESULTS_RE = re.compile(r'^No results found for "(.*?)"', re.M)


# A tenure or event span after a list item: "(since 2016)", "(2018–2021)", "(2023)", "（2019年起）",
# "(desde 2016)": an open span in each language's `since_year` words.
_SINCE = "|".join(f"{re.escape(a)}\\d{{4}}{re.escape(b)}" for a, b in bank_forms("since_year", "a"))
_SPAN_RE = re.compile(r"[（(](?:(?P<since>" + _SINCE + r")|(\d{4})[–-](\d{4})|(\d{4}))[）)]\s*$")
# the words of an open span after a link's date (' (since June 25, 2016)', '（2016年6月25日起）')
SINCE_WORDS = tuple(w.strip(" （）()") for a, b in bank_forms("tag_since_date", "d") for w in (a, b) if w.strip(" （）()"))
# an article's last line saying when it was last edited, in any language's words (`web/banks`)
_EDITED_RE = re.compile("^(?:" + "|".join(re.escape(a) + "(.+)" + re.escape(b) for a, b in bank_forms("edited", "date")) + ")$")
# 'page 2 of 5', '第2页，共5页': each language's `page_of`, the page and the count by name
_PAGE_OF_RE = re.compile("|".join(
    re.escape(o).replace(re.escape("{p}"), f"(?P<p{i}>\\d+)").replace(re.escape("{n}"), f"(?P<n{i}>\\d+)")
    for i, o in enumerate(dict.fromkeys(o for b in BANKS.values() for o in b["page_of"]))))
PAGE_OF = _PAGE_OF_RE
# between a range's two dates in any language (' – ', '至'): each language's `tag_range`
RANGE_SEP = re.compile("|".join(dict.fromkeys(
    re.escape(o[o.index("{d}") + 3:o.index("{e}")].strip()) for b in BANKS.values() for o in b["tag_range"])))
PAGES_NAV = tuple(a for a, _ in bank_forms("pages_nav", "links"))  # 'Pages: ', '页码：'
_FIELD_SPLIT = re.compile(r"[;；]\s*(?=\[)")  # between the links of one profile field
_RULE_RE = re.compile(r"^\|?[-:| ]+\|?$")
_SCALE = scale_words()  # 'million', 'millones', '万': factors
_SCALED_RE = re.compile(rf"^\s*[-−]?[\d,]+(?:\.\d+)?\s*({scale_alternation()})")


# --------------------------------------------------------------------------- values


def read_date(text: str) -> dt.date | None:
    """The first full date written in `text`, in any of the sites' styles."""
    for m in DATE_RE.finditer(text):
        try:
            return dt.date(*date_of(m))
        except (ValueError, KeyError):
            continue
    return None


def read_number(text: str, scaled: bool = False) -> float | None:
    """The first number written in `text` ('1,717,743 km²' -> 1717743.0). Tables write exact values
    with their unit ('10.5 million USD', '1.2 million passengers a year': 10.5, 1.2); prose on news
    and fan sites rounds big numbers, and `scaled` reads '1.23 million people' as 1230000.0."""
    m = NUMBER_RE.search(text)
    if m is None:
        return None
    v = float(m.group(0).replace(",", "").replace("−", "-"))
    s = _SCALED_RE.match(text[m.start():]) if scaled else None
    if s is not None:
        v *= _SCALE[s.group(1)]
    return v


def in_unit(cell: str, unit: str | None) -> str:
    """A figure prose writes with a scale ('1.856亿美元', '90万美元') as the unit it is counted in
    ('185.6百万美元'), where that unit holds the scale (`Language.scaled_units`); any other cell
    as it is."""
    scaled = scaled_unit(unit)
    if scaled is None or not cell or unit in cell:
        return cell
    factor, base = scaled
    text = _LINK_RE.sub(r"\1", cell)
    if base not in text:
        return cell
    n = read_number(text, scaled=True)
    return written_in(unit).with_unit(plain_number(n / factor), unit) if n is not None else cell


def read_year(text: str) -> int | None:
    m = _YEAR_RE.search(text)
    return int(m.group(1)) if m else None


def plain_number(v: float) -> str:
    """A number as a table cell: '1995', '10.5' (no grouping, no trailing zeros)."""
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.6f}".rstrip("0").rstrip(".")


@dataclass(frozen=True, slots=True)
class Span:
    """When a listed link held, in years: `start` (None: undated), `end` (None: still open, or an
    event), `open` (written 'since …')."""

    start: int | None = None
    end: int | None = None
    open: bool = False
    note: str | None = None  # the link's own attributes as the page writes them after it ('sales')


def note_parts(span: Span | None) -> list[str]:
    """A link's own attributes as its page wrote them after it, one per attribute, in order."""
    return re.split(r",\s*|，", span.note) if span is not None and span.note else []


def note_value(part: str, label: str, labelled: bool | None = None) -> str:
    """A link's own attribute as written after it, without the label a number or an entity is
    written with ('shirt number 9' -> '9', '球衣号码9' -> '9', 'supervisor Isaac Wilkinson' ->
    'Isaac Wilkinson'); a category stays as it is ('sales'). `labelled`: whether pages write this
    attribute after its label (the question says; None: judged from the text, for questions
    written before it did)."""
    if labelled is not None:
        if labelled and label and part[:len(label)].lower() == label.lower():
            return part[len(label):].strip()
        return part
    if label and part[:len(label)].lower() == label.lower():
        rest = part[len(label):]
        if rest.strip().isdigit() or (rest[:1] == " " and rest[1:2].isupper()) or (rest[:1] and _is_cjk(label[-1]) and _is_cjk(rest[0])):
            return rest.strip()
    return part


def note_at(parts: list[str], i: int, label: str, labelled: bool | None = None) -> str | None:
    """The `i`-th of a link's own attributes as its page wrote them (`note_parts`), without its
    label; one a sentence or a list writes after its label is found by the label wherever it
    stands (an empty attribute before it is not written, so places shift), else by its place (a
    table's cell holds the value alone); None when the page gives none."""
    if labelled and label:
        for p in parts:
            if p[:len(label)].lower() == label.lower():
                return note_value(p, label, True)
    part = parts[i] if i < len(parts) else ""
    return (note_value(part, label) if labelled else part) or None


def _is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


# a parenthesis that holds a date (' (Nov 2, 1999 – Oct 8, 2004)'), not a label's own ('(thousand EUR)')
_NOTE_DATES = re.compile(r"\s*[(（][^()（）]*\d[^()（）]*[)）]")
# a bracket's text that is a date or a span of years, not a note ('1999年11月2日–2004年', '2001–2005')
_DATE_TEXT = re.compile(r"\d{4}\s*[–-]|\d\s*[年月日]|^\s*\d{4}\s*$")


# where a timeline line's end date begins (', until 3 May 2005', '，至2005年5月3日'), after the link's note
_UNTIL = re.compile("|".join(re.escape(a).replace(",\\ ", ",\\s*").replace("\\ ", "\\s") for a, _ in bank_forms("until", "d")))


def _bracketed(t: str) -> str | None:
    """The text inside the bracket `t` opens with, nested brackets counted ('（转会费（千欧元）379，队长）'
    -> '转会费（千欧元）379，队长'); None when it is not closed."""
    depth = 0
    for i, ch in enumerate(t):
        if ch in "(（":
            depth += 1
        elif ch in ")）":
            depth -= 1
            if depth == 0:
                return t[1:i]
    return None


def read_note(text: str) -> str | None:
    """What a page writes between a link and its dates: the link's own attributes (', sales',
    ', transfer fee (thousand EUR) 75, captain', '（销售部）', '（转会费（千欧元）379，队长）'), or None."""
    t = text.strip()
    if t.startswith((",", "，")):
        t = t[1:]
        m = _NOTE_DATES.search(t)
        if m:
            t = t[:m.start()]
    elif t.startswith("（"):
        t = _bracketed(t)
        if t is None or _DATE_TEXT.search(t):  # a date, not a note
            return None
    else:
        return None
    t = t.strip(" ,，")
    return t or None


def read_span(text: str) -> tuple[str, Span]:
    """A list item's text without its trailing span, and the span."""
    m = _SPAN_RE.search(text)
    if m is None:
        return text.strip(), Span()
    since, c, d, e = m.group("since"), m.group(2), m.group(3), m.group(4)
    head = text[:m.start()].strip()
    if since:
        return head, Span(int(_YEAR_RE.search(since).group(1)), None, True)
    if c:
        return head, Span(int(c), int(d))
    return head, Span(int(e), int(e))


# --------------------------------------------------------------------------- search results


@dataclass(frozen=True, slots=True)
class Result:
    rank: int
    url: str
    title: str
    snippet: str
    date: str


@dataclass(slots=True)
class Results:
    """One query's block of a `web_search` result."""

    query: str
    results: list[Result]
    total: int = 0
    error: str | None = None  # the tool's error text (the whole call failed)


def read_search(text: str) -> list[Results]:
    """The blocks of a web_search result (one per query); a failed call gives one block with its error."""
    if text.startswith("Error"):
        return [Results("", [], 0, text.split("\n", 1)[0])]
    out = []
    for block in re.split(r"\n\n(?=Search results for |No results found for )", text):
        head = _SEARCH_HEAD_RE.match(block)
        if head:
            res = [Result(int(m[0]), m[1], m[2], m[3], m[4]) for m in _RESULT_RE.findall(block)]
            out.append(Results(head.group(1), res, int(head.group(4))))
        else:
            nr = _NO_RESULTS_RE.match(block)
            out.append(Results(nr.group(1) if nr else "", [], 0))
    return out


_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+|(?<=[。；！？])")
# (a list item's dash ends one too: a page's "Lists" bullets, flattened into a snippet, follow
# its last key date: "1888 – Independence Lists - Seasons in Yortamirland (4 entries)")
_CLAUSE_END = re.compile(r", |; |，|；|、| and | while | but |, and | - ")
_UNIT = re.compile(r"\s?([A-Za-zÀ-ÖØ-öø-ÿ%]{1,10}|[\u4e00-\u9fff]{1,4})")
# words after a number that are no unit ('5 and', '1990 since'), in every language
_NOT_UNITS = frozenset(w for lang in map(get_language, languages()) for w in lang.reading.function_words)


def snippet_value(snippet: str, label: str, name: str) -> str | None:
    """A date or a figure a search snippet states for `label` of the entity `name`: in one
    sentence of the snippet that names the entity, the label, then within a few words a full date
    or a number (with its unit). None when the snippet does not settle it: no such sentence, no
    value near the label, or a value at the snippet's cut edge (it may be cut short)."""
    if not label or not name or not snippet:
        return None
    lang = written_in(label)
    low_label, low_name = label.lower(), name.lower()
    for sent in _SENTENCE_END.split(snippet):
        low = sent.lower()
        if low_name not in low:
            continue
        at = low.find(low_label)
        while at >= 0:
            after = at + len(low_label)
            if lang.word_at(low, at, after):
                size = lang.reading.value_window
                window = sent[after: after + size]
                stop = _CLAUSE_END.search(window)
                value = _first_value(window, stop.start() if stop else len(window))  # this clause's value, not the next
                if value is not None and value[1] >= len(window) and after + size < len(sent):
                    # the value runs to the window's edge: its unit may go on ('37 百万美' of '37 百万美元')
                    window = sent[after: after + 2 * size]
                    stop = _CLAUSE_END.search(window)
                    value = _first_value(window, stop.start() if stop else len(window))
                if value is not None:
                    start, end, text = value
                    tail = sent[after + end:]
                    if tail.strip() and not snippet.endswith(sent[after: after + end].rstrip()):
                        return text
            at = low.find(low_label, at + 1)
    return None


def snippet_confirms(snippet: str, label: str, name: str, value: str) -> bool:
    """Whether a snippet says the entity `name` has `value` for `label`: one sentence names the
    entity, and one clause of it holds the label and the value as whole words ("Records give
    the nationality of Carla Lewis as Torniica", "Industry energy"). A snippet can confirm a
    value this way, never rule one out."""
    if not (label and name and value and snippet):
        return False
    has = written_in(label + value).has_word

    low_label, low_name, low_value = label.lower(), name.lower(), value.lower()
    for sent in _SENTENCE_END.split(snippet):
        low = sent.lower()
        if low_name not in low or not has(low, low_label):
            continue
        for clause in _CLAUSE_END.split(low):
            if has(clause, low_label) and has(clause.replace(low_name, " "), low_value):
                return not snippet.lower().rstrip().endswith(low_value)  # not a value the cut may have shortened
    return False


_STOPWORDS = frozenset(("of", "the", "a", "an", "in", "at", "on", "and", "or", "by", "to", "date", "number", "name"))
_DATED_PATH = re.compile(r"^https?://[^/]+/\d{4}/\d{2}/\d{2}/")
_CLAUSES = re.compile(r",(?! \d{4}\b) |; |，|；| — | – | - |: |：")  # (not the comma of "January 9, 1988")


def _stems(label: str) -> list[tuple[str, ...]]:
    """A label's content words cut to a stem ('Founded' -> 'foun', 'Elevation' -> 'elevat'), to
    find it however a sentence inflects it, each with the other words its language uses for it
    (`same_as` in the language's reading data); a CJK label is its own stem, also without a tail
    prose leaves out (去世日期: 去世, and 逝世 for it)."""
    low = label.lower()
    lang = written_in(label)
    if re.search(r"[\u4e00-\u9fff]", low):
        whole = re.sub(r"[（(].*?[）)]", "", low).strip()
        core = next((whole[:-len(x)] for x in lang.reading.label_tails if whole.endswith(x) and len(whole) > len(x) + 1), whole)
        return [tuple(dict.fromkeys((whole, core, *lang.reading.same_as.get(core, ()))))]
    words = [w for w in re.findall(r"[^\W_]+(?:-[^\W_]+)*", low) if w not in _STOPWORDS and len(w) > 1]
    stems = [w[:max(4, len(w) - 3)] if len(w) > 4 else w for w in words]
    return [(st, *lang.reading.same_as.get(st, ())) for st in stems]


def _says(low: str, stems: list[tuple[str, ...]]) -> bool:
    """Does lower-case text name every word of a label (a stem or one of its other words)?"""
    return all(any(a in low for a in alts) for alts in stems)


def prose_value(text: str, label: str, kind: str, known: set[str] | frozenset[str] = frozenset(),
                unit: str | None = None) -> str | None:
    """A value a page's prose states for `label`, read with generic cues alone: a clause holding
    the label's words (however inflected), and in it or in a short fragment beside it ('On 5 June
    1967, she was born'), a value of the kind wanted: a full date
    (`kind` 'date'), a figure with its unit ('number'), or one of the `known` values of that label
    (the values other pages give it, 'string'). A figure whose sentences never name the label is
    found by its `unit` when the page has one figure in it ('stands 192 cm tall'), a category by
    being the one known value of it the page names ('plays as a Defender'). None when no
    sentence settles it, or two values compete for it."""
    stems = _stems(label)
    if not stems or not text:
        return None
    lang = written_in(text)
    body = "\n".join(ln for ln in text.split("\n") if not ln.startswith(("#", "|", "---", "*")))
    body = _LINK_RE.sub(lambda m: m.group(1), body)
    # "Label: value" (key facts, also flattened into a snippet: "- Born: 7 Jul 1885 - Died: ...")
    keyed = list(re.finditer(rf"(?<![^\W_]){re.escape(label)}\**\s*[:：]\**\s*([^\n]*)", body, re.I))
    if keyed:  # the value right after the label, or none (a snippet may stop at the label)
        pairs = {v for m in keyed for v in _values(re.split(r" - |\s\|\s|；|;", m.group(1))[0], kind, known, lang)[:1]
                 if m.group(1).lower().find(v.lower()) <= 2}
        return pairs.pop() if len(pairs) == 1 else None
    if re.search(rf"(?:^|\n|\s[-|·]\s)\**{re.escape(label)}\**\s*[:：]?\s*$", body.rstrip(), re.I):
        return None  # a snippet that stops at a field's label ('- Dissolved: Aug 17, 1950 - Founded'): its value is cut off
    found: list[str] = []
    for sent in _SENTENCE_END.split(body):
        low = sent.lower()
        if not _says(low, stems):
            continue
        clauses = _CLAUSES.split(sent)
        at = [i for i, c in enumerate(clauses) if _says(c.lower(), stems)]
        if kind == "string":  # a value may hold a comma ('Administrator, Civil Service'): found in the sentence
            bounds = [0] + [x for m in _CLAUSES.finditer(sent) for x in (m.start(), m.end())] + [len(sent)]
            spans = [(bounds[2 * i], bounds[2 * i + 1]) for i in at]
            hits = _string_hits(sent, known, lang)
            got = {v for a, b, v in hits if any(a < e and b > s_ for s_, e in spans)} or {v for *_, v in hits}
            if len(got) == 1:
                found.append(got.pop())
            continue
        beside = [clauses[j] for i in at for j in (i - 1, i + 1)
                  if 0 <= j < len(clauses) and j not in at and _fragment(clauses[j], kind, known, lang)]
        for scope in ([clauses[i] for i in at], beside):
            got = [v for c in scope for v in _values(c, kind, known, lang)]
            if len(set(got)) == 1:
                found.append(got[0])
                break
            if len(set(got)) > 1:
                break
    if not found and kind == "string" and known:  # 'plays as a Defender': the one value of that label the page names
        named = set(_values(body, kind, known, lang))
        return named.pop() if len(named) == 1 else None
    if not found and kind == "number" and unit:
        by_unit = {v for v in _values(body, kind, known, lang) if v.lower().endswith(unit.lower()) and v[:-len(unit)].strip()[-1:].isdigit()}
        if not by_unit:  # a unit of several words ('is worth 7.54 million EUR'): the figure it follows
            for m in NUMBER_RE.finditer(body):
                rest = body[m.end():]
                gap = len(rest) - len(rest.lstrip())
                if rest.lstrip().lower().startswith(unit.lower()) and not _YEAR_RE.fullmatch(m.group(0)):
                    by_unit.add(body[m.start():m.end() + gap + len(unit)])
        return by_unit.pop() if len(by_unit) == 1 else None
    return found[0] if len(set(found)) == 1 else None


def _fragment(clause: str, kind: str, known, lang: Language) -> bool:
    """A clause that is little more than one value ('On 5 June 1967'): it belongs to its neighbour."""
    vals = _values(clause, kind, known, lang)
    if len(vals) != 1:
        return False
    rest = clause.replace(vals[0], " ")
    return len(lang.tokens(rest)) <= lang.reading.fragment_rest


def _values(text: str, kind: str, known, lang: Language) -> list[str]:
    if kind == "date":
        return [m.group(0) for m in DATE_RE.finditer(text)]
    if kind == "number":
        out = []
        for m in NUMBER_RE.finditer(text):
            near = text[max(0, m.start() - 12): m.end() + 12]
            scaled = text.startswith(tuple(w for _, w in lang.scales), m.end())  # '5660万美元' is no year
            if (_YEAR_RE.fullmatch(m.group(0)) and not scaled) or DATE_RE.search(near):
                continue
            unit = _UNIT.match(text, m.end())
            end = unit.end() if unit and unit.group(1).lower() not in _NOT_UNITS else m.end()
            out.append(text[m.start(): end].strip())
        return out
    return [v for *_, v in _string_hits(text, known, lang)]


def _string_hits(text: str, known, lang: Language) -> list[tuple[int, int, str]]:
    """Where the `known` values occur in text, as whole words, the longest first where two overlap."""
    low = text.lower()
    hits = []
    for v in known:
        if v.lower() not in low:  # most known values are not on the page: a substring test first
            continue
        for m in re.finditer(rf"(?<!\w){re.escape(v.lower())}(?!\w)" if lang.spaced else re.escape(v.lower()), low):
            hits.append((m.start(), m.end(), v))
    hits.sort(key=lambda h: (h[0] - h[1], h[0], h[2]))  # values alike but for case: one order in every process
    kept: list[tuple[int, int, str]] = []
    for h in hits:
        if all(h[1] <= k[0] or h[0] >= k[1] for k in kept):
            kept.append(h)
    return sorted(kept)


def is_news_url(url: str) -> bool:
    """A news item's address: a dated path (`/2024/05/17/...`)."""
    return bool(_DATED_PATH.match(url))


def own_pages(page: Page) -> list[str]:
    """The profile or official site an article's subject has elsewhere, read from the article's
    links alone: off-site links whose text starts with the subject's name or names its official
    site, not news items (a dated path), last first."""
    here = urlsplit(page.url).netloc
    name = (page.name or page.title).lower()
    profiles = []
    for text, url in page.links:
        if urlsplit(url).netloc == here or is_news_url(url):
            continue
        if name and text.lower().startswith(name) or re.search(r"official|官方", text, re.I):
            profiles.append(url)
    # the last such link first: external links close an article, after any lists named for it
    return list(dict.fromkeys(reversed(profiles)))


def _first_value(window: str, clause: int) -> tuple[int, int, str] | None:
    d = DATE_RE.search(window)
    n = NUMBER_RE.search(window[:clause])
    if d and d.start() < clause and (not n or d.start() <= n.start()):
        return d.start(), d.end(), d.group(0)
    if n:
        if DATE_RE.search(window[max(0, n.start() - 12): n.end() + 12]) or _YEAR_RE.fullmatch(n.group(0)):
            return None  # a year, or part of a date: not a figure
        end = n.end()
        unit = _UNIT.match(window, end)
        if unit and unit.group(1).lower() not in _NOT_UNITS:
            end = unit.end()
        return n.start(), end, window[n.start(): end].strip()
    return None


# --------------------------------------------------------------------------- pages


@dataclass(frozen=True, slots=True)
class Item:
    """A bulleted link of a list section, with its span."""

    name: str
    url: str
    span: Span


@dataclass(slots=True)
class Section:
    heading: str
    items: list[Item] = field(default_factory=list)
    text: str = ""  # the prose paragraphs
    more_url: str | None = None  # "the full list of N is on a separate page"
    more_count: int | None = None
    cut: bool = False  # the page stops inside it (cut short): its list may be incomplete


@dataclass(frozen=True, slots=True)
class Dated:
    """A timeline line: the date, what happened (a label), the link it names, and when it ended."""

    date: dt.date
    label: str
    name: str | None
    url: str | None
    until: dt.date | None
    note: str | None = None  # the link's own attributes written after it (', supervisor Isaac Wilkinson')


@dataclass(slots=True)
class Page:
    """A page as a reader takes it in."""

    url: str
    state: str  # ok | error | truncated | archived | missing
    title: str = ""
    kind: str = "other"  # article | directory | profile | news | other
    site: str = ""  # a directory's or profile's site name, as its by-line gives it
    dated: dt.date | None = None  # the date its by-line gives (a news item's, a listing's last update)
    archived: dt.date | None = None  # an archived snapshot's capture date
    edited: dt.date | None = None  # when the page says it was last edited
    error: str = ""
    name: str = ""
    aliases: tuple[str, ...] = ()
    infobox: list[tuple[str, str]] = field(default_factory=list)
    sections: dict[str, Section] = field(default_factory=dict)
    timeline: list[Dated] = field(default_factory=list)
    lists: list[tuple[str, str, int]] = field(default_factory=list)  # a part's lists: (title, url, entries)
    headers: list[str] = field(default_factory=list)  # a directory's table
    rows: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (name, url, the other cells)
    page: int = 1
    pages: int = 1
    next_url: str | None = None
    prev_url: str | None = None
    page_urls: dict[int, str] = field(default_factory=dict)
    fields: list[tuple[str, str]] = field(default_factory=list)  # a profile's "- **Label:** value" lines
    links: list[tuple[str, str]] = field(default_factory=list)  # every (text, url) on the page
    text: str = ""

    def infobox_rows(self, label: str) -> list[str]:
        """Cells of the infobox rows for `label` (a row may carry several labels when they share a
        value: 'Founded and independence'; a repeated label reads 'Headquarters (2)')."""
        want = label.strip().lower()
        out = []
        for lab, cell in self.infobox or self.fields:  # an article's infobox, or a profile's key facts
            low = lab.lower()
            if low == want or re.sub(r" \(\d+\)$", "", low) == want or want in _split_labels(low):
                out.append(cell)
        return out

    def section(self, heading: str) -> Section | None:
        return self.sections.get(heading.strip().lower())


# between a list's items in any language (', ', ' and ', '、', '和', ' y ')
_LIST_SPLIT = re.compile("|".join(sorted({re.escape(m) for lang in map(get_language, languages()) for m in (lang.list_sep, lang.and_)},
                                         key=lambda m: (-len(m), m))))


@lru_cache(maxsize=4096)
def _split_labels(low: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in _LIST_SPLIT.split(low) if x.strip())


def links_in(text: str) -> list[tuple[str, str]]:
    return _LINK_RE.findall(text)


_PAGE_CACHE: dict[tuple[str, int], Page] = {}
_CACHE_MAX = 20000


def read_page(url: str, text: str) -> Page:
    """A web_extractor result as a reader takes it in (cached: the same URL and text read alike)."""
    key = (url, hash(text))
    hit = _PAGE_CACHE.get(key)
    if hit is not None and hit.text == text:
        return hit
    page = _read_page(url, text)
    if len(_PAGE_CACHE) >= _CACHE_MAX:
        _PAGE_CACHE.clear()
    _PAGE_CACHE[key] = page
    return page


def _read_page(url: str, text: str) -> Page:
    if text.startswith("Error"):
        return Page(url, "error", error=text.split("\n", 1)[0], text=text)
    if text.startswith("# 404 Not Found"):
        return Page(url, "missing", title="404 Not Found", text=text)
    state = "ok"
    body = text
    archived = None
    if perturb.looks_cut(body):  # it stops mid-sentence or mid-row: what it did show, less the broken line
        state = "truncated"
        body = body.rstrip().rsplit("\n", 1)[0] if "\n" in body.strip() else ""
    edited = None
    head, _, last = body.rstrip().rpartition("\n")
    m = _EDITED_RE.match(last.strip())
    if m:
        edited = read_date(next(g for g in m.groups() if g))
        body = head
    page = Page(url, state, archived=archived, edited=edited, text=text)
    page.links = links_in(body)
    _parse_body(page, body)
    if state == "truncated" and page.sections:  # the section the cut fell in shows only its start
        next(reversed(page.sections.values())).cut = True
    return page


def _cells(line: str) -> list[str]:
    parts = line.strip().strip("|").split(" | ")
    return [p.strip() for p in parts]


def _parse_body(page: Page, body: str) -> None:
    lines = body.split("\n")
    i = 0
    n = len(lines)
    if i < n and lines[i].startswith("# "):
        page.title = lines[i][2:].strip()
        i += 1
    heading: str | None = None
    sec: Section | None = None
    table: list[list[str]] = []

    def flush_table() -> None:
        nonlocal table
        if not table:
            return
        head, rows = table[0], table[1:]
        if heading is None and len(head) == 2 and head[1] == "" and not page.infobox:  # the infobox: | Type | |
            page.kind = "article"
            page.infobox = [(r[0], r[1] if len(r) > 1 else "") for r in rows if r]
        elif heading is None and not page.rows:
            page.kind = "directory"
            page.headers = head
            for r in rows:
                lk = _LINK_RE.match(r[0])
                if lk:
                    page.rows.append((lk.group(1), lk.group(2), r[1:]))
        table = []

    while i < n:
        line = lines[i]
        i += 1
        if line.startswith("|"):
            if not _RULE_RE.match(line):  # the |---|---| rule under a header
                table.append(_cells(line))
            continue
        flush_table()
        if line.startswith("## "):
            heading = line[3:].strip()
            sec = page.sections.setdefault(heading.lower(), Section(heading))
            continue
        if not line.strip():
            continue
        if heading is None:
            _lead_line(page, line)
            continue
        if line.startswith("- **") and "** – " in line:  # a timeline line
            d = read_date(line[4:line.index("** – ")])
            what = line[line.index("** – ") + 5:]
            until = note = None
            lk = _LINK_RE.search(what)
            label = what
            if lk:
                label = what[:lk.start()].rstrip(": ：")
                tail = what[lk.end():]
                until = read_date(tail) if tail else None
                cut = _UNTIL.search(tail)
                note = read_note(tail[:cut.start()] if cut else tail)
            if d is not None:
                page.timeline.append(Dated(d, label.strip(), lk.group(1) if lk else None, lk.group(2) if lk else None, until,
                                           note))
            continue
        if line.startswith("- "):
            lk = _LINK_RE.match(line[2:])
            if lk and sec is not None:
                rest = line[2 + lk.end():]
                if _ENTRIES.search(rest):  # a part's list of lists
                    page.lists.append((lk.group(1), lk.group(2), int(read_number(rest) or 0)))
                    continue
                head, span = read_span(rest)
                note = read_note(head)
                sec.items.append(Item(lk.group(1), lk.group(2), replace(span, note=note) if note else span))
            elif line.startswith("- **") and sec is not None:  # a profile field
                _field(page, line)
            continue
        if sec is not None:
            if not sec.items and sec.more_url is None and not sec.text:
                for text, u in links_in(line):
                    if u != page.url and not any(ch.isupper() for ch in text[:1]) and not _is_name_link(text):
                        sec.more_url = u
                        nums = [read_number(x) for x in re.findall(r"\d[\d,]*", _LINK_RE.sub(r"\1", line))]  # not the URLs' digits
                        sec.more_count = int(max((x for x in nums if x is not None), default=0)) or None
                        break
            sec.text += (" " if sec.text else "") + line.strip()
    flush_table()
    if page.kind == "other" and page.fields:
        page.kind = "profile"
    if not page.timeline:  # a profile dates its links in its key facts: 'Awards: [X](url) (3 May 2009)'
        for label, cell in page.fields:
            lk = _LINK_RE.search(cell)
            if lk is None:
                continue
            days = [read_date(x) for x in RANGE_SEP.split(cell[lk.end():]) if x.strip()]
            if days and days[0] is not None:
                page.timeline.append(Dated(days[0], label, lk.group(1), lk.group(2), days[1] if len(days) > 1 else None))
        page.timeline.sort(key=lambda d: d.date)


# a list of lists' count after its link ('(8 entries)', '（8项）'), in any language
_ENTRIES = re.compile("|".join(re.escape(b).replace(re.escape("{count}"), r"\d[\d,]*") + "$"
                               for k in ("list_entry", "list_entry_one") for _, b in bank_forms(k, "url")
                               for b in [b.removeprefix(")")]))
# the text of a link to a list's own page ('a separate page', '完整列表'), not a name
_LIST_LINKS = frozenset(m for b in BANKS.values() for k in ("more_one", "more_list") for o in b.get(k) or ()
                        for m in re.findall(r"\[([^\]{}]+)\]\(\{url\}\)", o))
# an article's lead naming its other names (' (also known as ', '（又名'), in any language
_AKA = re.compile(r"\s*[（(](?:" + "|".join(re.escape(a.strip().lstrip("（(")) for a, _ in bank_forms("aka", "aliases")) + r")(.*?)[）)]")


def _is_name_link(text: str) -> bool:
    """Link text that names an entity (a capitalised or CJK name) rather than pointing at a list."""
    return bool(text) and (text[0].isupper() or "\u4e00" <= text[0] <= "\u9fff") and text not in _LIST_LINKS


def _lead_line(page: Page, line: str) -> None:
    if line.startswith("**") and page.kind in ("other", "article") and not page.name:
        end = line.find("**", 2)
        if end > 2:
            page.name = line[2:end]
            rest = line[end + 2:]
            m = _AKA.match(rest)
            if m:
                page.aliases = tuple(a.strip("* ") for a in re.split(r"\*, \*|\*、\*", m.group(1)))
        return
    if line.startswith("*") and " · " in line:  # a directory's or profile's by-line
        site = line[1:line.index("*", 1)]
        page.site = site
        page.dated = page.dated or read_date(line)
        m = _PAGE_OF_RE.search(line)
        if m:
            i = m.lastgroup[1:]
            page.page, page.pages = int(m.group("p" + i)), int(m.group("n" + i))
        return
    if line.startswith("- **"):
        _field(page, line)
        return
    nav = _LINK_RE.findall(line)
    if nav and ("→" in line or "←" in line or line.startswith(PAGES_NAV)):
        for text, u in nav:
            if "→" in text:
                page.next_url = u
            elif "←" in text:
                page.prev_url = u
            elif text.isdigit():
                page.page_urls[int(text)] = u
        return


def _field(page: Page, line: str) -> None:
    m = re.match(r"- \*\*(.+?)[:：]\*\*\s*(.*)$", line)
    if m:  # a label's several links side by side ('Clubs: [A](u) (2001–2005); [B](u) (since 2006)'): one field each
        page.fields += [(m.group(1), cell) for cell in _FIELD_SPLIT.split(m.group(2))]


def page_links(page: Page) -> dict[int, str]:
    """A paginated list's pages this page links to, by number (its own page included)."""
    out = dict(page.page_urls)
    out[page.page] = page.url
    if page.next_url:
        out.setdefault(page.page + 1, page.next_url)
    if page.prev_url and page.page > 1:
        out.setdefault(page.page - 1, page.prev_url)
    return out
