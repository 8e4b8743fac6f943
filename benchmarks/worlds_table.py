"""One table for the per-world benchmarks (`sources.py`, `research.py`): a measure per line,
a world per column."""

from __future__ import annotations


def print_worlds(rows: dict[str, dict], measures: list[tuple[str, str, str]], label_width: int = 56,
                 column_width: int = 20) -> None:
    """`rows`: world name -> {key: value}; `measures`: (label, key, format) per line."""
    names = list(rows)
    print(f"{'measure':{label_width}}" + "".join(f"{n:>{column_width}}" for n in names))
    for label, key, fmt in measures:
        print(f"{label:{label_width}}" + "".join(f"{fmt.format(rows[n][key]):>{column_width}}" for n in names))
