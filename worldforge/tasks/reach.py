"""Reachability: can an agent in the simulated web find every gold value, starting from a
search and following links, as a browsing person would?

The proof has three parts, each computed in bulk for the whole world once, then looked up
per task with array operations (no search per row):

- **Entry points.** The article of every entity of the part type (countries) is searched by
  its name; those the search engine returns in its top 10 are where browsing starts.
- **Links.** An article links to every entity it lists (its `entity_ids`: outgoing links and
  the incoming ones it shows), and to the directory holding the full list when it shows only
  part of one (the page plan cuts any list longer than `max_list_items`, or one with entities
  that have no article, and links the directory or the entity's own full list instead); a
  directory page links to the pages of its rows and to its next page. An entity without an
  article (`WorldView.homeless`) has its profile or official site for its page: that page is
  its node, here and in proofs. A breadth-first walk over these links from the entry points gives every reachable
  page its parent: first within the entry's own part, then across training parts, then
  anywhere (so a training task's chain avoids held-out pages where it can).
- **Facts.** A page states a fact when the render stage's provenance (`page_facts`) says so;
  the (article or directory page, fact) pairs are kept as a sorted array of 64-bit hashes,
  probed in bulk (a list or a count is proven by the page plan's list cap instead, see
  `build.py`).

A gold cell is reachable when its facts are stated on reachable pages chained by links: the
row's article (or the directory page that lists the row) states the row's own facts, a
to-one hop's fact on one article links to the next article, which states the value. A row is
discoverable when its article (or, for a link row, the page stating the link) is reachable;
the task's `listings` are the chain of parents from an entry point to each row.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl

from ..plumbing import Background, release_memory
from ..web import DUCKDB_MEMORY, SearchEngine, damaged_pages, full_list_elsewhere, page_files, slug
from ..world import Parts, Step, WorldArrays, lookup_target

UNREACHED = -2


PROBE_MEMORY = "256MB"  # DuckDB's memory for the pages connection once the bulk reads are done


def _flat(lists: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """A list column's lengths (0 for a null list) and its elements in order (`explode` alone
    would make a null of an empty or null list)."""
    lens = lists.list.len().fill_null(0).to_numpy().astype(np.int64)
    return lens, lists.filter(pl.Series(lens > 0)).explode()


class WebIndex:
    """The link graph, entry points and fact provenance of one rendered world."""

    def __init__(self, engine: SearchEngine, arrays: WorldArrays, parts: Parts, max_list_items: int):
        self.engine = engine
        self.a = arrays
        self.parts = parts
        self.cap = max_list_items
        self.searches = 0
        con = engine.pages
        con.execute("SET enable_progress_bar = false")  # bulk queries here run for seconds on large worlds
        # DuckDB keeps what it read cached up to its memory limit (most of the machine's memory
        # by default): the bulk reads of a 1M world's pages would hold gigabytes for nothing.
        con.execute(f"SET memory_limit = '{DUCKDB_MEMORY}'")
        types = list(arrays.types)
        self.offset: dict[str, int] = {}
        n = 0
        for t in types:
            self.offset[t] = n
            n += arrays.n(t)
        self.n_entities = n
        self._types = types
        self._node_ref: pl.DataFrame | None = None
        # articles, one per entity (the article's URL is the entity's node), with the entities
        # each links (read here once, for the link graph); and the directory pages
        try:
            arts = con.sql("SELECT url, subject, entity_ids FROM pages WHERE kind = 'article'").pl()
            # an entity without an article (`WorldView.homeless`) has its profile or official site for its page
            homes = (con.sql("SELECT url, subject, entity_ids FROM pages WHERE kind = 'profile' AND subject IS NOT NULL").pl()
                     .join(arts.select("subject"), on="subject", how="anti"))
            dirs = con.sql("SELECT url, entity_ids FROM pages WHERE kind = 'directory' ORDER BY url").pl()
        except duckdb.Error as exc:  # a page file damaged inside (its footer reads)
            raise damaged_pages(engine.web, exc) from None
        # The (page, fact) hashes are read on a thread of their own (polars lets go of the GIL):
        # the link graph below is mostly numpy on this thread meanwhile. Only articles and
        # directory pages are ever asked about: the facts on their sites (every one: a world's
        # directories are on its encyclopedia and on its list site).
        sites = pl.concat([arts["url"], dirs["url"]]).str.split("/").list.get(2, null_on_oob=True).drop_nulls().unique().sort()
        # An article links its subject's profile or official site (external links) and the news
        # items about it (references): what those pages state is one link from the article, and
        # counts as stated there.
        self._beside = (con.sql("SELECT url, subject FROM pages WHERE kind IN ('profile', 'news') AND subject IS NOT NULL").pl()
                        .join(arts.select(pl.col("url").alias("article"), "subject"), on="subject", how="inner")
                        .select("url", "article"))
        n_arts = arts.height
        arts = pl.concat([arts, homes])
        sites = pl.concat([sites, homes["url"].str.split("/").list.get(2, null_on_oob=True).drop_nulls().unique()]).unique().sort()
        self._facts_job = Background(_sorted_hashes, page_files(engine.web, "facts"), sites.to_list(), self._beside)
        nodes = self._id_nodes(arts["subject"])
        self.article = np.full(n, "", dtype=object)
        self.article[nodes[nodes >= 0]] = arts["url"].to_numpy().astype(object)[nodes >= 0]
        self.home = np.zeros(n, dtype=bool)  # the entity's page is its profile (it has no article)
        self.home[nodes[n_arts:][nodes[n_arts:] >= 0]] = True
        # directory pages: base, page number, listed type, grouping predicate, group entity, rows
        plural_type = {slug(_plural(arrays, t)): t for t in types}
        parts_ = dirs.select(pl.col("url").str.split("/").alias("p"), pl.col("url").str.split("?").list.first().alias("base"),
                             pl.col("url").str.extract(r"\?page=(\d+)$").cast(pl.Int64).fill_null(1).alias("page"))
        self.dir_url = dirs["url"].to_numpy().astype(object)
        nd = len(self.dir_url)
        self.dir_base = parts_["base"].to_numpy().astype(object)
        self.dir_page = parts_["page"].to_numpy().astype(np.int64)
        seg = parts_["p"]
        self.dir_type = np.array([plural_type.get(x, "") for x in seg.list.get(3, null_on_oob=True).to_list()], dtype=object)
        self.dir_by = np.array(seg.list.get(4, null_on_oob=True).fill_null("").to_list(), dtype=object)
        # pages grouped by an entity (a relation's target, an entity-valued lookup, a part) name it first
        by_rel = {(t, slug(d.by)): d.by in arrays.relations or lookup_target(arrays.world, t, d.by) is not None
                  for t, et in arrays.types.items() for d in et.pages.directories}
        # an entity's full list of what links to it, where no directory has it (`web.pages.overflow_url`)
        by_rel.update({(rs.source, slug(r)): True for r, rs in arrays.relations.items()})
        self.part_lists = self._part_list_keys()
        by_rel.update(dict.fromkeys(self.part_lists, True))
        entity_group = np.array([by_rel.get((t, b), False) for t, b in zip(self.dir_type, self.dir_by)], dtype=bool)
        # each directory page's rows: (page, position in its list, entity node)
        lens, members = _flat(dirs["entity_ids"])
        d_arr = np.repeat(np.arange(nd, dtype=np.int64), lens)
        pos = np.arange(len(d_arr), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        node = self._id_nodes(members)
        del dirs
        grp = entity_group[d_arr] & (pos == 0)  # an entity group's page names its group first
        self.dir_group = np.full(nd, -1, dtype=np.int64)  # group entity (global index), -1 for attribute groups
        self.dir_group[d_arr[grp]] = node[grp]
        self.member_dir = d_arr[~grp]
        self.member_ent = node[~grp]
        self.n_nodes = n + nd
        # each directory's pages in page order: a base's pages are dir_order[base_start[b]:base_start[b + 1]]
        self.dir_base_id = base_id = (parts_["base"].rank("dense") - 1).to_numpy().astype(np.int64)  # np.unique's inverse
        self.dir_order = np.lexsort((self.dir_page, self.dir_base_id))
        self.base_start = np.searchsorted(self.dir_base_id[self.dir_order], np.arange(int(base_id.max(initial=-1)) + 2))
        self._build_links(arts, nodes, nd)
        del arts
        self._stated: dict[tuple[str, str], bool] = {}
        self._url_node: pl.DataFrame | None = None  # url -> node, for `nodes_stating`
        self._walk()
        # The bulk reads are done; later queries are probes of a few rows. Lowering the limit
        # evicts what DuckDB cached of the pages (over a gigabyte for a 1M world).
        con.execute(f"SET memory_limit = '{PROBE_MEMORY}'")
        release_memory()  # the bulk reads above

    def _part_list_keys(self) -> set[tuple[str, str]]:
        """(type, grouping slug) of the lists a part's article links, one per type with a to-one
        chain to the part type (`web.pages.part_directory_pages`; a pack's own directory by that
        one link where it has one)."""
        root = self.parts.root
        if root is None:
            return set()
        out = set()
        for t, home in self.parts.home.items():
            if t == root or not home:
                continue
            own = len(home) == 1 and any(d.by == home[0].name for d in self.a.types[t].pages.directories)
            out.add((t, slug(home[0].name) if own else slug("by-" + root)))
            out.add((t, slug("former-by-" + root)))
        return out

    # ------------------------------------------------------------------ nodes

    def _id_nodes(self, ids: pl.Series) -> np.ndarray:
        """Entity nodes of entity ids (`<type>_<16 hex>`; -1 where none): the type's index and
        the 64-bit key, parsed in polars, then one hash join over every type (a binary search
        per link costs seconds on a 1M world's millions of links, and parsing them in SQL as
        much again)."""
        if self._node_ref is None:
            a = self.a
            self._node_ref = pl.DataFrame({
                "ti": np.concatenate([np.full(a.n(t), i, dtype=np.int32) for i, t in enumerate(self._types)]),
                "k": np.concatenate([a.keys[t] for t in self._types]),
                "node": np.arange(self.n_entities, dtype=np.int64)})
        type_index = pl.DataFrame({"t": self._types, "ti": np.arange(len(self._types), dtype=np.int32)})
        q = pl.DataFrame({"id": ids.cast(pl.String)}).select(
            pl.col("id").str.head(-17).alias("t"),
            pl.col("id").str.tail(16).str.to_integer(base=16, dtype=pl.UInt64, strict=False).alias("k"),
            (pl.col("id").str.slice(-17, 1) == "_").alias("ok"))
        q = q.join(type_index, on="t", how="left", maintain_order="left")
        q = q.with_columns(pl.when(pl.col("ok")).then(pl.col("ti")).alias("ti")).select("ti", "k")
        return q.join(self._node_ref, on=["ti", "k"], how="left", maintain_order="left")["node"].fill_null(-1).to_numpy()

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

    def _build_links(self, arts: pl.DataFrame, subject_nodes: np.ndarray, nd: int) -> None:
        """The link graph: an article to the entities it names (`arts`: the articles' subject and
        entity_ids, `subject_nodes` their nodes), a directory page to its rows and its next page,
        an article to the directory holding a list it cuts, a part's article to its lists."""
        n = self.n_entities
        lens, named = _flat(arts["entity_ids"])
        src = np.repeat(subject_nodes, lens)  # an article without a subject has node -1: its links are dropped
        dst = self._id_nodes(named)
        keep = (src != dst) & (src >= 0) & (dst >= 0)
        edges_src, edges_dst = [src[keep]], [dst[keep]]
        # directory pages -> their rows; page k -> page k+1
        edges_src.append(self.member_dir + n)
        edges_dst.append(self.member_ent)
        run = self.dir_order  # each directory's pages in page order
        nxt = np.flatnonzero(self.dir_base_id[run][1:] == self.dir_base_id[run][:-1])
        edges_src.append(run[nxt] + n)
        edges_dst.append(run[nxt + 1] + n)
        # an article that shows part of a list links to the directory holding all of it: the page
        # plan cuts a list of more than max_list_items links and links the directory instead
        first = np.flatnonzero((self.dir_page == 1) & (self.dir_group >= 0))
        rel_of = {(rs.source, slug(r)): r for r, rs in self.a.relations.items()}  # a directory, or an entity's own full list
        for (t, b), r in sorted(rel_of.items()):
            rs = self.a.relations[r]
            sel = first[(self.dir_type[first] == t) & (self.dir_by[first] == b)]
            if not len(sel):
                continue
            facts_in, shown = self.listed_in(r)
            grp = self.dir_group[sel]
            off = self.offset[rs.target]
            inside = (grp >= off) & (grp < off + self.a.n(rs.target))
            sel, grp = sel[inside], grp[inside]
            long = facts_in[grp - off] > shown[grp - off]
            edges_src.append(grp[long])
            edges_dst.append(sel[long] + n)
        # a part's article links its lists ("Companies in Braeria")
        listed = np.array([(t, b) in self.part_lists for t, b in zip(self.dir_type[first], self.dir_by[first])], dtype=bool)
        if listed.any():
            edges_src.append(self.dir_group[first[listed]])
            edges_dst.append(first[listed] + n)
        src = np.concatenate(edges_src)
        dst = np.concatenate(edges_dst)
        ok = dst >= 0
        src, dst = src[ok], dst[ok]
        order = np.argsort(src, kind="stable")  # by source; each source's links in a fixed order
        self._src, self._dst = src[order], dst[order]
        self._indptr = np.searchsorted(self._src, np.arange(self.n_nodes + 1))

    def listed_in(self, rel: str) -> tuple[np.ndarray, np.ndarray]:
        """Per entity of the relation's target type: the links of relation `rel` into it, and how
        many of them its page lists. An article lists those from entities with articles when the
        full list is off the encyclopedia (`full_list_elsewhere`), `cap` at most; a profile that is an
        entity's page lists every one (`WorldView.homeless`)."""
        rs = self.a.relations[rel]
        lk = self.a.links(Step("rel", rel, rs.source, rs.target, to_one=False))
        n_t = self.a.n(rs.target)
        facts_in = np.bincount(lk.dst, minlength=n_t)
        src_home = self.home[self.offset[rs.source] + lk.src]
        if not full_list_elsewhere(self.a.world, rel):
            src_home = np.zeros(len(lk.dst), dtype=bool)  # the encyclopedia's own list: the article lists every one it can
        notable_in = np.bincount(lk.dst[~src_home], minlength=n_t)
        shown = np.minimum(notable_in, self.cap)
        tgt_home = self.home[self.offset[rs.target]:self.offset[rs.target] + n_t]
        shown[tgt_home] = facts_in[tgt_home]
        return facts_in, shown

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
        # entry points first; a node on several levels counts at the first (shallowest) one
        levels = np.concatenate(seen[::-1]).astype(np.int64, copy=False)
        _, first = np.unique(levels, return_index=True)
        return levels[np.sort(first)]

    def page_no(self, node: int) -> int:
        return int(self.dir_page[node - self.n_entities]) if node >= self.n_entities else 0

    def pages_up_to(self, node: int) -> np.ndarray:
        """A directory page and every page before it (an agent pages through them in order)."""
        d = node - self.n_entities
        b = self.dir_base_id[d]
        run = self.dir_order[self.base_start[b]:self.base_start[b + 1]]
        return run[: int(self.dir_page[d])] + self.n_entities

    def stated(self, urls, facts) -> np.ndarray:
        """Whether each page states each fact (per `page_facts`), by their hashes."""
        if not len(urls):
            return np.zeros(0, dtype=bool)
        keys = list(zip(urls, facts))
        cache = self._stated
        miss = [k for k in dict.fromkeys(keys) if k not in cache]
        if miss:
            h = _fact_hashes(pl.DataFrame(miss, schema={"url": pl.String, "fact_id": pl.String}, orient="row").lazy())
            found = np.zeros(len(h), dtype=bool)
            for part in self._facts_job.result()[:3]:  # a pair is stated if any part holds it
                found |= among(h, part)
            cache.update(zip(miss, found.tolist()))
        return np.fromiter((cache[k] for k in keys), dtype=bool, count=len(keys))

    def via(self, urls: list[str], facts: list[str]) -> list[str | None]:
        """For each (article, fact) `stated` holds: None when the article itself states the fact,
        else the page one link from it that does (its subject's profile or official site before a
        news item). Evidence names that page after the article."""
        if not urls:
            return []
        h = _fact_hashes(pl.DataFrame({"url": urls, "fact_id": facts}).lazy())
        direct = np.zeros(len(h), dtype=bool)
        for part in self._facts_job.result()[:2]:
            direct |= among(h, part)
        out: list[str | None] = [None] * len(urls)
        todo = np.flatnonzero(~direct).tolist()
        if not todo:
            return out
        pairs = (pl.DataFrame({"i": todo, "article": [urls[i] for i in todo], "fact_id": [facts[i] for i in todo]})
                 .join(self._beside, on="article", how="inner"))
        jobs = self._facts_job.result()
        if pairs.is_empty() or len(jobs) < 4:
            return out
        own = jobs[3]
        h = _fact_hashes(pairs.lazy().select("url", "fact_id"))
        hit = pairs.filter(pl.Series(among(h, own))).with_columns(
            pl.col("url").str.contains(r"^https?://[^/]+/\d{4}/\d{2}/\d{2}/").alias("news")).sort("i", "news", "url")
        for i, u in hit.unique("i", keep="first", maintain_order=True).select("i", "url").iter_rows():
            out[i] = u
        return out

    def confined_facts(self, parts: np.ndarray) -> np.ndarray:
        """Hashes (`fact_hashes`), sorted, of the facts about entities of `parts` that no page
        outside those parts states: a held-out task's gold facts must be among them, so a page
        that states one is a page of a held-out part, which no training task reads. A page's part
        is its subject's (article, profile, news item) or its directory's (`node_part`)."""
        parts = np.asarray(parts, dtype=np.int64)
        a = self.a
        ids = pl.concat([pl.Series(a.ids[t], dtype=pl.String) for t in self._types])
        ent = pl.DataFrame({"id": ids, "part": np.concatenate([self.parts.of[t] for t in self._types])})
        inside = ent.filter(pl.col("part").is_in(parts.tolist()))["id"]
        part = self.part
        dirs = pl.DataFrame({"url": self.dir_url.astype(str), "part": part[self.n_entities:]})
        pages = (pl.scan_parquet([str(f) for f in page_files(self.engine.web, "pages")], glob=False)
                 .select("url", pl.col("subject").alias("id")).join(ent.lazy(), on="id", how="left").select("url", "part"))
        pages = pl.concat([pages.filter(pl.col("part").is_not_null()), dirs.lazy()])
        facts = (pl.scan_parquet([str(f) for f in page_files(self.engine.web, "facts")], glob=False)
                 .filter(pl.col("fact_id").str.split("/").list.first().is_in(inside.implode()))
                 .join(pages, on="url", how="left")
                 .group_by("fact_id").agg(pl.col("part").fill_null(-1).is_in(parts.tolist()).all().alias("ok"))
                 .filter(pl.col("ok")).select("fact_id"))
        out = facts.select(pl.col("fact_id").hash(seed=FACT_HASH_SEED).alias("h")).collect(engine="streaming")["h"].to_numpy()
        return np.sort(out)  # a copy: polars may hand over a read-only view


    def nodes_stating(self, facts: list[str]) -> np.ndarray:
        """The nodes (articles, directory pages) of the pages that state any of `facts`."""
        files = page_files(self.engine.web, "facts")
        if not facts or not files:
            return np.zeros(0, dtype=np.int64)
        urls = (pl.scan_parquet([str(f) for f in files], glob=False).filter(pl.col("fact_id").is_in(pl.Series(facts).implode()))
                .select("url").unique().collect(engine="streaming")["url"])
        if self._url_node is None:
            art = np.flatnonzero(self.article != "")
            self._url_node = pl.DataFrame({"url": np.concatenate([self.article[art].astype(str), self.dir_url.astype(str)]),
                                           "node": np.concatenate([art, np.arange(len(self.dir_url)) + self.n_entities])})
        urls = pl.DataFrame({"url": urls}).join(self._beside, on="url", how="left").select(
            pl.coalesce("article", "url").alias("url"))
        got = urls.join(self._url_node, on="url", how="inner")["node"]
        return got.to_numpy().astype(np.int64)


def fact_hashes(facts) -> np.ndarray:
    """The 64-bit hash of each fact id (as `WebIndex.confined_facts` keeps them)."""
    if not len(facts):
        return np.zeros(0, dtype=np.uint64)
    return pl.Series(list(facts), dtype=pl.String).hash(seed=FACT_HASH_SEED).to_numpy()


def among(hashes: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Whether each hash is in a sorted table of hashes."""
    if not len(table):
        return np.zeros(len(hashes), dtype=bool)
    return table[np.minimum(np.searchsorted(table, hashes), len(table) - 1)] == hashes


FACT_HASH_SEED = 20261126  # polars' hash of a (url, fact_id) pair, the same in bulk and per probe


def _fact_hashes(pairs: pl.LazyFrame) -> np.ndarray:
    """The 64-bit hash of each (url, fact_id) row."""
    return pairs.select(pl.struct("url", "fact_id").hash(seed=FACT_HASH_SEED).alias("h")).collect(
        engine="streaming")["h"].to_numpy()


def _sorted_hashes(files: list, sites: list[str], beside: pl.DataFrame | None = None) -> tuple[np.ndarray, ...]:
    """The hashes of the (url, fact_id) rows of provenance `files` whose page is on one of
    `sites` (hosts), and of those on the pages `beside` (url -> article) keyed by their article's
    URL, as two sorted arrays, one per half of the files by row count (a 1M world has
    tens of millions of rows): each row is read and hashed once, streaming, and the first half
    is sorted on a second thread (numpy lets go of the GIL) while the second is read and sorted.
    The halves are never joined into a third copy."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.parquet as pq

    rows = np.cumsum([pq.read_metadata(f).num_rows for f in files]) if files else np.zeros(0, dtype=np.int64)
    cut = int(np.searchsorted(rows, rows[-1] / 2)) + 1 if len(rows) else 0
    on_site = pl.any_horizontal([pl.col("url").str.starts_with(f"https://{h}/") for h in sites]) if sites else pl.lit(False)

    def fetch(part: list) -> np.ndarray:
        if not part:
            return np.zeros(0, dtype=np.uint64)
        return _fact_hashes(pl.scan_parquet([str(f) for f in part], glob=False).filter(on_site))  # paths may hold [ ] * ?

    with ThreadPoolExecutor(1) as ex:
        first = fetch(files[:cut])
        sorting = ex.submit(first.sort)  # in place, while the second half is fetched
        second = fetch(files[cut:])
        second.sort()  # on this thread, beside the first half's sort
        sorting.result()
    if beside is None or beside.is_empty() or not files:
        return first, second
    rows = pl.scan_parquet([str(f) for f in files], glob=False).join(beside.lazy(), on="url", how="inner")
    moved = _fact_hashes(rows.select(pl.col("article").alias("url"), "fact_id"))  # one link from the article
    moved.sort()
    own = _fact_hashes(rows.select("url", "fact_id"))  # the same, on the page that states it (`WebIndex.via`)
    own.sort()
    return first, second, moved, own


def _plural(arrays: WorldArrays, t: str) -> str:
    """The plural a directory's address carries (`WorldView.directory_url`): the world's language's."""
    return arrays.world.lexicon().plural(t)
