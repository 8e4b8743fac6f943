"""The dependency graph of a world's generation steps: which types, attributes, relations
and alias sets must exist before each other. The planner walks it in topological order;
validation reports its cycles."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .pack import CONSTANT_REFS, DateAttr, DateBound, DerivedAttr, LookupAttr, WeightSelect
from .spec import ResolvedWorld


def dependency_graph(world: ResolvedWorld):
    """Nodes: ('type', T), ('attr', T, a), ('rel', R). Edges point from a prerequisite to its user."""
    import networkx as nx

    g = nx.DiGraph()
    types = world.types
    rels = world.relations
    parent_rel = {et.parent.relation: t for t, et in types.items() if et.parent}

    def rel_node(r: str):
        return ("type", parent_rel[r]) if r in parent_rel else ("rel", r)

    def attr_node(t: str, a: str):
        return ("type", t) if a in ("id", "name") else ("attr", t, a)

    for t, et in types.items():
        g.add_node(("type", t))
        if et.parent:
            g.add_edge(("type", et.parent.type), ("type", t))
        for a, attr in et.attributes.items():
            node = ("attr", t, a)
            g.add_edge(("type", t), node)
            deps: list = []
            if isinstance(attr, DateAttr):
                for b in [*attr.after, *attr.before]:
                    deps += _bound_deps_attr(b, t, rels, rel_node, attr_node)
            elif isinstance(attr, DerivedAttr):
                names = sql_names(attr.sql)
                for other in et.attributes:
                    if other != a and other in names:
                        deps.append(attr_node(t, other))
            elif isinstance(attr, LookupAttr):
                deps += [rel_node(attr.via), attr_node(rels[attr.via].target, attr.attribute)]
            for d in deps:
                if d != ("type", t):
                    g.add_edge(d, node)
        for al in et.name.aliases:
            if al.after is not None:
                for d in _bound_deps_attr(al.after, t, rels, rel_node, attr_node):
                    g.add_edge(d, ("aliases", t))
        g.add_edge(("type", t), ("aliases", t))
    for r, rs in rels.items():
        if r in parent_rel:
            continue
        node = ("rel", r)
        g.add_edge(("type", rs.source), node)
        g.add_edge(("type", rs.target), node)
        deps = []
        if rs.same:
            deps += [attr_node(rs.source, rs.same.source), attr_node(rs.target, rs.same.target)]
        if isinstance(rs.select, WeightSelect):
            deps.append(attr_node(rs.target, rs.select.weight))
        bounds: list[DateBound] = []
        if rs.eligible:
            deps.append(attr_node(rs.target, rs.eligible.attribute))
            bounds += [b for b in (rs.eligible.after, rs.eligible.before) if b is not None]
        if rs.since:
            bounds.append(rs.since)
        if rs.date:
            bounds += [*rs.date.after, *rs.date.before]
        if rs.history:
            bounds += [*rs.history.after, *rs.history.before]
        for b in bounds:
            side, _, a = b.ref.partition(".")
            if side == "source":
                deps.append(attr_node(rs.source, a))
            elif side == "target":
                deps.append(attr_node(rs.target, a))
        for d in deps:
            g.add_edge(d, node)
    return g


@lru_cache(maxsize=1024)
def sql_names(expr: str) -> frozenset[str]:
    """Column names a DuckDB expression reads (lower-case), from DuckDB's own parser, so that
    words inside string literals or comments are not taken for columns. If the expression
    does not parse, every identifier-like word outside string literals counts."""
    import duckdb

    con = duckdb.connect()
    try:
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [f"SELECT (\n{expr}\n)"]).fetchone()[0])
    except duckdb.Error:
        tree = {"error": True}
    finally:
        con.close()
    if not tree.get("error"):
        found: set[str] = set()
        stack = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if node.get("class") == "COLUMN_REF" and node.get("column_names"):
                    found.add(str(node["column_names"][-1]).lower())
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return frozenset(found)
    text = re.sub(r"'(?:[^']|'')*'|--[^\n]*", " ", expr)
    return frozenset(w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def _bound_deps_attr(b: DateBound, t: str, rels, rel_node, attr_node) -> list:
    if b.ref in CONSTANT_REFS:
        return []
    parts = b.ref.split(".")
    if len(parts) == 1:
        return [attr_node(t, parts[0])]
    r, a = parts
    return [rel_node(r), attr_node(rels[r].target, a)]


def node_label(n: tuple) -> str:
    """A readable name for a node of the dependency graph (cycle messages, progress bars)."""
    if n[0] == "type":
        return f"type {n[1]}"
    if n[0] == "attr":
        return f"{n[1]}.{n[2]}"
    if n[0] == "aliases":
        return f"{n[1]} aliases"
    return f"relation {n[1]}"
