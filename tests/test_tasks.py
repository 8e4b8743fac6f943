"""The tasks stage on the demo world: variety, gold tables that their SQL reproduces, every
gold value reachable in the simulated web (checked here without the generator's own
provenance tables), scoring, WideSearch export, determinism and bad input."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import shutil
from collections import Counter
from decimal import Decimal

import duckdb
import pytest
from typer.testing import CliRunner

from worldforge.cli import app
from worldforge.errors import NotRenderedError, SpecError, TasksError
from worldforge.tasks import export_widesearch, generate_tasks, read_tasks
from worldforge.tasks.scoring import norm_column, read_gold_csv, score_files, world_aliases
from worldforge.web.search import SearchEngine
from worldforge.web.text import format_date, format_number
from worldforge.world.options import TasksOptions

from .conftest import copy_world

N_TABLE, N_MULTIHOP = 150, 60
runner = CliRunner()


@pytest.fixture(scope="session")
def demo_tasks(demo_web):
    world, _ = demo_web
    report = generate_tasks(world, n_table=N_TABLE, n_multihop=N_MULTIHOP, force=True)
    return world, report, read_tasks(world)


def _gold(world, rec) -> tuple[list[str], list[list[str]]]:
    return read_gold_csv((world / "tasks" / "gold" / f"{rec['instance_id']}.csv").read_text())


def _md(header, rows) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])


def test_demo_yields_hundreds_of_varied_tasks(demo_tasks):
    world, report, recs = demo_tasks
    table = [r for r in recs if r["kind"] == "table"]
    multi = [r for r in recs if r["kind"] == "multihop"]
    assert len(table) == N_TABLE and len(multi) == N_MULTIHOP
    assert report.kept == {"table": N_TABLE, "multihop": N_MULTIHOP}
    assert sum(report.dropped["table"].values()) + N_TABLE == report.drawn["table"]
    assert len({r["instance_id"] for r in recs}) == len(recs)
    assert len({r["query"] for r in recs}) == len(recs)
    opt = TasksOptions()
    for r in table:
        d = r["difficulty"]
        assert opt.rows.min <= d["rows"] <= opt.rows.max
        assert opt.columns.min <= d["columns"] <= opt.columns.max
        assert 1 <= d["constraints"] <= 3 and d["hops"] >= 1 and d["min_pages"] >= d["rows"]
        header, rows = _gold(world, r)
        assert header == r["columns"] and len(rows) == d["rows"]
        assert all(c for row in rows for c in row), "no empty gold cell"
        ev = r["evaluation"]
        assert ev["unique_columns"] == [header[0]] and ev["required"] == [norm_column(h) for h in header]
        assert set(ev["eval_pipeline"]) == set(ev["required"])
        # the question names every column and ends asking for one markdown table
        q = r["query"].lower()
        assert all(c.lower() in q for c in header) and "markdown table" in q
        assert all(str(v).lower() in q for v in r["constraint_values"])
    # variety: shapes, operators, entity types, hops, metrics and phrasings
    assert {"A", "A&B", "A|B", "A&!B"} <= {r["shape"] for r in table}
    assert {"AND", "OR", "NOT"} <= {op for r in table for op in r["difficulty"]["operators"]}
    assert len({r["entity_type"] for r in table}) >= 6
    assert max(r["difficulty"]["hops"] for r in table) >= 2
    metrics = {m for r in table for c in r["evaluation"]["eval_pipeline"].values() for m in c["metric"]}
    assert {"exact_match", "number_near", "date_near"} <= metrics
    assert len({r["query"].split()[0] for r in table}) >= 4
    # no two tasks share a gold set
    sets = [(r["entity_type"], tuple(sorted(row[0] for row in _gold(world, r)[1]))) for r in table]
    assert len(set(sets)) == len(sets)
    assert {r["difficulty"]["hops"] for r in multi} >= {2, 3, 4}
    kinds = Counter(r["answer_kind"] for r in multi)
    assert kinds["string"] and (kinds["number"] or kinds["date"])


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.6f}".rstrip("0").rstrip(".")
    if isinstance(v, float):
        return str(int(v))
    return str(v)


def test_gold_sql_reproduces_every_gold_table(demo_tasks):
    world, _, recs = demo_tasks
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as con:
        for r in recs:
            header, rows = _gold(world, r)
            cur = con.execute(r["sql"])
            got = cur.fetchall()
            names = [d[0] for d in cur.description]
            assert names == header or r["kind"] == "multihop"
            assert sorted([_cell(v) for v in row] for row in got) == sorted(rows), r["instance_id"]
            if r["kind"] == "multihop":
                assert len(got) == 1 and rows[0][1] == r["answer"] and r["answer"] in r["answer_aliases"]


def _surface_forms(value: str, kind: str) -> list[str]:
    if kind == "date":
        d = dt.date.fromisoformat(value)
        return [format_date(d, s) for s in range(3)]
    if kind == "number":
        vt = "float" if "." in value else "int"
        return [format_number(value, vt), str(Decimal(value))]
    return [value]


def test_every_gold_value_is_reachable_through_search(demo_tasks):
    """Checked from the pages' text and fresh searches, not from page_facts: each gold cell is
    written on its evidence page, that page is about an entity whose name, searched, returns
    it in the top 10, and every row is listed on one of the task's listing pages."""
    world, _, recs = demo_tasks
    engine = SearchEngine.for_world(world)
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as con:
        names = dict(con.sql("SELECT id, name FROM (" + " UNION ALL ".join(
            f'SELECT id, name FROM "{t}"' for (t,) in con.sql("SELECT type FROM _types").fetchall()) + ")").fetchall())
    top: dict[str, set[str]] = {}
    try:
        for r in recs:
            header, rows = _gold(world, r)
            kinds = ["string" if "norm_str" in c["preprocess"] else "number" if "extract_number" in c["preprocess"]
                     else "date" if "norm_date" in c["preprocess"] else "url"
                     for c in (r["evaluation"]["eval_pipeline"][norm_column(h)] for h in header)]
            ev = r["evidence"]
            pages = ev["pages"]
            for row, cells in zip(rows, ev["cells"]):
                for value, kind, i in zip(row, kinds, cells):
                    page = engine.page(pages[i])
                    subject = engine.pages.execute("SELECT subject FROM pages WHERE url = ?", [pages[i]]).fetchall()[0][0]
                    name = names[subject]
                    if name not in top:
                        top[name] = {x["url"] for x in engine.search(name)[0]}
                    assert pages[i] in top[name], (r["instance_id"], pages[i], name)
                    assert any(f in page["markdown"] for f in _surface_forms(value, kind)), (r["instance_id"], value, pages[i])
            if r["kind"] == "table":
                listing = [engine.page(pages[i]) for i in ev["listings"]]
                listed = "\n".join(p["markdown"] for p in listing)
                titles = {p["title"] for p in listing}
                assert ev["listings"] and all(f"[{row[0]}]" in listed or row[0] in titles for row in rows), r["instance_id"]
    finally:
        engine.close()


def test_gold_answers_score_one_and_damage_scores_less(demo_tasks, tmp_path):
    world, _, recs = demo_tasks
    gold_resp, damaged = [], []
    for r in recs:
        header, rows = _gold(world, r)
        gold_resp.append({"instance_id": r["instance_id"], "response": "Here is the table:\n\n" + _md(header, rows)})
        if r["kind"] == "table":
            damaged.append({"instance_id": r["instance_id"], "response": _md(header, rows[1:])})
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(x) + "\n" for x in gold_resp))
    res = runner.invoke(app, ["score", str(world / "tasks"), str(tmp_path / "gold.jsonl"), "--json", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    avg = json.loads((tmp_path / "s.json").read_text())["average"]
    assert all(avg[k] == 1.0 for k in ("success", "row_precision", "row_recall", "row_f1", "item_precision", "item_recall", "item_f1"))
    (tmp_path / "dropped.jsonl").write_text("".join(json.dumps(x) + "\n" for x in damaged))
    scores, avg = score_files(world / "tasks", tmp_path / "dropped.jsonl", world_aliases(world))
    table = [s for s in scores if s.instance_id.startswith("demo-table")]
    assert all(s.success == 0 and s.row_recall < 1 and s.row_precision == 1 for s in table)
    assert all(s.parsed is False for s in scores if s.instance_id.startswith("demo-multihop"))  # no response: no table


def test_multihop_entity_answer_written_as_alias_still_scores(demo_tasks, tmp_path):
    world, _, recs = demo_tasks
    aliases = world_aliases(world)
    picked = [r for r in recs if r["kind"] == "multihop" and r["answer_kind"] == "string"
              and any(a != r["answer"] and aliases.get("".join(a.lower().split())) for a in r["answer_aliases"])]
    if not picked:
        pytest.skip("no entity answer with an unambiguous alias in this sample")
    r = picked[0]
    alias = next(a for a in r["answer_aliases"] if a != r["answer"] and aliases.get("".join(a.lower().split())))
    header, rows = _gold(world, r)
    (tmp_path / "a.jsonl").write_text(json.dumps({"instance_id": r["instance_id"], "response": _md(header, [[rows[0][0], alias]])}) + "\n")
    scores, _ = score_files(world / "tasks", tmp_path / "a.jsonl", aliases)
    assert next(s for s in scores if s.instance_id == r["instance_id"]).success == 1.0


def test_same_seed_same_bytes_other_seed_differs(demo_web, tmp_path):
    world, _ = demo_web
    w = tmp_path / "demo"
    shutil.copytree(world, w, ignore=shutil.ignore_patterns("tasks", ".tasks*"))

    def snapshot():
        d = w / "tasks"
        return (d / "tasks.jsonl").read_bytes(), {p.name: p.read_bytes() for p in sorted((d / "gold").iterdir())}

    generate_tasks(w, n_table=25, n_multihop=15)
    first = snapshot()
    generate_tasks(w, n_table=25, n_multihop=15, force=True)
    assert snapshot() == first
    generate_tasks(w, n_table=25, n_multihop=15, seed=7, force=True)
    assert snapshot()[0] != first[0]


def test_cli_tasks_and_widesearch_export(demo_web, tmp_path):
    world, _ = demo_web
    w = tmp_path / "demo"
    shutil.copytree(world, w, ignore=shutil.ignore_patterns("tasks", ".tasks*"))
    out = tmp_path / "ws"
    r = runner.invoke(app, ["tasks", str(w), "--n", "12", "--export-widesearch", str(out)])
    assert r.exit_code == 0, r.output
    assert "kept" in r.output and "dropped" in r.output and "table" in r.output and "multihop" in r.output
    lines = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    assert len(lines) == 24 and all(set(x) == {"instance_id", "query", "language", "evaluation"} for x in lines)
    for x in lines:
        rows = list(csv.reader(io.StringIO((out / "gold" / f"{x['instance_id']}.csv").read_text())))
        assert [norm_column(h) for h in rows[0]] == x["evaluation"]["required"] and len(rows) >= 2
    # WideSearch's own files score through the CLI too
    resp = tmp_path / "r.jsonl"
    resp.write_text("".join(json.dumps({"instance_id": x["instance_id"], "response": _md(*read_gold_csv(
        (out / "gold" / f"{x['instance_id']}.csv").read_text()))}) + "\n" for x in lines))
    r = runner.invoke(app, ["score", str(out), str(resp), "--world", str(w), "--json", str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "s.json").read_text())["average"]["success"] == 1.0
    # only tables
    r = runner.invoke(app, ["tasks", str(w), "--n", "5", "--kind", "table", "--force"])
    assert r.exit_code == 0, r.output
    assert {x["kind"] for x in read_tasks(w)} == {"table"}
    # bad input
    r = runner.invoke(app, ["tasks", str(w), "--n", "5"])
    assert r.exit_code == 1 and "--force" in r.output
    r = runner.invoke(app, ["tasks", str(w), "--kind", "essay", "--force"])
    assert r.exit_code == 1 and "unknown --kind" in r.output
    r = runner.invoke(app, ["tasks", str(w), "--paraphrase", "--force"])
    assert r.exit_code == 1 and "needs a model" in r.output
    r = runner.invoke(app, ["tasks", str(w), "--paraphrase", "--model", str(tmp_path / "no-model"), "--force"])
    assert r.exit_code == 1 and "does not exist" in r.output
    r = runner.invoke(app, ["tasks", str(w), "--n", "5", "--force", "--export-widesearch", str(out)])
    assert r.exit_code == 0, r.output  # --force also replaces an earlier export
    assert len((out / "tasks.jsonl").read_text().splitlines()) == 10
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("keep me")
    r = runner.invoke(app, ["tasks", str(w), "--n", "5", "--force", "--export-widesearch", str(tmp_path / "full")])
    assert r.exit_code == 1 and "not empty" in r.output and (tmp_path / "full" / "x.txt").exists()
    r = runner.invoke(app, ["tasks", str(w), "--n", "5", "--force", "--export-widesearch", str(tmp_path / "full" / "x.txt")])
    assert r.exit_code == 1 and "is a file" in r.output


def test_bad_input(demo_world, tmp_path):
    w = copy_world(demo_world, tmp_path / "demo")
    with pytest.raises(NotRenderedError, match="worldforge render"):
        generate_tasks(w)
    r = runner.invoke(app, ["tasks", str(w)])
    assert r.exit_code == 1 and "worldforge render" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["tasks", str(tmp_path / "nowhere")])
    assert r.exit_code == 1 and "no world" in r.output
    with pytest.raises(TasksError, match="no tasks"):
        read_tasks(w)
    with pytest.raises(TasksError, match="no tasks"):
        export_widesearch(w, tmp_path / "ws")
    assert not (w / "tasks").exists() and not (w / ".tasks.partial").exists()
    from worldforge.world.validate import load_world

    spec = yaml_spec(tmp_path, {"tasks": {"rows": {"min": 0, "max": 5}}})
    with pytest.raises(SpecError, match="rows.min"):
        load_world(spec)
    spec = yaml_spec(tmp_path, {"tasks": {"tables": 5}})
    with pytest.raises(SpecError, match="tables"):
        load_world(spec)


def yaml_spec(tmp_path, stages: dict):
    from .conftest import write_spec

    return write_spec(tmp_path, name="badtasks", stages=stages)


def test_paraphrase_acceptance_rule():
    from worldforge.tasks.paraphrase import faithful

    rec = {"query": "List all companies founded between 1990 and 1999 and headquartered in Zenhaven. Answer with one "
                    "markdown table with exactly these columns: company, employees, headquarters population.",
           "columns": ["company", "employees", "headquarters population"],
           "constraint_values": ["1990", "1999", "Zenhaven"]}
    good = ("Which companies headquartered in Zenhaven were founded between 1990 and 1999? Give one markdown table "
            "with the columns company, employees, headquarters population.")
    assert faithful(rec, good)
    assert not faithful(rec, good.replace("Zenhaven", "Zenhavn"))  # a constraint value lost
    assert not faithful(rec, good.replace("employees, ", ""))  # a column lost
    assert not faithful(rec, good.replace("1999", "2001"))  # a number changed
    assert not faithful(rec, good.replace("markdown table", "list"))  # no table asked for
    assert not faithful(rec, "")
