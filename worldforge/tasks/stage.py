"""The tasks stage: sample table tasks and multi-hop questions from a rendered world, prove
every gold value reachable in its simulated web, and write them as WideSearch task files.

Layout, inside the world folder:

    tasks/
      tasks.jsonl        one task per line: WideSearch's instance_id, query, language and
                         evaluation, plus kind, sql (the gold query), constraints, columns,
                         difficulty, and for multi-hop questions the answer and its aliases
      gold/<id>.csv      the gold table of each task
      report.json        kept and dropped counts by reason, searches, seconds

The folder is written to `.tasks.partial/` and renamed into place, so it is complete or
absent. `worldforge score <world>/tasks responses.jsonl` reads it as is;
`export_widesearch` writes the four-field files WideSearch's own harness reads.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DamagedStateError, TasksError
from ..plumbing import quote_ident as _q
from ..plumbing import read_jsonl, swap_into_place
from ..web.pages import WorldView
from ..web.search import SearchEngine
from ..web.store import require_rendered
from ..world.options import TasksOptions
from ..world.sampling import child_rng
from ..world.store import open_world
from .multihop import HopGraph, MultiHopSampler, MultiHopTask
from .reach import Reachability, Verdict
from .schema import STRING, Column, TaskSchema, eval_entry
from .scoring import GOLD_DIR, TASKS_FILE, norm_column
from .table import SHAPES, TableSampler, TableTask, cell_text

TASKS_DIR = "tasks"
PARTIAL_DIR = ".tasks.partial"
REPORT_FILE = "report.json"
KINDS = ("table", "multihop")


@dataclass
class TasksReport:
    kept: dict[str, int] = field(default_factory=dict)
    drawn: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> reason -> count
    paraphrased: dict[str, int] = field(default_factory=dict)  # accepted / rejected
    searches: int = 0
    seconds: float = 0.0
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


# --------------------------------------------------------------------------- table tasks


def _draw_table(sampler: TableSampler, schema: TaskSchema, opt: TasksOptions) -> TableTask | str:
    rng = sampler.rng
    t = sampler.types[rng.integers(len(sampler.types))]
    n = int(rng.integers(opt.constraints.min, opt.constraints.max + 1))
    shape = SHAPES[n][rng.integers(len(SHAPES[n]))]
    ids = schema.view.ids[t]
    anchor = ids[rng.integers(len(ids))]
    atoms = {}
    for letter in (x for x in "ABC" if x in shape):
        other = f"!{letter}" in shape or (letter == "B" and "|" in shape)
        e = ids[rng.integers(len(ids))] if other else anchor
        atom = sampler.atom_for(t, e)
        if atom is None:
            return "no-constraint"
        atoms[letter] = atom
    tested = [(a.path, a.attr) for a in atoms.values() if a.test != "entity"]
    if len(set(tested)) != len(tested):
        return "redundant-constraint"  # two tests of one attribute read as a contradiction or a repeat
    mask = sampler.evaluate(shape, {k: sampler.atom_mask(t, a) for k, a in atoms.items()})
    if mask is None:
        return "redundant-constraint"
    if not opt.rows.min <= int(mask.sum()) <= opt.rows.max:
        return "rows-outside-window"
    rows = {ids[i] for i in np.flatnonzero(mask)}
    where = sampler.where_sql(t, shape, atoms)

    # columns: the key, then a shuffled pool with a multi-hop column first; drop any with empty cells
    eq_attrs = {a.attr for a in atoms.values() if not a.path and a.test == "eq"}
    pool = [c for c in sampler.columns_for(t) if not (not c.path and c.attr in eq_attrs)]
    order = list(rng.permutation(len(pool)))
    hop_first = [i for i in order if pool[i].hops] + [i for i in order if not pool[i].hops]
    k = int(rng.integers(opt.columns.min, opt.columns.max + 1)) - 1
    cand = [pool[i] for i in hop_first[:1]] + [pool[i] for i in order if i != hop_first[0]][: k + 3]
    key = Column(schema.singular(t), (), None, STRING, "name")
    sel, joins, facts = [], [], []
    for j, c in enumerate([key, *cand]):
        jn, val, fx = schema.column_sql(c, j)
        joins += jn
        sel.append(val)
        facts.append(fx)
    flat_facts = [f for fx in facts for f in fx]
    sql = (f"SELECT t.id, {', '.join(sel)}, {', '.join(flat_facts)} FROM {_q(t)} t {' '.join(joins)} "
           f"WHERE {where} ORDER BY t.name, t.id")
    res = schema.con.sql(sql).fetchall()
    if len(res) != len(rows) or {r[0] for r in res} != rows:
        raise AssertionError(f"internal: gold query rows differ from the constraint sets for {t}: {where}")
    n_vals = 1 + len(cand)
    fact_pos, p = [], 1 + n_vals
    for fx in facts:
        fact_pos.append(list(range(p, p + len(fx))))
        p += len(fx)
    chosen = []
    for j, c in enumerate(cand, start=1):
        if len(chosen) == k:
            break
        if all(r[1 + j] is not None for r in res) and all(r[q] is not None for r in res for q in fact_pos[j]):
            if not chosen and not c.hops:
                continue  # the first kept column must be a multi-hop one
            chosen.append(j)
    if not chosen or 1 + len(chosen) < opt.columns.min:
        return "empty-cells"
    names = [r[1] for r in res]
    if len(set(names)) != len(names):
        return "ambiguous-key"
    columns = [key] + [cand[j - 1] for j in chosen]
    gold = [[r[1]] + [cell_text(r[1 + j], cand[j - 1].kind) for j in chosen] for r in res]
    row_facts = [[[r[q] for q in fact_pos[0]]] + [[r[q] for q in fact_pos[j]] for j in chosen] for r in res]

    # the auditable gold query: just the columns, no ids or fact ids
    sel, joins = [], []
    for j, c in enumerate(columns):
        jn, val, _ = schema.column_sql(c, j)
        joins += jn
        sel.append(f"{val} AS {_q(c.name)}")
    clean = (f"SELECT {', '.join(sel)}\nFROM {_q(t)} t" + "".join(f"\n{x}" for x in joins)
             + f"\nWHERE {where}\nORDER BY 1")
    texts, values = {}, []
    for letter, atom in atoms.items():
        texts[letter], vals = sampler.atom_text(t, atom)
        values += vals
    question = sampler.question(t, shape, texts, columns)
    first = texts["A"]
    return TableTask(type=t, shape=shape, atoms=list(atoms.values()), columns=columns, row_ids=[r[0] for r in res],
                     gold_rows=gold, sql=clean, question=question, constraint_texts=[texts[k] for k in sorted(texts)],
                     constraint_values=values, query=f"{schema.plural(t)} {first}", facts=row_facts)


def _evidence(v: Verdict) -> dict:
    """Which page states each gold cell (indexes into `pages`) and which pages list the rows."""
    pages = sorted({u for row in v.evidence for u in row} | set(v.listings or ()))
    idx = {u: i for i, u in enumerate(pages)}
    return {"pages": pages, "cells": [[idx[u] for u in row] for row in v.evidence],
            "listings": [idx[u] for u in v.listings or ()]}


def _table_record(world: str, task: TableTask, verdict: Verdict, opt: TasksOptions) -> dict:
    names = [c.name for c in task.columns]
    ev = {"unique_columns": [names[0]], "required": [norm_column(n) for n in names],
          "eval_pipeline": {norm_column(c.name): eval_entry(c.kind, opt.number_tolerance) for c in task.columns}}
    ops = [op for op, sign in (("AND", "&"), ("OR", "|"), ("NOT", "!")) if sign in task.shape]
    hops = max([c.hops for c in task.columns] + [len(a.path) for a in task.atoms])
    iid = _iid(world, "table", task.sql)
    return {
        "instance_id": iid, "query": task.question, "language": opt.language, "evaluation": ev,
        "kind": "table", "entity_type": task.type, "columns": names, "sql": task.sql,
        "constraints": [{"letter": k, "text": txt, "negated": f"!{k}" in task.shape}
                        for k, txt in zip(sorted(x for x in "ABC" if x in task.shape), task.constraint_texts)],
        "shape": task.shape, "constraint_values": task.constraint_values, "discovery_query": task.query,
        "difficulty": {"rows": len(task.gold_rows), "columns": len(names), "hops": hops, "constraints": len(task.atoms),
                       "operators": ops, "min_pages": verdict.pages},
        "evidence": _evidence(verdict),
    }


def _multihop_record(world: str, task: MultiHopTask, verdict: Verdict, opt: TasksOptions, schema: TaskSchema) -> dict:
    key, ans = task.columns
    # A name answer is part of the key: keys align through the world's aliases (as WideSearch's
    # LLM aligns them), so "MIT" answers "Massachusetts Institute of Technology". Numbers and
    # dates stay value cells, scored with their tolerance.
    unique = [key, ans] if task.answer_kind == STRING else [key]
    ev = {"unique_columns": unique, "required": [norm_column(key), norm_column(ans)],
          "eval_pipeline": {norm_column(key): eval_entry(STRING, opt.number_tolerance),
                            norm_column(ans): eval_entry(task.answer_kind, opt.number_tolerance)}}
    iid = _iid(world, "multihop", task.sql)
    return {
        "instance_id": iid, "query": task.question, "language": opt.language, "evaluation": ev,
        "kind": "multihop", "entity_type": schema.view.type_of[task.start], "columns": task.columns, "sql": task.sql,
        "answer": task.answer, "answer_aliases": task.aliases, "answer_kind": task.answer_kind,
        "path": [{"from": h.source, "to": h.target, "kind": h.kind, "fact": h.fact} for h in task.hops],
        "constraint_values": [schema.view.names[task.start]],
        "difficulty": {"rows": 1, "columns": 2, "hops": len(task.hops), "constraints": 0, "operators": [],
                       "min_pages": verdict.pages},
        "evidence": _evidence(verdict),
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
    if (opt.paraphrase or model) and llm is None:
        if not (model or info.world.spec.stages.render.model):
            raise TasksError("--paraphrase needs a model: pass --model PATH_OR_HUB_ID or set stages.render.model")
        from ..web.llm import check_model

        check_model(info.world.spec.stages.render, model)  # a bad path fails now, not after generation
    seed = opt.seed if seed is None else seed
    seed = info.world.spec.seed if seed is None else seed
    want = {"table": opt.table if n_table is None else n_table, "multihop": opt.multihop if n_multihop is None else n_multihop}
    want = {k: (want[k] if k in kinds else 0) for k in KINDS}
    report = TasksReport(seed=seed)
    view = WorldView(info, info.world.spec.stages.render)
    engine = SearchEngine(web)
    records: list[dict] = []
    golds: dict[str, tuple[list[str], list[list[str]]]] = {}
    try:
        schema = TaskSchema(view)
        prefix = {t: view.directory_url(t, "x", "x", None).rsplit("/", 2)[0] + "/" for t in info.world.types}
        reach = Reachability(engine, view.names, view.type_of, prefix)
        name_counts = Counter(view.names.values())
        if want["table"]:
            _run_table(info.world.spec.name, schema, reach, opt, want["table"], seed, report, records, golds, on_progress)
        if want["multihop"]:
            _run_multihop(info.world.spec.name, schema, reach, opt, want["multihop"], seed, report, records, golds,
                          name_counts, on_progress)
        report.searches = reach.searches
    finally:
        engine.close()
        view.close()
    if opt.paraphrase or model or llm is not None:
        from .paraphrase import paraphrase_records

        acc, rej = paraphrase_records(records, info.world.spec.stages.render, model=model, llm=llm, seed=seed,
                                      on_progress=on_progress)
        report.paraphrased = {"accepted": acc, "rejected": rej}
    report.seconds = round(time.perf_counter() - t0, 3)
    _write(world_path, records, golds, report)
    return report


BATCH = 32  # candidates whose facts are fetched in one query (one scan of page_facts per batch)


def _keep(kind: str, n: int, opt: TasksOptions, reach: Reachability, draw: Callable[[], object],
          gold_key: Callable, check_args: Callable, make_record: Callable, report: TasksReport,
          records: list[dict], golds: dict, on_progress) -> None:
    """Draw candidates in batches, in order; keep the first `n` that are new and reachable.
    Batching changes no outcome (candidates are judged in draw order), only how often the
    provenance table is scanned."""
    dropped: Counter = Counter()
    seen: set = set()
    kept = drawn = 0
    limit = n * opt.max_attempts
    while kept < n and drawn < limit:
        batch = [draw() for _ in range(min(BATCH, limit - drawn))]
        reach.load_facts([f for t in batch if not isinstance(t, str) for row in check_args(t)[1] for cell in row for f in cell])
        for task in batch:
            drawn += 1
            if isinstance(task, str):
                dropped[task] += 1
                continue
            key = gold_key(task)
            if key in seen:
                dropped["duplicate-gold-set"] += 1
                continue
            verdict = reach.check(*check_args(task))
            if not verdict.ok:
                dropped[verdict.reason] += 1
                continue
            seen.add(key)
            rec, header, rows = make_record(task, verdict)
            records.append(rec)
            golds[rec["instance_id"]] = (header, rows)
            kept += 1
            if on_progress:
                on_progress(kind, kept, n)
            if kept == n:
                break  # candidates drawn after the last kept one are not counted
    report.kept[kind], report.drawn[kind], report.dropped[kind] = kept, drawn, dict(sorted(dropped.items()))


def _run_table(world, schema, reach, opt, n, seed, report, records, golds, on_progress) -> None:
    sampler = TableSampler(schema, opt, child_rng(seed, "tasks", "table"))
    if not sampler.types:
        raise TasksError(f"no entity type has at least {opt.rows.min} entities and a multi-hop column; "
                         "lower stages.tasks.rows.min or plan a larger world")

    def record(task, verdict):
        return _table_record(world, task, verdict, opt), [c.name for c in task.columns], task.gold_rows

    _keep("table", n, opt, reach, lambda: _draw_table(sampler, schema, opt),
          lambda t: (t.type, tuple(sorted(t.row_ids))), lambda t: (t.row_ids, t.facts, [t.query]),
          record, report, records, golds, on_progress)


def _run_multihop(world, schema, reach, opt, n, seed, report, records, golds, name_counts, on_progress) -> None:
    rng = child_rng(seed, "tasks", "multihop")
    sampler = MultiHopSampler(schema, HopGraph(schema), rng, name_counts)

    def record(task, verdict):
        return _multihop_record(world, task, verdict, opt, schema), task.columns, task.gold_rows

    _keep("multihop", n, opt, reach, lambda: sampler.sample(int(rng.integers(opt.hops.min, opt.hops.max + 1))),
          lambda t: (t.start, t.answer_entity, t.answer_attr), lambda t: ([], [[[f"{t.start}/name"], t.facts]], []),
          record, report, records, golds, on_progress)


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
    evaluation, and `gold/<instance_id>.csv`. Returns the task count."""
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
    (partial / GOLD_DIR).mkdir(parents=True)
    (partial / TASKS_FILE).write_text("".join(json.dumps({k: r[k] for k in WIDESEARCH_FIELDS}, ensure_ascii=False) + "\n"
                                              for r in records))
    for r in records:
        shutil.copyfile(src / GOLD_DIR / f"{r['instance_id']}.csv", partial / GOLD_DIR / f"{r['instance_id']}.csv")
    swap_into_place(partial, dest)
    return len(records)
