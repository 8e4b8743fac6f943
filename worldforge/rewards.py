"""The reward of an exported RL row, for trainers: verl's custom reward signature.

    custom_reward_function.path=pkg://worldforge.rewards
    custom_reward_function.name=compute_score

`compute_score(data_source, solution_str, ground_truth, extra_info)` reads the answer from the
last `final_answer` call of the decoded response (hermes/Qwen `<tool_call>` JSON, bare JSON
calls or Qwen3-Coder XML calls; never from a tool result or a reasoning block) and scores it
with `tasks.scoring.score_table`, the code behind `worldforge score` and the live environment,
in the scorer mode, reward metric, key aliases and date ("as of", for dates without a year or
month) that the row's ground truth carries, the reward clamped to [0, 1]. The
export's reward is therefore the live one. A response with no `final_answer` call is scored
on its last assistant text, as the environment scores an answer given without the tool.
"""

from __future__ import annotations

import datetime as dt
import json
import re

from .tasks import Evaluation, reward_of, score_table

DATA_SOURCE_PREFIX = "worldforge/"
FINAL_ANSWER = "final_answer"

_TOOL_RESPONSE = re.compile(r"<tool_response>.*?(?:</tool_response>|\Z)", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_JSON_CALL = re.compile(r'\{\s*"name"\s*:\s*"final_answer"')
_XML_CALL = re.compile(r"<function=final_answer>\s*<parameter=answer>\n?(.*?)\n?</parameter>", re.S)
_ANY_CALL = re.compile(r"<tool_call>|<function=")
_DECODER = json.JSONDecoder()


def _assistant_text(solution_str: str) -> str:
    """The response without tool results and reasoning blocks."""
    return _THINK.sub("", _TOOL_RESPONSE.sub("\n", solution_str))


def _json_answer(text: str, start: int) -> str | None:
    try:
        call, _ = _DECODER.raw_decode(text, start)
    except ValueError:
        return None
    args = call.get("arguments", call.get("parameters"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    answer = args.get("answer") if isinstance(args, dict) else None
    return answer if isinstance(answer, str) else None


def final_answer(solution_str: str) -> str | None:
    """The answer of the last well-formed `final_answer` call in a decoded response, or None."""
    text = _assistant_text(solution_str or "")
    found: list[tuple[int, str]] = []
    for m in _JSON_CALL.finditer(text):
        answer = _json_answer(text, m.start())
        if answer is not None:
            found.append((m.start(), answer))
    found += [(m.start(), m.group(1)) for m in _XML_CALL.finditer(text)]
    return max(found)[1] if found else None


def answer_of(solution_str: str) -> tuple[str, bool]:
    """(the answer scored, whether it came from a final_answer call). Without a call, the text
    after the last tool result is the answer, unless it holds another tool call (then none)."""
    answer = final_answer(solution_str)
    if answer is not None:
        return answer, True
    text = solution_str or ""
    last = text.rfind("</tool_response>")
    tail = _THINK.sub("", text[last + len("</tool_response>"):] if last >= 0 else text)
    return ("" if _ANY_CALL.search(tail) else tail.strip()), False


def _truth(ground_truth) -> dict:
    if isinstance(ground_truth, dict):
        return ground_truth
    if isinstance(ground_truth, (str, bytes)):
        try:
            got = json.loads(ground_truth)
        except ValueError as exc:
            raise ValueError(f"ground_truth is not worldforge's JSON ({exc}); read it from reward_model.ground_truth "
                             "of a worldforge RL row") from None
        if isinstance(got, dict):
            return got
    raise ValueError(f"ground_truth must be the JSON object of a worldforge RL row, got {type(ground_truth).__name__}")


def compute_score(data_source: str, solution_str: str, ground_truth, extra_info: dict | None = None, **kwargs) -> dict:
    """verl's reward signature. Returns {"score": reward, ...metrics} (verl logs the other keys).
    Rows of other data sources go to verl's default reward when verl is installed."""
    if not str(data_source).startswith(DATA_SOURCE_PREFIX):
        try:
            from verl.utils.reward_score import default_compute_score
        except ImportError:
            raise ValueError(f"data source {data_source!r} is not a worldforge dataset (they start with "
                             f"{DATA_SOURCE_PREFIX!r})") from None
        return default_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
    truth = _truth(ground_truth)
    answer, called = answer_of(solution_str)
    ev = Evaluation.model_validate(truth["evaluation"])
    as_of = dt.date.fromisoformat(truth["as_of"]) if truth.get("as_of") else None
    score = score_table(truth["instance_id"], ev, truth["columns"], truth["rows"], answer, truth.get("aliases") or {},
                        mode=truth.get("scorer", "widesearch"), language=truth.get("language", "en"), as_of=as_of).as_dict()
    metric = truth.get("reward_metric", "item_f1")
    # logged as rewards are (within [0, 1]): WideSearch's F1 passes 1 when a key is repeated in other capitals
    return {"score": reward_of(score, metric), "success": float(score["success"]), "item_f1": reward_of(score, "item_f1"),
            "row_f1": reward_of(score, "row_f1"), "final_answer_called": float(called), "table_parsed": float(score["parsed"])}
