"""The shape of a task set, side by side with WideSearch's published figures.

`distribution(tasks_dir)` measures the generated tasks (row counts and their buckets,
columns, keys, rank tables, column metrics, question length, constant and container
columns, entity types, multi-hop answer types, splits); `reference()` loads WideSearch's
figures shipped with the package (`widesearch_reference.json`, with their source);
`comparison_rows` lines them up for `worldforge tasks --report`.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from importlib import resources
from pathlib import Path

from ..language import get as get_language
from ..records import Shape
from .banks import question_bank
from .multihop import nested_of
from .scoring import GOLD_DIR, TASKS_FILE, norm_column, read_gold_csv
from .table import ROUND_TOP

BUCKETS = ("<10", "10-19", "20-49", "50-99", ">=100")


def reference() -> dict:
    """WideSearch's figures (package data), with their `source`."""
    return json.loads(resources.files("worldforge.tasks").joinpath("widesearch_reference.json").read_text())


def _bucket(n: int) -> str:
    return "<10" if n < 10 else "10-19" if n < 20 else "20-49" if n < 50 else "50-99" if n < 100 else ">=100"


def _metric(entry: dict) -> str:
    m = entry.get("metric") or ["exact_match"]
    return m[0]


def distribution(tasks_dir: str | Path, records: list[dict] | None = None) -> dict:
    """Figures of a tasks folder (`tasks.jsonl` and `gold/`)."""
    d = Path(tasks_dir)
    if records is None:
        records = [json.loads(x) for x in (d / TASKS_FILE).read_text().splitlines() if x.strip()]
    tables = [r for r in records if r.get("kind") == Shape.TABLE]
    multi = [r for r in records if r.get("kind") == Shape.MULTIHOP]
    out: dict = {"tasks": len(records), "tables": len(tables), "multihop": len(multi)}
    if tables:
        rows = [r["difficulty"]["rows"] for r in tables]
        cols = [r["difficulty"]["columns"] for r in tables]
        out["rows"] = {"mean": statistics.mean(rows), "median": statistics.median(rows), "min": min(rows), "max": max(rows)}
        b = Counter(_bucket(n) for n in rows)
        out["row_buckets"] = {k: b[k] / len(tables) for k in BUCKETS}
        out["columns"] = {"mean": statistics.mean(cols), "min": min(cols), "max": max(cols)}
        out["cells_mean"] = statistics.mean(r * c for r, c in zip(rows, cols))
        out["composite_keys"] = sum(len(r["evaluation"]["unique_columns"]) > 1 for r in tables) / len(tables)
        out["time_keyed"] = sum(_time_keyed(r) for r in tables) / len(tables)
        out["rank_tasks"] = sum("rank" in r.get("column_roles", []) for r in tables) / len(tables)
        metrics = Counter(_metric(e) for r in tables for e in r["evaluation"]["eval_pipeline"].values())
        total = sum(metrics.values())
        out["column_metrics"] = {k: v / total for k, v in sorted(metrics.items())}
        q = [len(r["query"]) for r in tables]
        out["query_chars"] = {"mean": statistics.mean(q), "min": min(q), "max": max(q)}
        out["shapes"] = dict(sorted(Counter(r.get("shape", "filter") for r in tables).items()))
        out["entity_types"] = dict(Counter(r["entity_type"] for r in tables).most_common())
        out["container_columns"] = {
            "tables_with_any": sum(r["difficulty"].get("container_columns", 0) > 0 for r in tables),
            "tables_with_more_than_one": sum(r["difficulty"].get("container_columns", 0) > 1 for r in tables)}
        out.update(_constant_columns(d, tables))
        out["tables_with_linked_attributes"] = sum(r["difficulty"].get("linked_attributes", 0) > 0 for r in tables) / len(tables)
        shares = sorted(r["difficulty"]["rows"] / r["difficulty"]["candidates"] for r in tables if r["difficulty"].get("candidates"))
        if shares:  # a ranked table's rows as a share of the entities they are ranked among
            out["top_share"] = {"median": statistics.median(shares), "max": shares[-1]}
    langs = Counter(r.get("language", "en") for r in records)
    out["languages"] = {k: v / len(records) for k, v in sorted(langs.items())} if records else {}
    if multi:
        ans = Counter(r.get("answer_type") or "?" for r in multi)
        out["multihop_answer_types"] = dict(ans.most_common())
        out["multihop_top_answer_share"] = ans.most_common(1)[0][1] / len(multi)
        out["multihop_start_types"] = dict(Counter(r["entity_type"] for r in multi).most_common())
        # a sentence nesting three "of the" ("the calling code of the country of the birthplace of X"),
        # or three 的 in Chinese; a named start's own words are not counted (`multihop.nested_of`)
        def named_out(q: str, names: list) -> str:
            for n in sorted(map(str, names), key=len, reverse=True):
                q = q.replace(n, "X")
            return q

        out["multihop_three_of"] = sum(any(nested_of(x) >= 3 for x in re.split(
            r"(?<=[.?!。？！])\s*", named_out(r["query"], r.get("constraint_values") or []))) for r in multi) / len(multi)
    if records:
        out.update(_wording(records, tables))
        out["format_mismatch"] = format_mismatches(d, records)
    splits = Counter(r.get("split", "train") for r in records)
    out["splits"] = dict(sorted(splits.items()))
    return out


def _wording(records: list[dict], tables: list[dict]) -> dict:
    """How the questions read as a set (issue 58): the share of the most said opening sentence in
    each language (a form letter repeats a few), the questions that say what to write for a missing
    value, and the ranked tables whose top N is no number a person picks ("the 39 largest")."""
    firsts: dict[str, Counter] = {}
    missing = 0
    for r in records:
        lang = r.get("language") or "en"
        first = get_language(lang).reading.sentences.split(r["query"].strip(), maxsplit=1)[0]
        firsts.setdefault(lang, Counter())[first] += 1
        missing += question_bank(lang)["missing"] in r["query"]
    hints = sum(bool(HINTS.search(r["query"])) for r in records)
    named = [[str(c.get("value")) for c in (r["question"].get("conditions") or []) if c.get("test") == "entity"]
             for r in tables if isinstance(r.get("question"), dict)]
    tops = [r["question"]["rank"]["n"] for r in tables if isinstance(r.get("question"), dict) and r["question"].get("rank")]
    return {"openings": {lang: {"distinct": len(c), "top_share": c.most_common(1)[0][1] / sum(c.values())}
                         for lang, c in sorted(firsts.items())},
            "missing_value_note": missing / len(records), "difficulty_hints": hints,
            "restated_conditions": sum(len(x) != len(set(x)) for x in named),
            "top_n_off_round": sum(n not in ROUND_TOP for n in tops), "top_n_tables": len(tops),
            "domain_rules": {k: v for k, v in sorted(Counter(filter(None, map(domain_rule, tables))).items())},
            "domain_rule_share": sum(1 for r in tables if domain_rule(r)) / max(1, len(tables))}


# Sentences that give the difficulty away, which the agent is to find out for itself (issue 58:
# "Lists on one site may be incomplete, so check beyond the first list you find.").
HINTS = re.compile(r"may be incomplete|check beyond|lists? on one site|more than one source|不完整，|不要只看|可能不全")
_NUMBER = re.compile(r"^-?\d[\d,]*(?:\.\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_YEAR = re.compile(r"^\d{4}$")


def _fits(cell: str, kind: str, base: str | None, agg: str | None, attr: str | None) -> bool:
    """Whether a gold cell is what its column's format says it holds (`wording.hint`): a rank or
    a count a whole number, a latest-year column or a tenure's start and end a year ('present'
    too), a date YYYY-MM-DD, a number a number, an entity's name no bare number (a text
    attribute, a shirt number say, is asked with no format)."""
    if base == "rank" or agg == "count":
        return cell.replace(",", "").isdigit()
    if (base == "link" and attr in ("start", "end")) or agg == "latest":
        return bool(_YEAR.match(cell)) or (attr == "end" and not _NUMBER.match(cell))
    if kind == "date":
        return bool(_DATE.match(cell))
    if kind == "number":
        return bool(_NUMBER.match(cell))
    return attr is not None or not _NUMBER.match(cell)


def format_mismatches(tasks_dir: Path, records: list[dict]) -> int:
    """Answer columns whose gold contradicts the format the question asks for (issue 58: "the
    type of ... (the name as written)", "the teams of ... (a plain number)"): a table column or
    a multi-hop answer with a non-empty gold cell its format does not fit."""
    bad = 0
    for r in records:
        q = r.get("question") if isinstance(r.get("question"), dict) else {}
        path = Path(tasks_dir) / GOLD_DIR / f"{r['instance_id']}.csv"
        if not path.is_file():
            continue
        _, rows = read_gold_csv(path.read_text(encoding="utf-8"))
        if r.get("kind") == Shape.MULTIHOP:
            specs = [(len(r["columns"]) - 1, r.get("answer_kind") or "string", None, None, None)]
        else:
            specs = [(i, c.get("kind"), c.get("base"), c.get("agg"), c.get("attribute"))
                     for i, c in enumerate(q.get("columns") or [])]
        for i, kind, base, agg, attr in specs:
            if kind in ("list", "url") and base != "rank":
                continue
            if any(i < len(row) and row[i] and row[i] != "unknown" and not _fits(row[i], kind, base, agg, attr)
                   for row in rows):
                bad += 1
    return bad


def domain_rule(record: dict) -> str | None:
    """The domain rule a table task states, which its gold applies (issue 58): `living` (only
    those alive or still in existence on its date), `current` or `ended` (only the tenures under
    way, or only those ended); None."""
    q = record.get("question")
    if not isinstance(q, dict):
        return None
    if any(c.get("rule") for c in q.get("conditions") or []):
        return "living"
    return q.get("tenure_rule")


def _time_keyed(r: dict) -> bool:
    """A key column holding a year or a date (a season, a start year)."""
    pipe = r["evaluation"]["eval_pipeline"]
    return any(_metric(pipe[norm_column(k)]) in ("number_near", "date_near") for k in r["evaluation"]["unique_columns"])


def _constant_columns(d: Path, tables: list[dict]) -> dict:
    """Value cells in columns whose value is the same on every row, and tables where every
    value column is so (from the gold files)."""
    cells = const_cells = all_const = 0
    for r in tables:
        f = d / GOLD_DIR / f"{r['instance_id']}.csv"
        if not f.is_file():
            continue
        header, rows = read_gold_csv(f.read_text())
        keys = {norm_column(k) for k in r["evaluation"]["unique_columns"]}
        value_cols = [i for i, h in enumerate(header) if norm_column(h) not in keys]
        consts = [i for i in value_cols if len(rows) > 1 and len({row[i] for row in rows}) == 1]
        cells += len(value_cols) * len(rows)
        const_cells += len(consts) * len(rows)
        all_const += bool(value_cols) and len(consts) == len(value_cols)
    return {"constant_value_cells": const_cells / cells if cells else 0.0, "tables_all_constant": all_const}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def comparison_rows(mine: dict, ref: dict) -> list[tuple[str, str, str]]:
    """(measure, WideSearch, generated) rows for the report table."""
    out: list[tuple[str, str, str]] = []

    def add(name: str, theirs: str, ours: str) -> None:
        out.append((name, theirs, ours))

    add("tasks", f"{ref['tasks']} ({ref['measured_tasks']} English measured)",
        f"{mine['tasks']:,} ({mine['tables']:,} tables, {mine['multihop']:,} multi-hop)")
    if mine.get("tables"):
        r, rr = mine["rows"], ref["rows"]
        add("rows per table", f"mean {rr['mean']}, median {rr['median']}, {rr['min']}-{rr['max']}",
            f"mean {r['mean']:.1f}, median {r['median']:g}, {r['min']}-{r['max']}")
        add("row buckets " + "/".join(BUCKETS), " / ".join(f"{100 * ref['row_buckets'][b]:.0f}" for b in BUCKETS) + " %",
            " / ".join(f"{100 * mine['row_buckets'][b]:.0f}" for b in BUCKETS) + " %")
        c, rc = mine["columns"], ref["columns"]
        add("columns", f"mean {rc['mean']}, {rc['min']}-{rc['max']}", f"mean {c['mean']:.1f}, {c['min']}-{c['max']}")
        add("cells per table (mean)", f"{ref['cells_mean']}", f"{mine['cells_mean']:.0f}")
        add("composite keys", "often", _pct(mine["composite_keys"]))
        add("keyed by a year or date", "about half", _pct(mine["time_keyed"]))
        add("rank / top-N tables", f"{round(ref['rank_tasks'] * ref['measured_tasks'])} of {ref['measured_tasks']} "
            f"({_pct(ref['rank_tasks'])})", _pct(mine["rank_tasks"]))
        m = mine["column_metrics"]
        rm = ref["column_metrics"]
        add("column metrics: number / date / exact / free text or lists",
            f"{_pct(rm['number_near'])} / {_pct(rm['date_near'])} / {_pct(rm['exact_match'])} / {_pct(rm['llm_judge'])}",
            f"{_pct(m.get('number_near', 0))} / {_pct(m.get('date_near', 0))} / {_pct(m.get('exact_match', 0))} / "
            f"{_pct(m.get('llm_judge', 0) + m.get('set_match', 0))}" + (f" (+ url {_pct(m['url_match'])})" if m.get("url_match") else ""))
        q, rq = mine["query_chars"], ref["query_chars"]
        add("question length (characters)", f"mean {rq['mean']}, {rq['min']}-{rq['max']}", f"mean {q['mean']:.0f}, {q['min']}-{q['max']}")
        add("value cells in constant columns", "-", _pct(mine["constant_value_cells"]))
        add("tables whose every value column is constant", "-", f"{mine['tables_all_constant']}")
        cc = mine["container_columns"]
        add("tables with a column about a shared container (more than one)", "-",
            f"{cc['tables_with_any']} ({cc['tables_with_more_than_one']})")
        if "top_share" in mine:
            add("top N of a ranked table, as a share of the entities ranked (median, max)", "small (top 5, top 10)",
                f"{_pct(mine['top_share']['median'])}, {_pct(mine['top_share']['max'])}")
        add("tables with an attribute of a linked entity (all from the packs' linked_columns)", "-",
            _pct(mine.get("tables_with_linked_attributes", 0)))
        add("table shapes", "-", ", ".join(f"{k} {v}" for k, v in mine["shapes"].items()))
        add("entity types (tables)", "-", ", ".join(f"{k} {v}" for k, v in mine["entity_types"].items()))
    add("languages", ", ".join(f"{k} {_pct(v)}" for k, v in ref["languages"].items()),
        ", ".join(f"{k} {_pct(v)}" for k, v in mine["languages"].items()))
    if mine.get("multihop"):
        add("multi-hop answer types", "-", f"top {_pct(mine['multihop_top_answer_share'])}: "
            + ", ".join(f"{k} {v}" for k, v in mine["multihop_answer_types"].items()))
        add("multi-hop start types", "-", ", ".join(f"{k} {v}" for k, v in mine["multihop_start_types"].items()))
        if "multihop_three_of" in mine:
            add("multi-hop questions with a sentence nesting three \"of the\"", "-", _pct(mine["multihop_three_of"]))
    if "openings" in mine:
        add("most said opening sentence, share of questions (per language)", "-",
            ", ".join(f"{k} {_pct(v['top_share'])} ({v['distinct']} openings)" for k, v in mine["openings"].items()))
        add("questions saying what to write for a missing value", "-", _pct(mine["missing_value_note"]))
        add(f"top N not in {', '.join(map(str, ROUND_TOP[:9]))}", "-", f"{mine['top_n_off_round']} of {mine['top_n_tables']}")
        add("table tasks with a domain rule that changes the gold", "a share (\"U.S. market only\", \"standard range only\")",
            f"{_pct(mine['domain_rule_share'])} (" + ", ".join(f"{k} {v}" for k, v in mine["domain_rules"].items()) + ")")
    add("splits", "-", ", ".join(f"{k} {v}" for k, v in mine["splits"].items()))
    return out
