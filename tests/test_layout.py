"""The house layout: one package per stage, imports flow from earlier stages to later ones
only, and no module imports itself back through another (no import circles).

Every import counts, including the ones inside functions: a lazy import is still a
dependency, and a circle through one is still a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PKG = Path(__file__).resolve().parent.parent / "worldforge"

# Pipeline order. A module may import modules of its own stage or of an earlier one.
STAGES = [
    ("plumbing", ("worldforge", "worldforge.errors", "worldforge.tokens", "worldforge.plumbing", "worldforge.cluster",
                  "worldforge.records")),  # "worldforge": the package root only; records: the rows every stage may build
    ("language", ("worldforge.language",)),  # how each language writes: below every stage that writes text
    ("world", ("worldforge.world",)),
    ("web", ("worldforge.web",)),
    ("tasks", ("worldforge.tasks",)),
    ("rollout", ("worldforge.rollout",)),
    ("export", ("worldforge.export", "worldforge.kits")),
    ("view", ("worldforge.view",)),  # the browser view: reads a world's web, tasks, trajectories and export
    ("serve", ("worldforge.serve", "worldforge.rewards")),
    ("run", ("worldforge.run",)),
    ("farm", ("worldforge.farm",)),
    ("cli", ("worldforge.cli", "worldforge.__main__")),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _from_module(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a `from ... import` in module `name` (at `path`) names, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every worldforge module `name` imports, wherever the import statement is."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "worldforge")
        elif isinstance(node, ast.ImportFrom):
            mod = _from_module(name, path, node)
            if mod.split(".")[0] != "worldforge":
                continue
            for a in node.names:  # `from . import perturb` imports a module, not a name
                sub = f"{mod}.{a.name}"
                out.add(sub if sub in known else mod)
    return {m for m in out if m in known and m != name}


def _graph() -> nx.DiGraph:
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        g.add_edges_from((name, dep) for dep in _imports(name, path, set(mods)))
    return g


def _stage(module: str) -> int:
    best = None
    for rank, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            if module == p or (p != "worldforge" and module.startswith(p + ".")):
                if best is None or len(p) > best[1]:
                    best = (rank, len(p))
    assert best is not None, f"{module} belongs to no stage; add it to STAGES in {__file__}"
    return best[0]


def test_every_module_belongs_to_a_stage():
    for m in _modules():
        _stage(m)


def test_no_import_circles():
    g = _graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert not circles, f"import circles: {circles}"


def test_stages_import_only_earlier_stages():
    g = _graph()
    bad = [(a, b) for a, b in g.edges if _stage(b) > _stage(a)]
    names = [s for s, _ in STAGES]
    assert not bad, "later stages imported by earlier ones: " + "; ".join(
        f"{a} ({names[_stage(a)]}) imports {b} ({names[_stage(b)]})" for a, b in bad)


def test_plumbing_imports_no_stage():
    g = _graph()
    for m in ("worldforge", "worldforge.errors", "worldforge.plumbing"):
        assert set(g.successors(m)) <= {"worldforge.errors"}, f"{m} imports {sorted(g.successors(m))}"


def test_test_fixtures_do_not_ship():
    assert not [m for m in _modules() if "tiny_model" in m or "testing" in m.split(".")]


def test_no_module_carries_a_fifth_of_the_code():
    sizes = {m: len(p.read_text().splitlines()) for m, p in _modules().items()}
    total = sum(sizes.values())
    big = {m: n for m, n in sizes.items() if n > total / 5}
    assert not big, f"modules over a fifth of {total:,} lines: {big}"


def test_every_package_ships_with_its_data():
    """A package the wheel leaves out breaks `pip install .` (not the editable install the tests
    use): every folder of worldforge with an __init__.py is listed in pyproject's packages, and
    every package's data files (yaml, json) are in its package-data."""
    import tomllib

    project = tomllib.loads((PKG.parent / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(project["packages"])
    found = {_module_name(p) for p in PKG.rglob("__init__.py")}
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
    data = project["package-data"]
    folders = {pkg: PKG.parent.joinpath(*pkg.split(".")) for pkg in found}
    for f in sorted(PKG.rglob("*")):
        if f.suffix not in (".yaml", ".json") or "__pycache__" in f.parts:
            continue
        owner = max((pkg for pkg, d in folders.items() if d in f.parents), key=len)  # the nearest package
        rel = f.relative_to(folders[owner]).as_posix()
        assert any(Path(rel).match(pat) for pat in data.get(owner, [])), \
            f"{owner}: {rel} is not in [tool.setuptools.package-data] of pyproject.toml"


def test_no_private_name_crosses_a_module():
    """A name with a leading underscore is its module's own: no other module imports it, and no
    module reads another object's underscored attribute (issue 57; namedtuple's `_replace` and
    `os._exit` are public API)."""
    public = {"_replace", "_fields", "_asdict", "_make", "_exit"}
    found = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("worldforge")):
                found += [f"{name}: imports {a.name}" for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and node.attr not in public and isinstance(node.value, ast.Name) \
                    and node.value.id not in ("self", "cls", "other") and not isinstance(node.ctx, ast.Store):
                found.append(f"{name}:{node.lineno} reads {node.value.id}.{node.attr}")
    assert not found, "make these public or keep them inside their module: " + "; ".join(found)


def test_packages_are_entered_through_their_face():
    """A module of one package imports another package's names from that package (its
    `__init__`, which says what it offers), never from a module inside it (issue 57)."""
    mods = _modules()
    faces = {m for m, p in mods.items() if p.name == "__init__.py"}
    found = []
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            target = _from_module(name, path, node)
            parts = target.split(".")
            if parts[0] != "worldforge" or len(parts) < 3:
                continue
            package = ".".join(parts[:2])
            if package in faces and not name.startswith(package + ".") and name != package:
                found.append(f"{name}:{node.lineno} from {target}")
    assert not found, "import these from the package itself (add them to its __init__): " + "; ".join(found)
