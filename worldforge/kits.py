"""Trainer kits written into every export (`kits/`), and the lengths they are sized from.

- `kits/serve.sh`: rebuild the dataset's world from `manifest.json` alone and serve it.
- `kits/verl/`: `tool_config.yaml` (worldforge's tool classes and the canonical schemas, which
  verl reads without loss), `agent_loop.yaml` (the loop that stops at `final_answer`) and
  `run_grpo.sh` with the overrides this data needs (prompt and response lengths, parallel
  calls, tool response length, turns, the packaged reward).
- `kits/trl/`: `sft.py` (an `SFTConfig` whose `max_length` covers every SFT row) and
  `grpo.py` (GRPO with worldforge's environment class over the server).
- `kits/env.py`: the framework-neutral reset/step/reward environment, for SkyRL-gym or
  verifiers-style trainers.

Lengths are counted with the tokenizer named by `stages.export.tokenizer` (or `--tokenizer`),
else with the rollout's own script-aware estimate (`worldforge.tokens`, on the safe side of
Qwen3's tokenizer), so the kits' limits and the context budget the data was compacted to agree;
every file is a pure function of the data, so exports stay byte-identical.

The server's address: `$WORLDFORGE_URL` wherever it is set (the verl tool config reads it
through OmegaConf's `oc.env`, the tools, `env.py` and `grpo.py` read it too), else
`DEFAULT_URL`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from .rollout import TOOLS, sample_tokens
from .tokens import MESSAGE_OVERHEAD, estimate_tokens

TOOL_CLASS = "worldforge.serve.verl_tools.WorldforgeTool"
AGENT_LOOP = "worldforge.serve.verl_tools.WorldforgeAgentLoop"
AGENT_NAME = "worldforge_agent"
REWARD_PATH = "pkg://worldforge.rewards"
DEFAULT_URL = "http://127.0.0.1:8000"
TRAIN_BATCH = 64  # prompts per verl step (less when the train split is smaller: verl drops an incomplete batch)
ESTIMATE_MARGIN = 1.2  # on lengths counted without the model's tokenizer (see `settings`)
MINI_BATCH = 16  # prompts per PPO mini-batch (verl's default 256 is more than a batch)


def _round_up(n: int, step: int) -> int:
    return max(step, int(math.ceil(n / step)) * step)


def _pct(xs: list[int], q: float) -> int:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0


@lru_cache(maxsize=4)
def _load_tokenizer(tokenizer: str):
    """A tokenizer loaded once per process (the export checks it before any work, then counts with it)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer)


def token_counter(tokenizer: str | None) -> tuple[Callable[[list[dict]], int], Callable[[list[dict]], int], str]:
    """(tokens of a conversation with the tools, tokens of a prompt with the generation prompt,
    how they were counted)."""
    if tokenizer is None:
        seen: dict[str, int] = {}  # this counter's texts: a segment repeats its trajectory's messages, a head its sample's

        def count_text(text: str) -> int:
            n = seen.get(text)
            if n is None:
                n = seen[text] = estimate_tokens(text)
            return n

        def est(messages: list[dict], gen: bool = False) -> int:
            return sample_tokens(messages, TOOLS, count_text) + (MESSAGE_OVERHEAD if gen else 0)
        return est, lambda m: est(m, True), ("estimated with worldforge's script-aware count (worldforge.tokens, on the safe "
                                             "side of Qwen3's tokenizer; export with --tokenizer to count)")
    tok = _load_tokenizer(tokenizer)

    def count(messages: list[dict], gen: bool = False) -> int:
        msgs = [{k: v for k, v in m.items() if v is not None} for m in messages]
        for m in msgs:
            for c in m.get("tool_calls") or []:  # templates differ on string vs dict arguments; dicts work everywhere
                f = c["function"]
                if isinstance(f.get("arguments"), str):
                    try:
                        f["arguments"] = json.loads(f["arguments"])
                    except ValueError:
                        pass
        out = tok.apply_chat_template(msgs, tools=TOOLS, tokenize=True, add_generation_prompt=gen)
        if isinstance(out, dict) or hasattr(out, "keys"):
            out = out["input_ids"]
        return len(out)

    return count, lambda m: count(m, True), f"counted with the `{tokenizer}` tokenizer and its chat template"


def model_context(tokenizer: str | None) -> int | None:
    """The context length of the model a tokenizer belongs to, when its files say it (the
    folder's config.json `max_position_embeddings`, else the tokenizer's `model_max_length`)."""
    if tokenizer is None:
        return None
    config = Path(tokenizer) / "config.json"
    if config.is_file():
        try:
            n = json.loads(config.read_text()).get("max_position_embeddings")
        except (ValueError, OSError, AttributeError):
            n = None
        if isinstance(n, int) and n > 0:
            return n
    n = getattr(_load_tokenizer(tokenizer), "model_max_length", None)
    return n if isinstance(n, int) and 0 < n < 10**8 else None  # (transformers' 'unknown' is 1e30)


def check_tokenizer(tokenizer: str) -> None:
    """Load `tokenizer` and count a short conversation with it, or say why it cannot be used."""
    from .errors import ExportError

    try:
        count, _, _ = token_counter(tokenizer)
        count([{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}])
    except Exception as exc:  # transformers raises anything for a bad folder (KeyError, OSError, ValueError, ...)
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise ExportError(f"the tokenizer {tokenizer!r} cannot count tokens ({type(exc).__name__}: {first}); give a "
                          "tokenizer.json file or a model folder with a chat template, or leave --tokenizer out") from None


def length_table(samples: list, prompts: list[list[dict]], tokenizer: str | None, whole: list | None = None) -> dict:
    """Lengths the trainer configs need: RL prompts, SFT samples (`rollout.context.Sample`: a
    segment, or a whole trajectory), the response part of a sample (assistant and tool turns
    after its prompt, the segment a trainer generates before it compacts), tool results, calls
    per turn, assistant turns per sample."""
    conv, prompt, how = token_counter(tokenizer)
    sft = [conv(x.messages) for x in samples]
    heads = [prompt(x.messages[:2]) for x in samples]  # a later segment's prompt holds the state it resumes from
    prompt_tokens = [prompt(p) for p in prompts] + heads
    response = [max(0, s - h) for s, h in zip(sft, heads)]
    tool_chars = [len(m.get("content") or "") for x in samples for m in x.messages if m["role"] == "tool"]
    per_turn = [len(m.get("tool_calls") or []) for x in samples for m in x.messages if m["role"] == "assistant"]
    turns = [sum(1 for m in x.messages if m["role"] == "assistant") for x in samples]
    # whole trajectories, for trainers that cannot compact (TRL's GRPOTrainer keeps one growing completion)
    whole_response = [max(0, conv(x.messages) - prompt(x.messages[:2])) for x in whole or []]
    row = lambda xs: {"p50": _pct(xs, 0.5), "p99": _pct(xs, 0.99), "max": max(xs, default=0)}  # noqa: E731
    context = model_context(tokenizer)
    over = {"model_context": context, "sft_rows_over_model_context": sum(x > context for x in sft)} if context else {}
    return {"counted": how, "tokenizer": tokenizer, **over, "rl_prompt_tokens": row(prompt_tokens), "sft_tokens": row(sft),
            "response_tokens": row(response), "trajectory_response_tokens": row(whole_response or response),
            "tool_result_chars": row(tool_chars), "calls_per_turn": row(per_turn),
            "turns": row(turns)}


def _pow2_at_most(n: int) -> int:
    return 1 << (max(1, n).bit_length() - 1)


def settings(lengths: dict, rollout: dict, train_rows: int = 0) -> dict:
    """Trainer settings sized from the lengths (nothing in the data is cut) and from the RL train
    split's rows (a verl batch no larger than the split, so every epoch trains)."""
    batch = min(TRAIN_BATCH, _pow2_at_most(train_rows)) if train_rows else TRAIN_BATCH
    # counted by estimate (no --tokenizer), a length is a row's estimate; a real tokenizer counts up to about 13 % more on
    # some rows (Qwen3's on the four test worlds' SFT rows), so what a trainer would cut is sized with ESTIMATE_MARGIN more
    margin = 1.0 if lengths.get("tokenizer") else ESTIMATE_MARGIN
    return {
        "train_batch_size": batch,
        "ppo_mini_batch_size": min(MINI_BATCH, batch),
        # a quarter more than any prompt in the data: a later segment's prompt holds a state, which may run longer in training
        "max_prompt_length": _round_up(int(lengths["rl_prompt_tokens"]["max"] * 1.25), 256),
        "max_response_length": _round_up(int(lengths["response_tokens"]["max"] * margin), 1024),
        # TRL's tool loop keeps one growing completion (it cannot compact): a whole trajectory, but no more than the
        # context the data was made in (a 32k-token model cannot generate the 500k of the longest wide task)
        "max_completion_length": min(_round_up(lengths.get("trajectory_response_tokens", lengths["response_tokens"])["max"], 1024),
                                     _round_up(rollout.get("context_tokens") or lengths["sft_tokens"]["max"], 1024)),
        "sft_max_length": _round_up(int(lengths["sft_tokens"]["max"] * margin), 1024),
        "max_parallel_calls": max(lengths["calls_per_turn"]["max"], rollout["parallel_calls"] + 1),
        "max_tool_response_length": _round_up(max(lengths["tool_result_chars"]["max"], rollout["max_observation_chars"] + 64), 1024),
        "max_turns": rollout["max_turns"],
        "context_tokens": rollout.get("context_tokens") or _round_up(lengths["sft_tokens"]["max"], 1024),
    }


def tools_kwargs(task_id: str) -> dict:
    """`extra_info.tools_kwargs` of an RL row: every tool's episode is the row's task."""
    return {t["function"]["name"]: {"create_kwargs": {"task_id": task_id}} for t in TOOLS}


def _yaml(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)


def write_kits(dest: Path, world: str, version: str, rl_files: dict[str, list[str]], s: dict, lengths: dict | None = None) -> None:
    """Write `kits/` into the dataset folder `dest` (see the module docstring); `lengths` (from
    `length_table`) are quoted where a kit's setting is shorter than the data."""
    kits = dest / "kits"
    (kits / "verl").mkdir(parents=True)
    (kits / "trl").mkdir()
    _verl_kit(kits, rl_files, s)
    _serve_kit(kits)
    _trl_sft_kit(kits, world, version, s)
    whole = (lengths or {}).get("trajectory_response_tokens") or {"p50": 0, "max": 0}
    _trl_grpo_kit(kits, world, version, s, whole["p50"], whole["max"])
    _env_kit(kits)


def _verl_kit(kits: Path, rl_files: dict[str, list[str]], s: dict) -> None:
    """verl's tool config, agent loop and GRPO launcher (`kits/verl/`)."""
    tools = [{"class_name": TOOL_CLASS, "config": {"type": "native", "base_url": f"${{oc.env:WORLDFORGE_URL,{DEFAULT_URL}}}",
                                                   "timeout": 60}, "tool_schema": t} for t in TOOLS]
    (kits / "verl" / "tool_config.yaml").write_text(
        "# verl multi-turn tools backed by `worldforge serve` (see kits/serve.sh); the schemas are the SFT rows' own.\n"
        f"# The server: $WORLDFORGE_URL when set, else {DEFAULT_URL} (verl resolves oc.env when it loads this file).\n"
        + _yaml({"tools": tools}))
    (kits / "verl" / "agent_loop.yaml").write_text(
        "# verl agent loop that ends a trajectory at its final_answer call and compacts its context as the rollouts did\n"
        "# (past 9/10 of context_tokens the model writes its research state; each segment is an output); RL rows name it.\n"
        + _yaml([{"name": AGENT_NAME, "_target_": AGENT_LOOP, "context_tokens": s["context_tokens"]}]))
    train = "[" + ",".join(f"$DATA/{f}" for f in rl_files.get("train", [])) + "]"
    held = rl_files.get("validation") or rl_files.get("test") or []
    # verl reads val_files always (an empty list fails: "Unable to concatenate an empty list of
    # datasets"): without a held-out split it reads the train files and never validates
    val = "[" + ",".join(f"$DATA/{f}" for f in held) + "]" if held else train
    overrides = [
        "algorithm.adv_estimator=grpo",
        f"data.train_files={train}", f"data.val_files={val}",
        *([] if held else ["trainer.val_before_train=False", "trainer.test_freq=-1"]),
        f"data.train_batch_size={s['train_batch_size']}",  # verl's default 1024 is more than many splits: 0 steps
        f"actor_rollout_ref.actor.ppo_mini_batch_size={s['ppo_mini_batch_size']}",
        f"data.max_prompt_length={s['max_prompt_length']}", f"data.max_response_length={s['max_response_length']}",
        "data.return_raw_chat=True", "data.filter_overlong_prompts=True",
        "actor_rollout_ref.model.path=$MODEL",
        "actor_rollout_ref.rollout.name=vllm", "actor_rollout_ref.rollout.mode=async", "actor_rollout_ref.rollout.n=8",
        "trainer.use_v1=True",  # the v1 trainer trains every segment of a compacted trajectory with its final reward
        "actor_rollout_ref.rollout.multi_turn.enable=True",
        "actor_rollout_ref.rollout.multi_turn.format=hermes",
        "actor_rollout_ref.rollout.multi_turn.tool_config_path=$KITS/verl/tool_config.yaml",
        f"actor_rollout_ref.rollout.multi_turn.max_parallel_calls={s['max_parallel_calls']}",
        f"actor_rollout_ref.rollout.multi_turn.max_tool_response_length={s['max_tool_response_length']}",
        "actor_rollout_ref.rollout.multi_turn.tool_response_truncate_side=right",
        f"actor_rollout_ref.rollout.multi_turn.max_assistant_turns={s['max_turns']}",
        f"actor_rollout_ref.rollout.multi_turn.max_user_turns={s['max_turns']}",
        "actor_rollout_ref.rollout.agent.agent_loop_config_path=$KITS/verl/agent_loop.yaml",
        f"actor_rollout_ref.rollout.agent.default_agent_loop={AGENT_NAME}",
        f"custom_reward_function.path={REWARD_PATH}", "custom_reward_function.name=compute_score",
    ]
    (kits / "verl" / "run_grpo.sh").write_text(
        "#!/usr/bin/env bash\n# GRPO with verl on this dataset. Start the environment first: bash kits/serve.sh\n"
        "# pip install 'worldforge[serve]' verl; MODEL=Qwen/Qwen3-8B bash kits/verl/run_grpo.sh [more overrides]\n"
        "set -euo pipefail\nKITS=$(cd \"$(dirname \"$0\")/..\" && pwd)\nDATA=$(dirname \"$KITS\")\nMODEL=${MODEL:?set MODEL}\n"
        f"export WORLDFORGE_URL=${{WORLDFORGE_URL:-{DEFAULT_URL}}}\n"
        "# every tool call goes to the server: refuse to train without one (its tools would only return errors)\n"
        "python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + \"/health\", timeout=10)' \"$WORLDFORGE_URL\" "
        "2>/dev/null || { echo \"error: no worldforge server answers at $WORLDFORGE_URL; start it (bash kits/serve.sh) or set "
        "WORLDFORGE_URL\" >&2; exit 1; }\n"
        "python3 -m verl.trainer.main_ppo \\\n" + "".join(f"    {o} \\\n" for o in overrides) + '    "$@"\n')


def _serve_kit(kits: Path) -> None:
    """The script that rebuilds the world from the manifest and serves it (`kits/serve.sh`)."""
    (kits / "serve.sh").write_text(
        "#!/usr/bin/env bash\n# Rebuild this dataset's world from manifest.json alone and serve it (episodes, tools, /retrieve, /mcp).\n"
        "# pip install 'worldforge[serve]'\nset -euo pipefail\nHERE=$(cd \"$(dirname \"$0\")/..\" && pwd)\n"
        "exec worldforge serve --from-manifest \"$HERE/manifest.json\" --build-dir \"${BUILD:-build}\" "
        "--port \"${PORT:-8000}\" --max-episodes \"${MAX_EPISODES:-8192}\" \"$@\"\n")


def _trl_sft_kit(kits: Path, world: str, version: str, s: dict) -> None:
    """TRL's SFT script, loss on the assistant messages of weight 1 (`kits/trl/sft.py`)."""
    (kits / "trl" / "sft.py").write_text(f'''"""SFT with TRL on this dataset's sft config (pip install trl).

    python kits/trl/sft.py MODEL [OUTPUT_DIR]

Loss falls on the assistant messages whose `weight` is 1 (the agent's decisions and answers, and
the research states unless the export set `stages.export.state_weight: 0`): each row is
tokenized here with the model's chat template (TRL's training template, with generation
markers, where the model's own has none) and its assistant mask, then the messages of weight 0
are taken out of that mask.
"""
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[2]
MAX_LENGTH = {s['sft_max_length']}  # the longest SFT row is {s['sft_max_length']} tokens or fewer: nothing is cut


def training_template(tokenizer):
    """The chat template to tokenize with: the model's if it marks assistant turns, else TRL's training one."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    return None if has_generation_markers(tokenizer.chat_template) else get_training_chat_template(tokenizer)


def weighted(row: dict, tokenizer, chat_template=None) -> dict:
    """`input_ids` and `assistant_masks` of one SFT row, the assistant messages of weight 0 masked out."""
    messages = [{{k: v for k, v in m.items() if v is not None and k != "weight"}} for m in row["messages"]]
    for m in messages:
        for c in m.get("tool_calls") or []:  # templates differ on string vs dict arguments; dicts work everywhere
            if isinstance(c["function"].get("arguments"), str):
                c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    out = tokenizer.apply_chat_template(messages, tools=json.loads(row["tools"]), chat_template=chat_template, tokenize=True,
                                        return_dict=True, return_assistant_tokens_mask=True)
    mask = list(out["assistant_masks"])
    weights = [m.get("weight", 1) for m in row["messages"] if m["role"] == "assistant"]
    runs, i = [], 0  # the mask's runs of 1: one per assistant message, in order
    while i < len(mask):
        if mask[i]:
            j = i
            while j < len(mask) and mask[j]:
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    if len(runs) != len(weights):
        raise ValueError(f"row {{row['id']}}: the chat template marks {{len(runs)}} assistant turns for {{len(weights)}} "
                         "assistant messages; use a template with one generation block per assistant message")
    for (a, b), w in zip(runs, weights):
        if not w:
            mask[a:b] = [0] * (b - a)
    return {{"input_ids": list(out["input_ids"]), "assistant_masks": mask}}


if __name__ == "__main__":
    from datasets import load_dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    model = sys.argv[1]
    tokenizer = AutoTokenizer.from_pretrained(model)
    template = training_template(tokenizer)
    train = load_dataset("parquet", data_files=str(DATA / "data/sft/train-*.parquet"))["train"]
    train = train.map(weighted, fn_kwargs={{"tokenizer": tokenizer, "chat_template": template}}, remove_columns=train.column_names)
    config = SFTConfig(output_dir=sys.argv[2] if len(sys.argv) > 2 else "sft-{world}-{version}", max_length=MAX_LENGTH)
    SFTTrainer(model=model, args=config, train_dataset=train, processing_class=tokenizer).train()
''')


def _trl_grpo_kit(kits: Path, world: str, version: str, s: dict, lengths_p50: int, lengths_max: int) -> None:
    """TRL's GRPO script on the environment server (`kits/trl/grpo.py`)."""
    (kits / "trl" / "grpo.py").write_text(f'''"""GRPO with TRL and worldforge's environment (pip install trl 'worldforge[serve]').
Start the environment first (bash kits/serve.sh), then:

    WORLDFORGE_URL=http://127.0.0.1:8000 python kits/trl/grpo.py MODEL [OUTPUT_DIR]
"""
import os
import sys
from pathlib import Path

from worldforge.serve.env import require_server

URL = os.environ.get("WORLDFORGE_URL", "{DEFAULT_URL}")
if len(sys.argv) < 2:
    sys.exit("usage: python kits/trl/grpo.py MODEL [OUTPUT_DIR]")
require_server(URL)  # before the model loads: one line and exit 1 when no server answers

from datasets import load_dataset  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from worldforge.serve.trl import WorldforgeToolEnv  # noqa: E402

DATA = Path(__file__).resolve().parents[2]
train = load_dataset("parquet", data_files=str(DATA / "data/rl/train-*.parquet"))["train"]
config = GRPOConfig(
    output_dir=sys.argv[2] if len(sys.argv) > 2 else "grpo-{world}-{version}",
    # TRL's tool loop keeps one growing completion and cannot compact: this is the context the data was made in
    # (whole trajectories after the prompt: p50 {lengths_p50:,}, max {lengths_max:,} tokens). A longer one is cut before its
    # answer and scores 0; train wide tasks with kits/verl, whose agent loop compacts as the rollouts did.
    max_completion_length={s['max_completion_length']},
    max_tool_calling_iterations={s['max_turns']},
    num_generations=8,
)
trainer = GRPOTrainer(
    model=sys.argv[1], args=config, train_dataset=train,
    environment_factory=WorldforgeToolEnv.factory(URL),
)  # the environment owns the reward (get_reward): the WideSearch score of the final answer
trainer.train()
''')


def _env_kit(kits: Path) -> None:
    """The framework-neutral environment example (`kits/env.py`)."""
    (kits / "env.py").write_text('''"""The framework-neutral environment (reset/step/reward) on this dataset, to wrap in SkyRL-gym,
verifiers or a loop of your own. Start the environment first (bash kits/serve.sh).

    [WORLDFORGE_URL=http://HOST:PORT] python kits/env.py
"""
import json
import os
from pathlib import Path

from worldforge.serve.env import WebSearchEnv, require_server

DATA = Path(__file__).resolve().parents[1]
URL = os.environ.get("WORLDFORGE_URL", "@URL@")
require_server(URL)  # one line and exit 1 when no server answers (after a bounded wait)
row = json.loads((DATA / "jsonl/rl/train.jsonl").open().readline())
env = WebSearchEnv(URL)
messages = env.reset(row["extra_info"]["instance_id"])       # system + user; env.tools: the schemas
out = env.step('<tool_call>\\n{"name": "web_search", "arguments": {"query": "example"}}\\n</tool_call>')
print(out.observations[0]["content"][:400])
out = env.step([{"name": "final_answer", "arguments": {"answer": "| a |\\\\n|---|\\\\n| b |"}}])
print("done", out.done, "reward", out.reward)
env.close()
'''.replace("@URL@", DEFAULT_URL))


def training_section(lengths: dict, s: dict, world: str) -> list[str]:
    """The dataset card's "Training" section."""
    rows = [("prompt (system, task and any state resumed from, tool schemas)", "rl_prompt_tokens", "tokens"),
            ("SFT row (one sample with tools)", "sft_tokens", "tokens"),
            ("sample after its prompt (a segment's assistant and tool turns)", "response_tokens", "tokens"),
            ("whole trajectory after its prompt (without compaction)", "trajectory_response_tokens", "tokens"),
            ("one tool result", "tool_result_chars", "characters"),
            ("tool calls in one assistant turn", "calls_per_turn", "calls"),
            ("assistant turns", "turns", "turns")]
    out = ["## Training", "",
           f"Lengths in this dataset, {lengths['counted']}:", "",
           "| length | unit | p50 | p99 | max |", "|---|---|---:|---:|---:|"]
    out += [f"| {label} | {unit} | {lengths[k]['p50']:,} | {lengths[k]['p99']:,} | {lengths[k]['max']:,} |" for label, k, unit in rows]
    if lengths.get("sft_rows_over_model_context"):
        out += ["", f"**{lengths['sft_rows_over_model_context']:,} SFT rows are longer than the model's context** "
                f"({lengths['model_context']:,} tokens, from `{lengths['tokenizer']}`): a trainer cuts them (the kit's "
                "`max_length` keeps them whole, which that model cannot attend over). Train a model with a longer context, "
                "or roll out with a smaller `stages.rollout.context_tokens` so that every segment fits."]
    sized = ("Settings sized from them (nothing in the data is cut)" if lengths.get("tokenizer") else
             f"Settings sized from them with {round((ESTIMATE_MARGIN - 1) * 100)} % more room on the SFT and response lengths "
             "(an estimate: a real tokenizer counts up to about 13 % more on some rows), so nothing in the data is cut")
    out += ["", f"{sized}; `kits/` holds them ready to run:", "",
            "| setting | value | where |", "|---|---:|---|",
            f"| batch | {s['train_batch_size']} prompts, mini-batches of {s['ppo_mini_batch_size']} | verl `data.train_batch_size`, "
            "`actor.ppo_mini_batch_size` (defaults 1024 and 256: a split smaller than a batch trains 0 steps) |",
            f"| prompt length | {s['max_prompt_length']:,} | verl `data.max_prompt_length` (default 512 cuts the tool schemas) |",
            f"| response length | {s['max_response_length']:,} | verl `data.max_response_length` (one segment; the agent loop compacts) |",
            f"| completion length | {s['max_completion_length']:,} | TRL GRPO `max_completion_length`: TRL keeps one growing completion "
            "and cannot compact, so this is the context budget; a longer trajectory is cut before its answer (reward 0): "
            "train wide tasks with the verl kit, which compacts |",
            f"| SFT max length | {s['sft_max_length']:,} | TRL `SFTConfig.max_length` (default 1024) |",
            f"| parallel calls | {s['max_parallel_calls']} | verl `multi_turn.max_parallel_calls` (default 1) |",
            f"| tool response length | {s['max_tool_response_length']:,} characters | verl `multi_turn.max_tool_response_length` (default 256) |",
            f"| turns | {s['max_turns']} | verl `multi_turn.max_assistant_turns`, TRL `max_tool_calling_iterations` |",
            f"| context budget | {s.get('context_tokens') or 0:,} | `kits/verl/agent_loop.yaml` `context_tokens`: past 9/10 of it the "
            "agent writes its research state, and each segment is one verl output |",
            "", "Serve the environment (the world is rebuilt from `manifest.json` alone, checked against it, and served: "
            "episodes, `web_search`/`web_extractor`, Search-R1's `/retrieve`, MCP at `/mcp`):", "",
            "```bash", "pip install 'worldforge[serve]'",
            "worldforge serve --from-manifest manifest.json --build-dir build --port 8000   # or: bash kits/serve.sh", "```", "",
            "- **verl**: `MODEL=Qwen/Qwen3-8B bash kits/verl/run_grpo.sh`. `kits/verl/tool_config.yaml` declares "
            f"`{TOOL_CLASS}` with the canonical schemas, `kits/verl/agent_loop.yaml` the loop `{AGENT_NAME}` that ends at "
            "`final_answer`; RL rows carry `agent_name` and `extra_info.tools_kwargs` (the task of each tool's episode); "
            f"the reward is `custom_reward_function.path={REWARD_PATH}` (`compute_score`, verl's signature; the ground truth "
            "carries the gold table, WideSearch's evaluation, the key aliases and the scorer, so it equals the live reward).",
            "- **TRL**: `python kits/trl/sft.py MODEL` (SFT on the `sft` config) and `python kits/trl/grpo.py MODEL` "
            "(GRPO with `worldforge.serve.trl.WorldforgeToolEnv` as `environment_factory`; the environment owns the reward).",
            "- **Any trainer**: `worldforge.serve.env.WebSearchEnv(url)` has `reset(task_id)`, `step(text or calls)` and "
            "`reward()` (see `kits/env.py`); wrap it in SkyRL-gym's or verifiers' environment classes.", ""]
    return out
