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
import string
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import PlanError
from ..plumbing import stable_hash
from .dependencies import dependency_graph, node_label
from .feasible import REDRAWN, Coverage, DateNeed, Reach, SeriesReach, date_needs, target_windows, year_of
from .pack import (
    CategoricalAttr,
    CodeAttr,
    CountAttr,
    DateAttr,
    DateBound,
    DerivedAttr,
    FakerAttr,
    LinkEntity,
    LinkNumber,
    LookupAttr,
    NumericAttr,
    RelationSpec,
    WeightSelect,
    clip,
    constant_date,
)
from .sampling import (
    DEFAULT_DELAY,
    NEG_INF,
    POS_INF,
    YEAR_DAYS,
    NameSampler,
    TargetIndex,
    apply_offset,
    child_rng,
    duration_days,
    edition_words,
    encode_groups,
    entity_ids,
    faker_pool,
    fitness_weights,
    has_cjk,
    pinyin_names,
    register_sql_functions,
    row_bounds,
    sample_days,
    sample_numeric,
    unique_codes,
    weighted_choice,
)
from .spec import SQL_TYPES, ResolvedWorld, attribute_dtype, date_bounds, derived_query, lifecycle_end_bound, link_bounds, value_translation
from .store import WorldTables

EPOCH = dt.date(1970, 1, 1)
POLARS_DTYPES = {"string": pl.String, "int": pl.Int64, "float": pl.Float64, "date": pl.Date, "bool": pl.Boolean, "entity": pl.String}
SQL_DTYPES = SQL_TYPES
ROUNDS = 16  # rounds of redrawing conflicting target picks
STAGE_YEARS = 20  # the years before as_of a stage's history covers (pages dated then state the stage of then)
SENIORITY_JITTER_YEARS = 2.0  # `seniority`: how far a link's standing may move its value's place (sd, years)
_BUCKET = 3653  # days: covering links are looked up by decade

StepHook = Callable[[str], None]


def to_days(d: dt.date) -> int:
    return (d - EPOCH).days


_ROMAN = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV", "XVI",
          "XVII", "XVIII", "XIX", "XX"]  # a longer chain's later entries read XX


def generation_order(world: ResolvedWorld) -> list[tuple]:
    import networkx as nx

    return list(nx.lexicographical_topological_sort(dependency_graph(world, soft=True), key=repr))


def _real(v: np.ndarray) -> np.ndarray:
    return (v > NEG_INF // 2) & (v < POS_INF // 2)


class _Key:
    """A target attribute picks are windowed on: its values (days) and where it is missing."""

    def __init__(self, values: np.ndarray, is_null: np.ndarray):
        self.values, self.is_null = values, is_null


def _group_rank(keys: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... within runs of equal keys (keys sorted)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.int64)
    start = np.ones(n, bool)
    start[1:] = keys[1:] != keys[:-1]
    idx = np.arange(n)
    first = np.maximum.accumulate(np.where(start, idx, 0))
    return idx - first


class _LinkDraw:
    """One relation's links while `_Generator.make_relation` draws their targets: the sources and
    their times, the targets' weights, groups and date keys, and the picks round by round."""

    def __init__(self, r: str, rs: RelationSpec, rng: np.random.Generator, S: pl.DataFrame, T: pl.DataFrame):
        self.r, self.rs, self.rng, self.S, self.T = r, rs, rng, S, T
        self.n_s, self.n_t = S.height, T.height
        self.valid_from = self.valid_to = self.t0 = None  # when each link is made, where known before its target
        self.reserved = None
        self.redrawn = 0

    def abroad(self, rows: np.ndarray, last: bool = False) -> np.ndarray:
        """Send links to the group of a target drawn by weight (with `last`, each at most three
        times: those that went already are dropped); the links sent."""
        if last:
            rows = rows[self.moves[rows] < 3]
            self.moves[rows] += 1
        self.g_src[rows] = self.g_tgt[self.srng.choice(self.n_t, size=len(rows), p=self.p_away)]
        return rows


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
        self._pair_index: dict[str, tuple] = {}  # a relation's links by (source, target): `not_same` looks them up

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
        ok = _real(start) & (start < end)

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
        ordinal = _group_rank(parent_idx) + 1
        years = y0[parent_idx] + (ordinal - 1) * every[parent_idx]
        self.editions[t] = {"year": years, "ordinal": ordinal, "day": edition_day(years)}
        return parent_idx

    def name_sampler(self, t: str, ambiguous: tuple[str, ...] = ()) -> NameSampler:
        et = self.types[t]
        context = {}
        for k, part in et.name.parts.items():
            if part.given is not None:
                context[k] = self.given_values(t, part.given)
            elif part.via is not None:
                rs = self.relations[part.via]
                context[k] = self.along(t, part.via, self.out.entities[rs.target][part.attribute].cast(pl.String))
            elif part.edition is not None:
                context[k] = edition_words(self.editions[t]["year" if part.edition in ("year", "season") else "ordinal"],
                                           part.edition, self.spec.language)
        return NameSampler(t, et.name, self.spec.locale, self.seed, context, ambiguous)

    def make_name(self, t: str) -> None:
        et = self.types[t]
        n = self.out.entities[t].height
        keep = tuple(sorted({a.given.split(".", 1)[1] for a in et.attributes.values()
                             if isinstance(a, CategoricalAttr) and a.given and a.given.startswith("name.")}))
        res = self.name_sampler(t, keep).unique(n, child_rng(self.seed, "names", t), keep=keep)
        names, kept = res if keep else (res, {})
        ids = entity_ids(t, names, self.seed)
        if ids.n_unique() != n:
            raise PlanError(f"id collision in type '{t}'; change the seed")
        if et.namesakes or et.near_names:  # ids stay those of the drawn (unique) names
            names, kept = self._namesakes(t, names, kept)
        self.out.entities[t] = pl.concat([pl.DataFrame({"id": ids, "name": names}), self.out.entities[t]], how="horizontal")
        for k, v in kept.items():
            self.name_parts[(t, k)] = v

    def derive_names(self, t: str) -> None:
        """`name.derived`: an entity linked by `via` takes a name made from the linked entity's
        ({name}), the first of its chain's ({root}: a sequel's sequel is named after the
        original) and its place in the chain ({n}, {roman}); chains are named level by level, so
        {name} is the parent's final name. A derived name another entity of the type holds
        keeps the drawn one. Ids stay those of the drawn names."""
        dn = self.types[t].name.derived
        parent, target_t = self.whole_index(t, dn.via)
        df = self.out.entities[t]
        n = df.height
        names = df["name"].clone()
        linked = parent >= 0
        depth = linked.astype(np.int64)
        root = np.where(linked, parent, np.arange(n))
        if target_t == t:  # chains of the type's own entities (acyclic: validated)
            cur = parent.copy()
            cur[~linked] = -1
            cur = np.where(cur >= 0, parent[np.maximum(cur, 0)], -1)
            while (cur >= 0).any():
                on = cur >= 0
                root[on] = cur[on]
                depth[on] += 1
                cur = np.where(on, parent[np.maximum(cur, 0)], -1)
            target_names = None
        else:
            target_names = self.out.entities[target_t]["name"]
        rng = child_rng(self.seed, "derived-names", t)
        tmpls = list(dn.templates)
        w = np.asarray(list(dn.templates.values()), float)
        pick = rng.choice(len(tmpls), size=n, p=w / w.sum())[root]  # one style a chain ("II", "III"; not "II", "Vol. 3")
        clashed = 0
        for level in range(1, int(depth.max(initial=0)) + 1):
            rows = np.flatnonzero(depth == level)
            src = names if target_names is None else target_names
            cols = {"name": src.gather(parent[rows]), "root": src.gather(root[rows]) if target_names is None else src.gather(parent[rows]),
                    "n": pl.Series(depth[rows] + 1).cast(pl.String), "roman": pl.Series(_ROMAN, dtype=pl.String).gather(np.minimum(depth[rows] + 1, len(_ROMAN) - 1))}
            frame = pl.DataFrame(cols)
            made = pl.Series([None] * len(rows), dtype=pl.String)
            for i, tmpl in enumerate(tmpls):
                sel = np.flatnonzero(pick[rows] == i)
                if len(sel):
                    pieces = [e for lit, field, _, _ in string.Formatter().parse(tmpl)
                              for e in ((pl.lit(lit) if lit else None), (pl.col(field) if field is not None else None)) if e is not None]
                    made = made.scatter(sel, frame[sel].select(pl.concat_str(pieces).alias("v"))["v"])
            others = names.gather(np.flatnonzero(depth != level))
            taken = made.is_in(others.implode()) | made.is_duplicated()
            clashed += int(taken.sum())
            ok = ~taken.to_numpy()
            names = names.scatter(rows[ok], made.filter(pl.Series(ok)))
        self.out.repairs[f"{t} derived names: kept the drawn name (the derived one was taken)"] = clashed
        self.out.entities[t] = df.with_columns(names.alias("name"))

    def _namesakes(self, t: str, names: pl.Series, kept: dict) -> tuple[pl.Series, dict]:
        """Give `namesakes` x n entities the name of another (disjoint sources; kept name parts
        follow, so attributes chosen by a name word stay consistent) and `near_names` x n a
        name one edit from another's (a vowel of the first word, or the first character of a
        CJK name), never equal to an existing name."""
        et = self.types[t]
        n = len(names)
        k, k2 = int(round(et.namesakes * n)), int(round(et.near_names * n))
        if 2 * (k + k2) > n:
            k = k2 = 0
        if not k and not k2:
            return names, kept
        rng = child_rng(self.seed, "namesakes", t)
        # Pairs share whatever the name's parts are chosen by (an industry word, a town), so a
        # copied name still agrees with its new bearer: shuffle, group by that context, pair
        # neighbours within a group, then draw the pairs wanted.
        ctx = []
        for part in et.name.parts.values():
            if part.given is not None:
                ctx.append(pl.Series(self.given_values(t, part.given)).cast(pl.String).fill_null(""))
            elif part.via is not None:
                rs = self.relations[part.via]
                ctx.append(pl.Series(self.along(t, part.via, self.out.entities[rs.target][part.attribute].cast(pl.String))).fill_null(""))
        perm = rng.permutation(n)
        if ctx:
            key = pl.DataFrame({f"c{i}": c for i, c in enumerate(ctx)}).select(pl.concat_str(pl.all(), separator="\x1f")).to_series()
            perm = perm[np.argsort(key.to_numpy()[perm], kind="stable")]
            keys = key.to_numpy()[perm]
        else:
            keys = np.zeros(n, dtype=np.int8)
        a_, b_ = perm[0:n - 1:2], perm[1:n:2]
        ok = keys[0:n - 1:2] == keys[1:n:2]
        a_, b_ = a_[ok], b_[ok]
        pick = rng.permutation(len(a_))
        k = min(k, len(a_))
        k2 = min(k2, len(a_) - k)
        copies, sources = a_[pick[:k]], b_[pick[:k]]
        near, near_src = a_[pick[k:k + k2]], b_[pick[k:k + k2]]
        arr = names.to_numpy().astype(object)
        arr[copies] = arr[sources]
        kept = {p: _take_from(v, copies, sources) for p, v in kept.items()}
        taken = set(arr.tolist())
        vowels = "aeiou"
        cjk = sorted({c for x in arr[: min(n, 2000)] for c in x[:1] if "\u4e00" <= c <= "\u9fff"})
        # a name that opens with a word chosen by an attribute (a first name of the person's gender)
        # keeps it: the edit goes to a later word ('Maria Stokes' -> 'Maria Stukes', not 'Mario Stokes')
        keyed = [k for k, part in et.name.parts.items() if part.given is not None or part.fakers is not None]
        skip = int(any(et.name.opens_with(k) for k in keyed))
        for i, j in zip(near.tolist(), near_src.tolist()):
            src = arr[j]
            h = stable_hash("near", self.seed, t, src)
            if src[:1] and "\u4e00" <= src[0] <= "\u9fff" and len(cjk) > 1:
                c = cjk[h % len(cjk)]
                new = (c if c != src[0] else cjk[(h + 1) % len(cjk)]) + src[1:]
            else:  # a vowel of the first word that has one past its first letter ('FC Veur' -> 'FC Vuur')
                words = src.split(" ")
                w = next((i for i, x in enumerate(words) if i >= skip and any(ch.lower() in vowels for ch in x[1:])), None)
                if w is None:
                    words[-1] += words[-1][-1:]
                else:
                    x = words[w]
                    pos = [q for q, ch in enumerate(x) if ch.lower() in vowels and q > 0]
                    q = pos[h % len(pos)]
                    alt = vowels[(vowels.index(x[q].lower()) + 1 + h % 4) % 5]
                    words[w] = x[:q] + (alt.upper() if x[q].isupper() else alt) + x[q + 1:]
                new = " ".join(words)
            if new not in taken:
                taken.add(new)
                arr[i] = new
        return pl.Series(names.name, arr.tolist(), dtype=pl.String), kept

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
            s = self._categorical(t, attr, n, rng)
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

    def _categorical(self, t: str, attr: CategoricalAttr, n: int, rng) -> pl.Series:
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
        known = _real(base)
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
            active[_active_sources(child_rng(self.seed, "rel", need.relation), rs.rate, n)] = True
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

    def _split_bounds(self, bounds: list[DateBound]) -> tuple[list[DateBound], list[DateBound]]:
        """(bounds on the source or constant, bounds on the target)."""
        src = [b for b in bounds if not b.ref.startswith("target.")]
        return src, [b for b in bounds if b.ref.startswith("target.")]

    def make_relation(self, r: str) -> None:
        """Draw relation r's links, one feature at a time: how many links each source makes and
        when (`_link_sources`), how targets weigh (`_target_weights`), where each link may look
        (`_link_groups`, `_link_keys`), the rounds of draws and checks (`_draw_targets`), then the
        links' dates (`_settle_links`) and their own attributes (`_link_attributes`)."""
        d = self._link_sources(r)
        self._target_weights(d)
        self._link_groups(d)
        self._link_keys(d)
        self._draw_targets(d)
        rs, picks = d.rs, d.picks
        if rs.required and d.index is not None and not rs.history:
            self._rescue(r, rs, d.src, picks, d.settled_round, d.index, d.g_src, d.lo, d.hi, d.w, d.t0, d.tgt_after,
                         d.tgt_before, d.n_s, d.n_t)
        keep = picks >= 0
        if rs.each_target:
            self.out.repairs[f"relation {r}: targets left without a link"] = int(d.n_t - len(np.unique(picks[keep])))
        self.out.repairs[f"relation {r}: targets redrawn"] = d.redrawn
        self.out.repairs[f"relation {r}: links dropped (no eligible target)"] = int((~keep).sum())
        src, tgt, valid_from, valid_to = self._settle_links(d, keep)
        if rs.acyclic:
            src, tgt, valid_from, valid_to = self._break_cycles(r, src, tgt, valid_from, valid_to)
        if rs.required:
            missing = np.setdiff1d(d.active, src)
            if len(missing):
                raise PlanError(
                    f"relation '{r}' is required but {len(missing):,} '{rs.source}' entities found no eligible "
                    f"'{rs.target}' (cardinality {rs.cardinality}); raise the '{rs.target}' count or loosen its eligibility"
                )
        self.out.edges[r] = self._link_attributes(r, rs, self._edge_frame(src, tgt, valid_from, valid_to))

    def _link_sources(self, r: str) -> _LinkDraw:
        """The sources of r's links: which sources take part (`rate`), how many links each makes
        (`count`, per case of a `given` category), and when each link is made where that is
        known before its target is picked (a history's stints, `since`, `at`)."""
        rs = self.relations[r]
        d = _LinkDraw(r, rs, child_rng(self.seed, "rel", r), self.out.entities[rs.source], self.out.entities[rs.target])
        rng = d.rng
        d.active = _active_sources(rng, rs.rate, d.n_s)
        cr = rs.base_count
        k = rng.integers(cr.min, cr.max + 1, len(d.active))
        if rs.given is not None:  # a count range per value of a source category (`cases`)
            g = self.given_values(rs.source, rs.given).gather(d.active)
            for v, c in rs.cases.items():
                sel = (g == v).fill_null(False).to_numpy()
                if sel.any():
                    k[sel] = rng.integers(c.min, c.max + 1, int(sel.sum()))
        after, d.before = link_bounds(self.world, rs)
        src_after, d.tgt_after = self._split_bounds(after)
        src_before, d.tgt_before = self._split_bounds(d.before)
        if rs.history:
            d.src, d.valid_from, d.valid_to = self._history(r, rs, d.active, k, rng, src_after, src_before)
            d.t0 = d.valid_from
        else:
            d.src = np.repeat(d.active, k)
            if rs.since:
                d.valid_from = self._since(r, rs, d.src, src_before)
                d.t0 = d.valid_from
            elif rs.at is not None:
                t0 = self.rel_bound(rs, rs.at, "after", d.src)
                d.t0 = np.where(_real(t0), t0, NEG_INF)
        d.m = len(d.src)
        return d

    def _target_weights(self, d: _LinkDraw) -> None:
        """How likely each target is picked: by a numeric attribute (`select: {weight: ...}`),
        by preferential attachment, or alike."""
        rs, T, n_t = d.rs, d.T, d.n_t
        if isinstance(rs.select, WeightSelect):
            w = T[rs.select.weight].cast(pl.Float64).fill_null(0.0).to_numpy().clip(0, None)
            if not np.isfinite(w.sum()):  # huge weights: rescale so that cumulative sums stay finite
                w = np.nan_to_num(w, nan=0.0, posinf=np.finfo(float).max)
                w = w / w.max() * (1.0 / max(len(w), 1))
        elif rs.select == "preferential":
            w = fitness_weights(n_t, rs.alpha, child_rng(self.seed, "fitness", d.r))
        else:
            w = np.ones(n_t)
        d.w = w

    def _link_groups(self, d: _LinkDraw) -> None:
        """Where each link looks for its target (`same`: a target of the source's group, a
        source of "any field" anywhere by weight, and with `share` below 1 a bias that sends the
        other links to the group of a target drawn by weight)."""
        rs, S, T, n_t, m, w = d.rs, d.S, d.T, d.n_t, d.m, d.w
        d.biased = rs.same is not None and rs.same.share < 1 and n_t > 0
        d.moves = np.zeros(m, np.int64)  # times a biased link was sent abroad for want of a target at home
        if not rs.same:
            d.g_src, d.g_tgt = np.zeros(m, np.int64), np.zeros(n_t, np.int64)
            return
        s_vals = S[rs.same.source].gather(d.src)
        d.g_src, d.g_tgt = encode_groups(s_vals, T[rs.same.target])
        if rs.same.any is not None and n_t and w.sum() > 0:  # a source of "any field": any target, by weight
            wild = np.flatnonzero((s_vals.cast(pl.String) == rs.same.any).fill_null(False).to_numpy())
            d.g_src[wild] = d.g_tgt[child_rng(self.seed, "rel-same-any", d.r).choice(n_t, size=len(wild), p=w / w.sum())]
        if d.biased:  # a bias, not a rule: the other links look in the group of a target drawn by weight
            d.srng = child_rng(self.seed, "rel-same", d.r)
            d.p_away = w / w.sum() if w.sum() > 0 else None
            d.abroad(np.flatnonzero(d.srng.random(m) >= rs.same.share))

    def _link_keys(self, d: _LinkDraw) -> None:
        """Which targets each link may take by date (`eligible`, the target's own dates), the
        covering links a `requires` path draws from, the target index, and the links set aside
        for targets that would otherwise have none (`each_target`)."""
        rs, T, m, n_t = d.rs, d.T, d.m, d.n_t
        key, d.lo, d.hi = self._pick_key(rs, T, d.src, d.valid_from, d.t0, d.tgt_after, m, n_t)
        d.key = key
        d.w = np.where(key.is_null, 0.0, d.w) if isinstance(key, _Key) else d.w
        d.key_arr = key.values if isinstance(key, _Key) else key
        d.cover = self._cover_frame(rs) if rs.requires is not None else None
        d.index = TargetIndex(d.g_tgt, d.key_arr, d.w) if d.cover is None else None
        d.picks = np.full(m, -1, dtype=np.int64)
        d.settled_round = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
        d.c_from = np.full(m, NEG_INF, np.int64)
        d.c_to = np.full(m, POS_INF, np.int64)
        d.start = None if d.valid_from is None else d.valid_from.copy()
        d.end = None if d.valid_to is None else d.valid_to.copy()
        if rs.history:
            d.cut_jitter = duration_days(DEFAULT_DELAY, m, child_rng(self.seed, "rel-cut-target", d.r))
            if d.cover is not None:  # a covered tenure may begin when its covering link does
                d.cover_jitter = duration_days(DEFAULT_DELAY, m, child_rng(self.seed, "rel-cover", d.r))
        d.unfillable = np.zeros(m, bool)
        if rs.each_target and d.cover is None and n_t and m:
            ok_t = ~key.is_null if isinstance(key, _Key) else np.ones(n_t, bool)
            d.reserved = self._reserve(d.g_src, d.g_tgt, d.key_arr, d.lo, d.hi, ok_t, child_rng(self.seed, "rel-each", d.r))
        d.excluded = np.zeros(n_t, bool)

    def _draw_targets(self, d: _LinkDraw) -> None:
        """Rounds of draws: every pending link draws a target; a pick that fails a check of its
        own (`_check_picks`) or across picks (pairs, caps, overlaps: earlier-settled picks keep
        theirs) draws again next round; links that keep conflicting are given up."""
        rs, m, n_t = d.rs, d.m, d.n_t
        pending = np.arange(m)
        last = m + 1
        for rnd in range(ROUNDS):
            if len(pending) == 0:
                break
            if rnd >= 4 and len(pending) > 0.95 * last:  # what is left keeps conflicting: give up on it
                d.unfillable[pending] = True
                break
            last = len(pending)
            if rnd:
                d.redrawn += len(pending)
            new = pending
            if d.cover is None:
                got = d.index.pick(d.g_src[new], d.lo[new], d.hi[new], d.rng)
                if rnd == 0 and d.reserved is not None:  # the links set aside for targets that would have none
                    got = np.where(d.reserved[new] >= 0, d.reserved[new], got)
            else:
                got, d.c_from[new], d.c_to[new] = self._cover_pick(d.cover, new, d.src, d.t0, d.g_src, d.g_tgt, d.lo, d.hi,
                                                                   d.key_arr, d.w, d.excluded, d.rng,
                                                                   until=d.valid_to if rs.history else None)
            d.unfillable[new[got < 0]] = True
            moved_on = None
            if d.biased and d.cover is None:
                # a link with no eligible target in its group looks abroad (three times at most)
                moved_on = d.abroad(new[got < 0], last=True)
                d.unfillable[moved_on] = False
            d.picks[new] = got
            d.settled_round[new] = rnd
            conflict = np.zeros(m, bool)
            sel = new[got >= 0]
            conflict[sel[self._check_picks(d, sel)]] = True
            d.picks[conflict] = -1
            # Checks across picks: pairs, caps, overlaps (earlier-settled picks keep theirs).
            conflict |= self._conflicts(rs, d.src, d.picks, d.settled_round, n_t, new)
            if rs.exclusive:
                conflict |= self._overlaps(d.picks, d.settled_round, rnd, d.start, d.end, (d.picks >= 0) & ~conflict)
            if moved_on is not None:
                conflict[moved_on] = True
                if rnd >= 2:  # one that keeps meeting conflicts in its group (a player back at a club) looks abroad too
                    d.abroad(np.flatnonzero(conflict & ~d.unfillable), last=True)
            d.picks[conflict] = -1
            d.settled_round[conflict] = np.iinfo(np.int64).max
            pending = np.nonzero(conflict & ~d.unfillable)[0]
            if rs.target_cap is not None:
                ok = d.picks[d.picks >= 0]
                d.excluded = np.bincount(ok, minlength=n_t)[:n_t] >= rs.target_cap
                if d.index is not None:
                    d.index.set_excluded(d.excluded)

    def _check_picks(self, d: _LinkDraw, sel: np.ndarray) -> np.ndarray:
        """Which of the new picks `sel` fail a check of their own (earlier picks passed them and
        have not changed): a target alive when the link is made, `not_same`, an event window that
        is not empty, a stint that ends after it starts (a covered stint moved to its cover)."""
        rs, valid_from = d.rs, d.valid_from
        s_, p_ = d.src[sel], d.picks[sel]
        bad = np.zeros(len(sel), bool)
        t_sel = None if d.t0 is None else d.t0[sel]
        if rs.history:
            if d.cover is not None:
                cf = d.c_from[sel]
                moved = cf > valid_from[sel]
                d.start[sel] = np.where(moved, cf + np.minimum(d.cover_jitter[sel], np.maximum(self.as_of - cf, 0)),
                                        valid_from[sel])
                if rs.eligible is not None and moved.any():  # eligibility relative to the moved start
                    _, lo2, hi2 = self._pick_key(rs, d.T, s_, d.start[sel], d.start[sel], d.tgt_after, len(sel), d.n_t)
                    kv = d.key_arr[p_]
                    bad |= moved & ((kv < lo2) | (kv > hi2))
            t_sel = d.start[sel]
        if t_sel is not None:
            bad |= ~self._alive(rs, d.tgt_after, [] if rs.history else d.tgt_before, s_, p_, t_sel)
        if rs.not_same:
            bad |= self._not_same(rs, s_, p_, t_sel if rs.dated else None, d.n_t)
        if rs.date:
            d_lo, d_hi = self._event_window(rs, s_, p_, d.c_from[sel], d.c_to[sel])
            bad |= d_lo > d_hi
        if rs.history:
            d.end[sel] = self._clip_end(rs, d.tgt_before, s_, p_, d.valid_to[sel], d.c_to[sel], d.cut_jitter[sel])
            bad |= d.end[sel] <= d.start[sel]
        return bad

    def _settle_links(self, d: _LinkDraw, keep: np.ndarray) -> tuple:
        """The kept links and their dates: a stint's clipped span, an event's day drawn inside its
        window (or as an offset), a `since` link's start and the end its bounds give."""
        rs, r = d.rs, d.r
        src, tgt = d.src[keep], d.picks[keep]
        valid_from = valid_to = None
        if rs.history:
            valid_from, valid_to = d.start[keep], d.end[keep]
        elif rs.date:
            d_lo, d_hi = self._event_window(rs, src, tgt, d.c_from[keep], d.c_to[keep])
            drng = child_rng(self.seed, "rel-date", r)
            if rs.date.offset is not None:
                base = self.rel_bound(rs, rs.date.offset.ref, "after", src, tgt)
                valid_from, _ = self.offset_draw(base, rs.date.offset, d_lo, d_hi, drng)
            else:
                valid_from = sample_days(d_lo, d_hi, drng)
            valid_to = np.full(len(src), POS_INF)
        elif rs.since:
            valid_from = d.valid_from[keep]
            ends = [self.rel_bound(rs, b, "before", src, tgt) for b in d.before]
            valid_to = np.minimum.reduce(ends) if ends else np.full(len(src), POS_INF)
            valid_to = np.where(valid_to >= self.as_of, POS_INF, np.maximum(valid_to, valid_from))
        return src, tgt, valid_from, valid_to

    def _link_attributes(self, r: str, rs: RelationSpec, edges: pl.DataFrame) -> pl.DataFrame:
        """Each link's own values (a member's role), drawn by weight, by seniority, rising, one
        per target; a link's entity is chosen later (`make_link_entity`)."""
        for a, attr in rs.attributes.items():
            rng = child_rng(self.seed, "link-attr", r, a)
            if isinstance(attr, LinkEntity):
                continue  # chosen once the relation it holds is drawn too (make_link_entity)
            if isinstance(attr, LinkNumber):
                vals = self._link_numbers(r, a, attr, edges, rng)
            else:
                vals = self._categorical(rs.source, attr, edges.height, rng)
                if attr.seniority is not None:
                    vals = self._by_seniority(rs, attr, vals, edges, child_rng(self.seed, "link-seniority", r, a))
                if attr.rises:
                    vals = _rising(vals, attr.rises, edges["src"].to_numpy())
                if attr.one_per_target is not None:
                    vals = self._one_per_target(r, a, attr, vals, edges, rng)
            edges = edges.with_columns(self.null_mask(f"rel_{r}", a, attr.null_rate, vals).alias(a))
        return edges

    def make_link_entity(self, r: str, a: str, tries: int = 16, rounds: int = 4) -> None:
        """A link's entity (`LinkEntity`): per link, one of the entities holding a `holds` link
        (meeting `where`) to the link's end when the link starts (any time for an undated link),
        never one of the link's own ends, drawn uniformly among those links: a few rounds of random
        picks among the end's holder links that start by then, then an exact pass over the links
        still without one. A link no holder covers has none (counted in `plan`'s report)."""
        rs = self.relations[r]
        attr = rs.attributes[a]
        kind = attr.entity_type(self.relations)
        edges = self.out.edges[r]
        h = self.out.edges[attr.relation]
        for k, vals in attr.where.items():
            h = h.filter(pl.col(k).is_in(vals))
        rng = child_rng(self.seed, "link-entity", r, a)
        n = edges.height
        far = 1 << 24  # beyond any day (45,000 years): (end code, day) packs into one int64 key
        meets, him = ("src", "tgt") if attr.backwards else ("tgt", "src")  # the held links' end this link meets; the entity
        hk = h[meets].to_numpy()
        hf = h["valid_from"].cast(pl.Int64).fill_null(-far).to_numpy()
        ht = h["valid_to"].cast(pl.Int64).fill_null(far).to_numpy()
        order = np.lexsort((hf, hk))
        hk, hf, ht, hsrc = hk[order], hf[order], ht[order], h[him].to_numpy()[order]
        key = edges["tgt" if attr.end == "target" else "src"].to_numpy()
        day = edges["valid_from"].cast(pl.Int64).fill_null(far - 1).to_numpy()  # undated: any holder link
        # never one of the link's own ends (a supervisor is not the student; a head is not their own deputy)
        own = edges["src"].to_numpy() if kind == rs.source else np.full(n, -1, np.int64)
        own2 = edges["tgt"].to_numpy() if kind == rs.target else np.full(n, -1, np.int64)
        lo = np.searchsorted(hk, key, side="left")
        # holder links of the end that start on or before the day: [lo, hi) of the (end, start) order
        comp = hk.astype(np.int64) * (4 * far) + (hf + 2 * far)
        hi = np.searchsorted(comp, key.astype(np.int64) * (4 * far) + (day + 2 * far), side="right")
        hi = np.maximum(hi, lo)
        pick = np.full(n, -1, np.int64)

        dated = edges["valid_from"].is_not_null().to_numpy()

        def fits(link, cand):  # a holder link of the end, still running on the day (any for an undated link), not an own end
            return ((hk[cand] == key[link]) & ((ht[cand] > day[link]) | ~dated[link]) & (hsrc[cand] != own[link])
                    & (hsrc[cand] != own2[link]))

        todo = np.flatnonzero(hi > lo)
        for _ in range(rounds):
            if len(todo) == 0:
                break
            cand = lo[todo, None] + (rng.random((len(todo), tries)) * (hi - lo)[todo, None]).astype(np.int64)
            ok = fits(todo[:, None], cand)
            has = ok.any(axis=1)
            pick[todo[has]] = cand[has, ok[has].argmax(axis=1)]
            todo = todo[~has]
        for chunk in np.array_split(todo, max(1, int((hi - lo)[todo].sum()) // 4_000_000 + 1)):  # exact: every candidate
            if len(chunk) == 0:
                continue
            size = (hi - lo)[chunk]
            link = np.repeat(chunk, size)
            cand = np.repeat(lo[chunk] - np.r_[0, np.cumsum(size)[:-1]], size) + np.arange(int(size.sum()))
            ok = fits(link, cand)
            link, cand = link[ok], cand[ok]
            first = np.lexsort((rng.random(len(link)), link))  # a random valid candidate per link
            first = first[np.r_[True, link[first][1:] != link[first][:-1]]] if len(first) else first
            pick[link[first]] = cand[first]
        self.out.repairs[f"relation {r}: links left without a {a} (no {kind} on a {attr.relation} link covering the day)"] = int((pick < 0).sum())
        vals = pl.Series(np.where(pick >= 0, hsrc[np.maximum(pick, 0)] if len(hsrc) else -1, -1), dtype=pl.Int64)
        vals = vals.scatter(np.flatnonzero(pick < 0), None) if (pick < 0).any() else vals
        self.out.edges[r] = edges.with_columns(self.null_mask(f"rel_{r}", a, attr.null_rate, vals).alias(a))

    def _by_seniority(self, rs: RelationSpec, attr, vals: pl.Series, edges: pl.DataFrame, rng) -> pl.Series:
        """`seniority`: the drawn values given out over all links in order of the source's standing
        when each starts (its age, or the time since its first link of the relation), give or take
        SENIORITY_JITTER_YEARS; the values drawn stay the values given (shares as drawn)."""
        src = edges["src"].to_numpy()
        start = edges["valid_from"].to_physical().cast(pl.Int64).to_numpy()  # no null: the relation is dated
        if attr.seniority == "age":
            born = self.days(rs.source, self.world.types[rs.source].lifecycle.start, NEG_INF)[src]
            since = np.where(born > NEG_INF, born, start)
        else:
            since = pl.DataFrame({"src": src, "s": start}).select(pl.col("s").min().over("src")).to_series().to_numpy()
        standing = (start - since) + rng.normal(0.0, SENIORITY_JITTER_YEARS * 365.25, len(src))
        pos = {v: i for i, v in enumerate(attr.rises)}
        rank = vals.replace_strict(pos, default=len(pos), return_dtype=pl.Int64).to_numpy()
        gather = np.empty(len(src), np.int64)
        gather[np.argsort(standing, kind="stable")] = np.argsort(rank, kind="stable")
        return vals.gather(gather)

    def _rescue(self, r: str, rs: RelationSpec, src, picks, settled_round, index: TargetIndex, g_src, lo, hi, w, t0,
                tgt_after, tgt_before, n_s: int, n_t: int, rounds: int = 4) -> None:
        """A required link for each source the rounds of weighted draws left with none (its few
        eligible targets kept losing to heavier ones that a later check refused, such as people
        of the right age but dead by then): one target drawn by weight from the exact list of
        those that pass every check of a single pick and are still free (not over their cap,
        not taken in the source's `once_per` group), then the checks across picks; a few rounds."""
        rng = child_rng(self.seed, "rel-rescue", r)
        once = self._once_groups(rs) if rs.once_per is not None else None
        for k in range(rounds):
            linked = np.zeros(n_s, bool)
            linked[src[picks >= 0]] = True
            rows = np.flatnonzero(~linked[src])
            if len(rows) == 0:
                return
            _, first = np.unique(src[rows], return_index=True)  # one row per source
            rows = rows[first]
            pr, pt = index.candidates(g_src[rows], lo[rows], hi[rows])
            s_ = src[rows[pr]]
            ok = np.ones(len(pr), bool)
            if t0 is not None:
                ok &= self._alive(rs, tgt_after, tgt_before, s_, pt, t0[rows[pr]])
            if rs.date:
                d_lo, d_hi = self._event_window(rs, s_, pt)
                ok &= d_lo <= d_hi
            if rs.source == rs.target:
                ok &= s_ != pt
            if rs.not_same:
                ok &= ~self._not_same(rs, s_, pt, t0[rows[pr]] if t0 is not None and rs.dated else None, n_t)
            held = picks >= 0
            if rs.target_cap is not None:
                ok &= np.bincount(picks[held], minlength=n_t)[pt] < rs.target_cap
            if once is not None:
                taken = once[src[held]] * max(n_t, 1) + picks[held]
                ok &= ~np.isin(once[s_] * max(n_t, 1) + pt, taken)
            picks[rows] = weighted_choice(pr[ok], pt[ok], w, len(rows), rng)
            settled_round[rows] = ROUNDS + k
            conflict = self._conflicts(rs, src, picks, settled_round, n_t, rows)
            picks[conflict] = -1
            settled_round[conflict] = np.iinfo(np.int64).max

    def _link_numbers(self, r: str, a: str, attr: LinkNumber, edges: pl.DataFrame, rng, rounds: int = 40) -> pl.Series:
        """A whole number per link from the attribute's distribution; `distinct`: links to one
        target that overlap in time take different numbers (a clash is redrawn, from the
        distribution for a few rounds, then uniformly; a link still clashing after `rounds` has
        none)."""
        n = edges.height
        vals = sample_numeric(attr, n, rng).astype(np.int64)
        if attr.distinct_by is None or n < 2:
            return pl.Series(vals, dtype=pl.Int64)
        lo, hi = int(attr.min), int(attr.max)
        tgt = edges["tgt" if attr.distinct_by == "target" else "src"].to_numpy()  # the end whose links differ
        start = edges["valid_from"].cast(pl.Int64).fill_null(-(2**31)).to_numpy()
        end = edges["valid_to"].cast(pl.Int64).fill_null(2**31 - 1).to_numpy()
        clash = np.zeros(n, bool)
        for k in range(rounds):
            clash = _overlapping_repeats(tgt, vals, start, end)
            if not clash.any():
                break
            m = int(clash.sum())
            vals[clash] = (sample_numeric(attr, m, rng).astype(np.int64) if k < 8 else rng.integers(lo, hi + 1, m))
        else:
            clash = _overlapping_repeats(tgt, vals, start, end)
        self.out.repairs[f"relation {r}: links left without a {a} (no distinct one free)"] = int(clash.sum())
        return pl.Series(vals, dtype=pl.Int64).scatter(np.flatnonzero(clash), None)

    def _one_per_target(self, r: str, a: str, attr, vals: pl.Series, edges: pl.DataFrame, rng) -> pl.Series:
        """`one_per_target`: of the links to one target that hold its value over overlapping spans,
        the earliest keeps it and the others draw another value by weight; `exactly`: a target
        none of whose links holds it gives it to one of them, drawn at random."""
        one = attr.one_per_target
        n = edges.height
        v = np.asarray(vals.to_list(), dtype=object)
        tgt = edges["tgt"].to_numpy()
        start = edges["valid_from"].cast(pl.Int64).fill_null(-(2**31)).to_numpy()
        end = edges["valid_to"].cast(pl.Int64).fill_null(2**31 - 1).to_numpy()
        holds = v == one.value
        code = np.where(holds, 0, -1 - np.arange(n, dtype=np.int64))  # other values never clash
        clash = _overlapping_repeats(tgt, code, start, end) & holds
        w = attr.weights()
        others = [x for x in w if x != one.value]
        p = np.asarray([w[x] for x in others], float)
        if clash.any():
            v[clash] = np.asarray(others, dtype=object)[rng.choice(len(others), size=int(clash.sum()), p=p / p.sum())]
        self.out.repairs[f"relation {r}: links whose {a} another link to the target held (another drawn)"] = int(clash.sum())
        if one.exactly and n:
            order = np.lexsort((rng.random(n), tgt))
            first = order[np.r_[True, tgt[order][1:] != tgt[order][:-1]]]  # one random link per target
            lacking = ~np.isin(tgt[first], tgt[v == one.value])
            v[first[lacking]] = one.value
            self.out.repairs[f"relation {r}: targets whose {a} {one.value} was given to a link"] = int(lacking.sum())
        return pl.Series(v.tolist(), dtype=pl.String)

    @staticmethod
    def _reserve(g_src, g_tgt, key, lo, hi, ok_t, rng, tries: int = 16, rounds: int = 8) -> np.ndarray:
        """Per link row, the target it is set aside for (-1: none): each target that can take
        one gets a row of its group whose key window holds its key, drawn at random (`tries`
        candidates a round; a row goes to one target, the first in order). Targets that few
        rows fit go first (a musician born late fits only the bands recruiting in recent years,
        and would otherwise lose them to older ones that fit any), in a random order among equals."""
        m, n_t = len(g_src), len(g_tgt)
        out = np.full(m, -1, np.int64)
        order = np.argsort(g_src, kind="stable")
        sg = g_src[order]
        start = np.searchsorted(sg, g_tgt, side="left")
        size = np.searchsorted(sg, g_tgt, side="right") - start
        todo = rng.permutation(np.flatnonzero(ok_t & (size > 0) & (g_tgt >= 0)))
        fits = Coverage(g_src, lo, hi).at(g_tgt[todo], key[todo])  # rows whose window holds each target's key
        todo = todo[np.argsort(fits, kind="stable")]
        for _ in range(rounds):
            if len(todo) == 0:
                break
            cand = order[start[todo, None] + (rng.random((len(todo), tries)) * size[todo, None]).astype(np.int64)]
            k = key[todo, None]
            valid = (lo[cand] <= k) & (k <= hi[cand]) & (out[cand] < 0)
            has = valid.any(axis=1)
            row = cand[np.arange(len(todo)), valid.argmax(axis=1)]
            t_has, row = todo[has], row[has]
            _, first = np.unique(row, return_index=True)  # a row claimed twice: the earlier target keeps it
            out[row[first]] = t_has[first]
            done = np.zeros(n_t, bool)
            done[t_has[first]] = True
            todo = todo[~done[todo]]
        return out

    def _pick_key(self, rs: RelationSpec, T: pl.DataFrame, src, valid_from, t0, tgt_after, m: int, n_t: int):
        """The target attribute picks are windowed on, and the window per row: the declared
        eligibility; else, when the link's date is known, the target's start (it must exist by then)."""
        if rs.eligible:
            col = T[rs.eligible.attribute].to_physical().cast(pl.Int64)
            el = rs.eligible
            lo = self.rel_bound(rs, el.after, "after", src, valid_from=valid_from) if el.after else np.full(m, NEG_INF)
            hi = self.rel_bound(rs, el.before, "before", src, valid_from=valid_from) if el.before else np.full(m, POS_INF)
            return _Key(col.fill_null(0).to_numpy(), col.is_null().to_numpy()), lo, hi
        start = next((b for b in tgt_after if not b.years and not b.days), None) if t0 is not None else None
        if start is not None:
            col = T[start.ref.split(".", 1)[1]].to_physical().cast(pl.Int64)
            return (_Key(col.fill_null(0).to_numpy(), col.is_null().to_numpy()), np.full(m, NEG_INF),
                    np.where(_real(t0), t0, POS_INF))
        return np.zeros(n_t, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64)

    def _alive(self, rs: RelationSpec, tgt_after, tgt_before, src, picks, t0) -> np.ndarray:
        """Picked targets that exist at the link's date: after their start bounds, before their ends."""
        ok = np.ones(len(src), bool)
        known = _real(t0)
        for b in tgt_after:
            ok &= ~known | (self.rel_bound(rs, b, "after", src, picks) <= t0)
        for b in tgt_before:
            ok &= ~known | (self.rel_bound(rs, b, "before", src, picks) >= t0)
        return ok

    def _since(self, r: str, rs: RelationSpec, src, src_before) -> np.ndarray:
        """A since link starts a while after its anchor date (a delay drawn per link), never
        after the source's end or as_of."""
        base = np.clip(self.rel_bound(rs, rs.since, "after", src), self.span_start, self.as_of)
        rng = child_rng(self.seed, "rel-since", r)
        vf = base + duration_days(rs.delay or DEFAULT_DELAY, len(src), rng)
        hi = np.full(len(src), self.as_of, np.int64)
        for b in src_before:
            hi = np.minimum(hi, self.rel_bound(rs, b, "before", src))
        late = vf > hi
        if late.any():  # too late: somewhere between the anchor and the last possible day
            span = np.maximum(hi[late] - base[late], 0)
            vf[late] = base[late] + np.floor(rng.random(int(late.sum())) * (span + 1)).astype(np.int64)
        return np.minimum(vf, np.maximum(hi, base))

    def _clip_end(self, rs: RelationSpec, tgt_before, src, picks, valid_to, c_to, jitter) -> np.ndarray:
        """Tenure ends cut at the picked target's bounds (its end, an age limit) and at the end
        of the link covering it; cut at an age limit, a tenure ends a little before it."""
        end = np.minimum(valid_to, c_to)
        if not tgt_before:
            return end
        soft = self.soft_bound({"source": rs.source, "target": rs.target})
        for b in tgt_before:
            v = self.rel_bound(rs, b, "before", src, picks)
            if soft(b):
                v = np.where(_real(v), v - jitter, v)
            end = np.minimum(end, np.where(v > self.as_of, POS_INF, v))  # a limit after as_of has not cut it yet
        return end

    def _overlaps(self, picks, settled_round, rnd: int, start, end, has) -> np.ndarray:
        """New picks (this round) whose tenure overlaps another tenure of the same target:
        one settled earlier, or an earlier-starting new one."""
        m = len(picks)
        out = np.zeros(m, bool)
        big = np.int64(10_000_000)
        end_c = np.minimum(end, self.as_of + 1)
        new = np.nonzero(has & (settled_round == rnd))[0]
        if len(new) == 0:
            return out
        acc = np.nonzero(has & (settled_round < rnd))[0]
        if len(acc) > 4 * len(new):  # only the targets picked this round matter
            acc = acc[np.isin(picks[acc], picks[new])]
        key = lambda rows: picks[rows] * big + (start[rows] + 4_000_000)  # noqa: E731
        if len(acc):
            order = acc[np.argsort(key(acc), kind="stable")]
            ak = key(order)
            pos = np.searchsorted(ak, key(new), side="right")
            prev = np.clip(pos - 1, 0, len(order) - 1)
            nxt = np.clip(pos, 0, len(order) - 1)
            clash_prev = (pos > 0) & (picks[order[prev]] == picks[new]) & (end_c[order[prev]] > start[new])
            clash_next = (pos < len(order)) & (picks[order[nxt]] == picks[new]) & (start[order[nxt]] < end_c[new])
            out[new[clash_prev | clash_next]] = True
        fresh = new[~out[new]]
        if len(fresh) > 1:
            order = fresh[np.argsort(key(fresh), kind="stable")]
            g = picks[order]
            gid = np.cumsum(np.r_[True, g[1:] != g[:-1]]) - 1
            running = np.maximum.accumulate(end_c[order] + gid * big * 4) - gid * big * 4
            prev_max = np.r_[np.iinfo(np.int64).min, running[:-1]]
            first = np.r_[True, g[1:] != g[:-1]]
            out[order[~first & (start[order] < prev_max)]] = True
        return out

    def _cover_frame(self, rs: RelationSpec) -> pl.DataFrame:
        """Every (source row, target row) the requirement's path joins, with the span over
        which all of its links hold."""
        n_s = self.out.entities[rs.source].height
        df = pl.DataFrame({"src": np.arange(n_s, dtype=np.int64), "cur": np.arange(n_s, dtype=np.int64),
                           "c_from": np.full(n_s, NEG_INF, np.int64), "c_to": np.full(n_s, POS_INF, np.int64)})
        for hop, back in rs.requires.hops:
            e = self.out.edges[hop]
            for a, values in rs.requires.where.items():  # only covering links of these categories
                if a in e.columns:
                    e = e.filter(pl.col(a).is_in(values))
            near, far = ("tgt", "src") if back else ("src", "tgt")
            h = e.select(pl.col(near).alias("cur"), pl.col(far).alias("nxt"),
                         pl.col("valid_from").cast(pl.Int64).fill_null(NEG_INF).alias("h_from"),
                         pl.col("valid_to").cast(pl.Int64).fill_null(POS_INF).alias("h_to"))
            df = df.join(h, on="cur", how="inner").select(
                "src", pl.col("nxt").alias("cur"), pl.max_horizontal("c_from", "h_from").alias("c_from"),
                pl.min_horizontal("c_to", "h_to").alias("c_to")).filter(pl.col("c_from") <= pl.col("c_to"))
        return df.rename({"cur": "tgt"})

    def _cover_pick(self, cover: pl.DataFrame, rows, src, t0, g_src, g_tgt, lo, hi, key, w, excluded, rng, until=None):
        """One weighted target per row among those the requirement's path reaches (covering
        the row's date when it is known; for a tenure [t0, until), overlapping it), inside the
        row's group and key window. Candidates are looked up by (source, decade of the row's
        date) in a sorted index, so a row only meets the covering links of its own time."""
        s_rows = src[rows].astype(np.int64)
        keys, cols, b0, b1, nb = self._cover_index(cover, timed=t0 is not None)
        if t0 is not None:
            t = t0[rows]
            known = _real(t)
            b = np.clip(np.where(known, t, self.as_of) // _BUCKET, b0, b1) - b0
            base = s_rows * nb
            k_lo = np.where(known, base + b, base)
            k_hi = np.where(known, base + b + (2 if until is not None else 1), base)  # unknown dates: no candidates
            starts, ends = np.searchsorted(keys, k_lo), np.searchsorted(keys, k_hi)
        else:
            starts, ends = np.searchsorted(keys, s_rows), np.searchsorted(keys, s_rows, side="right")
        counts = ends - starts
        total = int(counts.sum())
        got = np.full(len(rows), -1, np.int64)
        f = np.full(len(rows), NEG_INF, np.int64)
        t_out = np.full(len(rows), POS_INF, np.int64)
        if total == 0:
            return got, f, t_out
        pos_rep = np.repeat(np.arange(len(rows)), counts)
        j = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(starts, counts)
        row = rows[pos_rep]
        tg, cf, ct = cols["tgt"][j], cols["c_from"][j], cols["c_to"][j]
        ok = (g_tgt[tg] == g_src[row]) & (key[tg] >= lo[row]) & (key[tg] <= hi[row]) & (w[tg] > 0)
        if excluded.any():
            ok &= ~excluded[tg]
        if until is not None:
            ok &= (cf < np.minimum(until[row], self.as_of + 1)) & (ct > t0[row])
            bk = cols["bucket"][j]  # met in two decades: keep the first meeting only
            ok &= (bk == np.clip(t0[row] // _BUCKET, b0, b1)) | (cf >= bk * _BUCKET)
        elif t0 is not None:
            tt = t0[row]
            ok &= (cf <= tt) & (ct >= tt)
        pos_rep, tg, cf, ct = pos_rep[ok], tg[ok], cf[ok], ct[ok]
        if len(pos_rep) == 0:
            return got, f, t_out
        score = -np.log1p(-rng.random(len(pos_rep))) / w[tg]  # exponential race: a weighted pick per row
        # Candidates are contiguous per row: the minimum score of each run wins.
        run = np.nonzero(np.r_[True, pos_rep[1:] != pos_rep[:-1]])[0]
        mins = np.minimum.reduceat(score, run)
        is_min = score == np.repeat(mins, np.diff(np.r_[run, len(pos_rep)]))
        cand = np.nonzero(is_min)[0]
        first = cand[np.r_[True, pos_rep[cand][1:] != pos_rep[cand][:-1]]]
        p = pos_rep[first]
        got[p], f[p], t_out[p] = tg[first], cf[first], ct[first]
        return got, f, t_out

    def _cover_index(self, cover: pl.DataFrame, timed: bool) -> tuple:
        """The cover sorted for slicing (memoised per frame): by source, or (timed) by
        (source, decade) with one row per decade each covering link spans."""
        memo = self.__dict__.setdefault("_cover_memo", {})
        if (id(cover), timed) in memo:
            return memo[(id(cover), timed)][1]
        b0, b1 = self.span_start // _BUCKET, self.as_of // _BUCKET
        nb = b1 - b0 + 2
        if timed:
            df = cover.with_columns(bucket=pl.int_ranges(
                (pl.col("c_from").clip(self.span_start, self.as_of) // _BUCKET).clip(b0, b1),
                (pl.col("c_to").clip(self.span_start, self.as_of) // _BUCKET).clip(b0, b1) + 1)).explode("bucket")
            df = df.with_columns(k=pl.col("src") * nb + (pl.col("bucket") - b0)).sort("k", maintain_order=True)
        else:
            df = cover.with_columns(k=pl.col("src")).sort("k", maintain_order=True)
        out = (df["k"].to_numpy(), {c: df[c].to_numpy() for c in df.columns}, b0, b1, nb)
        memo.clear()
        memo[(id(cover), timed)] = (cover, out)  # the frame is held so that its id stays its own
        return out

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

    def _conflicts(self, rs: RelationSpec, src, picks, settled_round, n_t, new: np.ndarray) -> np.ndarray:
        """Rows whose pick breaks a rule: self links, repeated pairs, a target over its cap.
        Earlier-settled rows keep their pick; the rest are redrawn. Only the picks made this
        round (`new`) can be redrawn, so only rows sharing their source or target are compared."""
        m = len(src)
        conflict = np.zeros(m, bool)
        new = new[picks[new] >= 0]
        if len(new) == 0:
            return conflict
        if rs.source == rs.target:
            conflict[new[picks[new] == src[new]]] = True

        def rows_of(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
            """Rows with a pick whose `values` are among `keys`, in priority order."""
            rows = np.nonzero((picks >= 0) & np.isin(values, keys))[0] if len(new) < m // 2 else np.nonzero(picks >= 0)[0]
            return rows[np.lexsort((rows, settled_round[rows]))]

        rows = rows_of(src, np.unique(src[new]))
        pair = src[rows].astype(np.int64) * max(n_t, 1) + picks[rows]
        _, first = np.unique(pair, return_index=True)
        later = np.ones(len(rows), bool)
        later[first] = False
        conflict[rows[later]] = True
        if rs.once_per is not None:  # a target once per group of sources (a laureate wins a prize once)
            grp = self._once_groups(rs)
            rows = rows_of(picks, np.unique(picks[new]))
            key = grp[src[rows]] * max(n_t, 1) + picks[rows]
            _, first = np.unique(key, return_index=True)
            later = np.ones(len(rows), bool)
            later[first] = False
            conflict[rows[later]] = True
        cap = rs.target_cap
        if cap is not None:
            rows = rows_of(picks, np.unique(picks[new]))
            order = rows[np.argsort(picks[rows], kind="stable")]  # by target, in priority order
            conflict[order[_group_rank(picks[order]) >= cap]] = True
        return conflict

    def _not_same(self, rs: RelationSpec, s_: np.ndarray, p_: np.ndarray, at: np.ndarray | None, n_t: int) -> np.ndarray:
        """Picks that go to a target their source is linked to by a `not_same` relation when the
        link starts (`at`; ever, for a link without dates, or one whose start is unknown)."""
        bad = np.zeros(len(s_), bool)
        key = s_.astype(np.int64) * max(n_t, 1) + p_
        for x in rs.not_same:
            idx = self._pair_index.get(x)
            if idx is None:
                e = self.out.edges[x]
                k = e["src"].to_numpy().astype(np.int64) * max(n_t, 1) + e["tgt"].to_numpy()
                order = np.argsort(k, kind="stable")
                f = e["valid_from"].cast(pl.Int64).fill_null(NEG_INF).to_numpy()[order]
                t = e["valid_to"].cast(pl.Int64).fill_null(POS_INF).to_numpy()[order]
                idx = self._pair_index[x] = (k[order], f, t)
            k, f, t = idx
            if len(k) == 0:
                continue
            i = np.minimum(np.searchsorted(k, key), len(k) - 1)
            hit = k[i] == key  # (a pair links at most once by a relation)
            if at is not None:
                hit &= ~_real(at) | ((f[i] <= at) & (at < t[i]))
            bad |= hit
        return bad

    def _once_groups(self, rs: RelationSpec) -> np.ndarray:
        """Per source row: a code of its `once_per` value (each missing value a group of its own)."""
        v = self.out.entities[rs.source][rs.once_per].cast(pl.String)
        codes = v.rank("dense").fill_null(0).cast(pl.Int64).to_numpy()
        missing = v.is_null().to_numpy()
        return np.where(missing, codes.max(initial=0) + 1 + np.arange(len(v)), codes).astype(np.int64)

    def _event_window(self, rs: RelationSpec, src, tgt, c_from=None, c_to=None) -> tuple[np.ndarray, np.ndarray]:
        after, before = link_bounds(self.world, rs)
        lo, hi = self.window(after, before, lambda b, side: self.rel_bound(rs, b, side, src, tgt))
        lo = np.full(len(src), self.span_start, np.int64) if lo is None else np.maximum(lo, self.span_start)
        hi = np.full(len(src), self.as_of, np.int64) if hi is None else np.minimum(hi, self.as_of)
        if c_from is not None:
            lo, hi = np.maximum(lo, c_from), np.minimum(hi, c_to)
        return lo, hi

    def _history(self, r: str, rs: RelationSpec, active, k, rng, src_after, src_before):
        """Tenures per source inside its window (vectorised): successive ones cut at random
        points or laid end to end from drawn lengths and gaps, or independent ones (concurrent).
        The first starts a drawn delay after the window opens; a tenure that runs into an age
        limit ends a little before it, one that runs into as_of stays open."""
        h = rs.history
        soft = self.soft_bound({"source": rs.source, "target": rs.target})
        lo, hi, soft_hi = self.window(src_after, src_before, lambda b, side: self.rel_bound(rs, b, side, active), soft)
        lo = np.full(len(active), self.span_start, np.int64) if lo is None else np.maximum(lo, self.span_start)
        if hi is None:
            hi, soft_hi = np.full(len(active), self.as_of, np.int64), np.zeros(len(active), bool)
        soft_hi = soft_hi & (hi < self.as_of)
        hi = np.minimum(hi, self.as_of)
        ok = (lo < hi) & (k > 0)
        active, k, lo, hi, soft_hi = active[ok], k[ok], lo[ok], hi[ok], soft_hi[ok]
        n_g = len(active)
        grp = np.repeat(np.arange(n_g), k)
        first = np.ones(len(grp), bool)
        first[1:] = grp[1:] != grp[:-1]
        delay = duration_days(h.start or DEFAULT_DELAY, n_g, child_rng(self.seed, "rel-start", r))
        if h.concurrent:
            if h.start is not None:
                start = lo[grp] + duration_days(h.start, len(grp), child_rng(self.seed, "rel-start-each", r))
            else:
                start = lo[grp] + np.where(first, delay[grp], np.floor(rng.random(len(grp)) * (hi - lo)[grp]).astype(np.int64))
            end = start + duration_days(h.length, len(grp), child_rng(self.seed, "rel-length", r)) if h.length else hi[grp]
        elif h.length is None:
            first_start = lo + delay
            u = np.where(first, 0.0, rng.random(len(grp)))
            start = first_start[grp] + np.floor(u * np.maximum(hi - first_start, 0)[grp]).astype(np.int64)
            order = np.lexsort((start, grp))
            grp, start = grp[order], start[order]
            last = np.ones(len(grp), bool)
            last[:-1] = grp[:-1] != grp[1:]
            end = np.empty_like(start)
            end[:-1] = start[1:]
            if h.gap is not None:
                gap = duration_days(h.gap, len(grp), child_rng(self.seed, "rel-gap", r))
                end = np.where(last, end, np.maximum(end - np.maximum(gap, 0), start + 1))
            end[last] = POS_INF
        else:
            length = np.maximum(duration_days(h.length, len(grp), child_rng(self.seed, "rel-length", r)), 1)
            gap = duration_days(h.gap, len(grp), child_rng(self.seed, "rel-gap", r)) if h.gap else np.zeros(len(grp), np.int64)
            step = length + np.maximum(gap, 0)
            csum = np.cumsum(step)
            before_group = np.repeat(np.r_[0, csum[np.nonzero(first)[0][1:] - 1]], k) if len(grp) else csum
            offset = csum - step - before_group
            start = (lo + delay)[grp] + offset
            end = start + length
        cut = end >= hi[grp]
        end = np.minimum(end, hi[grp])
        jitter = duration_days(DEFAULT_DELAY, len(grp), child_rng(self.seed, "rel-cut", r))
        end = np.where(cut & soft_hi[grp], end - jitter, end)
        if h.current:
            end = np.where(cut & (hi[grp] >= self.as_of), POS_INF, end)
        nonempty = (end > start) & (start < hi[grp])
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

                # Chinese words are not delimited by spaces: they drop wherever they occur.
                if any(has_cjk(w) for w in al.drop):
                    pat = "|".join(re.escape(w) if has_cjk(w) else r"\b" + re.escape(w) + r"\b" for w in al.drop)
                else:
                    pat = r"\b(?:" + "|".join(re.escape(w) for w in al.drop) + r")\b"
                alias = nm.str.replace_all(pat, "").str.replace_all(r"\s{2,}", " ").str.strip_chars(" ,&-")
            elif al.kind == "pinyin":
                alias = pinyin_names(nm, surname=al.surname, translate=al.translate)
            elif al.kind == "pattern":
                pre, _, post = al.template.partition("{name}")
                alias = pre + nm + post
            else:  # former name
                alias = self.name_sampler(t).draw(sel, rng)
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
                self.make_name(node[1])
            elif kind == "rename":
                self.derive_names(node[1])
            elif kind == "attr":
                self.make_attr(node[1], node[2])
            elif kind == "rel":
                self.make_relation(node[1])
            elif kind == "linkattr":
                self.make_link_entity(node[1], node[2])
            elif kind == "aliases":
                self.make_aliases(node[1])
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



def _active_sources(rng: np.random.Generator, rate: float, n: int) -> np.ndarray:
    """The sources that make links of a relation (its `rate`): the first draw of the relation's generator."""
    return np.nonzero(rng.random(n) < rate)[0] if rate < 1 else np.arange(n)


def _take_from(v, copies: np.ndarray, sources: np.ndarray):
    """A kept name-part array with the copies' entries taken from their sources."""
    if isinstance(v, pl.Series):
        a = v.to_numpy().astype(object)
        a[copies] = a[sources]
        return pl.Series(v.name, a.tolist(), dtype=v.dtype)
    a = np.array(v, dtype=object, copy=True)
    a[copies] = a[sources]
    return a if isinstance(v, np.ndarray) else list(a)


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


def _overlapping_repeats(key: np.ndarray, vals: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Rows whose value another row of the same key already holds over an overlapping span
    [start, end) (of two such rows, the later-starting one)."""
    order = np.lexsort((end, start, vals, key))
    k, v, s, e = key[order], vals[order], start[order], end[order]
    same = np.r_[False, (k[1:] == k[:-1]) & (v[1:] == v[:-1])]
    group = np.cumsum(~same).astype(np.int64)
    # the latest end among the group's earlier rows: a running max of (group, end), groups ascending
    packed = np.maximum.accumulate((group << 33) | (e.astype(np.int64) + 2**31))
    prev_end = (np.r_[0, packed[:-1]] & ((1 << 33) - 1)) - 2**31
    out = np.zeros(len(key), bool)
    out[order] = same & (s < prev_end)
    return out


def _rising(vals: pl.Series, order: list[str], src: np.ndarray) -> pl.Series:
    """`rises`: each source's drawn values put in rising order (their place in `order`) along its
    links, which run by start date within the source's block (`_edge_frame`'s sort): the same
    values per source, so the category's shares are as drawn."""
    pos = {v: i for i, v in enumerate(order)}
    r = vals.replace_strict(pos, default=len(order), return_dtype=pl.Int64).to_numpy()
    return vals.gather(np.lexsort((r, src)))
