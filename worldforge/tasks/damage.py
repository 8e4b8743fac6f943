"""Answers to a task, right and wrong in the ways agents answer: the gold table in other
forms, and one damaged copy per kind of mistake. They check a scorer against WideSearch's
evaluator (`benchmarks/widesearch_parity.py`) and against itself (the tests): the gold forms
must score 1, each damage what WideSearch's rules give it.

`answers(header, rows, evaluation)` returns (kind, response) pairs; a kind that does not apply
to the task (no date column for a date damage) is left out. Every answer is a pure function of
the task, so the same task gives the same answers.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

STRING, NUMBER, DATE, URL, LIST = "string", "number", "date", "url", "list"
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def column_kinds(header: list[str], evaluation: dict) -> list[str]:
    """Each gold column's kind, from its eval_pipeline metric."""
    from .scoring import norm_column

    pipe = {norm_column(k): v for k, v in (evaluation.get("eval_pipeline") or {}).items()}
    out = []
    for h in header:
        metrics = (pipe.get(norm_column(h)) or {}).get("metric") or ["exact_match"]
        out.append({"number_near": NUMBER, "date_near": DATE, "url_match": URL, "llm_judge": LIST}.get(metrics[0], STRING))
    return out


def markdown(header: list[str], rows: list[list[str]], fenced: bool = True) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    body = "\n".join(lines)
    return f"Here is the table.\n\n```markdown\n{body}\n```" if fenced else f"Here is the table.\n\n{body}\n\nThat is all."


class _Task:
    def __init__(self, header: list[str], rows: list[list[str]], evaluation: dict, aliases: dict[str, str] | None):
        from .scoring import norm_column

        self.header, self.rows = list(header), [list(r) for r in rows]
        self.kinds = column_kinds(header, evaluation)
        keys = {norm_column(k) for k in evaluation.get("unique_columns", [])}
        self.keys = [i for i, h in enumerate(header) if norm_column(h) in keys]
        self.values = [i for i in range(len(header)) if i not in self.keys]
        self.crit = {}
        pipe = {norm_column(k): v for k, v in (evaluation.get("eval_pipeline") or {}).items()}
        for i, h in enumerate(header):
            self.crit[i] = (pipe.get(norm_column(h)) or {}).get("criterion")
        self.aliases = aliases or {}

    def cols(self, kind: str, values_only: bool = True) -> list[int]:
        pool = self.values if values_only else range(len(self.header))
        return [i for i in pool if self.kinds[i] == kind]

    def edit(self, fn: Callable[[str], str | None], cols: list[int], rows: list[int] | None = None) -> list[list[str]] | None:
        """A copy of the rows with fn applied to the given cells; None when nothing changed."""
        out = [r[:] for r in self.rows]
        changed = False
        for ri in (range(len(out)) if rows is None else rows):
            for c in cols:
                v = fn(out[ri][c])
                if v is not None and v != out[ri][c]:
                    out[ri][c] = v
                    changed = True
        return out if changed else None


def _num(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.4f}".rstrip("0").rstrip(".")


def _date(v: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        return None


def _shift(days: int) -> Callable[[str], str | None]:
    def f(v: str) -> str | None:
        d = _date(v)
        return (d + dt.timedelta(days=days)).isoformat() if d else None
    return f


def _scale(k: float) -> Callable[[str], str | None]:
    def f(v: str) -> str | None:
        x = _num(v)
        return _fmt(x * k) if x else None
    return f


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c) for c in s)


def answers(header: list[str], rows: list[list[str]], evaluation: dict,
            aliases: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(kind, response) for the gold forms and every damage that applies. `aliases` maps a key
    cell's value to another name of the same entity (for the alias kind)."""
    t = _Task(header, rows, evaluation, aliases)
    H, R = t.header, t.rows
    out: list[tuple[str, str]] = []

    def add(kind: str, rows_: list[list[str]] | None, header_: list[str] | None = None, fenced: bool = True) -> None:
        if rows_ is not None:
            out.append((kind, markdown(header_ or H, rows_, fenced)))

    # the gold, in the forms an agent writes it
    add("gold", R)
    add("gold_unfenced", R, fenced=False)
    order = list(range(len(H)))[::-1]
    add("gold_columns_reordered", [[r[i] for i in order] for r in R], [H[i] for i in order])
    add("gold_header_case", R, [h.upper() if h.isascii() else h for h in H])
    add("gold_bold_keys", t.edit(lambda v: f"**{v}**" if v else None, t.keys))
    add("gold_keys_upper", t.edit(lambda v: v.upper() if v.upper() != v else None, t.keys))
    if R:  # a partial draft first, then the whole table
        out.append(("first_table_is_a_draft", markdown(H, R[: max(1, len(R) // 2)]) + "\n\nCorrected:\n\n" + markdown(H, R)))

    # rows
    half = len(R) // 2
    if half:
        add("rows_dropped", R[:half])
    add("row_extra", R + [[(v + " II" if i in t.keys else v) for i, v in enumerate(R[0])]] if R else None)
    add("row_repeated", R + R[:1] if R else None)
    add("row_repeated_key_case", R + [[v.upper() if i in t.keys else v for i, v in enumerate(R[0])]]
        if R and any(R[0][i].upper() != R[0][i] for i in t.keys) else None)
    out.append(("no_table", "I could not find the information."))
    add("header_only", [])

    # columns
    add("column_extra", [r + ["x"] for r in R], H + ["Notes"])
    if t.values:
        drop = t.values[-1]
        add("column_missing", [[v for i, v in enumerate(r) if i != drop] for r in R], [h for i, h in enumerate(H) if i != drop])
    if any("（" in h or "）" in h for h in H):
        add("header_halfwidth_parens", R, [h.replace("（", "(").replace("）", ")") for h in H])
    out.append(("header_without_closing_pipe", markdown(H, R).replace(f"| {H[-1]} |", f"| {H[-1]}", 1)))

    # cells of any kind
    if t.values:
        add("cell_wrong", _wrong(t))
        add("cells_empty", t.edit(lambda v: "", t.values[:1], [0]) if R else None)
        add("cells_na", t.edit(lambda v: "N/A", t.values[:1], [0]) if R else None)
        add("cells_unknown", t.edit(lambda v: "unknown", t.values[:1], [0]) if R else None)

    # names
    add("key_nbsp", t.edit(lambda v: v.replace(" ", "\u00a0") if " " in v else None, t.keys))
    add("key_ideographic_space", t.edit(lambda v: v.replace(" ", "\u3000") if " " in v else v + "\u3000x", t.keys[:1], [0])
        if R and t.keys else None)
    add("key_fullwidth_letters", t.edit(lambda v: _fullwidth(v) if re.search("[A-Za-z]", v) else None, t.keys))
    add("key_alias", t.edit(lambda v: t.aliases.get(v), t.keys))
    strings = t.cols(STRING)
    add("string_case", t.edit(lambda v: v.swapcase() if v.swapcase() != v else None, strings))
    add("string_ideographic_space", t.edit(lambda v: v.replace(" ", "\u3000") if " " in v else None, strings))

    # numbers
    nums = t.cols(NUMBER)
    tol = [c for c in nums if isinstance(t.crit.get(c), (int, float)) and t.crit[c] > 0]
    add("number_within_tolerance", t.edit(_scale(1 + 0.5 * t.crit[tol[0]]) if tol else (lambda v: None), tol[:1]))
    add("number_out_of_tolerance", t.edit(_scale(1.5), nums[:1]))
    add("number_thousands_commas", t.edit(lambda v: f"{int(_num(v)):,}" if _num(v) and abs(_num(v)) >= 1000
                                          and float(_num(v)).is_integer() else None, nums))
    add("number_with_unit", t.edit(lambda v: f"{v} units" if _num(v) is not None else None, nums))
    add("number_plus_sign", t.edit(lambda v: "+" + v if _num(v) is not None and not v.startswith("-") else None, nums))
    add("number_wan", t.edit(lambda v: f"{_num(v) / 10000:g}万" if _num(v) and abs(_num(v)) >= 10000 else None, nums))
    add("number_fullwidth_comma", t.edit(lambda v: f"{int(_num(v)):,}".replace(",", "，") if _num(v) and abs(_num(v)) >= 1000
                                         and float(_num(v)).is_integer() else None, nums))
    add("number_fullwidth_digits", t.edit(lambda v: _fullwidth(v) if _num(v) is not None else None, nums))
    add("number_leading_zeros", t.edit(lambda v: "00" + v if v.isdigit() else None, nums))

    # dates
    dates = t.cols(DATE, values_only=False)
    add("date_long_form", t.edit(lambda v: f"{_MONTHS[d.month - 1]} {d.day}, {d.year}" if (d := _date(v)) else None, dates))
    add("date_day_first", t.edit(lambda v: f"{d.day:02d}/{d.month:02d}/{d.year}" if (d := _date(v)) else None, dates))
    add("date_month_year", t.edit(lambda v: f"{_MONTHS[d.month - 1]} {d.year}" if (d := _date(v)) else None, dates))
    add("date_bare_year", t.edit(lambda v: str(d.year) if (d := _date(v)) else None, dates))
    add("date_shift_20_days", t.edit(_shift(20), [c for c in dates if c in t.values]))
    add("date_shift_40_days", t.edit(_shift(40), [c for c in dates if c in t.values]))
    add("date_nian_yue_ri", t.edit(lambda v: f"{d.year}年{d.month}月{d.day}日" if (d := _date(v)) else None, dates))
    add("date_hao", t.edit(lambda v: f"{d.year}年{d.month}月{d.day}号" if (d := _date(v)) else None, dates))

    # URLs
    urls = t.cols(URL)
    add("url_host_upper", t.edit(lambda v: re.sub(r"(https?://)([^/]+)", lambda m: m[1] + m[2].upper(), v), urls))
    add("url_no_scheme", t.edit(lambda v: re.sub(r"^https?://", "", v), urls))
    add("url_other_path", t.edit(lambda v: v.rstrip("/") + "/about", urls))

    # lists
    lists = t.cols(LIST)
    add("list_reordered", t.edit(lambda v: "; ".join(v.split("; ")[::-1]) if "; " in v else None, lists))
    add("list_comma_separated", t.edit(lambda v: v.replace("; ", ", ") if "; " in v else None, lists))
    add("list_item_missing", t.edit(lambda v: "; ".join(v.split("; ")[:-1]) if "; " in v else None, lists))
    return out


def _wrong(t: _Task) -> list[list[str]] | None:
    """One value cell of the first row made wrong the way its kind goes wrong."""
    if not t.rows or not t.values:
        return None
    c = t.values[0]
    v = t.rows[0][c]
    k = t.kinds[c]
    if k == NUMBER:
        new = _fmt(_num(v) * 3 + 7) if _num(v) is not None else "987654"
    elif k == DATE and _date(v):
        new = (_date(v) + dt.timedelta(days=800)).isoformat()
    elif k == URL:
        new = "https://wrong.example"
    elif k == LIST:
        new = v + "; Nobody"
    else:
        new = v + " Wrong"
    return t.edit(lambda _: new, [c], [0])
