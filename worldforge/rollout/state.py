"""The oracle's research notes: what it writes when its context fills, and what it keeps after.

When the episode asks for its research state (`context.py`), the oracle writes a *note*, and the
conversation goes on from the task and every note written so far (the latest last). So a note
carries what changed since the last one, from its research and nothing else:

- the rows settled since then, once, in one table with the answer's own columns (no column
  twice, none re-cased), and where their values came from said once below it;
- the candidates rejected since then, with the value that ruled each out;
- what is still open, in detail: candidates to check and rows lacking cells, each with its
  address the first time a note names it (later notes name it only: the address is in the
  earlier note, still in view), the values read so far for them, the conditions still to
  check, the pages it was about to open and the pages that would not load.

Then it forgets: the pages it had read, the search results, every address and name no note
carries (`forget`). What it does next is decided from the notes and the pages it opens
afterwards, so every later call and every cell of its answer is supported by what the model
can see, and no settled row is ever copied forward.
"""

from __future__ import annotations

import re

from ..language import Language
from ..records import Shape
from .reading import URL_RE, paged, read_date
from .sources import BackList, ListReader, Named, PartList, PartsOf, Union, host, norm, readers_of, strip_links

WANTS_MAX = 12  # pages it was about to open that a note names besides its candidates
_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")


class Noted:
    """What the notes written so far carry: the rows settled, the values and addresses given,
    the candidates rejected (a note says only what is new)."""

    def __init__(self):
        self.count = 0
        self.rows: set[tuple] = set()
        self.values: set[tuple] = set()  # (row key, column)
        self.ranks: set[tuple] = set()
        self.urls: set[str] = set()
        self.rejected: set[str] = set()
        self.memo: set[tuple] = set()
        self.listed: set[str] = set()  # list entries given (by address)
        self.shown: set[str] = set()  # candidates whose listed values the last note gave (by address)
        self.text: list[str] = []  # every note, in order
        self.visible: set[str] = set()  # the addresses in view while a note is written
        self.said: set[str] = set()  # status lines an earlier note gave word for word (not given again)

    def once(self, text: str) -> bool:
        """Whether a status line (a list's progress, the candidates' count, the conditions left)
        is news: the earlier notes stay in view until one replaces them all, so a line they give
        word for word is not written again."""
        if text in self.said:
            return False
        self.said.add(text)
        return True


def _noted(r) -> Noted:
    if r.values.notebook is None:
        r.values.notebook = Noted()
    return r.values.notebook


def _esc(v) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(map(_esc, header)) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(map(_esc, r)) + " |" for r in rows]


def _tables(cols: list[str], body: list[list[str]], owner: list[int], name_col: int | None) -> list[str]:
    """Settled rows as a note gives them: one table, or, where a candidate gives several rows (a
    person's tenures) and some columns hold one value for all of a candidate's rows (the person's
    birthplace), those columns once a candidate in a table of their own and the rest a row at a
    time in a second table, each keyed by the name column. Nothing is lost: every row reads back
    as its candidate's line joined to its own."""
    rows_of: dict[int, list[int]] = {}
    for i, o in enumerate(owner):
        rows_of.setdefault(o, []).append(i)
    if (name_col is None or not any(len(idx) > 1 for idx in rows_of.values())
            or any(len({body[i][name_col] for i in idx}) > 1 for idx in rows_of.values())):
        return _table(cols, body)  # no candidate with several rows, or a name that does not key them
    same = [j for j in range(len(cols)) if j != name_col and all(len({body[i][j] for i in idx}) == 1 for idx in rows_of.values())]
    if not same or len(same) == len(cols) - 1:
        return _table(cols, body)
    rest = [j for j in range(len(cols)) if j not in same]
    return (_table([cols[name_col]] + [cols[j] for j in same], [[body[idx[0]][name_col]] + [body[idx[0]][j] for j in same]
                                                                 for idx in rows_of.values()])
            + [""] + _table([cols[j] for j in rest], [[row[j] for j in rest] for row in body]))


def _show(value, visible: set[str] | None = None) -> str:
    """A noted value as a note writes it: links as 'Name (url)' (the name alone where the
    address is not in view, or where `visible` is empty: a link the research does not follow),
    lists of entities joined."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if visible is None or m.group(2) in visible else m.group(1),
                         value).strip() or "—"
    if isinstance(value, list):
        out = []
        for x in value:
            if hasattr(x, "span"):
                span = x.span
                when = "" if span.start is None else f" [{span.start}–{'' if span.end is None else span.end}]"
                shown = x.url and (visible is None or x.url in visible)
                note = f", {span.note}" if getattr(span, "note", None) else ""  # the link's own attributes ('principal investigator')
                out.append(f"{x.name}" + (f" ({x.url})" if shown else "") + when + note)
            else:
                out.append(str(x))
        return "; ".join(out) if out else "—"
    return str(value)


def _by_page(r) -> dict[str, list[tuple[tuple, str, object]]]:
    """The research's notes grouped by the page they were read on: url -> [(key, label, value)]."""
    out: dict[str, list] = {}
    for (u, key), (label, v) in r.values.memo.items():
        out.setdefault(u, []).append(((u, key), label, v))
    return out


def _linked(notes: dict, urls: set[str]) -> set[str]:
    """Pages the notes of `urls` link to (a candidate's country, whose notes decide a condition)."""
    out: set[str] = set()
    for u in urls:
        for _, _, v in notes.get(u, ()):
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
    """A candidate's list cells the research needs, leaving out empty ones ('–': the list has no
    value there, so nothing to carry)."""
    return {h: v for h, v in c.listed.items() if norm(h) in labels and strip_links(v).strip(" –-—")}


def _ref(name: str, url: str | None, noted: Noted) -> str:
    """A name, with its address the first time a note gives it (an address the research can
    see: one a note or a result in view showed)."""
    if not url or url in noted.urls or url not in noted.visible:
        return name
    noted.urls.add(url)
    return f"{name} — {url}"


def _on_list(r, url: str | None, noted: Noted) -> bool:
    """Whether `url` is an entry of a list page the notes give (a reader can read it there again)."""
    if not url:
        return False
    for reader in r.list_readers():
        k = reader.page_of.get(url)
        if k is not None and reader.page_url(k) in noted.urls:
            return True
    return False


def _compact(r, names_urls: list[tuple[str, str | None]], t: dict) -> str:
    """Names in list order, a long run of consecutive entries as its first and last."""
    order = {u: i for i, (_n, u, _c) in enumerate(x for reader in r.list_readers() for x in reader.rows())}
    items = sorted(names_urls, key=lambda nu: order.get(nu[1], 10**9))
    sep = r.lang.list_sep
    out, run = [], []

    def flush():
        if len(run) >= 6:
            out.append(t["run"].format(first=run[0][0], last=run[-1][0], n=len(run)))
        else:
            out.extend(n for n, _ in run)
        run.clear()

    for n, u in items:
        i = order.get(u)
        if run and (i is None or order.get(run[-1][1]) is None or i != order[run[-1][1]] + 1):
            flush()
        run.append((n, u))
    flush()
    return sep.join(out)


NEXT_UP = 8  # open items a note gives with their addresses, in list order (the rest: on the list's pages)


def _next_up(r, items: list, noted: Noted) -> list:
    """The first few of `items` (candidates or rows) in list order: a note gives their addresses,
    so the next segment starts on them without reading the list again."""
    order = {u: i for i, (_n, u, _c) in enumerate(x for reader in r.list_readers() for x in reader.rows())}
    return sorted(items, key=lambda x: order.get(x.url, -1))[:NEXT_UP]


def _key(row) -> tuple:
    return (row.name, row.url, row.other)


def write_state(r, consolidate: bool = False) -> str:
    """The next research note of `r` (an `oracle.Research`), as the message the model writes;
    with `consolidate`, one that replaces every earlier note (they fill too much of the context)."""
    noted = _noted(r)
    if consolidate:
        count = noted.count
        noted = r.values.notebook = Noted()
        noted.count = count
    noted.count += 1
    noted.visible = set(r.pages.seen)
    r.values.notes_by_page = _by_page(r)
    t = r.told.voice.bank["notes"]
    q = r.q
    lines = [f"## {t['head'].format(k=noted.count)}" + (f" {t['all']}" if consolidate else ""), ""]
    if r.brief.kind == Shape.MULTIHOP:
        lines.append(f"{t['task']}: {q['start']} → " + " → ".join(h["label"] for h in q["hops"])
                     + (f" → {q['answer']['label']}" if q["answer"].get("attribute") else ""))
        path = getattr(r, "path", [])
        if path:
            lines.append(f"{t['chain']}: " + " → ".join(_ref(n, u, noted) for n, u in path))
        _tail(r, t, lines, noted)
        return _done(noted, lines, r.lang)
    if noted.count == 1 or consolidate:
        cols = [c["name"] for c in q.get("columns", [])]
        conds = [_cond_text(c, t) for c in q.get("conditions", [])]
        lines.append(f"{t['task']}: {t['rows_of'].format(plural=q['plural'])}"
                     + (f" ({'; '.join(conds)})" if conds else "") + f"; {t['columns']}: {', '.join(cols)}")
    labels = _relevant_labels(q)
    if r.candidates is None:
        part: list[str] = []
        _source_progress(r, r.source, t, labels, part, noted)
        lines += ["", f"{t['gathering']}:"] + (part or [f"- {t['as_before']}"])
    else:
        _candidates(r, t, labels, lines, noted)
    _tail(r, t, lines, noted)
    return _done(noted, lines, r.lang)


def _done(noted: Noted, lines: list[str], lang: Language) -> str:
    # the note's ASCII marks as the language writes them (a table row keeps its pipes and commas;
    # a URL ends at the mark that follows it, `plumbing.URL_PATTERN`)
    lines = [x if x.startswith("|") else lang.retype(x) for x in lines]
    text = "\n".join(lines).strip()
    noted.text.append(text)
    noted.urls |= {u.rstrip(".,;:") for u in URL_RE.findall(text)}
    return text


def progress_signature(r) -> tuple:
    """What the research has settled: a note written when this has not moved since the last one
    marks a research going round in circles."""
    cands = r.candidates or []
    rows = [row for c in cands for row in (c.links if c.links is not None else [c])]
    return (sum(c.state != "open" for c in cands), sum(len(row.cells) for row in rows), sum(c.rank_value is not None for c in cands),
            sum(c.links is not None for c in cands), len(rows),
            sum(len(x.pages) for x in readers_of(r.source)) if r.source is not None else 0, len(getattr(r, "path", []) or []))


def _source_progress(r, src, t: dict, labels: set[str], lines: list[str], noted: Noted) -> None:
    """Where the candidates are being gathered: lists and their pages, pages to walk."""
    for reader in [*readers_of(src), *r.pages.full_lists.values()]:
        _reader(reader, t, r.lang, labels, lines, noted)
    for s in _walk(src):
        if isinstance(s, BackList) and s.level_urls:
            walk = f"- {t['walk']}: " + "; ".join(_ref(n, u, noted) for n, u in s.level_urls)
            if noted.once(walk):
                lines.append(walk)
        elif isinstance(s, Named):
            url = r.pages.name_url.get(norm(s.name))
            if url:
                lines.append(f"- {_ref(s.name, url, noted)}")
        elif isinstance(s, PartList) and s.reader is None:
            url = r.pages.name_url.get(norm(s.place))
            if url:
                lines.append(f"- {_ref(s.place, url, noted)}")


def _walk(src) -> list:
    if src is None:
        return []
    if isinstance(src, Union):
        return [x for s in src.sources for x in _walk(s)]
    if isinstance(src, PartsOf):
        return _walk(src.parts) + [x for lst in (src.lists or []) for x in _walk(lst)]
    return [src]


def _reader(reader: ListReader, t: dict, lang: Language, labels: set[str], lines: list[str], noted: Noted,
            period: tuple[int | None, int | None] | None = None) -> None:
    """A list read part-way: its pages read and to read, and how many entries they hold. A full
    list a row's cell comes from (`period`: the task's years) gives the entries the task can use
    too, since the pages leave the context with the note; a list of candidates does not copy its
    entries (the candidates' addresses are read on its pages again when needed)."""
    total = reader.total or 1
    block = lines
    lines = ["- " + t["list"].format(title=reader.title or reader.first, read=len(reader.pages), total=total)]
    read = [u for u in reader.pages_read() if u not in noted.urls and u in noted.visible]
    if read:
        lines.append(f"  - {t['read_at']}: " + ", ".join(read))
        noted.urls.update(read)
    if not reader.pages and reader.first in noted.visible:
        lines.append(f"  - {t['to_read']}: {reader.first}")
    missing = [u for _, u in reader.missing() if u and u not in noted.urls and u in noted.visible]
    if missing and reader.pages:
        lines.append(f"  - {t['to_read']}: " + ", ".join(missing))
    rows = reader.rows()
    if rows and period is None:
        lines.append(f"  - {t['entries'].format(n=len(rows))}")
    elif rows:  # the pages read leave the context with this note: the entries the task can use go into it
        sep = lang.semicolon
        lo, hi = period
        used = [(n, cells) for n, _u, cells in rows if _in_period(cells, lo, hi)]
        lines.append(f"  - {t['entries'].format(n=len(rows))}" + (sep + t["in_period"].format(n=len(used)) if lo or hi else "")
                     + (": " + sep.join(_entry(n, cells) for n, cells in used) if used else ""))
    if noted.once("\n".join(lines)):
        block += lines


def _years(period) -> tuple[int | None, int | None]:
    """A task's period as (first year, last year), either open."""
    a, b = period if period else (None, None)
    return (int(a[:4]) if a else None, int(b[:4]) if b else None)


def _in_period(cells: dict, lo: int | None, hi: int | None) -> bool:
    """Whether a full list's entry starts in the task's period (its first cell, a date)."""
    if lo is None and hi is None:
        return True
    start = read_date(strip_links(next(iter(cells.values()), "") or ""))
    return start is not None and (lo is None or start.year >= lo) and (hi is None or start.year <= hi)


def _entry(name: str, cells: dict) -> str:
    """One entry of a full list as a note gives it: its name and the cells it lists (dates first)."""
    vals = [strip_links(v) for v in cells.values() if v and v != "–"]
    return f"{name} ({', '.join(vals)})" if vals else name


def _sources(rows: list, t: dict, lang: Language) -> str:
    """Where the settled rows' values were read, said once: their own pages, but for the
    columns read elsewhere (a site their article linked), grouped by site and columns ("employees
    and ownership of X from its official site")."""
    cols_of: dict[tuple[str, str], list[str]] = {}  # (site, row) -> the columns read there
    for row in rows:
        own = {row.url, row.anchor.url if row.anchor else None, row.other[1] if row.other else None}
        for col, (u, _name) in row.where.items():
            if u not in own and u:
                got = cols_of.setdefault((host(u), row.name), [])
                if col not in got:
                    got.append(col)
    if not cols_of:
        return f"{t['sources_own']}."
    other: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # (site, columns) -> rows: "employees and ownership of X"
    for (site, name), cols in cols_of.items():
        other.setdefault((site, tuple(cols)), []).append(name)
    parts = [t["sources_from"].format(cols=lang.join(cols), names=lang.list_sep.join(dict.fromkeys(names)), site=site)
             for (site, cols), names in other.items()]
    return f"{t['sources_own']}{lang.comma}{t['sources_except']}: " + lang.semicolon.join(parts) + lang.stop


def _candidates(r, t: dict, labels: set[str], lines: list[str], noted: Noted) -> None:
    cands = r.candidates
    by = {s: [c for c in cands if c.state == s] for s in ("kept", "rejected", "open", "lost")}
    src = "; ".join(dict.fromkeys(c.source for c in cands if c.source)) or t["none"]
    head = t["candidates"].format(n=len(cands), src=src, kept=len(by["kept"]), rejected=len(by["rejected"]),
                                  open=len(by["open"]), lost=len(by["lost"]))
    if noted.once(head):
        lines += ["", head]
    q = r.q
    cols = [c["name"] for c in q.get("columns", [])]
    rank = q.get("rank")
    ranked = q["shape"] == "ranked"
    # the row's own name (a ranked row's cells are written once the ranking is settled: its name
    # stays in view until then, with its figure)
    name_col = next((i for i, c in enumerate(q.get("columns", [])) if c.get("base") == "row" and c.get("attribute") is None
                     and not c.get("path")), None)
    # a ranked table's rows are its top ones, once the ranking is settled (before, each kept
    # candidate needs only its figure); any other table's rows are the kept candidates (or their links)
    rows_of = ([(c, c) for c in r.ranked or []] if ranked else
               [(c, row) for c in by["kept"] for row in (c.links if c.links is not None else [c])])
    settled, partial, owner = [], [], []  # owner: the candidate each settled row is a link of
    for c, row in rows_of:
        complete = all(n in row.cells for n in cols)
        if complete and _key(row) not in noted.rows:
            settled.append(row)
            owner.append(id(c))
        elif not complete:
            partial.append((c, row))
    rank_need = []  # a ranked table before its ranking: the candidates whose figure is still to read
    if ranked and rank and r.ranked is None:
        rank_need = [c for c in by["kept"] if c.rank_value is None]
    pending = [c.url for c in by["open"]] + [row.url for _c, row in partial] + [c.url for c in rank_need]
    list_pages = list(dict.fromkeys(reader.page_url(reader.page_of[u]) for reader in r.list_readers()
                                    for u in pending if u in reader.page_of))
    fresh_pages = [u for u in list_pages if u and u not in noted.urls and u in noted.visible]
    if fresh_pages:
        lines += ["", f"{t['list_pages']}: " + ", ".join(paged(fresh_pages))]
        noted.urls.update(fresh_pages)
    if ranked and rank:
        label = rank.get("label") or rank["attribute"]
        figures = [c for c in by["kept"] if c.rank_text is not None and _key(c) not in noted.ranks]
        if figures:
            lines += ["", f"{t['ranked'].format(label=label)}: " + r.lang.semicolon.join(f"{c.name} {c.rank_text}" for c in figures)]
            noted.ranks.update(_key(c) for c in figures)
    if settled:
        head = t["settled_new"] if noted.rows else t["settled_first"]
        body = []
        for row in settled:
            cells = [row.cells.get(n, "") for n in cols]
            if name_col is not None and not cells[name_col] and row.name:
                cells[name_col] = row.name
            body.append(cells)
            noted.rows.add(_key(row))
            noted.values.update((_key(row), n) for n in cols)
        lines += ["", f"{head.format(n=len(settled))}:"] + _tables(cols, body, owner, name_col) + [_sources(settled, t, r.lang)]
    fresh_rej = [c for c in by["rejected"] if c.name not in noted.rejected]
    if fresh_rej:
        head = t["rejected"] if noted.rejected else t["rejected_first"]
        lines += ["", f"{head}: " + _compact(r, [(c.name, c.url) for c in fresh_rej], t)]
        noted.rejected.update(c.name for c in fresh_rej)
    fresh_lost = [c for c in by["lost"] if c.name not in noted.rejected]
    if fresh_lost:
        lines += ["", f"{t['lost']}: " + _compact(r, [(c.name, c.url) for c in fresh_lost], t)]
        noted.rejected.update(c.name for c in fresh_lost)
    if partial:
        _partial_rows(r, t, cols, name_col, partial, lines, noted)
    if rank_need:
        _rank_needed(r, t, rank, rank_need, lines, noted)
    reading = [x for x in r.pages.full_lists.values() if x.pages and x.missing()]  # full lists read part-way (a row's list column)
    part: list[str] = []
    for x in reading:
        _reader(x, t, r.lang, labels, part, noted, _years(q.get("period")))
    if part:  # (a list whose progress an earlier note gave word for word is not given again)
        lines += ["", f"{t['reading']}:"] + part
    noted.shown = set()
    if by["open"]:
        _open_candidates(r, t, labels, by["open"], lines, noted)



def _partial_rows(r, t: dict, cols: list[str], name_col: int | None, partial: list, lines: list[str], noted: Noted) -> None:
    """The kept rows still lacking cells: what each has and needs, with its address the first time
    a note names it; rows that need the same cells under one heading, or in one table."""
    q = r.q
    lines += ["", f"{t['open_rows'].format(n=len(partial))}:"]
    # what a row still needs -> its rows: with an address first noted here, and named only (addresses known)
    lacking: dict[tuple, tuple[list[str], list[tuple[str, str | None]]]] = {}
    with_cells: dict[tuple, list[tuple[str, list[str], list[str]]]] = {}  # (need, have) -> (row, addresses, values)
    links_label = (q.get("links") or {}).get("label") or ""
    soon = {id(x) for x in _next_up(r, [row for _c, row in partial], noted)}
    for c, row in partial:
        name_cols = {cols[name_col]} if name_col is not None else set()
        have = [(n, row.cells[n]) for n in cols if n in row.cells and n not in name_cols and (_key(row), n) not in noted.values]
        need = tuple(n for n in cols if n not in row.cells)
        if q["shape"] in ("timeline", "events") and c.links is None:
            need = (r.lang.quote(links_label),)  # its page lists the rows (its links)
        noted.values.update((_key(row), n) for n, _ in have)
        # the profile an article sent the research to for a cell it leaves out: named, so the
        # next segment reads it there instead of opening the article again
        off = r.pages.profile_of.get(row.url) if any(a == row.url for a, _k in r.pages.off_article) else None
        # (the article itself no longer, once it gave what it has: the cells it leaves out are on that profile)
        where = [u for u in dict.fromkeys((None if off and have else row.url, off, row.other[1] if row.other else None,
                                           row.anchor.url if row.anchor else None)) if u]
        fresh = [u for u in where if u not in noted.urls and u in noted.visible and (id(row) in soon or not _on_list(r, u, noted))]
        lead = row.name if row.other is None or row.cells else f"{row.name} → {row.other[0]}"
        noted.urls.update(fresh)
        refs = " ".join(f"— {u}" for u in fresh)
        if not have:  # rows that need the same cells are noted under one heading
            got = lacking.setdefault(need, ([], []))
            if fresh:
                got[0].append(f"{lead} {refs}")
            else:
                got[1].append((lead, row.url))
            continue
        with_cells.setdefault((need, tuple(n for n, _ in have)), []).append((lead, fresh, [v for _, v in have]))
    sep = r.lang.list_sep
    name_head = cols[name_col] if name_col is not None else t["row"]
    for (need, have_cols), got in with_cells.items():
        if len(got) >= 3:  # rows that have and need the same columns: one table, each column named once
            addressed = any(urls for _, urls, _ in got)
            lines.append(f"- {t['need']} {sep.join(need)} ({len(got)}):")
            lines += _table([name_head, *have_cols] + ([t["page"]] if addressed else []),
                            [[lead, *vals] + ([" ".join(urls)] if addressed else []) for lead, urls, vals in got])
            continue
        for lead, urls, vals in got:
            parts = [f"{t['have']}: " + "; ".join(f"{n} {v}" for n, v in zip(have_cols, vals)), f"{t['need']}: " + ", ".join(need)]
            lines.append(f"- {lead} " + " ".join(f"— {u}" for u in urls) + ": " + "; ".join(parts) if urls else
                         f"- {lead}: " + "; ".join(parts))
    for need, (refs, names) in lacking.items():
        head = f"- {t['need']} {sep.join(need)} ({len(refs) + len(names)})"
        if not refs:
            lines.append(f"{head}: " + _compact(r, names, t))
            continue
        lines += [f"{head}:"] + [f"  - {x}" for x in refs] + ([f"  - {_compact(r, names, t)}"] if names else [])


def _rank_needed(r, t: dict, rank: dict, rank_need: list, lines: list[str], noted: Noted) -> None:
    """A ranked table before its ranking: the kept candidates whose figure is still to read."""
    label = rank.get("label") or rank["attribute"]
    soon_ids = {id(c) for c in _next_up(r, rank_need, noted)}
    fresh = [c for c in rank_need if c.url and c.url not in noted.urls and c.url in noted.visible
             and (id(c) in soon_ids or not _on_list(r, c.url, noted))]
    fresh_ids = {id(c) for c in fresh}
    known = [c for c in rank_need if id(c) not in fresh_ids]
    lines += ["", f"{t['need']} {label} ({len(rank_need)}):"]
    lines += [f"- {_ref(c.name, c.url, noted)}" for c in fresh]
    if known:
        lines.append(f"- {_compact(r, [(c.name, c.url) for c in known], t)} ({t['addresses']})")


def _open_candidates(r, t: dict, labels: set[str], open_: list, lines: list[str], noted: Noted) -> None:
    """The candidates still to check: named only where a list in view holds them, with their
    address and what their list showed where first named, and the conditions left to check."""
    q = r.q
    lines += ["", f"{t['open'].format(n=len(open_))}:"]
    nxt = _next_up(r, open_, noted)
    soon = {id(c) for c in nxt}
    listed_there = [c for c in open_ if c.url not in noted.urls and _on_list(r, c.url, noted) and id(c) not in soon]
    there = {id(c) for c in listed_there}  # (by identity: a list's `in` compared every candidate field by field)
    known = [c for c in open_ if c.url in noted.urls]
    fresh = [c for c in open_ if c.url not in noted.urls and id(c) not in there]
    if listed_there:
        lines.append(f"- {_compact(r, [(c.name, c.url) for c in listed_there], t)} ({t['on_list']})")
    for c in fresh:
        noted.shown.add(c.url)
        shown = _listed(c, labels)
        extra = "; ".join(f"{h} {strip_links(v)}" for h, v in shown.items())
        notes = _notes_of(r, c.url, noted)
        lines.append(f"- {_ref(c.name, c.url, noted)}" + (f" ({t['listed']}: {extra})" if extra else "")
                     + (f": {notes}" if notes else ""))
    if known:
        lines.append(f"- {_compact(r, [(c.name, c.url) for c in known], t)} ({t['addresses']})")
    implied = r.source.implied if r.source is not None else frozenset()
    todo = [_cond_text(c, t) for c in q.get("conditions", []) if c["letter"] not in implied]
    said = f"{t['conditions']}: " + "; ".join(r.lang.quote(x) for x in todo)
    if todo and noted.once(said):
        lines.append(said)


def _notes_of(r, url: str | None, noted: Noted, stated: set | None = None) -> str:
    """What the research noted from one page and no note gave yet: 'Label: value' pairs (a
    value a row or a figure of the same entity already states is not said again)."""
    if not url:
        return ""
    out = []
    follow = followed(r.q)
    name = norm(r.label_of(url))
    for key, label, v in r.values.notes_by_page.get(url, ()):
        if key in noted.memo:
            continue
        noted.memo.add(key)
        if stated and (name, norm(strip_links(_show(v)))) in stated:
            continue
        out.append(f"{label}: {_show(v, noted.visible | noted.urls if norm(label) in follow else set())}")
    return "; ".join(out)


def followed(q: dict) -> frozenset[str]:
    """The page labels of the links whose targets the research reads (a headquarters whose city's
    population decides a condition): every hop of a condition's, a column's and the home chain's
    path but the last, and the last where something is read on the page it reaches (an attribute,
    a count). Notes keep the addresses of these links only; a link that is an answer or a test by
    name ('Founders: Dylan Henry') is noted by name."""
    out: set[str] = set()

    def add(path: list, last_read: bool) -> None:
        for i, h in enumerate(path or []):
            if i < len(path) - 1 or last_read:
                out.add(norm(h.get("label") or ""))
            for x in h.get("through") or []:
                out.add(norm(x.get("label") or ""))

    for c in q.get("conditions", []):
        add(c.get("path"), c.get("test") != "entity")
    for c in q.get("columns", []):
        add(c.get("path"), c.get("attribute") is not None or c.get("agg") == "count")
    add(q.get("home") or [], False)
    return frozenset(out - {""})


def _cond_text(c: dict, t: dict) -> str:
    """A condition as the notes say it: one the rows must not meet (B of 'A but not B', a
    question's rule) marked so ('left out: has died')."""
    return t["excluded"].format(cond=c["text"]) if c.get("negated") else c["text"]


def _stated(r) -> set[tuple[str, str]]:
    """(entity, value) pairs the rows and ranking figures carry."""
    out = set()
    for c in r.candidates or []:
        if c.rank_text:
            out.add((norm(c.name), norm(c.rank_text)))
        for row in (c.links if c.links is not None else [c]):
            out |= {(norm(row.name), norm(str(v))) for v in row.cells.values()}
    return out


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
        own |= {r.pages.profile_of[u] for u in own if u in r.pages.profile_of and r.pages.profile_of[u] not in urls}  # a candidate's other page
        urls |= {u for (u, key) in r.values.memo if key and key[0] == "attr" and u not in own}
    urls |= {u for _, u in getattr(r, "path", [])}
    if r.candidates is None:
        for s in _walk(r.source):
            if isinstance(s, BackList) and s.level_urls:
                urls |= {u for _, u in s.level_urls}
            for reader in readers_of(s):
                urls |= {u for _, u, _ in reader.rows()}
    urls.discard(None)
    for _ in range(3):
        more = _linked(r.values.notes_by_page, urls)
        if not more:
            break
        urls |= more
    return urls


def _tail(r, t: dict, lines: list[str], noted: Noted) -> None:
    pages = _pages(r)
    shown = {c.url for c in r.candidates or [] if c.state == "open"}
    cols = [c["name"] for c in r.q.get("columns", [])]
    own = {row.url for c in r.candidates or [] if c.state == "kept" for row in (c.links if c.links is not None else [c])
           if all(n in row.cells for n in cols)}  # a settled row's own page: what it gave is in the row
    other = [u for u in dict.fromkeys(u for (u, _) in r.values.memo) if u in pages and u not in shown and u not in own]
    told = []
    stated = _stated(r)
    for u in other:
        if u not in noted.visible and u not in noted.urls:
            continue  # an address out of view: what it gave is not carried
        notes = _notes_of(r, u, noted, stated)
        if notes:
            told.append(f"- {_ref(r.label_of(u), u, noted)}: {notes}")
    if told:
        lines += ["", f"{t['values']}:"] + told
    # the notes the research keeps: those of the pages it still needs, and every one a note gave
    r.values.memo = {k: v for k, v in r.values.memo.items() if k[0] in pages or k in noted.memo}
    said = {u.rstrip(".,;:") for u in URL_RE.findall("\n".join(lines))} | noted.urls
    wants = [(u, p) for u, p in r.agenda.wants.items() if u not in r.pages.read and u not in said and not _on_list(r, u, noted)][:WANTS_MAX]
    if wants:
        lines += ["", f"{t['wants']}:"]
        lines += [f"- {_ref(p[1] or r.label_of(u), u, noted)}" + (f" ({p[2]})" if len(p) > 2 and p[2] else "") for u, p in wants]
    failed = [u for u in sorted(r.pages.failed) if u not in r.pages.read]
    if failed:
        lines += ["", f"{t['failed']}:"]
        lines += [f"- {_ref(r.label_of(u), u, noted)} ({r.pages.tries[u]} {t['tries']})" for u in failed]


def forget(r, state: str) -> None:
    """After a note is written: keep what the notes carry, drop every page and result read before."""
    noted = _noted(r)
    urls = {u.rstrip(".,;:") for text in noted.text for u in URL_RE.findall(text)} | noted.urls
    r.pages.forget(urls)  # each store keeps what the notes carry
    for store in (r.searches, r.agenda, r.compared, r.told):
        store.forget()
    labels = _relevant_labels(r.q) if r.brief.kind == Shape.TABLE else set()
    for c in r.candidates or []:
        c.waiting = None
        # a kept row's listed values are in its cells; an open one's are in the note, or on its list page (read again)
        c.listed = _listed(c, labels) if c.state == "open" and c.url in noted.shown else {}
        for row in c.links or []:
            row.waiting = None
    if r.candidates is not None:
        return
    for reader in r.list_readers():
        for n, row in list(reader.pages.items()):  # where each entry is listed, not what its columns said
            headers, rows, total = row
            reader.pages[n] = (headers[:1], [(a, b, []) for a, b, _cells in rows], total)
