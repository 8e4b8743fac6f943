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

    from worldforge.rollout.env import load_token_counter
    from worldforge.rollout.sft_signal import sft_signal

    count = load_token_counter(args.tokenizer) if args.tokenizer else None
    m = sft_signal(args.world, args.export, count=count, budget=args.budget)
    sk, f = m["skeletons"], m["sft_filter"]
    lang, trajs, sft = m["language"], m["trajectories"], m["sft_rows"]
    connective, state_share, repeated, states = m["connective"], m["state_share"], m["repeated"], m["states"]
    wrong_rows, below, compared, over_est, over_real = m["wrong_rows"], m["below"], m["compared"], m["over_est"], m["over_real"]
    grounded, below_one, kept_share = m["grounded"], m["below_one"], m["kept_share"]
    clean = None
    if args.clean:
        from worldforge.rollout import Environment, load_tasks
        from worldforge.rollout.oracle import run_oracle
        from worldforge.world.options import RolloutOptions

        man = json.loads((args.export / "manifest.json").read_text())
        opts = RolloutOptions.model_validate({**man["rollout"]["options"], "perturbations": {}})
        env = Environment.for_world(args.world, opts)
        try:
            eps = [env.episode(t) for t in load_tasks(args.world)]
            run_oracle(eps, opts)
            clean = sum(e.reward for e in eps) / max(1, len(eps))
        finally:
            env.close()

    print(f"world {args.world.name} ({lang}): {trajs} trajectories, {sft} SFT rows, {sk['sentences']:,} narration "
          f"sentences, {sk['skeletons']:,} skeletons\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| top 10 sentence skeletons, share of sentences | {sk['top10']:.1%} |")
    print(f"| commonest skeleton's share | {sk['top1']:.1%} |")
    print(f"| sentences whose skeleton occurs 20+ times | {sk['frequent']:.1%} |")
    print(f"| first messages opening with a connective | {connective:.1%} |")
    print(f"| states, share of assistant characters | {state_share:.1%} |")
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
