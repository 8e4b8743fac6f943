"""The page plan cut into shards that can be planned and written independently (in this
process or as Ray tasks), without holding a whole type's facts in memory.

A shard is a run of one type's entities (by id) with their articles, profiles and news
items, or one type's directory pages. Concatenated in shard order, the shards' pages are
exactly `pages.plan_pages` (tests/test_ray.py checks it), so a sharded render writes the
same pages as the serial plan. Each shard loads only the facts of its own entities (and,
for directories, of the directory's predicates).

News URLs are made unique across the whole world (`pages._news_page` appends `-2`, `-3`
to a URL taken before). A shard planned on its own knows only its own URLs, so it logs,
for each news page, the URL it first tried and the URL it took; `NewsURLs.check` replays
the log in shard order against every earlier shard's URLs and says whether the shard would
have chosen differently (a rare clash of outlet, day and headline), in which case the stage
plans that shard again with the earlier URLs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .pages import Page, WorldView
from .planning import directory_pages, entity_pages, part_directory_pages, part_index_pages
from .text import Fact

MIN_ENTITIES, MAX_ENTITIES = 1024, 16384  # entities per shard: a type is cut into about 16 shards within these bounds


@dataclass(frozen=True)
class Shard:
    """One type's entities ids[lo:hi] (part "entities"), or its directory pages (part "directories":
    the pack's directories, then its lists per part of the world)."""

    type: str
    part: str
    lo: int = 0
    hi: int = 0

    def key(self) -> dict:
        return {"type": self.type, "part": self.part, "lo": self.lo, "hi": self.hi}


def plan_shards(view: WorldView, per_shard: int | None = None) -> list[Shard]:
    """Every shard of the world, in plan order. A shard's facts are one query, so shards are
    not too small; they are not too big either, so pages of a shard stay a few hundred MB at
    most and a type's shards spread over the workers."""
    out = []
    parts = view.part_lists()
    listed = {t for t in parts.of if t not in parts.declared} | {parts.root} if parts is not None else set()
    for t, et in view.types.items():
        n = len(view.ids[t])
        size = per_shard or max(MIN_ENTITIES, min(MAX_ENTITIES, -(-n // 16)))
        for lo in range(0, n, size):
            out.append(Shard(t, "entities", lo, min(n, lo + size)))
        if et.pages.directories or t in listed:
            out.append(Shard(t, "directories"))
    return out


class LoggedSet(set):
    """A set of taken news URLs that logs (first URL tried, URL taken) for each page."""

    def __init__(self, *a):
        super().__init__(*a)
        self.log: list[tuple[str, str]] = []
        self._first: str | None = None

    def __contains__(self, url) -> bool:
        if self._first is None:
            self._first = url
        return super().__contains__(url)

    def add(self, url) -> None:
        self.log.append((self._first if self._first is not None else url, url))
        self._first = None
        super().add(url)


class NewsURLs:
    """The news URLs taken by the shards so far, in shard order."""

    def __init__(self):
        self.taken: set[str] = set()

    def check(self, log: list[tuple[str, str]]) -> bool:
        """Whether a shard planned alone chose every news URL as the serial plan would have,
        given the earlier shards' URLs; if so its URLs are added."""
        taken, mine = self.taken, set()  # the shard's own URLs apart: no copy of every earlier one
        for base, url in log:
            u, k = base, 2
            while u in taken or u in mine:
                u, k = f"{base}-{k}", k + 1
            if u != url:
                return False
            mine.add(u)
        taken |= mine
        return True


def _own_facts(view: WorldView, t: str, lo_id: str, hi_id: str, preds: list[str] | None = None) -> dict[str, list[Fact]]:
    where = f"subject_type = '{t}' AND subject BETWEEN ? AND ?"
    if preds is not None:
        where += " AND predicate IN (" + ", ".join(f"'{p}'" for p in preds) + ")"
    return view.grouped_facts("SELECT fact_id, subject, predicate, value, value_type, valid_from, valid_to, note FROM facts "
                          f"WHERE {where} ORDER BY subject, predicate, valid_from NULLS FIRST, value", "subject", [lo_id, hi_id])




def _incoming(view: WorldView, t: str, lo_id: str, hi_id: str) -> dict[str, list[Fact]]:
    inc_rels = [r for r, rs in view.relations.items() if rs.target == t]
    if not inc_rels:
        return {}
    preds = ", ".join(f"'{r}'" for r in inc_rels)
    return view.grouped_facts("SELECT fact_id, subject, predicate, value, value_type, valid_from, valid_to, note FROM facts "
                          f"WHERE value_type = 'entity' AND predicate IN ({preds}) AND value BETWEEN ? AND ? "
                          "ORDER BY value, predicate, valid_from NULLS FIRST, subject", "value", [lo_id, hi_id])


def shard_pages(view: WorldView, shard: Shard, seen: set[str]) -> Iterator[Page]:
    """The pages of one shard, as `pages.plan_pages` yields them (`seen`: news URLs taken)."""
    t = shard.type
    et = view.types[t]
    ps = et.pages
    if shard.part == "directories":
        ids = view.ids[t]
        for d in ps.directories:
            own = _own_facts(view, t, ids[0], ids[-1], sorted({d.by, *d.columns})) if ids else {}
            yield from directory_pages(view, t, d, own)
        own = _own_facts(view, t, ids[0], ids[-1], sorted(view.part_list_columns(t))) if ids else {}
        yield from part_directory_pages(view, t, own)
        yield from part_directory_pages(view, t, own, former=True)
        yield from part_index_pages(view, t, own)
        return
    ids = view.ids[t][shard.lo:shard.hi]
    if not ids:
        return
    own = _own_facts(view, t, ids[0], ids[-1])
    incoming = _incoming(view, t, ids[0], ids[-1])
    yield from entity_pages(view, t, ids, own, incoming, view.neighbour_facts(t, ids[0], ids[-1]), seen)
