"""Domain packs (`schemas/*.yaml`) as typed, validated models: entity types with their
names, aliases, attributes and pages; relations; declared invariants.

The models check what can be checked field by field (a bound's syntax, a phrase's
placeholders, a distribution's parameters); checks across a whole world (references
between packs, cycles, feasibility) live in `validate.py`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import reprlib
import string
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..language import BASE, languages

PACK_VERSION = 1
# Constant date references usable in any bound (an ISO date such as 1900-01-01 is one too).
CONSTANT_REFS = ("as_of", "span_start")
_ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def is_constant_ref(ref: str) -> bool:
    """A bound reference that is the same for every row: as_of, span_start or an absolute date."""
    return ref in CONSTANT_REFS or bool(_ISO_DATE_RE.match(ref))


def constant_date(ref: str, as_of: dt.date, span_start: dt.date) -> dt.date:
    if ref == "as_of":
        return as_of
    if ref == "span_start":
        return span_start
    return dt.date.fromisoformat(ref)
NAME_RE = r"^[a-z][a-z0-9_]{0,63}$"  # snake_case, at most 64 characters
# Names the world store uses for its own tables and views: a type may not take them
# (relation tables are `rel_<relation>`, catalogue tables start with `_`).
RESERVED_TABLES = ("aliases", "facts", "timeline")
# Integers in number name parts stay well inside int64 (and exact as floats).
MAX_NAME_NUMBER = 10**15
MAX_RANGE = 1_000_000_000  # the largest count range a pack or option may give


class Model(BaseModel):
    # NaN and infinity are never valid numbers in a spec or pack (weights, parameters, rates).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# The languages a world can be written in (`language:` on the spec). A pack keeps one
# structure for all of them: a text field may be a mapping per language
# (`label: {en: Area, zh: 面积}`, `plural: {en: companies, zh: 公司}`), and a type's `name`
# may be one name grammar per language (`name: {en: {...}, zh: {...}}`).
LANGUAGES = tuple(languages())  # every language with a data file (worldforge/language/<code>.yaml)


def check_language(v):
    """A spec's `language`, or the error naming the known ones."""
    if v not in LANGUAGES:
        raise ValueError(f"unknown language; known: {', '.join(LANGUAGES)}")
    return v


_TEXT_FIELDS = ("label", "inverse_label", "noun", "plural", "title", "unit", "phrases", "ask", "headlines", "description")


class LangText(Model):
    """One language's text of a pack item (English stays in the item's own fields)."""

    label: str | None = None
    inverse_label: str | None = None
    noun: str | None = None
    plural: str | None = None
    title: str | None = None
    unit: str | None = None
    description: str | None = None
    phrases: list[str] | None = None
    values: dict[str, str] | None = None  # a categorical attribute's values in this language
    ask: list[str] | None = None
    headlines: list[str] | None = None


def is_per_language(value: Any) -> bool:
    """A mapping whose keys are all language codes: `{en: Area, zh: 面积}`."""
    return isinstance(value, dict) and bool(value) and all(isinstance(k, str) and k in LANGUAGES for k in value)


def split_languages(data: Any, fields: tuple[str, ...] = _TEXT_FIELDS) -> Any:
    """Before validation: a per-language mapping in a text field keeps its English in the
    field and moves the other languages to `i18n` ({zh: {label: 面积}})."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    # (a language's entry that is not a mapping stays as it is: validation names it)
    i18n = ({k: dict(v) if isinstance(v, dict) else v for k, v in out["i18n"].items()} if isinstance(out.get("i18n"), dict)
            else out.get("i18n"))
    for f in fields:
        v = out.get(f)
        if not is_per_language(v):
            continue
        if BASE in v:
            out[f] = v[BASE]
        else:
            del out[f]
        if not isinstance(i18n, dict):
            i18n = {}
        for lang, text in v.items():
            if lang != BASE and isinstance(i18n.setdefault(lang, {}), dict):
                i18n[lang][f] = text
    if i18n is not None:
        out["i18n"] = i18n
    return out


def _check_i18n(i18n: dict[str, LangText], allowed: set[str], ask: set[str] | None = None) -> None:
    unknown = sorted(set(i18n) - set(LANGUAGES))
    if unknown:
        raise ValueError(f"i18n: unknown language {clip(unknown)}; known: {', '.join(LANGUAGES)}")
    for lt in i18n.values():
        if lt.phrases:
            _check_phrases(lt.phrases, allowed)
        if lt.ask and ask is not None:
            _check_phrases(lt.ask, ask)
        if lt.headlines:
            _check_phrases(lt.headlines, allowed, need_value=False)


class Localized:
    """`text(field, language)`: the field in that language, falling back to English."""

    def text(self, field: str, language: str = BASE) -> Any:
        if language != BASE:
            lt = self.i18n.get(language)  # type: ignore[attr-defined]
            v = getattr(lt, field, None) if lt is not None else None
            if v:
                return v
        return getattr(self, field)


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

_BOUND_RE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2}|[A-Za-z_][\w.]{0,200})\s*(?:([+-])\s*(\d{1,9})\s*([yd]))?\s*$")


class DateBound(Model):
    """A date reference plus a calendar offset: `founded_by.birth_date + 20y`, `as_of - 1d`.

    `ref` is `as_of`, `span_start`, an absolute date (`1900-01-01`), an attribute of the same
    entity, `<relation>.<attribute>` (aggregated over the relation's targets), or in relation
    context `source.<attr>`, `target.<attr>` or `valid_from`. A history's or a date's window may
    also read another dated relation of the same source: `source.<relation>.start` is the day
    the source's first link of it starts (a post after a degree: `source.doctorate.start + 1y`);
    the links it reads are planned first, and a source without one has no bound from it.
    """

    ref: str
    years: int = 0
    days: int = 0

    @field_validator("ref")
    @classmethod
    def _absolute_date(cls, v: str) -> str:
        if _ISO_DATE_RE.match(v):
            try:
                dt.date.fromisoformat(v)
            except ValueError:
                raise ValueError(f"{clip(v)} is not a calendar date (write YYYY-MM-DD)") from None
        return v

    @property
    def constant(self) -> bool:
        return is_constant_ref(self.ref)

    @model_validator(mode="before")
    @classmethod
    def _parse_text(cls, data: Any) -> Any:
        if isinstance(data, str):
            m = _BOUND_RE.match(data)
            if not m:
                raise ValueError(
                    f"cannot read date bound {clip(data)}; write '<ref>', '<ref> + <N>y' or '<ref> - <N>d' "
                    "(e.g. 'as_of - 18y', 'founded_by.birth_date + 20y', '1900-01-01')"
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
    inventory: list[str] | None = None  # a string is one syllable per character (Chinese: 安平山河)

    @field_validator("inventory", mode="before")
    @classmethod
    def _characters(cls, v):
        return list(v) if isinstance(v, str) else v

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


Choices = list[str] | dict[str, float]


def _check_choices(choices: Choices, what: str = "choices") -> None:
    if not choices:
        raise ValueError(f"{what} needs at least one value")
    if isinstance(choices, dict):
        _check_weights(choices, "choice")


class NamePart(Model):
    """One placeholder of a name template. Exactly one source is set: faker, choices,
    syllables, letter, number; `cases` with `given` (choices per value of a categorical
    attribute, `choices` for the other values); or `via` (an attribute, by default the
    name, of the entity a to-one relation leads to: "{city} International Airport")."""

    faker: str | None = None
    pool: int = Field(4096, ge=16, le=200_000)
    choices: Choices | None = None
    syllables: SyllableSpec | None = None
    letter: bool = False
    number: NumberPart | None = None
    given: str | None = None
    cases: dict[str, Choices] | None = None
    # A faker provider per value of the given attribute (`first_name_female` for `female`),
    # `faker` serving the other values: first names that agree with a person's gender.
    fakers: dict[str, str] | None = None
    via: str | None = None
    attribute: str = "name"
    # An edition's place in its series (a type with `parent.series`): its `year` ("2019"), its
    # `season` (the years it spans: "2019–20"), its `ordinal` ("12th"; in Chinese the number,
    # for "第12届") or its `number` ("12").
    edition: Literal["year", "season", "ordinal", "number"] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> NamePart:
        set_ = [k for k in ("faker", "syllables", "number", "via", "edition") if getattr(self, k) is not None]
        if self.fakers is not None:
            if self.cases is not None:
                raise ValueError("give cases (words per value) or fakers (a provider per value), not both")
            if self.given is None:
                raise ValueError("fakers needs given: the categorical attribute whose value picks the provider")
            if not self.fakers or any(not isinstance(v, str) or not v.strip() for v in self.fakers.values()):
                raise ValueError("fakers maps each value of the given attribute to a faker provider, e.g. {female: first_name_female}")
            set_ = [k for k in set_ if k != "faker"]  # faker: the provider for the other values
        if self.letter:
            set_.append("letter")
        if self.cases is not None or self.given is not None:
            set_.append("cases")
        elif self.choices is not None:
            set_.append("choices")
        if len(set_) != 1:
            raise ValueError(
                "a name part needs exactly one of faker, choices, syllables, letter, number, cases (with given), "
                f"fakers (with given), via, edition (got {', '.join(set_) or 'none'})"
            )
        if self.faker is not None and not self.faker.strip():
            raise ValueError("faker needs a provider name, e.g. faker: last_name")
        if (self.given is None) != (self.cases is None and self.fakers is None):
            raise ValueError("given and cases go together: cases maps each value of the given attribute to its choices")
        if self.cases is not None:
            if not self.cases:
                raise ValueError("cases needs at least one value")
            for v, c in self.cases.items():
                _check_choices(c, f"cases.{clip(v)}")
        if self.choices is not None:
            _check_choices(self.choices)
        if self.attribute != "name" and self.via is None:
            raise ValueError("attribute applies to via parts only")
        return self

    def words(self) -> set[str]:
        """Every literal word this part can produce (choices and cases)."""
        out: set[str] = set(self.choices or ())
        for c in (self.cases or {}).values():
            out |= set(c)
        return out


class AliasSpec(Model):
    """How aliases are derived from a name: initials ('J. Smith'), abbreviation ('MIT'),
    short (drop listed words), pattern ('Republic of {name}'), former (a previous name) or
    pinyin (a Chinese name transliterated)."""

    kind: Literal["initials", "abbreviation", "short", "pattern", "former", "pinyin"]
    rate: float = Field(1.0, ge=0.0, le=1.0)
    drop: list[str] = []
    template: str | None = None
    after: DateBound | None = None  # former names: renamed at a date after this bound
    # pinyin (Chinese names transliterated: 王秀英 -> Wang Xiuying, 华星有限公司 -> Huaxing Co., Ltd.):
    # `surname` writes the first character as its own word; `translate` turns a trailing
    # word into English instead of transliterating it.
    surname: bool = False
    translate: dict[str, str] = {}

    @model_validator(mode="after")
    def _fields(self) -> AliasSpec:
        if self.kind == "pattern" and (not self.template or "{name}" not in self.template):
            raise ValueError("a pattern alias needs a template containing {name}")
        if self.kind == "short" and not self.drop:
            raise ValueError("a short alias needs the words to drop, e.g. drop: [Group, Inc]")
        if self.kind != "pinyin" and (self.surname or self.translate):
            raise ValueError("surname and translate apply to pinyin aliases only")
        return self


DERIVED_FIELDS = ("name", "root", "n", "roman")


class DerivedName(Model):
    """Names taken from another entity's: an entity linked by `via` (a to-one relation, to
    its own type or another; optional: the others keep their drawn names) is named after the
    entity it leads to: a sequel after its original ("{root} II"), a second edition, a
    subsidiary after its parent. Templates use {name} (the linked entity's name), {root} (the
    name at the start of a chain of such links: a sequel's sequel is named after the first),
    {n} (the place in that chain: 2 for a first sequel) and {roman} ({n} in Roman numerals).
    A derived name that another entity of the type already holds is not given (`plan` counts
    them); the entity's id stays that of its drawn name."""

    via: str = Field(pattern=NAME_RE)
    templates: dict[str, float]

    @model_validator(mode="after")
    def _templates(self) -> DerivedName:
        if not self.templates:
            raise ValueError("templates needs at least one template, e.g. {\"{root} {roman}\": 1}")
        _check_weights(self.templates, "template")
        for tmpl in self.templates:
            try:
                fields = [f for _, f, _, _ in string.Formatter().parse(tmpl) if f is not None]
            except ValueError as exc:
                raise ValueError(f"template {clip(tmpl)} is not a valid template: {exc}") from None
            bad = [f for f in fields if f not in DERIVED_FIELDS]
            if bad:
                raise ValueError(f"template {clip(tmpl)} uses {{{clip(bad[0])[1:-1]}}}; a derived name uses "
                                 f"{', '.join('{' + f + '}' for f in DERIVED_FIELDS)}")
            if not {"name", "root"} & set(fields):
                raise ValueError(f"template {clip(tmpl)} names nothing it derives from: use {{name}} or {{root}}")
        return self


class NameSpec(Model):
    template: str | None = None
    templates: dict[str, float] | None = None
    parts: dict[str, NamePart] = {}
    aliases: list[AliasSpec] = []
    derived: DerivedName | None = None  # names taken from another entity's (a sequel's from its original)

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

    def opens_with(self, part: str) -> bool:
        """Whether every template opens with the part `part` (its word is a name's first)."""
        return all(tpl.startswith("{" + part + "}") for tpl in self.template_weights())


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
        _check_i18n(self.i18n, {"subject", "value"}, {"value"})
        return self

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return _check_phrases(v, {"subject", "value"})

    @field_validator("ask")
    @classmethod
    def _ask_fields(cls, v):
        return _check_phrases(v, {"value"})


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
        return _check_phrases(v, {"subject", "value"}, need_value=False)

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
            _check_weights({k: w.weight if isinstance(w, CategoricalValue) else w for k, w in v.items()}, "value")
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
            _check_weights(w, f"cases.{clip(cond)}")
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


def _check_min_max(lo: float | None, hi: float | None, limit: float = _NUMERIC_LIMIT) -> None:
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
        _check_min_max(self.min, self.max)
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
        _check_min_max(self.min, self.max)
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
        _check_min_max(self.min, self.max)
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
        _check_min_max(self.min, self.max, 3_000_000 if self.unit == "days" else 8000)
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
        return _check_phrases(v, {"subject", "value"}, need_value=False)

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
        return _check_noun(v)


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

    def side_for(self, t: str, rel: RelationSpec) -> str:
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
        return _check_noun(v)

    @property
    def relation(self) -> str:
        """The relation the entity holds (`holds` without its '~')."""
        return self.holds.lstrip("~")

    @property
    def backwards(self) -> bool:
        """`holds: ~r`: the entity is the target of an `r` link from this link's end (a loan's
        parent club: the club the footballer played for when the loan began)."""
        return self.holds.startswith("~")

    def entity_type(self, relations: dict[str, RelationSpec]) -> str:
        """The type of the entity: the held relation's source (its target with '~')."""
        rs = relations[self.relation]
        return rs.target if self.backwards else rs.source

    def translation(self, language: str) -> dict[str, str]:
        return {}  # a name is the entity's own, in every language


LinkAttribute = Annotated[LinkCategory | LinkNumber | LinkEntity, Field(discriminator="kind")]


# --------------------------------------------------------------------------- types and relations


class _LinkText(Localized, Model):
    """How pages and questions state a link. Pages: labels for the source's and the target's
    pages, sentence templates with {subject}, {object}, {start} and {end}. Task questions:
    qualifiers with {object} ("headquartered in {object}")."""

    label: str | None = None
    inverse_label: str | None = None
    phrases: list[str] = []
    ask: list[str] = []
    i18n: dict[str, LangText] = {}

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)

    @model_validator(mode="after")
    def _i18n_phrases(self):
        _check_i18n(self.i18n, {"subject", "object", "start", "end"}, {"object"})
        return self

    @field_validator("phrases")
    @classmethod
    def _phrase_fields(cls, v):
        return _check_phrases(v, {"subject", "object", "start", "end"})

    @field_validator("ask")
    @classmethod
    def _ask_fields(cls, v):
        return _check_phrases(v, {"object"})


LINK_COLUMNS = ("source", "target", "valid_from", "valid_to", "id", "name", "start", "end", "date")
MAX_EDITIONS = 400  # editions one parent may hold (four centuries of an annual series)


class SeriesSpec(Model):
    """Editions of a recurring series (a league's seasons, an annual prize's awards): one child
    of the parent every `every` years (a whole number of years drawn per parent: annual,
    biennial...), on a fixed day of the year (`month`, `day`), from the first such day after
    the parent's `start` date up to `until` (as_of unless given; the parent's lifecycle end
    stops it too). The child's date attribute `date` holds each edition's day; name parts
    with `edition: year | ordinal | number` name it ("the 2019 season", "the 12th Prize")."""

    date: str = Field(pattern=NAME_RE)
    start: str = Field(pattern=NAME_RE)
    month: int = Field(1, ge=1, le=12)
    day: int = Field(1, ge=1, le=28)
    every: Range = Range(min=1, max=1)
    until: DateBound | None = None

    @model_validator(mode="after")
    def _every(self) -> SeriesSpec:
        if self.every.min < 1 or self.every.max > 100:
            raise ValueError(f"every: years between editions lie in 1..100 (got {self.every.min}-{self.every.max})")
        return self


class ParentSpec(_LinkText):
    """A type generated per entity of another type (regions per country), linked by `relation`.
    `count_by`: a numeric attribute of the parent that scales the count (more regions in
    larger countries): a parent at the p-th percentile of it gets about min + p * (max - min).
    `series` instead of `count`: the children are the parent's editions, one per period."""

    type: str
    relation: str = Field(pattern=NAME_RE)
    count: Range | None = None
    count_by: str | None = None
    series: SeriesSpec | None = None
    noun: str | None = None  # multi-hop questions: "the country {subject} lies in"

    @field_validator("noun")
    @classmethod
    def _noun_field(cls, v):
        return _check_noun(v)

    @model_validator(mode="after")
    def _sized(self) -> ParentSpec:
        if self.series is None:
            if self.count is None:
                raise ValueError("give count (children per parent) or series (one edition per period)")
            return self
        # The most editions a parent can hold, for size estimates; the planner counts the real ones.
        # (A saved world carries it back: that one is accepted.)
        most = Range(min=0, max=MAX_EDITIONS // self.series.every.min)
        if self.count is not None and self.count != most:
            raise ValueError("give count (children per parent) or series (one edition per period), not both")
        if self.count_by is not None:
            raise ValueError("count_by applies to count, not to series (a series has one edition per period)")
        object.__setattr__(self, "count", most)
        return self


class DirectorySpec(Localized, Model):
    """Paginated list pages of this type's entities grouped by a relation's target
    ("Companies headquartered in X") or by an attribute value ("Companies in software")."""

    by: str
    title: str  # uses {group}: "Companies headquartered in {group}"
    columns: list[str] = []  # attributes shown next to each listed name
    page_size: int = Field(10, ge=2, le=200)
    i18n: dict[str, LangText] = {}

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)


class ProfileSpec(Model):
    """The entity's official or profile page: `site` names the fictional site (a word the
    site's domain is built from) unless `url` gives a template over the entity's attributes."""

    site: str = Field("profiles", pattern=NAME_RE)
    url: str | None = None  # e.g. "{website}/about"


class PagesSpec(Localized, Model):
    """Which pages an entity of this type gets (see worldforge.render)."""

    plural: str | None = None  # "companies"; defaults to the type name + "s"
    # How an article's first sentence describes an entity of this type ("a professional football
    # player"); defaults to the type's description. Per language: `description: {en: ..., zh: 一名职业足球运动员}`.
    description: str | None = None
    article: bool = True
    profile: ProfileSpec | None = ProfileSpec()
    # What gets news items: event attributes and dated relations (a story each), figures with
    # `changes` (a paper's yearly figures, stating that year's); None = all, [] = none.
    news: list[str] | None = None
    directories: list[DirectorySpec] = []
    i18n: dict[str, LangText] = {}

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data):
        return split_languages(data)


class Lifecycle(Model):
    """When an entity exists: from its `start` date attribute (birth, founding) to its `end`
    (death, dissolution, split; NULL while it still exists). Nothing involving the entity is
    dated before its start or after its end: its own dates, its links' validity, the dates of
    entities that refer to it through a relation."""

    start: str
    end: str | None = None


class EntityType(Model):
    description: str = ""
    name: NameSpec
    names: dict[str, NameSpec] = {}  # the name grammar in other languages (`name: {en: ..., zh: ...}`)
    parent: ParentSpec | None = None
    lifecycle: Lifecycle | None = None
    attributes: dict[str, Attribute] = {}
    pages: PagesSpec = PagesSpec()
    # Distractors that teach disambiguation: the share of this type's entities that take the
    # name of another entity of the type (namesakes, told apart by place or era), and the share
    # whose name is one small edit away from another's (a changed vowel or first character).
    namesakes: float = Field(0.0, ge=0.0, le=0.2)
    near_names: float = Field(0.0, ge=0.0, le=0.2)
    # What a table may ask about an entity of this type when a row links to it, by attribute or
    # outgoing link name: a city's `country` ("country of birthplace") is asked, its `mayor`
    # ("mayor of birthplace") is not. The linked entity's name is always a column; nothing else
    # of it is unless listed here.
    linked_columns: list[str] = []
    # Whether the entities are people: pages refer to one as "the {noun}" or by surname and say
    # "born" (in Chinese "此人"), never "it". Unset: a type whose name takes a first name (a
    # `first_name*` faker) or whose lifecycle starts with an attribute labelled "Born" is one.
    person: bool | None = None

    def is_person(self) -> bool:
        """Whether the type's entities are people (`person`, else derived from its name grammar
        and lifecycle)."""
        if self.person is not None:
            return self.person
        for spec in (self.name, *self.names.values()):
            for part in spec.parts.values():
                if any((f or "").startswith("first_name") for f in (part.faker, *(part.fakers or {}).values())):
                    return True
        start = self.attributes.get(self.lifecycle.start) if self.lifecycle is not None else None
        return (getattr(start, "label", None) or "").strip().lower() == "born"

    @model_validator(mode="before")
    @classmethod
    def _split_names(cls, data):
        if isinstance(data, dict) and is_per_language(data.get("name")):
            per = data["name"]
            if BASE not in per:
                raise ValueError(f"name: a name grammar per language needs one for {BASE} (the default language)")
            data = {**data, "name": per[BASE], "names": {**(data.get("names") or {}), **{k: v for k, v in per.items() if k != BASE}}}
        return data

    @field_validator("names")
    @classmethod
    def _name_languages(cls, v):
        unknown = sorted(set(v) - set(LANGUAGES) | ({BASE} & set(v)))
        if unknown:
            raise ValueError(f"names: {clip(unknown)} is not another language; known: {', '.join(LANGUAGES)} ({BASE} is `name`)")
        return v

    def name_spec(self, language: str = BASE) -> NameSpec:
        """The name grammar of a language (English where the pack gives none)."""
        return self.names.get(language, self.name)

    @field_validator("attributes")
    @classmethod
    def _attr_names(cls, v):
        for key in v:
            if not re.match(NAME_RE, key):
                raise ValueError(f"attribute name {clip(key)} must be snake_case, at most 64 characters")
            if key in ("id", "name"):
                raise ValueError(f"attribute name {key!r} is reserved")
            if key in ("start", "end", "date"):
                raise ValueError(f"attribute name {key!r} is reserved: tables name a link's start, end and date by it; "
                                 f"rename the attribute (e.g. 'season_{key}')")
        return v


class SameSpec(Model):
    """Locality: the target's attribute must equal the source's (same country, same league);
    with `share` below 1, a bias instead of a rule: that share of links stays within the
    source's group and the others go to any target (most players sign for clubs of their
    own country, some abroad)."""

    source: str
    target: str
    share: float = Field(1.0, gt=0.0, le=1.0)
    # A value of the source's attribute that every target matches (a prize for work in "any
    # field"): such links go to any target by weight and are left out of the rule and its measure.
    any: str | None = Field(None, min_length=1, max_length=200)


class EligibleSpec(Model):
    """Targets are eligible only when their date attribute lies in [after, before]."""

    attribute: str
    after: DateBound | None = None
    before: DateBound | None = None


class DateWindow(Model):
    """A dated event inside [max(after), min(before)]: uniform there, or drawn as `offset`
    (a reference date plus a random duration, e.g. an age at the event)."""

    after: list[DateBound] = []
    before: list[DateBound] = []
    offset: DateOffset | None = None


class HistorySpec(Model):
    """Tenures per source inside [max(after), min(before)] (bounds may also name the target's
    dates: `target.split`). By default successive and non-overlapping, cut at random points
    of the window; `length` draws each tenure's length instead, `gap` the pause before the
    next one, `start` the delay of the first one after the window opens. `concurrent`: a
    source's tenures are independent and may overlap (a band's members)."""

    count: Range
    after: list[DateBound]
    before: list[DateBound]
    current: bool = True  # the last tenure is open-ended when it reaches as_of
    start: Duration | None = None
    length: Duration | None = None
    gap: Duration | None = None
    concurrent: bool = False


class Requirement(Model):
    """The link's target must be reachable from its source through `path` (relations joined
    by '.', '~' before a relation follows it backwards) by links valid when this one holds:
    a CEO is employed by the company (`~employed_by`), an album's label is one its band was
    signed to on release (`by.signed_to`)."""

    path: str = Field(pattern=r"^~?[a-z][a-z0-9_]{0,63}(\.~?[a-z][a-z0-9_]{0,63}){0,5}$")
    # Conditions on the covering links' own categories: `{grade: [consultant, head]}` takes only
    # a link of the path whose `grade` is one of these (the head of a department is a senior
    # doctor there); an attribute of one relation of the path.
    where: dict[str, list[str]] = {}

    @property
    def hops(self) -> list[tuple[str, bool]]:
        """(relation, backwards) per hop."""
        return [(h.lstrip("~"), h.startswith("~")) for h in self.path.split(".")]


class WeightSelect(Model):
    weight: str  # a numeric attribute of the target


class RelationSpec(_LinkText):
    description: str = ""
    source: str
    target: str
    cardinality: Literal["1:1", "1:N", "N:1", "N:M"]
    count: Range = Range()
    # Links per source by a categorical attribute of the source (a small firm takes few hires, a
    # large one many): `given` names it, `cases` maps its values to a count range (a history's
    # tenures for history relations); the other values take `count` (or `history.count`).
    given: str | None = Field(None, pattern=NAME_RE)
    cases: dict[str, Range] = {}
    rate: float = Field(1.0, ge=0.0, le=1.0)
    required: bool = False
    select: Literal["uniform", "preferential"] | WeightSelect = "uniform"
    alpha: float = Field(1.5, ge=0.1, le=100.0)  # Pareto shape of preferential attachment
    same: SameSpec | None = None
    eligible: EligibleSpec | None = None
    since: DateBound | None = None
    delay: Duration | None = None  # since: how long after that date the link starts (default: a few months)
    date: DateWindow | None = None
    history: HistorySpec | None = None
    at: DateBound | None = None  # an undated link: the date it is made (its entities exist then)
    acyclic: bool = False
    max_per_target: int | None = Field(None, ge=1, le=MAX_RANGE)  # links a target takes at most
    exclusive: bool = False  # a target holds at most one link of this relation at a time
    # Every target takes at least one link where its dates allow (every musician played in a
    # band): before the links are drawn, one link of a fitting source is set aside for each target.
    each_target: bool = False
    # A target takes at most one link among the sources that share this attribute's value: a
    # researcher wins a prize once (the editions of one award), a club joins a league once.
    once_per: str | None = Field(None, pattern=NAME_RE)
    # Not the same one again: a link never goes to a target its source is linked to by one of
    # these relations (of the same source and target types) when the link starts, or ever where
    # the link has no dates (a loan to another club than the player's own; a consultancy for a
    # firm the person does not work at then).
    not_same: list[str] = []
    requires: Requirement | None = None
    # Attributes of each link (a musician's role in a band, per membership): categorical values
    # drawn per link, stated with the link on every page that states it ("[The Ferns] (2001–2005),
    # drums"; `phrases` are the words a sentence adds: "as {value}"), asked as a column of the
    # link's rows in timeline tables, stored as a column of the link's table. A numeric one
    # (`kind: numeric`, a whole number: a player's shirt number per spell at a club) is drawn from
    # its distribution within [min, max]; `distinct` keeps it unique among a target's links that
    # overlap in time (no two players of a squad wear one number).
    attributes: dict[str, LinkAttribute] = {}
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

    @field_validator("attributes", mode="before")
    @classmethod
    def _link_kinds(cls, v):
        for a, attr in (v.items() if isinstance(v, dict) else ()):
            if isinstance(attr, dict) and attr.get("kind") not in ("categorical", "numeric", "entity"):
                raise ValueError(f"{clip(a)}: a link attribute is categorical (a role, a department: kind: categorical "
                                 f"with values), numeric (a shirt number: kind: numeric, integer: true, with min and max) "
                                 f"or an entity (a supervisor: kind: entity, holds: <a relation to this link's target>); "
                                 f"{'give it a kind' if attr.get('kind') is None else 'a ' + clip(attr.get('kind')) + ' one is not supported on links'}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> RelationSpec:
        if self.cardinality in ("1:1", "N:1") and self.count.max > 1:
            raise ValueError(f"a {self.cardinality} relation links each source to at most one target; "
                             f"set count.max to 1 or use 1:N / N:M")
        if self.history and self.cardinality in ("1:1", "1:N"):
            raise ValueError("a history relation must be N:1 or N:M (a target can hold several tenures)")
        if self.history and self.cardinality == "N:1" and self.history.count.max > 1:
            raise ValueError("use N:M for histories with more than one tenure per source")
        if (self.given is None) != (not self.cases):
            raise ValueError("given and cases go together: cases maps values of the source's given attribute to a count range")
        for v, c in self.cases.items():
            if c.max > 1 and (self.cardinality in ("1:1", "N:1") and not self.history
                              or self.history and self.cardinality == "N:1"):
                raise ValueError(f"cases.{v}: a {self.cardinality} relation links each source to at most one target; "
                                 "set max to 1 or use 1:N / N:M")
        if sum(x is not None for x in (self.since, self.date, self.history, self.at)) > 1:
            raise ValueError("give at most one of since, date, history, at")
        if self.delay is not None and self.since is None:
            raise ValueError("delay applies to since relations")
        if self.exclusive and not self.history:
            raise ValueError("exclusive applies to history relations (a target holds one tenure at a time)")
        if self.max_per_target is not None and self.target_unique:
            raise ValueError(f"a {self.cardinality} relation already gives each target at most one link; drop max_per_target")
        if self.each_target and self.requires is not None:
            raise ValueError("each_target cannot combine with requires (a covered link's target is chosen among its covering links)")
        for a, attr in self.attributes.items():
            if not re.match(NAME_RE, a):
                raise ValueError(f"link attribute name {clip(a)} must be snake_case, at most 64 characters")
            if a in LINK_COLUMNS:
                raise ValueError(f"link attribute name {a!r} is taken by the link's own columns ({', '.join(LINK_COLUMNS)}); rename it")
            if isinstance(attr, CategoricalAttr) and (attr.given is not None or attr.dated_by is not None or attr.hidden):
                raise ValueError(f"attributes.{a}: a link attribute is drawn per link by its weights: drop given, cases, "
                                 "dated_by and hidden")
            if getattr(attr, "rises", False) and self.since is None and self.date is None and self.history is None:
                raise ValueError(f"attributes.{a}.rises: a value that rises along a source's links orders them by their "
                                 "start; give the relation dates (history, since or date), or drop rises")
            if any("{subject}" in p for p in attr.phrases):
                raise ValueError(f"attributes.{a}.phrases: a link attribute's phrase continues the link's sentence "
                                 "(\"as {value}\"); it has no {subject}")
        if self.once_per is not None and self.target_unique:
            raise ValueError(f"a {self.cardinality} relation already gives each target one link; drop once_per")
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
        """The fewest and most links a source may take (its `cases` included)."""
        b = self.base_count
        if not self.cases:
            return b
        return Range(min=min([b.min, *(c.min for c in self.cases.values())]), max=max([b.max, *(c.max for c in self.cases.values())]))

    @property
    def base_count(self) -> Range:
        """Links per source for the values of `given` without a case (all sources without `given`)."""
        return self.history.count if self.history else self.count

    @property
    def target_cap(self) -> int | None:
        """The most links one target may take (1 for 1:1 and 1:N)."""
        return 1 if self.target_unique else self.max_per_target

    @property
    def dated(self) -> bool:
        return bool(self.history or self.date or self.since)

    @property
    def note_order(self) -> list[str]:
        """The link's own attributes in the order a fact's note joins them and pages label them:
        by name, so that a world reopened from its manifest (whose keys are stored sorted) reads
        them as it was planned."""
        return sorted(self.attributes)


class InvariantSpec(Model):
    """A declared invariant: an SQL query returning the violating rows, or an acyclicity check."""

    name: str = Field(pattern=NAME_RE)
    description: str = ""
    sql: str | None = Field(None, min_length=1)
    acyclic: str | None = Field(None, min_length=1)  # relation name

    @model_validator(mode="after")
    def _one(self) -> InvariantSpec:
        if (self.sql is None) == (self.acyclic is None):
            raise ValueError("an invariant needs exactly one of sql or acyclic")
        return self


# What `worldforge audit` measures: its sections and the numbers each row carries.
AUDIT_METRICS = {
    "ages": ("n", "min", "median", "max", "before_start", "after_end"),
    "anniversaries": ("n", "hits", "share"),
    "lifespans": ("n", "ended", "ended_share", "min", "median", "max", "oldest_going", "cohort_85y_n", "cohort_85y_ended_share"),
    "part_whole": ("n", "max_ratio", "parts_over_whole", "max_sum_ratio", "wholes_over_sum"),
    "derived": ("n", "agree", "share"),
    "requires": ("n", "agree", "share"),
    "names": ("n", "agree", "share"),
    "given": ("n", "agree", "share", "gap"),
    "concurrency": ("n", "max_concurrent", "with_concurrent", "now_median"),
    "degrees": ("n", "out_max", "out_p99", "in_max", "in_p99", "targets_without", "sources_without"),
    "ratios": ("n", "min", "p01", "median", "p99", "max"),
    "locality": ("n", "same", "share"),
    "link_values": ("n", "filled", "median", "p90", "max", "clashes", "top_share", "falls", "targets_without", "early_top",
                    "unheld"),
}
AUDIT_SECTIONS = tuple(AUDIT_METRICS)


class AuditThreshold(Model):
    """A plausibility bound `worldforge audit` holds the world to: `metric` of every row of
    `section` whose subject matches the glob `match` lies within [min, max] (rows measured on
    fewer than `min_n` items are not judged)."""

    section: Literal["ages", "anniversaries", "lifespans", "part_whole", "derived", "requires", "names", "given", "concurrency",
                     "degrees", "ratios", "locality", "link_values"]
    metric: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    match: str = Field("*", min_length=1, max_length=300)
    min: float | None = None
    max: float | None = None
    min_n: int | None = Field(None, ge=1)
    description: str = ""

    @model_validator(mode="after")
    def _bounded(self) -> AuditThreshold:
        if self.metric not in AUDIT_METRICS[self.section]:
            raise ValueError(f"section {self.section} has no metric {clip(self.metric)}; it has: {', '.join(AUDIT_METRICS[self.section])}")
        if self.min is None and self.max is None:
            raise ValueError("a threshold needs min or max")
        _check_min_max(self.min, self.max)
        return self


class DomainPack(Model):
    pack: str = Field(pattern=NAME_RE)
    pack_version: Literal[1] = 1
    description: str = ""
    requires: list[str] = []
    types: dict[str, EntityType] = {}
    relations: dict[str, RelationSpec] = {}
    invariants: list[InvariantSpec] = []
    audit: list[AuditThreshold] = []

    @field_validator("types", "relations")
    @classmethod
    def _names(cls, v):
        for key in v:
            if not re.match(NAME_RE, key):
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
