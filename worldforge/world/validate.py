"""Loading and checking a world spec with its packs.

`load_world(path)` parses the spec and every pack it names, then checks the whole
thing (cross references, faker providers, dependency cycles, empty date windows,
counts that cannot be satisfied) and raises one `SpecError` listing every problem,
each with its file, field path, bad value and what is accepted.
"""

from __future__ import annotations

import datetime as dt
import difflib
import string
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import SpecError, SpecProblem
from .dependencies import dependency_graph, node_label
from .pack import (
    CONSTANT_REFS,
    DateAttr,
    DateBound,
    DerivedAttr,
    DomainPack,
    EntityType,
    FakerAttr,
    LookupAttr,
    RelationSpec,
    WeightSelect,
)
from .spec import SCHEMAS_DIR, ResolvedWorld, WorldSpec, attribute_dtype, expected_counts, fill_sql


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_yaml(path: Path, problems: list[SpecProblem]) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(SpecProblem(str(path), "", "", "file not found"))
        return None
    except OSError as exc:
        problems.append(SpecProblem(str(path), "", "", f"cannot read file: {exc.strerror}"))
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        what = getattr(exc, "problem", None) or str(exc)
        problems.append(SpecProblem(str(path), "", "", f"invalid YAML at {where}: {what}"))
        return None


def _pydantic_problems(source: str, exc: ValidationError, prefix: str = "") -> list[SpecProblem]:
    out = []
    for err in exc.errors():
        loc = [str(x) for x in err["loc"]]
        # Drop the discriminator tag pydantic inserts into union locations.
        path = ".".join(loc)
        if prefix:
            path = f"{prefix}.{path}" if path else prefix
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        elif err["type"] == "missing":
            msg = "required field is missing"
        value = "" if err["type"] == "missing" else _short(err.get("input"))
        out.append(SpecProblem(source, path, value, msg))
    return out


def pack_search_path(schemas_dir: Path | None = None) -> list[Path]:
    """Folders searched for packs named without a path: $WORLDFORGE_SCHEMAS (os.pathsep-separated),
    then the shipped packs."""
    import os

    extra = [Path(p) for p in os.environ.get("WORLDFORGE_SCHEMAS", "").split(os.pathsep) if p]
    return [*extra, schemas_dir or SCHEMAS_DIR]


def _available_packs(dirs: list[Path]) -> list[str]:
    return sorted({p.stem for d in dirs for p in d.glob("*.yaml")})


def _resolve_pack_path(ref: str, spec_dir: Path, dirs: list[Path]) -> Path | None:
    if ref.endswith((".yaml", ".yml")) or "/" in ref:
        for base in (spec_dir, Path.cwd()):
            cand = (base / ref).resolve()
            if cand.is_file():
                return cand
        return None
    for d in dirs:
        cand = d / f"{ref}.yaml"
        if cand.is_file():
            return cand
    return None


def load_world(path: str | Path, schemas_dir: Path | None = None) -> ResolvedWorld:
    """Load and validate a world spec and its packs; raise `SpecError` with every problem."""
    path = Path(path)
    dirs = pack_search_path(schemas_dir)
    problems: list[SpecProblem] = []
    raw = _read_yaml(path, problems)
    if problems:
        raise SpecError(problems)
    if not isinstance(raw, dict):
        raise SpecError([SpecProblem(str(path), "", _short(raw), "a world spec must be a YAML mapping")])
    try:
        spec = WorldSpec.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(str(path), exc))
        spec = None

    packs: dict[str, DomainPack] = {}
    pack_files: dict[str, str] = {}
    for i, ref in enumerate(raw.get("packs") or []):
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
        pack_raw = _read_yaml(pack_path, problems)
        if pack_raw is None:
            continue
        if not isinstance(pack_raw, dict):
            problems.append(SpecProblem(str(pack_path), "", _short(pack_raw), "a domain pack must be a YAML mapping"))
            continue
        try:
            pack = DomainPack.model_validate(pack_raw)
        except ValidationError as exc:
            problems.extend(_pydantic_problems(str(pack_path), exc))
            continue
        if pack.pack in packs:
            problems.append(SpecProblem(str(path), f"packs.{i}", _short(ref), f"pack '{pack.pack}' is listed twice"))
            continue
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
    world = ResolvedWorld(spec=spec, packs=packs, pack_files=pack_files)
    problems.extend(_semantic_problems(world, str(path)))
    if problems:
        raise SpecError(problems)
    return world


# --------------------------------------------------------------------------- semantic checks


def _suggest(name: str, options) -> str:
    close = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _unknown_type(name: str, known) -> str:
    return f"unknown type{_suggest(name, known)}; known types: {', '.join(sorted(known))}"


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
        if b.ref in CONSTANT_REFS:
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
        if len(parts) == 2 and parts[0] in ("source", "target"):
            check_attr(pname, path, rs.source if parts[0] == "source" else rs.target, parts[1], want_date=True)
            return
        extra = ", valid_from" if rs.history is not None else ""
        add(pname, path, b.ref, f"unknown date reference; use as_of, span_start, source.<attr>, target.<attr>{extra}")

    faker = None
    for pname, pack in world.packs.items():
        for t, et in pack.types.items():
            base = f"types.{t}"
            if et.parent:
                known_type(pname, f"{base}.parent.type", et.parent.type)
            for part_name, part in et.name.parts.items():
                if part.faker:
                    if faker is None:
                        faker = Faker(spec.locale if spec.locale in AVAILABLE_LOCALES else "en_US")
                    if not callable(getattr(faker, part.faker, None)):
                        add(pname, f"{base}.name.parts.{part_name}.faker", part.faker,
                            f"unknown faker provider{_suggest(part.faker, dir(faker))}")
            for alias_i, al in enumerate(et.name.aliases):
                if al.after is not None:
                    check_bound(pname, f"{base}.name.aliases.{alias_i}.after", al.after, t, "attr")
            for a, attr in et.attributes.items():
                ap = f"{base}.attributes.{a}"
                if isinstance(attr, FakerAttr):
                    if faker is None:
                        faker = Faker(spec.locale if spec.locale in AVAILABLE_LOCALES else "en_US")
                    if not callable(getattr(faker, attr.provider, None)):
                        add(pname, f"{ap}.provider", attr.provider, f"unknown faker provider{_suggest(attr.provider, dir(faker))}")
                elif isinstance(attr, DateAttr):
                    for j, b in enumerate(attr.after):
                        check_bound(pname, f"{ap}.after.{j}", b, t, "attr")
                    for j, b in enumerate(attr.before):
                        check_bound(pname, f"{ap}.before.{j}", b, t, "attr")
                    _check_static_window(add, pname, ap, attr.after, attr.before, spec)
                elif isinstance(attr, LookupAttr):
                    if attr.via not in rels or rels[attr.via][1].source != t:
                        own = [r for r, (_, rs) in rels.items() if rs.source == t]
                        add(pname, f"{ap}.via", attr.via, f"'{t}' has no outgoing relation of that name{_suggest(attr.via, own)}; it has: {', '.join(own) or 'none'}")
                    else:
                        rs = rels[attr.via][1]
                        if rs.cardinality not in ("1:1", "N:1") or rs.history:
                            add(pname, f"{ap}.via", attr.via, "a lookup needs a to-one relation (1:1 or N:1, no history)")
                        check_attr(pname, f"{ap}.attribute", rs.target, attr.attribute)
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
                    if b.ref.startswith("target.") or b.ref == "valid_from":
                        add(pname, f"{rp}.history.{side}.{j}", b.ref, "a history window may refer to the source and constants only")
            _check_static_window(add, pname, f"{rp}.history", rs.history.after, rs.history.before, spec)
        if rs.acyclic and rs.source != rs.target:
            add(pname, f"{rp}.acyclic", True, "acyclic only applies to relations from a type to itself")
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
        probs.extend(_feasibility_problems(world, spec_file))
        probs.extend(_cycle_problems(world, spec_file))
        probs.extend(_sql_problems(world))
    return probs


def _check_pages(add, pname: str, t: str, et: EntityType, rels: dict, check_attr) -> None:
    """Page declarations must name this type's own event attributes, relations and columns."""
    base = f"types.{t}.pages"
    own = [r for r, (_, rs) in rels.items() if rs.source == t]
    dated = [r for r in own if rels[r][1].history or rels[r][1].date or rels[r][1].since]
    events = [a for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event]
    for i, n in enumerate(et.pages.news or []):
        if n not in events and n not in dated:
            add(pname, f"{base}.news.{i}", n, f"not an event attribute or dated relation of '{t}'{_suggest(n, events + dated)}; "
                f"choose from: {', '.join(events + dated) or 'none'}")
    for i, d in enumerate(et.pages.directories):
        dp = f"{base}.directories.{i}"
        if d.by not in own and d.by not in et.attributes:
            add(pname, f"{dp}.by", d.by, f"'{t}' has no outgoing relation or attribute of that name"
                f"{_suggest(d.by, own + list(et.attributes))}; relations: {', '.join(own) or 'none'}")
        if "{group}" not in d.title:
            add(pname, f"{dp}.title", d.title, "the title must contain {group}, e.g. 'Companies headquartered in {group}'")
        for j, c in enumerate(d.columns):
            check_attr(pname, f"{dp}.columns.{j}", t, c)
    if et.pages.profile and et.pages.profile.url:
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(et.pages.profile.url) if f}
        except ValueError as exc:
            add(pname, f"{base}.profile.url", et.pages.profile.url, f"not a valid template: {exc}")
            return
        for f in sorted(fields - {"slug", "site"}):
            check_attr(pname, f"{base}.profile.url", t, f)


def _check_static_window(add, pname: str, path: str, after: list[DateBound], before: list[DateBound], spec: WorldSpec) -> None:
    """Reject windows that are empty whatever the data: constant bounds that cross, or
    a lower bound on the same reference at or above an upper bound."""
    import polars as pl

    def resolve(b: DateBound) -> dt.date | None:
        if b.ref not in CONSTANT_REFS:
            return None
        base = spec.as_of if b.ref == "as_of" else spec.span_start
        s = pl.Series([base]).dt.offset_by(f"{b.years}y{b.days}d")
        return s[0]

    lo = max([d for d in map(resolve, after) if d is not None] + [spec.span_start])
    hi = min([d for d in map(resolve, before) if d is not None] + [spec.as_of])
    if lo > hi:
        add(pname, path, f"after {lo}, before {hi}",
            "the date window is empty: its lower bound is after its upper bound (bounds are also clipped to the world's time span)")
        return
    for a in after:
        for b in before:
            if a.ref == b.ref and a.ref not in CONSTANT_REFS and (a.years, a.days) >= (b.years, b.days):
                add(pname, path, f"after {a}, before {b}", "the date window is empty for every row")


def _feasibility_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    probs = []
    counts = expected_counts(world)
    for r, rs in world.relations.items():
        src_lo, src_mid, _ = counts[rs.source]
        tgt_lo, _, tgt_hi = counts[rs.target]
        pname = world.pack_of_relation(r)
        f = world.pack_files[pname]
        if rs.required and src_lo > 0 and tgt_hi == 0:
            probs.append(SpecProblem(f, f"relations.{r}", "", f"'{rs.source}' entities need a '{rs.target}' target but the world has no "
                                     f"'{rs.target}'; give '{rs.target}' (or its parent) a count above 0"))
        if rs.target_unique:
            need = src_mid * rs.rate * max(rs.count.min, 1 if rs.required else 0)
            if need > tgt_lo and need > 0:
                probs.append(SpecProblem(spec_file, "counts", f"{rs.source}~{src_mid:.0f}, {rs.target}>={tgt_lo:.0f}",
                                         f"relation '{r}' ({rs.cardinality}) gives each '{rs.target}' to at most one '{rs.source}', "
                                         f"so it needs about {need:.0f} distinct targets but the world may have only {tgt_lo:.0f}; "
                                         f"raise the '{rs.target}' count or lower '{rs.source}'"))
    return probs


def _cycle_problems(world: ResolvedWorld, spec_file: str) -> list[SpecProblem]:
    import networkx as nx

    g = dependency_graph(world)
    probs = []
    for comp in nx.strongly_connected_components(g):
        if len(comp) < 2:
            continue
        cyc = nx.find_cycle(g.subgraph(comp))
        chain = " -> ".join(node_label(u) for u, _ in cyc) + f" -> {node_label(cyc[0][0])}"
        first = sorted(comp)[0]
        owner = first[1]
        pname = world.pack_of_type(owner) if first[0] in ("type", "attr", "aliases") else world.pack_of_relation(owner)
        probs.append(SpecProblem(world.pack_files[pname], "", "",
                                 f"dependency cycle: {chain}; break it by removing one of these references"))
    return probs


def _sql_problems(world: ResolvedWorld) -> list[SpecProblem]:
    """Compile derived expressions against an empty table of the right shape."""
    import duckdb

    sql_types = {"string": "VARCHAR", "int": "BIGINT", "float": "DOUBLE", "date": "DATE", "bool": "BOOLEAN", "entity": "VARCHAR"}
    probs = []
    con = duckdb.connect()
    for t, et in world.types.items():
        cols = ["id VARCHAR", "name VARCHAR"] + [
            f'"{a}" {sql_types[attribute_dtype(world, t, a)]}' for a in et.attributes
        ]
        con.execute(f'CREATE OR REPLACE TABLE "_probe" ({", ".join(cols)})')
        for a, attr in et.attributes.items():
            if isinstance(attr, DerivedAttr):
                expr = fill_sql(attr.sql, world.spec)
                try:
                    con.execute(f'SELECT CAST(({expr}) AS {sql_types[attr.dtype]}) FROM "_probe"').fetchall()
                except duckdb.Error as exc:
                    msg = str(exc).splitlines()[0]
                    probs.append(SpecProblem(world.pack_files[world.pack_of_type(t)], f"types.{t}.attributes.{a}.sql",
                                             _short(attr.sql), f"not a valid DuckDB expression over {t}'s columns: {msg}"))
    con.close()
    return probs
