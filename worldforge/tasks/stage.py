"""The tasks stage: sample table tasks and multi-hop questions from a rendered world, prove
every gold value reachable in its simulated web, and write them as WideSearch task files.

Layout, inside the world folder:

    tasks/
      tasks.jsonl        one task per line: WideSearch's instance_id, query, language and
                         evaluation, plus kind, shape, split, sql (the gold query),
                         constraints, columns, difficulty, evidence, and for multi-hop
                         questions the answer and its aliases
      gold/<id>.csv      the gold table of each task
      report.json        kept and dropped counts by reason, the split plan, searches, seconds

How many tasks of each kind, shape, entity type and size: table tasks are drawn so that the
row counts follow `row_shares` (WideSearch's by default), the entity types their weights
(`type_weights`, else each type's interest: the columns it offers times log10 of its size),
and the shapes `shapes`; each draw goes to whatever is furthest below its share. Held-out
tasks (validation, test) are posed first, inside the held-out parts of the world (see
`parts.py`); training tasks then may not read any page a held-out task reads.

The folder is written to `.tasks.partial/` and renamed into place, so it is complete or
absent. `worldforge score <world>/tasks responses.jsonl` reads it as is;
`export_widesearch` writes the four-field files WideSearch's own harness reads.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from ..errors import DamagedStateError, TasksError
from ..plumbing import read_jsonl, swap_into_place
from ..records import Shape
from ..web import SearchEngine, require_rendered
from ..world import HELD_OUT, ROW_BUCKETS, Step, TasksOptions, WorldArrays, child_rng, entity_parts, hold_out, open_world
from .banks import question_bank
from .build import Builder, TableTask, column_pool
from .check import question_problems
from .multihop import HopGraph, MultiHopSampler, MultiHopTask
from .question import chain_question, table_question
from .reach import WebIndex, among, fact_hashes
from .schema import NUMBER, STRING, TaskSchema, eval_entry
from .scoring import GOLD_DIR, SUMS_FILE, TASKS_FILE, norm_column, write_sums
from .table import COMBOS, TableSampler, bucket_of, bucket_range
from .wording import Wording

TASKS_DIR = "tasks"
PARTIAL_DIR = ".tasks.partial"
REPORT_FILE = "report.json"
KINDS = ("table", "multihop")
SPLITS = ("train", "validation", "test")


@dataclass
class TasksReport:
    kept: dict[str, int] = field(default_factory=dict)
    drawn: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> reason -> count
    paraphrased: dict[str, int] = field(default_factory=dict)  # accepted / rejected
    splits: dict[str, dict] = field(default_factory=dict)  # split -> {parts, table, multihop}
    searches: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)  # seconds: setup (arrays, parts, link graph), table, multihop
    seed: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def tasks_dir(world_path: str | Path) -> Path:
    return Path(world_path) / TASKS_DIR


def _iid(world: str, kind: str, key: str) -> str:
    return f"{world}-{kind}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def gold_csv(header: list[str], rows: list[list[str]]) -> str:
    """A gold table as CSV text (header row first)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def quotas(shares: dict[str, float], n: int) -> dict[str, int]:
    """Counts per key that add up to n, by largest remainders (ties in key order)."""
    total = sum(shares.values())
    if n <= 0 or total <= 0:
        return dict.fromkeys(shares, 0)
    raw = {k: n * v / total for k, v in shares.items()}
    out = {k: int(math.floor(x)) for k, x in raw.items()}
    rest = n - sum(out.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), k))[:rest]:
        out[k] += 1
    return out


# --------------------------------------------------------------------------- records


def _evidence(web: WebIndex, evidence: list, listings: list[int], support: list[int], facts: list[str],
              beside: dict[tuple[int, int], str] | None = None) -> dict:
    """Which page(s) state each gold cell (indexes into `pages`; a list where a cell needs
    several pages, the value's page last: an article, then its profile or news item that states
    a value the article leaves out, `beside`), which pages lead to the rows, which pages a cell
    needs besides (every ranked value), and the gold facts (`page_facts` ids) the cells state:
    a page that states one of a held-out task's gold facts is one no training trajectory may open."""
    beside = beside or {}
    nodes = sorted({p for row in evidence for cell in row for p in cell} | set(listings) | set(support))
    urls = web.url(np.asarray(nodes, dtype=np.int64)).tolist() if nodes else []
    key: list = [*nodes, *sorted(set(beside.values()))]  # page nodes, then the pages beside them (by URL)
    text = urls + key[len(nodes):]
    order = sorted(range(len(key)), key=lambda i: text[i])
    pages = [text[i] for i in order]
    idx = {key[i]: j for j, i in enumerate(order)}
    cells = [[(idx[cell[0]] if len(cell) == 1 and (r, c) not in beside
               else [idx[p] for p in cell] + ([idx[beside[(r, c)]]] if (r, c) in beside else []))
              for c, cell in enumerate(row)] for r, row in enumerate(evidence)]
    return {"pages": pages, "cells": cells, "listings": [idx[p] for p in listings], "support": sorted(idx[p] for p in support),
            "facts": sorted(facts)}


def _table_record(world: str, task: TableTask, question: tuple, opt: TasksOptions, web: WebIndex, part: str | None,
                  reading: dict) -> dict:
    q, texts, values, discovery = question
    cand = task.cand
    names = [c.name for c in task.columns]
    pipeline = {}
    for c in task.columns:
        exact = c.kind == NUMBER and (c.base in ("rank", "link") or c.agg in ("count", "latest"))
        pipeline[norm_column(c.name)] = eval_entry(c.kind, opt.number_tolerance, exact=exact,
                                                   items=c.items or question_bank(opt.language)["words"]["items"],
                                                   language=opt.language)
    # Every name in `evaluation` as WideSearch's evaluator looks it up: normalised (norm_column).
    ev = {"unique_columns": [norm_column(names[i]) for i in task.keys], "required": [norm_column(n) for n in names],
          "eval_pipeline": pipeline}
    ops = [op for op, sign in (("AND", "&"), ("OR", "|"), ("NOT", "!")) if sign in cand.combo]
    hops = max([c.hops for c in task.columns] + [len(a.path) for a in cand.atoms.values()] + [0])
    iid = _iid(world, "table", task.sql)
    lettered = sorted(k for k in cand.atoms if k in "ABC")
    constraints = [{"letter": k, "text": txt, "negated": f"!{k}" in cand.combo} for k, txt in zip(lettered, texts)]
    if "S" in cand.atoms:
        constraints.append({"letter": "S", "text": texts[len(lettered)], "negated": False, "scope": True})
    if "R" in cand.atoms:  # a domain rule: the rows it names are out ("only those still alive count")
        constraints.append({"letter": "R", "text": texts[len(lettered) + ("S" in cand.atoms)], "negated": True, "rule": True})
    evidence = _evidence(web, task.evidence, task.listings, task.support, task.facts, task.beside)
    return {
        "instance_id": iid, "query": q, "language": opt.language, "evaluation": ev,
        "kind": Shape.TABLE, "shape": cand.shape, "split": cand.split, "part": part, "entity_type": cand.t,
        "columns": names, "sql": task.sql, "combo": cand.combo, "constraints": constraints,
        "constraint_values": values, "discovery_query": discovery,
        "column_roles": [_role(c, i in task.keys) for i, c in enumerate(task.columns)], "question": reading,
        "difficulty": {"rows": len(task.gold_rows), "columns": len(names), "keys": len(task.keys), "hops": hops,
                       "constraints": len(cand.atoms), "operators": ops, "container_columns": task.container,
                       "linked_attributes": sum(bool(c.path) and not c.agg and (c.attr is not None or len(c.path) > 1)
                                                for c in task.columns),
                       "min_pages": len(evidence["pages"]),
                       **({"candidates": cand.scope_count} if cand.rank_attr else {})},
        "evidence": evidence,
    }


def _role(c, key: bool) -> str:
    if key:
        return "key"
    if c.base == "rank":
        return "rank"
    if c.agg:
        return c.agg
    if c.base == "link":
        return "time" if c.attr in ("start", "end", "date") else "value"  # else the link's own attribute
    return "value" if not c.path else "linked"


def _multihop_record(world: str, task: MultiHopTask, evidence: dict, opt: TasksOptions, split: str, part: str | None,
                     reading: dict) -> dict:
    key, ans = task.columns
    # A name answer is part of the key: keys align through the world's aliases (as WideSearch's
    # LLM aligns them), so "MIT" answers "Massachusetts Institute of Technology". Numbers and
    # dates stay value cells, scored with their tolerance.
    unique = [norm_column(key), norm_column(ans)] if task.answer_kind == STRING else [norm_column(key)]
    ev = {"unique_columns": unique, "required": [norm_column(key), norm_column(ans)],
          "eval_pipeline": {norm_column(key): eval_entry(STRING, opt.number_tolerance),
                            norm_column(ans): eval_entry(task.answer_kind, opt.number_tolerance)}}
    iid = _iid(world, "multihop", task.sql)
    return {
        "instance_id": iid, "query": task.question, "language": opt.language, "evaluation": ev,
        "kind": Shape.MULTIHOP, "split": split, "part": part, "entity_type": WorldArrays.type_of(task.start),
        "answer_type": WorldArrays.type_of(task.answer_entity), "columns": task.columns, "sql": task.sql,
        "answer": task.answer, "answer_aliases": task.aliases, "answer_kind": task.answer_kind,
        "path": [{"from": h.source, "to": h.target, "kind": h.kind, "fact": h.fact} for h in task.hops],
        "constraint_values": [task.gold_rows[0][0]], "question": reading,
        "difficulty": {"rows": 1, "columns": 2, "keys": len(unique), "hops": len(task.hops), "constraints": 0,
                       "operators": [], "container_columns": 0, "min_pages": len(evidence["pages"])},
        "evidence": evidence,
    }


# --------------------------------------------------------------------------- the stage


def generate_tasks(world_path: str | Path, options: TasksOptions | None = None, *, kinds: tuple[str, ...] = KINDS,
                   n_table: int | None = None, n_multihop: int | None = None, seed: int | None = None,
                   force: bool = False, model: str | None = None, llm=None,
                   on_progress: Callable[[str, int, int], None] | None = None) -> TasksReport:
    """Generate, check and write a world's tasks (see the module docstring for the layout)."""
    t0 = time.perf_counter()
    world_path = Path(world_path)
    web = require_rendered(world_path)
    info = open_world(world_path)
    opt = options or info.world.spec.stages.tasks
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise TasksError(f"unknown task kind {bad[0]!r}; choose from {', '.join(KINDS)}")
    out = tasks_dir(world_path)
    if (out / REPORT_FILE).is_file() and not force:
        raise TasksError(f"{out} already holds tasks; pass --force to replace them")
    types = info.world.types
    unknown = sorted(set(opt.type_weights) - set(types))
    if unknown:
        raise TasksError(f"stages.tasks.type_weights names unknown type {unknown[0]!r}; known: {', '.join(types)}")
    if opt.part_type is not None and opt.part_type not in types:
        raise TasksError(f"stages.tasks.part_type: unknown type {opt.part_type!r}; known: {', '.join(types)}")
    if (opt.paraphrase or model) and llm is None:
        if not (model or info.world.spec.stages.render.model):
            raise TasksError("--paraphrase needs a model: pass --model PATH_OR_HUB_ID or set stages.render.model")
        from ..web import check_model

        check_model(info.world.spec.stages.render, model)  # a bad path fails now, not after generation
    seed = opt.seed if seed is None else seed
    seed = info.world.spec.seed if seed is None else seed
    want = {"table": opt.table if n_table is None else n_table, "multihop": opt.multihop if n_multihop is None else n_multihop}
    want = {k: (want[k] if k in kinds else 0) for k in KINDS}
    report = TasksReport(seed=seed)
    records: list[dict] = []
    golds: dict[str, tuple[list[str], list[list[str]]]] = {}
    con = info.connect()
    engine = SearchEngine(web)
    try:
        t1 = time.perf_counter()
        gen = _Generator(info, con, engine, opt, seed, report, on_progress)
        report.timings["setup"] = round(time.perf_counter() - t1, 3)
        gen.run(want, records, golds)
        report.searches = gen.web.searches
        gen.check_split_sizes()
    finally:
        engine.close()
        con.close()
    if opt.paraphrase or model or llm is not None:
        from .paraphrase import paraphrase_records

        acc, rej = paraphrase_records(records, info.world.spec.stages.render, model=model, llm=llm, seed=seed,
                                      on_progress=on_progress)
        report.paraphrased = {"accepted": acc, "rejected": rej}
    report.seconds = round(time.perf_counter() - t0, 3)
    _write(world_path, records, golds, report)
    return report


def interest(schema: TaskSchema, t: str) -> float:
    """How much a type offers to ask about: the columns of its pool, times log10 of its size
    (so a type of 1,500 people weighs more than one of 49 regions, not 30 times more)."""
    return len(column_pool(schema, t, "row")) * math.log10(1 + schema.a.n(t))


class _Generator:
    def __init__(self, info, con, engine: SearchEngine, opt: TasksOptions, seed: int, report: TasksReport, on_progress):
        self.opt = opt
        self.seed = seed
        self.report = report
        self.on_progress = on_progress
        self.world = info.world.spec.name
        self.as_of = info.world.spec.as_of
        self.arrays = WorldArrays(con, info.world)
        self.schema = TaskSchema(self.arrays)
        self.schema.language = opt.language
        self.parts = entity_parts(self.arrays, opt.part_type)
        self.plan = hold_out(self.parts, self.arrays, opt.holdout, seed)
        self.web = WebIndex(engine, self.arrays, self.parts, info.world.spec.stages.render.max_list_items)
        a, p = self.arrays, self.parts
        self.allowed: dict[str, dict[str, np.ndarray]] = {}
        held = {t: np.zeros(a.n(t), dtype=bool) for t in a.types}
        for s in HELD_OUT:
            self.allowed[s] = {t: p.split_mask(t, s, a.n(t)) for t in a.types}
            for t in a.types:
                held[t] |= self.allowed[s][t]
        # training rows stay out of held-out parts where a question can say so ("in Braeria");
        # for types without a part of their own (publications) only the pages are checked
        self.allowed["train"] = {t: ~held[t] if p.home.get(t) is not None else np.ones(a.n(t), dtype=bool) for t in a.types}
        root_ids = a.ids[p.root] if p.root else None
        self.sampler = TableSampler(self.schema, opt, child_rng(seed, "tasks", "table"), self.allowed, p.home, p.of, root_ids)
        self.sampler.as_of_year = self.as_of.year
        self.sampler.as_of = self.as_of
        self.builder = Builder(self.schema, self.web, self.sampler, opt)
        self.wording = Wording(self.schema, child_rng(seed, "tasks", "wording"), self.as_of, opt.language)
        self.blocked: np.ndarray | None = None
        self.held_nodes: list[np.ndarray] = []
        # held-out parts, and the facts their tasks' cells may state: those no page outside them states
        self.held_parts = np.asarray([i for s_ in HELD_OUT for i in self.plan.get(s_, [])], dtype=np.int64)
        self.confined = self.web.confined_facts(self.held_parts) if len(self.held_parts) else None
        self.seen: set = set()
        self.dropped = {k: Counter() for k in KINDS}
        self.kept_b: Counter = Counter()  # table tasks kept per row bucket, over every split
        self.drawn = dict.fromkeys(KINDS, 0)
        self.kept = dict.fromkeys(KINDS, 0)
        # Names two entities of one type share (declared namesakes): a question naming one is
        # ambiguous, and a gold table keyed by it could not be scored.
        self.ambiguous: set[str] = set()
        for t in a.types:
            names = pl.Series(a.names(t), dtype=pl.String).drop_nulls()
            self.ambiguous.update(names.filter(names.is_duplicated()).unique().to_list())

    def part_name(self, part: int) -> str | None:
        if self.parts.root is None or part < 0:
            return None
        return str(self.arrays.names(self.parts.root)[part])

    def run(self, want: dict[str, int], records: list[dict], golds: dict) -> None:
        shares = {s: self.opt.holdout.get(s, 0.0) if self.plan.get(s) else 0.0 for s in HELD_OUT}
        shares["train"] = max(0.0, 1.0 - sum(shares.values()))
        per = {k: quotas(shares, want[k]) for k in KINDS}
        self.quota = {s: sum(per[k].get(s, 0) for k in KINDS) for s in HELD_OUT}  # held-out tasks asked for
        self.report.splits = {s: {"parts": [self.part_name(i) for i in self.plan.get(s, [])], "table": 0, "multihop": 0}
                              for s in SPLITS if self.plan.get(s) or s == "train"}
        for split in (*HELD_OUT, "train"):
            if split == "train":
                self._block(records)
            part_ok = None
            if split != "train":
                if not self.plan.get(split):
                    continue
                part_ok = np.isin(self.web.part, np.asarray(self.plan[split], dtype=np.int64))
            t0 = time.perf_counter()
            if per["table"].get(split):
                self._tables(split, per["table"][split], part_ok, records, golds, want["table"])
            t1 = time.perf_counter()
            n_hop = per["multihop"].get(split, 0)
            if split != "train":  # tables a held-out part could not pose: questions in their place (a narrow domain)
                n_hop += max(0, per["table"].get(split, 0) - self.report.splits[split]["table"])
            if n_hop:
                self._multihops(split, n_hop, part_ok, records, golds, want["multihop"])
            t2 = time.perf_counter()
            tm = self.report.timings
            tm["table"] = round(tm.get("table", 0.0) + t1 - t0, 3)
            tm["multihop"] = round(tm.get("multihop", 0.0) + t2 - t1, 3)
        for k in KINDS:
            if want[k]:
                self.report.kept[k] = self.kept[k]
                self.report.drawn[k] = self.drawn[k]
                self.report.dropped[k] = dict(sorted(self.dropped[k].items()))

    def check_split_sizes(self) -> None:
        """Each held-out split holds its share of the tasks asked for (`stages.tasks.holdout`: 10 %
        each by default) on a world of 3 parts or more; else the stage fails, saying why."""
        total = sum(self.kept.values())
        n_parts = self.arrays.n(self.parts.root) if self.parts.root else 0
        if n_parts < 3 or not total:
            return
        for split in HELD_OUT:
            share = self.opt.holdout.get(split, 0.0)
            got = self.report.splits.get(split, {})
            n = got.get("table", 0) + got.get("multihop", 0)
            need = getattr(self, "quota", {}).get(split, 0)
            if share > 0 and n < need:
                parts = ", ".join(x for x in got.get("parts", []) if x) or "none"
                why = {k: v for kind in KINDS for k, v in self.dropped[kind].items()
                       if k in ("stated-outside-held-out", "leaves-part", "empty-part", "rows-outside-window")}
                raise TasksError(
                    f"the {split} split holds {n} of {total} tasks, fewer than the {need} of its {share:.0%} "
                    f"(stages.tasks.holdout.{split}): "
                    f"its held-out part(s) ({parts}) could not pose enough tasks whose gold facts are stated only on their "
                    f"own pages (drops: {', '.join(f'{k} {v}' for k, v in sorted(why.items())) or 'none'}); raise "
                    f"stages.tasks.holdout.{split} so more of the world is held out, plan more entities per "
                    f"{self.parts.root}, or pose fewer tasks")

    def _block(self, records: list[dict]) -> None:
        """Pages training tasks may not read: every page that states a gold fact of a held-out
        task (per the render's provenance; they are all pages of held-out parts, `confined`),
        and every page of a directory a held-out task reads (an agent may page through it)."""
        w = self.web
        blocked = np.zeros(w.n_nodes, dtype=bool)
        facts = sorted({f for r in records if r["split"] != "train" for f in r["evidence"]["facts"] if not f.endswith("/name")})
        if facts:
            blocked[w.nodes_stating(facts)] = True
        if self.held_nodes:
            nodes = np.unique(np.concatenate(self.held_nodes))
            blocked[nodes] = True
            dirs = nodes[nodes >= w.n_entities] - w.n_entities
            if len(dirs):
                blocked[w.n_entities:] |= np.isin(w.dir_base_id, np.unique(w.dir_base_id[dirs]))
        self.blocked = blocked if blocked.any() else None

    def _reads_held_out(self, cand) -> bool:
        """Whether a training task's research would open a held-out part's page: a candidate of
        a list the question points to, or a page its conditions lead to from one (a candidate's
        club, that club's league). Its rows, cells and lists are checked by the builder."""
        if self.blocked is None:
            return False
        s, a, w = self.sampler, self.arrays, self.web
        t = cand.rows.t
        # every list the question points to (an agent may start from any of them), or every entity
        # of the type; for link rows also the anchors (each one's page lists its links)
        lists = s.candidate_lists(t, cand.combo, cand.atoms)
        if cand.anchor is not None:  # one named entity's history: its page
            pool = np.unique(cand.rows.codes)
        elif lists:
            pool = np.flatnonzero(np.logical_or.reduce(lists))
        else:  # no list to start from: an agent reads every part's list of the type
            pool = np.arange(a.n(t))
        if cand.scope_codes is not None:
            pool = np.union1d(pool, np.asarray(cand.scope_codes, dtype=np.int64))
        if cand.rows.step is not None:
            pool = np.union1d(pool, cand.rows.codes)
        if self.blocked[w.entity_nodes(t, pool)].any():
            return True
        for x in cand.atoms.values():  # a named entity's page: where a walk back to the candidates starts
            c = a.code(x.value) if x.test == "entity" and x.value else -1
            if c >= 0 and self.blocked[w.offset[WorldArrays.type_of(x.value)] + c]:
                return True
        for atom in cand.atoms.values():
            if atom.scope or not atom.path:
                continue
            levels = atom.path[:-1] if atom.test == "entity" else atom.path  # an entity test reads names off the last page
            cur_t, cur = t, pool
            for st in levels:
                lk = a.links(st)
                starts, ends = lk.starts[cur], lk.starts[cur + 1]
                lens = ends - starts
                idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(int(lens.sum()))
                cur_t, cur = st.target, np.unique(lk.dst[idx])
                if len(cur) and self.blocked[w.entity_nodes(cur_t, cur)].any():
                    return True
        return False

    def _progress(self, kind: str, total: int) -> None:
        if self.on_progress:
            self.on_progress(kind, self.kept[kind], total)

    # ------------------------------------------------------------------ table tasks

    def _tables(self, split: str, n: int, part_ok, records: list[dict], golds: dict, total: int) -> None:
        opt, s, sampler, rng = self.opt, self.schema, self.sampler, self.sampler.rng
        feasible = {
            "filter": [t for t in s.types if s.a.n(t) >= 2 and (s.constrainable(t) or s.steps[t])],
            "ranked": [t for t in s.types if s.rankable(t) and s.a.n(t) >= 5],
            "timeline": sorted({getattr(rs, side) for _, rs in sampler.history for side in ("source", "target")}),
            "events": sorted({rs.source for _, rs in sampler.dated}),
        }
        # canonical orders (options read back from world.json have their keys sorted): the
        # random tie-breaks below must not depend on how a spec listed them
        shapes = {k: opt.shapes[k] for k in sorted(opt.shapes) if opt.shapes[k] > 0 and feasible.get(k)}
        if not shapes:
            raise TasksError("no table shape is possible in this world; check stages.tasks.shapes")
        room = max(2, opt.rows.min)
        scoped = {t for t in s.types if split == "train" or self.parts.home.get(t) is not None}  # held out: a type a question can scope
        feasible = {k: [t for t in v if t in scoped and (int(self.allowed[split][t].sum()) >= room
                        or (k in ("timeline", "events") and self.allowed[split][t].any()))] for k, v in feasible.items()}
        shapes = {k: v for k, v in shapes.items() if feasible[k]}
        types = sorted({t for k in shapes for t in feasible[k]})
        if not types:
            if split != "train":
                return  # a held-out part too small for any table: the shortfall shows in the report
            raise TasksError("no entity type can pose a table task; plan a larger world")
        weights = {t: opt.type_weights.get(t, interest(s, t)) for t in types}
        cap = self._capacity(split, feasible)
        types = [t for t in types if weights[t] > 0]
        lo, hi = opt.rows.min, opt.rows.max
        target = self._row_targets(split, n, total, cap, lo, hi)
        kept_b, kept_t, kept_s = Counter(), Counter(), Counter()
        fails: Counter = Counter()
        dead: set = set()
        kept = drawn = 0
        # held-out tables are harder to pose (their facts must stay on their parts' pages): more draws
        limit = n * opt.max_attempts * (1 if split == "train" else 3)
        wsum = sum(weights.values())
        ssum = sum(shapes.values())
        while kept < n and drawn < limit:
            relaxed = drawn > limit * (0.95 if split == "train" else 0.3)  # training tasks make up for held-out sizes
            alive = [t for t in types if t not in dead]
            if not alive:
                break  # every type is spent: the shortfall shows in the report
            bucket = None
            if target:
                open_b = [b for b in target if kept_b[b] < target[b]] or list(target)
                bucket = max(open_b, key=lambda b: (target[b] - kept_b[b] + rng.random() * 0.5, b))
            need = bucket_range(bucket, lo, hi)[0] if bucket else lo
            # the type furthest below its share among those big enough for the size wanted
            able = [x for x in alive if any(cap.get((x, k), 0) >= need for k in shapes if x in feasible[k])] or alive
            t = max(able, key=lambda x: (weights[x] / wsum * (kept + 1) - kept_t[x] + rng.random() * 0.5, x))
            cand_shapes = [k for k in shapes if t in feasible[k] and (t, k) not in dead and cap.get((t, k), 0) >= need] \
                or [k for k in shapes if t in feasible[k] and (t, k) not in dead]
            if not cand_shapes:
                dead.add(t)  # not a draw: nothing was drawn
                continue
            shape = max(cand_shapes, key=lambda k: (shapes[k] / ssum * (kept + 1) - kept_s[k] + rng.random() * 0.5, k))
            cand = self._draw(shape, t, split, bucket)
            drawn += 1
            self.drawn["table"] += 1
            reason, task, question, key = self._judge_table(cand, split, part_ok, target, relaxed, kept_b)
            if reason is not None:
                self.dropped["table"][reason] += 1
                fails[(t, shape)] += 1
                fails[t] += 1
                if fails[(t, shape)] >= max(20, limit // 40):
                    dead.add((t, shape))
                if fails[t] >= max(60, limit // 10):
                    dead.add(t)
                continue
            fails[(t, shape)] = fails[t] = 0
            self.seen.add(key)
            rows_parts = np.unique(self.parts.of[cand.t][cand.rows.codes]) if self.parts.root else np.array([-1])
            part = self.part_name(int(rows_parts[0])) if len(rows_parts) == 1 else None
            rec = _table_record(self.world, task, question, opt, self.web, part,
                                table_question(self.schema, task, question[1], self.as_of, self.parts.home.get(cand.t)))
            records.append(rec)
            golds[rec["instance_id"]] = ([c.name for c in task.columns], task.gold_rows)
            if split != "train":
                self.held_nodes.append(np.asarray([p for row in task.evidence for cell in row for p in cell]
                                                  + task.listings + task.support, dtype=np.int64))
            kept += 1
            kept_b[bucket_of(len(task.gold_rows))] += 1
            self.kept_b[bucket_of(len(task.gold_rows))] += 1
            kept_t[t] += 1
            kept_s[cand.shape] += 1
            self.kept["table"] += 1
            self.report.splits[split]["table"] += 1
            self._progress("table", total)

    def _row_targets(self, split: str, n: int, total: int, cap: dict, lo: int, hi: int) -> dict[str, int] | None:
        """How many of a split's `n` tables each row-size bucket gets (`stages.tasks.row_shares`),
        among the buckets inside the row window some type is big enough for; None without shares."""
        target = None
        opt = self.opt
        if opt.row_shares:
            # buckets inside the row window that some type is big enough for (a small world has no 100-row tables)
            biggest = max(cap.values(), default=0)
            shares = {b: opt.row_shares[b] for b in ROW_BUCKETS
                      if b in opt.row_shares and bucket_range(b, lo, hi)[0] <= min(bucket_range(b, lo, hi)[1], biggest)}
            if split != "train":
                target = quotas(shares, n)
            else:  # training tasks make up for what the held-out ones could not reach
                overall = quotas(shares, total)
                target = {b: max(0, overall[b] - self.kept_b[b]) for b in overall}
                extra = n - sum(target.values())
                if extra > 0:
                    for b, k in quotas(shares, extra).items():
                        target[b] += k
        return target

    def _judge_table(self, cand, split: str, part_ok, target: dict | None, relaxed: bool,
                     kept_b: Counter) -> tuple[str | None, object, tuple | None, object]:
        """A drawn table candidate (or the reason it could not be drawn) judged: (why it is
        dropped or None, the task built, its question, its gold set's key)."""
        opt, sampler = self.opt, self.sampler
        lo, hi = opt.rows.min, opt.rows.max
        task = question = key = None
        reason = cand if isinstance(cand, str) else None
        if reason is None:
            rows = cand.rows.n
            b = bucket_of(rows) if rows >= 1 else None
            if not lo <= rows <= hi:
                reason = "rows-outside-window"
            elif sampler.candidate_count(cand) > opt.max_candidates:
                reason = "too-many-candidates"
            elif target and not relaxed and kept_b[b] >= target.get(b, 0):
                reason = "size-quota-full"
            else:
                key = self.builder.row_key(cand)
                if key in self.seen:
                    reason = "duplicate-gold-set"
        if reason is None:
            if split == "train" and self._reads_held_out(cand):
                task = "reads-held-out"
            else:
                task = self.builder.build(cand, self.blocked if split == "train" else None, part_ok,
                                          self.confined if split != "train" else None)
            if isinstance(task, str):
                reason = task
            elif self.ambiguous:
                question = self.wording.describe(task)
                keys = [tuple(row[i] for i in task.keys) for row in task.gold_rows]
                lists = [j for j, c in enumerate(task.columns) if c.agg == "list"]
                named = {x for row in task.gold_rows for j in lists for x in str(row[j]).split("; ")}
                if len(set(keys)) < len(keys) or named & self.ambiguous:
                    reason = "namesake-rows"  # two rows alike, or a list naming one of two namesakes
                elif any(isinstance(v, str) and v in self.ambiguous for v in question[2]):
                    reason = "ambiguous-name"
            if reason is None:
                question = question if self.ambiguous else self.wording.describe(task)
                if question_problems(question[0], [c.name for c in task.columns], opt.language):
                    reason = "garbled-question"  # a pack phrase the wording cannot say right
        return reason, task, question, key

    def _capacity(self, split: str, feasible: dict[str, list[str]]) -> dict[tuple[str, str], int]:
        """The most rows a task of each (type, shape) could have in a split."""
        a, sampler = self.arrays, self.sampler
        cap = {}
        for k, types in feasible.items():
            for t in types:
                n = int(self.allowed[split][t].sum())
                if k == "timeline":
                    n = max((len(a.links(Step("rel", r, t, rs.target if rs.source == t else rs.source, to_one=False,
                                                reverse=rs.source != t)).src) for r, rs in sampler.history if t in (rs.source, rs.target)),
                            default=0)
                elif k == "events":
                    n = max((len(a.links(Step("rel", r, rs.source, rs.target, to_one=False)).src) for r, rs in sampler.dated
                             if rs.source == t), default=0)
                cap[(t, k)] = n
        return cap

    def _draw(self, shape: str, t: str, split: str, bucket: str | None):
        opt, sampler, rng = self.opt, self.sampler, self.sampler.rng
        if shape == "filter":
            k = int(rng.integers(opt.constraints.min, opt.constraints.max + 1))
            want = None
            if bucket:
                lo, hi = bucket_range(bucket, opt.rows.min, opt.rows.max)
                want = int(rng.integers(lo, max(lo, min(hi, 4 * lo if lo >= 100 else hi)) + 1))
            return sampler.filter(t, split, min(k, max(COMBOS)), want)
        if shape == "ranked":
            lo, hi = bucket_range(bucket, opt.rows.min, opt.rows.max) if bucket else (opt.rows.min, min(opt.rows.max, 60))
            want = int(rng.integers(max(lo, 4), max(lo, 4, hi) + 1)) if hi >= lo else opt.rows.min
            return sampler.ranked(t, split, want, opt.rows.min, lo)
        want = None
        if bucket:
            lo, hi = bucket_range(bucket, opt.rows.min, opt.rows.max)
            want = int(rng.integers(lo, max(lo, min(hi, 3 * lo if lo >= 100 else hi)) + 1))
        if shape == "timeline":
            return sampler.timeline(split, t, want)
        return sampler.events(split, t, want)

    # ------------------------------------------------------------------ multi-hop questions

    def _multihops(self, split: str, n: int, part_ok, records: list[dict], golds: dict, total: int) -> None:
        opt, w = self.opt, self.web
        rng = child_rng(self.seed, "tasks", "multihop", split)
        if not hasattr(self, "_hop_graph"):
            self._hop_graph = HopGraph(self.schema, w.offset, w.n_entities)
            self._names = Counter(n for t in self.arrays.types for n in self.arrays.names(t).tolist())
        allowed = np.zeros(w.n_entities, dtype=bool)
        for t, off in w.offset.items():
            allowed[off:off + self.arrays.n(t)] = self.allowed[split][t]
        sampler = MultiHopSampler(self.schema, self._hop_graph, rng, self._names, self.as_of, self._aliases, allowed,
                                  self.wording.openings)
        if not sampler.types:
            return
        kept_t: Counter = Counter()
        fails: Counter = Counter()
        dead: set = set()
        kept = drawn = 0
        limit = n * opt.max_attempts * (1 if split == "train" else 3)
        while kept < n and drawn < limit:
            alive = [t for t in sampler.types if t not in dead]
            if not alive:
                break
            t = min(alive, key=lambda x: (kept_t[x] + rng.random() * 0.5, x))
            top = min(opt.hops.max, sampler.reach[t])
            if top < opt.hops.min:
                dead.add(t)
                drawn += 1
                self.drawn["multihop"] += 1
                self.dropped["multihop"]["no-path"] += 1
                continue
            hops = int(rng.integers(opt.hops.min, top + 1))
            task = sampler.sample(hops, t)
            drawn += 1
            self.drawn["multihop"] += 1
            reason = task if isinstance(task, str) else None
            if reason is None and str(task.gold_rows[0][0]) in self.ambiguous:
                reason = "ambiguous-name"
            if reason is None and question_problems(task.question, list(task.columns), opt.language):
                reason = "garbled-question"
            if reason is None:
                key = (task.start, task.answer_entity, task.answer_attr)
                if key in self.seen:
                    reason = "duplicate-gold-set"
                else:
                    proved = self._prove_chain(task)
                    if isinstance(proved, str):
                        reason = proved
                    else:
                        proof, listings = proved
                        flat = np.asarray(sorted({p for cell in proof for p in cell} | set(listings)), dtype=np.int64)
                        if split == "train" and self.blocked is not None and self.blocked[flat].any():
                            reason = "reads-held-out"
                        elif part_ok is not None and not part_ok[flat].all():
                            reason = "leaves-part"
                        elif split != "train" and not self._confined_chain(task):
                            reason = "stated-outside-held-out"
            if reason is not None:
                self.dropped["multihop"][reason] += 1
                fails[t] += 1
                if fails[t] >= 60:
                    dead.add(t)
                continue
            fails[t] = 0
            self.seen.add(key)
            beside = {}
            if task.answer_attr is not None:  # an answer the last article leaves to a page it links
                got = w.via([w.url(np.asarray(task.nodes[-1:], dtype=np.int64))[0]], [task.facts[-1]])[0]
                beside = {(0, 1): got} if got else {}
            ev = _evidence(w, [proof], listings, [], self._chain_facts(task), beside)
            part = self.part_name(int(self.parts.of[WorldArrays.type_of(task.start)][self.arrays.code(task.start)])) \
                if self.parts.root else None
            rec = _multihop_record(self.world, task, ev, opt, split, part, chain_question(self.schema, task, self.as_of))
            records.append(rec)
            golds[rec["instance_id"]] = (task.columns, task.gold_rows)
            if split != "train":
                self.held_nodes.append(flat)
            kept += 1
            kept_t[t] += 1
            sampler.starts[WorldArrays.type_of(task.start)] += 1
            self.kept["multihop"] += 1
            self.report.splits[split]["multihop"] += 1
            self._progress("multihop", total)

    def _aliases(self, eid: str) -> list[str]:
        rows = self.arrays.con.execute("SELECT alias FROM aliases WHERE entity_id = ? ORDER BY alias", [eid]).fetchall()
        return [r[0] for r in rows]

    def _confined_chain(self, task: MultiHopTask) -> bool:
        facts = [f for f in self._chain_facts(task) if not f.endswith("/name")]
        return self.confined is not None and bool(among(fact_hashes(facts), self.confined).all())

    def _chain_facts(self, task: MultiHopTask) -> list[str]:
        """The facts a chain's answer rests on: the start's name, each hop, the answer's attribute."""
        return sorted({f"{task.start}/name", *(h.fact for h in task.hops), *task.facts})

    def _prove_chain(self, task: MultiHopTask) -> tuple[list[list[int]], list[int]] | str:
        """The start's article is reachable (the question names it; its listings lead to it
        from a searched entry point); each hop's fact is stated on the article of the entity it
        leaves (which links to the next); the answer's attribute on the last article. Returns
        the pages of the two cells (start; the chain, answer last) and the listings."""
        w = self.web
        nodes = np.asarray(task.nodes, dtype=np.int64)
        urls = w.url(nodes)
        if not urls[0] or not w.reachable(nodes[:1])[0]:
            return "unreachable-start"
        src_urls = [urls[i] for i in range(len(task.hops))]
        facts = [h.fact for h in task.hops]
        if task.answer_attr is not None:
            src_urls.append(urls[-1])
            facts.append(task.facts[-1])
        if not w.stated(src_urls, facts).all():
            return "unreachable-fact"
        return [[int(nodes[0])], [int(x) for x in nodes]], [int(x) for x in w.chain(nodes[:1])]


def _write(world_path: Path, records: list[dict], golds: dict, report: TasksReport) -> None:
    out = tasks_dir(world_path)
    partial = world_path / PARTIAL_DIR
    if partial.exists():
        shutil.rmtree(partial)
    (partial / GOLD_DIR).mkdir(parents=True)
    (partial / TASKS_FILE).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    for iid, (header, rows) in golds.items():
        (partial / GOLD_DIR / f"{iid}.csv").write_text(gold_csv(header, rows))
    (partial / REPORT_FILE).write_text(json.dumps(report.as_dict(), indent=2) + "\n")
    write_sums(partial)
    swap_into_place(partial, out)


def read_tasks(world_or_tasks: str | Path) -> list[dict]:
    """The task records of a world folder or a tasks folder."""
    p = Path(world_or_tasks)
    d = p if (p / TASKS_FILE).is_file() else tasks_dir(p)
    if not (d / TASKS_FILE).is_file():
        raise TasksError(f"no tasks at {p}; run `worldforge tasks WORLD_DIR` first")
    recs = read_jsonl(d / TASKS_FILE, REPOSE)
    if any(not isinstance(r, dict) or "instance_id" not in r for r in recs):
        raise DamagedStateError(f"{d / TASKS_FILE} is damaged (a line is not a task record); {REPOSE}")
    return recs


WIDESEARCH_FIELDS = ("instance_id", "query", "language", "evaluation")
HUB_FILE, HUB_GOLD_DIR = "widesearch.jsonl", "widesearch_gold"  # WideSearch's published dataset: its HF loader's layout


def write_widesearch(folder: Path, records: list[dict], gold: Callable[[str], str], title: str) -> None:
    """A WideSearch task folder in both of WideSearch's layouts, so its own entry script reads
    it with a path change only:

    - the local loader's (`WideSearchDataLoader(f"{folder}/tasks.jsonl", f"{folder}/gold")`):
      `tasks.jsonl` with `evaluation` as an object, `gold/<instance_id>.csv`;
    - the published dataset's (`WideSearchDataLoaderHF(repo_id=...)` once the folder is pushed
      to the Hub as a dataset repo, or `datasets.load_dataset(folder)["full"]`): `README.md`
      declaring the split `full`, `widesearch.jsonl` with `evaluation` as a JSON string,
      `widesearch_gold/<instance_id>.csv`.

    `gold(instance_id)` is the task's gold CSV text."""
    (folder / GOLD_DIR).mkdir(parents=True)
    (folder / HUB_GOLD_DIR).mkdir()
    (folder / TASKS_FILE).write_text("".join(json.dumps({k: r[k] for k in WIDESEARCH_FIELDS}, ensure_ascii=False) + "\n"
                                             for r in records))
    hub = "".join(json.dumps({k: (json.dumps(r[k], ensure_ascii=False) if k == "evaluation" else r[k])
                              for k in WIDESEARCH_FIELDS}, ensure_ascii=False) + "\n" for r in records)
    (folder / HUB_FILE).write_text(hub)
    # `datasets` caches a local folder's dataset under a hash of its card's config, not of its files: two
    # folders with the same card (every split folder named `test`, say) would read as one. The digest of
    # the data in the config's description keeps each folder's cache its own.
    digest = hashlib.sha256(hub.encode()).hexdigest()[:16]
    for r in records:
        text = gold(r["instance_id"])
        (folder / GOLD_DIR / f"{r['instance_id']}.csv").write_text(text)
        (folder / HUB_GOLD_DIR / f"{r['instance_id']}.csv").write_text(text)
    lists = sum(any("llm_judge" in (c.get("metric") or []) for c in r["evaluation"].get("eval_pipeline", {}).values())
                for r in records)
    (folder / "README.md").write_text(f"""---
configs:
- config_name: default
  data_files:
  - split: full
    path: {HUB_FILE}
  description: {json.dumps(f"{title} (sha256 {digest})", ensure_ascii=False)}
---
# {title}

{len(records)} tasks in the layout of WideSearch (ByteDance-Seed/WideSearch), in both of its loaders' forms:

- `{HUB_FILE}` + `{HUB_GOLD_DIR}/`: its published dataset (`evaluation` as a JSON string, split `full`). Push this
  folder to the Hugging Face Hub as a dataset repo and point WideSearch's entry script at it:
  `WideSearchDataLoaderHF(repo_id="you/this-dataset")`.
- `{TASKS_FILE}` + `{GOLD_DIR}/`: its local loader, no Hub needed:
  `WideSearchDataLoader("<this folder>/{TASKS_FILE}", "<this folder>/{GOLD_DIR}")`.

{lists} of the tasks have list columns (`metric: ["llm_judge"]`): WideSearch's evaluator grades those cells with its
LLM judge and the column's `criterion`. Without a judge model every such cell scores 0 there. `worldforge score`
grades them with the column's `llm_free` metric, `set_match`: the same set of items in any order, separators
(`;` `,` `、` line breaks) aside, each item compared after `norm_str`.

`{SUMS_FILE}` holds every file's sha256 (`sha256sum -c {SUMS_FILE}`); `worldforge score` checks each gold table
against it, so a table cut short is an error, not a smaller gold table.
""")
    write_sums(folder)
REPOSE = "pose the tasks again with `worldforge tasks WORLD_DIR --force` (or `worldforge run SPEC`)"


def check_export_dest(dest: str | Path, force: bool) -> None:
    """An export goes to a new or empty folder, or replaces an earlier export with --force;
    a folder holding anything else is never replaced."""
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise TasksError(f"{dest} is a file; give a folder for the WideSearch export")
    if dest.is_dir() and any(dest.iterdir()):
        if not (dest / TASKS_FILE).is_file():
            raise TasksError(f"{dest} is not empty and holds no earlier export ({TASKS_FILE}); "
                             "choose a new or empty folder")
        if not force:
            raise TasksError(f"{dest} already holds an export; pass --force to replace it, or choose another folder")


def export_widesearch(world_or_tasks: str | Path, dest: str | Path, force: bool = False) -> int:
    """Write WideSearch's own files: `tasks.jsonl` with instance_id, query, language and
    evaluation, and `gold/<instance_id>.csv`, and the published-dataset layout beside them
    (`write_widesearch`). Returns the task count."""
    p = Path(world_or_tasks)
    src = p if (p / TASKS_FILE).is_file() else tasks_dir(p)
    records = read_tasks(src)
    if Path(dest).resolve() == src.resolve():
        raise TasksError("the export folder must differ from the tasks folder")
    dest = Path(dest)
    check_export_dest(dest, force)
    partial = dest.with_name(f".{dest.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    write_widesearch(partial, records, lambda iid: (src / GOLD_DIR / f"{iid}.csv").read_text(),
                     f"WideSearch tasks of {src.resolve().parent.name}")
    swap_into_place(partial, dest)
    return len(records)
