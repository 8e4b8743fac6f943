"""An LLM-free WideSearch scorer: parse the markdown table in a response, align its rows to
the gold table on the key columns (through the world's alias table, where WideSearch needs
an LLM), score every cell with the task's per-column pipeline, and report success, row-level
and item-level precision, recall and F1.

Semantics follow WideSearch's evaluation: column names are normalised (strip, lowercase,
no spaces); both tables are de-duplicated on the key; rows are inner-joined on the key and
key cells count as matched; a row is correct only if every cell scores 1; item true
positives are the sum of cell scores, over predicted rows x columns for precision and gold
rows x columns for recall; success means the whole table is right.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

# --------------------------------------------------------------------------- task evaluation spec


class ColumnEval(BaseModel):
    """One column's pipeline, as in WideSearch's `eval_pipeline`."""

    model_config = ConfigDict(extra="allow")
    preprocess: list[str] = []
    metric: list[str] = Field(default_factory=lambda: ["exact_match"])
    criterion: float | str | None = None


class Evaluation(BaseModel):
    """WideSearch's `evaluation` block of a task."""

    model_config = ConfigDict(extra="allow")
    unique_columns: list[str]
    required: list[str]
    eval_pipeline: dict[str, ColumnEval] = {}


def norm_column(name: str) -> str:
    return re.sub(r"\s+", "", str(name).strip().lower())


# --------------------------------------------------------------------------- preprocess and metrics

_NUM_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}


def norm_str(v: str) -> str:
    return re.sub(r"[\s*]+", "", str(v).strip().lower())


def extract_number(v: str) -> str:
    s = str(v)
    m = _NUM_RE.search(s.replace("\u2212", "-"))
    if not m:
        return s
    x = m.group(0).replace(",", "")
    return x + ("%" if s[m.end():m.end() + 1] == "%" else "")


def norm_date(v: str) -> str:
    d = parse_date(v)
    return d.isoformat() if d else str(v).strip()


def parse_date(v: str) -> dt.date | None:
    s = str(v).strip()
    m = re.search(r"(\d{4})-(\d{1,2})-(\d{1,2})", s) or re.search(r"(\d{4})/(\d{1,2})/(\d{1,2})", s)
    try:
        if m:
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        m = re.search(r"([A-Za-z]{3,})\.? (\d{1,2}),? (\d{4})", s)
        if m and m[1][:3].lower() in _MONTHS:
            return dt.date(int(m[3]), _MONTHS[m[1][:3].lower()], int(m[2]))
        m = re.search(r"(\d{1,2}) ([A-Za-z]{3,})\.?,? (\d{4})", s)
        if m and m[2][:3].lower() in _MONTHS:
            return dt.date(int(m[3]), _MONTHS[m[2][:3].lower()], int(m[1]))
    except ValueError:
        return None
    return None


PREPROCESS: dict[str, Callable[[str], str]] = {"norm_str": norm_str, "extract_number": extract_number, "norm_date": norm_date}


def _number(v: str) -> float | None:
    s = extract_number(v)
    try:
        return float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        return None


def exact_match(resp: str, gold: str, criterion=None) -> float:
    return float(str(resp).strip().lower() == str(gold).strip().lower())


def number_near(resp: str, gold: str, criterion=None) -> float:
    r, t = _number(resp), _number(gold)
    if r is None or t is None:
        return 0.0
    tol = float(criterion) if criterion not in (None, "") else 0.0
    return float(abs(r - t) <= abs(t) * tol + 1e-9)


def date_near(resp: str, gold: str, criterion=None) -> float:
    r, t = parse_date(resp), parse_date(gold)
    if r is None or t is None:
        return 0.0
    days = int(criterion) if isinstance(criterion, (int, float)) and criterion else 31
    return float(abs((r - t).days) <= days)


def url_match(resp: str, gold: str, criterion=None) -> float:
    def hosts(v: str) -> set[str]:
        return {urlsplit(u if "://" in u else "https://" + u).netloc.lower().removeprefix("www.")
                for u in re.split(r"[\s,;]+", str(v).strip()) if u}

    return float(bool(hosts(gold)) and hosts(resp) == hosts(gold))


def in_match(resp: str, gold: str, criterion=None) -> float:
    r, g = str(resp).strip().lower(), str(gold).strip().lower()
    return float(bool(r) and bool(g) and (r in g or g in r))


METRICS: dict[str, Callable[..., float]] = {"exact_match": exact_match, "number_near": number_near, "date_near": date_near,
                                            "url_match": url_match, "in_match": in_match}


# --------------------------------------------------------------------------- parsing

_FENCE_RE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


def parse_table(response: str) -> tuple[list[str], list[list[str]]] | None:
    """The last markdown table in a response (inside a fenced block if there is one):
    header and rows, or None when there is no table."""
    blocks = [b for b in _FENCE_RE.findall(response or "") if "|" in b] or [response or ""]
    for block in reversed(blocks):
        tables, cur = [], []
        for line in block.splitlines():
            if line.strip().startswith("|") or (line.count("|") >= 2 and cur):
                cur.append(line.strip())
            elif cur:
                tables.append(cur)
                cur = []
        if cur:
            tables.append(cur)
        for t in reversed(tables):
            rows = [_cells(x) for x in t if not re.fullmatch(r"\|?[\s:|-]+\|?", x)]
            if len(rows) >= 1 and len(t) >= 2:
                return rows[0], rows[1:]
    return None


def _cells(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s)]


def read_gold_csv(text: str) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(text)))
    return (rows[0], rows[1:]) if rows else ([], [])


# --------------------------------------------------------------------------- scoring


@dataclass
class TaskScore:
    instance_id: str
    parsed: bool  # a table was found in the response
    success: float
    row_precision: float
    row_recall: float
    row_f1: float
    item_precision: float
    item_recall: float
    item_f1: float
    gold_rows: int
    predicted_rows: int
    matched_rows: int
    correct_rows: int

    def as_dict(self) -> dict:
        return asdict(self)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _apply(value: str, col: ColumnEval) -> str:
    for step in col.preprocess:
        value = PREPROCESS[step](value)
    return value


def score_table(instance_id: str, evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]],
                response: str, aliases: dict[str, str] | None = None) -> TaskScore:
    """Score one response against a gold table. `aliases` maps norm_str(alias) to
    norm_str(canonical name), so a key (or a name cell) written with any known alias still
    aligns (and matches)."""
    required = [norm_column(c) for c in evaluation.required]
    keys = [norm_column(c) for c in evaluation.unique_columns]
    pipeline = {norm_column(k): v for k, v in evaluation.eval_pipeline.items()}
    aliases = aliases or {}
    gold = _records(gold_header, gold_rows)
    parsed = parse_table(response)
    if parsed is None:
        return TaskScore(instance_id, False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, len(_dedupe(gold, keys, aliases)), 0, 0, 0)
    pred = _records(*parsed)

    gold_by_key = _dedupe(gold, keys, aliases)
    pred_by_key = _dedupe(pred, keys, aliases)
    n_cols = len(required)
    tp = 0.0
    correct = matched = 0
    for k, p in pred_by_key.items():
        g = gold_by_key.get(k)
        if g is None:
            continue
        matched += 1
        row_ok = True
        for c in required:
            if c in keys:
                s = 1.0  # aligned on the key: counts as matched
            elif c not in p:
                s = 0.0
            else:
                col = pipeline.get(c, ColumnEval())
                r, t = _apply(p[c], col), _apply(g.get(c, ""), col)
                if aliases and "norm_str" in col.preprocess:  # a name cell written with a known alias
                    r, t = aliases.get(r, r), aliases.get(t, t)
                s = max((METRICS[m](r, t, col.criterion) for m in col.metric), default=0.0)
            tp += s
            row_ok &= s >= 1.0
        correct += row_ok
    n_gold, n_pred = len(gold_by_key), len(pred_by_key)
    rp = correct / n_pred if n_pred else 0.0
    rr = correct / n_gold if n_gold else 0.0
    ip = tp / (n_pred * n_cols) if n_pred and n_cols else 0.0
    ir = tp / (n_gold * n_cols) if n_gold and n_cols else 0.0
    success = float(n_gold > 0 and correct == n_gold == n_pred)
    return TaskScore(instance_id, True, success, rp, rr, _f1(rp, rr), ip, ir, _f1(ip, ir), n_gold, n_pred, matched, correct)


def _records(header: list[str], rows: list[list[str]]) -> list[dict[str, str]]:
    cols = [norm_column(h) for h in header]
    return [dict(zip(cols, r + [""] * (len(cols) - len(r)))) for r in rows]


def _dedupe(records: list[dict[str, str]], keys: list[str], aliases: dict[str, str]) -> dict[tuple, dict[str, str]]:
    out: dict[tuple, dict[str, str]] = {}
    for rec in records:
        if any(k not in rec for k in keys):
            continue
        key = tuple(aliases.get(norm_str(rec[k]), norm_str(rec[k])) for k in keys)
        out.setdefault(key, rec)
    return out


def average(scores: list[TaskScore]) -> dict[str, float]:
    """Mean of every metric over tasks (WideSearch's Avg@1)."""
    fields = ("success", "row_precision", "row_recall", "row_f1", "item_precision", "item_recall", "item_f1")
    n = len(scores)
    return {f: (sum(getattr(s, f) for s in scores) / n if n else 0.0) for f in fields} | {"tasks": n}


# --------------------------------------------------------------------------- files

TASKS_FILE = "tasks.jsonl"
GOLD_DIR = "gold"


def world_aliases(world_path) -> dict[str, str]:
    """norm_str(alias) -> norm_str(name) for every alias in a planned world that names one
    entity only (an alias shared by two entities cannot align a key)."""
    from ..world.store import open_world

    info = open_world(world_path)
    with info.connect() as con:
        rows = con.sql(
            "SELECT a.alias, min(e.name), count(DISTINCT e.name) FROM aliases a JOIN ("
            + " UNION ALL ".join(f'SELECT id, name FROM "{t}"' for t in info.world.types)
            + ") e ON e.id = a.entity_id GROUP BY a.alias").fetchall()
    out: dict[str, str] = {}
    for alias, name, n in rows:
        if n == 1:
            out[norm_str(alias)] = norm_str(name)
    return out


def _read_jsonl(path, what: str) -> list[dict]:
    import json
    from pathlib import Path

    from ..errors import WorldforgeError

    path = Path(path)
    if not path.is_file():
        raise WorldforgeError(f"{what} file {path} does not exist")
    out = []
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise WorldforgeError(f"{path}:{i}: not valid JSON ({exc.msg}); each line must be one JSON object") from None
        if not isinstance(rec, dict) or "instance_id" not in rec:
            raise WorldforgeError(f"{path}:{i}: each line needs an object with an 'instance_id'")
        out.append(rec)
    return out


def score_files(tasks_dir, responses_path, aliases: dict[str, str] | None = None) -> tuple[list[TaskScore], dict]:
    """Score a responses jsonl ({instance_id, response}) against a WideSearch task folder
    (`tasks.jsonl` with `evaluation`, and `gold/<instance_id>.csv`). A task without a
    response scores as an answer with no table."""
    from pathlib import Path

    from ..errors import WorldforgeError

    tasks_dir = Path(tasks_dir)
    if not tasks_dir.is_dir():
        raise WorldforgeError(f"{tasks_dir} is not a task folder (expected {TASKS_FILE} and {GOLD_DIR}/ inside)")
    tasks = _read_jsonl(tasks_dir / TASKS_FILE, "tasks")
    responses = {r["instance_id"]: str(r.get("response", "")) for r in _read_jsonl(responses_path, "responses")}
    unknown = sorted(set(responses) - {t["instance_id"] for t in tasks})
    if unknown:
        raise WorldforgeError(f"{len(unknown)} response(s) name no task in {tasks_dir}, e.g. {unknown[0]!r}")
    scores = []
    for t in tasks:
        iid = t["instance_id"]
        gold_file = tasks_dir / GOLD_DIR / f"{iid}.csv"
        if not gold_file.is_file():
            raise WorldforgeError(f"task {iid!r} has no gold table at {gold_file}")
        try:
            ev = Evaluation.model_validate(t.get("evaluation"))
        except Exception as exc:
            raise WorldforgeError(f"task {iid!r}: its 'evaluation' block is not WideSearch's format ({str(exc).splitlines()[0]})") from None
        header, rows = read_gold_csv(gold_file.read_text())
        scores.append(score_table(iid, ev, header, rows, responses.get(iid, ""), aliases))
    return scores, average(scores)
