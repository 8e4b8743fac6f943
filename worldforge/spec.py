"""World specs (`worlds/*.yaml`) and domain packs (`schemas/*.yaml`) as typed, validated models.

`load_world(path)` parses the spec and every pack it names, then checks the whole
thing (cross references, faker providers, dependency cycles, empty date windows,
counts that cannot be satisfied) and raises one `SpecError` listing every problem,
each with its file, field path, bad value and what is accepted.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import string
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import SpecError, SpecProblem

SPEC_VERSION = 1
PACK_VERSION = 1
_PKG = Path(__file__).resolve().parent
# The shipped packs: `schemas/` of a source checkout, or the copy a wheel installs as
# `worldforge/schemas/` (pyproject maps one onto the other).
SCHEMAS_DIR = _PKG.parent / "schemas" if (_PKG.parent / "schemas").is_dir() else _PKG / "schemas"
# Constant date references usable in any bound.
CONSTANT_REFS = ("as_of", "span_start")
_NAME_RE = r"^[a-z][a-z0-9_]*$"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_phrases(phrases: list[str], allowed: set[str], need_value: bool = True) -> list[str]:
    """Sentence templates may use only the named fields; phrases (not headlines) must state the value."""
    for p in phrases:
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(p) if f is not None}
        except ValueError as exc:
            raise ValueError(f"phrase {p!r} is not a valid template: {exc}") from None
        if fields - allowed:
            raise ValueError(f"phrase {p!r} uses {sorted(fields - allowed)}; allowed fields are {sorted(allowed)}")
        need = {"value", "object"} & allowed
        if need_value and not fields & need:
            raise ValueError(f"phrase {p!r} must contain {' or '.join('{' + n + '}' for n in sorted(need))}")
    return phrases


def _check_noun(v: str | None) -> str | None:
    """A hop as a noun phrase for multi-hop questions: must name {subject}, and nothing else."""
    if v is not None:
        _check_phrases([v], {"subject"}, need_value=False)
        if "{subject}" not in v:
            raise ValueError(f"noun {v!r} must contain {{subject}}")
    return v


# --------------------------------------------------------------------------- bounds

_BOUND_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:([+-])\s*(\d+)\s*([yd]))?\s*$")


class DateBound(Model):
    """A date reference plus a calendar offset: `founded_by.birth_date + 20y`, `as_of - 1d`.

    `ref` is `as_of`, `span_start`, an attribute of the same entity, `<relation>.<attribute>`
    (aggregated over the relation's targets), or in relation context `source.<attr>`,
    `target.<attr>` or `valid_from`.
    """

    ref: str
    years: int = 0
    days: int = 0

    @model_validator(mode="before")
    @classmethod
    def _parse_text(cls, data: Any) -> Any:
        if isinstance(data, str):
            m = _BOUND_RE.match(data)
            if not m:
                raise ValueError(
                    f"cannot read date bound {data!r}; write '<ref>', '<ref> + <N>y' or '<ref> - <N>d' "
                    "(e.g. 'as_of - 18y', 'founded_by.birth_date + 20y')"
                )
            ref, sign, num, unit = m.groups()
            out: dict[str, Any] = {"ref": ref}
            if num:
                val = int(num) * (-1 if sign == "-" else 1)
                out["years" if unit == "y" else "days"] = val
            return out
        return data

    def __str__(self) -> str:
        s = self.ref
        if self.years:
            s += f" {'+' if self.years > 0 else '-'} {abs(self.years)}y"
        if self.days:
            s += f" {'+' if self.days > 0 else '-'} {abs(self.days)}d"
        return s


class Range(Model):
    min: int = Field(1, ge=0)
    max: int = Field(1, ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self


# --------------------------------------------------------------------------- names


class SyllableSpec(Model):
    min: int = Field(2, ge=1, le=6)
    max: int = Field(3, ge=1, le=6)
    inventory: list[str] | None = None


class NumberPart(Model):
    min: int = 0
    max: int = 999


class NamePart(Model):
    """One placeholder of a name template. Exactly one source is set."""

    faker: str | None = None
    pool: int = Field(4096, ge=16, le=200_000)
    choices: list[str] | dict[str, float] | None = None
    syllables: SyllableSpec | None = None
    letter: bool = False
    number: NumberPart | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> NamePart:
        set_ = [k for k in ("faker", "choices", "syllables", "number") if getattr(self, k) is not None]
        if self.letter:
            set_.append("letter")
        if len(set_) != 1:
            raise ValueError(
                "a name part needs exactly one of faker, choices, syllables, letter, number "
                f"(got {', '.join(set_) or 'none'})"
            )
        return self


class AliasSpec(Model):
    """How aliases are derived from a name: initials ('J. Smith'), abbreviation ('MIT'),
    short (drop listed words), pattern ('Republic of {name}') or former (a previous name)."""

    kind: Literal["initials", "abbreviation", "short", "pattern", "former"]
    rate: float = Field(1.0, ge=0.0, le=1.0)
    drop: list[str] = []
    template: str | None = None
    after: DateBound | None = None  # former names: renamed at a date after this bound

    @model_validator(mode="after")
    def _fields(self) -> AliasSpec:
        if self.kind == "pattern" and (not self.template or "{name}" not in self.template):
            raise ValueError("a pattern alias needs a template containing {name}")
        if self.kind == "short" and not self.drop:
            raise ValueError("a short alias needs the words to drop, e.g. drop: [Group, Inc]")
        return self


class NameSpec(Model):
    template: str | None = None
    templates: dict[str, float] | None = None
    parts: dict[str, NamePart] = {}
    aliases: list[AliasSpec] = []

    @model_validator(mode="after")
    def _one_template(self) -> NameSpec:
        if (self.template is None) == (self.templates is None):
            raise ValueError("give exactly one of template or templates")
        for tmpl in self.template_weights():
            for _, field, spec, conv in string.Formatter().parse(tmpl):
                if field is None:
                    continue
                if spec or conv:
                    raise ValueError(f"template {tmpl!r}: write plain placeholders like {{{field}}}")
                if field not in self.parts:
                    raise ValueError(
                        f"template {tmpl!r} uses {{{field}}} but parts defines only {sorted(self.parts)}"
                    )
        return self

    def template_weights(self) -> dict[str, float]:
        return {self.template: 1.0} if self.template is not None else dict(self.templates or {})


# --------------------------------------------------------------------------- attributes


class _AttrBase(Model):
    description: str = ""
    null_rate: float = Field(0.0, ge=0.0, le=1.0)
    # How pages state the attribute: an infobox label and sentence templates with
    # {subject} and {value}; defaults are derived from the attribute name.
    label: str | None = None
    phrases: list[str] = []
    # How task questions ask for it: qualifiers after a plural noun, with {value} (an
    # equality value, or a range such as "between 1990 and 1999"): "founded {value}".
    ask: list[str] = []

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return _check_phrases(v, {"subject", "value"})

    @field_validator("ask")
    @classmethod
    def _ask_fields(cls, v):
        return _check_phrases(v, {"value"})


class FakerAttr(_AttrBase):
    kind: Literal["faker"]
    provider: str
    pool: int = Field(4096, ge=16, le=200_000)


class CategoricalAttr(_AttrBase):
    kind: Literal["categorical"]
    values: list[str] | dict[str, float]

    @field_validator("values")
    @classmethod
    def _nonempty(cls, v):
        if not v:
            raise ValueError("needs at least one value")
        if isinstance(v, dict) and any(w < 0 for w in v.values()):
            raise ValueError("weights must be >= 0")
        if isinstance(v, dict) and sum(v.values()) <= 0:
            raise ValueError("weights must not all be zero")
        return v


class NumericAttr(_AttrBase):
    kind: Literal["numeric"]
    distribution: Literal["uniform", "normal", "lognormal", "exponential", "poisson"]
    params: dict[str, float]
    min: float | None = None
    max: float | None = None
    integer: bool = False
    decimals: int | None = Field(None, ge=0, le=6)
    unit: str | None = None

    @model_validator(mode="after")
    def _params(self) -> NumericAttr:
        need = {
            "uniform": {"low", "high"},
            "normal": {"mean", "sd"},
            "lognormal": {"mean", "sigma"},
            "exponential": {"scale"},
            "poisson": {"lam"},
        }[self.distribution]
        if set(self.params) != need:
            raise ValueError(f"{self.distribution} takes params {sorted(need)}, got {sorted(self.params)}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self


class DateAttr(_AttrBase):
    kind: Literal["date"]
    after: list[DateBound] = []
    before: list[DateBound] = []
    event: bool = False  # appears on the world's timeline (births, foundings, launches)
    headlines: list[str] = []  # news headlines for the event, with {subject} and {value}

    @field_validator("headlines")
    @classmethod
    def _headline_fields(cls, v):
        return _check_phrases(v, {"subject", "value"}, need_value=False)


class DerivedAttr(_AttrBase):
    kind: Literal["derived"]
    sql: str  # a DuckDB expression over this entity's columns; {as_of} and {span_start} are date literals
    dtype: Literal["string", "int", "float", "date", "bool"]
    unit: str | None = None


class LookupAttr(_AttrBase):
    kind: Literal["lookup"]
    via: str  # a to-one relation (or the parent relation) of this type
    attribute: str  # attribute of the related entity, or 'id' / 'name'
    noun: str | None = None  # task questions: the hop as a noun phrase with {subject} ("the home country of {subject}")

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return _check_noun(v)


Attribute = Annotated[
    FakerAttr | CategoricalAttr | NumericAttr | DateAttr | DerivedAttr | LookupAttr,
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------- types and relations


class _LinkText(Model):
    """How pages and questions state a link. Pages: labels for the source's and the target's
    pages, sentence templates with {subject}, {object}, {start} and {end}. Task questions:
    qualifiers with {object} ("headquartered in {object}")."""

    label: str | None = None
    inverse_label: str | None = None
    phrases: list[str] = []
    ask: list[str] = []

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return _check_phrases(v, {"subject", "object", "start", "end"})

    @field_validator("ask")
    @classmethod
    def _ask_fields(cls, v):
        return _check_phrases(v, {"object"})


class ParentSpec(_LinkText):
    """A type generated per entity of another type (regions per country), linked by `relation`."""

    type: str
    relation: str = Field(pattern=_NAME_RE)
    count: Range


class DirectorySpec(Model):
    """Paginated list pages of this type's entities grouped by a relation's target
    ("Companies headquartered in X") or by an attribute value ("Companies in software")."""

    by: str
    title: str  # uses {group}: "Companies headquartered in {group}"
    columns: list[str] = []  # attributes shown next to each listed name
    page_size: int = Field(10, ge=2, le=200)


class ProfileSpec(Model):
    """The entity's official or profile page: `site` names the fictional site (a word the
    site's domain is built from) unless `url` gives a template over the entity's attributes."""

    site: str = Field("profiles", pattern=_NAME_RE)
    url: str | None = None  # e.g. "{website}/about"


class PagesSpec(Model):
    """Which pages an entity of this type gets (see worldforge.render)."""

    plural: str | None = None  # "companies"; defaults to the type name + "s"
    article: bool = True
    profile: ProfileSpec | None = ProfileSpec()
    news: list[str] | None = None  # event attributes and dated relations with news items; None = all
    directories: list[DirectorySpec] = []


class EntityType(Model):
    description: str = ""
    name: NameSpec
    parent: ParentSpec | None = None
    attributes: dict[str, Attribute] = {}
    pages: PagesSpec = PagesSpec()

    @field_validator("attributes")
    @classmethod
    def _attr_names(cls, v):
        for key in v:
            if not re.match(_NAME_RE, key):
                raise ValueError(f"attribute name {key!r} must be snake_case")
            if key in ("id", "name"):
                raise ValueError(f"attribute name {key!r} is reserved")
        return v


class SameSpec(Model):
    """Locality: the target's attribute must equal the source's (same country, same league)."""

    source: str
    target: str


class EligibleSpec(Model):
    """Targets are eligible only when their date attribute lies in [after, before]."""

    attribute: str
    after: DateBound | None = None
    before: DateBound | None = None


class DateWindow(Model):
    after: list[DateBound] = []
    before: list[DateBound] = []


class HistorySpec(Model):
    """Successive, non-overlapping tenures per source inside [max(after), min(before)]."""

    count: Range
    after: list[DateBound]
    before: list[DateBound]
    current: bool = True  # the last tenure is open-ended when it reaches as_of


class WeightSelect(Model):
    weight: str  # a numeric attribute of the target


class RelationSpec(_LinkText):
    description: str = ""
    source: str
    target: str
    cardinality: Literal["1:1", "1:N", "N:1", "N:M"]
    count: Range = Range()
    rate: float = Field(1.0, ge=0.0, le=1.0)
    required: bool = False
    select: Literal["uniform", "preferential"] | WeightSelect = "uniform"
    alpha: float = Field(1.5, gt=0.0)
    same: SameSpec | None = None
    eligible: EligibleSpec | None = None
    since: DateBound | None = None
    date: DateWindow | None = None
    history: HistorySpec | None = None
    acyclic: bool = False
    # Beyond the shared link text: news headlines, and the noun phrase for one hop in a
    # multi-hop question ("the university that awarded {subject} a doctorate").
    headlines: list[str] = []
    noun: str | None = None

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return _check_noun(v)

    @field_validator("headlines")
    @classmethod
    def _headline_fields(cls, v):
        return _check_phrases(v, {"subject", "object", "start", "end"}, need_value=False)

    @model_validator(mode="after")
    def _consistent(self) -> RelationSpec:
        if self.cardinality in ("1:1", "N:1") and self.count.max > 1:
            raise ValueError(f"a {self.cardinality} relation links each source to at most one target; "
                             f"set count.max to 1 or use 1:N / N:M")
        if self.history and self.cardinality in ("1:1", "1:N"):
            raise ValueError("a history relation must be N:1 or N:M (a target can hold several tenures)")
        if self.history and self.cardinality == "N:1" and self.history.count.max > 1:
            raise ValueError("use N:M for histories with more than one tenure per source")
        if sum(x is not None for x in (self.since, self.date, self.history)) > 1:
            raise ValueError("give at most one of since, date, history")
        if self.required and self.rate < 1.0:
            raise ValueError("a required relation must have rate 1.0")
        return self

    @property
    def target_unique(self) -> bool:
        return self.cardinality in ("1:1", "1:N")

    @property
    def count_range(self) -> Range:
        return self.history.count if self.history else self.count


class InvariantSpec(Model):
    """A declared invariant: an SQL query returning the violating rows, or an acyclicity check."""

    name: str = Field(pattern=_NAME_RE)
    description: str = ""
    sql: str | None = None
    acyclic: str | None = None  # relation name

    @model_validator(mode="after")
    def _one(self) -> InvariantSpec:
        if (self.sql is None) == (self.acyclic is None):
            raise ValueError("an invariant needs exactly one of sql or acyclic")
        return self


class DomainPack(Model):
    pack: str = Field(pattern=_NAME_RE)
    pack_version: Literal[1] = 1
    description: str = ""
    requires: list[str] = []
    types: dict[str, EntityType] = {}
    relations: dict[str, RelationSpec] = {}
    invariants: list[InvariantSpec] = []

    @field_validator("types", "relations")
    @classmethod
    def _names(cls, v):
        for key in v:
            if not re.match(_NAME_RE, key):
                raise ValueError(f"name {key!r} must be snake_case (a-z, 0-9, _)")
        return v


# --------------------------------------------------------------------------- world spec


class TimeSpan(Model):
    start: dt.date
    end: dt.date | None = None  # defaults to as_of


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
    max_list_items: int = Field(8, ge=1, le=1000)  # longest list an entity page shows; directories hold the rest
    news_lag_days: int = Field(10, ge=0, le=365)  # news appears 0..N days after its event (never after as_of)


class TasksOptions(Model):
    """`stages.tasks` of a world spec; command-line options override these."""

    table: int = Field(200, ge=0)  # table tasks to keep
    multihop: int = Field(100, ge=0)  # multi-hop questions to keep
    seed: int | None = Field(None, ge=0, lt=2**63)  # defaults to the world's seed
    rows: Range = Range(min=5, max=60)  # gold row window of a table task
    columns: Range = Range(min=3, max=7)  # columns of a table task, the key column included
    constraints: Range = Range(min=1, max=3)  # constraints combined with AND / OR / NOT
    hops: Range = Range(min=2, max=4)  # hops of a multi-hop question
    number_tolerance: float = Field(0.01, ge=0.0, lt=1.0)  # number_near criterion (relative)
    language: str = "en"
    paraphrase: bool = False  # rewrite questions through vLLM (needs render's model), keeping only faithful ones
    max_attempts: int = Field(40, ge=1)  # candidate tasks drawn per kept task before giving up

    @model_validator(mode="after")
    def _windows(self) -> TasksOptions:
        if self.rows.min < 1:
            raise ValueError("rows.min must be at least 1 (no empty answers)")
        if self.columns.min < 2 or self.columns.max > 12:
            raise ValueError("columns must lie within 2..12 (the key column plus at least one more)")
        if self.constraints.min < 1 or self.constraints.max > 3:
            raise ValueError("constraints must lie within 1..3")
        if self.hops.min < 2 or self.hops.max > 4:
            raise ValueError("hops must lie within 2..4")
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
    "stale_page": {"web_extractor": 0.03},
    "conflicting_page": {"web_search": 0.05},
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


class RolloutOptions(Model):
    """`stages.rollout` of a world spec; command-line options override these."""

    policy: Literal["oracle", "vllm"] = "oracle"
    seed: int | None = Field(None, ge=0, lt=2**63)  # defaults to the world's seed
    samples: int = Field(1, ge=1, le=64)  # trajectories per task
    min_reward: float | None = Field(None, ge=0.0, le=1.0)  # rejection sampling: keep trajectories at or above
    reward_metric: Literal["item_f1", "row_f1", "success"] = "item_f1"
    max_turns: int = Field(80, ge=1, le=1000)  # assistant turns before an episode is cut off
    max_observation_chars: int = Field(24000, ge=200)  # longer tool results are cut, with a note
    parallel_calls: int = Field(8, ge=1, le=32)  # pages an oracle turn opens at once (plus one search)
    perturbations: dict[str, dict[str, float]] = DEFAULT_PERTURBATIONS  # kind -> tool -> rate per call
    chunk_tasks: int = Field(64, ge=1)  # tasks per resumable chunk
    agent: AgentSpec = AgentSpec()

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
    split_by: Literal["task", "world"] = "task"
    splits: dict[Literal["train", "validation", "test"], float] = {"train": 0.8, "validation": 0.1, "test": 0.1}
    world_split: Literal["train", "validation", "test"] | None = None  # with split_by: world (default: from the name)
    shard_rows: int = Field(5000, ge=1)  # rows per Parquet shard
    license: str = "cc-by-4.0"

    @field_validator("splits")
    @classmethod
    def _fractions(cls, v):
        if any(f < 0 for f in v.values()) or abs(sum(v.values()) - 1.0) > 1e-9:
            raise ValueError(f"split fractions must be >= 0 and add up to 1, got {dict(v)}")
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


class WorldSpec(Model):
    spec_version: Literal[1] = 1
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    description: str = ""
    seed: int = Field(ge=0, lt=2**63)
    locale: str = "en_US"
    as_of: dt.date
    time_span: TimeSpan
    packs: list[str] = Field(min_length=1)
    counts: dict[str, int]
    stages: Stages = Stages()

    @field_validator("counts")
    @classmethod
    def _nonneg(cls, v):
        bad = {k: c for k, c in v.items() if c < 0}
        if bad:
            raise ValueError(f"counts must be >= 0, got {bad}")
        return v

    @property
    def span_start(self) -> dt.date:
        return self.time_span.start

    @property
    def span_end(self) -> dt.date:
        return self.time_span.end or self.as_of


class ResolvedWorld(Model):
    """A validated spec with its packs resolved: everything the planner needs."""

    spec: WorldSpec
    packs: dict[str, DomainPack]
    pack_files: dict[str, str]

    @property
    def types(self) -> dict[str, EntityType]:
        return {t: et for p in self.packs.values() for t, et in p.types.items()}

    @property
    def relations(self) -> dict[str, RelationSpec]:
        """Declared relations plus the parent relations implied by `parent:`."""
        out: dict[str, RelationSpec] = {}
        for t, et in self.types.items():
            if et.parent:
                out[et.parent.relation] = RelationSpec(
                    description=f"{t} is part of a {et.parent.type}",
                    source=t, target=et.parent.type, cardinality="N:1", required=True,
                    label=et.parent.label, inverse_label=et.parent.inverse_label, phrases=et.parent.phrases, ask=et.parent.ask,
                )
        for p in self.packs.values():
            out.update(p.relations)
        return out

    def pack_of_type(self, type_name: str) -> str:
        return next(p for p, pk in self.packs.items() if type_name in pk.types)

    def pack_of_relation(self, rel: str) -> str:
        for p, pk in self.packs.items():
            if rel in pk.relations:
                return p
            if any(et.parent and et.parent.relation == rel for et in pk.types.values()):
                return p
        raise KeyError(rel)


# --------------------------------------------------------------------------- loading


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_yaml(path: Path, problems: list[SpecProblem]) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(SpecProblem(str(path), "", "", "file not found"))
        return None
    except OSError as exc:
        problems.append(SpecProblem(str(path), "", "", f"cannot read file: {exc.strerror}"))
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        what = getattr(exc, "problem", None) or str(exc)
        problems.append(SpecProblem(str(path), "", "", f"invalid YAML at {where}: {what}"))
        return None


def _pydantic_problems(source: str, exc: ValidationError, prefix: str = "") -> list[SpecProblem]:
    out = []
    for err in exc.errors():
        loc = [str(x) for x in err["loc"]]
        # Drop the discriminator tag pydantic inserts into union locations.
        path = ".".join(loc)
        if prefix:
            path = f"{prefix}.{path}" if path else prefix
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        elif err["type"] == "missing":
            msg = "required field is missing"
        value = "" if err["type"] == "missing" else _short(err.get("input"))
        out.append(SpecProblem(source, path, value, msg))
    return out


def pack_search_path(schemas_dir: Path | None = None) -> list[Path]:
    """Folders searched for packs named without a path: $WORLDFORGE_SCHEMAS (os.pathsep-separated),
    then the shipped packs."""
    import os

    extra = [Path(p) for p in os.environ.get("WORLDFORGE_SCHEMAS", "").split(os.pathsep) if p]
    return [*extra, schemas_dir or SCHEMAS_DIR]


def _available_packs(dirs: list[Path]) -> list[str]:
    return sorted({p.stem for d in dirs for p in d.glob("*.yaml")})


def _resolve_pack_path(ref: str, spec_dir: Path, dirs: list[Path]) -> Path | None:
    if ref.endswith((".yaml", ".yml")) or "/" in ref:
        for base in (spec_dir, Path.cwd()):
            cand = (base / ref).resolve()
            if cand.is_file():
                return cand
        return None
    for d in dirs:
        cand = d / f"{ref}.yaml"
        if cand.is_file():
            return cand
    return None


def load_world(path: str | Path, schemas_dir: Path | None = None) -> ResolvedWorld:
    """Load and validate a world spec and its packs; raise `SpecError` with every problem."""
    path = Path(path)
    dirs = pack_search_path(schemas_dir)
    problems: list[SpecProblem] = []
    raw = _read_yaml(path, problems)
    if problems:
        raise SpecError(problems)
    if not isinstance(raw, dict):
        raise SpecError([SpecProblem(str(path), "", _short(raw), "a world spec must be a YAML mapping")])
    try:
        spec = WorldSpec.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(str(path), exc))
        spec = None

    packs: dict[str, DomainPack] = {}
    pack_files: dict[str, str] = {}
    for i, ref in enumerate(raw.get("packs") or []):
        if not isinstance(ref, str):
            continue
        pack_path = _resolve_pack_path(ref, path.parent, dirs)
        if pack_path is None:
            avail = _available_packs(dirs)
            problems.append(SpecProblem(
                str(path), f"packs.{i}", _short(ref),
                f"unknown pack; available: {', '.join(avail)} (or give a path to a pack .yaml file)",
            ))
            continue
        pack_raw = _read_yaml(pack_path, problems)
        if pack_raw is None:
            continue
        if not isinstance(pack_raw, dict):
            problems.append(SpecProblem(str(pack_path), "", _short(pack_raw), "a domain pack must be a YAML mapping"))
            continue
        try:
            pack = DomainPack.model_validate(pack_raw)
        except ValidationError as exc:
            problems.extend(_pydantic_problems(str(pack_path), exc))
            continue
        if pack.pack in packs:
            problems.append(SpecProblem(str(path), f"packs.{i}", _short(ref), f"pack '{pack.pack}' is listed twice"))
            continue
        packs[pack.pack] = pack
        pack_files[pack.pack] = str(pack_path)

    if spec is None and isinstance(raw.get("counts"), dict) and packs:
        # The spec itself is broken, but its counts can still be checked against the packs.
        known = {t for p in packs.values() for t in p.types}
        for t in raw["counts"]:
            if t not in known:
                problems.append(SpecProblem(str(path), f"counts.{t}", _short(t),
                                            _unknown_type(str(t), known)))
    if spec is None or problems:
        raise SpecError(problems)
    world = ResolvedWorld(spec=spec, packs=packs, pack_files=pack_files)
    problems.extend(_semantic_problems(world, str(path)))
    if problems:
        raise SpecError(problems)
    return world


# --------------------------------------------------------------------------- semantic checks


def _suggest(name: str, options) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _unknown_type(name: str, known) -> str:
    return f"unknown type{_suggest(name, known)}; known types: {', '.join(sorted(known))}"


def attribute_dtype(world: ResolvedWorld, type_name: str, attr: str) -> str:
    """The stored type of an attribute: string, int, float, date, bool or entity (an id)."""
    if attr == "id":
        return "entity"
    if attr == "name":
        return "string"
    a = world.types[type_name].attributes[attr]
    if isinstance(a, (FakerAttr, CategoricalAttr)):
        return "string"
    if isinstance(a, NumericAttr):
        return "int" if a.integer else "float"
    if isinstance(a, DateAttr):
        return "date"
    if isinstance(a, DerivedAttr):
        return a.dtype
    rel = world.relations[a.via]
    return attribute_dtype(world, rel.target, a.attribute)


def expected_counts(world: ResolvedWorld) -> dict[str, tuple[float, float, float]]:
    """(min, expected, max) entity counts per type, following parent chains."""
    types = world.types
    out: dict[str, tuple[float, float, float]] = {}

    def visit(t: str, seen: tuple[str, ...] = ()) -> tuple[float, float, float]:
        if t in out:
            return out[t]
        et = types[t]
        if et.parent is None or et.parent.type not in types or t in seen:
            c = float(world.spec.counts.get(t, 0))
            res = (c, c, c)
        else:
            lo, mid, hi = visit(et.parent.type, seen + (t,))
            r = et.parent.count
            res = (lo * r.min, mid * (r.min + r.max) / 2, hi * r.max)
        out[t] = res
        return res

    for t in types:
        visit(t)
    return out


def _semantic_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    from faker import Faker
    from faker.config import AVAILABLE_LOCALES

    spec = world.spec
    probs: list[SpecProblem] = []
    types: dict[str, tuple[str, EntityType]] = {}
    rels: dict[str, tuple[str, RelationSpec]] = {}
    src_of_pack = world.pack_files

    def add(pack: str | None, path: str, value: Any, msg: str) -> None:
        probs.append(SpecProblem(src_of_pack[pack] if pack else spec_file, path, "" if value is None else _short(value), msg))

    # Locale and time span.
    if spec.locale not in AVAILABLE_LOCALES:
        add(None, "locale", spec.locale, f"unknown faker locale{_suggest(spec.locale, AVAILABLE_LOCALES)}; e.g. en_US, de_DE, fr_FR")
    if spec.span_start >= spec.span_end:
        add(None, "time_span", f"{spec.span_start}..{spec.span_end}", "the date window is empty: time_span.start must be before time_span.end (default: as_of)")
    if spec.span_end > spec.as_of:
        add(None, "time_span.end", str(spec.span_end), f"must not be after as_of ({spec.as_of})")

    # Pack requirements and name clashes.
    for pname, pack in world.packs.items():
        for req in pack.requires:
            if req not in world.packs:
                add(pname, "requires", req, f"pack '{pname}' needs pack '{req}'; add it to the spec's packs")
        for t, et in pack.types.items():
            if t in types:
                add(pname, f"types.{t}", t, f"type already defined by pack '{types[t][0]}'")
            types[t] = (pname, et)
    for pname, pack in world.packs.items():
        for t, et in pack.types.items():
            if et.parent:
                r = et.parent.relation
                if r in rels:
                    add(pname, f"types.{t}.parent.relation", r, "relation name already used")
                rels[r] = (pname, RelationSpec(source=t, target=et.parent.type, cardinality="N:1", required=True))
        for r, rs in pack.relations.items():
            if r in rels:
                add(pname, f"relations.{r}", r, f"relation already defined by pack '{rels[r][0]}'")
            if r in types:
                add(pname, f"relations.{r}", r, "a relation must not share its name with a type")
            rels[r] = (pname, rs)

    def known_type(pname: str, path: str, t: str) -> bool:
        if t in types:
            return True
        add(pname, path, t, _unknown_type(t, types))
        return False

    def has_attr(t: str, a: str) -> bool:
        return a in ("id", "name") or a in types[t][1].attributes

    def attr_kind_date(t: str, a: str) -> bool:
        if a in ("id", "name") or a not in types[t][1].attributes:
            return False
        return attribute_dtype(world, t, a) == "date"

    def check_attr(pname: str, path: str, t: str, a: str, want_date: bool = False, want_numeric: bool = False) -> None:
        if t not in types:
            return
        if not has_attr(t, a):
            opts = ["id", "name", *types[t][1].attributes]
            add(pname, path, a, f"type '{t}' has no attribute '{a}'{_suggest(a, opts)}; it has: {', '.join(opts)}")
            return
        if want_date and not attr_kind_date(t, a):
            add(pname, path, a, f"'{t}.{a}' is not a date attribute")
        if want_numeric and (a in ("id", "name") or attribute_dtype(world, t, a) not in ("int", "float")):
            add(pname, path, a, f"'{t}.{a}' is not a numeric attribute")

    def check_bound(pname: str, path: str, b: DateBound, owner: str, ctx: str) -> None:
        """ctx: 'attr' (ref is on type owner) or 'rel' (owner is a relation name)."""
        if b.ref in CONSTANT_REFS:
            return
        parts = b.ref.split(".")
        if ctx == "attr":
            if len(parts) == 1:
                check_attr(pname, path, owner, parts[0], want_date=True)
                return
            if len(parts) == 2 and parts[0] in rels and rels[parts[0]][1].source == owner:
                check_attr(pname, path, rels[parts[0]][1].target, parts[1], want_date=True)
                return
            add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, an attribute of '{owner}' "
                "or <relation>.<attribute> through one of its outgoing relations")
            return
        rs = rels[owner][1]
        if parts == ["valid_from"] and rs.history is not None:
            return
        if len(parts) == 2 and parts[0] in ("source", "target"):
            check_attr(pname, path, rs.source if parts[0] == "source" else rs.target, parts[1], want_date=True)
            return
        extra = ", valid_from" if rs.history is not None else ""
        add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, source.<attr>, target.<attr>{extra}")

    faker = None
    for pname, pack in world.packs.items():
        for t, et in pack.types.items():
            base = f"types.{t}"
            if et.parent:
                known_type(pname, f"{base}.parent.type", et.parent.type)
            for part_name, part in et.name.parts.items():
                if part.faker:
                    if faker is None:
                        faker = Faker(spec.locale if spec.locale in AVAILABLE_LOCALES else "en_US")
                    if not callable(getattr(faker, part.faker, None)):
                        add(pname, f"{base}.name.parts.{part_name}.faker", part.faker,
                            f"unknown faker provider{_suggest(part.faker, dir(faker))}")
            for alias_i, al in enumerate(et.name.aliases):
                if al.after is not None:
                    check_bound(pname, f"{base}.name.aliases.{alias_i}.after", al.after, t, "attr")
            for a, attr in et.attributes.items():
                ap = f"{base}.attributes.{a}"
                if isinstance(attr, FakerAttr):
                    if faker is None:
                        faker = Faker(spec.locale if spec.locale in AVAILABLE_LOCALES else "en_US")
                    if not callable(getattr(faker, attr.provider, None)):
                        add(pname, f"{ap}.provider", attr.provider, f"unknown faker provider{_suggest(attr.provider, dir(faker))}")
                elif isinstance(attr, DateAttr):
                    for j, b in enumerate(attr.after):
                        check_bound(pname, f"{ap}.after.{j}", b, t, "attr")
                    for j, b in enumerate(attr.before):
                        check_bound(pname, f"{ap}.before.{j}", b, t, "attr")
                    _check_static_window(add, pname, ap, attr.after, attr.before, spec)
                elif isinstance(attr, LookupAttr):
                    if attr.via not in rels or rels[attr.via][1].source != t:
                        own = [r for r, (_, rs) in rels.items() if rs.source == t]
                        add(pname, f"{ap}.via", attr.via, f"'{t}' has no outgoing relation of that name{_suggest(attr.via, own)}; it has: {', '.join(own) or 'none'}")
                    else:
                        rs = rels[attr.via][1]
                        if rs.cardinality not in ("1:1", "N:1") or rs.history:
                            add(pname, f"{ap}.via", attr.via, "a lookup needs a to-one relation (1:1 or N:1, no history)")
                        check_attr(pname, f"{ap}.attribute", rs.target, attr.attribute)
            _check_pages(add, pname, t, et, rels, check_attr)

    for r, (pname, rs) in rels.items():
        rp = f"relations.{r}"
        ok_s = known_type(pname, f"{rp}.source", rs.source)
        ok_t = known_type(pname, f"{rp}.target", rs.target)
        if not (ok_s and ok_t):
            continue
        if rs.same:
            check_attr(pname, f"{rp}.same.source", rs.source, rs.same.source)
            check_attr(pname, f"{rp}.same.target", rs.target, rs.same.target)
        if isinstance(rs.select, WeightSelect):
            check_attr(pname, f"{rp}.select.weight", rs.target, rs.select.weight, want_numeric=True)
        if rs.eligible:
            check_attr(pname, f"{rp}.eligible.attribute", rs.target, rs.eligible.attribute, want_date=True)
            for side in ("after", "before"):
                b = getattr(rs.eligible, side)
                if b is not None:
                    check_bound(pname, f"{rp}.eligible.{side}", b, r, "rel")
                    if b.ref.startswith("target."):
                        add(pname, f"{rp}.eligible.{side}", b.ref, "eligibility cannot refer to the target itself")
        if rs.since:
            check_bound(pname, f"{rp}.since", rs.since, r, "rel")
        if rs.date:
            for side in ("after", "before"):
                for j, b in enumerate(getattr(rs.date, side)):
                    check_bound(pname, f"{rp}.date.{side}.{j}", b, r, "rel")
            _check_static_window(add, pname, f"{rp}.date", rs.date.after, rs.date.before, spec)
        if rs.history:
            for side in ("after", "before"):
                for j, b in enumerate(getattr(rs.history, side)):
                    check_bound(pname, f"{rp}.history.{side}.{j}", b, r, "rel")
                    if b.ref.startswith("target.") or b.ref == "valid_from":
                        add(pname, f"{rp}.history.{side}.{j}", b.ref, "a history window may refer to the source and constants only")
            _check_static_window(add, pname, f"{rp}.history", rs.history.after, rs.history.before, spec)
        if rs.acyclic and rs.source != rs.target:
            add(pname, f"{rp}.acyclic", True, "acyclic only applies to relations from a type to itself")
    for pname, pack in world.packs.items():
        for i, inv in enumerate(pack.invariants):
            if inv.acyclic is not None and inv.acyclic not in rels:
                add(pname, f"invariants.{i}.acyclic", inv.acyclic, f"unknown relation{_suggest(inv.acyclic, rels)}")

    # Counts: every root type needs one; non-root types are sized by their parent.
    for t, c in spec.counts.items():
        if t not in types:
            add(None, f"counts.{t}", t, _unknown_type(t, types))
        elif types[t][1].parent is not None:
            par = types[t][1].parent
            add(None, f"counts.{t}", c, f"'{t}' is generated per {par.type} ({par.count.min}-{par.count.max} each, set in pack "
                f"'{types[t][0]}'); remove it from counts")
    for t, (pname, et) in types.items():
        if et.parent is None and t not in spec.counts:
            add(None, f"counts.{t}", None, f"root type '{t}' (pack '{pname}') needs a count (0 to leave it out)")

    if not probs:
        probs.extend(_feasibility_problems(world, spec_file))
        probs.extend(_cycle_problems(world, spec_file))
        probs.extend(_sql_problems(world))
    return probs


def _check_pages(add, pname: str, t: str, et: EntityType, rels: dict, check_attr) -> None:
    """Page declarations must name this type's own event attributes, relations and columns."""
    base = f"types.{t}.pages"
    own = [r for r, (_, rs) in rels.items() if rs.source == t]
    dated = [r for r in own if rels[r][1].history or rels[r][1].date or rels[r][1].since]
    events = [a for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event]
    for i, n in enumerate(et.pages.news or []):
        if n not in events and n not in dated:
            add(pname, f"{base}.news.{i}", n, f"not an event attribute or dated relation of '{t}'{_suggest(n, events + dated)}; "
                f"choose from: {', '.join(events + dated) or 'none'}")
    for i, d in enumerate(et.pages.directories):
        dp = f"{base}.directories.{i}"
        if d.by not in own and d.by not in et.attributes:
            add(pname, f"{dp}.by", d.by, f"'{t}' has no outgoing relation or attribute of that name"
                f"{_suggest(d.by, own + list(et.attributes))}; relations: {', '.join(own) or 'none'}")
        if "{group}" not in d.title:
            add(pname, f"{dp}.title", d.title, "the title must contain {group}, e.g. 'Companies headquartered in {group}'")
        for j, c in enumerate(d.columns):
            check_attr(pname, f"{dp}.columns.{j}", t, c)
    if et.pages.profile and et.pages.profile.url:
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(et.pages.profile.url) if f}
        except ValueError as exc:
            add(pname, f"{base}.profile.url", et.pages.profile.url, f"not a valid template: {exc}")
            return
        for f in sorted(fields - {"slug", "site"}):
            check_attr(pname, f"{base}.profile.url", t, f)


def _check_static_window(add, pname: str, path: str, after: list[DateBound], before: list[DateBound], spec: WorldSpec) -> None:
    """Reject windows that are empty whatever the data: constant bounds that cross, or
    a lower bound on the same reference at or above an upper bound."""
    import polars as pl

    def resolve(b: DateBound) -> dt.date | None:
        if b.ref not in CONSTANT_REFS:
            return None
        base = spec.as_of if b.ref == "as_of" else spec.span_start
        s = pl.Series([base]).dt.offset_by(f"{b.years}y{b.days}d")
        return s[0]

    lo = max([d for d in map(resolve, after) if d is not None] + [spec.span_start])
    hi = min([d for d in map(resolve, before) if d is not None] + [spec.as_of])
    if lo > hi:
        add(pname, path, f"after {lo}, before {hi}",
            "the date window is empty: its lower bound is after its upper bound (bounds are also clipped to the world's time span)")
        return
    for a in after:
        for b in before:
            if a.ref == b.ref and a.ref not in CONSTANT_REFS and (a.years, a.days) >= (b.years, b.days):
                add(pname, path, f"after {a}, before {b}", "the date window is empty for every row")


def _feasibility_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    probs = []
    counts = expected_counts(world)
    for r, rs in world.relations.items():
        src_lo, src_mid, _ = counts[rs.source]
        tgt_lo, _, tgt_hi = counts[rs.target]
        pname = world.pack_of_relation(r)
        f = world.pack_files[pname]
        if rs.required and src_lo > 0 and tgt_hi == 0:
            probs.append(SpecProblem(f, f"relations.{r}", "", f"'{rs.source}' entities need a '{rs.target}' target but the world has no "
                                     f"'{rs.target}'; give '{rs.target}' (or its parent) a count above 0"))
        if rs.target_unique:
            need = src_mid * rs.rate * max(rs.count.min, 1 if rs.required else 0)
            if need > tgt_lo and need > 0:
                probs.append(SpecProblem(spec_file, "counts", f"{rs.source}~{src_mid:.0f}, {rs.target}>={tgt_lo:.0f}",
                                         f"relation '{r}' ({rs.cardinality}) gives each '{rs.target}' to at most one '{rs.source}', "
                                         f"so it needs about {need:.0f} distinct targets but the world may have only {tgt_lo:.0f}; "
                                         f"raise the '{rs.target}' count or lower '{rs.source}'"))
    return probs


def dependency_graph(world: ResolvedWorld):
    """Nodes: ('type', T), ('attr', T, a), ('rel', R). Edges point from a prerequisite to its user."""
    import networkx as nx

    g = nx.DiGraph()
    types = world.types
    rels = world.relations
    parent_rel = {et.parent.relation: t for t, et in types.items() if et.parent}

    def rel_node(r: str):
        return ("type", parent_rel[r]) if r in parent_rel else ("rel", r)

    def attr_node(t: str, a: str):
        return ("type", t) if a in ("id", "name") else ("attr", t, a)

    for t, et in types.items():
        g.add_node(("type", t))
        if et.parent:
            g.add_edge(("type", et.parent.type), ("type", t))
        for a, attr in et.attributes.items():
            node = ("attr", t, a)
            g.add_edge(("type", t), node)
            deps: list = []
            if isinstance(attr, DateAttr):
                for b in [*attr.after, *attr.before]:
                    deps += _bound_deps_attr(b, t, rels, rel_node, attr_node)
            elif isinstance(attr, DerivedAttr):
                for other in et.attributes:
                    if other != a and re.search(rf"\b{re.escape(other)}\b", attr.sql):
                        deps.append(attr_node(t, other))
            elif isinstance(attr, LookupAttr):
                deps += [rel_node(attr.via), attr_node(rels[attr.via].target, attr.attribute)]
            for d in deps:
                if d != ("type", t):
                    g.add_edge(d, node)
        for al in et.name.aliases:
            if al.after is not None:
                for d in _bound_deps_attr(al.after, t, rels, rel_node, attr_node):
                    g.add_edge(d, ("aliases", t))
        g.add_edge(("type", t), ("aliases", t))
    for r, rs in rels.items():
        if r in parent_rel:
            continue
        node = ("rel", r)
        g.add_edge(("type", rs.source), node)
        g.add_edge(("type", rs.target), node)
        deps = []
        if rs.same:
            deps += [attr_node(rs.source, rs.same.source), attr_node(rs.target, rs.same.target)]
        if isinstance(rs.select, WeightSelect):
            deps.append(attr_node(rs.target, rs.select.weight))
        bounds: list[DateBound] = []
        if rs.eligible:
            deps.append(attr_node(rs.target, rs.eligible.attribute))
            bounds += [b for b in (rs.eligible.after, rs.eligible.before) if b is not None]
        if rs.since:
            bounds.append(rs.since)
        if rs.date:
            bounds += [*rs.date.after, *rs.date.before]
        if rs.history:
            bounds += [*rs.history.after, *rs.history.before]
        for b in bounds:
            side, _, a = b.ref.partition(".")
            if side == "source":
                deps.append(attr_node(rs.source, a))
            elif side == "target":
                deps.append(attr_node(rs.target, a))
        for d in deps:
            g.add_edge(d, node)
    return g


def _bound_deps_attr(b: DateBound, t: str, rels, rel_node, attr_node) -> list:
    if b.ref in CONSTANT_REFS:
        return []
    parts = b.ref.split(".")
    if len(parts) == 1:
        return [attr_node(t, parts[0])]
    r, a = parts
    return [rel_node(r), attr_node(rels[r].target, a)]


def node_label(n: tuple) -> str:
    """A readable name for a node of the dependency graph (cycle messages, progress bars)."""
    if n[0] == "type":
        return f"type {n[1]}"
    if n[0] == "attr":
        return f"{n[1]}.{n[2]}"
    if n[0] == "aliases":
        return f"{n[1]} aliases"
    return f"relation {n[1]}"


def _cycle_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    import networkx as nx

    g = dependency_graph(world)
    probs = []
    for comp in nx.strongly_connected_components(g):
        if len(comp) < 2:
            continue
        cyc = nx.find_cycle(g.subgraph(comp))
        chain = " -> ".join(node_label(u) for u, _ in cyc) + f" -> {node_label(cyc[0][0])}"
        first = sorted(comp)[0]
        owner = first[1]
        pname = world.pack_of_type(owner) if first[0] in ("type", "attr", "aliases") else world.pack_of_relation(owner)
        probs.append(SpecProblem(world.pack_files[pname], "", "",
                                 f"dependency cycle: {chain}; break it by removing one of these references"))
    return probs


def _sql_problems(world: ResolvedWorld) -> list[SpecProblem]:
    """Compile derived expressions against an empty table of the right shape."""
    import duckdb

    sql_types = {"string": "VARCHAR", "int": "BIGINT", "float": "DOUBLE", "date": "DATE", "bool": "BOOLEAN", "entity": "VARCHAR"}
    probs = []
    con = duckdb.connect()
    for t, et in world.types.items():
        cols = ["id VARCHAR", "name VARCHAR"] + [
            f'"{a}" {sql_types[attribute_dtype(world, t, a)]}' for a in et.attributes
        ]
        con.execute(f'CREATE OR REPLACE TABLE "_probe" ({", ".join(cols)})')
        for a, attr in et.attributes.items():
            if isinstance(attr, DerivedAttr):
                expr = fill_sql(attr.sql, world.spec)
                try:
                    con.execute(f'SELECT CAST(({expr}) AS {sql_types[attr.dtype]}) FROM "_probe"').fetchall()
                except duckdb.Error as exc:
                    msg = str(exc).splitlines()[0]
                    probs.append(SpecProblem(world.pack_files[world.pack_of_type(t)], f"types.{t}.attributes.{a}.sql",
                                             _short(attr.sql), f"not a valid DuckDB expression over {t}'s columns: {msg}"))
    con.close()
    return probs


def fill_sql(sql: str, spec: WorldSpec) -> str:
    """Substitute {as_of} and {span_start} with DATE literals."""
    return sql.replace("{as_of}", f"DATE '{spec.as_of.isoformat()}'").replace(
        "{span_start}", f"DATE '{spec.span_start.isoformat()}'"
    )
