"""Grounded samples and held-out splits on the shipped worlds: the targets of the two issues,
measured from the exported datasets as a user of the data would.

    python benchmarks/grounding.py                       # demo, demo_zh, aviation_music (built into build/bench-grounding/)
    python benchmarks/grounding.py --worlds demo --time  # also time `worldforge run worlds/demo.yaml` from scratch

Per world it runs the pipeline (skipping what is up to date), then prints beside each target:

- pages opened that nothing earlier in their sample showed (0), URLs in research states never seen (0);
- informative answer cells visible in their sample (>= 99 %), narration counts contradicting the actions (0);
- SFT samples (context segments) under 32k tokens (estimated, worldforge.tokens) (>= 95 %);
- the clean oracle's mean reward, without perturbations (>= 0.97);
- validation and test shares of the tasks (>= 10 % each), held-out evidence pages opened in training (0),
  training tasks the export dropped for it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _clean_reward(world: Path) -> float:
    from worldforge.rollout.oracle import clean_oracle

    eps = clean_oracle(world)
    return sum(ep.reward for ep in eps) / len(eps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worlds", nargs="+", default=["demo", "demo_zh", "aviation_music"])
    ap.add_argument("--build", type=Path, default=ROOT / "build" / "bench-grounding")
    ap.add_argument("--time", action="store_true", help="also time `worldforge run worlds/demo.yaml` from an empty folder")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from worldforge.rollout.env import TOOLS
    from worldforge.rollout.measure import sample_tokens
    from worldforge.run import run_pipeline
    from worldforge.tokens import estimate_tokens

    rows = []
    for name in args.worlds:
        t0 = time.perf_counter()
        r = run_pipeline(ROOT / "worlds" / f"{name}.yaml", args.build / "build", args.build / "exports", force=True)
        seconds = time.perf_counter() - t0
        man = json.loads((r.dataset / "manifest.json").read_text())
        g, lk, sizes = man["grounding"], man["leak"], man["splits"]
        sft = [json.loads(x) for p in sorted((r.dataset / "jsonl" / "sft").glob("*.jsonl")) for x in p.read_text().splitlines()]
        under = sum(sample_tokens(x["messages"], TOOLS, estimate_tokens) < 32_000 for x in sft) / len(sft)
        total = sum(sizes.values())
        clean = _clean_reward(r.world)
        rows.append((name, [
            ("samples (segments) / trajectories", f"{g['samples']:,} / {g['trajectories']:,}", ""),
            ("pages opened unseen", f"{g['unseen_opens']} of {g['opens']:,}", "0"),
            ("state URLs never seen", f"{g['unseen_state_urls']} of {g['state_urls']:,}", "0"),
            ("informative answer cells visible", f"{100 * g['visible_cell_share']:.2f} % of {g['cells']:,}", ">= 99 %"),
            ("narration counts contradicting actions", f"{g['contradicted']} of {g['claims']:,}", "0"),
            ("samples under 32k tokens", f"{100 * under:.1f} %", ">= 95 %"),
            ("clean oracle mean reward", f"{clean:.4f}", ">= 0.97"),
            ("validation / test share", f"{sizes.get('validation', 0)} / {sizes.get('test', 0)} of {total} "
             f"({100 * sizes.get('validation', 0) / total:.1f} % / {100 * sizes.get('test', 0) / total:.1f} %)", ">= 10 % each"),
            ("held-out evidence pages opened in training", f"{lk.get('leaked_pages', 0)} of "
             + " + ".join(f"{v['pages']:,}" for v in lk.get("by_split", {}).values()), "0"),
            ("training tasks dropped for it", f"{len(lk.get('dropped_training_tasks', []))}", "rare"),
            ("pipeline (stages that ran)", f"{seconds:.1f} s", ""),
        ]))
    for name, measures in rows:
        print(f"\n{name}")
        w = max(len(m) for m, _, _ in measures)
        for m, v, target in measures:
            print(f"  {m:<{w}}  {v:<40} {target}")
    if args.time:
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp())
        try:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "worldforge", "run", str(ROOT / "worlds" / "demo.yaml"), "--build-dir", str(tmp / "b"),
                            "--out", str(tmp / "e")], check=True, stdout=subprocess.DEVNULL)
            print(f"\nworldforge run worlds/demo.yaml from scratch: {time.perf_counter() - t0:.1f} s (target < 60 s)")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
