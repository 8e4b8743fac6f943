"""Tasks-stage benchmark on one core: a world of about 100k entities (worlds/large.yaml
scaled, as in plan.py) is planned and rendered with the template backend, then the tasks
stage runs as `worldforge tasks` does: table tasks and multi-hop questions in the default
2:1 mix, with gold tables, the world-level split and the full reachability proof. The
table gives tasks kept per second for the whole stage (its setup included: the world's
arrays, parts and link graph), and the scorer's throughput on the table tasks.

    python benchmarks/tasks.py                    # 100k entities, 1,000 tasks
    python benchmarks/tasks.py --large            # also worlds/large.yaml itself (~1M entities; long, a lot of CPU)
    python benchmarks/tasks.py --entities 10000 --tasks 300   # a quick run
    python benchmarks/tasks.py --world build/bench100000      # a world planned and rendered already
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]

from plan import LARGE, scaled_spec  # noqa: E402


def _md(header, rows) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])


def build(entities: int | None, tmp: Path) -> Path:
    """Plan and render a world: large.yaml scaled to `entities`, or large.yaml itself (None)."""
    from worldforge.web import render_world
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    spec = LARGE if entities is None else scaled_spec(entities, tmp)
    t0 = time.perf_counter()
    info = plan_world(load_world(spec), tmp / "build", force=True)
    t_plan = time.perf_counter() - t0
    t0 = time.perf_counter()
    rep = render_world(info.path)
    print(f"built {info.path}: plan {t_plan:.1f} s, render {time.perf_counter() - t0:.1f} s, {rep.pages:,} pages", flush=True)
    return info.path


def run(world: Path, n_tasks: int) -> dict:
    from worldforge.tasks import generate_tasks
    from worldforge.world.options import TasksOptions
    from worldforge.world.store import open_world

    info = open_world(world)
    n_table = round(n_tasks * 2 / 3)
    opt = TasksOptions(table=n_table, multihop=n_tasks - n_table)
    t0 = time.perf_counter()
    r = generate_tasks(world, opt, force=True)
    secs = time.perf_counter() - t0
    pages = int(json.loads((world / "web" / "render.json").read_text())["report"].get("pages", 0))
    kept = sum(r.kept.values())
    return {"world": world.name, "entities": sum(info.manifest["counts"].values()), "pages": pages, "kept": kept,
            "drawn": sum(r.drawn.values()), "seconds": secs, "tasks_s": kept / secs, "timings": r.timings,
            "table": r.kept.get("table", 0), "multihop": r.kept.get("multihop", 0), "searches": r.searches}


def score_throughput(world: Path) -> str:
    from worldforge.tasks import read_tasks
    from worldforge.tasks.scoring import read_gold_csv, score_files, world_aliases

    tasks_dir = world / "tasks"
    recs = [r for r in read_tasks(tasks_dir) if r["kind"] == "table"]
    lines = []
    for rec in recs:
        header, gold = read_gold_csv((tasks_dir / "gold" / f"{rec['instance_id']}.csv").read_text())
        lines.append({"instance_id": rec["instance_id"], "response": _md(header, gold)})
        damaged = [r[:] for r in gold[1:]]
        if damaged:
            damaged[0][-1] = "wrong"
        lines.append({"instance_id": rec["instance_id"], "response": _md(header, damaged)})
    aliases = world_aliases(world)
    with tempfile.TemporaryDirectory() as tmp:
        resp = Path(tmp) / "responses.jsonl"
        n, t0 = 0, time.perf_counter()
        for half in (lines[0::2], lines[1::2]):
            resp.write_text("".join(json.dumps(x) + "\n" for x in half))
            scores, _ = score_files(tasks_dir, resp, aliases)
            n += len(scores)
        secs = time.perf_counter() - t0
    return f"scorer: {n:,} responses to table tasks in {secs:.2f} s = {n / secs:,.0f} responses/s (files read, keys aligned)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--tasks", type=int, default=1000, help="tasks to keep per world (two tables per multi-hop question)")
    ap.add_argument("--large", action="store_true", help="also worlds/large.yaml itself (~1M entities)")
    ap.add_argument("--world", type=Path, action="append", default=[], help="a world planned and rendered already (repeatable)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        worlds = list(args.world)
        if not worlds:
            worlds.append(build(args.entities, Path(tmp) / "scaled"))
            if args.large:
                worlds.append(build(None, Path(tmp) / "large"))
        for w in worlds:
            rows.append(run(w, args.tasks))
            print(f"  {w.name}: {rows[-1]['kept']:,} tasks in {rows[-1]['seconds']:.1f} s", flush=True)
        print()
        print("| world | entities | pages | tasks (table + multi-hop) | drawn | seconds | setup s | table s | multi-hop s | tasks/s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            t = r["timings"]
            print(f"| {r['world']} | {r['entities']:,} | {r['pages']:,} | {r['kept']:,} ({r['table']:,} + {r['multihop']:,}) | "
                  f"{r['drawn']:,} | {r['seconds']:.1f} | {t.get('setup', 0):.1f} | {t.get('table', 0):.1f} | "
                  f"{t.get('multihop', 0):.1f} | {r['tasks_s']:.1f} |")
        print()
        print(score_throughput(worlds[0]))


if __name__ == "__main__":
    main()
