"""How a built world's questions read as a set (issue 58), one row per world:

    python benchmarks/questions.py build/demo build/demo_zh build/aviation_music

- the most said opening sentence, as a share of the world's questions (a form letter repeats a
  few openings; target at most 3 %), and how many distinct openings there are;
- questions that tell the agent how hard the search is or where lists fall short (target 0);
- answer columns whose gold contradicts the format the question asks for (target 0);
- table tasks naming one entity in two conditions ("in Casthuica, in Casthuica"; target 0);
- questions that say what to write for a missing value (only where a gold cell is empty);
- ranked tables whose top N is no number a person picks ("the 39 largest"; target 0);
- Chinese questions framed as a machine category ("…事件"; target 0);
- table tasks stating a domain rule that changes their gold (only living people or those still in
  existence, only current or only ended tenures; target at least 20 %);
- questions the question check refuses (a garbled label, a gloss naming another type).

A world folder is one `worldforge run` built (its `tasks/tasks.jsonl`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from worldforge.tasks.check import question_problems  # noqa: E402
from worldforge.tasks.report import distribution  # noqa: E402

MACHINE = re.compile(r"事件")  # "…的所有博士学位事件": a category no Chinese user asks for


def measure(world: Path) -> dict:
    d = world / "tasks"
    records = [json.loads(x) for x in (d / "tasks.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    dist = distribution(d, records)
    zh = [r for r in records if r.get("language") == "zh"]
    refused = sum(bool(question_problems(r["query"], r["columns"], r.get("language") or "en")) for r in records)
    return {"world": world.name, "questions": len(records),
            "opening": max(v["top_share"] for v in dist["openings"].values()),
            "openings": sum(v["distinct"] for v in dist["openings"].values()),
            "hints": dist["difficulty_hints"],
            "format off": dist["format_mismatch"],
            "restated": dist["restated_conditions"],
            "missing note": dist["missing_value_note"],
            "top N off": f"{dist.get('top_n_off_round', 0)}/{dist.get('top_n_tables', 0)}",
            "rules": f"{100 * dist['domain_rule_share']:.0f} %",
            "zh 事件": sum(bool(MACHINE.search(r["query"])) for r in zh) if zh else "-",
            "refused": refused}


def main(paths: list[str]) -> None:
    if not paths:
        sys.exit(__doc__)
    missing = [p for p in paths if not (Path(p) / "tasks" / "tasks.jsonl").is_file()]
    if missing:
        sys.exit(f"no tasks/tasks.jsonl in {', '.join(missing)}: give world folders a `worldforge run` built "
                 "(build/<name>)")
    rows = [measure(Path(p)) for p in paths]
    cols = list(rows[0])
    fmt = {"opening": lambda v: f"{100 * v:.1f} %", "missing note": lambda v: f"{100 * v:.0f} %"}
    cells = [[fmt.get(c, str)(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for x in cells:
        print("  ".join(v.ljust(w) for v, w in zip(x, widths)))


if __name__ == "__main__":
    main(sys.argv[1:])
