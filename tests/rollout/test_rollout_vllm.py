"""The vLLM agent policy with a real engine (vLLM's CPU build, the tiny local model). The
text is noise; batching, parsing, error handling, turn limits, rejection and accounting are
real. Skipped only where vllm is not installed; CI installs it."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("vllm")

from typer.testing import CliRunner  # noqa: E402

from worldforge.cli import app  # noqa: E402
from worldforge.export import export_dataset  # noqa: E402
from worldforge.rollout import read_trajectories, run_rollout  # noqa: E402
from worldforge.rollout.agent import VLLMAgent  # noqa: E402
from worldforge.rollout.stage import read_report  # noqa: E402
from worldforge.world.options import AgentSpec, ExportOptions, RolloutOptions, SamplingSpec  # noqa: E402

runner = CliRunner()
AGENT = AgentSpec(parser="hermes", sampling=SamplingSpec(max_tokens=96, temperature=1.0), batch_size=6,
                  force_tool_call=True)
OPT = RolloutOptions(policy="vllm", max_turns=3, max_observation_chars=600, samples=2, chunk_tasks=8, agent=AGENT)


@pytest.fixture()
def world(small_run, tmp_path):
    _, w, _ = small_run
    dest = tmp_path / "mini"
    shutil.copytree(w, dest, ignore=shutil.ignore_patterns("rollout"))
    return dest


def test_vllm_policy_runs_in_lockstep_with_real_parsing(world, engine, tiny_model, tmp_path):
    rep = run_rollout(world, OPT, llm=engine)
    trajs = read_trajectories(world)
    assert rep.tasks == 22 and len(trajs) == 44 and rep.rejected == 0
    agent = rep.stats["agent"]
    # lockstep: one request per live episode per round; groups of 6 episodes, at most 3 rounds each
    assert agent["requests"] == sum(t["turns"] + t["context"]["compactions"] for t in trajs)  # a state written is a request too
    assert agent["rounds"] <= 3 * (8 * 2 // 6 + 1) * 3
    assert agent["prompt_tokens"] > 0 and agent["output_tokens"] > 0 and agent["cached_tokens"] > 0
    assert all(t["turns"] <= 3 for t in trajs) and {t["end"] for t in trajs} <= {"answer", "turn-limit", "context-length"}
    assert any(t["end"] == "turn-limit" for t in trajs)
    steps = [s for t in trajs for s in t["steps"]]
    assert any(s["error"] == "malformed-call" for s in steps), "no unparseable call met"
    assert any(s["tool"] in ("web_search", "web_extractor") and s["error"] is None for s in steps), "no call parsed and run"
    for t in trajs:
        tool_msgs = [m for m in t["messages"] if m["role"] == "tool"]
        assert len(tool_msgs) == sum(1 for s in t["steps"] if s["tool"] != "final_answer" or s["error"])
        for s in t["steps"]:
            if s["error"]:
                assert tool_msgs[[x["call"] for x in t["steps"] if x["tool"] != "final_answer" or x["error"]].index(s["call"])]["content"].startswith("Error")
        assert t["tokens"]["assistant"] > 0 and t["tokens"]["prompt"] > 0
        assert 0.0 <= t["reward"] <= 1.0
    # tool-call arguments stay JSON strings (vLLM rewrites the messages it is given; we hand it copies)
    assert all(isinstance(c["function"]["arguments"], str) for t in trajs for m in t["messages"] for c in m.get("tool_calls") or [])
    # the same seed gives the same conversations, whatever else is batched with them
    first = (world / "rollout" / "trajectories.jsonl").read_bytes()
    run_rollout(world, OPT.model_copy(update={"agent": AGENT.model_copy(update={"batch_size": 4})}), llm=engine, force=True)
    assert (world / "rollout" / "trajectories.jsonl").read_bytes() == first
    # and the trajectories export like the oracle's, through the grounding check: a random model opens
    # addresses it invented (the forced-call grammar lets it write any URL), and those samples are not exported
    # (every trajectory: the default SFT filter keeps reward 1.0 only, which a random model never reaches)
    r = export_dataset(world, tmp_path / "exports", ExportOptions(sft_min_reward=0.0))
    g = r.grounding
    assert g["samples"] == 44 and sum(r.rows["sft"].values()) == 44 - g["failed"]
    assert 0 < g["failed"] and g["unseen_opens"] >= g["failed"] - g["contradicted"] - (g["cells"] - g["visible_cells"])


def test_vllm_policy_writes_its_research_state_when_the_context_fills(world, engine):
    """With a small context budget the agent is asked for its state, and the model's next reply is
    that state: the conversation then goes on from [system, task + state], which is what the
    model is prompted with (the prompt tokens counted by the engine prove it)."""
    from worldforge.rollout.context import resume_content

    opt = OPT.model_copy(update={"max_turns": 6, "samples": 1, "context_tokens": 1000, "max_observation_chars": 1500})
    run_rollout(world, opt, llm=engine)
    trajs = read_trajectories(world)
    compacted = [t for t in trajs if t["context"]["compactions"]]
    assert compacted
    for t in compacted:
        msgs = t["messages"]
        notes: list[str] = []  # every note so far, or the last alone once one replaced them all
        for prev, seg in zip(t["segments"], t["segments"][1:]):
            ask, state = msgs[prev["end"] - 2], msgs[prev["end"] - 1]
            assert ask["role"] == "user" and ask["content"].startswith("Context limit:") and state["role"] == "assistant"
            notes.append(state["content"])
            if seg["prefix"][1]["content"] != resume_content(msgs[1]["content"], notes):
                notes = [state["content"]]
            assert seg["prefix"][1]["content"] == resume_content(msgs[1]["content"], notes)
        assert t["context"]["compactions"] == len(t["segments"]) - 1
    agent = read_report(world)["stats"]["agent"]  # one request per action turn and per state written
    assert agent["requests"] == sum(t["turns"] + t["context"]["compactions"] for t in trajs)


def test_rejection_sampling_keeps_only_rewarded_trajectories(world, engine):
    rep = run_rollout(world, OPT.model_copy(update={"min_reward": 0.5, "max_turns": 1}), llm=engine)
    assert rep.trajectories + rep.rejected == 44
    assert all(t["reward"] >= 0.5 for t in read_trajectories(world))
    assert read_report(world)["rejected"] == rep.rejected


def test_vllm_policy_bad_input(world, tiny_model, tmp_path):
    res = runner.invoke(app, ["rollout", str(world), "--policy", "vllm", "--parser", "nonesuch", "--model", str(tiny_model)])
    assert res.exit_code == 1 and "unknown tool parser 'nonesuch'" in res.output and "hermes" in res.output
    res = runner.invoke(app, ["rollout", str(world), "--policy", "vllm", "--model", str(tmp_path / "no-model")])
    assert res.exit_code == 1 and "does not exist" in res.output
    res = runner.invoke(app, ["rollout", str(world), "--policy", "vllm"])
    assert res.exit_code == 1 and "needs a model" in res.output
    assert not (world / "rollout").exists() and not (world / ".rollout.partial").exists()
    with pytest.raises(Exception, match="hermes"):
        VLLMAgent.__init__(VLLMAgent.__new__(VLLMAgent), None, AgentSpec(parser="llama3_json", force_tool_call=True), 0)


def test_bad_model_outputs_never_end_the_rollout(world, engine, monkeypatch):
    """Whatever a model writes (calls with None or non-object arguments, absurd offsets, broken
    URLs, a parser that raises), every episode still runs to its end with error results."""
    from worldforge.rollout.env import ToolCall

    hostile = [[ToolCall("web_search", None)], [ToolCall("web_search", '{"query": "x", "offset": 1e300}')],
               [ToolCall("web_extractor", '{"url": "https://[::1"}'), ToolCall(None, {"a": 1})],
               [ToolCall("web_search", '{"query": "' + "(" * 5000 + '"}')]]
    calls = iter(range(10**6))

    def parse(self, text):
        i = next(calls)
        if i % 5 == 4:
            raise RuntimeError("a parser bug")
        return "", hostile[i % 4]

    monkeypatch.setattr(VLLMAgent, "parse", parse)
    rep = run_rollout(world, OPT.model_copy(update={"samples": 1}), llm=engine)
    trajs = read_trajectories(world)
    assert rep.tasks == 22 and len(trajs) == 22
    assert all(t["end"] in ("turn-limit", "context-length") for t in trajs)
    errors = [s["error"] for t in trajs for s in t["steps"]]
    assert {"malformed-arguments", "bad-input", "malformed-call"} <= set(errors)
    assert all(e is not None for e in errors)


def test_vllm_narration_pass_keeps_only_checked_rewrites(world, engine, tmp_path):
    """`narration: vllm` rewrites the oracle's narration with the page writer's engine (here the
    tiny model, whose text is noise) in one batched call per chunk, and keeps a rewrite only
    when the check passes: a refused one keeps the grammar text, so with noise the trajectories
    are the grammar's, byte for byte, and the report says how many were offered and kept."""
    from worldforge.rollout.measure import is_state

    opt = RolloutOptions(perturbations={}, max_turns=12, chunk_tasks=8)
    run_rollout(world, opt)
    grammar = (world / "rollout" / "trajectories.jsonl").read_bytes()
    rep = run_rollout(world, opt.model_copy(update={"narration": "vllm"}), llm=engine, force=True)
    n = rep.stats["narration"]
    said = sum(1 for t in read_trajectories(world) for m in t["messages"]
               if m["role"] == "assistant" and (m["content"] or "").strip() and not is_state(m))
    assert n["messages"] == said > 50 and n["prompt_tokens"] > 0 and n["output_tokens"] > 0
    assert n["kept"] == 0 and n["kept_share"] == 0.0 and sum(n["refused"].values()) >= said  # noise passes no check
    assert (world / "rollout" / "trajectories.jsonl").read_bytes() == grammar
    r = export_dataset(world, tmp_path / "exports", ExportOptions(sft_min_reward=0.0))
    assert r.grounding["failed"] == 0
    # the vllm policy writes its own words: the pass is refused for it, before any work
    with pytest.raises(Exception, match="narration: vllm rewrites the oracle's narration"):
        run_rollout(world, OPT.model_copy(update={"narration": "vllm"}), llm=engine, force=True)
