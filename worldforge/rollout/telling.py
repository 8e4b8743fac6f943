"""What the research says about its own work, as narration events (`narrator.Event`): its plan
and where the candidates will come from, what the pages opened this turn are for, this turn's
observations and decisions and where they leave the task, what the kept rows still lack.
Functions of the episode's research (`oracle.Research`)."""

from __future__ import annotations

import re
from collections import Counter

from ..language import BASE
from ..records import Shape
from .narrator import Event
from .sources import BackList, Candidate, Named, PartList, PartsOf, Source, Union, norm

_PAGE_NO = re.compile(r"[?&]page=(\d+)")


def open_events(r, opens: list[str]) -> list[Event]:
    """What the pages opened this turn are for, one event per purpose."""
    groups: dict[tuple[str, str], list[str]] = {}
    cols: dict[tuple[str, str], list[str]] = {}
    for u in opens:
        kind, name, what = r.agenda.wants.get(u, ("copy", "", ""))
        if kind == "copy":
            continue
        key = (kind, what if kind in ("hop", "linked", "walk", "check", "rank", "source") else "")
        groups.setdefault(key, []).append(name)
        if kind == "row" and what:
            cols.setdefault(key, []).append(what)
    out = []
    v = r.told.voice
    q = r.lang.quote
    for (kind, what), names in groups.items():
        ns = v.names(list(dict.fromkeys(names)))
        if kind == "list":
            nums = [m.group(1) for u in opens if r.agenda.wants.get(u, ("",))[0] == "list" for m in [_PAGE_NO.search(u)] if m]
            out.append(Event("open_list", dict(names=ns, page=nums[0] if len(nums) == 1 else "", count_names=len(set(names)))))
            continue
        elif kind == "check" and (checking(r) or what):
            out.append(Event("open_candidates", dict(names=ns, what=checking(r) or q(what), count_names=len(set(names)))))
        elif kind == "hop":
            out.append(Event("open_hop", dict(names=ns, cond=q(what), count_names=len(set(names)))))
        elif kind == "linked":
            out.append(Event("open_linked", dict(names=ns, col=q(what), count_names=len(set(names)))))
        elif kind == "rank":  # a candidate's figure for the ranking
            out.append(Event("open_rows", dict(names=ns, cols=q(r.lang.mid(what)), count_names=len(set(names)))))
        elif kind == "source":  # pages read for the candidates: a part's article or a list that names them
            out.append(Event("open_source", dict(names=ns, what=what, count_names=len(set(names)))))
        elif kind == "entity":
            out.append(Event("open_entity", dict(names=ns, count_names=len(set(names)))))
        elif kind == "walk":
            out.append(Event("open_walk", dict(names=ns, label=what, count_names=len(set(names)))))
        else:  # a row's columns: the ones its cells still lack
            lack = lacking(r, names) or list(dict.fromkeys(cols.get((kind, what), [])))
            out.append(Event("open_rows", dict(names=ns, cols=v.names(lack, limit=3) if lack else "", count_names=len(set(names)))))
    return out



def lacking(r, names: list[str]) -> list[str]:
    """The columns the kept rows of `names` still lack, commonest first."""
    cols = [c["name"] for c in r.q.get("columns", []) if c.get("base") != "rank"]
    want = {norm(n) for n in names}
    miss: Counter = Counter()
    for c in r.candidates or []:
        for row in (c.links if c.links is not None else [c]):
            if norm(row.name) in want:
                miss.update(n for n in cols if n not in row.cells)
    return [n for n, _ in miss.most_common()]



def checking(r) -> str:
    implied = r.source.implied if r.source is not None else frozenset()
    texts = [c["text"] for c in r.q.get("conditions", []) if c["letter"] not in implied and not c.get("scope")
             and not c.get("rule")]
    if not texts:
        return ""
    return r.lang.join(r.lang.quote(t) for t in texts[:2])



def plan_event(r) -> Event:
    q, v = r.q, r.told.voice
    if r.brief.kind == Shape.MULTIHOP:
        return Event("plan_chain", dict(n=len(q["hops"]), start=q["start"]))
    cols = [c["name"] for c in q.get("columns", [])]
    colnames = v.names(cols, limit=6)
    texts = {c["letter"]: c["text"] for c in q.get("conditions", []) if not c.get("scope")}
    conds = list(texts.values())
    scope = next((c["text"] for c in q.get("conditions", []) if c.get("scope")), "")
    cond_text = v.phrase("combo", q.get("combo") or "", A=texts.get("A", ""), B=texts.get("B", ""), C=texts.get("C", ""))
    cond_text = v.phrase("scoped", conds=cond_text, scope=scope) if cond_text and scope else cond_text or scope
    cond_text = cond_text or v.phrase("all")
    # one of the rows: the pack's type name in its own language, else the language's singular
    # of the question's plural ('empresa', 公司; the type's English name was written into both)
    one = q["type"].replace("_", " ") if r.lang.code == BASE else r.lang.singular(q["plural"]) or q["plural"]
    shape = q["shape"]
    if shape == "ranked":
        rk = q["rank"]
        dirw = v.phrase("highest" if rk["descending"] else "lowest")
        sc = r.lang.space + r.lang.space.join(conds + ([scope] if scope else []))
        return Event("plan_ranked", dict(n=rk["n"], plural=q["plural"], scope=sc, attr=r.lang.mid(rk.get("label") or rk["attribute"]),
                                         dir=dirw, cols=colnames))
    if shape in ("timeline", "events"):
        label = r.lang.mid(q["links"]["label"])
        period = q.get("period")
        ptxt = ""
        if period:
            a, b = period
            ptxt = r.lang.years(a[:4] if a else None, b[:4] if b else None)
        target = q.get("anchor") or v.phrase("target", plural=q["plural"], conds=cond_text)
        if shape == "timeline":
            return Event("plan_timeline", dict(label=label, target=target, period=ptxt, cols=colnames))
        return Event("plan_events", dict(label=label, period=ptxt.strip() or v.phrase("in_period"),
                                         scope=v.phrase("involving", plural=q["plural"], conds=cond_text), cols=colnames))
    return Event("plan_table", dict(one=one, plural=q["plural"], conds=cond_text, ncols=len(cols), cols=colnames))



def strategy_event(r, src: Source) -> Event | None:
    """Where the candidates will come from, said once at the start."""
    q = r.q
    if isinstance(src, PartList) and src.place:
        return Event("strategy_part", dict(what=src.title_in(r.lang)))
    if isinstance(src, BackList):
        return Event("strategy_back", dict(name=src.name, plural=q["plural"]))
    if isinstance(src, Union):
        return Event("strategy_union", {})
    if isinstance(src, Named):
        return Event("strategy_anchor", dict(name=src.name))
    if isinstance(src, PartsOf):
        return Event("strategy_parts", dict(plural=q["plural"]))
    return None



def told_events(r) -> list[Event]:
    """This turn's observations and decisions, and where they leave the task."""
    out = list(r.told.notes)
    r.told.notes = []
    v = r.told.voice
    rejected_listing = [d for m, d in r.told.decisions if m in ("reject", "reject_excluded") and d.get("listing")]
    others = [(m, d) for m, d in r.told.decisions if not ((m in ("reject", "reject_excluded")) and d.get("listing"))]
    r.told.decisions = []
    if len(rejected_listing) > 2:
        names = [d["name"] for d in rejected_listing]
        out.append(Event("reject_many", dict(n=len(names), label=rejected_listing[0]["label"], examples=v.names(names[:3], limit=3)),
                         [("rejected", len(names), names, "n")]))
    else:
        others = [(("reject" if not d.get("excluded") else "reject_excluded"), d) for d in rejected_listing] + others
    out += [Event(move, d) for move, d in others]
    if r.candidates is not None and r.brief.kind == Shape.TABLE:
        done = sum(1 for c in r.candidates if c.state != "open")
        total = len(r.candidates)
        decided_now = any(m in ("keep", "reject", "reject_excluded") for m, _ in others) or rejected_listing
        # said at milestones, not after every decision: a researcher takes stock now and then
        if 0 < done < total and decided_now and r.rng.random() < 0.6 and done - r.told.progress_said >= max(3, total // 10):
            r.told.progress_said = done
            kept = [c for c in r.candidates if c.state == "kept"]
            out.append(Event("progress", dict(done=done, total=total, kept=len(kept), left=total - done,
                                              missing=missing(r, kept)),
                             [("progress", done, {"total": total, "kept": len(kept), "left": total - done}, "total")]))
    return out



def missing(r, kept: list[Candidate]) -> list[tuple[str, int]]:
    """(column, rows) the kept rows still lack, commonest first."""
    cols = [c["name"] for c in r.q.get("columns", []) if c.get("base") != "rank"]
    miss: Counter = Counter()
    for c in kept:
        for row in (c.links if c.links is not None else [c]):
            miss.update(n for n in cols if n not in row.cells)
    return miss.most_common(3)



def dropped_ref(r, dropped: list[str]) -> dict:
    """The names a 'dropped' count stands for, with those a kept row shares (namesakes: one
    kept, another dropped) apart, so that the grounding check holds the others to the answer."""
    kept = {norm(c.name) for c in r.candidates or [] if c.state == "kept"}
    return {"names": [n for n in dropped if norm(n) not in kept], "shared": [n for n in dropped if norm(n) in kept]}
