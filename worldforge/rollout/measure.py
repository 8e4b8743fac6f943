"""How honest and how varied trajectories are, measured from the trajectories themselves.

- `reasoning_skeletons`: the sentences of the assistant's messages with names, links, dates and
  numbers folded (`web.grammar.skeleton`, the measure the web's variety report uses): a policy
  that fills twenty f-strings shows a few dozen skeletons however many trajectories it writes.
- `unseen_opens`: pages opened whose address no earlier tool result showed (an agent can only
  open what a search or a page showed it), over the whole trajectory, its results replayed
  through `Environment.execute` (the grounding check, `grounding.py`, asks the same of each
  sample, against what that sample shows).
- `rejected_opens`: on tasks with NOT or OR, how many page opens were of candidates that did not
  make it into the answer (checking and dropping candidates is the skill those tasks train).
- `sample_tokens`: the length of a training sample (a context segment, `context.samples`), tool
  schemas included, with a tokenizer or the 4-characters-a-token estimate.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable

from ..web.grammar import prose_sentences, skeleton

_URL = re.compile(r"https?://[^\s)\]<>\"']+")


def reasoning_skeletons(trajectories: Iterable[dict]) -> Counter:
    """Skeleton -> sentences, over every assistant message of the trajectories."""
    out: Counter = Counter()
    for t in trajectories:
        for m in t["messages"]:
            if m["role"] == "assistant" and m.get("content"):
                for s in prose_sentences(m["content"]):
                    out[skeleton(s, None)] += 1
    return out


def _calls(t: dict) -> list[tuple[str, dict]]:
    out = []
    for m in t["messages"]:
        for c in m.get("tool_calls") or ():
            try:
                args = json.loads(c["function"]["arguments"])
            except ValueError:
                args = {}
            out.append((c["function"]["name"], args if isinstance(args, dict) else {}))
    return out


def unseen_opens(t: dict, execute: Callable[[str, int, str, dict], tuple[str, str | None]]) -> list[str]:
    """URLs a trajectory opened that no earlier result of its own showed. `execute` replays a call
    (`Environment.execute`) for the original text of every result."""
    key = f"{t['instance_id']}#{t['sample']}"
    shown: set[str] = set()
    bad = []
    for i, (name, args) in enumerate(_calls(t)):
        if name == "final_answer":
            continue
        if name == "web_extractor":
            url = args.get("url", "")
            if url not in shown:
                bad.append(url)
        try:
            text, _ = execute(key, i, name, args)
        except Exception:  # noqa: BLE001 - a malformed call shows nothing
            continue
        shown.update(u.rstrip(".,;") for u in _URL.findall(text))
    return bad


def rejected_opens(t: dict, record: dict, type_of: Callable[[str], tuple[str, str] | None]) -> tuple[int, int]:
    """(opens of candidates left out of the answer, all page opens) of one trajectory: an opened
    article of an entity of the task's row type whose name no cell of the answer holds.
    `type_of(url)` gives an article's (entity type, name), or None for other pages."""
    answer = t.get("answer") or ""
    cells = {c.strip().casefold() for line in answer.splitlines() if line.startswith("|") for c in line.strip("|").split("|")}
    row_type = (record.get("question") or {}).get("type")
    total = rejected = 0
    for name, args in _calls(t):
        if name != "web_extractor":
            continue
        total += 1
        got = type_of(args.get("url", ""))
        if got is not None and got[0] == row_type and got[1].casefold() not in cells:
            rejected += 1
    return rejected, total


def negating(record: dict) -> bool:
    """A task with NOT or OR among its conditions."""
    combo = record.get("combo") or (record.get("question") or {}).get("combo") or ""
    return "!" in combo or "|" in combo


def sample_tokens(messages: list[dict], tools: list[dict], count: Callable[[str], int]) -> int:
    """Tokens of a training sample (`context.samples`): its messages, their tool calls and the
    tool schemas, with the chat template's few tokens each."""
    from .env import MESSAGE_OVERHEAD

    n = count(json.dumps(tools, ensure_ascii=False))
    for m in messages:
        n += count(m.get("content") or "") + MESSAGE_OVERHEAD
        for c in m.get("tool_calls") or ():
            n += count(c["function"]["name"]) + count(c["function"]["arguments"]) + MESSAGE_OVERHEAD
    return n
