"""Plausibility audit of a stored world: measurements a model would learn from that no
invariant forbids. Every section is generic over the world's types, date attributes and
relations (no domain knowledge), so it measures worlds built from any pack:

    ages           age of each entity involved in each kind of event (min / median / max), and
                   events before the entity's start or after its end
    anniversaries  share of events that fall exactly on an anniversary (or the day) of another
                   date of the same entity, of the link, or of the linked entity
    lifespans      per type: how many entities ended, lifespans, the oldest one still going
    part_whole     a part's number against its whole's (declared `part_of`, and every numeric
                   attribute a type shares with an ancestor through parent relations)
    derived        counts and bounds declared against relations and attributes, and whether they agree
    requires       links that must be covered by another relation at the time, and whether they are
    names          name parts chosen by an attribute value, and whether names agree with it
    given          categories drawn by the case of another attribute (a product's kind by its
                   maker's industry), and whether each is a value its case allows; categories
                   with values of some years, and whether each exists at the entity's date;
                   stages (planned, under way, finished), whether each is what the entity's
                   dates say at as_of, and their shares beside the declared ones (`gap`, points)
    concurrency    the most links one entity holds at the same time, per history relation and side,
                   and the median it holds today (a club's squad)
    degrees        links per source and per target, and the shares of targets and of sources
                   without any (a season without a champion)
    locality       links whose two ends share the attribute a relation's `same` names (a rule,
                   or a bias with `share`)
    ratios         a figure drawn per unit of another (`per`: revenue per employee, passengers
                   per resident): the rate as stored (min, 1st percentile, median, 99th, max)

Packs declare thresholds (`audit:` in a pack); `audit_world` reports the ones broken."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..plumbing import quote_ident as _q
from .invariants import count_attr_sql, falls_sql, shared_value_pairs_sql, sql_str, unheld_sql, wild_sql
from .pack import AUDIT_SECTIONS, CategoricalAttr, CountAttr, DateAttr, LinkEntity, LinkNumber, NumericAttr
from .spec import ResolvedWorld, attribute_dtype

YEAR_DAYS = 365.2425
# Rows measured on fewer pairs than this are shown but never judged against a threshold
# (one anniversary among 30 pairs is 3% by chance).
DEFAULT_MIN_N = {"anniversaries": 200}
SECTIONS = AUDIT_SECTIONS


@dataclass
class AuditReport:
    world: str
    as_of: str
    sections: dict[str, list[dict]] = field(default_factory=dict)
    thresholds: list[dict] = field(default_factory=list)
    broken: list[dict] = field(default_factory=list)
    scopes: dict[str, frozenset[str]] = field(default_factory=dict)  # per pack: its types and relations
    unmatched: list[dict] = field(default_factory=list)  # thresholds that judge no row (see `unmatched`)

    def as_dict(self) -> dict:
        return {"world": self.world, "as_of": self.as_of, "sections": self.sections,
                "thresholds": self.thresholds, "broken": self.broken, "unmatched": self.unmatched}

    def rows(self, section: str, match: str = "*") -> list[dict]:
        return [r for r in self.sections.get(section, []) if fnmatch.fnmatchcase(r["subject"], match)]


def start_attr(world: ResolvedWorld, t: str) -> str | None:
    """The date an entity of type `t` begins (birth, founding): its lifecycle start, else its
    first date attribute."""
    et = world.types[t]
    lc = getattr(et, "lifecycle", None)
    if lc is not None:
        return lc.start
    return next((a for a, s in et.attributes.items() if isinstance(s, DateAttr)), None)


def end_attr(world: ResolvedWorld, t: str) -> str | None:
    lc = getattr(world.types[t], "lifecycle", None)
    return lc.end if lc is not None else None


def date_attrs(world: ResolvedWorld, t: str) -> list[str]:
    return [a for a in world.types[t].attributes if attribute_dtype(world, t, a) == "date"]


def drawn_dates(world: ResolvedWorld, t: str) -> list[str]:
    """The date attributes drawn for `t` itself: a date copied by a lookup or computed by a
    derived expression is its source's date (an anniversary of it by construction)."""
    return [a for a, s in world.types[t].attributes.items() if isinstance(s, DateAttr)]


def _lit(d) -> str:
    return f"DATE '{d.isoformat()}'"


def _anniv(e: str, d: str) -> str:
    """1 when date `e` is date `d` plus a whole number of years (0 included), else 0; NULL when either is."""
    return (f"CASE WHEN {e} IS NULL OR {d} IS NULL THEN NULL WHEN {e} >= {d} AND "
            f"{e} = CAST({d} + to_years(CAST(year({e}) - year({d}) AS INTEGER)) AS DATE) THEN 1 ELSE 0 END")


def _years(a: str, b: str) -> str:
    return f"datediff('day', {a}, {b}) / {YEAR_DAYS}"


class _Auditor:
    def __init__(self, con, world: ResolvedWorld):
        self.con = con
        self.world = world
        self.as_of = world.spec.as_of
        self.rels = world.relations
        self.parent_rel = {et.parent.relation: t for t, et in world.types.items() if et.parent}

    def q(self, sql: str):
        return self.con.execute(sql).fetchall()

    # ------------------------------------------------------------------ ages

    def ages(self) -> list[dict]:
        out = []
        w = self.world
        for t in w.types:
            s = start_attr(w, t)
            end = end_attr(w, t)
            # The entity's own events, against its own start.
            for a in date_attrs(w, t):
                if s is None or a == s:
                    continue
                out.append(self._age_row(f"{t}.{a}", t, "self", f"FROM {_q(t)} x", f"x.{_q(a)}", "x", s, end))
            # Its events against the start of the entities it links to without a date of the
            # link's own (dated links are measured below, by their own dates).
            for r, rs in self.rels.items():
                if rs.source != t or rs.target == t or rs.dated:
                    continue
                ts = start_attr(w, rs.target)
                if ts is None:
                    continue
                for a in date_attrs(w, t):
                    # The linked entity acts at this event only when the link is made then (`at`).
                    acts = rs.at is not None and rs.at.ref == f"source.{a}"
                    out.append(self._age_row(f"{t}.{a}", rs.target, f"via {r}",
                                             f"FROM {_q(t)} x JOIN {_q('rel_' + r)} e ON e.source = x.id "
                                             f"JOIN {_q(rs.target)} y ON y.id = e.target", f"x.{_q(a)}", "y", ts,
                                             end_attr(w, rs.target) if acts else None))
        for r, rs in self.rels.items():
            if r in self.parent_rel:
                continue
            frm = (f"FROM {_q('rel_' + r)} e JOIN {_q(rs.source)} s ON s.id = e.source "
                   f"JOIN {_q(rs.target)} u ON u.id = e.target")
            events = [("valid_from", "e.valid_from")]
            if rs.history:
                events += [("valid_to", "e.valid_to"),
                           ("current", f"CASE WHEN e.valid_to IS NULL AND e.valid_from IS NOT NULL THEN {_lit(self.as_of)} END")]
            for side, alias, typ in (("source", "s", rs.source), ("target", "u", rs.target)):
                st = start_attr(w, typ)
                if st is None:
                    continue
                for ev, col in events:
                    out.append(self._age_row(f"{r}.{ev}", typ, side, frm, col, alias, st, end_attr(w, typ)))
        return [r for r in out if r["n"]]

    def _age_row(self, event: str, typ: str, who: str, frm: str, col: str, alias: str, start: str, end: str | None) -> dict:
        age = _years(f"{alias}.{_q(start)}", col)
        after_end = f"count(*) FILTER (WHERE {col} > {alias}.{_q(end)})" if end else "NULL"
        n, lo, med, hi, before, after = self.q(
            f"SELECT count({age}), min({age}), quantile_cont({age}, 0.5), max({age}), "
            f"count(*) FILTER (WHERE {col} < {alias}.{_q(start)}), {after_end} {frm}")[0]
        return {"subject": f"{event} @ {who} {typ}", "event": event, "entity": f"{who} {typ}", "reference": f"{typ}.{start}",
                "n": n, "min": _r(lo), "median": _r(med), "max": _r(hi), "before_start": before, "after_end": after}

    # ------------------------------------------------------------------ anniversaries

    def anniversaries(self) -> list[dict]:
        w = self.world
        out = []
        for t in w.types:
            ds = drawn_dates(w, t)
            pairs = [(f"{t}.{e}", f"{t}.{d}", f"x.{_q(e)}", f"x.{_q(d)}") for e in ds for d in ds if e != d]
            out += self._pairs(f"FROM {_q(t)} x", pairs)
        for r, rs in self.rels.items():
            sd, td = drawn_dates(w, rs.source), drawn_dates(w, rs.target)
            frm = (f"FROM {_q('rel_' + r)} e JOIN {_q(rs.source)} s ON s.id = e.source "
                   f"JOIN {_q(rs.target)} u ON u.id = e.target")
            pairs = []
            dated = r not in self.parent_rel
            # A link ends when one of its entities ends: its end on that day is no coincidence.
            ends = {("source", end_attr(w, rs.source)), ("target", end_attr(w, rs.target))}
            for ev in ("valid_from", "valid_to") if dated else ():
                pairs += [(f"{r}.{ev}", f"source {rs.source}.{d}", f"e.{ev}", f"s.{_q(d)}") for d in sd
                          if not (ev == "valid_to" and ("source", d) in ends)]
                pairs += [(f"{r}.{ev}", f"target {rs.target}.{d}", f"e.{ev}", f"u.{_q(d)}") for d in td
                          if not (ev == "valid_to" and ("target", d) in ends)]
            if dated:
                pairs.append((f"{r}.valid_to", f"{r}.valid_from", "e.valid_to", "e.valid_from"))
            pairs += [(f"{rs.source}.{e}", f"{r} target {rs.target}.{d}", f"s.{_q(e)}", f"u.{_q(d)}") for e in sd for d in td]
            pairs += [(f"{rs.target}.{e}", f"{r} source {rs.source}.{d}", f"u.{_q(e)}", f"s.{_q(d)}") for e in td for d in sd]
            out += self._pairs(frm, pairs)
        return sorted((r for r in out if r["n"]), key=lambda r: -r["share"])

    def _pairs(self, frm: str, pairs: list[tuple[str, str, str, str]]) -> list[dict]:
        out = []
        for i in range(0, len(pairs), 40):  # bounded statement size
            chunk = pairs[i:i + 40]
            cols = ", ".join(f"count({_anniv(e, d)}), sum({_anniv(e, d)})" for _, _, e, d in chunk)
            row = self.q(f"SELECT {cols} {frm}")[0]
            for j, (ev, ref, _, _) in enumerate(chunk):
                n, hits = row[2 * j], row[2 * j + 1] or 0
                out.append({"subject": f"{ev} ~ {ref}", "event": ev, "reference": ref, "n": n, "hits": int(hits),
                            "share": round(hits / n, 4) if n else 0.0})
        return out

    # ------------------------------------------------------------------ lifespans

    def lifespans(self) -> list[dict]:
        w = self.world
        out = []
        cohort = _lit(self.as_of.replace(year=self.as_of.year - 85))
        for t in w.types:
            s = start_attr(w, t)
            if s is None:
                continue
            e = end_attr(w, t)
            S = _q(s)
            if e:
                E = _q(e)
                n, ended, lo, med, hi, oldest, c_n, c_end = self.q(
                    f"SELECT count({S}), count({E}), min({_years(S, E)}), quantile_cont({_years(S, E)}, 0.5), "
                    f"max({_years(S, E)}), max({_years(S, _lit(self.as_of))}) FILTER (WHERE {E} IS NULL), "
                    f"count(*) FILTER (WHERE {S} < {cohort}), count({E}) FILTER (WHERE {S} < {cohort}) FROM {_q(t)}")[0]
            else:
                n, oldest, c_n = self.q(f"SELECT count({S}), max({_years(S, _lit(self.as_of))}), "
                                        f"count(*) FILTER (WHERE {S} < {cohort}) FROM {_q(t)}")[0]
                ended, lo, med, hi, c_end = 0, None, None, None, 0
            out.append({"subject": t, "type": t, "start": s, "end": e, "n": n, "ended": ended,
                        "ended_share": round(ended / n, 4) if n else 0.0, "min": _r(lo), "median": _r(med), "max": _r(hi),
                        "oldest_going": _r(oldest), "cohort_85y_n": c_n,
                        "cohort_85y_ended_share": round(c_end / c_n, 4) if c_n else None})
        return out

    # ------------------------------------------------------------------ part / whole

    def part_whole(self) -> list[dict]:
        w = self.world
        out = []
        seen = set()
        for t, et in w.types.items():
            for a, s in et.attributes.items():
                po = getattr(s, "part_of", None)
                if po is None:
                    continue
                path, whole_t = self._via_path(t, po.via)
                seen.add((t, a, whole_t, po.attribute))
                out.append(self._ratio(t, a, path, whole_t, po.attribute, declared=True))
        # Generic: numbers a type shares (by name) with an ancestor through parent relations.
        for t, et in w.types.items():
            path, cur = [], t
            while w.types[cur].parent is not None and len(path) < 8:
                p = w.types[cur].parent
                path.append((p.relation, False))
                cur = p.type
                for a, s in et.attributes.items():
                    ws = w.types[cur].attributes.get(a)
                    if isinstance(s, NumericAttr) and isinstance(ws, NumericAttr) and (t, a, cur, a) not in seen:
                        seen.add((t, a, cur, a))
                        out.append(self._ratio(t, a, list(path), cur, a, declared=False))
        return out

    def _via_path(self, t: str, via: str) -> tuple[list[tuple[str, bool]], str]:
        """(relation hops, whole type) of a part_of `via`: a to-one relation, or an entity-valued
        lookup attribute (followed through the relations its lookup chain uses)."""
        w = self.world
        if via in self.rels:
            return [(via, False)], self.rels[via].target
        hops, cur, attr = [], t, via
        while True:
            s = w.types[cur].attributes[attr]
            hops.append((s.via, False))
            cur = self.rels[s.via].target
            if s.attribute == "id":
                return hops, cur
            attr = s.attribute

    @staticmethod
    def _joined(t: str, path, other_t: str) -> str:
        """FROM rows of t (x) joined along `path`'s relations to the entity they lead to (w)."""
        joins, cur = [], "x.id"
        for i, (r, _) in enumerate(path):
            joins.append(f"JOIN {_q('rel_' + r)} e{i} ON e{i}.source = {cur}")
            cur = f"e{i}.target"
        return f"FROM {_q(t)} x {' '.join(joins)} JOIN {_q(other_t)} w ON w.id = {cur}"

    def _ratio(self, t, a, path, whole_t, wa, declared: bool) -> dict:
        frm = self._joined(t, path, whole_t)
        n, each, over = self.q(f"SELECT count(x.{_q(a)}), max(x.{_q(a)} / nullif(w.{_q(wa)}, 0)), "
                               f"count(*) FILTER (WHERE x.{_q(a)} > w.{_q(wa)}) {frm}")[0]
        (sum_max, sum_over), = self.q(
            f"SELECT max(s / nullif(wv, 0)), count(*) FILTER (WHERE s > wv) FROM "
            f"(SELECT w.id, any_value(w.{_q(wa)}) AS wv, sum(x.{_q(a)}) AS s {frm} GROUP BY w.id)")
        return {"subject": f"{t}.{a} / {whole_t}.{wa}", "part": f"{t}.{a}", "whole": f"{whole_t}.{wa}",
                "via": ".".join(r for r, _ in path), "declared": declared, "n": n, "max_ratio": _r(each, 3),
                "parts_over_whole": over, "max_sum_ratio": _r(sum_max, 3), "wholes_over_sum": sum_over}

    def locality(self) -> list[dict]:
        out = []
        for r, rs in self.rels.items():
            if rs.same is None:
                continue
            wild = wild_sql(self.world, rs)  # links of a source that matches any target ("any field") are not measured
            n, same = self.q(f"SELECT count(*), count(*) FILTER (WHERE s.{_q(rs.same.source)} = u.{_q(rs.same.target)}) "
                             f"FROM {_q('rel_' + r)} e JOIN {_q(rs.source)} s ON s.id = e.source "
                             f"JOIN {_q(rs.target)} u ON u.id = e.target WHERE true{wild}")[0]
            out.append({"subject": f"{r} same {rs.same.target}", "relation": r, "n": n, "same": same,
                        "share": round(same / n, 4) if n else 1.0})
        return out

    def ratios(self) -> list[dict]:
        out = []
        for t, et in self.world.types.items():
            for a, s in et.attributes.items():
                per = getattr(s, "per", None)
                if per is None:
                    continue
                if per.via is None:
                    frm, other_t, other = f"FROM {_q(t)} x", t, f"x.{_q(per.attribute)}"
                else:
                    path, other_t = self._via_path(t, per.via)
                    frm, other = self._joined(t, path, other_t), f"w.{_q(per.attribute)}"
                rate = f"x.{_q(a)} * {per.unit!r} / nullif({other}, 0)"
                n, lo, p01, mid, p99, hi = self.q(
                    f"SELECT count({rate}), min({rate}), quantile_cont({rate}, 0.01), median({rate}), "
                    f"quantile_cont({rate}, 0.99), max({rate}) {frm}")[0]
                out.append({"subject": f"{t}.{a} per {f'{int(per.unit):,}' if per.unit == int(per.unit) else f'{per.unit:g}'} {other_t}.{per.attribute}", "n": n,
                            **{k: _r(v, 4) for k, v in (("min", lo), ("p01", p01), ("median", mid), ("p99", p99), ("max", hi))}})
        return out

    # ------------------------------------------------------------------ derived and requires

    def derived(self) -> list[dict]:
        out = []
        for t, et in self.world.types.items():
            for a, s in et.attributes.items():
                if isinstance(s, CountAttr):
                    rs = self.rels[s.relation]
                    side = s.side_for(t, rs)
                    key, other = ("target", "source") if side == "in" else ("source", "target")
                    cur = " AND valid_to IS NULL" if s.current else ""
                    k = count_attr_sql(s, other)
                    n, agree = self.q(
                        f"SELECT count(*), count(*) FILTER (WHERE coalesce(x.{_q(a)}, -1) = coalesce(c.k, 0)) FROM {_q(t)} x "
                        f"LEFT JOIN (SELECT {key} AS id, {k} AS k FROM {_q('rel_' + s.relation)} "
                        f"WHERE TRUE{cur} GROUP BY {key}) c ON c.id = x.id")[0]
                    what = f"count {s.relation}" if s.sum is None else f"sum {s.relation}.{s.sum}"
                    out.append({"subject": f"{t}.{a} = {what}", "n": n, "agree": agree,
                                "share": round(agree / n, 4) if n else 1.0})
                if isinstance(s, NumericAttr) and s.at_most:
                    n, agree = self.q(f"SELECT count(*), count(*) FILTER (WHERE NOT ({_q(a)} > {_q(s.at_most)})) "
                                      f"FROM {_q(t)} WHERE {_q(a)} IS NOT NULL AND {_q(s.at_most)} IS NOT NULL")[0]
                    out.append({"subject": f"{t}.{a} <= {t}.{s.at_most}", "n": n, "agree": agree,
                                "share": round(agree / n, 4) if n else 1.0})
        return out

    def requires(self) -> list[dict]:
        from .invariants import requires_uncovered_sql

        out = []
        for r, rs in self.rels.items():
            if rs.requires is None:
                continue
            n = self.q(f"SELECT count(*) FROM {_q('rel_' + r)}")[0][0]
            bad = self.q(f"SELECT count(*) FROM ({requires_uncovered_sql(self.world, r, rs)})")[0][0]
            out.append({"subject": f"{r} requires {rs.requires.path}", "n": n, "agree": n - bad,
                        "share": round((n - bad) / n, 4) if n else 1.0})
        return out

    def names(self) -> list[dict]:
        from .invariants import name_given_mismatch_sql, name_part_mismatch_sql

        out = []
        for t, et in self.world.types.items():
            for a, s in et.attributes.items():
                if isinstance(s, CategoricalAttr) and s.given and s.given.startswith("name."):
                    n = self.q(f"SELECT count(*) FROM {_q(t)}")[0][0]
                    bad = self.q(f"SELECT count(*) FROM ({name_given_mismatch_sql(self.world, t, a, s)})")[0][0]
                    out.append({"subject": f"{t}.{a} given {s.given}", "n": n, "agree": n - bad,
                                "share": round((n - bad) / n, 4) if n else 1.0})
            for p, part in et.name.parts.items():
                if part.given is None and part.via is None:
                    continue
                n = self.q(f"SELECT count(*) FROM {_q(t)}")[0][0]
                bad = self.q(f"SELECT count(*) FROM ({name_part_mismatch_sql(self.world, t, p, part)})")[0][0]
                what = f"given {part.given}" if part.given else f"from {part.via}"
                out.append({"subject": f"{t}.name.{p} {what}", "n": n, "agree": n - bad,
                            "share": round((n - bad) / n, 4) if n else 1.0})
            dn = et.name.derived
            if dn is not None:  # a linked entity's name holds the name it derives from (a chain's first)
                R, T, U = _q("rel_" + dn.via), _q(t), _q(self.rels[dn.via].target)
                n, agree = self.q(
                    f"WITH RECURSIVE up(id, anc, depth) AS (SELECT source, target, 1 FROM {R} UNION ALL "
                    f"SELECT u.id, r.target, u.depth + 1 FROM up u JOIN {R} r ON r.source = u.anc WHERE u.depth < 64), "
                    f"root AS (SELECT id, arg_max(anc, depth) AS anc FROM up GROUP BY id) "
                    f"SELECT count(*), count(*) FILTER (WHERE strpos(e.name, o.name) > 0) FROM root "
                    f"JOIN {T} e ON e.id = root.id JOIN {U} o ON o.id = root.anc")[0]
                out.append({"subject": f"{t}.name derived from {dn.via}", "n": n, "agree": agree,
                            "share": round(agree / n, 4) if n else 1.0})
        return out

    def given(self) -> list[dict]:
        from .invariants import dated_category_mismatch_sql, given_case_sql

        out = []
        for t, et in self.world.types.items():
            for a, s in et.attributes.items():
                if isinstance(s, CategoricalAttr) and s.given and not s.given.startswith("name.") and s.cases:
                    n, agree = self.q(f"SELECT count(ok), count(*) FILTER (WHERE ok) FROM "
                                      f"(SELECT {given_case_sql(self.world, t, a, s)} AS ok FROM {_q(t)} x)")[0]
                    out.append({"subject": f"{t}.{a} given {s.given}", "n": n, "agree": agree,
                                "share": round(agree / n, 4) if n else 1.0})
                if isinstance(s, CategoricalAttr) and s.stages is not None:
                    out.append(self._stages(t, a, s))
                if isinstance(s, CategoricalAttr) and s.dated_by is not None:
                    n = self.q(f"SELECT count({_q(a)}) FROM {_q(t)}")[0][0]
                    bad = self.q(f"SELECT count(*) FROM ({dated_category_mismatch_sql(self.world, t, a, s)})")[0][0]
                    out.append({"subject": f"{t}.{a} by {s.dated_by}", "n": n, "agree": n - bad,
                                "share": round((n - bad) / n, 4) if n else 1.0})
        return out

    def _stages(self, t: str, a: str, s: CategoricalAttr) -> dict:
        """A stage (`pack.Stages`): the entities whose stage is what their dates say at as_of
        (all of them), and each stage's share beside the declared one (`gap`: the largest
        difference, in points)."""
        from .invariants import stage_mismatch_sql, stored_value

        n = self.q(f"SELECT count(*) FROM {_q(t)}")[0][0]
        bad = self.q(f"SELECT count(*) FROM ({stage_mismatch_sql(self.world, t, a, s)})")[0][0]
        av = stored_value(self.world, t, a)
        w = s.weights()
        counts = dict(self.q(f"SELECT {_q(a)}, count(*) FROM {_q(t)} GROUP BY 1"))
        declared = {v: round(x / sum(w.values()), 4) for v, x in w.items()}
        measured = {v: round(counts.get(av(v), 0) / n, 4) if n else 0.0 for v in w}
        gap = max((abs(measured[v] - declared[v]) for v in w), default=0.0)
        return {"subject": f"{t}.{a} stages of {s.stages.start} and {s.stages.end}", "n": n, "agree": n - bad,
                "share": round((n - bad) / n, 4) if n else 1.0, "declared": declared, "measured": measured,
                "gap": round(100 * gap, 1)}

    # ------------------------------------------------------------------ concurrency and degrees

    def concurrency(self) -> list[dict]:
        out = []
        for r, rs in self.rels.items():
            if not rs.history:
                continue
            R = _q("rel_" + r)
            for side in ("target", "source"):
                (mx, many, n), = self.q(
                    f"WITH ev AS (SELECT {side} AS k, valid_from AS d, 1 AS delta FROM {R} WHERE valid_from IS NOT NULL "
                    f"UNION ALL SELECT {side}, valid_to, -1 FROM {R} WHERE valid_to IS NOT NULL), "
                    f"run AS (SELECT k, sum(delta) OVER (PARTITION BY k ORDER BY d, delta ROWS UNBOUNDED PRECEDING) AS c FROM ev) "
                    f"SELECT coalesce(max(c), 0), count(DISTINCT k) FILTER (WHERE c >= 2), count(DISTINCT k) FROM run")
                typ = rs.target if side == "target" else rs.source
                # Links open today per entity of the side's type, none counted as 0 (a club's squad).
                (now,), = self.q(f"SELECT coalesce(median(coalesce(c, 0)), 0) FROM {_q(typ)} u LEFT JOIN "
                                 f"(SELECT {side} AS k, count(*) c FROM {R} WHERE valid_to IS NULL GROUP BY {side}) e ON e.k = u.id")
                out.append({"subject": f"{r} per {side} {typ}", "relation": r, "side": side, "n": n,
                            "max_concurrent": int(mx), "with_concurrent": many, "now_median": float(now)})
        return out

    def degrees(self) -> list[dict]:
        out = []
        for r, rs in self.rels.items():
            R = _q("rel_" + r)
            links, o_max, o_p99, i_max, i_p99 = self.q(
                f"SELECT (SELECT count(*) FROM {R}), "
                f"(SELECT max(n) FROM (SELECT count(*) n FROM {R} GROUP BY source)), "
                f"(SELECT quantile_disc(n, 0.99) FROM (SELECT count(*) n FROM {R} GROUP BY source)), "
                f"(SELECT max(n) FROM (SELECT count(DISTINCT source) n FROM {R} GROUP BY target)), "
                f"(SELECT quantile_disc(n, 0.99) FROM (SELECT count(DISTINCT source) n FROM {R} GROUP BY target))")[0]
            n_t, none = self.q(f"SELECT count(*), count(*) FILTER (WHERE e.target IS NULL) FROM {_q(rs.target)} u "
                               f"LEFT JOIN (SELECT DISTINCT target FROM {R}) e ON e.target = u.id")[0]
            n_s, s_none = self.q(f"SELECT count(*), count(*) FILTER (WHERE e.source IS NULL) FROM {_q(rs.source)} u "
                                 f"LEFT JOIN (SELECT DISTINCT source FROM {R}) e ON e.source = u.id")[0]
            out.append({"subject": r, "relation": r, "n": links, "out_max": o_max or 0, "out_p99": o_p99 or 0,
                        "in_max": i_max or 0, "in_p99": i_p99 or 0,
                        "targets_without": round(none / n_t, 4) if n_t else 0.0,
                        "sources_without": round(s_none / n_s, 4) if n_s else 0.0})
        return out


    def link_values(self) -> list[dict]:
        """A link's own attributes (a job's department, a shirt number): how many links have one,
        a number's median, p90 and max and its clashes (links to one target overlapping in time
        with one value; 0 when `distinct`), a category's commonest value's share, an entity's links
        whose entity held no covering link then (`unheld`)."""
        out = []
        for r, rs in self.rels.items():
            R = _q("rel_" + r)
            for a, attr in rs.attributes.items():
                A = _q(a)
                row: dict = {"subject": f"{r}.{a}", "relation": r, "attribute": a}
                n, filled = self.q(f"SELECT count(*), count({A}) FROM {R}")[0]
                row |= {"n": n, "filled": round(filled / n, 4) if n else 1.0}
                if isinstance(attr, LinkEntity):  # links whose entity held no covering link then (or is the source)
                    (row["unheld"],), = self.q(f"SELECT count(*) FROM {R} e WHERE {unheld_sql(self.world, r, a)}")
                elif isinstance(attr, LinkNumber):
                    med, p90, mx = self.q(f"SELECT median({A}), quantile_cont({A}, 0.9), max({A}) FROM {R}")[0]
                    by = attr.distinct_by or "target"  # pairs of links of one target (or source) at once with one number
                    (clashes,), = self.q(f"SELECT count(*) FROM {shared_value_pairs_sql(R, a, once=True, by=by)}")
                    row |= {"median": _r(med), "p90": _r(p90), "max": _r(mx), "clashes": clashes}
                else:
                    (top,), = self.q(f"SELECT coalesce(max(c), 0) FROM (SELECT count(*) c FROM {R} WHERE {A} IS NOT NULL GROUP BY {A})")
                    row["top_share"] = round(top / filled, 4) if filled else 0.0
                    one = attr.one_per_target
                    if one is not None:  # pairs of links to one target holding the value at once; targets with none
                        lit = sql_str(attr.translation(self.world.spec.language).get(one.value, one.value))
                        (clashes,), = self.q(f"SELECT count(*) FROM {shared_value_pairs_sql(R, a, once=True)} WHERE x.{A} = {lit}")
                        (without,), = self.q(f"SELECT count(*) FROM (SELECT target FROM {R} GROUP BY target "
                                             f"HAVING count(*) FILTER (WHERE {A} = {lit}) = 0)")
                        row |= {"clashes": clashes, "targets_without": without}
                    if attr.rises:  # a source's value lower than on its link before (by start date): 0
                        tr = attr.translation(self.world.spec.language)
                        (falls,), = self.q(f"SELECT count(*) FILTER (WHERE falls) FROM "
                                           f"({falls_sql(R, a, [tr.get(v, v) for v in attr.rises])})")
                        row["falls"] = falls
                        row["early_top"] = self._early_top(rs, R, A, tr.get(attr.rises[-1], attr.rises[-1]), attr.seniority)
                out.append(row)
        return out


    def _early_top(self, rs, R: str, A: str, top: str, seniority: str | None) -> float:
        """The share of a rising category's top value held on links that start in the first
        quarter of standing (the source's age then, or the time since its first link of the
        relation: `seniority`; without it, age where the source has a lifecycle)."""
        lc = self.world.types[rs.source].lifecycle
        if seniority == "age" or (seniority is None and lc is not None):
            sen, join = f"date_diff('day', s.{_q(lc.start)}, e.valid_from)", f" JOIN {_q(rs.source)} s ON s.id = e.source"
        else:
            sen, join = "date_diff('day', min(e.valid_from) OVER (PARTITION BY e.source), e.valid_from)", ""
        (early, n), = self.q(f"WITH l AS (SELECT e.{A} AS v, {sen} AS sen FROM {R} e{join} WHERE e.valid_from IS NOT NULL), "
                             f"q AS (SELECT quantile_cont(sen, 0.25) AS q1 FROM l) "
                             f"SELECT count(*) FILTER (WHERE sen <= q1), count(*) FROM l, q WHERE v = {sql_str(top)}")
        return round(early / n, 4) if n else 0.0


def _r(v, nd: int = 1):
    return None if v is None else round(float(v), nd)


def declared_thresholds(world: ResolvedWorld) -> list[dict]:
    out = []
    for pname, pack in world.packs.items():
        for th in getattr(pack, "audit", []):
            d = th.model_dump(exclude_none=True)
            d["pack"] = pname
            out.append(d)
    return out


def pack_scopes(world: ResolvedWorld) -> dict[str, frozenset[str]]:
    """Per pack, the names its audit thresholds may judge: its types and the relations it
    defines (its types' parent relations included)."""
    out = {}
    for pname, pack in world.packs.items():
        names = set(pack.types) | set(pack.relations)
        names |= {et.parent.relation for et in pack.types.values() if et.parent is not None}
        out[pname] = frozenset(names)
    return out


_WORD = re.compile(r"\w+")


def _in_scope(report: AuditReport, th: dict, rows: list[dict]) -> list[dict]:
    scope = report.scopes.get(th["pack"])
    return [r for r in rows if scope is None or not scope.isdisjoint(_WORD.findall(r["subject"]))]


def unmatched(report: AuditReport) -> list[dict]:
    """The declared thresholds whose `match` names no row of their section about their pack's
    types and relations: a threshold that judges nothing holds whatever the world does (a typo in
    `match`, a renamed relation), so it is an error, not a pass. Each entry carries the subjects the
    section does have for that pack (what `match` may name)."""
    out = []
    for th in report.thresholds:
        if _in_scope(report, th, report.rows(th["section"], th.get("match", "*"))):
            continue
        subjects = [r["subject"] for r in _in_scope(report, th, report.rows(th["section"]))]
        out.append({"pack": th["pack"], "section": th["section"], "metric": th["metric"], "match": th.get("match", "*"),
                    "subjects": subjects})
    return out


def judge(report: AuditReport) -> list[dict]:
    """The declared thresholds the report breaks: one entry per (threshold, row). A pack's
    threshold judges only the rows about its own types and relations: another pack's rows are
    that pack's to judge, by its own thresholds."""
    broken = []
    for th in report.thresholds:
        min_n = th.get("min_n", DEFAULT_MIN_N.get(th["section"], 1))
        for row in _in_scope(report, th, report.rows(th["section"], th.get("match", "*"))):
            v = row.get(th["metric"])
            if v is None or row.get("n", min_n) < min_n:
                continue
            if ("max" in th and v > th["max"]) or ("min" in th and v < th["min"]):
                broken.append({"pack": th["pack"], "section": th["section"], "subject": row["subject"],
                               "metric": th["metric"], "value": v, "min": th.get("min"), "max": th.get("max"),
                               "n": row.get("n")})
    return broken


def audit_connection(con, world: ResolvedWorld, sections: tuple[str, ...] = SECTIONS) -> AuditReport:
    """Measure an open world store (see the module docstring)."""
    a = _Auditor(con, world)
    report = AuditReport(world=world.spec.name, as_of=world.spec.as_of.isoformat())
    for s in sections:
        report.sections[s] = getattr(a, s)()
    report.thresholds = declared_thresholds(world)
    report.scopes = pack_scopes(world)
    report.broken = judge(report)
    report.unmatched = unmatched(report)
    return report


def audit_world(path: str | Path, sections: tuple[str, ...] = SECTIONS) -> AuditReport:
    """The plausibility report of a stored world, with the pack thresholds it breaks."""
    from .store import open_world

    info = open_world(path)
    with info.connect() as con:
        return audit_connection(con, info.world, sections)
