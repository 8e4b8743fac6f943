"""Trainer integrations with the real clients: verl's reward signature (and verl's own loader
and tool machinery when verl is installed), TRL's tool-call parser driving the GRPO
environment class, and the export's reward equal to the live one, aliases included."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import socket

import pytest
import yaml

from tests.serve.test_serve import _rows, _trajectories, server  # noqa: F401 - the running server fixture
from worldforge.rewards import answer_of, compute_score
from worldforge.rollout import Environment, load_tasks
from worldforge.rollout.env import TOOLS
from worldforge.world.options import RolloutOptions


def _decoded_response(tok, messages) -> str:
    """What verl's reward manager passes as solution_str: the response tokens after the prompt,
    decoded with skip_special_tokens=True."""
    prompt = tok.apply_chat_template(messages[:2], tools=TOOLS, tokenize=False, add_generation_prompt=True)
    full = tok.apply_chat_template(messages, tools=TOOLS, tokenize=False)
    assert full.startswith(prompt)
    return tok.decode(tok.encode(full[len(prompt):], add_special_tokens=False), skip_special_tokens=True)


def test_export_reward_equals_live_reward_through_verls_signature(small_run, tiny_model, tmp_path):
    transformers = pytest.importorskip("transformers")
    from worldforge.export import export_dataset
    from worldforge.world.options import ExportOptions

    _, world, _ = small_run
    # every trajectory, wrong answers included (the default SFT filter keeps reward 1.0 only)
    dataset = export_dataset(world, tmp_path, ExportOptions(sft_min_reward=0.0)).path
    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_model))
    rl = {r["extra_info"]["instance_id"]: r for r in _rows(dataset, "rl")}
    n = 0
    for r in _trajectories(dataset):
        row = rl[r["instance_id"]]
        got = compute_score(data_source=row["data_source"], solution_str=_decoded_response(tok, r["messages"]),
                            ground_truth=row["reward_model"]["ground_truth"], extra_info=row["extra_info"])
        assert got["score"] == r["reward"] and got["final_answer_called"] == 1.0
        n += 1
    assert n == 22


def test_alias_answers_score_the_same_from_the_export(small_run):
    _, world, dataset = small_run
    man = json.loads((dataset / "manifest.json").read_text())
    env = Environment.for_world(world, RolloutOptions.model_validate(man["rollout"]["options"]), seed=man["seeds"]["perturbations"])
    tasks = {t.id: t for t in load_tasks(world)}
    checked = 0
    try:
        for row in _rows(dataset, "rl"):
            truth = json.loads(row["reward_model"]["ground_truth"])
            t = tasks[truth["instance_id"]]
            by_name = {}
            for a, name in truth["aliases"].items():
                by_name.setdefault(name, a)
            key = [c.lower().replace(" ", "") for c in t.header].index(truth["evaluation"]["unique_columns"][0].lower().replace(" ", ""))
            rows = [list(x) for x in t.rows]
            swapped = 0
            for x in rows:
                alias = by_name.get(x[key].lower().replace(" ", "").replace("*", ""))
                if alias:
                    x[key], swapped = alias, swapped + 1
            if not swapped:
                continue
            from worldforge.rollout.env import markdown_table

            answer = markdown_table(t.header, rows)
            ep = env.episode(t, 99)
            ep.submit(answer)
            solution = f'<tool_call>\n{json.dumps({"name": "final_answer", "arguments": {"answer": answer}})}\n</tool_call>'
            got = compute_score(row["data_source"], solution, row["reward_model"]["ground_truth"], row["extra_info"])
            assert got["score"] == ep.reward == 1.0
            stripped = json.dumps({**truth, "aliases": {}})
            assert compute_score(row["data_source"], solution, stripped, row["extra_info"])["score"] < 1.0
            checked += 1
    finally:
        env.close()
    assert checked >= 3


def test_reward_reads_the_last_final_answer_never_a_tool_result(small_run):
    _, _, dataset = small_run
    row = next(r for r in _rows(dataset, "rl") if r["extra_info"]["kind"] == "table")
    truth = json.loads(row["reward_model"]["ground_truth"])
    from worldforge.rollout.env import markdown_table

    gold = markdown_table(truth["columns"], truth["rows"])
    call = lambda a: f'<tool_call>\n{json.dumps({"name": "final_answer", "arguments": {"answer": a}})}\n</tool_call>'  # noqa: E731
    gt = row["reward_model"]["ground_truth"]
    assert compute_score(row["data_source"], f"<tool_response>\n{gold}\n</tool_response>", gt)["score"] == 0.0
    assert compute_score(row["data_source"], f"<tool_response>\n{call(gold)}\n</tool_response>", gt)["score"] == 0.0
    assert compute_score(row["data_source"], call("| x |") + "\n" + call(gold), gt)["score"] == 1.0
    assert compute_score(row["data_source"], call(gold) + "\n" + call("| x |"), gt)["score"] == 0.0
    assert compute_score(row["data_source"], f"<think>{call(gold)}</think>no answer", gt)["score"] == 0.0
    xml = f"<function=final_answer>\n<parameter=answer>\n{gold}\n</parameter>\n</function>"
    assert compute_score(row["data_source"], xml, gt)["score"] == 1.0
    assert answer_of(f"<tool_response>x</tool_response>\n{gold}") == (gold, False)
    with pytest.raises(ValueError, match="not a worldforge dataset"):
        if inspect.signature(compute_score):
            import importlib.util

            if importlib.util.find_spec("verl") is None:
                compute_score("openai/gsm8k", "x", "y")
            else:
                raise ValueError("not a worldforge dataset (verl handles it)")


def test_verl_loads_and_calls_the_packaged_reward(small_run):
    reward = pytest.importorskip("verl.trainer.ppo.reward")
    from omegaconf import OmegaConf

    _, _, dataset = small_run
    row = _rows(dataset, "rl")[0]
    kit = {"path": "pkg://worldforge.rewards", "name": "compute_score"}  # verl moved the key under `reward` (and migrates it)
    fn = reward.get_custom_reward_fn(OmegaConf.create({"custom_reward_function": kit, "reward": {"custom_reward_function": kit}}))
    truth = json.loads(row["reward_model"]["ground_truth"])
    from worldforge.rollout.env import markdown_table

    answer = json.dumps({"name": "final_answer", "arguments": {"answer": markdown_table(truth["columns"], truth["rows"])}})
    got = fn(data_source=row["data_source"], solution_str=f"<tool_call>\n{answer}\n</tool_call>",
             ground_truth=row["reward_model"]["ground_truth"], extra_info={**row["extra_info"], "num_turns": 3})
    assert got["score"] == 1.0


def test_trl_parses_calls_and_drives_the_grpo_environment(server, small_run, tiny_model):  # noqa: F811
    """TRL's own response parser on Qwen3-format completions; the calls dispatched to the
    environment's methods the way GRPOTrainer's tool loop does; its reward at the end."""
    pytest.importorskip("trl")
    import transformers
    from trl.chat_template_utils import add_response_schema, parse_response, qwen3_chat_template

    from worldforge.serve.trl import WorldforgeToolEnv

    url, _ = server
    _, _, dataset = small_run
    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_model))
    tok.chat_template = qwen3_chat_template
    add_response_schema(tok)
    rl = {r["extra_info"]["instance_id"]: r for r in _rows(dataset, "rl")}
    traj = _trajectories(dataset)[0]
    want = {m["tool_call_id"]: m["content"] for m in traj["messages"] if m["role"] == "tool"}
    env = WorldforgeToolEnv.factory(url)()
    env._resets = traj["sample"] - 1  # the next reset is this trajectory's sample, so results replay exactly
    assert env.reset(**rl[traj["instance_id"]]) is None
    prompt = tok.apply_chat_template(rl[traj["instance_id"]]["prompt"], tools=[env.web_search, env.web_extractor, env.final_answer],
                                     tokenize=False, add_generation_prompt=True)
    assert json.dumps(TOOLS[0]["function"]["parameters"]["properties"]["queries"]["description"])[1:-1] in prompt
    checked = 0
    for m in traj["messages"][2:]:
        if m["role"] != "assistant":
            continue
        text = m["content"] + "".join(f'\n<tool_call>\n{{"name": "{c["function"]["name"]}", "arguments": {c["function"]["arguments"]}}}'
                                      "\n</tool_call>" for c in m["tool_calls"] or []) + "<|im_end|>"
        parsed = parse_response(tok, tok.encode(text, add_special_tokens=False), prefix=tok.encode(prompt, add_special_tokens=False),
                                tools=[env.web_search, env.web_extractor, env.final_answer])  # as GRPOTrainer parses
        for c, tc in zip(parsed.get("tool_calls") or [], m["tool_calls"] or []):
            result = getattr(env, c["function"]["name"])(**c["function"]["arguments"])  # as GRPOTrainer calls tools
            if c["function"]["name"] != "final_answer":
                assert result == want[tc["id"]]
                checked += 1
    assert checked > 3 and env.get_reward() == traj["reward"] > 0.5


def test_verl_tools_from_the_kit_replay_a_trajectory(server, small_run, monkeypatch):  # noqa: F811
    """The kit's tool config as written, loaded by verl's registry, the server named by
    $WORLDFORGE_URL (it was ignored for the yaml's address): every tool result is the exported one."""
    loop = pytest.importorskip("verl.experimental.agent_loop.tool_agent_loop")
    from types import SimpleNamespace

    from verl.experimental.agent_loop.tool_parser import FunctionCall

    try:
        from verl.tools.tool_registry import initialize_tools_from_config
    except ImportError:
        from verl.tools.utils.tool_registry import initialize_tools_from_config
    url, _ = server
    _, _, dataset = small_run
    monkeypatch.setenv("WORLDFORGE_URL", url)
    tools = {t.name: t for t in initialize_tools_from_config(str(dataset / "kits" / "verl" / "tool_config.yaml"))}
    assert {t.base_url for t in tools.values()} == {url}
    assert [tools[t["function"]["name"]].tool_schema.model_dump(exclude_unset=True, exclude_none=True) for t in TOOLS] == TOOLS
    rl = {r["extra_info"]["instance_id"]: r for r in _rows(dataset, "rl")}
    traj = _trajectories(dataset)[1]
    kwargs = rl[traj["instance_id"]]["extra_info"]["tools_kwargs"]
    kwargs = {k: {"create_kwargs": {**v["create_kwargs"], "sample": traj["sample"]}} for k, v in kwargs.items()}
    params = inspect.signature(loop.AgentData).parameters
    agent_data = loop.AgentData(**{p: ([] if p == "messages" else {} if p in ("metrics", "tools_kwargs") else "req-1"
                                      if p == "request_id" else None) for p in params})
    fake_loop = SimpleNamespace(tools=tools, max_tool_response_length=1_000_000, tool_response_truncate_side="right")
    want = {m["tool_call_id"]: m["content"] for m in traj["messages"] if m["role"] == "tool"}

    async def run():
        checked = 0
        for m in traj["messages"][2:]:
            if m["role"] != "assistant" or not m["tool_calls"]:
                continue
            calls = [FunctionCall(name=c["function"]["name"], arguments=c["function"]["arguments"]) for c in m["tool_calls"]]
            outs = await asyncio.gather(*(loop.ToolAgentLoop._call_tool(fake_loop, c, kwargs, agent_data) for c in calls))
            for (resp, _, _), tc in zip(outs, m["tool_calls"]):
                if tc["function"]["name"] == "final_answer":
                    assert resp.text == "Answer submitted; the task is over."
                else:
                    assert resp.text == want[tc["id"]]
                    checked += 1
        return checked

    assert asyncio.run(run()) > 3


def run_oracle_through_verl(url: str, world, dataset, tiny_model, task_id: str, context_tokens: int | None = None,
                            retry_seconds: float | None = None):
    """The honest oracle as the policy inside verl's own agent loop (`WorldforgeAgentLoop` with the
    kit's tool config and agent-loop settings, verl's hermes parser and continuous-token builder,
    tools over HTTP): the "model" reads the loop's messages and answers as the oracle would, its
    research state when the loop asks for one. Returns (outputs, the RL row, the loop)."""
    from types import SimpleNamespace

    import transformers
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.workers.rollout.replica import TokenOutput

    from worldforge.rollout.env import ToolCall
    from worldforge.rollout.oracle import Brief, ChainResearch, Research, _args
    from worldforge.rollout.state import forget, write_state
    from worldforge.serve.verl_tools import WorldforgeAgentLoop

    try:
        from verl.tools.tool_registry import initialize_tools_from_config
    except ImportError:
        from verl.tools.utils.tool_registry import initialize_tools_from_config
    kits = dataset / "kits" / "verl"
    before = os.environ.get("WORLDFORGE_URL")
    os.environ["WORLDFORGE_URL"] = url  # the kit's tool config as written: it reads the server's address from here
    try:
        tools = initialize_tools_from_config(str(kits / "tool_config.yaml"))
    finally:
        if before is None:
            del os.environ["WORLDFORGE_URL"]
        else:
            os.environ["WORLDFORGE_URL"] = before
    assert {t.base_url for t in tools} == {url}
    for t in tools:
        if retry_seconds is not None:
            t.retry_seconds = retry_seconds
    loop_cfg = yaml.safe_load((kits / "agent_loop.yaml").read_text())[0]
    man = json.loads((dataset / "manifest.json").read_text())
    s = man["training"]["settings"]
    opt = RolloutOptions.model_validate(man["rollout"]["options"])
    row = next(r for r in _rows(dataset, "rl") if r["extra_info"]["instance_id"] == task_id)
    record = next(t.record for t in load_tasks(world) if t.id == task_id)
    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_model))
    trainer = OmegaConf.create({"actor_rollout_ref": {"rollout": {
        "multi_turn": {"max_user_turns": s["max_turns"], "max_assistant_turns": s["max_turns"],
                       "max_parallel_calls": s["max_parallel_calls"], "max_tool_response_length": s["max_tool_response_length"],
                       "tool_response_truncate_side": "right", "format": "hermes"},
        "prompt_length": s["max_prompt_length"], "response_length": s["max_response_length"], "full_determinism": False}},
        "data": {}})

    class OracleModel:
        """verl's server manager, answered by the oracle from the loop's messages."""

        def __init__(self):
            self.loop = None
            self.research = None
            self.calls: list = []
            self.states = 0
            self.turns = 0  # the loop's action turns (a state is not one), capped by max_assistant_turns

        async def generate(self, request_id, prompt_ids, sampling_params, **kw):
            d = self.loop._worldforge_agent_data
            msgs = d.messages
            if self.research is None:
                brief = Brief.of(record)
                cls = ChainResearch if brief.kind == "multihop" else Research
                self.research = cls(SimpleNamespace(key=f"{record['instance_id']}#0", max_turns=s["max_turns"]), brief,
                                    opt.parallel_calls, 7, opt.oracle)
            r = self.research
            last = msgs[-1]
            limit = sampling_params.get("max_tokens")
            if last["role"] == "user" and last["content"].startswith("Context limit"):
                self.absorb(msgs[:-1])
                ids = tok.encode(write_state(r), add_special_tokens=False)[:limit]  # a model stops at max_tokens
                forget(r, tok.decode(ids))  # and goes on from what it wrote
                self.states += 1
                return TokenOutput(token_ids=ids + tok.encode("<|im_end|>", add_special_tokens=False))
            else:
                self.absorb(msgs)
                self.turns += 1
                if self.turns >= s["max_turns"] - 1:  # the loop's last turn: submit what is verified, as run_oracle does
                    said, calls = r.submit_now(), []
                else:
                    said, calls = r.turn()
                if not calls:
                    calls = [ToolCall("final_answer", _args(answer=r.final))]
                self.calls = calls
                text = said + "".join(f'\n<tool_call>\n{{"name": "{c.name}", "arguments": {c.arguments}}}\n</tool_call>' for c in calls)
            return TokenOutput(token_ids=tok.encode(text + "<|im_end|>", add_special_tokens=False))

        def absorb(self, msgs):
            if not self.calls:
                return
            results = [m for m in msgs[-len(self.calls):] if m["role"] == "tool"]
            if len(results) == len(self.calls):
                self.research.absorb(self.calls, [{"content": m["content"], "tool_call_id": ""} for m in results])
            self.calls = []

    model = OracleModel()
    kwargs = {k: {"create_kwargs": {**v["create_kwargs"], "sample": 0}} for k, v in row["extra_info"]["tools_kwargs"].items()}

    async def go():  # verl's loop takes the running event loop when it is made
        loop = WorldforgeAgentLoop(trainer_config=DictConfigWrap(trainer), server_manager=model, tokenizer=tok, processor=None,
                                   dataset_cls=None, data_config=DictConfigWrap(OmegaConf.create({})), tools=ToolListWrap(tools),
                                   context_tokens=context_tokens or loop_cfg["context_tokens"])
        model.loop = loop
        out = await loop.run({"temperature": 1.0}, raw_prompt=row["prompt"], tools_kwargs=kwargs, extra_info=row["extra_info"],
                             data_source=row["data_source"], reward_model=row["reward_model"])  # the row's fields, as verl passes them
        return out, loop

    out, loop = asyncio.run(go())
    return (out if isinstance(out, list) else [out]), row, loop, model


def verl_reward(outs, row, tok) -> float:
    """The reward verl's own path gives a trajectory's outputs: `AgentLoopWorker._compute_score`
    (which pads the outputs together) and its naive reward manager over worldforge's
    `compute_score` (the kit's custom reward), called in process."""
    import types

    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    async def go():
        manager = NaiveRewardManager(OmegaConf.create({}), tok, compute_score)
        handle = types.SimpleNamespace(compute_score=types.SimpleNamespace(remote=manager.run_single))
        w = types.SimpleNamespace(reward_loop_worker_handles=[handle], processor=None, mm_processor_kwargs=None)
        for name in ("_compute_score", "_compute_multi_modal_inputs", "_compute_position_ids", "_get_mm_processor_kwargs"):
            setattr(w, name, types.MethodType(getattr(AgentLoopWorker, name), w))
        await w._compute_score(outs, {"data_source": row["data_source"], "reward_model": row["reward_model"],
                                      "extra_info": dict(row["extra_info"])})
        return outs[-1].reward_score

    return asyncio.run(go())


def test_verl_agent_loop_compacts_a_wide_task_within_the_kit_budget(server, small_run, tiny_model, tmp_path):  # noqa: F811
    """RL manages context as the SFT data does: the oracle inside verl's own agent loop, with the
    kit's settings counted in the model's tokens, writes its research state whenever the context
    fills, and every segment comes back as an output within the kit's prompt and response
    lengths, each later one starting from the state the one before wrote; the last one submits
    the answer, and verl's reward on it is the live one (replayed through verl before, such a
    trajectory was cut before final_answer and scored 0)."""
    pytest.importorskip("verl.experimental.agent_loop.tool_agent_loop")
    import transformers

    from worldforge.export import export_dataset

    url, _ = server
    _, world, _ = small_run
    dataset = export_dataset(world, tmp_path, tokenizer=str(tiny_model)).path  # the kit sized in the model's tokens
    s = json.loads((dataset / "manifest.json").read_text())["training"]["settings"]
    # the widest table the rollout answered in at most half the turn budget (the widest of all can
    # take every turn even uncompacted; in the tiny model's tokens the context fills sooner)
    done = {r["instance_id"] for r in map(json.loads, (world / "rollout" / "trajectories.jsonl").read_text().splitlines())
            if r["end"] == "answer" and r["turns"] <= s["max_turns"] // 2}
    task = max((t for t in load_tasks(world) if t.record["kind"] == "table" and t.id in done), key=lambda t: len(t.rows))
    outs, row, _loop, model = run_oracle_through_verl(url, world, dataset, tiny_model, task.id)
    assert len(outs) >= 3 and model.states == len(outs) - 1
    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_model))
    for i, o in enumerate(outs):
        assert len(o.prompt_ids) <= s["max_prompt_length"] and len(o.response_ids) == len(o.response_mask) <= s["max_response_length"]
        response = tok.decode(o.response_ids, skip_special_tokens=True)
        prompt = tok.decode(o.prompt_ids, skip_special_tokens=True)
        if i < len(outs) - 1:  # every segment but the last ends with the state it was asked for
            assert "Context limit:" in response and "## Research notes" in response.split("Context limit:", 1)[1]
        if i:  # and the next one starts from the task and that state
            state = tok.decode(outs[i - 1].response_ids, skip_special_tokens=True).rsplit("## Research notes", 1)[1]
            assert row["prompt"][1]["content"] in prompt and state.strip()[:200] in prompt
    got = compute_score(row["data_source"], tok.decode(outs[-1].response_ids, skip_special_tokens=True),
                        row["reward_model"]["ground_truth"], row["extra_info"])
    assert got["final_answer_called"] == 1.0 and got["score"] > 0.9
    # the loop sets that reward on the last output, and verl's reward path keeps it
    assert outs[-1].reward_score == got["score"] and outs[-1].extra_fields["reward_extra_info"]["item_f1"] == got["item_f1"]
    assert verl_reward(outs, row, tok) == got["score"]
    # where an earlier segment's prompt is longer than the last one's, verl's own reward path
    # reads the last response cut short (the final_answer call gone): the reward it would give
    last = outs[-1].model_copy(update={"reward_score": None, "extra_fields": {}})
    longer = outs[0].model_copy(update={"prompt_ids": tok.encode("pad " * 400, add_special_tokens=False) + list(last.prompt_ids)})
    assert verl_reward([longer, last], row, tok) < got["score"]
    assert verl_reward([longer, outs[-1].model_copy(deep=True)], row, tok) == got["score"]


def test_verl_stops_loudly_when_the_server_cannot_be_reached(server, small_run, tiny_model):  # noqa: F811
    """With no server at the address, every tool call failed while the reward of the oracle's
    answer stayed 1.0: now the tools retry, then the trajectory raises, naming the address."""
    pytest.importorskip("verl.experimental.agent_loop.tool_agent_loop")
    from worldforge.serve.verl_tools import EnvironmentUnreachable

    _, world, dataset = small_run
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    task = _rows(dataset, "rl")[0]["extra_info"]["instance_id"]
    with pytest.raises(EnvironmentUnreachable, match=f"{dead}.*kits/serve.sh"):
        run_oracle_through_verl(dead, world, dataset, tiny_model, task, retry_seconds=1.0)


def _kit_overrides(dataset, model: str = "MODEL") -> list[str]:
    """run_grpo.sh's overrides, with its $DATA, $KITS and $MODEL as the script sets them."""
    text = (dataset / "kits" / "verl" / "run_grpo.sh").read_text()
    body = text.split("python3 -m verl.trainer.main_ppo \\\n", 1)[1]
    lines = [ln.strip().rstrip("\\").strip() for ln in body.splitlines()]
    return [ln.replace("$DATA", str(dataset)).replace("$KITS", str(dataset / "kits")).replace("$MODEL", model)
            for ln in lines if ln and ln != '"$@"']


def _compose(overrides: list[str]):
    import os

    import verl
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=os.path.join(os.path.dirname(verl.__file__), "trainer", "config"), version_base=None):
        return compose("ppo_trainer", overrides=overrides)


def _parquet_rows(files) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


@pytest.mark.parametrize("held_out", [True, False])
def test_verls_own_config_takes_the_kit_and_every_epoch_trains(small_run, tiny_model, tmp_path, held_out):
    """run_grpo.sh's overrides composed by verl's own Hydra config (an unknown key fails there):
    the train and validation files exist and load with verl's dataset class, a batch is no larger
    than the train split (verl's default 1024 against 300 rows trained 0 steps), and without a
    held-out split validation reads the train files and never runs (an empty list failed:
    "Unable to concatenate an empty list of datasets")."""
    pytest.importorskip("verl.trainer.ppo.utils")
    import transformers
    from verl.trainer.ppo.utils import create_rl_dataset

    from worldforge.kits import write_kits

    _, _, dataset = small_run
    man = json.loads((dataset / "manifest.json").read_text())
    s = man["training"]["settings"]
    if not held_out:  # a kit for the same data without its held-out splits
        dataset = tmp_path / "ds"
        (dataset / "data").mkdir(parents=True)
        (dataset / "data" / "rl").symlink_to(small_run[2] / "data" / "rl")
        write_kits(dataset, "mini", "v1", {"train": [str(p.relative_to(small_run[2])) for p in
                                                    sorted((small_run[2] / "data" / "rl").glob("train-*.parquet"))]}, s)
    cfg = _compose(_kit_overrides(dataset, str(tiny_model)))
    train, val = list(cfg.data.train_files), list(cfg.data.val_files)
    assert train and val and all(os.path.isfile(f) for f in train + val)
    n = _parquet_rows(train)
    assert 1 <= cfg.data.train_batch_size <= n and cfg.actor_rollout_ref.actor.ppo_mini_batch_size <= cfg.data.train_batch_size
    assert n // cfg.data.train_batch_size >= 1  # verl drops an incomplete batch: at least one step an epoch
    if held_out:
        assert val != train and cfg.trainer.val_before_train
    else:
        assert val == train and not cfg.trainer.val_before_train and cfg.trainer.test_freq == -1
    tok = transformers.AutoTokenizer.from_pretrained(str(tiny_model))
    for files in (train, val):
        ds = create_rl_dataset(files, cfg.data, tok, None, is_train=files is train)
        assert len(ds) == _parquet_rows(files)  # filter_overlong_prompts dropped nothing at the kit's prompt length
    assert cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path == str(dataset / "kits" / "verl" / "tool_config.yaml")


def test_run_grpo_refuses_to_start_without_a_server(small_run, tmp_path):
    import subprocess

    _, _, dataset = small_run
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    r = subprocess.run(["bash", str(dataset / "kits" / "verl" / "run_grpo.sh")], capture_output=True, text=True, timeout=60,
                       env={"PATH": os.environ["PATH"], "MODEL": "m", "WORLDFORGE_URL": dead})
    assert r.returncode == 1 and f"no worldforge server answers at {dead}" in r.stderr and "Traceback" not in r.stderr


def test_the_card_says_when_sft_rows_pass_the_named_models_context(small_run, tiny_model, tmp_path):
    """Lengths counted with a model's tokenizer are checked against that model's context (its
    config's max_position_embeddings): rows longer than it are counted and the card says so,
    with what to do; the kit never asks for more without saying it."""
    import shutil

    from worldforge.kits import length_table, training_section
    from worldforge.rollout.context import samples

    _, world, _ = small_run
    model = tmp_path / "short"
    shutil.copytree(tiny_model, model)
    cfg = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**cfg, "max_position_embeddings": 4096}))
    trajs = [json.loads(x) for x in (world / "rollout" / "trajectories.jsonl").read_text().splitlines()][:6]
    rows = [x for t in trajs for x in samples(t, "segments")]
    lengths = length_table(rows, [], str(model))
    counted = length_table(rows, [], str(tiny_model))
    assert lengths["model_context"] == 4096 and counted["model_context"] == cfg["max_position_embeddings"]
    assert lengths["sft_rows_over_model_context"] == sum(n > 4096 for n in [length_table([r], [], str(model))["sft_tokens"]["max"]
                                                                             for r in rows]) > 0
    card = "\n".join(training_section(lengths, {**_settings_for(lengths)}, world.name))
    assert f"{lengths['sft_rows_over_model_context']:,} SFT rows are longer than the model's context" in card
    assert "longer than the model's context" not in "\n".join(training_section(counted, _settings_for(counted), world.name)) or \
        counted["sft_rows_over_model_context"]


def _settings_for(lengths):
    from worldforge.kits import settings

    return settings(lengths, {"parallel_calls": 3, "max_observation_chars": 8000, "max_turns": 30, "context_tokens": 32000})
