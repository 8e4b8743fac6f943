"""The oracle's research state: what it writes when its context fills, and what it keeps after.

When the episode asks for the state (`context.py`), the oracle writes down everything its
later turns will use, from its research and nothing else: the task, where the candidates come
from (a list's pages read and still to read, with their addresses, and the rows read so far),
the candidates with their addresses and what is decided about each, every value read with the
page it was read on (the ranking value too, where a table is ranked), the conditions still to
check, the pages it was about to open and the pages that would not load. Then it forgets: the
pages it had read, the search results, every address and name the state does not carry
(`forget`). What it does next is decided from the state and the pages it opens afterwards, so
every later call and every cell of its answer is supported by what the model can see.
"""

from __future__ import annotations

import re

from .sources import BackList, ListReader, Named, PartList, PartsOf, Union, norm, readers_of, strip_links

URL_RE = re.compile(r"https?://[^\s)\]<>\"'|，。；]+")
WANTS_MAX = 12  # pages it was about to open that the state names besides its candidates
_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")

_EN = {
    "head": "Research state",
    "task": "Task",
    "columns": "columns",
    "rows_of": "rows: all {plural}",
    "chain": "Chain so far",
    "gathering": "Gathering the candidates",
    "list": "List \"{title}\": {read} of {total} page(s) read",
    "read_at": "read",
    "to_read": "still to read",
    "listed_so_far": "Entries listed so far ({n})",
    "walk": "Pages to walk for candidates",
    "source_parts": "Parts to read lists of",
    "candidates": "Candidates: {n} found ({src}); {kept} kept, {rejected} rejected, {open} still to check, {lost} unreadable",
    "kept": "Kept, with the values read so far (blank: not read yet)",
    "read_on": "read on",
    "own": "its page",
    "listing": "the list",
    "rejected": "Rejected ({n})",
    "lost": "Could not be read ({n})",
    "open": "Still to check ({n})",
    "listed": "listed",
    "conditions": "Conditions still to check on those",
    "wants": "Pages I was about to open",
    "values": "Values read on other pages",
    "failed": "Pages that would not load",
    "tries": "tries",
    "answer": "Answer so far",
    "none": "none",
}
_ZH = {
    "head": "研究进展",
    "task": "任务",
    "columns": "列",
    "rows_of": "行：所有{plural}",
    "chain": "目前的链条",
    "gathering": "正在收集候选",
    "list": "列表“{title}”：已读{read}/{total}页",
    "read_at": "已读",
    "to_read": "待读",
    "listed_so_far": "目前列出的条目（{n}）",
    "walk": "待查看的候选来源页面",
    "source_parts": "需要查看列表的部分",
    "candidates": "候选：共{n}个（{src}）；保留{kept}个，排除{rejected}个，待核对{open}个，无法读取{lost}个",
    "kept": "已保留，以及目前读到的数值（空白：尚未读到）",
    "read_on": "出处",
    "own": "本页",
    "listing": "列表",
    "rejected": "已排除（{n}）",
    "lost": "无法读取（{n}）",
    "open": "待核对（{n}）",
    "listed": "列表所示",
    "conditions": "这些候选尚待核对的条件",
    "wants": "正要打开的页面",
    "values": "在其他页面上读到的数值",
    "failed": "无法加载的页面",
    "tries": "次尝试",
    "answer": "目前的答案",
    "none": "无",
}


def _esc(v) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(map(_esc, header)) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(map(_esc, r)) + " |" for r in rows]


def _ref(name: str, url: str | None) -> str:
    return f"{name} — {url}" if url else name


def _show(value) -> str:
    """A noted value as the state writes it: links as 'Name (url)', lists of entities joined."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", value).strip() or "—"
    if isinstance(value, list):
        out = []
        for x in value:
            if hasattr(x, "span"):
                span = x.span
                when = "" if span.start is None else f" [{span.start}–{'' if span.end is None else span.end}]"
                out.append(f"{x.name}" + (f" ({x.url})" if x.url else "") + when)
            else:
                out.append(str(x))
        return "; ".join(out) if out else "—"
    return str(value)


def _by_page(r) -> dict[str, list[tuple[str, object]]]:
    """The research's notes grouped by the page they were read on: url -> [(label, value)]."""
    out: dict[str, list[tuple[str, object]]] = {}
    for (u, _), (label, v) in r.memo.items():
        out.setdefault(u, []).append((label, v))
    return out


def _notes(notes: dict, url: str | None) -> str:
    """What the research noted from one page: 'Label: value' pairs."""
    return "; ".join(f"{label}: {_show(v)}" for label, v in notes.get(url, ())) if url else ""


def _linked(notes: dict, urls: set[str]) -> set[str]:
    """Pages the notes of `urls` link to (a candidate's country, whose notes decide a condition)."""
    out: set[str] = set()
    for u in urls:
        for _, v in notes.get(u, ()):
            if isinstance(v, list):
                out |= {x.url for x in v if getattr(x, "url", None)}
            elif isinstance(v, str):
                out |= {m.group(2) for m in _LINK.finditer(v)}
    return out - urls


def _relevant_labels(q: dict) -> set[str]:
    """The labels whose listed values the research may still use: its conditions', its plain
    columns' and its ranking value's."""
    out = {norm(c.get("label") or "") for c in q.get("conditions", []) if not c.get("path")}
    out |= {norm(c.get("label") or "") for c in q.get("columns", []) if not c.get("path") and c.get("base") == "row"}
    if q.get("rank"):
        out.add(norm(q["rank"].get("label") or ""))
    return {x for x in out if x}


def _listed(c, labels: set[str]) -> dict[str, str]:
    return {h: v for h, v in c.listed.items() if norm(h) in labels}


def write_state(r) -> str:
    """The research state of `r` (an `oracle.Research`), as the message the model writes."""
    r.notes_by_page = _by_page(r)
    t = _ZH if r.zh else _EN
    q = r.q
    lines = [f"## {t['head']}", ""]
    if r.brief.kind == "multihop":
        lines.append(f"{t['task']}: {q['start']} → " + " → ".join(h["label"] for h in q["hops"])
                     + (f" → {q['answer']['label']}" if q["answer"].get("attribute") else ""))
        path = getattr(r, "path", [])
        if path:
            lines.append(f"{t['chain']}: " + " → ".join(_ref(n, u) for n, u in path))
        _tail(r, t, lines)
        return "\n".join(lines).strip()
    cols = [c["name"] for c in q.get("columns", [])]
    conds = [c["text"] for c in q.get("conditions", [])]
    lines.append(f"{t['task']}: {t['rows_of'].format(plural=q['plural'])}"
                 + (f" ({'; '.join(conds)})" if conds else "") + f"; {t['columns']}: {', '.join(cols)}")
    labels = _relevant_labels(q)
    if r.candidates is None:
        lines += ["", f"{t['gathering']}:"]
        _source_progress(r, r.source, t, labels, lines)
    else:
        _candidates(r, t, labels, lines)
    _tail(r, t, lines)
    return "\n".join(lines).strip()


def _source_progress(r, src, t: dict, labels: set[str], lines: list[str]) -> None:
    """Where the candidates are being gathered: lists and their pages, pages to walk."""
    for reader in readers_of(src):
        _reader(reader, t, labels, lines)
    for s in _walk(src):
        if isinstance(s, BackList) and s.level_urls:
            lines.append(f"- {t['walk']}: " + "; ".join(_ref(n, u) for n, u in s.level_urls))
        elif isinstance(s, Named):
            url = r.name_url.get(norm(s.name))
            if url:
                lines.append(f"- {_ref(s.name, url)}")
        elif isinstance(s, PartList) and s.reader is None:
            url = r.name_url.get(norm(s.place))
            if url:
                lines.append(f"- {_ref(s.place, url)}")


def _walk(src) -> list:
    if src is None:
        return []
    if isinstance(src, Union):
        return [x for s in src.sources for x in _walk(s)]
    if isinstance(src, PartsOf):
        return _walk(src.parts) + [x for lst in (src.lists or []) for x in _walk(lst)]
    return [src]


def _reader(reader: ListReader, t: dict, labels: set[str], lines: list[str]) -> None:
    total = reader.total or 1
    lines.append("- " + t["list"].format(title=reader.title or reader.first, read=len(reader.pages), total=total))
    if reader.pages:
        lines.append(f"  - {t['read_at']}: " + ", ".join(reader.pages_read()))
    else:
        lines.append(f"  - {t['to_read']}: {reader.first}")
    missing = [(n, u) for n, u in reader.missing() if u]
    if missing and reader.pages:
        lines.append(f"  - {t['to_read']}: " + ", ".join(u for _, u in missing))
    rows = reader.rows()
    if rows:
        lines.append(f"  - {t['listed_so_far'].format(n=len(rows))}:")
        for n, u, cells in rows:
            shown = {h: v for h, v in cells.items() if norm(h) in labels}
            extra = "; ".join(f"{h} {strip_links(v)}" for h, v in shown.items())
            lines.append(f"    - {_ref(n, u)}" + (f" ({extra})" if extra else ""))


def _candidates(r, t: dict, labels: set[str], lines: list[str]) -> None:
    cands = r.candidates
    by = {s: [c for c in cands if c.state == s] for s in ("kept", "rejected", "open", "lost")}
    src = "; ".join(dict.fromkeys(c.source for c in cands if c.source)) or t["none"]
    lines += ["", t["candidates"].format(n=len(cands), src=src, kept=len(by["kept"]), rejected=len(by["rejected"]),
                                         open=len(by["open"]), lost=len(by["lost"]))]
    q = r.q
    cols = [c["name"] for c in q.get("columns", [])]
    rank = q.get("rank")
    rank_col = (rank.get("label") or rank["attribute"]) if rank and q["shape"] == "ranked" else None
    # the row's own name (a ranked row's cells are written once the ranking is settled: its name
    # must stay visible until then, or the answer would name a company the context no longer does)
    name_col = next((i for i, c in enumerate(q.get("columns", [])) if c.get("base") == "row" and c.get("attribute") is None
                     and not c.get("path")), None)
    if by["kept"]:
        header = cols + ([rank_col] if rank_col else []) + [t["read_on"]]
        rows = []
        for c in by["kept"]:
            for row in (c.links if c.links is not None else [c]):
                complete = all(n in row.cells for n in cols)
                own = {row.url, row.anchor.url if row.anchor else None}
                # where the values were read: the row's own page, else the other pages by name
                pages = {u for u, _ in row.where.values()}
                where = [t["own"]] if pages & own or len(row.where) < len(row.cells) else []
                where += list(dict.fromkeys(name for u, name in row.where.values() if u not in own))
                if not complete:  # its pages are still to be read: their addresses
                    where = [u for u in (row.url, row.other[1] if row.other else None, row.anchor.url if row.anchor else None) if u]
                cells = [row.cells.get(n, "") for n in cols]
                if name_col is not None and not cells[name_col] and row.name:
                    cells[name_col] = row.name
                if q["shape"] in ("timeline", "events") and row.other and not row.cells:
                    cells = [""] * len(cols)
                    lead = f"{row.name} → {_ref(*row.other)}"
                    cells[0] = lead
                if rank_col:
                    cells.append(row.rank_text or "")
                rows.append(cells + [", ".join(where)])
        lines += ["", f"{t['kept']}:"] + _table(header, rows)
    if by["rejected"]:
        lines += ["", f"{t['rejected'].format(n=len(by['rejected']))}: " + ", ".join(c.name for c in by["rejected"])]
    if by["lost"]:
        lines += ["", f"{t['lost'].format(n=len(by['lost']))}: " + ", ".join(c.name for c in by["lost"])]
    if by["open"]:
        lines += ["", f"{t['open'].format(n=len(by['open']))}:"]
        for c in by["open"]:
            shown = _listed(c, labels)
            extra = "; ".join(f"{h} {strip_links(v)}" for h, v in shown.items())
            notes = _notes(r.notes_by_page, c.url)
            lines.append(f"- {_ref(c.name, c.url)}" + (f" ({t['listed']}: {extra})" if extra else "")
                         + (f": {notes}" if notes else ""))
        implied = r.source.implied if r.source is not None else frozenset()
        todo = [c["text"] for c in q.get("conditions", []) if c["letter"] not in implied]
        if todo:
            lines.append(f"{t['conditions']}: " + "; ".join(f"\"{x}\"" for x in todo))


def _pages(r) -> set[str]:
    """The pages whose notes the research may still use: the open candidates', the incomplete
    rows', the chain's and the walk's, and the pages their notes link to."""
    urls: set[str] = set()
    cols = [c["name"] for c in r.q.get("columns", [])]
    work_left = False
    for c in r.candidates or []:
        if c.state == "open":
            urls.add(c.url)
            work_left = True
        elif c.state == "kept":
            for row in (c.links if c.links is not None else [c]):
                if not all(n in row.cells for n in cols) or (r.q.get("shape") == "ranked" and c.rank_value is None):
                    urls |= {row.url, row.other[1] if row.other else None, row.anchor.url if row.anchor else None}
                    work_left = True
    if work_left:
        # What linked pages gave (a prize's field, a laureate's country): the rows still to fill
        # will need them again (ten editions of one prize), and without them the oracle reopened
        # the prize's page after every compaction (9 times for a 44-row table under 12,000 tokens).
        own = {c.url for c in r.candidates or []} | {row.url for c in r.candidates or [] for row in c.links or []}
        urls |= {u for (u, key) in r.memo if key and key[0] == "attr" and u not in own}
    urls |= {u for _, u in getattr(r, "path", [])}
    if r.candidates is None:
        for s in _walk(r.source):
            if isinstance(s, BackList) and s.level_urls:
                urls |= {u for _, u in s.level_urls}
            for reader in readers_of(s):
                urls |= {u for _, u, _ in reader.rows()}
    urls.discard(None)
    for _ in range(3):
        more = _linked(r.notes_by_page, urls)
        if not more:
            break
        urls |= more
    return urls


def _tail(r, t: dict, lines: list[str]) -> None:
    pages = _pages(r)
    shown = {c.url for c in r.candidates or [] if c.state == "open"}
    other = [u for u in dict.fromkeys(u for (u, _) in r.memo) if u in pages and u not in shown]
    if other:
        lines += ["", f"{t['values']}:"]
        lines += [f"- {_ref(r.label_of(u), u)}: {_notes(r.notes_by_page, u)}" for u in other]
    r.memo = {k: v for k, v in r.memo.items() if k[0] in pages}  # the notes the state carries
    said = {u.rstrip(".,;:") for u in URL_RE.findall("\n".join(lines))}
    wants = [(u, p) for u, p in r.wants.items() if u not in r.read and u not in said][:WANTS_MAX]
    if wants:
        lines += ["", f"{t['wants']}:"]
        lines += [f"- {_ref(p[1] or r.label_of(u), u)}" + (f" ({p[2]})" if len(p) > 2 and p[2] else "") for u, p in wants]
    failed = [u for u in sorted(r.failed) if u not in r.read]
    if failed:
        lines += ["", f"{t['failed']}:"]
        lines += [f"- {_ref(r.label_of(u), u)} ({r.tries[u]} {t['tries']})" for u in failed]


def forget(r, state: str) -> None:
    """After the state is written: keep what it carries, drop every page and result read before."""
    urls = {u.rstrip(".,;:") for u in URL_RE.findall(state)}
    r.forgotten |= r.seen - urls
    r.seen = set(urls)
    for key in [k for k in r.search_tries if k in r.results]:  # searches that worked may be run again
        del r.search_tries[key]
    for store in (r.read, r.results, r.fallback, r.snippets, r.full_lists, r.second, r.second_of, r.verifying,
                  r.wants, r.search_wants):
        store.clear()
    r.name_url = {k: u for k, u in r.name_url.items() if u in urls}
    r.profile_of = {a: p for a, p in r.profile_of.items() if p in urls}
    r.link_names = {u: n for u, n in r.link_names.items() if u in urls}
    r.notes, r.note_claims, r.decisions, r.trouble, r.asking = [], [], [], [], []
    labels = _relevant_labels(r.q) if r.brief.kind == "table" else set()
    for c in r.candidates or []:
        c.waiting = None
        c.listed = _listed(c, labels) if c.state == "open" else {}  # a kept row's listed values are in its cells
        for row in c.links or []:
            row.waiting = None
    if r.candidates is not None:
        return
    for reader in readers_of(r.source):
        for n, row in list(reader.pages.items()):  # the rows listed so far, with the columns the state shows
            headers, rows, total = row
            keep = [0] + [i for i, h in enumerate(headers) if i and norm(h) in labels]
            reader.pages[n] = ([headers[i] for i in keep], [(a, b, [cells[i - 1] for i in keep[1:] if i - 1 < len(cells)])
                                                            for a, b, cells in rows], total)
