"""Options of the stages after planning (`stages:` in a world spec): render, tasks,
rollout and export. Command-line options override them."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from .pack import Model, Range


class SamplingSpec(Model):
    """Sampling for the vLLM page writer (Qwen-AgentWorld's recommended defaults)."""

    temperature: float = Field(0.6, ge=0.0)
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    top_k: int = Field(20, ge=-1)
    max_tokens: int = Field(1024, ge=1)


class RenderOptions(Model):
    """`stages.render` of a world spec; command-line options override these."""

    backend: Literal["template", "vllm"] = "template"
    model: str | None = None  # local path or hub id for the vllm backend
    sampling: SamplingSpec = SamplingSpec()
    retries: int = Field(2, ge=0, le=10)  # new-seed retries of a page that fails validation
    on_failure: Literal["template", "reject"] = "template"
    batch_size: int = Field(512, ge=1)  # pages per LLM.chat call and per resumable shard
    max_model_len: int = Field(8192, ge=256)
    dtype: str = "auto"
    kv_cache_gib: float = Field(2.0, gt=0)  # KV cache size on CPU-only machines (GPUs use vLLM's own sizing)
    enable_thinking: bool = False  # passed to the chat template; reasoning is stripped either way
    tensor_parallel_size: int = Field(1, ge=1, le=64)  # GPUs one engine spans (a model larger than one GPU)
    prefix_caching: bool = True  # vLLM's prefix cache: the shared system prompt is computed once per batch
    max_list_items: int = Field(8, ge=1, le=1000)  # longest list an entity page shows; directories hold the rest
    news_lag_days: int = Field(10, ge=0, le=365)  # news appears 0..N days after its event (never after as_of)
    # share of the lesser-linked entities of a many-entity type (people, products, papers) that
    # have an encyclopedia article; the rest live on their profile, directories and news alone
    article_share: float = Field(0.5, ge=0, le=1)


# WideSearch's row-count buckets and the share of its English tasks in each (see
# worldforge/tasks/widesearch_reference.json): the default target of `stages.tasks.row_shares`.
ROW_BUCKETS = ("<10", "10-19", "20-49", "50-99", ">=100")
WIDESEARCH_ROW_SHARES = {"<10": 0.06, "10-19": 0.22, "20-49": 0.43, "50-99": 0.21, ">=100": 0.07}  # normalised when used
TABLE_SHAPES = ("filter", "ranked", "timeline", "events")
DEFAULT_SHAPE_SHARES = {"filter": 0.4, "ranked": 0.13, "timeline": 0.3, "events": 0.17}


class TasksOptions(Model):
    """`stages.tasks` of a world spec; command-line options override these."""

    table: int = Field(200, ge=0)  # table tasks to keep
    multihop: int = Field(100, ge=0)  # multi-hop questions to keep
    seed: int | None = Field(None, ge=0, lt=2**63)  # defaults to the world's seed
    rows: Range = Range(min=4, max=540)  # gold row window of a table task
    # target share of table tasks per row bucket (<10, 10-19, 20-49, 50-99, >=100); null: any size in `rows`
    row_shares: dict[Literal["<10", "10-19", "20-49", "50-99", ">=100"], float] | None = WIDESEARCH_ROW_SHARES
    columns: Range = Range(min=3, max=14)  # columns of a table task, the key column(s) included
    constraints: Range = Range(min=1, max=3)  # constraints combined with AND / OR / NOT
    shapes: dict[Literal["filter", "ranked", "timeline", "events"], float] = DEFAULT_SHAPE_SHARES  # table shapes
    # relative weight of each entity type among table tasks; a type not listed weighs its interest (docs/concepts/tasks.md)
    type_weights: dict[str, float] = {}
    # share of tasks posed in held-out parts of the world (whole countries), for world-level splits
    holdout: dict[Literal["validation", "test"], float] = {"validation": 0.1, "test": 0.1}
    part_type: str | None = None  # the type whose entities are the parts (default: the top of the `parent` tree)
    hops: Range = Range(min=2, max=4)  # hops of a multi-hop question
    # pages a task's proof may need: an agent reads about 3 a turn (some turns search, some read one page,
    # some several), so 300 pages is most of an episode of 120 turns
    max_pages: int = Field(300, ge=1)
    # entities an agent has to check to be sure of a table: the smallest list the question points to (the
    # country's entities of the type, those linked to an entity it names); a question needing more is not posed
    max_candidates: int = Field(300, ge=1)
    number_tolerance: float = Field(0.01, ge=0.0, lt=1.0)  # number_near criterion (relative)
    language: str = "en"  # the questions' language; default: the world's (`language:` on the spec)
    paraphrase: bool = False  # rewrite questions through vLLM (needs render's model), keeping only faithful ones
    max_attempts: int = Field(40, ge=1)  # candidate tasks drawn per kept task before giving up

    @field_validator("language")
    @classmethod
    def _known_language(cls, v):
        from .pack import check_language

        return check_language(v)

    @model_validator(mode="after")
    def _windows(self) -> TasksOptions:
        if self.rows.min < 1:
            raise ValueError("rows.min must be at least 1 (no empty answers)")
        if self.columns.min < 2 or self.columns.max > 16:
            raise ValueError("columns must lie within 2..16 (the key column plus at least one more)")
        if self.constraints.min < 1 or self.constraints.max > 3:
            raise ValueError("constraints must lie within 1..3")
        if self.hops.min < 2 or self.hops.max > 4:
            raise ValueError("hops must lie within 2..4")
        for name, shares in (("row_shares", self.row_shares or {}), ("shapes", self.shapes)):
            if any(v < 0 for v in shares.values()) or (shares and sum(shares.values()) <= 0):
                raise ValueError(f"{name} must be shares >= 0 with a positive sum, got {dict(shares)}")
        if not self.shapes:
            raise ValueError("shapes must name at least one table shape (filter, ranked, timeline, events)")
        if any(v < 0 for v in self.type_weights.values()):
            raise ValueError(f"type_weights must be >= 0, got {dict(self.type_weights)}")
        if any(v < 0 for v in self.holdout.values()) or sum(self.holdout.values()) >= 0.9:
            raise ValueError(f"holdout shares must be >= 0 and leave at least 10% for training, got {dict(self.holdout)}")
        return self


# Perturbation kinds and the tools each can hit (see worldforge/rollout/perturb.py).
PERTURBATION_TOOLS = {
    "search_error": ("web_search", "web_extractor"),  # a server error or a timeout
    "empty_results": ("web_search",),
    "rate_limit": ("web_search", "web_extractor"),
    "truncated_page": ("web_extractor",),
    "stale_page": ("web_extractor",),  # an archived copy: an older value under an older date
    "conflicting_page": ("web_search",),  # a low-quality source among the results contradicts a value
}
DEFAULT_PERTURBATIONS = {
    "search_error": {"web_search": 0.03, "web_extractor": 0.02},
    "empty_results": {"web_search": 0.03},
    "rate_limit": {"web_search": 0.02, "web_extractor": 0.02},
    "truncated_page": {"web_extractor": 0.03},
    # the two that mislead (an older value, a contradicting copy) rather than fail: a little more
    # often since the oracle reads what pages say better (the default web still leaves at least
    # 15 % of its trajectories below 1.0, tests/rollout/test_oracle.py)
    "stale_page": {"web_extractor": 0.05},
    "conflicting_page": {"web_search": 0.08},
}


class AgentSpec(Model):
    """The vLLM agent policy: model, tool-call parser and sampling."""

    model: str | None = None  # local path or hub id; defaults to stages.render.model
    parser: str = "hermes"  # a vLLM tool parser name (hermes, qwen3_xml, qwen3_coder, llama3_json, ...)
    sampling: SamplingSpec = SamplingSpec(max_tokens=512)
    max_model_len: int = Field(16384, ge=256)
    dtype: str = "auto"
    kv_cache_gib: float = Field(2.0, gt=0)
    enable_thinking: bool = False
    batch_size: int = Field(256, ge=1)  # conversations advanced together in one LLM.chat call
    force_tool_call: bool = False  # constrain every turn to one well-formed hermes tool call (weak models)


class OracleSpec(Model):
    """How the oracle researches, with defaults near what strong agents do on WideSearch: a few calls
    a turn, some searching besides opening links, retries of failed pages, and now and then a look
    at a second source to compare."""

    reformulate: bool = True  # rephrase a search that found nothing useful (else give up on it)
    # chance it opens a second page about a candidate to compare, when the results look suspicious
    # (two pages of one name on one site, a news piece titled with the name); a third of it otherwise
    cross_check: float = Field(0.5, ge=0.0, le=1.0)
    max_retries: int = Field(2, ge=0, le=20)  # tries of a failing page or search beyond the first

    @model_validator(mode="before")
    @classmethod
    def _retired(cls, data):
        """`search_share` (a quota of searches for names it was opening anyway) is retired: the
        oracle now searches ahead for what it needs. Specs and worlds that set it still load."""
        if isinstance(data, dict) and "search_share" in data:
            data = {k: v for k, v in data.items() if k != "search_share"}
        return data


class RolloutOptions(Model):
    """`stages.rollout` of a world spec; command-line options override these."""

    policy: Literal["oracle", "vllm"] = "oracle"
    seed: int | None = Field(None, ge=0, lt=2**63)  # defaults to the world's seed
    samples: int = Field(1, ge=1, le=64)  # trajectories per task
    min_reward: float | None = Field(None, ge=0.0, le=1.0)  # rejection sampling: keep trajectories at or above
    reward_metric: Literal["item_f1", "row_f1", "success"] = "item_f1"
    scorer: Literal["widesearch", "lenient"] = "widesearch"  # scoring mode of the reward (worldforge.tasks.scoring)
    max_turns: int = Field(120, ge=1, le=1000)  # assistant turns before an episode is cut off
    max_observation_chars: int = Field(24000, ge=200)  # longer tool results are cut, with a note
    parallel_calls: int = Field(4, ge=1, le=32)  # tool calls an oracle turn makes at most
    # the context budget in tokens: past 9/10 of it (less the state a segment started from) the agent writes its
    # research state and continues from it (rollout/context.py); None: never compact (at most 10M: a 64-bit export column)
    context_tokens: int | None = Field(32000, ge=1000, le=10_000_000)
    tokenizer: str | None = None  # tokenizer.json or a model folder to count tokens with (default: the estimate, worldforge.tokens)
    oracle: OracleSpec = OracleSpec()
    perturbations: dict[str, dict[str, float]] = DEFAULT_PERTURBATIONS  # kind -> tool -> rate per call
    chunk_tasks: int = Field(32, ge=1)  # tasks per resumable chunk (and per job of a worker process or Ray task)
    agent: AgentSpec = AgentSpec()
    # the oracle's words: the narrator's grammar, or that text rewritten by the page writer's model
    # (stages.render) under a check, a refused rewrite keeping the grammar text (rollout/rewrite.py)
    narration: Literal["grammar", "vllm"] = "grammar"

    @field_validator("perturbations")
    @classmethod
    def _perturbations(cls, v):
        for kind, rates in v.items():
            if kind not in PERTURBATION_TOOLS:
                raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(PERTURBATION_TOOLS)}")
            for tool, rate in rates.items():
                if tool not in PERTURBATION_TOOLS[kind]:
                    raise ValueError(f"perturbation {kind} cannot hit tool {tool!r}; it applies to "
                                     f"{', '.join(PERTURBATION_TOOLS[kind])}")
                if not 0.0 <= rate <= 1.0:
                    raise ValueError(f"perturbation {kind}.{tool} rate must lie within 0..1, got {rate}")
        for tool in ("web_search", "web_extractor"):
            total = sum(r.get(tool, 0.0) for r in v.values())
            if total > 1.0:
                raise ValueError(f"perturbation rates for {tool} add up to {total:g}; they must not exceed 1")
        return v


class ExportOptions(Model):
    """`stages.export` of a world spec."""

    version: str = Field("v1", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # exports/<world>/<version>/
    formats: list[Literal["sft", "rl", "widesearch"]] = ["sft", "rl", "widesearch"]
    split_by: Literal["region", "task", "world"] = "region"  # region: the tasks stage's held-out parts
    splits: dict[Literal["train", "validation", "test"], float] = {"train": 0.8, "validation": 0.1, "test": 0.1}
    world_split: Literal["train", "validation", "test"] | None = None  # with split_by: world (default: from the name)
    # SFT samples: one per context segment, exactly what the model saw (`segments`), or each whole
    # trajectory without its compactions, for long-context trainers (`full`)
    context: Literal["segments", "full"] = "segments"
    shard_rows: int = Field(5000, ge=1)  # rows per Parquet shard
    license: str = "cc-by-4.0"
    tokenizer: str | None = None  # a Hugging Face tokenizer (name or folder) to count the card's lengths with
    # SFT rows come from trajectories whose reward is at least this (1.0: only right answers are
    # targets; RL rows and held-out evaluation keep every task); the card says what was left out
    sft_min_reward: float = Field(1.0, ge=0.0, le=1.0)
    # the loss weight (0 or 1, as in OpenAI's chat fine-tuning format) of the research state an SFT
    # segment ends with; the agent's decisions and answers always weigh 1
    state_weight: Literal[0, 1] = 1

    @field_validator("splits")
    @classmethod
    def _fractions(cls, v):
        if not all(math.isfinite(f) and f >= 0 for f in v.values()) or not abs(sum(v.values()) - 1.0) <= 1e-9:  # (NaN fails)
            raise ValueError(f"split fractions must be finite, >= 0 and add up to 1, got {dict(v)}")
        return v

    @field_validator("formats")
    @classmethod
    def _formats(cls, v):
        if not v or len(set(v)) != len(v):
            raise ValueError("formats must list sft, rl and/or widesearch, each once")
        return v


class Stages(Model):
    """Options of the later stages (render, index, tasks, rollout, export)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    render: RenderOptions = RenderOptions()
    index: dict[str, Any] = {}
    tasks: TasksOptions = TasksOptions()
    rollout: RolloutOptions = RolloutOptions()
    export: ExportOptions = ExportOptions()
