"""Loading and checking a world spec with its packs.

`load_world(path)` parses the spec and every pack it names, then checks the whole
thing (cross references, faker providers, dependency cycles, empty date windows,
counts that cannot be satisfied, the size of the world, SQL that does not compile) and
raises one `SpecError` listing every problem, each with its file, field path, bad value
and what is accepted.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
import string
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

from ..errors import SpecError, SpecProblem
from ..language import BASE
from ..language import get as get_language
from .arrays import lookup_target
from .capacity import count_problems
from .dependencies import dependency_graph, node_label
from .lexicon import attribute_label, relation_label
from .pack import (
    CONSTANT_REFS,
    CategoricalAttr,
    CodeAttr,
    CountAttr,
    DateAttr,
    DateBound,
    DerivedAttr,
    DomainPack,
    EntityType,
    FakerAttr,
    LinkCategory,
    LinkEntity,
    LinkNumber,
    LookupAttr,
    NumericAttr,
    RelationSpec,
    WeightSelect,
    clip,
    constant_date,
)
from .sampling import register_sql_functions
from .spec import (
    MAX_WORLD_DATE,
    MIN_WORLD_DATE,
    SCHEMAS_DIR,
    ResolvedWorld,
    WorldSpec,
    attribute_dtype,
    derived_query,
    expected_counts,
    fill_sql,
    lookup_entity_type,
    shift_date,
    with_lookup_units,
)

# Limits on what a spec may ask for (docs/concepts/world.md, "Limits").
MAX_YAML_BYTES = 4 * 2**20  # a spec or pack file
MAX_YAML_NODES = 1_000_000  # values in one file after YAML aliases are expanded
MAX_YAML_DEPTH = 64  # nesting of mappings and lists
MAX_ENTITIES = 20_000_000  # entities a world may plan (at the top of every count range)
MAX_LINKS = 100_000_000  # relation links a world may plan (at the top of every count range)
COMPILE_TIME_LIMIT = 10.0  # seconds to compile one SQL expression or query at validation
_FILL = 0.7  # the share of a name grammar's names the planner can use: it draws at random until names are unique


def _short(value: Any, limit: int = 60) -> str:
    """The bad value as shown in a message: cheap on huge, deep or recursive values."""
    text = clip(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml's parser when installed
    """PyYAML's safe loader, with scalars that cannot be read (2025-02-30, a 5,000-digit
    integer) reported as YAML errors at their position instead of raising ValueError."""


def _guarded(construct):
    def run(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(None, None, f"cannot read {_short(node.value)}: {exc}", node.start_mark) from None
    return run


for _tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
    _Loader.add_constructor(_tag, _guarded(yaml.SafeLoader.yaml_constructors[_tag]))


class _YamlLimit(Exception):
    def __init__(self, message: str, mark=None):
        super().__init__(message)
        self.mark = mark


def _check_nodes(root) -> None:
    """Count the values of a composed YAML document as they would be after alias expansion
    (memoised, so an alias bomb is counted in linear time), refuse recursive aliases and
    deep nesting."""
    size: dict[int, int] = {}
    open_: set[int] = set()
    stack = [(root, 0, False)]

    def children(node) -> list:
        if isinstance(node, yaml.MappingNode):
            return [x for kv in node.value for x in kv]
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in children(node))
            if size[key] > MAX_YAML_NODES:
                raise _YamlLimit(f"the document expands to more than {MAX_YAML_NODES:,} values (through YAML aliases?); "
                                 "write it out plainly", node.start_mark)
            continue
        if key in size:
            continue
        if key in open_:
            raise _YamlLimit("a YAML alias refers to a value that contains it (a recursive structure)", node.start_mark)
        if depth > MAX_YAML_DEPTH:
            raise _YamlLimit(f"values are nested more than {MAX_YAML_DEPTH} levels deep", node.start_mark)
        if isinstance(node, yaml.MappingNode):  # a key given twice: YAML keeps the last one, silently
            seen: dict[str, Any] = {}
            for k, _ in node.value:
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    if k.value in seen:
                        raise _YamlLimit(f"the key {_short(k.value)} is given twice in one mapping (first on line "
                                         f"{seen[k.value].line + 1}); the second would silently replace the first: "
                                         "merge them or rename one", k.start_mark)
                    seen[k.value] = k.start_mark
        open_.add(key)
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children(node))


def read_yaml(path: Path, problems: list[SpecProblem]) -> Any:
    """Parse one YAML file, bounded: its size, the values it expands to and their nesting."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        problems.append(SpecProblem(str(path), "", "", "file not found"))
        return None
    except (OSError, ValueError) as exc:
        problems.append(SpecProblem(_short(str(path), 200), "", "", f"cannot read file: {getattr(exc, 'strerror', None) or exc}"))
        return None
    if len(data) > MAX_YAML_BYTES:
        problems.append(SpecProblem(str(path), "", "", f"file is larger than {MAX_YAML_BYTES // 2**20} MiB; a spec or pack is a short YAML file"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(SpecProblem(str(path), "", "", f"not UTF-8 text (byte {exc.start}); save the file as UTF-8"))
        return None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node)
        return loader.construct_document(node)
    except (yaml.YAMLError, _YamlLimit) as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "mark", None)
        if mark is not None:
            where = f"line {mark.line + 1}, column {mark.column + 1}"
        elif isinstance(getattr(exc, "position", None), int):  # a reader error: a character index
            line = text.count("\n", 0, exc.position) + 1
            where = f"line {line}, column {exc.position - (text.rfind(chr(10), 0, exc.position) + 1) + 1}"
        else:
            where = "unknown position"
        what = getattr(exc, "problem", None) or str(exc)
        problems.append(SpecProblem(str(path), "", "", f"invalid YAML at {where}: {what}"))
        return None
    except RecursionError:
        problems.append(SpecProblem(str(path), "", "", f"invalid YAML: values are nested more than {MAX_YAML_DEPTH} levels deep"))
        return None
    finally:
        loader.dispose()


def _yaml_path(loc: tuple, data: Any) -> tuple[str, ...]:
    """An error's location in the YAML's own words: pydantic puts a union member's tag (the
    `kind:` value, `numeric`) or class name (`SameSpec`) into it, which the file does not have."""
    out: list[str] = []
    node = data
    for el in map(str, loc):
        if isinstance(node, dict):
            if el in node:
                out.append(el)
                node = node[el]
                continue
            if el in {v for v in node.values() if isinstance(v, str)} or el in _MODEL_NAMES or "[" in el or el in _SCALARS:
                continue  # the tag of the member that was tried ('numeric', 'dict[str,...]', 'float')
        elif isinstance(node, list) and el.isdigit() and int(el) < len(node):
            out.append(el)
            node = node[int(el)]
            continue
        elif el in _MODEL_NAMES or "[" in el:  # a member tried on a scalar ('int', 'list[str]', 'Range')
            continue
        out.append(el)
        node = None
    return tuple(out)


def _models() -> frozenset[str]:
    from pydantic import BaseModel

    from . import options, pack, spec
    return frozenset(n for m in (pack, spec, options) for n, v in vars(m).items()
                     if isinstance(v, type) and issubclass(v, BaseModel))


_MODEL_NAMES = _models()
_SCALARS = frozenset({"str", "int", "float", "bool", "list", "dict"})  # union members pydantic names by type
_INSTANCE_OF = re.compile(r" or instance of \w+")


def pydantic_problems(source: str, exc: ValidationError, prefix: str = "", data: Any = None) -> list[SpecProblem]:
    errors = exc.errors(include_url=False)
    # A value that fits no member of a union gets one error per member; when one member got
    # further (an error deeper inside it), the members that failed on the value's type are noise.
    locs = [_yaml_path(tuple(e["loc"]), data) for e in errors]
    out = []
    for err, loc in zip(errors, locs):
        if err["type"].endswith("_type") and loc and any(
                len(other) > len(loc) and other[: len(loc) - 1] == loc[:-1] and other[len(loc) - 1] != loc[-1] for other in locs):
            continue
        if err["type"].endswith("_type") and any(
                other[: len(loc)] == loc and (len(other) > len(loc) or not e2["type"].endswith("_type"))
                for other, e2 in zip(locs, errors)):
            continue  # a member tried on the value's type, where another member took the value and found it wrong
        path = ".".join(loc)
        if prefix:
            path = f"{prefix}.{path}" if path else prefix
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")
        elif err["type"] == "model_type":
            msg = "should be a mapping (`key: value` lines)"
        msg = _INSTANCE_OF.sub("", msg)
        inp = err.get("input")
        # Checks over a whole mapping or list name the bad part in their message.
        hide = err["type"] == "missing" or (err["type"] == "value_error" and isinstance(inp, (dict, list)))
        out.append(SpecProblem(source, path, "" if hide else _short(inp), msg))
    return out


def pack_search_path(schemas_dir: Path | None = None) -> list[Path]:
    """Folders searched for packs named without a path: $WORLDFORGE_SCHEMAS (os.pathsep-separated),
    then the shipped packs."""
    import os

    extra = [Path(p) for p in os.environ.get("WORLDFORGE_SCHEMAS", "").split(os.pathsep) if p]
    return [*extra, schemas_dir or SCHEMAS_DIR]


def _available_packs(dirs: list[Path]) -> list[str]:
    return sorted({p.stem for d in dirs for p in d.glob("*.yaml")})


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        return False


def _resolve_pack_path(ref: str, spec_dir: Path, dirs: list[Path]) -> Path | None:
    if ref.endswith((".yaml", ".yml")) or "/" in ref:
        for base in (spec_dir, Path.cwd()):
            try:
                cand = (base / ref).resolve()
            except (OSError, ValueError, RuntimeError):
                continue
            if _is_file(cand):
                return cand
        return None
    for d in dirs:
        cand = d / f"{ref}.yaml"
        if _is_file(cand):
            return cand
    return None


def load_world(path: str | Path, schemas_dir: Path | None = None) -> ResolvedWorld:
    """Load and validate a world spec and its packs; raise `SpecError` with every problem."""
    path = Path(path)
    dirs = pack_search_path(schemas_dir)
    problems: list[SpecProblem] = []
    raw = read_yaml(path, problems)
    if problems:
        raise SpecError(problems)
    if not isinstance(raw, dict):
        raise SpecError([SpecProblem(str(path), "", _short(raw), "a world spec must be a YAML mapping")])
    try:
        spec = WorldSpec.model_validate(raw)
    except ValidationError as exc:
        problems.extend(pydantic_problems(str(path), exc, data=raw))
        spec = None

    packs: dict[str, DomainPack] = {}
    pack_files: dict[str, str] = {}
    pack_refs = raw.get("packs")
    for i, ref in enumerate(pack_refs if isinstance(pack_refs, list) else []):
        if not isinstance(ref, str):
            continue
        pack_path = _resolve_pack_path(ref, path.parent, dirs)
        if pack_path is None:
            avail = _available_packs(dirs)
            problems.append(SpecProblem(
                str(path), f"packs.{i}", _short(ref),
                f"unknown pack; available: {', '.join(avail)} (or give a path to a pack .yaml file)",
            ))
            continue
        pack_raw = read_yaml(pack_path, problems)
        if pack_raw is None:
            continue
        if not isinstance(pack_raw, dict):
            problems.append(SpecProblem(str(pack_path), "", _short(pack_raw), "a domain pack must be a YAML mapping"))
            continue
        try:
            pack = DomainPack.model_validate(pack_raw)
        except ValidationError as exc:
            problems.extend(pydantic_problems(str(pack_path), exc, data=pack_raw))
            continue
        if pack.pack in packs:
            problems.append(SpecProblem(str(path), f"packs.{i}", _short(ref), f"pack '{pack.pack}' is listed twice"))
            continue
        problems.extend(_control_characters(str(pack_path), pack_raw))
        packs[pack.pack] = pack
        pack_files[pack.pack] = str(pack_path)

    if spec is None and isinstance(raw.get("counts"), dict) and packs:
        # The spec itself is broken, but its counts can still be checked against the packs.
        known = {t for p in packs.values() for t in p.types}
        for t in raw["counts"]:
            if t not in known:
                problems.append(SpecProblem(str(path), f"counts.{t}", _short(t),
                                            _unknown_type(str(t), known)))
    if spec is None or problems:
        raise SpecError(problems)
    packs = _in_language(spec, packs, pack_files, str(path), problems)
    if problems:
        raise SpecError(problems)
    world = ResolvedWorld(spec=spec, packs=packs, pack_files=pack_files)
    problems.extend(_semantic_problems(world, str(path)))
    if problems:
        raise SpecError(problems)
    return with_lookup_units(world)


# --------------------------------------------------------------------------- semantic checks


def _suggest(name: str, options) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _unknown_type(name: str, known) -> str:
    return f"unknown type{_suggest(name, known)}; known types: {', '.join(sorted(known))}"


def _in_language(spec: WorldSpec, packs: dict[str, DomainPack], pack_files: dict[str, str], spec_file: str,
                 problems: list[SpecProblem]) -> dict[str, DomainPack]:
    """The packs as a world in `spec.language` plans them: every type named by that
    language's name grammar. A world in another language than English needs a locale of
    that language (faker values) and a name grammar in it for every type it generates."""
    lang = spec.language
    if lang == BASE:  # the packs' own names
        return packs
    if not spec.locale.startswith(lang + "_"):
        problems.append(SpecProblem(spec_file, "locale", _short(spec.locale),
                                    f"a world in language '{lang}' needs a {lang} locale, e.g. {get_language(lang).locale}"))
    out = {}
    for pname, pack in packs.items():
        types = {}
        for t, et in pack.types.items():
            if lang in et.names:
                types[t] = et.model_copy(update={"name": et.names[lang]})
            else:
                types[t] = et
                if spec.counts.get(t, 1) != 0:
                    problems.append(SpecProblem(pack_files[pname], f"types.{t}.name", "",
                                                f"no {lang} name grammar for '{t}' (the world's language is {lang}); "
                                                f"write name: {{en: ..., {lang}: ...}} or set counts.{t}: 0"))
        out[pname] = pack.model_copy(update={"types": types})
    return out


def _links_to_entity(world: ResolvedWorld, t: str, a: str) -> bool:
    """An entity-valued lookup: not a row of its own on pages (its link is). A broken chain is
    reported on its own."""
    try:
        return lookup_target(world, t, a) is not None
    except KeyError:
        return True


# Text a page or a question shows as written: one line each (a line break splits an infobox row,
# a NUL ends up in pages). `sql`, `description` and other prose for authors may span lines.
_SHOWN_TEXT = frozenset(("label", "inverse_label", "noun", "plural", "title", "unit", "phrases", "ask", "headlines",
                         "template", "templates", "choices", "cases", "values", "name"))
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _control_characters(source: str, data: Any) -> list[SpecProblem]:
    """Shown text (labels, phrases, name parts, categorical values) with a line break or another
    control character, anywhere in a pack."""
    out: list[SpecProblem] = []
    seen: set[tuple] = set()

    def strings(v, path):
        if isinstance(v, str):
            yield path, v
        elif isinstance(v, dict):
            for k, x in v.items():
                yield path + (str(k),), str(k)
                yield from strings(x, path + (str(k),))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                yield from strings(x, path + (str(i),))

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in _SHOWN_TEXT and not (k == "name" and isinstance(v, dict) and "template" not in v and "templates" not in v):
                    for p, s in strings(v, path + (str(k),)):
                        m = _CONTROL.search(s)
                        if m and p not in seen and len(out) < 20:
                            seen.add(p)
                            out.append(SpecProblem(source, ".".join(p), _short(s), f"holds a control character ({m.group(0)!r}); "
                                                   "text shown on pages and in questions is one line: remove it"))
                walk(v, path + (str(k),))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + (str(i),))

    walk(data, ())
    return out


def _semantic_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    from faker import Faker
    from faker.config import AVAILABLE_LOCALES

    spec = world.spec
    probs: list[SpecProblem] = []
    types: dict[str, tuple[str, EntityType]] = {}
    rels: dict[str, tuple[str, RelationSpec]] = {}
    src_of_pack = world.pack_files

    def add(pack: str | None, path: str, value: Any, msg: str) -> None:
        probs.append(SpecProblem(src_of_pack[pack] if pack else spec_file, path, "" if value is None else _short(value), msg))

    # Locale and time span.
    if spec.locale not in AVAILABLE_LOCALES:
        add(None, "locale", spec.locale, f"unknown faker locale{_suggest(spec.locale, AVAILABLE_LOCALES)}; e.g. en_US, de_DE, fr_FR")
    if spec.span_start >= spec.span_end:
        add(None, "time_span", f"{spec.span_start}..{spec.span_end}", "the date window is empty: time_span.start must be before time_span.end (default: as_of)")
    if spec.span_end > spec.as_of:
        add(None, "time_span.end", str(spec.span_end), f"must not be after as_of ({spec.as_of})")

    # Pack requirements and name clashes.
    for pname, pack in world.packs.items():
        for req in pack.requires:
            if req not in world.packs:
                add(pname, "requires", req, f"pack '{pname}' needs pack '{req}'; add it to the spec's packs")
        for t, et in pack.types.items():
            if t in types:
                add(pname, f"types.{t}", t, f"type already defined by pack '{types[t][0]}'")
            types[t] = (pname, et)
    for pname, pack in world.packs.items():
        for t, et in pack.types.items():
            if et.parent:
                r = et.parent.relation
                if r in rels:
                    add(pname, f"types.{t}.parent.relation", r, "relation name already used")
                rels[r] = (pname, RelationSpec(source=t, target=et.parent.type, cardinality="N:1", required=True))
        for r, rs in pack.relations.items():
            if r in rels:
                add(pname, f"relations.{r}", r, f"relation already defined by pack '{rels[r][0]}'")
            if r in types:
                add(pname, f"relations.{r}", r, "a relation must not share its name with a type")
            rels[r] = (pname, rs)
    # Facts and pages name attributes and links by their names: a relation may not take the
    # name of an attribute of the types it joins.
    for r, (pname, rs) in rels.items():
        parent_of = next((t for t, (_, et) in types.items() if et.parent and et.parent.relation == r), None)
        where = f"types.{parent_of}.parent.relation" if parent_of else f"relations.{r}"
        for side in dict.fromkeys((rs.source, rs.target)):
            if side in types and (r in types[side][1].attributes or r in ("id", "name")):
                add(pname, where, r, f"relation '{r}' has the name of an attribute of '{side}' (facts and pages name both "
                    "by it); rename the relation or the attribute")

    # An entity's page shows each attribute and each outgoing link as one labelled row, and questions
    # name a hop by its label: two rows with one label make the link unreadable (every question
    # through it fails). Labels as pages write them, in English and in the world's language.
    for lang in dict.fromkeys((BASE, spec.language)) if not probs else ():  # (after the names are sound)
        for t, (tpack, et) in types.items():
            shown: dict[str, str] = {"name": "the name"}
            rows = [(tpack, f"types.{t}.attributes.{a}.label", f"attribute '{a}'",
                     attribute_label(a_spec, a, lang))
                    for a, a_spec in et.attributes.items() if not a_spec.hidden and not _links_to_entity(world, t, a)]
            for r, (rpack, rs) in rels.items():
                if rs.source == t:
                    parent_of = next((u for u, (_, e) in types.items() if e.parent and e.parent.relation == r), None)
                    rows.append((rpack, f"types.{parent_of}.parent.label" if parent_of else f"relations.{r}.label",
                                 f"relation '{r}'", relation_label(rs, r, lang)))
            for pname, path, what, label in rows:
                key = " ".join(label.split()).casefold()
                if key in shown:
                    add(pname, path, label, f"{what} and {shown[key]} of '{t}' are both labelled '{label}'"
                        f"{'' if lang == BASE else f' in {lang}'} on its pages, so a reader cannot tell the rows "
                        "apart; give one of them another label")
                else:
                    shown[key] = what

    def known_type(pname: str, path: str, t: str) -> bool:
        if t in types:
            return True
        add(pname, path, t, _unknown_type(t, types))
        return False

    def has_attr(t: str, a: str) -> bool:
        return a in ("id", "name") or a in types[t][1].attributes

    def attr_kind_date(t: str, a: str) -> bool:
        if a in ("id", "name") or a not in types[t][1].attributes:
            return False
        return attribute_dtype(world, t, a) == "date"

    def check_attr(pname: str, path: str, t: str, a: str, want_date: bool = False, want_numeric: bool = False) -> None:
        if t not in types:
            return
        if not has_attr(t, a):
            opts = ["id", "name", *types[t][1].attributes]
            add(pname, path, a, f"type '{t}' has no attribute '{a}'{_suggest(a, opts)}; it has: {', '.join(opts)}")
            return
        if want_date and not attr_kind_date(t, a):
            add(pname, path, a, f"'{t}.{a}' is not a date attribute")
        if want_numeric and (a in ("id", "name") or attribute_dtype(world, t, a) not in ("int", "float")):
            add(pname, path, a, f"'{t}.{a}' is not a numeric attribute")

    def check_bound(pname: str, path: str, b: DateBound, owner: str, ctx: str) -> None:
        """ctx: 'attr' (ref is on type owner) or 'rel' (owner is a relation name)."""
        if b.constant and b.ref not in CONSTANT_REFS and not MIN_WORLD_DATE <= dt.date.fromisoformat(b.ref) <= MAX_WORLD_DATE:
            add(pname, path, b.ref, f"an absolute date must lie within {MIN_WORLD_DATE}..{MAX_WORLD_DATE}")
            return
        if b.years or b.days:
            if b.constant:
                base = [constant_date(b.ref, spec.as_of, spec.span_start)]
            else:  # the reference is a date inside the world's time span
                base = [spec.span_start, spec.span_end]
            if any(shift_date(d, b.years, b.days) is None for d in base):
                add(pname, path, str(b), "the offset takes dates out of range: applied to "
                    f"{b.ref if b.constant else 'the dates of the time span'} it must stay within "
                    "0001-01-01..9999-12-31")
        if b.constant:
            return
        parts = b.ref.split(".")
        if ctx == "attr":
            if len(parts) == 1:
                check_attr(pname, path, owner, parts[0], want_date=True)
                return
            if len(parts) == 2 and parts[0] in rels and rels[parts[0]][1].source == owner:
                check_attr(pname, path, rels[parts[0]][1].target, parts[1], want_date=True)
                return
            add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, an attribute of '{owner}' "
                "or <relation>.<attribute> through one of its outgoing relations")
            return
        rs = rels[owner][1]
        if parts == ["valid_from"] and rs.history is not None:
            return
        if len(parts) == 3 and parts[0] == "source":  # source.<relation>.start: another link of the source
            check_link_ref(pname, path, b.ref, owner, rs)
            return
        if len(parts) == 2 and parts[0] in ("source", "target"):
            check_attr(pname, path, rs.source if parts[0] == "source" else rs.target, parts[1], want_date=True)
            return
        extra = ", valid_from" if rs.history is not None else ""
        add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, source.<attr>, target.<attr>, "
            f"source.<relation>.start{extra}")

    def check_link_ref(pname: str, path: str, ref: str, owner: str, rs) -> None:
        """`source.<relation>.start`: the day the source's first link of another dated relation
        starts; only a history's or a date's window may read it (the links are drawn after it)."""
        _, other, end = ref.split(".")
        mine = sorted(x for x, (_, xs) in rels.items() if xs.source == rs.source and xs.dated and x != owner)
        if end != "start":
            add(pname, path, ref, f"a link's date is read as source.<relation>.start (the day the source's first "
                f"link of it starts); write source.{other}.start")
        elif other == owner:
            add(pname, path, ref, "a relation cannot be bounded by its own links; name another relation of the source")
        elif other not in rels or rels[other][1].source != rs.source or not rels[other][1].dated:
            add(pname, path, ref, f"'{other}' is no dated relation out of '{rs.source}'{_suggest(other, mine)}; "
                f"dated relations out of '{rs.source}': {', '.join(mine) or 'none'}")
        elif not re.search(r"\.(history|date)\.(after|before)\.\d+$", path):
            add(pname, path, ref, "another link's date may bound only a history's or a date's window "
                "(history.after/before, date.after/before)")

    def check_to_one(pname: str, path: str, t: str, rel: str, need_required: bool = False) -> str | None:
        """A to-one relation out of `t` (or its parent relation); its target type, or None."""
        own = [r for r, (_, rs) in rels.items() if rs.source == t]
        if rel not in rels or rels[rel][1].source != t:
            add(pname, path, rel, f"'{t}' has no outgoing relation of that name{_suggest(rel, own)}; it has: {', '.join(own) or 'none'}")
            return None
        rs = rels[rel][1]
        if rs.cardinality not in ("1:1", "N:1") or rs.history:
            add(pname, path, rel, "needs a to-one relation (1:1 or N:1, no history)")
            return None
        if need_required and not rs.required:
            add(pname, path, rel, f"relation '{rel}' is not required, so some '{t}' would have nothing to take it from; "
                "make it required (or use the parent relation)")
            return None
        return rs.target if rs.target in types else None

    def categorical_values(t: str, a: str, depth: int = 0) -> set[str] | None:
        s = types[t][1].attributes.get(a)
        if isinstance(s, LookupAttr) and s.via in rels and rels[s.via][1].target in types and depth < 8:
            return categorical_values(rels[s.via][1].target, s.attribute, depth + 1)  # a copy of another's category
        return set(s.weights()) if isinstance(s, CategoricalAttr) else None

    def check_given(pname: str, path: str, t: str, given: str, keys, allow_name: bool, default: bool = True) -> None:
        """`given` names a string attribute of `t` (or, where allowed, a name part with plain
        choices); the case keys must be values it takes; without a default every value needs a case."""
        et_ = types[t][1]
        if given.startswith("name."):
            part = et_.name.parts.get(given[5:])
            if not allow_name:
                add(pname, path, given, "only a categorical attribute can be given a name part; give an attribute of the type")
            elif part is None:
                add(pname, path, given, f"'{t}' has no name part '{given[5:]}'{_suggest(given[5:], et_.name.parts)}; "
                    f"parts: {', '.join(et_.name.parts) or 'none'}")
            elif part.choices is None or part.cases is not None:
                add(pname, path, given, f"name part '{given[5:]}' must have plain choices (its words pick the case)")
            else:
                unknown = sorted(set(keys) - set(part.choices))
                if unknown:
                    add(pname, path.rsplit(".", 1)[0] + ".cases", _short(unknown),
                        f"not words of name part '{given[5:]}' (its choices: {_short(sorted(part.choices), 120)})")
            return
        if given not in et_.attributes:
            check_attr(pname, path, t, given)
            return
        if attribute_dtype(world, t, given) != "string":
            add(pname, path, given, f"'{t}.{given}' is not a text attribute; a case is picked by a categorical value")
            return
        vals = categorical_values(t, given)
        if vals is None:
            return
        unknown = sorted(set(keys) - vals)
        if unknown:
            add(pname, path.rsplit(".", 1)[0] + ".cases", _short(unknown), f"'{t}.{given}' never takes these values; "
                f"it takes: {_short(sorted(vals), 120)}")
        if not default and vals - set(keys):
            add(pname, path.rsplit(".", 1)[0] + ".cases", _short(sorted(vals - set(keys))),
                f"values of '{t}.{given}' without a case; give them cases, or choices for the rest")

    faker = None
    provider_problems: dict[str, str | None] = {}

    def check_provider(pname: str, path: str, provider: str) -> None:
        nonlocal faker
        from .sampling import faker_provider_problem

        if faker is None:
            faker = Faker(spec.locale if spec.locale in AVAILABLE_LOCALES else "en_US")
        if provider not in provider_problems:
            provider_problems[provider] = faker_provider_problem(faker, provider)
        why = provider_problems[provider]
        if why is not None:
            hint = _suggest(provider, [m for m in dir(faker) if not m.startswith("_")]) if why == "unknown faker provider" else ""
            add(pname, path, provider, why + hint)

    for pname, pack in world.packs.items():
        for t, et in pack.types.items():
            base = f"types.{t}"
            if et.parent:
                known_type(pname, f"{base}.parent.type", et.parent.type)
            if et.lifecycle is not None:
                check_attr(pname, f"{base}.lifecycle.start", t, et.lifecycle.start, want_date=True)
                if et.lifecycle.end is not None:
                    check_attr(pname, f"{base}.lifecycle.end", t, et.lifecycle.end, want_date=True)
                    if et.lifecycle.end == et.lifecycle.start:
                        add(pname, f"{base}.lifecycle.end", et.lifecycle.end, "the end must be another date attribute than the start")
            if et.parent and et.parent.count_by is not None and et.parent.type in types:
                check_attr(pname, f"{base}.parent.count_by", et.parent.type, et.parent.count_by, want_numeric=True)
            sr = et.parent.series if et.parent else None
            if sr is not None and et.parent.type in types:
                sp = f"{base}.parent.series"
                check_attr(pname, f"{sp}.start", et.parent.type, sr.start, want_date=True)
                check_attr(pname, f"{sp}.date", t, sr.date, want_date=True)
                own = et.attributes.get(sr.date)
                if isinstance(own, DateAttr) and (own.after or own.before or own.offset or own.given):
                    add(pname, f"{base}.attributes.{sr.date}", sr.date, f"'{t}.{sr.date}' is each edition's day, set by "
                        "parent.series; remove its after, before, offset and given")
                if sr.until is not None and not sr.until.constant:
                    add(pname, f"{sp}.until", str(sr.until), "until is a date of the world: as_of, span_start or a date, "
                        "with an offset (as_of - 1y); the parent's own end is its lifecycle end")
                elif sr.until is not None:
                    check_bound(pname, f"{sp}.until", sr.until, t, "attr")
            for lang_key, spec_ in [("name", et.name), *((f"names.{k}", v) for k, v in et.names.items())]:
                for part_name, part in spec_.parts.items():
                    if part.edition is not None and sr is None:
                        add(pname, f"{base}.{lang_key}.parts.{part_name}.edition", part.edition,
                            f"'{t}' is not a series: an edition part needs parent.series on the type")
            for part_name, part in et.name.parts.items():
                pp = f"{base}.name.parts.{part_name}"
                if part.faker is not None:
                    check_provider(pname, f"{pp}.faker", part.faker)
                for v, provider in (part.fakers or {}).items():
                    check_provider(pname, f"{pp}.fakers.{v}", provider)
                if part.given is not None:
                    check_given(pname, f"{pp}.given", t, part.given, list(part.cases or part.fakers or {}), allow_name=False,
                                default=part.choices is not None or part.faker is not None)
                if part.via is not None and part.via in rels and rels[part.via][1].source == t and rels[part.via][1].target == t:
                    add(pname, f"{pp}.via", part.via, f"reads the name of another '{t}', but a type's names are drawn together; "
                        f"name those entities after the others with name.derived instead (derived: {{via: {part.via}, "
                        "templates: {\"{root} {roman}\": 1}})")
                elif part.via is not None:
                    target = check_to_one(pname, f"{pp}.via", t, part.via, need_required=True)
                    if target:
                        check_attr(pname, f"{pp}.attribute", target, part.attribute)
            dn = et.name.derived
            if dn is not None:
                target = check_to_one(pname, f"{base}.name.derived.via", t, dn.via)
                if target == t and not rels[dn.via][1].acyclic:
                    add(pname, f"{base}.name.derived.via", dn.via, f"'{dn.via}' links a '{t}' to another '{t}' and names follow "
                        f"its chains (a sequel's sequel): set acyclic: true on relations.{dn.via}")
            for alias_i, al in enumerate(et.name.aliases):
                if al.after is not None:
                    check_bound(pname, f"{base}.name.aliases.{alias_i}.after", al.after, t, "attr")
            for a, attr in et.attributes.items():
                ap = f"{base}.attributes.{a}"
                if isinstance(attr, FakerAttr):
                    check_provider(pname, f"{ap}.provider", attr.provider)
                elif isinstance(attr, DateAttr):
                    for j, b in enumerate(attr.after):
                        check_bound(pname, f"{ap}.after.{j}", b, t, "attr")
                    for j, b in enumerate(attr.before):
                        check_bound(pname, f"{ap}.before.{j}", b, t, "attr")
                    if attr.given is not None:
                        check_given(pname, f"{ap}.given", t, attr.given, list(attr.cases), allow_name=False)
                        for v, case in attr.cases.items():
                            for side in ("after", "before"):
                                for j, b in enumerate(getattr(case, side)):
                                    check_bound(pname, f"{ap}.cases.{v}.{side}.{j}", b, t, "attr")
                            _check_static_window(add, pname, f"{ap}.cases.{v}", [*attr.after, *case.after],
                                                 [*attr.before, *case.before], spec)
                    if attr.offset is not None:
                        check_bound(pname, f"{ap}.offset.ref", attr.offset.ref, t, "attr")
                        if attr.offset.ref.ref == a:
                            add(pname, f"{ap}.offset.ref", a, "a date cannot be drawn as an offset from itself")
                    _check_static_window(add, pname, ap, attr.after, attr.before, spec)
                elif isinstance(attr, CategoricalAttr):
                    if attr.given is not None:
                        check_given(pname, f"{ap}.given", t, attr.given, list(attr.cases), allow_name=True)
                    if attr.dated_by is not None:
                        check_attr(pname, f"{ap}.dated_by", t, attr.dated_by, want_date=True)
                    if attr.stages is not None:
                        st = attr.stages
                        check_attr(pname, f"{ap}.stages.start", t, st.start, want_date=True)
                        check_attr(pname, f"{ap}.stages.end", t, st.end, want_date=True)
                        lc = et.lifecycle
                        if attr.stage_values()[0] is not None and lc is not None and lc.start == st.start:
                            add(pname, f"{ap}.stages.start", st.start, f"is the lifecycle start of '{t}', which every "
                                f"'{t}' has; a planned one ({attr.stage_values()[0]!r}) has not begun: give the stage its own "
                                "start date (work begins) beside the lifecycle's (an award, a founding), or list two values")
                        end = et.attributes.get(st.end)
                        if isinstance(end, DateAttr) and end.offset is not None and end.offset.ref.ref != st.start:
                            add(pname, f"{ap}.stages.end", st.end, f"is drawn as an offset from '{end.offset.ref.ref}', not "
                                f"from the stage's start '{st.start}': a stage's end is its start plus a duration "
                                f"(offset: {{ref: {st.start}, ...}})")
                    for v, (since, until) in attr.windows().items():
                        if since is not None and since > spec.as_of:
                            add(pname, f"{ap}.values.{v}.since", since.isoformat(), f"after the world's date ({spec.as_of}): no {t} "
                                "could ever take this value; give an earlier date or drop the value")
                        if until is not None and until <= spec.span_start:
                            add(pname, f"{ap}.values.{v}.until", until.isoformat(), f"not after the world's history begins "
                                f"({spec.span_start}): no {t} could ever take this value; give a later date or drop the value")
                elif isinstance(attr, NumericAttr):
                    if attr.given is not None:
                        check_given(pname, f"{ap}.given", t, attr.given, list(attr.cases), allow_name=False)
                    if attr.at_most is not None:
                        if attr.at_most == a:
                            add(pname, f"{ap}.at_most", a, "an attribute cannot bound itself")
                        else:
                            check_attr(pname, f"{ap}.at_most", t, attr.at_most, want_numeric=True)
                    if attr.per is not None:
                        per = attr.per
                        other_t = t
                        if per.via is not None and per.via in et.attributes:
                            other_t = lookup_entity_type(world, t, per.via)
                            if other_t is None:
                                add(pname, f"{ap}.per.via", per.via, f"'{t}.{per.via}' is not a lookup of an entity (attribute: id)")
                        elif per.via is not None:
                            other_t = check_to_one(pname, f"{ap}.per.via", t, per.via)
                        if per.via is None and per.attribute == a:
                            add(pname, f"{ap}.per.attribute", a, "a figure cannot be a rate of itself; name another numeric attribute")
                        elif other_t:
                            check_attr(pname, f"{ap}.per.attribute", other_t, per.attribute, want_numeric=True)
                    if attr.part_of is not None:
                        po = attr.part_of
                        if po.via in et.attributes:
                            whole = lookup_entity_type(world, t, po.via)
                            if whole is None:
                                add(pname, f"{ap}.part_of.via", po.via, f"'{t}.{po.via}' is not a lookup of an entity (attribute: id)")
                        else:
                            whole = check_to_one(pname, f"{ap}.part_of.via", t, po.via)
                        if whole:
                            check_attr(pname, f"{ap}.part_of.attribute", whole, po.attribute, want_numeric=True)
                            lo, _ = attr.all_bounds()
                            if lo is not None and lo < 0:
                                add(pname, f"{ap}.min", lo, "a part of a whole cannot be negative; set min to 0 or more")
                elif isinstance(attr, CountAttr):
                    if attr.relation not in rels:
                        add(pname, f"{ap}.relation", attr.relation, f"unknown relation{_suggest(attr.relation, rels)}")
                    else:
                        crs = rels[attr.relation][1]
                        if t not in (crs.source, crs.target):
                            add(pname, f"{ap}.relation", attr.relation, f"relation '{attr.relation}' joins '{crs.source}' "
                                f"and '{crs.target}', not '{t}'")
                        elif crs.source == crs.target and attr.side is None:
                            add(pname, f"{ap}.side", None, f"'{attr.relation}' joins '{t}' to itself: say which links to "
                                "count, side: in (ending here) or out (starting here)")
                        elif attr.side == "in" and crs.target != t or attr.side == "out" and crs.source != t:
                            add(pname, f"{ap}.side", attr.side, f"'{t}' is not the {'target' if attr.side == 'in' else 'source'} "
                                f"of '{attr.relation}'")
                        if attr.sum is not None and not isinstance(crs.attributes.get(attr.sum), LinkNumber):
                            nums = sorted(x for x, xa in crs.attributes.items() if isinstance(xa, LinkNumber))
                            add(pname, f"{ap}.sum", attr.sum, f"'{attr.relation}' links have no whole-number attribute of that "
                                f"name{_suggest(attr.sum, nums)}; theirs: {', '.join(nums) or 'none (give the relation one under attributes)'}")
                elif isinstance(attr, CodeAttr):
                    if attr.source != "name":
                        check_attr(pname, f"{ap}.source", t, attr.source)
                        if attr.source in et.attributes and attribute_dtype(world, t, attr.source) != "string":
                            add(pname, f"{ap}.source", attr.source, f"'{t}.{attr.source}' is not a text attribute")
                elif isinstance(attr, LookupAttr):
                    if attr.via not in rels or rels[attr.via][1].source != t:
                        own = [r for r, (_, rs) in rels.items() if rs.source == t]
                        add(pname, f"{ap}.via", attr.via, f"'{t}' has no outgoing relation of that name{_suggest(attr.via, own)}; it has: {', '.join(own) or 'none'}")
                    else:
                        rs = rels[attr.via][1]
                        if rs.cardinality not in ("1:1", "N:1") or rs.history:
                            add(pname, f"{ap}.via", attr.via, "a lookup needs a to-one relation (1:1 or N:1, no history)")
                        check_attr(pname, f"{ap}.attribute", rs.target, attr.attribute)
                        src = types[rs.target][1].attributes.get(attr.attribute) if rs.target in types else None
                        if src is not None and src.hidden and not attr.hidden:
                            add(pname, f"{ap}.attribute", attr.attribute, f"'{rs.target}.{attr.attribute}' is hidden: a copy of it "
                                "would state it on pages; make this lookup `hidden: true` too")
            _check_pages(add, pname, t, et, rels, check_attr)

    for r, (pname, rs) in rels.items():
        rp = f"relations.{r}"
        ok_s = known_type(pname, f"{rp}.source", rs.source)
        ok_t = known_type(pname, f"{rp}.target", rs.target)
        if not (ok_s and ok_t):
            continue
        if rs.same:
            check_attr(pname, f"{rp}.same.source", rs.source, rs.same.source)
            check_attr(pname, f"{rp}.same.target", rs.target, rs.same.target)
        if rs.once_per is not None:
            check_attr(pname, f"{rp}.once_per", rs.source, rs.once_per)
        if isinstance(rs.select, WeightSelect):
            check_attr(pname, f"{rp}.select.weight", rs.target, rs.select.weight, want_numeric=True)
        if rs.eligible:
            check_attr(pname, f"{rp}.eligible.attribute", rs.target, rs.eligible.attribute, want_date=True)
            for side in ("after", "before"):
                b = getattr(rs.eligible, side)
                if b is not None:
                    check_bound(pname, f"{rp}.eligible.{side}", b, r, "rel")
                    if b.ref.startswith("target."):
                        add(pname, f"{rp}.eligible.{side}", b.ref, "eligibility cannot refer to the target itself")
        if rs.since:
            check_bound(pname, f"{rp}.since", rs.since, r, "rel")
        if rs.date:
            for side in ("after", "before"):
                for j, b in enumerate(getattr(rs.date, side)):
                    check_bound(pname, f"{rp}.date.{side}.{j}", b, r, "rel")
            _check_static_window(add, pname, f"{rp}.date", rs.date.after, rs.date.before, spec)
        if rs.history:
            for side in ("after", "before"):
                for j, b in enumerate(getattr(rs.history, side)):
                    check_bound(pname, f"{rp}.history.{side}.{j}", b, r, "rel")
                    if b.ref == "valid_from":
                        add(pname, f"{rp}.history.{side}.{j}", b.ref, "a history window may refer to the source, the target "
                            "and constants, not to valid_from")
            _check_static_window(add, pname, f"{rp}.history", rs.history.after, rs.history.before, spec)
        if rs.at is not None:
            check_bound(pname, f"{rp}.at", rs.at, r, "rel")
            if rs.at.ref.startswith("target.") or rs.at.ref == "valid_from":
                add(pname, f"{rp}.at", rs.at.ref, "at is a date of the source (or a constant): the target is chosen to exist then")
        if rs.date and rs.date.offset is not None:
            check_bound(pname, f"{rp}.date.offset.ref", rs.date.offset.ref, r, "rel")
        for a, attr in rs.attributes.items():
            if getattr(attr, "seniority", None) == "age" and rs.source in types and types[rs.source][1].lifecycle is None:
                add(pname, f"{rp}.attributes.{a}.seniority", "age", f"an age is counted from the lifecycle start of "
                    f"'{rs.source}', which has no lifecycle; give the type one or use seniority: career")
            if isinstance(attr, LinkEntity):
                _check_link_entity(add, pname, f"{rp}.attributes.{a}", r, rs, attr, rels)
        if rs.requires is not None:
            _check_path(add, pname, f"{rp}.requires.path", r, rs, rels)
        if rs.given is not None and rs.source in types:
            check_given(pname, f"{rp}.given", rs.source, rs.given, list(rs.cases), allow_name=False)
        for j, x in enumerate(rs.not_same):
            if x == r:
                add(pname, f"{rp}.not_same.{j}", x, "a relation never repeats a pair already (each pair links once); "
                    "name another relation of the same source and target types")
            elif x not in rels:
                add(pname, f"{rp}.not_same.{j}", x, f"unknown relation{_suggest(x, rels)}")
            elif (rels[x][1].source, rels[x][1].target) != (rs.source, rs.target):
                add(pname, f"{rp}.not_same.{j}", x, f"'{x}' links {rels[x][1].source} to {rels[x][1].target}, not "
                    f"{rs.source} to {rs.target}: not_same compares the targets of one source's links")
        if rs.acyclic and rs.source != rs.target:
            add(pname, f"{rp}.acyclic", True, "acyclic only applies to relations from a type to itself")
        elif rs.acyclic and rs.required:
            add(pname, f"{rp}.required", True, f"a required relation from '{rs.source}' to itself cannot be acyclic: in a world "
                "without cycles some entity links to nothing; drop required (or acyclic)")
    for pname, pack in world.packs.items():
        for i, inv in enumerate(pack.invariants):
            if inv.acyclic is not None and inv.acyclic not in rels:
                add(pname, f"invariants.{i}.acyclic", inv.acyclic, f"unknown relation{_suggest(inv.acyclic, rels)}")

    # Counts: every root type needs one; non-root types are sized by their parent.
    for t, c in spec.counts.items():
        if t not in types:
            add(None, f"counts.{t}", t, _unknown_type(t, types))
        elif types[t][1].parent is not None:
            par = types[t][1].parent
            add(None, f"counts.{t}", c, f"'{t}' is generated per {par.type} ({par.count.min}-{par.count.max} each, set in pack "
                f"'{types[t][0]}'); remove it from counts")
    for t, (pname, et) in types.items():
        if et.parent is None and t not in spec.counts:
            add(None, f"counts.{t}", None, f"root type '{t}' (pack '{pname}') needs a count (0 to leave it out)")

    if not probs:
        probs.extend(_size_problems(world, spec_file))
    if not probs:
        probs.extend(count_problems(world, spec_file))
        probs.extend(_cycle_problems(world, spec_file))
        probs.extend(_name_capacity_problems(world))
    if not probs:
        probs.extend(_sql_problems(world))
    return probs


def _part_capacity(world: ResolvedWorld, part, counts: dict) -> float:
    """The planner's capacity of a name part, a `via` part counting the related type's expected entities."""
    from .sampling import part_capacity

    related = counts.get(world.relations[part.via].target, (0, 1.0, 0))[1] if part.via is not None else 1.0
    return part_capacity(part, world.spec.locale, world.spec.seed, related)


def _name_capacity_problems(world: ResolvedWorld) -> list[SpecProblem]:
    """Names are unique per type: a grammar that cannot make about as many names as a type is
    expected to have fails the plan ("could not make 617 unique names"); said here instead.
    Two checks, as the planner draws: all names (about 10 draws for 7 names), and the names
    sharing one related entity's name (`{city} Airport`: the airports of one city)."""
    counts = expected_counts(world)
    lang = world.spec.language
    out = []
    for t, et in world.types.items():
        n = counts[t][1]
        spec = et.name
        if n < 2 or spec is None:
            continue
        path = f"types.{t}.names.{lang}" if lang != BASE and lang in (et.names or {}) else f"types.{t}.name"
        total = per_group = 0.0
        via_rel = None
        try:
            for tmpl in spec.template_weights():
                fields = [f for _, f, _, _ in string.Formatter().parse(tmpl) if f]
                caps = {f: _part_capacity(world, spec.parts[f], counts) for f in fields}
                whole = float(np.prod(list(caps.values()))) if caps else 1.0
                total += whole
                vias = [f for f in fields if spec.parts[f].via is not None]
                if any(spec.parts[f].edition is not None for f in fields):  # one name per edition of its parent
                    total += float(MAX_ENTITIES)
                    per_group += float(MAX_ENTITIES)
                elif vias:
                    via_rel = via_rel or spec.parts[vias[0]].via
                    per_group += float(np.prod([c for f, c in caps.items() if f not in vias])) if len(caps) > len(vias) else 1.0
                else:
                    per_group += whole
        except (KeyError, ValueError, TypeError):  # a broken part is reported on its own
            continue
        if n > _FILL * total:
            out.append(SpecProblem(world.pack_files[world.pack_of_type(t)], path, "",
                                   f"type '{t}' needs about {n:,.0f} unique names but its name grammar{' in ' + lang if lang != BASE else ''} "
                                   f"makes at most {total:,.0f}: names are drawn at random until they are unique, so a grammar "
                                   f"serves at most {_FILL:.0%} of what it can make and this one needs at least "
                                   f"{math.ceil(n / _FILL):,}; add parts, choices or syllables to it, or lower the count"))
            continue
        if via_rel is not None:
            rs = world.relations[via_rel]
            par = et.parent
            group = par.count.max if par is not None and par.relation == via_rel else n / max(1.0, counts.get(rs.target, (0, 1.0, 0))[1])
            if group > _FILL * per_group:
                out.append(SpecProblem(world.pack_files[world.pack_of_type(t)], path, "",
                                       f"up to {group:,.0f} {t} entities share one {rs.target}'s name through '{via_rel}', and the "
                                       f"template(s) with it make at most {per_group:,.0f} names for each: names are drawn at random "
                                       f"until they are unique, so a group can use at most {_FILL:.0%} of them and needs at least "
                                       f"{math.ceil(group / _FILL):,}; add choices to its other parts, or a template without the "
                                       f"{rs.target}'s name"))
    return out


def planned_links(world: ResolvedWorld) -> dict[str, float]:
    """The most links each relation can make (at the top of every count range)."""
    counts = expected_counts(world)
    parent_rels = {et.parent.relation for et in world.types.values() if et.parent}
    return {r: counts[rs.source][2] * (1 if r in parent_rels else rs.count_range.max) for r, rs in world.relations.items()}


def _size_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    """The world's size at the top of every count range must stay under the caps."""
    counts = expected_counts(world)
    total_hi = sum(hi for _, _, hi in counts.values())
    if total_hi > MAX_ENTITIES:
        total_mid = sum(mid for _, mid, _ in counts.values())

        def chain(t: str, depth: int = 0) -> str:
            par = world.types[t].parent
            if par is None or depth > len(world.types):
                return f"counts.{t} = {world.spec.counts.get(t, 0):,}"
            return (f"{par.count.min:,}-{par.count.max:,} per {par.type} (types.{t}.parent.count in pack "
                    f"'{world.pack_of_type(t)}') x {par.type}: {chain(par.type, depth + 1)}")

        top = sorted(counts, key=lambda t: -counts[t][2])[:3]
        detail = "; ".join(f"{t}: up to {counts[t][2]:,.0f} ({chain(t)})" for t in top)
        return [SpecProblem(spec_file, "counts", f"up to {total_hi:,.0f} entities",
                            f"the world would have up to {total_hi:,.0f} entities (about {total_mid:,.0f} expected); the limit "
                            f"is {MAX_ENTITIES:,}: lower the counts or the parent count ranges that multiply up: {detail}")]
    links = planned_links(world)
    total_links = sum(links.values())
    if total_links > MAX_LINKS:
        top = sorted(links, key=lambda r: -links[r])[:3]
        detail = "; ".join(f"{r}: up to {links[r]:,.0f} ({counts[world.relations[r].source][2]:,.0f} "
                           f"{world.relations[r].source} x up to {world.relations[r].count_range.max:,} each)" for r in top)
        return [SpecProblem(spec_file, "counts", f"up to {total_links:,.0f} links",
                            f"the world would have up to {total_links:,.0f} relation links; the limit is {MAX_LINKS:,}: "
                            f"lower the counts or the relations' count.max: {detail}")]
    return []


def _check_pages(add, pname: str, t: str, et: EntityType, rels: dict, check_attr) -> None:
    """Page declarations must name this type's own event attributes, relations and columns."""
    base = f"types.{t}.pages"
    own = [r for r, (_, rs) in rels.items() if rs.source == t]
    dated = [r for r in own if rels[r][1].history or rels[r][1].date or rels[r][1].since]
    events = [a for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event]
    figures = [a for a, s in et.attributes.items() if isinstance(s, NumericAttr) and s.changes is not None]
    for i, n in enumerate(et.pages.news or []):
        if n not in events and n not in dated and n not in figures:
            add(pname, f"{base}.news.{i}", n, f"not an event attribute, a dated relation or a figure with `changes` of "
                f"'{t}'{_suggest(n, events + dated + figures)}; choose from: {', '.join(events + dated + figures) or 'none'}")
    for i, d in enumerate(et.pages.directories):
        dp = f"{base}.directories.{i}"
        if d.by not in own and d.by not in et.attributes:
            add(pname, f"{dp}.by", d.by, f"'{t}' has no outgoing relation or attribute of that name"
                f"{_suggest(d.by, own + list(et.attributes))}; relations: {', '.join(own) or 'none'}")
        if "{group}" not in d.title:
            add(pname, f"{dp}.title", d.title, "the title must contain {group}, e.g. 'Companies headquartered in {group}'")
        for j, c in enumerate(d.columns):
            check_attr(pname, f"{dp}.columns.{j}", t, c)
        for where, a in [(f"{dp}.by", d.by), *((f"{dp}.columns.{j}", c) for j, c in enumerate(d.columns))]:
            if a in et.attributes and et.attributes[a].hidden:
                add(pname, where, a, f"'{t}.{a}' is hidden (a working attribute no page states); list a stated attribute, "
                    "or drop `hidden`")
    for i, c in enumerate(et.linked_columns):
        if c not in et.attributes and c not in own:
            add(pname, f"types.{t}.linked_columns.{i}", c, f"'{t}' has no attribute or outgoing relation of that name"
                f"{_suggest(c, own + list(et.attributes))}; choose from: {', '.join(list(et.attributes) + own) or 'none'}")
        elif c in et.attributes and et.attributes[c].hidden:
            add(pname, f"types.{t}.linked_columns.{i}", c, f"'{t}.{c}' is hidden (a working attribute no page states); "
                "list a stated attribute, or drop `hidden`")
    for a, s in et.attributes.items():
        if s.hidden and isinstance(s, DateAttr) and s.event:
            add(pname, f"types.{t}.attributes.{a}.hidden", True, "a hidden date cannot be an event on the timeline; "
                "drop `event` or `hidden`")
    if et.pages.profile and et.pages.profile.url:
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(et.pages.profile.url) if f}
        except ValueError as exc:
            add(pname, f"{base}.profile.url", et.pages.profile.url, f"not a valid template: {exc}")
            return
        for f in sorted(fields - {"slug", "site"}):
            check_attr(pname, f"{base}.profile.url", t, f)


def _check_path(add, pname: str, path: str, r: str, rs: RelationSpec, rels: dict) -> None:
    """A requirement's path leads from the relation's source type to its target type."""
    cur = rs.source
    for hop, back in rs.requires.hops:
        if hop == r:
            add(pname, path, rs.requires.path, "a relation cannot require itself")
            return
        if hop not in rels:
            add(pname, path, hop, f"unknown relation{_suggest(hop, rels)}")
            return
        h = rels[hop][1]
        near, far = (h.target, h.source) if back else (h.source, h.target)
        if near != cur:
            add(pname, path, rs.requires.path, f"'{'~' if back else ''}{hop}' starts at '{near}', but the path is at '{cur}' there "
                f"({'~' if not back else ''}{hop} goes the other way)")
            return
        cur = far
    if cur != rs.target:
        add(pname, path, rs.requires.path, f"the path ends at '{cur}', not at the relation's target '{rs.target}'")
    hops = [h for h, _ in rs.requires.hops]
    for a, values in rs.requires.where.items():
        w = path.rsplit(".", 1)[0] + f".where.{a}"
        having = [h for h in hops if h in rels and a in rels[h][1].attributes]
        if len(having) != 1:
            add(pname, w, a, f"a condition names a category of one relation of the path ({', '.join(hops)}); "
                + ("none has it" if not having else f"{', '.join(having)} all have it"))
            continue
        attr = rels[having[0]][1].attributes[a]
        if not isinstance(attr, CategoricalAttr):
            add(pname, w, a, f"'{having[0]}.{a}' is a number; a condition takes a category's values")
        elif not values or set(values) - set(attr.weights()):
            add(pname, w, _short(sorted(set(values) - set(attr.weights()))) if values else "[]",
                f"values of '{having[0]}.{a}' ({_short(list(attr.weights()), 120)})")


def _check_static_window(add, pname: str, path: str, after: list[DateBound], before: list[DateBound], spec: WorldSpec) -> None:
    """Reject windows that are empty whatever the data: constant bounds that cross, or
    a lower bound on the same reference at or above an upper bound."""
    def resolve(b: DateBound) -> dt.date | None:
        if not b.constant:
            return None
        try:
            return shift_date(constant_date(b.ref, spec.as_of, spec.span_start), b.years, b.days)  # None: reported
        except ValueError:  # not a calendar date: reported by the model
            return None

    lo = max([d for d in map(resolve, after) if d is not None] + [spec.span_start])
    hi = min([d for d in map(resolve, before) if d is not None] + [spec.as_of])
    if lo > hi:
        add(pname, path, f"after {lo}, before {hi}",
            "the date window is empty: its lower bound is after its upper bound (bounds are also clipped to the world's time span)")
        return
    for a in after:
        for b in before:
            if a.ref == b.ref and not a.constant and (a.years, a.days) >= (b.years, b.days):
                add(pname, path, f"after {a}, before {b}", "the date window is empty for every row")


def _node_place(world: ResolvedWorld, node: tuple) -> tuple[str, str]:
    """The pack file and field path a node of the dependency graph is declared at."""
    kind, owner = node[0], node[1]
    if kind in ("type", "attr", "aliases", "name", "rename"):
        pname = world.pack_of_type(owner)
        path = {"type": f"types.{owner}", "aliases": f"types.{owner}.name.aliases", "name": f"types.{owner}.name",
                "rename": f"types.{owner}.name.derived"}.get(kind) or f"types.{owner}.attributes.{node[2]}"
    else:
        pname = world.pack_of_relation(owner)
        path = f"relations.{owner}" + (f".attributes.{node[2]}" if kind == "linkattr" else "")
    return world.pack_files[pname], path


def _cycle_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    import networkx as nx

    g = dependency_graph(world)
    probs = []
    for u, _ in nx.selfloop_edges(g):
        source, path = _node_place(world, u)
        if u[0] == "name":  # a name part reading a name of its own type: drawn at once, none is there to read
            probs.append(SpecProblem(source, path, "", f"a name part of '{u[1]}' reads the name of another '{u[1]}' (via a "
                                     "relation to its own type), but a type's names are drawn together; name those entities "
                                     "after the others with name.derived instead (e.g. derived: {via: sequel_of, templates: "
                                     "{\"{root} {roman}\": 1}})"))
            continue
        probs.append(SpecProblem(source, path, "", f"dependency cycle: {node_label(u)} depends on itself (e.g. a date bounded "
                                 "by itself, a type that is its own parent); remove that reference"))
    for comp in nx.strongly_connected_components(g):
        if len(comp) < 2:
            continue
        cyc = nx.find_cycle(g.subgraph(comp))
        chain = " -> ".join(node_label(u) for u, _ in cyc) + f" -> {node_label(cyc[0][0])}"
        source, _ = _node_place(world, sorted(comp)[0])
        probs.append(SpecProblem(source, "", "", f"dependency cycle: {chain}; break it by removing one of these references"))
    return probs


def _check_link_entity(add, pname: str, ap: str, r: str, rs, attr, rels) -> None:
    """A link's entity (`kind: entity`): `holds` is another relation whose target (its source,
    with '~') is the link's `end`, and `where` names that relation's categories and their values."""
    end_type = rs.target if attr.end == "target" else rs.source
    h = attr.relation
    if h == r:
        add(pname, f"{ap}.holds", attr.holds, "the entity holds a link of another relation to this link's end (a supervisor "
            "appointed at the institute): name that relation")
        return
    if h not in rels:
        add(pname, f"{ap}.holds", attr.holds, f"unknown relation{_suggest(h, rels)}")
        return
    hs = rels[h][1]
    meets = hs.source if attr.backwards else hs.target
    if meets != end_type:
        other = hs.target if attr.backwards else hs.source
        add(pname, f"{ap}.holds", attr.holds, f"'{h}' links {hs.source} to {hs.target}, so {'~' if attr.backwards else ''}{h} "
            f"finds a {other} from a {meets}, but this link's {attr.end} is a {end_type}: name a relation "
            f"{'from' if attr.backwards else 'to'} {end_type}, or set end or the '~' (holds: ~{h} reads '{h}' backwards)")
        return
    for k, vals in attr.where.items():
        cat = hs.attributes.get(k)
        if not isinstance(cat, LinkCategory):
            known = sorted(x for x, xa in hs.attributes.items() if isinstance(xa, LinkCategory))
            add(pname, f"{ap}.where.{k}", k, f"'{h}' links have no category '{k}'; "
                + (f"they have: {', '.join(known)}" if known else "give the relation a categorical attribute or drop where"))
            continue
        bad = [v for v in vals if v not in cat.weights()]
        if bad or not vals:
            add(pname, f"{ap}.where.{k}", bad or vals, f"not a value of {h}.{k}; known: {', '.join(cat.weights())}")


def _empty_store(world: ResolvedWorld):
    """An in-memory DuckDB holding the world's tables and views, empty: what SQL in a pack runs against."""
    import duckdb
    import polars as pl

    from .planner import POLARS_DTYPES
    from .store import WorldTables, write_tables

    tables = WorldTables()
    for t, et in world.types.items():
        tables.entities[t] = pl.DataFrame(schema={"id": pl.String, "name": pl.String,
                                                  **{a: POLARS_DTYPES[attribute_dtype(world, t, a)] for a in et.attributes}})
    for r, rs in world.relations.items():
        tables.edges[r] = pl.DataFrame(schema={"src": pl.Int64, "tgt": pl.Int64, "valid_from": pl.Date, "valid_to": pl.Date,
                                               **{a: pl.Int64 if isinstance(s, (LinkNumber, LinkEntity)) else pl.String
                                                  for a, s in rs.attributes.items()}})
    con = duckdb.connect()
    write_tables(con, world, tables)
    return con


def _compile(con, sql: str) -> str | None:
    """Why a query does not run on `con` (several statements, a DuckDB error, too slow), or None."""
    import duckdb

    from .invariants import QueryTimeout, run_limited

    try:
        n = len(con.extract_statements(sql))
    except duckdb.Error:
        n = 1  # the parse error is reported by running it
    if n != 1:
        return "must be a single expression or query (no ';')"
    try:
        run_limited(con, lambda: con.execute(sql).fetchall(), COMPILE_TIME_LIMIT)
    except QueryTimeout as exc:
        return f"the query {exc} even on an empty world"
    except duckdb.Error as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def _sql_problems(world: ResolvedWorld) -> list[SpecProblem]:
    """Compile derived expressions (exactly as the planner runs them, over an empty frame of
    the type's columns) and declared invariants (over the world's empty tables and views)."""
    import duckdb

    from .invariants import invariant_query
    from .spec import SQL_TYPES

    probs = []
    con = duckdb.connect()
    register_sql_functions(con)
    try:
        for t, et in world.types.items():
            cols = ["__row BIGINT", "id VARCHAR", "name VARCHAR"] + [
                f'"{a}" {SQL_TYPES[attribute_dtype(world, t, a)]}' for a in et.attributes
            ]
            con.execute(f'CREATE OR REPLACE TABLE frame ({", ".join(cols)})')
            for a, attr in et.attributes.items():
                if isinstance(attr, DerivedAttr):
                    why = _compile(con, derived_query(attr, world.spec))
                    if why:
                        probs.append(SpecProblem(world.pack_files[world.pack_of_type(t)], f"types.{t}.attributes.{a}.sql",
                                                 _short(attr.sql), f"not a valid DuckDB expression over {t}'s columns: {why}"))
    finally:
        con.close()
    declared = [(pname, i, inv) for pname, pack in world.packs.items() for i, inv in enumerate(pack.invariants) if inv.sql is not None]
    if not declared or probs or not world.relations:  # (a world without relations cannot be stored: plan says so)
        return probs
    try:
        con = _empty_store(world)
    except duckdb.Error as exc:
        return [SpecProblem(world.pack_files[next(iter(world.packs))], "", "", f"the world's tables cannot be created: {exc}")]
    try:
        for pname, i, inv in declared:
            why = _compile(con, invariant_query(fill_sql(inv.sql, world.spec)))
            if why:
                probs.append(SpecProblem(world.pack_files[pname], f"invariants.{i}.sql", _short(inv.sql),
                                         f"invariant '{inv.name}' does not run on the world's tables: {why}"))
    finally:
        con.close()
    return probs
