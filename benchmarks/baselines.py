"""Lazy baselines beside the oracle: how much of a world's table tasks a shortcut solves.

    python benchmarks/baselines.py build/demo build/demo_zh build/aviation_music

Per world (a folder `worldforge run` built: web and tasks), every table task is run in the web
without perturbations by the two lazy policies of `worldforge.rollout.baselines` (`first_list`:
the first list the question's search finds, copied; `infoboxes`: its rows filled from each
entity's box of facts) and by the oracle, and a table gives each one's mean item F1 and success
(issue 58's target: lazy at most 0.10 item F1, the oracle at least 0.95).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worldforge.rollout import Environment, load_tasks  # noqa: E402
from worldforge.rollout.baselines import POLICIES, run_baseline  # noqa: E402
from worldforge.rollout.oracle import run_oracle  # noqa: E402
from worldforge.world.store import open_world  # noqa: E402


def measure(world: Path, oracle: bool = True) -> dict:
    opt = open_world(world).world.spec.stages.rollout.model_copy(update={"perturbations": {}})
    env = Environment.for_world(world, opt)
    out = {}
    try:
        tasks = [t for t in load_tasks(world) if t.record["kind"] == "table"]
        for policy in (*POLICIES, *(("oracle",) if oracle else ())):
            t0 = time.perf_counter()
            eps = [env.episode(t, manage_context=policy == "oracle") for t in tasks]
            if policy == "oracle":
                run_oracle(eps, opt)
            else:
                for ep in eps:
                    run_baseline(ep, policy)
            f1 = [ep.score["item_f1"] for ep in eps]
            out[policy] = {"item_f1": statistics.mean(f1), "success": statistics.mean(ep.score["success"] for ep in eps),
                           "max_f1": max(f1), "seconds": time.perf_counter() - t0, "tasks": len(eps)}
    finally:
        env.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("worlds", nargs="+", type=Path, help="built world folders")
    ap.add_argument("--no-oracle", action="store_true", help="only the lazy policies (fast)")
    a = ap.parse_args()
    print(f"{'world':<16}{'policy':<12}{'tasks':>6}{'item F1':>9}{'max F1':>8}{'success':>9}{'s':>7}")
    for w in a.worlds:
        for policy, m in measure(w, not a.no_oracle).items():
            print(f"{w.name:<16}{policy:<12}{m['tasks']:>6}{m['item_f1']:>9.3f}{m['max_f1']:>8.3f}{m['success']:>9.3f}"
                  f"{m['seconds']:>7.1f}")


if __name__ == "__main__":
    main()
