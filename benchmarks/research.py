"""How the oracle researches: the measures of the "researcher" issue, on built worlds.

    python benchmarks/research.py build/demo build/demo_zh build/aviation_music

Per world (a folder `worldforge run` built: web and tasks), the oracle runs on every task without
perturbations and with the world's default ones, and a table gives, beside each target:

- queries naming a page opened in the same turn: a search for a name whose page the same turn
  opens cannot inform anything (target: at most 10%);
- settled values from snippets: the share of the values it read (a condition's or a cell's)
  that a search result's snippet gave, without opening the page (target: at least 20%);
- the most common calls-per-turn count: the share of tool-calling turns with that many calls
  (target: at most 40%);
- cross-checks of candidates already rejected (target: 0);
- table trajectories that reconcile a disagreement between two sources (target: at least 20%);
- mean reward without perturbations (target: at least 0.9) and the share of trajectories below
  1.0 with the default ones (target: at least 15%);
- trajectories per second (the policy with the environment's tool calls, one core; target: 20).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from worlds_table import print_worlds  # noqa: E402


def _run(world: Path, perturbed: bool):
    from worldforge.rollout.env import Environment, load_tasks
    from worldforge.rollout.oracle import run_oracle
    from worldforge.world.store import open_world

    opt = open_world(world).world.spec.stages.rollout
    if not perturbed:
        opt = opt.model_copy(update={"perturbations": {}})
    env = Environment.for_world(world, opt)
    eps = [env.episode(t) for t in load_tasks(world)]
    t0 = time.perf_counter()
    run_oracle(eps, opt)
    return env, eps, time.perf_counter() - t0


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def measure(world: Path) -> dict:
    out: dict = {}
    env, eps, seconds = _run(world, perturbed=False)
    try:
        out["reward_clean"] = sum(e.reward for e in eps) / len(eps)
        out["per_s"] = len(eps) / seconds
        named = queries = 0
        per_turn: Counter = Counter()
        research: Counter = Counter()
        tables = reconciled = 0
        for ep in eps:
            for m in ep.messages:
                calls = [c for c in m.get("tool_calls") or [] if c["function"]["name"] != "final_answer"]
                if not calls:
                    continue
                per_turn[len(calls)] += 1
                args = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
                titles = set()
                for name, a in args:
                    if name == "web_extractor":
                        p = env.engine.page(a.get("url", ""))
                        if p is not None:
                            titles.add(_norm(p["title"].split(" (")[0]))
                for name, a in args:
                    if name == "web_search":
                        for q in [a.get("query", ""), *a.get("queries", [])]:
                            queries += 1
                            q = _norm(q.strip('"'))
                            named += any(q == t or q.startswith(t + " ") for t in titles)
            r = getattr(ep, "research", {})
            research.update(r)
            if ep.task.record["kind"] == "table":
                tables += 1
                reconciled += r.get("conflicts", 0) > 0
        out["named_same_turn"] = named / max(queries, 1)
        out["queries"] = queries
        values = research["snippet_values"] + research["page_values"]
        out["snippet_share"] = research["snippet_values"] / max(values, 1)
        out["values"] = values
        top, n = per_turn.most_common(1)[0]
        out["top_calls"] = f"{n / sum(per_turn.values()):.2%} ({top} calls)"
        out["rejected_checks"] = research["rejected_cross_checks"]
        out["reconciled"] = reconciled / max(tables, 1)
    finally:
        env.close()
    env, eps, _ = _run(world, perturbed=True)
    try:
        out["below_one"] = sum(e.reward < 1.0 for e in eps) / len(eps)
        out["reward_default"] = sum(e.reward for e in eps) / len(eps)
    finally:
        env.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("worlds", nargs="+", type=Path, help="world folders built by `worldforge run` (web and tasks)")
    args = ap.parse_args()
    rows = defaultdict(dict)
    for w in args.worlds:
        rows[w.name] = measure(w)
    measures = [("queries naming a page opened the same turn (<= 10%)", "named_same_turn", "{:.1%}"),
             ("  queries", "queries", "{:,}"),
             ("settled values from snippets (>= 20%)", "snippet_share", "{:.1%}"),
             ("  values read", "values", "{:,}"),
             ("most common calls-per-turn count (<= 40% of turns)", "top_calls", "{}"),
             ("cross-checks of rejected candidates (0)", "rejected_checks", "{:,}"),
             ("table trajectories reconciling a conflict (>= 20%)", "reconciled", "{:.1%}"),
             ("mean reward, no perturbations (>= 0.9)", "reward_clean", "{:.4f}"),
             ("mean reward, default perturbations", "reward_default", "{:.4f}"),
             ("below 1.0 with default perturbations (>= 15%)", "below_one", "{:.1%}"),
             ("trajectories per second (>= 20)", "per_s", "{:.1f}")]
    print_worlds(rows, measures, 56, 22)


if __name__ == "__main__":
    main()
