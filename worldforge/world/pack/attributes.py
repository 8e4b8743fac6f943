"""An entity's attributes (faker, categorical, numeric, date, derived, lookup, count, code) and a link's own (numbers, categories, entities)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ...language import BASE
from .base import DateBound, LangText, Localized, Model, check_i18n, check_noun, check_phrases, check_weights, clip, split_languages

# --------------------------------------------------------------------------- attributes


class _AttrBase(Localized, Model):
    description: str = ""
    null_rate: float = Field(0.0, ge=0.0, le=1.0)
    # A working attribute: drawn, stored and usable by derived SQL, lookups, weights, bounds and
    # invariants, but never stated on a page nor asked or answered in a task (a rate a stated
    # figure is computed from, a weight links are drawn by).
    hidden: bool = False
    # How pages state the attribute: an infobox label and sentence templates with
    # {subject} and {value}; defaults are derived from the attribute name.
    label: str | None = None
    phrases: list[str] = []
    # How task questions ask for it: qualifiers after a plural noun, with {value} (an
    # equality value, or a range such as "between 1990 and 1999"): "founded {value}".
    ask: list[str] = []
    i18n: dict[str, LangText] = {}  # other languages' label, phrases, ask (`label: {en: Area, zh: 面积}`)

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)

    @model_validator(mode="after")
    def _i18n_phrases(self):
        check_i18n(self.i18n, {"subject", "value"}, {"value"})
        return self

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return check_phrases(v, {"subject", "value"})

    @field_validator("ask")
    @classmethod
    def _ask_fields(cls, v):
        return check_phrases(v, {"value"})


class Changes(Model):
    """How a value moved in the years before the world's date. A figure (a population, a
    workforce, an h-index) takes `per_year`: each year's change is drawn uniformly from it
    (`[0.0, 0.03]`: grew by 0 to 3 % a year). A category or a name (an occupation, a mayor)
    takes `every`: it was replaced every so many years (`[4, 8]`), each earlier value drawn
    from the values other entities hold. The world stores the value of each of the last `years`
    years, back from today's and never before the entity's start (an entity whose life has
    ended keeps its last value); a page dated in one of those years states that year's, so an
    old profile or a news item disagrees with the live pages, each dated. The world's
    invariants (bounds of the whole, at_most) hold for today's values."""

    per_year: tuple[float, float] | None = None
    every: tuple[int, int] | None = None
    years: int = Field(10, ge=2, le=100)

    @model_validator(mode="after")
    def _range(self) -> Changes:
        if (self.per_year is None) == (self.every is None):
            raise ValueError("give per_year (a figure's yearly change, [low, high]) or every (the years between "
                             "a category's or a name's changes, [low, high]), one of the two")
        if self.per_year is not None:
            lo, hi = self.per_year
            if not (math.isfinite(lo) and math.isfinite(hi)) or not -0.5 <= lo <= hi <= 1.0:
                raise ValueError(f"per_year must be [low, high] with -0.5 <= low <= high <= 1.0 (yearly changes "
                                 f"between -50 % and +100 %), got [{lo}, {hi}]")
        if self.every is not None and not 1 <= self.every[0] <= self.every[1] <= 100:
            raise ValueError(f"every must be [low, high] years with 1 <= low <= high <= 100, got {list(self.every)}")
        return self


class FakerAttr(_AttrBase):
    kind: Literal["faker"]
    provider: str = Field(min_length=1)
    pool: int = Field(4096, ge=16, le=200_000)
    changes: Changes | None = None  # replaced every so many years (a mayor): pages dated then name the one of then

    @model_validator(mode="after")
    def _changes(self):
        _check_changes(self.changes, "every")
        return self


class CategoricalValue(Model):
    """One categorical value with its own weight and its own sentences on pages
    ("{subject} is listed on a stock exchange." for `public`)."""

    weight: float = Field(1.0, ge=0.0)
    phrases: list[str] = []
    # The years the value exists in (a classification introduced in 1995, a kind of product
    # before which nothing was sold as such): an entity whose `dated_by` date lies outside
    # [since, until) never takes it.
    since: dt.date | None = None
    until: dt.date | None = None

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return check_phrases(v, {"subject", "value"}, need_value=False)

    @model_validator(mode="after")
    def _window(self) -> CategoricalValue:
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ValueError(f"since ({self.since}) must come before until ({self.until})")
        return self


class Stages(Model):
    """A category that follows time (issue 60): the stage an entity is in at a date, from two of
    its dates, `start` (work begins: a project's start) and `end` (it is over: its completion).
    `order` lists the attribute's values by stage: before the start (planned), between the two
    (under way), after the end (finished); two values leave out the first (every one has begun).
    Their weights are the shares at the world's date: the planner draws each entity's stage by
    them, then its dates so that it is in that stage at as_of (a planned one has no start yet, one
    under way no end, and began within one of its durations; a finished one ended before), and
    the value is what the dates say. Pages dated in an earlier year state the stage of then."""

    start: str
    end: str
    order: list[str] = Field(min_length=2, max_length=3)


class CategoricalAttr(_AttrBase):
    kind: Literal["categorical"]
    values: list[str] | dict[str, float | CategoricalValue]
    changes: Changes | None = None  # replaced every so many years (an occupation): pages dated then state the one of then
    # A conditional distribution: weights per value of another categorical attribute of
    # the same entity, or of a name part (`given: name.<part>`); `values` serve the rest.
    given: str | None = None
    cases: dict[str, dict[str, float]] = {}
    # The entity's date attribute that values with `since`/`until` are judged by (a product's
    # launch, an aircraft's introduction).
    dated_by: str | None = None
    # A stage read from two of the entity's dates at a day (see `Stages`).
    stages: Stages | None = None

    @field_validator("values")
    @classmethod
    def _nonempty(cls, v):
        if not v:
            raise ValueError("needs at least one value")
        if isinstance(v, dict):
            check_weights({k: w.weight if isinstance(w, CategoricalValue) else w for k, w in v.items()}, "value")
        return v

    def translation(self, language: str) -> dict[str, str]:
        """The attribute's values in another language (`i18n: {zh: {values: {software: 软件}}}`);
        a world in that language stores them so (untranslated values stay as they are)."""
        lt = self.i18n.get(language) if language != BASE else None
        return dict(lt.values) if lt is not None and lt.values else {}

    @model_validator(mode="after")
    def _translated_values(self) -> CategoricalAttr:
        _check_changes(self.changes, "every")
        known = set(self.weights())
        for lang, lt in self.i18n.items():
            if not lt.values:
                continue
            unknown = sorted(set(lt.values) - known)
            if unknown:
                raise ValueError(f"i18n.{lang}.values: {clip(unknown)} is not a value of this attribute; known: {clip(sorted(known))}")
            seen: dict[str, str] = {}
            for k, v in lt.values.items():
                if not isinstance(v, str) or not v.strip():
                    raise ValueError(f"i18n.{lang}.values.{clip(k)} must be a non-empty string")
                if v in seen or (v in known and v not in lt.values and v != k):
                    raise ValueError(f"i18n.{lang}.values: {clip(k)} and {clip(seen.get(v, v))} would both read {clip(v)}")
                seen[v] = k
        return self

    @model_validator(mode="after")
    def _cases(self) -> CategoricalAttr:
        if (self.given is None) != (not self.cases):
            raise ValueError("given and cases go together: cases maps each value of the given attribute to value weights")
        known = set(self.weights())
        for cond, w in self.cases.items():
            if not w:
                raise ValueError(f"cases.{clip(cond)} needs at least one value")
            check_weights(w, f"cases.{clip(cond)}")
            unknown = sorted(set(w) - known)
            if unknown:
                raise ValueError(f"cases.{clip(cond)} names {clip(unknown)}, which are not among values {clip(sorted(known))}")
        return self

    def windows(self) -> dict[str, tuple[dt.date | None, dt.date | None]]:
        """The values that exist only in some years: value -> (since, until)."""
        if not isinstance(self.values, dict):
            return {}
        return {k: (v.since, v.until) for k, v in self.values.items()
                if isinstance(v, CategoricalValue) and (v.since is not None or v.until is not None)}

    @model_validator(mode="after")
    def _dated(self) -> CategoricalAttr:
        if self.windows() and self.dated_by is None:
            raise ValueError(f"values {clip(sorted(self.windows()))} exist only in some years: name the date they are judged by "
                             "with dated_by (a date attribute of the same entity)")
        if self.dated_by is not None and not self.windows():
            raise ValueError("dated_by needs values with since or until (`values: {platform: {weight: 2, since: 1995-01-01}}`)")
        if self.dated_by is not None and self.changes is not None:
            raise ValueError("a category with values of some years cannot also change over the years (changes); drop one")
        if self.stages is not None:
            if sorted(self.stages.order) != sorted(self.weights()):
                raise ValueError(f"stages.order lists every value once, by stage (planned, under way, finished; or under "
                                 f"way, finished); the values are {clip(list(self.weights()))}, got {clip(self.stages.order)}")
            clash = [k for k, v in (("given", self.given), ("changes", self.changes), ("dated_by", self.dated_by)) if v is not None]
            if clash:
                raise ValueError(f"a stage follows its dates, so it takes no {clash[0]}; drop one of the two")
            if self.stages.start == self.stages.end:
                raise ValueError("stages.start and stages.end name the same date; the end is a second date of the entity")
        return self

    def stage_values(self) -> list[str | None]:
        """The values of a `stages` category by stage: [before the start, under way, finished]
        (None for a category of two values: every entity has begun)."""
        vals = list(self.stages.order)
        return [None, *vals] if len(vals) == 2 else vals

    @property
    def yearly(self) -> bool:
        """Whether the value has a history of earlier years (`changes`, or a stage)."""
        return self.changes is not None or self.stages is not None

    def weights(self) -> dict[str, float]:
        """Each value with its weight (a list gives every value weight 1)."""
        if isinstance(self.values, list):
            return dict.fromkeys(self.values, 1.0)
        return {k: (w.weight if isinstance(w, CategoricalValue) else float(w)) for k, w in self.values.items()}

    def value_phrases(self, value: str) -> list[str]:
        """The sentences a page states this value with: the value's own, else the attribute's."""
        v = self.values.get(value) if isinstance(self.values, dict) else None
        return list(v.phrases) if isinstance(v, CategoricalValue) and v.phrases else list(self.phrases)


# Numeric attributes stay within +-1e15 (exact as floats and as int64); distribution
# parameters within ranges numpy samples from without overflow.
_NUMERIC_LIMIT = 1e15
_NUMERIC_PARAM_LIMITS = {
    "uniform": {"low": (-_NUMERIC_LIMIT, _NUMERIC_LIMIT), "high": (-_NUMERIC_LIMIT, _NUMERIC_LIMIT)},
    "normal": {"mean": (-_NUMERIC_LIMIT, _NUMERIC_LIMIT), "sd": (0.0, _NUMERIC_LIMIT)},
    "lognormal": {"mean": (-50.0, 50.0), "sigma": (0.0, 10.0)},
    "exponential": {"scale": (0.0, _NUMERIC_LIMIT)},
    "poisson": {"lam": (0.0, 1e12)},
    "gamma": {"shape": (1e-3, 1e6), "scale": (0.0, _NUMERIC_LIMIT)},
    "weibull": {"shape": (0.05, 100.0), "scale": (0.0, _NUMERIC_LIMIT)},
    # Gompertz (mortality): the hazard grows exponentially with age; `mode` is the most
    # likely value, `scale` the spread (1 / the hazard's growth rate).
    "gompertz": {"mode": (0.0, 1e6), "scale": (1e-3, 1e6)},
}
Distribution = Literal["uniform", "normal", "lognormal", "exponential", "poisson", "gamma", "weibull", "gompertz"]


def check_distribution(distribution: str, params: dict[str, float], what: str = "") -> None:
    """Parameters are exactly the distribution's, within ranges numpy samples from."""
    limits = _NUMERIC_PARAM_LIMITS[distribution]
    if set(params) != set(limits):
        raise ValueError(f"{what}{distribution} takes params {sorted(limits)}, got {clip(sorted(params))}")
    for k, v in params.items():
        lo, hi = limits[k]
        if not lo <= v <= hi:
            raise ValueError(f"{what}{distribution} param {k} must lie within {lo:g}..{hi:g}, got {v:g}")
    if distribution == "uniform" and params["low"] > params["high"]:
        raise ValueError(f"{what}uniform: low ({params['low']:g}) must not exceed high ({params['high']:g})")
    if distribution == "gompertz" and params["mode"] / params["scale"] > 200:
        raise ValueError(f"{what}gompertz: mode / scale must be at most 200 (got {params['mode'] / params['scale']:g})")


def _check_changes(ch: Changes | None, want: str) -> None:
    """A figure's history is `per_year`, a category's or a name's is `every`."""
    if ch is not None and getattr(ch, want) is None:
        raise ValueError(f"changes: a {'figure' if want == 'per_year' else 'category or a name'} takes {want}"
                         + (" (its yearly change, [low, high])" if want == "per_year" else " (the years between changes, [low, high])"))


def check_min_max(lo: float | None, hi: float | None, limit: float = _NUMERIC_LIMIT) -> None:
    for k, v in (("min", lo), ("max", hi)):
        if v is not None and abs(v) > limit:
            raise ValueError(f"{k} must lie within -{limit:g}..{limit:g}, got {v:g}")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"min ({lo}) must not exceed max ({hi})")


class NumericCase(Model):
    """The distribution of a numeric attribute for one value of its `given` attribute:
    other parameters and/or other bounds."""

    params: dict[str, float] | None = None
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _bounds(self) -> NumericCase:
        check_min_max(self.min, self.max)
        return self


class PartOf(Model):
    """A part bounded by its whole: the part's number is at most `share` times the whole's
    (`sum: true`: the parts of one whole add up to at most that). `via` is a to-one relation
    or an entity-valued lookup attribute leading to the whole (city -> country)."""

    via: str
    attribute: str
    share: float = Field(1.0, gt=0.0, le=1e6)
    sum: bool = False


class Per(Model):
    """A figure drawn as a rate per `unit` of another figure (revenue per employee, passengers a
    year per resident): the attribute's distribution (and its cases) give the rate, within
    [min, max] here, and its value is rate x the other figure / unit, within the attribute's own
    min and max. `attribute` is a numeric attribute of the entity itself, or, with `via` (a
    to-one relation or an entity-valued lookup), of the entity that leads to. A row without the
    other figure has none either."""

    attribute: str
    via: str | None = None
    unit: float = Field(1.0, gt=0.0, le=1e12)
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _bounds(self) -> Per:
        check_min_max(self.min, self.max)
        return self


class NumericAttr(_AttrBase):
    kind: Literal["numeric"]
    distribution: Distribution
    params: dict[str, float]
    min: float | None = None
    max: float | None = None
    integer: bool = False
    decimals: int | None = Field(None, ge=0, le=6)
    unit: str | None = None
    # A conditional distribution: parameters (and bounds) per value of a categorical attribute.
    given: str | None = None
    cases: dict[str, NumericCase] = {}
    part_of: PartOf | None = None
    at_most: str | None = None  # another numeric attribute of the same entity that bounds this one
    changes: Changes | None = None  # a figure with a yearly history (pages dated in the past state theirs)
    per: Per | None = None  # drawn as a rate per unit of another figure

    @model_validator(mode="after")
    def _params(self) -> NumericAttr:
        _check_changes(self.changes, "per_year")
        check_distribution(self.distribution, self.params)
        check_min_max(self.min, self.max)
        if self.cases and self.given is None:
            raise ValueError("cases need given: the categorical attribute whose value picks the case")
        if self.given is not None and not self.cases:
            raise ValueError("given needs cases: the parameters for each value of the given attribute")
        for v, c in self.cases.items():
            if c.params is not None:
                check_distribution(self.distribution, c.params, f"cases.{clip(v)}: ")
            lo, hi = self.case_bounds(v)
            if lo is not None and hi is not None and lo > hi:
                raise ValueError(f"cases.{clip(v)}: min ({lo}) must not exceed max ({hi})")
        return self

    def case_bounds(self, value: str | None) -> tuple[float | None, float | None]:
        c = self.cases.get(value) if value is not None else None
        if c is None:
            return self.min, self.max
        return (self.min if c.min is None else c.min), (self.max if c.max is None else c.max)

    def all_bounds(self) -> tuple[float | None, float | None]:
        """The widest bounds over every case: what any row's value lies within."""
        bounds = [self.case_bounds(None)] + [self.case_bounds(v) for v in self.cases]
        los, his = [b[0] for b in bounds], [b[1] for b in bounds]
        return (None if None in los else min(los)), (None if None in his else max(his))


class Duration(Model):
    """A random length of time (an age at an event, a lifespan, a tenure, a delay), drawn
    per row from a distribution in `unit`s and truncated to [min, max]; a year is 365.2425
    days and draws are whole days, so every date drawn from one has day-level jitter."""

    distribution: Distribution
    params: dict[str, float]
    min: float | None = None
    max: float | None = None
    unit: Literal["years", "days"] = "years"

    @model_validator(mode="after")
    def _params(self) -> Duration:
        check_distribution(self.distribution, self.params)
        check_min_max(self.min, self.max, 3_000_000 if self.unit == "days" else 8000)
        return self


class DateOffset(Duration):
    """A date drawn as `ref` plus a random duration: `{ref: birth_date, distribution: normal,
    params: {mean: 24, sd: 3}}` is an age of about 24 at the event; `direction: before`
    subtracts it (`{ref: as_of, direction: before, ...}`: an age today)."""

    ref: DateBound
    direction: Literal["after", "before"] = "after"


class DateCase(Model):
    """More bounds for the rows whose `given` attribute has one value, and their own duration
    (`offset`: the distribution, params, min, max and unit of the date's offset for these rows,
    from the same `ref`: a short process lasts months where a long one lasts years)."""

    after: list[DateBound] = []
    before: list[DateBound] = []
    offset: Duration | None = None


class DateAttr(_AttrBase):
    kind: Literal["date"]
    after: list[DateBound] = []
    before: list[DateBound] = []
    # Drawn as a reference date plus a random duration (an age, a lifespan) instead of
    # uniformly inside [after, before]; the bounds still hold (draws outside are redrawn).
    offset: DateOffset | None = None
    # With an offset: a date that would fall after as_of has not happened yet and is NULL
    # (a death, a dissolution, a split that lies in the future).
    censor: bool = False
    # Bounds conditioned on a categorical attribute: computer-science awards after 1950.
    given: str | None = None
    cases: dict[str, DateCase] = {}
    event: bool = False  # appears on the world's timeline (births, foundings, launches)
    headlines: list[str] = []  # news headlines for the event, with {subject} and {value}

    @field_validator("headlines")
    @classmethod
    def _headline_fields(cls, v):
        return check_phrases(v, {"subject", "value"}, need_value=False)

    @model_validator(mode="after")
    def _censor(self) -> DateAttr:
        if self.censor and self.offset is None:
            raise ValueError("censor applies to dates drawn with an offset")
        if (self.given is None) != (not self.cases):
            raise ValueError("given and cases go together: cases maps values of the given attribute to more bounds")
        with_offset = [v for v, c in self.cases.items() if c.offset is not None]
        if with_offset and self.offset is None:
            raise ValueError(f"cases.{with_offset[0]}.offset: a case's duration replaces the date's own offset; give the "
                             "date an offset (its ref and direction, and the duration of the other rows)")
        return self


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
    unit: str | None = None  # default: the unit of the attribute it copies (filled in when the world is loaded)

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return check_noun(v)


class CountAttr(_AttrBase):
    """How many entities a relation links this one to: a league's clubs, a researcher's papers.
    `side`: `in` counts links that end here, `out` links that start here (inferred unless the
    relation joins a type to itself); `current`: only links still valid at as_of. `sum`: instead
    of counting the links, add up one of their whole-number attributes (a club's spending on
    transfers is the sum of its transfers' fees: the links' numbers add up to it exactly)."""

    kind: Literal["count"]
    relation: str
    side: Literal["in", "out"] | None = None
    current: bool = False
    sum: str | None = None
    unit: str | None = None

    def side_for(self, t: str, rel) -> str:  # rel: a RelationSpec
        if self.side is not None:
            return self.side
        return "in" if rel.target == t else "out"


class CodeAttr(_AttrBase):
    """A short code unique within the type (IATA-like "KLO"), built from the letters of the
    name where it can be (first letters first), random letters where it cannot."""

    kind: Literal["code"]
    length: int = Field(3, ge=2, le=8)
    alphabet: Literal["letters", "alphanumeric"] = "letters"
    source: str = "name"  # a string attribute of the same entity the code is read from


Attribute = Annotated[
    FakerAttr | CategoricalAttr | NumericAttr | DateAttr | DerivedAttr | LookupAttr | CountAttr | CodeAttr,
    Field(discriminator="kind"),
]


class LinkNumber(NumericAttr):
    """A whole number drawn per link (a player's shirt number per spell at a club): from the
    distribution, within [min, max]. `distinct`: links to one target that overlap in time never
    share a value (no two players of a squad wear one number; `true` or `target`), or with
    `source` a source's own links that overlap in time never do (an undated relation's links all
    overlap: a club's transfers each get their own registration number); a link no value is left
    for has none (`plan` reports how many)."""

    distinct: bool | Literal["target", "source"] = False

    @property
    def distinct_by(self) -> str | None:
        """The end whose overlapping links never share a value: 'target', 'source' or None."""
        return "target" if self.distinct is True else self.distinct or None

    @model_validator(mode="after")
    def _link_number(self) -> LinkNumber:
        if not self.integer:
            raise ValueError("a numeric link attribute is a whole number (a shirt number): set integer: true")
        if self.min is None or self.max is None:
            raise ValueError("a numeric link attribute needs min and max (the numbers a link can take, e.g. min: 1, max: 99)")
        if self.max - self.min > 1_000_000:
            raise ValueError(f"a numeric link attribute spans at most 1,000,000 numbers (got min {self.min:g}, max {self.max:g})")
        drop = [k for k, v in (("given", self.given), ("cases", self.cases or None), ("part_of", self.part_of),
                               ("at_most", self.at_most), ("changes", self.changes), ("per", self.per),
                               ("decimals", self.decimals), ("unit", self.unit), ("hidden", self.hidden or None))
                if v is not None]
        if drop:
            raise ValueError(f"a numeric link attribute is drawn per link from its distribution alone: drop {', '.join(drop)}")
        return self

    def translation(self, language: str) -> dict[str, str]:
        return {}  # numbers are written alike in every language


class OnePerTarget(Model):
    """`one_per_target` of a link's category: the value that at most one link to each target holds
    at a time (one captain per club, one lead per project: links to one target whose spans overlap;
    an undated relation's links all do). Links the draw gave it beyond that take another value, by
    the other values' weights. `exactly`: every target with links has one that holds it (an
    undated relation's target exactly one; a dated one's at least one over time)."""

    value: str
    exactly: bool = False


class LinkCategory(CategoricalAttr):
    """A category drawn per link (a member's role, a job's grade). `rises`: every value, lowest
    first (`rises: [junior, senior, lead]`): along each source's links of the relation, by start
    date, the value never falls (a career's grades only go up); each source keeps the values it
    drew, put in rising order, so the category's shares are as drawn. `seniority` (with `rises`):
    the values also rise with the source's standing when a link starts, over all its links:
    `age` (time since the source's lifecycle start: a head of department is rarely under 35) or
    `career` (time since its first link of the relation: a first post is a junior one); the
    drawn values go to the links in order of that time, give or take a couple of years, then each
    source's are put in rising order. `one_per_target`: see `OnePerTarget`."""

    rises: list[str] = []
    seniority: Literal["age", "career"] | None = None
    one_per_target: OnePerTarget | None = None

    @model_validator(mode="after")
    def _rising_order(self) -> LinkCategory:
        if self.rises and sorted(self.rises) != sorted(self.weights()):
            raise ValueError(f"rises lists every value once, lowest first; the values are {clip(list(self.weights()))}, "
                             f"got {clip(self.rises)}")
        if self.seniority is not None and not self.rises:
            raise ValueError("seniority orders the values of rises: list them, lowest first, under rises")
        if self.stages is not None:
            raise ValueError("stages follow an entity's own dates: give them to a type's category, not to a link's")
        one = self.one_per_target
        if one is not None:
            if one.value not in self.weights():
                raise ValueError(f"one_per_target.value {clip(one.value)} is not a value of this attribute; "
                                 f"known: {clip(list(self.weights()))}")
            if len(self.weights()) < 2:
                raise ValueError("one_per_target needs another value for the links beyond the one (a member beside the lead)")
            if self.rises:
                raise ValueError("give rises or one_per_target, not both (one orders each source's links, the other "
                                 "each target's)")
            if one.exactly and self.null_rate > 0:
                raise ValueError("one_per_target.exactly needs a value on every link: drop null_rate")
        return self


class LinkEntity(_AttrBase):
    """An entity per link, chosen among those that hold a link of another relation to this link's
    end when it starts (a doctorate's supervisor: a scientist appointed at the institute then, as
    a senior scientist or above). `holds`: that relation (its target is this relation's `end`:
    its target, or with `end: source` its source); its source type is the entity's type. With
    '~' before it, the entity is instead the target of such a link from the end (`holds:
    ~plays_for, end: source`: a loan's parent club, the club the footballer played for when the
    loan began). `where`: conditions on the covering link's own categories (`{grade: [group
    leader, director]}`). Neither of the link's own ends is its entity; a link no holder covers
    has none (`plan` reports how many). Stored as the entity's id; pages state its name after its
    label with the link ("supervisor Isaac Wilkinson"; `phrases` in sentences: "under the
    supervision of {value}"); tables ask it as a column of the link's rows, and multi-hop
    questions follow it ("the doctoral supervisor of X": `noun`)."""

    kind: Literal["entity"]
    holds: str = Field(pattern=r"^~?[a-z][a-z0-9_]{0,63}$")
    end: Literal["target", "source"] = "target"
    where: dict[str, list[str]] = {}
    noun: str | None = None  # multi-hop questions: the hop as a noun phrase with {subject} ("the doctoral supervisor of {subject}")

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return check_noun(v)

    @property
    def relation(self) -> str:
        """The relation the entity holds (`holds` without its '~')."""
        return self.holds.lstrip("~")

    @property
    def backwards(self) -> bool:
        """`holds: ~r`: the entity is the target of an `r` link from this link's end (a loan's
        parent club: the club the footballer played for when the loan began)."""
        return self.holds.startswith("~")

    def entity_type(self, relations: dict) -> str:  # relations: name -> RelationSpec
        """The type of the entity: the held relation's source (its target with '~')."""
        rs = relations[self.relation]
        return rs.target if self.backwards else rs.source

    def translation(self, language: str) -> dict[str, str]:
        return {}  # a name is the entity's own, in every language


LinkAttribute = Annotated[LinkCategory | LinkNumber | LinkEntity, Field(discriminator="kind")]
