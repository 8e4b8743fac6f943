"""How varied a rendered web reads: sentence skeletons and lengths per page kind.

A sentence's *skeleton* is the sentence with links, entity names, dates and numbers replaced
by placeholders; a web whose pages share a handful of skeletons reads as machine text. The
measures (also stored in render.json):
- distinct skeletons among all prose sentences;
- the share of sentences of the most common skeleton;
- the share of sentences whose skeleton appears on 10 or more pages;
- mean (and quartile) words per page kind.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

from .grammar import prose_sentences, skeleton

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d[\d,.]*")
_LINK_URL = re.compile(r"\]\([^)]*\)")


def words(markdown: str) -> int:
    return len(_WORD.findall(_LINK_URL.sub("]", markdown)))


MAX_PAGES = 20_000


def web_report(pages_db: str | Path, names: dict[str, str] | None = None, max_pages: int = MAX_PAGES) -> dict:
    """The variety and length measures of a rendered web (pages.duckdb): every page up to
    `max_pages`, else a fixed sample of that many pages (by URL hash)."""
    import duckdb

    con = duckdb.connect(str(pages_db), read_only=True)
    try:
        names = names or {}
        total = con.execute("SELECT count(*) FROM pages").fetchone()[0]
        rows = con.execute("SELECT url, kind, site, entity_ids, markdown FROM pages ORDER BY hash(url), url LIMIT ?",
                           [max_pages]).fetchall()
    finally:
        con.close()
    skel_count: Counter = Counter()
    skel_pages: dict[str, set] = defaultdict(set)
    kind_words: dict[str, list[int]] = defaultdict(list)
    n_sent = 0
    for url, kind, site, ids, md in rows:
        kind_words[kind].append(words(md))
        page_names = sorted({names[i] for i in ids if i in names} | {site}, key=len, reverse=True)
        pat = re.compile("|".join(re.escape(n) for n in page_names if n)) if page_names else None
        for s in prose_sentences(md):
            k = skeleton(s, pat)
            skel_count[k] += 1
            skel_pages[k].add(url)
            n_sent += 1
    common = {k for k, p in skel_pages.items() if len(p) >= 10}
    top = skel_count.most_common(1)[0] if skel_count else ("", 0)
    per_kind = {}
    for k, ws in sorted(kind_words.items()):
        ws = sorted(ws)
        per_kind[k] = {"pages": len(ws), "mean_words": round(sum(ws) / len(ws), 1), "median_words": ws[len(ws) // 2],
                       "p10_words": ws[len(ws) // 10], "p90_words": ws[(9 * len(ws)) // 10]}
    return {
        "pages": total,
        "pages_measured": len(rows),
        "sentences": n_sent,
        "skeletons": len(skel_count),
        "top_skeleton_share": round(top[1] / n_sent, 4) if n_sent else 0.0,
        "top_skeleton": top[0],
        "share_on_10_plus_pages": round(sum(skel_count[k] for k in common) / n_sent, 4) if n_sent else 0.0,
        "kinds": per_kind,
    }
