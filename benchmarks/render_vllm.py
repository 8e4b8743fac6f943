"""vLLM rendering overhead: our render stage against a bare `LLM.chat` over the same
prompts and sampling parameters, in one process with one engine.

Runs on vLLM's CPU build with the tiny random-weight model (`tests/tiny_model.py`), or
on any model given with --model. The bare run is one `LLM.chat` over every page's prompt;
the stage run is `render_world` (page plan, batching, validation, fallback, Parquet
shards, pages.duckdb, tantivy index) with retries off, so both make the same requests.
The prefix cache is reset before each run; the share of prompt tokens it served is
reported for both.

    python benchmarks/render_vllm.py                      # tiny model, one-country world
    python benchmarks/render_vllm.py --countries 2 --max-tokens 64
    python benchmarks/render_vllm.py --model /path/to/model
    python benchmarks/render_vllm.py --model Qwen/Qwen3-8B --countries 4 --max-tokens 1024 \
        --tensor-parallel-size 2 --dollars-per-hour 4.0           # on a GPU machine, as is

It ends with the figures a GPU run is planned by: output tokens/s, pages/s, the share of pages
the checks kept (fact sheet and claims: `web.llm.page_problems`) and the cost of 1,000 pages at
--dollars-per-hour. A .gguf file is a model too (converted once, `web.llm.gguf_folder`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="model folder or hub id (default: a tiny random model made here)")
    ap.add_argument("--countries", type=int, default=1, help="world size: countries (geography pack only)")
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--tensor-parallel-size", type=int, default=1, help="GPUs one engine spans")
    ap.add_argument("--no-prefix-caching", action="store_true", help="turn vLLM's prefix cache off (to measure what it saves)")
    ap.add_argument("--dollars-per-hour", type=float, default=None, help="the machine's price, for the cost of 1,000 pages")
    args = ap.parse_args()

    from tests.tiny_model import make_tiny_model
    from worldforge.web import render_world
    from worldforge.web.llm import VLLMWriter, close_llm, load_llm
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.world.options import RenderOptions, SamplingSpec
    from worldforge.world.planner import plan_world
    from worldforge.world.store import open_world
    from worldforge.world.validate import load_world

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model or str(make_tiny_model(tmp / "tiny"))
        spec = {"name": "bench", "seed": 7, "as_of": "2025-06-30", "time_span": {"start": "1850-01-01"},
                "packs": ["geography"], "counts": {"country": args.countries}}
        (tmp / "bench.yaml").write_text(yaml.safe_dump(spec))
        info = plan_world(load_world(tmp / "bench.yaml"), tmp / "build")
        opts = RenderOptions(backend="vllm", model=model, retries=0, batch_size=args.batch_size, max_model_len=4096,
                             kv_cache_gib=1, sampling=SamplingSpec(max_tokens=args.max_tokens),
                             tensor_parallel_size=args.tensor_parallel_size, prefix_caching=not args.no_prefix_caching)
        t0 = time.perf_counter()
        llm = load_llm(opts, model)
        t_start = time.perf_counter() - t0

        # The same conversations and per-page sampling parameters the stage will send.
        view = WorldView(open_world(info.path), opts)
        writer = VLLMWriter(view, opts, llm)
        pages = list(plan_pages(view))
        convs = [writer.conversation(p) for p in pages]
        params = [writer.sampling_params(p, 0) for p in pages]
        view.close()

        llm.reset_prefix_cache()
        t0 = time.perf_counter()
        outs = llm.chat(convs, params, use_tqdm=False, chat_template_kwargs={"enable_thinking": False})
        t_bare = time.perf_counter() - t0
        bare_prompt = sum(len(o.prompt_token_ids) for o in outs)
        bare_cached = sum(o.num_cached_tokens or 0 for o in outs)
        bare_out = sum(len(o.outputs[0].token_ids) for o in outs)

        llm.reset_prefix_cache()
        t0 = time.perf_counter()
        report = render_world(info.path, opts, llm=llm, force=True)
        t_stage = time.perf_counter() - t0
        del writer
        close_llm(llm)

    r = report.llm
    print(f"model: {'tiny random (tests/tiny_model.py)' if not args.model else args.model}; "
          f"{len(pages):,} pages; max_tokens {args.max_tokens}; batch {args.batch_size}; engine start {t_start:.1f} s\n")
    print(f"{'run':<34}{'wall s':>9}{'requests':>10}{'prompt tok':>12}{'cached tok':>12}{'cache share':>12}{'output tok':>12}")
    print(f"{'bare LLM.chat':<34}{t_bare:>9.2f}{len(outs):>10,}{bare_prompt:>12,}{bare_cached:>12,}"
          f"{bare_cached / bare_prompt:>12.1%}{bare_out:>12,}")
    print(f"{'render stage (render_world)':<34}{t_stage:>9.2f}{r['requests']:>10,}{r['prompt_tokens']:>12,}"
          f"{r['cached_tokens']:>12,}{report.prefix_cache_share:>12.1%}{r['output_tokens']:>12,}")
    print(f"{'  of which inside LLM.chat':<34}{r['llm_seconds']:>9.2f}")
    print(f"\noverhead ratio (stage / bare): {t_stage / t_bare:.3f}   "
          f"(pages accepted {report.accepted}, fell back {report.fallback}, rejected {report.rejected})")
    n = len(pages)
    cost = f"{args.dollars_per_hour * t_stage / 3600 / n * 1000:.3f} $" if args.dollars_per_hour else "(give --dollars-per-hour)"
    print("\n| output tok/s | pages/s | kept share | refusals | cost per 1,000 pages |")
    print("|---|---|---|---|---|")
    print(f"| {r['output_tokens'] / t_stage:,.0f} | {n / t_stage:,.2f} | {report.accepted / n:.1%} | "
          f"{', '.join(f'{k} {v}' for k, v in sorted(r.get('failures', {}).items())) or '-'} | {cost} |")


if __name__ == "__main__":
    main()
