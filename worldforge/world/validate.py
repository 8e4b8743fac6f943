"""Loading and checking a world spec with its packs.

`load_world(path)` parses the spec and every pack it names, then checks the whole
thing (cross references, faker providers, dependency cycles, empty date windows,
counts that cannot be satisfied, the size of the world, SQL that does not compile) and
raises one `SpecError` listing every problem, each with its file, field path, bad value
and what is accepted.
"""

from __future__ import annotations

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
from .capacity import count_problems
from .dependencies import dependency_graph, node_label
from .pack import (
    DerivedAttr,
    DomainPack,
    LinkEntity,
    LinkNumber,
)
from .rules import SpecRules, short, unknown_type
from .sampling import register_sql_functions
from .spec import (
    SCHEMAS_DIR,
    ResolvedWorld,
    WorldSpec,
    attribute_dtype,
    derived_query,
    expected_counts,
    fill_sql,
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


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml's parser when installed
    """PyYAML's safe loader, with scalars that cannot be read (2025-02-30, a 5,000-digit
    integer) reported as YAML errors at their position instead of raising ValueError."""


def _guarded(construct):
    def run(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(None, None, f"cannot read {short(node.value)}: {exc}", node.start_mark) from None
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
                        raise _YamlLimit(f"the key {short(k.value)} is given twice in one mapping (first on line "
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
        problems.append(SpecProblem(short(str(path), 200), "", "", f"cannot read file: {getattr(exc, 'strerror', None) or exc}"))
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
        out.append(SpecProblem(source, path, "" if hide else short(inp), msg))
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
        raise SpecError([SpecProblem(str(path), "", short(raw), "a world spec must be a YAML mapping")])
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
                str(path), f"packs.{i}", short(ref),
                f"unknown pack; available: {', '.join(avail)} (or give a path to a pack .yaml file)",
            ))
            continue
        pack_raw = read_yaml(pack_path, problems)
        if pack_raw is None:
            continue
        if not isinstance(pack_raw, dict):
            problems.append(SpecProblem(str(pack_path), "", short(pack_raw), "a domain pack must be a YAML mapping"))
            continue
        try:
            pack = DomainPack.model_validate(pack_raw)
        except ValidationError as exc:
            problems.extend(pydantic_problems(str(pack_path), exc, data=pack_raw))
            continue
        if pack.pack in packs:
            problems.append(SpecProblem(str(path), f"packs.{i}", short(ref), f"pack '{pack.pack}' is listed twice"))
            continue
        problems.extend(_control_characters(str(pack_path), pack_raw))
        packs[pack.pack] = pack
        pack_files[pack.pack] = str(pack_path)

    if spec is None and isinstance(raw.get("counts"), dict) and packs:
        # The spec itself is broken, but its counts can still be checked against the packs.
        known = {t for p in packs.values() for t in p.types}
        for t in raw["counts"]:
            if t not in known:
                problems.append(SpecProblem(str(path), f"counts.{t}", short(t),
                                            unknown_type(str(t), known)))
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


def _in_language(spec: WorldSpec, packs: dict[str, DomainPack], pack_files: dict[str, str], spec_file: str,
                 problems: list[SpecProblem]) -> dict[str, DomainPack]:
    """The packs as a world in `spec.language` plans them: every type named by that
    language's name grammar. A world in another language than English needs a locale of
    that language (faker values) and a name grammar in it for every type it generates."""
    lang = spec.language
    if lang == BASE:  # the packs' own names
        return packs
    if not spec.locale.startswith(lang + "_"):
        problems.append(SpecProblem(spec_file, "locale", short(spec.locale),
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
                            out.append(SpecProblem(source, ".".join(p), short(s), f"holds a control character ({m.group(0)!r}); "
                                                   "text shown on pages and in questions is one line: remove it"))
                walk(v, path + (str(k),))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + (str(i),))

    walk(data, ())
    return out


def _semantic_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    """Every semantic rule (`rules.SpecRules`), then, once those hold, the world's size, counts, cycles,
    name capacity and SQL."""
    probs = SpecRules(world, spec_file).run()
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
                                                 short(attr.sql), f"not a valid DuckDB expression over {t}'s columns: {why}"))
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
                probs.append(SpecProblem(world.pack_files[pname], f"invariants.{i}.sql", short(inv.sql),
                                         f"invariant '{inv.name}' does not run on the world's tables: {why}"))
    finally:
        con.close()
    return probs
