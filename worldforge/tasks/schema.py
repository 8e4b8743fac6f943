"""What task generation needs to know about a world: which hops lead from a type to
another, which attributes can be constrained or shown, how to name them in a question,
and how to turn a constraint or a column into SQL over the world store.

A hop (`Step`) is a relation link (source to target) or an entity-valued lookup attribute
(`city.country`). Relations with a `since:` date (headquarters) count only the current
link; tenure relations (chief executives, clubs) count any link, past or present.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..plumbing import quote_ident as _q
from ..web.pages import WorldView
from ..world.pack import CategoricalAttr, DateAttr, DerivedAttr, LookupAttr, NumericAttr

# Value kinds of a column or a constrained attribute, and WideSearch's pipeline for each.
STRING, NUMBER, DATE, URL = "string", "number", "date", "url"


def eval_entry(kind: str, tolerance: float) -> dict:
    if kind == NUMBER:
        return {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": tolerance}
    if kind == DATE:
        return {"preprocess": ["norm_date"], "metric": ["date_near"]}
    if kind == URL:
        return {"preprocess": [], "metric": ["url_match"]}
    return {"preprocess": ["norm_str"], "metric": ["exact_match"]}


def rel_fact_sql(alias: str, relation: str) -> str:
    """A relation link's fact id, exactly as the store's `facts` view writes it."""
    return (f"{alias}.source || '/{relation}/' || {alias}.target || "
            f"coalesce('@' || strftime({alias}.valid_from, '%Y-%m-%d'), '')")


def lit(v) -> str:
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return repr(float(v)) if isinstance(v, (float, np.floating)) and not float(v).is_integer() else str(int(v))
    return "'" + str(v).replace("'", "''") + "'"


@dataclass(frozen=True)
class Step:
    """One hop: a relation link (`rel`) or an entity-valued lookup attribute (`lookup`)."""

    kind: str  # rel | lookup
    name: str
    source: str
    target: str
    current: bool = False  # since-relations: only the link in force as of the world's date
    to_one: bool = True
    reverse: bool = False  # follow the link from its target back to its source


@dataclass(frozen=True)
class Join:
    """One table a path step joins: `table alias`, the conditions tying it to the previous
    entity, and the fact id the step follows (a SQL expression)."""

    table: str
    conds: tuple[str, ...] = ()
    fact: str | None = None


def walk(path: tuple[Step, ...] | list[Step], cur: str, row: str | None, rel_alias: str, row_alias: str,
         first: int = 0) -> tuple[list[Join], str]:
    """The joins that follow `path` from the entity id `cur` (whose own table row is `row`,
    if joined), and the SQL expression of the id reached. Aliases are `rel_alias`+i for link
    tables and `row_alias`+i for entity rows a lookup reads."""
    joins: list[Join] = []
    for i, st in enumerate(path, start=first):
        if st.kind == "rel":
            a = f"{rel_alias}{i}"
            near, far = ("target", "source") if st.reverse else ("source", "target")
            conds = (f"{a}.{near} = {cur}",) + ((f"{a}.valid_to IS NULL",) if st.current else ())
            joins.append(Join(f"{_q('rel_' + st.name)} {a}", conds, rel_fact_sql(a, st.name)))
            cur, row = f"{a}.{far}", None
        else:
            if row is None:
                row = f"{row_alias}{i}"
                joins.append(Join(f"{_q(st.source)} {row}", (f"{row}.id = {cur}",)))
            joins.append(Join("", (), f"{row}.id || '/{st.name}'"))  # a lookup reads a column: no table
            cur, row = f"{row}.{_q(st.name)}", None
    return joins, cur


@dataclass(frozen=True)
class Atom:
    """One constraint: follow `path` from the row entity, then test the end entity
    (`entity`: it is `value`) or one of its attributes (`eq` or a closed `range`)."""

    path: tuple[Step, ...]
    test: str  # entity | eq | range
    attr: str | None = None
    value: object = None  # entity id | value | (lo, hi) with None for an open end

    @property
    def end_type(self) -> str | None:
        return self.path[-1].target if self.path else None


@dataclass(frozen=True)
class Column:
    """One answer column: follow to-one `path` from the row entity, then take `attr`
    of the end entity (None: the end entity's name)."""

    name: str
    path: tuple[Step, ...]
    attr: str | None
    kind: str
    desc: str

    @property
    def hops(self) -> int:
        """How many entities away from the row its value is stated (0: on the row's own page)."""
        return max(0, len(self.path) - (1 if self.attr is None else 0))


class TaskSchema:
    """Hops, attributes, labels and question phrasings of one stored world."""

    def __init__(self, view: WorldView):
        self.view = view
        self.world = view.world
        self.con = view.con
        self.steps: dict[str, list[Step]] = {t: [] for t in self.world.types}
        for r, rs in self.world.relations.items():
            to_one = rs.cardinality in ("1:1", "N:1") and not rs.history
            self.steps[rs.source].append(Step("rel", r, rs.source, rs.target, current=rs.since is not None, to_one=to_one))
        for t, et in self.world.types.items():
            for a, s in et.attributes.items():
                if isinstance(s, LookupAttr) and view.dtype(t, a) == "entity":
                    target = self._lookup_target(t, a)
                    if target:
                        self.steps[t].append(Step("lookup", a, t, target))
        self._frames: dict[str, pl.DataFrame] = {}
        self._edges: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._rows: dict[str, dict[str, int]] = {}  # per type: entity id -> row of frame(t)

    def _lookup_target(self, t: str, a: str) -> str | None:
        rows = self.con.sql(f"SELECT {_q(a)} FROM {_q(t)} WHERE {_q(a)} IS NOT NULL LIMIT 1").fetchall()
        return self.view.type_of.get(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ attributes

    def attr_kind(self, t: str, a: str) -> str | None:
        """string | number | date | url, or None for entity-valued attributes."""
        if a == "name":
            return STRING
        dtype = self.view.dtype(t, a)
        if dtype == "entity":
            return None
        if dtype in ("int", "float"):
            return NUMBER
        if dtype == "date":
            return DATE
        if dtype == "string" and isinstance(self.world.types[t].attributes[a], DerivedAttr):
            sample = self.con.sql(f"SELECT {_q(a)} FROM {_q(t)} WHERE {_q(a)} IS NOT NULL LIMIT 1").fetchall()
            if sample and str(sample[0][0]).startswith(("http://", "https://")):
                return URL
        return STRING

    def constrainable(self, t: str) -> list[tuple[str, str]]:
        """(attribute, test) pairs usable as constraints: categorical equality, numeric and date ranges."""
        out = []
        for a, s in self.world.types[t].attributes.items():
            if isinstance(s, CategoricalAttr):
                out.append((a, "eq"))
            elif isinstance(s, (NumericAttr, DateAttr)) or (isinstance(s, DerivedAttr) and s.dtype in ("int", "float", "date")):
                out.append((a, "range"))
        return out

    def shown(self, t: str) -> list[str]:
        """Attributes that can be a column (not entity-valued; those are hops)."""
        return [a for a in self.world.types[t].attributes if self.attr_kind(t, a) is not None]

    def label(self, t: str, pred: str) -> str:
        """A short label: the pack's, else the predicate's own name ('population'), never a long description."""
        s = self.world.types[t].attributes.get(pred)
        if s is not None:
            return s.label or pred.replace("_", " ")
        return self.view.meta[(t, pred)].label

    def unit(self, t: str, a: str) -> str | None:
        return getattr(self.world.types[t].attributes.get(a), "unit", None)

    def singular(self, t: str) -> str:
        return t.replace("_", " ")

    def plural(self, t: str) -> str:
        return self.view.plural(t)

    def asks(self, t: str, pred: str) -> list[str]:
        """Qualifier templates for a constraint on `pred` of type `t` ({value} or {object})."""
        rs = self.world.relations.get(pred)
        if rs is not None and rs.source == t:
            if rs.ask:
                return list(rs.ask)
            lab = self.label(t, pred).lower()
            return [f"whose {lab} include {{object}}" if not self.view.meta[(t, pred)].to_one else f"whose {lab} is {{object}}"]
        s = self.world.types[t].attributes.get(pred)
        if s is not None and s.ask:
            return list(s.ask)
        return [f"whose {self.label(t, pred).lower()} is {{value}}"]

    # ------------------------------------------------------------------ data for sampling

    def frame(self, t: str) -> pl.DataFrame:
        if t not in self._frames:
            self._frames[t] = self.con.sql(f"SELECT * FROM {_q(t)} ORDER BY id").pl()
        return self._frames[t]

    def out_edges(self, step: Step) -> dict[str, list[str]]:
        """source id -> target ids of one hop (current links only for since-relations)."""
        key = (step.kind, step.name if step.kind == "rel" else f"{step.source}.{step.name}")
        if key not in self._edges:
            if step.kind == "rel":
                cur = " WHERE valid_to IS NULL" if step.current else ""
                df = self.con.sql(f"SELECT source, target FROM {_q('rel_' + step.name)}{cur} ORDER BY source, target").pl()
            else:
                df = self.con.sql(f"SELECT id AS source, {_q(step.name)} AS target FROM {_q(step.source)} "
                                  f"WHERE {_q(step.name)} IS NOT NULL ORDER BY id").pl()
            grouped = df.group_by("source", maintain_order=True).agg(pl.col("target"))
            self._edges[key] = dict(zip(grouped["source"].to_list(), grouped["target"].to_list()))
        return self._edges[key]

    def value(self, t: str, eid: str, a: str):
        df = self.frame(t)
        idx = self._index(t)
        i = idx.get(eid)
        return None if i is None else df[a][i]

    def _index(self, t: str) -> dict[str, int]:
        if t not in self._rows:
            self._rows[t] = {e: i for i, e in enumerate(self.frame(t)["id"].to_list())}
        return self._rows[t]

    # ------------------------------------------------------------------ SQL

    def atom_sql(self, atom: Atom, base_type: str, base: str = "t") -> str:
        """A boolean SQL expression, never NULL, true when the row `base` satisfies the atom."""
        if not atom.path:
            return f"coalesce({self._test_sql(f'{base}.{_q(atom.attr)}', atom)}, FALSE)"
        joins, cur = walk(atom.path, f"{base}.id", base, "s", "e")
        froms = [j.table for j in joins if j.table]
        wheres = [c for j in joins for c in j.conds]
        if atom.test == "entity":
            wheres.append(f"{cur} = {lit(atom.value)}")
        else:
            froms.append(f"{_q(atom.end_type)} u")
            wheres.append(f"u.id = {cur}")
            wheres.append(self._test_sql(f"u.{_q(atom.attr)}", atom))
        if not froms:
            return f"coalesce({' AND '.join(wheres)}, FALSE)"
        return f"EXISTS (SELECT 1 FROM {', '.join(froms)} WHERE {' AND '.join(wheres)})"

    @staticmethod
    def _test_sql(col: str, atom: Atom) -> str:
        if atom.test == "eq":
            return f"{col} = {lit(atom.value)}"
        lo, hi = atom.value
        parts = []
        if lo is not None:
            parts.append(f"{col} >= {lit(lo)}")
        if hi is not None:
            parts.append(f"{col} <= {lit(hi)}")
        return "(" + " AND ".join(parts) + ")"

    def column_sql(self, col: Column, j: int, base: str = "t") -> tuple[list[str], str, list[str]]:
        """LEFT JOINs, the value expression, and the fact-id expressions (with the entity
        whose page should state each) for one column."""
        steps, cur = walk(col.path, f"{base}.id", base, f"c{j}r", f"c{j}e")
        joins = [f"LEFT JOIN {x.table} ON {' AND '.join(x.conds)}" for x in steps if x.table]
        facts = [x.fact for x in steps if x.fact]
        end = col.path[-1].target if col.path else None
        if not col.path:
            value = f"{base}.{_q(col.attr or 'name')}"
            facts.append(f"{base}.id || '/{col.attr or 'name'}'")
        else:
            e = f"c{j}v"
            joins.append(f"LEFT JOIN {_q(end)} {e} ON {e}.id = {cur}")
            value = f"{e}.{_q(col.attr or 'name')}"
            if col.attr is not None:
                facts.append(f"{e}.id || '/{col.attr}'")
        return joins, value, facts

    def hop_noun(self, step: Step) -> str | None:
        """'the headquarters of {subject}': the noun phrase for one to-one hop, if there is a natural one."""
        if step.kind == "rel":
            rs = self.world.relations[step.name]
            if rs.noun:
                return rs.noun
        else:
            s = self.world.types[step.source].attributes[step.name]
            if getattr(s, "noun", None):
                return s.noun
        return f"the {self.label(step.source, step.name).lower()} of {{subject}}"
