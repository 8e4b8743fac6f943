"""Table tasks, sampled from a world's arrays. Four shapes:

- `filter`: every X that satisfies one to three constraints (A; A and B; A or B; A but not
  B; three-way forms), each drawn around an anchor entity so the set is never empty, each
  cutting the set (none redundant);
- `ranked`: the N largest (or smallest) X in a scope by a numeric attribute, with a rank
  column; no ties within the first N + 1, so the ranks are unique;
- `timeline`: every tenure of a history relation (every chief executive of a company, every
  holder of a league title) for one anchor or a filtered set of anchors, optionally inside a
  period, with start and end years; keyed by year where tenures are exclusive, else by the
  anchor and the holder (a composite key);
- `events`: every dated link in a period (acquisitions, awards, doctorates), with its date,
  keyed by both ends.

Rows are numpy masks and index arrays (see `arrays.py`); columns are gathers along to-one
hops, lists of names, counts and latest years over to-many hops. Bounds are round numbers
(between 1990 and 1999, at least 50,000).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..plumbing import stable_hash
from ..web import format_number
from ..world import LinkNumber, Step, TasksOptions, WorldArrays
from .banks import question_bank
from .conditions import combo_alternatives, combo_musts, parse_combo
from .schema import DATE, NUMBER, Atom, TaskSchema

MAX_WALK = 3  # links an agent walks back from a named entity's page to list the entities that meet a condition

# How 1..3 constraints combine. Letters name the atoms; '!' negates.
COMBOS = {1: ["A"], 2: ["A&B", "A|B", "A&!B"], 3: ["A&B&C", "(A|B)&C", "A&B&!C"]}
BUCKETS = ((1, 9, "<10"), (10, 19, "10-19"), (20, 49, "20-49"), (50, 99, "50-99"), (100, 10**9, ">=100"))


RULE_SHARE = 1.0  # of the tasks a domain rule would change, the share that state one (issue 58; a knob: all do)
TOP_SHARE = 0.3  # a ranked table's rows are at most this share of the entities they are ranked among
# The sizes of a "top N" a person asks for ("the 10 largest", "前20个"; never "the 39 largest", issue 58).
# A filter keeps at most this share of any list its question points to (a part's, a named
# entity's): its conditions decide membership, not the list alone (issue 58's lazy baselines).
WEAK_SHARE = 0.6
ROUND_TOP = (3, 5, 10, 15, 20, 25, 30, 50, 100, 200, 500, 1000)


def bucket_of(n: int) -> str:
    return next(name for lo, hi, name in BUCKETS if lo <= n <= hi)


def bucket_range(name: str, rows_min: int, rows_max: int) -> tuple[int, int]:
    lo, hi = next((lo, hi) for lo, hi, b in BUCKETS if b == name)
    return max(lo, rows_min), min(hi, rows_max)


# --------------------------------------------------------------------------- round values


def _nice(x: float, up: bool, integer: bool) -> float:
    """The nearest round number (1, 2, 2.5, 5 times a power of ten) at or above / below x."""
    if x <= 0:
        return 0.0
    mag = 10 ** math.floor(math.log10(x))
    steps = (1, 2, 2.5, 5, 10) if not integer or mag >= 10 else (1, 2, 5, 10)
    cands = [s * mag for s in steps] + [s * mag / 10 for s in steps]
    cands = [c for c in cands if not integer or float(c).is_integer()]
    if up:
        return min(c for c in cands if c >= x - 1e-9)
    below = [c for c in cands if c <= x + 1e-9]
    return max(below) if below else 0.0


def _num_text(v: float, is_int: bool) -> str:
    if is_int or float(v).is_integer():
        return format_number(str(int(round(v))), "int")
    return format_number(f"{v:.6f}", "float")


def range_text(lo, hi, kind: str, is_int: bool = True, language: str = "en") -> tuple[str, list[str]]:
    """'between 1990 and 1999' / 'in the 1990s' / 'at least 5,000' / 'before 1950', and the values it names,
    as the language's question bank words a range (`ranges`: '1990年至1999年之间', '20世纪90年代' ...)."""
    forms = question_bank(language)["ranges"]
    if kind == DATE:
        a, b = (lo.year if lo else None), (hi.year if hi else None)
        if a is not None and b is not None:
            form = "year" if a == b else "decade" if a % 10 == 0 and b == a + 9 else "years"
        elif a is not None:
            form = "from_year"
        else:
            form, b = "before_year", b + 1
    else:
        a = _num_text(lo, is_int) if lo is not None else None
        b = _num_text(hi, is_int) if hi is not None else None
        form = "between" if a is not None and b is not None else "at_least" if a is not None else "at_most"
    f = forms[form]
    return f["say"].format(a=a, b=b), [x.format(a=a, b=b) for x in f["names"]]


def fill(template: str, text: str, nested: bool = False) -> str:
    """Put a value, or a nested plural noun phrase ('cities in Braeria'), into a qualifier."""
    if nested:  # "in the {object}" -> "in cities in Braeria"; "one of the {object}" keeps its article
        template = re.sub(r"(?<!of )the \{(object|value)\}", r"{\1}", template)
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


def _in(vf: np.ndarray, window) -> np.ndarray:
    keep = ~np.isnat(vf)
    if window and window[0]:
        keep &= vf >= np.datetime64(window[0])
    if window and window[1]:
        keep &= vf <= np.datetime64(window[1])
    return keep


# --------------------------------------------------------------------------- candidates


@dataclass
class Rows:
    """The rows of a candidate: entities of `t` (`codes`), or links of `step` (oriented from
    the anchor type `t` to the other end) given by their index in `arrays.links(step)`."""

    t: str
    codes: np.ndarray
    step: Step | None = None
    link: np.ndarray | None = None  # indexes into links(step)
    other: np.ndarray | None = None  # codes of the other end

    @property
    def n(self) -> int:
        return len(self.codes)


@dataclass
class Candidate:
    shape: str
    t: str
    split: str
    rows: Rows
    atoms: dict[str, Atom] = field(default_factory=dict)  # letters (and S for the part scope) -> atom
    combo: str = ""  # how the lettered atoms combine ("A&!B")
    rank_attr: str | None = None
    rank_desc: bool = True
    scope_count: int = 0  # ranked: candidates ranked (the scope's size)
    scope_codes: np.ndarray | None = None
    window: tuple[dt.date | None, dt.date | None] | None = None  # timeline/events: period of the links
    note: tuple[str, str] | None = None  # timeline: (link attribute, value) the links have ("jobs in sales")
    anchor: str | None = None  # timeline with one anchor: its id
    tenure: str | None = None  # timeline: a rule keeping only the tenures still under way ("current") or ended ("ended")


class TableSampler:
    """Draws candidate row sets of each shape; `build.py` turns them into tasks."""

    def __init__(self, schema: TaskSchema, options: TasksOptions, rng: np.random.Generator, allowed: dict[str, dict[str, np.ndarray]],
                 home: dict[str, tuple[Step, ...] | None], part_of: dict[str, np.ndarray], part_ids: np.ndarray | None):
        """`allowed[split][t]`: entities of t a task of that split may have as rows; `home[t]`: the
        to-one path from t to its part (for scope constraints); `part_of[t]`: each entity's part."""
        self.s = schema
        self.a: WorldArrays = schema.a
        self.opt = options
        self.rng = rng
        self.allowed = allowed
        self.home = home
        self.part_of = part_of
        self.part_ids = part_ids
        self._masks: dict[tuple[str, Atom], np.ndarray] = {}
        self._values: dict[tuple[str, str], np.ndarray] = {}
        self.history = [(r, rs) for r, rs in schema.relations.items() if rs.history]
        self.dated = [(r, rs) for r, rs in schema.relations.items() if rs.date is not None]
        self.width: float | None = None  # the share of a type a range should cover (aiming at a size)
        self.as_of_year = 9999  # the world's "today": no period reaches past it
        self.as_of: dt.date | None = None  # the world's "today" (a domain rule's date)
        self._per: dict[Step, float] = {}

    def pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    # ------------------------------------------------------------------ masks

    def atom_mask(self, t: str, atom: Atom) -> np.ndarray:
        """Which entities of t satisfy the atom (cached)."""
        key = (t, atom)
        if key not in self._masks:
            a = self.a
            end = atom.end_type or t
            if atom.test == "entity":
                m = np.zeros(a.n(end), dtype=bool)
                c = a.code(atom.value)
                if c >= 0:
                    m[c] = True
            else:
                col = a.frame(end)[atom.attr]
                if atom.test == "eq":
                    m = (col == atom.value).fill_null(False).to_numpy()
                else:
                    lo, hi = atom.value
                    m = col.is_not_null()
                    if lo is not None:
                        m = m & (col >= lo)
                    if hi is not None:
                        m = m & (col <= hi)
                    m = m.fill_null(False).to_numpy()
            m = np.asarray(m, dtype=bool)
            for st in reversed(atom.path):
                m = a.back(st, m)
            self._masks[key] = m
        return self._masks[key]

    @staticmethod
    def evaluate(combo: str, m: dict[str, np.ndarray]) -> np.ndarray | None:
        """The row mask of a combination, or None if some constraint is redundant (cuts nothing)."""
        a, b, c = m.get("A"), m.get("B"), m.get("C")
        if any(not x.any() or x.all() for k, x in m.items() if k in "ABC"):
            return None
        same = np.array_equal
        if combo == "A":
            return a
        if combo == "A&B":
            r = a & b
            return None if same(r, a) or same(r, b) else r
        if combo == "A|B":
            return a | b if (a & ~b).any() and (b & ~a).any() else None
        if combo == "A&!B":
            r = a & ~b
            return None if same(r, a) else r
        if combo == "A&B&C":
            r = a & b & c
            return None if any(same(r, x) for x in (a & b, a & c, b & c)) else r
        if combo == "(A|B)&C":
            ab = a | b
            r = ab & c
            ok = (a & ~b).any() and (b & ~a).any() and not any(same(r, x) for x in (ab, c, a & c, b & c))
            return r if ok else None
        if combo == "A&B&!C":
            ab = a & b
            r = ab & ~c
            return None if same(r, ab) or same(ab, a) or same(ab, b) else r
        raise ValueError(combo)

    def where_sql(self, t: str, combo: str, atoms: dict[str, Atom], base: str = "t") -> str:
        parts = {k: self.s.atom_sql(v, t, base) for k, v in atoms.items() if k in "ABC"}
        out = combo
        for k in "ABC":
            if k in parts:
                out = out.replace(k, "{" + k + "}")
        out = out.replace("&", " AND ").replace("|", " OR ").replace("!", "NOT ")
        out = out.format(**parts) if parts else ""
        scope = [self.s.atom_sql(v, t, base) for k, v in atoms.items() if k == "S"]
        rule = [f"NOT ({self.s.atom_sql(v, t, base)})" for k, v in atoms.items() if k == "R"]
        return " AND ".join(([f"({out})"] if out else []) + scope + rule)

    def candidate_lists(self, t: str, combo: str, atoms: dict[str, Atom]) -> list[np.ndarray]:
        """The lists an agent may take its candidates from (masks over t): every condition every
        row meets that names an entity ('headquartered in Zenhaven') or scopes the type to a part
        ('in Braeria'), and both sides of an 'or' of two such conditions. None: every entity of t
        is a candidate."""
        expr = parse_combo(combo)
        letters = combo_musts(expr) | ({"S"} if "S" in atoms else set())
        listed = lambda a: a.scope or (a.test == "entity" and self.walkable(a))  # noqa: E731
        out = [self.atom_mask(t, atoms[k]) for k in sorted(letters) if k in atoms and listed(atoms[k])]
        alts = combo_alternatives(expr)
        if alts and all(k in atoms and listed(atoms[k]) for k in alts):
            out.append(np.logical_or.reduce([self.atom_mask(t, atoms[k]) for k in alts]))
        return out

    def walkable(self, atom: Atom) -> bool:
        """Whether the entities meeting an entity condition can be listed by walking back from
        the named entity's page: at most MAX_WALK links (a lookup counts the links it follows),
        each with a list of the linking entities on the page it reaches."""
        from .question import lookup_links

        hops: list[Step] = []
        for st in atom.path:
            hops += lookup_links(self.s, st.source, st.name) if st.kind == "lookup" else [st]
        if len(hops) > MAX_WALK:
            return False
        meta = self.s.page_meta
        return all((meta[(self.s.relations[st.name].source, st.name)].label if st.reverse
                    else meta[(self.s.relations[st.name].source, st.name)].inverse_label) for st in hops)

    def candidate_count(self, cand: Candidate) -> int:
        """How many entities an agent has to check for this table: the smallest list the question
        points to (`candidate_lists`; otherwise every entity of the type). (Timelines about one
        named entity: that one.)"""
        if cand.anchor is not None:
            return 1
        sizes = [int(m.sum()) for m in self.candidate_lists(cand.t, cand.combo, cand.atoms)]
        if cand.shape == "ranked" and cand.scope_count:
            sizes.append(cand.scope_count)
        return min(sizes) if sizes else self.a.n(cand.t)

    # ------------------------------------------------------------------ constraints around an anchor

    def _values_of(self, t: str, a: str) -> np.ndarray:
        key = (t, a)
        if key not in self._values:
            col = self.a.frame(t)[a].drop_nulls()
            if col.dtype.is_temporal():
                arr = np.sort(col.cast(int).to_numpy().astype(np.int64) + dt.date(1970, 1, 1).toordinal())
            else:
                arr = np.sort(col.to_numpy().astype(np.float64))
            self._values[key] = arr
        return self._values[key]

    def range_around(self, t: str, a: str, v) -> tuple | None:
        """A round range holding v: a decade or a few, a span of years, or round numbers."""
        vals = self._values_of(t, a)
        if len(vals) < 2:
            return None
        is_date = isinstance(v, dt.date)
        x = v.toordinal() if is_date else float(v)
        q = np.searchsorted(vals, x) / len(vals)
        w = self.rng.uniform(0.08, 0.7) if self.width is None else float(np.clip(self.width * self.rng.uniform(0.7, 1.6), 0.01, 0.95))
        q1 = max(0.0, q - self.rng.uniform(0, w))
        q2 = min(1.0, q1 + w)
        lo = float(vals[min(len(vals) - 1, int(q1 * len(vals)))])
        hi = float(vals[min(len(vals) - 1, int(q2 * len(vals)))])
        lo, hi = min(lo, x), max(hi, x)
        open_end = self.rng.random()
        if is_date:
            ylo, yhi = dt.date.fromordinal(int(lo)).year, dt.date.fromordinal(int(hi)).year
            step = 10 if yhi - ylo >= 8 else 5 if yhi > ylo else 1  # decades, five years, or one year
            ylo = ylo - ylo % step
            yhi = yhi - yhi % step + step - 1
            rng = (dt.date(ylo, 1, 1), dt.date(yhi, 12, 31))
        else:
            is_int = self.s.dtype(t, a) == "int"
            rlo, rhi = _nice(lo, up=False, integer=is_int), _nice(hi, up=True, integer=is_int)
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

    def attr_atom(self, t: str, code: int, path: tuple[Step, ...]) -> Atom | None:
        frame = self.a.frame(t)
        choices = [(a, test) for a, test in self.s.constrainable(t) if frame[a][code] is not None]
        if not choices:
            return None
        a, test = self.pick(choices)
        v = frame[a][code]
        if test == "eq":
            return Atom(path, "eq", a, v)
        r = self.range_around(t, a, v)
        return Atom(path, "range", a, r) if r else None

    def _hops_from(self, t: str, code: int) -> list[tuple[Step, np.ndarray]]:
        out = []
        for st in self.s.steps[t]:
            lk = self.a.links(st)
            sl = lk.of(code)
            if sl.stop > sl.start:
                out.append((st, lk.dst[sl]))
        return out

    def atom_for(self, t: str, code: int) -> Atom | None:
        """A constraint the entity satisfies: an attribute test, a link, or a two-hop condition."""
        r = self.rng.random()
        if r < 0.45:
            return self.attr_atom(t, code, ())
        hops = self._hops_from(t, code)
        if not hops:
            return self.attr_atom(t, code, ())
        st, targets = self.pick(hops)
        u = int(self.pick(targets))
        uid = str(self.a.ids[st.target][u])
        if r < 0.75:
            return Atom((st,), "entity", None, uid)
        if self.rng.random() < 0.5:
            inner = self.attr_atom(st.target, u, (st,))
            if inner is not None:
                return inner
        nxt = [(s2, tg) for s2, tg in self._hops_from(st.target, u) if s2.target != t or s2.name != st.name]
        if not nxt:
            return Atom((st,), "entity", None, uid)
        s2, tg = self.pick(nxt)
        return Atom((st, s2), "entity", None, str(self.a.ids[s2.target][int(self.pick(tg))]))

    # ------------------------------------------------------------------ splits

    def scope_atom(self, t: str, code: int) -> Atom | None:
        """'in Braeria': the anchor's part, along the type's home path."""
        path = self.home.get(t)
        if not path or self.part_ids is None:
            return None
        p = int(self.part_of[t][code])
        if p < 0:
            return None
        return Atom(path, "entity", None, str(self.part_ids[p]), scope=True)

    def fit_split(self, t: str, split: str, mask: np.ndarray, anchor: int, atoms: dict[str, Atom],
                  combo: str | None = None) -> np.ndarray | None:
        """The rows a task of `split` may keep: all of `mask` when it lies in the split's parts,
        else `mask` narrowed to the anchor's part by a scope constraint (added to `atoms`). A
        training task's candidates too (`combo` given: every list the question points to): an
        agent opens the page of every candidate it checks, and a held-out part's pages are
        off limits to training."""
        ok = self.allowed[split][t]

        def inside(m: np.ndarray, got: dict[str, Atom]) -> bool:
            if (m & ~ok).any():
                return False
            if split != "train" or combo is None:
                return True
            lists = self.candidate_lists(t, combo, got)
            return bool(lists) and all(not (x & ~ok).any() for x in lists) if (~ok).any() else True

        if inside(mask, atoms):
            return mask
        sc = self.scope_atom(t, anchor)
        if sc is None or not ok[anchor]:
            return None
        m = mask & self.atom_mask(t, sc)
        if not m.any() or not inside(m, {**atoms, "S": sc}):
            return None
        atoms["S"] = sc
        return m

    def anchor_in(self, t: str, split: str) -> int | None:
        ok = np.flatnonzero(self.allowed[split][t])
        return int(self.pick(ok)) if len(ok) else None

    # ------------------------------------------------------------------ shapes

    def filter(self, t: str, split: str, n_constraints: int, want: int | None = None) -> Candidate | str:
        """Every X with conditions. `want`: a row count to aim at; ranges are then drawn about as
        wide as that share of the type, with fewer constraints for larger sets."""
        anchor = self.anchor_in(t, split)
        if anchor is None:
            return "empty-part"
        share = None
        if want:
            share = min(1.0, want / max(1, int(self.allowed[split][t].sum())))
            if share > 0.3:
                n_constraints = min(n_constraints, 1)
            elif share > 0.08:
                n_constraints = min(n_constraints, 2)
            elif share < 0.003:  # a few rows out of thousands: narrow it down on three sides
                n_constraints = max(n_constraints, min(3, max(COMBOS)))
            elif share < 0.02:
                n_constraints = max(n_constraints, min(2, max(COMBOS)))
        combo = self.pick(COMBOS[n_constraints])
        k = sum(x in combo for x in "ABC")
        atoms: dict[str, Atom] = {}
        n = self.a.n(t)
        for letter in (x for x in "ABC" if x in combo):
            other = f"!{letter}" in combo or (letter == "B" and "|" in combo)
            e = int(self.rng.integers(n)) if other else anchor
            self.width = None if share is None else (share ** (1 / k) if not other else 0.3)
            try:
                atom = self.atom_for(t, e)
            finally:
                self.width = None
            if atom is None:
                return "no-constraint"
            atoms[letter] = atom
        tested = [(a.path, a.attr) for a in atoms.values() if a.test != "entity"]
        if len(set(tested)) != len(tested):
            return "redundant-constraint"
        mask = self.evaluate(combo, {k: self.atom_mask(t, a) for k, a in atoms.items()})
        if mask is None:
            return "redundant-constraint"
        mask = self.fit_split(t, split, mask, anchor, atoms, combo)
        if mask is None:
            return "leaves-part"
        rule = self.rule_for(t, mask, atoms)
        if rule is not None:
            atoms["R"], mask = rule
        if any(mask.sum() > WEAK_SHARE * m.sum() for m in self.candidate_lists(t, combo, atoms)):
            # The conditions keep nearly all of a list the question points to: drawn as wide as a
            # share of the whole type, then narrowed to one part ("cities in Istisia with at most
            # 200,000 people": 28 of 32), or none beside the list ("every city in Tisvesaia").
            # A person would not add them, and that one list answers it (issue 58).
            return "weak-condition"
        codes = np.flatnonzero(mask)
        return Candidate("filter", t, split, Rows(t, codes), atoms, combo)

    def rule_for(self, t: str, mask: np.ndarray, atoms: dict[str, Atom]) -> tuple[Atom, np.ndarray] | None:
        """A domain rule that decides membership beside the conditions, as a person asking would
        state it (issue 58): only those still alive or in existence on the task's date count (a
        person who has died, a band that split, a company dissolved is out). The rule's atom
        (`R`) holds of the rows it excludes: the entity's lifecycle has ended by the task's date.
        Stated only where it changes the gold (it excludes a row and keeps one), on RULE_SHARE of
        those tasks, chosen by the rows (the draws that follow are those they were without it)."""
        lc = getattr(self.s.types[t], "lifecycle", None)
        end = getattr(lc, "end", None)
        if end is None or self.as_of is None or (t, end) not in self.s.page_meta or self.s.types[t].attributes[end].hidden:
            return None
        if any(a.attr == end for a in atoms.values()):  # a condition already about the end ("died before 1990")
            return None
        if stable_hash("rule", t, np.flatnonzero(mask).tobytes()) % 1000 >= RULE_SHARE * 1000:
            return None
        atom = Atom((), "range", end, (None, self.as_of))
        ended = self.atom_mask(t, atom)
        keep = mask & ~ended
        if not (mask & ended).any() or not keep.any():
            return None
        return atom, keep

    def ranked(self, t: str, split: str, want: int, least: int = 3, aim: int = 3) -> Candidate | str:
        """The top N of a type's entities (in a scope) by a number: N at least `least` (the smallest
        table a task may have), at least `aim` (the smallest of the size bucket drawn for) where it can."""
        attrs = self.s.rankable(t)
        if not attrs:
            return "no-rank-attribute"
        anchor = self.anchor_in(t, split)
        if anchor is None:
            return "empty-part"
        attr = self.pick(attrs)
        atoms: dict[str, Atom] = {}
        mask = np.ones(self.a.n(t), dtype=bool)
        if self.rng.random() < 0.7:  # a scope: the anchor's link or category ("in Braeria", "in software")
            atom = None
            for _ in range(4):
                atom = self.atom_for(t, anchor)
                if atom is not None and atom.test != "range" and not (not atom.path and atom.attr == attr):
                    break
                atom = None
            if atom is not None:
                atoms["A"] = atom
                mask = self.atom_mask(t, atom)
        fitted = self.fit_split(t, split, mask, anchor, atoms, "A" if "A" in atoms else "")
        if fitted is None:
            return "leaves-part"
        vals = self.a.values(t, attr)
        scope = fitted & ~np.isnan(vals)
        if scope.sum() < 4:
            return "rows-outside-window"
        desc = bool(self.rng.random() < 0.75)
        top = self._top(scope, vals, desc, want, least, aim)
        if isinstance(top, str):
            return top
        rule = self.rule_for(t, scope, atoms)
        if rule is not None:  # stated where it changes the top N: one that had ended was in it
            ruled = self._top(rule[1], vals, desc, want, least, aim)
            if not isinstance(ruled, str) and not rule[1][top[0][:top[1]]].all():
                atoms["R"], scope, top = rule[0], rule[1], ruled
        ranked, n = top
        cand = np.flatnonzero(scope)
        return Candidate("ranked", t, split, Rows(t, ranked[:n]), atoms, "A" if "A" in atoms else "", rank_attr=attr,
                         rank_desc=desc, scope_count=len(cand), scope_codes=cand)

    @staticmethod
    def _top(scope: np.ndarray, vals: np.ndarray, desc: bool, want: int, least: int = 3,
             aim: int = 3) -> tuple[np.ndarray, int] | str:
        """The entities of `scope` ranked by `vals` and the top N asked for. A "top N" is a small part
        of what it is drawn from (not "the 45 of 52 with the lowest revenue"), a size a person asks for
        (a round size from half of what is within reach up to it), and set apart from the rest: no tie
        across the cut (ties inside share a rank)."""
        cand = np.flatnonzero(scope)
        order = np.lexsort((cand, -vals[cand] if desc else vals[cand]))
        ranked = cand[order]
        v = vals[ranked]
        reach = min(want, int(len(cand) * TOP_SHARE))
        sizes = [k for k in reversed(ROUND_TOP) if max(3, least, reach / 2) <= k <= reach]
        if not sizes:
            return "top-n-too-large"
        cuts = [k for k in sizes if k < len(v) and v[k - 1] != v[k]]
        if not cuts:
            return "ties"
        cuts = [k for k in cuts if k >= aim] or cuts  # the size asked for where the scope allows it
        # of the sizes a person might pick here, the one whose cut is closest (the last row in and the
        # first out nearest in value): deciding who makes the list takes exact figures, as it does
        # where a real ranking is asked for ('the 20 largest', and the 20th and 21st differ by 0.4 %)
        return ranked, min(cuts, key=lambda k: (abs(v[k - 1] - v[k]) / max(abs(v[k - 1]), 1e-9), -k))

    def _period(self, when: np.datetime64) -> tuple[dt.date | None, dt.date | None]:
        """Round years around a date: a decade, a span of five-year steps, or an open end."""
        y = int(str(when)[:4])
        r = self.rng.random()
        if r < 0.35:
            lo, hi = y - y % 10, y - y % 10 + 9
        elif r < 0.6:
            lo = y - y % 5 - 5 * int(self.rng.integers(0, 4))
            hi = y - y % 5 + 5 * int(self.rng.integers(1, 5)) - 1
        elif r < 0.8:
            lo, hi = y - y % 10 - 10 * int(self.rng.integers(0, 3)), None
        else:
            lo, hi = None, y - y % 10 + 10 * int(self.rng.integers(1, 3)) - 1
        if hi is not None and hi >= self.as_of_year:  # "before 2030" says nothing
            hi = None
        return (dt.date(lo, 1, 1) if lo is not None else None, dt.date(hi, 12, 31) if hi is not None else None)

    def links_in(self, step: Step, anchors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(link indexes, anchor code per link) of every link of the anchors, in anchor order."""
        lk = self.a.links(step)
        starts, ends = lk.starts[anchors], lk.starts[anchors + 1]
        lens = ends - starts
        total = int(lens.sum())
        idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(total)
        return idx.astype(np.int64), np.repeat(anchors, lens)

    def timeline(self, split: str, t: str | None = None, want: int | None = None) -> Candidate | str:
        """Tenures of a history relation, from the side of `t` (or either side). `want`: a row
        count to aim at (one anchor for short tables; else a constraint about as wide as needed)."""
        sides = [(r, rs, side) for r, rs in self.history for side in ("source", "target")
                 if t is None or getattr(rs, side) == t]
        if not sides:
            return "no-history"
        r, rs, side = self.pick(sides)
        anchor_t = getattr(rs, side)
        other_t = rs.target if side == "source" else rs.source
        step = Step("rel", r, anchor_t, other_t, to_one=False, reverse=side == "target")
        anchor = self.anchor_in(anchor_t, split)
        if anchor is None:
            return "empty-part"
        lk = self.a.links(step)
        if lk.starts[anchor + 1] == lk.starts[anchor]:
            return "no-links"
        atoms: dict[str, Atom] = {}
        if step not in self._per:
            self._per[step] = max(1.0, len(lk.src) / max(1, int((np.diff(lk.starts) > 0).sum())))
        per = self._per[step]  # tenures per anchor
        single = self.rng.random() < (0.35 if want is None else 0.8 if want < 2 * per else 0.0)
        if single:
            anchors = np.array([anchor])
        else:
            if want is not None:
                self.width = min(1.0, want / per / max(1, int(self.allowed[split][anchor_t].sum())))
            try:
                atom = self.atom_for(anchor_t, anchor)
            finally:
                self.width = None
            if atom is None:
                return "no-constraint"
            atoms["A"] = atom
            m = self.fit_split(anchor_t, split, self.atom_mask(anchor_t, atom), anchor, atoms, "A")
            if m is None:
                return "leaves-part"
            anchors = np.flatnonzero(m)
        idx, owners = self.links_in(step, anchors)
        window = None
        if self.rng.random() < 0.4:  # tenures that began in a period
            pick = int(self.rng.integers(len(idx)))
            window = self._period(lk.valid_from[idx[pick]])
            keep = _in(lk.valid_from[idx], window)
            if keep.all() or window == (None, None):
                window = None
            else:
                idx, owners = idx[keep], owners[keep]
        note = None
        kinds = sorted(a for a, attr in self.s.relations[r].attributes.items() if not isinstance(attr, LinkNumber))
        if kinds and len(idx) and self.rng.random() < 0.35:  # links of one kind: "jobs in sales" (not "shirt number 9")
            a = kinds[int(self.rng.integers(len(kinds)))]
            vals = lk.notes[a][idx]
            v = vals[int(self.rng.integers(len(idx)))]
            keep = vals == v
            if v is not None and not keep.all():
                note = (a, str(v))
                idx, owners = idx[keep], owners[keep]
        tenure = self.tenure_rule(lk, idx, (r, side, anchor))
        if tenure is not None:
            tenure, keep = tenure
            idx, owners = idx[keep], owners[keep]
        other = lk.dst[idx]  # pages of the other end are checked page by page (build.py)
        return Candidate("timeline", anchor_t, split, Rows(anchor_t, owners, step, idx, other), atoms, "A" if atoms.get("A") else "",
                         window=window, note=note, anchor=str(self.a.ids[anchor_t][anchor]) if single else None, tenure=tenure)

    def tenure_rule(self, lk, idx: np.ndarray, key: tuple) -> tuple[str, np.ndarray] | None:
        """A domain rule on a timeline's tenures (issue 58): only those still under way on the
        task's date count ("current"), or only those that have ended ("ended"). Stated only where
        it changes the gold and leaves two rows, on RULE_SHARE of those tasks, chosen by the links
        (the draws that follow are those they were without it)."""
        if self.as_of is None or len(idx) < 3:
            return None
        h = stable_hash("tenure", *key, idx.tobytes())
        if h % 1000 >= RULE_SHARE * 1000:
            return None
        vt = lk.valid_to[idx]
        ended = ~np.isnat(vt) & (vt <= np.datetime64(self.as_of, "D"))
        kinds = ("current", "ended") if (h // 1000) % 2 == 0 else ("ended", "current")
        for kind in kinds:  # the one drawn, else the other where only it leaves two rows
            keep = ~ended if kind == "current" else ended
            if not keep.all() and keep.sum() >= 2:
                return kind, keep
        return None

    def events(self, split: str, t: str | None = None, want: int | None = None) -> Candidate | str:
        """Dated links in a period (acquisitions, awards received), optionally scoped. `want`:
        a row count to aim at (the period then spans about that many events)."""
        opts = [(r, rs) for r, rs in self.dated if t is None or t in (rs.source, rs.target)]
        if not opts:
            return "no-events"
        r, rs = self.pick(opts)
        step = Step("rel", r, rs.source, rs.target, to_one=False)
        lk = self.a.links(step)
        if not len(lk.src):
            return "no-links"
        vf = lk.valid_from
        ok = self.allowed[split][rs.source][lk.src]  # the other end's pages are checked page by page (build.py)
        pool = np.flatnonzero(ok & ~np.isnat(vf))
        if not len(pool):
            return "empty-part"
        pick = int(self.pick(pool))
        scope = ~np.isnat(vf)
        atoms: dict[str, Atom] = {}
        if self.rng.random() < 0.5:  # a condition on the source side
            atom = self.atom_for(rs.source, int(lk.src[pick]))
            if atom is not None:
                m = self.atom_mask(rs.source, atom)[lk.src]
                if (scope & ~m).any():
                    atoms["A"] = atom
                    scope &= m
        lists_ok = split != "train" or not (~self.allowed[split][rs.source]).any() or (
            (lists := self.candidate_lists(rs.source, "A" if "A" in atoms else "", atoms))
            and all(not (x & ~self.allowed[split][rs.source]).any() for x in lists))
        if (scope & ~ok).any() or not lists_ok:  # narrow to the part of the drawn link ("in Braeria"): a training
            sc = self.scope_atom(rs.source, int(lk.src[pick]))  # task's candidates stay out of held-out parts too
            if sc is None:
                return "leaves-part"
            atoms["S"] = sc
            scope &= self.atom_mask(rs.source, sc)[lk.src]
            if (scope & ~ok).any():
                return "leaves-part"
        window = self._period_for(vf, scope, pick, want) if want else self._period(vf[pick])
        if window is None or (window[0] is None and window[1] is None):
            return "no-period"
        keep = scope & _in(vf, window)
        if "A" in atoms and not (_in(vf, window) & ~self.atom_mask(rs.source, atoms["A"])[lk.src] & ok).any():
            return "redundant-constraint"
        note = None
        kinds = sorted(a for a, attr in rs.attributes.items() if not isinstance(attr, LinkNumber))
        if kinds and self.rng.random() < 0.35:  # events of one kind ("doctorates supervised by X"), in the years they span
            a = kinds[int(self.rng.integers(len(kinds)))]
            v = lk.notes[a][pick]
            same = scope & (lk.notes[a] == v)
            if v is not None and 1 < same.sum() < scope.sum():
                years = vf[same].astype("datetime64[Y]").astype(np.int64) + 1970
                lo, hi = int(years.min()), int(years.max())
                lo, hi = lo - lo % 5, hi - hi % 5 + 4
                window = (dt.date(lo, 1, 1), dt.date(hi, 12, 31) if hi < self.as_of_year else None)
                note, keep = (a, str(v)), same
        idx = np.flatnonzero(keep)
        return Candidate("events", rs.source, split, Rows(rs.source, lk.src[idx], step, idx, lk.dst[idx]), atoms,
                         "A" if "A" in atoms else "", window=window, note=note)

    def _period_for(self, vf: np.ndarray, scope: np.ndarray, pick: int, want: int):
        """Round years (5-year edges) around link `pick` that hold about `want` of the scoped links."""
        days = np.sort(vf[scope & ~np.isnat(vf)])
        if len(days) < 2:
            return None
        pos = int(np.searchsorted(days, vf[pick]))
        lo_i = max(0, pos - int(self.rng.integers(0, want + 1)))
        hi_i = min(len(days) - 1, lo_i + want - 1)
        ylo, yhi = int(str(days[lo_i])[:4]), int(str(days[hi_i])[:4])
        ylo -= ylo % 5
        yhi = yhi - yhi % 5 + 4
        lo = dt.date(ylo, 1, 1)
        hi = dt.date(yhi, 12, 31) if yhi < self.as_of_year else None
        return (lo, hi)
