"""Domain packs (`schemas/*.yaml`) as typed, validated models: entity types with their
names, aliases, attributes and pages; relations; declared invariants.

The models check what can be checked field by field (a bound's syntax, a phrase's
placeholders, a distribution's parameters); checks across a whole world (references
between packs, cycles, feasibility) live in `validate.py`.
"""

from __future__ import annotations

import math
import re
import reprlib
import string
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PACK_VERSION = 1
# Constant date references usable in any bound.
CONSTANT_REFS = ("as_of", "span_start")
_NAME_RE = r"^[a-z][a-z0-9_]{0,63}$"  # snake_case, at most 64 characters
# Names the world store uses for its own tables and views: a type may not take them
# (relation tables are `rel_<relation>`, catalogue tables start with `_`).
RESERVED_TABLES = ("aliases", "facts", "timeline")
# Integers in number name parts stay well inside int64 (and exact as floats).
MAX_NAME_NUMBER = 10**15
MAX_RANGE = 1_000_000_000  # the largest count range a pack or option may give


class Model(BaseModel):
    # NaN and infinity are never valid numbers in a spec or pack (weights, parameters, rates).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlevel = 2


def clip(value: Any) -> str:
    """A short repr for messages: cheap on huge or deeply nested values, never more than ~100 characters."""
    try:
        return _REPR.repr(value)
    except Exception:  # a value whose repr fails (e.g. an int beyond Python's digit limit)
        return f"<{type(value).__name__}>"


def _check_weights(weights: dict[str, float], what: str) -> None:
    """Weights are finite (pydantic already refuses NaN/inf), >= 0 and not all zero."""
    bad = {k: w for k, w in weights.items() if not (math.isfinite(w) and w >= 0)}
    if bad:
        raise ValueError(f"{what} weights must be finite and >= 0 (got {clip(bad)})")
    if weights and sum(weights.values()) <= 0:
        raise ValueError(f"{what} weights must not all be zero")


def _check_phrases(phrases: list[str], allowed: set[str], need_value: bool = True) -> list[str]:
    """Sentence templates may use only the named fields, as plain placeholders; phrases
    (not headlines) must state the value."""
    for p in phrases:
        try:
            parsed = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(p) if f is not None]
        except ValueError as exc:
            raise ValueError(f"phrase {clip(p)} is not a valid template: {exc}") from None
        fields = {f for f, _, _ in parsed}
        if fields - allowed:
            raise ValueError(f"phrase {clip(p)} uses {clip(sorted(fields - allowed))}; allowed fields are {sorted(allowed)}")
        fancy = next((f for f, spec, conv in parsed if spec or conv), None)
        if fancy is not None:
            raise ValueError(f"phrase {clip(p)}: write plain placeholders like {{{fancy}}} (no format specs or conversions)")
        need = {"value", "object"} & allowed
        if need_value and not fields & need:
            raise ValueError(f"phrase {clip(p)} must contain {' or '.join('{' + n + '}' for n in sorted(need))}")
    return phrases


def _check_noun(v: str | None) -> str | None:
    """A hop as a noun phrase for multi-hop questions: must name {subject}, and nothing else."""
    if v is not None:
        _check_phrases([v], {"subject"}, need_value=False)
        if "{subject}" not in v:
            raise ValueError(f"noun {clip(v)} must contain {{subject}}")
    return v


# --------------------------------------------------------------------------- bounds

_BOUND_RE = re.compile(r"^\s*([A-Za-z_][\w.]{0,200})\s*(?:([+-])\s*(\d{1,9})\s*([yd]))?\s*$")


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
                    f"cannot read date bound {clip(data)}; write '<ref>', '<ref> + <N>y' or '<ref> - <N>d' "
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
    min: int = Field(1, ge=0, le=MAX_RANGE)
    max: int = Field(1, ge=0, le=MAX_RANGE)

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

    @model_validator(mode="after")
    def _ordered(self) -> SyllableSpec:
        if self.min > self.max:
            raise ValueError(f"syllables: min ({self.min}) must not exceed max ({self.max})")
        return self


class NumberPart(Model):
    min: int = Field(0, ge=-MAX_NAME_NUMBER, le=MAX_NAME_NUMBER)
    max: int = Field(999, ge=-MAX_NAME_NUMBER, le=MAX_NAME_NUMBER)

    @model_validator(mode="after")
    def _ordered(self) -> NumberPart:
        if self.min > self.max:
            raise ValueError(f"number: min ({self.min}) must not exceed max ({self.max}); "
                             f"write e.g. {{min: {self.max}, max: {self.min}}}")
        return self


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
        if self.faker is not None and not self.faker.strip():
            raise ValueError("faker needs a provider name, e.g. faker: last_name")
        if self.choices is not None:
            if not self.choices:
                raise ValueError("choices needs at least one value")
            if isinstance(self.choices, dict):
                _check_weights(self.choices, "choice")
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
        if self.templates is not None:
            if not self.templates:
                raise ValueError("templates needs at least one template")
            _check_weights(self.templates, "template")
        for tmpl in self.template_weights():
            try:
                parsed = list(string.Formatter().parse(tmpl))
            except ValueError as exc:
                raise ValueError(f"template {clip(tmpl)} is not a valid template: {exc}") from None
            for _, field, spec, conv in parsed:
                if field is None:
                    continue
                if spec or conv:
                    raise ValueError(f"template {clip(tmpl)}: write plain placeholders like {{{clip(field)[1:-1]}}}")
                if field not in self.parts:
                    raise ValueError(
                        f"template {clip(tmpl)} uses {{{clip(field)[1:-1]}}} but parts defines only {clip(sorted(self.parts))}"
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
    provider: str = Field(min_length=1)
    pool: int = Field(4096, ge=16, le=200_000)


class CategoricalAttr(_AttrBase):
    kind: Literal["categorical"]
    values: list[str] | dict[str, float]

    @field_validator("values")
    @classmethod
    def _nonempty(cls, v):
        if not v:
            raise ValueError("needs at least one value")
        if isinstance(v, dict):
            _check_weights(v, "value")
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
            raise ValueError(f"{self.distribution} takes params {sorted(need)}, got {clip(sorted(self.params))}")
        p = self.params
        limit = _NUMERIC_PARAM_LIMITS[self.distribution]
        for k, v in p.items():
            lo, hi = limit[k]
            if not lo <= v <= hi:
                raise ValueError(f"{self.distribution} param {k} must lie within {lo:g}..{hi:g}, got {v:g}")
        if self.distribution == "uniform" and p["low"] > p["high"]:
            raise ValueError(f"uniform: low ({p['low']:g}) must not exceed high ({p['high']:g})")
        for k in ("min", "max"):
            v = getattr(self, k)
            if v is not None and abs(v) > _NUMERIC_LIMIT:
                raise ValueError(f"{k} must lie within -{_NUMERIC_LIMIT:g}..{_NUMERIC_LIMIT:g}, got {v:g}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) must not exceed max ({self.max})")
        return self


# Numeric attributes stay within +-1e15 (exact as floats and as int64); distribution
# parameters within ranges numpy samples from without overflow.
_NUMERIC_LIMIT = 1e15
_NUMERIC_PARAM_LIMITS = {
    "uniform": {"low": (-_NUMERIC_LIMIT, _NUMERIC_LIMIT), "high": (-_NUMERIC_LIMIT, _NUMERIC_LIMIT)},
    "normal": {"mean": (-_NUMERIC_LIMIT, _NUMERIC_LIMIT), "sd": (0.0, _NUMERIC_LIMIT)},
    "lognormal": {"mean": (-50.0, 50.0), "sigma": (0.0, 10.0)},
    "exponential": {"scale": (0.0, _NUMERIC_LIMIT)},
    "poisson": {"lam": (0.0, 1e12)},
}


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
    sql: str = Field(min_length=1)  # a DuckDB expression over this entity's columns; {as_of} and {span_start} are date literals
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
                raise ValueError(f"attribute name {clip(key)} must be snake_case, at most 64 characters")
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
    alpha: float = Field(1.5, ge=0.1, le=100.0)  # Pareto shape of preferential attachment
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
        if self.required and self.count_range.min < 1:
            raise ValueError(f"a required relation gives every source at least one link: set {'history.' if self.history else ''}"
                             "count.min to 1 or more (or drop required)")
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
    sql: str | None = Field(None, min_length=1)
    acyclic: str | None = Field(None, min_length=1)  # relation name

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
                raise ValueError(f"name {clip(key)} must be snake_case (a-z, 0-9, _), at most 64 characters")
        return v

    @field_validator("types")
    @classmethod
    def _type_names(cls, v):
        for key in v:
            if key in RESERVED_TABLES or key.startswith("rel_"):
                raise ValueError(f"type name {key!r} is taken by the world store (its tables {', '.join(RESERVED_TABLES)} "
                                 "and rel_<relation>); rename the type")
        return v
