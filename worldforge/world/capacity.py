"""Counts a world's rules cannot be met with, found before planning: the planner meets
required links by construction (`feasible`), but no construction makes room where the
counts themselves leave too few targets. Each problem names the count, the rule and the
smallest count that works."""

from __future__ import annotations

import math

from ..errors import SpecProblem
from .pack import CategoricalAttr, DateAttr, LookupAttr, RelationSpec, WeightSelect, constant_date
from .spec import ResolvedWorld, expected_counts, shift_date

YEAR_DAYS = 365.2425


def count_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    """Counts that no construction can serve: a required link with no target type, or targets
    too few for their caps (too few for a `once_per` rule is a warning: `count_warnings`)."""
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
        if rs.max_per_target is not None and not rs.history and rs.required:
            need = src_mid * rs.rate * max(rs.count.min, 1)
            if need > tgt_lo * rs.max_per_target and need > 0:
                probs.append(SpecProblem(spec_file, "counts", f"{rs.source}~{src_mid:.0f}, {rs.target}>={tgt_lo:.0f}",
                                         f"relation '{r}' gives each '{rs.target}' at most {rs.max_per_target} links (max_per_target), "
                                         f"so it needs about {need / rs.max_per_target:.0f} '{rs.target}' but the world may have only "
                                         f"{tgt_lo:.0f}; raise the '{rs.target}' count or max_per_target"))
        if rs.target_unique:
            need = src_mid * rs.rate * max(rs.count.min, 1 if rs.required else 0)
            if need > tgt_lo and need > 0:
                probs.append(SpecProblem(spec_file, "counts", f"{rs.source}~{src_mid:.0f}, {rs.target}>={tgt_lo:.0f}",
                                         f"relation '{r}' ({rs.cardinality}) gives each '{rs.target}' to at most one '{rs.source}', "
                                         f"so it needs about {need:.0f} distinct targets but the world may have only {tgt_lo:.0f}; "
                                         f"raise the '{rs.target}' count or lower '{rs.source}'"))
    return probs




def count_warnings(world: ResolvedWorld) -> list[tuple[str, str]]:
    """Rules the counts let the planner follow only in part; the world plans, but its audit
    will say so. A `once_per` rule (the sources of one group take distinct targets: each prize
    once per laureate) with a `same` rule (a share of them from the source's own group of
    targets: a prize for work in its field) needs, for each group of sources, that many
    distinct targets in its thinnest target group: a prize with 27 yearly editions in a field
    of 7 researchers goes mostly to other fields, or to nobody. Small test worlds meet this
    often and are still worth planning, so it warns instead of refusing. (relation, message)."""
    out = []
    counts = expected_counts(world)
    for r, rs in world.relations.items():
        if rs.once_per is None or rs.same is None:
            continue
        per_group = _sources_per_once_group(world, rs)
        shares = _target_shares(world, rs)
        if not per_group or not shares:
            continue
        value, share = min(shares.items(), key=lambda kv: (kv[1], kv[0]))
        n_t = counts[rs.target][1]
        need = rs.same.share * per_group
        if n_t * share >= need:
            continue
        weight = f", and the counts its select weight '{rs.select.weight}' grows from in proportion" \
            if isinstance(rs.select, WeightSelect) else ""
        out.append((r,
            f"relation '{r}' gives all '{rs.source}' of one {rs.once_per} distinct '{rs.target}' targets (once_per: "
            f"{rs.once_per}), {rs.same.share:.0%} of them of its own {rs.same.source} (same: {rs.same.source}); one "
            f"{rs.once_per} can have up to {per_group:,.0f} '{rs.source}', but the thinnest {rs.same.source} "
            f"('{value}', {share:.1%} of '{rs.target}') is expected to hold {n_t * share:,.1f}, so many will go to other "
            f"{rs.same.source}s or to none and the pack's audit of '{r}' may fail; for that, raise counts.{rs.target} "
            f"to at least {math.ceil(need / share):,}{weight}"))
    return out


def _sources_per_once_group(world: ResolvedWorld, rs: RelationSpec) -> float | None:
    """The most sources one `once_per` group can hold: a series' editions per parent (from the
    earliest start its bounds allow to the series' end, at the shortest interval)."""
    et = world.types[rs.source]
    attr = et.attributes.get(rs.once_per)
    par = et.parent
    if not (isinstance(attr, LookupAttr) and par is not None and attr.via == par.relation and attr.attribute == "id"
            and par.series is not None):
        return None
    sr, spec = par.series, world.spec
    start_attr = world.types[par.type].attributes.get(sr.start)
    earliest = spec.span_start
    if isinstance(start_attr, DateAttr):
        for b in start_attr.after:
            if b.constant:
                d = shift_date(constant_date(b.ref, spec.as_of, spec.span_start), b.years, b.days)
                earliest = max(earliest, d) if d is not None else earliest
    end = constant_date(sr.until.ref, spec.as_of, spec.span_start) if sr.until is not None else spec.as_of
    if sr.until is not None:
        end = shift_date(end, sr.until.years, sr.until.days) or end
    years = (end - earliest).days / YEAR_DAYS
    return max(0.0, math.floor(years / sr.every.min))


def _target_shares(world: ResolvedWorld, rs: RelationSpec) -> dict[str, float]:
    """Per value a source's `same` attribute can take (not `any`): the expected share of
    targets with that value (categorical weights on both sides, through lookups)."""
    src_values = _categorical(world, rs.source, rs.same.source)
    tgt = _categorical(world, rs.target, rs.same.target)
    if src_values is None or tgt is None:
        return {}
    weights = tgt.weights()
    total = sum(weights.values())
    if total <= 0:
        return {}
    return {v: weights[v] / total for v in src_values.weights() if v != rs.same.any and weights.get(v, 0) > 0}


def _categorical(world: ResolvedWorld, t: str, a: str, depth: int = 0) -> CategoricalAttr | None:
    """The categorical attribute `t.a` is (or looks up, through to-one relations)."""
    attr = world.types[t].attributes.get(a)
    if isinstance(attr, CategoricalAttr):
        return attr
    if isinstance(attr, LookupAttr) and depth < 8:
        rel = world.relations.get(attr.via)
        if rel is not None:
            return _categorical(world, rel.target, attr.attribute, depth + 1)
    return None
