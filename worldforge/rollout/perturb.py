"""Seeded perturbations of the simulated web, as an agent meets them on the real one.

Whether a tool call is perturbed, and how, is a pure function of the perturbation seed,
the episode (task id and sample) and the call's index in the episode: replaying a call
gives the same text. Kinds (rates per kind and tool live in `stages.rollout.perturbations`):

- `search_error`: a timeout or a server error instead of results or a page;
- `empty_results`: a search that finds nothing;
- `rate_limit`: HTTP 429 with a retry-after hint;
- `truncated_page`: the page breaks off part-way, mid-sentence or mid-row, with no note: a
  reader notices from the text (a sentence without its end, a table row without its last cell);
- `stale_page`: an article as a stale cache serves it: the entity as it stood on an earlier date
  (links and dates of that day from the world's history; nothing from after it), with no banner:
  its "last edited" line gives that date, where a live article's is weeks old;
- `conflicting_page`: an older duplicate of a result among the search results, on a site that
  also holds original pages and shaped like its pages (a second listing on the entity's profile
  site, or a piece on a news site), with the same title and a few plausible slips (a rounded or
  stale figure, a year one off); opening its URL gives that copy, every time.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re

from ..language import get as get_language
from ..language import languages
from ..plumbing import URL_PATTERN, stable_hash
from ..web import bank_forms, word
from ..world import PERTURBATION_TOOLS

_U64 = float(2**64)


def unit(*names: object) -> float:
    """A uniform draw in [0, 1) fixed by names."""
    return stable_hash(*names) / _U64


def draw(seed: int, episode: str, call: int, tool: str, rates: dict[str, dict[str, float]]) -> str | None:
    """The perturbation of one tool call, or None."""
    u = unit(seed, "perturb", episode, call)
    acc = 0.0
    for kind in PERTURBATION_TOOLS:  # fixed order, so a rate change moves only its own band
        acc += rates.get(kind, {}).get(tool, 0.0)
        if u < acc:
            return kind
    return None


def error_text(kind: str, tool: str, key: str, arguments: dict) -> str:
    """The error an agent reads for a failed call."""
    v = stable_hash(key, kind) % 3
    if kind == "rate_limit":
        return (f"Error 429: Too Many Requests. The {tool} rate limit was exceeded; "
                f"retry after {(2, 5, 10)[v]} seconds.")
    if tool == "web_extractor":
        url = arguments.get("url", "")
        return (f"Error: timed out after 30 seconds while fetching {url}. Please try again.",
                f"Error 502: Bad Gateway while fetching {url}. The server returned an invalid response.",
                f"Error 503: Service Unavailable while fetching {url}. Please try again later.")[v]
    return ("Error: the search request timed out after 30 seconds. Please try again.",
            "Error 503: Service Unavailable. The search backend is temporarily unavailable; please retry.",
            "Error 500: Internal Server Error while running the search. Please try again.")[v]


def _is_han(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff"


_PAGES_NAV = tuple(a.rstrip(":： ") for a, _ in bank_forms("pages_nav", "links"))  # a list's page links: 'Pages', '页码'


def _cuttable(line: str) -> bool:
    """A line a cut leaves visibly unfinished: prose (which always ends in a full stop, a closing
    quote or bracket) or a table row (which always ends in '|'); prose may open in bold (a news
    item's dateline, "**Context.** ...")."""
    s = line.lstrip()
    return bool(s) and (s[0] == "|" or s.startswith("**") or (s[0] not in "-#*>" and not s.startswith(_PAGES_NAV)))


def _open_link(head: str) -> bool:
    return head.count("[") > head.count("]")


_CUT_AT = re.compile(r"(?<=[^\W\d_]) |(?<=[\u3400-\u9fff])(?=[\u3400-\u9fff])")


def _cuts(line: str) -> list[int]:
    """Where a line can stop visibly unfinished: after a word (between two characters in
    Chinese), in prose or a table row anywhere, in a list item only inside its link text."""
    if _cuttable(line):
        return [m.start() for m in _CUT_AT.finditer(line) if m.start() > 0]
    if line.startswith("- "):
        return [m.start() for m in _CUT_AT.finditer(line) if m.start() > 0 and _open_link(line[: m.start()])]
    return []


def truncate(markdown: str, key: str) -> str | None:
    """The page as far as it loaded: cut 25-60% of the way in, after a word (between two
    characters in Chinese) inside a sentence, a table row or a list item's link text. No note
    says so: the text stops. None when the page has no such place to stop."""
    target = int(len(markdown) * (0.25 + 0.35 * unit(key, "cut")))
    lines = markdown.split("\n")
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    here = max(0, bisect.bisect_right(starts, target) - 1)
    best = None
    for step in range(len(lines)):  # the line the target falls in, then outwards
        for i in {here - step, here + step}:
            if 0 <= i < len(lines):
                for c in _cuts(lines[i]):
                    at = starts[i] + c
                    if best is None or abs(at - target) < abs(best - target):
                        best = at
        if best is not None:  # done once no line further out can hold a nearer place
            lo, hi = here - step - 1, here + step + 1
            nearest = min(target - (starts[lo] + len(lines[lo])) if lo >= 0 else len(markdown),
                          starts[hi] - target if hi < len(lines) else len(markdown))
            if abs(best - target) <= nearest:
                break
    return None if best is None else markdown[:best]


def looks_cut(markdown: str) -> bool:
    """Whether a page stops part-way: its last line is prose without its final stop, a table
    row without its closing '|', or a line with a link left open (every complete page ends each
    kind of line)."""
    last = markdown.rstrip().rsplit("\n", 1)[-1].strip()
    if not last:
        return False
    if _open_link(last):
        return True
    if not _cuttable(last):
        return False
    return not last.endswith("|") if last.startswith("|") else last[-1] not in ".!?。！？)）”\"」』…"


# Numbers that may be altered: not inside link targets, ISO dates, day-month-year dates or
# 4-digit years; a run of digits with optional thousands separators and decimals.
# Month names as each language writes them, whole and short ('January', 'Jan', 'enero', 'ene'),
# and the words between a day and its month ('3 June', '3 de junio') in any language's styles.
_MONTHS = "|".join(dict.fromkeys(w for c in languages() for m in get_language(c).months if get_language(c).cased
                                 for w in (m, m[:3])))
_DAY_MONTH = "|".join(dict.fromkeys(re.escape(st[st.index("{day}") + 5:st.index("{mon")]) for c in languages()
                                    for st in get_language(c).date_styles.values() if "{mon" in st and st.find("{day}") < st.find("{mon")))
# A day next to a month name is part of a date, with or without its year (a snippet may cut the year off).
# Chinese dates ('2025年6月30日', '6月30日') and years ('2001年') are protected the same way; CJK
# characters count as word boundaries, so '35万' or '175厘米' has an alterable number.
_CJK = "\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"  # CJK characters and punctuation
_W = rf"[^\W{_CJK}]"
_PROTECT = re.compile(rf"\]\([^)]*\)|{URL_PATTERN}|\d{{4}}-\d{{2}}-\d{{2}}|"
                      rf"\b\d{{1,2}}(?:{_DAY_MONTH})(?:{_MONTHS})\.?(?:(?:{_DAY_MONTH})\d{{4}})?\b|\b(?:{_MONTHS})\.? \d{{1,2}}(?:, \d{{4}})?\b|\+\d+|"
                      r"(?:\d{4}年)?\d{1,2}月(?:\d{1,2}日)?|\d{4}年")
_NUMBER = re.compile(rf"(?<![.]|{_W})\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?!{_W})|(?<![.,]|{_W})\d+(?:\.\d+)?(?![,]|{_W})")


def _round2(value: float) -> float:
    """Two significant figures: 35,762 -> 36,000; 651 -> 650."""
    digits = len(str(int(value))) - 2
    return round(value / 10**digits) * 10**digits


def _alter_number(text: str, key: str, force: bool = False) -> str:
    """A plausible slip for one figure: rounded (a third of figures), a few percent off, as a
    stale or mistyped figure (about half), or left as it is."""
    plain = text.replace(",", "")
    if "." not in plain and len(plain) == 4 and 1000 <= int(plain) <= 2100:
        return text  # a year
    value = float(plain)
    if value < 10:
        return text
    u = unit(key, "number", text)
    decimals = len(plain.split(".", 1)[1]) if "." in plain else 0
    if u < 0.35 and not force:
        new = _round2(value)
        decimals = 0
    elif u < 0.8 or force:
        step = 0.02 + 0.07 * unit(key, "step", text)
        new = value * (1 + step if unit(key, "sign", text) < 0.5 else 1 - step)
    else:
        return text
    out = f"{new:,.{decimals}f}" if "," in text else f"{new:.{decimals}f}"
    if out == text and not force:
        return _alter_number(text, key, True)
    return out


_FULL_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")


def _alter_date(text: str, key: str) -> str:
    """A full date with its year one off, for about a quarter of dates."""
    if not _FULL_YEAR.search(text) or not re.search(r"\d{1,2}\D+\d{4}|\d{4}\D+\d{1,2}", text):
        return text  # a bare year or a day without one
    if unit(key, "date", text) >= 0.25:
        return text
    delta = 1 if unit(key, "year", text) < 0.5 else -1
    return _FULL_YEAR.sub(lambda m: str(int(m.group(1)) + delta), text, count=1)


def _alter(text: str, key: str, force: bool) -> str:
    out, last = [], 0
    num = (lambda n: _alter_number(n.group(0), key, True)) if force else (lambda n: _alter_number(n.group(0), key))
    for m in _PROTECT.finditer(text):
        out.append(_NUMBER.sub(num, text[last:m.start()]))
        span = m.group(0)
        out.append(span if span.startswith(("](", "http")) else _alter_date(span, key))
        last = m.end()
    out.append(_NUMBER.sub(num, text[last:]))
    return "".join(out)


def alter_copy(text: str, key: str) -> str:
    """A careless copy's text: each figure or date written the same way everywhere in it gets
    the same slip (so a snippet agrees with its page); at least one value differs from `text`
    when it has any figure at all."""
    out = _alter(text, key, False)
    return out if out != text else _alter(text, key, True)


def edited(markdown: str, when: dt.date, language: str = "en") -> str:
    """An article as its site serves it: the text, then the line saying when it was last edited."""
    return f"{markdown.rstrip()}\n\n{word(language, 'edited', date=get_language(language).date(when))}\n"


def last_edit(seed: int, url: str, as_of: dt.date) -> dt.date:
    """When a live article was last edited: within the three months before the world's date."""
    return as_of - dt.timedelta(days=stable_hash(seed, "edited", url) % 90)


def copy_id(seed: int, original: str) -> str:
    """The six hex digits a duplicate listing of `original` carries in its address."""
    return f"{stable_hash(seed, 'copy-id', original) & 0xFFFFFF:06x}"
