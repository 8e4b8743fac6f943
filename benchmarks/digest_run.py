"""Digest every output of a worldforge run, so two runs (two commits, two machines, with and
without a flag) can be compared file by file:

    python benchmarks/digest_run.py build/demo exports/demo/v1 > a.txt
    ... change something, run again ...
    python benchmarks/digest_run.py build/demo exports/demo/v1 > b.txt && diff a.txt b.txt

DuckDB files are digested table by table over their content (a DuckDB file's bytes depend on
its write history, not only on what it holds); JSON reports lose their wall-clock fields
(seconds, elapsed times, timings) and the byte hashes they record of DuckDB files and reports; every other file is hashed as bytes. Prints one line per file or
table: `<sha256 prefix>  <path>`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

CLOCK_KEYS = {"seconds", "elapsed", "wall_seconds", "started_at", "finished_at", "timings", "phases"}
VOLATILE_FILES = (".duckdb", "report.json", "render.json", "world.json")


def _strip_clock(x):
    """A JSON report without wall-clock fields, and without the recorded byte hashes of DuckDB
    files and of reports (tables are digested by content; reports hold times)."""
    if isinstance(x, dict):
        return {k: (f"<{k}>" if k.endswith(VOLATILE_FILES) or k == "db" else _strip_clock(v)) for k, v in x.items()
                if k not in CLOCK_KEYS}
    if isinstance(x, list):
        return [_strip_clock(v) for v in x]
    return x


def _duckdb_digests(path: Path) -> dict[str, str]:
    import duckdb

    out = {}
    with duckdb.connect(str(path), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                           "WHERE table_type = 'BASE TABLE' ORDER BY table_name").fetchall()]
        for t in names:
            q = '"' + t.replace('"', '""') + '"'
            n, h = con.execute(f"SELECT count(*), md5(coalesce(string_agg(r, chr(10) ORDER BY r), '')) "
                               f"FROM (SELECT CAST(x AS VARCHAR) AS r FROM {q} AS x)").fetchone()
            out[t] = f"{n}:{h}"
    return out


def digest(root: Path) -> list[tuple[str, str]]:
    rows = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.endswith(".lock"):
            continue
        rel = str(p.relative_to(root))
        if "/index/" in f"/{rel}" :  # tantivy segment files are named by random UUIDs: digest the pages instead
            continue
        if p.suffix == ".duckdb":
            for t, h in _duckdb_digests(p).items():
                rows.append((hashlib.sha256(h.encode()).hexdigest()[:16], f"{rel}::{t}"))
            continue
        data = p.read_bytes()
        if p.suffix == ".json":
            try:
                doc = json.loads(data)
                if p.name == "run.json":  # the run record's per-file digests repeat what is digested here, by content
                    doc = {**doc, "stages": {k: {f: v for f, v in st.items() if f != "outputs"}
                                             for k, st in doc.get("stages", {}).items()}}
                data = json.dumps(_strip_clock(doc), sort_keys=True).encode()
            except ValueError:
                pass
        rows.append((hashlib.sha256(data).hexdigest()[:16], rel))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path, help="build folders of worlds and/or exported dataset folders")
    args = ap.parse_args()
    for root in args.folders:
        if not root.is_dir():
            sys.exit(f"error: {root} is not a folder")
        for h, rel in digest(root):
            print(f"{h}  {root.name}/{rel}")


if __name__ == "__main__":
    main()
