"""Dates a required link can be made at: a source's date drawn where its targets allow.

A required relation whose eligible targets depend on a date of its source (a company's
founders are 22 to 75 years old and alive at its founding; a paper's authors are adults when
it appears; a person is born in a city that exists) can leave a source with no eligible
target when that date falls where no target fits: a company drawn from the far tail of its
age distribution, founded before anyone of the world could have founded it. The planner
then had nothing to link, and a seed failed to plan.

Each such relation is a `DateNeed` of the source's date attribute. Per target, the
eligibility rules and the target's lifecycle give the interval of source dates at which that
target could be linked; `Coverage` counts, per date (and per group of a `same` rule), how
many targets could. A source whose date has too few is drawn again from the attribute's own
distribution until it lands where enough could (the distribution conditioned on the rule),
and only failing that is moved to the nearest such date inside its window. Rows that need
nothing are left exactly as drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pack import DateBound, LookupAttr, RelationSpec, SeriesSpec, WeightSelect
from .sampling import NEG_INF, POS_INF, apply_offset
from .spec import ResolvedWorld, link_bounds

REDRAWN = "drawn again where no target of a required link was in reach"  # the planner's repair, per date
_PACK_SHIFT = np.int64(2**32)  # (group, day) packed in one int64: group * 2**32 + day + 2**31
_DAY_CLIP = 2**31 - 2


@dataclass(frozen=True)
class Condition:
    """One rule on a source date X for a target: `apply_offset(X, years, days)` at or after
    (`ge`) or at or before (`le`) a per-target value, named by its side and attribute."""

    side: str  # "ge" | "le"
    target_ref: str  # the target attribute the value is read from
    target_years: int
    target_days: int
    years: int  # the offset applied to X
    days: int
    key: bool = False  # the eligibility key: a target without it is never picked


@dataclass(frozen=True)
class DateNeed:
    """A required relation whose eligible targets depend on the source's date `attribute`.
    With `series`, the relation's sources are the editions of a series (a league's seasons,
    a prize's yearly awards) and the date is their parent's `series.start`: every edition
    from then on needs its targets in reach."""

    relation: str
    spec: RelationSpec
    attribute: str
    conditions: tuple[Condition, ...]
    static: tuple[tuple[str, DateBound], ...]  # eligibility against a constant: ("after"|"before", bound)
    series: SeriesSpec | None = None
    edition_type: str | None = None

    def distinct_per_parent(self, world: ResolvedWorld) -> bool:
        """The editions of one parent take distinct targets (`once_per` names the parent)."""
        if self.series is None or self.spec.once_per is None:
            return False
        attr = world.types[self.edition_type].attributes.get(self.spec.once_per)
        par = world.types[self.edition_type].parent
        return isinstance(attr, LookupAttr) and attr.via == par.relation and attr.attribute == "id"

    @property
    def least(self) -> int:
        """Targets a source needs in reach: the fewest links it makes, and one more where
        sources of one `once_per` group take distinct targets (the editions of a prize in
        successive years reach the same albums: one spare keeps each its own)."""
        return max(1, self.spec.count_range.min) + (1 if self.spec.once_per is not None else 0)

    def target_attributes(self) -> set[str]:
        """Target attributes the rule reads (they must be drawn before the source's date)."""
        out = {c.target_ref for c in self.conditions}
        if self.spec.eligible is not None:
            out.add(self.spec.eligible.attribute)
        if isinstance(self.spec.select, WeightSelect):
            out.add(self.spec.select.weight)
        if self.spec.same is not None and self.spec.same.target != "id":
            out.add(self.spec.same.target)
        return out

    def source_attributes(self, world: ResolvedWorld) -> set[str]:
        """Attributes of the date's own type the rule reads (its `same` group)."""
        group = self.group_attribute(world)
        return {group} if group not in (None, "id") else set()

    def group_attribute(self, world: ResolvedWorld) -> str | None:
        """The attribute of the date's own type a `same` rule groups sources by (None: no
        group, or one the date's type cannot tell, as an edition's own attribute that is no
        lookup of its parent). 'id' for a series whose editions are grouped by their parent."""
        same = self.spec.same
        if same is None or same.share < 1 or same.any is not None:
            return None
        if self.series is None:
            return same.source
        par = world.types[self.edition_type].parent
        attr = world.types[self.edition_type].attributes.get(same.source)
        if isinstance(attr, LookupAttr) and attr.via == par.relation:
            return attr.attribute
        return None


def _source_ref(b: DateBound | None, attribute: str) -> bool:
    return b is not None and b.ref == f"source.{attribute}"


def date_needs(world: ResolvedWorld, t: str, attribute: str) -> list[DateNeed]:
    """The required relations from `t` whose eligible targets depend on `t.attribute` (through
    `eligible` bounds or `at`), with their rules inverted onto that date; and, where
    `t.attribute` starts a series, those of its editions on their date. Relations whose rules
    also read something else that cannot be inverted (a tenure's own start, another date of
    the source) are left out: the planner draws their links as before."""
    needs = _direct_needs(world, t, attribute)
    for c, et in world.types.items():
        par = et.parent
        if par is not None and par.type == t and par.series is not None and par.series.start == attribute and c != t:
            for need in _direct_needs(world, c, par.series.date):
                needs.append(DateNeed(need.relation, need.spec, attribute, need.conditions, need.static, par.series, c))
    return needs


def _direct_needs(world: ResolvedWorld, t: str, attribute: str) -> list[DateNeed]:
    needs = []
    for r, rs in world.relations.items():
        if rs.source != t or not rs.required or rs.history or rs.since:
            continue
        conds: list[Condition] = []
        static: list[tuple[str, DateBound]] = []
        ok = True
        el = rs.eligible
        if el is not None:
            for side, b in (("after", el.after), ("before", el.before)):
                if b is None:
                    continue
                if b.constant:
                    static.append((side, b))
                elif _source_ref(b, attribute):
                    # key >= f(X) (after) means f(X) <= key; key <= f(X) (before) means f(X) >= key
                    conds.append(Condition("le" if side == "after" else "ge", el.attribute, 0, 0, b.years, b.days, key=True))
                else:
                    ok = False
        if _source_ref(rs.at, attribute):  # the target exists when the link is made
            after, before = link_bounds(world, rs)
            for side, bounds in (("ge", after), ("le", before)):
                for b in bounds:
                    which, _, a = b.ref.partition(".")
                    if which == "target" and "." not in a:
                        conds.append(Condition(side, a, b.years, b.days, rs.at.years, rs.at.days))
        if not ok or not conds:
            continue
        needs.append(DateNeed(r, rs, attribute, tuple(conds), tuple(static)))
    return needs


def _inverse(v: np.ndarray, years: int, days: int, side: str) -> np.ndarray:
    """Per value v: the smallest X with apply_offset(X, years, days) >= v (`ge`), or the
    largest X with apply_offset(X, years, days) <= v (`le`). Calendar years are not all alike
    long (Feb 29), so the first guess is corrected by looking two days either side."""
    v = np.asarray(v, np.int64)
    real = (v > NEG_INF // 2) & (v < POS_INF // 2)
    out = v.copy()
    if not real.any() or (years == 0 and days == 0):
        return out
    x0 = apply_offset(v[real] - days, -years, 0)
    steps = range(-3, 4) if side == "ge" else range(3, -4, -1)
    best = np.full(len(x0), NEG_INF if side == "le" else POS_INF, np.int64)
    found = np.zeros(len(x0), bool)
    for k in steps:
        x = x0 + k
        fx = apply_offset(x, years, days)
        hit = ~found & ((fx >= v[real]) if side == "ge" else (fx <= v[real]))
        best[hit] = x[hit]
        found |= hit
    out[real] = np.where(found, best, x0 + (4 if side == "ge" else -4))
    return out


def target_windows(need: DateNeed, target_days, const_days, target_ok: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per target: (lo, hi, ok), the interval of source dates X at which it could be linked
    and whether it can be linked at all. `target_days(attr, fill)` reads a target date column
    as days (NULL as `fill`); `const_days(ref)` a constant reference (`as_of`, a date)."""
    n = len(target_ok)
    lo = np.full(n, NEG_INF, np.int64)
    hi = np.full(n, POS_INF, np.int64)
    ok = target_ok.copy()
    if need.static:
        key = target_days(need.spec.eligible.attribute, NEG_INF)
        ok &= key > NEG_INF // 2
        for side, b in need.static:
            bound = apply_offset(np.array([const_days(b.ref)], np.int64), b.years, b.days)[0]
            ok &= (key >= bound) if side == "after" else (key <= bound)
    for c in need.conditions:
        fill = NEG_INF if c.side == "ge" else POS_INF
        raw = target_days(c.target_ref, fill)
        v = apply_offset(raw, c.target_years, c.target_days)
        if c.key:
            ok &= (raw > NEG_INF // 2) & (raw < POS_INF // 2)
        x = _inverse(v, c.years, c.days, c.side)
        if c.side == "ge":
            lo = np.maximum(lo, x)
        else:
            hi = np.minimum(hi, x)
    return lo, hi, ok & (lo <= hi)


class Coverage:
    """How many targets could be linked at each source date, per group: a step function
    kept as sorted change points, queried by binary search."""

    def __init__(self, groups: np.ndarray, lo: np.ndarray, hi: np.ndarray):
        keep = (groups >= 0) & (lo <= hi)
        g, lo, hi = groups[keep].astype(np.int64), lo[keep], hi[keep]
        lo = np.clip(lo, -_DAY_CLIP, _DAY_CLIP)
        hi = np.clip(hi, -_DAY_CLIP, _DAY_CLIP - 1)
        keys = np.concatenate([self._pack(g, lo), self._pack(g, hi + 1)])
        delta = np.concatenate([np.ones(len(lo), np.int64), -np.ones(len(hi), np.int64)])
        order = np.argsort(keys, kind="stable")
        keys, delta = keys[order], delta[order]
        # running count within each group (groups are contiguous and each sums to zero)
        count = np.cumsum(delta)
        last = np.r_[keys[1:] != keys[:-1], True] if len(keys) else np.zeros(0, bool)
        self.keys, self.count = keys[last], count[last]
        self.group = self.keys // _PACK_SHIFT
        self.day = self.keys % _PACK_SHIFT - 2**31

    @staticmethod
    def _pack(g: np.ndarray, day: np.ndarray) -> np.ndarray:
        return g * _PACK_SHIFT + (np.clip(day, -_DAY_CLIP, _DAY_CLIP) + 2**31)

    def at(self, groups: np.ndarray, days: np.ndarray) -> np.ndarray:
        """Targets that could be linked at each (group, day)."""
        if len(self.keys) == 0:
            return np.zeros(len(days), np.int64)
        i = np.searchsorted(self.keys, self._pack(groups, days), side="right") - 1
        inside = (i >= 0) & (self.group[np.maximum(i, 0)] == groups) & (groups >= 0)
        return np.where(inside, self.count[np.maximum(i, 0)], 0)

    def nearest(self, groups: np.ndarray, days: np.ndarray, lo: np.ndarray, hi: np.ndarray, least: int) -> np.ndarray:
        """Per row, the day inside [lo, hi] nearest to `days` at which at least `least`
        targets of its group could be linked; NEG_INF where there is none."""
        good = self.count >= least
        # segments [day_i, day_{i+1} - 1] of one group where the count is high enough
        nxt_same = np.r_[self.group[1:] == self.group[:-1], False]
        seg = np.flatnonzero(good & nxt_same)
        s_key, s_lo = self.keys[seg], self.day[seg]
        s_hi = self.day[seg + 1] - 1
        s_g = self.group[seg]
        out = np.full(len(days), NEG_INF, np.int64)
        if len(seg) == 0:
            return out
        q = self._pack(groups, days)
        j = np.searchsorted(s_key, q, side="right") - 1  # the last segment starting at or before the day
        best_dist = np.full(len(days), POS_INF, np.int64)
        for cand_j in (j, j + 1):  # the segment at or before the day, and the one after
            valid = (cand_j >= 0) & (cand_j < len(seg))
            c = np.clip(cand_j, 0, len(seg) - 1)
            valid &= s_g[c] == groups
            a, b = np.maximum(s_lo[c], lo), np.minimum(s_hi[c], hi)
            valid &= a <= b
            x = np.clip(days, a, b)
            dist = np.abs(x - days)
            take = valid & (dist < best_dist)
            out[take], best_dist[take] = x[take], dist[take]
        return out


def edition_day(years: np.ndarray, series: SeriesSpec) -> np.ndarray:
    """The day (days since 1970) of a series' edition in each year."""
    first = (np.asarray(np.asarray(years) - 1970, "datetime64[Y]").astype("datetime64[M]") + (series.month - 1)).astype("datetime64[D]")
    return first.astype(np.int64) + (series.day - 1)


def year_of(days: np.ndarray) -> np.ndarray:
    return np.asarray(days, "datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970


class SeriesReach:
    """For a series' parent: the earliest start from which every edition up to `end` (one a
    year, the densest a series can be) can have its required link, per group. With
    `distinct` (the editions of one parent take distinct targets: an album wins each award
    once) the editions must be matched to targets one to one; else each needs `least` in reach.
    A start before it leaves some edition without its link."""

    def __init__(self, groups: np.ndarray, t_groups: np.ndarray, t_lo: np.ndarray, t_hi: np.ndarray, series: SeriesSpec,
                 first_year: int, end: int, least: int, distinct: bool = False, chunk: int = 20_000):
        years = np.arange(first_year, year_of(np.array([end]))[0] + 1, dtype=np.int64)
        days = edition_day(years, series)
        years, days = years[days <= end], days[days <= end]
        self.groups = np.unique(groups[groups >= 0])
        none = np.iinfo(np.int64).min
        last_bad = np.full(len(self.groups), none, np.int64)
        if distinct:
            keep = t_lo <= t_hi
            t_groups, t_lo, t_hi = t_groups[keep], t_lo[keep], t_hi[keep]
            order = np.argsort(t_groups, kind="stable")
            t_groups, t_lo, t_hi = t_groups[order], t_lo[order], t_hi[order]
            bounds = np.searchsorted(t_groups, np.r_[self.groups, np.iinfo(np.int64).max])
            for i in range(len(self.groups)):  # a group at a time: one backward pass over its years
                a, b = bounds[i], bounds[i + 1]
                k = _last_unmatched(days, t_lo[a:b], t_hi[a:b], least)
                last_bad[i] = years[k] if k >= 0 else none
        else:
            cov = Coverage(t_groups, t_lo, t_hi)
            for i in range(0, len(self.groups), chunk):  # groups x years at a time
                g = self.groups[i:i + chunk]
                short = cov.at(np.repeat(g, len(days)), np.tile(days, len(g))).reshape(len(g), len(days)) < least
                last = np.where(short.any(axis=1), len(days) - 1 - np.argmax(short[:, ::-1], axis=1), -1)
                last_bad[i:i + chunk] = np.where(last >= 0, years[np.maximum(last, 0)], none)
        # a start on or after the last short edition's day puts the first edition a year later
        self.earliest = np.where(last_bad > none, edition_day(np.maximum(last_bad, 1), series), NEG_INF)

    def earliest_start(self, groups: np.ndarray) -> np.ndarray:
        """Per parent row (by group): the earliest start whose editions all have targets in
        reach (NEG_INF for a group never short, or one unknown here)."""
        if len(self.groups) == 0:
            return np.full(len(groups), NEG_INF, np.int64)
        i = np.minimum(np.searchsorted(self.groups, groups), len(self.groups) - 1)
        return np.where(self.groups[i] == groups, self.earliest[i], NEG_INF)


class Reach:
    """One required relation's rule on a date, per row of the date's type: which rows' dates
    leave too few targets in reach (`short`), and the nearest date inside a window that does
    not (`nearest`, NEG_INF where none)."""

    def __init__(self, need: DateNeed, use: np.ndarray, groups: np.ndarray, cov: Coverage | None = None,
                 earliest: np.ndarray | None = None):
        self.need, self.use, self.groups, self.cov, self.earliest = need, use, groups, cov, earliest

    def short(self, rows: np.ndarray, days: np.ndarray) -> np.ndarray:
        if self.earliest is not None:
            return self.use[rows] & (days < self.earliest[rows])
        return self.use[rows] & (self.cov.at(self.groups[rows], days) < self.need.least)

    def nearest(self, rows: np.ndarray, days: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        if self.earliest is not None:
            x = np.maximum(np.maximum(days, self.earliest[rows]), lo)
            return np.where(x <= hi, x, NEG_INF)
        return self.cov.nearest(self.groups[rows], days, lo, hi, self.need.least)


def _last_unmatched(days: np.ndarray, lo: np.ndarray, hi: np.ndarray, per: int = 1) -> int:
    """The latest edition (index into ascending `days`) that cannot be given `per` targets of
    its own when the editions after it are served first, or -1. Going back in time, each
    edition takes, of the targets in reach, those whose reach ends soonest going back (the
    largest `lo`): this greedy serves every suffix of editions that can be served at all, so
    the editions after the one it returns can all be matched. With `per` 2 each edition keeps
    a spare: the planner draws winners by weight, not by this greedy, and needs the slack."""
    import heapq

    order = np.argsort(-hi, kind="stable")
    his, los = hi[order].tolist(), lo[order].tolist()
    heap: list[int] = []
    j = 0
    for i in range(len(days) - 1, -1, -1):
        d = int(days[i])
        while j < len(his) and his[j] >= d:
            heapq.heappush(heap, -los[j])
            j += 1
        while heap and -heap[0] > d:
            heapq.heappop(heap)
        if len(heap) < per:
            return i
        for _ in range(per):
            heapq.heappop(heap)
    return -1
