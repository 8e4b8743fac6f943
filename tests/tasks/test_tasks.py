"""The tasks stage on the demo world: WideSearch's breadth (every shape, row sizes in its
buckets, columns that carry information, questions in a user's voice, balanced types), gold
tables that their SQL reproduces, every gold value reachable in the simulated web (checked
here from the pages' text and fresh searches, not from the generator's provenance), world-level
splits without shared pages, scoring, WideSearch export, the report, determinism and bad input."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
import shutil
import statistics
from collections import Counter
from decimal import Decimal

import duckdb
import pytest
from typer.testing import CliRunner

from tests.conftest import copy_world
from worldforge.cli import app
from worldforge.errors import NotRenderedError, SpecError, TasksError
from worldforge.tasks import export_widesearch, generate_tasks, read_tasks
from worldforge.tasks.report import distribution, reference
from worldforge.tasks.scoring import norm_column, read_gold_csv, score_files, world_aliases
from worldforge.web.search import SearchEngine
from worldforge.web.text import format_date, format_number
from worldforge.world.options import TasksOptions

runner = CliRunner()
OPT = TasksOptions()


def _gold(world, rec) -> tuple[list[str], list[list[str]]]:
    return read_gold_csv((world / "tasks" / "gold" / f"{rec['instance_id']}.csv").read_text())


def _md(header, rows) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])


def _tables(recs):
    return [r for r in recs if r["kind"] == "table"]


def test_demo_yields_hundreds_of_varied_tasks(demo_tasks):
    world, report, recs = demo_tasks
    table = _tables(recs)
    multi = [r for r in recs if r["kind"] == "multihop"]
    assert len(table) == OPT.table and len(multi) == OPT.multihop
    assert report.kept == {"table": OPT.table, "multihop": OPT.multihop}
    assert sum(report.dropped["table"].values()) + OPT.table == report.drawn["table"]
    assert len({r["instance_id"] for r in recs}) == len(recs)
    assert len({r["query"] for r in recs}) == len(recs)
    for r in table:
        d = r["difficulty"]
        assert OPT.rows.min <= d["rows"] <= OPT.rows.max
        assert OPT.columns.min <= d["columns"] <= OPT.columns.max
        assert d["min_pages"] >= 1 and len(r["evidence"]["cells"]) == d["rows"]
        header, rows = _gold(world, r)
        assert header == r["columns"] and len(rows) == d["rows"]
        assert all(c for row in rows for c in row), "no empty gold cell"
        ev = r["evaluation"]
        assert ev["required"] == [norm_column(h) for h in header] and set(ev["eval_pipeline"]) == set(ev["required"])
        assert set(ev["unique_columns"]) <= set(ev["required"])  # normalised, as WideSearch looks them up
        keys = [ev["required"].index(k) for k in ev["unique_columns"]]
        assert len({tuple(row[i] for i in keys) for row in rows}) == len(rows), "rows are unique on the key"
        # the question names every column and every constraint value, and asks for one markdown table
        q = r["query"].lower()
        assert all(c.lower() in q for c in header) and "markdown table" in q
        assert all(str(v).lower() in q for v in r["constraint_values"])
    # every shape, and what each brings: ranks, composite and time keys, lists, counts, periods
    assert {"filter", "ranked", "timeline", "events"} <= {r["shape"] for r in table}
    assert {"AND", "OR", "NOT"} <= {op for r in table for op in r["difficulty"]["operators"]}
    roles = Counter(x for r in table for x in r["column_roles"])
    assert roles["rank"] and roles["list"] and roles["count"] and roles["time"] and roles["latest"]
    assert any(len(r["evaluation"]["unique_columns"]) >= 2 for r in table)
    timeline = [r for r in table if r["shape"] == "timeline"]
    assert any(r["columns"][0] == "year" or "year" in r["evaluation"]["unique_columns"] for r in timeline)
    assert any("start year" in r["columns"] and "end year" in r["columns"] for r in timeline)
    events = [r for r in table if r["shape"] == "events"]
    assert all(r["columns"][0] == "date" and r["evaluation"]["unique_columns"][0] == "date" for r in events)
    metrics = Counter(m for r in table for c in r["evaluation"]["eval_pipeline"].values() for m in c["metric"])
    assert {"exact_match", "number_near", "date_near", "llm_judge"} <= set(metrics)
    lists = [c for r in table for c in r["evaluation"]["eval_pipeline"].values() if "llm_judge" in c["metric"]]
    assert all(c["llm_free"] == "set_match" and c["criterion"] for c in lists)
    # no two tasks share a gold set
    sets = [(r["shape"], r["entity_type"], tuple(sorted(map(tuple, _gold(world, r)[1])))) for r in table]
    assert len(set(sets)) == len(sets)
    assert {r["difficulty"]["hops"] for r in multi} >= {2, 3, 4}
    kinds = Counter(r["answer_kind"] for r in multi)
    assert kinds["string"] and (kinds["number"] or kinds["date"])


def test_row_counts_and_columns_follow_widesearch(demo_tasks):
    """Asked for WideSearch's distribution (the default), row buckets land within 5 points of
    its shares; tables reach 100+ rows and 8+ columns."""
    world, _, recs = demo_tasks
    mine = distribution(world / "tasks", recs)
    ref = reference()
    assert "arxiv.org" in ref["source"] and "WideSearch" in ref["source"]
    for b, share in ref["row_buckets"].items():
        assert abs(mine["row_buckets"][b] - share) <= 0.05, (b, mine["row_buckets"])
    # 10+ columns is one draw in 70 (3 + Binomial(11, 0.3)) and only a type with a wide pool fills it:
    # one or two of this world's tables had 10 before issue 58's rules (a rule's column and a current
    # timeline's end column are not asked), none since; the mean below holds the width
    assert mine["rows"]["max"] >= 100 and mine["columns"]["max"] >= 8
    assert 5.0 <= mine["columns"]["mean"] <= 7.5
    assert mine["rank_tasks"] >= 0.08 and mine["time_keyed"] >= 0.25 and mine["composite_keys"] >= 0.2


def test_columns_carry_information(demo_tasks):
    """No column is constant across the rows, at most one is about a container many rows share,
    and headers come from the naming grammar, not concatenated labels."""
    world, _, recs = demo_tasks
    mine = distribution(world / "tasks", recs)
    assert mine["constant_value_cells"] == 0.0 and mine["tables_all_constant"] == 0
    assert mine["container_columns"]["tables_with_more_than_one"] == 0
    for r in _tables(recs):
        header, rows = _gold(world, r)
        for i, h in enumerate(header):
            assert len({row[i] for row in rows}) > 1, (r["instance_id"], h)
        for name, role in zip(r["columns"], r["column_roles"]):
            if role == "linked" and " " in name:  # an attribute of a linked entity reads "<attribute> of <link>"
                assert " of " in name or name in ("home city",), name
        assert not any(re.search(r"\b(region|nationality|headquarters) (country|independence|population)\b", c)
                       for c in r["columns"])


def _round(v: str) -> bool:
    x = float(v.replace(",", ""))
    if x == 0:
        return True
    m = x / 10 ** math.floor(math.log10(abs(x)))
    return any(abs(m - k) < 1e-9 for k in (1, 2, 2.5, 5, 10))


def test_constraint_bounds_are_round_values(demo_tasks):
    _, _, recs = demo_tasks
    checked = 0
    for r in _tables(recs):
        for c in r["constraints"]:
            for m in re.finditer(r"(?:between|at least|at most) ([\d,.]+)(?: and ([\d,.]+))?", c["text"]):
                for v in filter(None, m.groups()):
                    v = v.rstrip(".,")
                    if re.fullmatch(r"1[89]\d\d|20\d\d", v):  # a year: a decade or half-decade edge
                        assert int(v) % 5 in (0, 4), (v, c["text"])
                    else:
                        assert _round(v), (v, c["text"])
                    checked += 1
    assert checked >= 30


def test_questions_read_like_a_users_request(demo_tasks):
    """A purpose, a time scope, formatting instructions, and WideSearch's length."""
    _, _, recs = demo_tasks
    table = _tables(recs)
    lengths = [len(r["query"]) for r in table]
    assert 450 <= statistics.mean(lengths) <= 900 and min(lengths) >= 200
    for r in table:
        q = r["query"]
        assert re.match(r"^(I|I'm|For|My|A|Our)\b", q), q[:60]  # says why first
        assert re.search(r"as of|up to|dated|June 30, 2025", q), q
        roles = dict(zip(r["columns"], r["column_roles"]))
        pipe = r["evaluation"]["eval_pipeline"]
        for col in r["columns"]:
            metric = pipe[norm_column(col)]["metric"][0]
            spec = re.search(r"(?:: |, )" + re.escape(col) + r" \(([^)]*)\)", q)  # the column's formatting instruction
            if metric == "date_near":
                assert spec and "YYYY-MM-DD" in spec.group(1), (col, q)
            if metric == "llm_judge":
                assert spec and "semicolon" in spec.group(1), (col, q)
            if roles[col] == "rank":
                assert "1 for the" in q
    assert len({q["query"].split(".")[0] for q in table}) >= 10


def test_entity_types_are_balanced(demo_tasks):
    _, _, recs = demo_tasks
    table = _tables(recs)
    types = Counter(r["entity_type"] for r in table)
    assert len(types) >= 8 and max(types.values()) <= 0.25 * len(table)
    assert types["person"] > types["region"]  # 1,500 people weigh more than 49 regions
    multi = [r for r in recs if r["kind"] == "multihop"]
    answers = Counter(r["answer_type"] for r in multi)
    geo = sum(answers[t] for t in ("country", "region", "city"))
    assert len(answers) >= 6 and max(answers.values()) <= 0.3 * len(multi) and geo <= 0.5 * len(multi)
    assert len({r["entity_type"] for r in multi}) >= 4


def test_world_level_split_shares_no_page(demo_tasks):
    """Held-out tasks are posed inside held-out parts; no page (and no directory) any held-out
    task reads is read by a training task."""
    world, report, recs = demo_tasks
    held = {s: v["parts"] for s, v in report.splits.items() if s != "train"}
    assert held.get("test") and held.get("validation")
    by_split = Counter(r["split"] for r in recs)
    assert by_split["test"] >= 0.08 * len(recs) and by_split["validation"] >= 0.08 * len(recs)

    def pages(r):
        return set(r["evidence"]["pages"])

    train = set().union(*(pages(r) for r in recs if r["split"] == "train"))
    for r in recs:
        if r["split"] == "train":
            continue
        assert r["part"] in held[r["split"]], r["part"]
        assert not pages(r) & train, r["instance_id"]
        bases = {u.split("?", 1)[0] for u in pages(r) if "?page=" in u or "lists." in u}
        assert not any(u.split("?", 1)[0] in bases for u in train)


def test_provenance_is_read_for_every_article_and_directory_site(demo_web):
    """A table may be proven from any article or directory page: the fact index holds the facts
    the render's provenance gives every such page, on each of the world's sites (the
    encyclopedia and the list site), and no pair the provenance does not hold."""
    import polars as pl

    from worldforge.tasks.reach import WebIndex
    from worldforge.web.store import page_files
    from worldforge.world.arrays import WorldArrays
    from worldforge.world.parts import entity_parts
    from worldforge.world.store import open_world

    world, _ = demo_web
    info = open_world(world)
    con = info.connect()
    engine = SearchEngine(world / "web")
    try:
        arrays = WorldArrays(con, info.world)
        web = WebIndex(engine, arrays, entity_parts(arrays, None), info.world.spec.stages.render.max_list_items)
        kinds = pl.from_records(engine.pages.execute("SELECT url, kind FROM pages").fetchall(), schema=["url", "kind"],
                                orient="row")
        facts = pl.scan_parquet([str(f) for f in page_files(world / "web", "facts")], glob=False).collect().join(kinds, on="url")
        facts = facts.with_columns(pl.col("url").str.split("/").list.get(2).alias("site"))
        subj = pl.from_records(engine.pages.execute("SELECT url, kind, subject FROM pages").fetchall(),
                               schema=["url", "kind", "subject"], orient="row")
        arts = subj.filter(pl.col("kind") == "article").select(pl.col("url").alias("article"), "subject")
        # an entity without an article: its profile or official site is its page
        home = subj.filter((pl.col("kind") == "profile") & ~pl.col("subject").is_in(arts["subject"].implode()))
        assert home.height > 1000
        asked = facts.filter(pl.col("kind").is_in(["article", "directory"]) | pl.col("url").is_in(home["url"].implode()))
        sites = dict(asked.group_by("kind").agg(pl.col("site").unique()).iter_rows())
        # the wiki; the list site, the wiki's and profile or official sites' full lists; profile sites
        assert len(sites["article"]) == 1 and len(sites["directory"]) > 3 and len(sites["profile"]) > 3
        sample = asked.group_by("site", maintain_order=True).head(400).sort("url", "fact_id")
        assert sample["site"].n_unique() > 6
        assert web.stated(sample["url"].to_list(), sample["fact_id"].to_list()).all()
        # the same pages with facts they do not state: the sample's facts in reverse order
        urls, ids = sample["url"].to_list(), sample["fact_id"].to_list()
        held = set(zip(asked["url"].to_list(), asked["fact_id"].to_list()))
        # an article also holds, one link away, what its subject's profile and news items state
        moved = (facts.filter(pl.col("kind").is_in(["profile", "news"])).join(subj.select("url", "subject"), on="url")
                 .join(arts, on="subject"))
        held |= set(zip(moved["article"].to_list(), moved["fact_id"].to_list()))
        wrong = [(u, f) for u, f in zip(urls, ids[::-1]) if (u, f) not in held]
        assert len(wrong) > 100
        assert not web.stated([u for u, _ in wrong], [f for _, f in wrong]).any()
        # a fact of a profile is stated at its article, and `via` names the profile
        one = moved.filter(pl.col("kind") == "profile").join(asked.select(pl.col("url").alias("article"), "fact_id"),
                                                           on=["article", "fact_id"], how="anti").head(50)
        assert one.height == 50 and web.stated(one["article"].to_list(), one["fact_id"].to_list()).all()
        assert web.via(one["article"].to_list(), one["fact_id"].to_list()) == one["url"].to_list()
        assert web.via(sample["url"].to_list()[:20], sample["fact_id"].to_list()[:20]) == [None] * 20
    finally:
        engine.close()
        con.close()


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
        from worldforge.web import grammar  # every site's style (a profile may write '9 Apr 1890')
        return [format_date(d, s) for s in range(3)] + [grammar.format_date(d, s) for s in grammar.DATE_STYLES]
    if kind == "number":
        if not re.fullmatch(r"-?\d+(\.\d+)?", value):
            return [value]
        vt = "float" if "." in value else "int"
        return [format_number(value, vt), str(Decimal(value))]
    return [value]


def test_every_gold_value_is_reachable_through_search(demo_tasks):
    """Checked from the pages' text and fresh searches, not from page_facts: each gold value is
    written on the last page of its cell's evidence (a list: every item; an open tenure: 'since'
    or 'present'); and every page a task needs is reached from a search by following links:
    it is linked (a Markdown link to its URL) from another page of the task, or found in the top
    10 by searching its title, and every page it is linked from is reached in turn."""
    world, _, recs = demo_tasks
    engine = SearchEngine.for_world(world)
    text: dict[str, str] = {}
    found: dict[str, bool] = {}

    def md(u):
        if u not in text:
            text[u] = engine.page(u)["markdown"]
        return text[u]

    def searched(u):
        if u not in found:
            title = re.sub(r" \(page \d+ of \d+\)$", "", engine.page(u)["title"])
            found[u] = u in {x["url"] for x in engine.search(title)[0]}
        return found[u]

    try:
        for r in recs:
            header, rows = _gold(world, r)
            pipe = r["evaluation"]["eval_pipeline"]
            kinds = ["list" if "llm_judge" in c["metric"] else "number" if "extract_number" in c["preprocess"]
                     else "date" if "norm_date" in c["preprocess"] else "string" if "norm_str" in c["preprocess"] else "url"
                     for c in (pipe[norm_column(h)] for h in header)]
            roles = r.get("column_roles") or ["key", "value"]
            ev = r["evidence"]
            pages = ev["pages"]
            for row, cells in zip(rows, ev["cells"]):
                for value, kind, role, cell in zip(row, kinds, roles, cells):
                    # the value's page (a chain's last page; an aggregate's pages together)
                    group = [cell] if isinstance(cell, int) else cell if role in ("list", "latest") else cell[-1:]
                    page = "\n".join(md(pages[i]) for i in group)
                    if role in ("rank", "count"):
                        continue  # derived: the ranked values and the listed members are checked as cells
                    if kind == "list":
                        assert all(x in page for x in value.split("; ")), (r["instance_id"], value)
                    elif value == "present":
                        assert "since" in page or "present" in page, r["instance_id"]
                    else:
                        low = page.lower()  # a sentence may begin with the value ('Food is the category given for ...')
                        assert any(f.lower() in low for f in _surface_forms(value, kind)), (r["instance_id"], value, cell)
            # reach every page: from a search (the task's listings come entry points first), then by links
            need = set(pages)
            linked = {u: [q for q in need if q != u and f"]({u})" in md(q)] for u in need}
            reached: set[str] = set()
            first_row = [pages[i] for c in (ev["cells"][0] if ev["cells"] else []) for i in ([c] if isinstance(c, int) else c)]
            for u in [pages[i] for i in ev["listings"]] + first_row + sorted(need):
                if u in reached or not (any(q in reached for q in linked[u]) or searched(u)):
                    continue
                reached.add(u)
                grew = True
                while grew:
                    more = {v for v in need - reached if any(q in reached for q in linked[v])}
                    reached |= more
                    grew = bool(more)
            assert reached == need, (r["instance_id"], sorted(need - reached)[:3])
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
    assert "beside WideSearch" not in r.output  # the distribution only with --report
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


def test_widesearch_export_loads_as_widesearch_loads_it(demo_tasks, tmp_path):
    """The four-field export read the way WideSearch's own loader reads it (pandas: tasks with
    read_json(lines=True), gold with read_csv, columns normalised, the required ones selected),
    with only preprocess and metric names its evaluator registers."""
    pd = pytest.importorskip("pandas")
    world, _, recs = demo_tasks
    out = tmp_path / "ws"
    assert export_widesearch(world, out) == len(recs)
    data = pd.read_json(out / "tasks.jsonl", lines=True).to_dict(orient="records")
    assert len(data) == len(recs)
    registered_pre = {"extract_number", "norm_str", "norm_date"}
    registered_metric = {"exact_match", "url_match", "in_match", "number_near", "date_near", "llm_judge"}
    for item in data:
        assert set(item) == {"instance_id", "query", "language", "evaluation"}
        ev = item["evaluation"]
        answer = pd.read_csv(out / "gold" / f"{item['instance_id']}.csv")
        answer.columns = [norm_column(c.strip()) for c in answer.columns]
        assert all(c in answer.columns for c in ev["required"])
        answer = answer[ev["required"]]
        assert len(answer) >= 1 and set(ev["unique_columns"]) <= set(answer.columns)
        for step in ev["eval_pipeline"].values():
            assert set(step.get("preprocess", [])) <= registered_pre and set(step["metric"]) <= registered_metric
            if "llm_judge" in step["metric"]:
                assert isinstance(step["criterion"], str) and step["criterion"]
            if "number_near" in step["metric"]:
                assert isinstance(step["criterion"], float)


def test_two_widesearch_folders_of_one_name_load_as_their_own(demo_tasks, tmp_path, monkeypatch):
    """`datasets` caches a local folder under a hash of its card, not of its files: two split
    folders with the same name and card (every world's `test`) read as whichever was loaded
    first, unless the card tells them apart."""
    datasets = pytest.importorskip("datasets")
    from worldforge.tasks.stage import write_widesearch

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    _, _, recs = demo_tasks
    got = []
    for i, part in enumerate((recs[:5], recs[5:12])):
        folder = tmp_path / str(i) / "test"
        write_widesearch(folder, part, lambda iid: "a,b\n1,2\n", "demo v1: test split")
        got.append([r["instance_id"] for r in datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "cache"))["full"]])
    assert got == [[r["instance_id"] for r in recs[:5]], [r["instance_id"] for r in recs[5:12]]]


def test_report_sets_the_tasks_beside_widesearch(demo_tasks, tmp_path):
    world, _, recs = demo_tasks
    w = tmp_path / "demo"
    shutil.copytree(world, w)
    r = runner.invoke(app, ["tasks", str(w), "--report"], terminal_width=200)
    assert r.exit_code == 0, r.output
    for text in ("WideSearch", "row buckets", "6 / 22 / 43 / 21 / 7 %", "mean 47.7, median 25, 4-534", "mean 631",
                 "rank / top-N", "value cells in constant columns", "multi-hop answer types", "arxiv.org/abs/2508.07999"):
        assert text in r.output, text
    mine = distribution(w / "tasks", recs)
    assert f"mean {mine['rows']['mean']:.1f}" in r.output
    assert json.loads((w / "tasks" / "tasks.jsonl").read_text().splitlines()[0])  # read, not posed again


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
    from tests.conftest import write_spec

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


def test_no_holdout_and_a_tiny_world(demo_web, tmp_path):
    """`holdout: {}` poses every task in the whole world; a one-country world (no parts, no room
    for big tables) still gives what was asked for."""
    from tests.conftest import write_spec

    world, _ = demo_web
    w = tmp_path / "demo"
    shutil.copytree(world, w, ignore=shutil.ignore_patterns("tasks", ".tasks*"))
    r = generate_tasks(w, TasksOptions(table=12, multihop=6, holdout={}))
    assert set(r.splits) == {"train"} and {x["split"] for x in read_tasks(w)} == {"train"}
    from worldforge.web import render_world
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    info = plan_world(load_world(write_spec(tmp_path, name="geo", seed=5, counts={"country": 1}, packs=["geography"])),
                      tmp_path / "build")
    render_world(info.path)
    r = generate_tasks(info.path, TasksOptions(table=4, multihop=4))
    assert r.kept == {"table": 4, "multihop": 4} and r.splits["train"]["parts"] == []


HIDDEN_PACK = {
    "pack": "works", "requires": ["geography"],
    "types": {"mill": {
        "parent": {"type": "city", "relation": "mill_in", "count": {"min": 1, "max": 3}, "label": "City", "inverse_label": "Mills"},
        "name": {"template": "{a} Mill", "parts": {"a": {"syllables": {"min": 2, "max": 3}}}},
        "attributes": {
            "workers": {"kind": "numeric", "distribution": "lognormal", "params": {"mean": 4.0, "sigma": 1.0}, "min": 1,
                        "max": 5000, "integer": True, "label": "Workers", "ask": ["with {value} workers"]},
            "output_rate": {"kind": "numeric", "distribution": "uniform", "params": {"low": 17.0, "high": 23.0}, "decimals": 3,
                            "hidden": True, "label": "Output rate", "ask": ["with an output rate of {value}"]},
            "output_t": {"kind": "derived", "dtype": "float", "sql": "round(workers * output_rate, 1)", "label": "Output",
                         "unit": "tonnes", "ask": ["producing {value} tonnes a year"]}}}}}


def test_a_hidden_attribute_is_on_no_page_and_in_no_task(tmp_path):
    """A working attribute (`hidden: true`) is drawn and feeds a stated figure, but no page
    states it, no list shows it and no task asks or answers it."""
    import yaml

    from tests.conftest import write_spec
    from worldforge.web import render_world
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    (tmp_path / "works.yaml").write_text(yaml.safe_dump(HIDDEN_PACK))
    spec = write_spec(tmp_path, name="hid", seed=3, counts={"country": 3}, packs=["geography", str(tmp_path / "works.yaml")])
    info = plan_world(load_world(spec), tmp_path / "build")
    with info.connect() as con:
        rates = [f"{v:.3f}" for (v,) in con.execute("SELECT output_rate FROM mill ORDER BY id").fetchall()]
        stated = dict(con.execute("SELECT predicate, count(*) FROM facts WHERE subject_type = 'mill' GROUP BY 1").fetchall())
    assert len(rates) > 100 and "output_rate" not in stated and stated["output_t"] == len(rates)
    render_world(info.path)
    con = duckdb.connect()
    md = con.execute(f"SELECT string_agg(markdown, '\n') FROM read_parquet('{info.path}/web/pages/*.pages.parquet')").fetchone()[0]
    assert "Output rate" not in md and "output rate" not in md and not [v for v in rates if v in md]
    assert "Output" in md
    generate_tasks(info.path, TasksOptions(table=20, multihop=10, holdout={}))
    text = (info.path / "tasks" / "tasks.jsonl").read_text()
    assert "output_rate" not in text and "output rate" not in text.lower()
    assert "output_t" in text  # the figure it feeds is asked about


def test_hidden_attributes_stay_hidden(tmp_path):
    from tests.world.test_spec import problems, tiny_spec

    body = {"types": {"mill": {"name": {"template": "{a}", "parts": {"a": {"syllables": {"min": 2, "max": 3}}}},
                               "attributes": {"rate": {"kind": "numeric", "distribution": "uniform", "params": {"low": 1, "high": 2},
                                                       "hidden": True},
                                              "built": {"kind": "date", "after": ["1900-01-01"], "before": ["as_of"],
                                                        "event": True, "hidden": True}},
                               "pages": {"directories": [{"by": "rate", "title": "Mills rated {group}", "columns": ["rate"]}]}},
                      "shop": {"name": {"template": "{a}", "parts": {"a": {"syllables": {"min": 2, "max": 3}}}},
                               "attributes": {"mill_rate": {"kind": "lookup", "via": "buys_from", "attribute": "rate"}}}},
            "relations": {"buys_from": {"source": "shop", "target": "mill", "cardinality": "N:1"}}}
    by = {p.path: p.message for p in problems(tiny_spec(tmp_path, body, {"mill": 5, "shop": 5}))}
    assert set(by) == {"types.mill.pages.directories.0.by", "types.mill.pages.directories.0.columns.0",
                       "types.mill.attributes.built.hidden", "types.shop.attributes.mill_rate.attribute"}, by
    assert "is hidden" in by["types.mill.pages.directories.0.columns.0"] and "hidden: true" in by["types.shop.attributes.mill_rate.attribute"]


def test_questions_ask_what_a_person_would(demo_tasks):
    """A column about an entity a row links to is its name, or what its pack lists in
    `linked_columns` ("country of birthplace", never "mayor of birthplace"); a ranked table's
    top N is at most 30 % of what it is ranked among (not "the 45 of 52 with the lowest
    revenue") and a size a person picks (3, 5, 10, 15, 20, 25, 30, 50, ...; never "the 39 largest",
    issue 58); no multi-hop sentence nests three "of" or clauses ("the calling code of the country of
    the birthplace of X" reads as two sentences)."""
    from worldforge.tasks.build import column_pool
    from worldforge.tasks.schema import TaskSchema
    from worldforge.world.arrays import WorldArrays
    from worldforge.world.store import open_world

    world, _, recs = demo_tasks
    info = open_world(world)
    with info.connect() as con:
        s = TaskSchema(WorldArrays(con, info.world))
        checked = 0
        for t in s.types:
            for c in column_pool(s, t, "row"):
                if c.path and not c.agg and (c.attr is not None or len(c.path) > 1):
                    linked = c.path[0].target
                    assert (c.attr if len(c.path) == 1 else c.path[1].name) in info.world.types[linked].linked_columns, c.name
                    checked += 1
        assert checked >= 5  # the packs do list some
    mine = distribution(world / "tasks", recs)
    assert mine["top_share"]["max"] <= 0.3 and mine["multihop_three_of"] == 0.0
    assert mine["top_n_tables"] >= 10 and mine["top_n_off_round"] == 0, mine
    # a plural noun is ranked by the most or fewest ("the most employees", never "the highest employees")
    assert not [r["query"] for r in recs if re.search(r"\bthe (highest|lowest) [a-z]+s\b(?! of)", r["query"])]
    assert not any(re.search(r"\bmayor of (birthplace|headquarters|based in)\b", c) for r in _tables(recs) for c in r["columns"])
    split = [r["query"] for r in recs if r["kind"] == "multihop" and re.search(r"\b(Start from|Take|Begin with|Think of) ", r["query"])]
    assert all(re.search(r"\bthat (\w+ ?){1,3}\b", q) for q in split)
    # a name column is glossed after its own entity, never the row's noun ("person (the tenure's
    # name)", "season (the event's name)"), and no label that is a verb phrase is used as a noun
    # ("the based in of X"; issue 56)
    assert not [r["query"] for r in recs if re.search(r"\(the (tenure|event)'s name\)", r["query"])]
    assert not [r["query"] for r in recs if re.search(r"\bthe [a-z]+ (in|to|of|by|for|at|from) of\b", r["query"])]


def test_answer_columns_hold_what_their_format_says(demo_tasks, tmp_path):
    """Issue 58's measure of answers of the wrong type: 0 on the demo, and each kind of damage is
    counted: a count column holding names, a date column holding bare years, a multi-hop number
    answered with a name."""
    from worldforge.tasks.report import format_mismatches
    from worldforge.tasks.scoring import read_gold_csv
    from worldforge.tasks.stage import gold_csv

    world, _, recs = demo_tasks
    d = tmp_path / "tasks"
    shutil.copytree(world / "tasks", d)
    assert format_mismatches(d, recs) == 0

    def damage(pred, at, value):
        r = next(r for r in recs if pred(r))
        path = d / "gold" / f"{r['instance_id']}.csv"
        header, rows = read_gold_csv(path.read_text(encoding="utf-8"))
        i = at(r)
        rows[0][i] = value
        path.write_text(gold_csv(header, rows), encoding="utf-8")

    def col(kind, agg=None):
        return lambda r: r["kind"] == "table" and any(c["kind"] == kind and c.get("agg") == agg and c["base"] == "row"
                                                      for c in r["question"]["columns"])

    def at(kind, agg=None):
        return lambda r: next(i for i, c in enumerate(r["question"]["columns"])
                              if c["kind"] == kind and c.get("agg") == agg and c["base"] == "row")

    damage(col("number", "count"), at("number", "count"), "Sapra Group")
    assert format_mismatches(d, recs) == 1
    damage(col("date"), at("date"), "1987")
    assert format_mismatches(d, recs) == 2
    damage(lambda r: r["kind"] == "multihop" and r["answer_kind"] == "number", lambda r: len(r["columns"]) - 1, "Braeria")
    assert format_mismatches(d, recs) == 3


_RULE_SQL = re.compile(r"\s+AND NOT \(coalesce\(\(t0?\.\"\w+\" <= DATE '[\d-]+'\), FALSE\)\)"
                       r"|\n  AND (NOT )?\(x\.valid_to IS NOT NULL AND x\.valid_to <= DATE '[\d-]+'\)")


def test_domain_rules_change_the_gold_and_are_said(demo_tasks):
    """At least a fifth of the table tasks state a rule that decides membership (issue 58): only
    those alive or still in existence on the task's date, only the tenures still under way, or
    only those ended. The gold applies it: the task's SQL without the rule gives other rows (a
    rule that never changes the gold is not one). The question says it in a sentence of its own,
    and a timeline of current tenures has no end column nor asks for the whole history."""
    import duckdb

    from worldforge.tasks.banks import question_bank
    from worldforge.tasks.report import domain_rule

    world, _, recs = demo_tasks
    tables = _tables(recs)
    ruled = [r for r in tables if domain_rule(r)]
    assert len(ruled) >= 0.2 * len(tables), (len(ruled), len(tables))
    assert {domain_rule(r) for r in ruled} == {"living", "current", "ended"}
    rules = question_bank("en")["domain_rules"]
    with duckdb.connect(str(world / "world.duckdb"), read_only=True) as con:
        for r in ruled:
            plain = _RULE_SQL.sub("", r["sql"])
            assert plain != r["sql"], r["sql"]
            with_rule = con.execute(r["sql"]).fetchall()
            without = con.execute(plain).fetchall()
            assert with_rule and set(map(tuple, with_rule)) != set(map(tuple, without)), r["instance_id"]
            kind = domain_rule(r)
            says = (rules["ended_person"]["say"] + rules["ended_other"]["say"] if kind == "living"
                    else rules[f"{kind}_only"]["say"])
            q = r["query"]
            pats = [re.escape(x).replace(re.escape("{plural}"), ".+").replace(re.escape("{date}"), ".+") for x in says]
            assert any(re.search(p, q) for p in pats), q
            if kind == "current":
                assert not {"end year", "until"} & set(r["columns"]) and "whole history" not in q and "began and ended" not in q


def test_the_question_check_names_what_reads_wrong():
    """`tasks.check.question_problems` (the stage drops a task it faults, as `garbled-question`):
    each slip a new pack's labels can cause is named; a right question passes."""
    from worldforge.tasks.check import question_problems

    assert question_problems("List every album (the album's name) released by Caslikel.", ["album"], "en") == []
    assert question_problems("请列出所属国家为多兰的城市，列：城市、海拔（米）。", ["城市", "海拔（米）"], "zh") == []
    got = question_problems("Find the population of the based in of the label. Columns: person (the tenure's name), "
                            "{start}, the the answer ()", ["person"], "en")
    assert {p.split(":")[0] for p in got} == {"label as a noun", "type gloss", "unfilled slot", "word twice"}, got
    assert question_problems("When was the sole founder of the maker of Vetis Nova died?", ["product", "died"], "en")
    assert question_problems("When did the sole founder of the maker of Vetis Nova die?", ["product", "died"], "en") == []
    from worldforge.language import get as get_language

    assert get_language("zh").joined("出生于在1980年至2009年之间") == "出生于1980年至2009年之间"  # a pack's 于 meets a range's 在
    assert get_language("en").joined("born in the 1980s") == "born in the 1980s"
    got = question_problems("请列出于在宁临市开机的电影，海拔83 m。", ["创办年数（years）"], "zh")
    assert {p.split(":")[0] for p in got} == {"garbled particle", "latin unit"} and len(got) == 3, got


def test_question_banks_agree_across_languages():
    """Every phrasing a question draws on is data (tasks/questions/<lang>.yaml), in every
    language, with the same keys down to each shape, and each template names only the slots its
    English counterpart fills (a Chinese phrasing cannot ask for a value the wording never gives)."""
    import string

    from worldforge.language import languages
    from worldforge.tasks.banks import question_bank, question_languages

    assert question_languages() == languages()
    fields = lambda t: {f for _, f, _, _ in string.Formatter().parse(t) if f} if isinstance(t, str) else set()  # noqa: E731
    # a rule of word order a language has, or null; the verbs its date labels are the past of: not phrasings
    rules = {("order", "nested_asks"), ("multihop", "did")}

    def leaves(v, path=()):
        if isinstance(v, dict):
            for k, x in v.items():
                yield from leaves(x, (*path, k))
        else:
            yield path, v if isinstance(v, list) else [v]

    en = {k: v for k, v in leaves(question_bank("en")) if k[:2] not in rules}
    for code in languages():
        zh = {k: v for k, v in leaves(question_bank(code)) if k[:2] not in rules}
        assert set(en) == set(zh), code
        # the slots `Wording` fills in the word-order templates (each language takes those it needs)
        order_slots = {"a", "b", "c", "or_b", "not_b", "not_c", "plural", "scope", "cond", "name", "inner", "n", "rows", "word",
                       "noun", "order", "extreme", "others", "ask", "role", "target", "range", "verb", "events", "period",
                       "where", "where_a", "label", "value"}
        assert set().union(*(fields(t) for k, ts in en.items() if k[0] == "order" for t in ts)) <= order_slots
        for key, templates in en.items():
            slots = set().union(*(fields(t) for t in templates))
            if key == ("date",):  # a date's parts, each language taking those it writes
                slots = {"year", "month", "day", "month_name"}
            if key == ("multihop", "that_same"):  # the entity a sentence reached, by its type ('that one' in English)
                slots = {"type"}
            if key == ("multihop", "happened_did"):  # 'when did X die': a language whose labels are nouns asks by the label
                slots = {"np", "verb", "label"}
            if key[0] == "order":  # word order: each language places the slots the wording fills for it where it goes
                slots = order_slots
            assert all(fields(t) <= slots for t in zh[key]), key
            # (a separator may be empty: Chinese joins sentences with none; a switch of word order is a flag)
            assert all(isinstance(t, (str, bool)) for t in templates + zh[key]), key
        for shape in ("filter", "ranked", "timeline", "events"):  # several openings to draw from, in each language
            assert len(en[("purposes", shape)]) >= 5 and len(zh[("purposes", shape)]) >= 5
