"""The environment as a service: episodes with ids, limits and expiry, over one rendered world.

This is everything the HTTP and MCP layers serve, with no HTTP in it: `EnvironmentService`
opens a world once (search index, tasks, gold tables, aliases) and runs episodes of the
in-process `rollout.env.Environment`, so a call over the network returns exactly what the
same call returns in-process (same seed, task, sample and call index). Every bad input is a
`ServiceError` carrying the HTTP status the server answers with.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SearchInputError
from ..rollout import TOOLS, Environment, Episode, Task, ToolCall, load_tasks
from ..web import MAX_RESULTS, engine_query
from ..world import RolloutOptions

MAX_CALLS_PER_STEP = 64
MAX_TOPK = 100
MAX_SEED = 2**63 - 1
MAX_SAMPLE = 2**31 - 1
MAX_TURNS = 1000
MAX_RETRIEVE_QUERIES = 10_000  # queries in one /retrieve request (Search-R1 sends a whole batch: 512 to 2,560)
RETRIEVE_SLICE = 0.005  # seconds /retrieve searches before it lets other requests run
DEFAULT_TOPK = 3  # Search-R1's default


def retrieve_response(answers: list[tuple[list, str | None]]) -> dict:
    """The /retrieve body of each query's (documents, error)."""
    errors = [{"index": i, "error": err} for i, (_, err) in enumerate(answers) if err]
    return {"result": [docs for docs, _ in answers], **({"errors": errors} if errors else {})}


class ServiceError(Exception):
    """A request the service refuses: `status` is the HTTP status, the message says why and what to do."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class ServiceLimits:
    max_episodes: int = 1024  # open episodes at once; more is 429 until some close or expire
    ttl: float = 900.0  # seconds an episode may sit idle before it expires
    max_body: int = 1 << 20  # bytes in one request body


@dataclass
class OpenEpisode:
    id: str
    episode: Episode
    seed: int
    last_used: float = field(default_factory=time.monotonic)


def _int(value, name: str, lo: int, hi: int, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ServiceError(422, f"'{name}' must be a whole number from {lo} to {hi:,}, got {json.dumps(value)[:60]}")
    return value


def tool_calls_of(body: dict) -> tuple[str, list[ToolCall]]:
    """(assistant text, tool calls) of a step body: one call `{"name", "arguments", "id"?}`, or a
    turn `{"content"?, "tool_calls": [...]}` whose calls are that shape or OpenAI's
    `{"id", "type", "function": {"name", "arguments"}}`. Arguments may be an object or JSON text;
    bad arguments become error results of the episode (as in-process), a bad shape is a 422."""
    content = body.get("content", "")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise ServiceError(422, f"'content' must be a string (the assistant's text), got {type(content).__name__}")
    if "tool_calls" in body:
        raw = body["tool_calls"]
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            raise ServiceError(422, f"'tool_calls' must be a list of calls, got {type(raw).__name__}")
    elif "name" in body:
        raw = [body]
    else:
        raw = []
    if len(raw) > MAX_CALLS_PER_STEP:
        raise ServiceError(422, f"{len(raw)} tool calls in one step; send at most {MAX_CALLS_PER_STEP}")
    calls = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict):
            raise ServiceError(422, f"tool_calls[{i}] must be an object like {{\"name\": \"web_search\", \"arguments\": "
                                    f"{{\"query\": \"...\"}}}}, got {type(c).__name__}")
        fn = c.get("function") if isinstance(c.get("function"), dict) else c
        name, args, cid = fn.get("name"), fn.get("arguments"), c.get("id")
        if not isinstance(name, str) or not name:
            raise ServiceError(422, f"tool_calls[{i}] needs a 'name' string (one of {', '.join(t['function']['name'] for t in TOOLS)})")
        if cid is not None and not isinstance(cid, str):
            raise ServiceError(422, f"tool_calls[{i}].id must be a string")
        calls.append(ToolCall(name, args if isinstance(args, (str, dict)) or args is None else json.dumps(args), cid))
    return content, calls


class EnvironmentService:
    """Episodes over one world. Not thread-safe: the server calls it from one event loop (only
    `step_async` scores an answer in a worker thread, reading nothing but the episode's task)."""

    def __init__(self, world_path: str | Path, options: RolloutOptions | None = None, *, seed: int | None = None,
                 limits: ServiceLimits | None = None, clock=time.monotonic, splits: tuple[str, ...] | None = None):
        world_path = Path(world_path)
        self.world_path = world_path
        self.limits = limits or ServiceLimits()
        self.clock = clock
        self.base = Environment.for_world(world_path, options, seed=seed)
        self.default_seed = self.base.seed
        every = load_tasks(world_path)
        self.splits = tuple(splits) if splits else None  # None: every split; else only these splits' tasks are episodes
        self.tasks: dict[str, Task] = {t.id: t for t in every if self.splits is None or t.record.get("split") in self.splits}
        self._held_out = {t.id: t.record.get("split") for t in every if t.id not in self.tasks}
        self._envs: OrderedDict[int, Environment] = OrderedDict({self.base.seed: self.base})
        self.episodes: dict[str, OpenEpisode] = {}
        self._expired: OrderedDict[str, None] = OrderedDict()  # recently expired ids, to say 410 and not 404
        self._serial = itertools.count()
        self._last_sweep = clock()
        self.created = 0

    def close(self) -> None:
        self.episodes.clear()
        self.base.close()

    # ------------------------------------------------------------------ episodes

    def env_for(self, seed: int) -> Environment:
        """The environment of one perturbation seed (they share the world's engine)."""
        env = self._envs.get(seed)
        if env is None:
            b = self.base
            env = Environment(b.engine, b.options, seed=seed, as_of=b.as_of, aliases=b.aliases, count_tokens=b.count_tokens)
            env.share_aliases(b)  # alias subsets are seed-independent
            self._envs[seed] = env
            while len(self._envs) > 64:  # a bounded cache; the base environment stays
                old = next(k for k in self._envs if k != self.base.seed)
                del self._envs[old]
        return env

    def create(self, body: dict) -> dict:
        """A new episode of a task: `{"task_id", "seed"?, "sample"?, "max_turns"?}` (`max_turns`
        overrides the world's turn limit: clients that step one tool call at a time raise it)."""
        task_id = body.get("task_id", body.get("instance_id"))
        if not isinstance(task_id, str):
            raise ServiceError(422, "give the task as {\"task_id\": \"<instance_id>\"}; GET /tasks lists them")
        task = self.tasks.get(task_id)
        if task is None and task_id in self._held_out:
            raise ServiceError(404, f"task {task_id[:120]!r} is in the {self._held_out[task_id]} split, and this server "
                                    f"serves only {', '.join(self.splits)} (worldforge serve --splits)")
        if task is None:
            raise ServiceError(404, f"no task {task_id[:120]!r} in this world; GET /tasks lists the {len(self.tasks):,} tasks")
        seed = _int(body.get("seed"), "seed", 0, MAX_SEED, self.default_seed)
        sample = _int(body.get("sample"), "sample", 0, MAX_SAMPLE, 0)
        max_turns = None if body.get("max_turns") is None else _int(body.get("max_turns"), "max_turns", 1, MAX_TURNS)
        self.sweep()
        if len(self.episodes) >= self.limits.max_episodes:
            raise ServiceError(429, f"{len(self.episodes):,} episodes are open, the limit; close finished ones "
                                    f"(DELETE /episodes/ID) or wait for idle ones to expire ({self.limits.ttl:g} s)")
        eid = f"ep_{next(self._serial):x}_{secrets.token_hex(6)}"
        ep = self.env_for(seed).episode(task, sample, max_turns=max_turns, manage_context=False)  # the client compacts
        self.episodes[eid] = OpenEpisode(eid, ep, seed, self.clock())
        self.created += 1
        return {"episode_id": eid, "task_id": task.id, "seed": seed, "sample": sample, "messages": ep.messages[:2],
                "tools": TOOLS, "max_turns": ep.max_turns or ep.env.options.max_turns, "expires_in": self.limits.ttl}

    def get(self, eid: str) -> OpenEpisode:
        self.sweep()
        got = self.episodes.get(eid)
        if got is None:
            if eid in self._expired:
                raise ServiceError(410, f"episode {eid[:80]} expired after {self.limits.ttl:g} s idle; start a new one")
            raise ServiceError(404, f"no open episode {eid[:80]!r}; it was closed, or never existed")
        got.last_used = self.clock()
        return got

    def step(self, eid: str, body: dict) -> dict:
        """One assistant turn: run its tool calls. A turn without calls is a plain-text answer."""
        oe = self.get(eid)
        ep = oe.episode
        content, calls = tool_calls_of(body)
        if ep.done:
            raise ServiceError(409, f"episode {eid} is over ({ep.end}); read its reward or close it")
        if calls:
            out = ep.act(content, calls)
        else:
            ep.reply(content)
            out = []
        names = {tc["id"]: tc["function"]["name"] for m in ep.messages[2:] for tc in m.get("tool_calls") or []}
        obs = [{"role": "tool", "tool_call_id": m["tool_call_id"], "name": names.get(m["tool_call_id"], ""),
                "content": m["content"]} for m in out]
        steps = ep.steps[len(ep.steps) - len(calls):] if calls else []
        del ep.messages[2:]  # the caller keeps the transcript; the service keeps counters only
        return {"observations": obs, "perturbations": [s.perturbation for s in steps], "errors": [s.error for s in steps],
                **self._status(oe)}

    async def step_async(self, eid: str, body: dict) -> dict:
        """`step`, for a server: the answer a turn submits is scored first in a worker thread, so
        scoring a long answer (WideSearch's scorer reads each date with dateparser) holds up no
        other request; the turn itself then runs as `step` runs it."""
        oe = self.get(eid)
        content, calls = tool_calls_of(body)
        ep = oe.episode
        answer = None if ep.done else Episode.submitted(content, calls)
        if answer is not None and answer not in ep.scored:
            ep.scored[answer] = await asyncio.to_thread(ep.score_of, answer)
        return self.step(eid, body)

    def status(self, eid: str) -> dict:
        return self._status(self.get(eid))

    def _status(self, oe: OpenEpisode) -> dict:
        ep = oe.episode
        return {"episode_id": oe.id, "task_id": ep.task.id, "done": ep.done, "end": ep.end,
                "reward": ep.reward if ep.done else None, "score": ep.score, "turns": ep.turns, "tool_calls": ep.tool_calls}

    def reward(self, eid: str) -> dict:
        oe = self.get(eid)
        if not oe.episode.done:
            raise ServiceError(409, f"episode {eid} has no reward yet: call final_answer, or close it "
                                    "(DELETE ends it without an answer, reward 0)")
        return self._status(oe)

    def close_episode(self, eid: str) -> dict:
        """End (without an answer, when still running) and forget an episode; its final status."""
        oe = self.get(eid)
        if not oe.episode.done:
            oe.episode.stop("closed")
        del self.episodes[eid]
        return self._status(oe)

    def sweep(self) -> None:
        """Expire episodes idle for longer than the TTL (at most once a second)."""
        now = self.clock()
        if now - self._last_sweep < 1.0:
            return
        self._last_sweep = now
        dead = [k for k, v in self.episodes.items() if now - v.last_used > self.limits.ttl]
        for k in dead:
            del self.episodes[k]
            self._expired[k] = None
        while len(self._expired) > 100_000:
            self._expired.popitem(last=False)

    # ------------------------------------------------------------------ stateless tools

    def tool(self, name: str, arguments) -> str:
        """A tool call outside any episode: the clean web (no perturbations)."""
        if name not in ("web_search", "web_extractor"):
            raise ServiceError(404, f"no tool {str(name)[:80]!r}; the tools are web_search and web_extractor")
        if not isinstance(arguments, dict):
            raise ServiceError(422, f"{name} arguments must be a JSON object, got {type(arguments).__name__}")
        try:
            return self.base.engine.call(name, arguments)
        except SearchInputError as exc:
            raise ServiceError(422, str(exc)) from None

    def retrieve_batch(self, body: dict) -> tuple[list, int, bool]:
        """(queries, topk, return_scores) of a /retrieve body, checked as a whole. The queries'
        own problems (empty, not text, too long) are answered one by one by `retrieve_one`."""
        qs = body.get("queries", body.get("query"))
        if isinstance(qs, str):
            qs = [qs]
        if not isinstance(qs, list):
            raise ServiceError(422, "'queries' must be a list of query strings (Search-R1's retrieval API)")
        if len(qs) > MAX_RETRIEVE_QUERIES:
            raise ServiceError(413, f"{len(qs):,} queries in one request; send at most {MAX_RETRIEVE_QUERIES:,}")
        topk = body.get("topk")
        if topk is None or (topk == 0 and not isinstance(topk, bool)):  # Search-R1's server: a missing or 0 topk is its default
            topk = DEFAULT_TOPK
        topk = _int(topk, "topk", 1, MAX_TOPK)
        scores = body.get("return_scores", False)
        if not isinstance(scores, bool):
            raise ServiceError(422, "'return_scores' must be true or false")
        return qs, topk, scores

    def retrieve_one(self, query, topk: int, scores: bool) -> tuple[list, str | None]:
        """(documents, None) for one query, or ([], why) when the query cannot be searched: one bad
        query in a batch gets no documents, and the rest of the batch its results."""
        if not isinstance(query, str):
            return [], f"a query must be a string, got {type(query).__name__}"
        try:
            engine_query(query)
            results, _ = self.base.engine.search(query, 0, min(topk, MAX_RESULTS))
        except SearchInputError as exc:
            return [], str(exc)
        docs = [{"id": r["url"], "contents": f"{r['title']}\n{r['snippet']}", "url": r["url"], "title": r["title"],
                 "date": r["date"]} for r in results]
        return ([{"document": d, "score": r["score"]} for d, r in zip(docs, results)] if scores else docs), None

    def retrieve_each(self, body: dict) -> Iterator[tuple[list, str | None]]:
        """`retrieve_one` for each query of a checked /retrieve body, in order (the server takes
        them in chunks, between other requests)."""
        qs, topk, scores = self.retrieve_batch(body)
        for q in qs:
            yield self.retrieve_one(q, topk, scores)

    def retrieve(self, body: dict) -> dict:
        """Search-R1's retrieval API: `{"queries": [...], "topk": k, "return_scores": bool}` ->
        `{"result": [[{"document": {"id", "contents", ...}, "score"}, ...], ...]}`, one list per
        query in order. A document's `contents` is its title line, then the search snippet; `id`
        is the page URL. A query that cannot be searched (empty, not a string, over the limits)
        gets an empty list, and `errors` names it (`{"index", "error"}`); Search-R1 reads only
        `result`."""
        return retrieve_response(list(self.retrieve_each(body)))

    def task_list(self) -> list[dict]:
        return [{"task_id": t.id, "kind": t.record["kind"], "entity_type": t.record.get("entity_type")}
                for t in self.tasks.values()]

