"""What every pack model shares: the strict base model, text given per language (`i18n`), clipped values in messages, and date bounds and count ranges."""

from __future__ import annotations

import datetime as dt
import math
import re
import reprlib
import string
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...language import BASE, languages

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


def check_i18n(i18n: dict[str, LangText], allowed: set[str], ask: set[str] | None = None) -> None:
    unknown = sorted(set(i18n) - set(LANGUAGES))
    if unknown:
        raise ValueError(f"i18n: unknown language {clip(unknown)}; known: {', '.join(LANGUAGES)}")
    for lt in i18n.values():
        if lt.phrases:
            check_phrases(lt.phrases, allowed)
        if lt.ask and ask is not None:
            check_phrases(lt.ask, ask)
        if lt.headlines:
            check_phrases(lt.headlines, allowed, need_value=False)


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


def check_weights(weights: dict[str, float], what: str) -> None:
    """Weights are finite (pydantic already refuses NaN/inf), >= 0 and not all zero."""
    bad = {k: w for k, w in weights.items() if not (math.isfinite(w) and w >= 0)}
    if bad:
        raise ValueError(f"{what} weights must be finite and >= 0 (got {clip(bad)})")
    if weights and sum(weights.values()) <= 0:
        raise ValueError(f"{what} weights must not all be zero")


def check_phrases(phrases: list[str], allowed: set[str], need_value: bool = True) -> list[str]:
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


def check_noun(v: str | None) -> str | None:
    """A hop as a noun phrase for multi-hop questions: must name {subject}, and nothing else."""
    if v is not None:
        check_phrases([v], {"subject"}, need_value=False)
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
