"""The WideSearch scorer: the gold table scores 1.0, and each kind of damage moves the
score the way WideSearch's metrics say it should."""

from __future__ import annotations

import pytest

from worldforge.tasks.scoring import Evaluation, average, parse_table, score_table

EVAL = Evaluation(
    unique_columns=["Company"],
    required=["Company", "Industry", "Founded", "Employees", "Website"],
    eval_pipeline={
        "company": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "industry": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "founded": {"preprocess": ["norm_date"], "metric": ["date_near"]},
        "employees": {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.1},
        "website": {"metric": ["url_match"]},
    },
)
HEADER = ["Company", "Industry", "Founded", "Employees", "Website"]
GOLD = [
    ["Tisfaan Pharmaceuticals", "software", "2017-12-05", "5", "https://www.tisfaan.example"],
    ["Orroshes Motors", "retail", "2009-04-28", "1200", "https://www.orroshes.example"],
    ["Velkor Labs", "energy", "1998-01-15", "87", "https://www.velkor.example"],
]
ALIASES = {"tisfaan": "tisfaanpharmaceuticals", "tp": "tisfaanpharmaceuticals"}


def table(rows, header=HEADER, fenced=True):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    body = "\n".join(lines)
    return f"Here is the table:\n\n```markdown\n{body}\n```\n" if fenced else f"Sure.\n{body}\nDone."


def score(response):
    return score_table("t1", EVAL, HEADER, GOLD, response, ALIASES)


def test_gold_scores_one_in_either_table_form():
    for fenced in (True, False):
        s = score(table(GOLD, fenced=fenced))
        assert s.parsed and s.success == 1.0
        assert (s.row_precision, s.row_recall, s.row_f1, s.item_precision, s.item_recall, s.item_f1) == (1.0,) * 6


def test_dropped_and_extra_rows():
    s = score(table(GOLD[:2]))
    assert s.success == 0 and s.row_precision == 1.0 and s.row_recall == pytest.approx(2 / 3)
    assert s.item_precision == 1.0 and s.item_recall == pytest.approx(2 / 3)
    extra = GOLD + [["Nova Works", "media", "2001-01-01", "10", "https://nova.example"]]
    s = score(table(extra))
    assert s.success == 0 and s.row_recall == 1.0 and s.row_precision == pytest.approx(3 / 4)
    assert s.item_recall == 1.0 and s.item_precision == pytest.approx(15 / 20)
    # A repeated row counts once.
    assert score(table(GOLD + [GOLD[0]])).success == 1.0


def test_one_wrong_cell():
    rows = [r[:] for r in GOLD]
    rows[1][1] = "finance"
    s = score(table(rows))
    assert s.success == 0 and s.correct_rows == 2 and s.row_recall == pytest.approx(2 / 3)
    assert s.item_precision == pytest.approx(14 / 15) and s.item_recall == pytest.approx(14 / 15)


def test_key_written_with_an_alias_still_aligns():
    rows = [r[:] for r in GOLD]
    rows[0][0] = "Tisfaan"
    assert score(table(rows)).success == 1.0
    rows[0][0] = "**TP**"
    assert score(table(rows)).success == 1.0
    rows[0][0] = "Tisfaan Pharma"  # not an alias: that row is missing and an extra row appears
    s = score(table(rows))
    assert s.matched_rows == 2 and s.row_precision == pytest.approx(2 / 3) and s.row_recall == pytest.approx(2 / 3)


def test_reordered_columns_are_fine_renamed_ones_are_not():
    order = [4, 2, 0, 3, 1]
    s = score(table([[r[i] for i in order] for r in GOLD], header=[HEADER[i].upper() + " " for i in order]))
    assert s.success == 1.0
    renamed = ["Company", "Sector", "Founded", "Employees", "Website"]
    s = score(table(GOLD, header=renamed))
    assert s.success == 0 and s.correct_rows == 0 and s.item_precision == pytest.approx(12 / 15)


def test_number_and_date_tolerances():
    rows = [r[:] for r in GOLD]
    rows[1][3] = "1,150 employees"  # within 10%
    rows[1][2] = "May 20, 2009"  # 22 days off
    assert score(table(rows)).success == 1.0
    rows[1][3] = "1,500"  # 25% off
    assert score(table(rows)).correct_rows == 2
    rows[1][3] = "1200"
    rows[1][2] = "2009-06-10"  # 43 days off
    assert score(table(rows)).correct_rows == 2
    rows[1][2] = "28 April 2009"
    rows[1][4] = "orroshes.example/about"  # same host
    assert score(table(rows)).success == 1.0


def test_no_table():
    s = score("I could not find any companies matching the request.")
    assert not s.parsed and s.success == 0 and s.item_f1 == 0 and s.row_f1 == 0 and s.gold_rows == 3
    assert parse_table("| just one line |") is None
    avg = average([score(table(GOLD)), s])
    assert avg["success"] == 0.5 and avg["tasks"] == 2


def _task_folder(tmp_path, gold_rows):
    import csv
    import json

    d = tmp_path / "tasks"
    (d / "gold").mkdir(parents=True)
    (d / "tasks.jsonl").write_text(json.dumps({"instance_id": "ws_1", "query": "List the companies...", "language": "en",
                                               "evaluation": EVAL.model_dump()}) + "\n")
    with open(d / "gold" / "ws_1.csv", "w", newline="") as f:
        csv.writer(f).writerows([HEADER, *gold_rows])
    return d


def test_score_files_and_cli_with_world_aliases(tmp_path, demo_world):
    import json

    from typer.testing import CliRunner

    from worldforge.cli import app

    with demo_world.connect() as con:
        named = con.sql("SELECT c.name, a.alias, c.industry, strftime(c.founded, '%Y-%m-%d'), CAST(c.employees AS VARCHAR), c.website "
                        "FROM company c JOIN aliases a ON a.entity_id = c.id AND a.kind = 'short' ORDER BY c.id LIMIT 3").fetchall()
    gold = [[n, ind, f, e, w] for n, _, ind, f, e, w in named]
    tasks = _task_folder(tmp_path, gold)
    by_alias = [[a, ind, f, e, w] for _, a, ind, f, e, w in named]
    resp = tmp_path / "responses.jsonl"
    resp.write_text(json.dumps({"instance_id": "ws_1", "response": table(by_alias)}) + "\n")
    runner = CliRunner()
    r = runner.invoke(app, ["score", str(tasks), str(resp), "--world", str(demo_world.path), "--json", str(tmp_path / "s.json")])
    assert r.exit_code == 0, r.output
    out = json.loads((tmp_path / "s.json").read_text())
    assert out["average"]["success"] == 1.0 and out["tasks"][0]["item_f1"] == 1.0
    r = runner.invoke(app, ["score", str(tasks), str(resp), "--json", str(tmp_path / "s.json")])  # no aliases: keys miss
    assert r.exit_code == 0 and json.loads((tmp_path / "s.json").read_text())["average"]["success"] == 0.0
    # Bad input: each a clear message and exit 1.
    bad = tmp_path / "bad.jsonl"
    for text, msg in (('{"instance_id": "ws_1", "response": "x"}\n{oops\n', "bad.jsonl:2: not valid JSON"),
                      ('{"instance_id": "ws_9", "response": "x"}\n', "name no task"),
                      ('["ws_1"]\n', "needs an object with an 'instance_id'")):
        bad.write_text(text)
        r = runner.invoke(app, ["score", str(tasks), str(bad)])
        assert r.exit_code == 1 and msg in r.output and "Traceback" not in r.output, r.output
    r = runner.invoke(app, ["score", str(tmp_path / "nowhere"), str(resp)])
    assert r.exit_code == 1 and "not a task folder" in r.output
    (tasks / "gold" / "ws_1.csv").unlink()
    r = runner.invoke(app, ["score", str(tasks), str(resp)])
    assert r.exit_code == 1 and "no gold table" in r.output
