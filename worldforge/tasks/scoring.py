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

- `widesearch` (the default, and the rollout reward): WideSearch's own evaluator as published
  in ByteDance-Seed/WideSearch (`src/evaluation/`): the first markdown table of the response
  (a ```markdown block first); a table whose column set is not exactly the required columns
  scores 0 on every metric; keys are aligned after their column's preprocess (aliases of the
  world for keys only, standing in for WideSearch's LLM key alignment); dates are read as
  leniently as dateparser reads them ("July 1869" is July 1, "07/17/1869" month first);
  `url_match` compares the hosts of http(s) URLs only; no aliases in other columns. Where that
  evaluator contradicts its own metric definitions (rows de-duplicated before the keys are
  normalised; pandas turning an integer column with one blank cell into floats) the definition
  is followed; README's "Scoring" section lists every such difference.
- `lenient`: the scorer as it was before the modes: the last table of the response, partial
  credit when columns are missing or extra, aliases accepted in any name column, URLs without
  a scheme, dates only in ISO and "Month D, YYYY" / "D Month YYYY" forms.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
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


# WideSearch mode. Numbers as WideSearch's extract_number reads them: commas dropped, the first
# number with its sign and a directly following %, or "NULL" when the cell holds none.
_WS_NUM_RE = re.compile(r"[-+]?(?:\d*\.\d+|\d+\.?\d*)%?")


def extract_number_ws(v: str) -> str:
    m = _WS_NUM_RE.search(str(v).replace(",", "").replace("\u2212", "-"))
    return m.group(0) if m else "NULL"


# Dates as dateparser reads them with WideSearch's settings (PREFER_DAY_OF_MONTH=first, English,
# month first): the whole cell must be a date; a missing day is the 1st; numeric dates are read
# year-month-day when they start with a 4-digit year, else month/day/year, else day/month/year;
# 2-digit years follow strptime's %y (69-99 -> 19xx). What dateparser resolves against today's
# date (a bare year, a date without a year, "yesterday") is not a date here.
_WS_MONTHS = {name: i + 1 for i, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec"))) for name in names}
_WS_WEEKDAYS = {"monday", "mon", "tuesday", "tue", "tues", "wednesday", "wed", "thursday", "thu", "thur", "thurs",
                "friday", "fri", "saturday", "sat", "sunday", "sun"}
_WS_FILLER = {"on", "the", "of", "at", "in", "about", "ad"}
_WS_TIME_RE = re.compile(r"\b\d{1,2}(?::\d{2}){1,2}(?:\.\d+)?(?:\s*[ap]\.?m\b\.?)?(?:\s*(?:z|utc|gmt|[+-]\d{2}:?\d{2})\b)?"
                         r"|\b\d{1,2}\s*[ap]\.?m\b\.?")
_WS_CJK_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*日)?")


def _year(tok: str) -> int:
    y = int(tok)
    return y if len(tok) > 2 else (1900 + y if y >= 69 else 2000 + y)


def _date(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d) if y >= 1 else None
    except ValueError:
        return None


_ISO_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


@lru_cache(maxsize=1 << 16)
def parse_date_ws(v: str) -> dt.date | None:
    m = _ISO_RE.fullmatch(v)
    if m:  # the common case (every cell after norm_date): no need for the general reading
        return _date(int(m[1]), int(m[2]), int(m[3])) or _date(int(m[1]), int(m[3]), int(m[2]))
    s = _WS_CJK_RE.sub(lambda m: f"{m[1]}-{m[2]}" + (f"-{m[3]}" if m[3] else ""), str(v).strip().lower())
    s = re.sub(r"(?<=\d)t(?=\d{1,2}:)", " ", s)
    s = _WS_TIME_RE.sub(" ", s)
    s = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", s)
    if not s.strip() or re.search(r"[^0-9a-z\s.,/\-\u2013\u2014]", s):
        return None
    tokens = re.findall(r"\d+|[a-z]+", s)
    month = None
    nums: list[str] = []
    for t in tokens:
        if t.isdigit():
            nums.append(t)
        elif t in _WS_MONTHS and month is None:
            month = _WS_MONTHS[t]
        elif t not in _WS_WEEKDAYS and t not in _WS_FILLER:
            return None
    if any(len(n) > 4 for n in nums):
        return None
    if month is not None:
        if len(nums) == 1:  # "July 1869", "July 69" -> the 1st; "July 17" has no year
            n = nums[0]
            return _date(_year(n), month, 1) if len(n) == 4 or (len(n) == 2 and int(n) > 31) else None
        if len(nums) == 2:  # "July 17, 1869", "17 July 1869", "1869 July 17", "July 17, 69"
            four = [n for n in nums if len(n) == 4]
            if len(four) == 1:
                day = next(n for n in nums if n is not four[0])
            elif not four and all(len(n) <= 2 for n in nums):
                four, day = [nums[1]], nums[0]
            else:
                return None
            return _date(_year(four[0]), month, int(day)) if len(day) <= 2 else None
        return None
    if len(nums) == 3:
        a, b, c = nums
        if len(a) == 4 and len(b) <= 2 and len(c) <= 2:  # 1869-07-17 (1869-13-01 -> January 13)
            return _date(int(a), int(b), int(c)) or _date(int(a), int(c), int(b))
        if len(a) <= 2 and len(b) <= 2 and len(c) in (2, 4):  # 07/17/1869, else 17/07/1869
            return _date(_year(c), int(a), int(b)) or _date(_year(c), int(b), int(a))
        return None
    if len(nums) == 2:  # 1869-07, 07/1869 -> the 1st
        a, b = nums
        if len(a) == 4 and len(b) <= 2:
            return _date(int(a), int(b), 1)
        if len(b) == 4 and len(a) <= 2:
            return _date(int(b), int(a), 1)
    return None


def norm_date_ws(v: str) -> str:
    d = parse_date_ws(str(v))
    return d.isoformat() if d else str(v)


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
LANGUAGES = ("en", "zh")


def _expand(m: re.Match) -> str:
    from decimal import Decimal

    v = Decimal(m[1].replace(",", "")) * _ZH_UNITS[m[2]]
    return format(v.normalize(), "f") if v == v.to_integral_value() else format(v, "f")


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
    WIDESEARCH: {"norm_str": norm_str, "extract_number": extract_number_ws, "norm_date": norm_date_ws},
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


def _number_ws(s: str) -> float | None:
    try:
        return float(s.replace("%", "")) / 100 if "%" in s else float(s)
    except ValueError:
        return None


def number_near_ws(resp: str, gold: str, criterion=None) -> float:
    """|r - t| <= |t| * criterion on the (preprocessed) cells; two cells that hold no number
    match only when they are equal (WideSearch's rule)."""
    r, t = _number_ws(str(resp)), _number_ws(str(gold))
    if r is None or t is None:
        return float(r is None and t is None and str(resp) == str(gold))
    return float(abs(r - t) <= abs(t) * _tolerance(criterion) + 1e-9)


def date_near_ws(resp: str, gold: str, criterion=None) -> float:
    """Within 31 days (WideSearch passes no criterion to date_near); two cells that are not
    dates match only when they are equal."""
    r, t = parse_date_ws(str(resp)), parse_date_ws(str(gold))
    if r is None or t is None:
        return float(r is None and t is None and str(resp).strip().lower() == str(gold).strip().lower())
    return float(abs((r - t).days) <= 31)


_WS_URL_HOST_RE = re.compile(r"https?://([^/?#\s|,;\"'<>\\]+)", re.IGNORECASE)


def url_match_ws(resp: str, gold: str, criterion=None) -> float:
    """The same set of host names (user and port included, case-insensitive) among the http(s)
    URLs of each cell; a URL without a scheme is not a URL."""
    def hosts(v: str) -> set[str]:
        return {h.lower() for h in _WS_URL_HOST_RE.findall(str(v))}

    return float(hosts(resp) == hosts(gold))


def in_match_ws(resp: str, gold: str, criterion=None) -> float:
    """The response cell is a substring of the gold cell (case-sensitive, as WideSearch)."""
    r = str(resp)
    return float(bool(r) and r in str(gold))


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
    WIDESEARCH: {"exact_match": exact_match, "number_near": number_near_ws, "date_near": date_near_ws,
                 "url_match": url_match_ws, "in_match": in_match_ws, "set_match": set_match},
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
                language: str = "en") -> TaskScore:
    """Score one response against a gold table. `aliases` maps norm_str(alias) to
    norm_str(canonical name), so a key written with any known alias still aligns; in lenient
    mode a name cell written with one matches too. `mode` is one of `MODES` (module docstring);
    `language` the task's (a Chinese task's cells are read through `norm_zh` first)."""
    _check_mode(mode)
    if language not in LANGUAGES:
        raise ValueError(f"unknown task language {language!r}; known: {', '.join(LANGUAGES)}")
    if language == "zh":
        return _score_zh(instance_id, evaluation, gold_header, gold_rows, response, aliases, mode)
    ws = mode == WIDESEARCH
    required = [norm_column(c) for c in evaluation.required]
    keys = [norm_column(c) for c in evaluation.unique_columns]
    pipeline = {norm_column(k): v for k, v in evaluation.eval_pipeline.items()}
    aliases = aliases or {}
    metrics = METRICS[mode]
    key_cols = [pipeline.get(k, _DEFAULT_COLUMN) for k in keys]

    def key_of(rec: dict[str, str]) -> tuple:
        if ws:  # the key as WideSearch joins it: after its column's preprocess
            norm = (norm_str(_apply(rec[k], col, mode)) for k, col in zip(keys, key_cols))
        else:
            norm = (norm_str(rec[k]) for k in keys)
        return tuple(aliases.get(n, n) for n in norm)

    gold_by_key = _dedupe(_records(gold_header, gold_rows), keys, key_of)
    n_gold = len(gold_by_key)
    parsed = parse_table(response, mode)
    if parsed is None:
        return TaskScore(instance_id, False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, n_gold, 0, 0, 0)
    header, rows = parsed
    if ws:  # WideSearch drops unnamed columns and scores 0 unless the column set is exactly the required one
        names = [c for c in (norm_column(h) for h in header) if c]
        if len(names) != len(set(names)) or set(names) != set(required):
            return TaskScore(instance_id, True, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, n_gold, len(rows), 0, 0, False)
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
                names = column_metrics(col)
                if ws:  # every metric of the column must accept the cell (WideSearch's row rule), counted once
                    s = min((metrics[m](r, t, col.criterion) for m in names), default=0.0)
                else:
                    if aliases and "norm_str" in col.preprocess:  # a name cell written with a known alias
                        r, t = aliases.get(r, r), aliases.get(t, t)
                    s = max((metrics[m](r, t, col.criterion) for m in names), default=0.0)
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


def _score_zh(instance_id: str, evaluation: Evaluation, gold_header: list[str], gold_rows: list[list[str]],
              response: str, aliases: dict[str, str] | None, mode: str) -> TaskScore:
    """A Chinese task: both tables with their cells and headers through `norm_zh`, the
    response re-written as one Markdown table, then scored as any other."""
    parsed = parse_table(response, mode)
    ev = Evaluation.model_validate({**evaluation.model_dump(), "unique_columns": [norm_zh(c) for c in evaluation.unique_columns],
                                    "required": [norm_zh(c) for c in evaluation.required],
                                    "eval_pipeline": {norm_zh(k): v for k, v in evaluation.eval_pipeline.items()}})
    gh, gr = [norm_zh(h) for h in gold_header], [[norm_zh(c) for c in r] for r in gold_rows]
    al = {norm_str(norm_zh(a)): norm_str(norm_zh(n)) for a, n in (aliases or {}).items()}
    if parsed is None:
        return score_table(instance_id, ev, gh, gr, "", al, mode)
    header, rows = parsed

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(norm_zh(c).replace("|", "/") for c in cells) + " |"

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


def score_files(tasks_dir, responses_path, aliases: dict[str, str] | None = None,
                mode: str = WIDESEARCH) -> tuple[list[TaskScore], dict]:
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
    tasks = _read_jsonl(tasks_dir / TASKS_FILE, "tasks")
    responses = {r["instance_id"]: str(r.get("response", "")) for r in _read_jsonl(responses_path, "responses")}
    unknown = sorted(set(responses) - {t["instance_id"] for t in tasks})
    if unknown:
        raise WorldforgeError(f"{len(unknown)} response(s) name no task in {tasks_dir}, e.g. {unknown[0]!r}")
    scores = []
    by_name = None
    for t in tasks:
        iid = t["instance_id"]
        gold_file = tasks_dir / GOLD_DIR / f"{iid}.csv"
        if not gold_file.is_file():
            raise WorldforgeError(f"task {iid!r} has no gold table at {gold_file}")
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
        header, rows = read_gold_csv(gold_file.read_text())
        if aliases and by_name is None:
            by_name = aliases_by_name(aliases)
        mine = task_aliases(ev, header, rows, aliases, by_name) if aliases else None
        language = t.get("language") or "en"
        if language not in LANGUAGES:
            raise WorldforgeError(f"task {iid!r}: language {language!r} is not one this scorer reads ({', '.join(LANGUAGES)})")
        scores.append(score_table(iid, ev, header, rows, responses.get(iid, ""), mine, mode, language))
    return scores, average(scores)
