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
_PAGE_SUFFIX = re.compile(r"\s*\(page \d+ of \d+\)$|（第\d+页，共\d+页）$")
_NEXT = re.compile(r"\[(?:Next page|下一页)[^\]]*\]\((https?://[^)\s]+)\)")

# What the oracle says, per task language. Lists are alternatives picked per episode.
MESSAGES = {
    "en": {
        "copy": "One result is a copy on {site}, a copy site whose figures disagree with the original pages, so I will not rely on it.",
        "failed": "Loading {page} failed ({why}); I'll retry.",
        "cut": "The page {page} was cut off part-way; I'll load it again.",
        "archived": "That was an archived snapshot of {page}, possibly out of date; I'll load the live page.",
        "continues": "The list {page!r} continues on a next page; I'll follow it.",
        "what_table": "every row of the table", "what_chain": "a chain of linked facts",
        "why": ("A list page is the quickest start", "I'll look for an overview page first",
                "Searching should turn up a directory or the main page"),
        "start": "The question needs {what}. {why}, so I'll search for \"{q}\".",
        "again": "I'll run the search again as \"{q}\".", "list_of": "list of {q}",
        "open_lists": "I'll open the list page{s} {names} to collect the candidates",
        "verbs": ("read the facts the table needs from", "check the values on", "open"),
        "next": "next I'll {verb} {names}", "Next": "Next I'll {verb} {names}",
        "rephrase": "the search did not show a page I need, so I'll rephrase it as {names}",
        "no_link": "I have no link yet to {names}, so I'll search for {them}", "them": "them", "it": "it",
        "sep": "; ", "quote": "\"{q}\"", "join": ", ",
        "left": ". {n} more page{s} to go.", "end": ".",
        "out_of_turns": "I am out of turns, so I'll submit the {n} row{s} I could verify.",
        "final_table": "I have read the page behind every cell of the {n} row{s} that match. Submitting the table.",
        "final_chain": "I have followed every link in the chain and found the answer. Submitting it.",
        "search_failed": "The search failed ({why}); I'll try again.", "no_results": "The search returned no results.",
    },
    "zh": {
        "copy": "有一条结果是{site}上的转载页面，这个转载站的数字与原始页面不符，所以我不采用它。",
        "failed": "打开{page}失败（{why}），我再试一次。",
        "cut": "页面{page}只加载了一部分，我重新打开。",
        "archived": "这是{page}的存档快照，可能已经过时，我改为打开当前页面。",
        "continues": "列表“{page}”还有下一页，我接着往下看。",
        "what_table": "表格的每一行", "what_chain": "一串相互关联的事实",
        "why": ("从列表页入手最快", "我先找一个总览页面", "搜索应该能找到目录页或主条目"),
        "start": "这个问题需要{what}。{why}，所以我先搜索“{q}”。",
        "again": "我换个说法重新搜索“{q}”。", "list_of": "{q} 列表",
        "open_lists": "我打开列表页{names}，收集候选条目",
        "verbs": ("从这些页面读取表格需要的信息：", "核对这些页面上的数值：", "打开"),
        "next": "接下来{verb}{names}", "Next": "接下来{verb}{names}",
        "rephrase": "搜索结果里没有我需要的页面，所以我改为搜索{names}",
        "no_link": "我还没有{names}的链接，所以先搜索一下", "them": "", "it": "",
        "sep": "；", "quote": "“{q}”", "join": "、",
        "left": "。还剩{n}个页面。", "end": "。",
        "out_of_turns": "轮次已用完，我提交已经核实的{n}行。",
        "final_table": "符合条件的{n}行中每个单元格所依据的页面我都已读过，现在提交表格。",
        "final_chain": "我已经沿着这条链上的每个链接找到了答案，现在提交。",
        "search_failed": "搜索失败（{why}），我再试一次。", "no_results": "搜索没有返回结果。",
    },
}


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
        self.m = MESSAGES.get(rec.get("language", "en"), MESSAGES["en"])
        self.discovered = False
        self.discovery_tries = 0

    # ------------------------------------------------------------------ reading results

    def observe_search(self, text: str) -> None:
        for u in _RESULT_URL.findall(text):
            if perturb.original_of(u, self.ep.env.seed) is not None:
                site = u.split("/")[2]
                self.notes.append(self.m["copy"].format(site=site))
            else:
                self.seen.add(u.split("#", 1)[0])

    def observe_page(self, url: str, text: str) -> bool:
        """Whether the page was read intact; links on it become openable."""
        if text.startswith("Error"):
            self.notes.append(self.m["failed"].format(page=self.titles.get(url, url), why=text.split(".", 1)[0]))
            return False
        if text.endswith(perturb.TRUNCATION_NOTE):
            self.notes.append(self.m["cut"].format(page=self.titles.get(url, url)))
            return False
        if text.startswith("> Archived copy"):
            self.notes.append(self.m["archived"].format(page=self.titles.get(url, url)))
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
                self.notes.append(self.m["continues"].format(page=self.titles.get(url, url)))
        return True

    # ------------------------------------------------------------------ acting

    def todo(self) -> list[str]:
        return [u for u in self.pending if u not in self.read and self.tries.get(u, 0) < MAX_RETRIES]

    def turn(self, parallel: int) -> tuple[str, list[ToolCall], list[str] | str | None]:
        """The next turn: reasoning text, calls, and the URLs the calls open (a string for a search)."""
        ep = self.ep
        m = self.m
        zh = m is MESSAGES["zh"]
        notes, self.notes = ("" if zh else " ").join(self.notes), []
        lead = (notes if zh else f"{notes} ") if notes else ""
        if not self.discovered and self.discovery_tries < 3:
            self.discovery_tries += 1
            if self.discovery_tries == 1:
                what = m["what_table"] if self.kind == "table" else m["what_chain"]
                why = _pick(ep.key + "s", m["why"])
                return (m["start"].format(what=what, why=why, q=self.first),
                        [ToolCall("web_search", _args(query=self.first))], "discovery")
            q = self.first if self.discovery_tries == 2 else m["list_of"].format(q=self.first)
            return lead + m["again"].format(q=q), [ToolCall("web_search", _args(query=q))], "discovery"
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
            names = m["join"].join(self.titles.get(u, u) for u in lists)
            parts.append(m["open_lists"].format(s="s" if len(lists) > 1 else "", names=names))
        if others:
            names = m["join"].join(self.titles.get(u, u) for u in others)
            verb = _pick(f"{ep.key}{ep.turns}", m["verbs"])
            parts.append(m["next" if lists else "Next"].format(verb=verb, names=names))
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
            names = m["join"].join(m["quote"].format(q=q) for q in qs)
            if any(self.searched[u] > 1 for u in unseen):
                parts.append(m["rephrase"].format(names=names))
            else:
                parts.append(m["no_link"].format(names=names, them=m["them"] if len(qs) > 1 else m["it"]))
            calls.append(ToolCall("web_search", _args(query=qs[0]) if len(qs) == 1 else _args(query=qs[0], queries=qs[1:])))
        left = len(todo) - len(opens)
        text = m["sep"].join(parts)
        text = lead + text[0].upper() + text[1:] + (m["left"].format(n=left, s="s" if left != 1 else "") if left else m["end"])
        return text, calls, opens

    def partial(self) -> tuple[str, str]:
        """Out of turns: submit only the rows whose every page was read intact."""
        rec = self.ep.task.record
        pages = rec["evidence"]["pages"]
        lists_ok = all(pages[i] in self.read for i in rec["evidence"]["listings"])
        rows = [r for r, cells in zip(self.ep.task.rows, rec["evidence"]["cells"])
                if lists_ok and all(pages[i] in self.read for i in _cell_pages(cells))]
        return (self.m["out_of_turns"].format(n=len(rows), s="s" if len(rows) != 1 else ""),
                markdown_table(self.ep.task.header, rows))

    def final(self, lead: str) -> str:
        n = len(self.ep.task.rows)
        if self.kind == "table":
            return lead + self.m["final_table"].format(n=n, s="s" if n != 1 else "")
        return lead + self.m["final_chain"]


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
                    plan.notes.append(plan.m["search_failed"].format(why=txt.split(".", 1)[0]))
                elif txt.startswith("No results found") and "\n[1]" not in txt:
                    plan.notes.append(plan.m["no_results"])
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
