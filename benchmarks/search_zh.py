"""Search over a Chinese world beside the same world in English, pinned to one core.

Plans worlds/demo.yaml and worlds/demo_zh.yaml (same packs, counts and seed; the Chinese one
with Chinese names and `language: zh`, indexed with one token per Han character and queried
with character pairs), renders both with the template writer and measures, per language:
the tantivy index build, then p50/p99 latency of `web_search` calls (10 results with
snippets, formatted in the AgentWorld layout) and queries/s over queries made from entity
names in each language's usual shapes ("X founded" / "X的成立日期", "companies headquartered
in X" / "总部位于X的公司"), and how often the entity named by a name-only query is the first
result.

    python benchmarks/search_zh.py                 # about 16k pages per language
    python benchmarks/search_zh.py --queries 500   # a quicker run
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
sys.path[:0] = [str(REPO)]

SHAPES = {
    "en": ("{n}", "{n} founded", "{n} headquarters", "companies headquartered in {n}", "{n} chief executive",
           "who founded {n}", "{n} population", "{n} news"),
    "zh": ("{n}", "{n}的成立日期", "{n}总部", "总部位于{n}的公司", "{n}的首席执行官", "{n}的创始人是谁", "{n}人口", "{n} 新闻"),
}


def names(world_path: Path) -> list[str]:
    import duckdb

    with duckdb.connect(str(world_path / "world.duckdb"), read_only=True) as con:
        return [r[0] for r in con.sql("SELECT name FROM company UNION ALL SELECT name FROM person "
                                      "UNION ALL SELECT name FROM city ORDER BY hash(name) LIMIT 4000").fetchall()]


def measure(spec: Path, tmp: Path, n_queries: int) -> dict:
    from worldforge.web import render_world
    from worldforge.web.search import SearchEngine
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    world = load_world(spec)
    info = plan_world(world, tmp / "build")
    stages: dict[str, float] = {}
    last = {"stage": None, "t": time.perf_counter()}

    def on_progress(stage, done, total):
        now = time.perf_counter()
        if stage != last["stage"]:
            if last["stage"]:
                stages[last["stage"]] = now - last["t"]
            last.update(stage=stage, t=now)

    report = render_world(info.path, on_progress=on_progress)
    stages[last["stage"]] = time.perf_counter() - last["t"]
    lang = world.spec.language
    ns = names(info.path)
    shapes = SHAPES[lang]
    qs = [shapes[i % len(shapes)].format(n=ns[(i * 7919) % len(ns)]) for i in range(n_queries)]
    engine = SearchEngine.for_world(info.path)
    engine.search_cache = 0  # every call measured, none from the cache
    for q in qs[:100]:  # warm the page cache and the OS
        engine.web_search(q)
    lat = []
    t0 = time.perf_counter()
    for q in qs:
        s = time.perf_counter()
        engine.web_search(q)
        lat.append((time.perf_counter() - s) * 1000)
    elapsed = time.perf_counter() - t0
    first = sum((engine.search(n)[0] or [{}])[0].get("title") == n for n in ns[:300])
    engine.close()
    lat.sort()
    return {"pages": report.pages,
            "index": stages.get("index", 0.0), "p50": statistics.median(lat), "p99": lat[int(0.99 * (len(lat) - 1))],
            "qps": len(lat) / elapsed, "first": first / min(300, len(ns))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=2000)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core for everything below
    out = {}
    for lang, spec in (("en", REPO / "worlds" / "demo.yaml"), ("zh", REPO / "worlds" / "demo_zh.yaml")):
        with tempfile.TemporaryDirectory() as tmp:
            out[lang] = measure(spec, Path(tmp), args.queries)
    print(f"demo world, {args.queries:,} web_search calls per language (no result cache); one core\n")
    print(f"{'measure':<40}{'en':>12}{'zh':>12}")
    rows = [("pages", "{:,}", "pages"), ("tantivy index build (s)", "{:.2f}", "index"),
            ("search p50 latency (ms)", "{:.2f}", "p50"), ("search p99 latency (ms)", "{:.2f}", "p99"),
            ("search queries/s", "{:,.0f}", "qps"), ("name query: entity ranked first", "{:.0%}", "first")]
    for label, fmt, key in rows:
        print(f"{label:<40}{fmt.format(out['en'][key]):>12}{fmt.format(out['zh'][key]):>12}")


if __name__ == "__main__":
    main()
