"""World specs (`worlds/*.yaml`): the typed model, the world resolved with its packs, and
what every later stage asks of it (stored types of attributes, expected counts, SQL with
the world's dates filled in).

`load_world` (in `validate.py`) parses a spec and every pack it names and checks the whole.
"""

from __future__ import annotations

import calendar
import datetime as dt
from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from ..language import BASE
from ..plumbing import quote_ident
from .lexicon import Lexicon
from .options import Stages
from .pack import (
    CategoricalAttr,
    CodeAttr,
    CountAttr,
    DateAttr,
    DateBound,
    DerivedAttr,
    DomainPack,
    EntityType,
    FakerAttr,
    LinkEntity,
    LookupAttr,
    Model,
    NumericAttr,
    RelationSpec,
)

SPEC_VERSION = 1
_PKG = Path(__file__).resolve().parent.parent
# The shipped packs: `schemas/` of a source checkout, or the copy a wheel installs as
# `worldforge/schemas/` (pyproject maps one onto the other).
SCHEMAS_DIR = _PKG.parent / "schemas" if (_PKG.parent / "schemas").is_dir() else _PKG / "schemas"


# World dates have four-digit years, and a year after as_of still exists (pages, tasks and
# answers write and read dates with four-digit years; task ranges round up to a year's end).
MIN_WORLD_DATE = dt.date(1000, 1, 1)
MAX_WORLD_DATE = dt.date(9998, 12, 31)


def _world_date(d: dt.date | None) -> dt.date | None:
    if d is not None and not MIN_WORLD_DATE <= d <= MAX_WORLD_DATE:
        raise ValueError(f"must lie within {MIN_WORLD_DATE}..{MAX_WORLD_DATE}: pages, tasks and answers write dates "
                         "with four-digit years")
    return d


class TimeSpan(Model):
    start: dt.date
    end: dt.date | None = None  # defaults to as_of

    _in_range = field_validator("start", "end")(_world_date)


class WorldSpec(Model):
    spec_version: Literal[1] = 1
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=100)
    description: str = ""
    seed: int = Field(ge=0, lt=2**63)
    locale: str = "en_US"
    # The language of the world's names, pages, search and tasks; packs carry per-language
    # labels and names (`label: {en: Area, zh: 面积}`, `name: {en: ..., zh: ...}`).
    language: str = "en"
    as_of: dt.date
    time_span: TimeSpan
    packs: list[str] = Field(min_length=1)
    counts: dict[str, int]
    stages: Stages = Stages()

    @field_validator("counts", mode="before")
    @classmethod
    def _whole_numbers(cls, v):
        if isinstance(v, dict):  # `true` is no count (YAML's yes/no/on/off read as booleans, and pydantic takes True as 1)
            bad = {k: c for k, c in v.items() if isinstance(c, bool)}
            if bad:
                raise ValueError(f"counts must be whole numbers, got {', '.join(f'{k}: {str(c).lower()}' for k, c in bad.items())}")
        return v

    @field_validator("counts")
    @classmethod
    def _nonneg(cls, v):
        from .pack import clip

        bad = {k: c for k, c in v.items() if c < 0}
        if bad:
            raise ValueError(f"counts must be >= 0, got {clip(bad)}")
        return v

    _in_range = field_validator("as_of")(_world_date)

    @field_validator("language")
    @classmethod
    def _known_language(cls, v):
        from .pack import check_language

        return check_language(v)

    @model_validator(mode="after")
    def _tasks_language(self) -> WorldSpec:
        # Tasks are posed in the world's language unless stages.tasks.language says otherwise.
        tasks = self.stages.tasks
        if self.language != BASE and "language" not in tasks.model_fields_set:
            stages = self.stages.model_copy(update={"tasks": tasks.model_copy(update={"language": self.language})})
            object.__setattr__(self, "stages", stages)
        return self

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

    # `types` and `relations` are computed once per `packs` (page writing asks for them per
    # page). Keyed by the packs object itself: a copy with other packs (`model_copy(update=...)`,
    # as `with_lookup_units` makes) computes its own.
    _derived: dict = PrivateAttr(default_factory=dict)

    def _memo(self, name: str, make):
        hit = self._derived.get(name)
        if hit is not None and hit[0] is self.packs:
            return hit[1]
        value = make()
        self._derived[name] = (self.packs, value)
        return value

    def lexicon(self, language: str | None = None) -> Lexicon:
        """How this world names its things in `language` (the world's own by default): one
        `world.lexicon.Lexicon` per language, built on first use."""
        lang = language or self.spec.language
        return self._memo(f"lexicon/{lang}", lambda: Lexicon(self, lang))

    @property
    def types(self) -> dict[str, EntityType]:
        return self._memo("types", lambda: {t: et for p in self.packs.values() for t, et in p.types.items()})

    @property
    def relations(self) -> dict[str, RelationSpec]:
        """Declared relations plus the parent relations implied by `parent:`."""
        return self._memo("relations", self._relations)

    def _relations(self) -> dict[str, RelationSpec]:
        out: dict[str, RelationSpec] = {}
        for t, et in self.types.items():
            if et.parent:
                out[et.parent.relation] = RelationSpec(
                    description=f"{t} is part of a {et.parent.type}",
                    source=t, target=et.parent.type, cardinality="N:1", required=True,
                    label=et.parent.label, inverse_label=et.parent.inverse_label, phrases=et.parent.phrases, ask=et.parent.ask,
                    noun=et.parent.noun, i18n=et.parent.i18n,
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


def attribute_dtype(world: ResolvedWorld, type_name: str, attr: str, _seen: frozenset = frozenset()) -> str:
    """The stored type of an attribute: string, int, float, date, bool or entity (an id).
    A lookup that leads nowhere or around in a circle (validation reports both) is a string."""
    if attr == "id":
        return "entity"
    if attr == "name":
        return "string"
    a = world.types[type_name].attributes[attr]
    if isinstance(a, (FakerAttr, CategoricalAttr, CodeAttr)):
        return "string"
    if isinstance(a, CountAttr):
        return "int"
    if isinstance(a, NumericAttr):
        return "int" if a.integer else "float"
    if isinstance(a, DateAttr):
        return "date"
    if isinstance(a, DerivedAttr):
        return a.dtype
    rel = world.relations.get(a.via)
    key = (type_name, attr)
    if rel is None or rel.target not in world.types or key in _seen or (
            a.attribute not in ("id", "name") and a.attribute not in world.types[rel.target].attributes):
        return "string"
    return attribute_dtype(world, rel.target, a.attribute, _seen | {key})


def value_translation(world: ResolvedWorld, type_name: str, attr: str, _seen: frozenset = frozenset()) -> dict[str, str]:
    """How the stored values of an attribute read in the world's language: a categorical
    attribute's `i18n.<lang>.values`, and a lookup's those of the attribute it copies ({} in English)."""
    lang = world.spec.language
    if lang == BASE:  # the packs' own values
        return {}
    a = world.types[type_name].attributes.get(attr)
    if isinstance(a, CategoricalAttr):
        return a.translation(lang)
    if not isinstance(a, LookupAttr):
        return {}
    rel = world.relations.get(a.via)
    key = (type_name, attr)
    if rel is None or rel.target not in world.types or key in _seen:
        return {}
    return value_translation(world, rel.target, a.attribute, _seen | {key})


def attribute_unit(world: ResolvedWorld, type_name: str, attr: str, _seen: frozenset = frozenset()) -> str | None:
    """The unit of an attribute; a lookup without its own unit has the unit of what it copies."""
    a = world.types[type_name].attributes.get(attr)
    if a is None:
        return None
    if not isinstance(a, LookupAttr) or a.unit is not None:
        return getattr(a, "unit", None)
    rel = world.relations.get(a.via)
    key = (type_name, attr)
    if rel is None or rel.target not in world.types or key in _seen:
        return None
    return attribute_unit(world, rel.target, a.attribute, _seen | {key})


def with_lookup_units(world: ResolvedWorld) -> ResolvedWorld:
    """The world with every lookup's unit filled in from the attribute it copies, so that
    pages and tasks state a looked-up number with its unit."""
    packs = {}
    for pname, pack in world.packs.items():
        types = {}
        for t, et in pack.types.items():
            attrs = {a: (s.model_copy(update={"unit": attribute_unit(world, t, a)})
                         if isinstance(s, LookupAttr) and s.unit is None and attribute_unit(world, t, a) else s)
                     for a, s in et.attributes.items()}
            types[t] = et.model_copy(update={"attributes": attrs})
        packs[pname] = pack.model_copy(update={"types": types})
    return world.model_copy(update={"packs": packs})


def shift_date(d: dt.date, years: int, days: int) -> dt.date | None:
    """`d + years + days` as SQL intervals compute it (Feb 29 + 1y = Feb 28), or None when the
    result leaves 0001-01-01..9999-12-31."""
    try:
        y = d.year + years
        if not 1 <= y <= 9999:
            return None
        out = d.replace(year=y, day=min(d.day, calendar.monthrange(y, d.month)[1]))
        return out + dt.timedelta(days=days)
    except (OverflowError, ValueError):
        return None


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
            sr = et.parent.series
            if sr is not None:  # editions: at most one per period of the world's span, about half that expected
                years = max(0.0, (world.spec.as_of - world.spec.span_start).days / 365.2425)
                res = (0.0, mid * years / 2 / ((sr.every.min + sr.every.max) / 2), hi * min(r.max, years / sr.every.min + 1))
            else:
                res = (lo * r.min, mid * (r.min + r.max) / 2, hi * r.max)
        out[t] = res
        return res

    for t in types:
        visit(t)
    return out


def fill_sql(sql: str, spec: WorldSpec) -> str:
    """Substitute {as_of} and {span_start} with DATE literals."""
    return sql.replace("{as_of}", f"DATE '{spec.as_of.isoformat()}'").replace(
        "{span_start}", f"DATE '{spec.span_start.isoformat()}'"
    )


SQL_TYPES = {"string": "VARCHAR", "int": "BIGINT", "float": "DOUBLE", "date": "DATE", "bool": "BOOLEAN", "entity": "VARCHAR"}


def derived_query(attr: DerivedAttr, spec: WorldSpec, where: str = "") -> str:
    """The query that computes a derived attribute over `frame` (the type's columns so far
    plus `__row`); validation compiles exactly this text."""
    return f"SELECT CAST((\n{fill_sql(attr.sql, spec)}\n) AS {SQL_TYPES[attr.dtype]}) AS v FROM frame {where}ORDER BY __row"


# --------------------------------------------------------------------------- lifecycles
# A type's lifecycle (start, end) implies date bounds nobody has to write out: the type's
# own dates lie inside it, a link's validity lies inside both its entities' lifecycles,
# a date bounded through a relation lies inside the related entities' lifecycles.


def _lc(world: ResolvedWorld, t: str):
    et = world.types.get(t)
    return et.lifecycle if et is not None else None


def _dedupe(bounds: list[DateBound], side: str) -> list[DateBound]:
    """One bound per reference: the strictest (the latest `after`, the earliest `before`)."""
    best: dict[str, DateBound] = {}
    for b in bounds:
        cur = best.get(b.ref)
        if cur is None or ((b.years, b.days) > (cur.years, cur.days)) == (side == "after") and (b.years, b.days) != (cur.years, cur.days):
            best[b.ref] = b
    return [b for b in bounds if best.get(b.ref) is b]


def date_bounds(world: ResolvedWorld, t: str, a: str) -> tuple[list[DateBound], list[DateBound]]:
    """(after, before) of date attribute `a` of `t`: its declared bounds plus the ones its
    type's lifecycle and the lifecycles of entities its bounds refer to imply."""
    attrs = world.types[t].attributes
    attr = attrs[a]
    after, before = list(attr.after), list(attr.before)
    lc = _lc(world, t)

    def refers_to_a(other: str) -> bool:
        """The start or end is itself bounded by (or drawn from) `a`: no implicit bound back."""
        o = attrs.get(other)
        if not isinstance(o, DateAttr):
            return False
        refs = [b.ref for b in [*o.after, *o.before]] + ([o.offset.ref.ref] if o.offset else [])
        return a in refs

    if lc is not None:
        if a != lc.start and not refers_to_a(lc.start):
            after.append(DateBound(ref=lc.start))
        if lc.end and a not in (lc.start, lc.end) and not refers_to_a(lc.end):
            before.append(DateBound(ref=lc.end))
    refs = [b.ref for b in [*attr.after, *attr.before]] + ([attr.offset.ref.ref] if attr.offset else [])
    rels = world.relations
    for ref in refs:
        rel = ref.split(".")[0] if ref.count(".") == 1 else None
        if rel in rels and rels[rel].source == t:
            olc = _lc(world, rels[rel].target)
            if olc is not None:
                after.append(DateBound(ref=f"{rel}.{olc.start}"))
                if olc.end:
                    before.append(DateBound(ref=f"{rel}.{olc.end}"))
    return _dedupe(after, "after"), _dedupe(before, "before")


def link_bounds(world: ResolvedWorld, rs: RelationSpec) -> tuple[list[DateBound], list[DateBound]]:
    """(after, before) of a dated link's validity: the history or event window declared, plus
    both entities' lifecycles (a tenure or an event lies inside both lives)."""
    if rs.history:
        after, before = list(rs.history.after), list(rs.history.before)
    elif rs.date:
        after, before = list(rs.date.after), list(rs.date.before)
    else:
        after, before = [], []
    for side, t in (("source", rs.source), ("target", rs.target)):
        lc = _lc(world, t)
        if lc is not None:
            after.append(DateBound(ref=f"{side}.{lc.start}"))
            if lc.end:
                before.append(DateBound(ref=f"{side}.{lc.end}"))
    return _dedupe(after, "after"), _dedupe(before, "before")


def lifecycle_end_bound(world: ResolvedWorld, b: DateBound, side_types: dict[str, str] | None = None) -> bool:
    """True when `b` is exactly a lifecycle end (a death, a split): tenures cut there end on
    that day; cut at any other bound they end a little before it."""
    if b.years or b.days or b.constant:
        return False
    parts = b.ref.split(".")
    if len(parts) == 2 and side_types and parts[0] in side_types:
        lc = _lc(world, side_types[parts[0]])
        return lc is not None and lc.end == parts[1]
    return False


def lookup_entity_type(world: ResolvedWorld, t: str, a: str, _seen: frozenset = frozenset()) -> str | None:
    """The type whose ids an entity-valued lookup holds (following lookups of lookups), or None."""
    s = world.types[t].attributes.get(a)
    if not isinstance(s, LookupAttr) or (t, a) in _seen:
        return None
    rel = world.relations.get(s.via)
    if rel is None or rel.target not in world.types:
        return None
    if s.attribute == "id":
        return rel.target
    return lookup_entity_type(world, rel.target, s.attribute, _seen | {(t, a)})


def note_sql(world: ResolvedWorld, r: str, a: str, table: str | None = None) -> str:
    """A link's own attribute as its pages state it, over the relation's table (`rel_<r>`, or the
    alias `table`): a category or a number as it is, an entity (a supervisor) by its name."""
    col = f"{table or quote_ident('rel_' + r)}.{quote_ident(a)}"
    attr = world.relations[r].attributes[a]
    if isinstance(attr, LinkEntity):
        return f"(SELECT h.name FROM {quote_ident(attr.entity_type(world.relations))} h WHERE h.id = {col})"
    return f"CAST({col} AS VARCHAR)"
