"""The documentation cannot rot silently.

- Every ```bash or ```python block of docs/**/*.md and README.md with the line `<!-- runnable -->`
  right above it runs against the demo world (built once per session with `worldforge run`) and
  must exit 0; a block that prints a 404 page or an empty search fails too.
- Every `worldforge ...` line of any shell block, runnable or not, names a command and options
  the CLI has.
- The generated reference covers every CLI command and option and every field of the pack,
  world spec and farm models; the reference pages hold the markers, not hand-written tables.
- README.md stays a front door (at most 250 lines), and `mkdocs build --strict` passes.

Set WORLDFORGE_DOCS_WORLD to a folder that holds build/demo and exports/demo/v1 (from
`worldforge run worlds/demo.yaml`) to reuse it instead of building one; blocks write their
own files (audit.json, scratch/, responses.jsonl) into it.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

DOCS = REPO / "docs"
MARKDOWN = sorted(DOCS.rglob("*.md")) + [REPO / "README.md"]
MARKER = "<!-- runnable -->"
RUNNABLE = re.compile(r"^<!-- runnable -->\n```(bash|python)\n(.*?)^```\s*$", re.M | re.S)
FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```\s*$", re.M | re.S)
BLOCK_TIMEOUT = 180  # seconds a runnable block may take (the slowest, a plan of the demo world, takes about 5)
# Output that means a command "worked" on something that is not there.
NOT_FOUND = ("# 404 Not Found", "No results found for")


def _gen():
    """docs/gen_reference.py, as the mkdocs hook imports it."""
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def runnable_blocks() -> list:
    out = []
    for path in MARKDOWN:
        text = path.read_text()
        for m in RUNNABLE.finditer(text):
            out.append(pytest.param(m.group(1), m.group(2), id=f"{path.relative_to(REPO)}:{_line(text, m.start()) + 1}"))
    return out


BLOCKS = runnable_blocks()


def test_every_runnable_marker_marks_a_block():
    """A marker that is not right above a ```bash or ```python block would silently run nothing."""
    for path in MARKDOWN:
        text = path.read_text()
        markers = [_line(text, m.start()) for m in re.finditer("^" + re.escape(MARKER) + "$", text, re.M)]
        marked = [_line(text, m.start()) for m in RUNNABLE.finditer(text)]
        assert markers == marked, f"{path.relative_to(REPO)}: a {MARKER} on line(s) {sorted(set(markers) - set(marked))} is not " \
                                  "directly above a ```bash or ```python block"
    assert len(BLOCKS) >= 20, len(BLOCKS)


@pytest.fixture(scope="session")
def docs_world(tmp_path_factory) -> dict:
    """A folder the blocks run in: build/demo and exports/demo/v1 from `worldforge run
    worlds/demo.yaml`, the checkout's worlds/, schemas/ and benchmarks/, and a bin/ whose
    `worldforge`, `python` and `python3` run this interpreter on this checkout's code."""
    tmp = tmp_path_factory.mktemp("docs")
    given = os.environ.get("WORLDFORGE_DOCS_WORLD")
    work = Path(given).resolve() if given else tmp / "work"
    work.mkdir(exist_ok=True)
    for name in ("worlds", "schemas", "benchmarks"):
        link = work / name
        if not link.exists():
            link.symlink_to(REPO / name)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, args in (("worldforge", ' -m worldforge "$@"'), ("python", ' "$@"'), ("python3", ' "$@"')):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}"{args}\n')
        script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join([str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]),
           "HF_HOME": str(tmp / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "COLUMNS": "120", "NO_COLOR": "1"}
    if not (work / "exports" / "demo" / "v1" / "manifest.json").is_file():
        r = subprocess.run(["worldforge", "run", "worlds/demo.yaml", "-b", "build", "-o", "exports"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"worldforge run worlds/demo.yaml failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return {"cwd": work, "env": env}


@pytest.mark.parametrize("lang,code", BLOCKS)
def test_runnable_block(docs_world, lang, code):
    if lang == "bash":
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    else:
        cmd = [sys.executable, "-c", code]
    try:
        r = subprocess.run(cmd, cwd=docs_world["cwd"], env=docs_world["env"], capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the block ran longer than {BLOCK_TIMEOUT} s:\n{code}")
    shown = f"\n--- block ---\n{code}\n--- stdout ---\n{r.stdout[-4000:]}\n--- stderr ---\n{r.stderr[-4000:]}"
    assert r.returncode == 0, f"exit code {r.returncode}{shown}"
    for bad in NOT_FOUND:
        assert bad not in r.stdout, f"the output says {bad!r}{shown}"


# ---------------------------------------------------------------------------------------------
# every command line in the docs names real commands and options


def _cli():
    import typer

    from worldforge.cli import app

    group = typer.main.get_command(app)
    return app, group.commands


def _shell_lines():
    """(where, argv) of every `worldforge ...` command in any shell block of the docs and README."""
    for path in MARKDOWN:
        text = path.read_text()
        for m in FENCE.finditer(text):
            if m.group(2) not in ("bash", "sh", "shell"):
                continue
            start = _line(text, m.start())
            for i, line in enumerate(m.group(3).splitlines(), start=start + 1):
                line = line.split(" #")[0].strip()
                for part in re.split(r"&&|\|\||;|\|", line):
                    try:
                        argv = shlex.split(part)
                    except ValueError:
                        continue
                    while argv and re.match(r"^[A-Z_][A-Z0-9_]*=", argv[0]):  # VAR=value before a command
                        argv = argv[1:]
                    if argv[:3] == ["python", "-m", "worldforge"]:
                        argv = ["worldforge", *argv[3:]]
                    if argv and os.path.basename(argv[0]) == "worldforge":  # also .venv/bin/worldforge
                        yield f"{path.relative_to(REPO)}:{i}", argv


def test_every_documented_command_line_uses_real_commands_and_options():
    _, commands = _cli()
    seen = 0
    for where, argv in _shell_lines():
        seen += 1
        if len(argv) < 2 or argv[1] == "--help":
            continue
        name = argv[1]
        assert name in commands, f"{where}: `worldforge {name}` is no command; commands: {', '.join(commands)}"
        known = {o for p in commands[name].params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        for tok in argv[2:]:
            if tok.startswith("-") and tok != "-":
                opt = tok.split("=", 1)[0]
                assert opt in known, f"{where}: `worldforge {name}` has no option {opt}; it has {', '.join(sorted(known))}"
    assert seen >= 40, seen


# ---------------------------------------------------------------------------------------------
# the generated reference


def test_the_cli_reference_covers_every_command_and_option():
    app, commands = _cli()
    text = _gen().generate("cli")
    declared = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    headed = set(re.findall(r"^## worldforge (\S+)$", text, re.M))
    assert headed == declared == set(commands), (headed, declared)
    sections = dict(re.findall(r"^## worldforge (\S+)\n(.*?)(?=^## worldforge |\Z)", text, re.M | re.S))
    for name, cmd in commands.items():
        for p in cmd.params:
            if p.param_type_name == "argument":
                assert f"`{p.name.upper()}`" in sections[name], (name, p.name)
            else:
                for o in p.opts:
                    assert f"`{o}`" in sections[name], (name, o)
    assert "<!-- generated: cli -->" in (DOCS / "reference" / "cli.md").read_text()


def _model_sections(text: str) -> dict[str, str]:
    return dict(re.findall(r"^### \S+ \{#([a-z0-9_]+)\}\n(.*?)(?=^### |\Z)", text, re.M | re.S))


@pytest.mark.parametrize("kind,page,modules", [
    ("pack-schema", "pack.md", ["worldforge.world.pack"]),
    ("spec-schema", "spec.md", ["worldforge.world.spec", "worldforge.world.options"]),
    ("farm-schema", "spec.md", ["worldforge.farm"]),
])
def test_the_schema_reference_covers_every_model_and_field(kind, page, modules):
    import importlib

    from pydantic import BaseModel

    gen = _gen()
    sections = _model_sections(gen.generate(kind))
    models = gen.schema_models(kind)
    for model in models:
        anchor = model.__name__.lower().lstrip("_")
        assert anchor in sections, f"{kind}: no section for {model.__name__}"
        for fname, field in model.model_fields.items():
            assert f"| `{field.alias or fname}` |" in sections[anchor], f"{kind}: {model.__name__}.{fname} is not documented"
    # every concrete model of the modules is reachable from the root, so it is documented (bases
    # and the resolved world, which no one writes by hand, aside)
    for modname in modules:
        mod = importlib.import_module(modname)
        for c in vars(mod).values():
            if (inspect.isclass(c) and issubclass(c, BaseModel) and c.__module__.startswith(modname) and not c.__name__.startswith("_")
                    and c.__name__ not in ("Model", "ResolvedWorld", "LinkText")):  # (LinkText: the base of a parent and a relation)
                assert c in models, f"{modname}.{c.__name__} is in no schema page"
    assert f"<!-- generated: {kind} -->" in (DOCS / "reference" / page).read_text()


# ---------------------------------------------------------------------------------------------
# the front door and the site


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail into docs/"
    text = "\n".join(lines)
    # the test command is the one CI runs, word for word
    ci = next(ln for ln in (REPO / ".ci" / "run").read_text().splitlines() if ln.startswith("python3 -m venv") and "pytest" in ln)
    for cmd in ("python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/worldforge run worlds/demo.yaml", ci):
        assert cmd in text, cmd
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).is_file(), f"README links to {link}, which does not exist"


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]'; the test extra includes it)")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
    html = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert 'id="worldforge-run"' in html and "generated:" not in html
