"""Reference pages generated from the code, so they cannot disagree with it.

`docs/hooks.py` replaces the markers below in a page's Markdown with what these functions
return; `tests/test_docs.py` calls them too (every CLI command and every model field must be
covered).

    <!-- generated: cli -->           every command of the Typer app: help, arguments, options
    <!-- generated: pack-schema -->   the fields of a domain pack (worldforge.world.pack.DomainPack)
    <!-- generated: spec-schema -->   the fields of a world spec (worldforge.world.spec.WorldSpec)
    <!-- generated: farm-schema -->   the fields of a farm spec (worldforge.farm.FarmSpec)
"""

from __future__ import annotations

import enum
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the checkout's own code, also when mkdocs runs from elsewhere
    sys.path.insert(0, str(REPO))

MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


# ---------------------------------------------------------------------------------------------
# the command line


def cli_commands() -> dict:
    """The click commands of the Typer app, by name, in the order the app declares them."""
    import typer

    from worldforge.cli import app

    group = typer.main.get_command(app)
    return dict(group.commands)


def _escape(text: str) -> str:
    """Angle brackets outside code spans as entities (`<build-dir>` would be read as HTML)."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;") for p in parts)


def _cell(text) -> str:
    """Text safe inside a Markdown table cell."""
    text = " ".join(str(text).split())
    return _escape(text).replace("|", "\\|")


def _param_type(param) -> str:
    """An argument's or option's type: from click's `type` (typer up to 0.2x) or the annotation
    typer keeps (`type_descriptor`, typer's bundled click)."""
    if getattr(param, "is_flag", False):
        return "flag"
    t = getattr(param, "type", None)
    if t is not None:
        if getattr(t, "choices", None):
            return " \\| ".join(f"`{c}`" for c in t.choices)
        name = getattr(t, "name", str(t)).lower()
        return {"text": "text", "integer": "integer", "float": "number", "path": "path", "boolean": "boolean"}.get(name, name)
    ann = param.type_descriptor.annotation
    if isinstance(ann, str):
        ann = {"list[str]": list[str]}.get(ann, str)
    return _type_text(ann)


def _param_default(param) -> str:
    d = param.default
    if d is None or d == () or getattr(param, "required", False):
        return ""
    if callable(d):
        return ""
    if isinstance(d, enum.Enum):
        d = d.value
    if isinstance(d, Path):
        d = str(d)
    if isinstance(d, bool):
        if getattr(param, "secondary_opts", None):
            return f"`{(param.opts if d else param.secondary_opts)[0]}`"
        return "on" if d else ""
    return f"`{d}`"


def _help(text: str | None) -> str:
    """A command's or option's help as Markdown: Typer's paragraphs, rich markup removed."""
    if not text:
        return ""
    text = inspect.cleandoc(text)
    text = re.sub(r"\[/?(bold|red|green|yellow|dim|italic|cyan)\]", "", text)
    return _escape(text.strip())


def cli_reference() -> str:
    """Markdown for every command of `worldforge`: its usage, help, arguments and options."""
    from worldforge.cli import app

    out = []
    root_help = _help(app.info.help)
    if root_help:
        out += [root_help, ""]
    out += ["| command | what it does |", "|---|---|"]
    commands = cli_commands()
    for name, cmd in commands.items():
        first = _help(cmd.help).split("\n\n")[0]
        out.append(f"| [`{name}`](#worldforge-{name}) | {_cell(first)} |")
    out.append("")
    for name, cmd in commands.items():
        # (duck-typed: typer bundles its own click in newer versions)
        args = [p for p in cmd.params if p.param_type_name == "argument"]
        opts = [p for p in cmd.params if p.param_type_name == "option" and p.name != "help"]
        usage = " ".join(["worldforge", name] + [("" if p.required else "[") + p.name.upper() + ("" if p.required else "]")
                                                 for p in args] + (["[OPTIONS]"] if opts else []))
        out += [f"## worldforge {name}", "", "```text", usage, "```", "", _help(cmd.help), ""]
        if args:
            out += ["| argument | type | required | help |", "|---|---|---|---|"]
            for p in args:
                out.append(f"| `{p.name.upper()}` | {_param_type(p)} | {'yes' if p.required else 'no'} | {_cell(getattr(p, 'help', '') or '')} |")
            out.append("")
        if opts:
            out += ["| option | type | default | help |", "|---|---|---|---|"]
            for p in opts:
                names = ", ".join(f"`{o}`" for o in p.opts + p.secondary_opts)
                out.append(f"| {names} | {_param_type(p)} | {_param_default(p)} | {_cell(p.help or '')} |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# pydantic models


def _models_in(annotation) -> list[type]:
    """The pydantic model classes an annotation mentions, in order."""
    from pydantic import BaseModel

    found = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    for arg in typing.get_args(annotation):
        for m in _models_in(arg):
            if m not in found:
                found.append(m)
    return found


def _anchor(model: type) -> str:
    return model.__name__.lower().lstrip("_")


def _type_text(annotation) -> str:
    """A field's type as a reader of the YAML sees it: `text`, `list of X`, `map of text to X`."""
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__.lstrip('_')}](#{_anchor(annotation)})"
    if origin is typing.Annotated:
        return _type_text(args[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_text(a) for a in args)
    if origin in (list, set, frozenset):
        return f"list of {_type_text(args[0])}" if args else "list"
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {_type_text(args[0])}"
        return "[" + ", ".join(_type_text(a) for a in args) + "]"
    if origin is dict:
        return f"map of {_type_text(args[0])} to {_type_text(args[1])}" if args else "map"
    names = {str: "text", int: "integer", float: "number", bool: "boolean", Path: "path"}
    if annotation in names:
        return names[annotation]
    if annotation is typing.Any:
        return "any"
    name = getattr(annotation, "__name__", str(annotation))
    return {"date": "date"}.get(name, name)


def _field_comments(model: type) -> dict[str, str]:
    """The comments the source gives each field of a class (and of the classes it inherits
    fields from): a comment at the end of its statement, or a block of comment lines right
    above it."""
    import ast
    import io
    import textwrap
    import tokenize

    comments: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if cls.__module__.startswith("pydantic") or cls is object:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        lines = source.splitlines()
        by_line = {tok.start[0]: tok.string.lstrip("#").strip()
                   for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT}
        body = ast.parse(source).body[0].body
        for node in body:
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            block, n = [], node.lineno - 1
            while n >= 1 and lines[n - 1].strip().startswith("#"):
                block.insert(0, by_line.get(n, ""))
                n -= 1
            tail = [by_line[n] for n in range(node.lineno, node.end_lineno + 1) if n in by_line and not lines[n - 1].strip().startswith("#")]
            text = " ".join(x for x in block + tail if x)
            if text:
                comments[node.target.id] = text
    return comments


def _constraints(field) -> str:
    """A field's bounds and pattern, from its metadata (ge=0, le=1, pattern...)."""
    out = []
    for m in field.metadata:
        for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"), ("min_length", "at least"), ("max_length", "at most"),
                          ("pattern", "matches")):
            v = getattr(m, attr, None)
            if v is not None:
                if attr in ("min_length", "max_length"):
                    out.append(f"{sym} {v} long")
                elif attr == "pattern":
                    out.append(f"{sym} `{v}`")
                else:
                    out.append(f"{sym} {v:,}" if isinstance(v, int) and abs(v) >= 10_000 else f"{sym} {v}")
    return "; ".join(out)


def _default(field) -> str:
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    if field.is_required():
        return "required"
    d = field.default
    if d is PydanticUndefined:
        return ""
    if isinstance(d, BaseModel):  # a nested section: the values it sets, else its own fields' defaults
        if not d.model_fields_set:
            return "its fields' defaults"
        d = d.model_dump(mode="json", include=d.model_fields_set)
    if isinstance(d, enum.Enum):
        d = d.value
    if isinstance(d, (dict, list, tuple, bool)) or d is None:
        return f"`{json.dumps(d, default=str, ensure_ascii=False)}`"
    if d == "":
        return '`""`'
    return f"`{d}`"


def model_tables(root: type) -> str:
    """One section per model class reachable from `root` (depth first, each once): its docstring
    and a table of its fields with type, default and the source's own comment."""
    out: list[str] = []
    for model in _reachable(root):
        name = model.__name__.lstrip("_")
        out += [f"### {name} {{#{_anchor(model)}}}", ""]
        doc = inspect.cleandoc(model.__dict__.get("__doc__") or "")  # its own, not pydantic's
        if doc:
            out += [" ".join(p.split()) + "\n" for p in doc.split("\n\n")]
        comments = _field_comments(model)
        out += ["| field | type | default | notes |", "|---|---|---|---|"]
        for fname, f in model.model_fields.items():
            comment, bounds = comments.get(fname, ""), _constraints(f)
            notes = comment + (" " if comment.endswith(".") else "; ") + bounds if comment and bounds else comment or bounds
            out.append(f"| `{f.alias or fname}` | {_type_text(f.annotation)} | {_default(f)} | {_cell(notes)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _reachable(root: type) -> list[type]:
    """The model classes reachable from `root` through its fields, depth first, each once."""
    seen: list[type] = []

    def visit(model: type) -> None:
        if model in seen:
            return
        seen.append(model)
        for f in model.model_fields.values():
            for m in _models_in(f.annotation):
                visit(m)

    visit(root)
    return seen


def schema_models(kind: str) -> list[type]:
    """Every model class documented under a schema marker (for the coverage test)."""
    return _reachable(_ROOTS[kind]())


def _pack_root():
    from worldforge.world.pack import DomainPack

    return DomainPack


def _spec_root():
    from worldforge.world.spec import WorldSpec

    return WorldSpec


def _farm_root():
    from worldforge.farm import FarmSpec

    return FarmSpec


_ROOTS = {"pack-schema": _pack_root, "spec-schema": _spec_root, "farm-schema": _farm_root}


def generate(kind: str) -> str:
    """The Markdown a `<!-- generated: KIND -->` marker stands for."""
    if kind == "cli":
        return cli_reference()
    if kind in _ROOTS:
        return model_tables(_ROOTS[kind]())
    raise KeyError(f"unknown generated section {kind!r}; known: cli, {', '.join(_ROOTS)}")


def expand(markdown: str) -> str:
    """A page's Markdown with every marker replaced by its generated section."""
    return MARKER.sub(lambda m: generate(m.group(1)), markdown)
