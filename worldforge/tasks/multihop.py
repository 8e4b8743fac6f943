"""Multi-hop single-answer questions: start at a named entity and follow 2 to 4 hops, each
of which leads to exactly one entity ("the headquarters of the maker of Loor Air"), then
ask for the last entity or one of its attributes.

The hop graph is a networkx MultiDiGraph of the world's functional links only: to-one
relations (a since-relation's current link), lookups, tenures with exactly one current
holder ("the current chief executive"), many-to-many links with exactly one partner ("the
sole founder"), and the reverse of links whose target has one source ("the company that
acquired X"). Walks are simple paths sampled from it, so every answer is unique.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import networkx as nx
import numpy as np
import polars as pl

from ..plumbing import quote_ident as _q
from ..web.text import format_date, format_number
from .schema import DATE, NUMBER, STRING, URL, Step, TaskSchema, rel_fact_sql, walk
from .table import cell_text

QUESTIONS_ENTITY = ["Which {type} is {np}?", "Name {np}.", "Identify {np}."]
QUESTIONS_ATTR = ["What is the {label} of {np}?", "Find the {label} of {np}.", "Look up the {label} of {np}."]
QUESTIONS_WHEN = ["When was {np} {label}?", "On what date was {np} {label}?"]
QUESTIONS_DATE = ["What is the {label} date of {np}?", "Give the {label} date of {np}."]
TAILS = [
    "Answer with a markdown table with one row and the columns: {cols}.",
    "Give your answer as a single-row Markdown table with the columns {cols}.",
]


@dataclass
class Hop:
    source: str
    target: str
    noun: str  # with {subject}
    fact: str
    kind: str  # forward | current | sole | reverse | lookup


@dataclass
class MultiHopTask:
    start: str
    hops: list[Hop]
    answer_entity: str
    answer_attr: str | None
    answer: str
    answer_kind: str
    aliases: list[str]
    question: str
    columns: list[str]
    gold_rows: list[list[str]]
    facts: list[str]
    sql: str


def _singular(label: str) -> str | None:
    w = label.lower()
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return None


class HopGraph:
    """Functional hops of a world as a networkx MultiDiGraph (edge attrs: noun, fact, kind)."""

    def __init__(self, schema: TaskSchema):
        self.s = schema
        g = nx.MultiDiGraph()
        con = schema.con
        world = schema.world
        for r, rs in world.relations.items():
            lab = schema.label(rs.source, r)
            tbl = _q("rel_" + r)
            fact = rel_fact_sql("x", r)
            to_one = rs.cardinality in ("1:1", "N:1") and not rs.history
            if to_one:
                noun = schema.hop_noun(Step("rel", r, rs.source, rs.target))
                where = "WHERE x.valid_to IS NULL" if rs.since else ""
                self._add(g, con.sql(f"SELECT x.source, x.target, {fact} FROM {tbl} x {where}").pl(), noun, "forward", False,
                          r, current=rs.since is not None)
            elif _singular(lab):
                if rs.history:
                    noun = f"the current {_singular(lab)} of {{subject}}"
                    sql = (f"SELECT x.source, x.target, {fact} FROM {tbl} x WHERE x.valid_to IS NULL AND x.source IN "
                           f"(SELECT source FROM {tbl} WHERE valid_to IS NULL GROUP BY source HAVING count(*) = 1)")
                    kind = "current"
                else:
                    noun = f"the sole {_singular(lab)} of {{subject}}"
                    sql = (f"SELECT x.source, x.target, {fact} FROM {tbl} x WHERE x.source IN "
                           f"(SELECT source FROM {tbl} GROUP BY source HAVING count(*) = 1)")
                    kind = "sole"
                self._add(g, con.sql(sql).pl(), noun, kind, False, r, current=kind == "current")
            if rs.cardinality in ("1:1", "1:N") and not rs.history:
                asks = schema.asks(rs.source, r)
                noun = f"the {schema.singular(rs.source)} " + asks[0].replace("{object}", "{subject}")
                self._add(g, con.sql(f"SELECT x.source, x.target, {fact} FROM {tbl} x").pl(), noun, "reverse", True, r)
        for t, steps in schema.steps.items():
            for st in steps:
                if st.kind != "lookup":
                    continue
                noun = schema.hop_noun(st)
                df = con.sql(f"SELECT id AS source, {_q(st.name)} AS target, id || '/{st.name}' AS fact FROM {_q(t)} "
                             f"WHERE {_q(st.name)} IS NOT NULL").pl()
                self._add(g, df, noun, "lookup", False, st.name)
        self.g = g
        self.starts = sorted(n for n in g.nodes if g.out_degree(n) > 0)

    @staticmethod
    def _add(g: nx.MultiDiGraph, df: pl.DataFrame, noun: str, kind: str, reverse: bool, via: str, current: bool = False) -> None:
        a, b, f = df.columns
        src, dst = (b, a) if reverse else (a, b)
        g.add_edges_from((s, d, {"noun": noun, "fact": fid, "kind": kind, "via": via, "current": current})
                         for s, d, fid in zip(df[src].to_list(), df[dst].to_list(), df[f].to_list()))

    def walk(self, start: str, hops: int, rng: np.random.Generator) -> list[tuple[str, str, dict]] | None:
        """A simple path of `hops` functional links from `start`, or None if it dead-ends."""
        path, seen, cur = [], {start}, start
        for _ in range(hops):
            edges = sorted(((u, v, d) for u, v, d in self.g.out_edges(cur, data=True) if v not in seen),
                           key=lambda e: (e[1], e[2]["fact"]))
            if not edges:
                return None
            u, v, d = edges[rng.integers(len(edges))]
            path.append((u, v, d))
            seen.add(v)
            cur = v
        return path


def answer_aliases(value, kind: str, unit: str | None) -> list[str]:
    if kind == DATE:
        d = value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
        return list(dict.fromkeys(format_date(d, s) for s in range(3)))
    if kind == NUMBER:
        plain = cell_text(value, NUMBER)
        vt = "float" if isinstance(value, float) and not float(value).is_integer() else "int"
        out = [plain, format_number(plain, vt)]
        if unit:
            out.append(format_number(plain, vt, unit))
        return list(dict.fromkeys(out))
    return [str(value)]


class MultiHopSampler:
    def __init__(self, schema: TaskSchema, graph: HopGraph, rng: np.random.Generator, name_counts: dict[str, int]):
        self.s = schema
        self.graph = graph
        self.rng = rng
        self.name_counts = name_counts

    def sample(self, hops: int) -> MultiHopTask | str:
        """A question, or the reason the draw was dropped."""
        s, g = self.s, self.graph
        if not g.starts:
            return "no-path"
        start = g.starts[self.rng.integers(len(g.starts))]
        if self.name_counts.get(s.view.names[start], 0) != 1:
            return "ambiguous-name"
        path = g.walk(start, hops, self.rng)
        if path is None:
            return "no-path"
        np_ = s.view.names[start]
        for _, _, d in path:
            np_ = d["noun"].replace("{subject}", np_)
        end = path[-1][1]
        end_type = s.view.type_of[end]
        start_type = s.view.type_of[start]
        facts = [d["fact"] for _, _, d in path]
        pick = lambda xs: xs[self.rng.integers(len(xs))]  # noqa: E731
        attrs = [a for a in s.shown(end_type) if s.attr_kind(end_type, a) != URL and s.value(end_type, end, a) is not None]
        if attrs and self.rng.random() < 0.5:
            a = attrs[self.rng.integers(len(attrs))]
            v = s.value(end_type, end, a)
            kind = s.attr_kind(end_type, a)
            answer = cell_text(v, kind)
            aliases = answer_aliases(v, kind, s.unit(end_type, a))
            lab = s.label(end_type, a).lower()
            if kind == DATE:
                when = lab.endswith("ed") or lab in ("born", "founded", "established")
                q = pick(QUESTIONS_WHEN if when else QUESTIONS_DATE).format(label=lab, np=np_)
            else:
                q = pick(QUESTIONS_ATTR).format(label=lab, np=np_)
            facts.append(f"{end}/{a}")
            attr = a
        else:
            if self.name_counts.get(s.view.names[end], 0) != 1:
                return "ambiguous-name"
            answer, kind, attr = s.view.names[end], STRING, None
            aliases = [answer, *s.view.aliases.get(end, [])]
            q = pick(QUESTIONS_ENTITY).format(type=s.singular(end_type), np=np_)
        q = q[:1].upper() + q[1:]
        key_col = s.singular(start_type)
        cols = [key_col, "answer"]
        tail = pick(TAILS).format(cols=", ".join(cols))
        sql = self._sql(start, path, attr)
        return MultiHopTask(start=start, hops=[Hop(u, v, d["noun"], d["fact"], d["kind"]) for u, v, d in path],
                            answer_entity=end, answer_attr=attr, answer=answer, answer_kind=kind,
                            aliases=list(dict.fromkeys(aliases)), question=f"{q} {tail}", columns=cols,
                            gold_rows=[[s.view.names[start], answer]], facts=facts, sql=sql)

    def _sql(self, start: str, path: list, attr: str | None) -> str:
        """The answer as SQL over the world store: one join per hop, from the named start."""
        s = self.s
        st = s.view.type_of[start]
        steps = [Step("lookup" if d["kind"] == "lookup" else "rel", d["via"], s.view.type_of[u], s.view.type_of[v],
                      current=d["current"], reverse=d["kind"] == "reverse") for u, v, d in path]
        joins, cur = walk(steps, "e0.id", "e0", "h", "n", first=1)
        end_type = s.view.type_of[path[-1][1]]
        froms = [f"{_q(st)} e0", *(j.table for j in joins if j.table), f"{_q(end_type)} ev"]
        conds = [f"e0.id = '{start}'", *(c for j in joins for c in j.conds), f"ev.id = {cur}"]
        value = f"ev.{_q(attr)}" if attr else "ev.name"
        return (f"SELECT e0.name AS {_q(s.singular(st))}, {value} AS answer\nFROM " + ", ".join(froms)
                + "\nWHERE " + "\n  AND ".join(conds))
