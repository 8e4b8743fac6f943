"""The oracle policy: a careful researcher who knows where the answer is.

It plans from the task's evidence (the pages that state every gold cell and the directory
pages that list every row, proven by the tasks stage) and works the way a person would:
search for the list, open the list pages and follow their "next" links, open the pages of
the rows and of the entities their columns hop to, search for any page it has no link to
yet, retry failed calls, rephrase empty searches, reload cut-off or archived pages, ignore
low-quality copies, say briefly what it is doing before each call, and submit the gold
table. It only submits once every needed page has been read intact, so without
perturbations it scores 1.0, and with them it recovers by retrying (a page that keeps
failing is given up after `MAX_RETRIES` tries, and the trajectory shows it).
"""

from __future__ import annotations

import json
import re

from ..plumbing import stable_hash
from . import perturb
from .env import Episode, ToolCall, markdown_table

MAX_RETRIES = 10  # a task may need hundreds of pages: at heavy perturbation rates six tries would give some up
MAX_FOLLOW = 2  # "next" pages followed from a list page the plan needs (long directories are not read through)
MAX_FOLLOWED = 8  # and at most this many per episode
_RESULT_URL = re.compile(r"^\[\d+\] (\S+)$", re.M)
_LINK = re.compile(r"\]\((https?://[^)\s]+)\)")
_PAGE_SUFFIX = re.compile(r"\s*\(page \d+ of \d+\)$")
_NEXT = re.compile(r"\[Next page[^\]]*\]\((https?://[^)\s]+)\)")


def _cell_pages(row: list) -> list[int]:
    """The page indexes of a row's cells: an index, or a list of them where a cell needs several."""
    return [i for c in row for i in (c if isinstance(c, list) else [c])]


def _pick(key: str, options: tuple[str, ...]) -> str:
    return options[stable_hash(key) % len(options)]


def _args(**kw) -> str:
    return json.dumps(kw, ensure_ascii=False)


class OraclePlan:
    """The oracle's state for one episode."""

    def __init__(self, ep: Episode, titles: dict[str, str]):
        self.ep = ep
        rec = ep.task.record
        ev = rec["evidence"]
        pages = ev["pages"]
        listings = [pages[i] for i in ev["listings"]]
        cells = [pages[i] for row in ev["cells"] for i in _cell_pages(row)]  # a cell may need several pages
        support = [pages[i] for i in ev.get("support", [])]  # every ranked value, for a rank
        self.pending = list(dict.fromkeys(listings + cells + support))  # pages to read, in reading order
        self.listings = set(listings)
        self.follow: dict[str, int] = {}  # list pages reached through "next" links -> links followed
        self.titles = titles
        self.seen: set[str] = set()  # URLs met in results or as links: openable without a search
        self.read: set[str] = set()
        self.tries: dict[str, int] = {}
        self.searched: dict[str, int] = {}
        self.notes: list[str] = []  # observations to mention in the next turn's reasoning
        self.kind = rec["kind"]
        self.first = rec.get("discovery_query") or rec["constraint_values"][0]
        self.discovered = False
        self.discovery_tries = 0

    # ------------------------------------------------------------------ reading results

    def observe_search(self, text: str) -> None:
        for u in _RESULT_URL.findall(text):
            if perturb.original_of(u, self.ep.env.seed) is not None:
                site = u.split("/")[2]
                self.notes.append(f"One result is a copy on {site}, a copy site whose figures "
                                  "disagree with the original pages, so I will not rely on it.")
            else:
                self.seen.add(u.split("#", 1)[0])

    def observe_page(self, url: str, text: str) -> bool:
        """Whether the page was read intact; links on it become openable."""
        if text.startswith("Error"):
            self.notes.append(f"Loading {self.titles.get(url, url)} failed ({text.split('.', 1)[0]}); I'll retry.")
            return False
        if text.endswith(perturb.TRUNCATION_NOTE):
            self.notes.append(f"The page {self.titles.get(url, url)} was cut off part-way; I'll load it again.")
            return False
        if text.startswith("> Archived copy"):
            self.notes.append(f"That was an archived snapshot of {self.titles.get(url, url)}, possibly out of date; "
                              "I'll load the live page.")
            return False
        self.seen.update(_LINK.findall(text))
        if url in self.listings:
            nxt = _NEXT.search(text)
            depth = self.follow.get(url, 0) + 1
            if nxt and nxt.group(1) not in self.pending and depth <= MAX_FOLLOW and len(self.follow) < MAX_FOLLOWED:
                i = self.pending.index(url)
                self.pending.insert(i + 1, nxt.group(1))
                self.listings.add(nxt.group(1))
                self.follow[nxt.group(1)] = depth
                self.notes.append(f"The list {self.titles.get(url, url)!r} continues on a next page; I'll follow it.")
        return True

    # ------------------------------------------------------------------ acting

    def todo(self) -> list[str]:
        return [u for u in self.pending if u not in self.read and self.tries.get(u, 0) < MAX_RETRIES]

    def turn(self, parallel: int) -> tuple[str, list[ToolCall], list[str] | str | None]:
        """The next turn: reasoning text, calls, and the URLs the calls open (a string for a search)."""
        ep = self.ep
        notes, self.notes = " ".join(self.notes), []
        lead = f"{notes} " if notes else ""
        if not self.discovered and self.discovery_tries < 3:
            self.discovery_tries += 1
            if self.discovery_tries == 1:
                what = ("every row of the table" if self.kind == "table" else "a chain of linked facts")
                why = _pick(ep.key + "s", ("A list page is the quickest start", "I'll look for an overview page first",
                                           "Searching should turn up a directory or the main page"))
                return (f"The question needs {what}. {why}, so I'll search for \"{self.first}\".",
                        [ToolCall("web_search", _args(query=self.first))], "discovery")
            q = self.first if self.discovery_tries == 2 else f"list of {self.first}"
            return f"{lead}I'll run the search again as \"{q}\".", [ToolCall("web_search", _args(query=q))], "discovery"
        todo = self.todo()
        if not todo:
            return self.final(lead), [], []
        opens = [u for u in todo if u in self.seen][:parallel]
        lists_left = any(u in self.listings for u in todo)  # rows come from the lists: read those first
        unseen = [u for u in todo[: 2 * parallel] if u not in self.seen and (u in self.listings or not lists_left)][:parallel]
        calls, parts = [], []
        for u in opens:
            self.tries[u] = self.tries.get(u, 0) + 1
        lists = [u for u in opens if u in self.listings]
        others = [u for u in opens if u not in self.listings]
        if lists:
            names = ", ".join(self.titles.get(u, u) for u in lists)
            parts.append(f"I'll open the list page{'s' if len(lists) > 1 else ''} {names} to collect the candidates")
        if others:
            names = ", ".join(self.titles.get(u, u) for u in others)
            verb = _pick(f"{ep.key}{ep.turns}", ("read the facts the table needs from", "check the values on", "open"))
            parts.append(f"{'next' if lists else 'Next'} I'll {verb} {names}")
        calls += [ToolCall("web_extractor", _args(url=u)) for u in opens]
        if unseen:
            qs = []
            for u in unseen:
                n = self.searched.get(u, 0)
                self.searched[u] = n + 1
                title = _PAGE_SUFFIX.sub("", self.titles.get(u, u))  # people search for the list, not its page
                qs.append(title if n == 0 else f"{title} {u.split('/')[2].removeprefix('www.').split('.')[0]}")
                if n >= 2:
                    self.seen.add(u)  # after three searches a careful person uses the address found earlier
            names = ", ".join(f'"{q}"' for q in qs)
            if any(self.searched[u] > 1 for u in unseen):
                parts.append(f"the search did not show a page I need, so I'll rephrase it as {names}")
            else:
                parts.append(f"I have no link yet to {names}, so I'll search for {'them' if len(qs) > 1 else 'it'}")
            calls.append(ToolCall("web_search", _args(query=qs[0]) if len(qs) == 1 else _args(query=qs[0], queries=qs[1:])))
        left = len(todo) - len(opens)
        text = "; ".join(parts)
        text = lead + text[0].upper() + text[1:] + (f". {left} more page{'s' if left != 1 else ''} to go." if left else ".")
        return text, calls, opens

    def partial(self) -> tuple[str, str]:
        """Out of turns: submit only the rows whose every page was read intact."""
        rec = self.ep.task.record
        pages = rec["evidence"]["pages"]
        lists_ok = all(pages[i] in self.read for i in rec["evidence"]["listings"])
        rows = [r for r, cells in zip(self.ep.task.rows, rec["evidence"]["cells"])
                if lists_ok and all(pages[i] in self.read for i in _cell_pages(cells))]
        return (f"I am out of turns, so I'll submit the {len(rows)} row{'s' if len(rows) != 1 else ''} I could verify.",
                markdown_table(self.ep.task.header, rows))

    def final(self, lead: str) -> str:
        n = len(self.ep.task.rows)
        if self.kind == "table":
            return (f"{lead}I have read the page behind every cell of the {n} row{'s' if n != 1 else ''} that match. "
                    "Submitting the table.")
        return f"{lead}I have followed every link in the chain and found the answer. Submitting it."


def run_oracle(episodes: list[Episode], titles: dict[str, str], parallel: int) -> None:
    """Drive every episode to its end (episodes are independent; they run one after another)."""
    for ep in episodes:
        plan = OraclePlan(ep, titles)
        while not ep.done:
            text, calls, opened = plan.turn(parallel)
            if calls and ep.env.options.max_turns - ep.turns <= 1:
                text, answer = plan.partial()
                ep.act(text, [ToolCall("final_answer", _args(answer=answer))])
                break
            if not calls:
                ep.act(text, [ToolCall("final_answer", _args(answer=ep.task.gold_markdown()))])
                break
            results = ep.act(text, calls)
            opened = opened if isinstance(opened, list) else []
            for i, (c, r) in enumerate(zip(calls, results)):
                txt = r["content"]
                if c.name == "web_extractor":
                    u = opened[i]  # the page calls come first, one per opened URL
                    if plan.observe_page(u, txt):
                        plan.read.add(u)
                elif txt.startswith("Error"):
                    plan.notes.append(f"The search failed ({txt.split('.', 1)[0]}); I'll try again.")
                elif txt.startswith("No results found") and "\n[1]" not in txt:
                    plan.notes.append("The search returned no results.")
                else:
                    plan.discovered = True
                    plan.observe_search(txt)


def page_titles(engine, episodes: list[Episode]) -> dict[str, str]:
    """Titles of every evidence page of the episodes' tasks (one query)."""
    urls = sorted({u for ep in episodes for u in ep.task.record["evidence"]["pages"]})
    if not urls:
        return {}
    import polars as pl

    want = pl.DataFrame({"url": urls})  # noqa: F841 (read by DuckDB's replacement scan)
    return dict(engine.pages.execute("SELECT p.url, p.title FROM pages p JOIN want USING (url)").fetchall())
