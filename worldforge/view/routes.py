"""The view's pages: Starlette routes rendering plain HTML on the server.

    /view/                       the world at a glance
    /view/web                    its sites, and a search box
    /view/site/{host}            a site's pages
    /view/search?q=&offset=      the web_search tool's ranking, as a results page
    /view/page?url=              a page in its site's look (&facts=1: provenance; &archive=1: an earlier capture)
    /view/fact?id=               a fact, and every page that states it
    /view/tasks?kind=&split=&difficulty=&rows=&hops=&q=   tasks, filtered
    /view/task/{id}              question, gold table, evidence pages per cell, trajectories
    /view/trajectories?policy=&sort=         trajectories by reward
    /view/trajectory/{id}?sample=&step=      a trajectory replayed turn by turn, its answer scored cell by cell
    /view/export                 the dataset card, splits, reports and plots
    /view/audit                  the world's audit (`worldforge audit`)
    /view/static/{file}          the stylesheet and the script

Every handler is synchronous work on the event loop's thread (the world's DuckDB connections
and search index are not shared across threads); each answers in milliseconds.
"""

from __future__ import annotations

import json
import logging
import re
from importlib import resources
from urllib.parse import quote, urlencode

from ..errors import WorldforgeError
from ..records import Shape
from .charts import grouped_bars, histogram
from .data import ViewData, ViewError
from .markdown import escape, render
from .provenance import Marker

_log = logging.getLogger(__name__)
PREFIX = "/view"
PAGE_SIZE = 50  # tasks, trajectories and site pages a list page shows
RESULTS = 10
STATIC = {"view.css": "text/css; charset=utf-8", "view.js": "text/javascript; charset=utf-8"}
ROW_BUCKETS = ("<10", "10-19", "20-49", "50-99", ">=100")
_SEARCH_HIT = re.compile(r"^\[(\d+)\] (\S+)\nTitle: (.*)\nSnippet: (.*)\nDate: (.*)$", re.MULTILINE)


def u(path: str, **params) -> str:
    """A view address with its query."""
    q = {k: v for k, v in params.items() if v not in (None, "")}
    return PREFIX + path + ("?" + urlencode(q) if q else "")


def page_link(url: str, **extra) -> str:
    return u("/page", url=url, **extra)


LEVELS = ("easy", "medium", "hard")  # by the pages an answer needs (difficulty.min_pages): < 20, 20-99, >= 100


def level(difficulty: dict) -> str:
    n = int(difficulty.get("min_pages") or 0)
    return "easy" if n < 20 else "medium" if n < 100 else "hard"


def _bucket(n: int) -> str:
    return "<10" if n < 10 else "10-19" if n < 20 else "20-49" if n < 50 else "50-99" if n < 100 else ">=100"


class Pages:
    """The HTML of every view page over one `ViewData`."""

    def __init__(self, data: ViewData):
        self.d = data

    # ------------------------------------------------------------------ frame

    def layout(self, title: str, body: str, *, active: str = "", lang: str | None = None, body_class: str = "") -> str:
        d = self.d
        nav = "".join(f'<a href="{u(p)}" class="{"on" if active == k else ""}">{escape(lab)}</a>'
                      for k, p, lab in (("home", "/", d.spec.name), ("web", "/web", "Web"), ("tasks", "/tasks", "Tasks"),
                                        ("trajectories", "/trajectories", "Trajectories"), ("export", "/export", "Export")))
        return (f'<!doctype html><html lang="{escape(lang or d.language)}"><head><meta charset="utf-8">'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                f'<title>{escape(title)} · worldforge view</title><link rel="stylesheet" href="{PREFIX}/static/view.css"></head>'
                f'<body class="{escape(body_class)}"><nav class="wf"><span class="brand">worldforge</span>{nav}'
                f'<form class="q" action="{u("/search")}" method="get"><input type="search" name="q" placeholder="Search the web" '
                f'aria-label="Search the simulated web"><button>Search</button></form></nav>'
                f'<main>{body}</main><script src="{PREFIX}/static/view.js" defer></script></body></html>')

    def error(self, status: int, message: str) -> str:
        return self.layout(f"{status}", f'<section class="err"><h1>{status}</h1><p>{escape(message)}</p>'
                                        f'<p><a href="{u("/")}">Back to the world</a></p></section>')

    # ------------------------------------------------------------------ home

    def home(self) -> str:
        d = self.d
        rep = d.render_report()
        pages = rep.get("report", {}).get("pages") if isinstance(rep.get("report"), dict) else None
        counts = d.info.manifest.get("counts", {})
        ents = sum(v for v in counts.values() if isinstance(v, int)) if isinstance(counts, dict) else 0
        kinds = {}
        for t in d.tasks.values():
            kinds[t.record.get("kind", "?")] = kinds.get(t.record.get("kind", "?"), 0) + 1
        n_traj = len(d.trajectory_index)
        items = [("Entities", f"{ents:,}"), ("Pages", f"{pages:,}" if isinstance(pages, int) else "—"),
                 ("Tasks", ", ".join(f"{v:,} {k}" for k, v in sorted(kinds.items())) or "none"),
                 ("Trajectories", f"{n_traj:,}"), ("Language", d.language), ("As of", str(d.spec.as_of)),
                 ("Seed", str(d.spec.seed)), ("Export", str(d.export) if d.export else "none found")]
        cards = "".join(f"<div class=card><div class=k>{escape(k)}</div><div class=v>{escape(v)}</div></div>" for k, v in items)
        links = (f'<ul class="big"><li><a href="{u("/web")}">Browse the web</a>: its sites, a search box with the tools\' ranking</li>'
                 f'<li><a href="{u("/tasks")}">Tasks</a>: questions, gold tables and the evidence for each cell</li>'
                 f'<li><a href="{u("/trajectories")}">Trajectories</a>: replay an agent turn by turn</li>'
                 f'<li><a href="{u("/export")}">Export</a>: the dataset card, splits, reports and plots</li></ul>')
        desc = escape(getattr(d.spec, "description", "") or "")
        return self.layout(d.spec.name, f"<h1>{escape(d.spec.name)}</h1><p class=lead>{desc}</p>"
                                        f"<div class=cards>{cards}</div>{links}", active="home")

    # ------------------------------------------------------------------ the web

    def web(self) -> str:
        d = self.d
        rows = d.site_counts()
        head = "<tr><th>site</th><th>host</th><th>look</th><th class=n>pages</th></tr>"
        body = "".join(f'<tr><td><a href="{u("/site/" + quote(h))}">{escape(s)}</a></td><td class=url>{escape(h)}</td>'
                       f'<td><span class="tag look-{escape(lk)}">{escape(lk)}</span></td><td class=n>{n:,}</td></tr>'
                       for s, h, lk, n in rows[:400])
        more = f"<p class=muted>The 400 largest of {len(rows):,} sites.</p>" if len(rows) > 400 else ""
        form = (f'<form class="bigsearch" action="{u("/search")}"><input type="search" name="q" autofocus '
                f'placeholder="Search {escape(d.spec.name)}\'s web" aria-label="query"><button>Search</button></form>')
        return self.layout("Web", f"<h1>The web of {escape(d.spec.name)}</h1>{form}<h2>Sites</h2>"
                                  f"<table class=grid>{head}{body}</table>{more}", active="web")

    def site(self, host: str, offset: int) -> str:
        d = self.d
        rows, n = d.site_pages(host, offset, PAGE_SIZE)
        if not n:
            raise ViewError(404, f"no site {host} in this world; see the list of sites at {u('/web')}")
        name = d.site_of(f"https://{host}/")
        items = "".join(f'<tr><td><a href="{page_link(url)}">{escape(title)}</a><div class=url>{escape(url)}</div></td>'
                        f'<td>{escape(kind)}</td><td>{escape(date or "")}</td></tr>' for url, title, kind, date in rows)
        return self.layout(name, f"<h1>{escape(name)}</h1><p class=url>{escape(host)} · {n:,} pages</p>"
                                 f"<table class=grid><tr><th>page</th><th>kind</th><th>date</th></tr>{items}</table>"
                                 f"{self._pager(n, offset, PAGE_SIZE, lambda o: u('/site/' + quote(host), offset=o))}",
                           active="web")

    def _pager(self, total: int, offset: int, size: int, href) -> str:
        if total <= size:
            return ""
        out = []
        if offset > 0:
            out.append(f'<a rel="prev" href="{href(max(0, offset - size))}">‹ previous</a>')
        out.append(f"<span>{offset + 1:,}–{min(total, offset + size):,} of {total:,}</span>")
        if offset + size < total:
            out.append(f'<a rel="next" href="{href(offset + size)}">next ›</a>')
        return f'<nav class="pager">{"".join(out)}</nav>'

    def search(self, q: str, offset: int) -> str:
        d = self.d
        q = q.strip()
        if not q:
            return self.web()
        try:
            results, total = d.engine.search(q, offset, RESULTS)
        except WorldforgeError as exc:
            raise ViewError(400, str(exc)) from None
        items = []
        for r in results:
            date = r.get("date")
            items.append(f'<li class="hit"><div class="url">{escape(r["url"])}</div>'
                         f'<a class="title" href="{page_link(r["url"])}">{escape(r["title"])}</a>'
                         f'<div class="meta"><span class="tag">{escape(r.get("kind") or "")}</span>'
                         f'{escape(date) if date else ""}</div><p class="snip">{escape(r.get("snippet") or "")}</p></li>')
        shown = min(total, 1000)
        head = f'<p class=muted>About {total:,} results (the web_search tool\'s ranking, without perturbations)</p>'
        body = (f'<form class="bigsearch" action="{u("/search")}"><input type="search" name="q" value="{escape(q)}" '
                f'aria-label="query"><button>Search</button></form>{head}<ol class="hits" start="{offset + 1}">{"".join(items)}</ol>'
                + (self._pager(shown, offset, RESULTS, lambda o: u("/search", q=q, offset=o)) if results else
                   "<p>No page matches.</p>"))
        return self.layout(f"{q} – search", body, active="web")

    # ------------------------------------------------------------------ a page

    def page(self, url: str, facts: bool, archive: bool) -> str:
        d = self.d
        url = url.strip()
        if not url.startswith(("http://", "https://")):
            raise ViewError(400, f"give a page's address, e.g. {page_link('https://' + d.encyclopedia_host + '/wiki/...')}")
        p = d.archive(url) if archive else d.page(url)
        if p is None:
            if archive:
                raise ViewError(404, f"no earlier capture of {url}: only articles whose entity changed have one")
            raise ViewError(404, f"no page at {url} in this world (the web_extractor tool answers 404 Not Found for it)")
        marker = None
        fact_rows = []
        if facts and not p.get("copy_of") and not archive:
            fact_rows = d.facts(d.page_fact_ids(p["url"]))
            marker = Marker(fact_rows, d.page_subject(p["url"]) if fact_rows else None)
        body, _ = render(p["markdown"], page_link, marker)
        host = url.split("/")[2]
        site = d.site_of(url) if p["look"] != "copy" else host
        date = p.get("date")
        bar = [f'<div class="addr"><input readonly value="{escape(url)}" aria-label="address"></div>']
        toggles = []
        if p["look"] not in ("copy", "archive"):
            toggles.append(f'<a class="toggle{" on" if facts else ""}" id="prov-toggle" href="{page_link(url, facts=None if facts else 1)}">'
                           f'{"Hide" if facts else "Show"} provenance</a>')
            if d.engine.archive(url) is not None:
                toggles.append(f'<a class="toggle" href="{page_link(url, archive=1)}">Earlier capture</a>')
        else:
            toggles.append(f'<a class="toggle" href="{page_link(p.get("copy_of") or url)}">The original</a>')
        chrome = f'<div class="browser">{"".join(bar)}<div class="tools">{"".join(toggles)}</div></div>'
        banner = ""
        if p["look"] == "archive":
            banner = (f'<div class="banner archive">Archived capture of <b>{escape(url)}</b> from {escape(date)}: '
                      f'the article as it read then.</div>')
        elif p["look"] == "copy":
            banner = (f'<div class="banner copy">A duplicate on {escape(host)} of <a href="{page_link(p["copy_of"])}">'
                      f'{escape(p["copy_of"])}</a>, as the conflicting_page perturbation serves it (with its slips).</div>')
        head = (f'<header class="site-head"><span class="site-name">{escape(site)}</span>'
                f'<span class="site-host">{escape(host)}</span>'
                f'{f"<span class=site-date>{escape(date)}</span>" if date else ""}</header>')
        side = ""
        if marker is not None:
            rows = []
            for i, f in enumerate(marker.facts):
                placed = "" if i in marker.used else ' class="unplaced" title="not found in one sentence or cell"'
                rows.append(f'<li data-f="{i}"{placed}><a href="{u("/fact", id=f.fact_id)}"><b>{escape(f.label)}</b></a> '
                            f'of {escape(f.subject_name)}: {escape(f.shown_value)}'
                            f'{f" <span class=muted>({escape(f.span)})</span>" if f.span else ""}</li>')
            side = (f'<aside class="prov"><h2>{len(marker.facts)} facts on this page</h2>'
                    f'<p class=muted>{len(marker.used)} placed in a sentence or cell; hover a marked passage or a fact.</p>'
                    f'<ol start="0">{"".join(rows)}</ol></aside>')
        art = f'<article class="page" lang="{escape(d.language)}">{body}</article>'
        look = f'<div class="site look-{escape(p["look"])}{" with-prov" if side else ""}">{head}{banner}<div class="cols">{art}{side}</div></div>'
        return self.layout(p["title"], chrome + look, active="web", body_class="pageview" + (" prov-on" if side else ""))

    def fact(self, fact_id: str) -> str:
        d = self.d
        got = d.facts([fact_id])
        if not got:
            raise ViewError(404, f"no fact {fact_id!r} in this world (ids look like city_0559366822d46305/population)")
        f = got[0]
        urls, n = d.fact_pages(f.fact_id)
        art = d.article_of(f.subject)
        subj = f'<a href="{page_link(art)}">{escape(f.subject_name)}</a>' if art else escape(f.subject_name)
        value = escape(f.shown_value)
        if f.value_type == "entity":
            a2 = d.article_of(f.value)
            if a2:
                value = f'<a href="{page_link(a2)}">{value}</a>'
        rows = [("subject", subj + f' <span class="muted">({escape(f.subject_type)})</span>'), ("predicate", escape(f.label)),
                ("value", value), ("type", escape(f.value_type)), ("valid", escape(f.span) or "always"), ("id", f"<code>{escape(f.fact_id)}</code>")]
        table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
        items = "".join(f'<li><a href="{page_link(x, facts=1)}">{escape(x)}</a></li>' for x in urls)
        more = f"<p class=muted>The first {len(urls):,} of {n:,}.</p>" if n > len(urls) else ""
        return self.layout(f"{f.label} of {f.subject_name}",
                           f"<h1>{escape(f.label)} of {escape(f.subject_name)}</h1><table class=kv>{table}</table>"
                           f"<h2>Stated on {n:,} page{'s' if n != 1 else ''}</h2><ul class=urls>{items}</ul>{more}", active="web")

    # ------------------------------------------------------------------ tasks

    def _task_rewards(self) -> dict[str, float]:
        out: dict[str, list[float]] = {}
        for (iid, _), e in self.d.trajectory_index.items():
            if e.reward is not None:
                out.setdefault(iid, []).append(e.reward)
        return {k: sum(v) / len(v) for k, v in out.items()}

    def tasks(self, kind: str, split: str, rows: str, hops: str, q: str, offset: int, difficulty: str = "") -> str:
        d = self.d
        if not d.tasks:
            return self.layout("Tasks", "<h1>Tasks</h1><p>This world has no tasks yet: run <code>worldforge tasks WORLD_DIR</code>.</p>",
                               active="tasks")
        rewards = self._task_rewards()
        recs = [t.record for t in d.tasks.values()]
        kinds = sorted({r.get("kind", "") for r in recs})
        splits = sorted({r.get("split", "") for r in recs})
        hop_values = sorted({str(r.get("difficulty", {}).get("hops", "")) for r in recs})
        sel = []
        for r in recs:
            diff = r.get("difficulty", {})
            if kind and r.get("kind") != kind or split and r.get("split") != split:
                continue
            if rows and _bucket(int(diff.get("rows", 0))) != rows:
                continue
            if hops and str(diff.get("hops", "")) != hops:
                continue
            if difficulty and level(diff) != difficulty:
                continue
            if q and q.lower() not in r.get("query", "").lower() and q not in r["instance_id"]:
                continue
            sel.append(r)

        def options(name: str, values, current: str) -> str:
            opts = "".join(f'<option value="{escape(v)}"{" selected" if v == current else ""}>{escape(v)}</option>' for v in values)
            return f'<label>{name} <select name="{name}"><option value="">any</option>{opts}</select></label>'

        form = (f'<form class="filters" action="{u("/tasks")}">{options("kind", kinds, kind)}{options("split", splits, split)}'
                f'{options("difficulty", LEVELS, difficulty)}{options("rows", ROW_BUCKETS, rows)}{options("hops", hop_values, hops)}'
                f'<label>text <input name="q" value="{escape(q)}" placeholder="words of the question"></label><button>Filter</button></form>')
        page = sel[offset:offset + PAGE_SIZE]
        trs = []
        for r in page:
            diff = r.get("difficulty", {})
            rw = rewards.get(r["instance_id"])
            trs.append(f'<tr><td><a href="{u("/task/" + quote(r["instance_id"]))}">{escape(r["instance_id"])}</a></td>'
                       f'<td>{escape(r.get("kind"))}</td><td>{escape(r.get("shape", ""))}</td><td>{escape(r.get("split"))}</td>'
                       f'<td>{level(diff)}</td><td class=n>{diff.get("min_pages", "")}</td>'
                       f'<td class=n>{diff.get("rows", "")}</td><td class=n>{diff.get("columns", "")}</td><td class=n>{diff.get("hops", "")}</td>'
                       f'<td class=n>{"" if rw is None else f"{rw:.2f}"}</td><td class=q>{escape(r.get("query", "")[:160])}</td></tr>')
        table = ("<table class=grid id=tasks><tr><th>task</th><th>kind</th><th>shape</th><th>split</th><th>difficulty</th>"
                 "<th class=n title='pages an answer needs at least'>pages</th><th class=n>rows</th>"
                 "<th class=n>cols</th><th class=n>hops</th><th class=n>reward</th><th>question</th></tr>" + "".join(trs) + "</table>")
        pager = self._pager(len(sel), offset, PAGE_SIZE, lambda o: u("/tasks", kind=kind, split=split, difficulty=difficulty, rows=rows,
                                                                    hops=hops, q=q, offset=o))
        return self.layout("Tasks", f"<h1>Tasks</h1>{form}<p class=muted id=count>{len(sel):,} of {len(recs):,} tasks</p>{table}{pager}",
                           active="tasks")

    def task(self, iid: str) -> str:
        d = self.d
        t = d.tasks.get(iid)
        if t is None:
            raise ViewError(404, f"no task {iid!r} in this world; see the list at {u('/tasks')}")
        r = t.record
        ev = r.get("evidence") or {}
        pages = ev.get("pages") or []
        cells = ev.get("cells") or []
        diff = r.get("difficulty", {})
        meta = [("kind", r.get("kind")), ("shape", r.get("shape", "")), ("split", r.get("split")), ("part", r.get("part", "")),
                ("entity type", r.get("entity_type", "")), ("language", r.get("language", "en"))] + \
               [(k.replace("_", " "), v) for k, v in diff.items() if not isinstance(v, (list, dict))]
        kv = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in meta)

        def refs(x) -> str:
            idx = x if isinstance(x, list) else [x]
            return "".join(f'<a class="ev" href="{page_link(pages[i])}" title="{escape(pages[i])}">{i + 1}</a>'
                           for i in idx if isinstance(i, int) and 0 <= i < len(pages))

        head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
        body = []
        for ri, row in enumerate(t.rows):
            tds = []
            for ci, v in enumerate(row):
                ref = refs(cells[ri][ci]) if ri < len(cells) and ci < len(cells[ri]) else ""
                tds.append(f"<td>{escape(v)}{f'<sup class=refs>{ref}</sup>' if ref else ''}</td>")
            body.append(f"<tr>{''.join(tds)}</tr>")
        gold = f"<table class='grid gold' id=gold><tr>{head}</tr>{''.join(body)}</table>"
        evl = "".join(f'<li><a href="{page_link(p, facts=1)}">{escape(p)}</a></li>' for p in pages)
        trajs = d.trajectories_of(iid)
        tl = "".join(f'<li><a href="{u("/trajectory/" + quote(iid), sample=e.sample)}">sample {e.sample} · {escape(e.policy)}</a>'
                     f' · reward {"—" if e.reward is None else f"{e.reward:.3f}"} · {e.turns} turns · ended by {escape(e.end)}</li>'
                     for e in trajs) or "<li>none (not rolled out)</li>"
        return self.layout(iid, f'<h1 class=tid>{escape(iid)}</h1><blockquote class="question">{escape(r.get("query", ""))}</blockquote>'
                                f"<div class=two><div><h2>Task</h2><table class=kv>{kv}</table></div>"
                                f"<div><h2>Trajectories</h2><ul>{tl}</ul></div></div>"
                                f"<h2>Gold table ({len(t.rows)} rows)</h2><p class=muted>Numbers after a cell: "
                                f"the evidence pages that state it.</p><div class=scroll>{gold}</div>"
                                f"<h2>Evidence pages ({len(pages)})</h2><ol class=urls>{evl}</ol>", active="tasks")

    # ------------------------------------------------------------------ trajectories

    def trajectories(self, policy: str, sort: str, offset: int) -> str:
        d = self.d
        entries = list(d.trajectory_index.values())
        if not entries:
            return self.layout("Trajectories", "<h1>Trajectories</h1><p>No trajectories: run <code>worldforge rollout WORLD_DIR</code>.</p>",
                               active="trajectories")
        if policy:
            entries = [e for e in entries if e.policy == policy]
        if sort == "reward":
            entries.sort(key=lambda e: (e.reward if e.reward is not None else -1, e.instance_id))
        elif sort == "-reward":
            entries.sort(key=lambda e: (-(e.reward if e.reward is not None else -1), e.instance_id))
        elif sort == "turns":
            entries.sort(key=lambda e: -(e.turns or 0))
        page = entries[offset:offset + PAGE_SIZE]
        rows = "".join(f'<tr><td><a href="{u("/trajectory/" + quote(e.instance_id), sample=e.sample)}">{escape(e.instance_id)}</a></td>'
                       f'<td class=n>{e.sample}</td><td>{escape(e.policy)}</td>'
                       f'<td class=n>{"—" if e.reward is None else f"{e.reward:.3f}"}</td><td class=n>{e.turns}</td><td>{escape(e.end)}</td>'
                       f'<td class=q>{escape(d.tasks[e.instance_id].query[:120]) if e.instance_id in d.tasks else ""}</td></tr>'
                       for e in page)
        rewards = [e.reward for e in entries if e.reward is not None]
        sorts = " · ".join(f'<a href="{u("/trajectories", policy=policy, sort=s)}">{lab}</a>'
                           for s, lab in (("reward", "lowest reward first"), ("-reward", "highest first"), ("turns", "longest first"), ("", "task order")))
        return self.layout("Trajectories", f"<h1>Trajectories</h1><p>Sort: {sorts}</p>"
                                           f"{histogram('Reward of each trajectory', rewards)}"
                                           f"<table class=grid id=trajectories><tr><th>task</th><th class=n>sample</th><th>policy</th><th class=n>reward</th>"
                                           f"<th class=n>turns</th><th>end</th><th>question</th></tr>{rows}</table>"
                                           f"{self._pager(len(entries), offset, PAGE_SIZE, lambda o: u('/trajectories', policy=policy, sort=sort, offset=o))}",
                           active="trajectories")

    def trajectory(self, iid: str, sample: int, step: int | None) -> str:
        d = self.d
        tr = d.trajectory(iid, sample)
        if tr is None:
            raise ViewError(404, f"no trajectory of task {iid!r} sample {sample} in this world; see {u('/trajectories')}")
        task = d.tasks.get(iid)
        msgs = tr.get("messages") or []
        steps = tr.get("steps") or []
        segs = tr.get("segments") or [{"prefix": msgs[:2], "start": 2, "end": len(msgs)}]
        n_tokens = d.env.count_tokens

        def seg_of(i: int) -> int:
            for k, s in enumerate(segs):
                if s["start"] <= i < (s.get("end") or len(msgs)):
                    return k
            return len(segs) - 1

        results: dict[str, str] = {m.get("tool_call_id"): m.get("content") or "" for m in msgs if m.get("role") == "tool"}
        sizes = [n_tokens(x.get("content") or "") + sum(n_tokens(c["function"]["arguments"]) for c in x.get("tool_calls") or [])
                 for x in msgs]
        prefix_tokens = [sum(n_tokens(x.get("content") or "") for x in seg["prefix"]) for seg in segs]  # once a segment
        prefix_sum = [0]
        for x in sizes:
            prefix_sum.append(prefix_sum[-1] + x)
        call_no = 0
        stated: set[int] = set()  # segments whose research state is shown (at their first turn; later turns say so)
        turns_html = []
        turn = 0
        for i, m in enumerate(msgs[2:], start=2):
            role = m.get("role")
            if role == "tool":
                continue
            k = seg_of(i)
            s = segs[k]
            shown = len(s["prefix"]) + max(0, i - s["start"])
            tokens = prefix_tokens[k] + prefix_sum[i] - prefix_sum[min(i, s["start"])]
            state = ""
            if k > 0 and len(s["prefix"]) > 1 and k not in stated:
                stated.add(k)
                state = (f'<details class="state"><summary>research state written at compaction {k}</summary>'
                         f'<pre>{escape((s["prefix"][-1].get("content") or "").split("---", 1)[-1].strip())}</pre></details>')
            ctx = (f'<div class="ctx" title="what the model saw when it wrote this turn">context: segment {k + 1} of {len(segs)} · '
                   f'{shown} messages · about {tokens:,} tokens{f" · the research state of compaction {k} above" if k and not state else ""}</div>{state}')
            if role == "user":
                turns_html.append(f'<section class="turn user" id="m{i}"><div class="who">user · context limit</div>{ctx}'
                                  f'<div class="msg">{escape(m.get("content") or "")}</div></section>')
                continue
            turn += 1
            calls = []
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {})
                info = steps[call_no] if call_no < len(steps) else {}
                call_no += 1
                pert = info.get("perturbation")
                err = info.get("error")
                badge = (f'<span class="pert" title="a perturbation of this call">{escape(pert)}</span>' if pert else "") + \
                        (f'<span class="perr">{escape(err)}</span>' if err else "")
                res = results.get(c.get("id"))
                src = u("/result/" + quote(iid), sample=sample, call=call_no - 1)
                first = (res or "").strip().split("\n", 1)[0][:140]
                body = (f'<details class="res" data-src="{src}"><summary>{escape(first)} <span class=muted>({len(res):,} characters, '
                        f'as the agent got them)</span></summary><div class="res-body"></div></details>'
                        if res is not None else "")
                raw = f' <a class="raw" href="{src}">result</a>' if res is not None else ""
                calls.append(f'<div class="call{" perturbed" if pert else ""}" data-call="{call_no - 1}"><div class="sig"><code>{escape(fn.get("name"))}</code>'
                             f'{badge}<code class=args>{escape(fn.get("arguments", ""))[:600]}</code>{raw}</div>{body}</div>')
            turns_html.append(f'<section class="turn" id="t{turn}" data-turn="{turn}"><div class="who">step {turn} · assistant</div>{ctx}'
                              f'<div class="msg">{escape(m.get("content") or "")}</div>{"".join(calls)}</section>')
        score = tr.get("score") or {}
        summary = [("reward", f'{tr.get("reward", 0):.3f}'), ("turns", tr.get("turns")), ("tool calls", tr.get("tool_calls")),
                   ("ended by", tr.get("end")), ("rows", f'{score.get("correct_rows", "?")} right of {score.get("gold_rows", "?")}'),
                   ("item F1", f'{score.get("item_f1", 0):.3f}'),
                   ("perturbations", ", ".join(f"{k} {v}" for k, v in (tr.get("perturbations") or {}).items()) or "none"),
                   ("compactions", (tr.get("context") or {}).get("compactions", 0))]
        kv = "".join(f"<div class=card><div class=k>{escape(k)}</div><div class=v>{escape(v)}</div></div>" for k, v in summary)
        q = f'<blockquote class="question">{escape(task.query)}</blockquote>' if task else ""
        scored = self._scored(task, tr.get("answer") or "") if task else ""
        controls = (f'<div class="replay" data-turns="{turn}" data-start="{step or 0}"><button id="prev">‹ previous</button>'
                    f'<span id="pos">all {turn} steps</span><button id="next">next ›</button><button id="all">show all</button>'
                    f'<span class=muted>keys ← →</span></div>')
        return self.layout(f"Trajectory {iid}", f'<h1 class=tid>Trajectory of <a href="{u("/task/" + quote(iid))}">{escape(iid)}</a>'
                                                f' <span class=muted>sample {sample} · {escape(tr.get("policy"))}</span></h1>{q}'
                                                f'<div class=cards>{kv}</div>{controls}<div class="turns">{"".join(turns_html)}</div>'
                                                f'<h2 id="scored">The answer, cell by cell</h2>{scored}',
                           active="trajectories", body_class="replaying")

    def result(self, iid: str, sample: int, call: int, fragment: bool) -> str:
        """The `call`-th tool call's result in a trajectory, as the agent got it (a fragment for the replay page)."""
        tr = self.d.trajectory(iid, sample)
        if tr is None:
            raise ViewError(404, f"no trajectory of task {iid!r} sample {sample} in this world")
        msgs = tr.get("messages") or []
        calls = [c for m in msgs if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
        if not 0 <= call < len(calls):
            raise ViewError(404, f"the trajectory has {len(calls)} tool calls (0 to {len(calls) - 1}); there is no call {call}")
        c = calls[call]
        text = next((m.get("content") or "" for m in msgs if m.get("role") == "tool" and m.get("tool_call_id") == c.get("id")), None)
        fn = c.get("function", {})
        inner = self._result(fn.get("name"), fn.get("arguments", ""), text) if text is not None else "<p>No result (the episode ended).</p>"
        if fragment:
            return inner
        return self.layout(f"call {call} of {iid}", f'<h1 class=tid>Call {call} of <a href="{u("/trajectory/" + quote(iid), sample=sample)}">'
                                                    f'{escape(iid)}</a></h1><p><code>{escape(fn.get("name"))}</code> '
                                                    f'<code class=args>{escape(fn.get("arguments", ""))}</code></p>{inner}',
                           active="trajectories")

    def _result(self, name: str | None, arguments: str, text: str | None) -> str:
        if text is None:
            return ""
        if name == "web_search":
            hits = _SEARCH_HIT.findall(text)
            if hits:
                first = text.split("\n", 1)[0]
                items = "".join(f'<li><a href="{page_link(url)}">{escape(title)}</a> <span class=url>{escape(url)}</span>'
                                f'<div class=snip>{escape(snip)}</div></li>' for _, url, title, snip, _ in hits)
                return f'<p class=muted>{escape(first)}</p><ol class=hits>{items}</ol>'
        if name == "web_extractor":
            try:
                url = json.loads(arguments).get("url", "")
            except (ValueError, AttributeError):
                url = ""
            html, _ = render(text, page_link)
            open_link = f'<p><a href="{page_link(url)}">Open {escape(url)} in the view</a> (without perturbations)</p>' \
                if isinstance(url, str) and url.startswith("http") else ""
            return f'{open_link}<div class="page-in">{html}</div>'
        return f'<pre>{escape(text)}</pre>'

    def _scored(self, task, answer: str) -> str:
        from ..tasks import Evaluation, cell_marks

        ev = Evaluation.model_validate(task.record["evaluation"])
        got = cell_marks(ev, task.header, task.rows, answer, self.d.env.task_aliases(task), task.record.get("language", "en"))
        if got is None:
            return "<p class=bad>The answer holds no table.</p>"
        header, rows = got
        tally: dict[str, int] = {}
        trs = []
        for r in rows:
            tds = []
            for text, mark, gold in r.cells:
                tally[mark] = tally.get(mark, 0) + 1
                tip = f' title="gold: {escape(gold)}"' if mark in ("wrong", "partial") else ""
                tds.append(f'<td class="c-{mark}"{tip}>{escape(text)}</td>')
            trs.append(f'<tr class="r-{r.status}">{"".join(tds)}<td class="rowtag">{"" if r.status == "matched" else escape(r.status)}</td></tr>')
        legend = " ".join(f'<span class="c-{k} chip">{k} {tally.get(k, 0)}</span>' for k in ("right", "partial", "wrong", "missing", "extra"))
        head = "".join(f"<th>{escape(h)}</th>" for h in header)
        return (f'<p class=legend>{legend} <span class=muted>(cells by the lenient rules; the reward above is the run\'s scorer; '
                f'hover a wrong cell for the gold value)</span></p>'
                f'<div class=scroll><table class="grid scored" id=scoredtable><tr>{head}<th></th></tr>{"".join(trs)}</table></div>')

    # ------------------------------------------------------------------ export and reports

    def export(self) -> str:
        d = self.d
        parts = ["<h1>Export and reports</h1>"]
        man = d.manifest()
        if d.export is None:
            parts.append("<p>No export of this world was found (looked in exports/&lt;world&gt;/v*/ here and beside the build "
                         "folder); give one with <code>worldforge view WORLD_DIR --export DIR</code>.</p>")
        else:
            splits = man.get("splits") or {}
            configs = {k: v for k, v in (man.get("rows") or {}).items() if isinstance(v, dict)}
            if isinstance(splits, dict) and splits:
                head = "<th class=n>tasks</th>" + "".join(f"<th class=n>{escape(c)} rows</th>" for c in configs)
                rows = "".join(f"<tr><td>{escape(s)}</td><td class=n>{n:,}</td>" + "".join(
                    f"<td class=n>{v.get(s, 0):,}</td>" for v in configs.values()) + "</tr>" for s, n in splits.items())
                parts.append(f"<h2>Splits</h2><table class=grid id=splits><tr><th>split</th>{head}</tr>{rows}</table>")
            parts.append(f"<p class=muted>{escape(d.export)}</p>")
        dist = d.distribution
        if dist.get("row_buckets"):
            from ..tasks import comparison_rows, reference

            ref = reference()
            labels = list(ROW_BUCKETS)
            parts.append("<h2>Tasks beside WideSearch</h2><div class=charts>" + grouped_bars(
                "Rows per table", labels, {d.spec.name: [dist["row_buckets"].get(k, 0) for k in labels],
                                           "WideSearch": [ref["row_buckets"].get(k, 0) for k in labels]}))
            cols = [r.get("difficulty", {}).get("columns", 0) for r in (t.record for t in d.tasks.values()) if r.get("kind") == Shape.TABLE]
            if cols:
                lo, hi = min(cols), max(cols)
                labels_c = [str(c) for c in range(lo, hi + 1)]
                share = [sum(1 for c in cols if c == x) / len(cols) for x in range(lo, hi + 1)]
                parts.append(grouped_bars(f"Columns per table (WideSearch: mean {ref['columns']['mean']}, {ref['columns']['min']}–"
                                          f"{ref['columns']['max']})", labels_c, {d.spec.name: share}))
            parts.append("</div>")
            rows = "".join(f"<tr><td>{escape(a)}</td><td class=n>{escape(b)}</td><td class=n>{escape(c)}</td></tr>"
                           for a, b, c in comparison_rows(dist, ref))
            parts.append(f"<table class=grid id=compare><tr><th>figure</th><th class=n>{escape(d.spec.name)}</th><th class=n>WideSearch</th></tr>"
                         f"{rows}</table>")
        rewards = [e.reward for e in d.trajectory_index.values() if e.reward is not None]
        if rewards:
            parts.append("<h2>Rewards</h2>" + histogram(f"Reward of each trajectory (mean {sum(rewards) / len(rewards):.3f}, "
                                                         f"{len(rewards):,} trajectories)", rewards))
        rep = d.render_report().get("report") or {}
        if rep:
            flat = [(k, v) for k, v in rep.items() if isinstance(v, (int, float, str))]
            parts.append("<h2>Render report</h2><table class=kv id=render>" +
                         "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in flat) + "</table>")
            for k, v in rep.items():
                if isinstance(v, dict) and v and all(isinstance(x, (int, float)) for x in v.values()):
                    parts.append(f"<h3>{escape(k.replace('_', ' '))}</h3><table class=grid>" + "".join(
                        f"<tr><td>{escape(a)}</td><td class=n>{b:,}</td></tr>" for a, b in v.items()) + "</table>")
        trep = d.tasks_report()
        if trep.get("dropped"):
            rows = "".join(f"<tr><td>{escape(kind)}</td><td>{escape(why)}</td><td class=n>{n:,}</td></tr>"
                           for kind, v in trep["dropped"].items() for why, n in sorted(v.items(), key=lambda x: -x[1]))
            parts.append(f"<h2>Tasks report</h2><p>kept {escape(trep.get('kept'))}; drawn {escape(trep.get('drawn'))}</p>"
                         f"<table class=grid><tr><th>kind</th><th>dropped because</th><th class=n>drafts</th></tr>{rows}</table>")
        parts.append(f'<p><a href="{u("/audit")}">The world\'s audit</a> (computed on first open).</p>')
        card = d.card()
        if card:
            html, _ = render(card, lambda x: x)
            parts.append(f'<h2>Dataset card</h2><div class="card-md" id=card>{html}</div>')
        return self.layout("Export", "".join(parts), active="export")

    def audit(self) -> str:
        rep = self.d.audit()
        bad = rep.broken or rep.unmatched
        parts = ["<h1>Audit</h1>", f"<p class={'bad' if bad else 'good'}>{len(rep.thresholds)} thresholds declared by the "
                                   f"packs; {len(rep.broken)} broken; {len(rep.unmatched)} judge no row.</p>"]
        if rep.unmatched:
            parts.append("<ul>" + "".join(
                f"<li>pack {escape(u['pack'])}: {escape(u['section'])} {escape(u['metric'])} with match {escape(u['match'])} "
                f"judges no row</li>" for u in rep.unmatched) + "</ul>")
        if rep.broken:
            parts.append("<ul>" + "".join(
                f"<li>{escape(b['section'])}: {escape(b['subject'])}: {escape(b['metric'])} = {escape(b['value'])}</li>" for b in rep.broken) + "</ul>")
        for section, rows in rep.sections.items():
            if not rows:
                continue
            keys = [k for k in rows[0].keys()]
            head = "".join(f"<th>{escape(k)}</th>" for k in keys)
            body = "".join("<tr>" + "".join(f"<td>{escape(r.get(k))}</td>" for k in keys) + "</tr>" for r in rows[:60])
            parts.append(f"<h2>{escape(section)}</h2><table class=grid>{'<tr>' + head + '</tr>'}{body}</table>")
        return self.layout("Audit", "".join(parts), active="export")


# ---------------------------------------------------------------------- routes


def _int_param(request, name: str, default: int = 0, lo: int = 0, hi: int = 10**7) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        v = int(raw)
    except ValueError:
        raise ViewError(400, f"'{name}' must be a whole number, got {raw[:40]!r}") from None
    if not lo <= v <= hi:
        raise ViewError(400, f"'{name}' must be from {lo} to {hi:,}, got {v}")
    return v


def view_routes(data: ViewData) -> list:
    """The view's routes, under /view, over one opened world."""
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    pages = Pages(data)

    def html(fn):
        async def endpoint(request):
            try:
                return HTMLResponse(fn(request))
            except ViewError as exc:
                return HTMLResponse(pages.error(exc.status, exc.message), status_code=exc.status)
            except WorldforgeError as exc:
                return HTMLResponse(pages.error(400, str(exc)), status_code=400)
            except Exception as exc:  # noqa: BLE001 - one bad page never takes the server down
                _log.exception("view %s failed", request.url.path)
                return HTMLResponse(pages.error(500, f"internal error ({type(exc).__name__}); the server is still up"), status_code=500)
        return endpoint

    def q(request, name: str) -> str:
        return (request.query_params.get(name) or "")[:2000]

    async def static(request):
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        body = resources.files("worldforge.view").joinpath("static", name).read_bytes()
        return Response(body, media_type=STATIC[name], headers={"Cache-Control": "max-age=3600"})

    async def root(request):
        return RedirectResponse(PREFIX + "/")

    return [
        Route(PREFIX, root, methods=["GET"]),
        Route(PREFIX + "/", html(lambda r: pages.home()), methods=["GET"]),
        Route(PREFIX + "/web", html(lambda r: pages.web()), methods=["GET"]),
        Route(PREFIX + "/site/{host}", html(lambda r: pages.site(r.path_params["host"], _int_param(r, "offset"))), methods=["GET"]),
        Route(PREFIX + "/search", html(lambda r: pages.search(q(r, "q"), _int_param(r, "offset", hi=990))), methods=["GET"]),
        Route(PREFIX + "/page", html(lambda r: pages.page(q(r, "url"), bool(q(r, "facts")), bool(q(r, "archive")))), methods=["GET"]),
        Route(PREFIX + "/fact", html(lambda r: pages.fact(q(r, "id"))), methods=["GET"]),
        Route(PREFIX + "/tasks", html(lambda r: pages.tasks(q(r, "kind"), q(r, "split"), q(r, "rows"), q(r, "hops"), q(r, "q"),
                                                            _int_param(r, "offset"), q(r, "difficulty"))), methods=["GET"]),
        Route(PREFIX + "/task/{iid}", html(lambda r: pages.task(r.path_params["iid"])), methods=["GET"]),
        Route(PREFIX + "/trajectories", html(lambda r: pages.trajectories(q(r, "policy"), q(r, "sort"), _int_param(r, "offset"))),
              methods=["GET"]),
        Route(PREFIX + "/trajectory/{iid}", html(lambda r: pages.trajectory(r.path_params["iid"], _int_param(r, "sample"),
                                                                            _int_param(r, "step", 0))), methods=["GET"]),
        Route(PREFIX + "/result/{iid}", html(lambda r: pages.result(r.path_params["iid"], _int_param(r, "sample"), _int_param(r, "call"),
                                                                    bool(q(r, "fragment")))), methods=["GET"]),
        Route(PREFIX + "/export", html(lambda r: pages.export()), methods=["GET"]),
        Route(PREFIX + "/audit", html(lambda r: pages.audit()), methods=["GET"]),
        Route(PREFIX + "/static/{name}", static, methods=["GET"]),
    ]


def create_view_app(data: ViewData):
    """The view alone (`worldforge view`): its routes, and / sending to /view/."""
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Route

    async def root(request):
        return RedirectResponse(PREFIX + "/")

    return Starlette(routes=[Route("/", root), *view_routes(data)])
