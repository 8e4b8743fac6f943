"""Template rendering and search benchmark, pinned to one core.

For each world size (worlds/large.yaml scaled down), plans the world, then measures:
- template rendering: page plan + Markdown for every page (pages/s), then the whole
  render stage (shards to Parquet, page files linked into web/pages/, tantivy index build);
- search over the resulting index: p50/p99 latency per `web_search` call (10 results with
  snippets, formatted in the AgentWorld layout) and queries/s, over queries made from
  entity names, names plus an attribute word, and directory-style phrases.

    python benchmarks/render_template.py                  # about 100k pages
    python benchmarks/render_template.py --entities 5000  # a quick run
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]

from plan import scaled_spec  # noqa: E402  (the planner benchmark's scaled worlds/large.yaml)


def queries(world_path: Path, n: int) -> list[str]:
    import duckdb

    with duckdb.connect(str(world_path / "world.duckdb"), read_only=True) as con:
        names = [r[0] for r in con.sql("SELECT name FROM company UNION ALL SELECT name FROM person "
                                       "UNION ALL SELECT name FROM city ORDER BY hash(name) LIMIT 4000").fetchall()]
    shapes = ("{n}", "{n} founded", "{n} headquarters", "companies headquartered in {n}", "{n} chief executive",
              "who founded {n}", "{n} population", "{n} news")
    return [shapes[i % len(shapes)].format(n=names[(i * 7919) % len(names)]) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=31_000, help="world size (31k entities give about 100k pages)")
    ap.add_argument("--queries", type=int, default=2000)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core for everything below
    from worldforge.web import render_world
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.web.search import SearchEngine
    from worldforge.web.template import TemplateWriter
    from worldforge.world.planner import plan_world
    from worldforge.world.store import open_world
    from worldforge.world.validate import load_world

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        info = plan_world(load_world(scaled_spec(args.entities, tmp)), tmp / "build")
        entities = sum(info.manifest["counts"].values())

        t0 = time.perf_counter()
        view = WorldView(open_world(info.path), info.world.spec.stages.render)
        t_view = time.perf_counter() - t0
        writer = TemplateWriter(view)
        t0 = time.perf_counter()
        n_pages = n_bytes = 0
        for page in plan_pages(view):
            n_bytes += len(writer.write(page))
            n_pages += 1
        t_write = time.perf_counter() - t0
        view.close()

        stages: dict[str, float] = {}
        last = {"stage": None, "t": time.perf_counter()}

        def on_progress(stage, done, total):
            now = time.perf_counter()
            if stage != last["stage"]:
                if last["stage"]:
                    stages[last["stage"]] = now - last["t"]
                last.update(stage=stage, t=now)

        t0 = time.perf_counter()
        report = render_world(info.path, on_progress=on_progress)
        t_stage = time.perf_counter() - t0
        stages[last["stage"]] = time.perf_counter() - last["t"]

        engine = SearchEngine.for_world(info.path)
        qs = queries(info.path, args.queries)
        for q in qs[:100]:  # warm caches
            engine.web_search(q)
        lat = []
        t0 = time.perf_counter()
        for q in qs:
            s = time.perf_counter()
            engine.web_search(q)
            lat.append((time.perf_counter() - s) * 1000)
        t_search = time.perf_counter() - t0
        engine.close()

    lat.sort()
    print(f"world: {entities:,} entities -> {n_pages:,} pages ({report.kinds}); one core\n")
    print(f"{'measure':<44}{'value':>14}")
    rows = [
        ("load world view (s)", f"{t_view:.2f}"),
        ("page plan + template Markdown (s)", f"{t_write:.2f}"),
        ("template rendering, pages/s", f"{n_pages / t_write:,.0f}"),
        ("  incl. loading the view, pages/s", f"{n_pages / (t_write + t_view):,.0f}"),
        ("Markdown written (MiB)", f"{n_bytes / 2**20:,.1f}"),
        ("whole render stage (s)", f"{t_stage:.2f}"),
        ("  shards (plan + write + Parquet) (s)", f"{stages.get('render', 0):.2f}"),
        ("  store (page files linked, small tables) (s)", f"{stages.get('store', 0):.2f}"),
        ("  tantivy index build (s)", f"{stages.get('index', 0):.2f}"),
        ("search queries", f"{len(lat):,}"),
        ("search p50 latency (ms)", f"{statistics.median(lat):.2f}"),
        ("search p99 latency (ms)", f"{lat[int(0.99 * (len(lat) - 1))]:.2f}"),
        ("search queries/s", f"{len(lat) / t_search:,.0f}"),
    ]
    for k, v in rows:
        print(f"{k:<44}{v:>14}")


if __name__ == "__main__":
    main()
