"""Deciding: whether a candidate meets each condition of the question (from what its list, its
article or a linked page states, or NEED while a page is wanted), keeping or rejecting it with
the value that settled it and where it was read, and reading each cell of a kept row. Functions
of the episode's research (`oracle.Research`)."""

from __future__ import annotations

import re

from ..tasks import evaluate_combo, parse_combo
from .reading import note_at, note_parts, plain_number, read_date, read_number
from .sources import NEED, Candidate, cell_meets, header_for, host, is_encyclopedia, norm, strip_links

_RULED = parse_combo("A&B&!C")



def condition_met(r, cond: dict, c: Candidate):
    """Whether a candidate meets one condition: True, False, or NEED; with what was read, for
    the telling: (value, where, source), source one of list, own, snippet, other."""
    path = cond["path"]
    r.agenda.why = ("check", cond["text"])
    if not path:
        cell = c.listed.get(header_for(c.listed, cond.get("label", "")))
        where, source = c.source, "list"
        listed = None
        if cell is not None and cond.get("negated") and cell_meets(cond, cell) and not cond.get("rule"):
            listed, cell = cell, None  # a list's value would exclude the row: confirm it on the row's own page first
            # (not for the question's rule: a list's date of death or closure settles that one is out)
        if cell is not None and cond["letter"] not in r.told.listing_said:
            r.told.listing_said.add(cond["letter"])
            r.told.note("from_listing", col=r.lang.mid(cond.get("label", "")))
        if cell is None:
            cell = r.entities.attribute(c.url, cond["label"], c.name, figure=cond["test"] != "eq",
                                  expect=cond["value"] if cond["test"] == "eq" and not cond.get("negated") else None,
                                  unit=cond.get("unit"), kind=_cond_kind(cond))
            if cell is NEED:
                return NEED, None
            where = r.told.voice.snippet_where() if r.values.from_snippet else r.told.voice.own_page()
            source = "snippet" if r.values.from_snippet else "own"
            if cell is None and listed is not None:  # its own pages do not say: the list's value stands
                cell, where, source = listed, c.source, "list"
        return cell_meets(cond, cell), (cell, where, source)
    ents = [(c.name, c.url)]
    for i, hop in enumerate(path):
        nxt = []
        need = False
        r.agenda.why = ("check", cond["text"]) if i == 0 else ("hop", cond["text"])
        for name, url in ents:
            if url is None:
                continue
            got = r.entities.targets(url, hop, name)
            if got is NEED:
                need = True
                continue
            if got is None:
                continue
            nxt += [(x.name, x.url) for x in got]
        if need:
            return NEED, None
        ents = nxt
    if cond["test"] == "entity":
        ok = any(norm(n) == norm(cond["value"]) for n, _ in ents)
        shown = "; ".join(dict.fromkeys(n for n, _ in ents)) or "—"
        return ok, (shown, r.told.voice.own_page() if len(path) == 1 else where_read(r, c.url), "own" if len(path) == 1 else "other")
    need = False
    seen_vals = []
    r.agenda.why = ("hop", cond["text"])
    for name, url in ents:  # (the value an equality expects is one prose may name: 'The form of government of X is republic')
        cell = r.entities.attribute(url, cond["label"], name, figure=cond["test"] != "eq", unit=cond.get("unit"), kind=_cond_kind(cond),
                              expect=cond["value"] if cond["test"] == "eq" and not cond.get("negated") else None)
        if cell is NEED:
            need = True
            continue
        seen_vals.append((cell, name, url))
        if cell is not None and cell_meets(cond, cell):
            return True, (f"{strip_links(cell)}", where_read(r, url), "other")
    if need:
        return NEED, None
    shown = "; ".join(strip_links(v) for v, _, _ in seen_vals if v) or "—"
    names = [n for _, n, _ in seen_vals]
    where = (where_read(r, seen_vals[0][2]) if len(names) == 1 else r.told.voice.names(names, limit=3)) if names else where_read(r, c.url)
    return False, (shown, where, "other")



def where_read(r, url: str | None) -> str:
    if not url:
        return "the list"
    p = r.pages.read.get(url)
    if p is not None and p.title:
        return f"{p.title} ({host(url)})" if not is_encyclopedia(url) else p.title
    return r.label_of(url)



def decide_candidate(r, c: Candidate):
    """Keep, reject, or NEED: every condition the candidate's list does not already settle.
    A candidate whose page never loads (and no other source stands in) is left out, and said so."""
    if c.url in r.pages.failed and r.page(c.url, ("check", c.name, "")) is None:
        r.told.note("unreadable", names=c.name)
        return None
    conds = {x["letter"]: x for x in r.q.get("conditions", [])}
    letters = [k for k in conds if k not in c.implied]
    vals: dict[str, object] = {}
    told: dict[str, tuple] = {}
    for k in letters:
        v, seen = condition_met(r, conds[k], c)
        vals[k] = v
        if seen is not None:
            told[k] = seen
    for k in c.implied:
        vals[k] = True
    # the conditions, the part ('in Braeria') and the question's rule ('living people only':
    # R holds of what it leaves out)
    verdict = evaluate_combo(_RULED, {"A": evaluate_combo(r.brief.combo, vals, NEED), "B": vals.get("S", True), "C": vals.get("R", False)},
                       NEED)
    if verdict is NEED:
        return NEED
    ok = verdict is True
    # the telling: the condition that decided it
    if ok:
        k = next((k for k in letters if vals.get(k) is True and k in told and not conds[k].get("negated")), None)
        if k:
            r.told.decisions.append(("keep", verdict_of(r, c, conds[k], told[k], True)))
        return True
    k = next((k for k in letters if k in told and ((vals[k] is False and not conds[k].get("negated"))
                                                   or (vals[k] is True and conds[k].get("negated")))), None)
    if k:
        move = "reject_excluded" if conds[k].get("negated") else "reject"
        r.told.decisions.append((move, verdict_of(r, c, conds[k], told[k], False)))
    return False



def verdict_of(r, c: Candidate, cond: dict, seen: tuple, kept: bool) -> dict:
    """What a decision tells: the value that decided it and where it was read, and for a
    number or a date tested against a bound, the value and the bound it lies nearest
    (the narration says how close it came)."""
    value, where, source = seen
    out = dict(name=c.name, cond=cond["text"], label=condition_label(r, cond), value=strip_links(str(value)), where=where,
               source=source, listing=source == "list", kept=kept)
    if cond.get("test") in ("eq", "entity") or not isinstance(cond.get("value"), (list, tuple)):
        return out
    lo, hi = cond["value"]
    if cond.get("kind") == "date":
        d = read_date(out["value"])
        num = d.year if d else None
        lo_n, hi_n = (int(lo[:4]) if lo else None), (int(hi[:4]) if hi else None)
        shown = {"lo": str(lo_n), "hi": str(hi_n)}
    else:
        num = read_number(out["value"])
        lo_n, hi_n = (float(lo) if lo is not None else None), (float(hi) if hi is not None else None)
        unit = r.lang.with_unit("", cond.get("unit"))
        shown = {side: f"{v:,.0f}{unit}" if v is not None and v == int(v) else f"{v:,}{unit}"
                 for side, v in (("lo", lo_n), ("hi", hi_n)) if v is not None}
    if num is None:
        return out
    sides = [(side, v) for side, v in (("lo", lo_n), ("hi", hi_n)) if v is not None]
    if not sides:
        return out
    side, limit = min(sides, key=lambda sv: abs(num - sv[1]))
    out.update(number=float(num), bound=(side, float(limit), shown[side]))
    return out



def condition_label(r, cond: dict) -> str:
    if cond["test"] == "entity":
        hop = cond["path"][-1]
        lab = hop["label"]
    else:
        lab = cond.get("label") or ""
    return r.lang.mid(lab)



def read_cell(r, col: dict, c: Candidate):
    base = col["base"]
    if base == "rank":
        return c.cells.get(col["name"], "")
    if base == "link":
        if col["attribute"] == "date":
            return c.date.isoformat() if c.date else "unknown"
        if col.get("note") is not None:  # the link's own attribute, written after it ('sales')
            parts = note_parts(c.span)
            return note_at(parts, col["note"], col.get("label") or "", col.get("labelled")) or "unknown"
        if c.span is None or c.span.start is None:
            return "unknown"
        if col["attribute"] == "start":
            return str(c.span.start)
        if c.span.open or c.span.end is None:  # the word the question asks for: 'present', '至今'
            return r.lang.present
        return str(c.span.end)
    if base == "other" and c.other is not None:
        name, url = c.other
    elif base == "row" and c.anchor is not None:
        name, url = c.anchor.name, c.anchor.url
    else:
        name, url = c.name, c.url
    r.agenda.why = ("row", col["name"])
    for hop in col["path"]:
        got = r.entities.targets(url, hop, name)
        r.agenda.why = ("linked", col["name"])
        if got is NEED:
            return NEED
        if not got:
            return "unknown"
        name, url = got[0].name, got[0].url
    if col.get("agg") == "count":
        n = r.entities.count_of(url, col["via"], name)
        r.agenda.why = ("linked", col["name"])
        return n if n is NEED else "unknown" if n is None else str(n)
    if col.get("agg"):
        items = r.entities.targets(url, col["via"], name)
        r.agenda.why = ("linked", col["name"])
        if items is NEED:
            return NEED
        items = items or []
        if col.get("only"):  # only the links whose own attribute has the value (a grant's principal investigator)
            only = col["only"]
            items = [i for i in items
                     if norm(note_at(note_parts(i.span), only["note"], only["label"], only.get("labelled")) or "") == norm(only["value"])]
        if col["agg"] == "latest":
            years = [i.span.start for i in items if i.span.start is not None]
            return str(max(years)) if years else "unknown"
        return "; ".join(sorted(i.name for i in items)) if items else "unknown"
    if col["attribute"] is None:
        return name
    listed = c.listed.get(header_for(c.listed, col.get("label", ""))) if not col["path"] and base != "other" else None
    cell = listed if listed is not None else r.entities.attribute(url, col["label"], name, figure=col["kind"] in ("number", "date"),
                                                                     unit=col.get("unit"), kind=col["kind"])
    if cell is NEED:
        return NEED
    if cell is None:
        return "unknown"
    return format_cell(cell, col["kind"])


def _cond_kind(cond: dict) -> str:
    """The kind of value a condition reads: a date or a figure for a range, else a category."""
    return "string" if cond["test"] == "eq" else "date" if cond.get("kind") == "date" else "number"


def format_cell(cell: str, kind: str) -> str:
    text = strip_links(cell)
    if kind == "date":
        d = read_date(text)
        return d.isoformat() if d else text
    if kind == "number":
        v = read_number(text)
        return plain_number(v) if v is not None else text
    if kind == "url":
        m = re.search(r"https?://\S+", text)
        return m.group(0) if m else text
    return text
