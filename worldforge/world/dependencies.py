"""The dependency graph of a world's generation steps: which types, attributes, relations
and alias sets must exist before each other. The planner walks it in topological order;
validation reports its cycles."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .feasible import date_needs
from .pack import CategoricalAttr, CodeAttr, CountAttr, DateAttr, DateBound, DerivedAttr, LookupAttr, NumericAttr, WeightSelect
from .spec import ResolvedWorld, date_bounds, link_bounds, lookup_entity_type


def dependency_graph(world: ResolvedWorld, soft: bool = False):
    """Nodes: ('type', T) (its rows), ('name', T) (names and ids), ('rename', T) (names derived
    from other entities', `name.derived`), ('attr', T, a), ('rel', R), ('linkattr', R, a) (a link's entity), ('aliases', T). Edges
    point from a prerequisite to its user. With `soft`, also the orders the planner prefers
    but can do without, each added only where it closes no cycle: a source date drawn after
    the target dates a required link to it reads (`feasible.date_needs`)."""
    import networkx as nx

    g = nx.DiGraph()
    types = world.types
    rels = world.relations
    parent_rel = {et.parent.relation: t for t, et in types.items() if et.parent}

    def rel_node(r: str):
        return ("type", parent_rel[r]) if r in parent_rel else ("rel", r)

    derived = {t for t, et in types.items() if et.name.derived is not None}

    def attr_node(t: str, a: str):
        if a == "name" and t in derived:  # the final names: drawn, then some derived from others'
            return ("rename", t)
        return ("name", t) if a in ("id", "name") else ("attr", t, a)

    def given_node(t: str, given: str):
        return ("name", t) if given.startswith("name.") else attr_node(t, given)

    def link(deps, node) -> None:
        for d in deps:
            if d is not None and (d[0] != "rel" or d[1] in rels):
                g.add_edge(d, node)

    for t, et in types.items():
        g.add_edge(("type", t), ("name", t))
        if et.parent:
            g.add_edge(("type", et.parent.type), ("type", t))
            if et.parent.count_by:
                link([attr_node(et.parent.type, et.parent.count_by)], ("type", t))
            if et.parent.series is not None:  # editions run from the parent's start to its end
                lc = types[et.parent.type].lifecycle if et.parent.type in types else None
                ends = [lc.end] if lc is not None and lc.end else []
                link([attr_node(et.parent.type, a) for a in [et.parent.series.start, *ends]
                      if et.parent.type in types and a in types[et.parent.type].attributes], ("type", t))
        for part in et.name.parts.values():
            if part.given is not None:
                link([given_node(t, part.given)], ("name", t))
            if part.via is not None and part.via in rels:
                link([rel_node(part.via), attr_node(rels[part.via].target, part.attribute)], ("name", t))
        for a, attr in et.attributes.items():
            node = ("attr", t, a)
            g.add_edge(("type", t), node)
            deps = _attr_deps(world, t, et, a, attr, rel_node, attr_node, given_node)
            link([d for d in deps if d != ("type", t)], node)
        for al in et.name.aliases:
            if al.after is not None:
                link(_bound_deps_attr(al.after, t, rels, rel_node, attr_node), ("aliases", t))
        g.add_edge(("name", t), ("aliases", t))
        if et.name.derived is not None:  # after the link it follows and the names it reads
            dn = et.name.derived
            g.add_edge(("name", t), ("rename", t))
            g.add_edge(("rename", t), ("aliases", t))
            if dn.via in rels:
                link([rel_node(dn.via)], ("rename", t))
                if rels[dn.via].target != t:
                    link([attr_node(rels[dn.via].target, "name")], ("rename", t))
    for r, rs in rels.items():
        if r in parent_rel:
            continue
        node = ("rel", r)
        g.add_edge(("type", rs.source), node)
        g.add_edge(("type", rs.target), node)
        deps = _rel_deps(world, rs, rel_node, attr_node)
        link(deps, node)
        for a, attr in rs.attributes.items():  # a link's entity: once both relations' links are drawn
            if getattr(attr, "holds", None) is not None:
                g.add_edge(node, ("linkattr", r, a))
                link([rel_node(attr.relation)], ("linkattr", r, a))
    if soft:
        for node, deps in _soft_edges(world, attr_node):
            for d in deps:
                if d not in g or node not in g or not nx.has_path(g, node, d):
                    g.add_edge(d, node)
    return g


def _attr_deps(world: ResolvedWorld, t: str, et, a: str, attr, rel_node, attr_node, given_node) -> list:
    """The nodes an attribute `a` of type `t` is drawn after: its date bounds and given value, the
    other attributes a derived one reads, the link and attribute a lookup follows, a figure's
    whole or rate, the links a count counts, a code's source."""
    rels = world.relations
    deps: list = []
    if isinstance(attr, DateAttr):
        after, before = date_bounds(world, t, a)
        bounds = [*after, *before] + ([attr.offset.ref] if attr.offset else [])
        bounds += [b for c in attr.cases.values() for b in [*c.after, *c.before]]
        for b in bounds:
            deps += _bound_deps_attr(b, t, rels, rel_node, attr_node)
        if attr.given is not None:
            deps.append(given_node(t, attr.given))
        # a stage's dates are drawn for the stage each entity is to be in (`pack.Stages`)
        deps += [attr_node(t, s) for s, sa in et.attributes.items() if isinstance(sa, CategoricalAttr)
                 and sa.stages is not None and a in (sa.stages.start, sa.stages.end)]
    elif isinstance(attr, DerivedAttr):
        names = sql_names(attr.sql)
        # Derived SQL runs over the whole row, names and ids included (and its errors name the row).
        deps += [("name", t)] + [attr_node(t, other) for other in et.attributes if other != a and other in names]
    elif isinstance(attr, LookupAttr):
        if attr.via in rels:
            deps += [rel_node(attr.via), attr_node(rels[attr.via].target, attr.attribute)]
    elif isinstance(attr, (NumericAttr, CategoricalAttr)):
        if attr.given is not None:
            deps.append(given_node(t, attr.given))
        if isinstance(attr, CategoricalAttr) and attr.dated_by is not None:
            deps.append(attr_node(t, attr.dated_by))
        if isinstance(attr, NumericAttr) and attr.at_most is not None:
            deps.append(attr_node(t, attr.at_most))
        for po in ([attr.part_of, attr.per] if isinstance(attr, NumericAttr) else []):
            if po is None:
                continue
            if po.via is None:  # a rate of the entity's own figure
                deps.append(attr_node(t, po.attribute))
            elif po.via in rels:
                deps += [rel_node(po.via), attr_node(rels[po.via].target, po.attribute)]
            elif po.via in et.attributes:
                whole = lookup_entity_type(world, t, po.via)
                deps += [attr_node(t, po.via)] + ([attr_node(whole, po.attribute)] if whole else [])
    elif isinstance(attr, CountAttr):
        if attr.relation in rels:
            deps.append(rel_node(attr.relation))
    elif isinstance(attr, CodeAttr):
        deps.append(attr_node(t, attr.source))
    return deps


def _rel_deps(world: ResolvedWorld, rs, rel_node, attr_node) -> list:
    """The nodes a relation's links are drawn after: the attributes its rules read (same, once
    per, given, weight, eligibility), the relations it must differ from or requires, and what
    its date bounds read."""
    rels = world.relations
    deps = []
    if rs.same:
        deps += [attr_node(rs.source, rs.same.source), attr_node(rs.target, rs.same.target)]
    if rs.once_per is not None:
        deps.append(attr_node(rs.source, rs.once_per))
    if rs.given is not None:  # links per source by its category
        deps.append(attr_node(rs.source, rs.given))
    deps += [rel_node(x) for x in rs.not_same]  # their links are known when this one's targets are picked
    if isinstance(rs.select, WeightSelect):
        deps.append(attr_node(rs.target, rs.select.weight))
    bounds: list[DateBound] = []
    if rs.eligible:
        deps.append(attr_node(rs.target, rs.eligible.attribute))
        bounds += [b for b in (rs.eligible.after, rs.eligible.before) if b is not None]
    if rs.since:
        bounds.append(rs.since)
    if rs.at is not None:
        bounds.append(rs.at)
    if rs.date and rs.date.offset:
        bounds.append(rs.date.offset.ref)
    if rs.dated or rs.at is not None:
        after, before = link_bounds(world, rs)
        bounds += [*after, *before]
    for b in bounds:
        side, _, a = b.ref.partition(".")
        if side == "source" and a.count(".") == 1:  # source.<relation>.start: that relation's links first
            deps.append(rel_node(a.split(".")[0]))
        elif side == "source":
            deps.append(attr_node(rs.source, a))
        elif side == "target":
            deps.append(attr_node(rs.target, a))
    if rs.requires is not None:
        deps += [rel_node(hop) for hop, _ in rs.requires.hops if hop in rels]
    return deps


def _soft_edges(world: ResolvedWorld, attr_node) -> list[tuple[tuple, list[tuple]]]:
    """(a source date, the target and source attributes its required links read) in a fixed order."""
    out = []
    for t, et in world.types.items():
        for a, attr in et.attributes.items():
            if not isinstance(attr, DateAttr):
                continue
            for need in date_needs(world, t, a):
                tgt = need.spec.target
                deps = [("type", tgt)] + [attr_node(tgt, x) for x in sorted(need.target_attributes())]
                deps += [attr_node(t, x) for x in sorted(need.source_attributes(world))]
                out.append((("attr", t, a), [d for d in deps if d != ("attr", t, a)]))
    return out


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
    if b.constant:
        return []
    parts = b.ref.split(".")
    if len(parts) == 1:
        return [attr_node(t, parts[0])]
    r, a = parts[0], parts[-1]
    if r not in rels:
        return []
    return [rel_node(r), attr_node(rels[r].target, a)]


def node_label(n: tuple) -> str:
    """A readable name for a node of the dependency graph (cycle messages, progress bars)."""
    if n[0] == "type":
        return f"type {n[1]}"
    if n[0] == "name":
        return f"{n[1]} names"
    if n[0] == "attr":
        return f"{n[1]}.{n[2]}"
    if n[0] == "aliases":
        return f"{n[1]} aliases"
    if n[0] == "rename":
        return f"{n[1]} derived names"
    if n[0] == "linkattr":
        return f"{n[1]} links' {n[2]}"
    return f"relation {n[1]}"
