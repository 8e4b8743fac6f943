"""The surface grammar: how facts become sentences, sentences become paragraphs, and how
each site's voice and number/date conventions differ.

Everything here is data plus small pure functions. A fact is first turned into a *clause*
(one of many phrasings: the pack's own `phrases` and generic ones for its kind), clauses
are then joined with connectives into sentences, and sentences into ordered paragraphs.
Every choice is a stable hash of (page URL, fact, slot), so the same world always gives
the same bytes while two pages about similar facts rarely read alike.

The phrase banks are keyed by language; only English ("en") exists today. A new language
adds a bank with the same keys; the writer never spells words itself.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from .text import MONTHS, pick

# --------------------------------------------------------------------------- phrase banks

BANKS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        # A non-date attribute: {label} is lower-case, {value} formatted, {subject} a reference.
        "attr": (
            "the {label} of {subject} is {value}",
            "{subject} has a {label} of {value}",
            "{subject} is listed with a {label} of {value}",
            "records give the {label} of {subject} as {value}",
            "{value} is the {label} given for {subject}",
            "{subject} is recorded with a {label} of {value}",
            "for {subject}, the {label} stands at {value}",
            "{subject}'s {label} is {value}",
        ),
        # A to-one link without dates.
        "link": (
            "{subject}'s {label} is {object}",
            "{object} is listed as the {label} of {subject}",
            "the {label} of {subject} is {object}",
        ),
        # A dated link (tenure or event); {when} is a span phrase ("from 2001 to 2005").
        "dated_link": (
            "{when_cap}, {subject} was linked to {object} ({label})",
            "{object} is on record under {subject}'s {label}, {when}",
            "{subject} and {object} appear together under {label} {when}",
        ),
        "event_link": (
            "{subject}: {label}, {object}, {when}",
            "{when_cap}, {subject} gained {object} ({label})",
        ),
        # Spans: {a} start, {b} end.
        "span_closed": ("from {a} to {b}", "between {a} and {b}", "({a}–{b})", "from {a} until {b}"),
        "span_open": ("since {a}", "from {a} to the present", "from {a} until the present day"),
        "span_open_news": ("as of {a}", "from {a}", "starting {a}"),
        "span_event": ("in {a}", "({a})"),
        # Joining two clauses into one sentence (the second clause refers back to the subject).
        "join2": (
            "{A}, and {B}.",
            "{A}; {B}.",
            "{A}, while {B}.",
            "{A}, and in addition {B}.",
            "{A}; moreover, {B}.",
            "{A}; {B} as well.",
            "{A}, and {B} too.",
            "{A}, and also {B}.",
            "{A} — {B}.",
            "{A}, and beyond that {B}.",
        ),
        "join3": (
            "{A}, {B}, and {C}.",
            "{A}; {B}; and {C}.",
            "{A}; in addition, {B}, and {C}.",
            "{A}, while {B}; furthermore, {C}.",
            "{A}, {B}; and {C}.",
        ),
        # Narrative connectives for a history paragraph, by the gap to the previous event.
        "then_same_year": ("Later that year, ", "The same year, ", "In the same year, "),
        "then_gap": ("{n} years later, ", "After {n} years, ", "{n} years on, "),
        "then_far": ("In {year}, ", "By {year}, ", "Then, in {year}, ", "Later, in {year}, "),
        "first": ("In {year}, ", "The record begins in {year}: ", "Early on, in {year}, "),
        # References to the subject after its first mention.
        "ref_thing": ("it", "the {noun}", "the {noun}"),
        "ref_being": ("the {noun}",),
        # Quotes in news items: information-free voice attributed to a person of the world.
        # Quotes in news items: attributed voice, composed from an opening, a body and an attribution.
        "quote_open": ("", "Honestly, ", "For us, ", "Today ", "In the end, ", "Above all, ", "Frankly, ", "Right now, "),
        "quote_body": (
            "this is an important moment for {subject}", "we have worked towards this for a long time",
            "it is good news for everyone involved", "we are looking forward to what comes next",
            "nobody expected it to happen this quickly", "it changes a great deal for {subject}",
            "I am proud of what has been achieved", "the people around {subject} deserve this",
            "this was the right decision at the right time", "there is still a lot of work ahead",
            "we listened to a lot of people before deciding", "it has been a remarkable journey so far",
            "the next months will show what this means", "we owe a great deal to those who came before",
            "it is a step we took with confidence",
        ),
        "quote_attr": ("said {speaker}", "{speaker} said", "{speaker} told reporters", "{speaker} said in a statement",
                       "according to {speaker}", "{speaker} added", "{speaker} commented", "{speaker} noted"),
        "spokesperson": ("a spokesperson for {subject}", "a representative of {subject}", "a source close to {subject}"),
        "background": ("Background", "Context", "About {subject}", "What we know about {subject}"),
        "history": ("History", "Background and history", "Chronology", "Development"),
        "overview": ("Overview", "Profile", "Key facts", "At a glance"),
        "related": ("Related places and organisations", "Connections", "In context", "Related entities"),
        "see_also": ("See also", "Related articles", "Related entries"),
        "timeline": ("Timeline", "Key dates", "Dates"),
        # First-person official-site voice: {subject} is "we"/"our company".
        "official_intro": ("Welcome to {subject}.", "This is the official site of {subject}.",
                           "Thank you for visiting {subject}.", "Find out who we are and what we do."),
        "official_attr": ("our {label} is {value}", "we report a {label} of {value}", "we are proud of our {label}: {value}"),
        "more_list": ("The full list of {count} is on [a separate page]({url}).",
                      "{shown} of {count} are listed here; see [the complete list]({url}).",
                      "All {count} are on [the full list]({url})."),
    },
}


def bank(lang: str = "en") -> dict[str, tuple[str, ...]]:
    return BANKS.get(lang, BANKS["en"])


# --------------------------------------------------------------------------- site styles

# A site's conventions: its date formats for prose and tables, whether it rounds big numbers in
# prose, and its voice. Picked per site by a stable hash of the site name within its kind.
DATE_STYLES = ("mdy", "dmy", "mdy_abbr", "dmy_abbr")


def format_date(d: dt.date, style: str) -> str:
    """A full date in one of the prose styles; 'iso' for tables only."""
    if style == "iso":
        return d.isoformat()
    m = MONTHS[d.month - 1]
    if style.endswith("_abbr"):
        m = m[:3]
    return f"{m} {d.day}, {d.year}" if style.startswith("mdy") else f"{d.day} {m} {d.year}"


def format_number(value: str, value_type: str, unit: str | None = None, rounded: bool = False) -> str:
    """'12,345'; with `rounded`, values of a million or more as '1.23 million' (3 significant digits,
    within the checker's 0.6 % tolerance)."""
    d = Decimal(value)
    if value_type == "float":
        d = d.normalize()
    if rounded and abs(d) >= 1_000_000:
        scale, word = (Decimal(1_000_000_000), "billion") if abs(d) >= 1_000_000_000 else (Decimal(1_000_000), "million")
        x = d / scale
        digits = 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0
        s = f"{x:.{digits}f}".rstrip("0").rstrip(".") + " " + word
    else:
        s = format(d, ",f")
    return f"{s} {unit}" if unit else s


def site_style(site: str, kind: str) -> dict:
    """Conventions of one site: date style for prose and tables, rounding, voice."""
    date = DATE_STYLES[pick("date|" + site, len(DATE_STYLES))]
    table_date = "iso" if pick("tdate|" + site, 3) == 0 else date
    return {"date": date, "table_date": table_date, "round": kind in ("news", "fan") and pick("round|" + site, 3) > 0}


# --------------------------------------------------------------------------- sentence helpers

_AN_RE = re.compile(r"\b([Aa]) (?=([A-Za-z]+))")
_AN_EXCEPT = ("uni", "eu", "one", "use", "usu", "uk", "ure")


def fix_articles(text: str) -> str:
    """'a appliance' -> 'an appliance' (not 'an university'); links and names are left alone."""

    def sub(m: re.Match) -> str:
        word = m.group(2).lower()
        if word[0] in "aeiou" and not word.startswith(_AN_EXCEPT):
            return m.group(1) + "n "
        if word.startswith(("hour", "honest", "honour", "heir")):
            return m.group(1) + "n "
        return m.group(0)

    return _AN_RE.sub(sub, text)


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def choose(options: tuple[str, ...], key: str) -> str:
    return options[pick(key, len(options))]


_LOWER_START = re.compile(r"^(It|Its|The|On|In|For|Records|As|From|Between|Since|Starting|After|Later|Then|Early|By|A|An|"
                          r"Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve)(?=[ ,:])")


def lower_start(clause: str) -> str:
    """A clause placed mid-sentence: a leading function word in lower case (names stay as they are)."""
    return _LOWER_START.sub(lambda m: m.group(1).lower(), clause)


def join_clauses(clauses: list[str], key: str, lang: str = "en") -> str:
    """One to three clauses as one or two sentences with connectives."""
    b = bank(lang)
    clauses = clauses[:1] + [lower_start(c) for c in clauses[1:]]
    if not clauses:
        return ""
    if len(clauses) == 1:
        return cap(clauses[0]) + "."
    if len(clauses) == 2:
        tpl = choose(b["join2"], key)
        return cap(tpl.format(A=clauses[0], B=clauses[1], B_cap=cap(clauses[1])))
    if len(clauses) > 3:  # longer runs: a sentence of three, then the rest
        return join_clauses(clauses[:3], key, lang) + " " + join_clauses(clauses[3:], key + "+", lang)
    tpl = choose(b["join3"], key)
    return cap(tpl.format(A=clauses[0], B=clauses[1], C=clauses[2], B_cap=cap(clauses[1])))


def group_clauses(clauses: list[str], key: str, lang: str = "en") -> list[str]:
    """Clauses in groups of one to three (sizes chosen per position), each group one sentence."""
    out, i = [], 0
    while i < len(clauses):
        n = 1 + pick(f"{key}|g{i}", 3)
        out.append(join_clauses(clauses[i:i + n], f"{key}|j{i}", lang))
        i += n
    return out


def number_words(n: int) -> str:
    words = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
    return words[n] if 0 <= n < len(words) else ""


_SKEL_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SKEL_DATE = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}|(?:" + "|".join(MONTHS) + "|" + "|".join(m[:3] for m in MONTHS)
                        + r")\.? \d{1,2},? \d{4}|\d{1,2} (?:" + "|".join(MONTHS) + "|" + "|".join(m[:3] for m in MONTHS)
                        + r")\.? \d{4})\b")
_SKEL_NUM = re.compile(r"\d[\d,.]*")
_SENT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?]”))\s+(?=[A-Z“\[*])")


def prose_sentences(markdown: str) -> list[str]:
    """The prose sentences of a page: paragraphs only (no headings, table rows, list items, bylines)."""
    out = []
    for para in markdown.split("\n\n"):
        para = para.strip()
        if not para or para[0] in "#|-*[" or para.startswith(("---", "Read more", "More about")):
            continue
        out.extend(s for s in _SENT.split(para.replace("\n", " ")) if s)
    return out


_SKEL_CAPS = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|van|von|the|and|&)?\s*[A-Z][\w'’.-]*)*")


def skeleton(sentence: str, names: re.Pattern | None) -> str:
    """A sentence with links, names, dates and numbers replaced by placeholders. Strict: any run
    of capitalised words counts as a name (so sentence-initial words fold too), which can only
    undercount distinct skeletons."""
    s = _SKEL_LINK.sub("<e>", sentence)
    if names is not None:
        s = names.sub("<e>", s)
    s = _SKEL_DATE.sub("<d>", s)
    s = _SKEL_CAPS.sub("<e>", s)
    s = _SKEL_DATE.sub("<d>", s)
    return _SKEL_NUM.sub("<n>", s)


def quote(b: dict, key: str, subject: str, speaker: str) -> str:
    body = choose(b["quote_open"], key + "|o") + choose(b["quote_body"], key + "|b").format(subject=subject)
    attr = choose(b["quote_attr"], key + "|a").format(speaker=speaker)
    return f"“{cap(body)},” {attr}."
