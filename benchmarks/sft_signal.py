"""What the SFT loss falls on, for any built world and its export: the table of the issue on
SFT samples that teach research.

    python benchmarks/sft_signal.py build/demo exports/demo/v1 [--tokenizer path/tokenizer.json] [--clean]

- narration sentences (assistant messages but research states), their skeletons with the world's
  names, URLs, hosts and numbers masked: the share of the 10 commonest, of the commonest one, and
  of the sentences whose skeleton occurs 20 times or more;
- first messages that open as if continuing ("Moving on: ...");
- research states' share of the assistant's characters (each message once per trajectory), and
  states with a column named twice (any case);
- SFT rows from trajectories with a wrong cell; the oracle's count cells below gold;
- SFT samples over 32k tokens, counted with a real tokenizer (`--tokenizer`) and with the estimate;
- samples grounded; the share of trajectories below 1.0; with `--clean`, the oracle's reward
  without perturbations (a second rollout, not stored);
- train tasks that keep at least one SFT row.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("world", type=Path)
    ap.add_argument("export", type=Path)
    ap.add_argument("--tokenizer", help="a tokenizer.json to recount sample lengths with (e.g. Qwen3's)")
    ap.add_argument("--clean", action="store_true", help="also roll the oracle out without perturbations")
    ap.add_argument("--budget", type=int, default=32_000)
    args = ap.parse_args()

    from worldforge.rollout.env import TOOLS, load_tasks, load_token_counter
    from worldforge.rollout.measure import (
        NameMask,
        count_cells_below_gold,
        is_state,
        narration_sentences,
        narration_skeleton,
        opens_with_connective,
        sample_tokens,
        skeleton_shares,
        state_tables_with_repeated_columns,
    )
    from worldforge.rollout.stage import read_trajectories
    from worldforge.tokens import estimate_tokens

    trajs = read_trajectories(args.world)
    tasks = {t.id: t for t in load_tasks(args.world)}
    man = json.loads((args.export / "manifest.json").read_text())
    sft = [json.loads(line) for f in sorted((args.export / "jsonl" / "sft").glob("*.jsonl")) for line in f.open()]
    mask = NameMask.of_world(args.world)
    lang = tasks[trajs[0]["instance_id"]].record.get("language", "en") if trajs else "en"

    skel: Counter = Counter()
    for t in trajs:
        for s in narration_sentences(t["messages"]):
            skel[narration_skeleton(s, mask)] += 1
    sk = skeleton_shares(skel)
    firsts = [next((m["content"] for m in t["messages"] if m["role"] == "assistant"), "") for t in trajs]
    connective = sum(opens_with_connective(x) for x in firsts) / max(1, len(firsts))
    state_chars = all_chars = 0
    states = repeated = 0
    for t in trajs:
        for m in t["messages"]:
            if m["role"] != "assistant":
                continue
            n = len(m.get("content") or "") + sum(len(c["function"]["arguments"]) for c in m.get("tool_calls") or [])
            all_chars += n
            if is_state(m):
                state_chars += n
                states += 1
                repeated += state_tables_with_repeated_columns(m["content"]) > 0
    wrong_rows = sum(1 for r in sft if r["reward"] < 1.0)
    below = compared = 0
    for t in trajs:
        task = tasks.get(t["instance_id"])
        if task is not None:
            b, c = count_cells_below_gold(t.get("answer"), task.record, task.header, task.rows)
            below, compared = below + b, compared + c
    est = [sample_tokens(r["messages"], TOOLS, estimate_tokens) for r in sft]
    over_est = sum(x > args.budget for x in est) / max(1, len(est))
    over_real = None
    if args.tokenizer:
        count = load_token_counter(args.tokenizer)
        real = [sample_tokens(r["messages"], TOOLS, count) for r in sft]
        over_real = sum(x > args.budget for x in real) / max(1, len(real))
    g = man["grounding"]
    grounded = (g["samples"] - g["failed"]) / max(1, g["samples"])
    below_one = sum(t["reward"] < 1.0 for t in trajs) / max(1, len(trajs))
    f = man.get("sft_filter") or {}
    train = (f.get("by_split") or {}).get("train") or {}
    kept_share = train.get("tasks_kept", 0) / max(1, train.get("tasks", 0))
    clean = None
    if args.clean:
        from worldforge.rollout import Environment
        from worldforge.rollout.oracle import run_oracle
        from worldforge.world.options import RolloutOptions

        opts = RolloutOptions.model_validate({**man["rollout"]["options"], "perturbations": {}})
        env = Environment.for_world(args.world, opts)
        try:
            eps = [env.episode(t) for t in tasks.values()]
            run_oracle(eps, opts)
            clean = sum(e.reward for e in eps) / max(1, len(eps))
        finally:
            env.close()

    print(f"world {args.world.name} ({lang}): {len(trajs)} trajectories, {len(sft)} SFT rows, {sk['sentences']:,} narration "
          f"sentences, {sk['skeletons']:,} skeletons\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| top 10 sentence skeletons, share of sentences | {sk['top10']:.1%} |")
    print(f"| commonest skeleton's share | {sk['top1']:.1%} |")
    print(f"| sentences whose skeleton occurs 20+ times | {sk['frequent']:.1%} |")
    print(f"| first messages opening with a connective | {connective:.1%} |")
    print(f"| states, share of assistant characters | {state_chars / max(1, all_chars):.1%} |")
    print(f"| states with a repeated or re-cased column | {repeated} of {states} |")
    print(f"| SFT rows from trajectories with a wrong cell | {wrong_rows} |")
    print(f"| SFT trajectories left out (reward below {f.get('min_reward', 0):g}) | {f.get('left_out', 0)} |")
    print(f"| oracle count cells below gold | {below} of {compared} |")
    print(f"| SFT samples over {args.budget // 1000}k tokens, estimate | {over_est:.1%} |")
    if over_real is not None:
        print(f"| SFT samples over {args.budget // 1000}k tokens, real tokenizer | {over_real:.1%} |")
    print(f"| samples grounded | {grounded:.1%} |")
    print(f"| trajectories below 1.0 (perturbed) | {below_one:.1%} |")
    if clean is not None:
        print(f"| clean oracle reward | {clean:.3f} |")
    print(f"| train tasks keeping an SFT row | {kept_share:.1%} |")
    print("\ncommonest skeletons:")
    for s in sk["examples"]:
        print(f"  {s}")


if __name__ == "__main__":
    main()
