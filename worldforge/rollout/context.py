"""Context compaction and training samples: what the model saw when it acted.

An agent's context grows turn by turn. When it passes `COMPACT_AT` of the budget (less the
size of the state it resumed from, which the next state will be about as long as), the
environment asks the agent (a user message, `compaction_prompt`) to write its *research state*:
the task, the candidates found with their URLs, the values read with where each was read, the
conditions still to check and the pages still to open. The agent answers with that state (an
assistant turn without tool calls) and continues from `[system, user: task + state]`
(`resume_content`), as ReSum (arXiv 2509.13313) and SUPO (arXiv 2510.06727) do. Whatever the
later turns use is in the state, so every later action is supported by what is visible.

A trajectory is therefore a run of *segments*: maximal runs of turns whose context only grows.
A segment's sample is exactly what the model saw: its prefix (system, and the task, with the
previous segment's state from the second segment on), then its turns, ending with the state it
wrote (every segment but the last) or the final answer (the last). `samples` cuts a trajectory
record into those samples; `context: full` joins the segments' turns into one unsummarised
conversation (the compaction exchanges left out) for long-context trainers.

The same texts drive the vLLM agent, the oracle and the trainer kits (verl's agent loop, the TRL
environment), so a rollout in training compacts exactly as the exported data does. Nothing here
imports a heavy library.
"""

from __future__ import annotations

from dataclasses import dataclass

COMPACT_AT = 0.8  # the visible context passes this share of the budget, less the state it started from: write the state
MIN_TURNS = 2  # action turns a segment holds at least before it may be compacted (a state always buys progress)

_PROMPT = {
    "en": ("Context limit: this conversation now holds about {used:,} of {budget:,} tokens. Before you go on, write your "
           "research state as one message, without tool calls: the task in a line; the candidates found so far with "
           "their URLs and what is decided about each; every value read so far, with the page it was read on; the "
           "conditions still to check; and the pages still to open, with their URLs. The conversation then continues "
           "from the task and this state alone: anything you leave out of it is lost."),
    "zh": ("上下文已接近上限：当前对话约 {used:,} 个 token（上限 {budget:,}）。继续之前，请先用一条消息写下研究进展，"
           "不要调用工具：一句话说明任务；目前找到的候选及其网址，以及每个候选的判定；已读到的每个数值及其出处页面；"
           "尚待核对的条件；尚待打开的页面及其网址。之后的对话只保留任务和这份进展，其中没有写下的内容都会丢失。"),
}
_RESUME = {
    "en": "My research state, written before the earlier context was cleared (I continue from it):",
    "zh": "我的研究进展（在清空先前的上下文之前写下，我从这里继续）：",
}


def language_of(language: str | None) -> str:
    return "zh" if language == "zh" else "en"


def compaction_prompt(used: int, budget: int, language: str | None = "en") -> str:
    """The user message that asks the agent for its research state."""
    return _PROMPT[language_of(language)].format(used=used, budget=budget)


def resume_content(query: str, state: str, language: str | None = "en") -> str:
    """The user message a new segment starts from: the task, then the state the agent wrote."""
    return f"{query}\n\n---\n{_RESUME[language_of(language)]}\n\n{state}"


def compact_threshold(budget: int | None, state_tokens: int = 0) -> int | None:
    """Visible tokens past which a context is compacted (None: never). The segment ends with a
    new state about as long as the one it started from (`state_tokens`), so the point comes that
    much earlier: the segment, state included, stays within the budget."""
    return None if budget is None else int(budget * COMPACT_AT) - state_tokens


@dataclass
class Sample:
    """One training sample of a trajectory: the messages the model saw, and where they came from."""

    messages: list[dict]
    segment: int  # 0-based; -1 for a whole-trajectory (context: full) sample
    segments: int  # segments of the trajectory
    turns: tuple[int, int]  # message indexes [start, end) of the sample's own turns in the trajectory's messages
    final: bool  # holds the trajectory's end (its answer)


def segment_bounds(trajectory: dict) -> list[dict]:
    """A trajectory's segments: `{"prefix", "start", "end"}`; a record from before segments
    (one context, whole) is one segment."""
    segs = trajectory.get("segments")
    if segs:
        return segs
    msgs = trajectory["messages"]
    return [{"prefix": msgs[:2], "start": 2, "end": len(msgs)}]


def samples(trajectory: dict, mode: str = "segments") -> list[Sample]:
    """The training samples of a trajectory record: one per segment (`segments`), or the whole
    trajectory with the compaction exchanges left out (`full`)."""
    segs = segment_bounds(trajectory)
    msgs = trajectory["messages"]
    if mode == "full":
        body: list[dict] = []
        for i, s in enumerate(segs):
            end = s["end"] if i == len(segs) - 1 else s["end"] - 2  # without the compaction prompt and the state
            body += msgs[s["start"]:end]
        return [Sample(list(segs[0]["prefix"]) + body, -1, len(segs), (segs[0]["start"], segs[-1]["end"]), True)]
    if mode != "segments":
        raise ValueError(f"unknown context mode {mode!r}; choose segments or full")
    return [Sample(list(s["prefix"]) + msgs[s["start"]:s["end"]], i, len(segs), (s["start"], s["end"]), i == len(segs) - 1)
            for i, s in enumerate(segs)]


def joined(rows: list[dict]) -> list[dict]:
    """A whole trajectory's messages from its exported segment rows (any order): the first
    segment's prefix, then every segment's turns without the compaction exchanges."""
    rows = sorted(rows, key=lambda r: r["segment"])
    out: list[dict] = list(rows[0]["messages"][:2])
    for i, r in enumerate(rows):
        body = r["messages"][2:]
        out += body if i == len(rows) - 1 else body[:-2]  # without the compaction prompt and the state
    return out
