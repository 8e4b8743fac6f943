"""The world as arrays, for sampling tasks at scale.

Per entity type: the ids in id order (an entity's *code* is its position) and a polars frame
of its attributes. Per hop (a relation link, its reverse, or an entity-valued lookup): the
links as two integer arrays of codes, sorted by source, with their validity dates. A
constraint becomes a boolean mask over a type, propagated back along its hops; a column
becomes a gather along to-one hops. Every array is loaded once, in one query, and cached,
so a candidate task costs array operations rather than SQL queries (the SQL of each task is
still written, for audit, and the tests run it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ..plumbing import quote_ident as _q
from .pack import LookupAttr
from .spec import ResolvedWorld, attribute_dtype, note_sql


@dataclass(frozen=True)
class Step:
    """One hop: a relation link (`rel`), an entity-valued lookup attribute (`lookup`), or the
    entity a link names (`held`, name '<relation>.<attribute>': a doctorate's supervisor, from
    the link's source)."""

    kind: str  # rel | lookup | held
    name: str
    source: str
    target: str
    current: bool = False  # since-relations: only the link in force as of the world's date
    to_one: bool = True
    reverse: bool = False  # follow the link from its target back to its source


@dataclass(frozen=True)
class Links:
    """The links of one hop: `src[i] -> dst[i]` (codes in the hop's source and target types),
    sorted by source then target, with validity dates (NaT: open or undated)."""

    src: np.ndarray
    dst: np.ndarray
    valid_from: np.ndarray  # datetime64[D]
    valid_to: np.ndarray  # datetime64[D]
    starts: np.ndarray  # per source code: index of its first link (len n_source + 1)
    notes: dict[str, np.ndarray] = field(default_factory=dict)  # the links' own attributes (a job's department)
    via: np.ndarray | None = None  # `held` hops: the code of each link's target (the institute of the doctorate)

    def of(self, code: int) -> slice:
        return slice(int(self.starts[code]), int(self.starts[code + 1]))


def lookup_target(world: ResolvedWorld, t: str, a: str) -> str | None:
    """The entity type an entity-valued lookup attribute points to (None if it holds a value)."""
    spec = world.types[t].attributes.get(a)
    if not isinstance(spec, LookupAttr):
        return None
    rs = world.relations[spec.via]
    target = rs.target if rs.source == t else rs.source
    if spec.attribute == "id":
        return target
    return lookup_target(world, target, spec.attribute)


def world_hops(world: ResolvedWorld) -> tuple[dict[str, list[Step]], dict[str, list[Step]]]:
    """Per type, the hops out of it (`steps`: relations from their source and entity-valued
    lookups) and the relations read from their target (`in_steps`). Relations with a `since:`
    date follow the current link only; tenure relations are never to-one."""
    steps: dict[str, list[Step]] = {t: [] for t in world.types}
    in_steps: dict[str, list[Step]] = {t: [] for t in world.types}
    for r, rs in world.relations.items():
        to_one = rs.cardinality in ("1:1", "N:1") and not rs.history
        steps[rs.source].append(Step("rel", r, rs.source, rs.target, current=rs.since is not None, to_one=to_one))
        one_source = rs.cardinality in ("1:1", "1:N") and not rs.history
        in_steps[rs.target].append(Step("rel", r, rs.target, rs.source, current=rs.since is not None,
                                        to_one=one_source, reverse=True))
    for t, et in world.types.items():
        for a, s in et.attributes.items():
            if isinstance(s, LookupAttr) and not s.hidden:
                target = lookup_target(world, t, a)
                if target:
                    steps[t].append(Step("lookup", a, t, target))
    return steps, in_steps


_KEY = "('0x' || right({col}, 16))::UBIGINT"  # an id `<type>_<16 hex>` as a 64-bit number (id order)


class WorldArrays:
    """Entity ids, attribute frames and hop links of one stored world, loaded lazily.

    Ids are `<type>_<16 hex>` (content-derived, see the world store), so within a type their
    hex tails, read as 64-bit numbers, sort as the ids do: mapping ids to codes is a binary
    search over integers, and links are read from the store as integers in one query."""

    def __init__(self, con, world: ResolvedWorld):
        self.con = con
        con.execute("SET enable_progress_bar = false")  # bulk reads run for seconds on large worlds
        self.world = world
        self.types = world.types  # computed properties on ResolvedWorld: cache them
        self.relations = world.relations
        self.ids: dict[str, np.ndarray] = {}
        self.keys: dict[str, np.ndarray] = {}
        for t in self.types:
            got = con.execute(f"SELECT id, {_KEY.format(col='id')} AS k FROM {_q(t)} ORDER BY id").fetchnumpy()
            self.ids[t] = np.asarray(got["id"], dtype=object)
            keys = np.asarray(got["k"], dtype=np.uint64)
            if len(keys) > 1 and not (keys[1:] > keys[:-1]).all():
                raise ValueError(f"ids of {t} are not <type>_<16 hex> in id order")
            self.keys[t] = keys
        self._frames: dict[str, pl.DataFrame] = {}
        self._names: dict[str, np.ndarray] = {}
        self._links: dict[Step, Links] = {}
        self._to_one: dict[Step, tuple[np.ndarray, np.ndarray]] = {}
        self._in: dict[Step, tuple[np.ndarray, np.ndarray]] = {}
        self._dtypes: dict[tuple[str, str], str] = {}
        self._values: dict[tuple[str, str], np.ndarray] = {}

    # ------------------------------------------------------------------ entities

    def n(self, t: str) -> int:
        return len(self.ids[t])

    @staticmethod
    def type_of(eid: str) -> str:
        """Ids are `<type>_<16 hex>`."""
        return eid.rsplit("_", 1)[0]

    def codes(self, t: str, ids) -> np.ndarray:
        """Codes of entity ids of type t (-1 for ids that are not entities of t)."""
        ids = pl.Series(np.asarray(ids, dtype=object), dtype=pl.String)
        ok = ids.str.starts_with(t + "_") & (ids.str.len_chars() == len(t) + 17)
        keys = ids.str.slice(-16).str.to_integer(base=16, dtype=pl.UInt64, strict=False)
        return self.key_codes(t, keys.fill_null(0).to_numpy(), (ok & keys.is_not_null()).fill_null(False).to_numpy())

    def key_codes(self, t: str, keys: np.ndarray, ok: np.ndarray | None = None) -> np.ndarray:
        """Codes of entities of type t given by their 64-bit keys (-1 where none)."""
        ref = self.keys[t]
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(ref):
            return np.full(len(keys), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(ref, keys), len(ref) - 1)
        hit = ref[pos] == keys
        if ok is not None:
            hit &= ok
        return np.where(hit, pos, -1).astype(np.int64)

    def code(self, eid: str) -> int:
        t = self.type_of(eid)
        if t not in self.keys:
            return -1
        try:
            key = int(eid[-16:], 16)
        except ValueError:
            return -1
        return int(self.key_codes(t, np.array([key], dtype=np.uint64))[0]) if len(eid) == len(t) + 17 else -1

    def values(self, t: str, a: str) -> np.ndarray:
        """An attribute of every entity as float64 (NaN where missing), cached."""
        key = (t, a)
        if key not in self._values:
            self._values[key] = self.frame(t)[a].cast(pl.Float64).fill_null(np.nan).to_numpy()
        return self._values[key]

    def frame(self, t: str) -> pl.DataFrame:
        if t not in self._frames:
            self._frames[t] = self.con.sql(f"SELECT * FROM {_q(t)} ORDER BY id").pl()
        return self._frames[t]

    def names(self, t: str) -> np.ndarray:
        if t not in self._names:
            self._names[t] = np.asarray(self.frame(t)["name"].to_numpy(), dtype=object)
        return self._names[t]

    def name(self, eid: str) -> str:
        return self.names(self.type_of(eid))[self.code(eid)]

    def dtype(self, t: str, a: str) -> str:
        key = (t, a)
        if key not in self._dtypes:
            self._dtypes[key] = attribute_dtype(self.world, t, a)
        return self._dtypes[key]

    # ------------------------------------------------------------------ hops

    def links(self, step: Step) -> Links:
        if step not in self._links:
            if step.kind == "rel":
                where = " WHERE valid_to IS NULL" if step.current else ""
                a, b = ("target", "source") if step.reverse else ("source", "target")
                names = list(self.world.relations[step.name].attributes)
                extra = "".join(f", {note_sql(self.world, step.name, n)} AS {_q('note_' + n)}" for n in names)  # as pages write it
                got = self.con.execute(f"SELECT {_KEY.format(col=a)} AS a, {_KEY.format(col=b)} AS b, valid_from, valid_to{extra} "
                                       f"FROM {_q('rel_' + step.name)}{where} ORDER BY a, b, valid_from NULLS FIRST").fetchnumpy()
                src = self.key_codes(step.source, got["a"])
                dst = self.key_codes(step.target, got["b"])
                vf, vt = _days(got["valid_from"]), _days(got["valid_to"])
                notes = {n: np.asarray(got["note_" + n], dtype=object) for n in names}
            elif step.kind == "held":  # the entity a link names: from the link's source, by the link's own column
                r, n = step.name.split(".")
                rs = self.world.relations[r]
                got = self.con.execute(f"SELECT {_KEY.format(col='source')} AS a, {_KEY.format(col=_q(n))} AS b, valid_from, "
                                       f"valid_to, {_KEY.format(col='target')} AS t FROM {_q('rel_' + r)} "
                                       f"WHERE {_q(n)} IS NOT NULL ORDER BY a, b, valid_from NULLS FIRST").fetchnumpy()
                src = self.key_codes(step.source, got["a"])
                dst = self.key_codes(step.target, got["b"])
                vf, vt = _days(got["valid_from"]), _days(got["valid_to"])
                notes = {"": self.key_codes(rs.target, got["t"])}  # (carried as `via`)
            else:
                col = self.frame(step.source)[step.name]
                keep = col.is_not_null().to_numpy()
                src = np.flatnonzero(keep).astype(np.int64)
                dst = self.codes(step.target, col.filter(col.is_not_null()).to_numpy())
                vf = vt = np.full(len(src), np.datetime64("NaT"), dtype="datetime64[D]")
                notes = {}
            ok = (src >= 0) & (dst >= 0)
            src, dst, vf, vt = src[ok], dst[ok], vf[ok], vt[ok]
            notes = {n: v[ok] for n, v in notes.items()}
            # keys sort as codes do, so rows read in key order are in (source, target, date) order
            if len(src) > 1 and (np.diff(src) < 0).any():
                order = np.lexsort((vf.astype(np.int64), dst, src))
                src, dst, vf, vt = src[order], dst[order], vf[order], vt[order]
                notes = {n: v[order] for n, v in notes.items()}
            starts = np.searchsorted(src, np.arange(self.n(step.source) + 1))
            via = notes.pop("", None)
            self._links[step] = Links(src, dst, vf, vt, starts, notes, via)
        return self._links[step]

    def to_one(self, step: Step) -> tuple[np.ndarray, np.ndarray]:
        """Per source code: the target code (-1: none) and the link's valid_from (NaT: undated).
        For a hop with several links per source the first (in target order) is taken; callers
        use to-one hops only."""
        if step not in self._to_one:
            lk = self.links(step)
            n = self.n(step.source)
            dst = np.full(n, -1, dtype=np.int64)
            vf = np.full(n, np.datetime64("NaT"), dtype="datetime64[D]")
            first = lk.starts[:-1]
            has = lk.starts[1:] > first
            dst[has] = lk.dst[first[has]]
            vf[has] = lk.valid_from[first[has]]
            self._to_one[step] = (dst, vf)
        return self._to_one[step]

    def back(self, step: Step, mask: np.ndarray) -> np.ndarray:
        """Sources with at least one link of the hop into `mask` (a mask over the target type);
        a few targets are looked up by their incoming links, many by a pass over all links."""
        lk = self.links(step)
        out = np.zeros(self.n(step.source), dtype=bool)
        hits = np.flatnonzero(mask)
        if len(hits) * 64 < len(lk.dst):
            order, starts = self._incoming(step)
            lens = starts[hits + 1] - starts[hits]
            idx = np.repeat(starts[hits] - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(int(lens.sum()))
            out[lk.src[order[idx]]] = True
        else:
            out[lk.src[mask[lk.dst]]] = True
        return out

    def _incoming(self, step: Step) -> tuple[np.ndarray, np.ndarray]:
        """The hop's links ordered by target, and per target code the index of its first."""
        if step not in self._in:
            lk = self.links(step)
            order = np.argsort(lk.dst, kind="stable")
            self._in[step] = (order, np.searchsorted(lk.dst[order], np.arange(self.n(step.target) + 1)))
        return self._in[step]

    def follow(self, path, codes: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """Gather along to-one hops: the code reached after each hop (-1 once a hop is missing)
        and the links' valid_from per hop (for fact ids)."""
        cur = np.asarray(codes, dtype=np.int64)
        reached, dates = [], []
        for st in path:
            dst, vf = self.to_one(st)
            ok = cur >= 0
            nxt = np.full(len(cur), -1, dtype=np.int64)
            d = np.full(len(cur), np.datetime64("NaT"), dtype="datetime64[D]")
            nxt[ok] = dst[cur[ok]]
            d[ok] = vf[cur[ok]]
            reached.append(nxt)
            dates.append(d)
            cur = nxt
        return reached, dates


def _days(col) -> np.ndarray:
    """A DuckDB date column (a masked array where it holds NULLs) as datetime64[D] with NaT."""
    if isinstance(col, np.ma.MaskedArray):
        out = np.asarray(col.data).astype("datetime64[D]")
        out[np.ma.getmaskarray(col)] = np.datetime64("NaT")
        return out
    return np.asarray(col).astype("datetime64[D]")


def iso(d: np.ndarray) -> np.ndarray:
    """datetime64[D] -> ISO strings ('' for NaT)."""
    out = np.datetime_as_string(d, unit="D").astype(object)
    out[np.isnat(d)] = ""
    return out
