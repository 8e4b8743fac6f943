"""Seeded perturbations of the simulated web, as an agent meets them on the real one.

Whether a tool call is perturbed, and how, is a pure function of the perturbation seed,
the episode (task id and sample) and the call's index in the episode: replaying a call
gives the same text. Kinds (rates per kind and tool live in `stages.rollout.perturbations`):

- `search_error`: a timeout or a server error instead of results or a page;
- `empty_results`: a search that finds nothing;
- `rate_limit`: HTTP 429 with a retry-after hint;
- `truncated_page`: the page breaks off part-way, with a connection note;
- `stale_page`: an article's archived capture: the entity as it stood on an earlier date (links
  and dates of that day from the world's history; nothing from after it);
- `conflicting_page`: a copy site among the search results (credible-looking, named per world,
  with a source type and an older update date) whose numbers contradict the page it copied;
  opening its URL gives that contradicting copy, every time.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from urllib.parse import urlsplit

from ..plumbing import stable_hash
from ..world.options import PERTURBATION_TOOLS

# Sites that republish other sites' pages with their own (wrong) figures: credible-looking and
# different in every world (named from the seed), each with a source type an agent can weigh.
_COPY_FORMS = (("{R} Reference", "www.{r}reference.com", "reference aggregator"),
               ("{R} Facts", "www.{r}facts.org", "fact aggregator"),
               ("{R} Data", "{r}data.net", "data aggregator"),
               ("{R} Guide", "www.{r}guide.com", "online guide"),
               ("The {R} Insider", "www.{r}insider.com", "news digest"),
               ("{R} Review", "{r}review.net", "review site"),
               ("{R} Hub", "www.{r}hub.org", "community wiki"),
               ("{R} Index", "www.{r}index.info", "directory mirror"))
_SYLL = ("ka lo ri ven dor mar tel sa ni bra tor el an is ul ve mo ra li den gal thu quin zar bel cor dra fen hal "
         "jor kel lun mer nor pel ros sil tam val wyn yor zen ber cas del fa gor hes ir kos lar mi nes or pra sel").split()
ARCHIVE_NOTE = "> Archived copy captured on {date}. This snapshot may be out of date; the live page may differ."
TRUNCATION_NOTE = "[Connection reset: the page was only partially loaded.]"
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


def truncate(markdown: str, key: str) -> str:
    """The page cut at a line boundary 25-60% of the way in."""
    cut = int(len(markdown) * (0.25 + 0.35 * unit(key, "cut")))
    nl = markdown.rfind("\n", 0, cut)
    head = markdown[: nl if nl > 0 else cut].rstrip()
    return f"{head}\n\n{TRUNCATION_NOTE}"


# Numbers that may be altered: not inside link targets, ISO dates, day-month-year dates or
# 4-digit years; a run of digits with optional thousands separators and decimals.
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec")
# A day next to a month name is part of a date, with or without its year (a snippet may cut the year off).
# Chinese dates ('2025年6月30日', '6月30日') and years ('2001年') are protected the same way; CJK
# characters count as word boundaries, so '35万' or '175厘米' has an alterable number.
_CJK = "\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"  # CJK characters and punctuation
_W = rf"[^\W{_CJK}]"
_PROTECT = re.compile(rf"\]\([^)]*\)|https?://[^\s{_CJK}\u2000-\u206f]+|\d{{4}}-\d{{2}}-\d{{2}}|"
                      rf"\b\d{{1,2}} (?:{_MONTHS})\.?(?: \d{{4}})?\b|\b(?:{_MONTHS})\.? \d{{1,2}}(?:, \d{{4}})?\b|\+\d+|"
                      r"(?:\d{4}年)?\d{1,2}月(?:\d{1,2}日)?|\d{4}年")
_NUMBER = re.compile(rf"(?<![.]|{_W})\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?!{_W})|(?<![.,]|{_W})\d+(?:\.\d+)?(?![,]|{_W})")


def _alter_number(text: str, key: str, low: float, high: float) -> str:
    plain = text.replace(",", "")
    if "." not in plain and len(plain) == 4 and 1000 <= int(plain) <= 2100:
        return text  # a year
    value = float(plain)
    if value < 10:
        return text
    factor = low + (high - low) * unit(key, "number", text)
    new = value * factor
    decimals = len(plain.split(".", 1)[1]) if "." in plain else 0
    out = f"{new:,.{decimals}f}" if "," in text else f"{new:.{decimals}f}"
    return text if out == text else out


def alter_numbers(text: str, key: str, low: float, high: float) -> str:
    """Every alterable number scaled by a factor in [low, high) fixed by (key, number)."""
    out, last = [], 0
    for m in _PROTECT.finditer(text):
        out.append(_NUMBER.sub(lambda n: _alter_number(n.group(0), key, low, high), text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_NUMBER.sub(lambda n: _alter_number(n.group(0), key, low, high), text[last:]))
    return "".join(out)


def stale(markdown: str, captured: dt.date) -> str:
    """An archived copy: the page as it read on its capture date (the entity's earlier state,
    rendered from the world's history), under an archive note."""
    return f"{ARCHIVE_NOTE.format(date=captured.strftime('%B %-d, %Y'))}\n\n{markdown}"


@lru_cache(maxsize=64)
def copy_sites(seed: int) -> tuple[tuple[str, str, str], ...]:
    """The world's copy sites: (name, domain, source type), named from the seed."""
    out = []
    for i, (name, domain, kind) in enumerate(_COPY_FORMS):
        h = stable_hash(seed, "copy-site", i)
        root = _SYLL[h % len(_SYLL)] + _SYLL[(h >> 16) % len(_SYLL)]
        out.append((name.replace("{R}", root.title()), domain.replace("{r}", root), kind))
    return tuple(out)


def conflicting_url(original: str, seed: int) -> str:
    """Where a copy site republishes `original`: its own domain, the original's address as the path."""
    p = urlsplit(original)
    sites = copy_sites(seed)
    site = sites[stable_hash(seed, "site", original) % len(sites)][1]
    return f"https://{site}/{p.netloc}{p.path}" + (f"?{p.query}" if p.query else "")  # a list's page N stays page N


def copy_site(url: str, seed: int) -> tuple[str, str, str] | None:
    netloc = urlsplit(url).netloc
    return next((s for s in copy_sites(seed) if s[1] == netloc), None)


def original_of(url: str, seed: int) -> str | None:
    """The page a copy was made from, or None when `url` is no such copy."""
    if copy_site(url, seed) is None:
        return None
    u = urlsplit(url)
    path = u.path.lstrip("/")
    return "https://" + path + (f"?{u.query}" if u.query else "") if "/" in path else None


def conflicting(text: str, original: str, seed: int) -> str:
    """A low-quality copy's text (page or snippet): the original's numbers, contradicted."""
    return alter_numbers(text, f"conflict|{seed}|{original}", 1.15, 1.6)
