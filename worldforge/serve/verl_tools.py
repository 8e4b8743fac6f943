"""verl integration: tools backed by a `worldforge serve` server, and an agent loop that ends
a trajectory at its `final_answer` call. Imported by verl from the kit's configs:

    # tool_config.yaml (written into every export under kits/verl/)
    tools:
      - class_name: worldforge.serve.verl_tools.WorldforgeTool
        config: {type: native, base_url: "http://127.0.0.1:8000"}
        tool_schema: {...web_search...}          # web_extractor and final_answer likewise
    # agent_loop.yaml
    - name: worldforge_agent
      _target_: worldforge.serve.verl_tools.WorldforgeAgentLoop

A trajectory is one server episode: the first tool call creates it for the row's task
(`extra_info.tools_kwargs.<tool>.create_kwargs.task_id`), every call of the trajectory goes to
it in the order the model wrote them (verl runs a turn's calls concurrently; they are
serialised per trajectory so perturbations replay exactly), and `final_answer` ends it. The
RL reward itself is `worldforge.rewards.compute_score` on the decoded response, which equals
the episode's reward.
"""

from __future__ import annotations

import asyncio
import os
import weakref
import zlib
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.tool_agent_loop import AgentState, ToolAgentLoop
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse

FINAL_ANSWER = "final_answer"


class _Trajectory:
    """The server episode of one trajectory (one verl AgentData)."""

    def __init__(self):
        self.lock = asyncio.Lock()
        self.episode: str | None = None
        self.done = False
        self.reward: float | None = None


class WorldforgeTool(BaseTool):
    """web_search, web_extractor or final_answer (the tool is named by its schema)."""

    # Per-trajectory state, keyed by verl's AgentData and gone with it; shared by the three tools.
    _trajectories: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __init__(self, config: dict, tool_schema):
        super().__init__(config, tool_schema)
        self.base_url = (config.get("base_url") or os.environ.get("WORLDFORGE_URL") or "http://127.0.0.1:8000").rstrip("/")
        self.timeout = float(config.get("timeout", 60))
        self._create_kwargs: dict[str, dict] = {}
        self._client = None

    def _http(self):
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout,
                                             limits=httpx.Limits(max_connections=256, max_keepalive_connections=64))
        return self._client

    async def create(self, instance_id: str | None = None, **kwargs) -> tuple[str, ToolResponse]:
        # No awaits before returning: verl starts a turn's calls in order, and the order they take
        # the trajectory's lock below is the order the model wrote them.
        instance_id = instance_id or uuid4().hex
        self._create_kwargs[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
        create = self._create_kwargs.pop(instance_id, {})
        agent_data = kwargs.get("agent_data")
        if agent_data is None:
            return ToolResponse(text="Error: worldforge tools need verl's agent loop (agent_data)."), 0.0, {}
        traj = self._trajectories.setdefault(agent_data, _Trajectory())
        async with traj.lock:
            if traj.done:
                return ToolResponse(text="Error: the task is over (an answer was submitted)."), 0.0, {}
            if traj.episode is None:
                task_id = create.get("task_id") or create.get("instance_id")
                if not task_id:
                    return ToolResponse(text="Error: this row names no worldforge task (extra_info.tools_kwargs."
                                             f"{self.name}.create_kwargs.task_id)."), 0.0, {}
                sample = create.get("sample")
                if sample is None:  # a stable number per trajectory: a GRPO group meets different perturbations
                    sample = zlib.crc32(str(agent_data.request_id).encode()) & 0x7FFFFFFF
                r = await self._http().post("/episodes", json={"task_id": task_id, "seed": create.get("seed"),
                                                               "sample": sample, "max_turns": 1000})  # each call is a step;
                # verl bounds the assistant turns itself
                if r.status_code >= 400:
                    return ToolResponse(text=f"Error: the environment refused the episode ({r.json().get('error')})."), 0.0, {}
                traj.episode = r.json()["episode_id"]
            r = await self._http().post(f"/episodes/{traj.episode}/step", json={"name": self.name, "arguments": parameters})
            got = r.json()
            if r.status_code >= 400:
                return ToolResponse(text=f"Error: {got.get('error')}"), 0.0, {}
            metrics = {"perturbation": (got.get("perturbations") or [None])[0], "error": (got.get("errors") or [None])[0]}
            if got["done"]:
                traj.done, traj.reward = True, got["reward"]
                await self._close(traj)
                metrics["worldforge_reward"] = got["reward"]
                text = "Answer submitted; the task is over." if self.name == FINAL_ANSWER else got["observations"][0]["content"]
                return ToolResponse(text=text), 0.0, metrics
            return ToolResponse(text=got["observations"][0]["content"]), 0.0, metrics

    async def _close(self, traj: _Trajectory) -> None:
        if traj.episode is not None:
            eid, traj.episode = traj.episode, None
            try:
                await self._http().delete(f"/episodes/{eid}")
            except Exception:  # noqa: BLE001 - the server expires it anyway
                pass

    async def finish(self, agent_data) -> None:
        """Close the trajectory's episode (the agent loop calls this when the trajectory ends)."""
        traj = self._trajectories.pop(agent_data, None)
        if traj is not None:
            await self._close(traj)

    async def calc_reward(self, instance_id: str, **kwargs) -> float:
        traj = self._trajectories.get(kwargs.get("agent_data")) if kwargs.get("agent_data") is not None else None
        return float(traj.reward or 0.0) if traj else 0.0

    async def release(self, instance_id: str, **kwargs) -> None:
        self._create_kwargs.pop(instance_id, None)


class WorldforgeAgentLoop(ToolAgentLoop):
    """verl's tool agent loop, ending the trajectory once a turn called `final_answer` (verl's
    own loop goes on generating until the model stops calling tools)."""

    async def _handle_pending_state(self, agent_data, sampling_params):
        self._worldforge_agent_data = agent_data
        return await super()._handle_pending_state(agent_data, sampling_params)

    async def _handle_processing_tools_state(self, agent_data):
        state = await super()._handle_processing_tools_state(agent_data)
        if any(c.name == FINAL_ANSWER for c in agent_data.tool_calls[: self.max_parallel_calls]):
            return AgentState.TERMINATED
        return state

    async def run(self, sampling_params, **kwargs):
        try:
            return await super().run(sampling_params, **kwargs)
        finally:
            agent_data = getattr(self, "_worldforge_agent_data", None)
            tool = next((t for t in self.tools.values() if isinstance(t, WorldforgeTool)), None)
            if agent_data is not None and tool is not None:
                await tool.finish(agent_data)
