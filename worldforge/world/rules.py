"""The semantic rules of a world spec: what `validate` checks once the YAML parsed into packs and
a spec, one unit per rule (`SpecRules`: the locale and time span, packs and name clashes, labels,
each type, each kind of attribute, each relation and its links, invariants, counts) and the
checks they share (an attribute that exists and is a date, a date bound, a to-one relation, the
case keys of a `given`). Each reports (file, YAML path, value, message with the fix).
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import string
from typing import Any

from ..errors import SpecProblem
from ..language import BASE
from .arrays import lookup_target
from .lexicon import attribute_label, relation_label
from .pack import (
    CONSTANT_REFS,
    CategoricalAttr,
    CodeAttr,
    CountAttr,
    DateAttr,
    DateBound,
    EntityType,
    FakerAttr,
    LinkCategory,
    LinkEntity,
    LinkNumber,
    LookupAttr,
    NumericAttr,
    RelationSpec,
    WeightSelect,
    clip,
    constant_date,
)
from .spec import MAX_WORLD_DATE, MIN_WORLD_DATE, ResolvedWorld, WorldSpec, attribute_dtype, lookup_entity_type, shift_date


def short(value: Any, limit: int = 60) -> str:
    """The bad value as shown in a message: cheap on huge, deep or recursive values."""
    text = clip(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def suggest(name: str, options) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown_type(name: str, known) -> str:
    return f"unknown type{suggest(name, known)}; known types: {', '.join(sorted(known))}"


def _links_to_entity(world: ResolvedWorld, t: str, a: str) -> bool:
    """An entity-valued lookup: not a row of its own on pages (its link is). A broken chain is
    reported on its own."""
    try:
        return lookup_target(world, t, a) is not None
    except KeyError:
        return True


def _check_pages(add, pname: str, t: str, et: EntityType, rels: dict, check_attr) -> None:
    """Page declarations must name this type's own event attributes, relations and columns."""
    base = f"types.{t}.pages"
    own = [r for r, (_, rs) in rels.items() if rs.source == t]
    dated = [r for r in own if rels[r][1].history or rels[r][1].date or rels[r][1].since]
    events = [a for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event]
    figures = [a for a, s in et.attributes.items() if isinstance(s, NumericAttr) and s.changes is not None]
    for i, n in enumerate(et.pages.news or []):
        if n not in events and n not in dated and n not in figures:
            add(pname, f"{base}.news.{i}", n, f"not an event attribute, a dated relation or a figure with `changes` of "
                f"'{t}'{suggest(n, events + dated + figures)}; choose from: {', '.join(events + dated + figures) or 'none'}")
    for i, d in enumerate(et.pages.directories):
        dp = f"{base}.directories.{i}"
        if d.by not in own and d.by not in et.attributes:
            add(pname, f"{dp}.by", d.by, f"'{t}' has no outgoing relation or attribute of that name"
                f"{suggest(d.by, own + list(et.attributes))}; relations: {', '.join(own) or 'none'}")
        if "{group}" not in d.title:
            add(pname, f"{dp}.title", d.title, "the title must contain {group}, e.g. 'Companies headquartered in {group}'")
        for j, c in enumerate(d.columns):
            check_attr(pname, f"{dp}.columns.{j}", t, c)
        for where, a in [(f"{dp}.by", d.by), *((f"{dp}.columns.{j}", c) for j, c in enumerate(d.columns))]:
            if a in et.attributes and et.attributes[a].hidden:
                add(pname, where, a, f"'{t}.{a}' is hidden (a working attribute no page states); list a stated attribute, "
                    "or drop `hidden`")
    for i, c in enumerate(et.linked_columns):
        if c not in et.attributes and c not in own:
            add(pname, f"types.{t}.linked_columns.{i}", c, f"'{t}' has no attribute or outgoing relation of that name"
                f"{suggest(c, own + list(et.attributes))}; choose from: {', '.join(list(et.attributes) + own) or 'none'}")
        elif c in et.attributes and et.attributes[c].hidden:
            add(pname, f"types.{t}.linked_columns.{i}", c, f"'{t}.{c}' is hidden (a working attribute no page states); "
                "list a stated attribute, or drop `hidden`")
    for a, s in et.attributes.items():
        if s.hidden and isinstance(s, DateAttr) and s.event:
            add(pname, f"types.{t}.attributes.{a}.hidden", True, "a hidden date cannot be an event on the timeline; "
                "drop `event` or `hidden`")
    if et.pages.profile and et.pages.profile.url:
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(et.pages.profile.url) if f}
        except ValueError as exc:
            add(pname, f"{base}.profile.url", et.pages.profile.url, f"not a valid template: {exc}")
            return
        for f in sorted(fields - {"slug", "site"}):
            check_attr(pname, f"{base}.profile.url", t, f)


def _check_path(add, pname: str, path: str, r: str, rs: RelationSpec, rels: dict) -> None:
    """A requirement's path leads from the relation's source type to its target type."""
    cur = rs.source
    for hop, back in rs.requires.hops:
        if hop == r:
            add(pname, path, rs.requires.path, "a relation cannot require itself")
            return
        if hop not in rels:
            add(pname, path, hop, f"unknown relation{suggest(hop, rels)}")
            return
        h = rels[hop][1]
        near, far = (h.target, h.source) if back else (h.source, h.target)
        if near != cur:
            add(pname, path, rs.requires.path, f"'{'~' if back else ''}{hop}' starts at '{near}', but the path is at '{cur}' there "
                f"({'~' if not back else ''}{hop} goes the other way)")
            return
        cur = far
    if cur != rs.target:
        add(pname, path, rs.requires.path, f"the path ends at '{cur}', not at the relation's target '{rs.target}'")
    hops = [h for h, _ in rs.requires.hops]
    for a, values in rs.requires.where.items():
        w = path.rsplit(".", 1)[0] + f".where.{a}"
        having = [h for h in hops if h in rels and a in rels[h][1].attributes]
        if len(having) != 1:
            add(pname, w, a, f"a condition names a category of one relation of the path ({', '.join(hops)}); "
                + ("none has it" if not having else f"{', '.join(having)} all have it"))
            continue
        attr = rels[having[0]][1].attributes[a]
        if not isinstance(attr, CategoricalAttr):
            add(pname, w, a, f"'{having[0]}.{a}' is a number; a condition takes a category's values")
        elif not values or set(values) - set(attr.weights()):
            add(pname, w, short(sorted(set(values) - set(attr.weights()))) if values else "[]",
                f"values of '{having[0]}.{a}' ({short(list(attr.weights()), 120)})")


def _check_static_window(add, pname: str, path: str, after: list[DateBound], before: list[DateBound], spec: WorldSpec) -> None:
    """Reject windows that are empty whatever the data: constant bounds that cross, or
    a lower bound on the same reference at or above an upper bound."""
    def resolve(b: DateBound) -> dt.date | None:
        if not b.constant:
            return None
        try:
            return shift_date(constant_date(b.ref, spec.as_of, spec.span_start), b.years, b.days)  # None: reported
        except ValueError:  # not a calendar date: reported by the model
            return None

    lo = max([d for d in map(resolve, after) if d is not None] + [spec.span_start])
    hi = min([d for d in map(resolve, before) if d is not None] + [spec.as_of])
    if lo > hi:
        add(pname, path, f"after {lo}, before {hi}",
            "the date window is empty: its lower bound is after its upper bound (bounds are also clipped to the world's time span)")
        return
    for a in after:
        for b in before:
            if a.ref == b.ref and not a.constant and (a.years, a.days) >= (b.years, b.days):
                add(pname, path, f"after {a}, before {b}", "the date window is empty for every row")


def _check_link_entity(add, pname: str, ap: str, r: str, rs, attr, rels) -> None:
    """A link's entity (`kind: entity`): `holds` is another relation whose target (its source,
    with '~') is the link's `end`, and `where` names that relation's categories and their values."""
    end_type = rs.target if attr.end == "target" else rs.source
    h = attr.relation
    if h == r:
        add(pname, f"{ap}.holds", attr.holds, "the entity holds a link of another relation to this link's end (a supervisor "
            "appointed at the institute): name that relation")
        return
    if h not in rels:
        add(pname, f"{ap}.holds", attr.holds, f"unknown relation{suggest(h, rels)}")
        return
    hs = rels[h][1]
    meets = hs.source if attr.backwards else hs.target
    if meets != end_type:
        other = hs.target if attr.backwards else hs.source
        add(pname, f"{ap}.holds", attr.holds, f"'{h}' links {hs.source} to {hs.target}, so {'~' if attr.backwards else ''}{h} "
            f"finds a {other} from a {meets}, but this link's {attr.end} is a {end_type}: name a relation "
            f"{'from' if attr.backwards else 'to'} {end_type}, or set end or the '~' (holds: ~{h} reads '{h}' backwards)")
        return
    for k, vals in attr.where.items():
        cat = hs.attributes.get(k)
        if not isinstance(cat, LinkCategory):
            known = sorted(x for x, xa in hs.attributes.items() if isinstance(xa, LinkCategory))
            add(pname, f"{ap}.where.{k}", k, f"'{h}' links have no category '{k}'; "
                + (f"they have: {', '.join(known)}" if known else "give the relation a categorical attribute or drop where"))
            continue
        bad = [v for v in vals if v not in cat.weights()]
        if bad or not vals:
            add(pname, f"{ap}.where.{k}", bad or vals, f"not a value of {h}.{k}; known: {', '.join(cat.weights())}")


class SpecRules:
    """The semantic rules of a resolved world, one method each (`validate` runs them in order).

    A rule reports with `self.add(pack, path, value, message)`; the helpers (`check_attr`,
    `check_bound`, `check_to_one`, ...) are what several rules share. `types` and `rels` are the
    declared types and relations with the pack of each, as `packs` collects them."""

    def __init__(self, world: ResolvedWorld, spec_file: str):
        self.world = world
        self.spec = world.spec
        self.spec_file = spec_file
        self.probs: list[SpecProblem] = []
        self.types: dict[str, tuple[str, EntityType]] = {}
        self.rels: dict[str, tuple[str, RelationSpec]] = {}
        self.faker = None  # made on the first provider asked about
        self.provider_problems: dict[str, str | None] = {}

    def add(self, pack: str | None, path: str, value: Any, msg: str) -> None:
        src = self.world.pack_files[pack] if pack else self.spec_file
        self.probs.append(SpecProblem(src, path, "" if value is None else short(value), msg))

    def run(self) -> list[SpecProblem]:
        """Every rule, in order; the label rule only once the names are sound."""
        self.window()
        self.packs()
        self.relation_names()
        if not self.probs:
            self.labels()
        for pname, pack in self.world.packs.items():
            for t, et in pack.types.items():
                self.type_rules(pname, t, et)
                for a, attr in et.attributes.items():
                    rule = next((r for cls, r in self.ATTRIBUTE_RULES if isinstance(attr, cls)), None)
                    if rule is not None:
                        getattr(self, rule)(pname, t, et, a, attr, f"types.{t}.attributes.{a}")
                _check_pages(self.add, pname, t, et, self.rels, self.check_attr)
        for r, (pname, rs) in self.rels.items():
            self.relation_rules(pname, r, rs)
        self.invariants()
        self.counts()
        return self.probs

    # The rule of each kind of attribute: the first class that matches.
    ATTRIBUTE_RULES = (
        (FakerAttr, "faker_attribute"),
        (DateAttr, "date_attribute"),
        (CategoricalAttr, "categorical_attribute"),
        (NumericAttr, "numeric_attribute"),
        (CountAttr, "count_attribute"),
        (CodeAttr, "code_attribute"),
        (LookupAttr, "lookup_attribute"),
    )

    # ------------------------------------------------------------------ rules

    def window(self) -> None:
        """The locale is one faker knows and the time span is not empty."""
        from faker.config import AVAILABLE_LOCALES

        spec = self.spec
        if spec.locale not in AVAILABLE_LOCALES:
            self.add(None, "locale", spec.locale, f"unknown faker locale{suggest(spec.locale, AVAILABLE_LOCALES)}; e.g. en_US, de_DE, fr_FR")
        if spec.span_start >= spec.span_end:
            self.add(None, "time_span", f"{spec.span_start}..{spec.span_end}", "the date window is empty: time_span.start must be before time_span.end (default: as_of)")
        if spec.span_end > spec.as_of:
            self.add(None, "time_span.end", str(spec.span_end), f"must not be after as_of ({spec.as_of})")

    def packs(self) -> None:
        """Every pack's requirements are in the world, and no type or relation is declared twice
        (collects `types` and `rels`)."""
        types, rels, world = self.types, self.rels, self.world
        for pname, pack in world.packs.items():
            for req in pack.requires:
                if req not in world.packs:
                    self.add(pname, "requires", req, f"pack '{pname}' needs pack '{req}'; add it to the spec's packs")
            for t, et in pack.types.items():
                if t in types:
                    self.add(pname, f"types.{t}", t, f"type already defined by pack '{types[t][0]}'")
                types[t] = (pname, et)
        for pname, pack in world.packs.items():
            for t, et in pack.types.items():
                if et.parent:
                    r = et.parent.relation
                    if r in rels:
                        self.add(pname, f"types.{t}.parent.relation", r, "relation name already used")
                    rels[r] = (pname, RelationSpec(source=t, target=et.parent.type, cardinality="N:1", required=True))
            for r, rs in pack.relations.items():
                if r in rels:
                    self.add(pname, f"relations.{r}", r, f"relation already defined by pack '{rels[r][0]}'")
                if r in types:
                    self.add(pname, f"relations.{r}", r, "a relation must not share its name with a type")
                rels[r] = (pname, rs)

    def relation_names(self) -> None:
        """Facts and pages name attributes and links by their names: a relation may not take the name
        of an attribute of the types it joins."""
        types, rels = self.types, self.rels
        for r, (pname, rs) in rels.items():
            parent_of = next((t for t, (_, et) in types.items() if et.parent and et.parent.relation == r), None)
            where = f"types.{parent_of}.parent.relation" if parent_of else f"relations.{r}"
            for side in dict.fromkeys((rs.source, rs.target)):
                if side in types and (r in types[side][1].attributes or r in ("id", "name")):
                    self.add(pname, where, r, f"relation '{r}' has the name of an attribute of '{side}' (facts and pages name both "
                        "by it); rename the relation or the attribute")

    def labels(self) -> None:
        """An entity's page shows each attribute and each outgoing link as one labelled row, and
        questions name a hop by its label: two rows with one label make the link unreadable (every
        question through it fails). Labels as pages write them, in English and in the world's
        language."""
        types, rels, spec, world = self.types, self.rels, self.spec, self.world
        for lang in dict.fromkeys((BASE, spec.language)):
            for t, (tpack, et) in types.items():
                shown: dict[str, str] = {"name": "the name"}
                rows = [(tpack, f"types.{t}.attributes.{a}.label", f"attribute '{a}'",
                         attribute_label(a_spec, a, lang))
                        for a, a_spec in et.attributes.items() if not a_spec.hidden and not _links_to_entity(world, t, a)]
                for r, (rpack, rs) in rels.items():
                    if rs.source == t:
                        parent_of = next((u for u, (_, e) in types.items() if e.parent and e.parent.relation == r), None)
                        rows.append((rpack, f"types.{parent_of}.parent.label" if parent_of else f"relations.{r}.label",
                                     f"relation '{r}'", relation_label(rs, r, lang)))
                for pname, path, what, label in rows:
                    key = " ".join(label.split()).casefold()
                    if key in shown:
                        self.add(pname, path, label, f"{what} and {shown[key]} of '{t}' are both labelled '{label}'"
                            f"{'' if lang == BASE else f' in {lang}'} on its pages, so a reader cannot tell the rows "
                            "apart; give one of them another label")
                    else:
                        shown[key] = what

    def type_rules(self, pname: str, t: str, et: EntityType) -> None:
        """A type's parent, lifecycle, series, name grammar and aliases refer to types, attributes and
        relations that exist."""
        types, rels = self.types, self.rels
        base = f"types.{t}"
        if et.parent:
            self.known_type(pname, f"{base}.parent.type", et.parent.type)
        if et.lifecycle is not None:
            self.check_attr(pname, f"{base}.lifecycle.start", t, et.lifecycle.start, want_date=True)
            if et.lifecycle.end is not None:
                self.check_attr(pname, f"{base}.lifecycle.end", t, et.lifecycle.end, want_date=True)
                if et.lifecycle.end == et.lifecycle.start:
                    self.add(pname, f"{base}.lifecycle.end", et.lifecycle.end, "the end must be another date attribute than the start")
        if et.parent and et.parent.count_by is not None and et.parent.type in types:
            self.check_attr(pname, f"{base}.parent.count_by", et.parent.type, et.parent.count_by, want_numeric=True)
        sr = et.parent.series if et.parent else None
        if sr is not None and et.parent.type in types:
            sp = f"{base}.parent.series"
            self.check_attr(pname, f"{sp}.start", et.parent.type, sr.start, want_date=True)
            self.check_attr(pname, f"{sp}.date", t, sr.date, want_date=True)
            own = et.attributes.get(sr.date)
            if isinstance(own, DateAttr) and (own.after or own.before or own.offset or own.given):
                self.add(pname, f"{base}.attributes.{sr.date}", sr.date, f"'{t}.{sr.date}' is each edition's day, set by "
                    "parent.series; remove its after, before, offset and given")
            if sr.until is not None and not sr.until.constant:
                self.add(pname, f"{sp}.until", str(sr.until), "until is a date of the world: as_of, span_start or a date, "
                    "with an offset (as_of - 1y); the parent's own end is its lifecycle end")
            elif sr.until is not None:
                self.check_bound(pname, f"{sp}.until", sr.until, t, "attr")
        for lang_key, spec_ in [("name", et.name), *((f"names.{k}", v) for k, v in et.names.items())]:
            for part_name, part in spec_.parts.items():
                if part.edition is not None and sr is None:
                    self.add(pname, f"{base}.{lang_key}.parts.{part_name}.edition", part.edition,
                        f"'{t}' is not a series: an edition part needs parent.series on the type")
        for part_name, part in et.name.parts.items():
            pp = f"{base}.name.parts.{part_name}"
            if part.faker is not None:
                self.check_provider(pname, f"{pp}.faker", part.faker)
            for v, provider in (part.fakers or {}).items():
                self.check_provider(pname, f"{pp}.fakers.{v}", provider)
            if part.given is not None:
                self.check_given(pname, f"{pp}.given", t, part.given, list(part.cases or part.fakers or {}), allow_name=False,
                            default=part.choices is not None or part.faker is not None)
            if part.via is not None and part.via in rels and rels[part.via][1].source == t and rels[part.via][1].target == t:
                self.add(pname, f"{pp}.via", part.via, f"reads the name of another '{t}', but a type's names are drawn together; "
                    f"name those entities after the others with name.derived instead (derived: {{via: {part.via}, "
                    "templates: {\"{root} {roman}\": 1}})")
            elif part.via is not None:
                target = self.check_to_one(pname, f"{pp}.via", t, part.via, need_required=True)
                if target:
                    self.check_attr(pname, f"{pp}.attribute", target, part.attribute)
        dn = et.name.derived
        if dn is not None:
            target = self.check_to_one(pname, f"{base}.name.derived.via", t, dn.via)
            if target == t and not rels[dn.via][1].acyclic:
                self.add(pname, f"{base}.name.derived.via", dn.via, f"'{dn.via}' links a '{t}' to another '{t}' and names follow "
                    f"its chains (a sequel's sequel): set acyclic: true on relations.{dn.via}")
        for alias_i, al in enumerate(et.name.aliases):
            if al.after is not None:
                self.check_bound(pname, f"{base}.name.aliases.{alias_i}.after", al.after, t, "attr")

    def faker_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A faker attribute's provider exists."""
        self.check_provider(pname, f"{ap}.provider", attr.provider)

    def date_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A date's bounds, cases and offset refer to dates that exist, and its window is not empty
        whatever the data."""
        spec = self.spec
        for j, b in enumerate(attr.after):
            self.check_bound(pname, f"{ap}.after.{j}", b, t, "attr")
        for j, b in enumerate(attr.before):
            self.check_bound(pname, f"{ap}.before.{j}", b, t, "attr")
        if attr.given is not None:
            self.check_given(pname, f"{ap}.given", t, attr.given, list(attr.cases), allow_name=False)
            for v, case in attr.cases.items():
                for side in ("after", "before"):
                    for j, b in enumerate(getattr(case, side)):
                        self.check_bound(pname, f"{ap}.cases.{v}.{side}.{j}", b, t, "attr")
                _check_static_window(self.add, pname, f"{ap}.cases.{v}", [*attr.after, *case.after],
                                     [*attr.before, *case.before], spec)
        if attr.offset is not None:
            self.check_bound(pname, f"{ap}.offset.ref", attr.offset.ref, t, "attr")
            if attr.offset.ref.ref == a:
                self.add(pname, f"{ap}.offset.ref", a, "a date cannot be drawn as an offset from itself")
        _check_static_window(self.add, pname, ap, attr.after, attr.before, spec)

    def categorical_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A category's cases, dating, stages and value windows are sound."""
        spec = self.spec
        if attr.given is not None:
            self.check_given(pname, f"{ap}.given", t, attr.given, list(attr.cases), allow_name=True)
        if attr.dated_by is not None:
            self.check_attr(pname, f"{ap}.dated_by", t, attr.dated_by, want_date=True)
        if attr.stages is not None:
            st = attr.stages
            self.check_attr(pname, f"{ap}.stages.start", t, st.start, want_date=True)
            self.check_attr(pname, f"{ap}.stages.end", t, st.end, want_date=True)
            lc = et.lifecycle
            if attr.stage_values()[0] is not None and lc is not None and lc.start == st.start:
                self.add(pname, f"{ap}.stages.start", st.start, f"is the lifecycle start of '{t}', which every "
                    f"'{t}' has; a planned one ({attr.stage_values()[0]!r}) has not begun: give the stage its own "
                    "start date (work begins) beside the lifecycle's (an award, a founding), or list two values")
            end = et.attributes.get(st.end)
            if isinstance(end, DateAttr) and end.offset is not None and end.offset.ref.ref != st.start:
                self.add(pname, f"{ap}.stages.end", st.end, f"is drawn as an offset from '{end.offset.ref.ref}', not "
                    f"from the stage's start '{st.start}': a stage's end is its start plus a duration "
                    f"(offset: {{ref: {st.start}, ...}})")
        for v, (since, until) in attr.windows().items():
            if since is not None and since > spec.as_of:
                self.add(pname, f"{ap}.values.{v}.since", since.isoformat(), f"after the world's date ({spec.as_of}): no {t} "
                    "could ever take this value; give an earlier date or drop the value")
            if until is not None and until <= spec.span_start:
                self.add(pname, f"{ap}.values.{v}.until", until.isoformat(), f"not after the world's history begins "
                    f"({spec.span_start}): no {t} could ever take this value; give a later date or drop the value")

    def numeric_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A figure's cases, bound, rate and whole are numeric attributes that exist."""
        world = self.world
        if attr.given is not None:
            self.check_given(pname, f"{ap}.given", t, attr.given, list(attr.cases), allow_name=False)
        if attr.at_most is not None:
            if attr.at_most == a:
                self.add(pname, f"{ap}.at_most", a, "an attribute cannot bound itself")
            else:
                self.check_attr(pname, f"{ap}.at_most", t, attr.at_most, want_numeric=True)
        if attr.per is not None:
            per = attr.per
            other_t = t
            if per.via is not None and per.via in et.attributes:
                other_t = lookup_entity_type(world, t, per.via)
                if other_t is None:
                    self.add(pname, f"{ap}.per.via", per.via, f"'{t}.{per.via}' is not a lookup of an entity (attribute: id)")
            elif per.via is not None:
                other_t = self.check_to_one(pname, f"{ap}.per.via", t, per.via)
            if per.via is None and per.attribute == a:
                self.add(pname, f"{ap}.per.attribute", a, "a figure cannot be a rate of itself; name another numeric attribute")
            elif other_t:
                self.check_attr(pname, f"{ap}.per.attribute", other_t, per.attribute, want_numeric=True)
        if attr.part_of is not None:
            po = attr.part_of
            if po.via in et.attributes:
                whole = lookup_entity_type(world, t, po.via)
                if whole is None:
                    self.add(pname, f"{ap}.part_of.via", po.via, f"'{t}.{po.via}' is not a lookup of an entity (attribute: id)")
            else:
                whole = self.check_to_one(pname, f"{ap}.part_of.via", t, po.via)
            if whole:
                self.check_attr(pname, f"{ap}.part_of.attribute", whole, po.attribute, want_numeric=True)
                lo, _ = attr.all_bounds()
                if lo is not None and lo < 0:
                    self.add(pname, f"{ap}.min", lo, "a part of a whole cannot be negative; set min to 0 or more")

    def count_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A count names a relation of the type, the side it counts and a whole-number link attribute
        to sum."""
        rels = self.rels
        if attr.relation not in rels:
            self.add(pname, f"{ap}.relation", attr.relation, f"unknown relation{suggest(attr.relation, rels)}")
        else:
            crs = rels[attr.relation][1]
            if t not in (crs.source, crs.target):
                self.add(pname, f"{ap}.relation", attr.relation, f"relation '{attr.relation}' joins '{crs.source}' "
                    f"and '{crs.target}', not '{t}'")
            elif crs.source == crs.target and attr.side is None:
                self.add(pname, f"{ap}.side", None, f"'{attr.relation}' joins '{t}' to itself: say which links to "
                    "count, side: in (ending here) or out (starting here)")
            elif attr.side == "in" and crs.target != t or attr.side == "out" and crs.source != t:
                self.add(pname, f"{ap}.side", attr.side, f"'{t}' is not the {'target' if attr.side == 'in' else 'source'} "
                    f"of '{attr.relation}'")
            if attr.sum is not None and not isinstance(crs.attributes.get(attr.sum), LinkNumber):
                nums = sorted(x for x, xa in crs.attributes.items() if isinstance(xa, LinkNumber))
                self.add(pname, f"{ap}.sum", attr.sum, f"'{attr.relation}' links have no whole-number attribute of that "
                    f"name{suggest(attr.sum, nums)}; theirs: {', '.join(nums) or 'none (give the relation one under attributes)'}")

    def code_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A code is made from the name or a text attribute."""
        world = self.world
        if attr.source != "name":
            self.check_attr(pname, f"{ap}.source", t, attr.source)
            if attr.source in et.attributes and attribute_dtype(world, t, attr.source) != "string":
                self.add(pname, f"{ap}.source", attr.source, f"'{t}.{attr.source}' is not a text attribute")

    def lookup_attribute(self, pname: str, t: str, et: EntityType, a: str, attr, ap: str) -> None:
        """A lookup reads an attribute through a to-one relation, hidden where its source is."""
        types, rels = self.types, self.rels
        if attr.via not in rels or rels[attr.via][1].source != t:
            own = [r for r, (_, rs) in rels.items() if rs.source == t]
            self.add(pname, f"{ap}.via", attr.via, f"'{t}' has no outgoing relation of that name{suggest(attr.via, own)}; it has: {', '.join(own) or 'none'}")
        else:
            rs = rels[attr.via][1]
            if rs.cardinality not in ("1:1", "N:1") or rs.history:
                self.add(pname, f"{ap}.via", attr.via, "a lookup needs a to-one relation (1:1 or N:1, no history)")
            self.check_attr(pname, f"{ap}.attribute", rs.target, attr.attribute)
            src = types[rs.target][1].attributes.get(attr.attribute) if rs.target in types else None
            if src is not None and src.hidden and not attr.hidden:
                self.add(pname, f"{ap}.attribute", attr.attribute, f"'{rs.target}.{attr.attribute}' is hidden: a copy of it "
                    "would state it on pages; make this lookup `hidden: true` too")

    def relation_rules(self, pname: str, r: str, rs: RelationSpec) -> None:
        """A relation's types, bounds, eligibility and windows refer to what exists, and its windows
        are not empty whatever the data."""
        spec = self.spec
        rp = f"relations.{r}"
        ok_s = self.known_type(pname, f"{rp}.source", rs.source)
        ok_t = self.known_type(pname, f"{rp}.target", rs.target)
        if not (ok_s and ok_t):
            return
        if rs.same:
            self.check_attr(pname, f"{rp}.same.source", rs.source, rs.same.source)
            self.check_attr(pname, f"{rp}.same.target", rs.target, rs.same.target)
        if rs.once_per is not None:
            self.check_attr(pname, f"{rp}.once_per", rs.source, rs.once_per)
        if isinstance(rs.select, WeightSelect):
            self.check_attr(pname, f"{rp}.select.weight", rs.target, rs.select.weight, want_numeric=True)
        if rs.eligible:
            self.check_attr(pname, f"{rp}.eligible.attribute", rs.target, rs.eligible.attribute, want_date=True)
            for side in ("after", "before"):
                b = getattr(rs.eligible, side)
                if b is not None:
                    self.check_bound(pname, f"{rp}.eligible.{side}", b, r, "rel")
                    if b.ref.startswith("target."):
                        self.add(pname, f"{rp}.eligible.{side}", b.ref, "eligibility cannot refer to the target itself")
        if rs.since:
            self.check_bound(pname, f"{rp}.since", rs.since, r, "rel")
        if rs.date:
            for side in ("after", "before"):
                for j, b in enumerate(getattr(rs.date, side)):
                    self.check_bound(pname, f"{rp}.date.{side}.{j}", b, r, "rel")
            _check_static_window(self.add, pname, f"{rp}.date", rs.date.after, rs.date.before, spec)
        if rs.history:
            for side in ("after", "before"):
                for j, b in enumerate(getattr(rs.history, side)):
                    self.check_bound(pname, f"{rp}.history.{side}.{j}", b, r, "rel")
                    if b.ref == "valid_from":
                        self.add(pname, f"{rp}.history.{side}.{j}", b.ref, "a history window may refer to the source, the target "
                            "and constants, not to valid_from")
            _check_static_window(self.add, pname, f"{rp}.history", rs.history.after, rs.history.before, spec)
        if rs.at is not None:
            self.check_bound(pname, f"{rp}.at", rs.at, r, "rel")
            if rs.at.ref.startswith("target.") or rs.at.ref == "valid_from":
                self.add(pname, f"{rp}.at", rs.at.ref, "at is a date of the source (or a constant): the target is chosen to exist then")
        if rs.date and rs.date.offset is not None:
            self.check_bound(pname, f"{rp}.date.offset.ref", rs.date.offset.ref, r, "rel")
        self.relation_links(pname, r, rs, rp)

    def relation_links(self, pname: str, r: str, rs: RelationSpec, rp: str) -> None:
        """A relation's link attributes, requirement path, cases, not_same and acyclic are sound."""
        types, rels = self.types, self.rels
        for a, attr in rs.attributes.items():
            if getattr(attr, "seniority", None) == "age" and rs.source in types and types[rs.source][1].lifecycle is None:
                self.add(pname, f"{rp}.attributes.{a}.seniority", "age", f"an age is counted from the lifecycle start of "
                    f"'{rs.source}', which has no lifecycle; give the type one or use seniority: career")
            if isinstance(attr, LinkEntity):
                _check_link_entity(self.add, pname, f"{rp}.attributes.{a}", r, rs, attr, rels)
        if rs.requires is not None:
            _check_path(self.add, pname, f"{rp}.requires.path", r, rs, rels)
        if rs.given is not None and rs.source in types:
            self.check_given(pname, f"{rp}.given", rs.source, rs.given, list(rs.cases), allow_name=False)
        for j, x in enumerate(rs.not_same):
            if x == r:
                self.add(pname, f"{rp}.not_same.{j}", x, "a relation never repeats a pair already (each pair links once); "
                    "name another relation of the same source and target types")
            elif x not in rels:
                self.add(pname, f"{rp}.not_same.{j}", x, f"unknown relation{suggest(x, rels)}")
            elif (rels[x][1].source, rels[x][1].target) != (rs.source, rs.target):
                self.add(pname, f"{rp}.not_same.{j}", x, f"'{x}' links {rels[x][1].source} to {rels[x][1].target}, not "
                    f"{rs.source} to {rs.target}: not_same compares the targets of one source's links")
        if rs.acyclic and rs.source != rs.target:
            self.add(pname, f"{rp}.acyclic", True, "acyclic only applies to relations from a type to itself")
        elif rs.acyclic and rs.required:
            self.add(pname, f"{rp}.required", True, f"a required relation from '{rs.source}' to itself cannot be acyclic: in a world "
                "without cycles some entity links to nothing; drop required (or acyclic)")

    def invariants(self) -> None:
        """A declared acyclic invariant names a relation."""
        rels, world = self.rels, self.world
        for pname, pack in world.packs.items():
            for i, inv in enumerate(pack.invariants):
                if inv.acyclic is not None and inv.acyclic not in rels:
                    self.add(pname, f"invariants.{i}.acyclic", inv.acyclic, f"unknown relation{suggest(inv.acyclic, rels)}")

    def counts(self) -> None:
        """Every root type has a count; a type sized by its parent has none."""
        types, spec = self.types, self.spec
        for t, c in spec.counts.items():
            if t not in types:
                self.add(None, f"counts.{t}", t, unknown_type(t, types))
            elif types[t][1].parent is not None:
                par = types[t][1].parent
                self.add(None, f"counts.{t}", c, f"'{t}' is generated per {par.type} ({par.count.min}-{par.count.max} each, set in pack "
                    f"'{types[t][0]}'); remove it from counts")
        for t, (pname, et) in types.items():
            if et.parent is None and t not in spec.counts:
                self.add(None, f"counts.{t}", None, f"root type '{t}' (pack '{pname}') needs a count (0 to leave it out)")

    # ------------------------------------------------------------------ what rules share

    def known_type(self, pname: str, path: str, t: str) -> bool:
        types = self.types
        if t in types:
            return True
        self.add(pname, path, t, unknown_type(t, types))
        return False

    def has_attr(self, t: str, a: str) -> bool:
        types = self.types
        return a in ("id", "name") or a in types[t][1].attributes

    def attr_kind_date(self, t: str, a: str) -> bool:
        types, world = self.types, self.world
        if a in ("id", "name") or a not in types[t][1].attributes:
            return False
        return attribute_dtype(world, t, a) == "date"

    def check_attr(self, pname: str, path: str, t: str, a: str, want_date: bool = False, want_numeric: bool = False) -> None:
        types, world = self.types, self.world
        if t not in types:
            return
        if not self.has_attr(t, a):
            opts = ["id", "name", *types[t][1].attributes]
            self.add(pname, path, a, f"type '{t}' has no attribute '{a}'{suggest(a, opts)}; it has: {', '.join(opts)}")
            return
        if want_date and not self.attr_kind_date(t, a):
            self.add(pname, path, a, f"'{t}.{a}' is not a date attribute")
        if want_numeric and (a in ("id", "name") or attribute_dtype(world, t, a) not in ("int", "float")):
            self.add(pname, path, a, f"'{t}.{a}' is not a numeric attribute")

    def check_bound(self, pname: str, path: str, b: DateBound, owner: str, ctx: str) -> None:
        """ctx: 'attr' (ref is on type owner) or 'rel' (owner is a relation name)."""
        rels, spec = self.rels, self.spec
        if b.constant and b.ref not in CONSTANT_REFS and not MIN_WORLD_DATE <= dt.date.fromisoformat(b.ref) <= MAX_WORLD_DATE:
            self.add(pname, path, b.ref, f"an absolute date must lie within {MIN_WORLD_DATE}..{MAX_WORLD_DATE}")
            return
        if b.years or b.days:
            if b.constant:
                base = [constant_date(b.ref, spec.as_of, spec.span_start)]
            else:  # the reference is a date inside the world's time span
                base = [spec.span_start, spec.span_end]
            if any(shift_date(d, b.years, b.days) is None for d in base):
                self.add(pname, path, str(b), "the offset takes dates out of range: applied to "
                    f"{b.ref if b.constant else 'the dates of the time span'} it must stay within "
                    "0001-01-01..9999-12-31")
        if b.constant:
            return
        parts = b.ref.split(".")
        if ctx == "attr":
            if len(parts) == 1:
                self.check_attr(pname, path, owner, parts[0], want_date=True)
                return
            if len(parts) == 2 and parts[0] in rels and rels[parts[0]][1].source == owner:
                self.check_attr(pname, path, rels[parts[0]][1].target, parts[1], want_date=True)
                return
            self.add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, an attribute of '{owner}' "
                "or <relation>.<attribute> through one of its outgoing relations")
            return
        rs = rels[owner][1]
        if parts == ["valid_from"] and rs.history is not None:
            return
        if len(parts) == 3 and parts[0] == "source":  # source.<relation>.start: another link of the source
            self.check_link_ref(pname, path, b.ref, owner, rs)
            return
        if len(parts) == 2 and parts[0] in ("source", "target"):
            self.check_attr(pname, path, rs.source if parts[0] == "source" else rs.target, parts[1], want_date=True)
            return
        extra = ", valid_from" if rs.history is not None else ""
        self.add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, source.<attr>, target.<attr>, "
            f"source.<relation>.start{extra}")

    def check_link_ref(self, pname: str, path: str, ref: str, owner: str, rs) -> None:
        """`source.<relation>.start`: the day the source's first link of another dated relation
        starts; only a history's or a date's window may read it (the links are drawn after it)."""
        rels = self.rels
        _, other, end = ref.split(".")
        mine = sorted(x for x, (_, xs) in rels.items() if xs.source == rs.source and xs.dated and x != owner)
        if end != "start":
            self.add(pname, path, ref, f"a link's date is read as source.<relation>.start (the day the source's first "
                f"link of it starts); write source.{other}.start")
        elif other == owner:
            self.add(pname, path, ref, "a relation cannot be bounded by its own links; name another relation of the source")
        elif other not in rels or rels[other][1].source != rs.source or not rels[other][1].dated:
            self.add(pname, path, ref, f"'{other}' is no dated relation out of '{rs.source}'{suggest(other, mine)}; "
                f"dated relations out of '{rs.source}': {', '.join(mine) or 'none'}")
        elif not re.search(r"\.(history|date)\.(after|before)\.\d+$", path):
            self.add(pname, path, ref, "another link's date may bound only a history's or a date's window "
                "(history.after/before, date.after/before)")

    def check_to_one(self, pname: str, path: str, t: str, rel: str, need_required: bool = False) -> str | None:
        """A to-one relation out of `t` (or its parent relation); its target type, or None."""
        types, rels = self.types, self.rels
        own = [r for r, (_, rs) in rels.items() if rs.source == t]
        if rel not in rels or rels[rel][1].source != t:
            self.add(pname, path, rel, f"'{t}' has no outgoing relation of that name{suggest(rel, own)}; it has: {', '.join(own) or 'none'}")
            return None
        rs = rels[rel][1]
        if rs.cardinality not in ("1:1", "N:1") or rs.history:
            self.add(pname, path, rel, "needs a to-one relation (1:1 or N:1, no history)")
            return None
        if need_required and not rs.required:
            self.add(pname, path, rel, f"relation '{rel}' is not required, so some '{t}' would have nothing to take it from; "
                "make it required (or use the parent relation)")
            return None
        return rs.target if rs.target in types else None

    def categorical_values(self, t: str, a: str, depth: int = 0) -> set[str] | None:
        types, rels = self.types, self.rels
        s = types[t][1].attributes.get(a)
        if isinstance(s, LookupAttr) and s.via in rels and rels[s.via][1].target in types and depth < 8:
            return self.categorical_values(rels[s.via][1].target, s.attribute, depth + 1)  # a copy of another's category
        return set(s.weights()) if isinstance(s, CategoricalAttr) else None

    def check_given(self, pname: str, path: str, t: str, given: str, keys, allow_name: bool, default: bool = True) -> None:
        """`given` names a string attribute of `t` (or, where allowed, a name part with plain
        choices); the case keys must be values it takes; without a default every value needs a case."""
        types, world = self.types, self.world
        et_ = types[t][1]
        if given.startswith("name."):
            part = et_.name.parts.get(given[5:])
            if not allow_name:
                self.add(pname, path, given, "only a categorical attribute can be given a name part; give an attribute of the type")
            elif part is None:
                self.add(pname, path, given, f"'{t}' has no name part '{given[5:]}'{suggest(given[5:], et_.name.parts)}; "
                    f"parts: {', '.join(et_.name.parts) or 'none'}")
            elif part.choices is None or part.cases is not None:
                self.add(pname, path, given, f"name part '{given[5:]}' must have plain choices (its words pick the case)")
            else:
                unknown = sorted(set(keys) - set(part.choices))
                if unknown:
                    self.add(pname, path.rsplit(".", 1)[0] + ".cases", short(unknown),
                        f"not words of name part '{given[5:]}' (its choices: {short(sorted(part.choices), 120)})")
            return
        if given not in et_.attributes:
            self.check_attr(pname, path, t, given)
            return
        if attribute_dtype(world, t, given) != "string":
            self.add(pname, path, given, f"'{t}.{given}' is not a text attribute; a case is picked by a categorical value")
            return
        vals = self.categorical_values(t, given)
        if vals is None:
            return
        unknown = sorted(set(keys) - vals)
        if unknown:
            self.add(pname, path.rsplit(".", 1)[0] + ".cases", short(unknown), f"'{t}.{given}' never takes these values; "
                f"it takes: {short(sorted(vals), 120)}")
        if not default and vals - set(keys):
            self.add(pname, path.rsplit(".", 1)[0] + ".cases", short(sorted(vals - set(keys))),
                f"values of '{t}.{given}' without a case; give them cases, or choices for the rest")

    def check_provider(self, pname: str, path: str, provider: str) -> None:
        """A faker provider the locale has (each asked once)."""
        from faker import Faker
        from faker.config import AVAILABLE_LOCALES

        from .sampling import faker_provider_problem

        if self.faker is None:
            self.faker = Faker(self.spec.locale if self.spec.locale in AVAILABLE_LOCALES else "en_US")
        if provider not in self.provider_problems:
            self.provider_problems[provider] = faker_provider_problem(self.faker, provider)
        why = self.provider_problems[provider]
        if why is not None:
            hint = suggest(provider, [m for m in dir(self.faker) if not m.startswith("_")]) if why == "unknown faker provider" else ""
            self.add(pname, path, provider, why + hint)
