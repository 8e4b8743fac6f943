"""Reachability: can an agent in the simulated web find every gold value?

A fact is reachable when some page that states it (per `page_facts`) is about one of the
fact's entities (the row entity, or the hop entity for a multi-hop value) and the search
engine returns that page in the top 10 for the entity's name. A row is discoverable when
it is listed on a directory page whose first page search returns for the directory's
title, or on a page search returns for the task's own natural query ("companies
headquartered in Zenhaven"). Searches are cached, so a world's entities are searched at
most once however many tasks mention them.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..web.search import SearchEngine


def fact_entities(fact_id: str) -> tuple[str, ...]:
    """The entities a fact is about: its subject, and the linked entity of a relation fact."""
    parts = fact_id.split("/")
    if len(parts) >= 3:
        return parts[0], parts[2].split("@", 1)[0]
    return (parts[0],)


@dataclass
class Verdict:
    ok: bool
    reason: str = ""  # unreachable-fact | undiscoverable-row
    detail: str = ""
    pages: int = 0  # a greedy estimate of the pages an agent must open
    evidence: list[list[str]] | None = None  # per row, per column: a page stating the cell's value
    listings: list[str] | None = None  # pages that together list every row


class Reachability:
    def __init__(self, engine: SearchEngine, names: dict[str, str], type_of: dict[str, str] | None = None,
                 directory_prefix: dict[str, str] | None = None):
        """`directory_prefix`: per type, the URL prefix of the directories that list it (a
        directory page also names its group entity, which it does not list)."""
        self.engine = engine
        self.names = names
        self.type_of = type_of or {}
        self.prefix = directory_prefix or {}
        self._top: dict[str, frozenset[str]] = {}
        self._fact_pages: dict[str, list[tuple[str, str]]] = {}
        self._listed_on: dict[str, list[str]] | None = None
        self._dir_found: dict[str, bool] = {}
        self._query_pages: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self.searches = 0
        con = engine.pages
        rows = con.sql("SELECT url, title FROM pages WHERE kind = 'directory' ORDER BY url").fetchall()
        self._dir_title = {u: t for u, t in rows}

    # ------------------------------------------------------------------ searching

    def top10(self, query: str) -> list[dict]:
        results, _ = self.engine.search(query)
        self.searches += 1
        return results

    def top_for(self, eid: str) -> frozenset[str]:
        if eid not in self._top:
            self._top[eid] = frozenset(r["url"] for r in self.top10(self.names[eid]))
        return self._top[eid]

    def load_facts(self, fact_ids: list[str]) -> None:
        """Fetch the pages stating each not-yet-known fact, in one query."""
        need = sorted({f for f in fact_ids if f not in self._fact_pages})
        if not need:
            return
        want = pl.DataFrame({"fact_id": need})  # noqa: F841  (read by DuckDB)
        rows = self.engine.pages.sql(
            "SELECT f.fact_id, p.url, p.subject FROM want w JOIN page_facts f ON f.fact_id = w.fact_id "
            "JOIN pages p ON p.url = f.url WHERE p.subject IS NOT NULL ORDER BY f.fact_id, p.url").fetchall()
        for f in need:
            self._fact_pages[f] = []
        for f, url, subject in rows:
            self._fact_pages[f].append((url, subject))

    def fact_page(self, fact_id: str, prefer: set[str]) -> str | None:
        """A page that states the fact, is about one of its entities and is found by searching
        that entity's name (preferring pages already opened), or None."""
        about = set(fact_entities(fact_id))
        found = None
        for url, subject in self._fact_pages.get(fact_id, ()):
            if subject in about and url in self.top_for(subject):
                if url in prefer:
                    return url
                found = found or url
        return found

    # ------------------------------------------------------------------ rows

    def _listings(self) -> dict[str, list[str]]:
        if self._listed_on is None:
            df = self.engine.pages.sql(
                "SELECT e AS entity, url FROM (SELECT unnest(entity_ids) AS e, url FROM pages WHERE kind = 'directory') "
                "ORDER BY entity, url").pl()
            grouped = df.group_by("entity", maintain_order=True).agg(pl.col("url"))
            self._listed_on = {}
            for e, urls in zip(grouped["entity"].to_list(), grouped["url"].to_list()):
                pre = self.prefix.get(self.type_of.get(e, ""))
                if pre:
                    self._listed_on[e] = [u for u in urls if u.startswith(pre)]
        return self._listed_on

    def _directory_found(self, url: str) -> bool:
        """Is the directory holding this page found by searching its title? (Its later pages
        are reached through its pagination links.)"""
        base = url.split("?", 1)[0]
        if base not in self._dir_found:
            title = self._dir_title.get(base) or self._dir_title.get(url, "")
            self._dir_found[base] = bool(title) and any(r["url"].split("?", 1)[0] == base for r in self.top10(title))
        return self._dir_found[base]

    def _query_listing(self, query: str) -> list[tuple[str, tuple[str, ...]]]:
        """The pages search returns for a query, each with the entities it lists."""
        if query not in self._query_pages:
            urls = [r["url"] for r in self.top10(query)]
            got = dict(((u, (k, e)) for u, k, e in self.engine.pages.execute(
                "SELECT url, kind, entity_ids FROM pages WHERE list_contains(?, url)", [urls]).fetchall()))
            out = []
            for u in urls:
                if u not in got:
                    continue
                kind, ents = got[u]
                if kind == "directory":  # a directory lists its own type; its group entity is only named
                    ents = [e for e in ents if u.startswith(self.prefix.get(self.type_of.get(e, ""), "\0"))]
                out.append((u, tuple(ents)))
            self._query_pages[query] = out
        return self._query_pages[query]

    def check(self, rows: list[str], cell_facts: list[list[list[str]]], queries: list[str]) -> Verdict:
        """Every fact behind every cell reachable (`cell_facts`: per row, per column, the facts
        from the row entity to the value), and every row discoverable."""
        self.load_facts([f for row in cell_facts for cell in row for f in cell])
        opened: set[str] = set()
        evidence = []
        for row in cell_facts:
            ev = []
            for cell in row:
                url = None
                for f in cell:
                    url = self.fact_page(f, opened)
                    if url is None:
                        return Verdict(False, "unreachable-fact", f)
                    opened.add(url)
                ev.append(url)
            evidence.append(ev)
        # discovery: a greedy cover of the rows by pages found through search: the task's query
        # results, and directory pages whose directory search returns for its title (checked
        # only for the directories the cover picks, so most directories are never searched)
        listings = self._listings()
        by_page: dict[str, set[str]] = {}
        found: set[str] = set()
        for q in queries:
            for u, ents in self._query_listing(q):
                hit = set(rows) & set(ents)
                if hit:
                    by_page.setdefault(u, set()).update(hit)
                    found.add(u)
        for e in rows:
            for u in listings.get(e, ()):
                by_page.setdefault(u, set()).add(e)
        missing = set(rows)
        lists: set[str] = set()
        while missing:
            best = sorted(by_page, key=lambda k: (-len(by_page[k] & missing), k))
            if not best or not by_page[best[0]] & missing:
                return Verdict(False, "undiscoverable-row", sorted(missing)[0])
            u = best[0]
            if u not in found and not self._directory_found(u):
                del by_page[u]
                continue
            lists.add(u)
            missing -= by_page[u]
        return Verdict(True, pages=len(opened) + len(lists - opened), evidence=evidence, listings=sorted(lists))
