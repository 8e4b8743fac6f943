"""Seed sweep: every shipped world (and the demo with every count divided by five) planned
under consecutive seeds, each world checked in memory for every invariant and every audit
threshold of its packs. Prints one row per world: seeds that plan, seeds whose audit holds,
source dates the planner drew again so that a required link had a target, and plan time.

    python benchmarks/seeds.py                    # 20 seeds of each world, 2 processes
    python benchmarks/seeds.py --seeds 5 --worlds demo demo/5
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# name -> (spec, count factor): large.yaml is sized for a million entities, so 0.01 is about 10k
WORLDS = {
    "demo": ("demo.yaml", 1.0),
    "demo_zh": ("demo_zh.yaml", 1.0),
    "aviation_music": ("aviation_music.yaml", 1.0),
    "large@10k": ("large.yaml", 0.01),  # as benchmarks/scale.py scales it: at least 2 of each
    "demo/5": ("demo.yaml", 0.2),
    "demo_zh/5": ("demo_zh.yaml", 0.2),
}

_loaded: dict = {}


def _run(args: tuple[str, int]):
    from worldforge.world.sweep import load_scaled, plan_seed

    name, k = args
    if name not in _loaded:
        spec, factor = WORLDS[name]
        _loaded[name] = load_scaled(REPO / "worlds" / spec, factor, at_least=2 if spec == "large.yaml" else 1)
    world = _loaded[name]
    return name, plan_seed(world, world.spec.seed + k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20, help="consecutive seeds per world, from the spec's own")
    ap.add_argument("--worlds", nargs="+", default=list(WORLDS), choices=list(WORLDS))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    jobs = [(w, k) for w in args.worlds for k in range(args.seeds)]
    results: dict[str, list] = {w: [] for w in args.worlds}
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as ex:
        for name, r in ex.map(_run, jobs):
            results[name].append(r)
            if r.error or r.violations or r.broken:
                why = r.error or "; ".join([*r.violations, *r.broken])
                print(f"  {name}, seed {r.seed}: {why[:300]}", flush=True)
    print(f"\n{len(jobs)} plans in {time.perf_counter() - t0:.0f} s ({args.workers} processes)\n")
    print("| world | seeds that plan | invariants hold | audit holds | audit holds but for rules validate warned of "
          "| dates drawn again (total) | plan + checks, median s |")
    print("|---|---|---|---|---|---|---|")
    for name, rs in results.items():
        n = len(rs)
        planned = [r for r in rs if r.error is None]
        print(f"| {name} | {len(planned)} / {n} | {sum(not r.violations for r in planned)} / {len(planned)} "
              f"| {sum(not r.broken and not r.warned for r in planned)} / {len(planned)} "
              f"| {sum(not r.broken for r in planned)} / {len(planned)} | {sum(r.redrawn for r in rs)} "
              f"| {statistics.median(r.seconds for r in rs):.1f} |")


if __name__ == "__main__":
    main()
