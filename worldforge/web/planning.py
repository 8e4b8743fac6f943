"""Which pages a world's web has, entity by entity and list by list: an entity's article,
profile or official site, its overflow lists and archived captures, news stories on its events
and figures, and the directories, per-part lists and indexes that list entities; each `Page`
with the facts it states (its fact sheet), in plan order. The writers (`template`, `llm`) turn
each into text."""

from __future__ import annotations

import datetime as dt
import zlib
from collections import Counter
from collections.abc import Iterator

from ..world import (
    DateAttr,
    NumericAttr,
)
from .grammar import bank, word
from .pages import NAV_LINKS, PART_PAGE_SIZE, Page, WorldView, cap_facts, linked_entities, may_be_part_type, slug
from .text import Fact, pick

# --------------------------------------------------------------------------- planning




def news_predicates(view: WorldView, t: str) -> set[str]:
    """Predicates of type t whose facts get a news item: event attributes and dated relations,
    narrowed by the pack's `pages.news`."""
    et = view.types[t]
    events = {a for a, s in et.attributes.items() if isinstance(s, DateAttr) and s.event}
    dated = {r for r, rs in view.relations.items() if rs.source == t and (rs.history or rs.date or rs.since)}
    return events | dated if et.pages.news is None else (events | dated) & set(et.pages.news)


def plan_pages(view: WorldView) -> Iterator[Page]:
    """Every page of the world, in a fixed order (`shards.py` cuts the same plan into shards)."""
    seen_urls: set[str] = set()
    for t, et in view.types.items():
        own, incoming = view.facts_of_type(t)
        neigh = view.neighbour_facts(t)
        yield from entity_pages(view, t, view.ids[t], own, incoming, neigh, seen_urls)
        for d in et.pages.directories:
            yield from directory_pages(view, t, d, own)
        yield from part_directory_pages(view, t, own)
        yield from part_directory_pages(view, t, own, former=True)
        yield from part_index_pages(view, t, own)


def entity_pages(view: WorldView, t: str, ids: list[str], own: dict[str, list[Fact]], incoming: dict[str, list[Fact]],
                 neigh: dict[str, list[Fact]], seen_urls: set[str]) -> Iterator[Page]:
    """The articles, profiles, news items and full lists of entities `ids` of type t, given their
    own facts and incoming links (news items also their neighbours' summary facts)."""
    opts = view.options
    et = view.types[t]
    ps = et.pages
    news = news_predicates(view, t)
    context = [a for a, s in et.attributes.items() if view.dtype(t, a) == "string" and not isinstance(s, NumericAttr)][:2]
    homeless = view.homeless
    in_dirs = view.notable_only(t)
    for eid in ids:
        facts = own.get(eid, [])
        attr_facts = [f for f in facts if not view.meta[(t, f.predicate)].relation]
        out_facts = cap_facts([f for f in facts if view.meta[(t, f.predicate)].relation], opts.max_list_items)
        all_in = incoming.get(eid, [])
        home = eid in homeless  # no article: the profile is the entity's page
        article = ps.article and not home
        shown_in = [f for f in all_in if f.subject not in homeless or f.predicate not in in_dirs] if in_dirs and article else all_in
        in_facts = cap_facts(shown_in, opts.max_list_items)
        name = view.names[eid]
        archive = _archive(view, t, eid, attr_facts + out_facts, in_facts, context) if article else None
        # Three in five profiles of entities that changed lately were last updated on the archive's date:
        # they state the entity as it stood then (an old club, no later dates), dated by their by-line.
        stale = archive is not None and ps.profile is not None and pick(eid + "/stale-profile", 5) < 3
        # The encyclopedia leaves some facts to the entity's own profile or official site (a living
        # one states them all): those are on the profile and the news items, not the article.
        # A stale profile states some as they were (an older figure, no later date): the article keeps those.
        off = view.off_encyclopedia(t, attr_facts) if ps.profile is not None else frozenset()
        if stale and off:  # left to it only what it states as it is today, never a value that changes
            then_ids = {f.fact_id for f in archive[1]}
            off = frozenset(f.fact_id for f in attr_facts
                            if f.fact_id in off and f.fact_id in then_ids and f.predicate not in view.changing[t])
        if off and eid in view.article_title and et.lifecycle is not None:  # 'Name (person, 1961)' keeps its year's date
            off = off - {f.fact_id for f in attr_facts if f.predicate == et.lifecycle.start}
        stories = [_news_page(view, t, eid, f, facts, context, seen_urls, neigh) for f in facts
                   if f.predicate in news and (f.value_type == "date" or f.valid_from is not None)]
        report = _figures_page(view, t, eid, attr_facts, facts, context, seen_urls) if view.changing[t] else None
        if report is not None:
            stories.append(report)
        more: dict = {}
        if article:
            if len(in_facts) < len(all_in):  # the rest is on the directory pages, if the source type has one
                shown = Counter(f.predicate for f in in_facts)
                for pred, n in Counter(f.predicate for f in all_in).items():
                    if n > shown[pred]:
                        src = view.relations[pred].source
                        listed = any(d.by == pred for d in view.types[src].pages.directories)
                        more[pred] = (n, view.directory_url(src, pred, name, eid) if listed else overflow_url(view, eid, pred))
            lists = _part_lists_of(view, t, eid)
            furniture = {n for *_, n in lists} | ({opts.max_list_items, *(n for n, _ in more.values())} if more else set())
            capture = archive  # the article's capture leaves out what the live article does
            if off and archive is not None:
                capture = (archive[0], [f for f in archive[1] if f.fact_id not in off])
            shown = [f for f in attr_facts if f.fact_id not in off] if off else attr_facts
            layout = {"more": more, "lists": lists,
                      "refs": [(s.url, s.title, s.site, s.date) for s in stories]}
            if ps.profile is not None:
                layout["external"] = (view.profile_url[eid], bool(ps.profile.url), own_site(view, t, eid))
            yield Page(view.article_url[eid], "article", view.sites.encyclopedia.name, view.article_title.get(eid, name), None, eid,
                       linked_entities(eid, out_facts, in_facts), shown + out_facts + in_facts,
                       layout, tuple(sorted(furniture)), capture)
        if home:  # the entity's one page: all it is and links to, and (few: see `homeless`) all that link to it
            yield Page(view.profile_url[eid], "profile", own_site(view, t, eid), name, None, eid, linked_entities(eid, out_facts, in_facts),
                       attr_facts + out_facts + in_facts, {"home": True})
        elif ps.profile is not None:
            site = own_site(view, t, eid)  # an official site is the entity's own
            day, then = archive if stale else (None, facts)
            then = [f for f in then if f.subject == eid]  # the archive also holds links into the entity
            then_attrs = [f for f in then if not view.meta[(t, f.predicate)].relation] if stale else attr_facts
            then_links = [f for f in then if view.meta[(t, f.predicate)].relation] if stale else out_facts
            prof = [f for f in then_links if view.meta[(t, f.predicate)].to_one
                    or (view.meta[(t, f.predicate)].temporal and f.valid_to is None and f.valid_from is not None
                        and view.relations[f.predicate].history is not None)]
            yield Page(view.profile_url[eid], "profile", site, name, day, eid, linked_entities(eid, prof, []), then_attrs + prof)
        if article and more:
            yield from _overflow_pages(view, eid, all_in, more)
        yield from stories


def _part_lists_of(view: WorldView, t: str, eid: str) -> list[tuple[str, str, int]]:
    """A part's article links its per-part lists: (title, first page URL, entities listed)."""
    pl_ = view.part_lists() if may_be_part_type(view, t) else None
    if pl_ is None or pl_.root != t:
        return []
    name = view.names[eid]
    out = [(part_index_title(view, t), view.directory_url(t, "all", "list", None), len(view.ids[t]))]
    former = dict(pl_.former_counts.get(eid, []))
    for u, n in pl_.counts.get(eid, []):
        d = next((d for d in view.types[u].pages.directories if d.by == pl_.declared[u]), None) if u in pl_.declared else None
        title = d.text("title", view.lang).replace("{group}", name) if d is not None else view.part_list_title(u, name)
        out.append((title, view.directory_url(u, d.by if d is not None else pl_.by, name, eid), n))
        if u in former and u not in pl_.declared:
            out.append((view.part_list_title(u, name, former=True), view.directory_url(u, pl_.former_by, name, eid), former.pop(u)))
    out += [(view.part_list_title(u, name, former=True), view.directory_url(u, pl_.former_by, name, eid), n)
            for u, n in former.items() if u not in pl_.declared]
    return out






def overflow_url(view: WorldView, eid: str, pred: str) -> str:
    """The full list of an entity's incoming links of one kind, when no directory lists them: on
    its profile or official site (a city's people, a company's staff), else the encyclopedia's;
    shaped like a directory's address (listed type, grouping link, the entity)."""
    own = view.profile_url.get(eid)
    host = own.split("/")[2] if own else view.sites.encyclopedia.domain
    src = view.relations[pred].source
    return f"https://{host}/{slug(view.plural(src))}/{slug(pred)}/{slug(view.names[eid])}-{eid[-6:]}"




def own_site(view: WorldView, t: str, eid: str) -> str:
    """The site an entity's profile is on: its official site (named as the entity), else its
    type's profile site; the encyclopedia for a type without profiles."""
    ps = view.types[t].pages.profile
    if ps is None:
        return view.sites.encyclopedia.name
    return view.names[eid] if ps.url else view.sites.profile(ps.site).name


def _overflow_pages(view: WorldView, eid: str, all_in: list[Fact], more: dict) -> Iterator[Page]:
    """Paginated full lists behind an article's 'N of M shown' sections that no directory covers."""
    size = 20
    for pred, (_total, url) in sorted(more.items()):
        if url != overflow_url(view, eid, pred):
            continue
        src = view.relations[pred].source
        rows = sorted((f for f in all_in if f.predicate == pred),
                      key=lambda f: (view.names[f.subject], f.valid_from or dt.date.min, f.fact_id))
        n_pages = -(-len(rows) // size)
        urls = [url if i == 0 else f"{url}?page={i + 1}" for i in range(n_pages)]
        label = view.meta[(src, pred)].inverse_label
        title = word(view.lang, "list_title", subject=view.names[eid], label=label)
        for p in range(n_pages):
            chunk = rows[p * size:(p + 1) * size]
            yield Page(urls[p], "directory", own_site(view, view.type_of[eid], eid),
                       title if n_pages == 1 else title + word(view.lang, "page_tag", p=p + 1, n=n_pages), None, None,
                       tuple(dict.fromkeys([eid, *(f.subject for f in chunk)])), list(chunk),
                       {"rows": [(f.subject, f, []) for f in chunk], "columns": [], "by": pred, "type": src,
                        "group": view.names[eid], "page": p + 1, "pages": n_pages, "prev": urls[p - 1] if p else None,
                        "next": urls[p + 1] if p + 1 < n_pages else None, "first": p * size + 1, "urls": urls},
                       tuple(sorted({p + 1, n_pages, *page_links(p + 1, n_pages)})))


def _archive(view: WorldView, t: str, eid: str, own: list[Fact], incoming: list[Fact],
             context: list[str]) -> tuple[dt.date, list[Fact]] | None:
    """An earlier capture of an article: a date one to eight years before as_of (after the
    entity's first dated fact), and the facts as they stood on it. Links that ended later are
    shown as ongoing then; links and dates from after it are absent. None when nothing about the
    entity changed since that date (an archive would be the live page)."""
    dates = [f.valid_from or dt.date.fromisoformat(f.value) for f in own if f.valid_from or f.value_type == "date"]
    if not dates:
        return None
    years = 1 + pick(eid + "/archive", 8)
    try:
        captured = view.as_of.replace(year=view.as_of.year - years) - dt.timedelta(days=pick(eid + "/archive-day", 300))
    except ValueError:
        return None
    if captured <= min(dates) + dt.timedelta(days=365):
        return None
    changed = any((f.valid_from and f.valid_from > captured) or (f.valid_to and captured < f.valid_to <= view.as_of)
                  or (f.value_type == "date" and dt.date.fromisoformat(f.value) > captured) for f in own + incoming)
    changed = changed or any(  # a figure of another year (an entity whose life has ended has none)
        f.predicate in view.changing[t] and (p := view.past_fact(t, eid, f.predicate, captured.year)) is not None
        and p.value != f.value for f in own)
    if not changed:
        return None
    then = facts_at(view, t, own, captured, context)
    then += [f for f in incoming if f.valid_from is not None and f.valid_from <= captured
             and (f.valid_to is None or f.valid_to >= captured)]
    then = [f._replace(valid_to=None) if f.valid_to and f.valid_to > captured else f for f in then]
    return captured, then


def stage_on(stage: tuple, facts: list[Fact], day: dt.date) -> str | None:
    """The stage an entity was in on `day`, from its start and end dates among `facts`
    (`WorldView.stages`): finished once it ended, under way once begun, else planned."""
    start, end, (before, during, after) = stage
    got = {f.predicate: dt.date.fromisoformat(f.value) for f in facts if f.predicate in (start, end) and f.value_type == "date"}
    if end in got and got[end] <= day:
        return after
    return during if start in got and got[start] <= day or before is None else before


def _stage_holds(view: WorldView, t: str, f: Fact, facts: list[Fact], day: dt.date) -> bool:
    """Whether a page dated `day` may state `f`: any value but a stage's, and a stage's only
    where the entity was in it on that day (its history is by mid-year: in a year the stage
    changed, a page from the other side of the change leaves it out)."""
    stage = view.stages[t].get(f.predicate)
    return stage is None or f.value == stage_on(stage, facts, day)


def facts_at(view: WorldView, t: str, facts: list[Fact], day: dt.date, context: list[str]) -> list[Fact]:
    """The facts about an entity that a page dated `day` may state: dates up to that day, links
    that held on that day (their end, if any, lies in the page's future and is not stated), and
    undated attributes only when they cannot have changed (categories, the page's context
    attributes, figures without a history) or the page is recent (within a year of the world's
    as_of); a figure with a yearly history as it stood in the page's year."""
    recent = (view.as_of - day).days <= 365
    out = []
    for f in facts:
        m = view.meta[(t, f.predicate)]
        if m.relation:
            if f.valid_from is not None and f.valid_from <= day:  # ongoing then, or already over (its end is past too)
                out.append(f)
            elif f.valid_from is None and recent:
                out.append(f)
        elif f.value_type == "date":
            if dt.date.fromisoformat(f.value) <= day:
                out.append(f)
        elif f.predicate in view.changing[t] and view.has_history(t, f.subject, f.predicate):
            # that year's value (today's fact if it has not changed since)
            then = f if day.year >= view.as_of.year else view.past_fact(t, f.subject, f.predicate, day.year)
            if then is not None and _stage_holds(view, t, then, facts, day):
                out.append(f if then.value == f.value else then)
        elif f.predicate in view.changing[t]:  # no history (its life has ended): its last value, on recent pages
            if recent and _stage_holds(view, t, f, facts, day):
                out.append(f)
        elif f.predicate != "name" and (recent or f.predicate in view.timeless[t] or f.predicate in view.constant[t]):
            out.append(f)
    return out


def _news_page(view: WorldView, t: str, eid: str, event: Fact, facts: list[Fact], context: list[str], seen: set[str],
               neigh: dict[str, list[Fact]]) -> Page:
    when = event.valid_from or dt.date.fromisoformat(event.value)
    lag = pick(event.fact_id + "/lag", view.options.news_lag_days + 1)
    published = min(when + dt.timedelta(days=lag), view.as_of)
    alive = view.sites.outlets_in(published.year)
    outlet = alive[pick(event.fact_id + "/outlet", len(alive))]
    meta = view.meta[(t, event.predicate)]
    name = view.names[eid]
    fields = {"subject": name}
    if meta.relation:
        fields |= {"object": view.names[event.value], "start": str(when.year)}
        default = word(view.lang, "headline_link", subject=name, object=view.names[event.value], label=meta.label.lower())
    else:
        fields |= {"value": str(when.year)}
        default = word(view.lang, "headline_attr", subject=name, label=meta.label.lower())
    # Published when the event happens, so a headline never mentions a tenure's end.
    options = [h for h in meta.headlines if "{end}" not in h]
    headline = options[pick(event.fact_id + "/headline", len(options))].format(**fields) if options else default
    url = _story_url(outlet.domain, published, headline, seen)
    # Background as it stood on the publication day: never a fact from the page's future.
    ctx = [f for f in facts_at(view, t, facts, published, context) if f.fact_id != event.fact_id]
    # a paper gives the subject's figures and standing of the day ('the company, which employs 5,400 people')
    figures = [f for f in ctx if f.predicate in view.changing[t]]
    ctx = figures + sorted((f for f in ctx if f not in figures), key=lambda f: pick(url + f.fact_id, 1 << 30))[:max(0, 14 - len(figures))]
    ctx.sort(key=lambda f: f.fact_id)
    if event.value_type == "entity":  # what the other party was on that day
        other = view.type_of[event.value]
        ctx += [f for f in facts_at(view, other, neigh.get(event.value, []), published, []) if f.value != eid][:6]
    # (Not the places and firms the subject links to: their infobox facts in a story about
    # something else were padding, issue 37.) A link is said once, not again as its lookup
    # ("is a citizen of X", not also "has a nationality of X").
    # The subject's standing facts (nationality, birthplace, birth date, height) are background a
    # paper gives in one story in three, not in every one.
    et = view.types[t]
    start = et.lifecycle.start if et.lifecycle is not None else None
    ctx = [f for f in ctx if f.subject != eid or not (f.predicate in view.timeless[t] or f.predicate == start
                                                      or (f.value_type == "entity" and f.valid_from is None))
           or pick(url + "/bg/" + f.fact_id, 3) == 0]
    stated = {(f.subject, f.predicate) for f in ctx} | {(eid, event.predicate)}
    ctx = [f for f in ctx if (f.subject, view.echoes[view.type_of[f.subject]].get(f.predicate)) not in stated]
    ids = dict.fromkeys([eid] + ([event.value] if event.value_type == "entity" else []))
    speaker = None
    if view.person_like[t]:
        speaker = eid
    else:
        for f in [event, *ctx]:
            if f.value_type == "entity" and view.person_like[view.type_of[f.value]]:
                speaker = f.value
                break
    ids.update(dict.fromkeys(f.value for f in ctx if f.value_type == "entity"))
    return Page(url, "news", outlet.name, headline, published, eid, tuple(ids), [event, *ctx],
                {"event": event.fact_id, "speaker": speaker})


def _story_url(domain: str, day: dt.date, headline: str, seen: set[str]) -> str:
    """A news item's address, `https://<outlet>/YYYY/MM/DD/<headline>`, made unique among `seen`
    ('-2', '-3' after a headline the outlet ran that day already), and added to it."""
    base = f"https://{domain}/{day:%Y/%m/%d}/{slug(headline)[:80]}"
    url, k = base, 2
    while url in seen:
        url, k = f"{base}-{k}", k + 1
    seen.add(url)
    return url


def _figures_page(view: WorldView, t: str, eid: str, attr_facts: list[Fact], facts: list[Fact], context: list[str],
                  seen: set[str]) -> Page | None:
    """A paper's yearly figures about an entity whose figures have a history (a city's census, a
    company's annual results, an airport's passengers): dated in one of the last twelve years
    (of the last three for an entity whose history is younger), it states that year's figures,
    which later years changed, so an old report and the live pages disagree, each dated. Only
    the figures the type's `pages.news` lists, when it lists; None for an entity without such a
    figure's history."""
    listed = view.types[t].pages.news
    figs = [f for f in attr_facts if f.predicate in view.changing[t] and f.value_type in ("int", "float")
            and (listed is None or f.predicate in listed) and view.has_history(t, eid, f.predicate)]
    if not figs:
        return None
    then: list[Fact] = []
    for back in (1 + pick(eid + "/report", 12), 1 + pick(eid + "/report-late", 3)):  # a young entity's: lately
        year = view.as_of.year - back
        day = dt.date(year, 1 + pick(eid + "/report-month", 12), 1 + pick(eid + "/report-day", 28))
        then = facts_at(view, t, figs, day, [])
        if then:
            break
    if not then:
        return None  # the entity's history starts later
    alive = view.sites.outlets_in(day.year)
    outlet = alive[pick(eid + "/report-outlet", len(alive))]
    name = view.names[eid]
    options = bank(view.lang)["headline_figures"]
    headline = options[pick(eid + "/report-headline", len(options))].format(subject=name, year=year)
    url = _story_url(outlet.domain, day, headline, seen)
    then.sort(key=lambda f: f.fact_id)
    # and what else a paper says of it that day: its other changing values (a city's mayor), its standing
    told = {f.predicate for f in then}
    ctx = [f for f in facts_at(view, t, facts, day, context)
           if f.subject == eid and f.predicate not in told and not view.meta[(t, f.predicate)].relation]
    ctx = sorted(ctx, key=lambda f: (f.predicate not in view.changing[t], pick(url + f.fact_id, 1 << 30)))[:2]  # a mayor of the day first
    ctx.sort(key=lambda f: f.fact_id)
    return Page(url, "news", outlet.name, headline, day, eid, (eid,), [*then, *ctx],
                {"event": then[0].fact_id, "speaker": None, "figures": year})


def part_directory_pages(view: WorldView, t: str, own: dict[str, list[Fact]], former: bool = False) -> Iterator[Page]:
    """The per-part lists of a type ("Companies in Braeria"): every entity of the type whose chain
    of to-one links leads to the part, by name, `PART_PAGE_SIZE` rows a page, with the columns of
    the type's first directory. A question scoped to a part ("companies in Braeria") has a list to
    start from, as "List of companies of X" pages do on the real web. `former`: the entities that
    were in the part when their chain ended (a dissolved company), in lists of their own."""
    pl_ = view.part_lists()
    members = (pl_.former if former else pl_.of) if pl_ is not None else {}
    if pl_ is None or t not in members or t in pl_.declared:
        return
    groups: dict[str, list[str]] = {}
    for eid, part in zip(view.ids[t], members[t]):
        if part is not None:
            groups.setdefault(part, []).append(eid)
    columns = view.part_list_columns(t)
    for key in sorted(groups, key=lambda k: (view.names[k], k)):
        group_name = view.names[key]
        base = view.directory_url(t, pl_.former_by if former else pl_.by, group_name, key)
        yield from _list_pages(view, t, groups[key], own, columns, view.part_list_title(t, group_name, former), base,
                               {"part": pl_.root, "group": group_name}, first=key)


def part_index_pages(view: WorldView, t: str, own: dict[str, list[Fact]]) -> Iterator[Page]:
    """The list of every part ("List of countries"), by name, with the part type's directory
    columns: where a question about countries by their capital or government starts."""
    pl_ = view.part_lists()
    if pl_ is None or t != pl_.root:
        return
    title = part_index_title(view, t)
    yield from _list_pages(view, t, view.ids[t], own, view.part_list_columns(t), title,
                           view.directory_url(t, "all", "list", None), {"part": t, "index": True, "group": title})


def part_index_title(view: WorldView, t: str) -> str:
    return word(view.lang, "all_title", plural=view.plural(t))


def _list_pages(view: WorldView, t: str, members: list[str], own: dict[str, list[Fact]], columns: list[str], title: str,
                base: str, layout: dict, first: str | None = None) -> Iterator[Page]:
    """A list of entities by name, `PART_PAGE_SIZE` a page, with their `columns` (from `own`, their
    facts), numbered page links and previous/next; `first`: the entity the list is about, named
    first among the page's entities (a country for its list of companies)."""
    rows = sorted(members, key=lambda e: (view.names[e], e))
    size = PART_PAGE_SIZE
    n_pages = max(1, -(-len(rows) // size))
    urls = [base if i == 0 else f"{base}?page={i + 1}" for i in range(n_pages)]
    for p in range(n_pages):
        chunk = rows[p * size:(p + 1) * size]
        facts: list[Fact] = []
        table = []
        for eid in chunk:
            cols = [c for c in own.get(eid, []) if c.predicate in columns]
            facts.extend(cols)
            table.append((eid, None, cols))
        yield Page(urls[p], "directory", view.sites.directory.name, title if n_pages == 1 else title + word(view.lang, "page_tag", p=p + 1, n=n_pages),
                   None, None, tuple(dict.fromkeys([first, *chunk] if first else chunk)), facts,
                   {"rows": table, "columns": columns, "by": None, "type": t, **layout,
                    "page": p + 1, "pages": n_pages, "prev": urls[p - 1] if p else None,
                    "next": urls[p + 1] if p + 1 < n_pages else None, "first": p * size + 1, "urls": urls},
                   tuple(sorted({p + 1, n_pages, *page_links(p + 1, n_pages)})))


def page_links(page: int, pages: int) -> list[int]:
    """The page numbers a paginated list links to from page `page`: all of them when few, else the
    first, the last and the `NAV_LINKS` nearest."""
    if pages <= NAV_LINKS + 1:
        return list(range(1, pages + 1))
    lo = max(1, min(page - NAV_LINKS // 2, pages - NAV_LINKS + 1))
    return sorted({1, pages, *range(lo, lo + NAV_LINKS)})


def directory_pages(view: WorldView, t: str, d, own: dict[str, list[Fact]]) -> Iterator[Page]:
    """Group a type's entities by a relation target or attribute value; page_size rows per page."""
    groups: dict[str, list[tuple[str, Fact]]] = {}
    for eid in view.ids[t]:
        for f in own.get(eid, []):
            if f.predicate == d.by:
                groups.setdefault(f.value, []).append((eid, f))
    columns = set(d.columns)
    site = view.sites.directory
    slugs = Counter(slug(k) for k in groups)
    for key in sorted(groups, key=lambda k: (view.names.get(k, k), k)):
        rows = sorted(groups[key], key=lambda r: (view.names[r[0]], r[1].valid_from or dt.date.min, r[1].fact_id))
        entity_group = groups[key][0][1].value_type == "entity"
        group_name = view.names[key] if entity_group else key
        title = d.text("title", view.lang).replace("{group}", group_name)
        n_pages = -(-len(rows) // d.page_size)
        base = view.directory_url(t, d.by, group_name, key if entity_group else None)
        if not entity_group and slugs[slug(key)] > 1:  # values that differ only in punctuation
            base += f"-{zlib.crc32(key.encode()):08x}"
        urls = [base if i == 0 else f"{base}?page={i + 1}" for i in range(n_pages)]
        for p in range(n_pages):
            chunk = rows[p * d.page_size:(p + 1) * d.page_size]
            facts: list[Fact] = []
            table = []
            for eid, f in chunk:
                cols = [c for c in own.get(eid, []) if c.predicate in columns]
                facts.append(f)
                facts.extend(cols)
                table.append((eid, f, cols))
            ids = dict.fromkeys([key] if groups[key][0][1].value_type == "entity" else [])
            ids.update(dict.fromkeys(eid for eid, _ in chunk))
            yield Page(urls[p], "directory", site.name, title if n_pages == 1 else title + word(view.lang, "page_tag", p=p + 1, n=n_pages),
                       None, None, tuple(ids), facts,
                       {"rows": table, "columns": list(d.columns), "by": d.by, "type": t, "group": group_name,
                        "page": p + 1, "pages": n_pages, "prev": urls[p - 1] if p else None,
                        "next": urls[p + 1] if p + 1 < n_pages else None, "first": p * d.page_size + 1, "urls": urls},
                       tuple(sorted({p + 1, n_pages, *page_links(p + 1, n_pages)})))
