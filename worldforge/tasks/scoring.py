"""An LLM-free WideSearch scorer: parse the markdown table in a response, align its rows to
the gold table on the key columns (through the world's alias table, where WideSearch needs
an LLM), score every cell with the task's per-column pipeline, and report success, row-level
and item-level precision, recall and F1.

Semantics follow WideSearch's evaluation: column names are normalised (strip, lowercase,
no spaces); both tables are de-duplicated on the key; rows are inner-joined on the key and
key cells count as matched; a row is correct only if every cell scores 1; item true
positives are the sum of cell scores, over predicted rows x columns for precision and gold
rows x columns for recall; success means the whole table is right.

Two modes (`MODES`):

- `widesearch` (the default, and the rollout reward): WideSearch's own evaluator
  (`tasks.widesearch`, a port of ByteDance-Seed/WideSearch's `src/evaluation/` that gives its
  seven numbers), with its two LLM calls replaced: keys align through the world's aliases
  (where upstream asks its LLM to map a response's names onto the gold ones), and a list
  column is judged by its `llm_free` metric, `set_match` (where upstream asks its LLM judge).
  Dates that need a "today" (a bare year) are read as of `as_of` when given.
- `lenient`: the scorer as it was before the modes: the last table of the response, partial
  credit when columns are missing or extra, rows de-duplicated after their keys are
  normalised, aliases accepted in any name column, URLs without a scheme, dates only in ISO
  and "Month D, YYYY" / "D Month YYYY" forms, any whitespace ignored, and a Chinese task's
  cells read the Chinese way (`norm_zh`: full-width forms, 万/亿 numbers, 年月日/号 dates).

docs/concepts/scoring.md lists every place where the two differ.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from ..language import BASE, languages
from ..language import get as get_language
from . import widesearch as ws

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


_DEFAULT_COLUMN = ColumnEval()  # a column without a pipeline: exact_match


def norm_column(name: str) -> str:
    return re.sub(r"\s+", "", str(name).strip().lower())


# --------------------------------------------------------------------------- modes

WIDESEARCH, LENIENT = "widesearch", "lenient"
MODES = (WIDESEARCH, LENIENT)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown scoring mode {mode!r}; known: {', '.join(MODES)}")


# --------------------------------------------------------------------------- preprocess and metrics

_NUM_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}


def norm_str(v: str) -> str:
    return re.sub(r"[\s*]+", "", str(v).strip().lower())


def extract_number(v: str) -> str:
    """Lenient: the first number (commas dropped, a directly following % kept), or the
    cell unchanged when it holds none."""
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
    """Lenient: an ISO or Y/M/D date, "Month D, YYYY" or "D Month YYYY" anywhere in the cell."""
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


# Chinese answers (`language: zh`): before any column's pipeline, response and gold cells and
# headers alike are read as a Chinese reader writes them: full-width letters, digits and
# punctuation as half-width ("１２０，５" -> "120,5", "（" -> "("), no spaces beside Chinese
# characters ("王 秀英" -> "王秀英"), dates written 2025年6月30日 as 2025-06-30, and numbers
# with 万 / 亿 multiplied out ("120万" -> "1200000", "1.5亿" -> "150000000").
_HAN = "\u3400-\u9fff\uf900-\ufaff"
_ZH_SPACE_RE = re.compile(f"(?<=[{_HAN}])\\s+|\\s+(?=[{_HAN}])")
_ZH_DATE_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")
_ZH_MONTH_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月")
_ZH_BIG_RE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(万亿|亿|万)")
_ZH_UNITS = {"万": 10**4, "亿": 10**8, "万亿": 10**12}
LANGUAGES = tuple(languages())  # every language with a data file (worldforge/language)


def _expand(m: re.Match) -> str:
    from decimal import Decimal

    v = Decimal(m[1].replace(",", "")) * _ZH_UNITS[m[2]]
    return format(v.normalize(), "f") if v == v.to_integral_value() else format(v, "f")


def _fold(language: str):
    """How a task language's cells are folded before the lenient scorer compares them (the
    language's `scoring.fold`: 'cjk' is `norm_zh`), or None."""
    return {"cjk": norm_zh}.get(get_language(language).cell_fold)


def norm_zh(v: str) -> str:
    """A Chinese cell as a Chinese reader writes it (see above); other text passes unchanged
    but for full-width forms."""
    import unicodedata

    s = unicodedata.normalize("NFKC", str(v))
    s = _ZH_SPACE_RE.sub("", s)
    s = _ZH_DATE_RE.sub(lambda m: f"{m[1]}-{int(m[2]):02d}-{int(m[3]):02d}", s)
    s = _ZH_MONTH_RE.sub(lambda m: f"{m[1]}-{int(m[2]):02d}", s)
    return _ZH_BIG_RE.sub(_expand, s)


PREPROCESS: dict[str, dict[str, Callable[[str], str]]] = {
    WIDESEARCH: dict(ws.PREPROCESS),
    LENIENT: {"norm_str": norm_str, "extract_number": extract_number, "norm_date": norm_date},
}


def _number(v: str) -> float | None:
    s = extract_number(v)
    try:
        return float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        return None


def _tolerance(criterion) -> float:
    return float(criterion) if criterion not in (None, "") else 0.0


def exact_match(resp: str, gold: str, criterion=None) -> float:
    return float(str(resp).strip().lower() == str(gold).strip().lower())


def number_near(resp: str, gold: str, criterion=None) -> float:
    r, t = _number(resp), _number(gold)
    if r is None or t is None:  # a gold cell that is no number ("present") matches only itself
        return float(t is None and _same_text(resp, gold))
    return float(abs(r - t) <= abs(t) * _tolerance(criterion) + 1e-9)


def _same_text(resp: str, gold: str) -> bool:
    g = str(gold).strip().lower()
    return bool(g) and str(resp).strip().lower() == g


def date_near(resp: str, gold: str, criterion=None) -> float:
    r, t = parse_date(resp), parse_date(gold)
    if r is None or t is None:  # a gold cell that is no date matches only itself
        return float(t is None and _same_text(resp, gold))
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


_ITEM_SEP_RE = re.compile(r"\s*(?:[;,\n\uff0c\u3001\uff1b]|<br\s*/?>)\s*", re.IGNORECASE)


def list_items(v: str) -> set[str]:
    """A cell holding a list ("Ada Obi; Li Wen"), as a set of items after `norm_str`: split on
    semicolons, commas (also the CJK ones), line breaks and <br>."""
    return {norm_str(x) for x in _ITEM_SEP_RE.split(str(v).strip()) if norm_str(x)}


def set_match(resp: str, gold: str, criterion=None) -> float:
    """The same set of items, in any order, separators aside (lists inside cells: founders,
    members). WideSearch judges such cells with `llm_judge`; this is the deterministic rule
    worldforge applies in its place (a column's `llm_free`), in both modes."""
    return float(list_items(resp) == list_items(gold))


METRICS: dict[str, dict[str, Callable[..., float]]] = {
    WIDESEARCH: {**ws.METRICS, "set_match": set_match},
    LENIENT: {"exact_match": exact_match, "number_near": number_near, "date_near": date_near,
              "url_match": url_match, "in_match": in_match, "set_match": set_match},
}
LLM_FREE = ("set_match",)  # metrics a column may name as its `llm_free` stand-in for llm_judge


def column_metrics(col: ColumnEval) -> list[str]:
    """A column's metrics as this scorer applies them: `llm_judge` becomes the column's
    `llm_free` metric when it names one (worldforge's list columns do), else stays (refused)."""
    stand_in = getattr(col, "llm_free", None)
    return [stand_in if m == "llm_judge" and stand_in in LLM_FREE else m for m in col.metric]


# --------------------------------------------------------------------------- parsing

_FENCE_RE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_MARKDOWN_FENCE_RE = re.compile(r"```markdown(.*?)```", re.DOTALL)


def parse_table(response: str, mode: str = WIDESEARCH) -> tuple[list[str], list[list[str]]] | None:
    """The markdown table a response is scored on: header and rows, or None when there is no
    table. WideSearch mode: the first table of the first ```markdown block that holds one, else
    the first table of the response. Lenient: the last table, inside the last fenced block
    that holds one if there is one."""
    _check_mode(mode)
    text = response or ""
    if mode == LENIENT:
        blocks = [b for b in _FENCE_RE.findall(text) if "|" in b] or [text]
        for block in reversed(blocks):
            for t in reversed(_tables(block)):
                return t
        return None
    for block in _MARKDOWN_FENCE_RE.findall(text):
        tables = _tables(block, loose=True)
        if tables:
            return tables[0]
    tables = _tables(text)
    return tables[0] if tables else None


def _tables(block: str, loose: bool = False) -> list[tuple[list[str], list[list[str]]]]:
    """Every table of a block, in order: runs of lines that start with a pipe (later lines of
    a run may omit the leading pipe; with `loose`, as WideSearch reads a ```markdown block, any
    line with a pipe belongs to a table), of two lines or more, separator lines dropped."""
    groups, cur = [], []
    for line in block.splitlines():
        if line.strip().startswith("|") or (line.count("|") >= (1 if loose else 2) and (cur or loose)):
            cur.append(line.strip())
        elif cur:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    out = []
    for t in groups:
        rows = [_cells(x) for x in t if not re.fullmatch(r"\|?[\s:|-]+\|?", x)]
        if rows and len(t) >= 2:
            out.append((rows[0], rows[1:]))
    return out


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
    columns_match: bool = True  # the table's column set is the required one (WideSearch mode scores 0 otherwise)
    note: str = ""  # why WideSearch mode scored 0 other than by the cells (no table, other columns, an evaluator error)

    def as_dict(self) -> dict:
        return asdict(self)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _apply(value: str, col: ColumnEval, mode: str = WIDESEARCH) -> str:
    steps = PREPROCESS[mode]
    for step in col.preprocess:
        value = steps[step](value)
    return value


def score_table(instance_id: str, evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]],
                response: str, aliases: dict[str, str] | None = None, mode: str = WIDESEARCH,
                language: str = "en", as_of: dt.date | None = None) -> TaskScore:
    """Score one response against a gold table. `aliases` maps norm_str(alias) to
    norm_str(canonical name), so a key written with any known alias still aligns; in lenient
    mode a name cell written with one matches too. `mode` is one of `MODES` (module docstring);
    `language` the task's (in lenient mode a Chinese task's cells are read through `norm_zh`
    first); `as_of` the date WideSearch mode completes a date without a year or month from
    (None: today, as WideSearch does)."""
    _check_mode(mode)
    if language not in LANGUAGES:
        raise ValueError(f"unknown task language {language!r}; known: {', '.join(LANGUAGES)}")
    if mode == WIDESEARCH:
        return _score_ws(instance_id, evaluation, gold_header, gold_rows, response, aliases, as_of)
    fold = _fold(language)
    if fold is not None:  # (lenient: a Chinese task's cells read the Chinese way)
        return _score_folded(instance_id, evaluation, gold_header, gold_rows, response, aliases, mode, fold)
    required = [norm_column(c) for c in evaluation.required]
    keys = [norm_column(c) for c in evaluation.unique_columns]
    pipeline = {norm_column(k): v for k, v in evaluation.eval_pipeline.items()}
    aliases = aliases or {}
    metrics = METRICS[mode]

    def key_of(rec: dict[str, str]) -> tuple:
        return tuple(aliases.get(n, n) for n in (norm_str(rec[k]) for k in keys))

    gold_by_key = _dedupe(_records(gold_header, gold_rows), keys, key_of)
    n_gold = len(gold_by_key)
    parsed = parse_table(response, mode)
    if parsed is None:
        return TaskScore(instance_id, False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, n_gold, 0, 0, 0)
    header, rows = parsed
    over = ws.over_row_limit(len(rows), n_gold)
    if over:  # as in WideSearch mode: a degenerate answer is not read cell by cell
        return TaskScore(instance_id, True, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, n_gold, len(rows), 0, 0, note=over)
    pred_by_key = _dedupe(_records(header, rows), keys, key_of)

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
                col = pipeline.get(c, _DEFAULT_COLUMN)
                r, t = _apply(p[c], col, mode), _apply(g.get(c, ""), col, mode)
                if aliases and "norm_str" in col.preprocess:  # a name cell written with a known alias
                    r, t = aliases.get(r, r), aliases.get(t, t)
                s = max((metrics[m](r, t, col.criterion) for m in column_metrics(col)), default=0.0)
            tp += s
            row_ok &= s >= 1.0
        correct += row_ok
    n_pred = len(pred_by_key)
    rp = correct / n_pred if n_pred else 0.0
    rr = correct / n_gold if n_gold else 0.0
    ip = tp / (n_pred * n_cols) if n_pred and n_cols else 0.0
    ir = tp / (n_gold * n_cols) if n_gold and n_cols else 0.0
    success = float(n_gold > 0 and correct == n_gold == n_pred)
    return TaskScore(instance_id, True, success, rp, rr, _f1(rp, rr), ip, ir, _f1(ip, ir), n_gold, n_pred, matched, correct)


def _aligner(aliases: dict[str, str] | None) -> ws.Aligner | None:
    """WideSearch's LLM key alignment, by the world's aliases: a response key that is a known
    alias of an entity a gold key names becomes that gold key. Anything else stays as written
    (as with an LLM that maps nothing), so spelling, spacing and case are left to the
    column's preprocess."""
    if not aliases:
        return None

    def align(response: list[str], gold: list[str]) -> dict[str, str]:
        named: dict[str, str] = {}
        for g in gold:
            n = ws.norm_str(g)
            named.setdefault(aliases.get(n, n), g)
        out = {}
        for x in response:
            name = aliases.get(ws.norm_str(x))
            if name is not None and name in named:
                out[x] = named[name]
        return out

    return align


def _judge(pipeline: dict) -> Callable[[str], Callable | None]:
    """WideSearch's LLM judge of a column, by the column's `llm_free` metric (None: no judge)."""
    def judge(col: str):
        stand_in = (pipeline.get(col) or {}).get("llm_free")
        return METRICS[WIDESEARCH][stand_in] if stand_in in LLM_FREE else None

    return judge


def _score_ws(instance_id: str, evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]], response: str,
              aliases: dict[str, str] | None, as_of: dt.date | None) -> TaskScore:
    ev = evaluation.model_dump()
    gold = ws.gold_frame(gold_header, gold_rows, ev["required"])
    o = ws.evaluate(ev, gold, response, align=_aligner(aliases), judge=_judge(ev.get("eval_pipeline") or {}), as_of=as_of)
    correct = int(o.correct_rows) if float(o.correct_rows).is_integer() else o.correct_rows
    return TaskScore(instance_id, o.parsed, o.success, o.row_precision, o.row_recall, o.row_f1, o.item_precision, o.item_recall,
                     o.item_f1, o.gold_rows, o.predicted_rows, o.matched_rows, correct, o.columns_match, o.message)


def _score_folded(instance_id: str, evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]],
                  response: str, aliases: dict[str, str] | None, mode: str, fold) -> TaskScore:
    """A task whose language folds its cells (Chinese: `norm_zh`): both tables with their cells
    and headers through the fold, the response re-written as one Markdown table, then scored as
    any other."""
    parsed = parse_table(response, mode)
    ev = Evaluation.model_validate({**evaluation.model_dump(), "unique_columns": [fold(c) for c in evaluation.unique_columns],
                                    "required": [fold(c) for c in evaluation.required],
                                    "eval_pipeline": {fold(k): v for k, v in evaluation.eval_pipeline.items()}})
    gh, gr = [fold(h) for h in gold_header], [[fold(c) for c in r] for r in gold_rows]
    al = {norm_str(fold(a)): norm_str(fold(n)) for a, n in (aliases or {}).items()}
    if parsed is None:
        return score_table(instance_id, ev, gh, gr, "", al, mode)
    header, rows = parsed

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(fold(c).replace("|", "/") for c in cells) + " |"

    table = "\n".join([line(header), "| " + " | ".join("---" for _ in header) + " |", *(line(r) for r in rows)])
    return score_table(instance_id, ev, gh, gr, f"```markdown\n{table}\n```", al, mode)


def _records(header: list[str], rows: list[list[str]]) -> list[dict[str, str]]:
    cols = [norm_column(h) for h in header]
    return [dict(zip(cols, r + [""] * (len(cols) - len(r)))) for r in rows]


def _dedupe(records: list[dict[str, str]], keys: list[str], key_of: Callable[[dict[str, str]], tuple]) -> dict[tuple, dict[str, str]]:
    """Records by aligned key, the first of each key kept (keys are normalised first, so rows
    that differ only in the case or spelling of their key are one row)."""
    out: dict[tuple, dict[str, str]] = {}
    for rec in records:
        if any(k not in rec for k in keys):
            continue
        out.setdefault(key_of(rec), rec)
    return out


def reward_of(score: dict, metric: str) -> float:
    """A score's reward metric, within [0, 1]. WideSearch's recall can pass 1 (a response row
    repeated with its key in other capitals joins the same gold row twice), and so can F1; a
    reward never does."""
    return min(1.0, max(0.0, float(score[metric])))


def average(scores: list[TaskScore]) -> dict[str, float]:
    """Mean of every metric over tasks (WideSearch's Avg@1)."""
    fields = ("success", "row_precision", "row_recall", "row_f1", "item_precision", "item_recall", "item_f1")
    n = len(scores)
    return {f: (sum(getattr(s, f) for s in scores) / n if n else 0.0) for f in fields} | {"tasks": n}


# --------------------------------------------------------------------------- files

TASKS_FILE = "tasks.jsonl"
GOLD_DIR = "gold"
SUMS_FILE = "SHA256SUMS"  # `sha256sum -c` format: a task folder's tasks and gold tables, so a table cut short is caught


def write_sums(folder) -> None:
    """Write `SHA256SUMS` over a task folder's data: its `.jsonl` task files and every gold
    table (`sha256sum -c SHA256SUMS` checks them; `score_files` checks each gold table it reads)."""
    from pathlib import Path

    folder = Path(folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and (p.suffix == ".csv" or p.parent == folder and p.suffix == ".jsonl"))
    (folder / SUMS_FILE).write_text("".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(folder).as_posix()}\n"
                                            for p in files))


def read_sums(folder) -> dict[str, str]:
    """A task folder's `SHA256SUMS` as {relative path: sha256}; {} when it has none."""
    from pathlib import Path

    from ..errors import WorldforgeError

    path = Path(folder) / SUMS_FILE
    if not path.is_file():
        return {}
    out = {}
    for i, line in enumerate(_utf8(path, "digest").splitlines(), start=1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64 or not name:
            raise WorldforgeError(f"{path}:{i}: not a `sha256sum` line (64 hex digits, two spaces, a file name); "
                                  f"restore it from the dataset, or delete it to score without checking the gold tables")
        out[name] = digest.lower()
    return out


def _unique_aliases(world_path) -> list[tuple[str, str]]:
    """(name, alias) for every alias in a planned world that names one entity only (an alias
    shared by two entities cannot stand for either), by name, then alias."""
    from ..world import open_world

    info = open_world(world_path)
    with info.connect() as con:
        return con.sql(
            "SELECT min(e.name), a.alias FROM aliases a JOIN ("
            + " UNION ALL ".join(f'SELECT id, name FROM "{t}"' for t in info.world.types)
            + ") e ON e.id = a.entity_id GROUP BY a.alias HAVING count(DISTINCT e.name) = 1 ORDER BY 1, 2").fetchall()


def world_aliases(world_path) -> dict[str, str]:
    """norm_str(alias) -> norm_str(name) for every alias in a planned world that names one
    entity only (an alias shared by two entities cannot align a key)."""
    return {norm_str(alias): norm_str(name) for name, alias in _unique_aliases(world_path)}


def alias_names(world_path) -> dict[str, str]:
    """An entity's name -> one of its aliases as written (the first in order) that names it
    alone: what an agent might write in its place (`tasks.damage`'s alias answers)."""
    out: dict[str, str] = {}
    for name, alias in _unique_aliases(world_path):
        if alias != name:
            out.setdefault(name, alias)
    return out


def aliases_by_name(aliases: dict[str, str]) -> dict[str, list[str]]:
    """The inverse of an alias map: norm_str(name) -> its aliases, for `task_aliases`."""
    out: dict[str, list[str]] = {}
    for alias, name in aliases.items():
        out.setdefault(name, []).append(alias)
    return out


def task_aliases(evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]], aliases: dict[str, str],
                 by_name: dict[str, list[str]] | None = None) -> dict[str, str]:
    """The part of a world's alias map that scoring against this gold table uses: the aliases of
    the entities the table names (its key cells and `norm_str` cells, in either mode). Every
    scorer (`worldforge score`, the rollout reward, `worldforge.rewards` from an export's ground
    truth) aligns keys through this subset, so the three agree; like WideSearch's key alignment,
    it maps a response's names onto the gold table's entities and merges no other rows. Sorted,
    so ground truths are byte-stable. `by_name` (from `aliases_by_name`) saves the inversion
    when many tables are scored."""
    if not aliases:
        return {}
    by_name = aliases_by_name(aliases) if by_name is None else by_name
    keys = {norm_column(c) for c in evaluation.unique_columns}
    pipeline = {norm_column(k): v for k, v in evaluation.eval_pipeline.items()}
    names: set[str] = set()
    for i, c in enumerate(norm_column(h) for h in gold_header):
        col = pipeline.get(c, _DEFAULT_COLUMN)
        if c not in keys and "norm_str" not in col.preprocess:
            continue
        for row in gold_rows:
            if i < len(row):
                forms = {norm_str(row[i])} | {norm_str(_apply(row[i], col, m)) for m in MODES}
                names.update(aliases.get(f, f) for f in forms)
    return dict(sorted((a, name) for name in names for a in by_name.get(name, ())))


def _read_jsonl(path, what: str) -> list[dict]:
    import json
    from pathlib import Path

    from ..errors import WorldforgeError

    path = Path(path)
    if not path.is_file():
        raise WorldforgeError(f"{what} file {path} does not exist")
    out = []
    for i, line in enumerate(_utf8(path, what).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise WorldforgeError(f"{path}:{i}: not valid JSON ({exc.msg}); each line must be one JSON object") from None
        except RecursionError:
            raise WorldforgeError(f"{path}:{i}: JSON nested too deeply; each line must be one flat JSON object") from None
        if not isinstance(rec, dict) or "instance_id" not in rec:
            raise WorldforgeError(f"{path}:{i}: each line needs an object with an 'instance_id'")
        if not isinstance(rec["instance_id"], str):
            raise WorldforgeError(f"{path}:{i}: 'instance_id' must be a string, got {type(rec['instance_id']).__name__} "
                                  f"{json.dumps(rec['instance_id'])[:60]}")
        out.append(rec)
    return out


def _utf8(path, what: str) -> str:
    from ..errors import WorldforgeError

    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorldforgeError(f"{what} file {path} is not UTF-8 (byte {exc.object[exc.start]:#04x} at offset {exc.start:,}); "
                              "save it as UTF-8") from None


def read_gold_file(path) -> tuple[list[str], list[list[str]]]:
    """A gold CSV, checked whole: UTF-8, closed quotes, every row as wide as the header (a file
    cut short, or a row with a stray comma, is an error rather than a smaller gold table)."""
    from ..errors import WorldforgeError

    text = _utf8(path, "gold")
    try:
        rows = [r for r in csv.reader(io.StringIO(text), strict=True) if r]  # (blank lines are skipped, as pandas does)
    except csv.Error as exc:
        raise WorldforgeError(f"gold table {path} is not valid CSV ({exc}); a file cut short?") from None
    if not rows or not any(c.strip() for c in rows[0]):
        raise WorldforgeError(f"gold table {path} has no header row")
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(rows[0]):
            raise WorldforgeError(f"gold table {path}: line {i} has {len(r)} cells, the header {len(rows[0])}; "
                                  "a file cut short, or a value with an unquoted comma?")
    return rows[0], rows[1:]


def score_files(tasks_dir, responses_path, aliases: dict[str, str] | None = None,
                mode: str = WIDESEARCH, as_of: dt.date | None = None) -> tuple[list[TaskScore], dict]:
    """Score a responses jsonl ({instance_id, response}) against a WideSearch task folder
    (`tasks.jsonl` with `evaluation`, and `gold/<instance_id>.csv`) in one of `MODES`. A task
    without a response scores as an answer with no table. Keys align through each task's
    `task_aliases` of `aliases`."""
    from pathlib import Path

    from ..errors import WorldforgeError

    _check_mode(mode)
    tasks_dir = Path(tasks_dir)
    if not tasks_dir.is_dir():
        raise WorldforgeError(f"{tasks_dir} is not a task folder (expected {TASKS_FILE} and {GOLD_DIR}/ inside)")
    splits = sorted(p.parent.name for p in tasks_dir.glob(f"*/{TASKS_FILE}"))
    if not (tasks_dir / TASKS_FILE).is_file() and splits:
        raise WorldforgeError(f"{tasks_dir} holds the task folders {', '.join(splits)}, not tasks of its own; score one of them "
                              f"(e.g. {tasks_dir / splits[0]})")
    tasks = _read_jsonl(tasks_dir / TASKS_FILE, "tasks")
    responses = {r["instance_id"]: str(r.get("response", "")) for r in _read_jsonl(responses_path, "responses")}
    unknown = sorted(set(responses) - {t["instance_id"] for t in tasks})
    if unknown:
        raise WorldforgeError(f"{len(unknown)} response(s) name no task in {tasks_dir}, e.g. {unknown[0]!r}")
    scores = []
    by_name = None
    sums = read_sums(tasks_dir)
    for t in tasks:
        iid = t["instance_id"]
        gold_file = tasks_dir / GOLD_DIR / f"{iid}.csv"
        if not gold_file.is_file():
            raise WorldforgeError(f"task {iid!r} has no gold table at {gold_file}")
        want = sums.get(f"{GOLD_DIR}/{iid}.csv")
        if sums and want != hashlib.sha256(gold_file.read_bytes()).hexdigest():
            raise WorldforgeError(f"gold table {gold_file} " + ("is not in" if want is None else "does not match its digest in")
                                  + f" {tasks_dir / SUMS_FILE} (cut short or edited?); restore it from the dataset, or delete "
                                  f"{SUMS_FILE} to score against the files as they are")
        try:
            ev = Evaluation.model_validate(t.get("evaluation"))
        except Exception as exc:
            raise WorldforgeError(f"task {iid!r}: its 'evaluation' block is not WideSearch's format ({str(exc).splitlines()[0]})") from None
        for name, col in ev.eval_pipeline.items():
            unknown = [s for s in col.preprocess if s not in PREPROCESS[mode]] + [m for m in column_metrics(col)
                                                                                  if m not in METRICS[mode]]
            if unknown:
                raise WorldforgeError(f"task {iid!r}, column {name!r}: {unknown[0]!r} is not a step this scorer has "
                                      f"({', '.join([*PREPROCESS[mode], *METRICS[mode]])}; llm_judge needs an LLM, "
                                      "unless the column names an llm_free stand-in such as set_match)")
        header, rows = read_gold_file(gold_file)
        if aliases and by_name is None:
            by_name = aliases_by_name(aliases)
        mine = task_aliases(ev, header, rows, aliases, by_name) if aliases else None
        language = t.get("language") or BASE
        if language not in LANGUAGES:
            raise WorldforgeError(f"task {iid!r}: language {language!r} is not one this scorer reads ({', '.join(LANGUAGES)})")
        try:
            scores.append(score_table(iid, ev, header, rows, responses.get(iid, ""), mine, mode, language, as_of))
        except ValueError as exc:  # a gold table without a required column
            raise WorldforgeError(f"task {iid!r}: {exc}; the task's 'required' names must be its gold CSV's columns "
                                  "as norm_column writes them (stripped, lowercase, no spaces)") from None
    return scores, average(scores)


# --------------------------------------------------------------------------- cell by cell

RIGHT, PARTIAL, WRONG, MISSING, EXTRA = "right", "partial", "wrong", "missing", "extra"


@dataclass
class MarkedRow:
    """One row of a response held against the gold table: `status` is `matched` (its key is a
    gold row's), `extra` (no gold row has its key) or `missing` (a gold row the response left
    out, shown with the gold cells); each cell is (text shown, mark, gold text)."""

    status: str
    cells: list[tuple[str, str, str]]


def cell_marks(evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]], response: str,
               aliases: dict[str, str] | None = None, language: str = "en") -> tuple[list[str], list[MarkedRow]] | None:
    """A response's table cell by cell against gold, by the lenient rules (rows aligned on the
    key through the aliases, each cell by its column's metric): right, partial (a score between
    0 and 1), wrong, or missing (no such column, or a gold row left out); rows no gold row has
    are extra. Columns in the evaluation's required order; None when the response has no table."""
    parsed = parse_table(response, LENIENT)
    if parsed is None:
        return None
    header, rows = parsed
    fold = _fold(language)
    if fold is not None:
        header, rows = [fold(h) for h in header], [[fold(c) for c in r] for r in rows]
        gold_header, gold_rows = [fold(h) for h in gold_header], [[fold(c) for c in r] for r in gold_rows]
    else:
        fold = lambda s: s  # noqa: E731
    required = [norm_column(fold(c)) for c in evaluation.required]
    keys = [norm_column(fold(c)) for c in evaluation.unique_columns]
    pipeline = {norm_column(fold(k)): v for k, v in evaluation.eval_pipeline.items()}
    aliases = aliases or {}
    metrics = METRICS[LENIENT]

    def key_of(rec: dict[str, str]) -> tuple:
        return tuple(aliases.get(n, n) for n in (norm_str(rec[k]) for k in keys))

    gold = _dedupe(_records(gold_header, gold_rows), keys, key_of)
    pred = _dedupe(_records(header, rows), keys, key_of)
    out: list[MarkedRow] = []
    for k, p in pred.items():
        g = gold.get(k)
        if g is None:
            out.append(MarkedRow(EXTRA, [(p.get(c, ""), EXTRA, "") for c in required]))
            continue
        cells = []
        for c in required:
            if c in keys:
                mark = RIGHT
            elif c not in p:
                mark = MISSING
            else:
                col = pipeline.get(c, _DEFAULT_COLUMN)
                r, t = _apply(p[c], col, LENIENT), _apply(g.get(c, ""), col, LENIENT)
                if aliases and "norm_str" in col.preprocess:
                    r, t = aliases.get(r, r), aliases.get(t, t)
                s = max((metrics[m](r, t, col.criterion) for m in column_metrics(col) if m in metrics), default=0.0)
                mark = RIGHT if s >= 1.0 else PARTIAL if s > 0 else WRONG
            cells.append((p.get(c, ""), mark, g.get(c, "")))
        out.append(MarkedRow("matched", cells))
    for k, g in gold.items():
        if k not in pred:
            out.append(MarkedRow(MISSING, [(g.get(c, ""), MISSING, g.get(c, "")) for c in required]))
    shown = {norm_column(h): h for h in gold_header}
    return [shown.get(c, c) for c in required], out
