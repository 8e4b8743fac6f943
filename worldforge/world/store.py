"""The world store: one folder per world, `<build-dir>/<name>/`, holding `world.duckdb`
and `world.json` (the manifest that marks it complete).

A plan is written to `<name>.partial/` and renamed into place only after every invariant
holds, so an interrupted plan never leaves a folder that looks complete."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
from pydantic import ValidationError

from ..errors import DamagedStateError, IncompleteWorldError, InvariantViolationError, WorldExistsError, WorldNotFoundError
from ..plumbing import connect_duckdb, file_digest, package_versions, read_json, swap_into_place, truncation, write_atomic
from ..plumbing import quote_ident as _q
from .pack import DateAttr, LinkEntity
from .spec import ResolvedWorld, attribute_dtype, attribute_unit, note_sql

if TYPE_CHECKING:
    import duckdb
    import networkx as nx

DB_FILE = "world.duckdb"
MANIFEST_FILE = "world.json"
STORE_FORMAT = 1

@dataclass
class WorldTables:
    """The generated world in memory: one frame per type, one edge frame per relation."""

    entities: dict[str, pl.DataFrame] = field(default_factory=dict)
    # Relation edges with integer row indices: src, tgt, valid_from, valid_to.
    edges: dict[str, pl.DataFrame] = field(default_factory=dict)
    aliases: list[pl.DataFrame] = field(default_factory=list)
    repairs: dict[str, int] = field(default_factory=dict)
    # Yearly figures of attributes that change (`changes:`): subject, subject_type, predicate, year, value.
    series: list[pl.DataFrame] = field(default_factory=list)

    SERIES_SCHEMA = {"subject": pl.String, "subject_type": pl.String, "predicate": pl.String, "year": pl.Int32,
                     "value": pl.Float64, "text": pl.String}

    def series_frame(self) -> pl.DataFrame:
        if not self.series:
            return pl.DataFrame(schema=self.SERIES_SCHEMA)
        return pl.concat(self.series).select(list(self.SERIES_SCHEMA)).sort(["subject_type", "predicate", "subject", "year"])

    def alias_frame(self) -> pl.DataFrame:
        schema = {"entity_id": pl.String, "entity_type": pl.String, "alias": pl.String, "kind": pl.String, "valid_to": pl.Date}
        if not self.aliases:
            return pl.DataFrame(schema=schema)
        return pl.concat(self.aliases).select(list(schema)).sort(["entity_type", "entity_id", "kind", "alias"])

    def relation_frame(self, name: str, world: ResolvedWorld) -> pl.DataFrame:
        rel = world.relations[name]
        e = self.edges[name]
        src_ids = self.entities[rel.source]["id"]
        tgt_ids = self.entities[rel.target]["id"]
        own = {}  # the link's own attributes (a member's role); an entity's by its id (a supervisor)
        for a, attr in rel.attributes.items():
            holder = attr.entity_type(world.relations) if isinstance(attr, LinkEntity) else None
            own[a] = self.entities[holder]["id"].gather(e[a]) if holder is not None else e[a]
        return pl.DataFrame({
            "source": src_ids.gather(e["src"]),
            "target": tgt_ids.gather(e["tgt"]),
            "valid_from": e["valid_from"],
            "valid_to": e["valid_to"],
            **own,
        })


@dataclass(frozen=True)
class WorldInfo:
    """A complete, stored world: its folder, resolved spec and manifest."""

    path: Path
    world: ResolvedWorld
    manifest: dict

    @property
    def db_path(self) -> Path:
        return self.path / DB_FILE

    def connect(self, read_only: bool = True) -> duckdb.DuckDBPyConnection:
        return connect_duckdb(self.db_path, REPLAN, read_only=read_only)


REPLAN = "plan the world again with `worldforge plan SPEC --force` (or `worldforge run SPEC`)"


def world_dir(build_dir: Path, name: str) -> Path:
    return Path(build_dir) / name


def is_complete(path: Path) -> bool:
    m = path / MANIFEST_FILE
    if not m.is_file():
        return False
    try:
        return json.loads(m.read_text()).get("status") == "complete"
    except (OSError, ValueError):
        return False


def ensure_writable(build_dir: Path, name: str, force: bool) -> None:
    """Refuse to overwrite a complete world unless forced (checked before any work)."""
    target = world_dir(build_dir, name)
    if is_complete(target) and not force:
        raise WorldExistsError(
            f"a complete world already exists at {target}; pass --force to replace it, or use another --build-dir"
        )


def open_world(path: str | Path) -> WorldInfo:
    """Open a complete stored world; incomplete or missing worlds raise a clear error."""
    path = Path(path)
    if not path.exists():
        raise WorldNotFoundError(f"no world at {path}; plan one with `worldforge plan SPEC`")
    if not path.is_dir():
        raise WorldNotFoundError(f"{path} is not a world folder (expected <build-dir>/<world name>/)")
    if not (path / MANIFEST_FILE).is_file() or not (path / DB_FILE).is_file():
        if (path / DB_FILE).is_file() or any(path.iterdir()):
            raise IncompleteWorldError(
                f"{path} holds an incomplete world (an interrupted plan?); re-run `worldforge plan SPEC --force`"
            )
        raise WorldNotFoundError(f"{path} holds no world; plan one with `worldforge plan SPEC`")
    manifest = read_json(path / MANIFEST_FILE, REPLAN)
    if not isinstance(manifest, dict) or manifest.get("status") != "complete":
        raise IncompleteWorldError(f"{path} is not marked complete; re-run `worldforge plan SPEC --force`")
    try:
        world = ResolvedWorld.model_validate(manifest["resolved"])
    except (KeyError, TypeError, ValidationError):
        raise DamagedStateError(f"{path / MANIFEST_FILE} is damaged (its resolved spec does not load); {REPLAN}") from None
    cut = truncation(path / DB_FILE, manifest.get("db") or {})
    if cut:  # a truncated copy opens, then fails mid-query
        raise DamagedStateError(f"{path / DB_FILE} is damaged ({cut}); {REPLAN}")
    return WorldInfo(path=path, world=world, manifest=manifest)


def planned_packs(info: WorldInfo) -> dict[str, str]:
    """Each pack's YAML as the world was planned from it, by pack name in generation order.
    Worlds planned before it was recorded read the pack files, which must still be where
    they were."""
    recorded = info.manifest.get("planned_packs")
    if isinstance(recorded, list) and all(isinstance(x, dict) and isinstance(x.get("yaml"), str) for x in recorded) \
            and sorted(x.get("pack") for x in recorded) == sorted(info.world.packs):
        return {x["pack"]: x["yaml"] for x in recorded}
    files = {Path(f).name: k for k, f in info.world.pack_files.items()}
    order = [r if r in info.world.packs else files.get(Path(r).name) for r in info.world.spec.packs]
    if sorted(k for k in order if k) != sorted(info.world.packs):
        order = list(info.world.packs)
    out = {}
    for k in order:
        f = Path(info.world.pack_files[k])
        if not f.is_file():
            raise DamagedStateError(
                f"{info.path} was planned from the pack file {f} (pack '{k}'), which is no longer there; put it back, "
                f"or plan the world again from a spec that names the pack where it is now (`worldforge run SPEC`)")
        out[k] = f.read_bytes().decode("utf-8")
    return out


HEAVY_DROP = 0.5  # a relation that loses more of its drawn links than this is named after a plan


@dataclass(frozen=True)
class Repair:
    what: str  # "relation plays_in: links dropped (no eligible target)", "city.population: parts scaled ..."
    count: int
    drawn: int | None = None  # the relation's links before its drops (a drop's share is count / drawn)


def repairs(manifest: dict) -> list[Repair]:
    """What the planner repaired or dropped to keep every invariant, from a world's manifest,
    with each dropped relation's links before the drops."""
    rep = {k: int(v) for k, v in (manifest.get("repairs") or {}).items() if v}
    rels = manifest.get("relations") or {}
    dropped: dict[str, int] = {}
    for k, v in rep.items():
        if k.startswith("relation ") and (" dropped" in k or " removed" in k):
            r = k.removeprefix("relation ").split(":", 1)[0]
            dropped[r] = dropped.get(r, 0) + v
    out = []
    for k, v in sorted(rep.items()):
        r = k.removeprefix("relation ").split(":", 1)[0] if k.startswith("relation ") else None
        drop = r is not None and (" dropped" in k or " removed" in k)
        out.append(Repair(k, v, int(rels.get(r, 0)) + dropped[r] if drop else None))
    return out


def heavy_drops(manifest: dict, share: float = HEAVY_DROP) -> list[str]:
    """A sentence per relation that lost more than `share` of its drawn links: a bound, a
    lifecycle or an eligibility rule the pack author may not have meant."""
    by_rel: dict[str, list[Repair]] = {}
    for rp in repairs(manifest):
        if rp.drawn:
            by_rel.setdefault(rp.what.removeprefix("relation ").split(":", 1)[0], []).append(rp)
    out = []
    for r, rps in by_rel.items():
        lost, drawn = sum(x.count for x in rps), rps[0].drawn
        if lost > share * drawn:
            why = "; ".join(f"{x.what.split(': ', 1)[1]}: {x.count:,}" for x in rps)
            out.append(f"relation '{r}' lost {lost:,} of its {drawn:,} drawn links ({lost / drawn:.0%}; {why}); "
                       "check its dates, the lifecycles of the types it joins and its target rules in the pack")
    return out


# --------------------------------------------------------------------------- writing


def _arrow(df: pl.DataFrame):
    return df.to_arrow(compat_level=pl.CompatLevel.oldest())


def write_world(world: ResolvedWorld, tables: WorldTables, build_dir: Path, check: Callable[[duckdb.DuckDBPyConnection], list],
                force: bool = False, on_step=None) -> WorldInfo:
    """Write a generated world to `<build_dir>/<name>/` atomically. `check` runs on the
    written database before anything is marked complete and returns the invariant
    violations; any violation aborts the write."""
    import duckdb

    name = world.spec.name
    build_dir = Path(build_dir)
    ensure_writable(build_dir, name, force)
    build_dir.mkdir(parents=True, exist_ok=True)
    final = world_dir(build_dir, name)
    partial = build_dir / f".{name}.partial"
    if partial.exists():  # left by an interrupted plan
        shutil.rmtree(partial)
    partial.mkdir()

    if on_step:
        on_step("write world.duckdb")
    try:
        con = duckdb.connect(str(partial / DB_FILE))
        try:
            stats = write_tables(con, world, tables)
            if on_step:
                on_step("check invariants")
            violations = check(con)
            if violations:
                raise InvariantViolationError(violations)
            con.execute("CHECKPOINT")
        finally:
            con.close()
    except BaseException:
        # Nothing half-written stays behind (a hard kill leaves .partial, removed by the next plan).
        shutil.rmtree(partial, ignore_errors=True)
        raise

    manifest = {
        "status": "complete",
        "store_format": STORE_FORMAT,
        "name": name,
        "seed": world.spec.seed,
        "counts": stats["counts"],
        "relations": stats["relations"],
        "aliases": stats["aliases"],
        "facts": stats["facts"],
        "repairs": tables.repairs,
        "db": file_digest(partial / DB_FILE),
        "versions": package_versions(),
        "resolved": json.loads(world.model_dump_json()),
        # The packs as planned, in the spec's order (the generation order; this file's keys are sorted),
        # so a world never needs its pack files again: they may move or change.
        "planned_packs": [{"pack": k, "yaml": Path(world.pack_files[k]).read_bytes().decode("utf-8")} for k in world.packs],
    }
    write_atomic(partial / MANIFEST_FILE, json.dumps(manifest, indent=2, sort_keys=True, default=str))
    swap_into_place(partial, final)  # the old world (if forced) moves aside first, then is removed
    return WorldInfo(path=final, world=world, manifest=manifest)


def open_in_memory(world: ResolvedWorld, tables: WorldTables):
    """The generated world as an in-memory DuckDB store, laid out as `write_world` writes it
    (for checks and audits of many worlds that need not be kept)."""
    import duckdb

    con = duckdb.connect()
    write_tables(con, world, tables)
    return con


def write_tables(con, world: ResolvedWorld, tables: WorldTables) -> dict:
    counts, rel_counts = {}, {}
    for t, df in tables.entities.items():
        con.register("_src", _arrow(df))
        con.execute(f"CREATE TABLE {_q(t)} AS SELECT * FROM _src")
        con.unregister("_src")
        counts[t] = df.height
    for r in world.relations:
        df = tables.relation_frame(r, world)
        con.register("_src", _arrow(df))
        con.execute(f"CREATE TABLE {_q('rel_' + r)} AS SELECT * FROM _src")
        con.unregister("_src")
        rel_counts[r] = df.height
    aliases = tables.alias_frame()
    con.register("_src", _arrow(aliases))
    con.execute("CREATE TABLE aliases AS SELECT * FROM _src")
    con.unregister("_src")
    con.register("_src", _arrow(tables.series_frame()))
    con.execute("CREATE TABLE series AS SELECT * FROM _src")
    con.unregister("_src")
    _write_catalogue(con, world)
    _create_views(con, world)
    facts = con.execute("SELECT count(*) FROM facts").fetchone()[0]
    return {"counts": counts, "relations": rel_counts, "aliases": aliases.height, "facts": facts}


def _write_catalogue(con, world: ResolvedWorld) -> None:
    types = [(t, world.pack_of_type(t), et.description, et.parent.type if et.parent else None)
             for t, et in world.types.items()]
    attrs = []
    for t, et in world.types.items():
        attrs.append((t, "name", "name", "string", None, f"unique name of the {t}"))
        for a, spec in et.attributes.items():
            attrs.append((t, a, spec.kind, attribute_dtype(world, t, a), attribute_unit(world, t, a), spec.description))
    rels = []
    for r, rs in world.relations.items():
        temporal = "history" if rs.history else "event" if rs.date else "since" if rs.since else "static"
        rels.append((r, world.pack_of_relation(r), rs.source, rs.target, rs.cardinality, temporal, rs.description))
    events = [(t, a) for t, et in world.types.items() for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event]
    # One Arrow insert per table (executemany costs about a millisecond per row).
    for name, cols, rows in (("_types", ("type", "pack", "description", "parent"), types),
                             ("_attributes", ("type", "attribute", "kind", "dtype", "unit", "description"), attrs),
                             ("_relations", ("relation", "pack", "source", "target", "cardinality", "temporal", "description"), rels),
                             ("_events", ("type", "attribute"), events)):
        frame = pl.DataFrame(rows, schema={c: pl.String for c in cols}, orient="row")
        con.register("_src", _arrow(frame))
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM _src")
        con.unregister("_src")


def _list_sql(items: list[str]) -> str:
    return "[" + ", ".join("'" + i.replace("'", "''") + "'" for i in items) + "]::VARCHAR[]"


def _value_sql(dtype: str, col: str) -> str:
    if dtype == "date":
        return f"strftime({col}, '%Y-%m-%d')"
    return f"CAST({col} AS VARCHAR)"


def _create_views(con, world: ResolvedWorld) -> None:
    """`facts`: one row per stated fact (attributes and relation links), with a stable,
    content-derived fact id that later stages cite for provenance. `timeline`: dated facts."""
    selects = []
    for t, et in world.types.items():
        for a in ["name", *(a for a, s in et.attributes.items() if not s.hidden)]:  # a hidden attribute states nothing
            dtype = attribute_dtype(world, t, a)
            selects.append(
                f"SELECT id || '/{a}' AS fact_id, id AS subject, '{t}' AS subject_type, '{a}' AS predicate, "
                f"{_value_sql(dtype, _q(a))} AS value, '{dtype}' AS value_type, "
                f"NULL::DATE AS valid_from, NULL::DATE AS valid_to, NULL::VARCHAR AS note FROM {_q(t)} WHERE {_q(a)} IS NOT NULL"
            )
    for r, rs in world.relations.items():
        # `note`: the link's own attributes (a job's department), by name (`note_order`), joined by U+001F
        note = " || chr(31) || ".join(f"coalesce({note_sql(world, r, a)}, '')" for a in rs.note_order) if rs.attributes else "NULL::VARCHAR"
        selects.append(
            f"SELECT source || '/{r}/' || target || coalesce('@' || strftime(valid_from, '%Y-%m-%d'), '') AS fact_id, "
            f"source AS subject, '{rs.source}' AS subject_type, '{r}' AS predicate, target AS value, "
            f"'entity' AS value_type, valid_from, valid_to, {note} AS note FROM {_q('rel_' + r)}"
        )
    con.execute("CREATE VIEW facts AS\n" + "\nUNION ALL\n".join(selects))
    # A changing value's earlier years, as the facts a page dated then states ('<id>/<attribute>@<year>').
    ints = [f"{t}/{a}" for t, et in world.types.items() for a in et.attributes if attribute_dtype(world, t, a) == "int"]
    con.execute("CREATE VIEW past_facts AS SELECT subject || '/' || predicate || '@' || year AS fact_id, subject, subject_type, "
                "predicate, CASE WHEN text IS NOT NULL THEN text WHEN list_contains(" + _list_sql(ints) + ", subject_type || '/' || predicate) "
                "THEN CAST(CAST(value AS BIGINT) AS VARCHAR) ELSE CAST(value AS VARCHAR) END AS value, "
                "CASE WHEN text IS NOT NULL THEN 'string' WHEN list_contains(" + _list_sql(ints) + ", subject_type || '/' || predicate) "
                "THEN 'int' ELSE 'float' END AS value_type, NULL::DATE AS valid_from, NULL::DATE AS valid_to, NULL::VARCHAR AS note, "
                "year FROM series")
    ev = [f"SELECT {_q(a)} AS date, id AS subject, '{t}' AS subject_type, '{a}' AS predicate, id || '/{a}' AS fact_id "
          f"FROM {_q(t)} WHERE {_q(a)} IS NOT NULL"
          for t, a in con.execute("SELECT type, attribute FROM _events").fetchall()]
    ev.append("SELECT valid_from AS date, subject, subject_type, predicate, fact_id FROM facts WHERE valid_from IS NOT NULL")
    con.execute("CREATE VIEW timeline AS " + "\nUNION ALL\n".join(ev))


# --------------------------------------------------------------------------- reading


def table_names(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()]


def table_digests(con) -> dict[str, str]:
    """A content hash per table (independent of physical row order)."""
    out = {}
    for t in table_names(con):
        row = con.execute(
            f"SELECT count(*), md5(coalesce(string_agg(r, chr(10) ORDER BY r), '')) "
            f"FROM (SELECT CAST(x AS VARCHAR) AS r FROM {_q(t)} AS x)"
        ).fetchone()
        out[t] = f"{row[0]}:{row[1]}"
    return out


def load_graph(info: WorldInfo, relations: list[str] | None = None) -> nx.MultiDiGraph:
    """The world as a networkx multigraph for path sampling: nodes are entity ids with
    `type` and `name`; edges carry `relation`, `valid_from` and `valid_to`."""
    import networkx as nx

    g = nx.MultiDiGraph()
    with info.connect() as con:
        for t in info.world.types:
            df = con.sql(f"SELECT id, name FROM {_q(t)}").pl()
            g.add_nodes_from((i, {"type": t, "name": n}) for i, n in zip(df["id"], df["name"]))
        for r in relations or list(info.world.relations):
            df = con.sql(f"SELECT source, target, valid_from, valid_to FROM {_q('rel_' + r)}").pl()
            g.add_edges_from(
                (s, d, {"relation": r, "valid_from": vf, "valid_to": vt})
                for s, d, vf, vt in zip(df["source"], df["target"], df["valid_from"], df["valid_to"])
            )
    return g
