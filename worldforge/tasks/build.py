"""From a candidate row set to a table task: columns, gold cells, their proofs and the SQL.

Columns are drawn from the row type's pool (own attributes, linked entities and the
attributes and links of theirs their pack lists as `linked_columns`, lists of names, counts,
latest years) and kept only when they
carry information: no empty cell, not constant across the rows, not a copy of another
column, at most one column about a container many rows share (a country, a league), and
every cell proven reachable (see `reach.py`). Values are numpy gathers over the world's
arrays; each cell's proof is a chain of (page, fact) pairs probed against the render
stage's provenance in one query per candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from ..plumbing import quote_ident as _q
from ..web import slug
from ..world import Step, TasksOptions, iso, note_sql
from .banks import question_bank
from .reach import WebIndex, among, fact_hashes
from .schema import DATE, LIST, LIST_SEPARATOR, NUMBER, STRING, URL, Column, TaskSchema
from .table import Candidate, TableSampler, cell_text

KIND_WEIGHTS = {STRING: 3.0, LIST: 6.0, NUMBER: 1.0, DATE: 0.5, URL: 0.4}  # how often a pool column is tried first


@dataclass
class TableTask:
    cand: Candidate
    columns: list[Column]
    keys: list[int]  # indexes of the key columns
    gold_rows: list[list[str]]
    row_ids: list[str]
    sql: str
    evidence: list[list[list[int]]]  # per row, per column: page nodes (value page last)
    listings: list[int]  # page nodes leading to the rows, entry points first
    support: list[int] = field(default_factory=list)
    container: int = 0  # columns about a container many rows share
    dropped: dict[str, int] = field(default_factory=dict)  # pool columns left out, by reason
    facts: list[str] = field(default_factory=list)  # the gold facts: what the cells (and a rank's values) state
    beside: dict[tuple[int, int], str] = field(default_factory=dict)  # (row, column) -> the page one link from the
    # value's article that states it (`WebIndex.via`)


class Proof(list):
    """Per row, the page nodes that prove a column's cell (value page last), with the fact the
    value's page states for each row (`value_facts`)."""

    value_facts: list


# --------------------------------------------------------------------------- the pool


def column_pool(s: TaskSchema, t: str, base: str, exclude: set[str] = frozenset()) -> list[Column]:
    """Every column a row entity of type t (as `base`) can have, with names from the grammar."""
    out: list[Column] = []
    for a in s.shown(t):
        if a in exclude:
            continue
        out.append(Column(s.with_unit(t, a, s.attr_noun(t, a)), (), a, s.attr_kind(t, a), s.label(t, a), base=base))
    for st in s.steps[t]:
        if st.to_one:
            out.append(Column(s.link_name(st), (st,), None, STRING, s.link_name(st), base=base))
            of = s.link_noun(st)
            u = st.target
            asked = s.linked_columns(u)  # what a person asks about the linked entity ("country of birthplace", not its mayor)
            for a in s.shown(u):
                if a not in asked:
                    continue
                out.append(Column(s.with_unit(u, a, s.of(s.attr_noun(u, a), of)), (st,), a, s.attr_kind(u, a),
                                  s.label(u, a), base=base))
            for st2 in s.steps[u]:
                if st2.to_one and st2.target != t and st2.name in asked:
                    out.append(Column(s.of(s.link_name(st2), of), (st, st2), None, STRING, s.link_name(st2), base=base))
    for st in s.steps[t] + s.in_steps[t]:
        if st.to_one or st.kind != "rel":
            continue
        rs = s.relations[st.name]
        label = (s.inverse_label(st.name) if st.reverse else s.label(t, st.name)).strip()
        forms = question_bank(s.language)["list_columns"]
        if st.reverse and not rs.dated:  # the one link to the row that holds a value: a grant's principal investigator
            for a, attr in rs.attributes.items():
                one = getattr(attr, "one_per_target", None)
                if one is not None and not attr.hidden:
                    v = attr.translation(s.language).get(one.value, one.value)
                    out.append(Column(v, (), None, STRING, v, base=base, agg="list", via=st, items=v, only=(a, v)))
        items, one = s.lexicon.list_noun(t, st.name, st.reverse, st.target)  # named after the link, not only the type
        out.append(Column(items, (), None, LIST, label, base=base, agg="list", via=st, items=items))
        out.append(Column(forms["count"].format(items=items), (), None, NUMBER, label, base=base, agg="count", via=st))
        if (rs.history or rs.date) and one is not None:
            out.append(Column(forms["latest"].format(item=one), (), None, NUMBER, label, base=base, agg="latest", via=st))
    # names compared as the scorer compares headers, whatever their case ('Trayectoria laboral', a
    # timeline's link column, and 'trayectoria laboral', its list column, are one header)
    seen: set[str] = {t.replace("_", " ").casefold(), s.singular(t).casefold()} | {x.casefold() for x in exclude}
    uniq = []
    for c in out:
        if c.name.casefold() not in seen:
            seen.add(c.name.casefold())
            uniq.append(c)
    return uniq


def column_count(rng: np.random.Generator, opt: TasksOptions) -> int:
    """WideSearch's tables have 3 to 14 columns, 6.3 on average: 3 + Binomial(11, 0.3)."""
    return int(np.clip(3 + rng.binomial(11, 0.3), opt.columns.min, opt.columns.max))


# --------------------------------------------------------------------------- values and proofs


@dataclass
class Evaluated:
    values: np.ndarray  # cell texts ('' = missing)
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per chain step: (row index, page node candidates, fact ids)
    end_nodes: np.ndarray | None = None  # the entity whose name or attribute the column shows (containers)
    fixed_pages: list[list[int]] | None = None  # cells proven by a page chosen elsewhere (link rows)
    facts: Callable[[], np.ndarray] | None = None  # facts its cells state besides the chain's (names, links, a row's
    # links counted), made when asked for: only a held-out task and a kept column need them


def _facts_of(ev: Evaluated) -> list[np.ndarray]:
    """The facts a column's cells state: each step of its chains, and the ones it records besides."""
    out = [f for _, _, f in ev.pairs if f is not None]
    if ev.facts is not None:
        out.append(ev.facts())
    return out


class Builder:
    def __init__(self, schema: TaskSchema, web: WebIndex, sampler: TableSampler, opt: TasksOptions):
        self.s = schema
        self.a = schema.a
        self.web = web
        self.sampler = sampler
        self.opt = opt
        self.rng = sampler.rng
        self._dir_lookup = None
        self._pools: dict[tuple[str, str], list[Column]] = {}
        self._cells: dict[tuple[str, str, str], np.ndarray] = {}
        self._avoid = None  # during a build: page nodes -> whether the task must not read them
        self._confined: np.ndarray | None = None  # during a held-out build: the facts its cells may state

    def cells(self, t: str, a: str, kind: str) -> np.ndarray:
        """Every entity's value of an attribute as gold cell text (None where missing), cached."""
        key = (t, a, kind)
        if key not in self._cells:
            col = self.a.frame(t)[a]
            if col.dtype.is_temporal():
                txt = col.dt.strftime("%Y-%m-%d")
            elif col.dtype.is_integer():
                txt = col.cast(pl.String)
            elif col.dtype == pl.String:
                txt = col
            else:
                txt = pl.Series([cell_text(v, kind) if v is not None else None for v in col.to_list()], dtype=pl.String)
            self._cells[key] = np.asarray(txt.to_numpy(), dtype=object)
        return self._cells[key]

    def pool(self, t: str, base: str) -> list[Column]:
        key = (t, base)
        if key not in self._pools:
            self._pools[key] = column_pool(self.s, t, base)
        return self._pools[key]

    # ------------------------------------------------------------------ row context

    def _context(self, cand: Candidate) -> dict:
        rows = cand.rows
        ctx = {"row": (rows.t, rows.codes)}
        nodes = self.web.entity_nodes(rows.t, rows.codes)
        parent = self.web.parent[nodes]
        ctx["row_parent"] = parent
        if rows.step is not None:
            ctx["other"] = (rows.step.target, rows.other)
            ctx["link"] = self._link_pages(cand)
        return ctx

    def _link_facts(self, cand: Candidate) -> np.ndarray:
        rows = cand.rows
        st = rows.step
        lk = self.a.links(st)
        a_ids = self.a.ids[st.source][rows.codes]
        o_ids = self.a.ids[st.target][rows.other]
        src, dst = (o_ids, a_ids) if st.reverse else (a_ids, o_ids)
        days = iso(lk.valid_from[rows.link])
        return np.array([f"{x}/{st.name}/{y}" + (f"@{d}" if d else "") for x, y, d in zip(src, dst, days)], dtype=object)

    def _dir_keys(self) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
        """Directory memberships as sorted integer keys (grouping predicate, group, member) and
        the directory page of each."""
        if self._dir_lookup is None:
            w = self.web
            by_code = {b: i for i, b in enumerate(sorted(set(w.dir_by.tolist())))}
            grp = w.dir_group[w.member_dir]
            keep = (grp >= 0) & (w.member_ent >= 0)
            by = np.array([by_code[b] for b in w.dir_by[w.member_dir[keep]]], dtype=np.int64)
            keys = (by * w.n_nodes + grp[keep]) * w.n_nodes + w.member_ent[keep]
            order = np.argsort(keys, kind="stable")
            self._dir_lookup = (keys[order], w.member_dir[keep][order], by_code)
        return self._dir_lookup

    def _dir_pages(self, groups: np.ndarray, by: str, members: np.ndarray) -> np.ndarray:
        """The directory page (node) listing each member under its group, -1 if none."""
        keys, pages, by_code = self._dir_keys()
        out = np.full(len(groups), -1, dtype=np.int64)
        if by not in by_code or not len(groups) or not len(keys):
            return out
        n = self.web.n_nodes
        want = (by_code[by] * n + np.asarray(groups, dtype=np.int64)) * n + np.asarray(members, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        hit = keys[pos] == want
        out[hit] = pages[pos[hit]] + self.web.n_entities
        return out

    def _link_pages(self, cand: Candidate) -> np.ndarray:
        """Per link row: the page (node) that states the link, -1 if none is reachable. Events need
        their date: the source's article (its timeline gives the day)."""
        rows = cand.rows
        st = rows.step
        facts = self._link_facts(cand)
        a_nodes = self.web.entity_nodes(st.source, rows.codes)
        o_nodes = self.web.entity_nodes(st.target, rows.other)
        src_nodes = o_nodes if st.reverse else a_nodes
        if cand.shape == "events":
            options = [src_nodes]
        else:
            grp, mem = (a_nodes, o_nodes) if st.reverse else (o_nodes, a_nodes)
            options = [a_nodes, o_nodes, self._dir_pages(grp, slug(st.name), mem)]
        return self.first_stated(np.stack(options, axis=1), facts)

    # ------------------------------------------------------------------ one column

    def evaluate(self, col: Column, ctx: dict, cand: Candidate) -> Evaluated | None:
        if col.base == "link":
            return self._link_column(col, ctx, cand)
        if col.base == "rank":  # competition ranking: ties share a rank (1, 2, 2, 4)
            vals = self.a.frame(cand.t)[cand.rank_attr].to_numpy()[cand.rows.codes]
            ranks = [1 + int((vals > v).sum() if cand.rank_desc else (vals < v).sum()) for v in vals]
            return Evaluated(np.array([str(r) for r in ranks], dtype=object), [])
        t, codes = ctx[col.base]
        if col.agg:
            return self._agg_column(col, t, codes, ctx)
        n = len(codes)
        reached, dates = self.a.follow(col.path, codes)
        end = reached[-1] if col.path else codes
        end_t = col.path[-1].target if col.path else t
        if (end < 0).any():
            return None
        if col.attr is None:
            vals = self.a.names(end_t)[end]
        else:
            vals = self.cells(end_t, col.attr, col.kind)[end]
            if any(v is None for v in vals):
                return None
        pairs = []
        rows = np.arange(n)
        cur_t, cur = t, codes
        prefix = self._prefix(col, ctx)
        for i, st in enumerate(col.path):
            ids = self.a.ids[cur_t][cur]
            if st.kind == "lookup":
                facts = np.array([f"{x}/{st.name}" for x in ids], dtype=object)
            else:
                nxt_ids = self.a.ids[st.target][reached[i]]
                days = iso(dates[i])
                facts = np.array([f"{x}/{st.name}/{y}" + (f"@{d}" if d else "") for x, y, d in zip(ids, nxt_ids, days)],
                                 dtype=object)
            pairs.append((rows, self._candidates(cur_t, cur, ctx if i == 0 and col.base == "row" else None), facts))
            cur_t, cur = st.target, reached[i]
        if col.attr is not None:
            ids = self.a.ids[cur_t][cur]
            facts = np.array([f"{x}/{col.attr}" for x in ids], dtype=object)
            pairs.append((rows, self._candidates(cur_t, cur, ctx if not col.path and col.base == "row" else None), facts))
        elif not col.path:
            ids = self.a.ids[t][codes]
            return Evaluated(vals.astype(object), [], None, self._name_pages(col, ctx, codes),
                             lambda: np.array([f"{x}/name" for x in ids], dtype=object))
        end_nodes = self.web.entity_nodes(end_t, end) if col.path else None
        return Evaluated(vals.astype(object), prefix + pairs, end_nodes)

    def _prefix(self, col: Column, ctx: dict) -> list:
        """Columns about the other end of a link row start from the page that states the link."""
        if col.base != "other":
            return []
        pages = ctx["link"]
        n = len(pages)
        return [(np.arange(n), pages[:, None], None)]

    def _candidates(self, t: str, codes: np.ndarray, ctx: dict | None) -> np.ndarray:
        """Pages that may state a fact about these entities: the directory page listing the row
        (when it is one, so a table read off directories needs no article), then the article."""
        art = self.web.entity_nodes(t, codes)
        if ctx is None:
            return art[:, None]
        parent = ctx["row_parent"]
        lst = np.where(parent >= self.web.n_entities, parent, -1)
        return np.stack([lst, art], axis=1)

    def _name_pages(self, col: Column, ctx: dict, codes: np.ndarray) -> list[list[int]]:
        """A name is written where the entity is listed: its parent page, or its own article."""
        if col.base == "other":
            return [[int(p)] for p in ctx["link"]]
        if col.base == "row" and ctx["row"][1] is codes and "link" in ctx:
            return [[int(p)] for p in ctx["link"]]
        nodes = self.web.entity_nodes(ctx["row"][0], codes)
        par = ctx["row_parent"]
        return [[int(p) if p >= 0 else int(nd)] for p, nd in zip(par, nodes)]

    def _link_column(self, col: Column, ctx: dict, cand: Candidate) -> Evaluated | None:
        lk = self.a.links(cand.rows.step)
        idx = cand.rows.link
        if col.attr == "start":
            vf = lk.valid_from[idx]
            if np.isnat(vf).any():
                return None
            vals = np.array([s[:4].lstrip("0") for s in iso(vf)], dtype=object)
        elif col.attr == "end":
            vt = lk.valid_to[idx]
            vals = np.array([s[:4].lstrip("0") if s else self.s.word("present") for s in iso(vt)], dtype=object)
        elif col.attr != "date":  # the link's own attribute, stated with the link
            vals = lk.notes[col.attr][idx]
            if any(v is None for v in vals):
                return None
        else:
            vf = lk.valid_from[idx]
            if np.isnat(vf).any():
                return None
            vals = iso(vf)
        return Evaluated(vals.astype(object), [], None, [[int(p)] for p in ctx["link"]], lambda: self._link_facts(cand))

    def _agg_column(self, col: Column, t: str, codes: np.ndarray, ctx: dict) -> Evaluated | None:
        st = col.via
        lk = self.a.links(st)
        starts, ends = lk.starts[codes], lk.starts[codes + 1]
        lens = ends - starts
        if col.agg == "latest" and (lens == 0).any():
            return None
        total = int(lens.sum())
        idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(total)
        owner = np.repeat(np.arange(len(codes)), lens)
        if col.only is not None:  # the one link holding the value (a grant's principal investigator): exactly one a row
            keep = lk.notes[col.only[0]][idx] == col.only[1]
            if (np.bincount(owner[keep], minlength=len(codes)) != 1).any():
                return None
            idx, owner = idx[keep], owner[keep]
        if col.agg == "count":
            vals = np.array([str(int(x)) for x in lens], dtype=object)
        elif col.agg == "latest":
            years = lk.valid_from[idx].astype("datetime64[Y]").astype(np.int64) + 1970
            if np.isnat(lk.valid_from[idx]).any():
                return None
            best = np.full(len(codes), -10**9, dtype=np.int64)
            np.maximum.at(best, owner, years)
            vals = np.array([str(int(y)) for y in best], dtype=object)
        else:
            if (lens == 0).any() or (lens > 12).any():
                return None
            names = self.a.names(st.target)[lk.dst[idx]]
            per: list[list[str]] = [[] for _ in codes]
            for o, nm in zip(owner.tolist(), names.tolist()):
                per[o].append(nm)
            vals = np.array([LIST_SEPARATOR.join(sorted(set(x))) for x in per], dtype=object)
        # every link is on the row's page when it lists them all (the page plan cuts a longer list,
        # or one with entities that have no article, and links the directory that holds it), else on
        # the pages of that directory, from its first page to the last one a link is on
        art = self.web.entity_nodes(t, codes)
        pages = [[int(a)] for a in art]
        if st.reverse and st.kind == "rel":
            every, shown = self.web.listed_in(st.name)  # an article may list only the linking entities that have articles
            long = np.flatnonzero(every[codes] > shown[codes])
        else:
            long = np.flatnonzero(lens > self.web.cap)
        if len(long):
            if not st.reverse:
                return None
            sel = np.isin(owner, long)
            dirs = self._dir_pages(art[owner[sel]], slug(st.name), self.web.entity_nodes(st.target, lk.dst[idx[sel]]))
            if (dirs < 0).any():
                return None
            own = owner[sel]
            order = np.lexsort((self.web.dir_page[dirs - self.web.n_entities], own))  # per row, its last page last
            own, dirs = own[order], dirs[order]
            last = np.r_[own[1:] != own[:-1], True] if len(own) else np.zeros(0, dtype=bool)  # (rows in force: none may be)
            for o, d in zip(own[last].tolist(), dirs[last].tolist()):
                pages[o] += [int(x) for x in self.web.pages_up_to(d)]

        def facts() -> np.ndarray:
            src, dst = self.a.ids[t][codes][owner], self.a.ids[st.target][lk.dst[idx]]
            if st.reverse:
                src, dst = dst, src
            days = iso(lk.valid_from[idx])
            return np.array([f"{x}/{st.name}/{y}" + (f"@{d}" if d else "") for x, y, d in zip(src, dst, days)], dtype=object)

        return Evaluated(vals, [], None, pages, facts)

    # ------------------------------------------------------------------ proofs

    def first_stated(self, cands: np.ndarray, facts: np.ndarray) -> np.ndarray:
        """Per row of `cands` (page nodes, -1 for none, in order of preference): the first page
        that states the row's fact and is reachable, -1 if none; one probe for all."""
        cands = np.asarray(cands, dtype=np.int64)
        if cands.ndim == 1:
            cands = cands[:, None]
        ok_c = cands >= 0
        if self._avoid is not None and ok_c.any():  # pages this task may not read (held out, or outside its part)
            ok_c[ok_c] = ~self._avoid(cands[ok_c])
        i, j = np.nonzero(ok_c)
        out = np.full(len(cands), -1, dtype=np.int64)
        if not len(i):
            return out
        nodes = cands[i, j]
        ok = self.web.stated(self.web.url(nodes), facts[i]) & self.web.reachable(nodes)
        i, j, nodes = i[ok], j[ok], nodes[ok]
        order = np.lexsort((j, i))  # per row, the most preferred page first
        i, nodes = i[order], nodes[order]
        first = np.r_[True, i[1:] != i[:-1]] if len(i) else np.zeros(0, dtype=bool)
        out[i[first]] = nodes[first]
        return out

    def prove_many(self, evs: list[Evaluated], n: int) -> list[Proof | None]:
        """Per column, per row, the pages that prove the cell (value page last), or None for a
        column with a cell that is not provable. Every fact of every column in one probe."""
        cands, facts, where = [], [], []
        for k, ev in enumerate(evs):
            for q, (_rows, c, f) in enumerate(ev.pairs):
                if f is None:
                    continue
                cands.append(c if c.shape[1] == 2 else np.concatenate([c, np.full((len(c), 1), -1)], axis=1))
                facts.append(f)
                where.append((k, q, len(f)))
        chosen = self.first_stated(np.concatenate(cands), np.concatenate(facts)) if cands else np.zeros(0, dtype=np.int64)
        parts: dict[tuple[int, int], np.ndarray] = {}
        off = 0
        for k, q, m in where:
            parts[(k, q)] = chosen[off:off + m]
            off += m
        out: list[Proof | None] = []
        for k, ev in enumerate(evs):
            pages = Proof([list(x) for x in ev.fixed_pages] if ev.fixed_pages else [[] for _ in range(n)])
            pages.value_facts = [None] * n
            if ev.fixed_pages:
                first = np.array([p[0] if p else -1 for p in ev.fixed_pages], dtype=np.int64)
                if (first < 0).any() or not self.web.reachable(first).all():
                    out.append(None)
                    continue
            ok = True
            for q, (rows, c, f) in enumerate(ev.pairs):
                got = c[:, 0] if f is None else parts[(k, q)]
                if (got < 0).any():
                    ok = False
                    break
                last = q == len(ev.pairs) - 1  # the value's page: last, even when the chain passed it before
                for r, pg in zip(rows.tolist(), got.tolist()):
                    if pg not in pages[r]:
                        pages[r].append(pg)
                    elif last and pages[r][-1] != pg:
                        pages[r].remove(pg)
                        pages[r].append(pg)
                if f is not None:
                    for r, x in zip(rows.tolist(), f.tolist()):
                        pages.value_facts[r] = x  # the last step's: the value's
            out.append(pages if ok else None)
        return out

    def prove(self, ev: Evaluated, n: int) -> Proof | None:
        return self.prove_many([ev], n)[0]

    # ------------------------------------------------------------------ the task

    def build(self, cand: Candidate, blocked: np.ndarray | None, part_ok: np.ndarray | None,
              confined: np.ndarray | None = None) -> TableTask | str:
        """Columns, gold and proofs for a candidate, or the reason it is dropped. `blocked`: per
        page node, whether a training task may not read it; `part_ok`: whether a held-out task may;
        `confined`: the hashes of the facts a held-out task's cells may state (no page outside the
        held-out parts states them, `WebIndex.confined_facts`)."""
        if blocked is not None:
            self._avoid = lambda nodes: blocked[nodes]
        elif part_ok is not None:
            self._avoid = lambda nodes: ~part_ok[nodes]
        else:
            self._avoid = None
        self._confined = confined
        try:
            return self._build(cand, blocked, part_ok)
        finally:
            self._avoid = None
            self._confined = None

    def _inside(self, groups: list[list[np.ndarray]]) -> list[bool]:
        """Per group of fact arrays (a column's, say): whether a held-out task may state them all,
        that is whether every one is confined to the held-out parts (names aside: a name is how
        an entity is found, not an answer a page gives away); always so for a training task.
        One hash for every group."""
        if self._confined is None:
            return [True] * len(groups)
        owner = np.concatenate([np.full(sum(len(f) for f in g), i, dtype=np.int64) for i, g in enumerate(groups)] or
                               [np.zeros(0, dtype=np.int64)])
        flat = [f for g in groups for f in g]
        if not flat:
            return [True] * len(groups)
        facts = pl.Series(np.concatenate(flat).astype(str), dtype=pl.String)
        ok = among(fact_hashes(facts), self._confined) | facts.str.ends_with("/name").to_numpy()
        bad = np.zeros(len(groups), dtype=bool)
        np.logical_or.at(bad, owner, ~ok)
        return (~bad).tolist()

    def _build(self, cand: Candidate, blocked: np.ndarray | None, part_ok: np.ndarray | None) -> TableTask | str:
        rng = self.rng
        rows = cand.rows
        n = rows.n
        ctx = self._context(cand)
        if rows.step is None:
            nodes = self.web.entity_nodes(rows.t, rows.codes)
            if not self.web.reachable(nodes).all():
                return "undiscoverable-row"
            listing_nodes = self.web.chain(nodes)
        else:
            if (ctx["link"] < 0).any():
                return "undiscoverable-row"
            listing_nodes = self.web.chain(ctx["link"])
        if blocked is not None and blocked[listing_nodes].any():
            return "reads-held-out"
        if part_ok is not None and not part_ok[listing_nodes].all():
            return "leaves-part"
        forced, keys = self._forced(cand)
        names = {c.name.casefold() for c in forced}  # (headers are one whatever their case, as the scorer reads them)
        pool = [c for c in self._pool_for(cand) if c.name.casefold() not in names]
        # names and lists first, as in WideSearch's tables (mostly exact and free-text cells): a
        # weighted shuffle (Efraimidis-Spirakis keys)
        weights = np.array([KIND_WEIGHTS.get(c.kind, 1.0) * (0.3 if c.agg in ("count", "latest") else 1.0) for c in pool])
        keys_ = rng.random(len(pool)) ** (1.0 / np.maximum(weights, 1e-9))
        order = [int(i) for i in np.argsort(-keys_, kind="stable")]
        k = column_count(rng, self.opt)
        chosen: list[tuple[Column, list[list[int]], np.ndarray]] = []
        facts: list[np.ndarray] = []  # what the chosen columns' cells state
        dropped: dict[str, int] = {}
        support: list[int] = []
        evs = [self.evaluate(c, ctx, cand) for c in forced]
        if any(ev is None for ev in evs):
            return "unreachable-fact"
        # a held-out task's own facts first (the rows' links, a rank's values, the forced columns'): cheap to refuse
        base = ([self._link_facts(cand)] if rows.step is not None else []) + \
            ([np.array([f"{x}/{cand.rank_attr}" for x in self.a.ids[cand.t][cand.scope_codes]], dtype=object)]
             if cand.shape == "ranked" else [])
        if not all(self._inside([base] + [_facts_of(ev) for ev in evs])):
            return "stated-outside-held-out"
        proofs = self.prove_many(evs, n)
        for c, ev, pages in zip(forced, evs, proofs):
            if pages is None:
                return "unreachable-fact"
            if n > 1 and len(set(ev.values)) == 1 and len(forced) > 1:
                return "constant-column"
            chosen.append((c, pages, ev.values))
            facts += _facts_of(ev)
        if cand.shape == "ranked":
            if cand.scope_count > self.opt.max_pages:
                return "too-many-pages"
            support = self._rank_support(cand)
            if support is None:
                return "unreachable-fact"
        containers = self._fill_columns(cand, ctx, pool, order, k, chosen, facts, dropped, (blocked, part_ok))
        if len(chosen) < self.opt.columns.min or len(chosen) <= len(keys):
            return "too-few-columns"
        columns = [c for c, _, _ in chosen]
        gold = [[str(v) for v in row] for row in zip(*(vals for _, _, vals in chosen))]
        key_tuples = [tuple(r[i] for i in keys) for r in gold]
        if len(set(key_tuples)) != len(key_tuples):
            return "ambiguous-key"
        order = list(range(n)) if cand.shape == "ranked" else sorted(range(n), key=lambda r: (key_tuples[r], gold[r]))
        gold = [gold[r] for r in order]
        evidence = [[pages[r] for _, pages, _ in chosen] for r in order]
        # a value stated one link from its article (the profile or a news item the article links)
        # is recorded on that page too, after the article
        value = [(r, j, pages[r][-1], pages.value_facts[r]) for j, (_, pages, _) in enumerate(chosen)
                 for r in order if isinstance(pages, Proof) and pages[r] and pages.value_facts[r] is not None
                 and pages[r][-1] < self.web.n_entities]
        beside = self.web.via(self.web.url(np.asarray([v[2] for v in value], dtype=np.int64)).tolist(), [v[3] for v in value])
        pos = {r: i for i, r in enumerate(order)}
        extra: dict[tuple[int, int], str] = {(pos[r], j): u for (r, j, _, _), u in zip(value, beside) if u}
        every = np.fromiter((p for row in evidence for cell in row for p in cell), dtype=np.int64)
        every = np.concatenate([every, listing_nodes, np.asarray(support, dtype=np.int64)])
        if len(np.unique(every)) > self.opt.max_pages:
            return "too-many-pages"
        if blocked is not None and blocked[every].any():
            return "reads-held-out"
        if part_ok is not None and not part_ok[every].all():
            return "leaves-part"
        ids = self._row_ids(cand)
        row_ids = [ids[r] for r in order]
        sql = self.sql(cand, columns)
        facts += base  # a link row states its link; a rank is read off every candidate's value
        gold_facts = sorted(set(np.concatenate(facts).tolist())) if facts else []
        return TableTask(cand, columns, keys, gold, row_ids, sql, evidence, [int(x) for x in listing_nodes],
                         [int(x) for x in support], containers, dropped, gold_facts, extra)

    def _fill_columns(self, cand: Candidate, ctx: dict, pool: list[Column], order: list[int], k: int, chosen: list,
                      facts: list, dropped: dict[str, int], bounds: tuple) -> int:
        """Columns from `pool` in `order` (a weighted shuffle) added to `chosen` until there are `k`:
        those that pass the cheap checks are proved together, a batch at a time; each one dropped
        is counted in `dropped` by why. `bounds`: (pages a training task may not read, pages a
        held-out one may read). Returns how many chosen columns are containers (shared values)."""
        seen_vals = {tuple(v) for _, _, v in chosen}
        containers = 0
        n = cand.rows.n
        blocked, part_ok = bounds

        def drop(reason: str) -> None:
            dropped[reason] = dropped.get(reason, 0) + 1

        while order and len(chosen) < k:
            batch = []  # columns that pass the cheap checks, proved together
            while order and len(batch) < k - len(chosen) + 3:
                c = pool[order.pop(0)]
                if self._tested(c, cand):
                    drop("constraint")
                    continue
                ev = self.evaluate(c, ctx, cand)
                if ev is None:
                    drop("empty")
                    continue
                vals = tuple(ev.values)
                if n > 1 and len(set(vals)) == 1:
                    drop("constant")
                    continue
                if vals in seen_vals or any(vals == tuple(e.values) for _, e in batch):
                    drop("duplicate")
                    continue
                batch.append((c, ev))
            inside = self._inside([_facts_of(ev) for _, ev in batch])
            for ok in inside:
                if not ok:
                    drop("stated-outside-held-out")
            batch = [x for x, ok in zip(batch, inside) if ok]
            for (c, ev), pages in zip(batch, self.prove_many([ev for _, ev in batch], n)):
                if len(chosen) >= k:
                    break
                vals = tuple(ev.values)
                if vals in seen_vals:
                    drop("duplicate")
                    continue
                shared = ev.end_nodes is not None and len(np.unique(ev.end_nodes)) * 3 <= n
                if shared and containers >= 1:
                    drop("container")
                    continue
                if pages is None:
                    drop("unprovable")
                    continue
                flat = np.fromiter((p for row in pages for p in row), dtype=np.int64)
                if blocked is not None and blocked[flat].any():
                    drop("held-out")
                    continue
                if part_ok is not None and not part_ok[flat].all():
                    drop("leaves-part")
                    continue
                containers += shared
                seen_vals.add(vals)
                chosen.append((c, pages, ev.values))
                facts += _facts_of(ev)
        return containers

    def _pool_for(self, cand: Candidate) -> list[Column]:
        rows = cand.rows
        if rows.step is None:
            pool = list(self.pool(rows.t, "row"))
            if cand.rank_attr:
                pool = [c for c in pool if not (c.base == "row" and not c.path and c.attr == cand.rank_attr)]
            return pool
        out = [c for c in self.pool(rows.t, "row")] + [c for c in self.pool(rows.step.target, "other")]
        seen, uniq = set(), []
        for c in out:
            if c.name.casefold() not in seen:
                seen.add(c.name.casefold())
                uniq.append(c)
        return uniq

    def _tested(self, c: Column, cand: Candidate) -> bool:
        """A column repeating what a constraint fixed (an equality on the row's own attribute)."""
        if c.base != "row" or c.agg:
            return False
        for k, a in cand.atoms.items():
            if a.test == "eq" and not a.path and not c.path and c.attr == a.attr:
                return True
            if k == "R" and not c.path and c.attr == a.attr:  # a rule's date is empty on every row it keeps
                return True
            if a.test == "entity" and a.path == c.path and c.attr is None:
                return True
        return False

    def _forced(self, cand: Candidate) -> tuple[list[Column], list[int]]:
        """The columns a shape always has, and which of them are the key."""
        s = self.s
        rows = cand.rows
        t = rows.t
        key = Column(s.singular(t), (), None, STRING, "name", base="row")
        if cand.shape == "filter":
            return [key], [0]
        if cand.shape == "ranked":
            a = cand.rank_attr
            rank = Column(s.word("rank"), (), None, NUMBER, "rank", base="rank")
            val = Column(s.with_unit(t, a, s.attr_noun(t, a)), (), a, NUMBER, s.label(t, a), base="row")
            return [rank, key, val], [1]
        st = rows.step
        other_name = self._other_name(st)
        other = Column(other_name, (), None, STRING, other_name, base="other")
        lk = self.a.links(st)
        # the link's own attributes (a job's department, a doctorate's supervisor), each a column of
        # its row where every row's link has one (a doctorate no page names a supervisor for has none)
        notes = [Column(s.lang.mid(label), (), a, STRING, label, base="link")
                 for a, label in (s.link_notes(st.name) if st.kind == "rel" else [])
                 if not (cand.note and cand.note[0] == a)  # a value the question names is no column
                 and not any(v is None for v in lk.notes[a][rows.link])]
        if cand.shape == "events":
            date = Column(s.word("date"), (), "date", DATE, "date", base="link")
            return [date, key, other, *notes], [0, 1]
        start = Column(s.word("start year"), (), "start", NUMBER, "start", base="link")
        end = Column(s.word("end year"), (), "end", NUMBER, "end", base="link")
        # Keyed by year where each anchor's tenures start in distinct years (a title holder, a
        # chief executive: one at a time); else by the anchor, the holder and the start year
        years = lk.valid_from[rows.link].astype("datetime64[Y]").astype(np.int64)
        by_year = not st.reverse and len(set(zip(rows.codes.tolist(), years.tolist()))) == rows.n
        single = cand.anchor is not None
        ends = cand.tenure != "current"  # (only tenures under way: no row has an end)
        if by_year:
            year = Column(s.word("year"), (), "start", NUMBER, "start", base="link")
            until = [Column(s.word("until"), (), "end", NUMBER, "end", base="link")] if ends else []
            if single:
                return [year, other, *until, *notes], [0]
            return [key, year, other, *until, *notes], [0, 1]
        end = [end] if ends else []
        if single:
            return [other, start, *end, *notes], [0, 1]
        return [key, other, start, *end, *notes], [0, 1, 2]

    def _other_name(self, st: Step) -> str:
        """The header of the other end of a link row: the relation's role ('chief executive'),
        else the other type ('university' for an affiliation; the lexicon's `role`)."""
        return self.s.lexicon.role(st.source, st.name, st.reverse, st.target)

    def _rank_support(self, cand: Candidate) -> list[int] | None:
        """Pages stating the ranked value of every candidate in the scope (a rank needs them all)."""
        t, a = cand.rows.t, cand.rank_attr
        codes = cand.scope_codes
        nodes = self.web.entity_nodes(t, codes)
        if not self.web.reachable(nodes).all():
            return None
        facts = np.array([f"{x}/{a}" for x in self.a.ids[t][codes]], dtype=object)
        parent = self.web.parent[nodes]
        lst = np.where(parent >= self.web.n_entities, parent, -1)
        ev = Evaluated(np.empty(0), [(np.arange(len(codes)), np.stack([lst, nodes], axis=1), facts)])
        pages = self.prove(ev, len(codes))
        if pages is None:
            return None
        out = sorted({p for row in pages for p in row} | set(int(x) for x in self.web.chain(nodes)))
        return out

    def _row_ids(self, cand: Candidate) -> list[str]:
        rows = cand.rows
        ids = self.a.ids[rows.t][rows.codes]
        if rows.step is None:
            return [str(x) for x in ids]
        return [f"{x}#{int(i)}" for x, i in zip(ids, rows.link)]

    @staticmethod
    def row_key(cand: Candidate) -> tuple:
        """Which rows a candidate has (to refuse a second task with the same gold set)."""
        rows = cand.rows
        ids = np.sort(rows.codes if rows.step is None else rows.link)
        return cand.shape, cand.t, str(rows.step), ids.tobytes()

    # ------------------------------------------------------------------ SQL

    def sql(self, cand: Candidate, columns: list[Column]) -> str:
        """The gold query over the world store (for audit; the tests run it)."""
        s = self.s
        rows = cand.rows
        t = rows.t
        if rows.step is None:
            bases = {"row": "t.id", "row_row": "t"}
            sel, joins = [], []
            for j, c in enumerate(columns):
                jn, val = s.column_sql(c, j, bases)
                joins += jn
                sel.append(f"{val} AS {_q(c.name)}")
            where = self.sampler.where_sql(t, cand.combo, cand.atoms)
            if cand.shape == "ranked":
                inner = self._ranked_inner(t, cand)
                return (f"SELECT {', '.join(sel)}\nFROM {inner} t" + "".join(f"\n{x}" for x in joins)
                        + f"\nWHERE t.rank <= {rows.n}\nORDER BY t.rank, 2")
            return (f"SELECT {', '.join(sel)}\nFROM {_q(t)} t" + "".join(f"\n{x}" for x in joins)
                    + (f"\nWHERE {where}" if where else "") + "\nORDER BY 1")
        st = rows.step
        near, far = ("target", "source") if st.reverse else ("source", "target")
        bases = {"row": "t.id", "row_row": "t", "other": "o.id", "other_row": "o", "link": "x", "rel": st.name}
        sel, joins = [], []
        for j, c in enumerate(columns):
            jn, val = s.column_sql(c, j, bases)
            joins += jn
            sel.append(f"{val} AS {_q(c.name)}")
        conds = []
        if cand.anchor:
            conds.append(f"t.id = '{cand.anchor}'")
        where = self.sampler.where_sql(t, cand.combo, cand.atoms)
        if where:
            conds.append(where)
        if cand.window:
            lo, hi = cand.window
            if lo:
                conds.append(f"x.valid_from >= DATE '{lo.isoformat()}'")
            if hi:
                conds.append(f"x.valid_from <= DATE '{hi.isoformat()}'")
        if cand.note:
            a, v = cand.note
            conds.append(f"{note_sql(s.world, st.name, a, table='x')} = '{v.replace(chr(39), chr(39) * 2)}'")
        if cand.tenure:  # the question's rule: only the tenures still under way on its date, or only those ended
            ended = f"(x.valid_to IS NOT NULL AND x.valid_to <= DATE '{self.sampler.as_of.isoformat()}')"
            conds.append(ended if cand.tenure == "ended" else f"NOT {ended}")
        return (f"SELECT {', '.join(sel)}\nFROM {_q('rel_' + st.name)} x\nJOIN {_q(t)} t ON t.id = x.{near}\n"
                f"JOIN {_q(st.target)} o ON o.id = x.{far}" + "".join(f"\n{x}" for x in joins)
                + ("\nWHERE " + "\n  AND ".join(conds) if conds else "") + "\nORDER BY 1, 2")

    def _ranked_inner(self, t: str, cand: Candidate) -> str:
        a = cand.rank_attr
        order = f"t0.{_q(a)} {'DESC' if cand.rank_desc else 'ASC'}"
        where = self.sampler.where_sql(t, cand.combo, cand.atoms, base="t0")
        return (f"(SELECT t0.*, rank() OVER (ORDER BY {order}) AS rank FROM {_q(t)} t0 "
                f"WHERE t0.{_q(a)} IS NOT NULL" + (f" AND {where}" if where else "") + ")")
