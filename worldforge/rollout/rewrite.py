"""The optional vLLM narration pass (`stages.rollout.narration: vllm`).

The narrator (`narrator.py`) composes each assistant turn from the research's events with a
grammar. This pass asks a model (the page writer's engine and sampling, `stages.render`) to
rewrite each of those messages in its own words, one batched `LLM.chat` call per chunk of
tasks, and keeps a rewrite only when `check_rewrite` finds nothing wrong with it:

- every number, URL, quoted phrase and world name the grammar text states is still stated
  (every event is still said; the grounding check's counts still hold);
- it states no number, URL or quoted phrase the grammar text does not, no world name the
  message or the context before it does not show, and no capitalised word or Latin word (in
  Chinese) the grammar text lacks (nothing else is claimed: an invented city, company or year
  is refused); in Chinese, where a name has no capital, no run of characters that neither the
  message, its context nor the narration grammar uses (`web.Vocabulary.novel`: "在纽约");
- it is plain prose in the task's language, of a similar length, not cut at `max_tokens`.

A refused rewrite keeps the grammar text: nothing unchecked is kept. Research notes, tool
calls and answers are never rewritten. The report counts messages, rewrites kept and the
reasons for refusals (`stats.narration`).
"""

from __future__ import annotations

import functools
import re
import time
from collections import Counter
from dataclasses import dataclass, field

from ..language import Language
from ..language import get as get_language
from ..plumbing import URL_PATTERN, stable_hash
from .measure import NameMask, is_state
from .narrator import bank as narration_bank

_URL = re.compile(URL_PATTERN)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_QUOTED = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”|「([^」\n]{1,120})」")
_MARKUP = re.compile(r"^\s*(?:[-*#>|]|\d+[.)]\s)", re.M)
_REASONING = re.compile(r"<think>.*?</think>", re.S)
_PREAMBLE = re.compile(r"[^\n]{0,80}[:：]\s*\n")  # a first line that only announces what follows


def _numbers(text: str) -> set[str]:
    return {m.group(0).replace(",", "") for m in _NUMBER.finditer(text)}


def _quoted(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)}


def _repeats(text: str, lang: Language) -> set[tuple]:
    """Runs of words (of characters, in Chinese) that a text says more than once: six words, or
    twelve characters (the language's shingle)."""
    toks = lang.tokens(text)
    n = lang.reading.shingle_size
    grams = Counter(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))
    return {g for g, k in grams.items() if k > 1}


@functools.lru_cache(maxsize=8)
def narration_vocabulary(language: str):
    """The words the narration grammar of `language` uses (`narration/<lang>.yaml`), and its
    language file's: what a rewrite may say beyond its message (`web.Vocabulary`)."""
    from ..web import Vocabulary

    return Vocabulary.of(language, narration_bank(language))


def check_rewrite(original: str, rewrite: str, shown: set[str], mask: NameMask, language: str,
                  finish_reason: str | None = None, vocabulary=None) -> list[str]:
    """Every reason to refuse `rewrite` of the grammar message `original`; `shown` are the world's
    names the context before the message showed (system, task, notes, tool results, turns);
    `vocabulary` the words any rewrite may use besides (default `narration_vocabulary`)."""
    problems = []
    if not rewrite.strip():
        return ["empty"]
    if finish_reason == "length":
        problems.append("cut at max_tokens")
    if not 0.75 <= len(rewrite) / max(1, len(original)) <= 2.5:  # much shorter: a point of the message is gone
        problems.append("length")
    if _MARKUP.search(rewrite) or "<tool_call>" in rewrite or "```" in rewrite:
        problems.append("markup")
    if _PREAMBLE.match(rewrite) and not _PREAMBLE.match(original):
        problems.append("preamble")  # 'The current text is as follows:' before the message: talk about the task
    lang = get_language(language)
    bare_o, bare_r = _URL.sub(" ", original), _URL.sub(" ", rewrite)  # the texts without their addresses (read once)
    if " ".join(rewrite.split()) == " ".join(original.split()):
        problems.append("unchanged")  # a copy is no rewrite (the grammar text stays, and is not counted as kept)
    first = lang.reading.first_person
    if first.search(original) and not first.search(rewrite):
        problems.append("first person dropped")  # "I'll read X." -> "X.": the action, and the thinker, are gone
    neg = lang.reading.negation
    if len(neg.findall(bare_r)) > len(neg.findall(bare_o)):
        problems.append("negation added")  # 'Let me read X.' -> 'X, no.'
    if _repeats(bare_r, lang) - _repeats(bare_o, lang):
        problems.append("repeated")  # a clause said twice (a model looping)
    if lang.reading.own_script_min is not None:  # a rewrite in its language's script, mostly
        wrong = lang.script_share(rewrite, re.sub(r"\s", "", bare_r)) < lang.reading.own_script_min
    else:  # no other language's script where the message had none
        wrong = lang.foreign_script(rewrite) and not lang.foreign_script(original)
    if wrong:
        problems.append("language")
    for what, a, b in (("number", _numbers(bare_o), _numbers(bare_r)), ("url", set(_URL.findall(original)), set(_URL.findall(rewrite))),
                       ("quote", _quoted(original), _quoted(rewrite))):
        if a - b:
            problems.append(f"{what} dropped")
        if b - a:
            problems.append(f"{what} added")
    names_a, names_b = set(mask.found(original)), set(mask.found(rewrite))
    if names_a - names_b:
        problems.append("name dropped")
    if names_b - names_a - shown:
        problems.append("name added")
    vocabulary = vocabulary if vocabulary is not None else narration_vocabulary(language)
    if vocabulary.novel(rewrite, [original, *shown]):
        problems.append("words added")  # an invented name ('much like Google in Paris', '在纽约', '（Harvard）')
    return problems


@dataclass
class NarrationStats:
    """What the pass did: messages offered, rewrites kept, and why the others were refused."""

    messages: int = 0
    kept: int = 0
    refused: Counter = field(default_factory=Counter)
    prompt_tokens: int = 0
    output_tokens: int = 0
    llm_seconds: float = 0.0

    def as_dict(self) -> dict:
        return {"messages": self.messages, "kept": self.kept, "kept_share": round(self.kept / self.messages, 4) if self.messages else 0.0,
                "refused": dict(sorted(self.refused.items())), "prompt_tokens": self.prompt_tokens,
                "output_tokens": self.output_tokens, "llm_seconds": round(self.llm_seconds, 3)}

    def merge(self, other: dict) -> None:
        self.messages += other["messages"]
        self.kept += other["kept"]
        self.refused.update(other["refused"])
        self.prompt_tokens += other["prompt_tokens"]
        self.output_tokens += other["output_tokens"]
        self.llm_seconds += other["llm_seconds"]


def _shown(t: dict, at: set[int], mask: NameMask) -> dict[int, set[str]]:
    """For each message index in `at`: the world's names the messages before it state (their
    text and tool-call arguments)."""
    seen: set[str] = set()
    out = {}
    for i, m in enumerate(t["messages"]):
        if i in at:
            out[i] = set(seen)
        seen.update(mask.found(m.get("content") or ""))
        for c in m.get("tool_calls") or []:
            seen.update(mask.found(c["function"]["arguments"]))
    return out


def rewrite_narration(trajectories: list[dict], llm, render, mask: NameMask, language: str, seed: int) -> NarrationStats:
    """Rewrite the narration of `trajectories` in place (see the module docstring); `render` is
    the world's render options (engine sampling, thinking)."""
    from vllm import SamplingParams

    from ..web import chat_fitting, prompts_fit

    stats = NarrationStats()
    lang = get_language(language).code
    vocabulary = narration_vocabulary(lang)
    todo = [(t, i) for t in trajectories for i, m in enumerate(t["messages"])
            if m["role"] == "assistant" and (m.get("content") or "").strip() and not is_state(m)]
    stats.messages = len(todo)
    if not todo:
        return stats
    convs = [[{"role": "system", "content": narration_bank(lang)["rewrite_system"]}, {"role": "user", "content": t["messages"][i]["content"]}]
             for t, i in todo]
    s = render.sampling
    tok = llm.get_tokenizer()  # the room a rewrite gets is counted in the model's own tokens (a small
    # model's byte-level vocabulary spends two or three on a Chinese character)
    size = [len(tok.encode(t["messages"][i]["content"], add_special_tokens=False)) for t, i in todo]
    params = [SamplingParams(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k,
                             max_tokens=min(s.max_tokens, 16 + 5 * n // 2),
                             seed=stable_hash(seed, "narration", t["instance_id"], t.get("sample", 0), i) % (2**31))
              for (t, i), n in zip(todo, size)]
    kw = {"enable_thinking": render.enable_thinking}
    shown: dict[int, dict[int, set[str]]] = {}
    for t, i in todo:
        shown.setdefault(id(t), {})[i] = set()
    for t in {id(t): t for t, _ in todo}.values():
        shown[id(t)] = _shown(t, set(shown[id(t)]), mask)
    t0 = time.perf_counter()
    ran, outs = chat_fitting(lambda c, p: llm.chat(c, p, use_tqdm=False, chat_template_kwargs=kw), convs, params,
                             lambda c: prompts_fit(llm.get_tokenizer(), c, render.max_model_len, **kw))
    stats.llm_seconds += time.perf_counter() - t0
    stats.refused["prompt too long"] += len(todo) - len(ran)
    for j, out in zip(ran, outs):
        t, i = todo[j]
        stats.prompt_tokens += len(out.prompt_token_ids or ())
        stats.output_tokens += len(out.outputs[0].token_ids)
        o = out.outputs[0]
        text = _REASONING.sub("", o.text).strip()
        original = t["messages"][i]["content"]
        problems = check_rewrite(original, text, shown[id(t)][i], mask, lang, o.finish_reason, vocabulary)
        if problems:
            stats.refused.update(problems)
            continue
        t["messages"][i]["content"] = text
        stats.kept += 1
    return stats
