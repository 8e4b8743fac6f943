"""The surface grammar: how facts become sentences, sentences become paragraphs, and how
each site's voice and number/date conventions differ.

Everything here is data plus small pure functions. A fact is first turned into a *clause*
(one of many phrasings: the pack's own `phrases` and generic ones for its kind), clauses
are then joined with connectives into sentences, and sentences into ordered paragraphs.
Every choice is a stable hash of (page URL, fact, slot), so the same world always gives
the same bytes while two pages about similar facts rarely read alike.

The phrase banks are data, one file per language (`web/banks/<code>.yaml`); a language's
dates, number words and scales and its punctuation come from the language layer
(`worldforge/language/<code>.yaml`). A new language adds both files. The writer never spells
words itself.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path
from zlib import crc32

import yaml

from ..language import BASE, date_regex, languages
from ..language import get as get_language
from .text import pick

# --------------------------------------------------------------------------- phrase banks

def phrase_label(label: str) -> str | None:
    """How a pack's own (English) link label reads: 'verb' ("Based in"), 'role' ("Sequel to"),
    None for a noun (`Language.label_shape` of the base language)."""
    return get_language(BASE).label_shape(label)


# The page grammar per language, as data: `web/banks/<code>.yaml` (a key's options, drawn by a
# stable hash). A language is added as a file with every key of the others, or names a key it
# does not use under `unused` (English plural agreement, in Chinese).
BANK_DIR = Path(__file__).resolve().parent / "banks"
BANKS: dict[str, dict[str, tuple[str, ...]]] = {
    p.stem: {k: tuple(v) for k, v in yaml.safe_load(p.read_text(encoding="utf-8")).items() if k != "unused"}
    for p in sorted(BANK_DIR.glob("*.yaml"))
}

def bank(lang: str = BASE) -> dict[str, tuple[str, ...]]:
    return BANKS.get(lang, BANKS[BASE])


def bank_forms(key: str, slot: str) -> list[tuple[str, str]]:
    """(before, after) the slot in every language's page-bank options of `key` ('since {a}':
    ('since ', ''); '{a}年起': ('', '年起')): what the reader looks for is what the writer writes."""
    out = []
    for b in BANKS.values():
        for o in b.get(key) or ():
            if "{" + slot + "}" in o:
                before, _, after = o.partition("{" + slot + "}")
                out.append((before, after))
    return list(dict.fromkeys(out))


def word(lang: str, key: str, **fields) -> str:
    """The one form of a small word or frame of the bank ('since {a}', '至今')."""
    w = bank(lang)[key][0]
    return w.format(**fields) if fields else w


# --------------------------------------------------------------------------- site styles

# A site's conventions: its date formats for prose and tables, whether it rounds big numbers in
# prose, and its voice. Picked per site by a stable hash of the site name within its kind.
DATE_STYLES = tuple(get_language(BASE).date_styles)  # ("mdy", "dmy", "mdy_abbr", "dmy_abbr")
# every language's styles by name (a site's style names its language's format)
_STYLE_OF = {style: get_language(code) for code in languages() for style in get_language(code).date_styles}


def format_date(d: dt.date, style: str) -> str:
    """A full date in one of the prose styles ('June 30, 2025', '2025年6月30日'); 'iso' for tables only."""
    if style == "iso":
        return d.isoformat()
    return _STYLE_OF[style].date(d, style)


def format_number(value: str, value_type: str, unit: str | None = None, rounded: bool = False, lang: str = BASE,
                  prose: bool = False) -> str:
    """'12,345'; with `rounded`, values of a million or more as '1.23 million' (3 significant digits,
    within the checker's 0.6 % tolerance); in Chinese, ten thousand or more as '2.81万', '1.2亿'.
    In `prose`, a unit with a scale in it is written as the language writes amounts
    (`Language.scaled_units`: Chinese '185.6百万美元' reads '1.856亿美元', '0.9百万美元' '90万美元')."""
    language = get_language(lang)
    d = Decimal(value)
    if value_type == "float":
        d = d.normalize()
    s = None
    if prose and unit in language.scaled_units:
        factor, unit = language.scaled_units[unit]
        d = (d * factor).normalize()
        for scale, w in language.scales:  # exact (every digit the unit's figure has), by the largest scale it reaches
            if abs(d) >= scale:
                s = _trim(format((d / Decimal(scale)).normalize(), "f")) + w
                break
        rounded = False
    if rounded:  # by the language's scales, the largest first: '1.23 million', '2.81万'
        for scale, w in language.scales:
            if abs(d) >= scale:
                x = d / Decimal(scale)
                digits = 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0
                s = _trim(f"{x:.{digits}f}") + w
                break
    if s is None:
        s = format(d, ",f")
    elif unit and language.scale_link:  # a scale before its unit: '1.38 millones de habitantes'
        unit = f"{language.scale_link}{language.space}{unit}"
    if unit and d == 1 and unit == unit.lower():  # '1 publication', not '1 publications' (a unit like 'USD' is kept)
        unit = language.singular(unit) or unit
    return language.with_unit(s, unit)  # '37 km', '17,401美元'


def is_one(value: str) -> bool:
    """Whether a number's text is one ('1', '1.0'): a count of one takes the singular."""
    try:
        return Decimal(value) == 1
    except ArithmeticError:
        return False


def _trim(s: str) -> str:
    """'1.20' -> '1.2', '3.00' -> '3'; an integer keeps its zeros ('350')."""
    return s.rstrip("0").rstrip(".") if "." in s else s


def site_style(site: str, kind: str, lang: str = BASE) -> dict:
    """Conventions of one site: date style for prose and tables, rounding, voice."""
    styles = tuple(get_language(lang).date_styles)
    date = styles[pick("date|" + site, len(styles))]
    table_date = "iso" if pick("tdate|" + site, 3) == 0 else date
    # Papers round big numbers ('1.94 million'); a profile states its figures exactly, as it may be
    # the only page that gives one (an article leaves some to it).
    return {"date": date, "table_date": table_date, "round": kind == "news" and pick("round|" + site, 3) > 0}


# --------------------------------------------------------------------------- sentence helpers

# Candidates only: 'a ' or 'A ' before a vowel or an h ('a appliance', 'a hour'). Two
# patterns that start with a literal scan a page twice as fast as one with a character class;
# `fix_articles` then drops those inside a word ('Maria eats') and checks the whole next word.
_AN_LOWER = re.compile(r"a (?=[AEIOUaeiouHh])")
_AN_UPPER = re.compile(r"A (?=[AEIOUaeiouHh])")
_AN_EXCEPT = ("uni", "eu", "one", "use", "usu", "uk", "ure")
_AN_SILENT_H = ("hour", "honest", "honour", "heir")


def fix_articles(text: str) -> str:
    """'a appliance' -> 'an appliance' (not 'an university'); links and names are left alone."""
    hits = [m.start() for m in _AN_LOWER.finditer(text)]
    if "A " in text:
        hits += [m.start() for m in _AN_UPPER.finditer(text)]
        hits.sort()
    out, last, n = [], 0, len(text)
    for i in hits:
        if i and (text[i - 1].isalnum() or text[i - 1] == "_"):  # inside a word (what regex \w is)
            continue
        k = i + 2
        while k < n and ("a" <= text[k] <= "z" or "A" <= text[k] <= "Z"):
            k += 1
        word = text[i + 2:k].lower()
        if (word[0] in "aeiou" and not word.startswith(_AN_EXCEPT)) or word.startswith(_AN_SILENT_H):
            out += (text[last:i + 1], "n")
            last = i + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def choose(options: tuple[str, ...], key: str) -> str:
    n = len(options)
    return options[crc32(key.encode()) % n] if n > 1 else options[0]  # text.pick, inlined (hot)


# Keys as running checksums: the crc32 of `key + suffix` is `crc32(suffix, crc32(key))`, so a
# writer hashes a page's URL once and each slot's suffix after it, instead of every full key.
def choose_h(options: tuple[str, ...], h: int) -> str:
    """`choose` with the key given as its checksum `h` (the same option as `choose(options, key)`)."""
    return options[h % len(options)]


# Function words that open a clause; placed mid-sentence they go to lower case.
_FIRST_WORD = re.compile(r"[^ ,:]*(?=[ ,:])")  # a clause's first word, followed by a space, comma or colon


def lower_start(clause: str, lang: str = BASE) -> str:
    """A clause placed mid-sentence: a leading function word in lower case (names stay as they
    are), by the language's `grammar.lower_first`."""
    m = _FIRST_WORD.match(clause)
    if m is not None and m.group() in get_language(lang).grammar.lower_first:
        return m.group().lower() + clause[m.end():]
    return clause


def join_clauses(clauses: list[str], key: str, lang: str = BASE) -> str:
    """One to three clauses as one or two sentences with connectives."""
    return join_clauses_h(clauses, crc32(key.encode()), lang)


def join_clauses_h(clauses: list[str], h: int, lang: str = BASE) -> str:
    """`join_clauses` with the key given as its checksum (`choose_h`)."""
    language = get_language(lang)
    if language.cased:  # a clause inside a sentence starts with a small letter ("it was", not "It was")
        clauses = clauses[:1] + [lower_start(c, lang) for c in clauses[1:]]
    n = len(clauses)
    if n == 0:
        return ""
    if n == 1:
        return cap(clauses[0]) + language.stop
    if n == 2:
        tpl = choose_h(bank(lang)["join2"], h)
        return cap(tpl.format(A=clauses[0], B=clauses[1], B_cap=cap(clauses[1]) if "{B_cap}" in tpl else ""))
    if n > 3:  # longer runs: a sentence of three, then the rest
        return (join_clauses_h(clauses[:3], h, lang) + language.space
                + join_clauses_h(clauses[3:], crc32(b"+", h), lang))
    tpl = choose_h(bank(lang)["join3"], h)
    return cap(tpl.format(A=clauses[0], B=clauses[1], C=clauses[2], B_cap=cap(clauses[1]) if "{B_cap}" in tpl else "",
                          C_cap=cap(clauses[2]) if "{C_cap}" in tpl else ""))


def group_clauses(clauses: list[str], key: str, lang: str = BASE) -> list[str]:
    """Clauses in groups of one to three (sizes chosen per position), each group one sentence."""
    out, i = [], 0
    while i < len(clauses):
        n = 1 + pick(f"{key}|g{i}", 3)
        out.append(join_clauses(clauses[i:i + n], f"{key}|j{i}", lang))
        i += n
    return out


def number_words(n: int, lang: str = BASE) -> str:
    """A number below 100 in words ('twenty-six', '二十六'; a count of two is '两'), else ''."""
    return get_language(lang).count_words(n)


SKEL_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
SKEL_DATE = date_regex(portable=True)  # any language's dates, and ISO (polars runs it too: web/report.py)
SKEL_NUM = re.compile(r"\d[\d,.]*")
_SENT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?]”))\s+(?=[A-Z“\[*])|(?<=[。！？])(?!”)|(?<=[。！？]”)")


_NUMBERED = re.compile(r"\d+\. ")


# paragraphs that are a page's furniture, not prose: every language's links out and page lists
_FURNITURE = ("---", *dict.fromkeys(o.split("{")[0] for b in BANKS.values() for k in ("read_more", "more_about", "pages_nav")
                                    for o in b[k]))


def prose_sentences(markdown: str) -> list[str]:
    """The prose sentences of a page: paragraphs only (no headings, table rows, list items, numbered
    lists, bylines)."""
    out = []
    for para in markdown.split("\n\n"):
        para = para.strip()
        if (not para or para[0] in "#|-*[" or para.startswith(_FURNITURE)
                or _NUMBERED.match(para)):  # a numbered list (references)
            continue
        out.extend(s for s in _SENT.split(para.replace("\n", " ")) if s)
    return out


SKEL_CAPS = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|van|von|the|and|&)?\s*[A-Z][\w'’.-]*)*")


def skeleton(sentence: str, names: re.Pattern | None) -> str:
    """A sentence with links, names, dates and numbers replaced by placeholders. Strict: any run
    of capitalised words counts as a name (so sentence-initial words fold too), which can only
    undercount distinct skeletons."""
    s = SKEL_LINK.sub("<e>", sentence)
    if names is not None:
        s = names.sub("<e>", s)
    s = SKEL_DATE.sub("<d>", s)
    s = SKEL_CAPS.sub("<e>", s)
    s = SKEL_DATE.sub("<d>", s)
    return SKEL_NUM.sub("<n>", s)


def quote(b: dict, key: str, subject: str, speaker: str, lang: str = BASE, what: str = "") -> str:
    """A news quote: an opening, a core about the event (`what`: its label, "acquisition"), a
    closing, attributed to `speaker`."""
    bodies = b["quote_body"] if what else tuple(x for x in b["quote_body"] if "{what}" not in x)
    body = (choose(b["quote_open"], key + "|o") + choose(bodies, key + "|b").format(subject=subject, what=what)
            + (choose(b["quote_close"], key + "|c") if pick(key + "|cl", 2) == 0 else ""))
    forms = b["quote_form"]  # “…,” said X. / X told reporters: “…” / X说：“…。”
    form = forms[pick(key + "|form", len(forms))] if len(forms) > 1 else forms[0]
    attr = choose(b["quote_attr"], key + "|a").format(speaker=speaker) if "{attr}" in form else ""
    lead = cap(choose(b["quote_lead"], key + "|a").format(speaker=speaker)) if "{lead}" in form else ""
    return form.format(body=body, Body=cap(body), attr=attr, lead=lead)
