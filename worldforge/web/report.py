"""How varied a rendered web reads: sentence skeletons and lengths per page kind.

A sentence's *skeleton* is the sentence with links, entity names, dates and numbers replaced
by placeholders; a web whose pages share a handful of skeletons reads as machine text. The
measures (also stored in render.json):
- distinct skeletons among all prose sentences;
- the share of sentences of the most common skeleton;
- the share of sentences whose skeleton appears on 10 or more pages;
- clause frames (issue 37's reader): sentences split at , ; and the words and/while/then, with
  entity names (every page subject's name, links, capitalised runs), dates and numbers masked;
  the share of clauses whose frame is on 10 or more pages (`clauses_on_10_plus_pages`);
- phrase tells: the share of pages holding each known machine phrasing (`tells`), and template
  slips that must never occur (`slips`: a year said twice, a doubled word);
- mean (and quartile) words per page kind;
- where facts live (`where_facts_live`): entities without an article, and the share of facts
  the encyclopedia states and of those only other sites state.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import polars as pl

from ..language import BASE, written_in
from ..language import get as get_language
from .grammar import SKEL_CAPS, SKEL_DATE, SKEL_LINK, SKEL_NUM, prose_sentences
from .store import open_pages

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d[\d,.]*")
_LINK_URL = re.compile(r"\]\([^)]*\)")


def word_counts(mds: pl.Series) -> list[int]:
    """The words of every page (link targets left out), counted in bulk by polars' regex engine."""
    return mds.str.replace_all(_LINK_URL.pattern, "]").str.count_matches(_WORD.pattern).cast(pl.Int64).to_list()


_LOOKAROUND = re.compile(r"\(\?<?[=!]")
_BACKREF = re.compile(r"(?<!\\)\\([1-9])")


def _group_end(pattern: str, j: int) -> int:
    """The index after the group that opens at `pattern[j]` (escapes and classes skipped)."""
    depth = 0
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = pattern.index("]", j + 2 if pattern[j + 1:j + 2] in ("]", "^") else j + 1) + 1
            continue
        depth += (c == "(") - (c == ")")
        j += 1
        if depth == 0:
            break
    return j


def _superset(pattern: str) -> str:
    """A pattern polars' engine takes that matches wherever `pattern` does: a back-reference
    read as its group (any of the group's alternatives), lookarounds dropped (a lookaround
    only narrows a match)."""
    starts = [j for j in range(len(pattern)) if pattern[j] == "(" and (j == 0 or pattern[j - 1] != "\\")
              and (pattern[j + 1:j + 2] != "?" or pattern[j + 1:j + 4] == "?P<")]
    # each capturing group's body, after "(" or "(?P<name>", to its closing parenthesis
    bodies = [pattern[(pattern.index(">", j) if pattern[j + 1:j + 2] == "?" else j) + 1:_group_end(pattern, j) - 1] for j in starts]
    pattern = _BACKREF.sub(lambda m: f"(?:{bodies[int(m.group(1)) - 1]})", pattern)
    out, i = [], 0
    while (m := _LOOKAROUND.search(pattern, i)) is not None:
        out.append(pattern[i:m.start()])
        i = _group_end(pattern, m.start())
    out.append(pattern[i:])
    return "".join(out)


def pages_matching(mds: pl.Series, rx: re.Pattern) -> list[bool]:
    """Whether each page holds a match of `rx`: pages a superset pattern finds in bulk (polars),
    then Python's engine on those only (lookarounds and back-references as written)."""
    try:
        maybe = mds.str.contains(_superset(rx.pattern)).to_list()
    except pl.exceptions.PolarsError:  # a construct polars does not know: every page by Python's engine
        maybe = [True] * len(mds)
    return [bool(m) and rx.search(md) is not None for m, md in zip(maybe, mds.to_list())]


# Clause boundaries as issue 37's reader cut them, in both languages.
CLAUSE_SPLIT = r"[,;，；、]|\b(?:and|while|then)\b|并且|然后|同时"
# Phrasings a reader spots as machine text when they recur across pages (name, pattern).
SLIPS = {
    "a year said twice in a row": r"\b[Ii]n (\d{4}),? (?:[Bb]orn on [A-Za-z]+ \d{1,2}, \1|in \1)\b",
    "a doubled word": r"\b(the|a|an|of|in|on|is|was|and|to|date)\s+\1\b",
}


MAX_PAGES = 40_000  # pages the variety measures read whole (a demo world is about 23,000); above, a fixed sample
REPORT_MEMORY = "1GB"  # what the sample's query may hold before spilling to disk


def web_report(web: str | Path, max_pages: int = MAX_PAGES, language: str | None = None) -> dict:
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
        sources = where_facts_live(con)
        names = [r[0] for r in con.execute(
            "SELECT DISTINCT regexp_replace(title, ' \\([^)]*\\)$', '') FROM pages WHERE kind IN ('article', 'profile') "
            "AND subject IS NOT NULL LIMIT 200000").fetchall() if r[0] and len(r[0]) >= 2]
        written = Counter(written_in(r[4] or "").code for r in rows[:200])  # the web's language: most of its pages'
        lang = language or next((c for c, n in written.most_common() if c != BASE and n > 100), BASE)  # (by script, unless told)
    finally:
        con.close()
    kind_words: dict[str, list[int]] = defaultdict(list)
    sent_urls: list[str] = []
    sents: list[str] = []
    mds = pl.Series("md", [r[4] or "" for r in rows], dtype=pl.String)
    for (url, kind, _site, _ids, md), n in zip(rows, word_counts(mds)):
        kind_words[kind].append(n)
        ss = prose_sentences(md)
        sents += ss
        sent_urls += [url] * len(ss)
    # Skeletons in bulk (polars' regex engine): the same rules as grammar.skeleton.
    df = pl.DataFrame({"url": sent_urls, "s": sents}, schema={"url": pl.String, "s": pl.String})
    sk = (pl.col("s").str.replace_all(SKEL_LINK.pattern, "<e>").str.replace_all(SKEL_DATE.pattern, "<d>")
          .str.replace_all(SKEL_CAPS.pattern, "<e>").str.replace_all(SKEL_NUM.pattern, "<n>"))
    g = df.with_columns(sk.alias("k")).group_by("k").agg(pl.len().alias("n"), pl.col("url").n_unique().alias("pages"))
    n_sent = len(sents)
    top = g.sort(["n", "k"], descending=[True, False]).head(1).rows() if n_sent else []
    common = int(g.filter(pl.col("pages") >= 10)["n"].sum()) if n_sent else 0
    names.sort(key=len, reverse=True)
    masked = pl.col("s").str.replace_all(SKEL_LINK.pattern, "<e>")
    if names:  # names by the dictionary first: a Chinese name has no capitals to fold
        masked = masked.str.replace_many(names, ["<e>"] * len(names))
    clauses = (df.with_columns(masked.alias("s"))
               .with_columns(sk.str.replace_all(CLAUSE_SPLIT, "\x00").str.split("\x00").alias("c")).explode("c")
               .with_columns(pl.col("c").str.replace_all(r"\s+", " ").str.strip_chars(" .。")).filter(pl.col("c") != ""))
    frames = clauses.group_by("c").agg(pl.len().alias("n"), pl.col("url").n_unique().alias("pages"))
    n_clauses = clauses.height
    on10 = int(frames.filter(pl.col("pages") >= 10)["n"].sum()) if n_clauses else 0
    tells = {name: round(float(mds.str.contains(pat).mean()), 4) if len(mds) else 0.0 for name, pat in get_language(lang).checks.tells.items()}
    slips = {name: sum(pages_matching(mds, re.compile(pat))) for name, pat in SLIPS.items()}
    language = get_language(lang)
    prose = {name: round(sum(pages_matching(mds, rx)) / len(rows), 4) if rows else 0.0
             for name, rx in language.checks.prose_slips.items()}
    said, judged, wrong = relative_years([r for r, m in zip(rows, pages_matching(mds, language.checks.relative_years)) if m], language)
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
        "clauses": n_clauses,
        "clause_frames": frames.height,
        "clauses_on_10_plus_pages": round(on10 / n_clauses, 4) if n_clauses else 0.0,
        "tells": tells,
        "slips": slips,
        "prose_slips": prose,  # the share of pages with each (issue 59's classes)
        "relative_years": {"said": said, "judged": judged, "wrong": wrong},
        "kinds": per_kind,
        "sources": sources,
    }


_YEAR = re.compile(r"(?<!\d)(1[6-9]\d\d|20\d\d)(?!\d)")
_SEASON = re.compile(r"(?<!\d)\d{4}[–-]\d{2}(?![\d-])")  # '2010–11': a season's name (not a date's 2010-05-03)


def relative_years(rows, language) -> tuple[int, int, int]:
    """('three years later' phrases, those a reader can check, those that disagree): a phrase is
    checked where its paragraph shows a year before it and its clause one after it; the reader
    counts from the last year shown before to the event's start, the least year its clause
    shows ('from 2001 to 2005. Three years later, in 2008': three; '一直工作到1978年…（1975–1978）'
    starts in 1975)."""
    words = {w: n for n, w in enumerate(language.number_words)}
    said = judged = wrong = 0
    for r in rows:
        md = r[4] or ""
        for m in language.checks.relative_years.finditer(md):
            said += 1
            n = words.get(m.group("n").lower())
            before = _YEAR.findall(md[max(0, md.rfind("\n\n", 0, m.start())): m.start()])
            clause = _SEASON.sub(" ", re.split(r"[.。；;]", md[m.end():], maxsplit=1)[0])  # (a season's name is no date)
            after = _YEAR.findall(clause)  # the event's years: its start is the least
            if n is None or not before or not after:
                continue
            judged += 1
            wrong += min(map(int, after)) - int(before[-1]) != n
    return said, judged, wrong


SOURCE_SAMPLE = 20_000  # entities whose facts `where_facts_live` follows (every one below that)


def where_facts_live(con) -> dict:
    """Where a web states its facts: how many entities have no encyclopedia article (their
    profile or official site is their page), and of the facts about a sample of entities
    (attributes, and links), the share some encyclopedia page states and the shares stated only
    off it: on a profile or official site, in a directory of another site, in news. One pass
    over the provenance (`page_facts`), sampled by subject."""
    ents, without = con.execute(
        "SELECT count(DISTINCT subject), count(DISTINCT subject) FILTER (WHERE NOT has_article) FROM "
        "(SELECT subject, bool_or(kind = 'article') AS has_article FROM pages WHERE kind IN ('article', 'profile') "
        "AND subject IS NOT NULL GROUP BY subject)").fetchone()
    mod = max(1, ents // SOURCE_SAMPLE)
    rows = con.execute(
        "WITH enc AS (SELECT DISTINCT split_part(url, '/', 3) AS host FROM pages WHERE kind = 'article'), "
        "pg AS (SELECT url, kind, split_part(url, '/', 3) IN (SELECT host FROM enc) AS on_enc FROM pages), "
        "f AS (SELECT fact_id, bool_or(on_enc) AS enc, bool_or(kind = 'profile') AS prof, "
        "bool_or(kind = 'directory' AND NOT on_enc) AS dir, bool_or(kind = 'news') AS news FROM page_facts JOIN pg USING (url) "
        f"WHERE NOT ends_with(fact_id, '/name') AND hash(split_part(fact_id, '/', 1)) % {mod} = 0 GROUP BY fact_id) "
        "SELECT len(string_split(fact_id, '/')) = 2 AS attr, count(*), avg(enc::INT), avg((NOT enc)::INT), "
        "avg((NOT enc AND prof)::INT), avg((NOT enc AND dir)::INT), avg((NOT enc AND news)::INT) FROM f GROUP BY attr").fetchall()
    out = {"entities": ents, "without_article": without, "sampled_every": mod}
    for attr, n, enc, off, prof, dir_, news in rows:
        out["attributes" if attr else "links"] = {
            "facts": n, "on_encyclopedia": round(enc, 4), "only_off": round(off, 4),
            "only_off_on_profile": round(prof, 4), "only_off_in_directory": round(dir_, 4), "only_off_in_news": round(news, 4)}
    return out
