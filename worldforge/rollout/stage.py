"""The rollout stage: run a policy on every task of a world and store the trajectories.

Layout, inside the world folder:

    rollout/
      trajectories.jsonl   one kept trajectory per line, in task order (messages in OpenAI
                           chat format, per-call step records with perturbations, reward)
      report.json          policy, seed, counts, rewards, turns, tool calls, tokens,
                           perturbations by kind, rejected samples, seconds

Work goes to `.rollout.partial/` in chunks of `chunk_tasks` tasks, each written atomically;
an interrupted run resumes at the first missing chunk (when the options, policy and tasks
are unchanged) and the finished folder is renamed into place. Trajectories depend only on
the seed, the task and the sample number, so a resumed run writes the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..cluster import Local, current, worker_state
from ..errors import RolloutError
from ..plumbing import read_json, read_jsonl, sha256_file, swap_into_place, write_atomic
from ..world import RolloutOptions, open_world
from .env import Environment, load_tasks, load_token_counter, resolve_seed
from .oracle import run_oracle

ROLLOUT_DIR = "rollout"
PARTIAL_DIR = ".rollout.partial"
TRAJECTORIES = "trajectories.jsonl"
REPORT_FILE = "report.json"
POLICIES = ("oracle", "vllm")


def rollout_dir(world_path: str | Path) -> Path:
    return Path(world_path) / ROLLOUT_DIR


def is_rolled_out(world_path: str | Path) -> bool:
    return (rollout_dir(world_path) / REPORT_FILE).is_file()


def read_trajectories(world_path: str | Path) -> list[dict]:
    p = rollout_dir(world_path) / TRAJECTORIES
    if not p.is_file() or not is_rolled_out(world_path):
        raise RolloutError(f"no trajectories in {Path(world_path)}; run `worldforge rollout {world_path}` first")
    return read_jsonl(p, _redo(world_path))


def read_report(world_path: str | Path) -> dict:
    return read_json(rollout_dir(world_path) / REPORT_FILE, _redo(world_path))


def _redo(world_path) -> str:
    return f"roll out again with `worldforge rollout {world_path} --force` (or `worldforge run SPEC`)"





@dataclass
class RolloutReport:
    policy: str
    seed: int
    tasks: int
    trajectories: int
    rejected: int
    seconds: float
    steps: int
    stats: dict

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def _reward_bin(r: float) -> str:
    if r >= 1.0:
        return "1"
    if r <= 0.0:
        return "0"
    return f"[{int(r * 4) / 4:.2f}, {int(r * 4) / 4 + 0.25:.2f})"


def digest(t: dict) -> dict:
    """What `summarise` needs of a trajectory (a few hundred bytes of a record that may hold
    megabytes of pages): the chunks keep these beside the trajectories, so the report is made
    without reading them back."""
    return {"instance_id": t["instance_id"], "kind": t["kind"], "reward": t["reward"],
            "score": {k: t["score"][k] for k in ("success", "item_f1")}, "turns": t["turns"], "tool_calls": t["tool_calls"],
            "calls_by_tool": dict(Counter(s["tool"] for s in t["steps"])), "tokens": t["tokens"],
            "perturbations": t["perturbations"], "errors": t["errors"], "end": t["end"], "context": t.get("context") or {}}


def summarise(trajs: list[dict]) -> dict:
    """Counts and distributions of a list of trajectories, or of their digests (report and
    dataset card)."""
    n = len(trajs)
    rewards = [t["reward"] for t in trajs]
    hist = Counter(_reward_bin(r) for r in rewards)
    pert = Counter()
    for t in trajs:
        pert.update(t["perturbations"])
    tok = Counter()
    for t in trajs:
        tok.update(t["tokens"])
    mean = lambda xs: round(sum(xs) / len(xs), 4) if xs else 0.0  # noqa: E731
    return {
        "trajectories": n, "by_kind": dict(sorted(Counter(t["kind"] for t in trajs).items())),
        "reward_mean": mean(rewards), "reward_histogram": dict(sorted(hist.items())),
        "success_rate": mean([t["score"]["success"] for t in trajs]),
        "item_f1_mean": mean([t["score"]["item_f1"] for t in trajs]),
        "turns_mean": mean([t["turns"] for t in trajs]), "turns_max": max((t["turns"] for t in trajs), default=0),
        "tool_calls": sum(t["tool_calls"] for t in trajs), "tool_calls_mean": mean([t["tool_calls"] for t in trajs]),
        "calls_by_tool": dict(sorted(sum((Counter(t["calls_by_tool"]) if "calls_by_tool" in t else
                                          Counter(s["tool"] for s in t["steps"]) for t in trajs), Counter()).items())),
        "tokens": dict(sorted(tok.items())), "perturbations": dict(sorted(pert.items())),
        "errors": sum(t["errors"] for t in trajs), "ends": dict(sorted(Counter(t["end"] for t in trajs).items())),
        "context": _context_stats(trajs),
    }


def _context_stats(trajs: list[dict]) -> dict:
    """The context budget over trajectories: how often the policy wrote its research state, and
    the sizes of the segments (the samples the export writes), in tokens."""
    sizes = sorted(x for t in trajs for x in (t.get("context") or {}).get("sizes", []))
    if not sizes:
        return {}
    pick = lambda q: sizes[min(len(sizes) - 1, int(q * len(sizes)))]  # noqa: E731
    budget = (trajs[0].get("context") or {}).get("budget")
    return {"budget": budget, "segments": len(sizes), "segment_p50": pick(0.5), "segment_p95": pick(0.95), "segment_max": sizes[-1],
            "segments_within_budget": round(sum(x <= budget for x in sizes) / len(sizes), 4) if budget else 1.0,
            "compacted_trajectories": sum(1 for t in trajs if (t.get("context") or {}).get("compactions")),
            "compactions": sum((t.get("context") or {}).get("compactions", 0) for t in trajs)}


def _fingerprint(opt: RolloutOptions, policy: str, seed: int, tasks_sha: str, model: str | None) -> str:
    key = json.dumps([opt.model_dump(mode="json"), policy, seed, tasks_sha, model], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def run_rollout(world_path: str | Path, options: RolloutOptions | None = None, *, policy: str | None = None,
                parser: str | None = None, model: str | None = None, seed: int | None = None, force: bool = False,
                llm=None, on_progress: Callable[[int, int], None] | None = None, tokenizer: str | None = None) -> RolloutReport:
    """Roll out every task of a rendered world with its tasks (see the module docstring).
    `tokenizer`: a tokenizer.json or model folder to count tokens with (default: the options')."""
    from ..tasks import TASKS_FILE, tasks_dir

    t0 = time.perf_counter()
    world_path = Path(world_path)
    info = open_world(world_path)
    opt = options or info.world.spec.stages.rollout
    if policy is not None and policy not in POLICIES:
        raise RolloutError(f"unknown policy {policy!r}; choose from {', '.join(POLICIES)}")
    updates = {k: v for k, v in (("policy", policy), ("seed", seed), ("tokenizer", tokenizer)) if v is not None}
    if parser is not None or model is not None:
        agent = opt.agent.model_copy(update={k: v for k, v in (("parser", parser), ("model", model)) if v is not None})
        updates["agent"] = agent
    opt = opt.model_copy(update=updates)
    out = rollout_dir(world_path)
    if is_rolled_out(world_path) and not force:
        raise RolloutError(f"{out} already holds trajectories; pass --force to replace them")
    tasks = load_tasks(world_path)  # raises a clear error when there are none
    seed = resolve_seed(opt, info.world.spec.seed)
    render = info.world.spec.stages.render
    agent_model = _model_of(opt, render, llm)
    fp = _fingerprint(opt, opt.policy, seed, sha256_file(tasks_dir(world_path) / TASKS_FILE), agent_model)
    partial = world_path / PARTIAL_DIR
    state = partial / "state.json"
    if partial.exists() and (not state.is_file() or json.loads(state.read_text()).get("fingerprint") != fp):
        shutil.rmtree(partial)  # left by a run with other options: start over
    (partial / "chunks").mkdir(parents=True, exist_ok=True)
    write_atomic(state, json.dumps({"fingerprint": fp}))
    chunks = [tasks[i:i + opt.chunk_tasks] for i in range(0, len(tasks), opt.chunk_tasks)]
    todo = [i for i in range(len(chunks)) if not (partial / "chunks" / f"{i:05d}.jsonl").is_file()]
    done_tasks = sum(len(c) for i, c in enumerate(chunks) if i not in todo)
    if on_progress:
        on_progress(done_tasks, len(tasks))
    counter = load_token_counter(opt.tokenizer) if opt.tokenizer else None  # a bad path fails before any work
    env = Environment.for_world(world_path, opt, seed=seed, **({"count_tokens": counter} if counter else {}))
    own_llm = None
    try:
        if opt.policy == "vllm" and todo:
            if llm is None:
                from ..web import load_llm

                render_like = info.world.spec.stages.render.model_copy(update={
                    "max_model_len": opt.agent.max_model_len, "dtype": opt.agent.dtype, "kv_cache_gib": opt.agent.kv_cache_gib})
                llm = own_llm = load_llm(render_like, agent_model)
            from .agent import VLLMAgent

            agent = VLLMAgent(llm, opt.agent, seed)
            env.count_tokens = lambda text: len(agent.tokenizer.encode(text, add_special_tokens=False))
            # the context is compacted before it outgrows the model: room for one reply past the budget
            room = agent.max_len() - opt.agent.sampling.max_tokens
            if opt.context_tokens is None or opt.context_tokens > room:
                env.options = env.options.model_copy(update={"context_tokens": max(1000, room)})
        narrate = None
        if opt.narration == "vllm" and todo:
            if llm is None:
                from ..web import load_llm

                llm = own_llm = load_llm(render, agent_model)
            from .measure import NameMask

            language = tasks[0].record.get("language", "en")
            narrate = (llm, render, NameMask.of_world(world_path), language, seed)
        ex = current()
        if opt.policy == "oracle" and narrate is None and not isinstance(ex, Local):  # chunks as Ray tasks; each writes its own file
            jobs = ((i, chunks[i], str(partial / "chunks" / f"{i:05d}.jsonl")) for i in todo)
            results = ex.map(_oracle_chunk, jobs, str(world_path), opt.model_dump_json(), seed)
        else:
            results = (_chunk(env, agent if opt.policy == "vllm" else None, opt, chunks[i], partial / "chunks" / f"{i:05d}.jsonl",
                              narrate) for i in todo)
        for n in results:
            done_tasks += n
            if on_progress:
                on_progress(done_tasks, len(tasks))
        agent_stats = agent.stats.as_dict() if opt.policy == "vllm" and todo else {}
    finally:
        env.close()
        if own_llm is not None:
            from ..web import close_llm

            close_llm(own_llm)
    return _finish(world_path, partial, len(chunks), opt, seed, len(tasks), time.perf_counter() - t0, agent_stats)


def _model_of(opt: RolloutOptions, render, llm) -> str | None:
    """The model the vllm policy or the vllm narration loads (the agent's, else the page writer's
    `render.model`), checked before any engine starts; None for the oracle with its grammar."""
    agent_model = None
    if opt.policy == "vllm":
        from ..web import check_model
        from .agent import tool_parser_class

        tool_parser_class(opt.agent.parser)  # a bad parser name fails before any engine starts
        agent_model = opt.agent.model or render.model
        if llm is None:
            if not agent_model:
                raise RolloutError("the vllm policy needs a model: pass --model PATH_OR_HUB_ID or set "
                                   "stages.rollout.agent.model")
            check_model(render, agent_model)
    if opt.narration == "vllm":
        if opt.policy != "oracle":
            raise RolloutError("narration: vllm rewrites the oracle's narration; the vllm policy writes its own words "
                               "(set stages.rollout.narration: grammar, or policy: oracle)")
        agent_model = render.model
        if llm is None:
            if not agent_model:
                raise RolloutError("narration: vllm needs the page writer's model: set stages.render.model (a local "
                                   "path or hub id), or stages.rollout.narration: grammar")
            from ..web import check_model

            check_model(render, agent_model)
    return agent_model


def _chunk(env: Environment, agent, opt: RolloutOptions, chunk: list, path: Path, narrate: tuple | None = None) -> int:
    """Roll out one chunk of tasks and write its trajectories to `path`; returns its task count.
    `narrate`: (llm, render options, name mask, language, seed) for the vLLM narration pass."""
    episodes = [env.episode(t, s) for t in chunk for s in range(opt.samples)]
    if agent is None:
        run_oracle(episodes, opt)
    else:
        agent.run(episodes)
    trs = [ep.trajectory(opt.policy) for ep in episodes]
    if narrate is not None:
        from .rewrite import rewrite_narration

        stats = rewrite_narration(trs, *narrate)
        write_atomic(path.with_suffix(".narration"), json.dumps(stats.as_dict()))
    lines, digests = [], []
    for ep, tr in zip(episodes, trs):
        lines.append(json.dumps(tr, ensure_ascii=False) + "\n")
        digests.append(json.dumps({"kept": opt.min_reward is None or ep.reward >= opt.min_reward, **digest(tr)}) + "\n")
    write_atomic(path.with_suffix(".digest"), "".join(digests))  # first: a chunk is done once its trajectories are
    write_atomic(path, "".join(lines))
    return len(chunk)


def _oracle_chunk(job: tuple[int, list, str], world_path: str, options_json: str, seed: int) -> int:
    """A Ray task: the oracle on one chunk, exactly as the in-process rollout runs it, in the
    environment the worker keeps for the rollout's later chunks (`cluster.worker_state`)."""
    _, chunk, path = job
    index, posed = Path(world_path) / "web" / "render.json", Path(world_path) / "tasks" / "tasks.jsonl"
    # (the environment reads the tasks too: which pages a training episode's searches leave out)
    key = ("rollout", world_path, *(f.stat().st_mtime_ns if f.exists() else 0 for f in (index, posed)), options_json, seed)
    opt = RolloutOptions.model_validate_json(options_json)

    def make() -> Environment:
        extra = {"count_tokens": load_token_counter(opt.tokenizer)} if opt.tokenizer else {}
        return Environment.for_world(world_path, opt, seed=seed, **extra)

    env = worker_state(key, make, lambda e: e.close())
    return _chunk(env, None, opt, chunk, Path(path))


def _finish(world_path: Path, partial: Path, n_chunks: int, opt: RolloutOptions, seed: int, n_tasks: int,
            seconds: float, agent_stats: dict) -> RolloutReport:
    kept, dropped, lines = [], [], []
    for i in range(n_chunks):
        chunk = partial / "chunks" / f"{i:05d}.jsonl"
        digests = [json.loads(x) for x in chunk.with_suffix(".digest").read_text().splitlines()]
        text = chunk.read_bytes().splitlines(keepends=True)
        if len(text) != len(digests):
            raise RolloutError(f"{chunk} does not match its digest; {_redo(world_path)}")
        for d, line in zip(digests, text):
            if d.pop("kept"):
                kept.append(d)
                lines.append(line)
            else:
                dropped.append(d)
    rejected = len(dropped)
    stats = summarise(kept)
    stats["token_counter"] = opt.tokenizer or ("the model's tokenizer" if opt.policy == "vllm" else "worldforge's script-aware estimate")
    if opt.min_reward is not None:  # what rejection sampling dropped, and which tasks it left without a trajectory
        have = {t["instance_id"] for t in kept}
        stats["rejection"] = {
            "min_reward": opt.min_reward, "samples": opt.samples, "kept": len(kept), "dropped": rejected,
            "dropped_rewards": dict(sorted(Counter(_reward_bin(t["reward"]) for t in dropped).items())),
            "dropped_ends": dict(sorted(Counter(t["end"] for t in dropped).items())),
            "tasks_without_a_kept_trajectory": sorted({t["instance_id"] for t in dropped} - have),
        }
    if agent_stats:
        stats["agent"] = agent_stats
    if opt.narration == "vllm":  # the narration pass of each chunk, summed
        from .rewrite import NarrationStats

        narr = NarrationStats()
        for i in range(n_chunks):
            f = partial / "chunks" / f"{i:05d}.narration"
            if f.is_file():
                narr.merge(json.loads(f.read_text()))
        stats["narration"] = narr.as_dict()
    report = RolloutReport(opt.policy, seed, n_tasks, len(kept), rejected, round(seconds, 3),
                           sum(t["tool_calls"] for t in kept), stats)
    final = world_path / ".rollout.final"
    if final.exists():
        shutil.rmtree(final)
    final.mkdir()
    with (final / TRAJECTORIES).open("wb") as f:  # the chunks' lines as they were written: not parsed again
        f.writelines(lines)
    (final / REPORT_FILE).write_text(json.dumps({**report.as_dict(), "options": opt.model_dump(mode="json")},
                                                indent=2, sort_keys=True) + "\n")
    swap_into_place(final, rollout_dir(world_path))
    shutil.rmtree(partial)
    return report
