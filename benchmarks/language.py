"""Where the code still speaks a particular language: per Python file of the package, the places
that branch on a language (`lang == "zh"`, `if self.zh`, `language != "en"`) and the phrase
tables keyed by a language code (`{"en": ..., "zh": ...}`, `X["zh"]`). The language layer
(`worldforge/language`) and the per-language data files are where languages live; every other
file should have none (issue 56). tests/test_language.py holds the count to what is left.

    python benchmarks/language.py            # the table, worst files first
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "worldforge"
LAYER = PKG / "language"


def codes() -> set[str]:
    """Every language with a data file (worldforge/language/<code>.yaml)."""
    return {p.stem for p in LAYER.glob("*.yaml")}


def _is_code(node: ast.AST, known: set[str]) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known


def count(path: Path, known: set[str] | None = None) -> tuple[int, int]:
    """(branches, tables) of one file: comparisons with a language code and tests of a `zh`
    flag; dict literals keyed by language codes and subscripts by one."""
    known = known or codes()
    branches = tables = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            if any(_is_code(x, known) for x in (node.left, *node.comparators)):
                branches += 1
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)) or (isinstance(node, ast.BoolOp)):
            tests = [node.test] if not isinstance(node, ast.BoolOp) else node.values
            for t in tests:
                t = t.operand if isinstance(t, ast.UnaryOp) else t
                if (isinstance(t, ast.Name) and t.id in known) or (isinstance(t, ast.Attribute) and t.attr in known):
                    branches += 1
        elif isinstance(node, ast.Dict):
            if sum(_is_code(k, known) for k in node.keys if k is not None) >= 2:
                tables += 1
        elif isinstance(node, ast.Subscript) and _is_code(node.slice, known):
            tables += 1
    return branches, tables


def table() -> dict[str, tuple[int, int]]:
    """Files outside the language layer with any branch or table, by path."""
    known = codes()
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        if LAYER in path.parents:
            continue
        b, t = count(path, known)
        if b or t:
            out[str(path.relative_to(REPO))] = (b, t)
    return out


def main() -> int:
    rows = sorted(table().items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    width = max((len(f) for f, _ in rows), default=10)
    print(f"{'file':<{width}}  branches  tables")
    for f, (b, t) in rows:
        print(f"{f:<{width}}  {b:>8}  {t:>6}")
    print(f"{'files: ' + str(len(rows)):<{width}}  {sum(b for _, (b, _) in rows):>8}  {sum(t for _, (_, t) in rows):>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
