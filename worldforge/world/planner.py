"""The world planner: a validated spec in, a frozen world (DuckDB store) out.

`generate_world` walks the pack's dependency graph (types, attributes, relations, aliases)
in a deterministic topological order and fills whole columns at a time from named child
generators. `plan_world` writes the result atomically, checks every invariant and only
then marks the world complete."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import PlanError
from .dependencies import dependency_graph, node_label
from .pack import CONSTANT_REFS, CategoricalAttr, DateAttr, DateBound, DerivedAttr, FakerAttr, LookupAttr, NumericAttr, RelationSpec, WeightSelect, clip
from .sampling import (
    NEG_INF,
    POS_INF,
    NameSampler,
    TargetIndex,
    apply_offset,
    child_rng,
    encode_groups,
    entity_ids,
    faker_pool,
    fitness_weights,
    sample_days,
    sample_numeric,
)
from .spec import SQL_TYPES, ResolvedWorld, attribute_dtype, derived_query
from .store import WorldTables

EPOCH = dt.date(1970, 1, 1)
POLARS_DTYPES = {"string": pl.String, "int": pl.Int64, "float": pl.Float64, "date": pl.Date, "bool": pl.Boolean, "entity": pl.String}
SQL_DTYPES = SQL_TYPES

StepHook = Callable[[str], None]


def to_days(d: dt.date) -> int:
    return (d - EPOCH).days





def generation_order(world: ResolvedWorld) -> list[tuple]:
    import networkx as nx

    return list(nx.lexicographical_topological_sort(dependency_graph(world), key=repr))


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

    # ----------------------------------------------------------------- helpers

    def days(self, type_name: str, attr: str, fill: np.int64) -> np.ndarray:
        s = self.out.entities[type_name][attr]
        return s.to_physical().cast(pl.Int64).fill_null(fill).to_numpy()

    def _const(self, ref: str) -> int:
        return self.as_of if ref == "as_of" else self.span_start

    def attr_bound(self, type_name: str, b: DateBound, side: str) -> np.ndarray:
        """Bound values for every row of `type_name` (attribute context)."""
        n = self.out.entities[type_name].height
        fill = NEG_INF if side == "after" else POS_INF
        if b.ref in CONSTANT_REFS:
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
        if b.ref in CONSTANT_REFS:
            base = np.full(len(src), self._const(b.ref), np.int64)
        elif b.ref == "valid_from":
            base = valid_from
        else:
            which, attr = b.ref.split(".")
            if which == "source":
                base = self.days(rs.source, attr, fill)[src]
            else:
                col = self.days(rs.target, attr, fill)
                # rows without a pick (-1) read row 0; a type without entities has no row 0 at all
                base = col[np.maximum(tgt, 0)] if len(col) else np.full(len(tgt), fill, np.int64)
        return apply_offset(base, b.years, b.days)

    def window(self, bounds_after, bounds_before, fn) -> tuple[np.ndarray, np.ndarray]:
        lo = None
        hi = None
        for b in bounds_after:
            v = fn(b, "after")
            lo = v if lo is None else np.maximum(lo, v)
        for b in bounds_before:
            v = fn(b, "before")
            hi = v if hi is None else np.minimum(hi, v)
        return lo, hi

    def set_column(self, type_name: str, name: str, values: pl.Series) -> None:
        self.out.entities[type_name] = self.out.entities[type_name].with_columns(values.alias(name))

    def null_mask(self, type_name: str, attr_name: str, rate: float, s: pl.Series) -> pl.Series:
        if rate <= 0:
            return s
        rng = child_rng(self.seed, "null", type_name, attr_name)
        mask = rng.random(len(s)) < rate
        return pl.select(pl.when(pl.lit(pl.Series(mask))).then(pl.lit(None)).otherwise(pl.lit(s))).to_series().cast(s.dtype)

    # ----------------------------------------------------------------- nodes

    def make_type(self, t: str) -> None:
        et = self.types[t]
        rng = child_rng(self.seed, "type", t)
        parent_idx = None
        if et.parent is None:
            n = self.spec.counts.get(t, 0)
        else:
            n_par = self.out.entities[et.parent.type].height
            k = rng.integers(et.parent.count.min, et.parent.count.max + 1, n_par)
            parent_idx = np.repeat(np.arange(n_par), k)
            n = len(parent_idx)
        names = NameSampler(t, et.name, self.spec.locale, self.seed).unique(n, child_rng(self.seed, "names", t))
        ids = entity_ids(t, names, self.seed)
        if ids.n_unique() != n:
            raise PlanError(f"id collision in type '{t}'; change the seed")
        self.out.entities[t] = pl.DataFrame({"id": ids, "name": names})
        if et.parent is not None:
            self.out.edges[et.parent.relation] = pl.DataFrame({
                "src": np.arange(n, dtype=np.int64), "tgt": parent_idx.astype(np.int64),
                "valid_from": pl.Series([None] * n, dtype=pl.Date), "valid_to": pl.Series([None] * n, dtype=pl.Date),
            })

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
            vals = attr.values
            if isinstance(vals, dict):
                w = np.asarray(list(vals.values()), float)
                idx = rng.choice(len(vals), size=n, p=w / w.sum())
                vals = list(vals)
            else:
                idx = rng.integers(0, len(vals), n)
            s = pl.Series(vals, dtype=pl.String).gather(idx)
        elif isinstance(attr, NumericAttr):
            s = pl.Series(sample_numeric(attr, n, rng))
        elif isinstance(attr, DateAttr):
            s = self._date_attr(t, a, attr, rng)
        elif isinstance(attr, DerivedAttr):
            s = self._derived(t, attr)
        elif isinstance(attr, LookupAttr):
            s = self._lookup(t, attr)
        else:  # pragma: no cover - the spec's discriminated union has no other kinds
            raise PlanError(f"unsupported attribute kind for {t}.{a}")
        s = s.cast(POLARS_DTYPES[attribute_dtype(self.world, t, a)])
        self.set_column(t, a, self.null_mask(t, a, attr.null_rate, s))

    def _date_attr(self, t: str, a: str, attr: DateAttr, rng) -> pl.Series:
        n = self.out.entities[t].height
        lo, hi = self.window(attr.after, attr.before, lambda b, side: self.attr_bound(t, b, side))
        lo = np.full(n, self.span_start, np.int64) if lo is None else np.maximum(lo, self.span_start)
        hi = np.full(n, self.as_of, np.int64) if hi is None else np.minimum(hi, self.as_of)
        empty = lo > hi
        if empty.any() and attr.null_rate <= 0:
            bounds = ", ".join([f"after {b}" for b in attr.after] + [f"before {b}" for b in attr.before])
            raise PlanError(
                f"{t}.{a}: {int(empty.sum()):,} of {n:,} rows have an empty date window ({bounds}); "
                "loosen these bounds or the eligibility of the relations they depend on"
            )
        self.out.repairs[f"{t}.{a}: empty date window set to null"] = int(empty.sum())
        v = sample_days(np.where(empty, 0, lo), np.where(empty, 0, hi), rng)
        s = pl.Series(v.astype(np.int32)).cast(pl.Date)
        if empty.any():
            s = pl.select(pl.when(pl.lit(pl.Series(empty))).then(None).otherwise(pl.lit(s))).to_series()
        return s

    def _derived(self, t: str, attr: DerivedAttr) -> pl.Series:
        import duckdb

        from .invariants import QueryTimeout, run_limited

        frame = self.out.entities[t].with_row_index("__row")
        con = duckdb.connect()
        try:
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

    def _lookup(self, t: str, attr: LookupAttr) -> pl.Series:
        rs = self.relations[attr.via]
        e = self.out.edges[attr.via]
        vals = self.out.entities[rs.target][attr.attribute].gather(e["tgt"])
        n = self.out.entities[t].height
        left = pl.DataFrame({"__row": np.arange(n, dtype=np.int64)})
        right = pl.DataFrame({"__row": e["src"], "v": vals})
        return left.join(right, on="__row", how="left", maintain_order="left")["v"]

    def make_relation(self, r: str) -> None:
        rs = self.relations[r]
        rng = child_rng(self.seed, "rel", r)
        S = self.out.entities[rs.source]
        T = self.out.entities[rs.target]
        n_s, n_t = S.height, T.height
        active = np.nonzero(rng.random(n_s) < rs.rate)[0] if rs.rate < 1 else np.arange(n_s)
        cr = rs.count_range
        k = rng.integers(cr.min, cr.max + 1, len(active))
        valid_from = valid_to = None
        if rs.history:
            src, valid_from, valid_to = self._history(r, rs, active, k, rng)
        else:
            src = np.repeat(active, k)
        m = len(src)

        # Eligibility: group (locality) and key window on a target date attribute.
        if rs.same:
            s_vals = S[rs.same.source].gather(src)
            g_src, g_tgt = encode_groups(s_vals, T[rs.same.target])
        else:
            g_src, g_tgt = np.zeros(m, np.int64), np.zeros(n_t, np.int64)
        if isinstance(rs.select, WeightSelect):
            w = T[rs.select.weight].cast(pl.Float64).fill_null(0.0).to_numpy().clip(0, None)
            if not np.isfinite(w.sum()):  # huge weights: rescale so that cumulative sums stay finite
                w = np.nan_to_num(w, nan=0.0, posinf=np.finfo(float).max)
                w = w / w.max() * (1.0 / max(len(w), 1))
        elif rs.select == "preferential":
            w = fitness_weights(n_t, rs.alpha, child_rng(self.seed, "fitness", r))
        else:
            w = np.ones(n_t)
        if rs.eligible:
            key = T[rs.eligible.attribute].to_physical().cast(pl.Int64)
            w = np.where(key.is_null().to_numpy(), 0.0, w)
            key = key.fill_null(0).to_numpy()
            el = rs.eligible
            lo = self.rel_bound(rs, el.after, "after", src, valid_from=valid_from) if el.after else np.full(m, NEG_INF)
            hi = self.rel_bound(rs, el.before, "before", src, valid_from=valid_from) if el.before else np.full(m, POS_INF)
        else:
            key = np.zeros(n_t, np.int64)
            lo, hi = np.zeros(m, np.int64), np.zeros(m, np.int64)
        index = TargetIndex(g_tgt, key, w)

        picks = np.full(m, -1, dtype=np.int64)
        settled_round = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
        pending = np.arange(m)
        unfillable = np.zeros(m, bool)
        redrawn = 0
        for rnd in range(16):
            if len(pending) == 0:
                break
            if rnd:
                redrawn += len(pending)
            got = index.pick(g_src[pending], lo[pending], hi[pending], rng)
            unfillable[pending[got < 0]] = True
            picks[pending] = got
            settled_round[pending] = rnd
            conflict = self._conflicts(rs, src, picks, settled_round, n_t)
            if rs.date:
                d_lo, d_hi = self._event_window(rs, src, picks)
                conflict |= (picks >= 0) & (d_lo > d_hi)
            picks[conflict] = -1
            settled_round[conflict] = np.iinfo(np.int64).max
            pending = np.nonzero(conflict & ~unfillable)[0]
            if rs.target_unique:
                used = np.zeros(n_t, bool)
                used[picks[picks >= 0]] = True
                index.set_excluded(used)
        keep = picks >= 0
        self.out.repairs[f"relation {r}: targets redrawn"] = redrawn
        self.out.repairs[f"relation {r}: links dropped (no eligible target)"] = int((~keep).sum())

        src, tgt = src[keep], picks[keep]
        if rs.history:
            valid_from, valid_to = valid_from[keep], valid_to[keep]
        elif rs.date:
            d_lo, d_hi = self._event_window(rs, src, tgt)
            valid_from = sample_days(d_lo, d_hi, child_rng(self.seed, "rel-date", r))
            valid_to = np.full(len(src), POS_INF)
        elif rs.since:
            valid_from = np.clip(self.rel_bound(rs, rs.since, "after", src, tgt), self.span_start, self.as_of)
            valid_to = np.full(len(src), POS_INF)
        if rs.acyclic:
            src, tgt, valid_from, valid_to = self._break_cycles(r, src, tgt, valid_from, valid_to)
        if rs.required:
            missing = np.setdiff1d(active, src)
            if len(missing):
                raise PlanError(
                    f"relation '{r}' is required but {len(missing):,} '{rs.source}' entities found no eligible "
                    f"'{rs.target}' (cardinality {rs.cardinality}); raise the '{rs.target}' count or loosen its eligibility"
                )
        self.out.edges[r] = self._edge_frame(src, tgt, valid_from, valid_to)

    def _edge_frame(self, src, tgt, valid_from, valid_to) -> pl.DataFrame:
        def dates(v):
            if v is None:
                return pl.Series([None] * len(src), dtype=pl.Date)
            v = np.asarray(v, dtype=np.int64)
            s = pl.Series(np.where(v >= POS_INF, 0, v).astype(np.int32)).cast(pl.Date)
            return pl.select(pl.when(pl.lit(pl.Series(v >= POS_INF))).then(None).otherwise(pl.lit(s))).to_series()

        df = pl.DataFrame({"src": np.asarray(src, np.int64), "tgt": np.asarray(tgt, np.int64),
                           "valid_from": dates(valid_from), "valid_to": dates(valid_to)})
        return df.sort(["src", "valid_from", "tgt"], nulls_last=True)

    def _conflicts(self, rs: RelationSpec, src, picks, settled_round, n_t) -> np.ndarray:
        """Rows whose pick breaks a rule: self links, repeated pairs, a unique target used twice.
        Earlier-settled rows keep their pick; the rest are redrawn."""
        m = len(src)
        has = picks >= 0
        conflict = np.zeros(m, bool)
        if rs.source == rs.target:
            conflict |= has & (picks == src)
        prio = np.lexsort((np.arange(m), settled_round))

        def not_first(keys: np.ndarray) -> np.ndarray:
            rows = prio[has[prio]]
            _, first = np.unique(keys[rows], return_index=True)
            nf = np.zeros(m, bool)
            nf[rows] = True
            nf[rows[first]] = False
            return nf

        conflict |= not_first(src.astype(np.int64) * max(n_t, 1) + picks)
        if rs.target_unique:
            conflict |= not_first(picks)
        return conflict

    def _event_window(self, rs: RelationSpec, src, tgt) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.window(rs.date.after, rs.date.before, lambda b, side: self.rel_bound(rs, b, side, src, tgt))
        lo = np.full(len(src), self.span_start, np.int64) if lo is None else np.maximum(lo, self.span_start)
        hi = np.full(len(src), self.as_of, np.int64) if hi is None else np.minimum(hi, self.as_of)
        return lo, hi

    def _history(self, r: str, rs: RelationSpec, active, k, rng):
        """Cut each source's window into k successive tenures (vectorised)."""
        h = rs.history
        lo, hi = self.window(h.after, h.before, lambda b, side: self.rel_bound(rs, b, side, active))
        lo = np.full(len(active), self.span_start, np.int64) if lo is None else np.maximum(lo, self.span_start)
        hi = np.full(len(active), self.as_of, np.int64) if hi is None else np.minimum(hi, self.as_of)
        ok = (lo < hi) & (k > 0)
        active, k, lo, hi = active[ok], k[ok], lo[ok], hi[ok]
        grp = np.repeat(np.arange(len(active)), k)
        first = np.ones(len(grp), bool)
        first[1:] = grp[1:] != grp[:-1]
        u = np.where(first, 0.0, rng.random(len(grp)))
        start = lo[grp] + np.floor(u * (hi[grp] - lo[grp])).astype(np.int64)
        order = np.lexsort((start, grp))
        grp, start = grp[order], start[order]
        last = np.ones(len(grp), bool)
        last[:-1] = grp[:-1] != grp[1:]
        end = np.empty_like(start)
        end[:-1] = start[1:]
        end[last] = hi[grp[last]]
        if h.current:
            end = np.where(last & (end >= self.as_of), POS_INF, end)
        nonempty = end > start
        self.out.repairs[f"relation {r}: zero-length tenures dropped"] = int((~nonempty).sum())
        return active[grp][nonempty], start[nonempty], end[nonempty]

    def _break_cycles(self, r, src, tgt, vf, vt):
        import networkx as nx

        g = nx.DiGraph()
        g.add_edges_from(zip(src.tolist(), tgt.tolist()))
        width = int(max(src.max(initial=0), tgt.max(initial=0))) + 1
        removed: list[int] = []  # pair keys src * width + tgt
        while True:
            try:
                cyc = nx.find_cycle(g)
            except nx.NetworkXNoCycle:
                break
            u, v = cyc[-1][:2]
            g.remove_edge(u, v)
            removed.append(u * width + v)
        self.out.repairs[f"relation {r}: links removed to break cycles"] = len(removed)
        if not removed:
            return src, tgt, vf, vt
        keep = ~np.isin(src * width + tgt, np.asarray(removed, dtype=np.int64))

        def pick(x):
            return x[keep] if x is not None else None

        return src[keep], tgt[keep], pick(vf), pick(vt)

    def make_aliases(self, t: str) -> None:
        et = self.types[t]
        frame = self.out.entities[t]
        names = frame["name"]
        n = frame.height
        parts = []
        for i, al in enumerate(et.name.aliases):
            rng = child_rng(self.seed, "alias", t, i)
            sel = np.nonzero(rng.random(n) < al.rate)[0] if al.rate < 1 else np.arange(n)
            nm = names.gather(sel)
            valid_to = pl.Series([None] * len(sel), dtype=pl.Date)
            if al.kind == "initials":
                tok = nm.str.split(" ")
                alias = pl.select(
                    pl.when(pl.lit(tok).list.len() >= 2)
                    .then(pl.lit(tok).list.first().str.slice(0, 1) + pl.lit(". ") + pl.lit(tok).list.last())
                ).to_series()
            elif al.kind == "abbreviation":
                caps = nm.str.extract_all(r"\b[A-Z]")
                alias = pl.select(pl.when(pl.lit(caps).list.len() >= 2).then(pl.lit(caps).list.join(""))).to_series()
            elif al.kind == "short":
                import re

                pat = r"\b(?:" + "|".join(re.escape(w) for w in al.drop) + r")\b"
                alias = nm.str.replace_all(pat, "").str.replace_all(r"\s{2,}", " ").str.strip_chars(" ,&-")
            elif al.kind == "pattern":
                pre, _, post = al.template.partition("{name}")
                alias = pre + nm + post
            else:  # former name
                alias = NameSampler(t, et.name, self.spec.locale, self.seed).draw(len(sel), rng)
                lo = self.attr_bound(t, al.after, "after")[sel] if al.after else np.full(len(sel), self.span_start)
                lo = np.clip(lo, self.span_start, self.as_of)
                valid_to = pl.Series(sample_days(lo, np.full(len(sel), self.as_of), rng).astype(np.int32)).cast(pl.Date)
            parts.append(pl.DataFrame({
                "entity_id": frame["id"].gather(sel), "alias": alias.cast(pl.String), "kind": pl.Series([al.kind] * len(sel), dtype=pl.String),
                "valid_to": valid_to,
            }))
        if not parts:
            return
        df = pl.concat(parts).drop_nulls("alias").filter(pl.col("alias").str.len_chars() > 0)
        # An alias must never be another entity's (or its own) primary name of the same type.
        df = df.join(frame.select(pl.col("name").alias("alias")), on="alias", how="anti")
        df = df.unique(["entity_id", "alias"], keep="first", maintain_order=True)
        before = sum(p.height for p in parts)
        self.out.repairs[f"{t} aliases: dropped (clash with a name or empty)"] = before - df.height
        self.out.aliases.append(df.with_columns(pl.lit(t).alias("entity_type")))

    def run(self, on_step: StepHook | None = None) -> WorldTables:
        for node in generation_order(self.world):
            if on_step:
                on_step(node_label(node))
            kind = node[0]
            if kind == "type":
                self.make_type(node[1])
            elif kind == "attr":
                self.make_attr(node[1], node[2])
            elif kind == "rel":
                self.make_relation(node[1])
            elif kind == "aliases":
                self.make_aliases(node[1])
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


def plan_world(world: ResolvedWorld, build_dir: str | Path = "build", force: bool = False,
               on_step: StepHook | None = None):
    """Plan a world into `<build_dir>/<name>/`: generate, write atomically, check every
    invariant, then mark complete. Returns the `WorldInfo` of the stored world."""
    from .invariants import check_connection
    from .store import write_world

    tables = generate_world(world, on_step)
    return write_world(world, tables, Path(build_dir), lambda con: check_connection(con, world), force=force, on_step=on_step)
