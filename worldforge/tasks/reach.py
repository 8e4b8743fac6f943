"""Reachability: can an agent in the simulated web find every gold value, starting from a
search and following links, as a browsing person would?

The proof has three parts, each computed in bulk for the whole world once, then looked up
per task with array operations (no search per row):

- **Entry points.** The article of every entity of the part type (countries) is searched by
  its name; those the search engine returns in its top 10 are where browsing starts.
- **Links.** An article links to every entity it lists (its `entity_ids`: outgoing links and
  the incoming ones it shows), and to the directory holding the full list when it shows only
  part of one (checked in its Markdown); a directory page links to the articles of its rows
  and to its next page. A breadth-first walk over these links from the entry points gives
  every reachable page its parent, first within the entry's own part, then across parts.
- **Facts.** A page states a fact when the render stage's provenance (`page_facts`) says so;
  the pairs are kept as a sorted array of 64-bit hashes, probed in bulk.

A gold cell is reachable when its facts are stated on reachable pages chained by links: the
row's article (or the directory page that lists the row) states the row's own facts, a
to-one hop's fact on one article links to the next article, which states the value. A row is
discoverable when its article (or, for a link row, the page stating the link) is reachable;
the task's `listings` are the chain of parents from an entry point to each row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from ..web.pages import slug
from ..web.search import SearchEngine
from .arrays import WorldArrays
from .parts import Parts

UNREACHED = -2


@dataclass
class Verdict:
    ok: bool
    reason: str = ""  # unreachable-fact | undiscoverable-row | leaves-part | reads-held-out
    detail: str = ""
    pages: int = 0  # a greedy estimate of the pages an agent must open
    evidence: list | None = None  # per row, per column: the page(s) stating the cell's value
    listings: list[str] | None = None  # the pages that lead from a search to every row, entry points first
    support: list[str] | None = None  # further pages a cell needs (every candidate's value, for a rank)


class WebIndex:
    """The link graph, entry points and fact provenance of one rendered world."""

    def __init__(self, engine: SearchEngine, arrays: WorldArrays, parts: Parts, max_list_items: int):
        self.engine = engine
        self.a = arrays
        self.parts = parts
        self.cap = max_list_items
        self.searches = 0
        con = engine.pages
        types = list(arrays.types)
        self.offset: dict[str, int] = {}
        n = 0
        for t in types:
            self.offset[t] = n
            n += arrays.n(t)
        self.n_entities = n
        # articles, one per entity (the article's URL is the entity's node)
        arts = self._to_nodes(con.sql("SELECT subject AS e, url FROM pages WHERE kind = 'article' AND subject IS NOT NULL").pl())
        self.article = np.full(n, "", dtype=object)
        self.article[arts["node"].to_numpy()] = arts["url"].to_numpy()
        # directory pages: base, page number, listed type, grouping predicate, group entity, rows
        plural_type = {slug(_plural(arrays, t)): t for t in types}
        dirs = con.sql("SELECT url, entity_ids FROM pages WHERE kind = 'directory' ORDER BY url").pl()
        parts_ = dirs.select(pl.col("url").str.split("/").alias("p"), pl.col("url").str.split("?").list.first().alias("base"),
                             pl.col("url").str.extract(r"\?page=(\d+)$").cast(pl.Int64).fill_null(1).alias("page"))
        self.dir_url = dirs["url"].to_numpy().astype(object)
        nd = len(self.dir_url)
        self.dir_base = parts_["base"].to_numpy().astype(object)
        self.dir_page = parts_["page"].to_numpy().astype(np.int64)
        seg = parts_["p"]
        self.dir_type = np.array([plural_type.get(x, "") for x in seg.list.get(3, null_on_oob=True).to_list()], dtype=object)
        self.dir_by = np.array(seg.list.get(4, null_on_oob=True).fill_null("").to_list(), dtype=object)
        by_rel = {(t, slug(d.by)): d.by in arrays.relations for t, et in arrays.types.items() for d in et.pages.directories}
        entity_group = np.array([by_rel.get((t, b), False) for t, b in zip(self.dir_type, self.dir_by)], dtype=bool)
        ex = dirs.with_row_index("d").select("d", pl.col("entity_ids")).explode("entity_ids").rename({"entity_ids": "e"})
        ex = ex.filter(pl.col("e").is_not_null()).with_columns(pl.int_range(pl.len()).over("d").alias("pos"))
        ex = self._to_nodes(ex, keep_missing=True)
        d_arr, pos, node = ex["d"].to_numpy().astype(np.int64), ex["pos"].to_numpy(), ex["node"].to_numpy()
        grp = entity_group[d_arr] & (pos == 0)  # an entity group's page names its group first
        self.dir_group = np.full(nd, -1, dtype=np.int64)  # group entity (global index), -1 for attribute groups
        self.dir_group[d_arr[grp]] = node[grp]
        self.member_dir = d_arr[~grp]
        self.member_ent = node[~grp]
        self.n_nodes = n + nd
        # each directory's pages in page order: a base's pages are dir_order[base_start[b]:base_start[b + 1]]
        _, base_id = np.unique(self.dir_base.astype(str), return_inverse=True)
        self.dir_base_id = base_id.astype(np.int64)
        self.dir_order = np.lexsort((self.dir_page, self.dir_base_id))
        self.base_start = np.searchsorted(self.dir_base_id[self.dir_order], np.arange(int(base_id.max(initial=-1)) + 2))
        self._build_links(con, nd)
        self._facts = np.sort(con.execute("SELECT hash(url || '|' || fact_id) AS h FROM page_facts").fetchnumpy()["h"])
        self._stated: dict[str, bool] = {}
        self._walk()

    # ------------------------------------------------------------------ nodes

    def _to_nodes(self, df: pl.DataFrame, keep_missing: bool = False) -> pl.DataFrame:
        """Add each row's entity node (from the id column `e`); -1 (or dropped) when unknown."""
        out = df.with_columns(pl.Series("node", self.id_nodes(df["e"]), dtype=pl.Int64))
        return out if keep_missing else out.filter(pl.col("node") >= 0)

    def id_nodes(self, ids: pl.Series) -> np.ndarray:
        """Entity nodes of ids of any type (-1 unknown): per type, a binary search over the ids'
        64-bit keys (see WorldArrays)."""
        ids = ids.cast(pl.String)
        n = len(ids)
        out = np.full(n, -1, dtype=np.int64)
        if not n:
            return out
        frame = pl.DataFrame({"t": ids.str.slice(0, ids.str.len_chars() - 17), "k": ids.str.slice(-16)})
        frame = frame.with_columns(pl.col("k").str.to_integer(base=16, dtype=pl.UInt64, strict=False))
        keys = frame["k"].fill_null(0).to_numpy()
        valid = frame["k"].is_not_null().to_numpy()
        for t in frame["t"].unique().drop_nulls().to_list():
            if t not in self.offset:
                continue
            m = (frame["t"] == t).fill_null(False).to_numpy() & valid
            c = self.a.key_codes(t, keys[m])
            out[m] = np.where(c >= 0, self.offset[t] + c, -1)
        return out

    def node(self, eid: str) -> int:
        t = self.a.type_of(eid)
        c = int(self.a.codes(t, [eid])[0])
        return self.offset[t] + c if c >= 0 else -1

    def entity_nodes(self, t: str, codes: np.ndarray) -> np.ndarray:
        return self.offset[t] + np.asarray(codes, dtype=np.int64)

    def url(self, nodes: np.ndarray) -> np.ndarray:
        nodes = np.asarray(nodes, dtype=np.int64)
        out = np.empty(len(nodes), dtype=object)
        art = nodes < self.n_entities
        out[art] = self.article[nodes[art]]
        out[~art] = self.dir_url[nodes[~art] - self.n_entities]
        return out

    def node_part(self) -> np.ndarray:
        """Per node: its part (-1: none or mixed)."""
        p = np.full(self.n_nodes, -1, dtype=np.int64)
        if self.parts.root is None:
            return p
        for t, off in self.offset.items():
            p[off:off + self.a.n(t)] = self.parts.of[t]
        d = np.full(len(self.dir_url), -1, dtype=np.int64)
        grp = self.dir_group >= 0
        d[grp] = p[self.dir_group[grp]]
        # attribute-grouped pages: the part of their rows when they all share one
        if len(self.member_dir):
            mp = p[np.maximum(self.member_ent, 0)]
            mp[self.member_ent < 0] = -1
            lo = np.full(len(d), np.iinfo(np.int64).max)
            hi = np.full(len(d), -2)
            np.minimum.at(lo, self.member_dir, mp)
            np.maximum.at(hi, self.member_dir, mp)
            same = (~grp) & (lo == hi)
            d[same] = lo[same]
        p[self.n_entities:] = d
        return p

    # ------------------------------------------------------------------ links

    def _build_links(self, con, nd: int) -> None:
        n = self.n_entities
        ex = con.sql("SELECT subject AS e, unnest(entity_ids) AS dst FROM pages WHERE kind = 'article' AND subject IS NOT NULL").pl()
        ex = self._to_nodes(ex).rename({"node": "src", "e": "s"}).rename({"dst": "e"})
        ex = self._to_nodes(ex)
        src, dst = ex["src"].to_numpy().astype(np.int64), ex["node"].to_numpy().astype(np.int64)
        keep = src != dst
        edges_src, edges_dst = [src[keep]], [dst[keep]]
        # directory pages -> their rows; page k -> page k+1
        edges_src.append(self.member_dir + n)
        edges_dst.append(self.member_ent)
        order = np.lexsort((self.dir_page, self.dir_base))
        base_sorted = self.dir_base[order]
        nxt = np.flatnonzero(base_sorted[1:] == base_sorted[:-1])
        edges_src.append(order[nxt] + n)
        edges_dst.append(order[nxt + 1] + n)
        # an article that shows part of a list links to the directory holding all of it
        first = np.flatnonzero((self.dir_page == 1) & (self.dir_group >= 0))
        if len(first):
            pairs = pl.DataFrame({"url": self.article[self.dir_group[first]].astype(str),  # noqa: F841 (read by DuckDB)
                                  "base": self.dir_base[first].astype(str), "d": first})
            hit = con.sql("SELECT pr.d FROM pairs pr JOIN pages p ON p.url = pr.url "
                          "WHERE contains(p.markdown, '](' || pr.base || ')')").fetchnumpy()["d"]
            hit = np.asarray(hit, dtype=np.int64)
            edges_src.append(self.dir_group[hit])
            edges_dst.append(hit + n)
        src = np.concatenate(edges_src)
        dst = np.concatenate(edges_dst)
        ok = dst >= 0
        src, dst = src[ok], dst[ok]
        order = np.lexsort((dst, src))
        self._src, self._dst = src[order], dst[order]
        self._indptr = np.searchsorted(self._src, np.arange(self.n_nodes + 1))

    def _entry_points(self) -> np.ndarray:
        """Articles of the part type (or of the smallest type) that a search for the entity's
        name returns in its top 10."""
        a = self.a
        t = self.parts.root or min(a.types, key=lambda x: (a.n(x), x))
        out = []
        names = a.names(t)
        for c in range(a.n(t)):
            node = self.offset[t] + c
            url = self.article[node]
            if url and url in self.top10(str(names[c])):
                out.append(node)
        return np.asarray(out, dtype=np.int64)

    def top10(self, query: str) -> set[str]:
        results, _ = self.engine.search(query)
        self.searches += 1
        return {r["url"] for r in results}

    def _walk(self) -> None:
        """Breadth-first from the entry points: within each part first; then across parts but
        not through held-out ones (so training tasks reach shared pages without reading a
        held-out page); then anywhere."""
        parent = np.full(self.n_nodes, UNREACHED, dtype=np.int64)
        self.entries = self._entry_points()
        parent[self.entries] = -1
        part = self.node_part()
        same = part[self._src] == part[self._dst]
        same &= part[self._src] >= 0
        self._bfs(parent, self.entries, same)
        held = np.zeros(self.n_nodes, dtype=bool)
        if self.parts.split_of_part is not None:
            held_parts = np.flatnonzero(self.parts.split_of_part != "train")
            held = np.isin(part, held_parts)
        open_ = ~held[self._src] & ~held[self._dst]
        self._bfs(parent, np.flatnonzero((parent != UNREACHED) & ~held), open_)
        reached = np.flatnonzero(parent != UNREACHED)
        self._bfs(parent, reached, np.ones(len(self._src), dtype=bool))
        self.parent = parent
        self.part = part

    def _bfs(self, parent: np.ndarray, frontier: np.ndarray, allowed: np.ndarray) -> None:
        indptr = self._indptr
        while len(frontier):
            starts, ends = indptr[frontier], indptr[frontier + 1]
            lens = ends - starts
            total = int(lens.sum())
            if not total:
                break
            idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(total)
            idx = idx[allowed[idx]]
            nb, par = self._dst[idx], self._src[idx]
            new = parent[nb] == UNREACHED
            nb, par = nb[new], par[new]
            nb, first = np.unique(nb, return_index=True)
            parent[nb] = par[first]
            frontier = nb

    # ------------------------------------------------------------------ per task

    def reachable(self, nodes: np.ndarray) -> np.ndarray:
        return self.parent[np.asarray(nodes, dtype=np.int64)] != UNREACHED

    def chain(self, nodes: np.ndarray) -> np.ndarray:
        """Every ancestor of the nodes up to an entry point (the nodes excluded), entry points
        first (by depth)."""
        seen: list[np.ndarray] = []
        cur = np.unique(self.parent[np.asarray(nodes, dtype=np.int64)])
        cur = cur[cur >= 0]
        while len(cur):
            seen.append(cur)
            nxt = self.parent[cur]
            cur = np.unique(nxt[nxt >= 0])
        if not seen:
            return np.zeros(0, dtype=np.int64)
        out, done = [], set()
        for level in reversed(seen):  # entry points first
            fresh = [int(x) for x in level if int(x) not in done]
            done.update(fresh)
            out.extend(fresh)
        return np.asarray(out, dtype=np.int64)

    def page_no(self, node: int) -> int:
        return int(self.dir_page[node - self.n_entities]) if node >= self.n_entities else 0

    def pages_up_to(self, node: int) -> np.ndarray:
        """A directory page and every page before it (an agent pages through them in order)."""
        d = node - self.n_entities
        b = self.dir_base_id[d]
        run = self.dir_order[self.base_start[b]:self.base_start[b + 1]]
        return run[: int(self.dir_page[d])] + self.n_entities

    def stated(self, urls, facts) -> np.ndarray:
        """Whether each page states each fact (per `page_facts`), in one query."""
        if not len(urls):
            return np.zeros(0, dtype=bool)
        keys = [f"{u}|{f}" for u, f in zip(urls, facts)]
        cache = self._stated
        miss = [k for k in dict.fromkeys(keys) if k not in cache]
        if miss:
            h = self.engine.pages.execute("SELECT hash(x) AS h FROM (SELECT unnest($1) AS x)", [miss]).fetchnumpy()["h"]
            pos = np.minimum(np.searchsorted(self._facts, h), len(self._facts) - 1)
            cache.update(zip(miss, (self._facts[pos] == h).tolist()))
        return np.fromiter((cache[k] for k in keys), dtype=bool, count=len(keys))


def _plural(arrays: WorldArrays, t: str) -> str:
    from ..web.pages import plural

    return arrays.types[t].pages.plural or plural(t.replace("_", " "))
