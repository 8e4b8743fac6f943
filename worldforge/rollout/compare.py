"""Weighing sources: a second page about an entity read against its article. Where they
disagree the research says so, and which it keeps and why (`weigh`); a dated profile read for
its own sake is weighed against the article of the same entity (`notice`). Functions of the
episode's research (`oracle.Research`: what it has read, what it will say)."""

from __future__ import annotations

import re

from ..web import word
from .reading import Page, read_date, read_number
from .sources import host, norm, strip_links

_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")


def weigh(r, art: str, other: Page, quiet: bool = False) -> None:
    """Weigh a second source against an entity's article: where they disagree, say so and keep
    the article's value (the encyclopedia, and fresher than a copy's last update); where they
    agree, now and then say that too."""
    page = r.pages.read.get(art)
    if page is None:
        return
    mine = {norm(lab): cell for lab, cell in page.infobox}
    site_b = other.site or host(other.url)
    if other.dated:  # the reader weighs sources by their dates: say which one it is
        site_b += r.lang.paren(word(r.lang.code, "updated", date=r.lang.date(other.dated)))
    same, diffs = None, []
    for lab, cell in other.infobox + other.fields:
        a = mine.get(norm(lab))
        if a is None:
            a = current_in_section(page, lab)  # a career list's current entries ('Clubs')
            if a is None or not _LINK.search(cell):
                continue
            named = {norm(t) for t, _u in _LINK.findall(cell)}
            if named & {norm(x) for x in a.split("; ")}:
                same = same or (lab, cell)
            else:
                diffs.append((lab, a, cell))
            continue
        if same_value(a, cell):
            same = same or (lab, cell)
        else:
            diffs.append((lab, a, cell))
    dated = next(((lab, b) for lab, a, b in diffs if read_date(strip_links(a))), None)
    if dated and page.title != page.name and not other.dated:
        # the article is one of namesakes ('Ana Ellison (person, 1973)'): other dates mean another entity
        r.told.note("namesake", site=site_b, name=page.name, label=r.lang.mid(dated[0]), value=strip_links(dated[1]))
        return
    if diffs:
        lab, a, cell = diffs[0]
        # 'the more recent source' only when the article's last edit is later than the other's update
        fresher = other.dated is not None and page.edited is not None and page.edited > other.dated
        why = r.told.voice.why("fresher" if fresher else "encyclopedia")
        r.compared.conflicts += 1
        r.told.decisions.append(("conflict", dict(name=page.name or page.title, label=r.lang.mid(lab), site_a=host(art),
                                                  a=strip_links(a), site_b=site_b, b=strip_links(cell), chosen=strip_links(a),
                                                  chosen_site=host(art), why=why)))
        return
    if same is not None and not quiet and r.rng.random() < 0.5:
        r.told.note("agree", site=site_b, name=page.name or page.title, label=r.lang.mid(same[0]), value=strip_links(same[1]))


def notice(r, url: str, page: Page) -> None:
    """A dated profile read for its own sake (a value the article leaves to it) and the
    article of the same entity: where they disagree (an older figure, a former employer),
    the reader says so and weighs them by their dates, as it does a second source."""
    if page.kind == "profile" and page.dated is not None:
        key = norm(page.name or page.title)
        r.compared.dated_profiles.setdefault(key, []).append(url)
        art = r.pages.name_url.get(key)
        read, weighed = r.pages.read, r.compared.weighed
        if art is not None and art in read and (art, url) not in weighed and same_entity(read[art], art, page, url):
            r.compared.weighed.add((art, url))
            weigh(r, art, page, quiet=True)
    elif page.kind == "article":
        for u in r.compared.dated_profiles.get(norm(page.name or page.title), ()):
            if (url, u) not in r.compared.weighed and u in r.pages.read and same_entity(page, url, r.pages.read[u], u):
                r.compared.weighed.add((url, u))
                weigh(r, url, r.pages.read[u], quiet=True)


def current_in_section(page: Page, label: str) -> str | None:
    """The entries a page's list section headed `label` shows as current ('since 2018', no
    end), joined with '; '; None without such a section or current entry."""
    sec = page.section(label)
    if sec is None:
        return None
    now = [i.name for i in sec.items if i.span.start is not None and i.span.end is None]
    return "; ".join(now) if now else None


def same_value(a: str, b: str) -> bool:
    """Two cells say the same: equal dates, numbers within rounding (1.23 million), or equal text."""
    a, b = strip_links(a), strip_links(b)
    da, db = read_date(a), read_date(b)
    if da or db:
        return da == db
    na, nb = read_number(a), read_number(b)
    if na is not None and nb is not None:
        return abs(na - nb) <= 0.01 * max(abs(na), abs(nb)) + 1e-9
    return norm(a) == norm(b)


def same_entity(art: Page, art_url: str, other: Page, other_url: str) -> bool:
    """An article and a profile about one entity, not namesakes: one links the other (a
    profile's "More about X" its own article, an article's external links its profile)."""
    return any(u == art_url for _, u in other.links) or any(u == other_url for _, u in art.links)


def disagree(a: Page, b: Page) -> bool:
    """Some value both pages give under one label differs between them."""
    mine = {norm(lab): cell for lab, cell in a.infobox + a.fields}
    return any(norm(lab) in mine and not same_value(mine[norm(lab)], cell) for lab, cell in b.infobox + b.fields)
