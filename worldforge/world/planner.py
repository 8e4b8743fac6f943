"""The world planner: a validated spec in, a frozen world (DuckDB store) out.

`generate_world` walks the pack's dependency graph (types, names, attributes, relations,
aliases) in a deterministic topological order and fills whole columns at a time from named
child generators. `plan_world` writes the result atomically, checks every invariant and only
then marks the world complete.

Plausibility is built in, not checked after the fact: dates derived from other dates are
drawn from distributions with day-level jitter, lifecycles bound every dated fact of an
entity, parts are scaled into their wholes, counts are counted, and links that must be
covered by other links are chosen among them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import PlanError
from .dependencies import dependency_graph, node_label
from .feasible import REDRAWN, Coverage, DateNeed, Reach, SeriesReach, date_needs, target_windows, year_of
from .links import LinkPlanner, active_sources, group_rank, is_real
from .naming import NamePlanner
from .pack import (
    CategoricalAttr,
    CodeAttr,
    CountAttr,
    DateAttr,
    DateBound,
    DerivedAttr,
    FakerAttr,
    LookupAttr,
    NumericAttr,
    RelationSpec,
    WeightSelect,
    clip,
    constant_date,
)
from .sampling import (
    NEG_INF,
    POS_INF,
    YEAR_DAYS,
    apply_offset,
    child_rng,
    duration_days,
    encode_groups,
    faker_pool,
    register_sql_functions,
    row_bounds,
    sample_days,
    sample_numeric,
    unique_codes,
)
from .spec import SQL_TYPES, ResolvedWorld, attribute_dtype, date_bounds, derived_query, lifecycle_end_bound, value_translation
from .store import WorldTables

EPOCH = dt.date(1970, 1, 1)
POLARS_DTYPES = {"string": pl.String, "int": pl.Int64, "float": pl.Float64, "date": pl.Date, "bool": pl.Boolean, "entity": pl.String}
SQL_DTYPES = SQL_TYPES
STAGE_YEARS = 20  # the years before as_of a stage's history covers (pages dated then state the stage of then)

StepHook = Callable[[str], None]


def to_days(d: dt.date) -> int:
    return (d - EPOCH).days


def generation_order(world: ResolvedWorld) -> list[tuple]:
    import networkx as nx

    return list(nx.lexicographical_topological_sort(dependency_graph(world, soft=True), key=repr))


class _Generator:
    def __init__(self, world: ResolvedWorld):
        self.world = world
        self.spec = world.spec
        self.seed = world.spec.seed
        self.types = world.types
        self.relations = world.relations
        self.parent_rel = {et.parent.relation: t for t, et in self.types.items() if et.parent}
        self.out = WorldTables()
        self.as_of = to_days(self.spec.as_of)
        self.span_start = to_days(self.spec.span_start)
        self.name_parts: dict[tuple[str, str], pl.Series] = {}  # parts an attribute is chosen by
        self.editions: dict[str, dict[str, np.ndarray]] = {}  # series types: year, ordinal, day per edition
        self.links = LinkPlanner(self)  # draws the relations' links (world.links)
        self.naming = NamePlanner(self)  # draws the names and aliases (world.naming)

    # ----------------------------------------------------------------- helpers

    def days(self, type_name: str, attr: str, fill: np.int64) -> np.ndarray:
        s = self.out.entities[type_name][attr]
        return s.to_physical().cast(pl.Int64).fill_null(fill).to_numpy()

    def _const(self, ref: str) -> int:
        return to_days(constant_date(ref, self.spec.as_of, self.spec.span_start))

    def attr_bound(self, type_name: str, b: DateBound, side: str) -> np.ndarray:
        """Bound values for every row of `type_name` (attribute context)."""
        n = self.out.entities[type_name].height
        fill = NEG_INF if side == "after" else POS_INF
        if b.constant:
            return apply_offset(np.full(n, self._const(b.ref), np.int64), b.years, b.days)
        parts = b.ref.split(".")
        if len(parts) == 1:
            return apply_offset(self.days(type_name, parts[0], fill), b.years, b.days)
        rel, attr = parts
        rs = self.relations[rel]
        e = self.out.edges[rel]
        vals = apply_offset(self.days(rs.target, attr, fill), b.years, b.days)[e["tgt"].to_numpy()]
        agg = pl.DataFrame({"src": e["src"], "v": vals}).group_by("src").agg(
            pl.col("v").max() if side == "after" else pl.col("v").min()
        )
        out = np.full(n, fill, dtype=np.int64)
        out[agg["src"].to_numpy()] = agg["v"].to_numpy()
        return out

    def rel_bound(self, rs: RelationSpec, b: DateBound, side: str, src: np.ndarray,
                  tgt: np.ndarray | None = None, valid_from: np.ndarray | None = None) -> np.ndarray:
        """Bound values per edge row (relation context)."""
        fill = NEG_INF if side == "after" else POS_INF
        if b.constant:
            base = np.full(len(src), self._const(b.ref), np.int64)
        elif b.ref == "valid_from":
            base = valid_from
        elif b.ref.count(".") == 2:  # source.<relation>.start: when the source's first link of it starts
            base = self.first_start(b.ref.split(".")[1], fill)[src]
        else:
            which, attr = b.ref.split(".")
            if which == "source":
                base = self.days(rs.source, attr, fill)[src]
            else:
                col = self.days(rs.target, attr, fill)
                # rows without a pick (-1) read the fill; a type without entities has no rows at all
                base = np.where(tgt >= 0, col[np.maximum(tgt, 0)], fill) if len(col) else np.full(len(tgt), fill, np.int64)
        return apply_offset(base, b.years, b.days)

    def first_start(self, rel: str, fill: np.int64) -> np.ndarray:
        """Per entity of the relation's source type: the day its first `rel` link starts (fill
        where it has none), from the links already planned (a bound reading them is planned after)."""
        e = self.out.edges[rel]
        out = np.full(self.out.entities[self.relations[rel].source].height, fill, np.int64)
        first = e.filter(pl.col("valid_from").is_not_null()).group_by("src").agg(pl.col("valid_from").min())
        out[first["src"].to_numpy()] = first["valid_from"].to_physical().cast(pl.Int64).to_numpy()
        return out

    def window(self, bounds_after, bounds_before, fn, soft=None) -> tuple:
        """(lo, hi) over the bounds (None where there are none); with `soft`, also per row
        whether the binding upper bound is soft (an age limit rather than as_of or an end)."""
        lo = hi = hard = None
        for b in bounds_after:
            v = fn(b, "after")
            lo = v if lo is None else np.maximum(lo, v)
        for b in bounds_before:
            v = fn(b, "before")
            s = soft(b) if soft else False
            if hi is None:
                hi, hard = v, np.full(len(v), s)
            else:
                take = v < hi
                hi, hard = np.where(take, v, hi), np.where(take, s, hard)
        return (lo, hi, hard) if soft else (lo, hi)

    def set_column(self, type_name: str, name: str, values: pl.Series) -> None:
        self.out.entities[type_name] = self.out.entities[type_name].with_columns(values.alias(name))

    def null_mask(self, type_name: str, attr_name: str, rate: float, s: pl.Series) -> pl.Series:
        if rate <= 0:
            return s
        rng = child_rng(self.seed, "null", type_name, attr_name)
        mask = rng.random(len(s)) < rate
        return pl.select(pl.when(pl.lit(pl.Series(mask))).then(pl.lit(None)).otherwise(pl.lit(s))).to_series().cast(s.dtype)

    def along(self, t: str, rel: str, target_values: pl.Series) -> pl.Series:
        """Per row of `t`: the value of the entity a to-one relation leads to (NULL without a link)."""
        e = self.out.edges[rel]
        n = self.out.entities[t].height
        left = pl.DataFrame({"__row": np.arange(n, dtype=np.int64)})
        right = pl.DataFrame({"__row": e["src"], "v": target_values.gather(e["tgt"])})
        return left.join(right, on="__row", how="left", maintain_order="left")["v"]

    def whole_index(self, t: str, via: str) -> tuple[np.ndarray, str]:
        """Per row of `t`: the row of the entity `via` (a to-one relation, or an entity-valued
        lookup) leads to, -1 without one; and that entity's type."""
        n = self.out.entities[t].height
        if via in self.relations:
            e = self.out.edges[via]
            idx = np.full(n, -1, np.int64)
            idx[e["src"].to_numpy()] = e["tgt"].to_numpy()
            return idx, self.relations[via].target
        attr = self.types[t].attributes[via]
        idx, target = self.whole_index(t, attr.via)
        if attr.attribute == "id":
            return idx, target
        deeper, whole = self.whole_index(target, attr.attribute)
        return np.where(idx >= 0, deeper[np.maximum(idx, 0)], -1), whole

    def given_values(self, t: str, given: str) -> pl.Series:
        if given.startswith("name."):
            return self.name_parts[(t, given.split(".", 1)[1])]
        return self.out.entities[t][given].cast(pl.String)

    def soft_bound(self, side_types: dict[str, str] | None = None) -> Callable[[DateBound], bool]:
        """Bounds a tenure cut at ends a little before: every bound but as_of and lifecycle ends."""
        return lambda b: not (b.ref == "as_of" and not b.years and not b.days) and not lifecycle_end_bound(self.world, b, side_types)

    # ----------------------------------------------------------------- nodes

    def make_type(self, t: str) -> None:
        et = self.types[t]
        rng = child_rng(self.seed, "type", t)
        parent_idx = None
        if et.parent is None:
            n = self.spec.counts.get(t, 0)
        elif et.parent.series is not None:
            parent_idx = self._editions(t, rng)
            n = len(parent_idx)
        else:
            n_par = self.out.entities[et.parent.type].height
            c = et.parent.count
            if et.parent.count_by:
                # Larger parents get more: the parent's percentile in the attribute sets the odds.
                x = self.out.entities[et.parent.type][et.parent.count_by].cast(pl.Float64)
                p = ((x.rank("average") - 0.5) / max(n_par, 1)).fill_null(0.5).fill_nan(0.5).to_numpy()
                k = c.min + rng.binomial(c.max - c.min, np.clip(p, 0.0, 1.0))
            else:
                k = rng.integers(c.min, c.max + 1, n_par)
            parent_idx = np.repeat(np.arange(n_par), k)
            n = len(parent_idx)
        self.out.entities[t] = pl.DataFrame({"__idx": np.arange(n, dtype=np.int64)})
        if et.parent is not None:
            self.out.edges[et.parent.relation] = pl.DataFrame({
                "src": np.arange(n, dtype=np.int64), "tgt": parent_idx.astype(np.int64),
                "valid_from": pl.Series([None] * n, dtype=pl.Date), "valid_to": pl.Series([None] * n, dtype=pl.Date),
            })

    def _editions(self, t: str, rng) -> np.ndarray:
        """A series' editions: per parent, one every `every` years on the series' day, after
        the parent's start and up to `until` (and the parent's end); the parent row of each
        edition. Keeps each edition's year, ordinal and day for its name and date."""
        et = self.types[t]
        par, sr = et.parent.type, et.parent.series
        n_par = self.out.entities[par].height
        start = self.days(par, sr.start, POS_INF)
        end = np.full(n_par, self._const(sr.until.ref) if sr.until is not None else self.as_of, np.int64)
        if sr.until is not None:
            end = apply_offset(end, sr.until.years, sr.until.days)
        lc = self.types[par].lifecycle
        if lc is not None and lc.end is not None:
            end = np.minimum(end, self.days(par, lc.end, POS_INF))
        every = rng.integers(sr.every.min, sr.every.max + 1, n_par)
        ok = is_real(start) & (start < end)

        def year_of(days: np.ndarray) -> np.ndarray:
            return np.asarray(days, "datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970

        def edition_day(years: np.ndarray) -> np.ndarray:
            first = (np.asarray(years - 1970, "datetime64[Y]").astype("datetime64[M]") + (sr.month - 1)).astype("datetime64[D]")
            return first.astype(np.int64) + (sr.day - 1)

        s0, e0 = np.where(ok, start, 0), np.where(ok, end, 0)
        y0 = year_of(s0)
        y0 = y0 + (edition_day(y0) <= s0)
        y1 = year_of(e0)
        y1 = y1 - (edition_day(y1) > e0)
        k = np.where(ok & (y1 >= y0), (y1 - y0) // every + 1, 0)
        parent_idx = np.repeat(np.arange(n_par), k)
        ordinal = group_rank(parent_idx) + 1
        years = y0[parent_idx] + (ordinal - 1) * every[parent_idx]
        self.editions[t] = {"year": years, "ordinal": ordinal, "day": edition_day(years)}
        return parent_idx

    def make_attr(self, t: str, a: str) -> None:
        try:
            self._make_attr(t, a)
        except PlanError as exc:
            pack_file = self.world.pack_files[self.world.pack_of_type(t)]
            raise PlanError(f"{t}.{a} ({pack_file}: types.{t}.attributes.{a}): {str(exc).removeprefix(f'{t}.{a}: ')}") from None

    def _make_attr(self, t: str, a: str) -> None:
        attr = self.types[t].attributes[a]
        n = self.out.entities[t].height
        rng = child_rng(self.seed, "attr", t, a)
        if isinstance(attr, FakerAttr):
            pool = pl.Series(faker_pool(attr.provider, self.spec.locale, attr.pool, self.seed), dtype=pl.String)
            s = pool.gather(rng.integers(0, len(pool), n))
        elif isinstance(attr, CategoricalAttr):
            s = self.categorical(t, attr, n, rng)
        elif isinstance(attr, NumericAttr):
            s = pl.Series(self._numeric(t, a, attr, n, rng))
            if attr.per is not None:  # no other figure, no rate of it
                s = s.scatter(np.flatnonzero(np.isnan(self._per_base(t, attr))), None)
        elif isinstance(attr, DateAttr) and t in self.editions and self.types[t].parent.series.date == a:
            s = pl.Series(self.editions[t]["day"].astype(np.int32)).cast(pl.Date)  # each edition's day
        elif isinstance(attr, DateAttr):
            s = self._date_attr(t, a, attr, rng)
        elif isinstance(attr, DerivedAttr):
            s = self._derived(t, attr)
        elif isinstance(attr, LookupAttr):
            rs = self.relations[attr.via]
            s = self.along(t, attr.via, self.out.entities[rs.target][attr.attribute])
        elif isinstance(attr, CountAttr):
            rs = self.relations[attr.relation]
            e = self.out.edges[attr.relation]
            if attr.current:
                e = e.filter(pl.col("valid_to").is_null())
            col = "tgt" if attr.side_for(t, rs) == "in" else "src"
            w = None if attr.sum is None else e[attr.sum].fill_null(0).to_numpy().astype(np.float64)
            s = pl.Series(np.rint(np.bincount(e[col].to_numpy(), weights=w, minlength=n)[:n]).astype(np.int64))
        elif isinstance(attr, CodeAttr):
            s = unique_codes(self.out.entities[t][attr.source], attr.length, attr.alphabet, rng, t)
        else:  # pragma: no cover - the spec's discriminated union has no other kinds
            raise PlanError(f"unsupported attribute kind for {t}.{a}")
        s = s.cast(POLARS_DTYPES[attribute_dtype(self.world, t, a)])
        self.set_column(t, a, self.null_mask(t, a, attr.null_rate, s))
        if isinstance(attr, DateAttr):
            stage = self._stage_rows(t, a)
            if stage is not None and stage[1] == "end":
                self._derive_stage(t, stage[0])

    def categorical(self, t: str, attr: CategoricalAttr, n: int, rng) -> pl.Series:
        if attr.dated_by is not None:
            return self._dated_categorical(t, attr, n, rng)
        weights = attr.weights()
        vals = list(weights)
        w = np.asarray(list(weights.values()), float)
        if attr.given is None:
            idx = rng.integers(0, len(vals), n) if isinstance(attr.values, list) else rng.choice(len(vals), size=n, p=w / w.sum())
            return pl.Series(vals, dtype=pl.String).gather(idx)
        given = self.given_values(t, attr.given)
        idx = np.zeros(n, np.int64)
        rest = np.ones(n, bool)
        for cond, cw in attr.cases.items():
            sel = (given == cond).fill_null(False).to_numpy()
            if sel.any():
                p = np.asarray([cw.get(v, 0.0) for v in vals], float)
                idx[sel] = rng.choice(len(vals), size=int(sel.sum()), p=p / p.sum())
                rest &= ~sel
        if rest.any():
            idx[rest] = rng.choice(len(vals), size=int(rest.sum()), p=w / w.sum())
        return pl.Series(vals, dtype=pl.String).gather(idx)

    def _dated_categorical(self, t: str, attr: CategoricalAttr, n: int, rng) -> pl.Series:
        """A category some of whose values exist only in some years: each row draws among the
        values of its case (or the defaults) that exist at its `dated_by` date (without a date,
        among the values of every year); a row whose date no value of its case covers takes the
        one that exists earliest."""
        weights = attr.weights()
        vals = list(weights)
        W = np.tile(np.asarray(list(weights.values()), float), (n, 1))
        if attr.given is not None:
            given = self.given_values(t, attr.given)
            for cond, cw in attr.cases.items():
                sel = (given == cond).fill_null(False).to_numpy()
                W[sel] = np.asarray([cw.get(v, 0.0) for v in vals], float)
        day = self.days(t, attr.dated_by, NEG_INF)  # no date: only the values of every year
        windows = attr.windows()
        ok = np.ones((n, len(vals)), bool)
        first = np.zeros(len(vals), np.int64)
        for j, v in enumerate(vals):
            since, until = windows.get(v, (None, None))
            if since is not None:
                ok[:, j] &= day >= to_days(since)
                first[j] = to_days(since)
            if until is not None:
                ok[:, j] &= day < to_days(until)
        P = W * ok
        none = P.sum(axis=1) <= 0
        if none.any():  # no value of its case exists then: the one that exists earliest
            earliest = np.where(W[none] > 0, first[None, :], np.iinfo(np.int64).max).argmin(axis=1)
            P[none] = 0.0
            P[np.flatnonzero(none), earliest] = 1.0
        c = np.cumsum(P, axis=1)
        idx = (c > rng.random(n)[:, None] * c[:, -1:]).argmax(axis=1)
        return pl.Series(vals, dtype=pl.String).gather(idx)

    # ----------------------------------------------------------------- numbers

    def _row_min(self, attr: NumericAttr, given: pl.Series | None, n: int) -> np.ndarray:
        lo = np.full(n, 0.0 if attr.min is None else max(attr.min, 0.0))
        for v in attr.cases if given is not None else ():
            c_lo, _ = attr.case_bounds(v)
            lo[(given == v).fill_null(False).to_numpy()] = 0.0 if c_lo is None else max(c_lo, 0.0)
        return lo

    def _per_base(self, t: str, attr: NumericAttr) -> np.ndarray:
        """Per row: the figure a `per` attribute is a rate of (NaN where there is none)."""
        per = attr.per
        if per.via is None:
            col, idx = self.out.entities[t][per.attribute], None
        else:
            idx, other = self.whole_index(t, per.via)
            col = self.out.entities[other][per.attribute]
        v = col.cast(pl.Float64).fill_null(np.nan).to_numpy()
        if idx is None:
            return v
        return np.where(idx >= 0, v[np.maximum(idx, 0)], np.nan)

    def _per_value(self, t: str, attr: NumericAttr, n: int, rng, given: pl.Series | None) -> np.ndarray:
        """A figure drawn as a rate of another (`per`): the rate within the per's bounds, times
        that figure over the unit, then within the attribute's own bounds (per case); 0 where the
        other figure is missing (the row is NULL)."""
        per = attr.per
        rate_attr = attr.model_copy(update={
            "min": per.min, "max": per.max, "integer": False, "decimals": None,
            "cases": {v: c.model_copy(update={"min": per.min, "max": per.max}) for v, c in attr.cases.items()}})
        rate = sample_numeric(rate_attr, n, rng, given).astype(float)
        base = self._per_base(t, attr)
        x = np.where(np.isnan(base), 0.0, rate * np.nan_to_num(base) / per.unit)
        lo, hi = row_bounds(attr, n, given)
        x = np.clip(x, lo, hi)
        if attr.integer:
            x = np.clip(np.rint(x), np.ceil(lo), np.floor(hi))
        elif attr.decimals is not None:  # on the attribute's grid, inside its bounds
            q = 10.0**attr.decimals
            x = np.clip(np.round(x * q) / q, np.ceil(lo * q - 1e-9) / q, np.floor(hi * q + 1e-9) / q)
        return x

    def _numeric(self, t: str, a: str, attr: NumericAttr, n: int, rng) -> np.ndarray:
        given = self.given_values(t, attr.given) if attr.given else None
        if attr.per is not None:
            x = self._per_value(t, attr, n, rng, given)
        else:
            x = sample_numeric(attr, n, rng, given).astype(float)
        if attr.part_of is not None:
            x = self._part_of(t, a, attr, x, self._row_min(attr, given, n), rng)
        if attr.at_most is not None:
            b = self.out.entities[t][attr.at_most].cast(pl.Float64).fill_null(np.inf).fill_nan(np.inf).to_numpy()
            lo = np.minimum(self._row_min(attr, given, n), b)
            over = x > b
            if over.any():  # a value above its bound: uniform between the minimum and the bound
                x[over] = lo[over] + rng.random(int(over.sum())) * (b[over] - lo[over])
                x = np.minimum(x, b)
        if attr.integer:
            return np.floor(x + 1e-9).astype(np.int64) if (attr.part_of or attr.at_most) else x.astype(np.int64)
        if attr.decimals is not None:
            x = np.floor(x * 10**attr.decimals + 1e-9) / 10**attr.decimals
        return x

    def make_series(self, t: str, a: str, attr) -> None:
        """The value of each of the last `changes.years` years before today's (the world's as_of
        year holds today's value), from the entity's start on; an entity whose life has ended keeps
        its last value (no series). A figure (`per_year`) is drawn backwards from today's by yearly
        changes, within the attribute's bounds; a category or a name (`every`) was replaced every
        so many years, each earlier value drawn from the values the other entities hold."""
        ch = attr.changes
        df = self.out.entities[t]
        et = self.types[t]
        keep = df[a].is_not_null().to_numpy()
        if df[a].dtype.is_float():
            keep &= ~df[a].is_nan().fill_null(True).to_numpy()
        lc = et.lifecycle
        if lc is not None and lc.end is not None:
            keep &= df[lc.end].is_null().to_numpy()
        year = self.spec.as_of.year
        first = np.full(df.height, year - ch.years + 1, np.int64)
        if lc is not None:
            start = df[lc.start].dt.year().cast(pl.Int64).fill_null(year - ch.years + 1).to_numpy()
            first = np.maximum(first, start)
        rows = np.flatnonzero(keep)
        k = ch.years - 1
        years = year - 1 - np.arange(k)  # column j: year - 1 - j
        rng = child_rng(self.seed, "series", t, a)
        value = text = None
        if ch.per_year is not None:
            growth = rng.uniform(ch.per_year[0], ch.per_year[1], (len(rows), k))
            now = df[a].cast(pl.Float64).to_numpy()[rows]
            past = now[:, None] / np.cumprod(1.0 + growth, axis=1)
            past = np.clip(past, -np.inf if attr.min is None else attr.min, np.inf if attr.max is None else attr.max)
            past = np.round(past) if attr.integer else np.round(past, attr.decimals if attr.decimals is not None else 3)
        else:
            lo, hi = ch.every
            terms = ch.years // lo + 2
            length = rng.integers(lo, hi + 1, (len(rows), terms))
            since = year - rng.integers(0, length[:, 0])  # today's value holds from this year on
            starts = since[:, None] - np.concatenate([np.zeros((len(rows), 1), np.int64), np.cumsum(length[:, 1:], axis=1)], axis=1)
            which = (starts[:, None, :] > years[None, :, None]).sum(axis=2)  # 0: today's value, j: the j-th before
            pool = df[a].to_numpy()[rows] if len(rows) else np.array([], object)
            drawn = rng.integers(0, max(1, len(pool)), (len(rows), terms + 1))
            vals = np.concatenate([pool[:, None], pool[drawn[:, 1:]] if len(pool) else drawn[:, 1:]], axis=1).astype(object)
            same = vals[:, 1:] == vals[:, :-1]  # a replacement that drew the value it replaces: the next one in the pool
            vals[:, 1:][same] = pool[(drawn[:, 1:][same] + 1) % max(1, len(pool))] if len(pool) else vals[:, 1:][same]
            past = np.take_along_axis(vals, np.minimum(which, terms), axis=1)
        ok = years[None, :] >= first[rows][:, None]
        r_idx, c_idx = np.nonzero(ok)
        ids = df["id"].gather(rows[r_idx]) if len(r_idx) else pl.Series("id", [], pl.String)
        if ch.per_year is not None:
            value, text = past[r_idx, c_idx], [None] * len(r_idx)
        else:
            value, text = [None] * len(r_idx), [str(x) for x in past[r_idx, c_idx]]
        self.out.series.append(pl.DataFrame({
            "subject": ids, "subject_type": pl.Series([t] * len(r_idx), dtype=pl.String),
            "predicate": pl.Series([a] * len(r_idx), dtype=pl.String),
            "year": pl.Series(years[c_idx], dtype=pl.Int32), "value": pl.Series(value, dtype=pl.Float64),
            "text": pl.Series(text, dtype=pl.String)}))

    def _part_of(self, t: str, a: str, attr: NumericAttr, x: np.ndarray, lo: np.ndarray, rng) -> np.ndarray:
        """Scale parts into their whole: each part at most share * whole, or the parts of a
        whole summing to at most that (all parts of an overfull whole shrink by one factor,
        keeping their proportions and minimums)."""
        po = attr.part_of
        idx, whole_t = self.whole_index(t, po.via)
        w = self.out.entities[whole_t][po.attribute].cast(pl.Float64).fill_null(np.inf).fill_nan(np.inf).to_numpy()
        has = idx >= 0
        cap = np.where(has, po.share * w[np.maximum(idx, 0)], np.inf)
        margin = 1.0 if attr.integer else (10.0 ** -attr.decimals if attr.decimals is not None else 0.0)
        if not po.sum:
            over = x > cap
            if over.any():
                low = np.minimum(lo[over], cap[over])
                x[over] = low + rng.random(int(over.sum())) * (cap[over] - low)
            return np.minimum(x, cap)
        n_w = len(w)
        g = np.where(has, idx, n_w)
        total = np.bincount(g, weights=x, minlength=n_w + 1)[:n_w]
        floor = np.bincount(g, weights=lo, minlength=n_w + 1)[:n_w]
        parts = np.bincount(g, minlength=n_w + 1)[:n_w]
        room = po.share * w - margin * parts  # rounding down each part keeps the sum under the cap
        over = total > room
        if not over.any():
            return x
        keep_min = room > floor
        f_keep = np.where(keep_min & over, (room - floor) / np.maximum(total - floor, 1e-300), 1.0)
        f_all = np.where(~keep_min & over, np.maximum(room, 0.0) / np.maximum(total, 1e-300), 1.0)
        gi = np.maximum(idx, 0)
        scaled_keep = lo + (x - lo) * f_keep[gi]
        scaled_all = x * f_all[gi]
        out = np.where(has & over[gi], np.where(keep_min[gi], scaled_keep, scaled_all), x)
        self.out.repairs[f"{t}.{a}: parts scaled into their whole"] = int((has & over[gi]).sum())
        return out

    # ----------------------------------------------------------------- dates

    def offset_draw(self, base: np.ndarray, offset, lo: np.ndarray, hi: np.ndarray, rng,
                    censor: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Dates `base + duration` inside [lo, hi]: draws outside are redrawn, then drawn
        uniformly inside. With `censor`, a draw after as_of is not an error but an event that
        has not happened yet: (dates, censored)."""
        n = len(base)
        known = is_real(base)
        v = np.where(known, base, 0) + duration_days(offset, n, rng)
        censored = np.zeros(n, bool)
        for _ in range(8):
            if censor:
                censored = known & (v > self.as_of)
            bad = np.nonzero(~censored & (~known | (v < lo) | (v > hi)))[0]
            if len(bad) == 0:
                break
            v[bad] = np.where(known[bad], base[bad], 0) + duration_days(offset, len(bad), rng)
        if censor:
            censored = known & (v > self.as_of)
        bad = ~censored & (~known | (v < lo) | (v > hi))
        if bad.any():  # uniform inside the window, and inside the duration's own range where both meet
            f_lo, f_hi = lo[bad], np.maximum(hi[bad], lo[bad])
            if offset.min is not None or offset.max is not None:
                scale = YEAR_DAYS if offset.unit == "years" else 1.0
                sign = -1.0 if offset.direction == "before" else 1.0
                ends = sorted([(-np.inf if offset.min is None else offset.min) * scale * sign,
                               (np.inf if offset.max is None else offset.max) * scale * sign])
                b = base[bad].astype(float)
                d_lo = np.maximum(f_lo, np.nan_to_num(b + ends[0], neginf=NEG_INF, posinf=POS_INF)).astype(np.int64)
                d_hi = np.minimum(f_hi, np.nan_to_num(b + ends[1], neginf=NEG_INF, posinf=POS_INF)).astype(np.int64)
                fits = known[bad] & (d_lo <= d_hi)
                f_lo, f_hi = np.where(fits, d_lo, f_lo), np.where(fits, d_hi, f_hi)
            v[bad] = sample_days(f_lo, f_hi, rng)
        return v, censored

    def _date_attr(self, t: str, a: str, attr: DateAttr, rng) -> pl.Series:
        n = self.out.entities[t].height
        after, before = date_bounds(self.world, t, a)
        lo, hi = self.window(after, before, lambda b, side: self.attr_bound(t, b, side))
        lo = np.full(n, self.span_start, np.int64) if lo is None else np.maximum(lo, self.span_start)
        hi = np.full(n, self.as_of, np.int64) if hi is None else np.minimum(hi, self.as_of)
        cased: list[tuple[str, list, list, np.ndarray]] = []  # (value, after, before, rows) of each case with bounds
        if attr.given is not None:  # more bounds for the rows of each case
            given = self.given_values(t, attr.given)
            for v, case in attr.cases.items():
                sel = (given == v).fill_null(False).to_numpy()
                if case.after or case.before:
                    cased.append((v, case.after, case.before, sel))
                c_lo, c_hi = self.window(case.after, case.before, lambda b, side: self.attr_bound(t, b, side))
                if c_lo is not None:
                    lo = np.where(sel, np.maximum(lo, c_lo), lo)
                if c_hi is not None:
                    hi = np.where(sel, np.minimum(hi, c_hi), hi)
        stage = self._stage_rows(t, a)
        if stage is not None:
            lo, hi = self._stage_window(t, a, stage, lo, hi, rng)
        empty = lo > hi
        if empty.any() and attr.null_rate <= 0:
            bounds = ", ".join([f"after {b}" for b in after] + [f"before {b}" for b in before])
            for v, c_after, c_before, sel in cased:  # the conditional bounds, with the rows each emptied
                if (empty & sel).any():
                    bounds += (f"; for the {int((empty & sel).sum()):,} empty rows whose {attr.given} is {v!r} also "
                               + ", ".join([f"after {b}" for b in c_after] + [f"before {b}" for b in c_before])
                               + f" (cases.{v})")
            raise PlanError(
                f"{t}.{a}: {int(empty.sum()):,} of {n:,} rows have an empty date window ({bounds}); "
                "loosen these bounds or the eligibility of the relations they depend on (a relation whose targets "
                "must be alive at a date of the source takes `at: source.<date>`)"
            )
        self.out.repairs[f"{t}.{a}: empty date window set to null"] = int(empty.sum())
        lo_, hi_ = np.where(empty, 0, lo), np.where(empty, 0, hi)
        missing = empty
        if attr.offset is not None:
            base = self.attr_bound(t, attr.offset.ref, "after")
            # a case's own duration for its rows (`cases.<v>.offset`), from the date's ref and direction
            by_case = [(sel, attr.offset.model_copy(update=attr.cases[v].offset.model_dump()))
                       for v, sel in ((v, (self.given_values(t, attr.given) == v).fill_null(False).to_numpy())
                                      for v in attr.cases if attr.cases[v].offset is not None)]

            def offsets(rows: np.ndarray, g) -> tuple[np.ndarray, np.ndarray]:
                if not by_case:
                    return self.offset_draw(base[rows], attr.offset, lo_[rows], hi_[rows], g, attr.censor)
                x, cens = np.zeros(len(rows), np.int64), np.zeros(len(rows), bool)
                rest = np.ones(len(rows), bool)
                for sel, off in by_case:
                    m = sel[rows] & rest
                    if m.any():
                        r_ = rows[m]
                        x[m], cens[m] = self.offset_draw(base[r_], off, lo_[r_], hi_[r_], g, attr.censor)
                        rest &= ~m
                if rest.any():
                    r_ = rows[rest]
                    x[rest], cens[rest] = self.offset_draw(base[r_], attr.offset, lo_[r_], hi_[r_], g, attr.censor)
                return x, cens

            v, censored = offsets(np.arange(n), rng)
            missing = empty | censored
            self.out.repairs[f"{t}.{a}: not yet happened (after as_of)"] = 0  # expected, not a repair

            def redraw(rows: np.ndarray, g) -> tuple[np.ndarray, np.ndarray]:
                x, cens = offsets(rows, g)
                return x, ~cens
        else:
            v = sample_days(lo_, hi_, rng)

            def redraw(rows: np.ndarray, g) -> tuple[np.ndarray, np.ndarray]:
                return sample_days(lo_[rows], hi_[rows], g), np.ones(len(rows), bool)
        if stage is not None:
            role, idx = stage[1], stage[2]
            if role == "end" and attr.offset is not None:  # a finished one's end fell before as_of
                late = (idx == 2) & missing & ~empty
                if late.any():
                    rows = np.flatnonzero(late)
                    v[rows], _ = self.offset_draw(base[rows], attr.offset, lo_[rows], hi_[rows],
                                                  child_rng(self.seed, "stage-end", t, a), censor=False)
                    missing = missing & ~late
            # not begun (planned), or not over (under way): no date yet
            missing = missing | (idx == 0) | ((idx == 1) if role == "end" else False)
        v = self._meet_date_needs(t, a, v, ~missing, lo_, hi_, redraw)
        s = pl.Series(np.where(missing, 0, v).astype(np.int32)).cast(pl.Date)
        if missing.any():
            s = pl.select(pl.when(pl.lit(pl.Series(missing))).then(None).otherwise(pl.lit(s))).to_series()
        return s

    def _stage_rows(self, t: str, a: str) -> tuple[str, str, np.ndarray] | None:
        """(the stage attribute, 'start' or 'end', each row's stage: 0 planned, 1 under way, 2
        finished) when `t.a` is a date a stage reads (`pack.Stages`), else None."""
        for s_name, sa in self.types[t].attributes.items():
            if isinstance(sa, CategoricalAttr) and sa.stages is not None and a in (sa.stages.start, sa.stages.end):
                order = {v: i for i, v in enumerate(sa.stage_values()) if v is not None}
                drawn = self.out.entities[t][s_name].to_numpy()
                idx = np.fromiter((order.get(x, 1) for x in drawn), np.int64, len(drawn)) if len(drawn) else np.zeros(0, np.int64)
                return s_name, "start" if a == sa.stages.start else "end", idx
        return None

    def _stage_window(self, t: str, a: str, stage: tuple, lo: np.ndarray, hi: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
        """A stage's start drawn where the stage drawn for each row holds at as_of: one under way
        began within one of its durations before as_of (the end's offset, drawn here), a
        finished one early enough to have ended by then (the duration's minimum). A window the
        row's other bounds leave no room for keeps them (its stage is then what its dates say)."""
        s_name, role, idx = stage
        if role != "start":
            return lo, hi
        sa = self.types[t].attributes[s_name]
        end = self.types[t].attributes[sa.stages.end]
        off = end.offset if isinstance(end, DateAttr) and end.offset is not None and end.offset.ref.ref == a else None
        lo, hi = lo.copy(), hi.copy()
        during, done = idx == 1, idx == 2
        if off is not None and during.any():
            dur = np.abs(duration_days(off, int(during.sum()), child_rng(self.seed, "stage-span", t, a)))
            want = np.maximum(lo[during], self.as_of - np.maximum(dur, 1) + 1)
            lo[during] = np.where(want <= hi[during], want, lo[during])
        if done.any():
            gap = 1
            if off is not None and off.min is not None:
                gap = max(1, int(off.min * (YEAR_DAYS if off.unit == "years" else 1.0)))
            want = np.minimum(hi[done], self.as_of - gap)
            hi[done] = np.where(want >= lo[done], want, hi[done])
        return lo, hi

    def _derive_stage(self, t: str, s_name: str) -> None:
        """A stage as its dates say at as_of (after the end is drawn): no start yet, planned; a
        start and no end, under way; an end, finished."""
        sa = self.types[t].attributes[s_name]
        before, during, after = sa.stage_values()
        df = self.out.entities[t]
        st, en = df[sa.stages.start].is_not_null(), df[sa.stages.end].is_not_null()
        value = pl.when(en).then(pl.lit(after)).when(st | pl.lit(before is None)).then(pl.lit(during)).otherwise(pl.lit(before))
        self.set_column(t, s_name, df.select(value.cast(pl.String)).to_series().cast(df[s_name].dtype))

    def make_stage_series(self, t: str, a: str, attr: CategoricalAttr) -> None:
        """A stage's value in each of the last STAGE_YEARS years before as_of (at mid-year),
        from the entity's start on: a page dated then states the stage of then."""
        df = self.out.entities[t]
        before, during, after = attr.stage_values()
        year = self.spec.as_of.year
        first = np.full(df.height, year - STAGE_YEARS, np.int64)
        lc = self.types[t].lifecycle
        if lc is not None:
            first = np.maximum(first, df[lc.start].dt.year().cast(pl.Int64).fill_null(year).to_numpy())
        rows = np.flatnonzero(first < year)
        years = year - 1 - np.arange(STAGE_YEARS)
        ok = years[None, :] >= first[rows][:, None]
        r_idx, c_idx = np.nonzero(ok)
        mid = np.array([to_days(dt.date(int(y), 7, 1)) for y in years], np.int64)[c_idx]
        start = self.days(t, attr.stages.start, POS_INF)[rows[r_idx]]
        end = self.days(t, attr.stages.end, POS_INF)[rows[r_idx]]
        which = np.where(end <= mid, 2, np.where(start <= mid, 1, 0))
        tr = value_translation(self.world, t, a)  # run after the values are put in the world's language
        names = np.array([tr.get(v, v) for v in (before if before is not None else during, during, after)], dtype=object)
        self.out.series.append(pl.DataFrame({
            "subject": df["id"].gather(rows[r_idx]) if len(r_idx) else pl.Series("id", [], pl.String),
            "subject_type": pl.Series([t] * len(r_idx), dtype=pl.String),
            "predicate": pl.Series([a] * len(r_idx), dtype=pl.String),
            "year": pl.Series(years[c_idx], dtype=pl.Int32), "value": pl.Series([None] * len(r_idx), dtype=pl.Float64),
            "text": pl.Series(names[which].tolist(), dtype=pl.String)}))

    def _meet_date_needs(self, t: str, a: str, v: np.ndarray, drawn: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                         redraw: Callable) -> np.ndarray:
        """Dates of `t.a` at which every required link that depends on them can find a target
        (see `feasible`): a row where too few targets could be linked is drawn again from the
        attribute's distribution (`redraw(rows, rng) -> (days, usable)`), then moved to the
        nearest date inside its window where enough could. Other rows are left as drawn."""
        checks = [c for c in (self._reach(t, need, len(v), drawn) for need in date_needs(self.world, t, a)) if c is not None]
        if not checks:
            return v

        def short(rows: np.ndarray, days: np.ndarray) -> np.ndarray:
            out = np.zeros(len(rows), bool)
            for c in checks:
                out |= c.short(rows, days)
            return out

        bad = np.flatnonzero(short(np.arange(len(v)), v))
        if len(bad) == 0:
            return v
        v = v.copy()
        first = len(bad)
        rng = child_rng(self.seed, "feasible", t, a)
        for _ in range(32):  # the attribute's own distribution, conditioned on a target being in reach
            if len(bad) == 0:
                break
            x, usable = redraw(bad, rng)
            good = usable & ~short(bad, x)
            v[bad[good]] = x[good]
            bad = bad[~good]
        for c in checks:  # then the nearest date in reach, inside the row's window
            if len(bad) == 0:
                break
            x = c.nearest(bad, v[bad], lo[bad], hi[bad])
            found = x > NEG_INF // 2
            trial = np.where(found, x, v[bad])
            good = found & ~short(bad, trial)
            v[bad[good]] = trial[good]
            bad = bad[~good]
        names = ", ".join(sorted({c.need.relation for c in checks}))
        self.out.repairs[f"{t}.{a}: {REDRAWN} ({names})"] = first - len(bad)
        return v

    def _reach(self, t: str, need: DateNeed, n: int, drawn: np.ndarray) -> Reach | None:
        """The rule `need` puts on the dates of `t`'s `n` rows (None where the targets' dates
        are not drawn yet: a cycle the planner cannot order around)."""
        rs = need.spec
        T = self.out.entities[rs.target]
        if rs.target == t or not all(x in T.columns for x in need.target_attributes()):
            return None
        ok_t = np.ones(T.height, bool)
        if isinstance(rs.select, WeightSelect):
            ok_t &= T[rs.select.weight].cast(pl.Float64).fill_null(0.0).to_numpy() > 0
        group = need.group_attribute(self.world)
        S = self.out.entities[t]
        if group is not None and group in S.columns:
            g_src, g_tgt = encode_groups(S[group], T[rs.same.target])
        else:
            g_src, g_tgt = np.zeros(n, np.int64), np.zeros(T.height, np.int64)
        t_lo, t_hi, ok_t = target_windows(need, lambda x, fill: self.days(rs.target, x, fill), self._const, ok_t)
        use = drawn & (g_src >= 0)
        if need.series is None:
            cov = Coverage(np.where(ok_t, g_tgt, -1), t_lo, t_hi)
            active = np.zeros(n, bool)
            active[active_sources(child_rng(self.seed, "rel", need.relation), rs.rate, n)] = True
            return Reach(need, use & active, g_src, cov=cov)
        sr = need.series
        end = self._const(sr.until.ref) if sr.until is not None else self.as_of
        if sr.until is not None:
            end = int(apply_offset(np.array([end], np.int64), sr.until.years, sr.until.days)[0])
        reach = SeriesReach(g_src[use], np.where(ok_t, g_tgt, -1), t_lo, t_hi, sr, int(year_of(np.array([self.span_start]))[0]),
                            end, need.least, distinct=need.distinct_per_parent(self.world))
        return Reach(need, use, g_src, earliest=reach.earliest_start(g_src))

    def _derived(self, t: str, attr: DerivedAttr) -> pl.Series:
        import duckdb

        from .invariants import QueryTimeout, run_limited

        frame = self.out.entities[t].with_row_index("__row")
        con = duckdb.connect()
        try:
            register_sql_functions(con)
            con.register("frame", frame.to_arrow(compat_level=pl.CompatLevel.oldest()))
            try:
                res = run_limited(con, lambda: con.sql(derived_query(attr, self.spec)).pl())
            except QueryTimeout as exc:
                raise PlanError(f"the derived SQL {exc}; simplify it") from None
            except duckdb.Error as exc:
                raise PlanError(self._derived_failure(con, frame, attr, exc)) from None
        finally:
            con.close()
        v = res["v"]
        if len(v) != frame.height:
            raise PlanError(f"the derived SQL gave {len(v):,} values for {frame.height:,} rows; it must give one value per row "
                            "(no aggregates or set-returning functions)")
        bad = None
        if attr.dtype == "float":
            bad = (v.is_nan() | v.is_infinite()).fill_null(False)
        elif attr.dtype == "date":
            bad = ((v < dt.date(1, 1, 1)) | (v > dt.date(9999, 12, 31))).fill_null(False)
        if bad is not None and bad.any():
            i = int(bad.arg_true()[0])
            what = "an infinite or NaN number" if attr.dtype == "float" else "a date outside 0001-01-01..9999-12-31"
            raise PlanError(f"the derived SQL gives {what} ({v.cast(pl.String)[i]}) for '{frame['name'][i]}' ({frame['id'][i]}) and "
                            f"{int(bad.sum()) - 1:,} other row(s); guard it, e.g. CASE WHEN isfinite(x) THEN x END")
        return v

    def _derived_failure(self, con, frame: pl.DataFrame, attr: DerivedAttr, exc: Exception) -> str:
        """Name the first row the derived SQL fails on (bisecting the rows), with the values it reads."""
        import duckdb

        from .dependencies import sql_names
        from .invariants import QueryTimeout, run_limited

        msg = str(exc).splitlines()[0]

        def fails(lo: int, hi: int) -> bool:
            q = derived_query(attr, self.spec, where=f"WHERE __row >= {lo} AND __row < {hi} ")
            try:
                run_limited(con, lambda: con.execute(q).fetchall())
            except (duckdb.Error, QueryTimeout):
                return True
            return False

        lo, hi = 0, frame.height
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fails(lo, mid):
                hi = mid
            elif fails(mid, hi):
                lo = mid
            else:
                break
        if hi - lo != 1 or not fails(lo, hi):
            return f"the derived SQL fails on the generated rows: {msg}"
        row = frame.row(lo, named=True)
        cols = [c for c in frame.columns if c in (sql_names(attr.sql) or set()) and c != "__row"] or ["name"]
        vals = ", ".join(f"{c}={clip(row[c])}" for c in cols[:6])
        return f"the derived SQL fails on '{row['name']}' ({row['id']}), where {vals}: {msg}; guard the expression (e.g. TRY_CAST)"


    # ----------------------------------------------------------------- relations

    def translate_values(self) -> None:
        """Categorical values (and lookups copying them) in the world's language, once everything
        that reads the pack's own values (conditional weights, name parts, derived SQL) has run."""
        for t, et in self.types.items():
            df = self.out.entities[t]
            cols = {a: value_translation(self.world, t, a) for a in et.attributes}
            cols = {a: m for a, m in cols.items() if m and a in df.columns}
            if cols:
                self.out.entities[t] = df.with_columns(pl.col(a).replace(m) for a, m in cols.items())
        for r, rs in self.relations.items():  # and a link's own values (a member's role)
            cols = {a: attr.translation(self.spec.language) for a, attr in rs.attributes.items()}
            cols = {a: m for a, m in cols.items() if m and r in self.out.edges}
            if cols:
                self.out.edges[r] = self.out.edges[r].with_columns(pl.col(a).replace(m) for a, m in cols.items())

    def run(self, on_step: StepHook | None = None) -> WorldTables:
        for node in generation_order(self.world):
            if on_step:
                on_step(node_label(node))
            kind = node[0]
            if kind == "type":
                self.make_type(node[1])
            elif kind == "name":
                self.naming.make_name(node[1])
            elif kind == "rename":
                self.naming.derive_names(node[1])
            elif kind == "attr":
                self.make_attr(node[1], node[2])
            elif kind == "rel":
                self.links.make_relation(node[1])
            elif kind == "linkattr":
                self.links.make_link_entity(node[1], node[2])
            elif kind == "aliases":
                self.naming.make_aliases(node[1])
        self.translate_values()
        for t, et in self.types.items():
            for a, attr in et.attributes.items():
                if getattr(attr, "changes", None) is not None and not attr.hidden:
                    self.make_series(t, a, attr)
                elif isinstance(attr, CategoricalAttr) and attr.stages is not None and not attr.hidden:
                    self.make_stage_series(t, a, attr)
        for t, et in self.types.items():  # declared column order
            cols = ["id", "name", *et.attributes]
            self.out.entities[t] = self.out.entities[t].select(cols)
        self.out.repairs = {k: v for k, v in self.out.repairs.items() if v}
        return self.out


def generate_world(world: ResolvedWorld, on_step: StepHook | None = None) -> WorldTables:
    """Generate every table of a world in memory; deterministic for a spec and seed."""
    return _Generator(world).run(on_step)


def count_steps(world: ResolvedWorld) -> int:
    return len(generation_order(world))


BYTES_PER_CELL = 24  # a generous floor on what one stored value of one entity costs while planning (columns, indexes, copies)


def _available_memory() -> int | None:
    """Bytes this process can still allocate: the machine's MemAvailable, less than that under an
    address-space limit (`ulimit -v`); None where neither is known."""
    import resource

    free = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                free = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1):
        try:
            used = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
        except (OSError, ValueError, IndexError):
            used = 0
        free = min(free if free is not None else soft, max(0, soft - used))
    return free


def check_memory(world: ResolvedWorld) -> None:
    """Refuse, in one line, a world whose tables alone cannot fit in the memory left: Polars
    aborts the process when an allocation fails (SIGABRT and a Rust backtrace), so the size is
    checked before any is made. The floor is an underestimate: a world that passes may still
    not fit, one that fails never would."""
    from .spec import expected_counts

    counts = expected_counts(world)
    need = 0.0
    for t, (_lo, mid, _hi) in counts.items():
        et = world.types[t]
        links = sum(1 for r in world.relations.values() if r.source == t)
        need += mid * (len(et.attributes) + links + 2) * BYTES_PER_CELL
    free = _available_memory()
    if free is not None and need > free:
        biggest = max(counts.items(), key=lambda kv: kv[1][1])
        raise PlanError(f"out of memory: this world's tables need at least {need / 2**30:,.1f} GiB and {free / 2**30:,.1f} GiB "
                        f"are free ({biggest[0]}: about {biggest[1][1]:,.0f} entities); lower the world's counts or plan on a "
                        "machine with more memory")


def plan_world(world: ResolvedWorld, build_dir: str | Path = "build", force: bool = False,
               on_step: StepHook | None = None):
    """Plan a world into `<build_dir>/<name>/`: generate, write atomically, check every
    invariant, then mark complete. Returns the `WorldInfo` of the stored world."""
    from .invariants import check_connection
    from .store import write_world

    check_memory(world)
    tables = generate_world(world, on_step)
    return write_world(world, tables, Path(build_dir), lambda con: check_connection(con, world), force=force, on_step=on_step)


