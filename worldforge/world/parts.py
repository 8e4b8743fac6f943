"""Parts of the world: for world-level splits, and for the web's per-country lists.

A world is cut into *parts*: the entities of its top-level container type (countries, by
default the type at the top of the packs' `parent` tree) with everything that belongs to
them. Each entity's part follows its shortest chain of to-one hops to a container (a city's
country through its region; a person's through their birthplace; a product's through its
maker's headquarters); an entity with no such chain takes the most common part among the
entities it links to (a publication, its authors'). That chain is also how a question scopes
a task to a part ("people who are nationals of Braeria").

Whole parts are held out: validation and test tasks are posed inside held-out parts only,
and training tasks may not read any page a held-out task reads (see `stage.py`), so no test
evidence page is read in a training trajectory (the tasks stage). The render stage lists each
type's entities per part ("Companies in Braeria"), so a question scoped to a part has a list to
start from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..language import BASE
from ..plumbing import stable_hash
from .arrays import Step, WorldArrays, world_hops
from .lexicon import attribute_label, relation_label
from .spec import ResolvedWorld

HELD_OUT = ("test", "validation")


@dataclass
class Parts:
    """`root`: the part type (None: the world has no parts); per type, each entity's part
    (a code of `root`, -1 for none) and the to-one path that decides it (None when the part
    came from a majority of links)."""

    root: str | None
    of: dict[str, np.ndarray] = field(default_factory=dict)
    home: dict[str, tuple[Step, ...] | None] = field(default_factory=dict)
    split_of_part: np.ndarray | None = None  # per part code: train | validation | test

    def split_mask(self, t: str, split: str, n: int) -> np.ndarray:
        """Entities of t (n of them) in the parts of one split (without parts: all in train)."""
        if self.root is None or self.split_of_part is None:
            return np.full(n, split == "train", dtype=bool)
        p = self.of[t]
        out = np.zeros(len(p), dtype=bool)
        ok = p >= 0
        out[ok] = self.split_of_part[p[ok]] == split
        return out


def part_phrase(world: ResolvedWorld, source: str, pred: str, target_plural: str, language: str = BASE) -> str | None:
    """How an entity's part is named after its plural noun when its chain to the part starts
    with `pred`: None when that hop says where the entity is (one of its English asks reads "in
    {object}" or "from {value}": "Companies in Braeria"), else the hop's own words leading to
    the next entity's plural, with a `{group}` slot: "won by albums from {group}" ("Award
    ceremonies won by albums from Riia", not "Award ceremonies in Riia", which reads as where
    the ceremonies were held). Lists on the web and questions name a part alike. None in another
    language than the packs' own (its words come from the pack's English asks): a question there
    names the part as its bank does."""
    if language != BASE:
        return None
    rs = world.relations.get(pred)
    if rs is not None and rs.source == source:
        asks, label = list(rs.ask), relation_label(rs, pred, "en").lower()
    else:
        attr = world.types[source].attributes.get(pred)
        asks, label = (list(attr.ask), attribute_label(attr, pred, "en").lower()) if attr is not None else ([], pred)
    if any(re.search(r"\b(in|from) (the )?\{(object|value)\}", a) for a in asks):
        return None
    ending = [a.rstrip() for a in asks if re.search(r"\{(object|value)\}$", a.rstrip())
              and not re.search(r"\b(is|are|include) \{(object|value)\}$", a.rstrip())]
    tmpl = re.sub(r"(?<!of )the \{(object|value)\}", r"{\1}", ending[0] if ending else f"whose {label} is one of the {{object}}")
    return tmpl.replace("{object}", f"{target_plural} from {{group}}").replace("{value}", f"{target_plural} from {{group}}")


def _tops(a: WorldArrays) -> list[str]:
    """Types at the top of a `parent` tree: others are parts of them, they are part of nothing."""
    types = a.types
    parents = {et.parent.type for et in types.values() if et.parent}
    return sorted(t for t in parents if types[t].parent is None)


def entity_parts(a: WorldArrays, part_type: str | None) -> Parts:
    """Parts by the given type, else by the top of a `parent` tree that the most entities
    chain to (countries rather than companies: people, clubs and universities chain to a
    country, only products to a company)."""
    hops = world_hops(a.world)
    roots = [part_type] if part_type is not None else _tops(a)
    best = Parts(None)
    best_n = -1
    for root in roots:  # coverage by to-one chains decides; only the winner votes for the rest
        parts = _parts_by(a, hops, root, vote=False)
        n = sum(int((p >= 0).sum()) for p in parts.of.values()) if parts.root else -1
        if n > best_n:
            best, best_n = parts, n
    return _parts_by(a, hops, best.root) if best.root is not None else best


def _parts_by(a: WorldArrays, hops: tuple[dict, dict], root: str, vote: bool = True) -> Parts:
    steps, in_steps = hops
    if a.n(root) < 2:
        return Parts(None)
    parts = Parts(root)
    parts.of[root] = np.arange(a.n(root), dtype=np.int64)
    parts.home[root] = ()
    # shortest to-one chains first: a type joins once a hop leads to a type that has parts
    while True:
        best: dict[str, tuple[int, int, int, Step]] = {}
        for t in a.types:
            if t in parts.of:
                continue
            for i, st in enumerate(steps[t]):
                if not st.to_one or st.target not in parts.home or parts.home[st.target] is None:
                    continue
                key = (len(parts.home[st.target]) + 1, 0 if st.kind == "lookup" else 1, i)
                if t not in best or key < best[t][:3]:
                    best[t] = (*key, st)
        if not best:
            break
        for t, (*_, st) in sorted(best.items()):
            dst, _ = a.to_one(st)
            p = np.full(a.n(t), -1, dtype=np.int64)
            ok = dst >= 0
            p[ok] = parts.of[st.target][dst[ok]]
            parts.of[t] = p
            parts.home[t] = (st, *parts.home[st.target])
    # the rest: the most common part among linked entities (authors, laureates)
    for _ in range(2 if vote else 0):
        for t in a.types:
            if t in parts.of:
                continue
            votes_src, votes_part = [], []
            for st in steps[t] + in_steps[t]:
                if st.kind != "rel" or st.target not in parts.of:
                    continue
                lk = a.links(st)
                p = parts.of[st.target][lk.dst]
                keep = p >= 0
                votes_src.append(lk.src[keep])
                votes_part.append(p[keep])
            if not votes_src:
                continue
            src, part = np.concatenate(votes_src), np.concatenate(votes_part)
            p = np.full(a.n(t), -1, dtype=np.int64)
            if len(src):
                n_parts = a.n(root)
                pairs, counts = np.unique(src * n_parts + part, return_counts=True)
                s_, p_ = pairs // n_parts, pairs % n_parts
                order = np.lexsort((p_, -counts, s_))  # per source: most votes, then lowest part
                s_, p_ = s_[order], p_[order]
                first = np.r_[True, s_[1:] != s_[:-1]]
                p[s_[first]] = p_[first]
            parts.of[t] = p
            parts.home[t] = None
    for t in a.types:
        parts.of.setdefault(t, np.full(a.n(t), -1, dtype=np.int64))
        parts.home.setdefault(t, None)
    return parts


def former_parts(a: WorldArrays, parts: Parts) -> dict[str, np.ndarray]:
    """Per type, the part each entity *was* in when its chain to a part has ended (a dissolved
    company's last headquarters; its products through it): the last link of an ended succession
    stands in for the current one. -1 where the entity has a current part or never had one."""
    out: dict[str, np.ndarray] = {}
    if parts.root is None:
        return out
    order = sorted((t for t, h in parts.home.items() if h), key=lambda t: len(parts.home[t]))
    for t in order:
        st = parts.home[t][0]
        target = st.target
        if st.current:
            lk = a.links(Step(st.kind, st.name, st.source, st.target, current=False, to_one=st.to_one, reverse=st.reverse))
            dst = np.full(a.n(t), -1, dtype=np.int64)
            if len(lk.src):
                last = np.lexsort((lk.valid_from.astype(np.int64), lk.src))  # per source, its latest link last
                src_sorted = lk.src[last]
                ends = np.r_[src_sorted[1:] != src_sorted[:-1], True]
                dst[src_sorted[ends]] = lk.dst[last][ends]
        else:
            dst, _ = a.to_one(st)
        p = np.full(a.n(t), -1, dtype=np.int64)
        ok = (dst >= 0) & (parts.of[t] < 0)
        cur = parts.of.get(target, np.full(a.n(target), -1, dtype=np.int64))
        was = out.get(target, np.full(a.n(target), -1, dtype=np.int64))
        got = np.where(cur[np.maximum(dst, 0)] >= 0, cur[np.maximum(dst, 0)], was[np.maximum(dst, 0)])
        p[ok] = got[ok]
        out[t] = p
    return out


def hold_out(parts: Parts, a: WorldArrays, shares: dict[str, float], seed: int) -> dict[str, list[int]]:
    """Assign whole parts to the held-out splits: parts in a seeded order, each held-out split
    taking parts until it holds its share of the world's entities (at least one part), at
    least one part left for training. Returns the parts of each split."""
    if parts.root is None:
        return {"train": []}
    n = a.n(parts.root)
    size = np.zeros(n, dtype=np.int64)
    for p in parts.of.values():
        size += np.bincount(p[p >= 0], minlength=n)
    total = max(1, int(size.sum()))
    order = sorted(range(n), key=lambda i: (stable_hash(seed, "part", a.ids[parts.root][i]), i))
    split = np.array(["train"] * n, dtype=object)
    free = list(order)
    for s in HELD_OUT:
        share = shares.get(s, 0.0)
        if share <= 0 or len(free) <= 1:
            continue
        got = 0
        while free and len(free) > 1 and (got == 0 or got / total < share):
            i = free.pop(0)
            split[i] = s
            got += size[i]
    parts.split_of_part = split
    return {s: [int(i) for i in np.flatnonzero(split == s)] for s in ("train", *HELD_OUT)}
