"""The tasks stage: WideSearch-style table tasks and multi-hop questions with gold answers
from the world store, each proven reachable in the simulated web.

`generate_tasks(world_dir)` is the entry point; see `stage.py` for the layout."""

from .conditions import (
    AllOf,
    AnyOf,
    ConditionError,
    Expr,
    Not,
    Var,
    combo_alternatives,
    combo_musts,
    evaluate_combo,
    negates_or_chooses,
    parse_combo,
)
from .report import comparison_rows, distribution, reference
from .scoring import (
    GOLD_DIR,
    LENIENT,
    WIDESEARCH,
    Evaluation,
    aliases_by_name,
    cell_marks,
    norm_column,
    parse_date,
    parse_table,
    read_gold_csv,
    reward_of,
    score_files,
    score_table,
    task_aliases,
    world_aliases,
)
from .stage import (
    REPORT_FILE,
    REPOSE,
    SPLITS,
    TASKS_FILE,
    TasksReport,
    check_export_dest,
    export_widesearch,
    generate_tasks,
    gold_csv,
    read_tasks,
    tasks_dir,
    write_widesearch,
)

__all__ = [
    "AllOf", "AnyOf", "ConditionError", "Evaluation", "Expr", "GOLD_DIR", "LENIENT", "Not", "REPORT_FILE",
    "REPOSE", "SPLITS", "TASKS_FILE", "TasksReport", "Var", "WIDESEARCH", "aliases_by_name", "cell_marks",
    "check_export_dest", "combo_alternatives", "combo_musts", "comparison_rows", "distribution",
    "evaluate_combo", "export_widesearch", "generate_tasks", "gold_csv", "negates_or_chooses", "norm_column",
    "parse_combo", "parse_date", "parse_table", "read_gold_csv", "read_tasks", "reference", "reward_of",
    "score_files", "score_table", "task_aliases", "tasks_dir", "world_aliases", "write_widesearch",
]
