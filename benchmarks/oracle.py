"""The honest oracle on a world: how well it does, how honestly, how varied, how long, how fast.

    python benchmarks/oracle.py                      # the demo world (built into build/ if missing)
    python benchmarks/oracle.py --world build/other  # any rendered world with tasks
    python benchmarks/oracle.py --tokenizer path/to/tokenizer.json

Runs the oracle on every task twice, without perturbations and with the world's (default)
perturbations, timing the policy alone (the environment's tool calls included), and prints each
target of the honest-oracle issue beside the measured value:

- mean reward without perturbations (>= 0.95: values a profile states in a way no generic cue
  reaches are left unknown, issue 35) and with the default ones (< 1.0);
- page opens of candidates that end up rejected, on tasks with NOT or OR (>= 15 %);
- opens of URLs no earlier observation showed (0);
- distinct reasoning skeletons over the trajectories (>= 1,000 over 300);
- samples (context segments, what the model saw) under 32k tokens at the default budget (>= 95 %);
- trajectories per second (>= 20).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _world(path: Path) -> Path:
    if not (path / "tasks" / "tasks.jsonl").is_file():
        print(f"building {path} with `worldforge run worlds/demo.yaml` ...", flush=True)
        subprocess.run([sys.executable, "-m", "worldforge", "run", str(ROOT / "worlds" / "demo.yaml"), "--build-dir",
                        str(path.parent), "--out", str(path.parent / "exports")], check=True)
    return path


def _run(world: Path, perturbed: bool, count):
    from worldforge.rollout.env import Environment, load_tasks
    from worldforge.rollout.oracle import run_oracle
    from worldforge.world.store import open_world

    opt = open_world(world).world.spec.stages.rollout
    if not perturbed:
        opt = opt.model_copy(update={"perturbations": {}})
    env = Environment.for_world(world, opt, **({"count_tokens": count} if count else {}))
    eps = [env.episode(t) for t in load_tasks(world)]
    t0 = time.perf_counter()
    run_oracle(eps, opt)
    seconds = time.perf_counter() - t0
    return env, eps, seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", type=Path, default=ROOT / "build" / "demo")
    ap.add_argument("--tokenizer", default=None, help="tokenizer.json or a model folder (default: the script-aware estimate, worldforge.tokens)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from worldforge.rollout.context import samples
    from worldforge.rollout.env import TOOLS, load_token_counter
    from worldforge.rollout.measure import negating, reasoning_skeletons, rejected_opens, sample_tokens, unseen_opens
    from worldforge.tokens import estimate_tokens

    world = _world(args.world)
    count = load_token_counter(args.tokenizer) if args.tokenizer else None
    rows = []
    results = {}
    for perturbed in (False, True):
        env, eps, seconds = _run(world, perturbed, count)
        trajs = [ep.trajectory("oracle") for ep in eps]
        results[perturbed] = (env, eps, trajs, seconds)
    env, eps, trajs, seconds = results[False]
    penv, peps, ptrajs, pseconds = results[True]
    # an entity's page: its article, or the profile of one without an article
    own = env.engine.pages.execute(
        "SELECT url, subject, title FROM pages p WHERE subject IS NOT NULL AND (kind = 'article' OR (kind = 'profile' "
        "AND NOT EXISTS (SELECT 1 FROM pages a WHERE a.kind = 'article' AND a.subject = p.subject)))").fetchall()
    subjects = {u: s for u, s, _ in own}
    names = {u: n for u, _, n in own}

    def type_of(url: str):
        s = subjects.get(url)
        if s is None:
            return None
        t = s.rsplit("_", 1)[0]
        title = names.get(url, "")
        return t, title.split(" (")[0] if title.endswith(")") and " (" in title else title

    records = {ep.task.id: ep.task.record for ep in eps}
    rej = tot = 0
    for t in trajs:
        if negating(records[t["instance_id"]]):
            r, n = rejected_opens(t, records[t["instance_id"]], type_of)
            rej += r
            tot += n
    hide = {ep.task.id: env.hidden_for(ep.task) for ep in eps}  # a training task's searches leave held-out pages out
    unseen = sum(len(unseen_opens(t, env.execute, hide[t["instance_id"]])) for t in trajs) \
        + sum(len(unseen_opens(t, penv.execute, hide[t["instance_id"]])) for t in ptrajs)
    skel = reasoning_skeletons(ptrajs)
    counter = count or estimate_tokens
    lengths = sorted(sample_tokens(x.messages, TOOLS, counter) for t in ptrajs for x in samples(t))
    under = sum(n < 32000 for n in lengths) / len(lengths)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    clean, pert = mean([t["reward"] for t in trajs]), mean([t["reward"] for t in ptrajs])
    speed = len(ptrajs) / pseconds
    unit = "tokens" if count else "tokens (estimated)"
    rows = [
        ("mean reward, no perturbations", f"{clean:.4f}", ">= 0.95", clean >= 0.95),
        ("mean reward, default perturbations", f"{pert:.4f}", "< 1.0", pert < 1.0),
        ("trajectories below reward 1.0 (perturbed)", f"{sum(t['reward'] < 1 for t in ptrajs)} of {len(ptrajs)}", "> 0", pert < 1.0),
        ("opens of rejected candidates, NOT/OR tasks", f"{rej:,} of {tot:,} ({rej / max(1, tot):.1%})", ">= 15 %", rej / max(1, tot) >= 0.15),
        ("opens of URLs never shown before", f"{unseen}", "0", unseen == 0),
        ("distinct reasoning skeletons", f"{len(skel):,} over {len(ptrajs)} trajectories ({sum(skel.values()):,} sentences)",
         ">= 1,000 / 300", len(skel) >= 1000 * len(ptrajs) / 300),
        (f"samples (context segments) under 32k {unit}", f"{under:.1%} of {len(lengths):,} (median {statistics.median(lengths):,.0f}, "
         f"max {lengths[-1]:,})",
         ">= 95 %", under >= 0.95),
        ("oracle speed (perturbed run)", f"{speed:.1f} trajectories/s ({pseconds:.1f} s)", ">= 20/s", speed >= 20),
        ("oracle speed (clean run)", f"{len(trajs) / seconds:.1f} trajectories/s ({seconds:.1f} s)", "", True),
    ]
    by = defaultdict(list)
    for t in ptrajs:
        r = records[t["instance_id"]]
        by[r["kind"] if r["kind"] == "multihop" else r["shape"]].append(t["reward"])
    calls = Counter(s["tool"] for t in ptrajs for s in t["steps"])
    print(f"world {world}: {len(eps)} tasks")
    w = max(len(r[0]) for r in rows)
    print(f"{'measure':<{w}}  {'value':<52} {'target':<14} ok")
    for name, value, target, ok in rows:
        print(f"{name:<{w}}  {value:<52} {target:<14} {'yes' if ok else 'NO'}")
    print()
    print("reward by task shape (perturbed): " + ", ".join(f"{k} {mean(v):.3f} ({len(v)})" for k, v in sorted(by.items())))
    print(f"calls (perturbed): {dict(calls)}; turns mean {mean([t['turns'] for t in ptrajs]):.1f}, "
          f"max {max(t['turns'] for t in ptrajs)}; searches {calls['web_search'] / max(1, sum(calls.values())):.0%} of calls")
    env.close()
    penv.close()


if __name__ == "__main__":
    main()
