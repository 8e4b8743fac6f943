"""Scorer throughput: responses scored per second on one core, for gold tables of 10 to 100
rows x 5 columns, half of the responses damaged (a wrong cell, a dropped row, an alias key),
in both scoring modes (widesearch, the default, and lenient).

    python benchmarks/score.py
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worldforge.tasks.scoring import MODES, Evaluation, score_table  # noqa: E402

EVAL = Evaluation(unique_columns=["name"], required=["name", "industry", "founded", "employees", "website"], eval_pipeline={
    "name": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
    "industry": {"preprocess": ["norm_str"], "metric": ["exact_match"]},
    "founded": {"preprocess": ["norm_date"], "metric": ["date_near"]},
    "employees": {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.1},
    "website": {"metric": ["url_match"]},
})
HEADER = ["Name", "Industry", "Founded", "Employees", "Website"]


def case(rng: random.Random, n: int):
    gold = [[f"Company {i} Labs", rng.choice(["software", "retail", "energy"]), f"{rng.randint(1900, 2024)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
             str(rng.randint(1, 90000)), f"https://www.c{i}.example"] for i in range(n)]
    rows = [r[:] for r in gold]
    if rng.random() < 0.5:
        rows[0][1] = "media"
        rows.pop()
        rows[1][0] = f"C{1}"
    text = "```markdown\n| " + " | ".join(HEADER) + " |\n|---|---|---|---|---|\n" + "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n```"
    return gold, text


def main() -> None:
    rng = random.Random(0)
    aliases = {"c1": "company1labs"}
    print(f"{'mode':>11}{'rows per table':>15}{'responses':>11}{'seconds':>9}{'responses/s':>13}{'cells/s':>12}")
    for n in (10, 30, 100):
        cases = [case(rng, n) for _ in range(2000 if n < 100 else 500)]
        for mode in MODES:
            t0 = time.perf_counter()
            for gold, text in cases:
                score_table("t", EVAL, HEADER, gold, text, aliases, mode=mode)
            secs = time.perf_counter() - t0
            print(f"{mode:>11}{n:>15}{len(cases):>11,}{secs:>9.2f}{len(cases) / secs:>13,.0f}{len(cases) * n * 5 / secs:>12,.0f}")


if __name__ == "__main__":
    main()
