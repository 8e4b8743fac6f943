"""Drawing the world's links: for each relation, which sources link, how many times and when,
to which targets (by weight, in their group, eligible by date, covered by another link, one
each, capped, without overlap), with what dates and link attributes; and the entity a link
names (`kind: entity`). The planner (`planner._Generator`) calls `LinkPlanner.make_relation` and
`make_link_entity` in dependency order; every draw takes a child generator named after the
relation, so a world is the same whatever else changes.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ..errors import PlanError
from .feasible import Coverage
from .pack import (
    DateBound,
    LinkEntity,
    LinkNumber,
    RelationSpec,
    WeightSelect,
)
from .sampling import (
    DEFAULT_DELAY,
    NEG_INF,
    POS_INF,
    TargetIndex,
    child_rng,
    duration_days,
    encode_groups,
    fitness_weights,
    sample_days,
    sample_numeric,
    weighted_choice,
)
from .spec import link_bounds

ROUNDS = 16  # rounds of redrawing conflicting target picks
SENIORITY_JITTER_YEARS = 2.0  # `seniority`: how far a link's standing may move its value's place (sd, years)
_BUCKET = 3653  # days: covering links are looked up by decade


def is_real(v: np.ndarray) -> np.ndarray:
    return (v > NEG_INF // 2) & (v < POS_INF // 2)


class _Key:
    """A target attribute picks are windowed on: its values (days) and where it is missing."""

    def __init__(self, values: np.ndarray, is_null: np.ndarray):
        self.values, self.is_null = values, is_null


def group_rank(keys: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... within runs of equal keys (keys sorted)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, np.int64)
    start = np.ones(n, bool)
    start[1:] = keys[1:] != keys[:-1]
    idx = np.arange(n)
    first = np.maximum.accumulate(np.where(start, idx, 0))
    return idx - first


def active_sources(rng: np.random.Generator, rate: float, n: int) -> np.ndarray:
    """The sources that make links of a relation (its `rate`): the first draw of the relation's generator."""
    return np.nonzero(rng.random(n) < rate)[0] if rate < 1 else np.arange(n)


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


class LinkPlanner:
    """Draws the links of the world's relations for the planner `g` (whose entities, attributes,
    seeds and date bounds it reads): `make_relation` one relation's links, `make_link_entity` the
    entity a link names once the relation it holds is drawn."""

    def __init__(self, g):
        self.g = g
        self._pair_index: dict[str, tuple] = {}  # a relation's links by (source, target): `not_same` looks them up

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
            self.g.out.repairs[f"relation {r}: targets left without a link"] = int(d.n_t - len(np.unique(picks[keep])))
        self.g.out.repairs[f"relation {r}: targets redrawn"] = d.redrawn
        self.g.out.repairs[f"relation {r}: links dropped (no eligible target)"] = int((~keep).sum())
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
        self.g.out.edges[r] = self._link_attributes(r, rs, self._edge_frame(src, tgt, valid_from, valid_to))

    def _link_sources(self, r: str) -> _LinkDraw:
        """The sources of r's links: which sources take part (`rate`), how many links each makes
        (`count`, per case of a `given` category), and when each link is made where that is
        known before its target is picked (a history's stints, `since`, `at`)."""
        rs = self.g.relations[r]
        d = _LinkDraw(r, rs, child_rng(self.g.seed, "rel", r), self.g.out.entities[rs.source], self.g.out.entities[rs.target])
        rng = d.rng
        d.active = active_sources(rng, rs.rate, d.n_s)
        cr = rs.base_count
        k = rng.integers(cr.min, cr.max + 1, len(d.active))
        if rs.given is not None:  # a count range per value of a source category (`cases`)
            g = self.g.given_values(rs.source, rs.given).gather(d.active)
            for v, c in rs.cases.items():
                sel = (g == v).fill_null(False).to_numpy()
                if sel.any():
                    k[sel] = rng.integers(c.min, c.max + 1, int(sel.sum()))
        after, d.before = link_bounds(self.g.world, rs)
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
                t0 = self.g.rel_bound(rs, rs.at, "after", d.src)
                d.t0 = np.where(is_real(t0), t0, NEG_INF)
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
            w = fitness_weights(n_t, rs.alpha, child_rng(self.g.seed, "fitness", d.r))
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
            d.g_src[wild] = d.g_tgt[child_rng(self.g.seed, "rel-same-any", d.r).choice(n_t, size=len(wild), p=w / w.sum())]
        if d.biased:  # a bias, not a rule: the other links look in the group of a target drawn by weight
            d.srng = child_rng(self.g.seed, "rel-same", d.r)
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
            d.cut_jitter = duration_days(DEFAULT_DELAY, m, child_rng(self.g.seed, "rel-cut-target", d.r))
            if d.cover is not None:  # a covered tenure may begin when its covering link does
                d.cover_jitter = duration_days(DEFAULT_DELAY, m, child_rng(self.g.seed, "rel-cover", d.r))
        d.unfillable = np.zeros(m, bool)
        if rs.each_target and d.cover is None and n_t and m:
            ok_t = ~key.is_null if isinstance(key, _Key) else np.ones(n_t, bool)
            d.reserved = self._reserve(d.g_src, d.g_tgt, d.key_arr, d.lo, d.hi, ok_t, child_rng(self.g.seed, "rel-each", d.r))
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
                d.start[sel] = np.where(moved, cf + np.minimum(d.cover_jitter[sel], np.maximum(self.g.as_of - cf, 0)),
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
            drng = child_rng(self.g.seed, "rel-date", r)
            if rs.date.offset is not None:
                base = self.g.rel_bound(rs, rs.date.offset.ref, "after", src, tgt)
                valid_from, _ = self.g.offset_draw(base, rs.date.offset, d_lo, d_hi, drng)
            else:
                valid_from = sample_days(d_lo, d_hi, drng)
            valid_to = np.full(len(src), POS_INF)
        elif rs.since:
            valid_from = d.valid_from[keep]
            ends = [self.g.rel_bound(rs, b, "before", src, tgt) for b in d.before]
            valid_to = np.minimum.reduce(ends) if ends else np.full(len(src), POS_INF)
            valid_to = np.where(valid_to >= self.g.as_of, POS_INF, np.maximum(valid_to, valid_from))
        return src, tgt, valid_from, valid_to

    def _link_attributes(self, r: str, rs: RelationSpec, edges: pl.DataFrame) -> pl.DataFrame:
        """Each link's own values (a member's role), drawn by weight, by seniority, rising, one
        per target; a link's entity is chosen later (`make_link_entity`)."""
        for a, attr in rs.attributes.items():
            rng = child_rng(self.g.seed, "link-attr", r, a)
            if isinstance(attr, LinkEntity):
                continue  # chosen once the relation it holds is drawn too (make_link_entity)
            if isinstance(attr, LinkNumber):
                vals = self._link_numbers(r, a, attr, edges, rng)
            else:
                vals = self.g.categorical(rs.source, attr, edges.height, rng)
                if attr.seniority is not None:
                    vals = self._by_seniority(rs, attr, vals, edges, child_rng(self.g.seed, "link-seniority", r, a))
                if attr.rises:
                    vals = _rising(vals, attr.rises, edges["src"].to_numpy())
                if attr.one_per_target is not None:
                    vals = self._one_per_target(r, a, attr, vals, edges, rng)
            edges = edges.with_columns(self.g.null_mask(f"rel_{r}", a, attr.null_rate, vals).alias(a))
        return edges

    def make_link_entity(self, r: str, a: str, tries: int = 16, rounds: int = 4) -> None:
        """A link's entity (`LinkEntity`): per link, one of the entities holding a `holds` link
        (meeting `where`) to the link's end when the link starts (any time for an undated link),
        never one of the link's own ends, drawn uniformly among those links: a few rounds of random
        picks among the end's holder links that start by then, then an exact pass over the links
        still without one. A link no holder covers has none (counted in `plan`'s report)."""
        rs = self.g.relations[r]
        attr = rs.attributes[a]
        kind = attr.entity_type(self.g.relations)
        edges = self.g.out.edges[r]
        h = self.g.out.edges[attr.relation]
        for k, vals in attr.where.items():
            h = h.filter(pl.col(k).is_in(vals))
        rng = child_rng(self.g.seed, "link-entity", r, a)
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
        self.g.out.repairs[f"relation {r}: links left without a {a} (no {kind} on a {attr.relation} link covering the day)"] = int((pick < 0).sum())
        vals = pl.Series(np.where(pick >= 0, hsrc[np.maximum(pick, 0)] if len(hsrc) else -1, -1), dtype=pl.Int64)
        vals = vals.scatter(np.flatnonzero(pick < 0), None) if (pick < 0).any() else vals
        self.g.out.edges[r] = edges.with_columns(self.g.null_mask(f"rel_{r}", a, attr.null_rate, vals).alias(a))

    def _by_seniority(self, rs: RelationSpec, attr, vals: pl.Series, edges: pl.DataFrame, rng) -> pl.Series:
        """`seniority`: the drawn values given out over all links in order of the source's standing
        when each starts (its age, or the time since its first link of the relation), give or take
        SENIORITY_JITTER_YEARS; the values drawn stay the values given (shares as drawn)."""
        src = edges["src"].to_numpy()
        start = edges["valid_from"].to_physical().cast(pl.Int64).to_numpy()  # no null: the relation is dated
        if attr.seniority == "age":
            born = self.g.days(rs.source, self.g.world.types[rs.source].lifecycle.start, NEG_INF)[src]
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
        rng = child_rng(self.g.seed, "rel-rescue", r)
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
        self.g.out.repairs[f"relation {r}: links left without a {a} (no distinct one free)"] = int(clash.sum())
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
        self.g.out.repairs[f"relation {r}: links whose {a} another link to the target held (another drawn)"] = int(clash.sum())
        if one.exactly and n:
            order = np.lexsort((rng.random(n), tgt))
            first = order[np.r_[True, tgt[order][1:] != tgt[order][:-1]]]  # one random link per target
            lacking = ~np.isin(tgt[first], tgt[v == one.value])
            v[first[lacking]] = one.value
            self.g.out.repairs[f"relation {r}: targets whose {a} {one.value} was given to a link"] = int(lacking.sum())
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
            lo = self.g.rel_bound(rs, el.after, "after", src, valid_from=valid_from) if el.after else np.full(m, NEG_INF)
            hi = self.g.rel_bound(rs, el.before, "before", src, valid_from=valid_from) if el.before else np.full(m, POS_INF)
            return _Key(col.fill_null(0).to_numpy(), col.is_null().to_numpy()), lo, hi
        start = next((b for b in tgt_after if not b.years and not b.days), None) if t0 is not None else None
        if start is not None:
            col = T[start.ref.split(".", 1)[1]].to_physical().cast(pl.Int64)
            return (_Key(col.fill_null(0).to_numpy(), col.is_null().to_numpy()), np.full(m, NEG_INF),
                    np.where(is_real(t0), t0, POS_INF))
        return np.zeros(n_t, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64)

    def _alive(self, rs: RelationSpec, tgt_after, tgt_before, src, picks, t0) -> np.ndarray:
        """Picked targets that exist at the link's date: after their start bounds, before their ends."""
        ok = np.ones(len(src), bool)
        known = is_real(t0)
        for b in tgt_after:
            ok &= ~known | (self.g.rel_bound(rs, b, "after", src, picks) <= t0)
        for b in tgt_before:
            ok &= ~known | (self.g.rel_bound(rs, b, "before", src, picks) >= t0)
        return ok

    def _since(self, r: str, rs: RelationSpec, src, src_before) -> np.ndarray:
        """A since link starts a while after its anchor date (a delay drawn per link), never
        after the source's end or as_of."""
        base = np.clip(self.g.rel_bound(rs, rs.since, "after", src), self.g.span_start, self.g.as_of)
        rng = child_rng(self.g.seed, "rel-since", r)
        vf = base + duration_days(rs.delay or DEFAULT_DELAY, len(src), rng)
        hi = np.full(len(src), self.g.as_of, np.int64)
        for b in src_before:
            hi = np.minimum(hi, self.g.rel_bound(rs, b, "before", src))
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
        soft = self.g.soft_bound({"source": rs.source, "target": rs.target})
        for b in tgt_before:
            v = self.g.rel_bound(rs, b, "before", src, picks)
            if soft(b):
                v = np.where(is_real(v), v - jitter, v)
            end = np.minimum(end, np.where(v > self.g.as_of, POS_INF, v))  # a limit after as_of has not cut it yet
        return end

    def _overlaps(self, picks, settled_round, rnd: int, start, end, has) -> np.ndarray:
        """New picks (this round) whose tenure overlaps another tenure of the same target:
        one settled earlier, or an earlier-starting new one."""
        m = len(picks)
        out = np.zeros(m, bool)
        big = np.int64(10_000_000)
        end_c = np.minimum(end, self.g.as_of + 1)
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
        n_s = self.g.out.entities[rs.source].height
        df = pl.DataFrame({"src": np.arange(n_s, dtype=np.int64), "cur": np.arange(n_s, dtype=np.int64),
                           "c_from": np.full(n_s, NEG_INF, np.int64), "c_to": np.full(n_s, POS_INF, np.int64)})
        for hop, back in rs.requires.hops:
            e = self.g.out.edges[hop]
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
            known = is_real(t)
            b = np.clip(np.where(known, t, self.g.as_of) // _BUCKET, b0, b1) - b0
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
            ok &= (cf < np.minimum(until[row], self.g.as_of + 1)) & (ct > t0[row])
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
        b0, b1 = self.g.span_start // _BUCKET, self.g.as_of // _BUCKET
        nb = b1 - b0 + 2
        if timed:
            df = cover.with_columns(bucket=pl.int_ranges(
                (pl.col("c_from").clip(self.g.span_start, self.g.as_of) // _BUCKET).clip(b0, b1),
                (pl.col("c_to").clip(self.g.span_start, self.g.as_of) // _BUCKET).clip(b0, b1) + 1)).explode("bucket")
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
            conflict[order[group_rank(picks[order]) >= cap]] = True
        return conflict

    def _not_same(self, rs: RelationSpec, s_: np.ndarray, p_: np.ndarray, at: np.ndarray | None, n_t: int) -> np.ndarray:
        """Picks that go to a target their source is linked to by a `not_same` relation when the
        link starts (`at`; ever, for a link without dates, or one whose start is unknown)."""
        bad = np.zeros(len(s_), bool)
        key = s_.astype(np.int64) * max(n_t, 1) + p_
        for x in rs.not_same:
            idx = self._pair_index.get(x)
            if idx is None:
                e = self.g.out.edges[x]
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
                hit &= ~is_real(at) | ((f[i] <= at) & (at < t[i]))
            bad |= hit
        return bad

    def _once_groups(self, rs: RelationSpec) -> np.ndarray:
        """Per source row: a code of its `once_per` value (each missing value a group of its own)."""
        v = self.g.out.entities[rs.source][rs.once_per].cast(pl.String)
        codes = v.rank("dense").fill_null(0).cast(pl.Int64).to_numpy()
        missing = v.is_null().to_numpy()
        return np.where(missing, codes.max(initial=0) + 1 + np.arange(len(v)), codes).astype(np.int64)

    def _event_window(self, rs: RelationSpec, src, tgt, c_from=None, c_to=None) -> tuple[np.ndarray, np.ndarray]:
        after, before = link_bounds(self.g.world, rs)
        lo, hi = self.g.window(after, before, lambda b, side: self.g.rel_bound(rs, b, side, src, tgt))
        lo = np.full(len(src), self.g.span_start, np.int64) if lo is None else np.maximum(lo, self.g.span_start)
        hi = np.full(len(src), self.g.as_of, np.int64) if hi is None else np.minimum(hi, self.g.as_of)
        if c_from is not None:
            lo, hi = np.maximum(lo, c_from), np.minimum(hi, c_to)
        return lo, hi

    def _history(self, r: str, rs: RelationSpec, active, k, rng, src_after, src_before):
        """Tenures per source inside its window (vectorised): successive ones cut at random
        points or laid end to end from drawn lengths and gaps, or independent ones (concurrent).
        The first starts a drawn delay after the window opens; a tenure that runs into an age
        limit ends a little before it, one that runs into as_of stays open."""
        h = rs.history
        soft = self.g.soft_bound({"source": rs.source, "target": rs.target})
        lo, hi, soft_hi = self.g.window(src_after, src_before, lambda b, side: self.g.rel_bound(rs, b, side, active), soft)
        lo = np.full(len(active), self.g.span_start, np.int64) if lo is None else np.maximum(lo, self.g.span_start)
        if hi is None:
            hi, soft_hi = np.full(len(active), self.g.as_of, np.int64), np.zeros(len(active), bool)
        soft_hi = soft_hi & (hi < self.g.as_of)
        hi = np.minimum(hi, self.g.as_of)
        ok = (lo < hi) & (k > 0)
        active, k, lo, hi, soft_hi = active[ok], k[ok], lo[ok], hi[ok], soft_hi[ok]
        n_g = len(active)
        grp = np.repeat(np.arange(n_g), k)
        first = np.ones(len(grp), bool)
        first[1:] = grp[1:] != grp[:-1]
        delay = duration_days(h.start or DEFAULT_DELAY, n_g, child_rng(self.g.seed, "rel-start", r))
        if h.concurrent:
            if h.start is not None:
                start = lo[grp] + duration_days(h.start, len(grp), child_rng(self.g.seed, "rel-start-each", r))
            else:
                start = lo[grp] + np.where(first, delay[grp], np.floor(rng.random(len(grp)) * (hi - lo)[grp]).astype(np.int64))
            end = start + duration_days(h.length, len(grp), child_rng(self.g.seed, "rel-length", r)) if h.length else hi[grp]
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
                gap = duration_days(h.gap, len(grp), child_rng(self.g.seed, "rel-gap", r))
                end = np.where(last, end, np.maximum(end - np.maximum(gap, 0), start + 1))
            end[last] = POS_INF
        else:
            length = np.maximum(duration_days(h.length, len(grp), child_rng(self.g.seed, "rel-length", r)), 1)
            gap = duration_days(h.gap, len(grp), child_rng(self.g.seed, "rel-gap", r)) if h.gap else np.zeros(len(grp), np.int64)
            step = length + np.maximum(gap, 0)
            csum = np.cumsum(step)
            before_group = np.repeat(np.r_[0, csum[np.nonzero(first)[0][1:] - 1]], k) if len(grp) else csum
            offset = csum - step - before_group
            start = (lo + delay)[grp] + offset
            end = start + length
        cut = end >= hi[grp]
        end = np.minimum(end, hi[grp])
        jitter = duration_days(DEFAULT_DELAY, len(grp), child_rng(self.g.seed, "rel-cut", r))
        end = np.where(cut & soft_hi[grp], end - jitter, end)
        if h.current:
            end = np.where(cut & (hi[grp] >= self.g.as_of), POS_INF, end)
        nonempty = (end > start) & (start < hi[grp])
        self.g.out.repairs[f"relation {r}: zero-length tenures dropped"] = int((~nonempty).sum())
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
        self.g.out.repairs[f"relation {r}: links removed to break cycles"] = len(removed)
        if not removed:
            return src, tgt, vf, vt
        keep = ~np.isin(src * width + tgt, np.asarray(removed, dtype=np.int64))

        def pick(x):
            return x[keep] if x is not None else None

        return src[keep], tgt[keep], pick(vf), pick(vt)
