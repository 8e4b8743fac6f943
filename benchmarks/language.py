"""Where the code still speaks a particular language: per Python file of the package, the places
that branch on a language (`lang == "zh"`, `if self.zh`, `language != "en"`) and the phrase
tables keyed by a language code (`{"en": ..., "zh": ...}`, `X["zh"]`). The language layer
(`worldforge/language`) and the per-language data files are where languages live; every other
file should have none (issue 56). tests/language/test_language.py holds the count to what is left.

    python benchmarks/language.py            # the table, worst files first
    python benchmarks/language.py --worlds build/demo build/demo_zh   # what built worlds read like

With `--worlds`, the issue's reading measures over built worlds (their pages and tasks): person
entities a page calls "it" (or a thing "he"/"she"), pages with an empty or unfilled slot, pages in
a language whose sentences take a slip it names (a Latin-script unit or 于在 in Chinese), and
questions the question check refuses (a gloss naming another type, a garbled label).
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


def read_worlds(paths: list[str]) -> list[dict]:
    """The reading measures of each built world folder (pages rendered, tasks posed)."""
    import json

    import pyarrow.parquet as pq

    sys.path.insert(0, str(REPO))
    from worldforge.language import get as get_language
    from worldforge.tasks.check import question_problems
    from worldforge.web.text import _EMPTY_SLOT, _URL_RE
    from worldforge.world.store import open_world

    out = []
    for path in paths:
        info = open_world(path)
        world = info.world
        lang = get_language(world.spec.language)
        person_of = {}
        with info.connect() as con:
            for t, et in world.types.items():
                person = et.is_person()
                person_of.update((r[0], person) for r in con.execute(f'SELECT id FROM "{t}"').fetchall())
        pages = it = slots = slips = 0
        for f in sorted(Path(path, "web", "pages").glob("*.pages.parquet")):
            for subject, md in zip(*pq.read_table(f, columns=["subject", "markdown"]).to_pydict().values()):
                pages += 1
                md = _URL_RE.sub(" ", md)  # (as the page check reads a page: addresses left out)
                person = person_of.get(subject)
                wrong = None if person is None else lang.checks.person_as_thing if person else lang.checks.thing_as_person
                it += bool(wrong is not None and wrong.search(md))
                slots += bool(_EMPTY_SLOT.search(md))
                slips += any(rx.search(md) for rx in lang.checks.page_slips.values())
        tasks = refused = 0
        for line in Path(path, "tasks", "tasks.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            tasks += 1
            refused += bool(question_problems(r["query"], [c if isinstance(c, str) else c.get("name", "") for c in r["columns"]],
                                              r.get("language", "en")))
        out.append({"world": Path(path).name, "language": lang.code, "pages": pages, "person_it": it, "empty_slot": slots,
                    "slips": slips, "tasks": tasks, "questions_refused": refused})
    return out


def main() -> int:
    if "--worlds" in sys.argv:
        rows = read_worlds(sys.argv[sys.argv.index("--worlds") + 1:])
        cols = list(rows[0]) if rows else []
        print("  ".join(f"{c:>17}" for c in cols))
        for r in rows:
            print("  ".join(f"{r[c]:>17}" for c in cols))
        return 0
    rows = sorted(table().items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    width = max((len(f) for f, _ in rows), default=10)
    print(f"{'file':<{width}}  branches  tables")
    for f, (b, t) in rows:
        print(f"{f:<{width}}  {b:>8}  {t:>6}")
    print(f"{'files: ' + str(len(rows)):<{width}}  {sum(b for _, (b, _) in rows):>8}  {sum(t for _, (_, t) in rows):>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
