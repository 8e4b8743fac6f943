"""A framework-neutral environment: `reset` a task, `step` with tool calls or the model's raw
text, read the `reward`. Over HTTP (a running `worldforge serve`) or in-process (a world folder).

    env = WebSearchEnv("http://127.0.0.1:8000")        # or WebSearchEnv.local("build/demo")
    messages = env.reset("demo-table-0a1b2c", seed=7)    # system + user; env.tools: the schemas
    out = env.step('<tool_call>\\n{"name": "web_search", "arguments": {"query": "..."}}\\n</tool_call>')
    out.observations, out.done, out.reward               # tool messages; reward once done
    env.close()

Trainers that wrap a text environment (SkyRL-gym's `BaseTextEnv.step(action) -> observations,
reward, done`, verifiers' multi-turn `env_response`) call `step` with the model's text; tool
calls are read from hermes `<tool_call>` blocks (Qwen, Hermes and most open models), bare JSON
calls, or Qwen3-Coder XML calls. A turn without a call is the final answer, as in-process.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field

from ..rollout import TOOLS

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_XML = re.compile(r"<function=([\w.-]+)>(.*?)</function>", re.S)
_XML_PARAM = re.compile(r"<parameter=([\w.-]+)>\n?(.*?)\n?</parameter>", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)


def parse_tool_calls(text: str) -> tuple[str, list[dict]]:
    """(the text without calls, [{"name", "arguments"}]) of a model's turn. A call whose JSON
    does not parse is kept with its raw text as arguments, so the environment answers it with
    an error (the model learns from it) rather than dropping it."""
    visible = _THINK.sub("", text or "")
    calls: list[dict] = []
    for m in _HERMES.finditer(visible):
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            calls.append({"name": "?", "arguments": m.group(1)})
            continue
        if isinstance(obj, dict):
            calls.append({"name": obj.get("name") if isinstance(obj.get("name"), str) else "?",
                          "arguments": obj.get("arguments", obj.get("parameters", {}))})
    for m in _XML.finditer(visible):
        calls.append({"name": m.group(1), "arguments": {k: v for k, v in _XML_PARAM.findall(m.group(2))}})
    content = _XML.sub("", _HERMES.sub("", visible)).strip()
    return content, calls


START_HINT = ("start it (bash kits/serve.sh in a dataset, or worldforge serve WORLD_DIR) or set WORLDFORGE_URL to "
              "its address")


class ServerUnreachable(RuntimeError):
    """No worldforge server answers at an address; the message is one line naming the address,
    what happened and what to do."""


def check_url(url: str) -> str:
    """`url` without a trailing slash, or ValueError naming what is wrong with it."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{str(url)[:200]!r} is not a server address; give one like http://127.0.0.1:8000 "
                         "(WORLDFORGE_URL, or the kit's base_url)")
    return str(url).rstrip("/")


def _why(exc: Exception) -> str:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "it did not answer in time"
    text = str(exc).strip() or type(exc).__name__
    return text.split("] ", 1)[-1][:120]  # '[Errno 111] Connection refused' -> 'Connection refused'


def _unreachable(url: str, exc: Exception) -> ServerUnreachable:
    return ServerUnreachable(f"no worldforge server answers at {url} ({_why(exc)}); {START_HINT}")


def wait_for_server(url: str, seconds: float = 30.0, timeout: float = 10.0) -> dict:
    """Wait at most `seconds` for a worldforge server at `url` to answer GET /health (each try
    `timeout`); its health record. ServerUnreachable (one line) when none does, or when what
    answers is not a worldforge server; ValueError for an address that is not one."""
    import httpx

    url = check_url(url)
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        try:
            r = httpx.get(url + "/health", timeout=timeout)
        except httpx.TransportError as exc:
            if time.monotonic() + 1.0 > deadline or isinstance(exc, httpx.TimeoutException):
                raise _unreachable(url, exc) from None
            time.sleep(1.0)
            continue
        try:
            health = r.json()
        except ValueError:
            health = None
        if r.status_code != 200 or not isinstance(health, dict) or health.get("status") != "ok":
            raise ServerUnreachable(f"{url} answers, but not as a worldforge server (GET /health: HTTP {r.status_code}); "
                                    f"{START_HINT}")
        return health


def require_server(url: str, seconds: float | None = None) -> dict:
    """`wait_for_server` for a script's start: exits with the one-line error (status 1) when no
    server answers, before any model or data is loaded. It waits `seconds`, else
    $WORLDFORGE_WAIT, else 30 (a server still rebuilding its world answers late)."""
    import os

    if seconds is None:
        raw = os.environ.get("WORLDFORGE_WAIT") or "30"
        try:
            seconds = float(raw)
        except ValueError:
            raise SystemExit(f"error: WORLDFORGE_WAIT={raw[:40]!r} is not a number of seconds; set it to one "
                             "(e.g. WORLDFORGE_WAIT=120) or unset it for 30") from None
    try:
        return wait_for_server(url, seconds, timeout=min(10.0, max(1.0, seconds)))
    except (ServerUnreachable, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None


@dataclass
class StepResult:
    observations: list[dict]  # tool messages: {"role": "tool", "tool_call_id", "name", "content"}
    done: bool
    reward: float | None  # the episode's reward once done
    info: dict = field(default_factory=dict)  # score, end, perturbations, errors


class WebSearchEnv:
    """One episode at a time of a worldforge world (see the module docstring)."""

    tools = TOOLS

    def __init__(self, base_url: str | None = None, *, service=None, timeout: float = 60.0):
        if (base_url is None) == (service is None):
            raise ValueError("give the server's base URL, or use WebSearchEnv.local(world_dir)")
        self.service = service
        self.client = None
        self.base_url: str | None = None
        if base_url is not None:
            import httpx

            self.base_url = check_url(base_url)
            self.client = httpx.Client(base_url=self.base_url, timeout=timeout)
        self.episode_id: str | None = None
        self.messages: list[dict] = []
        self.last: dict = {}

    @classmethod
    def local(cls, world_dir, **kw) -> WebSearchEnv:
        """In-process, over a world folder (no server)."""
        from .service import EnvironmentService

        return cls(service=EnvironmentService(world_dir, **kw))

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        if self.client is not None:
            import httpx

            try:
                r = self.client.request(method, path, json=body)
            except httpx.TransportError as exc:
                raise _unreachable(self.base_url, exc) from None
            try:
                data = r.json()
            except ValueError:
                raise ServerUnreachable(f"{self.base_url} answers, but not as a worldforge server ({method} {path}: HTTP "
                                        f"{r.status_code}, not JSON); {START_HINT}") from None
            if r.status_code >= 400:
                raise RuntimeError(f"worldforge server: {r.status_code} {data.get('error', data) if isinstance(data, dict) else data}")
            return data
        from .service import ServiceError

        s = self.service
        try:
            if path == "/episodes":
                return s.create(body or {})
            eid = path.split("/")[2]
            if path.endswith("/step"):
                return s.step(eid, body or {})
            if method == "DELETE":
                return s.close_episode(eid)
            return s.status(eid)
        except ServiceError as exc:
            raise RuntimeError(f"worldforge environment: {exc.status} {exc.message}") from None

    def reset(self, task_id: str, seed: int | None = None, sample: int = 0, max_turns: int | None = None) -> list[dict]:
        """Start an episode (closing the previous one); its system and user messages. `max_turns`
        overrides the world's turn limit (one step is one turn)."""
        self.close_episode()
        body = {"task_id": task_id, "seed": seed, "sample": sample} | ({"max_turns": max_turns} if max_turns else {})
        got = self._call("POST", "/episodes", body)
        self.episode_id = got["episode_id"]
        self.messages = list(got["messages"])
        self.last = {}
        return list(self.messages)

    def step(self, action) -> StepResult:
        """One assistant turn: the model's text (tool calls parsed from it), a list of calls
        `[{"name", "arguments"}]`, or one call as a dict."""
        if self.episode_id is None:
            raise RuntimeError("call reset(task_id) first")
        if isinstance(action, str):
            content, calls = parse_tool_calls(action)
        elif isinstance(action, dict):
            content, calls = "", [action]
        else:
            content, calls = "", list(action)
        body = {"content": content, "tool_calls": [{"name": c.get("name"), "arguments": c.get("arguments")} for c in calls]}
        got = self._call("POST", f"/episodes/{self.episode_id}/step", body)
        self.last = got
        self.messages.append({"role": "assistant", "content": content,
                              **({"tool_calls": [{"id": o["tool_call_id"], "type": "function",
                                                  "function": {"name": o["name"], "arguments": json.dumps(c.get("arguments"))}}
                                                 for o, c in zip(got["observations"], calls)]} if calls else {})})
        self.messages += got["observations"]
        info = {k: got.get(k) for k in ("score", "end", "perturbations", "errors", "turns", "tool_calls")}
        return StepResult(got["observations"], got["done"], got["reward"], info)

    @property
    def done(self) -> bool:
        return bool(self.last.get("done"))

    def reward(self) -> float:
        """The episode's reward: its score once answered, 0 when it ended without an answer."""
        if self.episode_id is None:
            return float(self.last.get("reward") or 0.0)
        if not self.done:
            return 0.0
        return float(self.last["reward"])

    def close_episode(self) -> dict | None:
        """End the current episode (reward 0 if unanswered) and free it on the server."""
        if self.episode_id is None:
            return None
        try:
            got = self._call("DELETE", f"/episodes/{self.episode_id}")
        except RuntimeError:  # already expired or closed
            got = None
        if got is not None:
            self.last = got
        self.episode_id = None
        return got

    def close(self) -> None:
        self.close_episode()
        if self.client is not None:
            self.client.close()
        if self.service is not None:
            self.service.close()
