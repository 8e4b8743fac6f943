"""Lazy baselines: what an agent that does not research scores on a world's table tasks.

A dataset for training researchers is only worth it if the shortcuts fail (issue 58: at most
0.10 item F1 where the oracle scores about 0.98). Two shortcuts, each driven through the same
tools an agent has (`Episode.act`), in the web without perturbations:

- `first_list`: searches the question's request, opens the results in order until one is a list
  (a table whose first column links entities), copies it with its next pages, and fills the
  columns whose header the list shares (the names under the column the list's first header
  names, a rank from the list's order); no condition is checked and nothing else is read.
- `infoboxes`: the same rows, each filled from the box of facts on its entity's page (an
  article's infobox or a profile's key facts, the labels matched to the columns).

`benchmarks/baselines.py` prints their scores beside the oracle's; `tests/test_shipped.py`
holds every shipped world to the bound.
"""

from __future__ import annotations

import json
import re

from ..language import get as get_language
from .env import Episode, ToolCall, markdown_table
from .reading import read_page

POLICIES = ("first_list", "infoboxes")
MAX_LIST_PAGES = 5  # a list's pages a lazy agent copies (the first and the next ones)
MAX_OPENS = 40  # entity pages `infoboxes` opens
_URL = re.compile(r"^\[\d+\] (\S+)$", re.M)
_NOT_ASK = re.compile(r"markdown|column|table|列|表格|格式", re.I)
_GLOSS = re.compile(r"\s*[(（][^)）]*[)）]\s*$")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def ask_of(query: str, language: str, named: list | tuple = ()) -> str:
    """The sentence of a question that says what to find: of those not about the answer's format,
    the one naming most of the values the question names (`named`: a place, a range's ends),
    else the longest; cut to the search tool's 32 words."""
    parts = [s.strip() for s in get_language(language).reading.sentences.split(query) if s.strip()]
    asks = [s for s in parts if not _NOT_ASK.search(s)] or parts
    best = max(asks, key=lambda s: (sum(str(v) in s for v in named), len(s)))
    return " ".join(best.split()[:32]) if " " in best else best[:60]


def _key(label: str) -> str:
    """A header or a box label as a match key: lower case, its gloss or unit in brackets left out."""
    return _GLOSS.sub("", label).strip().casefold()


def _open(ep: Episode, url: str):
    out = ep.act("", [ToolCall("web_extractor", {"url": url})])
    return read_page(url, out[0]["content"]) if out else None


def _first_list(ep: Episode):
    """(headers, rows) of the first list the question's search finds, its next pages included;
    ([], []) when none of the results is one."""
    out = ep.act("", [ToolCall("web_search", {"query": ask_of(ep.task.query, ep.language, ep.task.record.get("constraint_values") or ())})])
    for url in _URL.findall(out[0]["content"] if out else "")[:10]:
        if ep.done:
            break
        page = _open(ep, url)
        if page is None or not page.rows:
            continue
        headers, rows = page.headers, list(page.rows)
        for _ in range(MAX_LIST_PAGES - 1):
            if not page.next_url or ep.done:
                break
            page = _open(ep, page.next_url)
            if page is None or not page.rows:
                break
            rows += page.rows
        return headers, rows
    return [], []


def run_baseline(ep: Episode, policy: str) -> None:
    """Drive one table episode to its end with a lazy policy (`POLICIES`); the episode keeps no
    research notes (`Environment.episode(..., manage_context=False)`): a lazy agent writes none."""
    if policy not in POLICIES:
        raise ValueError(f"unknown baseline {policy!r}; known: {', '.join(POLICIES)}")
    headers, rows = _first_list(ep)
    cols = ep.task.header
    at = {_key(h): i for i, h in enumerate(headers[1:])}  # a list's other cells, by header
    table = []
    keys = [_key(c) for c in cols]
    # the list's names go to the column its first header names (else the first), and a ranked
    # table's rank column takes the list's order: a lazy reader trusts the list's numbering
    kc = keys.index(_key(headers[0])) if headers and _key(headers[0]) in keys else 0
    rank = next((j for j, c in enumerate(keys) if c in ("rank", "排名")), None)
    for n, (name, url, cells) in enumerate(rows):
        row = ["unknown"] * len(cols)
        row[kc] = name
        if rank is not None and rank != kc:
            row[rank] = str(n + 1)
        for j, c in enumerate(cols):
            if j == kc:
                continue
            i = at.get(_key(c))
            if i is not None and i < len(cells) and cells[i] not in ("", "–", "-"):
                row[j] = _LINK.sub(r"\1", cells[i])
        table.append((row, url))
    if policy == "infoboxes":
        for row, url in table[:MAX_OPENS]:
            if ep.done:
                break
            page = _open(ep, url)
            if page is None:
                continue
            for j, c in enumerate(cols):
                got = page.infobox_rows(_key(c)) if j != kc else []
                if got and row[j] == "unknown":
                    row[j] = _LINK.sub(r"\1", got[0])  # a link's text, as a reader copies it
    if not ep.done:
        answer = markdown_table(cols, [r for r, _ in table])
        ep.act("", [ToolCall("final_answer", json.dumps({"answer": answer}))])
