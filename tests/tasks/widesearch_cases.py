"""Cases for WideSearch's evaluator, with the seven numbers it gives them.

Each case is a task (`evaluation`, gold CSV) and a response; `EXPECTED[name]` holds
(score, precision_by_row, recall_by_row, f1_by_row, precision_by_item, recall_by_item,
f1_by_item) as `evaluate_single_query` in ByteDance-Seed/WideSearch computes them at commit
0e664c307d12c88810a31530be40c8c358f56b4f (src/evaluation/, pandas 2.3.1, dateparser 1.2.2),
its LLM replaced by a stub that maps no key and judges a list cell right only when it equals
the reference. The numbers were produced by running that code on these cases; nothing of it is
copied here. Plain data: no imports, so WideSearch's own Python can read this file too.
"""

EN = {
    "unique_columns": ["company"],
    "required": ["company", "code", "employees", "founded", "website", "members"],
    "eval_pipeline": {
        "company": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "code": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "employees": {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.01},
        "founded": {"preprocess": ["norm_date"], "metric": ["date_near"]},
        "website": {"preprocess": [], "metric": ["url_match"]},
        "members": {"preprocess": [], "metric": ["llm_judge"], "llm_free": "set_match",
                    "criterion": "the same members in any order"},
    },
}
EN_HEADER = ["Company", "Code", "Employees", "Founded", "Website", "Members"]
EN_ROWS = [
    ["Tisfaan Pharmaceuticals", "007", "1200", "2017-12-05", "https://www.tisfaan.example", "Ada Obi; Li Wen"],
    ["Orroshes Motors", "12", "8.4", "2009-04-28", "https://www.orroshes.example", "Sam Roe"],
    ["Velkor Labs", "5", "34510", "1998-01-15", "https://www.velkor.example", "Kai Ng; Bo Li"],
]

ZH = {
    "unique_columns": ["公司名称"],
    "required": ["公司名称", "营业收入（万元）", "成立日期"],
    "eval_pipeline": {
        "公司名称": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
        "营业收入（万元）": {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.01},
        "成立日期": {"preprocess": ["norm_date"], "metric": ["date_near"]},
    },
}
ZH_HEADER = ["公司名称", "营业收入（万元）", "成立日期"]
ZH_ROWS = [["华星科技有限公司", "11888", "2023-12-25"], ["嘉远航天集团", "3451", "1998-11-02"]]


def csv_text(header, rows):
    def q(v):
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n') else v
    return "\n".join(",".join(q(v) for v in r) for r in [header, *rows]) + "\n"


def md(header, rows, fenced=True, pipes=True):
    if pipes:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    else:
        lines = [" | ".join(header), " | ".join("---" for _ in header)] + [" | ".join(r) for r in rows]
    body = "\n".join(lines)
    return f"Here you go.\n\n```markdown\n{body}\n```\n" if fenced else f"Here you go.\n\n{body}\n\nDone."


def edit(rows, **cells):
    """A copy of `rows` with cells replaced: edit(rows, r1c2="x") sets row 1, column 2."""
    out = [r[:] for r in rows]
    for rc, v in cells.items():
        r, c = rc[1:].split("c")
        out[int(r)][int(c)] = v
    return out


def _en(name, response, evaluation=None):
    return name, (evaluation or EN), EN_HEADER, EN_ROWS, response


def _zh(name, response):
    return name, ZH, ZH_HEADER, ZH_ROWS, response


H, R = EN_HEADER, EN_ROWS
CASES = [
    # where the table is
    _en("gold", md(H, R)),
    _en("gold_unfenced", md(H, R, fenced=False)),
    _en("gold_no_outer_pipes_in_block", md(H, R, pipes=False)),
    _en("gold_no_outer_pipes_unfenced", md(H, R, fenced=False, pipes=False)),
    _en("first_markdown_block_has_no_table", "```markdown\n# Notes\n```\n" + md(H, R)),
    _en("first_of_two_blocks_is_a_draft", md(H, R[:1]) + "\nFinal:\n" + md(H, R)),
    _en("prose_with_pipes_before_the_table", "Columns: company | code | employees\n\n" + md(H, R, fenced=False)),
    _en("no_table", "I could not find them."),
    _en("header_only", md(H, [])),
    # the table's text as pandas reads it
    _en("row_with_an_extra_cell", md(H, [R[0], R[1] + ["x"], R[2]])),
    _en("unclosed_quote_runs_to_the_end", md(H, edit(R, r0c0='"Tisfaan Pharmaceuticals'))),
    _en("quoted_cell", md(H, edit(R, r0c0='"Tisfaan Pharmaceuticals"'))),
    _en("header_without_closing_pipe", md(H, R).replace("| Members |", "| Members", 1)),
    _en("escaped_pipe_in_a_cell", md(H, edit(R, r1c5="Sam Roe \\| Jo Ma"))),
    _en("plus_sign_integer", md(H, edit(R, r1c1="+12", r0c2="+1200"))),
    _en("code_without_leading_zeros", md(H, edit(R, r0c1="7"))),
    _en("blank_cell_turns_integers_into_floats", md(H, edit(R, r1c1=""))),
    _en("na_spelling_in_a_number_column", md(H, edit(R, r2c2="N/A"))),
    _en("true_as_a_code", md(H, edit(R, r2c1="TRUE"))),
    # columns
    _en("columns_reordered", md([H[i] for i in (5, 4, 3, 2, 1, 0)], [[r[i] for i in (5, 4, 3, 2, 1, 0)] for r in R])),
    _en("header_in_capitals_with_spaces", md([h.upper() + " " for h in H], R)),
    _en("extra_column", md(H + ["Notes"], [r + ["x"] for r in R])),
    _en("missing_column", md(H[:5], [r[:5] for r in R])),
    _en("the_same_column_twice", md(H + ["code"], [r + [r[1]] for r in R])),
    _en("nbsp_in_a_header", md(["Com\u00a0pany"] + H[1:], R)),
    # rows
    _en("rows_dropped", md(H, R[:2])),
    _en("row_extra", md(H, R + [["Nova Works", "9", "10", "2001-01-01", "https://nova.example", "Al Bo"]])),
    _en("row_repeated", md(H, R + R[:1])),
    _en("row_repeated_with_key_in_capitals", md(H, R + [["TISFAAN PHARMACEUTICALS"] + R[0][1:]])),
    _en("key_in_capitals_and_bold", md(H, edit(R, r0c0="**TISFAAN PHARMACEUTICALS**"))),
    # names
    _en("nbsp_in_a_key", md(H, edit(R, r0c0="Tisfaan\u00a0Pharmaceuticals"))),
    _en("ideographic_space_in_a_key", md(H, edit(R, r0c0="Tisfaan\u3000Pharmaceuticals"))),
    _en("ideographic_space_in_a_code", md(H, edit(R, r1c1="1\u30002"))),
    _en("fullwidth_letters_in_a_key", md(H, edit(R, r2c0="Ｖｅｌｋｏｒ Ｌａｂｓ"))),
    _en("code_with_trailing_space", md(H, edit(R, r2c1="5 "))),
    # numbers
    _en("number_with_commas_and_unit", md(H, edit(R, r2c2="34,510 people"))),
    _en("number_within_tolerance", md(H, edit(R, r2c2="34600"))),
    _en("number_out_of_tolerance", md(H, edit(R, r2c2="36000"))),
    _en("number_wan", md(H, edit(R, r2c2="3.451万"))),
    _en("number_fullwidth_comma", md(H, edit(R, r2c2="34，510"))),
    _en("number_fullwidth_digits", md(H, edit(R, r1c2="８．４"))),
    _en("number_fullwidth_integer", md(H, edit(R, r0c2="１２００"))),
    _en("number_percent", md(H, edit(R, r1c2="840%"))),
    _en("number_unknown", md(H, edit(R, r1c2="unknown"))),
    # dates
    _en("date_long_form", md(H, edit(R, r0c3="December 5, 2017"))),
    _en("date_month_first_slashes", md(H, edit(R, r1c3="04/28/2009"))),
    _en("date_day_first_slashes", md(H, edit(R, r1c3="28/04/2009"))),
    _en("date_month_and_year", md(H, edit(R, r1c3="April 2009"))),
    _en("date_20_days_off", md(H, edit(R, r2c3="1998-02-04"))),
    _en("date_40_days_off", md(H, edit(R, r2c3="1998-02-24"))),
    _en("date_nian_yue_ri", md(H, edit(R, r0c3="2017年12月5日"))),
    _en("date_hao", md(H, edit(R, r0c3="2017年12月5号"))),
    _en("date_unreadable", md(H, edit(R, r0c3="sometime in 2017"))),
    # URLs
    _en("url_other_path", md(H, edit(R, r0c4="https://www.tisfaan.example/about"))),
    _en("url_host_in_capitals", md(H, edit(R, r0c4="HTTPS://WWW.Tisfaan.example"))),
    _en("url_without_scheme", md(H, edit(R, r0c4="www.tisfaan.example"))),
    _en("url_other_host", md(H, edit(R, r0c4="https://tisfaan.example"))),
    # lists (the stub judge: right only when equal to the reference)
    _en("list_reordered", md(H, edit(R, r0c5="Li Wen; Ada Obi"))),
    _en("list_item_missing", md(H, edit(R, r0c5="Ada Obi"))),
    # the task's own names as written
    _en("unique_columns_not_normalised", md(H, R), {**EN, "unique_columns": ["Company "]}),
    # Chinese
    _zh("zh_gold", md(ZH_HEADER, ZH_ROWS)),
    _zh("zh_halfwidth_parens_in_header", md(["公司名称", "营业收入(万元)", "成立日期"], ZH_ROWS)),
    _zh("zh_number_wan", md(ZH_HEADER, edit(ZH_ROWS, r0c1="1.1888万"))),
    _zh("zh_number_fullwidth_comma", md(ZH_HEADER, edit(ZH_ROWS, r1c1="3，451"))),
    _zh("zh_date_nian_yue_ri", md(ZH_HEADER, edit(ZH_ROWS, r0c2="2023年12月25日"))),
    _zh("zh_date_hao", md(ZH_HEADER, edit(ZH_ROWS, r0c2="2023年12月25号"))),
    _zh("zh_space_in_a_name", md(ZH_HEADER, edit(ZH_ROWS, r1c0="嘉远 航天集团"))),
    _zh("zh_ideographic_space_in_a_name", md(ZH_HEADER, edit(ZH_ROWS, r1c0="嘉远\u3000航天集团"))),
]

EXPECTED = {
    'gold': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'gold_unfenced': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'gold_no_outer_pipes_in_block': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'gold_no_outer_pipes_unfenced': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'first_markdown_block_has_no_table': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'first_of_two_blocks_is_a_draft': (0.0, 1.0, 0.333333, 0.5, 1.0, 0.333333, 0.5),
    'prose_with_pipes_before_the_table': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'no_table': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'header_only': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'row_with_an_extra_cell': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'unclosed_quote_runs_to_the_end': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'quoted_cell': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'header_without_closing_pipe': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'escaped_pipe_in_a_cell': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'plus_sign_integer': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'code_without_leading_zeros': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'blank_cell_turns_integers_into_floats': (0.0, 0.0, 0.0, 0.0, 0.833333, 0.833333, 0.833333),
    'na_spelling_in_a_number_column': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'true_as_a_code': (0.0, 0.333333, 0.333333, 0.333333, 0.888889, 0.888889, 0.888889),
    'columns_reordered': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'header_in_capitals_with_spaces': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'extra_column': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'missing_column': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'the_same_column_twice': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'nbsp_in_a_header': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'rows_dropped': (0.0, 1.0, 0.666667, 0.8, 1.0, 0.666667, 0.8),
    'row_extra': (0.0, 0.75, 1.0, 0.857143, 0.75, 1.0, 0.857143),
    'row_repeated': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'row_repeated_with_key_in_capitals': (0.0, 1.0, 1.333333, 1.142857, 1.0, 1.333333, 1.142857),
    'key_in_capitals_and_bold': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'nbsp_in_a_key': (0.0, 0.666667, 0.666667, 0.666667, 0.666667, 0.666667, 0.666667),
    'ideographic_space_in_a_key': (0.0, 0.666667, 0.666667, 0.666667, 0.666667, 0.666667, 0.666667),
    'ideographic_space_in_a_code': (0.0, 0.333333, 0.333333, 0.333333, 0.888889, 0.888889, 0.888889),
    'fullwidth_letters_in_a_key': (0.0, 0.666667, 0.666667, 0.666667, 0.666667, 0.666667, 0.666667),
    'code_with_trailing_space': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'number_with_commas_and_unit': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'number_within_tolerance': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'number_out_of_tolerance': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'number_wan': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'number_fullwidth_comma': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'number_fullwidth_digits': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'number_fullwidth_integer': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'number_percent': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'number_unknown': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'date_long_form': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'date_month_first_slashes': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'date_day_first_slashes': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'date_month_and_year': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'date_20_days_off': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'date_40_days_off': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'date_nian_yue_ri': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'date_hao': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'date_unreadable': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'url_other_path': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'url_host_in_capitals': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'url_without_scheme': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'url_other_host': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'list_reordered': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'list_item_missing': (0.0, 0.666667, 0.666667, 0.666667, 0.944444, 0.944444, 0.944444),
    'unique_columns_not_normalised': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'zh_gold': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'zh_halfwidth_parens_in_header': (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    'zh_number_wan': (0.0, 0.5, 0.5, 0.5, 0.833333, 0.833333, 0.833333),
    'zh_number_fullwidth_comma': (0.0, 0.5, 0.5, 0.5, 0.833333, 0.833333, 0.833333),
    'zh_date_nian_yue_ri': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'zh_date_hao': (0.0, 0.5, 0.5, 0.5, 0.833333, 0.833333, 0.833333),
    'zh_space_in_a_name': (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
    'zh_ideographic_space_in_a_name': (0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5),
}
