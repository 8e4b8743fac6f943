"""Tasks-stage benchmark on one core: a world of about 100k entities (worlds/large.yaml
scaled, as in plan.py) is planned and rendered with the template backend, then

- table tasks and multi-hop questions are generated with gold tables and the full
  reachability check (searches for every row and hop entity, directory discovery):
  kept tasks/s, candidates drawn/s, searches;
- the scorer scores responses to those tasks (the gold table, and a damaged copy with a
  dropped row and a wrong cell), reading the task files and gold CSVs from disk and
  aligning keys through the world's alias table: responses/s.

    python benchmarks/tasks.py                    # 100k entities
    python benchmarks/tasks.py --entities 10000   # a quick run
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

from plan import scaled_spec  # noqa: E402


def _md(header, rows) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--table", type=int, default=300, help="table tasks to keep")
    ap.add_argument("--multihop", type=int, default=300, help="multi-hop questions to keep")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from worldforge.tasks import generate_tasks, read_tasks
    from worldforge.tasks.scoring import read_gold_csv, score_files, world_aliases
    from worldforge.web import render_world
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        info = plan_world(load_world(scaled_spec(args.entities, tmp)), tmp / "build")
        t_plan = time.perf_counter() - t0
        t0 = time.perf_counter()
        rep = render_world(info.path)
        t_render = time.perf_counter() - t0
        entities = sum(info.manifest["counts"].values())
        print(f"world: {entities:,} entities, {rep.pages:,} pages (plan {t_plan:.1f} s, render {t_render:.1f} s)\n")

        rows = []
        for kind, n in (("table", args.table), ("multihop", args.multihop)):
            t0 = time.perf_counter()
            r = generate_tasks(info.path, kinds=(kind,), n_table=n, n_multihop=n, force=True)
            secs = time.perf_counter() - t0
            rows.append((kind, r.kept[kind], r.drawn[kind], r.searches, secs, r.dropped[kind]))
            if kind == "table":
                os.rename(info.path / "tasks", tmp / "table-tasks")
        print(f"{'kind':<10}{'kept':>7}{'drawn':>8}{'searches':>10}{'seconds':>9}{'tasks/s':>9}{'drawn/s':>9}")
        for kind, kept, drawn, searches, secs, _ in rows:
            print(f"{kind:<10}{kept:>7,}{drawn:>8,}{searches:>10,}{secs:>9.1f}{kept / secs:>9.1f}{drawn / secs:>9.1f}")
        for kind, *_, dropped in rows:
            print(f"  {kind} dropped: " + (", ".join(f"{k} {v:,}" for k, v in dropped.items()) or "none"))

        # scorer throughput on the table tasks just generated
        tasks_dir = tmp / "table-tasks"
        recs = read_tasks(tasks_dir)
        resp = tmp / "responses.jsonl"
        lines = []
        for rec in recs:
            header, gold = read_gold_csv((tasks_dir / "gold" / f"{rec['instance_id']}.csv").read_text())
            lines.append({"instance_id": rec["instance_id"], "response": _md(header, gold)})
            damaged = [r[:] for r in gold[1:]]
            if damaged:
                damaged[0][-1] = "wrong"
            lines.append({"instance_id": rec["instance_id"], "response": _md(header, damaged)})
        t0 = time.perf_counter()
        aliases = world_aliases(info.path)
        t_alias = time.perf_counter() - t0
        n_resp = 0
        t0 = time.perf_counter()
        for half in (lines[0::2], lines[1::2]):
            resp.write_text("".join(json.dumps(x) + "\n" for x in half))
            scores, avg = score_files(tasks_dir, resp, aliases)
            n_resp += len(scores)
        secs = time.perf_counter() - t0
        cells = sum(len(read_gold_csv((tasks_dir / "gold" / f"{r['instance_id']}.csv").read_text())[1]) * len(r["columns"])
                    for r in recs)
        print(f"\nscorer: {n_resp:,} responses ({cells * 2:,} gold cells) in {secs:.2f} s = {n_resp / secs:,.0f} responses/s "
              f"(files read, tables parsed, keys aligned); alias table of {len(aliases):,} names loaded in {t_alias:.2f} s")


if __name__ == "__main__":
    main()
