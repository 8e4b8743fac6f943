"""Invariants of a world, checked in SQL over the store (and networkx for acyclicity).

Two sources: *built-in* invariants that follow from the pack's declarations (unique ids
and names, cardinalities, required links, date bounds, eligibility windows, tenure
histories without overlaps, locality) and the pack's own *declared* invariants.
`check_world` re-verifies a stored world; the planner runs the same checks before it
marks a world complete."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..errors import DamagedStateError
from ..plumbing import quote_ident as _q
from .pack import CategoricalAttr, CodeAttr, CountAttr, DateAttr, DateBound, DerivedAttr, LinkEntity, LinkNumber, LookupAttr, NumericAttr, RelationSpec, constant_date
from .spec import ResolvedWorld, date_bounds, fill_sql, link_bounds, value_translation


@dataclass(frozen=True)
class Invariant:
    name: str
    description: str
    sql: str | None = None  # returns the violating rows
    acyclic: str | None = None  # relation name
    declared: bool = False


@dataclass(frozen=True)
class Violation:
    name: str
    description: str
    count: int  # violating rows; -1 when the check itself failed (then examples[0] says why)
    examples: list[str]


# Every SQL query a pack supplies (invariants, derived attributes) runs with a time limit,
# so that a pathological query is reported instead of hanging plan, check or validate.
QUERY_TIME_LIMIT = 60.0  # seconds

T = TypeVar("T")


class QueryTimeout(Exception):
    """A query was interrupted after its time limit."""


class _Watchdog:
    """One daemon thread that interrupts connections whose query outlived its deadline
    (a thread per query would cost about a millisecond each; worlds run hundreds)."""

    def __init__(self):
        self.cv = threading.Condition()
        self.jobs: dict[int, tuple[object, float]] = {}
        self.fired: set[int] = set()
        self.next_id = 0
        self.thread: threading.Thread | None = None

    def _run(self) -> None:
        with self.cv:
            while True:
                now = time.monotonic()
                for key in [k for k, (_, due) in self.jobs.items() if due <= now]:
                    self.fired.add(key)
                    try:
                        self.jobs.pop(key)[0].interrupt()
                    except Exception:  # a closed connection: nothing left to interrupt
                        pass
                due = min((d for _, d in self.jobs.values()), default=None)
                self.cv.wait(None if due is None else max(0.0, due - now))

    def start(self, con, limit: float) -> int:
        with self.cv:
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="worldforge-query-watchdog", daemon=True)
                self.thread.start()
            self.next_id += 1
            self.jobs[self.next_id] = (con, time.monotonic() + limit)
            self.cv.notify()
            return self.next_id

    def stop(self, key: int) -> bool:
        """Forget a job; True if it was interrupted."""
        with self.cv:
            self.jobs.pop(key, None)
            if key in self.fired:
                self.fired.discard(key)
                return True
            return False


_WATCHDOG = _Watchdog()


def run_limited(con, run: Callable[[], T], limit: float | None = None) -> T:
    """Call `run()` (which queries `con`) and interrupt it after `limit` seconds
    (default QUERY_TIME_LIMIT), raising QueryTimeout. DuckDB errors pass through."""
    import duckdb

    limit = QUERY_TIME_LIMIT if limit is None else limit
    key = _WATCHDOG.start(con, limit)
    interrupted = False
    try:
        return run()
    except duckdb.InterruptException:
        interrupted = _WATCHDOG.stop(key)
        if interrupted:
            raise QueryTimeout(f"did not finish within {limit:g} s") from None
        raise
    finally:
        if not interrupted:
            _WATCHDOG.stop(key)


def _offset_sql(expr: str, b: DateBound) -> str:
    out = expr
    if b.years:
        out = f"({out} + to_years({b.years}))"
    if b.days:
        out = f"({out} + to_days({b.days}))"
    return f"CAST({out} AS DATE)"


def _const_sql(world: ResolvedWorld, ref: str) -> str:
    return f"DATE '{constant_date(ref, world.spec.as_of, world.spec.span_start).isoformat()}'"


def builtin_invariants(world: ResolvedWorld) -> list[Invariant]:
    start, as_of = _const_sql(world, "span_start"), _const_sql(world, "as_of")
    rels = world.relations
    out: list[Invariant] = []
    for t, et in world.types.items():
        T = _q(t)
        out.append(Invariant(f"{t}.unique_id", f"every {t} id is unique",
                             f"SELECT id, count(*) AS n FROM {T} GROUP BY id HAVING count(*) > 1"))
        if et.namesakes:  # declared namesakes: a name is shared by two at most, by no more than declared
            out.append(Invariant(f"{t}.unique_name", f"every {t} name is unique but for its declared namesakes (pairs)",
                                 f"SELECT name, count(*) AS n FROM {T} GROUP BY name HAVING count(*) > 2 UNION ALL "
                                 f"SELECT 'namesakes', k FROM (SELECT count(*) - count(DISTINCT name) AS k, count(*) AS n FROM {T}) "
                                 f"WHERE k > round({float(et.namesakes)!r} * n) + 1"))
        else:
            out.append(Invariant(f"{t}.unique_name", f"every {t} name is unique",
                                 f"SELECT name, count(*) AS n FROM {T} GROUP BY name HAVING count(*) > 1"))
        out.append(Invariant(f"{t}.name_present", f"every {t} has a name",
                             f"SELECT id FROM {T} WHERE name IS NULL OR name = ''"))
        for p, part in et.name.parts.items():
            if part.given is not None:
                drawn = (f" (its {p} names are drawn from faker's {world.spec.locale!r} locale by {part.given}; another locale, "
                         "or `choices` of your own, may hold)" if part.fakers is not None else "")
                out.append(Invariant(f"{t}.name.{p}.given", f"a {t}'s name carries no word of another {part.given} than its own"
                                     + drawn, name_part_mismatch_sql(world, t, p, part)))
        pending = pending_dates(et)
        for a, attr in et.attributes.items():
            A = _q(a)
            # Derived values may be NULL by design (a ticker only for public companies); a censored
            # date is NULL until it happens, and so is a stage's date the entity has not reached.
            required = attr.null_rate == 0 and not isinstance(attr, DerivedAttr) and not (
                isinstance(attr, LookupAttr) and not rels[attr.via].required
            ) and not (isinstance(attr, DateAttr) and (attr.censor or a in pending)) and not (
                isinstance(attr, NumericAttr) and attr.per is not None and not _per_base_always(world, t, attr.per))
            if required:
                out.append(Invariant(f"{t}.{a}.not_null", f"every {t} has a {a}",
                                     f"SELECT id FROM {T} WHERE {A} IS NULL"))
            if isinstance(attr, NumericAttr):
                out.extend(_numeric_invariants(world, t, a, attr))
            if isinstance(attr, CategoricalAttr) and attr.given is not None:
                if attr.given.startswith("name."):
                    sql = name_given_mismatch_sql(world, t, a, attr)
                else:
                    sql = f"SELECT x.id, x.{_q(attr.given)}, x.{A} FROM {T} x WHERE {given_case_sql(world, t, a, attr)} = FALSE"
                out.append(Invariant(f"{t}.{a}.given", f"a {t}'s {a} is one its {attr.given} allows", sql))
            if isinstance(attr, CategoricalAttr) and attr.dated_by is not None:
                out.append(Invariant(f"{t}.{a}.dated_by", f"a {t}'s {a} is a value that exists at its {attr.dated_by}",
                                     dated_category_mismatch_sql(world, t, a, attr)))
            if isinstance(attr, CategoricalAttr) and attr.stages is not None:
                out.append(Invariant(f"{t}.{a}.stages", f"a {t}'s {a} is the stage its {attr.stages.start} and "
                                     f"{attr.stages.end} give at as_of", stage_mismatch_sql(world, t, a, attr)))
            if isinstance(attr, CountAttr):
                rs = rels[attr.relation]
                key, other = ("target", "source") if attr.side_for(t, rs) == "in" else ("source", "target")
                cur = " WHERE valid_to IS NULL" if attr.current else ""
                k = count_attr_sql(attr, other)
                what = f"number of its {attr.relation} links" if attr.sum is None else f"sum of its {attr.relation} links' {attr.sum}"
                out.append(Invariant(f"{t}.{a}.count", f"a {t}'s {a} is the {what}",
                                     f"SELECT x.id, x.{A}, coalesce(c.k, 0) AS links FROM {T} x LEFT JOIN (SELECT {key} AS id, "
                                     f"{k} AS k FROM {_q('rel_' + attr.relation)}{cur} GROUP BY {key}) c "
                                     f"ON c.id = x.id WHERE x.{A} IS DISTINCT FROM coalesce(c.k, 0)"))
            if isinstance(attr, CodeAttr):
                chars = "A-Z0-9" if attr.alphabet == "alphanumeric" else "A-Z"
                out.append(Invariant(f"{t}.{a}.unique", f"every {t} has its own {a}",
                                     f"SELECT {A}, count(*) AS n FROM {T} GROUP BY {A} HAVING count(*) > 1"))
                out.append(Invariant(f"{t}.{a}.form", f"{t}.{a} is {attr.length} characters of {chars}",
                                     f"SELECT id, {A} FROM {T} WHERE NOT regexp_full_match({A}, '[{chars}]{{{attr.length}}}')"))
            if isinstance(attr, DateAttr):
                out.append(Invariant(f"{t}.{a}.in_span", f"{t}.{a} lies in the world's time span",
                                     f"SELECT id, {A} FROM {T} WHERE {A} < {start} OR {A} > {as_of}"))
                after, before = date_bounds(world, t, a)
                for side, bounds in (("after", after), ("before", before)):
                    for b in bounds:
                        out.append(_attr_bound_invariant(world, t, a, side, b))
                for v, case in attr.cases.items():
                    for side in ("after", "before"):
                        for b in getattr(case, side):
                            inv = _attr_bound_invariant(world, t, a, side, b)
                            cond = f"x.{_q(attr.given)} = {sql_str(stored_value(world, t, attr.given)(v))}"
                            out.append(Invariant(f"{inv.name}[{attr.given}={v}]", f"{inv.description} when {attr.given} is {v}",
                                                 inv.sql.replace(" WHERE ", f" WHERE {cond} AND ", 1)))
    for r, rs in rels.items():
        out.extend(_relation_invariants(world, r, rs, start, as_of))
    return out


def _numeric_invariants(world: ResolvedWorld, t: str, a: str, attr: NumericAttr) -> list[Invariant]:
    """Bounds (per case of a conditional distribution), part-of and at-most. A value held under
    a bound that is itself below the minimum (a whole too small, a smaller bounding attribute)
    may sit under the minimum."""
    out = []
    T, A = _q(t), f"x.{_q(a)}"
    cases = list(attr.cases.items()) if attr.given else []

    def per_case(pick) -> str | None:
        vals = [(v, pick(attr.case_bounds(v))) for v, _ in cases]
        default = pick(attr.case_bounds(None))
        if default is None and all(x is None for _, x in vals):
            return None
        d = "NULL" if default is None else repr(float(default))
        if not vals:
            return d
        G = f"x.{_q(attr.given)}"
        gv = stored_value(world, t, attr.given)
        return "CASE " + " ".join(f"WHEN {G} = {sql_str(gv(v))} THEN {'NULL' if x is None else repr(float(x))}" for v, x in vals) + f" ELSE {d} END"

    lo, hi = per_case(lambda b: b[0]), per_case(lambda b: b[1])
    joins, ceiling = "", None
    po = attr.part_of
    if po is not None and not po.sum:
        path, whole, wid = _whole_join(world, t, po.via)
        joins = path + f" LEFT JOIN {_q(whole)} w ON w.id = {wid}"
        ceiling = f"{po.share!r} * w.{_q(po.attribute)}"
    elif attr.at_most is not None:
        ceiling = f"x.{_q(attr.at_most)}"
    if lo is not None or hi is not None:
        conds = []
        if lo is not None:
            held = f" AND NOT coalesce({ceiling} < {lo}, FALSE)" if ceiling else ""
            conds.append(f"({A} < {lo}{held})")
        if hi is not None:
            conds.append(f"{A} > {hi}")
        out.append(Invariant(f"{t}.{a}.bounds", f"{t}.{a} lies in [{attr.min}, {attr.max}]" + (" per case of " + attr.given if cases else ""),
                             f"SELECT x.id, {A} FROM {T} x {joins} WHERE {' OR '.join(conds)}"))
    if attr.at_most is not None:
        out.append(Invariant(f"{t}.{a}.at_most", f"{t}.{a} is at most its {attr.at_most}",
                             f"SELECT id, {_q(a)}, {_q(attr.at_most)} FROM {T} WHERE {_q(a)} > {_q(attr.at_most)}"))
    if po is not None:
        path, whole, wid = _whole_join(world, t, po.via)
        W = f"w.{_q(po.attribute)}"
        frm = f"FROM {T} x {path} JOIN {_q(whole)} w ON w.id = {wid}"
        if po.sum:
            out.append(Invariant(f"{t}.{a}.part_of", f"the {t}s of a {whole} add up to at most {po.share:g} x its {po.attribute}",
                                 f"SELECT w.id, sum({A}) AS parts, any_value({W}) AS whole {frm} GROUP BY w.id "
                                 f"HAVING sum({A}) > {po.share!r} * any_value({W}) * (1 + 1e-9)"))
        else:
            out.append(Invariant(f"{t}.{a}.part_of", f"a {t}'s {a} is at most {po.share:g} x its {whole}'s {po.attribute}",
                                 f"SELECT x.id, {A}, {W} {frm} WHERE {A} > {po.share!r} * {W} * (1 + 1e-9)"))
    return out


def _per_base_always(world: ResolvedWorld, t: str, per) -> bool:
    """Whether every row has the figure a `per` attribute is a rate of (so it has one too):
    a plain figure of its own with no NULLs, or one of a required to-one relation's target."""
    rels = world.relations
    if per.via is None:
        other_t = t
    elif per.via in rels and rels[per.via].required:
        other_t = rels[per.via].target
    else:
        return False
    base = world.types[other_t].attributes.get(per.attribute)
    return isinstance(base, NumericAttr) and base.null_rate == 0 and base.per is None


def _whole_join(world: ResolvedWorld, t: str, via: str) -> tuple[str, str, str]:
    """Joins from `x` (a row of t) towards the whole `via` leads to: (joins, whole type, its id expression)."""
    hops: list[str] = []
    cur, attr = t, via
    while attr not in world.relations:
        s = world.types[cur].attributes[attr]
        hops.append(s.via)
        cur = world.relations[s.via].target
        if s.attribute == "id":
            break
        attr = s.attribute
    else:
        hops.append(attr)
        cur = world.relations[attr].target
    joins, prev = [], "x.id"
    for i, r in enumerate(hops):
        joins.append(f"LEFT JOIN {_q('rel_' + r)} j{i} ON j{i}.source = {prev}")
        prev = f"j{i}.target"
    return " ".join(joins), cur, prev


def _attr_bound_invariant(world: ResolvedWorld, t: str, a: str, side: str, b: DateBound) -> Invariant:
    op = "<" if side == "after" else ">"
    name = f"{t}.{a}.{side}:{b}"
    desc = f"{t}.{a} is {'on or after' if side == 'after' else 'on or before'} {b}"
    T, A = _q(t), _q(a)
    if b.constant:
        bound = _offset_sql(_const_sql(world, b.ref), b)
        return Invariant(name, desc, f"SELECT x.id, x.{A} FROM {T} x WHERE x.{A} {op} {bound}")
    parts = b.ref.split(".")
    if len(parts) == 1:
        bound = _offset_sql(f"x.{_q(parts[0])}", b)
        return Invariant(name, desc, f"SELECT x.id, x.{A}, x.{_q(parts[0])} FROM {T} x WHERE x.{A} {op} {bound}")
    rel, attr = parts
    rs = world.relations[rel]
    bound = _offset_sql(f"u.{_q(attr)}", b)
    return Invariant(name, desc,
                     f"SELECT x.id, x.{A}, u.id AS other, u.{_q(attr)} FROM {T} x "
                     f"JOIN {_q('rel_' + rel)} e ON e.source = x.id JOIN {_q(rs.target)} u ON u.id = e.target "
                     f"WHERE x.{A} {op} {bound}")


def _rel_bound_sql(world: ResolvedWorld, b: DateBound) -> str:
    if b.constant:
        return _offset_sql(_const_sql(world, b.ref), b)
    if b.ref == "valid_from":
        return _offset_sql("e.valid_from", b)
    if b.ref.count(".") == 2:  # source.<relation>.start: when the source's first link of it starts
        other = _q("rel_" + b.ref.split(".")[1])
        return _offset_sql(f"(SELECT min(o.valid_from) FROM {other} o WHERE o.source = e.source)", b)
    side, attr = b.ref.split(".")
    return _offset_sql(f"{'s' if side == 'source' else 'u'}.{_q(attr)}", b)


def wild_sql(world: ResolvedWorld, rs: RelationSpec, alias: str = "s") -> str:
    """' AND <the source's value is not the relation's `same.any`>' (as stored: in the world's language)."""
    if rs.same is None or rs.same.any is None:
        return ""
    v = value_translation(world, rs.source, rs.same.source).get(rs.same.any, rs.same.any)
    return f" AND {alias}.{_q(rs.same.source)} IS DISTINCT FROM '{v.replace(chr(39), chr(39) * 2)}'"


def _relation_invariants(world: ResolvedWorld, r: str, rs: RelationSpec, start: str, as_of: str) -> list[Invariant]:
    R, S, T = _q("rel_" + r), _q(rs.source), _q(rs.target)
    joined = f"FROM {R} e JOIN {S} s ON s.id = e.source JOIN {T} u ON u.id = e.target"

    def frm(*exprs: str) -> str:
        """FROM the links, joined only to the entity tables the expressions read (s., u.)."""
        text = " ".join(exprs)
        out = f"FROM {R} e"
        if "s." in text:
            out += f" JOIN {S} s ON s.id = e.source"
        if "u." in text:
            out += f" JOIN {T} u ON u.id = e.target"
        return out
    out = [
        Invariant(f"{r}.source_exists", f"every {r} link starts at an existing {rs.source}",
                  f"SELECT e.source FROM {R} e ANTI JOIN {S} s ON s.id = e.source"),
        Invariant(f"{r}.target_exists", f"every {r} link ends at an existing {rs.target}",
                  f"SELECT e.target FROM {R} e ANTI JOIN {T} u ON u.id = e.target"),
        Invariant(f"{r}.max_per_source", f"a {rs.source} has at most {rs.count_range.max} {r} link(s)"
                  + (f" ({rs.base_count.max} but for its {rs.given} cases)" if rs.cases else ""),
                  f"SELECT source, count(*) AS n FROM {R} GROUP BY source HAVING count(*) > {rs.count_range.max}" if not rs.cases else
                  f"SELECT e.source, count(*) AS n FROM {R} e JOIN {S} s ON s.id = e.source GROUP BY e.source, s.{_q(rs.given)} "
                  f"HAVING count(*) > CASE " + " ".join(f"WHEN s.{_q(rs.given)} = {_case_value(world, rs, v)} THEN {c.max}"
                                                       for v, c in rs.cases.items()) + f" ELSE {rs.base_count.max} END"),
        Invariant(f"{r}.no_repeated_pair", f"a {rs.source} links to the same {rs.target} at most once by {r}",
                  f"SELECT source, target, count(*) AS n FROM {R} GROUP BY source, target HAVING count(*) > 1"),
        Invariant(f"{r}.validity_order", f"{r} validity starts before it ends",
                  f"SELECT source, target, valid_from, valid_to FROM {R} WHERE valid_to < valid_from"),
        Invariant(f"{r}.validity_in_span", f"{r} validity starts inside the time span",
                  f"SELECT source, target, valid_from FROM {R} WHERE valid_from < {start} OR valid_from > {as_of}"),
    ]
    if rs.target_unique:
        out.append(Invariant(f"{r}.target_once", f"a {rs.target} is the target of at most one {r} link ({rs.cardinality})",
                             f"SELECT target, count(*) AS n FROM {R} GROUP BY target HAVING count(*) > 1"))
    if rs.required:
        out.append(Invariant(f"{r}.required", f"every {rs.source} has a {r} link",
                             f"SELECT s.id FROM {S} s ANTI JOIN {R} e ON e.source = s.id"))
    if rs.source == rs.target:
        out.append(Invariant(f"{r}.no_self_link", f"no {rs.source} is linked to itself by {r}",
                             f"SELECT source FROM {R} WHERE source = target"))
    if rs.same and rs.same.share == 1:  # a rule (a bias below 1 is measured by the audit)
        out.append(Invariant(f"{r}.same_{rs.same.target}",
                             f"{r} links only a {rs.source} and a {rs.target} with the same {rs.same.target}",
                             f"SELECT e.source, e.target {joined} WHERE s.{_q(rs.same.source)} IS DISTINCT FROM u.{_q(rs.same.target)}"
                             + wild_sql(world, rs)))
    if rs.eligible:
        el = rs.eligible
        col = f"u.{_q(el.attribute)}"
        for side, b in (("after", el.after), ("before", el.before)):
            if b is None:
                continue
            op = "<" if side == "after" else ">"
            out.append(Invariant(f"{r}.eligible.{side}:{b}", f"{r} targets have {el.attribute} {side} {b}",
                                 f"SELECT e.source, e.target, {col} {frm(col, _rel_bound_sql(world, b))} "
                                 f"WHERE {col} {op} {_rel_bound_sql(world, b)}"))
    after, before = link_bounds(world, rs)
    if rs.date:
        for side, bounds in (("after", after), ("before", before)):
            op = "<" if side == "after" else ">"
            for b in bounds:
                out.append(Invariant(f"{r}.date.{side}:{b}", f"{r} is dated {side} {b}",
                                     f"SELECT e.source, e.target, e.valid_from {frm(_rel_bound_sql(world, b))} "
                                     f"WHERE e.valid_from {op} {_rel_bound_sql(world, b)}"))
    if rs.history or rs.since:
        what = "tenures" if rs.history else "links"
        if rs.history and not rs.history.concurrent:
            out.append(Invariant(
                f"{r}.history_no_overlap", f"a {rs.source}'s {r} tenures do not overlap",
                f"SELECT source, valid_from, valid_to, nxt FROM (SELECT source, valid_from, valid_to, "
                f"lead(valid_from) OVER (PARTITION BY source ORDER BY valid_from) AS nxt FROM {R}) "
                f"WHERE nxt IS NOT NULL AND (valid_to IS NULL OR nxt < valid_to)"))
        for b in after:
            out.append(Invariant(f"{r}.history.after:{b}", f"{r} {what} start on or after {b}",
                                 f"SELECT e.source, e.target, e.valid_from {frm(_rel_bound_sql(world, b))} "
                                 f"WHERE e.valid_from < {_rel_bound_sql(world, b)}"))
        for b in before:
            out.append(Invariant(f"{r}.history.before:{b}", f"{r} {what} end on or before {b}",
                                 f"SELECT e.source, e.target, e.valid_to {frm(_rel_bound_sql(world, b))} "
                                 f"WHERE coalesce(e.valid_to, {as_of}) > {_rel_bound_sql(world, b)}"))
    if rs.at is not None:
        t_at = _rel_bound_sql(world, rs.at)
        for side, bounds in (("after", after), ("before", before)):
            for b in bounds:
                if b.ref.startswith("target."):
                    op = "<" if side == "after" else ">"
                    out.append(Invariant(f"{r}.at.{side}:{b}", f"a {rs.target} exists when {r} links it ({rs.at})",
                                         f"SELECT e.source, e.target, {t_at} AS at {frm(t_at, _rel_bound_sql(world, b))} "
                                         f"WHERE {t_at} {op} {_rel_bound_sql(world, b)}"))
    out += _link_attribute_invariants(world, r, rs)
    out += _link_rule_invariants(world, r, rs)
    return out


def _link_attribute_invariants(world: ResolvedWorld, r: str, rs: RelationSpec) -> list[Invariant]:
    """A link's own values: the entity it names held the declared link when it started, a number
    in its range (distinct where declared), a category among its values (one per target, rising
    along a source's links, where declared)."""
    R = _q("rel_" + r)
    out: list[Invariant] = []
    for a, attr in rs.attributes.items():  # a link's own value is one its attribute declares
        if isinstance(attr, LinkEntity):
            out.append(Invariant(f"{r}.{a}.holds", f"a {r} link's {a} held {attr.holds} to its {attr.end} when it started",
                                 f"SELECT e.source, e.target, e.{_q(a)} FROM {R} e WHERE {unheld_sql(world, r, a)}"))
            continue
        if isinstance(attr, LinkNumber):
            out.append(Invariant(f"{r}.{a}.range", f"a {r} link's {a} is a whole number in [{attr.min:g}, {attr.max:g}]",
                                 f"SELECT source, target, {_q(a)} FROM {R} WHERE {_q(a)} < {attr.min!r} OR {_q(a)} > {attr.max!r}"))
            if attr.distinct_by == "target":
                out.append(Invariant(
                    f"{r}.{a}.distinct", f"{r} links to one {rs.target} that overlap in time have different {a}s",
                    f"SELECT x.target, x.{_q(a)}, x.source, y.source AS other FROM {shared_value_pairs_sql(R, a)}"))
            elif attr.distinct_by == "source":
                out.append(Invariant(
                    f"{r}.{a}.distinct", f"a {rs.source}'s {r} links that overlap in time have different {a}s",
                    f"SELECT x.source, x.{_q(a)}, x.target, y.target AS other FROM {shared_value_pairs_sql(R, a, by='source')}"))
            continue
        tr = attr.translation(world.spec.language)
        allowed = sorted({tr.get(v, v) for v in attr.weights()})
        lits = ", ".join("'" + v.replace("'", "''") + "'" for v in allowed)
        out.append(Invariant(f"{r}.{a}.values", f"a {r} link's {a} is one of its declared values",
                             f"SELECT source, target, {_q(a)} FROM {R} WHERE {_q(a)} IS NOT NULL AND {_q(a)} NOT IN ({lits})"))
        one = getattr(attr, "one_per_target", None)
        if one is not None:
            lit = sql_str(tr.get(one.value, one.value))
            out.append(Invariant(f"{r}.{a}.one_per_target", f"at most one {r} link to a {rs.target} holds {a} {one.value} at a time",
                                 f"SELECT x.target, x.{_q(a)}, x.source, y.source AS other FROM {shared_value_pairs_sql(R, a)} "
                                 f"WHERE x.{_q(a)} = {lit}"))
            if one.exactly:
                out.append(Invariant(f"{r}.{a}.one_per_target.exactly", f"every {rs.target} with {r} links has one with {a} {one.value}",
                                     f"SELECT target FROM {R} GROUP BY target HAVING count(*) FILTER (WHERE {_q(a)} = {lit}) = 0"))
        if getattr(attr, "rises", False):
            out.append(Invariant(f"{r}.{a}.rises", f"a {rs.source}'s {a} never falls along its {r} links",
                                 f"SELECT source, target, {_q(a)}, prev FROM ({falls_sql(R, a, [tr.get(v, v) for v in attr.rises])}) "
                                 f"WHERE falls"))
    return out


def _link_rule_invariants(world: ResolvedWorld, r: str, rs: RelationSpec) -> list[Invariant]:
    """A relation's rules between links: not where another relation links, once per group, at
    most so many per target, one at a time, covered by a required path, no cycle."""
    R = _q("rel_" + r)
    out: list[Invariant] = []
    for x in rs.not_same:  # never to a target the source is linked to by x when the link starts (ever, undated)
        when = ("e.valid_from IS NULL OR (coalesce(x.valid_from, DATE '0001-01-01') <= e.valid_from "
                "AND e.valid_from < coalesce(x.valid_to, DATE '9999-12-31'))") if rs.dated else "TRUE"
        out.append(Invariant(f"{r}.not_same.{x}", f"a {r} link never goes to a {rs.target} its {rs.source} is linked to by {x} then",
                             f"SELECT e.source, e.target FROM {R} e JOIN {_q('rel_' + x)} x ON x.source = e.source "
                             f"AND x.target = e.target WHERE {when}"))
    if rs.once_per is not None:
        G = _q(rs.once_per)
        out.append(Invariant(f"{r}.once_per", f"a {rs.target} is linked by {r} at most once per {rs.source} {rs.once_per}",
                             f"SELECT s.{G}, r.target, count(*) AS n FROM {R} r JOIN {_q(rs.source)} s ON s.id = r.source "
                             f"WHERE s.{G} IS NOT NULL GROUP BY ALL HAVING count(*) > 1"))
    if rs.max_per_target is not None:
        out.append(Invariant(f"{r}.max_per_target", f"a {rs.target} is the target of at most {rs.max_per_target} {r} links",
                             f"SELECT target, count(*) AS n FROM {R} GROUP BY target HAVING count(*) > {rs.max_per_target}"))
    if rs.exclusive:
        out.append(Invariant(
            f"{r}.exclusive", f"a {rs.target} holds at most one {r} link at a time",
            f"SELECT target, valid_from, valid_to, nxt FROM (SELECT target, valid_from, valid_to, "
            f"lead(valid_from) OVER (PARTITION BY target ORDER BY valid_from, valid_to) AS nxt FROM {R}) "
            f"WHERE nxt IS NOT NULL AND (valid_to IS NULL OR nxt < valid_to)"))
    if rs.requires is not None:
        out.append(Invariant(f"{r}.requires", f"every {r} link is covered by {rs.requires.path} while it holds",
                             requires_uncovered_sql(world, r, rs)))
    if rs.acyclic:
        out.append(Invariant(f"{r}.acyclic", f"{r} links form no cycle", acyclic=r))
    return out


def declared_invariants(world: ResolvedWorld) -> list[Invariant]:
    out = []
    for pname, pack in world.packs.items():
        for inv in pack.invariants:
            sql = fill_sql(inv.sql, world.spec) if inv.sql is not None else None
            out.append(Invariant(f"{pname}.{inv.name}", inv.description, sql=sql, acyclic=inv.acyclic, declared=True))
    return out


def all_invariants(world: ResolvedWorld) -> list[Invariant]:
    return builtin_invariants(world) + declared_invariants(world)


def _acyclic_violations(con, relation: str) -> tuple[int, list[str]]:
    import networkx as nx

    rows = con.execute(f"SELECT source, target FROM {_q('rel_' + relation)}").fetchall()
    g = nx.DiGraph(rows)
    try:
        cyc = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return 0, []
    n_bad = sum(1 for c in nx.strongly_connected_components(g) if len(c) > 1) + nx.number_of_selfloops(g)
    return max(n_bad, 1), [" -> ".join(str(u) for u, _ in cyc)]


def invariant_query(sql: str) -> str:
    """How an invariant's query runs: its violating rows (five examples) and their count."""
    return f"SELECT *, count(*) OVER () AS __n FROM ({sql}) LIMIT 5"


def check_connection(con, world: ResolvedWorld, invariants: list[Invariant] | None = None) -> list[Violation]:
    """Run every invariant against an open store; return the ones that fail."""
    import duckdb

    found = []
    for inv in invariants if invariants is not None else all_invariants(world):
        if inv.acyclic:
            n, ex = _acyclic_violations(con, inv.acyclic)
        else:
            try:
                rows = run_limited(con, lambda sql=inv.sql: con.execute(invariant_query(sql)).fetchall())
            except QueryTimeout as exc:
                found.append(Violation(inv.name, inv.description, -1, [f"query {exc}; simplify it"]))
                continue
            except duckdb.IOException as exc:  # unreadable blocks: the file is damaged, the invariant says nothing
                raise DamagedStateError(f"the world database is damaged ({str(exc).splitlines()[0][:160]}); plan the world "
                                        "again with `worldforge plan SPEC --force`") from None
            except duckdb.Error as exc:
                found.append(Violation(inv.name, inv.description, -1, [f"query failed: {str(exc).splitlines()[0]}"]))
                continue
            n = rows[0][-1] if rows else 0
            ex = [", ".join(str(v) for v in row[:-1]) for row in rows[:3]]
        if n:
            found.append(Violation(inv.name, inv.description, n, ex))
    return found


def check_world(path: str | Path) -> tuple[int, list[Violation]]:
    """Re-verify a stored world. Returns (number of invariants checked, violations)."""
    from .store import open_world

    info = open_world(path)
    invs = all_invariants(info.world)
    with info.connect() as con:
        return len(invs), check_connection(con, info.world, invs)


# --------------------------------------------------------------------------- shared checks
# Queries the invariants and `worldforge audit` share: each returns the violating rows.


def link_time_sql(world: ResolvedWorld, rs: RelationSpec) -> tuple[str, str] | None:
    """SQL for when a link of `rs` (alias e, its source s) holds: (first day, last day), or None
    for an undated link without `at`."""
    as_of = _const_sql(world, "as_of")
    if rs.history:
        return "e.valid_from", f"coalesce(e.valid_to, {as_of})"
    if rs.date or rs.since:
        return "e.valid_from", "e.valid_from"
    if rs.at is not None:
        t = _rel_bound_sql(world, rs.at)
        return t, t
    return None


def requires_uncovered_sql(world: ResolvedWorld, r: str, rs: RelationSpec) -> str:
    """Links of `r` whose target is not reachable from the source through `requires.path`
    by links valid over the whole time the link holds."""
    rels = world.relations
    time = link_time_sql(world, rs)
    joins, conds, cur = [], [], "e.source"
    for i, (hop, back) in enumerate(rs.requires.hops):
        h = f"h{i}"
        near, far = ("target", "source") if back else ("source", "target")
        joins.append(f"{_q('rel_' + hop)} {h}")
        conds.append(f"{h}.{near} = {cur}")
        for a, values in rs.requires.where.items():  # only covering links of these categories (as stored)
            attr = rels[hop].attributes.get(a)
            if attr is not None:
                tr = attr.translation(world.spec.language)
                conds.append(f"{h}.{_q(a)} IN (" + ", ".join(sql_str(tr.get(v, v)) for v in values) + ")")
        if time is not None and rels[hop].dated:
            t0, t1 = time
            conds.append(f"({h}.valid_from IS NULL OR {h}.valid_from <= {t0}) AND ({h}.valid_to IS NULL OR {h}.valid_to >= {t1})")
        cur = f"{h}.{far}"
    conds.append(f"{cur} = e.target")
    R, S, T = _q("rel_" + r), _q(rs.source), _q(rs.target)
    return (f"SELECT e.source, e.target, e.valid_from FROM {R} e JOIN {S} s ON s.id = e.source JOIN {T} u ON u.id = e.target "
            f"WHERE NOT EXISTS (SELECT 1 FROM {', '.join(joins)} WHERE {' AND '.join(conds)})")


def _alternation(words) -> str:
    """The words as one regex alternation, longest first, quoted for an SQL string literal."""
    import re

    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w))).replace("'", "''")


def _word_regex(words) -> str:
    """A pattern matching any of `words` as a whole word; words of a script written without spaces
    (a Chinese given name's characters: 王芳) match wherever they stand."""
    words = list(words)
    if words and all(_UNSPACED.fullmatch(w) for w in words):
        return "'(" + _alternation(words) + ")'"
    return "'(^|[^[:alnum:]])(" + _alternation(words) + ")($|[^[:alnum:]])'"


_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def given_case_sql(world: ResolvedWorld, t: str, a: str, attr) -> str:
    """Per row of `t` (aliased x): whether its categorical `a` is a value the case of its given
    attribute allows (TRUE / FALSE), NULL for a row whose given value has no case."""
    G = f"x.{_q(attr.given)}"
    gv, av = stored_value(world, t, attr.given), stored_value(world, t, a)
    whens = " ".join(f"WHEN {G} = {sql_str(gv(v))} THEN x.{_q(a)} IN ({', '.join(sql_str(av(k)) for k, wt in cw.items() if wt > 0)})"
                     for v, cw in attr.cases.items())
    return f"CASE {whens} END"


def dated_category_mismatch_sql(world: ResolvedWorld, t: str, a: str, attr) -> str:
    """Entities whose categorical `a` is a value that does not exist at their `dated_by` date
    while a value their case allows does (the planner's fallback, a row no value of its case
    covers, is not one)."""
    av = stored_value(world, t, a)
    d = f"x.{_q(attr.dated_by)}"
    windows = attr.windows()

    def exists(v: str) -> str:
        since, until = windows.get(v, (None, None))
        parts = ([f"coalesce({d} >= DATE '{since.isoformat()}', FALSE)"] if since else []) + (
            [f"coalesce({d} < DATE '{until.isoformat()}', TRUE)"] if until else [])
        return " AND ".join(parts) or "TRUE"

    weights = attr.weights()
    own = "CASE " + " ".join(f"WHEN x.{_q(a)} = {sql_str(av(v))} THEN {exists(v)}" for v in windows) + " ELSE TRUE END"

    def any_of(cw: dict) -> str:
        return "(" + " OR ".join(exists(v) for v, w in cw.items() if w > 0) + ")"

    if attr.given is not None and not attr.given.startswith("name.") and attr.cases:
        gv = stored_value(world, t, attr.given)
        some = ("CASE " + " ".join(f"WHEN x.{_q(attr.given)} = {sql_str(gv(c))} THEN {any_of(cw)}" for c, cw in attr.cases.items())
                + f" ELSE {any_of(weights)} END")
    elif attr.given is not None and attr.cases:  # chosen by a name part: its word picks the case
        some = "TRUE"
    else:
        some = any_of(weights)
    return f"SELECT x.id, x.{_q(a)}, {d} FROM {_q(t)} x WHERE NOT ({own}) AND ({some})"


def pending_dates(et) -> set[str]:
    """A type's dates a stage leaves empty until the entity reaches them (`pack.Stages`): the
    end, and the start where a stage comes before it (planned)."""
    out: set[str] = set()
    for attr in et.attributes.values():
        st = getattr(attr, "stages", None)
        if st is not None:
            out |= {st.end} | ({st.start} if attr.stage_values()[0] is not None else set())
    return out


def stage_mismatch_sql(world: ResolvedWorld, t: str, a: str, attr) -> str:
    """Entities whose stage (`pack.Stages`) is not the one their dates give at as_of: an end
    (on or before as_of) means finished, a start and no end under way, neither planned."""
    av = stored_value(world, t, a)
    before, during, after = attr.stage_values()
    s, e = f"x.{_q(attr.stages.start)}", f"x.{_q(attr.stages.end)}"
    want = (f"CASE WHEN {e} IS NOT NULL THEN {sql_str(av(after))} "
            + (f"WHEN {s} IS NULL THEN {sql_str(av(before))} " if before is not None else "")
            + f"ELSE {sql_str(av(during))} END")
    return f"SELECT x.id, x.{_q(a)}, {s}, {e} FROM {_q(t)} x WHERE x.{_q(a)} IS DISTINCT FROM {want}"


def sql_str(v: str) -> str:
    return "'" + v.replace("'", "''") + "'"


def stored_value(world: ResolvedWorld, t: str, a: str):
    """A pack value of t.a as the world stores it (translated in a Chinese world)."""
    m = value_translation(world, t, a) if a in world.types[t].attributes else {}
    return lambda v: m.get(v, v)


def _case_value(world: ResolvedWorld, rs, v: str) -> str:
    """A relation's case value as the source's category stores it (in the world's language), as an SQL literal."""
    attr = world.types[rs.source].attributes.get(rs.given)
    tr = attr.translation(world.spec.language) if hasattr(attr, "translation") else {}
    return sql_str(tr.get(v, v))


def count_attr_sql(attr: CountAttr, other: str) -> str:
    """A `count` attribute's value over one entity's links, as SQL: the distinct entities at the
    `other` end, or with `sum` the links' number added up."""
    return f"count(DISTINCT {other})" if attr.sum is None else f"sum(coalesce({_q(attr.sum)}, 0))"


def falls_sql(table: str, a: str, order: list[str]) -> str:
    """Each link of `table` with a value of its attribute `a`, the value of the source's link before
    it (by start date; links of one date in the values' order) as `prev`, and whether the value
    falls from it (`falls`: its place in `order`, lowest first, is below the one before)."""
    A = _q(a)
    rank = "CASE " + " ".join(f"WHEN {A} = {sql_str(v)} THEN {i}" for i, v in enumerate(order)) + " END"
    return (f"SELECT source, target, {A}, lag({A}) OVER w AS prev, {rank} < lag({rank}) OVER w AS falls "
            f"FROM {table} WHERE {A} IS NOT NULL "
            f"WINDOW w AS (PARTITION BY source ORDER BY valid_from NULLS LAST, {rank}, target)")


def unheld_sql(world: ResolvedWorld, r: str, a: str) -> str:
    """A WHERE condition over `rel_<r>` aliased `e`: the link's entity (a `LinkEntity`) is one of
    the link's own ends, or holds no `holds` link meeting `where` to the link's end when the link starts (with
    '~', no such link from the end to it)."""
    rs = world.relations[r]
    attr = rs.attributes[a]
    hs = world.relations[attr.relation]
    A = f"e.{_q(a)}"
    him, end = ("target", "source") if attr.backwards else ("source", "target")
    conds = [f"h.{him} = {A}", f"h.{end} = e.{attr.end}",
             "(e.valid_from IS NULL OR ((h.valid_from IS NULL OR h.valid_from <= e.valid_from) "
             "AND (h.valid_to IS NULL OR e.valid_from < h.valid_to)))"]
    for k, vals in attr.where.items():
        tr = hs.attributes[k].translation(world.spec.language)
        conds.append(f"h.{_q(k)} IN ({', '.join(sql_str(tr.get(v, v)) for v in vals)})")
    kind = attr.entity_type(world.relations)
    own = "".join(f"{A} = e.{end} OR " for end, t in (("source", rs.source), ("target", rs.target)) if t == kind)
    return (f"{A} IS NOT NULL AND ({own}NOT EXISTS (SELECT 1 FROM {_q('rel_' + attr.relation)} h "
            f"WHERE {' AND '.join(conds)}))")


def shared_value_pairs_sql(table: str, a: str, once: bool = False, by: str = "target") -> str:
    """`table x JOIN table y ...`: pairs of links to one target (or `by` source) that overlap in
    time and hold one value of their attribute `a` (open ends unbounded); each pair in both
    orders, or `once`."""
    A = _q(a)
    o = "source" if by == "target" else "target"  # the other end tells two links apart
    other = (f"(x.{o} < y.{o} OR (x.{o} = y.{o} AND x.valid_from < y.valid_from))" if once
             else f"(x.{o} <> y.{o} OR x.valid_from IS DISTINCT FROM y.valid_from)")
    return (f"{table} x JOIN {table} y ON x.{by} = y.{by} AND x.{A} = y.{A} AND {other} "
            f"AND coalesce(x.valid_from, DATE '0001-01-01') < coalesce(y.valid_to, DATE '9999-12-31') "
            f"AND coalesce(y.valid_from, DATE '0001-01-01') < coalesce(x.valid_to, DATE '9999-12-31')")


def _drawn_only(world: ResolvedWorld, t: str, sql: str) -> str:
    """`sql` (rows led by an entity id) without the entities whose name was derived from another's
    (`name.derived`: a sequel's name is its original's, not drawn from the parts)."""
    dn = world.types[t].name.derived
    if dn is None:
        return sql
    return f"SELECT * FROM ({sql}) m WHERE m.id NOT IN (SELECT source FROM {_q('rel_' + dn.via)})"


def name_part_mismatch_sql(world: ResolvedWorld, t: str, p: str, part) -> str:
    """Entities whose name contradicts the attribute its part is chosen by (a word of another
    value's choices and none of its own value's); for `via` parts, names that do not contain
    the related entity's value (templates may legitimately leave it out: audit only). Names
    derived from another entity's are not judged by the parts."""
    return _drawn_only(world, t, _name_part_mismatch_sql(world, t, p, part))


def _name_part_mismatch_sql(world: ResolvedWorld, t: str, p: str, part) -> str:
    T = _q(t)
    if part.via is not None:
        rs = world.relations[part.via]
        return (f"SELECT x.id, x.name FROM {T} x JOIN {_q('rel_' + part.via)} e ON e.source = x.id "
                f"JOIN {_q(rs.target)} u ON u.id = e.target WHERE strpos(x.name, CAST(u.{_q(part.attribute)} AS VARCHAR)) = 0")
    g = f"x.{_q(part.given)}"
    gv = stored_value(world, t, part.given)
    if part.fakers is not None:
        return _faker_part_mismatch_sql(world, t, p, part, g, gv)
    default = set(part.choices or ())
    every = part.words()
    whens = []
    for v, ch in part.cases.items():
        other = every - set(ch)
        if other:
            whens.append(f"WHEN {g} = {sql_str(gv(v))} THEN regexp_matches(x.name, {_word_regex(other)})")
    other = every - default
    if default and other:
        whens.append(f"WHEN {g} IS NOT NULL AND {g} NOT IN ({', '.join(sql_str(gv(v)) for v in part.cases)}) "
                     f"THEN regexp_matches(x.name, {_word_regex(other)})")
    if not whens:
        return f"SELECT x.id, x.name FROM {T} x WHERE FALSE"
    return f"SELECT x.id, x.name, {g} FROM {T} x WHERE CASE {' '.join(whens)} ELSE FALSE END"


def _faker_part_mismatch_sql(world: ResolvedWorld, t: str, p: str, part, g: str, gv) -> str:
    """A name part drawn from a faker provider per value (first names by gender): names that
    open with a word only another value's provider gives. Checked when the part opens every
    template (elsewhere its word cannot be told from the other parts')."""
    from .sampling import faker_pool

    if not world.types[t].name.opens_with(p):
        return f"SELECT x.id, x.name FROM {_q(t)} x WHERE FALSE"
    pools = {v: set(faker_pool(f, world.spec.locale, part.pool, world.spec.seed)) for v, f in part.fakers.items()}
    whens = []
    for v, own in pools.items():
        other = set().union(*(w for k, w in pools.items() if k != v)) - own
        if other:
            whens.append(f"WHEN {g} = {sql_str(gv(v))} THEN regexp_matches(x.name, '^(" + _alternation(other) + ")( |$)')")
    if not whens:
        return f"SELECT x.id, x.name FROM {_q(t)} x WHERE FALSE"
    return f"SELECT x.id, x.name, {g} FROM {_q(t)} x WHERE CASE {' '.join(whens)} ELSE FALSE END"


def name_given_mismatch_sql(world: ResolvedWorld, t: str, a: str, attr) -> str:
    """Entities whose categorical `a` (given a name part) is not a value its case allows for
    the word their name carries (a name derived from another entity's is not judged)."""
    return _drawn_only(world, t, _name_given_mismatch_sql(world, t, a, attr))


def _name_given_mismatch_sql(world: ResolvedWorld, t: str, a: str, attr) -> str:
    part = world.types[t].name.parts[attr.given.split(".", 1)[1]]
    A = f"x.{_q(a)}"
    whens = []
    for word, w in attr.cases.items():
        allowed = [stored_value(world, t, a)(v) for v, wt in w.items() if wt > 0]
        whens.append(f"WHEN regexp_matches(x.name, {_word_regex([word])}) THEN {A} NOT IN ({', '.join(map(sql_str, allowed))})")
    del part
    return f"SELECT x.id, x.name, {A} FROM {_q(t)} x WHERE CASE {' '.join(whens)} ELSE FALSE END"
