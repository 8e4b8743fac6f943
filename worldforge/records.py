"""The rows a worldforge dataset holds, as typed and versioned records.

One model per row kind, from which the Parquet schema (`arrow_schema`), the JSON Schema a dataset
publishes (`row_schemas`, in `manifest.json` under `records` and as field tables in the card) and
the check export runs on every row (`SFTRow.model_validate`) all come: a row that does not match
its record stops the export with the field that is wrong rather than landing as a null.

- `SFTRow`: one training sample of a trajectory (a context segment, or the whole trajectory with
  `context: full`): exactly the messages the model saw, each assistant message's loss `weight`,
  the trajectory's reward and score, its steps and context-budget record.
- `RLRow`: one task as verl's RL dataset reads it (`data_source`, `prompt`, `reward_model`,
  `extra_info` with the agent loop's `tools_kwargs`).

`RECORDS_VERSION` is raised whenever a row's fields change; `read_rows` refuses a dataset of
another version with what to do, instead of handing a trainer rows it would misread.
"""

from __future__ import annotations

import types
import typing
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from .errors import WorldforgeError
from .plumbing import read_json

RECORDS_VERSION = 1
SPLITS = ("train", "validation", "test")  # the splits an export writes


class RecordsError(WorldforgeError):
    """A dataset whose rows are not the records this worldforge reads."""


class Shape(StrEnum):
    """What a task asks: a table of every entity that satisfies the conditions, or one value at the
    end of a chain of links (a multi-hop question)."""

    TABLE = "table"
    MULTIHOP = "multihop"


class Arrow:
    """The Arrow type a field is stored as, where Python's type does not say it (int32 counts)."""

    def __init__(self, type_: pa.DataType):
        self.type = type_


I32 = Annotated[int, Arrow(pa.int32())]


class Record(BaseModel):
    """A row or a part of one: every field declared, nothing else accepted."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Function(Record):
    name: str
    arguments: str  # the call's arguments as JSON text (OpenAI's tool-call format)


class ToolCall(Record):
    id: str
    type: str  # "function"
    function: Function


class Message(Record):
    """A chat message in OpenAI's format, with its loss weight."""

    role: str  # system | user | assistant | tool
    content: str
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    weight: I32 | None = None  # an assistant message's loss weight, 0 or 1; null elsewhere


class Step(Record):
    """One tool call of the trajectory: which turn made it, and what the environment did to it."""

    call: I32
    turn: I32
    tool: str
    perturbation: str | None = None  # the perturbation the environment applied (a failed call, a stale page)
    error: str | None = None


class Context(Record):
    """The context budget's record: the budget, the largest context the policy saw, how many times
    it wrote its research state, and each segment's size in tokens."""

    budget: int | None
    peak: int
    compactions: I32
    sizes: list[int]


class Score(Record):
    """The trajectory's answer scored against the gold table (WideSearch's metrics)."""

    success: float
    row_precision: float
    row_recall: float
    row_f1: float
    item_precision: float
    item_recall: float
    item_f1: float


class Tokens(Record):
    prompt: int
    assistant: int
    tool: int


class SFTRow(Record):
    """One SFT sample (`data/sft/<split>-*.parquet`, `jsonl/sft/<split>.jsonl`)."""

    id: str  # '<instance_id>#<sample>' or '<instance_id>#<sample>/<segment>'
    trajectory_id: str
    segment: I32
    segments: I32
    instance_id: str
    sample: I32
    world: str
    kind: Shape
    policy: str
    messages: list[Message]
    tools: str  # the tool definitions as JSON text
    reward: float
    score: Score
    end: str  # how the trajectory ended: answered, out of turns, ...
    turns: I32
    tool_calls: I32
    tokens: Tokens
    steps: list[Step]
    context: Context


class PromptMessage(Record):
    role: str
    content: str


class RewardModel(Record):
    style: str  # "rule"
    ground_truth: str  # JSON text: what `worldforge.rewards.compute_score` scores an answer against


class CreateKwargs(Record):
    task_id: str


class ToolKwargs(Record):
    create_kwargs: CreateKwargs


class ToolsKwargs(Record):
    """Each tool's episode: the row's task (verl's agent loop passes these to the tool)."""

    web_search: ToolKwargs
    web_extractor: ToolKwargs
    final_answer: ToolKwargs


class ExtraInfo(Record):
    index: int
    split: str
    instance_id: str
    world: str
    language: str
    kind: Shape
    entity_type: str
    rows: I32
    columns: I32
    hops: I32
    constraints: I32
    min_pages: I32
    tools: str
    tools_kwargs: ToolsKwargs


class RLRow(Record):
    """One RL task (`data/rl/<split>-*.parquet`, `jsonl/rl/<split>.jsonl`), verl's dataset layout."""

    data_source: str
    agent_name: str
    prompt: list[PromptMessage]
    ability: str
    reward_model: RewardModel
    extra_info: ExtraInfo


ROWS: dict[str, type[Record]] = {"sft": SFTRow, "rl": RLRow}

# --------------------------------------------------------------------------- the Arrow schema

_SCALARS = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}


def _arrow_type(annotation: Any) -> pa.DataType:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        base, *meta = typing.get_args(annotation)
        given = next((m.type for m in meta if isinstance(m, Arrow)), None)
        return given if given is not None else _arrow_type(base)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"a record field is one type or None, not {annotation}")
        return _arrow_type(args[0])
    if origin is list:
        return pa.list_(_arrow_type(typing.get_args(annotation)[0]))
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return pa.struct(_fields(annotation))
    if isinstance(annotation, type) and issubclass(annotation, StrEnum):
        return pa.string()
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    raise TypeError(f"no Arrow type for a record field of type {annotation}")


def _fields(model: type[Record]) -> list[tuple[str, pa.DataType]]:
    hints = typing.get_type_hints(model, include_extras=True)
    return [(name, _arrow_type(hints[name])) for name in model.model_fields]


def arrow_schema(model: type[Record]) -> pa.Schema:
    """The Parquet schema of a row record (field order as declared)."""
    return pa.schema(_fields(model))


def row_schemas() -> dict:
    """What `manifest.json` publishes under `records`: the version and each row kind's JSON Schema."""
    return {"version": RECORDS_VERSION, **{k: m.model_json_schema() for k, m in ROWS.items()}}


def field_table(model: type[Record]) -> list[str]:
    """A markdown table of a row's top-level fields (the dataset card's), from the record."""
    hints = typing.get_type_hints(model, include_extras=True)
    lines = ["| field | type |", "|---|---|"]
    for name in model.model_fields:
        lines.append(f"| `{name}` | `{_arrow_type(hints[name])}` |")
    return lines


def check_rows(kind: str, rows: list[dict]) -> None:
    """Every row is its record (export runs this before it writes anything)."""
    model = ROWS[kind]
    for row in rows:
        try:
            model.model_validate(row)
        except ValueError as e:
            rid = row.get("id") or (row.get("extra_info") or {}).get("instance_id")
            raise RecordsError(f"a {kind} row ({rid}) is not a {model.__name__} record: {e}") from None


# --------------------------------------------------------------------------- reading a dataset


def check_version(manifest: dict, where: str) -> None:
    """Refuse a dataset whose rows are another records version than this worldforge's."""
    got = (manifest.get("records") or {}).get("version")
    if got == RECORDS_VERSION:
        return
    made = f"records version {got}" if got is not None else "rows of no declared version (an older worldforge)"
    raise RecordsError(f"{where} holds {made}; this worldforge reads records version {RECORDS_VERSION}: export the "
                       f"world again (`worldforge export WORLD_DIR --force`), or read it with the worldforge that made it "
                       f"(its manifest's `packages`)")


def read_rows(dataset: str | Path, kind: str, split: str):
    """One split of a dataset's rows as a polars DataFrame, after checking the records version
    (`kind`: sft or rl; `split`: train, validation or test)."""
    import polars as pl

    if kind not in ROWS:
        raise RecordsError(f"no row kind '{kind}': choose one of {', '.join(ROWS)}")
    dataset = Path(dataset)
    man = dataset / "manifest.json"
    if not man.is_file():
        raise RecordsError(f"{dataset} holds no manifest.json: give a dataset folder (exports/<world>/<version>)")
    manifest = read_json(man, "export the world again (`worldforge export WORLD_DIR --force`)")
    if not isinstance(manifest, dict):
        raise RecordsError(f"{man} is not a worldforge manifest (a JSON {type(manifest).__name__}, not an object); export "
                           "the world again (`worldforge export WORLD_DIR --force`)")
    check_version(manifest, str(dataset))
    if split not in SPLITS:
        raise RecordsError(f"no split '{split}': choose one of {', '.join(SPLITS)}")
    files = sorted((dataset / "data" / kind).glob(f"{split}-*.parquet"))
    if not files:
        raise RecordsError(f"{dataset} has no {kind} rows in split '{split}'")
    return pl.read_parquet(files)
