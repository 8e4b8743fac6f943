"""How values are written on pages, and how a page is checked against its fact sheet.

One module serves both backends: the template writer formats values with `format_*`,
and `check_page` accepts any of the surface forms listed here, so a page written by
the vLLM backend is held to exactly the rules the template pages pass.
"""

from __future__ import annotations

import datetime as dt
import re
import zlib
from decimal import Decimal
from typing import NamedTuple

from ..language import date_of, date_regex, empty_slot_alternation, scale_alternation, scale_factors, scale_words
from ..language import get as get_language
from ..plumbing import URL_PATTERN

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


class Fact(NamedTuple):
    """One row of the world's `facts` view, as a page states it."""

    fact_id: str
    subject: str
    predicate: str
    value: str  # canonical text: ISO date, plain number, string, or the linked entity id
    value_type: str  # string | int | float | date | bool | entity
    valid_from: dt.date | None
    valid_to: dt.date | None
    # a link's own attributes (a job's department), in the relation's `note_order` (by name), joined by
    # U+001F; None for attributes and links without any
    note: str | None = None


def note_values(f: Fact) -> list[str]:
    """A link's own attributes as its fact carries them, one per attribute in the relation's
    `note_order` (by name) ('' for one the link has none of); [] for a fact without any."""
    return f.note.split("\x1f") if f.note else []


def pick(key: str, n: int) -> int:
    """A stable choice in [0, n) from a string (crc32: identical across processes)."""
    return zlib.crc32(key.encode()) % n if n > 1 else 0


# --------------------------------------------------------------------------- formatting


def format_date(d: dt.date, style: int) -> str:
    if style == 0:
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    if style == 1:
        return f"{d.day} {MONTHS[d.month - 1]} {d.year}"
    return d.isoformat()


def format_number(value: str, value_type: str, unit: str | None = None) -> str:
    """Digits grouped with commas, no trailing zeros, sign kept: '12,345', '-0.5', '3.1 million USD'."""
    d = Decimal(value)
    if value_type == "float":
        d = d.normalize()
    s = format(d, ",f")
    return f"{s} {unit}" if unit else s


def format_span(start: dt.date | None, end: dt.date | None) -> str:
    """A tenure as years: '2001–2005', 'since 2001'."""
    if start is None:
        return ""
    if end is None:
        return f"since {start.year}"
    return f"{start.year}–{end.year}" if end.year != start.year else str(start.year)


# --------------------------------------------------------------------------- checking

# Word characters other than CJK: a number or name next to Chinese text ("2024年", "于王伟")
# still stands alone, while 'K200' or 'March' inside an English word does not.
_W = r"[^\W\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f]"
_ISO_RE = re.compile(rf"(?<!{_W})(\d{{4}})-(\d{{2}})-(\d{{2}})(?!{_W})")
_LINK_TARGET_RE = re.compile(r"\]\([^)]*\)")
# A phrase whose slot was left empty or unfilled: a preposition with nothing after it but a mark
# (' since .', ' on ,'), a template field, an empty bracket, a Chinese preposition before a mark.
UNFILLED_SLOT = re.compile(r"\{[a-z_]*\}|\(\s*\)|（\s*）")  # a slot no value filled, or brackets left empty
_EMPTY_SLOT = re.compile(empty_slot_alternation() + "|" + UNFILLED_SLOT.pattern)  # every language's words a slot follows
# a link target, a URL (an IRI may hold CJK letters) or a bare host (which CJK text may follow unspaced)
_URL_RE = re.compile(rf"\]\([^)]*\)|{URL_PATTERN}|www\.[^\s\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef\u2000-\u206f]+")
_NUM_RE = re.compile(rf"(?<![.]|{_W})-?\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?!{_W})|(?<![.,]|{_W})-?\d+(?:\.\d+)?(?!{_W})")
_SMALL = 10  # integers below this (counts: "three founders", "2 of 5") are not checked
_YEAR_MIN, _YEAR_MAX = 1000, 2999


def dates_in(text: str) -> tuple[set[dt.date], str]:
    """Full dates written in any accepted form, and the text with them blanked out."""
    found: set[dt.date] = set()

    def take(y: int, m: int, d: int) -> str:
        try:
            found.add(dt.date(y, m, d))
        except ValueError:
            found.add(dt.date.min)  # not a real date: never on a fact sheet, so it counts as invented
        return " "

    text = _ISO_RE.sub(lambda x: take(int(x[1]), int(x[2]), int(x[3])), text)
    def take_match(x: re.Match) -> str:
        try:
            return take(*date_of(x))
        except (ValueError, KeyError):
            found.add(dt.date.min)  # no such month: never on a fact sheet, so it counts as invented
            return " "

    text = date_regex(iso=False).sub(take_match, text)  # every language's date styles
    return found, text


_SCALED_RE = re.compile(rf"(?<![.,]|{_W})(-?\d+(?:\.\d+)?)({scale_alternation(spaced=True)})")


def numbers_in(text: str) -> list[float]:
    """Every plain number written on a page: '12,345', '-0.5' (see `scaled_in` for '1.23 million')."""
    return [float(m.replace(",", "")) for m in _NUM_RE.findall(_SCALED_RE.sub(" ", text))]


def scaled_in(text: str) -> list[tuple[float, float]]:
    """'1.23 million' as (1.23, 1230000.0): the number as written and as scaled; a unit such as
    'million USD' makes the written number the value, so both readings are kept."""
    scale = scale_words()
    return [(float(a), float(a) * scale[w.strip()]) for a, w in _SCALED_RE.findall(text)]


def _wordish(c: str) -> bool:
    """A letter, digit or underscore that is not a CJK character (CJK text has no spaces, so a
    character next to a name does not make it part of a longer word)."""
    return (c.isalnum() or c == "_") and not ("\u2e80" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff")


def _whole(m: re.Match) -> bool:
    """The match stands alone: no word character right before or after it. (A lookaround per
    alternative in the pattern costs 4x on long name lists; this checks the few matches.)"""
    s, a, b = m.string, m.start(), m.end()
    return not (a and _wordish(s[a - 1])) and not (b < len(s) and _wordish(s[b]))


def same_on_page(x: float, t: float) -> bool:
    """Equal up to rounding on the page: 0.6% of the value, or 0.05 absolute."""
    return abs(x - t) <= max(0.006 * abs(t), 0.051)


class FactSheetCheck:
    """What a page about these facts must contain (every value; for a tenure, its start and
    end years) and may contain (no full date, year or number of 10 or more that is not on
    the sheet). `require_end=False` for news, which is published when a tenure starts; a page
    dated `dated` (a profile last updated then) states a tenure that ended after that day as
    ongoing, so its end is not required either."""

    def __init__(self, facts: list[Fact], names: dict[str, str], extra_numbers: tuple[int, ...] = (),
                 extra_dates: tuple[dt.date, ...] = (), require_end: bool = True, dated: dt.date | None = None,
                 furniture: str = "", language: str = "en", person: bool | None = None):
        self.facts = facts
        self.language = language
        self.person = person  # the page's subject is a person (True), a thing (False), or unknown (None)
        self.furniture = furniture  # text the page closes with that is not about its facts (references, links)
        self.names = names
        self.require_end = require_end
        self.dated = dated
        dates = set(extra_dates)
        numbers: set[float] = {float(n) for n in extra_numbers}
        strings: set[str] = set()
        for f in facts:
            if f.value_type == "date":
                dates.add(dt.date.fromisoformat(f.value))
            elif f.value_type in ("int", "float"):
                numbers.add(float(f.value))
            elif f.value_type == "entity":
                strings.add(names[f.value])
            elif f.value_type == "string":
                strings.add(f.value)
            strings.add(names[f.subject])
            for x in note_values(f):  # a link's own number (a shirt number) is on the sheet too
                if x.isdigit():
                    numbers.add(float(x))
            if f.valid_from:
                dates.add(f.valid_from)
            if f.valid_to:
                dates.add(f.valid_to)
        self.dates = dates
        self.years = {d.year for d in dates}
        self.numbers = numbers
        # Names and string values may contain digits ("Kora K200"): blanked before numbers are
        # read, whole words only (a ticker "MAR" must not eat "March"), longest first.
        alts = "|".join(re.escape(x) for x in sorted((x for x in strings if x), key=len, reverse=True))
        self.blank = re.compile(alts, re.IGNORECASE) if alts else None  # whole words: see _blank

    def problems(self, markdown: str) -> list[str]:
        """Every way the page fails its fact sheet: 'missing <fact_id>' for a value it does not
        state, 'invented <value>' for a date or number that is not on the sheet, 'empty slot'
        for a phrase whose slot was left unfilled ('published there since .', '{start}', '于。')."""
        out: list[str] = []
        if self.furniture:
            markdown = markdown.replace(self.furniture.rstrip(), "")
        low = _LINK_TARGET_RE.sub("]", markdown).lower()  # a name only inside a link target is not stated
        body = _URL_RE.sub(" ", markdown)
        out += [f"empty slot {m.group(0).strip()!r}" for m in _EMPTY_SLOT.finditer(body)]  # (the site's furniture has none)
        lang = get_language(self.language)
        wrong = None if self.person is None else lang.checks.person_as_thing if self.person else lang.checks.thing_as_person
        if wrong is not None:
            out += [f"pronoun {m.group(0)!r} for {'a person' if self.person else 'a thing'}" for m in wrong.finditer(body)]
        if self.blank is not None:
            body = self.blank.sub(lambda m: " " if _whole(m) else m.group(0), body)
        for name, slip in lang.checks.page_slips.items():  # a Chinese sentence takes Chinese units and particles
            out += [f"{name} {m.group(0)!r}" for m in slip.finditer(body)]
        dates, rest = dates_in(body)
        # a figure with a scale word, as written and as scaled, and in a unit that holds a scale
        # ('1.856亿美元' is 185.6 百万美元: `Language.scaled_units`)
        scaled = [(raw, big, *(big / f for f in scale_factors())) for raw, big in scaled_in(rest)]
        nums = numbers_in(rest)
        stated = nums + [x for forms in scaled for x in forms]
        years = {d.year for d in dates} | {int(x) for x in nums if x.is_integer() and _YEAR_MIN <= x <= _YEAR_MAX}
        for f in self.facts:
            if not self._states(f, low, dates, stated, years):
                out.append(f"missing {f.fact_id}")
        for d in sorted(dates - self.dates):
            out.append(f"invented date {d if d != dt.date.min else '(not a real date)'}")
        for x in nums:
            if x.is_integer() and _YEAR_MIN <= x <= _YEAR_MAX and (int(x) in self.years or x in self.numbers):
                continue
            if x.is_integer() and abs(x) < _SMALL:
                continue
            if not any(same_on_page(x, t) for t in self.numbers):
                out.append(f"invented number {x:g}")
        for forms in scaled:
            if not any(same_on_page(x, t) for x in forms for t in self.numbers):
                out.append(f"invented number {forms[1]:g}")
        return out

    def _states(self, f: Fact, low: str, dates: set[dt.date], nums: list[float], years: set[int]) -> bool:
        vt = f.value_type
        if vt == "entity":
            if self.names[f.value].lower() not in low or self.names[f.subject].lower() not in low:
                return False
        elif vt == "date":
            if dt.date.fromisoformat(f.value) not in dates:
                return False
        elif vt in ("int", "float"):
            v = float(f.value)
            if not any(same_on_page(x, v) for x in nums):
                return False
        elif vt == "bool":
            word = "yes" if f.value == "true" else "no"
            zh = "是" if f.value == "true" else "否"
            if not re.search(rf"(?<!{_W})({word}|{f.value})(?!{_W})", low) and zh not in low:
                return False
        elif f.value.lower() not in low:
            return False
        if vt == "entity" and f.valid_from is not None:
            # A dated link states when: its start year, and for a finished tenure its end year.
            if f.valid_from.year not in years:
                return False
            if self.require_end and f.valid_to is not None and (self.dated is None or f.valid_to <= self.dated) \
                    and f.valid_to.year not in years:
                return False
        return True
