"""A tiny random-weight Qwen3-style model plus a byte-level BPE tokenizer with a Qwen chat template,
built locally so the vLLM code path can be smoke-tested on a CPU machine without hub access.
Random weights produce garbage text: tests built on it should assert on the pipeline, not on prose."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>")
VOCAB_SIZE = 3072
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")

# Qwen3's template, trimmed: tools in the system turn, hermes-style <tool_call> JSON, tool results as a user
# turn of <tool_response> blocks, and `enable_thinking=False` pre-filling an empty think block.
CHAT_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
    {{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' }}
    {{- 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
    {%- for tool in tools %}{{- '\n' + (tool | tojson) }}{%- endfor %}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' }}
    {{- '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- set content = message.content if message.content is string else '' %}
    {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + content + '<|im_end|>\n' }}
    {%- elif message.role == 'assistant' %}
        {{- '<|im_start|>assistant\n' + content }}
        {%- for tool_call in message.tool_calls or [] %}
            {%- if content or not loop.first %}{{- '\n' }}{%- endif %}
            {%- set call = tool_call.function if tool_call.function else tool_call %}
            {{- '<tool_call>\n{"name": "' + call.name + '", "arguments": ' }}
            {{- call.arguments if call.arguments is string else (call.arguments | tojson) }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
        {{- '\n<tool_response>\n' + content + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- endif %}"""


_NOUNS = (
    "company city river museum library council newspaper railway university hospital airport bridge festival album novel film season league team player coach "
    "author painter scientist engineer minister president senator mayor district province region country island mountain valley lake forest desert harbor "
    "station tower castle cathedral stadium theater market factory farm mine school college journal magazine report study survey census election treaty "
    "war battle army navy fleet empire kingdom republic dynasty language religion currency population area altitude revenue profit budget salary price "
    "record award prize medal trophy champion winner founder owner member director editor publisher producer singer actor character episode chapter volume "
    "page website article snippet result query table column row cell value answer question source reference citation date year month decade century"
).split()
_VERBS = (
    "founded opened closed built designed published released recorded produced directed wrote painted discovered invented measured reported announced "
    "elected appointed defeated joined left moved renamed acquired merged expanded reduced increased signed ratified hosted organized launched completed "
    "described explained compared listed ranked counted estimated verified searched extracted answered cited translated restored demolished celebrated"
).split()
_ADJECTIVES = (
    "small large ancient modern northern southern eastern western central coastal rural urban famous obscure official historical annual national regional "
    "local public private independent major minor early late former current original second third final previous following largest smallest oldest newest"
).split()
_SYLLABLES = "ka lo ri ven dor mar tel sa ni bra tor el an is ul ve mo ra li den gal thu quin zar bel cor dra fen hal jor kel lun mer nor pel ros sil tam val".split()
_MONTHS = "January February March April May June July August September October November December".split()


def builtin_corpus() -> Iterator[str]:
    """About 800 varied English lines (prose, fictional names, numbers, dates, URLs, JSON, markdown, chat roles) drawn with a
    fixed-seed RNG: seed-independent, so the tokenizer is identical for every seed and only the weights vary."""
    rng = random.Random(20240601)
    names = [(a + b + rng.choice(("", "a", "on", "ia", "heim", "ford"))).title() for a, b in itertools.product(_SYLLABLES, repeat=2)]
    for i in range(800):
        n, v, a, name = rng.choice(_NOUNS), rng.choice(_VERBS), rng.choice(_ADJECTIVES), rng.choice(names)
        year, month, num = rng.randint(1600, 2025), rng.choice(_MONTHS), rng.randint(1, 10 ** rng.randint(1, 7))
        yield rng.choice(
            (
                f"The {a} {n} of {name} was {v} in {month} {year}, and it now counts {num:,} {rng.choice(_NOUNS)}s.",
                f"In {year}, {name} {v} the {a} {n}; the {rng.choice(_NOUNS)} reported a value of {num / 100:.2f} percent.",
                f"Which {n} in {name} has the {a} {rng.choice(_NOUNS)}? Search for it and answer with a markdown table.",
                f"According to {name} Weekly ({month} {rng.randint(1, 28)}, {year}), the {n} was {v} by {rng.choice(names)} {rng.choice(names)}.",
                f"Title: {name} {n.title()} - {a.title()} Records\nSnippet: the {n} was {v} in {year} ...\nDate: {month[:3]} {rng.randint(1, 28)}, {year}",
                f"[{i % 10 + 1}] https://www.{name.lower()}.{rng.choice(('org', 'com', 'net', 'gov'))}/wiki/{n}/{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                f'{{"name": "{rng.choice(("web_search", "web_extractor"))}", "arguments": {{"query": "{a} {n} {name} {year}"}}}}',
                f"| {name} | {n} | {num} | {year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} | {v} |",
            )
        )
    for role in ("system", "user", "assistant", "tool"):
        yield f"{role}\nYou are a helpful assistant. Think step by step, call tools when needed, and answer with a markdown table.\n"
    yield "<tool_response>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n</tool_response>\n<tools>\n</tools>"


def make_tiny_model(path: str | Path, seed: int = 0, corpus: Iterable[str] | None = None, overwrite: bool = False) -> Path:
    """Create a tiny random-weight Qwen3-style causal LM and a byte-level BPE tokenizer at `path`
    (config.json, safetensors weights, tokenizer files with a chat template), for smoke-testing the vLLM
    code path on a CPU machine without hub access. Deterministic for a given seed. Returns the path.

    Built in a temporary sibling folder and renamed into place, so `path` never holds a half-written model.
    An existing non-empty `path` raises FileExistsError unless `overwrite`."""
    path = Path(path).absolute()
    if path.exists() and (not path.is_dir() or any(path.iterdir())) and not overwrite:
        what = "a complete model" if all((path / f).exists() for f in REQUIRED_FILES) else "other files"
        raise FileExistsError(f"{path} already holds {what}; pass overwrite=True to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        _build(tmp, seed, corpus)
        for f in (tmp, *tmp.iterdir()):  # mkdtemp and the safetensors writer create owner-only modes; a model folder is meant to be shared.
            f.chmod(0o755 if f.is_dir() else 0o644)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
            os.replace(path, old / "x")
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            try:
                os.replace(tmp, path)
            except OSError as e:  # another process filled `path` while we were building
                raise FileExistsError(f"{path} appeared while the model was being built") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _build(out: Path, seed: int, corpus: Iterable[str] | None) -> None:
    """Train the tokenizer, then size the model from it and save both into `out`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM
    from transformers.utils import logging as hf_logging

    # Byte-level BPE (as Qwen uses) covers any input string, so smoke prompts never hit an unknown token.
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=list(SPECIAL_TOKENS), initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(itertools.chain(builtin_corpus(), corpus or ()), trainer=trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", additional_special_tokens=list(SPECIAL_TOKENS[3:]))
    tok.chat_template = CHAT_TEMPLATE
    tok.model_max_length = 32768
    tok.save_pretrained(out)

    ids = {t: bpe.token_to_id(t) for t in SPECIAL_TOKENS}
    # head_dim 32 is the smallest size CPU attention in vLLM supports; 2 KV heads keep grouped-query attention exercised.
    config = Qwen3Config(
        vocab_size=len(tok),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        max_position_embeddings=32768,
        max_window_layers=2,
        rope_parameters={"rope_type": "default", "rope_theta": 1_000_000.0},
        tie_word_embeddings=True,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        architectures=["Qwen3ForCausalLM"],
        dtype="float32",
    )
    with torch.random.fork_rng(devices=[]):  # seed the init without disturbing the caller's global RNG
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config).to(torch.float32).eval()
    model.generation_config = GenerationConfig(
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
        pad_token_id=ids["<|endoftext|>"],
        do_sample=True,
        temperature=0.6,
        top_p=0.95,
        top_k=20,
    )  # Qwen3's recommended sampling; vLLM takes these as defaults for unset SamplingParams fields.
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a one-shard "Writing model shards" bar is noise in test logs
    try:
        model.save_pretrained(out)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
