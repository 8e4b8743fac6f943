"""Context compaction and training samples: what the model saw when it acted.

An agent's context grows turn by turn. When it passes `COMPACT_AT` of the budget (less the
size of the last note it wrote, which the next one will be about as long as, or of all of them
when the next one replaces them), the environment
asks the agent (a user message, `compaction_prompt`) to write a *research note*: what it has
settled since its last note (rows decided with their values, candidates rejected) and
everything still open (candidates and rows with their URLs, values read, conditions to check,
pages to open). The agent answers with the note (an assistant turn without tool calls) and
continues from `[system, user: task + every note so far]` (`resume_content`), as ReSum (arXiv
2509.13313) and SUPO (arXiv 2510.06727) do with a summary, except that no note repeats an
earlier one: a settled row is written once. Whatever the later turns use is in the notes, so
every later action is supported by what is visible.

A trajectory is therefore a run of *segments*: maximal runs of turns whose context only grows.
A segment's sample is exactly what the model saw: its prefix (system, and the task, with the
notes written before it from the second segment on), then its turns, ending with the note it
wrote (every segment but the last) or the final answer (the last). `samples` cuts a trajectory
record into those samples; `context: full` joins the segments' turns into one unsummarised
conversation (the compaction exchanges left out) for long-context trainers.

The same texts drive the vLLM agent, the oracle and the trainer kits (verl's agent loop, the TRL
environment), so a rollout in training compacts exactly as the exported data does. Nothing here
imports a heavy library.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..language import get as get_language
from .narrator import bank as narration_bank

COMPACT_AT = 0.9  # the visible context passes this share of the budget, less the next note's size: write a note
CONSOLIDATE_AT = 0.4  # the notes so far take more than this share of the budget: the next note replaces them all
MIN_TURNS = 2  # action turns a segment holds at least before it may be compacted (a state always buys progress)

def _words(language: str | None) -> dict[str, str]:
    """What the environment says about the context budget, in the task's language."""
    return narration_bank(get_language(language).code)["context"]


def compaction_prompt(used: int, budget: int, language: str | None = "en") -> str:
    """The user message that asks the agent for its research note."""
    return _words(language)["compact"].format(used=used, budget=budget)


def consolidation_prompt(used: int, budget: int, notes: int, language: str | None = "en") -> str:
    """The user message that asks for one note replacing all earlier ones (they fill the context)."""
    return _words(language)["consolidate"].format(used=used, budget=budget, notes=notes)


def consolidates(notes_tokens: int, budget: int | None, last_whole: int = 0) -> bool:
    """Whether the notes so far take so much of the budget that the next note must replace them
    all: past `CONSOLIDATE_AT` of it, and half as long again as the last note that replaced them
    (`last_whole`: a note that carries everything is long, and the ones after it add little)."""
    return budget is not None and notes_tokens > max(CONSOLIDATE_AT * budget, 1.5 * last_whole)


def resume_content(query: str, states: list[str] | str, language: str | None = "en") -> str:
    """The user message a new segment starts from: the task, then every note the agent wrote."""
    notes = [states] if isinstance(states, str) else list(states)
    return f"{query}\n\n---\n{_words(language)['resume']}\n\n" + "\n\n".join(notes)


def compact_limit(budget: int | None, note_tokens: int = 0, grew: int = 0, replacing_tokens: int = 0) -> int | None:
    """Where a segment is closed by a note (None: never), for the rollouts' environment and the
    verl kit's agent loop alike: `COMPACT_AT` of the budget, less room for the note (as long as
    the last one, `note_tokens`, a tenth of the budget before the first, and as long as all of
    them, `replacing_tokens`, when the next one replaces them) and for a turn like the last one
    (half of what it added, `grew`): the segment, its next turn and its note stay in the budget."""
    if budget is None:
        return None
    return compact_threshold(budget, max(note_tokens, budget // 10, replacing_tokens)) - max(grew, 0) // 2


def compact_threshold(budget: int | None, state_tokens: int = 0) -> int | None:
    """Visible tokens past which a context is compacted (None: never). The segment ends with a
    new note about as long as the last one (`state_tokens`), so the point comes that much
    earlier: the segment, note included, stays within the budget."""
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
