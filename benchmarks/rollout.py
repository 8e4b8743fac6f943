"""Rollout and export benchmark, everything pinned to one core.

For the demo world and a world of about 100k entities (worlds/large.yaml scaled, as in
plan.py), `worldforge run SPEC` is timed end to end in a fresh process (plan, render,
tasks, rollout with the oracle and the default perturbations, export). On the world it
built:

- environment steps/s: every tool call of the stored trajectories replayed through
  `Environment.execute` (search, page fetches, perturbations; no policy);
- oracle trajectories/s: the oracle policy on every task (planning, reasoning text,
  environment, scoring);
- export rows/s: `export_dataset` (SFT + RL Parquet and JSONL, WideSearch files, card,
  manifest with hashes).

    python benchmarks/rollout.py                      # demo + 100k entities
    python benchmarks/rollout.py --entities 20000     # a quicker large world
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]

from plan import scaled_spec  # noqa: E402

CLI = [sys.executable, "-c", "from worldforge.cli import main; main()"]


def timed_run(spec: Path, build: Path, out: Path) -> tuple[float, dict[str, float]]:
    t0 = time.perf_counter()
    res = subprocess.run([*CLI, "run", str(spec), "--build-dir", str(build), "--out", str(out)],
                         capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}, check=False)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"worldforge run {spec} failed:\n{res.stderr[-3000:]}")
    stages = {m[0]: float(m[1]) for m in re.findall(r"│ (\w+)\s+│ ran\s+│\s+([\d.]+) │", res.stdout)}
    return wall, stages


def measure(world: Path, tmp: Path) -> dict:
    from worldforge.export import export_dataset
    from worldforge.rollout import Environment, load_tasks, read_trajectories
    from worldforge.rollout.oracle import run_oracle

    trajs = read_trajectories(world)
    env = Environment.for_world(world)
    try:
        calls = [(t["instance_id"] + f"#{t['sample']}", i, c["function"]["name"], json.loads(c["function"]["arguments"]))
                 for t in trajs for i, c in enumerate(c for m in t["messages"] if m["role"] == "assistant"
                                                      for c in m.get("tool_calls") or [])
                 if c["function"]["name"] != "final_answer"]
        per_tool: dict[str, list[float]] = {}
        t0 = time.perf_counter()
        for key, i, name, args in calls:
            s = time.perf_counter()
            env.execute(key, i, name, args)
            per_tool.setdefault(name, []).append(time.perf_counter() - s)
        t_env = time.perf_counter() - t0
        tasks = load_tasks(world)
        t0 = time.perf_counter()
        eps = [env.episode(t) for t in tasks]
        run_oracle(eps, env.options)
        t_oracle = time.perf_counter() - t0
    finally:
        env.close()
    t0 = time.perf_counter()
    r = export_dataset(world, tmp / "bench-export")
    t_export = time.perf_counter() - t0
    rows = sum(sum(v.values()) for f, v in r.rows.items() if f in ("sft", "rl"))
    return {"steps": len(calls), "t_env": t_env, "per_tool": {k: (len(v), sum(v)) for k, v in per_tool.items()},
            "episodes": len(eps), "oracle_steps": sum(e.tool_calls for e in eps), "t_oracle": t_oracle,
            "reward": sum(e.reward for e in eps) / len(eps), "turns": sum(e.turns for e in eps) / len(eps),
            "rows": rows, "t_export": t_export, "mb": r.bytes / 1e6}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=100_000, help="size of the large world (0 skips it)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # inherited by the `worldforge run` child
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        specs = [("demo", REPO / "worlds" / "demo.yaml")]
        if args.entities:
            specs.append((f"{args.entities // 1000}k", scaled_spec(args.entities, tmp)))
        for label, spec in specs:
            wall, stages = timed_run(spec, tmp / "build", tmp / "exports")
            import yaml

            world = tmp / "build" / yaml.safe_load(spec.read_text())["name"]
            info = json.loads((world / "world.json").read_text())
            m = measure(world, tmp)
            results.append((label, sum(info["counts"].values()), wall, stages, m))
            print(f"{label}: worldforge run {wall:.1f} s  (" + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()) + ")",
                  flush=True)
    print()
    print(f"{'world':<6}{'entities':>10}{'run s':>8}{'env steps':>11}{'steps/s':>9}{'search ms':>10}{'open ms':>9}"
          f"{'oracle traj':>12}{'traj/s':>8}{'reward':>7}{'turns':>6}{'export rows':>12}{'rows/s':>8}{'MB':>7}")
    for label, n, wall, _, m in results:
        pt = m["per_tool"]
        ms = lambda k, pt=pt: 1000 * pt[k][1] / pt[k][0] if k in pt else float("nan")  # noqa: E731
        print(f"{label:<6}{n:>10,}{wall:>8.1f}{m['steps']:>11,}{m['steps'] / m['t_env']:>9,.0f}{ms('web_search'):>10.2f}"
              f"{ms('web_extractor'):>9.2f}{m['episodes']:>12,}{m['episodes'] / m['t_oracle']:>8.1f}{m['reward']:>7.3f}{m['turns']:>6.1f}{m['rows']:>12,}"
              f"{m['rows'] / m['t_export']:>8,.0f}{m['mb']:>7.1f}")


if __name__ == "__main__":
    main()
