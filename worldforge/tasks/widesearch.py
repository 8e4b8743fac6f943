"""WideSearch's evaluator, rule for rule, without pandas and without its LLM.

This is the default scorer (`scoring.WIDESEARCH`): it gives the seven numbers that
`evaluate_single_query` in ByteDance-Seed/WideSearch gives (`src/evaluation/`, at the commit
in `UPSTREAM`, with the pandas and dateparser versions its requirements.txt pins), for the same
task, gold CSV and response. What it follows, in order:

1. The table (`response_frame`): the first ```markdown block, else the run of pipe lines around
   the response's pipes; the first line lowercased and without spaces; separator lines and
   lines without a pipe dropped; every cell stripped; then read as `pandas.read_csv(sep="|")`
   reads it (`read_frame`): quotes, short rows padded, a row with more fields than the rows
   before it an error, a first row longer than the header turning its first cells into the
   index, unnamed columns dropped, repeated names suffixed ".1".
2. Every column as pandas types it and `astype(str)` writes it (`as_str`): the NA spellings
   ("", "N/A", "None", "null", ...) become "nan"; a column of integers becomes Python integers
   ("+837" and "007" read 837 and 7), of integers and blanks floats ("12.0"), of numbers floats;
   "true"/"TRUE"/"True" "True"; anything else the text as written. The gold CSV is read the same way.
3. The column set must be exactly `required` after `norm_column` (strip, lowercase, no ASCII
   spaces); otherwise every metric is 0. (Upstream asks its LLM to map the names first; without
   an LLM the names map to themselves.)
4. Rows are de-duplicated on the raw `unique_columns` values (before any normalising: "Alpha" and
   "ALPHA" are two rows). Key columns whose metric is exact_match or llm_judge are aligned to
   the gold keys (upstream: its LLM; here: `align`, or none).
5. Every `eval_pipeline` column is preprocessed, on both tables: `norm_str` (lowercase, strip,
   no ASCII spaces, no "*"), `extract_number` (the first number after ASCII commas are dropped,
   "NULL" when there is none), `norm_date` (dateparser with PREFER_DAY_OF_MONTH=first; what it
   cannot read stays as written).
6. Success is 1 when both tables have the same shape and the same rows in the same column order,
   or when all six precision/recall/F1 figures are exactly 1. Rows are inner-joined on the keys
   (many to many); each key column scores 1; each other column scores each of its metrics;
   a row's score is its lowest; row and item true positives are the sums, over the de-duplicated
   predicted and gold rows (times the number of required columns for items).
7. An error anywhere (a key missing from the columns, a row with too many cells, an unquoted
   quote running to the end) scores every metric 0, as upstream's `evaluator error` does.

The metrics are upstream's: `exact_match` (equal ignoring case, nothing stripped), `number_near`
(|r - t| <= |t| * criterion, a % divides by 100, two non-numbers equal only when their text is),
`date_near` (within 31 days; two cells dateparser cannot read are a match), `url_match` (the same
set of host names, as written, of the http(s) URLs in each cell), `in_match` (the response is a
substring of the gold). `llm_judge` needs upstream's LLM; without one (`judge=None`) every such
cell scores 0, as upstream's does when its judge fails, and worldforge's list columns name
`set_match` as the deterministic judge (`llm_free`).

Dates that name no year or month (a bare year, "July 17") are completed by dateparser from the
run date: pass `as_of` to read them as of a fixed date instead (the rollout reward reads them as
of the world's date, so rewards do not change with the calendar).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlparse

UPSTREAM = "ByteDance-Seed/WideSearch@0e664c307d12c88810a31530be40c8c358f56b4f"
UPSTREAM_PINS = {"pandas": "2.3.1", "dateparser": "1.2.2"}


ROW_LIMIT_FACTOR, ROW_LIMIT_MIN = 10, 100


def row_limit(gold_rows: int) -> int:
    """The most rows an answer is read for: ten times the gold's, at least 100. An answer past
    it scores 0 at once (its item precision would be under a tenth): a degenerate answer of
    thousands of rows costs no more to score than a right one."""
    return max(ROW_LIMIT_FACTOR * gold_rows, ROW_LIMIT_MIN)


def over_row_limit(rows: int, gold_rows: int) -> str:
    """Why an answer of `rows` rows is not read, or "" when it is within `row_limit`."""
    limit = row_limit(gold_rows)
    return (f"the answer has {rows:,} rows, over the limit of {limit:,} ({ROW_LIMIT_FACTOR}x the gold's {gold_rows:,}, "
            f"at least {ROW_LIMIT_MIN})" if rows > limit else "")


class EvaluatorError(Exception):
    """Where upstream's evaluator raises (and scores the response 0 on every metric)."""


def norm_column(col: str) -> str:
    return str(col).strip().lower().replace(" ", "")


# --------------------------------------------------------------------------- pandas.read_csv, as upstream calls it

NA_VALUES = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
                       "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})
_TRUE, _FALSE = frozenset({"True", "TRUE", "true"}), frozenset({"False", "FALSE", "false"})
_SPACE = "[ \t\r\n\v\f]*"
_INT_RE = re.compile(f"{_SPACE}([+-]?[0-9]+){_SPACE}")
_FLOAT_RE = re.compile(f"{_SPACE}([+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?inf(?:inity)?){_SPACE}",
                       re.IGNORECASE)
_I64, _U64 = 2 ** 63, 2 ** 64


def tokenize(text: str, sep: str) -> list[list[str]]:
    """Records as pandas' C tokenizer splits them: `"` opens a quoted field only at a field's
    start ("" inside is one quote; text after the closing quote joins the field); blank and
    whitespace-only lines are skipped; an open quote at the end is an error."""
    records: list[list[str]] = []
    fields: list[str] = []
    buf: list[str] = []
    state = 0  # 0 start of record, 1 start of field, 2 in field, 3 in quoted field, 4 quote in quoted field
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\r":  # \r\n and a lone \r end a line, as \n does
            if i + 1 < n and text[i + 1] == "\n":
                i += 1
            c = "\n"
        if state == 0:
            if c == "\n":
                i += 1
                continue
            if c in " \t" and _blank_rest(text, i):
                i = text.find("\n", i)
                i = n if i < 0 else i
                continue
            state = 1
            continue  # the same character, at the start of a field
        if state == 1:
            if c == '"':
                state = 3
            elif c == sep:
                fields.append("")
            elif c == "\n":
                fields.append("")
                records.append(fields)
                fields, state = [], 0
            else:
                buf.append(c)
                state = 2
        elif state == 2:
            if c == sep:
                fields.append("".join(buf))
                buf, state = [], 1
            elif c == "\n":
                fields.append("".join(buf))
                records.append(fields)
                buf, fields, state = [], [], 0
            else:
                buf.append(c)
        elif state == 3:
            if c == '"':
                state = 4
            else:
                buf.append(c)
        else:  # a quote inside a quoted field: doubled, closing, or closing with text after it
            if c == '"':
                buf.append('"')
                state = 3
            elif c == sep:
                fields.append("".join(buf))
                buf, state = [], 1
            elif c == "\n":
                fields.append("".join(buf))
                records.append(fields)
                buf, fields, state = [], [], 0
            else:
                buf.append(c)
                state = 2
        i += 1
    if state == 3:
        raise EvaluatorError("Error tokenizing data. C error: EOF inside string")
    if state != 0:
        fields.append("".join(buf))
        records.append(fields)
    return records


def _blank_rest(text: str, i: int) -> bool:
    j = text.find("\n", i)
    return not text[i:(len(text) if j < 0 else j)].strip(" \t\r")


@dataclass
class Frame:
    """A table as upstream holds it after `astype(str)`: column names in order, rows of strings."""

    columns: list[str]
    rows: list[list[str]]

    def col(self, name: str) -> int:
        try:
            return self.columns.index(name)
        except ValueError:
            raise EvaluatorError(f"KeyError: {name!r}") from None


def _dedup_names(names: list[str]) -> list[str]:
    """pandas' C reader's repeated-name mangling: a, a -> a, a.1, skipping a suffix the header
    already uses (a, a, a.1 -> a, a.2, a.1)."""
    header = list(names)
    counts: dict[str, int] = {}
    for i, col in enumerate(header):
        old = col
        cur = counts.get(col, 0)
        while cur > 0:
            counts[old] = cur + 1
            col = f"{old}.{cur}"
            cur = cur + 1 if col in header else counts.get(col, 0)
        header[i] = col
        counts[col] = cur + 1
    return header


def read_frame(records: list[list[str]]) -> Frame:
    """`pandas.read_csv` over tokenized records: the first is the header (an empty name is
    "Unnamed: i"); a first data row with k more fields than the header makes its first k
    fields the index; later rows may not be longer than that first row; short rows are padded
    with NA; every column then typed and written back as text (`as_str`)."""
    if not records:
        raise EvaluatorError("EmptyDataError: No columns to parse from file")
    header = [h if h != "" else f"Unnamed: {i}" for i, h in enumerate(records[0])]
    header = _dedup_names(header)
    data = records[1:]
    n = len(header)
    width = max(n, len(data[0])) if data else n
    lead = width - n
    for j, r in enumerate(data[1:], start=3):
        if len(r) > width:
            raise EvaluatorError(f"ParserError: Expected {width} fields in line {j}, saw {len(r)}")
    cells = [(r + [""] * (width - len(r)))[lead:] for r in data]
    cols = [as_str([row[c] for row in cells]) for c in range(n)]
    return Frame(header, [list(r) for r in zip(*cols)] if cells else [])


def as_str(tokens: Sequence[str]) -> list[str]:
    """One column as pandas 2.3 types it and `astype(str)` writes it (see the module notes)."""
    na = [t in NA_VALUES for t in tokens]
    vals = [t for t, x in zip(tokens, na) if not x]
    if not tokens:
        return []
    if not vals:
        return ["nan"] * len(tokens)
    ints = [_INT_RE.fullmatch(t) for t in vals]
    if all(ints):
        nums = [int(m[1]) for m in ints]
        if all(-_I64 <= v < _I64 for v in nums):
            if not any(na):
                return [str(v) for v in nums]
            it = iter(nums)
            return ["nan" if x else repr(float(next(it))) for x in na]
        if not any(na) and all(0 <= v < _U64 for v in nums):
            return [str(v) for v in nums]
        return list(tokens)  # pandas keeps such a column as read, its NA spellings too
    floats = [_float(t) for t in vals]
    if all(f is not None for f in floats):
        it = iter(floats)
        return ["nan" if x else repr(next(it)) for x in na]
    if all(t in _TRUE or t in _FALSE for t in vals):
        return ["nan" if x else str(t in _TRUE) for t, x in zip(tokens, na)]
    return ["nan" if x else t for t, x in zip(tokens, na)]


def _float(t: str) -> float | None:
    m = _FLOAT_RE.fullmatch(t)
    if not m:
        return None
    v = float(m[1])
    if math.isinf(v) and "inf" not in m[1].lower():
        return None  # out of range: pandas keeps the text
    return v


def read_csv(text: str, sep: str = ",") -> Frame:
    return read_frame(tokenize(text, sep))


# --------------------------------------------------------------------------- the response's table

_MARKDOWN_RE = re.compile(r"```markdown(.*?)```", re.DOTALL)
_PIPE_RUN_RE = re.compile(r"((?:\|.*\n?)+)")
_RULE_CHARS = frozenset("|- :")


def markdown_of(response: str) -> str | None:
    """The text upstream hands to `read_csv`, or None when it finds no table."""
    found = _MARKDOWN_RE.findall(response)
    if not found:
        pipes = [m.start() for m in re.finditer(r"\|", response)]
        if len(pipes) >= 4:
            start = response.rfind("\n", 0, pipes[0])
            start = 0 if start == -1 else start
            end = response.find("\n", pipes[-1])
            end = len(response) if end == -1 else end
            found = _PIPE_RUN_RE.findall(response[start:end])
    if not found:
        return None
    lines = found[0].strip().split("\n")
    lines[0] = lines[0].replace(" ", "").lower()
    out = []
    for line in (x.strip() for x in lines):
        if set(line.strip()) <= _RULE_CHARS or "|" not in line:
            continue
        out.append("|".join(part.strip() for part in line.split("|")))
    return "\n".join(out)


def response_frame(response: str) -> Frame | None:
    """The response's table as upstream reads it (None: no table; EvaluatorError: unreadable)."""
    text = markdown_of(response)
    if text is None:
        return None
    f = read_csv(text, "|")
    keep = [i for i, c in enumerate(f.columns) if not c.startswith("Unnamed")]
    return Frame([f.columns[i] for i in keep], [[r[i] for i in keep] for r in f.rows])


def gold_frame(header: Sequence[str], rows: Sequence[Sequence[str]], required: Sequence[str]) -> Frame:
    """The gold CSV's records as upstream's loader reads them: typed, columns normalised, the
    required ones selected in their order."""
    f = read_frame([list(header), *[list(r) for r in rows if len(r)]])
    names = [norm_column(c.strip()) for c in f.columns]
    missing = [c for c in required if c not in names]
    if missing:
        raise ValueError(f"the gold table has no column {missing[0]!r} (its columns: {', '.join(names)})")
    idx = [names.index(c) for c in required]
    return Frame(list(required), [[r[i] for i in idx] for r in f.rows])


# --------------------------------------------------------------------------- preprocess and metrics


def norm_str(content: str) -> str:
    return str(content).lower().strip().replace(" ", "").replace("*", "")


_NUMBER_RE = re.compile(r"[-+]?\d*\.\d+%?|[-+]?\d+\.?\d*%?")


def extract_number(content: str) -> str:
    m = _NUMBER_RE.search(str(content).replace(",", ""))
    return m.group(0) if m else "NULL"


_ISO_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
# Placeholders an agent writes for a value it could not find (the oracle's `unknown`), which
# dateparser reads as no date only after loading all 205 of its locales (about 2 s, once per
# process): answered here as dateparser answers them (a test checks each against dateparser).
# Not every placeholder is one: dateparser reads "N/A" and "nan" as dates of this year.
NOT_DATES = frozenset(("unknown", "Unknown", "not found", "none found", "未知"))


@lru_cache(maxsize=1 << 16)
def parse_date(content: str, as_of: dt.date | None = None) -> dt.datetime | None:
    """dateparser.parse(content, PREFER_DAY_OF_MONTH=first), as of `as_of` (None: now, as
    upstream). A 4-digit-year ISO date, the common case, is read without dateparser (it reads
    them the same way). Raises what dateparser raises."""
    m = _ISO_RE.fullmatch(content) if content.isascii() else None
    if m and int(m[1]) >= 1000:
        try:
            return dt.datetime(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            pass
    if content in NOT_DATES:
        return None
    import dateparser

    settings = {"PREFER_DAY_OF_MONTH": "first"}
    if as_of is not None:
        settings["RELATIVE_BASE"] = dt.datetime(as_of.year, as_of.month, as_of.day)
    return dateparser.parse(content, settings=settings)


def norm_date(content: str, as_of: dt.date | None = None) -> str:
    try:
        d = parse_date(content, as_of)
    except Exception as exc:  # upstream's norm_date does not catch: the evaluation fails
        raise EvaluatorError(f"norm_date({content!r}): {type(exc).__name__}: {exc}") from None
    return content if d is None else d.strftime("%Y-%m-%d")


def exact_match(response: str, target: str, criterion=None) -> float:
    return float(response.lower() == target.lower())


def _percent_or_float(v: str) -> float | None:
    try:
        return float(v.replace("%", "")) / 100.0 if "%" in v else float(v)
    except (ValueError, TypeError):
        return None


def number_near(response: str, target: str, criterion=None) -> float:
    r, t = _percent_or_float(response), _percent_or_float(target)
    if r is None or t is None:
        return float(r is None and t is None and response == target)
    try:
        return float(abs(r - t) <= abs(t) * criterion)
    except TypeError as exc:  # no numeric criterion
        raise EvaluatorError(f"number_near: {exc}") from None


def date_near(response: str, target: str, criterion=None, as_of: dt.date | None = None) -> float:
    def read(v: str):
        try:
            return parse_date(v, as_of)
        except Exception:
            return None

    r, t = read(response), read(target)
    if r is None or t is None:
        return float(r is None and t is None)
    try:
        return float(abs((r - t).days) <= 31)
    except TypeError as exc:  # one date with a time zone, one without
        raise EvaluatorError(f"date_near: {exc}") from None


_URL_RE = re.compile(r"http[s]?://(?:[a-zA-Z]|[0-9]|[$-_@.&+]|[!*\\(\\),]|(?:%[0-9a-fA-F][0-9a-fA-F]))+")


def url_match(response: str, target: str, criterion=None) -> float:
    try:
        hosts = [{urlparse(u).netloc for u in _URL_RE.findall(v)} for v in (response, target)]
    except ValueError as exc:
        raise EvaluatorError(f"url_match: {exc}") from None
    return float(hosts[0] == hosts[1])


def in_match(response: str, target: str, criterion=None) -> float:
    return float(response in target)


PREPROCESS: dict[str, Callable[..., str]] = {"norm_str": norm_str, "extract_number": extract_number, "norm_date": norm_date}
METRICS: dict[str, Callable[..., float]] = {"exact_match": exact_match, "number_near": number_near, "date_near": date_near,
                                            "url_match": url_match, "in_match": in_match}
LLM_METRIC = "llm_judge"


# --------------------------------------------------------------------------- the evaluation


@dataclass
class Outcome:
    """`EvaluationResult`'s seven numbers, and what led to them."""

    success: float = 0.0
    row_precision: float = 0.0
    row_recall: float = 0.0
    row_f1: float = 0.0
    item_precision: float = 0.0
    item_recall: float = 0.0
    item_f1: float = 0.0
    parsed: bool = False  # a table was read from the response
    columns_match: bool = False  # its columns are the required ones
    gold_rows: int = 0
    predicted_rows: int = 0
    matched_rows: int = 0  # rows of the inner join on the keys
    correct_rows: float = 0.0  # the sum of the joined rows' scores
    message: str = ""  # why the score is 0, when it is for a reason other than the cells


Aligner = Callable[[list[str], list[str]], dict[str, str]]  # response keys, gold keys -> {response key: gold key}
Judge = Callable[[str, str, object], float]  # response cell, gold cell, criterion -> 0 or 1


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 1e-9 else 0.0


def evaluate(evaluation: dict, gold: Frame, response: str, *, align: Aligner | None = None,
             judge: Callable[[str], Judge | None] | None = None, as_of: dt.date | None = None) -> Outcome:
    """Score one response as upstream's `evaluate_single_query` does. `evaluation` is the task's
    WideSearch block (names as written: upstream does not normalise them); `gold` from
    `gold_frame`. `align` stands in for upstream's LLM key alignment (None: keys as written);
    `judge(column)` for its LLM judge of that column (None or a None judge: every such cell 0)."""
    try:
        return _evaluate(evaluation, gold, response, align, judge, as_of)
    except EvaluatorError as exc:
        return Outcome(parsed=markdown_of(response or "") is not None, gold_rows=len(gold.rows),
                       message=f"evaluator error: {exc}")


def _evaluate(ev: dict, gold: Frame, response: str, align: Aligner | None, judge, as_of) -> Outcome:
    required = list(ev["required"])
    unique = list(ev["unique_columns"])
    pipeline: dict = ev.get("eval_pipeline") or {}
    resp = response_frame(response or "")
    if resp is None:
        return Outcome(gold_rows=len(gold.rows), message="response_df is None")
    resp.columns = [norm_column(c) for c in resp.columns]
    if len(set(resp.columns)) != len(resp.columns):
        raise EvaluatorError(f"two columns named alike: {resp.columns}")
    if set(required) != set(resp.columns):
        return Outcome(parsed=True, gold_rows=len(gold.rows), predicted_rows=len(resp.rows),
                       message=f"required_columns {required} != response_df {resp.columns}")
    ans = Frame(list(gold.columns), [list(r) for r in gold.rows])
    resp, ans = _dedupe(resp, unique), _dedupe(ans, unique)
    over = over_row_limit(len(resp.rows), len(ans.rows))
    if over:  # scored 0 without reading its cells: no row of it could raise the score enough
        return Outcome(parsed=True, columns_match=True, gold_rows=len(ans.rows), predicted_rows=len(resp.rows), message=over)

    _align_keys(resp, ans, unique, pipeline, align)

    # Upstream preprocesses every cell, then joins on the keys. Only the key columns decide the
    # join, and only joined rows are scored, so the other columns are preprocessed on the gold
    # rows and the joined response rows alone: the same scores, without reading dates in rows no
    # gold row matches (dateparser spends about half a second on a cell that is no date).
    steps = []
    for col, item in pipeline.items():
        for step in item.get("preprocess", []):
            fn = PREPROCESS.get(step)
            if fn is None:
                raise EvaluatorError(f"preprocess_func_name {step} not in preprocess_function_registry")
            steps.append((col, step, fn))

    def preprocess(f: Frame, rows: list[list[str]], keys: bool) -> None:
        for col, step, fn in steps:
            if (col in unique) is keys:
                i = f.col(col)
                for r in rows:
                    r[i] = fn(r[i], as_of) if step == "norm_date" else fn(r[i])

    preprocess(resp, resp.rows, True)
    preprocess(ans, ans.rows, True)
    ak, rk = [ans.col(c) for c in unique], [resp.col(c) for c in unique]
    by_key: dict[tuple, list[list[str]]] = {}
    for r in resp.rows:
        by_key.setdefault(tuple(r[i] for i in rk), []).append(r)
    pairs = [(g, p) for g in ans.rows for p in by_key.get(tuple(g[i] for i in ak), ())]
    joined = list({id(p): p for _g, p in pairs}.values())
    preprocess(resp, joined, False)
    preprocess(ans, ans.rows, False)

    # equal tables join every response row, so a table with a row that joined none is not equal
    same = (len(joined) == len(resp.rows) == len(ans.rows) and len(ans.columns) == len(resp.columns)
            and resp.columns == ans.columns and sorted(map(tuple, ans.rows)) == sorted(map(tuple, resp.rows)))

    scorers = _scorers(required, unique, pipeline, ans, resp, judge, as_of)
    n_keys = len({f"{c}_exact_match" for c in required if c in unique})
    row_sum = item_sum = 0.0
    for g, p in pairs:
        cells = {}
        for name, gi, ri, fn, crit in scorers:
            cells[name] = fn(p[ri], g[gi], crit)
        scores = list(cells.values()) + [1.0] * n_keys
        row_sum += min(scores) if scores else 0.0
        item_sum += sum(scores)

    n_pred, n_gold, n_cols = len(resp.rows), len(ans.rows), len(required)
    rp = row_sum / n_pred if n_pred else 0.0
    rr = row_sum / n_gold if n_gold else 0.0
    ip = item_sum / (n_pred * n_cols) if n_pred * n_cols else 0.0
    ir = item_sum / (n_gold * n_cols) if n_gold * n_cols else 0.0
    rf, if_ = _f1(rp, rr), _f1(ip, ir)
    success = 1.0 if same or (ip == ir == if_ == 1.0 and rp == rr == rf == 1.0) else 0.0
    return Outcome(success, rp, rr, rf, ip, ir, if_, True, True, n_gold, n_pred, len(pairs), row_sum)


def _align_keys(resp: Frame, ans: Frame, unique: list[str], pipeline: dict, align: Aligner | None) -> None:
    """Key alignment (upstream's LLM) for keys compared as text: each response key mapped onto a
    gold one, the key as written kept in a `<key>_before_map` column."""
    for col in unique:
        item = pipeline.get(col)
        if item is None:
            continue
        metrics = item.get("metric", [])
        if LLM_METRIC in metrics or "exact_match" in metrics:
            i = resp.col(col)
            mapping = align([r[i] for r in resp.rows], [r[ans.col(col)] for r in ans.rows]) if align else {}
            resp.columns.append(col + "_before_map")
            for r in resp.rows:
                r.append(r[i])
                r[i] = mapping.get(r[i], r[i])


def _scorers(required: list[str], unique: list[str], pipeline: dict, ans: Frame, resp: Frame, judge, as_of) -> list[tuple]:
    """Each scored cell's (score column, gold index, response index, metric, criterion): every
    metric of every required column that is no key, as upstream's registries name them."""
    scorers = []  # (score column, gold index, response index, metric, criterion)
    for col in required:
        if col in unique:
            continue
        item = pipeline.get(col)
        if item is None:
            raise EvaluatorError(f"KeyError: {col!r} (no eval_pipeline entry)")
        for name in item.get("metric", []):
            if name == LLM_METRIC:
                fn = judge(col) if judge else None
                fn = fn or (lambda r, t, c: 0.0)
            elif name in METRICS:
                fn = METRICS[name]
            else:
                raise EvaluatorError(f"metric_func_name {name} not in metric_function_registry")
            if name == "date_near":
                fn = _with_as_of(as_of)
            scorers.append((f"{col}_{name}", ans.col(col), resp.col(col), fn, item.get("criterion")))
    return scorers


def _with_as_of(as_of):
    return lambda r, t, c: date_near(r, t, c, as_of)


def _dedupe(f: Frame, unique: list[str]) -> Frame:
    """drop_duplicates(subset=unique): the first row of each exact key, as written."""
    idx = [f.col(c) for c in unique]
    seen: set[tuple] = set()
    rows = []
    for r in f.rows:
        k = tuple(r[i] for i in idx)
        if k not in seen:
            seen.add(k)
            rows.append(r)
    return Frame(f.columns, rows)
