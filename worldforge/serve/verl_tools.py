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

The server is `$WORLDFORGE_URL` when set (it wins over the config's `base_url`, which the kit
writes as `${oc.env:WORLDFORGE_URL,http://127.0.0.1:8000}`), else the config's `base_url`. A
server that cannot be reached is retried for `retry_seconds` (default 30); then the trajectory
fails loudly (the agent loop raises, naming the address): a tool that only answers errors while
the reward of the final answer stays 1.0 would train on nothing.

A trajectory is one server episode: the first tool call creates it for the row's task
(`extra_info.tools_kwargs.<tool>.create_kwargs.task_id`), every call of the trajectory goes to
it in the order the model wrote them (verl runs a turn's calls concurrently; they are
serialised per trajectory so perturbations replay exactly), and `final_answer` ends it. The
RL reward itself is `worldforge.rewards.compute_score` on the decoded response, which equals
the episode's reward; the loop sets it on the trajectory's last output itself (verl's reward
path would read a segmented trajectory's last response cut short; see `_score`).

The loop manages context the way the rollouts that made the SFT data did (`rollout/context.py`):
when the trajectory's context passes 9/10 of `context_tokens` (less the state it resumed from),
it appends the compaction prompt, the model writes its research state, and the trajectory goes
on from `[system, user: task + state]`. Each segment is returned as its own output (verl's v1
trainer, the default, trains a list of outputs and broadcasts the final reward to every
segment: ReSum-GRPO / SUPO), so a wide task fits `data.max_response_length` segment by segment.
"""

from __future__ import annotations

import asyncio
import os
import re
import weakref
import zlib
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse

from ..rewards import DATA_SOURCE_PREFIX, compute_score
from ..rollout import MIN_TURNS, compact_limit, compaction_prompt, resume_content

FINAL_ANSWER = "final_answer"
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
STATE_MAX_TOKENS = 16384  # a research state is at most this long (and within the prompt room)


class EnvironmentUnreachable(RuntimeError):
    """The worldforge server could not be reached: training on this trajectory would be noise."""


class _Trajectory:
    """The server episode of one trajectory (one verl AgentData)."""

    def __init__(self):
        self.lock = asyncio.Lock()
        self.episode: str | None = None
        self.done = False
        self.reward: float | None = None
        self.unreachable: str | None = None  # why the server could not be reached, once it could not


class WorldforgeTool(BaseTool):
    """web_search, web_extractor or final_answer (the tool is named by its schema)."""

    # Per-trajectory state, keyed by verl's AgentData and gone with it; shared by the three tools.
    _trajectories: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __init__(self, config: dict, tool_schema):
        super().__init__(config, tool_schema)
        self.base_url = (os.environ.get("WORLDFORGE_URL") or config.get("base_url") or "http://127.0.0.1:8000").rstrip("/")
        self.timeout = float(config.get("timeout", 60))
        self.retry_seconds = float(config.get("retry_seconds", 30))
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

    async def _post(self, path: str, body: dict):
        """POST to the server, retrying connection failures for `retry_seconds`."""
        import httpx

        delay, waited = 0.5, 0.0
        while True:
            try:
                return await self._http().post(path, json=body)
            except httpx.TransportError as exc:
                if waited >= self.retry_seconds:
                    raise EnvironmentUnreachable(
                        f"the worldforge server at {self.base_url} cannot be reached ({type(exc).__name__}: {exc}); start it "
                        "(bash kits/serve.sh) or set WORLDFORGE_URL to its address") from None
                await asyncio.sleep(delay)
                waited += delay
                delay = min(delay * 2, 5.0)

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
        create = self._create_kwargs.pop(instance_id, {})
        agent_data = kwargs.get("agent_data")
        if agent_data is None:
            return ToolResponse(text="Error: worldforge tools need verl's agent loop (agent_data)."), 0.0, {}
        traj = self._trajectories.setdefault(agent_data, _Trajectory())
        async with traj.lock:
            if traj.unreachable:
                return ToolResponse(text="Error: the environment cannot be reached."), 0.0, {}
            try:
                return await self._execute(traj, create, agent_data, parameters)
            except EnvironmentUnreachable as exc:
                traj.unreachable = str(exc)  # the agent loop raises it once the turn is over
                return ToolResponse(text="Error: the environment cannot be reached."), 0.0, {}

    async def _execute(self, traj: _Trajectory, create: dict, agent_data, parameters: dict) -> tuple[ToolResponse, float, dict]:
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
            r = await self._post("/episodes", {"task_id": task_id, "seed": create.get("seed"),
                                               "sample": sample, "max_turns": 1000})  # each call is a step;
            # verl bounds the assistant turns itself
            if r.status_code >= 400:
                return ToolResponse(text=f"Error: the environment refused the episode ({r.json().get('error')})."), 0.0, {}
            traj.episode = r.json()["episode_id"]
        r = await self._post(f"/episodes/{traj.episode}/step", {"name": self.name, "arguments": parameters})
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

    async def finish(self, agent_data) -> str | None:
        """Close the trajectory's episode (the agent loop calls this when the trajectory ends);
        why the server could not be reached, if it could not."""
        traj = self._trajectories.pop(agent_data, None)
        if traj is not None:
            await self._close(traj)
            return traj.unreachable
        return None

    async def calc_reward(self, instance_id: str, **kwargs) -> float:
        traj = self._trajectories.get(kwargs.get("agent_data")) if kwargs.get("agent_data") is not None else None
        return float(traj.reward or 0.0) if traj else 0.0

    async def release(self, instance_id: str, **kwargs) -> None:
        self._create_kwargs.pop(instance_id, None)


class WorldforgeAgentLoop(ToolAgentLoop):
    """verl's tool agent loop, ending the trajectory once a turn called `final_answer` (verl's
    own loop goes on generating until the model stops calling tools), and compacting its
    context by a research state (see the module docstring). `context_tokens` comes from the
    kit's agent_loop.yaml (the rollout's budget), else $WORLDFORGE_CONTEXT_TOKENS, and is capped
    by what one segment may hold (prompt + response length)."""

    def __init__(self, *args, context_tokens: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        budget = context_tokens or int(os.environ.get("WORLDFORGE_CONTEXT_TOKENS") or 0) or None
        cap = self.prompt_length + self.response_length
        self.context_tokens = min(budget, cap) if budget else cap
        self._segments: list[AgentLoopOutput] = []
        self._base: list[dict] | None = None  # [system, user: task] of the running trajectory
        self._base_tokens: int | None = None
        self._last_used: int | None = None  # the context's size when last checked (what a turn adds)
        self._notes: list[str] = []
        self._note_tokens = 0
        self._language = "en"

    async def _handle_pending_state(self, agent_data, sampling_params):
        self._worldforge_agent_data = agent_data
        self._sampling = sampling_params
        if self._base is None:  # [system, user: task] as the row gives them
            self._base = [dict(m) for m in agent_data.messages[:2]]
        state = await super()._handle_pending_state(agent_data, sampling_params)
        self._segment_start = (len(agent_data.prompt_ids), agent_data.assistant_turns)
        if self._base_tokens is None:
            self._base_tokens = len(agent_data.prompt_ids)
        return state

    async def _handle_processing_tools_state(self, agent_data):
        state = await super()._handle_processing_tools_state(agent_data)
        if any(c.name == FINAL_ANSWER for c in agent_data.tool_calls[: self.max_parallel_calls]):
            return AgentState.TERMINATED
        if state is AgentState.GENERATING and self._full(agent_data):
            return await self._compact(agent_data)
        return state

    def _full(self, d: AgentData) -> bool:
        """Past the compaction point, with at least MIN_TURNS turns in this segment and room in
        its response for the state."""
        _prefix, turns = self._segment_start
        used = len(d.prompt_ids)
        grew, self._last_used = used - (self._last_used or used), used
        limit = compact_limit(self.context_tokens, self._note_tokens, grew)  # as the rollouts' environment compacts
        return (limit is not None and used > limit and d.assistant_turns - turns >= MIN_TURNS
                and len(d.response_mask) + 256 < self.response_length)

    async def _compact(self, d: AgentData) -> AgentState:
        """Ask for the research state, close this segment as an output, go on from the state."""
        schemas = getattr(d, "_active_tool_schemas", self.tool_schemas)
        previous = list(d.messages)
        d.messages.append({"role": "user", "content": compaction_prompt(len(d.prompt_ids), self.context_tokens, self._language)})
        merged, d.response_mask, logprobs = await self.ct_merge_context_msg(
            previous, d.messages, d.prompt_ids, d.response_mask, d.response_logprobs or None, tools=schemas)
        d.prompt_ids = merged.token_ids
        if d.response_logprobs:
            d.response_logprobs = logprobs or []
        # the state fits the rest of this segment's response, and the next segment's prompt (so verl never cuts it)
        room = max(1, min(STATE_MAX_TOKENS, self.response_length - len(d.response_mask), self.prompt_length - self._base_tokens - 64))
        out = await self.server_manager.generate(request_id=d.request_id, prompt_ids=d.prompt_ids,
                                                 sampling_params={**self._sampling, "max_tokens": room})
        # the state is not an action turn: verl's max_assistant_turns bounds actions, as the rollouts' max_turns does
        merged, d.response_mask, logprobs = await self.ct_merge_assistant_token(
            d.prompt_ids, out.token_ids, d.response_mask, d.response_logprobs if (d.response_logprobs or out.log_probs) else None,
            assistant_logprobs=out.log_probs or None)
        d.prompt_ids = merged.token_ids
        if logprobs is not None:
            d.response_logprobs = logprobs
        text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
        state = _THINK.sub("", text).split("<tool_call>")[0].strip()  # a note holds no calls
        self._segments.append(self._output(d))
        self._notes = [*self._notes, state]  # the next segment starts from every note so far
        self._note_tokens = len(out.token_ids)
        system, task = self._base
        d.messages = [system, {**task, "content": resume_content(task["content"], self._notes, self._language)}]
        d.prompt_ids, d.response_mask, d.response_logprobs = [], [], []
        d.routed_experts = None
        d.extra_fields = {}
        d.turn_scores, d.tool_rewards = [], []
        return await self._handle_pending_state(d, self._sampling)

    def _output(self, d: AgentData) -> AgentLoopOutput:
        """A closed segment as verl's run() finalizes a trajectory (the same fields, so every
        output of the list has the same keys)."""
        n = len(d.response_mask)
        response_ids = d.prompt_ids[-n:]
        prompt_ids = d.prompt_ids[: len(d.prompt_ids) - n]
        mm = {k: v for k, v in (("images", d.image_data), ("videos", d.video_data), ("audios", d.audio_data)) if v is not None}
        out = AgentLoopOutput(
            prompt_ids=prompt_ids, response_ids=response_ids[: self.response_length], response_mask=d.response_mask[: self.response_length],
            multi_modal_data=mm, mm_processor_kwargs=d.mm_processor_kwargs, mm_processor_output=d.mm_processor_output,
            response_logprobs=d.response_logprobs[: self.response_length] if d.response_logprobs else None,
            num_turns=d.user_turns + d.assistant_turns + 1, metrics=d.metrics,
            routed_experts=d.routed_experts[: len(prompt_ids) + self.response_length] if d.routed_experts is not None else None,
            extra_fields=dict(d.extra_fields))
        out.extra_fields.update({"turn_scores": list(d.turn_scores), "tool_rewards": list(d.tool_rewards)})
        return out

    async def run(self, sampling_params, **kwargs):
        self._segments, self._base, self._base_tokens, self._notes, self._note_tokens = [], None, None, [], 0
        self._last_used = None
        extra = kwargs.get("extra_info") or {}
        self._language = extra.get("language") or "en"
        try:
            final = await super().run(sampling_params, **kwargs)
        finally:
            agent_data = getattr(self, "_worldforge_agent_data", None)
            tool = next((t for t in self.tools.values() if isinstance(t, WorldforgeTool)), None)
            unreachable = await tool.finish(agent_data) if agent_data is not None and tool is not None else None
        if unreachable:  # not a trajectory to train on: stop the step, naming the address
            raise EnvironmentUnreachable(unreachable)
        await self._score(final, kwargs)
        return [*self._segments, final] if self._segments else final

    async def _score(self, final: AgentLoopOutput, row: dict) -> None:
        """The trajectory's reward, set on its last output: `compute_score` on that output's
        response, decoded whole. verl's own reward path pads a trajectory's outputs together (the
        prompts on the right) and then reads the last one as if its prompt were padded on the
        left, so when that prompt is shorter than another segment's, the end of its response (the
        final_answer call) is cut and a right answer scores 0. Rows of other data sources are
        left to verl's reward."""
        source, truth = row.get("data_source"), (row.get("reward_model") or {}).get("ground_truth")
        if final.reward_score is not None or truth is None or not str(source).startswith(DATA_SOURCE_PREFIX):
            return
        text = self.tokenizer.decode(final.response_ids, skip_special_tokens=True)
        result = await asyncio.to_thread(compute_score, source, text, truth, dict(row.get("extra_info") or {}))
        final.reward_score = float(result["score"])
        final.extra_fields["reward_extra_info"] = dict(result)
