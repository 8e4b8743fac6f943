"""Table tasks ("find every X that satisfies Y and fill this table"), sampled from a world.

A candidate is drawn around an anchor entity, so it is never empty: its first constraint
is a fact of the anchor (its industry, a range around its founding year, its headquarters,
"founded by someone born in" its founder's birthplace). Constraints combine in one of a
few shapes (A; A and B; A or B; A but not B; three-way forms); each must cut the set, so
none is redundant. Row sets are computed in DuckDB, one cached query per constraint, and
a candidate is kept only if its row count falls in the window. Columns are the key (the
entity's name), own attributes, linked entities' names and linked entities' attributes;
at least one column's value is stated on another entity's page.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

import numpy as np

from ..plumbing import quote_ident as _q
from ..web.text import format_number
from ..world.options import TasksOptions
from .schema import DATE, NUMBER, STRING, Atom, Column, Step, TaskSchema

# Shapes: how 1..3 constraints combine. Letters name the atoms; '!' negates.
SHAPES = {1: ["A"], 2: ["A&B", "A|B", "A&!B"], 3: ["A&B&C", "(A|B)&C", "A&B&!C"]}

LEADS = [
    "Find all the {what}.",
    "List all {what}.",
    "I need a complete list of {what}.",
    "Which are the {what}? Give all of them.",
    "Compile a table of all {what}.",
    "Identify each of the {what}.",
]
TAILS = [
    "Answer with one markdown table with exactly these columns: {cols}. One row per {one}.",
    "Return a single Markdown table whose columns are, in order: {cols}; one row for each {one}.",
    "Present the result as one markdown table with the columns {cols}, one row per {one}.",
    "Put your answer in a single markdown table with the columns {cols}, listing every {one} once.",
]
NOT_WORDS = ["excluding those {x}", "except those {x}", "leaving out those {x}"]
OR_WORDS = ["as well as those {x}", "and also those {x}"]


@dataclass
class TableTask:
    type: str
    shape: str
    atoms: list[Atom]
    columns: list[Column]
    row_ids: list[str]
    gold_rows: list[list[str]]
    sql: str
    question: str
    constraint_texts: list[str]  # each constraint as worded in the question
    constraint_values: list[str]  # every value a paraphrase must keep
    query: str  # a natural search query for discovering the rows
    facts: list[list[list[str]]] = field(default_factory=list)  # per row, per column: facts from the row to the value


# --------------------------------------------------------------------------- values as words


def _sig_round(x: float, up: bool) -> float:
    if x == 0:
        return 0.0
    mag = 10 ** (math.floor(math.log10(abs(x))) - 1)
    return (math.ceil(x / mag) if up else math.floor(x / mag)) * mag


def _num_text(v: float, is_int: bool) -> str:
    if is_int:
        return format_number(str(int(round(v))), "int")
    return format_number(f"{v:.6f}", "float")


def range_text(lo, hi, kind: str, is_int: bool = True) -> tuple[str, list[str]]:
    """'between 1990 and 1999' / 'at least 5,000' / 'in 1990 or later', and the values it names."""
    if kind == DATE:
        a, b = (lo.year if lo else None), (hi.year if hi else None)
        if a is not None and b is not None:
            return (f"in {a}" if a == b else f"between {a} and {b}"), [str(a), str(b)]
        if a is not None:
            return f"in {a} or later", [str(a)]
        return f"in {b} or earlier", [str(b)]
    a = _num_text(lo, is_int) if lo is not None else None
    b = _num_text(hi, is_int) if hi is not None else None
    if a is not None and b is not None:
        return f"between {a} and {b}", [a, b]
    if a is not None:
        return f"at least {a}", [a]
    return f"at most {b}", [b]


def fill(template: str, text: str, nested: bool = False) -> str:
    """Put a value, or a nested plural noun phrase ('cities in Braeria'), into a qualifier."""
    if nested:
        template = template.replace("the {object}", "{object}").replace("the {value}", "{value}")
    return template.replace("{value}", text).replace("{object}", text)


def cell_text(v, kind: str) -> str:
    if v is None:
        return ""
    if kind == DATE:
        return v.isoformat() if isinstance(v, dt.date) else str(v)
    if kind == NUMBER:
        if isinstance(v, float) and not v.is_integer():
            return f"{v:.6f}".rstrip("0").rstrip(".")
        return str(int(v))
    return str(v)


# --------------------------------------------------------------------------- the sampler


class TableSampler:
    def __init__(self, schema: TaskSchema, options: TasksOptions, rng: np.random.Generator):
        self.s = schema
        self.opt = options
        self.rng = rng
        self.con = schema.con
        self._sets: dict[tuple[str, str], np.ndarray] = {}
        self._values: dict[tuple[str, str], np.ndarray] = {}
        self.types = [t for t in self.s.world.types
                      if len(self.s.view.ids[t]) >= options.rows.min and (self.s.constrainable(t) or self.s.steps[t])
                      and any(c.hops for c in self.columns_for(t))]

    # ------------------------------------------------------------------ sets

    def atom_mask(self, t: str, atom: Atom) -> np.ndarray:
        """Which entities of `t` (in id order, as `view.ids[t]`) satisfy the atom: one cached query."""
        sql = self.s.atom_sql(atom, t)
        key = (t, sql)
        if key not in self._sets:
            col = self.con.sql(f"SELECT {sql} AS m FROM {_q(t)} t ORDER BY t.id").fetchnumpy()["m"]
            self._sets[key] = np.asarray(col, dtype=bool)
        return self._sets[key]

    @staticmethod
    def evaluate(shape: str, m: dict[str, np.ndarray]) -> np.ndarray | None:
        """The row mask of a shape, or None if some constraint is redundant (cuts nothing)."""
        a, b, c = m.get("A"), m.get("B"), m.get("C")
        if any(not x.any() or x.all() for x in m.values()):
            return None
        same = np.array_equal
        if shape == "A":
            return a
        if shape == "A&B":
            r = a & b
            return None if same(r, a) or same(r, b) else r
        if shape == "A|B":
            return a | b if (a & ~b).any() and (b & ~a).any() else None
        if shape == "A&!B":
            r = a & ~b
            return None if same(r, a) else r
        if shape == "A&B&C":
            r = a & b & c
            return None if any(same(r, x) for x in (a & b, a & c, b & c)) else r
        if shape == "(A|B)&C":
            ab = a | b
            r = ab & c
            ok = (a & ~b).any() and (b & ~a).any() and not any(same(r, x) for x in (ab, c, a & c, b & c))
            return r if ok else None
        if shape == "A&B&!C":
            ab = a & b
            r = ab & ~c
            return None if same(r, ab) or same(ab, a) or same(ab, b) else r
        raise ValueError(shape)

    def where_sql(self, t: str, shape: str, atoms: dict[str, Atom]) -> str:
        parts = {k: self.s.atom_sql(v, t) for k, v in atoms.items()}
        out = shape
        for k in "ABC":
            if k in parts:
                out = out.replace(k, "{" + k + "}")
        out = out.replace("&", " AND ").replace("|", " OR ").replace("!", "NOT ")
        return out.format(**parts)

    # ------------------------------------------------------------------ atoms

    def _values_of(self, t: str, a: str) -> np.ndarray:
        key = (t, a)
        if key not in self._values:
            col = self.s.frame(t)[a].drop_nulls()
            if col.dtype.is_temporal():
                arr = np.sort(np.array([d.toordinal() for d in col.to_list()], dtype=np.int64))
            else:
                arr = np.sort(col.to_numpy().astype(np.float64))
            self._values[key] = arr
        return self._values[key]

    def _range_around(self, t: str, a: str, v) -> tuple | None:
        vals = self._values_of(t, a)
        if len(vals) < 2:
            return None
        is_date = isinstance(v, dt.date)
        x = v.toordinal() if is_date else float(v)
        q = np.searchsorted(vals, x) / len(vals)
        w = self.rng.uniform(0.1, 0.7)
        q1 = max(0.0, q - self.rng.uniform(0, w))
        q2 = min(1.0, q1 + w)
        lo = float(vals[min(len(vals) - 1, int(q1 * len(vals)))])
        hi = float(vals[min(len(vals) - 1, int(q2 * len(vals)))])
        lo, hi = min(lo, x), max(hi, x)
        open_end = self.rng.random()
        if is_date:
            ylo, yhi = dt.date.fromordinal(int(lo)).year, dt.date.fromordinal(int(hi)).year
            if ylo == yhi:
                yhi += 1
            rng = (dt.date(ylo, 1, 1), dt.date(yhi, 12, 31))
        else:
            is_int = self.s.view.dtype(t, a) == "int"
            rlo, rhi = _sig_round(lo, up=False), _sig_round(hi, up=True)
            if is_int:
                rlo, rhi = int(rlo), int(rhi)
            if rlo == rhi:
                return None
            rng = (rlo, rhi)
        if open_end < 0.2:
            rng = (rng[0], None)
        elif open_end < 0.4:
            rng = (None, rng[1])
        return rng

    def _attr_atom(self, t: str, eid: str, path: tuple[Step, ...]) -> Atom | None:
        choices = [(a, test) for a, test in self.s.constrainable(t) if self.s.value(t, eid, a) is not None]
        if not choices:
            return None
        a, test = choices[self.rng.integers(len(choices))]
        v = self.s.value(t, eid, a)
        if test == "eq":
            return Atom(path, "eq", a, v)
        r = self._range_around(t, a, v)
        return Atom(path, "range", a, r) if r else None

    def _hops_from(self, t: str, eid: str) -> list[tuple[Step, list[str]]]:
        out = []
        for st in self.s.steps[t]:
            targets = self.s.out_edges(st).get(eid)
            if targets:
                out.append((st, targets))
        return out

    def atom_for(self, t: str, eid: str) -> Atom | None:
        """A constraint the entity satisfies: an attribute test, a link, or a two-hop condition."""
        r = self.rng.random()
        if r < 0.45:
            return self._attr_atom(t, eid, ())
        hops = self._hops_from(t, eid)
        if not hops:
            return self._attr_atom(t, eid, ())
        st, targets = hops[self.rng.integers(len(hops))]
        u = targets[self.rng.integers(len(targets))]
        if r < 0.75:
            return Atom((st,), "entity", None, u)
        if self.rng.random() < 0.5:
            inner = self._attr_atom(st.target, u, (st,))
            if inner is not None:
                return inner
        nxt = [(s2, tg) for s2, tg in self._hops_from(st.target, u) if s2.target != t or s2.name != st.name]
        if not nxt:
            return Atom((st,), "entity", None, u)
        s2, tg = nxt[self.rng.integers(len(nxt))]
        return Atom((st, s2), "entity", None, tg[self.rng.integers(len(tg))])

    # ------------------------------------------------------------------ words

    def atom_text(self, t: str, atom: Atom) -> tuple[str, list[str]]:
        """The qualifier for a constraint ('headquartered in a city in Braeria') and the values it names."""
        names = self.s.view.names
        if atom.test == "entity":
            inner, vals = names[atom.value], [names[atom.value]]
        elif atom.test == "eq":
            inner, vals = str(atom.value), [str(atom.value)]
        else:
            tt = atom.end_type or t
            kind = self.s.attr_kind(tt, atom.attr)
            inner, vals = range_text(*atom.value, kind, self.s.view.dtype(tt, atom.attr) == "int")
        if atom.test in ("eq", "range"):
            tt = atom.end_type or t
            asks = self.s.asks(tt, atom.attr)
            inner = fill(asks[self.rng.integers(len(asks))], inner)
            path = atom.path
        else:
            path = atom.path[:-1]
            last = atom.path[-1]
            asks = self.s.asks(last.source, last.name)
            inner = fill(asks[self.rng.integers(len(asks))], inner)
        for st in reversed(path):
            asks = self.s.asks(st.source, st.name)
            inner = fill(asks[self.rng.integers(len(asks))], f"{self.s.plural(st.target)} {inner}", nested=True)
        return inner, vals

    def question(self, t: str, shape: str, texts: dict[str, str], columns: list[Column]) -> str:
        pl_ = self.s.plural(t)
        a, b, c = texts.get("A"), texts.get("B"), texts.get("C")
        pick = lambda xs: xs[self.rng.integers(len(xs))]  # noqa: E731
        if shape == "A":
            what = f"{pl_} {a}"
        elif shape == "A&B":
            what = f"{pl_} {a} and {b}"
        elif shape == "A|B":
            what = f"{pl_} {a}, " + pick(OR_WORDS).format(x=b)
        elif shape == "A&!B":
            what = f"{pl_} {a}, " + pick(NOT_WORDS).format(x=b)
        elif shape == "A&B&C":
            what = f"{pl_} {a}, {b} and {c}"
        elif shape == "(A|B)&C":
            what = f"{pl_} {c}, but only those {a} or those {b}"
        else:  # A&B&!C
            what = f"{pl_} {a} and {b}, " + pick(NOT_WORDS).format(x=c)
        cols = ", ".join(col.name for col in columns)
        lead = pick(LEADS).format(what=what)
        return f"{lead} {pick(TAILS).format(cols=cols, one=self.s.singular(t))}"

    # ------------------------------------------------------------------ columns

    def columns_for(self, t: str) -> list[Column]:
        s = self.s
        out: list[Column] = []

        def name_of(*parts: str) -> str:
            return " ".join(p.lower() for p in parts)

        def with_unit(tt: str, a: str, name: str) -> str:
            u = s.unit(tt, a)
            if u and not (u.isalpha() and u.islower() and len(u) > 3) and u.lower() not in name:
                return f"{name} ({u})"
            return name

        for a in s.shown(t):
            out.append(Column(with_unit(t, a, name_of(s.label(t, a))), (), a, s.attr_kind(t, a), s.label(t, a)))
        for st in s.steps[t]:
            if not st.to_one:
                continue
            lab = s.label(t, st.name)
            out.append(Column(name_of(lab), (st,), None, STRING, lab))
            u = st.target
            for a in s.shown(u):
                out.append(Column(with_unit(u, a, name_of(lab, s.label(u, a))), (st,), a, s.attr_kind(u, a), lab))
            for st2 in s.steps[u]:
                if st2.to_one and st2.target != t:
                    out.append(Column(name_of(lab, s.label(u, st2.name)), (st, st2), None, STRING, lab))
        seen: set[str] = {t.replace("_", " ")}
        uniq = []
        for c in out:
            if c.name not in seen:
                seen.add(c.name)
                uniq.append(c)
        return uniq
