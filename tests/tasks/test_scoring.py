"""The WideSearch scorer: the gold table scores 1.0, and each kind of damage moves the
score the way WideSearch's metrics say it should, in both modes. Then one test per way the
default mode follows WideSearch's own evaluator (ByteDance-Seed/WideSearch, src/evaluation/)
where the lenient mode does not, and the two places where both follow WideSearch's metric
definitions instead of its evaluator code."""

from __future__ import annotations

import re

import pytest

from worldforge.tasks.scoring import MODES, Evaluation, average, parse_table, score_table

EVAL = Evaluation(
    unique_columns=["company"],
    required=["company", "industry", "founded", "employees", "website"],
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
ALIASES = {"tisfaan": "tisfaanpharmaceuticals", "tp": "tisfaanpharmaceuticals", "om": "orroshesmotors"}
ALL = (1.0,) * 6
ZERO = (0.0,) * 6


def table(rows, header=HEADER, fenced=True):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    body = "\n".join(lines)
    return f"Here is the table:\n\n```markdown\n{body}\n```\n" if fenced else f"Sure.\n{body}\nDone."


def score(response, mode="widesearch", evaluation=EVAL, header=HEADER, gold=GOLD):
    return score_table("t1", evaluation, header, gold, response, ALIASES, mode=mode)


def metrics(s):
    return (s.row_precision, s.row_recall, s.row_f1, s.item_precision, s.item_recall, s.item_f1)


def edit(rows=GOLD, **cells):
    """A copy of `rows` with cells replaced: edit(r1c2="x") sets row 1, column 2."""
    out = [r[:] for r in rows]
    for rc, v in cells.items():
        r, c = rc[1:].split("c")
        out[int(r)][int(c)] = v
    return out


# --------------------------------------------------------------------------- invariants, both modes


@pytest.mark.parametrize("mode", MODES)
def test_gold_scores_one_in_either_table_form(mode):
    for fenced in (True, False):
        s = score(table(GOLD, fenced=fenced), mode)
        assert s.parsed and s.columns_match and s.success == 1.0 and metrics(s) == ALL


@pytest.mark.parametrize("mode", MODES)
def test_dropped_and_extra_rows(mode):
    s = score(table(GOLD[:2]), mode)
    assert s.success == 0 and s.row_precision == 1.0 and s.row_recall == pytest.approx(2 / 3)
    assert s.item_precision == 1.0 and s.item_recall == pytest.approx(2 / 3)
    extra = GOLD + [["Nova Works", "media", "2001-01-01", "10", "https://nova.example"]]
    s = score(table(extra), mode)
    assert s.success == 0 and s.row_recall == 1.0 and s.row_precision == pytest.approx(3 / 4)
    assert s.item_recall == 1.0 and s.item_precision == pytest.approx(15 / 20)
    # A repeated row counts once.
    assert score(table(GOLD + [GOLD[0]]), mode).success == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_one_wrong_cell(mode):
    s = score(table(edit(r1c1="finance")), mode)
    assert s.success == 0 and s.correct_rows == 2 and s.row_recall == pytest.approx(2 / 3)
    assert s.item_precision == pytest.approx(14 / 15) and s.item_recall == pytest.approx(14 / 15)


@pytest.mark.parametrize("mode", MODES)
def test_key_written_with_an_alias_still_aligns(mode):
    assert score(table(edit(r0c0="Tisfaan")), mode).success == 1.0
    assert score(table(edit(r0c0="**TP**")), mode).success == 1.0
    s = score(table(edit(r0c0="Tisfaan Pharma")), mode)  # not an alias: that row is missing and an extra row appears
    assert s.matched_rows == 2 and s.row_precision == pytest.approx(2 / 3) and s.row_recall == pytest.approx(2 / 3)


@pytest.mark.parametrize("mode", MODES)
def test_reordered_columns_and_header_case_are_fine(mode):
    order = [4, 2, 0, 3, 1]
    s = score(table([[r[i] for i in order] for r in GOLD], header=[HEADER[i].upper() + " " for i in order]), mode)
    assert s.success == 1.0 and s.columns_match


@pytest.mark.parametrize("mode", MODES)
def test_number_and_date_tolerances(mode):
    rows = edit(r1c3="1,150 employees", r1c2="May 20, 2009")  # within 10%; 22 days off
    assert score(table(rows), mode).success == 1.0
    assert score(table(edit(rows, r1c3="1,500")), mode).correct_rows == 2  # 25% off
    assert score(table(edit(r1c2="2009-06-10")), mode).correct_rows == 2  # 43 days off
    assert score(table(edit(r1c2="28 April 2009", r1c4="https://orroshes.example/about")), mode).correct_rows >= 2


@pytest.mark.parametrize("mode", MODES)
def test_no_table(mode):
    s = score("I could not find any companies matching the request.", mode)
    assert not s.parsed and s.success == 0 and s.item_f1 == 0 and s.row_f1 == 0 and s.gold_rows == 3
    assert parse_table("| just one line |", mode) is None
    avg = average([score(table(GOLD), mode), s])
    assert avg["success"] == 0.5 and avg["tasks"] == 2


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="unknown scoring mode"):
        score(table(GOLD), "strict")


# --------------------------------------------------------------------------- where the modes differ


def test_extra_column_scores_zero_in_widesearch_partial_in_lenient():
    rows = [r + ["yes"] for r in GOLD]
    s = score(table(rows, header=HEADER + ["Public"]))
    assert s.parsed and not s.columns_match and s.success == 0 and metrics(s) == ZERO and s.predicted_rows == 3
    s = score(table(rows, header=HEADER + ["Public"]), "lenient")  # the extra column is ignored
    assert s.success == 1.0 and metrics(s) == ALL
    # Two columns under one name are not the required column set either.
    s = score(table([r + [r[1]] for r in GOLD], header=HEADER + ["industry"]))
    assert not s.columns_match and metrics(s) == ZERO


def test_missing_or_renamed_column_scores_zero_in_widesearch_partial_in_lenient():
    s = score(table([r[:4] for r in GOLD], header=HEADER[:4]))
    assert not s.columns_match and s.success == 0 and metrics(s) == ZERO
    s = score(table([r[:4] for r in GOLD], header=HEADER[:4]), "lenient")  # the missing cells score 0
    assert s.correct_rows == 0 and s.item_precision == pytest.approx(12 / 15) and s.row_f1 == 0
    renamed = ["Company", "Sector", "Founded", "Employees", "Website"]
    assert metrics(score(table(GOLD, header=renamed))) == ZERO
    s = score(table(GOLD, header=renamed), "lenient")
    assert s.success == 0 and s.correct_rows == 0 and s.item_precision == pytest.approx(12 / 15)


def test_first_table_scored_in_widesearch_last_in_lenient():
    response = f"A first draft:\n{table(GOLD[:1])}\nand the full answer:\n{table(GOLD)}"
    s = score(response)  # the draft
    assert s.predicted_rows == 1 and s.row_precision == 1.0 and s.row_recall == pytest.approx(1 / 3)
    assert score(response, "lenient").success == 1.0
    # Two bare tables: the first, or the last.
    two = f"{table(GOLD[:2], fenced=False)}\n\n{table(GOLD, fenced=False)}"
    assert score(two).predicted_rows == 2 and score(two, "lenient").success == 1.0
    # A ```markdown block comes before a bare table, wherever it is (as WideSearch reads it).
    assert score(f"{table(GOLD[:1], fenced=False)}\n{table(GOLD)}").success == 1.0
    # The first ```markdown block is the table, even without one (then nothing scores); no markdown block:
    # the run of pipe lines around the response's pipes.
    assert score("```markdown\n# Notes\n```\n" + table(GOLD, fenced=False)).item_f1 == 0.0
    assert score("```\n" + table(GOLD, fenced=False) + "\n```").success == 1.0
    # Inside a ```markdown block a table needs no outer pipes (WideSearch reads every line with one); outside, it does.
    bare = "\n".join(" | ".join(r) for r in [HEADER, ["---"] * 5, *GOLD])
    assert score(f"```markdown\n{bare}\n```").success == 1.0 and score(bare).item_f1 == 0.0


def test_dates_read_like_dateparser_in_widesearch():
    # Gold 2009-04-28: dateparser (WideSearch's reader, PREFER_DAY_OF_MONTH=first) reads month-first and
    # day-first numbers, a month without a day as its 1st, weekday names and ordinals; lenient reads ISO and named
    # months only.
    for accepted in ("04/28/2009", "28/04/2009", "April 2009", "Apr. 2009", "2009-04", "Tuesday, April 28th, 2009",
                     "the 28th of April, 2009", "2009/4/28", "2009-04-28T10:00:00Z", "2009年4月28日"):
        assert score(table(edit(r1c2=accepted))).success == 1.0, accepted
    for rejected in ("July 1869", "04/28/2010", "March 2009", "2009-06-10", "2009年4月28号"):  # wrong, > 31 days off, unread
        assert score(table(edit(r1c2=rejected))).correct_rows == 2, rejected
    for cell in ("04/28/2009", "April 2009"):
        assert score(table(edit(r1c2=cell)), "lenient").correct_rows == 2, cell
    # The brief's cases, against gold 1869-07-17.
    gold = edit(r1c2="1869-07-17")
    for cell, ok in (("07/17/1869", True), ("July 1869", True), ("17/07/1869", True), ("August 1869", True),
                     ("September 1869", False), ("07/17/1896", False)):
        assert score(table(edit(gold, r1c2=cell)), gold=gold).success == float(ok), cell


def test_alias_in_a_non_key_column_only_in_lenient():
    ev = Evaluation(unique_columns=["product"], required=["product", "maker"], eval_pipeline={
        "product": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "maker": {"preprocess": ["norm_str"], "metric": ["exact_match"]}})
    header, gold = ["Product", "Maker"], [["Wyn C670", "Tisfaan Pharmaceuticals"], ["Wyn C680", "Orroshes Motors"]]
    resp = table([["Wyn C670", "TP"], ["Wyn C680", "Orroshes Motors"]], header=header)
    s = score(resp, evaluation=ev, header=header, gold=gold)
    assert s.success == 0 and s.correct_rows == 1 and s.item_precision == pytest.approx(3 / 4)
    assert score(resp, "lenient", evaluation=ev, header=header, gold=gold).success == 1.0


def test_url_needs_a_scheme_in_widesearch():
    cases = (("orroshes.example/about", 0.0, 1.0),  # no scheme: no URL for WideSearch
             ("www.orroshes.example", 0.0, 1.0),
             ("https://www.orroshes.example/about", 1.0, 1.0),  # same host, another path
             ("HTTP://WWW.Orroshes.example", 0.0, 1.0),  # host names compared as written (WideSearch's netloc)
             ("https://orroshes.example", 0.0, 1.0),  # another host name (lenient drops www.)
             ("see https://www.orroshes.example and https://x.example", 0.0, 0.0))  # another set of hosts
    for cell, ws, lenient in cases:
        assert score(table(edit(r1c4=cell))).success == ws, cell
        assert score(table(edit(r1c4=cell)), "lenient").success == lenient, cell


def test_other_widesearch_metric_rules():
    from worldforge.tasks.scoring import METRICS, PREPROCESS

    ws, le = METRICS["widesearch"], METRICS["lenient"]
    num = PREPROCESS["widesearch"]["extract_number"]
    assert num("1,200 employees") == "1200" and num("+12.5% growth") == "+12.5%" and num("unknown") == "NULL"
    assert ws["number_near"](num("12%"), num("0.12"), 0.0) == 1.0  # a percentage is divided by 100
    assert ws["number_near"](num("n/a"), num("unknown"), 0.01) == 1.0  # neither holds a number: equal as WideSearch
    assert le["number_near"]("n/a", "unknown", 0.01) == 0.0
    assert ws["date_near"]("unknown", "Unknown") == 1.0 and ws["date_near"]("unknown", "n/a") == 0.0
    assert ws["in_match"]("Acme", "Acme Corp") == 1.0 and ws["in_match"]("Acme Corp", "Acme") == 0.0
    assert le["in_match"]("Acme Corp", "Acme") == 1.0
    assert ws["url_match"]("none", "n/a") == 1.0 and le["url_match"]("none", "n/a") == 0.0  # same (empty) set of hosts
    # A column with two metrics: the row needs both in WideSearch mode (each metric is an item), either in lenient.
    ev = Evaluation(unique_columns=["company"], required=["company", "industry"], eval_pipeline={
        "company": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "industry": {"preprocess": ["norm_str"], "metric": ["exact_match", "in_match"]}})
    gold = [["Velkor Labs", "energystorage"]]
    resp = table([["Velkor Labs", "energy"]], header=["Company", "Industry"])
    s = score(resp, evaluation=ev, header=["Company", "Industry"], gold=gold)
    assert s.row_precision == 0.0 and s.item_precision == 1.0  # 2 of 2 "items": the key, and in_match (exact_match missed)
    assert score(resp, "lenient", evaluation=ev, header=["Company", "Industry"], gold=gold).success == 1.0


def test_keys_align_after_their_columns_preprocess_in_widesearch():
    ev = Evaluation(unique_columns=["season"], required=["season", "champion"], eval_pipeline={
        "season": {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0},
        "champion": {"preprocess": ["norm_str"], "metric": ["exact_match"]}})
    header, gold = ["Season", "Champion"], [["2019", "Velkor Labs"], ["2020", "Orroshes Motors"]]
    resp = table([["2019 season", "Velkor Labs"], ["2020 season", "Orroshes Motors"]], header=header)
    assert score(resp, evaluation=ev, header=header, gold=gold).success == 1.0  # WideSearch joins preprocessed keys
    assert score(resp, "lenient", evaluation=ev, header=header, gold=gold).matched_rows == 0


# --------------------------------------------------------------------------- WideSearch's evaluator over its metric definitions


def test_duplicate_row_differing_only_in_key_case():
    # WideSearch drops duplicates before normalising keys, so "VELKOR LABS" stays a second row that joins the same
    # gold row: row recall 4/3 (and success 0). Lenient mode keeps the first spelling only.
    dup = table(GOLD + [["VELKOR LABS", "energy", "1998-01-15", "87", "https://www.velkor.example"]])
    s = score(dup)
    assert s.success == 0.0 and s.predicted_rows == 4 and s.row_recall == pytest.approx(4 / 3) and s.row_precision == 1.0
    s = score(dup, "lenient")
    assert s.success == 1.0 and s.predicted_rows == 3 and metrics(s) == ALL
    s = score(table([["VELKOR LABS", "media", "1998-01-15", "87", "https://www.velkor.example"]] + GOLD), "lenient")
    assert s.row_recall == pytest.approx(2 / 3) and s.row_precision == pytest.approx(2 / 3)


def test_blank_cell_in_an_integer_column():
    # WideSearch reads the response through pandas: one blank cell turns an integer column into floats ("1.0"), so
    # every cell of that exact_match column misses. Lenient mode costs the blank cell only.
    ev = Evaluation(unique_columns=["company"], required=["company", "rank", "industry"], eval_pipeline={
        "company": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "rank": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "industry": {"preprocess": ["norm_str"], "metric": ["exact_match"]}})
    header = ["Company", "Rank", "Industry"]
    gold = [["Tisfaan Pharmaceuticals", "1", "software"], ["Orroshes Motors", "2", "retail"], ["Velkor Labs", "3", "energy"]]
    s = score(table(edit(gold, r1c1=""), header=header), evaluation=ev, header=header, gold=gold)
    assert s.correct_rows == 0 and s.item_precision == pytest.approx(6 / 9)
    s = score(table(edit(gold, r1c1=""), header=header), "lenient", evaluation=ev, header=header, gold=gold)
    assert s.correct_rows == 2 and s.item_precision == pytest.approx(8 / 9) and s.item_recall == pytest.approx(8 / 9)


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
    assert out["mode"] == "widesearch" and "widesearch mode" in r.output
    r = runner.invoke(app, ["score", str(tasks), str(resp), "--json", str(tmp_path / "s.json")])  # no aliases: keys miss
    assert r.exit_code == 0 and json.loads((tmp_path / "s.json").read_text())["average"]["success"] == 0.0
    # An extra column: 0 by default (the table says so), the earlier partial credit with --lenient.
    resp.write_text(json.dumps({"instance_id": "ws_1", "response": table([r + ["x"] for r in gold], HEADER + ["Note"])}) + "\n")
    r = runner.invoke(app, ["score", str(tasks), str(resp), "--json", str(tmp_path / "s.json")])
    out = json.loads((tmp_path / "s.json").read_text())
    assert r.exit_code == 0 and out["average"]["item_f1"] == 0.0
    assert out["tasks"][0]["columns_match"] is False
    r = runner.invoke(app, ["score", str(tasks), str(resp), "--lenient", "--json", str(tmp_path / "s.json")])
    out = json.loads((tmp_path / "s.json").read_text())
    assert r.exit_code == 0 and out["mode"] == "lenient" and out["average"]["success"] == 1.0
    # Bad input: each a clear message and exit 1.
    bad = tmp_path / "bad.jsonl"
    for text, msg in (('{"instance_id": "ws_1", "response": "x"}\n{oops\n', "bad.jsonl:2: not valid JSON"),
                      ('{"instance_id": "ws_9", "response": "x"}\n', "name no task"),
                      ('["ws_1"]\n', "needs an object with an 'instance_id'")):
        bad.write_text(text)
        r = runner.invoke(app, ["score", str(tasks), str(bad)])
        assert r.exit_code == 1 and msg in r.output and "Traceback" not in r.output, r.output
    task = json.loads((tasks / "tasks.jsonl").read_text())
    task["evaluation"]["eval_pipeline"]["industry"]["metric"] = ["llm_judge"]
    (tasks / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    r = runner.invoke(app, ["score", str(tasks), str(resp)])
    assert r.exit_code == 1 and "'llm_judge' is not a step this scorer has" in r.output, r.output
    r = runner.invoke(app, ["score", str(tmp_path / "nowhere"), str(resp)])
    assert r.exit_code == 1 and "not a task folder" in r.output
    (tasks / "gold" / "ws_1.csv").unlink()
    r = runner.invoke(app, ["score", str(tasks), str(resp)])
    assert r.exit_code == 1 and "no gold table" in r.output


# --------------------------------------------------------------------------- lists inside cells


LIST_EVAL = Evaluation(
    unique_columns=["company"], required=["company", "founders", "ceountil"],
    eval_pipeline={
        "company": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        # as worldforge writes a list column: WideSearch's llm_judge, with the deterministic stand-in
        "founders": {"preprocess": [], "metric": ["llm_judge"], "llm_free": "set_match",
                     "criterion": "the same founders, in any order"},
        "ceountil": {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.0},
    })
LIST_HEADER = ["Company", "Founders", "CEO until"]
LIST_GOLD = [["Velkor Labs", "Ada Obi; Li Wen", "2011"], ["Orroshes Motors", "Sam Roe", "present"]]


@pytest.mark.parametrize("mode", MODES)
def test_list_cells_are_sets_of_items_in_both_modes(mode):
    def go(rows):
        return score(table(rows, LIST_HEADER), mode, LIST_EVAL, LIST_HEADER, LIST_GOLD)

    assert go(LIST_GOLD).success == 1.0
    same = [["Velkor Labs", "li wen, Ada  Obi", "2011"], ["Orroshes Motors", "Sam Roe", "present"]]
    assert go(same).success == 1.0  # another order, another separator, case and spacing
    assert go([["Velkor Labs", "Li Wen<br>Ada Obi", "2011"], LIST_GOLD[1]]).success == 1.0
    missing = go([["Velkor Labs", "Ada Obi", "2011"], LIST_GOLD[1]])
    extra = go([["Velkor Labs", "Ada Obi; Li Wen; Sam Roe", "2011"], LIST_GOLD[1]])
    for s in (missing, extra):  # a list is right or wrong as a whole, as WideSearch's judge scores it
        assert s.success == 0.0 and s.item_precision == pytest.approx(5 / 6) and s.row_recall == 0.5
    # an open tenure: "present" is no number, and matches only itself (in both modes)
    assert go([LIST_GOLD[0], ["Orroshes Motors", "Sam Roe", "2025"]]).success == 0.0


def test_llm_judge_needs_a_stand_in(tmp_path):
    import json

    from worldforge.errors import WorldforgeError
    from worldforge.tasks.scoring import score_files, set_match

    assert set_match("A; B", "b,a") == 1.0 and set_match("A", "A; B") == 0.0 and set_match("", "") == 1.0
    plain = LIST_EVAL.model_dump()
    del plain["eval_pipeline"]["founders"]["llm_free"]
    for name, ev in (("free", LIST_EVAL.model_dump()), ("judge", plain)):
        d = tmp_path / name
        (d / "gold").mkdir(parents=True)
        (d / "tasks.jsonl").write_text(json.dumps({"instance_id": "t1", "query": "q", "language": "en", "evaluation": ev}) + "\n")
        (d / "gold" / "t1.csv").write_text("Company,Founders,CEO until\nVelkor Labs,Ada Obi; Li Wen,2011\n")
        (d / "r.jsonl").write_text(json.dumps({"instance_id": "t1", "response": table([LIST_GOLD[0]], LIST_HEADER)}) + "\n")
    scores, _ = score_files(tmp_path / "free", tmp_path / "free" / "r.jsonl")
    assert scores[0].success == 1.0
    with pytest.raises(WorldforgeError, match="llm_judge needs an LLM"):
        score_files(tmp_path / "judge", tmp_path / "judge" / "r.jsonl")


def test_hostile_score_inputs_are_clear_errors(tmp_path):
    """Ids that are not strings, bytes that are not UTF-8, JSON nested 100k deep, and a gold
    table cut short each stop with a message naming the file (they were tracebacks, or a
    truncated gold table silently scored as a smaller one)."""
    import json

    from typer.testing import CliRunner

    from worldforge.cli import app
    from worldforge.errors import WorldforgeError
    from worldforge.tasks.scoring import score_files

    gold = [["Velkor Labs", "software", "1999-04-01", "120", "https://www.velkor.example"],
            ["Arden, Inc", "retail", "2004-02-03", "80", "https://www.arden.example"]]
    tasks = _task_folder(tmp_path, gold)
    r = tmp_path / "r.jsonl"
    cases = [(json.dumps({"instance_id": ["ws_1"], "response": ""}).encode(), "must be a string, got list"),
             (json.dumps({"instance_id": {"a": 1}, "response": ""}).encode(), "must be a string, got dict"),
             (json.dumps({"instance_id": 5}).encode() + b"\n" + json.dumps({"instance_id": "zz"}).encode(), "must be a string, got int"),
             (b'{"instance_id": "ws_1", "response": "\xff\xfe"}', "not UTF-8 (byte 0xff"),
             (b"[" * 100_000 + b"]" * 100_000, "nested too deeply")]
    for body, words in cases:
        r.write_bytes(body)
        with pytest.raises(WorldforgeError, match=re.escape(words)):
            score_files(tasks, r)
        out = CliRunner().invoke(app, ["score", str(tasks), str(r)])
        assert out.exit_code != 0 and words in out.output and "Traceback" not in out.output, out.output
    r.write_text(json.dumps({"instance_id": "ws_1", "response": ""}) + "\n")
    text = (tasks / "gold" / "ws_1.csv").read_text()
    for cut, words in ((text[: text.index("retail") + 3], "line 3 has 2 cells, the header 5"),
                       (text.replace('"Arden, Inc"', '"Arden, Inc'), "not valid CSV"),
                       (text.replace('"Arden, Inc"', "Arden, Inc"), "line 3 has 6 cells")):
        (tasks / "gold" / "ws_1.csv").write_text(cut)
        with pytest.raises(WorldforgeError, match=re.escape(words)):
            score_files(tasks, r)


def test_a_gold_table_cut_at_a_row_boundary_is_caught_by_its_digest(tmp_path):
    """A gold CSV cut between rows is still valid CSV; the task folder's SHA256SUMS (written with
    every task folder, `sha256sum -c` format) catches it, and an edited cell too. Without the
    digest file the table scores as it is."""
    import json
    import shutil
    import subprocess

    from worldforge.errors import WorldforgeError
    from worldforge.tasks.scoring import SUMS_FILE, score_files, write_sums

    gold = [["Velkor Labs", "software", "1999-04-01", "120", "https://www.velkor.example"],
            ["Arden, Inc", "retail", "2004-02-03", "80", "https://www.arden.example"]]
    tasks = _task_folder(tmp_path, gold)
    write_sums(tasks)
    if shutil.which("sha256sum"):
        assert subprocess.run(["sha256sum", "-c", "--quiet", SUMS_FILE], cwd=tasks).returncode == 0
    r = tmp_path / "r.jsonl"
    r.write_text(json.dumps({"instance_id": "ws_1", "response": ""}) + "\n")
    score_files(tasks, r)
    text = (tasks / "gold" / "ws_1.csv").read_text()
    for damaged in (text[: text.index('"Arden')], text.replace("120", "121")):
        (tasks / "gold" / "ws_1.csv").write_text(damaged)
        with pytest.raises(WorldforgeError, match=r"ws_1\.csv does not match its digest in .*SHA256SUMS \(cut short or edited\?\)"):
            score_files(tasks, r)
    (tasks / SUMS_FILE).unlink()
    (tasks / "gold" / "ws_1.csv").write_text(text[: text.index('"Arden')])
    assert score_files(tasks, r)[0][0].gold_rows == 1
    with pytest.raises(WorldforgeError, match="holds the task folders tasks, not tasks of its own"):
        score_files(tmp_path, r)


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_past_the_row_limit_scores_zero_before_its_cells_are_read(mode, monkeypatch):
    """Ten times the gold's rows (at least 100): a degenerate answer is 0 at once, with the
    reason, and no date of it is read; a right answer padded with junk up to the limit still
    scores as its rows deserve, and junk rows that join no gold row cost no date reading."""
    from worldforge.tasks import widesearch as ws

    limit = ws.row_limit(len(GOLD))
    assert limit == 100
    junk = [[f"Junk {i}", "x", f"not a date {i}", "1", "https://j.example"] for i in range(limit)]
    parsed = []
    real = ws.parse_date.__wrapped__
    monkeypatch.setattr(ws, "parse_date", lambda c, a=None: parsed.append(c) or real(c, a))
    s = score(table(GOLD + junk), mode)
    assert metrics(s) == ZERO and s.predicted_rows == limit + len(GOLD) and "over the limit of 100" in s.note
    assert not any(c.startswith("not a date") for c in parsed)
    s = score(table(GOLD + junk[:limit - len(GOLD)]), mode)
    assert s.item_recall == 1.0 and 0 < s.item_precision < 0.05
    if mode == "widesearch":  # WideSearch reads every date of the joined rows only
        assert not any(c.startswith("not a date") for c in parsed)
