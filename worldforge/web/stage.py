"""The render stage: plan a world's pages, write them with a backend, store them with
provenance, and build the search index.

Layout inside the world folder:

    web/pages/         NNNNN.pages.parquet: pages(url, kind, site, title, date, subject, entity_ids, markdown,
                       source, attempts) and NNNNN.facts.parquet: page_facts(url, fact_id), one pair per shard,
                       in page plan order; read as the views `pages` and `page_facts` (`store.open_pages`)
    web/pages.duckdb   rejected(url, kind, title, attempts, problems) and archives(url, captured, markdown)
    web/index/         the tantivy index (see worldforge.search)
    web/render.json    the render report; its presence with status "complete" marks the stage done

Work goes to `.web.partial/` in shards, each a set of Parquet files renamed into place when
finished, and the shard's own search index: with the template writer, a run of one type's
entities (or its directories), planned, written and indexed where the shard runs (in this
process, or a Ray task under `--ray`; see `shards.py`); with vLLM, `batch_size` pages planned
here. The plan is deterministic, so an interrupted render resumes at the missing shards. At the
end the shards' page files are linked into `pages/` (never copied), the small tables are copied
into `pages.duckdb`, the shards' indexes are joined into one (`search.join_indexes`), and the
finished folder replaces `web/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..cluster import Local, current, worker_state
from ..errors import RenderError
from ..plumbing import Background, folder_digests, link_or_copy, package_versions, release_memory, swap_into_place, write_atomic
from ..world import RenderOptions, open_world
from .llm import VLLMWriter, WriterStats, close_llm, load_llm
from .pages import KINDS, PART_PAGE_SIZE, Page, WorldView
from .planning import news_predicates, plan_pages
from .search import FORMAT_FILE, ShardIndex, join_indexes
from .shards import LoggedSet, NewsURLs, Shard, plan_shards, shard_pages
from .store import PAGES_DB, PAGES_DIR, PARTIAL_DIR, REPORT_FILE, is_rendered, open_pages, web_dir
from .template import TemplateWriter

_PAGE_SCHEMA = pa.schema([("url", pa.string()), ("kind", pa.string()), ("site", pa.string()), ("title", pa.string()),
                          ("date", pa.date32()), ("subject", pa.string()), ("entity_ids", pa.list_(pa.string())),
                          ("markdown", pa.string()), ("source", pa.string()), ("attempts", pa.int32())])
_FACT_SCHEMA = pa.schema([("url", pa.string()), ("fact_id", pa.string())])
_ARCHIVE_SCHEMA = pa.schema([("url", pa.string()), ("captured", pa.date32()), ("markdown", pa.string())])
_REJECT_SCHEMA = pa.schema([("url", pa.string()), ("kind", pa.string()), ("title", pa.string()), ("attempts", pa.int32()),
                            ("problems", pa.list_(pa.string()))])


@dataclass
class RenderReport:
    """What a render did: pages per kind and per outcome, tokens, cache hits and time."""

    backend: str
    model: str | None
    pages: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    accepted: int = 0  # written by the backend and passed validation (first try or after retries)
    retried: int = 0  # needed more than one attempt, whatever the outcome
    accepted_after_retry: int = 0
    fallback: int = 0  # failed every attempt; the template page was kept instead
    rejected: int = 0  # failed every attempt and dropped (listed in the `rejected` table)
    resumed_shards: int = 0
    shards: int = 0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase: pages (plan + write shards), store, report, index
    llm: dict = field(default_factory=dict)
    variety: dict = field(default_factory=dict)  # sentence skeletons and words per page kind (web/report.py)
    content: str = ""  # a digest of every page's URL and text and of page_facts (DuckDB files differ byte-wise run to run)

    @property
    def prefix_cache_share(self) -> float:
        pt = self.llm.get("prompt_tokens", 0)
        return self.llm.get("cached_tokens", 0) / pt if pt else 0.0

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["prefix_cache_share"] = round(self.prefix_cache_share, 4)
        return d


def count_pages(view: WorldView) -> int:
    """The number of pages `plan_pages` will yield, from SQL counts (for progress bars)."""
    total = 0
    con = view.con
    for t, et in view.world.types.items():
        n = len(view.ids[t])
        total += n * (int(et.pages.article) + int(et.pages.profile is not None))
        wanted = news_predicates(view, t)
        if wanted:
            preds = ", ".join(f"'{p}'" for p in sorted(wanted))
            total += con.execute(f"SELECT count(*) FROM facts WHERE subject_type = '{t}' AND predicate IN ({preds}) "
                             f"AND (value_type = 'date' OR valid_from IS NOT NULL)").fetchall()[0][0]
        for d in et.pages.directories:
            total += con.execute(f"SELECT coalesce(sum((n + {d.page_size} - 1) // {d.page_size}), 0) FROM "
                             f"(SELECT count(*) AS n FROM facts WHERE subject_type = '{t}' AND predicate = '{d.by}' GROUP BY value)").fetchall()[0][0]
        if et.pages.article:  # full lists behind an article's 'N of M' sections that no directory covers
            for r, rs in view.relations.items():
                if rs.target != t or any(d.by == r for d in view.world.types[rs.source].pages.directories):
                    continue
                total += con.execute(
                    "SELECT coalesce(sum((n + 19) // 20), 0) FROM (SELECT count(*) AS n FROM facts WHERE predicate = ? "
                    "AND value_type = 'entity' GROUP BY value) WHERE n > ?", [r, view.options.max_list_items]).fetchall()[0][0]
    parts = view.part_lists()
    if parts is not None:  # the per-part lists
        for counts in (parts.counts, parts.former_counts):
            total += sum(-(-n // PART_PAGE_SIZE) for listed in counts.values() for t, n in listed if t not in parts.declared)
        total += max(1, -(-len(view.ids[parts.root]) // PART_PAGE_SIZE))  # the list of every part
    return int(total)


def _fingerprint(info, options: RenderOptions, backend: str, model: str | None) -> str:
    """Shards from a previous run are reused only for the same world and the same settings."""
    key = {"world": info.manifest.get("resolved"), "seed": info.manifest.get("seed"), "counts": info.manifest.get("counts"),
           "options": json.loads(options.model_dump_json()), "backend": backend, "model": model,
           "worldforge": package_versions()["worldforge"]}
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _batches(pages: Iterator[Page], size: int) -> Iterator[list[Page]]:
    while batch := list(islice(pages, size)):
        yield batch


def render_world(world_path: str | Path, options: RenderOptions | None = None, *, backend: str | None = None,
                 model: str | None = None, force: bool = False, llm=None,
                 on_progress: Callable[[str, int, int], None] | None = None) -> RenderReport:
    """Render every page of a planned world and index them. `backend`/`model` override the
    spec's `stages.render`; `llm` lets a caller reuse a running vLLM engine."""
    world_path = Path(world_path)
    info = open_world(world_path)
    options = options or info.world.spec.stages.render
    backend = backend or options.backend
    model = model or options.model
    if backend not in ("template", "vllm"):
        raise RenderError(f"unknown backend {backend!r}; choose template or vllm")
    if is_rendered(world_path) and not force:
        raise RenderError(f"{world_path} is already rendered; pass --force to render it again")
    t0 = time.perf_counter()
    progress = on_progress or (lambda stage, done, total: None)

    own_llm = None
    if backend == "vllm" and llm is None:
        llm = own_llm = load_llm(options, model)  # before any folder is made: a bad model leaves nothing behind
    partial = world_path / PARTIAL_DIR
    fp = _fingerprint(info, options, backend, model)
    marker = partial / "fingerprint"
    if partial.exists() and (not marker.is_file() or marker.read_text() != fp):
        shutil.rmtree(partial)  # left by a render with other settings or another worldforge: start over
    (partial / "shards").mkdir(parents=True, exist_ok=True)
    marker.write_text(fp)

    view = WorldView(info, options)
    try:
        template = TemplateWriter(view)
        writer: TemplateWriter | VLLMWriter = template
        if backend == "vllm":
            writer = VLLMWriter(view, options, llm, template)
        report = RenderReport(backend=backend, model=model if backend == "vllm" else None)
        stats = WriterStats()
        total = count_pages(view)
        progress("render", 0, total)
        bar = _Progress(lambda n: progress("render", n, total))
        if backend == "template":  # shards planned and written where they run (Ray tasks under --ray)
            _template_shards(view, template, partial, report, stats, bar, str(world_path), options)
        else:  # the vLLM engine runs in this process: pages planned here, written in batch_size shards
            _llm_shards(view, writer, template, partial, options.batch_size, report, stats, bar)
        if report.shards == 0:  # a world without pages still gets (empty) tables
            _render_shard(writer, template, [], partial / "shards" / "00000")
    finally:
        view.close()
        if own_llm is not None:
            close_llm(own_llm)
    del view, template, writer  # every entity's names and URLs: not needed by the merge and the index
    release_memory()

    t1 = time.perf_counter()
    # The shard indexes are joined on a thread beside the store and the report: tantivy's merge
    # keeps one core busy without the GIL, and those need the other.
    parts = sorted((partial / "shards").glob("*.index"))
    joined = Background(join_indexes, parts, partial / "index", language=info.world.spec.language)
    try:
        progress("store", 0, 1)
        _collect(partial, report)
        progress("store", 1, 1)
        from .report import web_report

        release_memory()  # the store's buffers
        t2 = time.perf_counter()
        report.variety = web_report(partial, language=info.world.spec.language)
        t3 = time.perf_counter()
        progress("index", 0, 1)
        indexed = joined.result()
    except Exception:
        joined.wait()  # no merge left writing into the folder a retry starts over in
        raise
    if indexed != report.pages:
        raise RenderError(f"the shard indexes in {partial / 'shards'} do not hold every page; delete {partial} "
                          "(the unfinished render's work) and render again")
    progress("index", 1, 1)
    # index: the join's time beyond the store and the report, which ran beside it
    report.phases = {"pages": round(t1 - t0, 3), "store": round(t2 - t1, 3), "report": round(t3 - t2, 3),
                     "index": round(time.perf_counter() - t3, 3)}
    report.llm = stats.as_dict() if backend == "vllm" else {}
    report.seconds = round(time.perf_counter() - t0, 3)
    manifest = {"status": "complete", "world": info.manifest.get("name"), "seed": info.manifest.get("seed"),
                "files": folder_digests(partial, [PAGES_DB, PAGES_DIR]),
                "fingerprint": fp, "options": json.loads(options.model_dump_json()), "report": report.as_dict(),
                "versions": package_versions(), "rendered_at_as_of": str(info.world.spec.as_of)}
    write_atomic(partial / REPORT_FILE, json.dumps(manifest, indent=2, sort_keys=True, default=str))
    final = web_dir(world_path)
    swap_into_place(partial, final)
    # Shards go only once the finished folder is in place (an interrupt before that resumes).
    shutil.rmtree(final / "shards")
    (final / "fingerprint").unlink()
    return report


class _Progress:
    def __init__(self, report):
        self.done, self.report = 0, report

    def __call__(self, n: int) -> None:
        self.done += n
        self.report(self.done)


def _llm_shards(view, writer, template, partial: Path, size: int, report: RenderReport, stats: WriterStats, bar) -> None:
    for k, batch in enumerate(_batches(plan_pages(view), size)):
        shard = partial / "shards" / f"{k:05d}"
        stats_file = shard.with_suffix(".json")
        key = {"first_url": batch[0].url, "last_url": batch[-1].url, "pages": len(batch)}
        previous = json.loads(stats_file.read_text()) if stats_file.is_file() else None
        if previous is not None and previous.get("key") == key and _indexed(shard):  # finished by an earlier, interrupted run
            report.resumed_shards += 1
            stats.merge(previous)
        else:
            shard_stats = _render_shard(writer, template, batch, shard) | {"key": key}
            stats.merge(shard_stats)
            write_atomic(stats_file, json.dumps(shard_stats))
        report.shards += 1
        bar(len(batch))


def _template_shards(view: WorldView, template: TemplateWriter, partial: Path, report: RenderReport, stats: WriterStats,
                     bar, world_path: str, options: RenderOptions) -> None:
    """Plan and write every shard (`shards.plan_shards`): in this process, or as Ray tasks that
    each open the world themselves; results are taken in shard order, and a shard whose news
    URLs clash with an earlier shard's is planned again here, as the serial plan would."""
    shards = plan_shards(view)
    paths = [partial / "shards" / f"{k:05d}" for k in range(len(shards))]
    previous: dict[int, dict] = {}
    for k, (sh, path) in enumerate(zip(shards, paths)):
        f = path.with_suffix(".json")
        old = json.loads(f.read_text()) if f.is_file() else None
        if old is not None and old.get("key") == sh.key() and _indexed(path):  # finished by an earlier, interrupted run
            previous[k] = old
    todo = [(sh, str(path)) for k, (sh, path) in enumerate(zip(shards, paths)) if k not in previous]
    ex = current()
    if isinstance(ex, Local):
        results = (_plan_and_write(view, template, sh, Path(p)) for sh, p in todo)
    else:
        results = ex.map(_template_shard, todo, world_path, options.model_dump_json())
    news = NewsURLs()
    for k, (sh, path) in enumerate(zip(shards, paths)):
        if k in previous:
            res = previous[k]
            report.resumed_shards += 1
        else:
            res = next(results) | {"key": sh.key()}
        if not news.check(res["news"]):  # a news URL clash with an earlier shard: plan it again knowing theirs
            res = _plan_and_write(view, template, sh, path, news.taken) | {"key": sh.key()}
            if not news.check(res["news"]):
                raise RenderError(f"news URLs of shard {k} could not be made unique; report a bug")
        if k not in previous:
            write_atomic(path.with_suffix(".json"), json.dumps(res))
        stats.merge(res)
        report.shards += 1
        bar(res["pages"])


def _plan_and_write(view: WorldView, template: TemplateWriter, shard: Shard, path: Path, taken=()) -> dict:
    seen = LoggedSet(taken)  # filled as the pages are planned, while they are written
    return _render_shard(template, template, shard_pages(view, shard, seen), path) | {"news": seen.log}


def _template_shard(job: tuple[Shard, str], world_path: str, options_json: str) -> dict:
    """A Ray task: plan and write one shard (as the in-process render does), with the world view
    and writer the worker keeps for the render's later shards (`cluster.worker_state`)."""
    shard, path = job
    db = Path(world_path) / "world.duckdb"
    key = ("render", world_path, db.stat().st_mtime_ns, db.stat().st_size, options_json)

    def make() -> TemplateWriter:
        return TemplateWriter(WorldView(open_world(world_path), RenderOptions.model_validate_json(options_json)))

    template = worker_state(key, make, lambda t: t.view.close())
    return _plan_and_write(template.view, template, shard, Path(path))


def _indexed(shard: Path) -> bool:
    return (shard.with_suffix(".index") / FORMAT_FILE).is_file()


# What the store's queries may hold (the sorts of the small tables, the URL check over every page)
# before spilling to disk.
STORE_MEMORY = "1GB"
SHARD_CHUNK = 4096  # pages written and indexed at a time: a shard's pages are never all in memory at once


class _ParquetSink:
    """Row groups appended to `path` (via a temporary file, renamed into place by `close`)."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path, self.tmp = path, path.with_name(path.name + ".tmp")
        self.writer = pq.ParquetWriter(self.tmp, schema, compression="zstd")

    def write(self, table: pa.Table) -> None:
        if table.num_rows:
            self.writer.write_table(table)

    def close(self) -> None:
        self.writer.close()
        os.replace(self.tmp, self.path)

    def abandon(self) -> None:
        """After a failure: the temporary file goes (the shard is written again on resume). A writer
        an interrupt broke mid-write may fail to close; it is marked closed all the same, or its
        `__del__` would try again at exit and print that failure's traceback."""
        try:
            self.writer.close()
        finally:
            self.writer.is_open = False
            self.tmp.unlink(missing_ok=True)


def _render_shard(writer, template: TemplateWriter, pages: Iterable[Page], shard: Path) -> dict:
    """Write one shard's pages (a list, or a generator that plans them as they are written)
    SHARD_CHUNK at a time into its Parquet files and its own search index (built here, in the
    Ray worker under --ray; the stage joins them). Returns the shard's counts and writer stats."""
    sinks = {"pages": _ParquetSink(shard.with_suffix(".pages.parquet"), _PAGE_SCHEMA),
             "facts": _ParquetSink(shard.with_suffix(".facts.parquet"), _FACT_SCHEMA),
             "rejected": _ParquetSink(shard.with_suffix(".rejected.parquet"), _REJECT_SCHEMA),
             "archives": _ParquetSink(shard.with_suffix(".archives.parquet"), _ARCHIVE_SCHEMA)}
    index = ShardIndex(shard.with_suffix(".index"), template.lang)
    from .llm import WrittenPage

    outcome: dict[str, int] = {}
    total = 0
    llm = isinstance(writer, VLLMWriter)
    if llm:
        writer.stats = WriterStats()  # this shard's accounting only; the stage sums the shards
    try:
        for batch in _batches(iter(pages), SHARD_CHUNK):
            total += len(batch)
            written = writer.write_batch(batch) if llm else [WrittenPage(template.write(p), "template", 0) for p in batch]
            tables = _shard_tables(template, batch, written)
            for name, sink in sinks.items():
                sink.write(tables[name])
            index.add(tables["pages"])
            for w in written:
                outcome[w.source] = outcome.get(w.source, 0) + 1
                if w.source == "vllm" and w.attempts > 1:
                    outcome["retried"] = outcome.get("retried", 0) + 1
    except BaseException:  # an interrupt or a failed page: no temporary files left open or behind
        for sink in sinks.values():
            try:
                sink.abandon()
            except Exception:  # noqa: BLE001 - the original error is the one to report
                pass
        raise
    for sink in sinks.values():
        sink.close()
    index.close()
    return (writer.stats.as_dict() if llm else {}) | {"outcome": outcome, "pages": total}


def _shard_tables(template: TemplateWriter, batch: list[Page], written: list) -> dict[str, pa.Table]:
    kept = [(p, w) for p, w in zip(batch, written) if w.markdown is not None]
    dropped = [(p, w) for p, w in zip(batch, written) if w.markdown is None]
    pages = pa.table({
        "url": [p.url for p, _ in kept], "kind": [p.kind for p, _ in kept], "site": [p.site for p, _ in kept],
        "title": [p.title for p, _ in kept], "date": [p.date for p, _ in kept], "subject": [p.subject for p, _ in kept],
        "entity_ids": [list(p.entity_ids) for p, _ in kept], "markdown": [w.markdown for _, w in kept],
        "source": [w.source for _, w in kept], "attempts": [w.attempts for _, w in kept],
    }, schema=_PAGE_SCHEMA)
    facts = pa.table({"url": [p.url for p, _ in kept for _ in p.facts], "fact_id": [f.fact_id for p, _ in kept for f in p.facts]},
                     schema=_FACT_SCHEMA)
    rejected = pa.table({"url": [p.url for p, _ in dropped], "kind": [p.kind for p, _ in dropped],
                         "title": [p.title for p, _ in dropped], "attempts": [w.attempts for _, w in dropped],
                         "problems": [w.problems for _, w in dropped]}, schema=_REJECT_SCHEMA)
    archived = [(p, p.archive) for p, _ in kept if p.archive is not None]
    archives = pa.table({
        "url": [p.url for p, _ in archived], "captured": [a[0] for _, a in archived],
        "markdown": [template.write(Page(p.url, p.kind, p.site, p.title, a[0], p.subject, p.entity_ids, a[1], {"more": {}}))
                     for p, a in archived],
    }, schema=_ARCHIVE_SCHEMA)
    return {"pages": pages, "facts": facts, "rejected": rejected, "archives": archives}


def _collect(partial: Path, report: RenderReport) -> None:
    """Put the shards' pages in place and fill the report's page counts. The pages and their
    provenance stay the Parquet files the shards wrote: they are linked into `pages/` (not
    copied; the shards keep theirs, so an interrupted store starts over) and read through
    views (`store.open_pages`). Only the small tables are copied into pages.duckdb, sorted by
    URL for lookups: the rejected pages and the archived captures."""
    import duckdb

    shards = partial / "shards"

    def files(kind: str) -> list[Path]:  # the shards' files of one table, in shard order
        return sorted(shards.glob(f"*.{kind}.parquet"))

    folder = partial / PAGES_DIR
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    for f in files("pages") + files("facts"):
        link_or_copy(f, folder / f.name)
    db = partial / PAGES_DB
    if db.exists():
        db.unlink()
    con = duckdb.connect(str(db))
    try:
        con.execute(f"SET memory_limit = '{STORE_MEMORY}'")  # the sorts spill to disk rather than filling memory
        con.execute("SET enable_progress_bar = false")
        # File lists, not glob patterns pasted into SQL: a path with quotes or brackets stays a path.
        con.execute("CREATE TABLE rejected AS SELECT * FROM read_parquet(?) ORDER BY url", [list(map(str, files("rejected")))])
        # Archived captures of articles (the entity's earlier state), served as stale copies; not indexed.
        con.execute("CREATE TABLE archives AS SELECT * FROM read_parquet(?) ORDER BY url", [list(map(str, files("archives")))])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    con = open_pages(partial, f"delete {partial} (the unfinished render's work) and render again")
    try:
        con.execute(f"SET memory_limit = '{STORE_MEMORY}'")
        dup = con.execute("SELECT url, count(*) FROM pages GROUP BY url HAVING count(*) > 1 ORDER BY url LIMIT 3").fetchall()
        if dup:
            raise RenderError(f"two pages share a URL, e.g. {dup[0][0]}; give the pack's profile.url template a unique "
                              f"attribute, or report a bug")
        report.content = "{}:{:016x}:{:016x}".format(*con.execute(
            "SELECT (SELECT count(*) FROM pages), (SELECT coalesce(bit_xor(hash(url, markdown)), 0) FROM pages), "
            "(SELECT coalesce(bit_xor(hash(url, fact_id)), 0) FROM page_facts)").fetchone())
        report.pages = con.execute("SELECT count(*) FROM pages").fetchall()[0][0]
        counted = dict(con.execute("SELECT kind, count(*) FROM pages GROUP BY kind").fetchall())
        report.kinds = {k: counted.get(k, 0) for k in KINDS}
        src = dict(con.execute("SELECT source, count(*) FROM pages GROUP BY source").fetchall())
        report.accepted = src.get("vllm", 0)
        report.fallback = src.get("fallback", 0)
        report.rejected = con.execute("SELECT count(*) FROM rejected").fetchall()[0][0]
        report.accepted_after_retry = con.execute("SELECT count(*) FROM pages WHERE source = 'vllm' AND attempts > 1").fetchall()[0][0]
        report.retried = con.execute("SELECT (SELECT count(*) FROM pages WHERE attempts > 1) "
                                     "+ (SELECT count(*) FROM rejected WHERE attempts > 1)").fetchall()[0][0]
    finally:
        con.close()
