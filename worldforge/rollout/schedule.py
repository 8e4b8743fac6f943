"""How the research spends a turn's calls: which wanted pages to open now (one kind of work a
turn, as much as a turn reads with care), and which to search for first, a name with a label,
when a result's snippet may show the value and save the page. Functions of the episode's
research (`oracle.Research`)."""

from __future__ import annotations

from .sources import is_encyclopedia, norm

AHEAD_TRIAL, AHEAD_WORTH = 12, 0.25  # searches ahead of a label tried before judging them; the hit rate that keeps them
READ_LOAD = 5  # what one turn opens, by weight (`pages_to_open`)


def pages_to_open(r, pending: list[str], slots: int, budget: int = 0) -> list[str]:
    """The pages to open this turn: those wanted for the same purpose as the first one waiting
    (checking candidates, collecting a row's columns, following a link, reading a list), as
    many as the turn has slots for: one kind of work a turn, so the batch follows the need;
    every slot when the turns left are few for the pages still wanted."""
    if not pending:
        return []
    budget = budget or READ_LOAD
    env = getattr(r.ep, "env", None)
    limit = getattr(r.ep, "max_turns", None) or (env.options.max_turns if env is not None else None)
    if r.agenda.pressed or (limit is not None and (limit - r.agenda.turns_taken) * slots < 3 * len(pending)):
        return pending[:slots]  # short of turns (or of room) for what is left: every slot, whatever it is for
    focus = r.agenda.wants.get(pending[0], ("",))[0]
    same = [u for u in pending if r.agenda.wants.get(u, ("",))[0] == focus][:slots]
    # as much as a turn can read with care (`_weight`, five a turn; the first page whatever it
    # weighs; `budget` when a search ahead takes some), then a short page wanted for something else
    # if the turn has room
    out, load = [], 0
    for u in same:
        w = weight(r, u)
        if out and load + w > budget:
            break
        out.append(u)
        load += w
    # what the turn can still read goes to a short page wanted for something else
    for u in pending:
        if len(out) >= slots or load >= budget:
            break
        if u not in out and load + weight(r, u) <= budget:
            out.append(u)
            load += weight(r, u)
    return out



def weight(r, url: str) -> int:
    """What a page costs a turn to read: a list page three, an article two, any other one."""
    return 3 if r.agenda.wants.get(url, ("",))[0] == "list" else 2 if is_encyclopedia(url) else 1



def eligible(r, url: str) -> bool:
    """A page wanted only for dates, figures or values a snippet may show, or wanted to decide a
    condition (a snippet may rule the candidate out before its page is read), whose name has
    not been searched with that label yet."""
    if url not in r.agenda.figure_need:  # an entity's page (an article, or the profile that is its page)
        return False
    label = norm(r.agenda.figure_need[url])
    if r.agenda.ahead_tried[label] >= AHEAD_TRIAL and r.agenda.ahead_hit[label] < AHEAD_WORTH * r.agenda.ahead_tried[label]:
        return False  # the snippets seldom state this label: its pages are opened without a search first
    if r.q.get("shape") in ("timeline", "events") and r.agenda.wants.get(url, ("",))[0] == "check":
        # a kept candidate's article is read anyway (it lists the rows): a snippet saves a page only
        # when it rules the candidate out, or when the articles leave the value to a profile
        decided = [c.state for c in r.candidates or [] if c.state in ("kept", "rejected")]
        on, off = r.agenda.on_article[label], r.agenda.off_count[label]
        if (len(decided) >= AHEAD_TRIAL and decided.count("rejected") < AHEAD_WORTH * len(decided)
                and on + off >= AHEAD_TRIAL and off < 0.5 * (on + off)):
            return False
    if url in r.agenda.other_need and url not in r.agenda.deciding:
        return False  # the page is read anyway: a snippet could not save it
    if url in r.pages.beside_name:  # a profile an article sent the research to, for one value
        if any(p == url and a in r.agenda.wants and a not in r.pages.read for a, p in r.pages.profile_of.items()):
            return False  # its article is about to be read (for another cell): no search by the same name beside it
        return norm(f"{r.pages.beside_name[url]} {r.agenda.figure_need[url]}") not in r.searches.searched_names
    n = r.label_of(url)
    return bool(n) and n != url and norm(n) not in r.searches.searched_names



def searches_ahead(r, pending: list[str]) -> list[tuple[str, str]]:
    """(name, label) for the next four pages wanted only for a date or a figure, now searched."""
    out = []
    for u in pending:
        if u not in r.agenda.figure_need or not eligible(r, u):
            continue
        label = r.agenda.figure_need[u]
        if u in r.pages.beside_name:  # the name and that label: its result's snippet may show the value
            n = r.pages.beside_name[u]
            r.searches.searched_names.add(norm(f"{n} {label}"))
            out.append((n, label))
        else:
            n = r.label_of(u)
            out.append((n, label))
            r.searches.searched_names.add(norm(n))
            r.agenda.verifying[norm(f"{n} {label}")] = (u, n)
        r.agenda.ahead_tried[norm(label)] += 1
        if len(out) == 4:
            break
    return out
