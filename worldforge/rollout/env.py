"""The agent environment: a task, the simulated web's tools, perturbations and the reward.

    env = Environment.for_world("build/demo")
    ep = env.episode(task)                    # system + user messages, tools, counters
    results = ep.act("I'll search first.", [ToolCall("web_search", '{"query": "..."}')])
    ...
    ep.act("Here is the table.", [ToolCall("final_answer", '{"answer": "| a | b |..."}')])
    ep.reward, ep.score                       # WideSearch metrics from worldforge.scoring

Every tool result is a pure function of (world, perturbation seed, episode key, call index,
tool name, arguments): `Environment.execute` recomputes any call of any trajectory, which
is how exported trajectories are replayed and checked.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

from ..errors import DamagedStateError, RolloutError, SearchInputError
from ..language import get as get_language
from ..plumbing import raise_if_interrupted, stable_hash
from ..tasks import Evaluation, read_gold_csv, reward_of, score_table
from ..tokens import MESSAGE_OVERHEAD, estimate_tokens
from ..tokens import load_token_counter as _load_token_counter
from ..web import TOOLS as WEB_TOOLS
from ..web import SearchEngine, check_url, cut_snippet, search_arguments, word
from ..web import slug as _slug
from ..world import RolloutOptions
from . import perturb
from .context import MIN_TURNS, compact_limit, compact_threshold, compaction_prompt, consolidates, consolidation_prompt, resume_content

_log = logging.getLogger(__name__)

_URL_NEEDED = "web_extractor needs a 'url' string, e.g. {\"url\": \"https://...\"}"
FINAL_ANSWER_TOOL = {"type": "function", "function": {
    "name": "final_answer",
    "description": "Submit your final answer (a markdown table) and end the task. Call it once, at the end.",
    "parameters": {"type": "object", "properties": {
        "answer": {"type": "string", "description": "The complete answer as a markdown table."}},
        "required": ["answer"]},
}}
TOOLS = [*WEB_TOOLS, FINAL_ANSWER_TOOL]
TOOL_NAMES = tuple(t["function"]["name"] for t in TOOLS)

SYSTEM_PROMPT = """You are a web research agent. Today is {today}. Answer the user's question by searching the web \
and reading pages with the tools below, then submit the answer with final_answer.

- web_search finds pages (10 results per query; pass several queries at once to save turns; use offset for more).
- web_extractor opens a page by URL and returns its text. Directory pages are split into pages; follow their \
"next" links to see every entry.
- Pages can be out of date, incomplete or wrong, and tools can fail: retry failed calls, prefer official and \
encyclopedia sources over forums and content farms, and check values you are unsure of.
- Submit exactly one markdown table with the requested columns, in the requested order, one row per answer, and \
no other text in the answer."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of an assistant turn. `arguments` is JSON text, as a model writes it (a
    dict is accepted and stored as its JSON text); anything else is answered with an error."""

    name: str
    arguments: str
    id: str | None = None


def _arguments_text(arguments) -> tuple[str, dict | None, str | None]:
    """(JSON text to record, parsed arguments or None, error message or None) of a call's arguments."""
    if isinstance(arguments, dict):
        try:
            return json.dumps(arguments, ensure_ascii=False), arguments, None
        except (TypeError, ValueError) as exc:
            return repr(arguments)[:2000], None, f"the arguments are not JSON-serialisable ({exc})"
    if not isinstance(arguments, str):
        return "" if arguments is None else repr(arguments)[:2000], None, \
            f"the arguments must be a JSON object, got {type(arguments).__name__}"
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError) as exc:
        return arguments, None, f"the arguments are not valid JSON ({str(exc).splitlines()[0][:120]})"
    if not isinstance(args, dict):
        return arguments, None, f"the arguments must be a JSON object, got a JSON {type(args).__name__}"
    return arguments, args, None


@dataclass(slots=True)
class StepRecord:
    """One tool call of an episode, as recorded in the trajectory."""

    call: int  # index of the call in the episode: the perturbation key
    turn: int
    tool: str
    perturbation: str | None = None
    error: str | None = None  # malformed-call | malformed-arguments | unknown-tool | bad-input

    def as_dict(self) -> dict:
        return {"call": self.call, "turn": self.turn, "tool": self.tool, "perturbation": self.perturbation,
                "error": self.error}


def load_token_counter(path: str | Path) -> Callable[[str], int]:
    """A token counter from a `tokenizer.json` file or a model folder holding one."""
    return _load_token_counter(path, error=RolloutError)


@dataclass
class Task:
    """A task record from `<world>/tasks/tasks.jsonl` with its gold table."""

    record: dict
    header: list[str]
    rows: list[list[str]]

    @property
    def id(self) -> str:
        return self.record["instance_id"]

    @property
    def query(self) -> str:
        return self.record["query"]

    def gold_markdown(self) -> str:
        return markdown_table(self.header, self.rows)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    esc = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(map(esc, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(lines)


def load_tasks(world_path: str | Path) -> list[Task]:
    from ..tasks import GOLD_DIR, REPOSE, read_tasks, tasks_dir

    d = tasks_dir(world_path)
    out = []
    for r in read_tasks(world_path):
        gold = d / GOLD_DIR / f"{r['instance_id']}.csv"
        if not gold.is_file():
            raise DamagedStateError(f"task {r['instance_id']} has no gold table ({gold} is missing); {REPOSE}")
        header, rows = read_gold_csv(gold.read_text())
        if not header or any(len(row) != len(header) for row in rows):
            raise DamagedStateError(f"{gold} is damaged (rows do not match its header); {REPOSE}")
        out.append(Task(r, header, rows))
    return out


class Environment:
    """The tools of one rendered world, with the rollout options' perturbations and limits."""

    def __init__(self, engine: SearchEngine, options: RolloutOptions, *, seed: int, as_of: dt.date,
                 aliases: dict[str, str] | None = None, count_tokens: Callable[[str], int] = estimate_tokens):
        self.engine = engine
        self.options = options
        self.seed = seed
        self.as_of = as_of
        self.aliases = aliases or {}
        self._by_name: dict[str, list[str]] | None = None
        self._task_aliases: dict[str, dict[str, str]] = {}
        self.count_tokens = count_tokens
        self.system_prompt = SYSTEM_PROMPT.format(today=as_of.strftime("%B %-d, %Y"))
        self._copies: dict[str, tuple[str, str, str]] = {}  # duplicate URL -> (original, look, shape)
        self._not_copies: set[str] = set()
        self._copy_idx: dict | None = None
        self._lists: dict[str, str] | None = None
        self._held_out: frozenset[str] | None = None

    @classmethod
    def for_world(cls, world_path: str | Path, options: RolloutOptions | None = None, *, seed: int | None = None,
                  **kw) -> Environment:
        from ..tasks import world_aliases
        from ..world import open_world

        info = open_world(world_path)
        opt = options or info.world.spec.stages.rollout
        seed = resolve_seed(opt, info.world.spec.seed) if seed is None else seed
        return cls(SearchEngine.for_world(world_path), opt, seed=seed, as_of=info.world.spec.as_of,
                   aliases=world_aliases(world_path), **kw)

    def close(self) -> None:
        self.engine.close()

    def share_aliases(self, other: Environment) -> None:
        """Use `other`'s alias index and per-task alias subsets (an environment of the same world
        under another perturbation seed: they do not depend on the seed)."""
        self._by_name, self._task_aliases = other._by_name, other._task_aliases

    def task_aliases(self, task: Task) -> dict[str, str]:
        """The aliases scoring a task uses (`tasks.scoring.task_aliases`), computed once per task."""
        got = self._task_aliases.get(task.id)
        if got is None:
            from ..tasks import aliases_by_name, task_aliases

            if self._by_name is None:
                self._by_name = aliases_by_name(self.aliases)
            ev = Evaluation.model_validate(task.record["evaluation"])
            got = self._task_aliases[task.id] = task_aliases(ev, task.header, task.rows, self.aliases, self._by_name)
        return got

    def hidden_for(self, task: Task) -> frozenset[str]:
        """The pages a task's searches do not find: for a task posed for training in a world with
        held-out parts, every page that states a gold fact of a held-out task (`page_facts`), so no
        snippet of a training episode states held-out gold; a held-out task (evaluation) searches
        the whole web. Opening such a page by its address still works (the export measures it)."""
        if task.record.get("split", "train") != "train":
            return frozenset()
        if self._held_out is None:
            from ..web import held_out_facts, pages_stating
            from ..world import open_world

            world = self.engine.web.parent
            path = world / "tasks" / "tasks.jsonl"
            records = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()] if path.is_file() else []
            facts = [f for fs in held_out_facts(records).values() for f in fs]
            # and the facts that say the same of the same entity: a lookup of a link's target (an
            # award edition's `winner` restates its `won_by` link; page_facts names it apart)
            restate: dict[tuple[str, str], list[str]] = {}
            if facts:
                for t, et in open_world(world).world.types.items():
                    for a, spec in et.attributes.items():
                        if getattr(spec, "kind", None) == "lookup" and spec.attribute in ("id", "name"):
                            restate.setdefault((t, spec.via), []).append(a)
            facts += [f"{s}/{a}" for s, rel, *rest in (f.split("/") for f in facts) if rest
                      for a in restate.get((s.rsplit("_", 1)[0], rel), ())]
            self._held_out = frozenset(pages_stating(self.engine.web, facts))
        return self._held_out

    def episode(self, task: Task, sample: int = 0, max_turns: int | None = None, manage_context: bool = True) -> Episode:
        """A new episode; `max_turns` overrides the options' turn limit (clients that send each
        tool call as its own step, while their trainer bounds the turns, raise it);
        `manage_context=False` leaves the transcript and its compaction to the client."""
        return Episode(self, task, sample, max_turns=max_turns, manage_context=manage_context)

    # ------------------------------------------------------------------ tools

    def execute(self, episode_key: str, call: int, name: str, arguments: dict,
                hide: frozenset[str] = frozenset()) -> tuple[str, str | None]:
        """The text a tool call returns and its perturbation kind (None when clean); `hide`: pages
        its searches do not find (`hidden_for`). Raises SearchInputError for bad arguments (the
        episode turns that into an error result)."""
        if name not in ("web_search", "web_extractor"):
            raise SearchInputError(f"unknown tool {str(name)[:80]!r}; the tools are {', '.join(TOOL_NAMES)}")
        if not isinstance(arguments, dict):
            raise SearchInputError(f"{name} arguments must be a JSON object (a dict), got {type(arguments).__name__}")
        kind = perturb.draw(self.seed, episode_key, call, name, self.options.perturbations)
        key = f"{self.seed}|{episode_key}|{call}"
        if kind in ("search_error", "rate_limit"):
            if name == "web_search":
                search_arguments(arguments)  # a bad call is answered with its error, not a perturbation
            else:
                url = arguments.get("url")
                if not isinstance(url, str):
                    raise SearchInputError(_URL_NEEDED)
                check_url(url)
            return perturb.error_text(kind, name, key, arguments), kind
        if name == "web_search":
            text, applied = self._search(arguments, kind, key, hide)
            return self._cap(text), applied
        url = arguments.get("url")
        if not isinstance(url, str):
            raise SearchInputError(_URL_NEEDED)
        url = check_url(url)
        copy = self._copy_text(url)
        if copy is not None:  # an older duplicate met in earlier results: always the same text
            return self._cap(copy), None
        if kind == "truncated_page":
            p = self.engine.page(url)
            cut = perturb.truncate(p["markdown"], key) if p is not None else None
            if cut is not None:
                return self._cap(cut), kind
        if kind == "stale_page":
            a = self.engine.archive(url)
            if a is not None:  # only articles whose entity changed since have an earlier capture
                return self._cap(perturb.edited(a[1], a[0], self.engine.language)), kind
        p = self.engine.page(url)
        if p is not None and p["kind"] == "article":  # an article says when it was last edited
            return self._cap(perturb.edited(p["markdown"], perturb.last_edit(self.seed, p["url"], self.as_of),
                                            self.engine.language)), None
        return self._cap(self.engine.web_extractor(url)), None

    def _search(self, arguments: dict, kind: str | None, key: str, hide: frozenset[str] = frozenset()) -> tuple[str, str | None]:
        qs, offset = search_arguments(arguments)
        if kind == "empty_results":
            return "\n\n".join(f"No results found for \"{q.strip()}\". Try different or fewer keywords." for q in qs), kind
        blocks, applied = [], None
        for i, q in enumerate(qs):
            results, total = self.engine.search(q, offset, hide=hide)
            if kind == "conflicting_page" and results and i == 0:
                injected = self._inject_copy(results, key)
                if injected is not results:
                    results, applied = injected, kind
            blocks.append(self.engine.format_results(q, offset, results, total))
        return "\n\n".join(blocks), applied

    def _inject_copy(self, results: list[dict], key: str) -> list[dict]:
        """Put an older, careless duplicate of one result (an article, a profile or a news item
        with figures) among the results, shaped like its source: a news item syndicated by
        another outlet among the results (its headline, a few days later); an article as an old
        revision on the encyclopedia itself (at its permanent link), scraped by a list site among
        the results (at the encyclopedia's path) or as a second listing on the
        entity's profile site when one is among the results, else a piece on a news site among
        them. It has the original's title and an address shaped like its site's own pages. The
        results unchanged when no such site is there."""
        cands = [r for r in results if r["kind"] in ("article", "profile", "news") and any(c.isdigit() for c in r["snippet"])]
        pool = cands[:3]  # content farms copy the pages that rank: one of the top three with numbers
        if not pool:
            return results
        src = pool[stable_hash(key, "src") % len(pool)]
        title = src["title"]
        when = self._copy_date(src["url"])
        if src["kind"] == "news":  # a wire story another paper ran
            own = src["url"].split("/")[2]
            # an outlet publishing in those years: one of its own items is dated within ten of the copy's
            other = next((r for r in results if r["kind"] == "news" and r["url"].split("/")[2] != own
                          and (y := re.search(r"\b(\d{4})\b", r["date"] or "")) and abs(int(y.group(1)) - when.year) <= 10), None)
            if other is None:
                return results
            url, model, shape = f"https://{other['url'].split('/')[2]}/{when:%Y/%m/%d}/{_slug(title)[:80]}", other["url"], "news"
            return self._place_copy(results, key, src, url, model, shape, title, when)
        twin = next((r for r in results if r["kind"] == "profile" and r["title"] == title.split(" (")[0]
                     and re.search(r"^https://[^/]+/[^/]+/[^/]+-[0-9a-f]{6}$", r["url"])), None)
        news = next((r for r in results if r["kind"] == "news"), None)
        lists = next((r for r in results if r["kind"] == "directory" and r["url"].split("/")[2] in self._list_sites()
                      and r["url"].split("/")[2] != src["url"].split("/")[2]), None)
        article = re.fullmatch(r"https://[^/]+/wiki/([^/?#]+)", src["url"]) if src["kind"] == "article" else None
        if article and stable_hash(key, "revision") % 3 != 0:  # two article copies in three
            # an old revision on the encyclopedia itself, at its permanent link
            url, model, shape = self._revision_url(src["url"]), src["url"], "revision"
        elif article and lists is not None and (twin is None or stable_hash(key, "shape") % 2):
            # a list site that also carries scraped encyclopedia articles, at the encyclopedia's paths
            url, model, shape = f"https://{lists['url'].split('/')[2]}/wiki/{article.group(1)}", lists["url"], "article"
        elif twin is not None:
            base, _, last = twin["url"].rpartition("/")
            stem = re.sub(r"-[0-9a-f]{6}$", "", last)
            url, model, shape, title = f"{base}/{stem}-{perturb.copy_id(self.seed, src['url'])}", twin["url"], "profile", twin["title"]
        else:
            if news is None:
                return results
            host = news["url"].split("/")[2]
            url, model, shape = f"https://{host}/{when:%Y/%m/%d}/{_slug(title)[:80]}", news["url"], "news"
        return self._place_copy(results, key, src, url, model, shape, title, when)

    def _place_copy(self, results: list[dict], key: str, src: dict, url: str, model: str, shape: str, title: str,
                    when: dt.date) -> list[dict]:
        """The results with the copy of `src` at `url` among them (in the look of `model`)."""
        if self.engine.page(url) is not None:
            return results  # the address is a real page's
        self._copies[url] = (src["url"], model, shape)
        text = self._copy_text(url)
        plain = re.sub(r"\s+", " ", re.sub(r"[#*|]|^-{3,}$|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or " ", text, flags=re.M))
        chars = get_language(self.engine.language).reading.snippet_chars
        copy = {"url": url, "title": title, "snippet": _whole_numbers(cut_snippet(plain.strip(), chars)),
                "date": when.strftime("%b %-d, %Y") if shape == "news" else "N/A", "kind": shape, "score": 0.0}
        pos = 1 + stable_hash(key, "pos") % min(4, len(results))
        return (results[:pos] + [copy] + results[pos:])[: len(results)]

    def _copy_date(self, original: str) -> dt.date:
        """A copy was last updated one to six years before the world's as_of: older than the
        original; a syndicated news item runs one to five days after the original."""
        p = self.engine.page(original)
        if p is not None and p["kind"] == "news" and p["date"] is not None:
            return min(self.as_of, p["date"] + dt.timedelta(days=1 + stable_hash(self.seed, "copy-date", original) % 5))
        return self.as_of - dt.timedelta(days=365 + stable_hash(self.seed, "copy-date", original) % (5 * 365))

    def _revision(self, original: str) -> tuple[dt.date, str | None]:
        """An article's old revision: (the date of that revision, the text the encyclopedia's
        archive captured before its entity last changed), or, without such a capture, (a date one
        to six years ago, None: the article as a careless earlier edit left it, see `_copy_text`)."""
        got = self.engine.archive(original)
        if got is not None and got[0] < self.as_of:
            return got
        return self._copy_date(original), None

    def _revision_url(self, original: str) -> str:
        """An article's old revision at its permanent link (`?oldid=`): revision numbers grow
        with time, as the encyclopedia's own do."""
        when = self._revision(original)[0]
        return f"{original}?oldid={(when - dt.date(2001, 1, 15)).days * 150_000 + stable_hash(self.seed, 'oldid', original) % 150_000}"

    def _copy_source(self, url: str) -> tuple[str, str, str] | None:
        """(original URL, a page of the copy's site to take its look from, 'profile' or 'news')
        of a duplicate address, or None: from the copies made in this process, else worked out
        from the address itself (so a copy's text never depends on which searches ran first)."""
        got = self._copies.get(url)
        if got is not None or not isinstance(url, str) or url in self._not_copies:
            return got
        parts = url.split("?", 1)[0].split("/")
        if len(parts) < 5 or self.engine.page(url) is not None:
            self._not_copies.add(url)
            return None
        idx = self._copy_index()
        host, last = parts[2], parts[-1]
        m = re.fullmatch(r"(.+)-([0-9a-f]{6})", last)
        if len(parts) == 5 and parts[3] == "wiki" and host == idx["encyclopedia"] and "?oldid=" in url:  # an old revision
            cand = url.split("?", 1)[0]
            if (self.engine.page(cand) or {}).get("kind") == "article" and self._revision_url(cand) == url:
                got = (cand, cand, "revision")
        elif len(parts) == 5 and parts[3] == "wiki" and host in idx["lists"]:  # https://host/wiki/Title: a scraped article
            cand = f"https://{idx['encyclopedia']}/wiki/{last}"
            if idx["encyclopedia"] != host and (self.engine.page(cand) or {}).get("kind") == "article":
                got = (cand, idx["lists"][host], "article")
        elif len(parts) == 5 and m:  # https://host/seg/stem-id: a second listing
            twin = idx["profiles"].get((host, parts[3], m.group(1)))
            for cand in idx["titles"].get(m.group(1), ()) if twin else ():
                if perturb.copy_id(self.seed, cand) == m.group(2):
                    got = (cand, twin, "profile")
                    break
        elif len(parts) == 7 and host in idx["news"]:  # https://host/YYYY/MM/DD/slug: a news piece
            for cand in idx["titles"].get(last, ()):
                if f"{self._copy_date(cand):%Y/%m/%d}" == "/".join(parts[3:6]):
                    got = (cand, idx["news"][host], "news")
                    break
        if got is None:
            if len(self._not_copies) > 100_000:  # a long-lived server meets many addresses
                self._not_copies.clear()
            self._not_copies.add(url)
        else:
            self._copies[url] = got
        return got

    def _list_sites(self) -> dict[str, str]:
        """The sites with lists that are no entity's own site (the list site, the profile sites
        with lists), each with one of its list pages: read once."""
        if self._lists is None:
            host = "regexp_extract(url, '^https://([^/]+)/', 1)"
            self._lists = dict(self.engine.pages.execute(
                f"SELECT {host} AS host, min(url) FROM pages WHERE kind = 'directory' AND {host} NOT IN "
                f"(SELECT {host} FROM pages WHERE kind = 'profile' AND site = title) GROUP BY host").fetchall())
        return self._lists

    def _copy_index(self) -> dict:
        """Articles, profiles and news items by the slug of their title, profiles by (host,
        section, name slug), one news page per news site and one list page per site with lists,
        the encyclopedia's host: read once, the first time an address no search of
        this process made is opened."""
        if self._copy_idx is None:
            import polars as pl

            from ..web import slugs

            got = self.engine.pages.execute(
                "SELECT url, title, kind FROM pages WHERE kind IN ('article', 'profile', 'news')").fetchnumpy()
            df = pl.DataFrame({k: got[k].tolist() for k in ("url", "title", "kind")}, schema=dict.fromkeys(("url", "title", "kind"), pl.String))
            ents = df.filter(pl.col("kind") != "news")
            titles: dict[str, list[str]] = {}
            stories = df.filter(pl.col("kind") == "news")  # a syndicated story keeps its whole headline
            for u, t in chain(zip(ents["url"].to_list(), slugs(ents["title"].str.replace(r" \(.*$", ""))),
                              zip(stories["url"].to_list(), slugs(stories["title"]))):
                titles.setdefault(t, []).append(u)
                if len(t) > 80:
                    titles.setdefault(t[:80], []).append(u)
            prof = ents.filter(pl.col("kind") == "profile")["url"].str.extract_groups(
                r"^https://([^/]+)/([^/]+)/(.+)-[0-9a-f]{6}$").struct.unnest().with_columns(url=ents.filter(
                    pl.col("kind") == "profile")["url"]).drop_nulls()
            news = stories["url"]
            arts = df.filter(pl.col("kind") == "article")["url"]
            self._copy_idx = {"titles": titles, "lists": self._list_sites(),
                              "encyclopedia": arts[0].split("/")[2] if len(arts) else "",
                              "profiles": dict(zip(zip(*(prof[c].to_list() for c in prof.columns[:3])), prof["url"].to_list())),
                              "news": dict(zip(news.str.extract(r"^https://([^/]+)/").to_list()[::-1], news.to_list()[::-1]))}
        return self._copy_idx

    def copy_page(self, url: str) -> tuple[str, str] | None:
        """A duplicate address as web_extractor serves it without perturbation: (its text, the
        original's URL); None when `url` is no copy (a stored page, or unknown)."""
        text = self._copy_text(url)
        return None if text is None else (text, self._copy_source(url)[0])

    def _copy_text(self, url: str) -> str | None:
        """A duplicate's page: the original's text, with its slips, in the look of the site it
        sits on (that site's by-line, and the date it was last updated); None when `url` is no copy."""
        got = self._copy_source(url)
        if got is None:
            return None
        original, model, shape = got
        src, look = self.engine.page(original), self.engine.page(model)
        if src is None or look is None:
            return None
        if shape == "revision":  # the encyclopedia's own page, as it read then: its last edit dates it
            when, text = self._revision(original)
            if text is None:
                text = perturb.alter_copy(src["markdown"], f"copy|{self.seed}|{original}")
            return perturb.edited(text, when, self.engine.language)
        lang = get_language(self.engine.language)
        when = self._copy_date(original)
        byline = next((ln for ln in look["markdown"].split("\n") if ln.startswith("*")), "")
        updated = word(lang.code, "updated", date="\0").split("\0")[0]
        byline = re.sub(" · " + re.escape(updated) + ".*$", "", byline)  # a listing dated itself: the copy's own date instead
        site = byline.split("*")[1] if byline.count("*") >= 2 else url.split("/")[2]
        head = f"{byline} · {word(lang.code, 'updated', date=lang.date(when))}" if shape == "profile" else f"*{site}* · {lang.date(when)}"
        lines = src["markdown"].split("\n")
        title = lines[0][2:] if lines and lines[0].startswith("# ") else src["title"]
        body = [ln for ln in lines[1:] if not (ln.startswith("*") and " · " in ln)]  # its own by-line, if any
        text = perturb.alter_copy("\n".join(body).strip("\n"), f"copy|{self.seed}|{original}")
        return f"# {title.split(' (')[0] if shape == 'profile' else title}\n\n{head}\n\n{text}\n"

    def _cap(self, text: str) -> str:
        n = self.options.max_observation_chars
        if len(text) <= n:
            return text
        return f"{text[:n]}\n\n[... {len(text) - n} more characters not shown]"


_EDGE_NUMBER = re.compile(r"(?:^|(?<=\.\.\.))[\d,]+(?:\.\d+)?(?=\s)|(?<=\s)[\d,.]*\d(?=$|\.\.\.)")


def _whole_numbers(snippet: str) -> str:
    """A snippet without a number cut at its start or end (a snippet window may split '35,612'
    into '35'): a copy alters whole numbers, and its snippet must agree with its page."""
    return _EDGE_NUMBER.sub("", snippet).strip()


def resolve_seed(options: RolloutOptions, world_seed: int) -> int:
    return world_seed if options.seed is None else options.seed


@dataclass
class Episode:
    """One agent's attempt at one task. The policy calls `act` once per assistant turn; when the
    episode asks for the research state (`compacting`), the policy answers with `write_state`
    and goes on from `visible()` (see `context.py`)."""

    env: Environment
    task: Task
    sample: int = 0
    messages: list[dict] = field(default_factory=list)  # every message in order, compaction exchanges included
    steps: list[StepRecord] = field(default_factory=list)
    turns: int = 0  # action turns (a state written at a compaction is not one)
    tool_calls: int = 0
    tokens: Counter = field(default_factory=Counter)  # assistant, tool, prompt
    done: bool = False
    end: str | None = None  # answer | turn-limit | context-length | no-answer
    answer: str | None = None
    research: dict = field(default_factory=dict)  # the policy's own counters (benchmarks; not exported)
    score: dict | None = None
    max_turns: int | None = None  # None: the rollout options' max_turns
    manage_context: bool = True  # False: the client keeps the transcript and compacts it (the server's episodes)
    context: dict = field(default_factory=dict)  # the budget's record: peak, per-segment sizes, compactions
    segments: list[dict] = field(default_factory=list)  # {"prefix": [system, user], "start", "end"}
    claims: list[list] = field(default_factory=list)  # [message index, kind, value, ref]: counts a message states
    compacting: bool = False  # the context passed the budget: the next assistant turn is the research state
    consolidating: bool = False  # ... and that note replaces the earlier ones (they fill too much of the budget)

    def __post_init__(self):
        self.key = f"{self.task.id}#{self.sample}"
        self.hide = self.env.hidden_for(self.task)  # pages this episode's searches do not find (a training task's)
        self.language = self.task.record.get("language", "en")
        self.messages = [{"role": "system", "content": self.env.system_prompt},
                         {"role": "user", "content": self.task.query}]
        self.tokens.update(prompt=sum(self.env.count_tokens(m["content"]) for m in self.messages))
        self._sizes = [self._size(m) for m in self.messages]  # tokens each message takes in the context
        self.segments = [{"prefix": self.messages[:2], "start": 2, "end": None}]
        self._prefix_size = self._base_size = sum(self._sizes)
        self.states: list[str] = []  # the research notes written so far (the next segment starts from all of them)
        self._note_size = 0  # tokens of the last note: the next one is about as long
        self._notes_size = 0  # tokens of all the notes the next segment starts from
        self._seg_turns = 0
        budget = self.env.options.context_tokens
        self.context = {"budget": budget, "compact_at": compact_threshold(budget), "peak": self._prefix_size,
                        "compactions": 0, "sizes": []}
        self.scored: dict[str, dict] = {}  # answers scored ahead of the turn that submits them (`score_of`)

    def _size(self, m: dict) -> int:
        n = self.env.count_tokens(m.get("content") or "") + MESSAGE_OVERHEAD
        for c in m.get("tool_calls", ()):
            n += self.env.count_tokens(c["function"]["arguments"]) + self.env.count_tokens(c["function"]["name"]) + MESSAGE_OVERHEAD
        return n

    def visible(self) -> list[dict]:
        """The context the policy sees now: the segment's prefix and its turns so far."""
        seg = self.segments[-1]
        return seg["prefix"] + self.messages[seg["start"]:]

    def visible_tokens(self) -> int:
        self._sizes += [self._size(m) for m in self.messages[len(self._sizes):]]
        return self._prefix_size + sum(self._sizes[self.segments[-1]["start"]:])

    def _after_turn(self) -> None:
        """Record the context's size; past the budget's compaction point, ask for the research state."""
        self._seg_turns += 1
        if not self.manage_context:  # the client holds the transcript (and compacts it itself)
            return
        used = self.visible_tokens()
        self.context["peak"] = max(self.context["peak"], used)
        grew, self._last_used = used - getattr(self, "_last_used", used), used
        # room for the note (as long as the last one, a tenth of the budget before the first; one that
        # replaces every note restates them all) and for one more turn like the last: the segment,
        # its next turn and its note stay in the budget
        budget = self.context["budget"]
        whole = consolidates(self._notes_size, budget, getattr(self, "_whole_size", 0))
        limit = compact_limit(budget, self._note_size, grew, self._notes_size if whole else 0)
        if not self.done and limit is not None and used > limit and self._seg_turns >= MIN_TURNS:
            self.consolidating = whole
            text = (consolidation_prompt(used, self.context["budget"], self._notes_size, self.language) if self.consolidating
                    else compaction_prompt(used, self.context["budget"], self.language))
            prompt = {"role": "user", "content": text}
            self.messages.append(prompt)
            self.tokens["prompt"] += self.env.count_tokens(prompt["content"])
            self.compacting = True

    def write_state(self, state: str, *, output_tokens: int | None = None, claims: list | None = None) -> None:
        """The policy's research state, asked for by `compacting`: it closes the segment, and the
        next one starts from the system prompt and the task with this state."""
        if self.done:
            raise RolloutError(f"episode {self.key} is over ({self.end}); start a new one")
        if not self.compacting:
            raise RolloutError(f"episode {self.key} did not ask for a research state; act on the task instead")
        self.messages.append({"role": "assistant", "content": state})
        self._note_claims(claims)
        self.tokens["assistant"] += output_tokens if output_tokens is not None else self.env.count_tokens(state)
        self.context["sizes"].append(self.visible_tokens())
        self.context["compactions"] += 1
        self.segments[-1]["end"] = len(self.messages)
        self._note_size = self._size(self.messages[-1])
        if self.consolidating:  # this note replaces the earlier ones
            self.states, self._notes_size, self._whole_size = [], 0, self._note_size
        self.states.append(state)
        self._notes_size += self._note_size
        self.consolidating = False
        user = {"role": "user", "content": resume_content(self.task.query, self.states, self.language)}
        prefix = [self.messages[0], user]
        self.segments.append({"prefix": prefix, "start": len(self.messages), "end": None})
        self._prefix_size = sum(self._size(m) for m in prefix)
        self.tokens["prompt"] += self.env.count_tokens(user["content"])
        self.compacting = False
        self._seg_turns = 0
        self.context["peak"] = max(self.context["peak"], self._prefix_size)
        self._last_used = self._prefix_size

    def _note_claims(self, claims: list | None) -> None:
        for kind, value, ref in claims or ():
            self.claims.append([len(self.messages) - 1, kind, value, ref])

    @property
    def reward(self) -> float:
        return 0.0 if self.score is None else reward_of(self.score, self.env.options.reward_metric)

    def call_id(self, call: int) -> str:
        return f"call_{stable_hash(self.key, call) & 0xFFFFFFFFFFFF:012x}"

    def act(self, content: str, calls: list[ToolCall], *, output_tokens: int | None = None,
            claims: list | None = None) -> list[dict]:
        """Record one assistant turn and run its tool calls in order. Returns the tool messages
        appended. A `final_answer` call ends the episode with its reward; a malformed call gets
        an error message back as its result. `claims`: the counts the turn's text states, as
        (kind, value, ref), for the grounding check (`grounding.py`)."""
        if self.done:
            raise RolloutError(f"episode {self.key} is over ({self.end}); start a new one")
        if self.compacting:
            raise RolloutError(f"episode {self.key} asked for the research state; answer with write_state first")
        self.turns += 1
        msg: dict = {"role": "assistant", "content": content}
        if calls:
            msg["tool_calls"] = []
        self.messages.append(msg)
        self._note_claims(claims)
        self.tokens["assistant"] += output_tokens if output_tokens is not None else self.env.count_tokens(content)
        out = []
        final = None
        for c in calls:
            n = self.tool_calls
            self.tool_calls += 1
            name = c.name if isinstance(c.name, str) else ""
            arg_text, args, arg_error = _arguments_text(c.arguments)
            cid = c.id if isinstance(c.id, str) and c.id else self.call_id(n)
            msg["tool_calls"].append({"id": cid, "type": "function", "function": {"name": name, "arguments": arg_text}})
            if output_tokens is None:
                self.tokens["assistant"] += self.env.count_tokens(arg_text) + 8
            rec = StepRecord(n, self.turns, name)
            self.steps.append(rec)
            if not name:  # the policy's parser could not read this call at all
                rec.error = "malformed-call"
                text = ("Error: the tool call could not be parsed. Write one call per block with the tool's name and "
                        "its arguments as a JSON object, e.g. {\"name\": \"web_search\", \"arguments\": {\"query\": \"...\"}}.")
                self._tool_message(cid, text, out)
                continue
            if arg_error is not None:
                rec.error = "malformed-arguments"
                text = f"Error: {arg_error} in the call to {name[:80]}. Call the tool again with a JSON object as arguments."
            else:
                if name == "final_answer":
                    ans = args.get("answer")
                    if isinstance(ans, str) and final is None:
                        final = ans
                        continue
                    rec.error = "bad-input"
                    text = "Error: final_answer needs an 'answer' string holding the markdown table."
                else:
                    try:
                        text, rec.perturbation = self.env.execute(self.key, n, name, args, self.hide)
                    except SearchInputError as exc:
                        rec.error = "unknown-tool" if name not in TOOL_NAMES else "bad-input"
                        text = f"Error: {exc}"
                    except Exception as exc:  # noqa: BLE001 - one bad call never ends an episode (or a server)
                        raise_if_interrupted()  # Ctrl-C that DuckDB reported as its own error: the run stops, no traceback
                        _log.exception("tool %s failed on %s", name, arg_text[:200])
                        rec.error = "tool-failure"
                        text = f"Error: {name} failed on these arguments ({type(exc).__name__}). Try other arguments."
            self._tool_message(cid, text, out)
        if final is not None:
            self.submit(final)
        elif self.turns >= (self.max_turns or self.env.options.max_turns):
            self.stop("turn-limit")
        self._after_turn()
        return out

    def _tool_message(self, cid: str, text: str, out: list[dict]) -> None:
        tm = {"role": "tool", "tool_call_id": cid, "content": text}
        self.tokens["tool"] += self.env.count_tokens(text)
        self.messages.append(tm)
        out.append(tm)

    def reply(self, content: str, *, output_tokens: int | None = None, claims: list | None = None) -> dict:
        """An assistant turn with no tool call: its text is the final answer."""
        if self.done:
            raise RolloutError(f"episode {self.key} is over ({self.end}); start a new one")
        if self.compacting:
            raise RolloutError(f"episode {self.key} asked for the research state; answer with write_state first")
        self.turns += 1
        self.messages.append({"role": "assistant", "content": content})
        self._note_claims(claims)
        self.tokens["assistant"] += output_tokens if output_tokens is not None else self.env.count_tokens(content)
        score = self.submit(content)
        self._after_turn()
        return score

    def submit(self, answer: str) -> dict:
        """End the episode with an answer (a final_answer call, or a plain-text answer)."""
        if self.done:
            raise RolloutError(f"episode {self.key} is over ({self.end})")
        self.answer = answer
        self._end("answer", answer)
        return self.score

    def stop(self, reason: str) -> None:
        """End the episode without an answer (reward 0)."""
        self._end(reason, "")

    @staticmethod
    def submitted(content: str, calls: list[ToolCall]) -> str | None:
        """The answer a turn submits, as `act` and `reply` read it: the first `final_answer`
        call's answer string, or the text of a turn without calls; None when it submits none."""
        if not calls:
            return content
        for c in calls:
            if c.name == "final_answer":
                _text, args, error = _arguments_text(c.arguments)
                if error is None and isinstance(args.get("answer"), str):
                    return args["answer"]
        return None

    def score_of(self, answer: str) -> dict:
        """The task's scores for `answer`. Touches nothing of the episode: a server scores an
        answer in a worker thread and hands it to the turn in `scored` (a long answer then
        holds up no other request)."""
        ev = Evaluation.model_validate(self.task.record["evaluation"])
        return score_table(self.task.id, ev, self.task.header, self.task.rows, answer, self.env.task_aliases(self.task),
                           mode=self.env.options.scorer, language=self.language, as_of=self.env.as_of).as_dict()

    def _end(self, reason: str, answer: str) -> None:
        self.score = self.scored.pop(answer, None) or self.score_of(answer)
        self.scored.clear()
        self.done, self.end = True, reason
        if self.compacting:  # ended while the state was asked for (a turn limit): the prompt was never answered
            self.messages.pop()
            self.compacting = self.consolidating = False

    def segment_records(self) -> list[dict]:
        """The segments with their ends (the last one ends with the trajectory)."""
        out = [dict(s) for s in self.segments]
        out[-1]["end"] = len(self.messages)
        return out

    def trajectory(self, policy: str) -> dict:
        """The episode as a trajectory record (what the rollout stage stores and export reads)."""
        counts = Counter(s.perturbation for s in self.steps if s.perturbation)
        return {"instance_id": self.task.id, "sample": self.sample, "policy": policy, "kind": self.task.record["kind"],
                "messages": self.messages, "steps": [s.as_dict() for s in self.steps], "end": self.end,
                "answer": self.answer, "reward": self.reward, "score": self.score, "turns": self.turns,
                "tool_calls": self.tool_calls, "tokens": dict(sorted(self.tokens.items())),
                "perturbations": dict(sorted(counts.items())),
                "errors": sum(1 for s in self.steps if s.error),
                "context": {**self.context, "sizes": [*self.context["sizes"], self.visible_tokens()] if self.manage_context
                            else self.context["sizes"]},
                "segments": self.segment_records(), "claims": self.claims}
