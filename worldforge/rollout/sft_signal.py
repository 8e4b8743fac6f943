"""Issue 55's table of what the SFT loss of an export falls on (`benchmarks/sft_signal.py`
prints it; `tests/test_shipped.py` holds each shipped world to it)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ..tokens import estimate_tokens
from .env import TOOLS, load_tasks
from .measure import (
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
from .stage import read_trajectories


def sft_signal(world, export, count: Callable[[str], int] | None = None, budget: int = 32_000) -> dict:
    """What the SFT loss of an export falls on (issue 55's table; `benchmarks/sft_signal.py` prints
    it): narration skeleton shares, first messages opening with a connective, research notes'
    share of the assistant's characters and notes with a column named twice, SFT rows from wrong
    answers, the oracle's count cells below gold, samples over `budget` tokens (the estimate, and
    `count` when given), samples grounded, trajectories below 1.0 and train tasks kept."""
    world, export = Path(world), Path(export)
    trajs = read_trajectories(world)
    tasks = {t.id: t for t in load_tasks(world)}
    man = json.loads((export / "manifest.json").read_text())
    sft = [json.loads(line) for f in sorted((export / "jsonl" / "sft").glob("*.jsonl")) for line in f.open()]
    mask = NameMask.of_world(world)
    skel: Counter = Counter()
    for t in trajs:
        for s in narration_sentences(t["messages"]):
            skel[narration_skeleton(s, mask)] += 1
    firsts = [next((m["content"] for m in t["messages"] if m["role"] == "assistant"), "") for t in trajs]
    state_chars = all_chars = states = repeated = 0
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
    below = compared = 0
    for t in trajs:
        task = tasks.get(t["instance_id"])
        if task is not None:
            b, c = count_cells_below_gold(t.get("answer"), task.record, task.header, task.rows)
            below, compared = below + b, compared + c
    est = [sample_tokens(r["messages"], TOOLS, estimate_tokens) for r in sft]
    real = [sample_tokens(r["messages"], TOOLS, count) for r in sft] if count is not None else None
    g = man["grounding"]
    f = man.get("sft_filter") or {}
    train = (f.get("by_split") or {}).get("train") or {}
    return {
        "language": tasks[trajs[0]["instance_id"]].record.get("language", "en") if trajs else "en",
        "trajectories": len(trajs), "sft_rows": len(sft), "skeletons": skeleton_shares(skel),
        "connective": sum(opens_with_connective(x) for x in firsts) / max(1, len(firsts)),
        "state_share": state_chars / max(1, all_chars), "states": states, "repeated": repeated,
        "wrong_rows": sum(1 for r in sft if r["reward"] < 1.0), "below": below, "compared": compared,
        "over_est": sum(x > budget for x in est) / max(1, len(est)),
        "over_real": None if real is None else sum(x > budget for x in real) / max(1, len(real)),
        "grounded": (g["samples"] - g["failed"]) / max(1, g["samples"]),
        "below_one": sum(t["reward"] < 1.0 for t in trajs) / max(1, len(trajs)),
        "kept_share": train.get("tasks_kept", 0) / max(1, train.get("tasks", 0)), "sft_filter": f,
    }
