"""What a turn's results give the research: search results (their pages and snippets now in
view, a second source worth comparing) and pages (read, kept as a fallback, or failed, with what
the research will say of each). Functions of the episode's research (`oracle.Research`)."""

from __future__ import annotations

import json
from collections import Counter

from .compare import notice, weigh
from .env import ToolCall
from .reading import is_news_url, read_date, read_page, read_search
from .sources import host, is_encyclopedia, norm

CROSS_CHECKS_MAX = 4  # second sources an episode opens to compare, at most
STALE_DAYS = 180  # an article last edited longer ago than this is read as out of date (live ones: weeks)


def absorb(r, calls: list[ToolCall], results: list[dict]) -> None:
    r.searches.fresh_snippets = set()
    for c, res in zip(calls, results):
        args = json.loads(c.arguments)
        text = res["content"]
        cid = res["tool_call_id"]
        if c.name == "web_search":
            absorb_search(r, args, text, cid)
        else:
            absorb_page(r, args["url"], text, cid)



def absorb_search(r, args: dict, text: str, cid: str) -> None:
    qs = [args["query"], *args.get("queries", [])]
    blocks = read_search(text)
    if len(blocks) == 1 and blocks[0].error:
        r.told.note("search_failed", why=r.told.voice.error(blocks[0].error))
        return
    compared = False  # at most one second source per search
    for q, b in zip(qs, blocks):
        if not b.results:
            r.told.note("no_results", q=q)
            continue
        r.searches.results[norm(q)] = b.results
        art, q = r.agenda.verifying.get(norm(q), (None, q))  # q: the name the search was about
        if art is not None and len(r.compared.second) + len(r.compared.second_of) < CROSS_CHECKS_MAX and not compared:
            # a second source about the candidate, to compare with its article
            alike = [x for x in b.results if x.url != art and title_names(x.title, q)
                     and not is_encyclopedia(x.url) and "(page " not in x.title]
            # two pages of one name on one site, one on a news site with the name alone for a title,
            # or a profile dated by its last update are worth comparing (one may be out of date);
            # a lone profile now and then
            hosts = Counter(host(x.url) for x in alike)
            news = [is_news_url(x.url) for x in alike]
            odd = [x for x, n in zip(alike, news) if hosts[host(x.url)] > 1 or (norm(x.title) == norm(q) and n)
                   or (not n and read_date(x.date))]  # a profile with an update date: maybe out of date
            alike = odd[-1:] + [x for x in alike if x not in odd[-1:]]
            chance = r.opt.cross_check if odd else r.opt.cross_check / 3
            if alike and art not in r.compared.second and r.rng.random() < chance:
                r.compared.second[art] = alike[0].url
                r.pages.seen.add(alike[0].url)
                compared = True
        for x in b.results:
            if x.snippet not in r.searches.snippets.setdefault(x.url, []):
                r.searches.snippets[x.url].append(x.snippet)
                r.searches.fresh_snippets.add(x.url)
            r.pages.seen.add(x.url)
            r.pages.link_names.setdefault(x.url, x.title)
            if is_encyclopedia(x.url) and "(" not in x.title:
                r.pages.name_url.setdefault(norm(x.title), x.url)



def absorb_page(r, url: str, text: str, cid: str) -> None:
    page = read_page(url, text)
    if page.state == "ok" and page.edited and r.today and (r.today - page.edited).days > STALE_DAYS:
        page.state, page.archived = "archived", page.edited  # last edited long ago: a stale copy
    art = r.compared.second_of.get(url)
    if art is not None:
        if page.state == "ok":
            weigh(r, art, page)
        else:
            return  # opened only to compare: not tried again
    name = r.label_of(url)
    # no more tries after this one (a list page, which every row depends on, gets two more)
    last = r.pages.tries[url] > r.opt.max_retries + (2 if r.pages.purpose_of.get(url) == "list" else 0)
    if page.state == "archived" and "oldid=" in url:
        last = True  # a permanent link to an old revision reads the same however often it is loaded
    if page.state == "truncated":
        r.pages.fallback.setdefault(url, page)  # what it did show, if the whole page never comes
    elif page.state == "archived":
        r.pages.fallback[url] = page
    elif page.state == "missing":
        r.pages.failed.add(url)
    if page.state != "ok":
        if last or page.state == "missing":
            r.pages.failed.add(url)
            kept = r.pages.fallback.get(url)
            if kept is not None and kept.state == "archived":
                r.told.note("archived_kept", page=name, date=kept.archived)
            elif kept is not None:
                r.told.note("partial_kept", page=name)
            else:
                r.told.note("gave_up", claims=[("tries", r.pages.tries[url], url, "n")], page=name, n=r.pages.tries[url])
        elif page.state == "error":  # told next turn, once it is known whether the page is still needed
            r.agenda.trouble.append(("failed", url, dict(page=name, why=r.told.voice.error(page.error))))
        elif page.state == "truncated":
            r.agenda.trouble.append(("cut", url, dict(page=name)))
        elif page.state == "archived":
            r.agenda.trouble.append(("archived", url, dict(page=name, date=page.archived.isoformat() if page.archived else "?")))
        return
    r.pages.read[url] = page  # a second source too: an article may leave a value to it
    if art is not None:
        return
    if page.rows and r.candidates:  # a list page read again: what it shows of the candidates still open, or
        # kept with cells to fill (a ranked row kept before a note, whose list cells the note left out)
        at = {c.url: c for c in r.candidates if c.state in ("open", "kept") and not c.listed}
        for _n, u, cells in page.rows:
            if u in at:
                at[u].listed = dict(zip(page.headers[1:], cells))
    notice(r, url, page)
    for lab, cell in page.infobox + page.fields:  # the values a label takes, for reading prose later
        r.entities.know(lab, cell)
    for k, lab in enumerate(page.headers[1:]):
        for row in page.rows:
            if k < len(row[2]):
                r.entities.know(lab, row[2][k])
    for t, u in page.links:
        r.pages.seen.add(u)
        if t and u not in r.pages.link_names:
            r.pages.link_names[u] = t
        if is_encyclopedia(u) and t:
            r.pages.name_url.setdefault(norm(t), u)
    for _, u, _ in page.lists:
        r.pages.seen.add(u)
    r.pages.seen.update(page.page_urls.values())
    for u in (page.next_url, page.prev_url):
        if u:
            r.pages.seen.add(u)
    if page.name:
        r.pages.link_names[url] = page.name


def title_names(title: str, name: str) -> bool:
    """A result's title names this entity: the name whole, alone or before a qualifier ('Liu Feng',
    'Liu Feng (player)'), never a longer name it begins ('刘峰' is not '刘峰亮', 'Ann Lee' not 'Ann Leeds')."""
    t, n = norm(title), norm(name)
    return t.startswith(n) and (len(t) == len(n) or not t[len(n)].isalnum())


