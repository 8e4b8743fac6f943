"""The simulated web's search engine: a tantivy index over a world's rendered pages, and
the two tools an agent calls, in the Qwen-AgentWorld format.

- `web_search` takes one query or a batch; per query it returns up to 10 numbered
  results (URL, Title, Snippet from tantivy's SnippetGenerator, Date or N/A) with an
  offset for further pages. Results are BM25-ranked over title and body, then lightly
  re-ranked so one page kind does not fill a whole result page.
- `web_extractor` takes a URL and returns the page's Markdown; an unknown URL gets a
  realistic not-found page, a malformed one a `SearchInputError`.

The same call always returns the same text, however the index was built (threads, segments,
the order pages were stored in): the hits at a cut are fetched with their whole tie group,
and ties are broken by a stable hash of the URL.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import polars as pl

from ..errors import DamagedStateError, NotRenderedError, SearchInputError
from ..language import BASE, languages
from ..language import get as get_language
from ..plumbing import iri_quote, link_or_copy, read_json
from .store import open_pages, require_rendered

RESULTS_PER_PAGE = 10
SNIPPET_CHARS = get_language(BASE).reading.snippet_chars  # a snippet's length in the base language (each language's: its data)
INDEX_FORMAT = 5  # bump when the schema changes
FORMAT_FILE = "worldforge-index.json"
MIX_POOL = 200  # top hits re-ranked for a mix of page kinds
_KIND_DECAY = 0.6
KIND_IDS = {"article": 0, "profile": 1, "news": 2, "directory": 3}  # each earlier result of the same kind multiplies a candidate's score by this
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# JSON-schema function specs, as an agent's chat template receives them. They are the one
# canonical description of the tools (SFT rows, RL rows, the server, MCP and the trainer kits
# all use them), so they keep to what every consumer reads without loss: each property has
# only `type` and `description` (verl's tool schema drops `items` and `default`), and every
# parameter block lists `required` (verl refuses a schema without it). `query` is required;
# `queries` adds more searches to the same call (the environment also accepts `queries` alone).
TOOLS = [
    {"type": "function", "function": {
        "name": "web_search",
        "description": "Search the web. Returns 10 numbered results per query (URL, title, snippet, date); use offset for more.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "The search query."},
            "queries": {"type": "array", "description": "More queries (a list of strings), searched in the same call after query."},
            "offset": {"type": "integer", "description": "Index of the first result to return: 0 (the default), 10, 20, ..."},
        }, "required": ["query"]},
    }},
    {"type": "function", "function": {
        "name": "web_extractor",
        "description": "Open a web page by URL and return its content as Markdown.",
        "parameters": {"type": "object", "properties": {"url": {"type": "string", "description": "The page URL."}},
                       "required": ["url"]},
    }},
]


# Per world language (its `search` in worldforge/language/<code>.yaml): the tokenizer of titles
# and bodies, tantivy's own (en_stem) or a regex one the language defines. Chinese has no spaces
# between words: every Han character is a token of its own (other letters and digits make
# words), so a query's Chinese runs become phrases of character pairs (`query: han_pairs`, see
# `engine_query`) and match wherever those characters stand together, whatever the word boundaries.
def _tokenizer(language: str) -> str:
    return get_language(language).search["tokenizer"]["name"]


def _register(index, language: str) -> None:
    """Custom tokenizers live in the opened index, not on disk: register them on every open."""
    import tantivy

    tok = get_language(language).search["tokenizer"]
    if not (tok.get("regex") or tok.get("filters")):
        return  # one of tantivy's own (en_stem)
    # words by the language's pattern (else tantivy's simple split), then its filters in order: a
    # name ('lowercase', 'ascii_fold') or {name: argument} ({stemmer: spanish})
    b = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(tok["regex"]) if tok.get("regex") else tantivy.Tokenizer.simple())
    for f in tok.get("filters") or ["lowercase"]:
        name, arg = next(iter(f.items())) if isinstance(f, dict) else (f, None)
        b = b.filter(getattr(tantivy.Filter, name)(*(() if arg is None else (arg,))))
    index.register_tokenizer(tok["name"], b.build())


def _schema(language: str = BASE):
    import tantivy

    text = _tokenizer(language)
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("url", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=True, tokenizer_name=text)
    sb.add_text_field("body", stored=True, tokenizer_name=text)
    sb.add_text_field("kind", stored=True, tokenizer_name="raw")
    sb.add_text_field("date", stored=True, tokenizer_name="raw")
    sb.add_bytes_field("markdown", stored=True)  # the page as web_extractor returns it: one lookup by URL term
    # Read per hit without fetching stored documents: the page kind (for mixing kinds) and the
    # page's tie-break rank (`url_rank`).
    sb.add_integer_field("kind_id", fast=True)
    sb.add_integer_field("rank", fast=True)
    sb.add_integer_field("title_key", fast=True)  # the title's words, hashed: a query that is a page's whole title
    return sb.build()


def plain_text(markdown: pl.Expr) -> pl.Expr:
    """Markdown to the plain text that is indexed and quoted in snippets: links keep their
    text; headers, table rules and emphasis marks go."""
    return (markdown.str.replace_all(r"\[([^\]]*)\]\([^)]*\)", "$1")
            .str.replace_all(r"(?m)^\|?(?:\s*:?-+:?\s*\|)+\s*$", "")
            .str.replace_all(r"(?m)^#+\s*", "")
            .str.replace_all(r"(?m)^-{3,}\s*$", "")
            # emphasis and cell marks become spaces, and a run of spaces one: only what changes
            # is matched (replacing each of a page's hundreds of single spaces took half the time)
            .str.replace_all(r"[ \t*_`|]{2,}|[\t*_`|]", " ")
            .str.replace_all(r"\n\s*\n+", "\n")
            .str.strip_chars())


INDEX_BATCH = 20_000  # pages read and indexed at a time
DUCKDB_MEMORY = "2GB"  # what a bulk query over a world's pages may hold in memory before spilling to disk


def _prepared_batches(con):
    """The pages as stored, INDEX_BATCH at a time, with their plain text: read and prepared on
    a second thread (DuckDB and polars let go of the GIL) while the caller adds the previous
    batch to the index. Pages are never all in memory: a world of a million entities has
    gigabytes of them. Search results never depend on the order pages are stored or indexed
    in (see `SearchEngine._top`), so they are read as stored, without a sort."""
    import queue
    import threading

    out: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()

    def produce() -> None:
        try:
            rel = con.sql("SELECT url, title, kind, date, markdown FROM pages")
            reader = rel.to_arrow_reader(INDEX_BATCH) if hasattr(rel, "to_arrow_reader") else rel.fetch_arrow_reader(INDEX_BATCH)
            for batch in reader:
                df = _prepare(pl.from_arrow(batch))
                while not stop.is_set():
                    try:
                        out.put(df, timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            out.put(None)
        except BaseException as e:  # handed to the consumer, which raises it
            out.put(e)

    th = threading.Thread(target=produce, daemon=True, name="worldforge-index-reader")
    th.start()
    try:
        while (item := out.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        th.join()


def url_rank(url: str) -> int:
    """A page's place among pages of equal score: a stable 63-bit hash of its URL, the same
    whatever order pages are stored, indexed or merged in."""
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big") >> 1


POPULARITY = 0.25  # how far a page's standing moves its text score: a factor in [e^-0.25, e^0.25]
# A query that is a page's whole title ("Deljorlo Championship", quoted or not) lifts that page's
# score by this factor, as a real engine answers a navigational query: the league's own page
# before its seventy seasons' pages, which all repeat its name. The page's copies and namesakes
# share the title, so the lift does not make the encyclopedia's article first by itself.
TITLE_MATCH = 1.6


def title_key(text: str) -> int:
    """A title's (or query's) words, case and punctuation aside, as a 62-bit hash (0 for none)."""
    words = re.findall(r"\w+", (text or "").casefold())
    if not words:
        return 0
    return int.from_bytes(hashlib.blake2b(" ".join(words).encode(), digest_size=8).digest(), "big") >> 2


def popularity(rank: int) -> float:
    """A page's standing (links to it, visits), fixed by its URL's hash: multiplies its text score,
    so the order of results is not the order of their page types."""
    return math.exp(POPULARITY * (2 * rank / 2**63 - 1))


INDEX_THREADS = 2  # tantivy indexing threads (results do not depend on them)


def _new_index(index_dir: Path, language: str):
    if language not in languages():
        raise ValueError(f"no search tokenizer for language {language!r}; known: {', '.join(languages())}")
    import tantivy

    if index_dir.exists():
        shutil.rmtree(index_dir)
    index_dir.mkdir(parents=True)
    index = tantivy.Index(_schema(language), path=str(index_dir))
    _register(index, language)
    return index


def _prepare(df: pl.DataFrame) -> pl.DataFrame:
    """Pages (url, title, kind, date, markdown) with their indexed text (`body`) and ISO dates."""
    return df.with_columns(plain_text(pl.col("markdown")).alias("body"),
                           pl.col("date").dt.strftime("%Y-%m-%d").fill_null("").alias("date"))


def _add_pages(writer, df: pl.DataFrame) -> None:
    import tantivy

    for url, title, kind, date, body, markdown in df.select("url", "title", "kind", "date", "body", "markdown").iter_rows():
        writer.add_document(tantivy.Document(url=url, title=title, kind=kind, date=date, body=body,
                                             markdown=markdown.encode(), kind_id=KIND_IDS.get(kind, len(KIND_IDS)),
                                             rank=url_rank(url), title_key=title_key(title)))


def _mark(index_dir: Path, pages: int, language: str) -> None:
    marker = {"index_format": INDEX_FORMAT, "pages": pages}
    if language != BASE:  # an English index's marker stays as it always was
        marker["language"] = language
    (index_dir / FORMAT_FILE).write_text(json.dumps(marker))


def build_index(pages, index_dir: Path, on_progress: Callable[[int, int], None] | None = None,
                language: str = BASE, threads: int | None = None, heap_mb: int = 256) -> int:
    """Index every page of `pages` (a rendered web folder, or a DuckDB connection with a `pages`
    table or view) into `index_dir` (replaced if present), tokenized for the world's language,
    on `threads` indexing threads (INDEX_THREADS at most the CPUs by default) sharing `heap_mb`
    MB of buffers. Returns the page count. (The render stage indexes each shard where it is
    written, then joins the shards: `ShardIndex`, `join_indexes`.)"""
    index = _new_index(index_dir, language)
    writer = index.writer(heap_size=heap_mb * 1_000_000, num_threads=threads or max(1, min(INDEX_THREADS, os.cpu_count() or 1)))
    own = isinstance(pages, (str, Path))
    con = open_pages(Path(pages)) if own else pages
    try:
        con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
        n = con.execute("SELECT count(*) FROM pages").fetchall()[0][0]
        done = 0
        for df in _prepared_batches(con):
            _add_pages(writer, df)
            done += len(df)
            if on_progress:
                on_progress(done, n)
    finally:
        if own:
            con.close()
    writer.commit()
    writer.wait_merging_threads()
    _mark(index_dir, n, language)
    if on_progress:
        on_progress(n, n)
    return n


SHARD_HEAP_MB = 64  # a shard's indexing buffers (a shard's pages are a few hundred MB at most)


class ShardIndex:
    """One shard's own search index at `index_dir`, built on one thread from pages added a batch
    at a time (Arrow tables or polars frames with url, title, kind, date, markdown) and finished
    by `close`: the render stage builds one where each shard is written (a Ray worker under
    --ray), and `join_indexes` makes one index of them."""

    def __init__(self, index_dir: Path, language: str = BASE):
        self.index_dir, self.language, self.pages = index_dir, language, 0
        self.writer = _new_index(index_dir, language).writer(heap_size=SHARD_HEAP_MB * 1_000_000, num_threads=1)

    def add(self, pages) -> None:
        df = pages if isinstance(pages, pl.DataFrame) else pl.from_arrow(pages)
        for lo in range(0, len(df), INDEX_BATCH):
            _add_pages(self.writer, _prepare(df.slice(lo, INDEX_BATCH).select("url", "title", "kind", "date", "markdown")))
        self.pages += len(df)

    def close(self) -> int:
        self.writer.commit()
        self.writer.wait_merging_threads()
        _mark(self.index_dir, self.pages, self.language)
        return self.pages


def join_indexes(parts: list[Path], index_dir: Path, language: str = BASE) -> int:
    """One index of the shard indexes `parts` (each built by a `ShardIndex`, with one schema): their
    segment files are linked into `index_dir` (the shards keep theirs, so an interrupted join
    starts over) and listed in one meta.json, then tantivy's merge
    policy merges them into a few large segments (searches touch every segment). Scores are the
    same as one index built from all the pages (BM25 statistics are summed over segments), and
    results do not depend on segment order (see `SearchEngine._top`). Returns the page count."""
    import tantivy

    if index_dir.exists():
        shutil.rmtree(index_dir)
    index_dir.mkdir(parents=True)
    segments, files, opstamp, first, pages = [], [], 0, None, 0
    for part in parts:
        fix = f"delete {part.parent.parent} (the unfinished render's work) and render again"
        meta = read_json(part / "meta.json", fix)
        marker = read_json(part / FORMAT_FILE, fix)
        if marker.get("index_format") != INDEX_FORMAT or marker.get("language", BASE) != language:
            raise DamagedStateError(f"the shard index {part} was built by another worldforge version or for another "
                                    f"language; {fix}")
        if first is None:
            first = meta
        elif meta.get("schema") != first.get("schema") or meta.get("index_settings") != first.get("index_settings"):
            raise DamagedStateError(f"the shard index {part} has another schema; {fix}")
        for seg in meta["segments"]:
            stem = seg["segment_id"].replace("-", "")
            for f in sorted(part.glob(stem + ".*")):
                link_or_copy(f, index_dir / f.name)
                files.append(f.name)
            segments.append(seg)
        opstamp = max(opstamp, int(meta.get("opstamp", 0)))
        pages += int(marker.get("pages", 0))
    if first is None:  # no shards: an empty index
        _new_index(index_dir, language).writer(heap_size=SHARD_HEAP_MB * 1_000_000, num_threads=1).commit()
    else:
        (index_dir / "meta.json").write_text(json.dumps(dict(first, segments=segments, opstamp=opstamp)))
        # the files tantivy may delete once merged away
        (index_dir / ".managed.json").write_text(json.dumps(sorted(files + ["meta.json"])))
        try:
            index = tantivy.Index.open(str(index_dir))
            _register(index, language)
            writer = index.writer(heap_size=SHARD_HEAP_MB * 1_000_000, num_threads=1)
            writer.commit()  # a commit lets the merge policy merge the shards' segments
            writer.wait_merging_threads()
            del writer, index
        except (ValueError, OSError) as exc:  # a shard's segment files missing or cut off
            raise DamagedStateError(f"the shard indexes in {parts[0].parent} are damaged "
                                    f"({str(exc).splitlines()[0][:160]}); delete {parts[0].parent.parent} "
                                    "(the unfinished render's work) and render again") from None
    _mark(index_dir, pages, language)
    return pages


STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the their this to was were which who "
    "with".split())
# A word is letters and digits, with inner apostrophes and hyphens ("O'Brien", "Saint-Denis").
_WORD = re.compile(r"[\w'-]+")
_PHRASE = re.compile(r'"([^"]*)"')
# Limits on what reaches the index: a query's length and words, how deep results go, a URL's
# length, queries per call. Inputs beyond them get the tool's normal error text.
MAX_QUERY_CHARS = 500
MAX_QUERY_WORDS = 32
MAX_RESULTS = 1000
MAX_OFFSET = MAX_RESULTS - RESULTS_PER_PAGE
MAX_QUERIES = 10
MAX_URL_CHARS = 2048
_URL_BAD_CHAR = re.compile(r"[\s\x00-\x1f\x7f]")  # whitespace and control characters
PAGE_CACHE = 4096  # pages kept by URL (pages never change, so a cached page is the page)
SEARCH_CACHE = 8192  # result pages kept by (query, offset)
MAX_TIE_FETCH = 20_000  # hits fetched at most to take a tie group at a cut whole


def _words(text: str) -> list[str]:
    out = []
    for w in _WORD.findall(text):
        w = w.strip("'-_")
        if w:  # operator words (AND, OR, NOT) are plain words to the engine
            out.append(w.lower() if w in ("AND", "OR", "NOT", "IN") else w)
    return out


# Chinese function characters: a query's Chinese run is cut at them ("华星科技的总部在哪里" ->
# 华星科技 | 总部在 | 里) before it becomes character pairs.
ZH_STOP_CHARS = frozenset("的了吗呢吧哪些请")
_HAN_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


def _zh_terms(text: str) -> tuple[list[str], str]:
    """A query's Chinese runs as quoted character pairs (a lone character stands alone),
    and the query with those runs blanked out."""
    terms: list[str] = []
    for run in _HAN_RUN.findall(text):
        parts = [p for p in re.split("[" + "".join(sorted(ZH_STOP_CHARS)) + "]+", run) if p] or [run]
        for part in parts:  # a run of function characters only is kept whole
            if len(part) == 1:
                terms.append(part)
            terms += [f'"{part[i:i + 2]}"' for i in range(len(part) - 1)]
    return terms, _HAN_RUN.sub(" ", text)


def engine_query(query: str, language: str = BASE) -> str:
    """The query as the index parser sees it: plain words and "quoted phrases", nothing else.

    Operators, brackets, field names, wildcards, boosts and fuzzy marks never reach tantivy's
    query parser (deep nesting crashes it, `title:*` raises), and English stop words are
    dropped outside phrases ("companies in the X industry" -> "companies X industry"): they
    match nearly every page, cost most of the scoring and barely move the ranking. A query
    made only of stop words is kept whole. Raises SearchInputError when nothing searchable is
    left or the query is over the limits."""
    q = (query or "").strip()
    if not q:
        raise SearchInputError("empty query: give some search words, e.g. \"companies headquartered in Hesheston\"")
    _check_unicode(q, "the query")
    if len(q) > MAX_QUERY_CHARS:
        raise SearchInputError(f"query too long ({len(q):,} characters); keep it under {MAX_QUERY_CHARS} characters "
                               f"and {MAX_QUERY_WORDS} words")
    phrases, plain, han = [], [], []
    if get_language(language).search["query"] == "han_pairs":  # a quoted Chinese phrase stays a phrase: its characters in a row
        for m in _PHRASE.findall(q) if q.count('"') >= 2 else ():
            if _HAN_RUN.search(m):
                han.append('"' + " ".join(re.findall(r"[\w'-]+", m)) + '"')
        if han:
            q = _PHRASE.sub(lambda m: " " if _HAN_RUN.search(m.group(1)) else m.group(0), q)
        pairs, q = _zh_terms(q)
        han += pairs
    if q.count('"') >= 2:
        phrases = [ws for ws in (_words(m) for m in _PHRASE.findall(q)) if ws]
        q = _PHRASE.sub(" ", q)
    plain = _words(q)
    n_words = len(plain) + sum(map(len, phrases)) + (len(han) + 1) // 2  # two Chinese characters make about a word
    if n_words == 0:
        raise SearchInputError(f"the query {query.strip()[:80]!r} has no words to search for; use letters or digits, "
                               "e.g. \"companies headquartered in Hesheston\"")
    if n_words > MAX_QUERY_WORDS:
        raise SearchInputError(f"query has {n_words} words; use at most {MAX_QUERY_WORDS}")
    kept = [w for w in plain if w.lower() not in STOP_WORDS]
    if not kept and not phrases:
        kept = plain
    return " ".join(han + ['"' + " ".join(ws) + '"' for ws in phrases] + kept)


def cut_snippet(text: str, chars: int) -> str:
    """At most `chars` characters of `text`, cut between characters (anywhere in Chinese,
    between words in other scripts)."""
    if len(text) <= chars:
        return text
    cut = text[:chars]
    if cut[-1].isalnum() and text[chars].isalnum() and not _HAN_RUN.match(text[chars]):
        space = cut.rfind(" ")
        cut = cut[:space] if space > chars // 2 else cut
    return cut.rstrip()


def check_offset(value) -> int:
    """An offset as given in a tool call or on the command line: a whole number from 0 to MAX_OFFSET."""
    if isinstance(value, bool):
        value = None  # True/False are not offsets
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().lstrip("+").isdigit() and len(value.strip()) <= 6:
        value = int(value.strip())
    if not isinstance(value, int) or not 0 <= value <= MAX_OFFSET:
        shown = repr(value)[:40] if not isinstance(value, int) else f"{value:,}"
        raise SearchInputError(f"offset must be a whole number from 0 to {MAX_OFFSET} (results go {MAX_RESULTS:,} deep, "
                               f"{RESULTS_PER_PAGE} per page), got {shown}")
    return value


def _display_date(iso: str) -> str:
    if not iso:
        return "N/A"
    d = dt.date.fromisoformat(iso)
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"


def _check_unicode(text: str, what: str) -> None:
    """Text a tool call carries must be valid Unicode: a lone surrogate (JSON's "\\ud800", or
    a byte that is not UTF-8 on a command line) cannot be searched, stored or answered."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SearchInputError(f"{what} holds a character that is not valid Unicode ({text[exc.start]!r} at "
                               f"{exc.start}: a lone surrogate or a byte that is not UTF-8); send UTF-8 text") from None


def check_url(url) -> str:
    """A URL as given to web_extractor, checked: an absolute http(s) URL of sensible length."""
    if not isinstance(url, str):
        raise SearchInputError(f"the URL must be a string, got {type(url).__name__}; e.g. {{\"url\": \"https://...\"}}")
    u = url.strip()
    _check_unicode(u[:MAX_URL_CHARS + 1], "the URL")
    if len(u) > MAX_URL_CHARS:
        raise SearchInputError(f"URL too long ({len(u):,} characters; at most {MAX_URL_CHARS:,})")
    try:
        parts = urlsplit(u)
        host = parts.hostname
    except ValueError:  # e.g. an unclosed IPv6 bracket: https://[::1
        parts, host = None, None
    if (not u or parts is None or parts.scheme not in ("http", "https") or not host
            or _URL_BAD_CHAR.search(u)):
        raise SearchInputError(f"malformed URL {u[:200]!r}: give an absolute http(s) URL such as https://example.org/page")
    return u


class SearchEngine:
    """Search and open the pages of one rendered world (`<world>/web/`)."""

    def __init__(self, web: str | Path):
        import tantivy

        web = Path(web)
        fix = f"render the world again with `worldforge render {web.parent} --force` (or `worldforge run SPEC`)"
        if not (web / "index" / "meta.json").is_file() or not (web / "pages.duckdb").is_file():
            raise NotRenderedError(f"{web} holds no search index (missing or deleted); {fix}")
        marker = web / "index" / FORMAT_FILE
        meta = read_json(marker, fix) if marker.is_file() else {}
        if meta.get("index_format") != INDEX_FORMAT:
            raise NotRenderedError(f"the search index in {web} was built by another worldforge version; {fix}")
        self.language = meta.get("language", BASE)
        if self.language not in languages():
            raise NotRenderedError(f"the search index in {web} is in language {self.language!r}, which this worldforge "
                                   f"cannot search ({', '.join(languages())}); {fix}")
        try:
            self.index = tantivy.Index.open(str(web / "index"))
            _register(self.index, self.language)
            self.schema = self.index.schema
            self.searcher = self.index.searcher()
        except (ValueError, OSError) as exc:
            raise DamagedStateError(f"the search index in {web / 'index'} is damaged ({str(exc).splitlines()[0][:160]}); "
                                    f"{fix}") from None
        self.web = web
        self.pages = open_pages(web, fix)
        self._has_archives = bool(self.pages.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'archives'").fetchone()[0])
        self._archive_rows: dict[str, int] | None = None  # URL -> row of its capture, read at the first `archive`
        self._pages: dict[str, dict | None] = {}
        self._searches: dict[tuple, tuple[list[dict], int]] = {}
        self._hide_ranks: dict[frozenset[str], frozenset[int]] = {}
        self.cache_hits = self.cache_misses = 0  # searches served from / missing the cache
        self.search_cache = SEARCH_CACHE  # 0: no result cache

    @classmethod
    def for_world(cls, world_path: str | Path) -> SearchEngine:
        return cls(require_rendered(world_path))

    def close(self) -> None:
        self.pages.close()

    # ------------------------------------------------------------------ search

    def search(self, query: str, offset: int = 0, limit: int = RESULTS_PER_PAGE,
               hide: frozenset[str] = frozenset()) -> tuple[list[dict], int]:
        """Ranked results [{url, title, snippet, date, kind, score}] and the total hit count;
        `hide`: pages this search does not find (a training episode's view of a web with held-out
        parts: `Environment.hidden_for`). Recent searches come from a bounded cache (results are
        a pure function of the query and `hide`); callers must not change the returned results."""
        offset = check_offset(offset)
        limit = max(0, min(int(limit), MAX_RESULTS - offset))
        key = (query, offset, limit, hide)
        hit = self._searches.get(key)
        if hit is not None:
            self.cache_hits += 1
            return hit
        self.cache_misses += 1
        got = self._search(query, offset, limit, hide)
        if self.search_cache > 0:
            if len(self._searches) >= self.search_cache:
                self._searches.pop(next(iter(self._searches)))
            self._searches[key] = got
        return got

    def _search(self, query: str, offset: int, limit: int, hide: frozenset[str] = frozenset()) -> tuple[list[dict], int]:
        import tantivy

        parsed, _errors = self.index.parse_query_lenient(engine_query(query, self.language), ["title", "body"],
                                                         field_boosts={"title": 2.0})

        # The first MIX_POOL BM25 hits (a set fixed by score and URL hash, whatever built the index) are
        # re-ranked by standing and to mix page kinds; later hits keep BM25 order. The pool does not
        # depend on the offset, so result pages never overlap or skip.
        # One fetch serves both: the first MIX_POOL of the best offset + limit are the pool.
        top, count = self._top(parsed, max(MIX_POOL, offset + limit), count=True, hide=self._hidden(hide))
        head = top[:MIX_POOL]
        wanted = title_key(query)
        same = self.searcher.fast_field_values("title_key", [a for *_, a in head]) if head and wanted else [0] * len(head)
        pool = sorted(((sc * popularity(r) * (TITLE_MATCH if tk == wanted else 1.0), r, k, a)
                       for (sc, r, k, a), tk in zip(head, same)), key=lambda c: (-c[0], c[1]))
        ranked = _mix_kinds(pool, offset + limit)[offset:offset + limit]
        if offset + limit > MIX_POOL:
            ranked += top[max(offset, MIX_POOL):offset + limit]
        if not ranked:
            return [], count
        gen = tantivy.SnippetGenerator.create(self.searcher, parsed, self.schema, "body")
        # tantivy measures snippets in bytes: a Chinese character is three of them. Snippets
        # are cut on characters either way (fragments start and end at tokens).
        lang = get_language(self.language)
        chars, width = lang.reading.snippet_chars, lang.search["bytes_per_char"]
        gen.set_max_num_chars(chars * width)
        out = []
        for score, _rank, _kind, addr in ranked:
            d = self.searcher.doc(addr)
            url, kind = d.get_first("url"), d.get_first("kind")
            frag = gen.snippet_from_doc(d).fragment().strip()
            if not frag:
                frag = d.get_first("body")[:chars]
            if width > 1:  # measured in bytes: cut to its characters
                frag = cut_snippet(frag, chars)
            out.append({"url": url, "title": d.get_first("title"), "snippet": " ".join(frag.split()),
                        "date": _display_date(d.get_first("date")), "kind": kind, "score": score})
        return out, count

    def _hidden(self, hide: frozenset[str]) -> frozenset[int]:
        """The pages of `hide` by their `rank` (a 63-bit hash of the URL, a fast field: no stored
        document is read to leave them out), computed once per set."""
        if not hide:
            return frozenset()
        got = self._hide_ranks.get(hide)
        if got is None:
            if len(self._hide_ranks) >= 4:
                self._hide_ranks.clear()
            got = self._hide_ranks[hide] = frozenset(map(url_rank, hide))
        return got

    def _top(self, parsed, n: int, count: bool = False, hide: frozenset[int] = frozenset()) -> tuple[list[tuple], int]:
        """The n best hits as `_candidates`, and the total hit count (when `count`); hits whose
        `rank` is in `hide` are left out (the ranking of the rest is unchanged, and the count is
        the total less the hidden share of the whole tie groups fetched: "about"). tantivy breaks ties by
        where a page sits in the index, which depends on how the index was built (threads,
        segments, merges): a tie group at the cut is fetched whole, then ties are broken by
        `rank`, so the same pages come back from any build of the same pages. A tie group is
        fetched up to MAX_TIE_FETCH hits. The first fetch takes twice n: a tie at the cut is
        common (three searches in four on a large world) and usually small, and fetching more
        costs little next to evaluating the query again."""
        limit, full = 2 * n + 1, None
        while True:
            res = self.searcher.search(parsed, limit, count=count and full is None)
            if count and full is None:
                full = res.count
            hits = res.hits
            cands = self._candidates(hits)
            visible = [c for c in cands if c[1] not in hide] if hide else cands
            if len(hits) < limit or limit >= MAX_TIE_FETCH or (len(visible) >= n and hits[-1][0] < visible[n - 1][0]):
                total = full or 0
                if hide and cands:  # every hit fetched: the visible ones counted; else the count less the hidden
                    # share of the whole tie groups fetched (the last group may be cut where the index's
                    # build puts it: the estimate reads the same pages from any build)
                    whole = [c for c in cands if c[0] > hits[-1][0]]
                    total = len(visible) if len(hits) < limit else max(
                        min(len(visible), n), round(total * sum(c[1] not in hide for c in whole) / len(whole)) if whole else total)
                return visible[:n], total
            limit = min(MAX_TIE_FETCH, limit * 2)

    def _candidates(self, hits: list) -> list[tuple]:
        """(score, rank, kind id, address) per hit, best first, ties by `rank`."""
        if not hits:
            return []
        addrs = [a for _, a in hits]
        kinds = self.searcher.fast_field_values("kind_id", addrs)
        ranks = self.searcher.fast_field_values("rank", addrs)
        return sorted(zip((s for s, _ in hits), ranks, kinds, addrs), key=lambda c: (-c[0], c[1]))

    def web_search(self, query: str | None = None, queries: list[str] | None = None, offset: int = 0) -> str:
        """The `web_search` tool: AgentWorld-style numbered results for one query or a batch."""
        qs, offset = search_arguments({"query": query, "queries": queries, "offset": offset})
        return "\n\n".join(self._format(q, offset) for q in qs)

    def _format(self, query: str, offset: int) -> str:
        return self.format_results(query, offset, *self.search(query, offset))

    @staticmethod
    def format_results(query: str, offset: int, results: list[dict], total: int) -> str:
        """One query's block of numbered results, as `web_search` returns it."""
        if not results:
            more = f" beyond result {offset}" if offset and total else ""
            return f"No results found for \"{query.strip()}\"{more}. Try different or fewer keywords."
        lines = [f"Search results for \"{query.strip()}\" ({offset + 1}-{offset + len(results)} of about {total}):", ""]
        for i, r in enumerate(results, start=offset + 1):
            lines += [f"[{i}] {r['url']}", f"Title: {r['title']}", f"Snippet: {r['snippet']}", f"Date: {r['date']}", ""]
        return "\n".join(lines).rstrip()

    # ------------------------------------------------------------------ open

    def archive(self, url: str) -> tuple[dt.date, str] | None:
        """An earlier capture of the article at `url` (capture date, Markdown as the page read
        then), or None: only articles whose entity changed since have one."""
        if not self._has_archives:
            return None
        if self._archive_rows is None:
            # Which URLs have a capture, and its row: a query by URL scans the whole table (a 1M
            # world has 250k captures; every URL starts alike, so no block can be skipped), one
            # by row reads a single block, and most articles have no capture at all.
            got = self.pages.execute("SELECT url, rowid FROM archives ORDER BY rowid DESC").fetchnumpy()
            self._archive_rows = dict(zip(got["url"].tolist(), got["rowid"].tolist()))  # a URL's first capture wins
        i = self._archive_rows.get(url) if isinstance(url, str) else None
        if i is None:
            return None
        row = self.pages.execute("SELECT captured, markdown FROM archives WHERE rowid = ?", [i]).fetchone()
        return (row[0], row[1]) if row else None

    def page(self, url: str) -> dict | None:
        """The stored page at `url` ({url, title, kind, date, markdown}), or None. Recently
        opened pages come from a bounded cache: a page fetch is then a dictionary lookup."""
        if not isinstance(url, str):
            check_url(url)  # raises the tool's error for a non-string
        hit = self._pages.get(url, False)
        if hit is not False:
            return hit
        got = self._page(url)
        if len(self._pages) >= PAGE_CACHE:
            self._pages.pop(next(iter(self._pages)))
        self._pages[url] = got
        return got

    def _page(self, url: str) -> dict | None:
        u = check_url(url).split("#", 1)[0]
        https = u.replace("http://", "https://", 1)
        decoded = unquote(https)  # article URLs are IRIs: an agent may send them percent-encoded
        iri = iri_quote(decoded, safe=":/?=&_-.,~%+")
        encoded = quote(decoded, safe=":/?=&_-.,~%+")  # (builds before article URLs were IRIs)
        import tantivy

        for cand in dict.fromkeys([u, https, https.rstrip("/"), https + "/", iri, encoded]):
            hits = self.searcher.search(tantivy.Query.term_query(self.schema, "url", cand), 1).hits
            if hits:
                d = self.searcher.doc(hits[0][1])
                date = d.get_first("date")
                return {"url": cand, "title": d.get_first("title"), "kind": d.get_first("kind"),
                        "date": dt.date.fromisoformat(date) if date else None,
                        "markdown": bytes(d.get_first("markdown")).decode()}
        return None

    def web_extractor(self, url: str) -> str:
        """The `web_extractor` tool: the page's Markdown, or a not-found page for an unknown URL."""
        p = self.page(url)
        if p is None:
            host = urlsplit(url.strip()).netloc
            return (f"# 404 Not Found\n\nThe requested URL {urlsplit(url.strip()).path or '/'} was not found on this server "
                    f"({host}). The page may have been moved or deleted.")
        return p["markdown"]

    def call(self, name: str, arguments: dict) -> str:
        """Dispatch one tool call by name (the environment's entry point)."""
        if name == "web_search":
            qs, offset = search_arguments(arguments)
            return "\n\n".join(self._format(q, offset) for q in qs)
        if name == "web_extractor":
            if not isinstance(arguments, dict):
                raise SearchInputError(f"web_extractor arguments must be a JSON object, got {type(arguments).__name__}")
            return self.web_extractor(arguments.get("url", ""))
        raise SearchInputError(f"unknown tool {name!r}; the tools are web_search and web_extractor")


def search_arguments(arguments: dict) -> tuple[list[str], int]:
    """The queries (`query` first, then `queries`) and the offset of a `web_search` call, checked."""
    if not isinstance(arguments, dict):
        raise SearchInputError(f"web_search arguments must be a JSON object, got {type(arguments).__name__}")
    offset = check_offset(arguments.get("offset", 0) if arguments.get("offset") is not None else 0)
    qs = arguments.get("queries") or []
    if isinstance(qs, str):
        qs = [qs]
    q = arguments.get("query")
    if not isinstance(qs, list) or not all(isinstance(x, str) for x in qs) or not (q is None or isinstance(q, str)):
        raise SearchInputError("'query' must be a string and 'queries' a list of strings")
    qs = ([q] if q is not None else []) + list(qs)
    if not qs:
        raise SearchInputError("web_search needs 'query' or a non-empty 'queries' list")
    if len(qs) > MAX_QUERIES:
        raise SearchInputError(f"{len(qs)} queries in one call; send at most {MAX_QUERIES}")
    for x in qs:
        engine_query(x)  # every query is checked before any is run
    return qs, offset


def _mix_kinds(cands: list, want: int) -> list:
    """Greedy re-rank: a candidate's score decays with each result of its kind already chosen,
    so a result page mixes encyclopedia, profile, news and directory pages when they match.
    `cands` is sorted best first, so only the head of each kind's queue can win a step."""
    queues: dict[str, list] = {}
    for c in cands:
        queues.setdefault(c[2], []).append(c)
    heads = dict.fromkeys(queues, 0)
    seen = dict.fromkeys(queues, 0)
    chosen: list = []
    while len(chosen) < want:
        best, best_score = None, 0.0
        for k, q in queues.items():
            if heads[k] < len(q):
                c = q[heads[k]]
                score = c[0] * _KIND_DECAY ** seen[k]
                if best is None or score > best_score or (score == best_score and c[1] < best[1]):
                    best, best_score = c, score
        if best is None:
            break
        heads[best[2]] += 1
        seen[best[2]] += 1
        chosen.append(best)
    return chosen
