"""A TRL GRPO environment: `GRPOTrainer(..., environment_factory=WorldforgeToolEnv.factory(url))`.

TRL makes one instance per rollout, calls `reset(**row)` with the dataset row (an exported RL
row: its `extra_info.instance_id` names the task), exposes the public methods as tools (their
schemas come from the signatures and docstrings, written here from the canonical tool specs,
so TRL's prompt shows exactly the schemas of the SFT and RL rows) and reads `get_reward()`
once the rollout ends: the server's WideSearch reward, 0 without a final answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..rollout import TOOLS
from .env import WebSearchEnv

_SPECS = {t["function"]["name"]: t["function"] for t in TOOLS}
PER_CALL_TURNS = 1000  # the server's largest turn limit


def _docstring(name: str) -> str:
    """A Google-style docstring that transformers' `get_json_schema` reads back as the canonical spec."""
    spec = _SPECS[name]
    args = "\n".join(f"    {k}: {v['description']}" for k, v in spec["parameters"]["properties"].items())
    return f"{spec['description']}\n\nArgs:\n{args}\n"


class WorldforgeToolEnv:
    """One rollout's episode on a `worldforge serve` server (URL: the factory's, else $WORLDFORGE_URL)."""

    base_url: str | None = None

    def __init__(self, base_url: str | None = None, seed: int | None = None):
        url = base_url or self.base_url or os.environ.get("WORLDFORGE_URL", "http://127.0.0.1:8000")
        self._env = WebSearchEnv(url)
        self._seed = seed
        self._resets = 0

    @classmethod
    def factory(cls, base_url: str | None = None, seed: int | None = None) -> Callable[[], WorldforgeToolEnv]:
        """The `environment_factory` TRL calls (with no arguments) for each rollout."""
        return lambda: cls(base_url, seed)

    def reset(self, **row) -> None:
        """Start the episode of the row's task (TRL passes the dataset row). Each reset of an
        instance is a new sample, so a GRPO group meets different perturbations."""
        extra = row.get("extra_info") or {}
        task_id = extra.get("instance_id") or row.get("instance_id") or row.get("task_id")
        if not task_id:
            raise ValueError("the row names no task: use the rl config of a worldforge export (extra_info.instance_id)")
        self._resets += 1
        # TRL sends each tool call as its own step and bounds the turns itself: no server turn limit
        self._env.reset(task_id, seed=self._seed, sample=self._resets, max_turns=PER_CALL_TURNS)
        return None

    def _run(self, name: str, arguments: dict) -> str:
        if self._env.episode_id is None or self._env.done:
            return "Error: the task is over (an answer was submitted); stop calling tools."
        out = self._env.step([{"name": name, "arguments": arguments}])
        if name == "final_answer":
            return "Answer submitted; the task is over." if out.done else out.observations[0]["content"]
        return out.observations[0]["content"]

    def web_search(self, query: str, queries: list = None, offset: int = 0):  # noqa: RUF013 - the schema says optional
        args = {"query": query, "offset": offset}
        if queries:
            args["queries"] = queries
        return self._run("web_search", args)

    def web_extractor(self, url: str):
        return self._run("web_extractor", {"url": url})

    def final_answer(self, answer: str):
        return self._run("final_answer", {"answer": answer})

    def get_reward(self) -> float:
        """The episode's reward (ends it first when the model never answered)."""
        self._env.close_episode()  # frees it on the server; an unanswered episode ends with 0
        return self._env.reward()


WorldforgeToolEnv.web_search.__doc__ = _docstring("web_search")
WorldforgeToolEnv.web_extractor.__doc__ = _docstring("web_extractor")
WorldforgeToolEnv.final_answer.__doc__ = _docstring("final_answer")
