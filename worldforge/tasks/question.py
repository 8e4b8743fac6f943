"""What a question says, in the packs' vocabulary: the `question` block of a task record.

A person (or a model) who reads "every company headquartered in Zenhaven, founded before 1990
but not in the energy industry, with its founders and the population of its headquarters"
knows which kind of thing to list, which conditions to check, how they combine, and what each
column asks for. This block writes that reading down: the row type, each condition (the hops
it follows from a row, the attribute it tests, the value or range as the question states it,
whether it is negated), the columns (which entity, which attribute or list), the period, the
ranking and the date the answer holds at. It names only what the question names, never an
answer: no ids, no gold rows, no evidence pages. An agent that plans from it still has to find
every candidate and every value on the web (see `rollout/oracle.py`), and `tests/rollout/test_oracle.py`
checks that every value here is written in the question text.
"""

from __future__ import annotations

import datetime as dt

from ..language import BASE
from ..world import CategoricalAttr, Step, part_phrase
from .schema import Atom, Column, TaskSchema


def hop(s: TaskSchema, st: Step) -> dict:
    """One hop as the question implies it: the link it follows, from which type to which, and the
    words pages use for it: `label` on the page of the entity it leaves (an infobox row or a list
    section: 'Headquarters', 'Founders'), `back` on the page of the entity it reaches (the list of
    entities that link to it: 'Companies headquartered here'); `dated`: how the link is dated
    (history: tenures; event: one dated act; since: the current one of a succession)."""
    meta = s.page_meta
    if st.kind == "held":  # the entity a link names, written after the link on the source's page
        r, a = st.name.split(".")
        rs = s.relations[r]
        ref = note_ref(s, r, a)
        dated = "history" if rs.history else "event" if rs.date is not None else "since" if rs.since is not None else None
        return {"via": r, "kind": "held", "from": st.source, "to": st.target, "reverse": False, "current": False,
                "to_one": st.to_one, "label": meta[(rs.source, r)].label, "back": None, "dated": dated,
                "note": ref["note"], "note_label": ref["label"], "labelled": True}
    if st.kind == "lookup":
        label, back, dated = meta[(st.source, st.name)].label, None, None
        through = [hop(s, x) for x in lookup_links(s, st.source, st.name)]
        return {"via": st.name, "kind": st.kind, "from": st.source, "to": st.target, "reverse": False, "current": False,
                "to_one": True, "label": label, "back": None, "dated": None, "through": through}
    else:
        rs = s.relations[st.name]
        m = meta[(rs.source, st.name)]
        label, back = (m.inverse_label, m.label) if st.reverse else (m.label, m.inverse_label)
        dated = "history" if rs.history else "event" if rs.date is not None else "since" if rs.since is not None else None
    return {"via": st.name, "kind": st.kind, "from": st.source, "to": st.target, "reverse": st.reverse,
            "current": st.current, "to_one": st.to_one, "label": label, "back": back, "dated": dated}


def lookup_links(s: TaskSchema, t: str, a: str) -> list[Step]:
    """The links an entity-valued lookup follows (a city's country: its region, then the region's
    country), so a reader can walk it page by page, forwards or back."""
    spec = s.types[t].attributes[a]
    rs = s.relations[spec.via]
    forward = rs.source == t
    to_one = forward and rs.cardinality in ("1:1", "N:1") and not rs.history
    st = Step("rel", spec.via, t, rs.target if forward else rs.source, current=rs.since is not None,
              to_one=to_one or (not forward and rs.cardinality in ("1:1", "1:N")), reverse=not forward)
    if spec.attribute in ("id", "name"):
        return [st]
    return [st, *lookup_links(s, st.target, spec.attribute)]


def attribute(s: TaskSchema, t: str, a: str | None) -> dict:
    """An attribute's page label and unit ('Founded', 'Population' in 'people')."""
    if a is None or a in ("start", "end", "date"):
        return {}
    m = s.page_meta[(t, a)]
    return {"label": m.label, "unit": m.unit}


def _value(v):
    if isinstance(v, dt.date):
        return v.isoformat()
    if hasattr(v, "item"):  # numpy scalars
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def condition(s: TaskSchema, t: str, letter: str, atom: Atom, text: str, negated: bool) -> dict:
    """One constraint: follow `path` from a row, then test the entity reached (`entity`: it is the
    named one) or an attribute of it (`eq`: equals `value`; `range`: within [lo, hi], either end
    open)."""
    end = atom.end_type or t
    out = {"letter": letter, "text": text, "negated": negated, "scope": atom.scope, "path": [hop(s, st) for st in atom.path],
           "test": atom.test, "type": end, "attribute": atom.attr, **attribute(s, end, atom.attr)}
    if atom.test == "entity":
        out["value"] = s.a.name(atom.value)
    elif atom.test == "eq":
        out["value"] = _value(atom.value)
    else:
        lo, hi = atom.value
        out["value"] = [None if lo is None else _value(lo), None if hi is None else _value(hi)]
        out["kind"] = s.attr_kind(end, atom.attr)
    return out


def column(s: TaskSchema, c: Column, row_type: str, other_type: str | None) -> dict:
    """One column: from the row (`row`), the link's other end (`other`), the link itself (`link`:
    its start or end year, or its date) or the rank; then to-one `path` hops and `attribute` (None:
    the name), or an aggregate (`list` of names, `count`, `latest` year) over the hop `via`."""
    start = other_type if c.base == "other" else row_type
    end = c.path[-1].target if c.path else start
    out = {"name": c.name, "base": c.base, "path": [hop(s, st) for st in c.path], "attribute": c.attr, "kind": c.kind,
           "agg": c.agg, "via": hop(s, c.via) if c.via is not None else None, "type": end,
           **(attribute(s, end, c.attr) if c.base in ("row", "other") else {})}
    if c.only is not None:  # only the links whose own attribute has a value: its place among the link's attributes
        out["only"] = note_ref(s, c.via.name, c.only[0]) | {"value": c.only[1]}
    return out


def note_ref(s: TaskSchema, rel: str, a: str) -> dict:
    """Where a link's own attribute is written after the link: its place among the link's
    attributes (`note`), its page label, and whether pages write it after that label (a number
    or an entity: 'shirt number 9', 'supervisor Isaac Wilkinson'; a category alone: 'sales')."""
    notes = s.link_notes(rel)
    i = next(i for i, (x, _) in enumerate(notes) if x == a)
    return {"note": i, "label": notes[i][1], "labelled": not isinstance(s.relations[rel].attributes[a], CategoricalAttr)}


def _note_of(s: TaskSchema, c: Column, step: Step | None) -> dict:
    """A link's own attribute column: its page label and its place among the link's attributes
    (pages write them in that order after the link: '[Acme](...), sales (2001–2005)')."""
    if c.base != "link" or c.attr in ("start", "end", "date") or step is None:
        return {}
    return note_ref(s, step.name, c.attr)


def table_question(s: TaskSchema, task, texts: list[str], as_of: dt.date, home: tuple[Step, ...] | None) -> dict:
    """The reading of a table task's question (`build.TableTask`, its constraints as worded).
    `home`: how the world places an entity of the row type in a part of the world (a company in
    a country: its headquarters' country), i.e. what "in Braeria" means for it; the web's lists
    per part ("Companies in Braeria") follow the same chain."""
    c = task.cand
    letters = sorted(k for k in c.atoms if k in "ABC")
    conds = [condition(s, c.t, k, c.atoms[k], txt, f"!{k}" in c.combo) for k, txt in zip(letters, texts)]
    if "S" in c.atoms:
        conds.append(condition(s, c.t, "S", c.atoms["S"], texts[len(letters)], False))
    if "R" in c.atoms:  # a domain rule, read as a condition the rows must not meet
        conds.append(condition(s, c.t, "R", c.atoms["R"], texts[len(letters) + ("S" in c.atoms)], True) | {"rule": True})
    other = c.rows.step.target if c.rows.step is not None else None
    part = {"type": home[-1].target, "plural": s.plural(home[-1].target)} if home else None
    if home and s.language == BASE:  # how the web's per-part list of the row type is titled after its plural ("won by albums from {group}")
        part["phrase"] = part_phrase(s.world, home[0].source, home[0].name, s.plural(home[0].target))
    out = {"type": c.t, "plural": s.plural(c.t), "home": [hop(s, st) for st in home] if home else None, "part": part,
           "shape": c.shape, "combo": c.combo, "conditions": conds,
           "columns": [column(s, x, c.t, other) | _note_of(s, x, c.rows.step) for x in task.columns],
           "keys": [task.columns[i].name for i in task.keys],
           "as_of": as_of.isoformat()}
    if c.shape == "ranked":
        out["rank"] = {"attribute": c.rank_attr, "descending": c.rank_desc, "n": len(task.gold_rows), "kind": s.attr_kind(c.t, c.rank_attr),
                       **attribute(s, c.t, c.rank_attr)}
    if c.shape in ("timeline", "events"):
        out["links"] = hop(s, c.rows.step)
        out["anchor"] = s.a.name(c.anchor) if c.anchor else None
        out["period"] = [None if x is None else x.isoformat() for x in c.window] if c.window else None
        if c.note:  # only the links whose own attribute has this value ("jobs in sales")
            out["note_filter"] = note_ref(s, c.rows.step.name, c.note[0]) | {"value": c.note[1]}
        if c.tenure:  # the question's rule: only tenures under way on its date ("current"), or only ended ones
            out["tenure_rule"] = c.tenure
    return out


def chain_question(s: TaskSchema, task, as_of: dt.date) -> dict:
    """The reading of a multi-hop question (`multihop.MultiHopTask`): the named start, each hop
    (`hop`: forward, current holder, sole partner, reverse, lookup) and what to report."""
    return {"start": s.a.name(task.start), "start_type": s.a.type_of(task.start), "columns": list(task.columns),
            "hops": [hop(s, h.step) | {"hop": h.kind} for h in task.hops],
            "answer": {"attribute": task.answer_attr, "kind": task.answer_kind, "type": s.a.type_of(task.answer_entity),
                       **attribute(s, s.a.type_of(task.answer_entity), task.answer_attr)},
            "as_of": as_of.isoformat()}
