"""The shape of the code (issue 57): file and function sizes, the largest class, long lines, and
names used across module and package boundaries. Prints one table; `--list` names the offenders.

    python benchmarks/structure.py [--list]
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "worldforge"


# Underscored names that are public API: namedtuple's methods, os._exit.
_PUBLIC_UNDERSCORED = frozenset(("_replace", "_fields", "_asdict", "_make", "_exit"))


def _inside_own_class(tree: ast.Module, node: ast.AST) -> bool:
    """An `other._x` read inside a method of a class that defines `_x` (another instance of the same class)."""
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        if cls.lineno <= node.lineno <= cls.end_lineno:
            return True
    return False


def _modules() -> dict[str, tuple[Path, ast.Module, list[str]]]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        mod = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        if mod.endswith(".__init__"):
            mod = mod[: -len(".__init__")]
        out[mod] = (p, ast.parse(text), text.splitlines())
    return out


def _package(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def _resolve(mod: str, node: ast.ImportFrom, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".")
    if not is_pkg:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def measure() -> tuple[dict[str, int], dict[str, list[str]]]:
    mods = _modules()
    lines = {m: len(t) for m, (_, _, t) in mods.items()}
    funcs, classes, long_lines = [], [], []
    cross_face, private_names, private_attrs = [], [], []
    for mod, (path, tree, text) in mods.items():
        rel = path.relative_to(ROOT).as_posix()
        long_lines += [f"{rel}:{i + 1}" for i, line in enumerate(text) if len(line) > 120]
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                funcs.append((node.end_lineno - node.lineno + 1, f"{rel}:{node.lineno} {node.name}"))
            elif isinstance(node, ast.ClassDef):
                attrs = set()
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self" \
                            and isinstance(sub.ctx, ast.Store):
                        attrs.add(sub.attr)
                    elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name) and sub in node.body:
                        attrs.add(sub.target.id)
                classes.append((len(attrs), f"{rel}:{node.lineno} {node.name}"))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(mod, node, path.name == "__init__.py")
                if not target.startswith("worldforge"):
                    continue
                src_pkg, dst_pkg = _package(mod), _package(target)
                if src_pkg != dst_pkg and target != dst_pkg and dst_pkg in mods and mods[dst_pkg][0].name == "__init__.py":
                    cross_face.append(f"{rel}:{node.lineno} {target}")
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        private_names.append(f"{rel}:{node.lineno} {target}.{a.name}")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls") \
                    and node.attr not in _PUBLIC_UNDERSCORED and not (isinstance(node.ctx, ast.Store)) \
                    and not (node.value.id in ("other",) and _inside_own_class(tree, node)):
                private_attrs.append(f"{rel}:{node.lineno} {node.value.id}.{node.attr}")
    funcs.sort(reverse=True)
    classes.sort(reverse=True)
    table = {
        "files": len(mods),
        "lines": sum(lines.values()),
        "files over 1,000 lines": sum(n > 1000 for n in lines.values()),
        "files over 600 lines": sum(n > 600 for n in lines.values()),
        "functions over 100 lines": sum(n > 100 for n, _ in funcs),
        "functions over 60 lines": sum(n > 60 for n, _ in funcs),
        "largest class, attributes": classes[0][0] if classes else 0,
        "lines over 120 characters": len(long_lines),
        "cross-package imports not through a face": len(cross_face),
        "private names imported across modules": len(private_names),
        "private attributes of another object read": len(private_attrs),
    }
    detail = {
        "files over 600 lines": [f"{m} {n}" for m, n in sorted(lines.items(), key=lambda x: -x[1]) if n > 600],
        "functions over 60 lines": [f"{n:4d} {w}" for n, w in funcs if n > 60],
        "largest classes": [f"{n:4d} {w}" for n, w in classes[:10]],
        "cross-package imports not through a face": [f"{k} ({v})" for k, v in Counter(
            c.split(" ")[1] for c in cross_face).most_common()],
        "private names imported across modules": private_names,
        "private attributes of another object read": private_attrs,
    }
    return table, detail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="name the offenders under each measure")
    args = ap.parse_args()
    table, detail = measure()
    width = max(map(len, table))
    print(f"{'measure':<{width}}  value")
    for k, v in table.items():
        print(f"{k:<{width}}  {v:>5}")
    if args.list:
        for k, items in detail.items():
            print(f"\n## {k} ({len(items)})")
            print("\n".join(items))


if __name__ == "__main__":
    main()
