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
from collections import defaultdict
from pathlib import Path

import polars as pl

from .grammar import _SKEL_CAPS, _SKEL_DATE, _SKEL_LINK, _SKEL_NUM, prose_sentences
from .store import open_pages

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d[\d,.]*")
_LINK_URL = re.compile(r"\]\([^)]*\)")


def words(markdown: str) -> int:
    return len(_WORD.findall(_LINK_URL.sub("]", markdown)))


MAX_PAGES = 20_000
REPORT_MEMORY = "1GB"  # what the sample's query may hold before spilling to disk


def web_report(web: str | Path, max_pages: int = MAX_PAGES) -> dict:
    """The variety and length measures of a rendered web folder: every page up to `max_pages`,
    else a fixed sample of that many pages (by URL hash)."""
    con = open_pages(Path(web))
    try:
        con.execute(f"SET memory_limit = '{REPORT_MEMORY}'")
        total = con.execute("SELECT count(*) FROM pages").fetchone()[0]
        # The sample's URLs first, then their pages: a top-N that carried every page's Markdown
        # held gigabytes at a million entities (URLs are unique: the render checks).
        rows = con.execute("SELECT url, kind, site, entity_ids, markdown FROM pages WHERE url IN "
                           "(SELECT url FROM pages ORDER BY hash(url), url LIMIT ?) ORDER BY hash(url), url",
                           [max_pages]).fetchall()
    finally:
        con.close()
    kind_words: dict[str, list[int]] = defaultdict(list)
    sent_urls: list[str] = []
    sents: list[str] = []
    for url, kind, _site, _ids, md in rows:
        kind_words[kind].append(words(md))
        ss = prose_sentences(md)
        sents += ss
        sent_urls += [url] * len(ss)
    # Skeletons in bulk (polars' regex engine): the same rules as grammar.skeleton.
    df = pl.DataFrame({"url": sent_urls, "s": sents}, schema={"url": pl.String, "s": pl.String})
    sk = (pl.col("s").str.replace_all(_SKEL_LINK.pattern, "<e>").str.replace_all(_SKEL_DATE.pattern, "<d>")
          .str.replace_all(_SKEL_CAPS.pattern, "<e>").str.replace_all(_SKEL_NUM.pattern, "<n>"))
    g = df.with_columns(sk.alias("k")).group_by("k").agg(pl.len().alias("n"), pl.col("url").n_unique().alias("pages"))
    n_sent = len(sents)
    top = g.sort(["n", "k"], descending=[True, False]).head(1).rows() if n_sent else []
    common = int(g.filter(pl.col("pages") >= 10)["n"].sum()) if n_sent else 0
    per_kind = {}
    for k, ws in sorted(kind_words.items()):
        ws = sorted(ws)
        per_kind[k] = {"pages": len(ws), "mean_words": round(sum(ws) / len(ws), 1), "median_words": ws[len(ws) // 2],
                       "p10_words": ws[len(ws) // 10], "p90_words": ws[(9 * len(ws)) // 10]}
    return {
        "pages": total,
        "pages_measured": len(rows),
        "sentences": n_sent,
        "skeletons": g.height,
        "top_skeleton_share": round(top[0][1] / n_sent, 4) if top else 0.0,
        "top_skeleton": top[0][0] if top else "",
        "share_on_10_plus_pages": round(common / n_sent, 4) if n_sent else 0.0,
        "kinds": per_kind,
    }
