"""The web folder of a world, `<world>/web/`: where the render stage puts its pages, index and
report, how later stages find out whether a world is rendered, and how they open its pages
(`open_pages`)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DamagedStateError, NotRenderedError
from ..plumbing import connect_duckdb, read_json, truncation
from ..world import open_world

WEB_DIR = "web"
PARTIAL_DIR = ".web.partial"
PAGES_DB = "pages.duckdb"
PAGES_DIR = "pages"  # the pages and their provenance, as the render's shards wrote them (Parquet)
REPORT_FILE = "render.json"


def page_files(web: Path, kind: str) -> list[Path]:
    """The Parquet files of `kind` ("pages" or "facts") in `<web>/pages/`, in page plan order."""
    return sorted((Path(web) / PAGES_DIR).glob(f"*.{kind}.parquet"))


def parquet_list(files: list[Path]) -> str:
    """A SQL list literal of file paths (views cannot take prepared parameters)."""
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def pages_stating(web: Path, fact_ids: list[str]) -> set[str]:
    """The pages (URLs) that state any of `fact_ids`, by the render's provenance (`page_facts`)."""
    import duckdb

    files = page_files(web, "facts")
    if not fact_ids or not files:
        return set()
    con = duckdb.connect()
    try:
        con.execute("CREATE TEMP TABLE wanted AS SELECT unnest(?::VARCHAR[]) AS fact_id", [sorted(set(fact_ids))])
        return {r[0] for r in con.execute(f"SELECT DISTINCT url FROM read_parquet({parquet_list(files)}) SEMI JOIN wanted "
                                          "USING (fact_id)").fetchall()}
    finally:
        con.close()


def held_out_facts(records: list[dict]) -> dict[str, list[str]]:
    """Per held-out split the tasks stage posed tasks in (validation, test): the gold facts of
    its tasks (a name is how an entity is found, not a gold fact)."""
    out: dict[str, set[str]] = {}
    for r in records:
        s = r.get("split", "train")
        if s != "train":
            out.setdefault(s, set()).update(f for f in r.get("evidence", {}).get("facts", []) if not f.endswith("/name"))
    return {s: sorted(f) for s, f in out.items()}


def open_pages(web: Path, fix: str | None = None):
    """A read-only DuckDB connection to a rendered web's pages: `pages.duckdb` (the `rejected`
    pages and the `archives` of earlier captures) with the views `pages` and `page_facts` over
    the Parquet files in `<web>/pages/` (read where they are: the render does not copy them)."""
    web = Path(web)
    fix = fix or rerender(web.parent)
    pages, facts = page_files(web, "pages"), page_files(web, "facts")
    if not pages or len(pages) != len(facts):
        raise NotRenderedError(f"{web} holds no page files in {web / PAGES_DIR} (written by another worldforge "
                               f"version, or deleted); {fix}")
    import pyarrow.parquet as pq

    for f in pages + facts:  # each file's footer (its schema and row groups): a few KB, read in well under a ms
        try:
            pq.read_metadata(f)
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors for a damaged file vary (OSError, ArrowInvalid)
            raise DamagedStateError(f"{f} is damaged ({str(exc).splitlines()[0][:160]}); {fix}") from None
    con = connect_duckdb(web / PAGES_DB, fix)
    try:
        con.execute("SET enable_progress_bar = false")  # bulk reads run for seconds at scale; callers show progress
        con.execute(f"CREATE TEMP VIEW pages AS SELECT * FROM read_parquet({parquet_list(pages)})")
        con.execute(f"CREATE TEMP VIEW page_facts AS SELECT * FROM read_parquet({parquet_list(facts)})")
    except Exception as exc:  # noqa: BLE001 - a file pyarrow read but DuckDB cannot, whatever DuckDB calls it
        con.close()
        raise DamagedStateError(f"the page files in {web / PAGES_DIR} are damaged ({str(exc).splitlines()[0][:160]}); "
                                f"{fix}") from None
    return con


def damaged_pages(web: Path, exc: Exception) -> DamagedStateError:
    """The error for a read of the page files that failed inside a file (`exc`: what the reader
    said, which may not name the file): the first file pyarrow cannot read whole is named."""
    import pyarrow.parquet as pq

    web = Path(web)
    for f in page_files(web, "pages") + page_files(web, "facts"):
        try:
            pq.read_table(f)
        except Exception as bad:  # noqa: BLE001 - pyarrow's errors for a damaged file vary
            return DamagedStateError(f"{f} is damaged ({str(bad).splitlines()[0][:160]}); {rerender(web.parent)}")
    return DamagedStateError(f"the page files in {web / PAGES_DIR} are damaged ({str(exc).splitlines()[0][:160]}); "
                             f"{rerender(web.parent)}")


def web_dir(world_path: Path) -> Path:
    return Path(world_path) / WEB_DIR


def is_rendered(world_path: Path) -> bool:
    f = web_dir(world_path) / REPORT_FILE
    try:
        return json.loads(f.read_text()).get("status") == "complete"
    except (OSError, ValueError):
        return False


def rerender(world_path: Path) -> str:
    return f"render it again with `worldforge render {world_path} --force` (or `worldforge run SPEC`)"


def require_rendered(world_path: str | Path) -> Path:
    """The web folder of a rendered world, or a clear error saying what to run. The page
    database and page files must be the ones the render wrote (none missing or shorter than
    render.json records)."""
    path = Path(world_path)
    open_world(path)  # a missing or unplanned world gets the planner's message
    if not is_rendered(path):
        hint = " (an interrupted render can be resumed with the same command)" if (path / PARTIAL_DIR).exists() else ""
        if (web_dir(path) / REPORT_FILE).is_file():
            read_json(web_dir(path) / REPORT_FILE, rerender(path))  # a damaged report says so
        raise NotRenderedError(f"{path} has no rendered pages yet; run `worldforge render {path}`{hint}")
    web = web_dir(path)
    recorded = read_json(web / REPORT_FILE, rerender(path)).get("files", {})
    for name in [PAGES_DB] + [n for n in recorded if n.startswith(PAGES_DIR + "/")]:
        cut = truncation(web / name, recorded.get(name, {}))
        if cut:
            raise DamagedStateError(f"{web / name} is damaged ({cut}); {rerender(path)}")
    return web


def read_report(world_path: str | Path) -> dict:
    return read_json(require_rendered(world_path) / REPORT_FILE, rerender(Path(world_path)))
