"""The honest oracle on the demo world: the targets of its issue, measured from its trajectories
(`worldforge.rollout.measure`); speed is measured by `benchmarks/oracle.py`, not here."""

from __future__ import annotations

import json

import pytest

from worldforge.rollout import Environment, load_tasks
from worldforge.rollout.env import TOOLS, approx_tokens
from worldforge.rollout.measure import negating, reasoning_skeletons, rejected_opens, trajectory_tokens, unseen_opens
from worldforge.rollout.oracle import run_oracle
from worldforge.world.options import RolloutOptions


@pytest.fixture(scope="module")
def demo_rollouts(demo_tasks):
    """The oracle on all 300 demo tasks, without perturbations and with the default ones."""
    world, _, _ = demo_tasks
    out = {}
    for name, opt in (("clean", RolloutOptions(perturbations={})), ("perturbed", RolloutOptions())):
        env = Environment.for_world(world, opt)
        eps = [env.episode(t) for t in load_tasks(world)]
        run_oracle(eps, opt)
        out[name] = (env, [ep.trajectory("oracle") for ep in eps])
    yield world, out
    for env, _ in out.values():
        env.close()


def _mean(xs):
    return sum(xs) / len(xs)


def test_rewards_high_without_perturbations_and_varied_with_them(demo_rollouts):
    _, out = demo_rollouts
    clean, pert = out["clean"][1], out["perturbed"][1]
    assert len(clean) == len(pert) == 300
    assert _mean([t["reward"] for t in clean]) >= 0.97
    rewards = [t["reward"] for t in pert]
    assert _mean(rewards) < 1.0 and sum(r < 1.0 for r in rewards) >= 2  # the web misleads it now and then
    assert all(t["end"] == "answer" for t in clean + pert)


def test_no_page_is_opened_before_something_showed_it(demo_rollouts):
    _, out = demo_rollouts
    for env, trajs in out.values():
        assert sum(len(unseen_opens(t, env.execute)) for t in trajs) == 0


def test_candidates_are_checked_and_dropped_on_not_and_or_tasks(demo_rollouts):
    world, out = demo_rollouts
    env, trajs = out["clean"]
    titles = dict(env.engine.pages.execute("SELECT url, title FROM pages WHERE kind = 'article'").fetchall())
    subjects = dict(env.engine.pages.execute("SELECT url, subject FROM pages WHERE kind = 'article'").fetchall())

    def type_of(url):
        if url not in subjects:
            return None
        return subjects[url].rsplit("_", 1)[0], titles[url].split(" (")[0]

    records = {json.loads(x)["instance_id"]: json.loads(x) for x in (world / "tasks" / "tasks.jsonl").read_text().splitlines()}
    rej = tot = 0
    for t in trajs:
        if negating(records[t["instance_id"]]):
            r, n = rejected_opens(t, records[t["instance_id"]], type_of)
            rej, tot = rej + r, tot + n
    assert tot > 1000 and rej / tot >= 0.15
    # and the trajectories say why a candidate goes
    said = " ".join(m["content"] for t in trajs for m in t["messages"] if m["role"] == "assistant")
    assert said.count("fails") + said.count("is out") + said.count("Dropping") + said.count("Excluding") > 100


def test_reasoning_reads_varied(demo_rollouts):
    _, out = demo_rollouts
    skeletons = reasoning_skeletons(out["perturbed"][1])
    assert len(skeletons) >= 1000
    assert max(skeletons.values()) / sum(skeletons.values()) < 0.05  # no one sentence shape dominates


def test_trajectories_fit_the_context_budget(demo_rollouts):
    _, out = demo_rollouts
    trajs = out["perturbed"][1]
    lengths = [trajectory_tokens(t, TOOLS, approx_tokens) for t in trajs]
    assert sum(n < 32000 for n in lengths) / len(lengths) >= 0.95
    long = [t for t in trajs if t["context"]["summarised"]]
    assert long and all(t["context"]["peak"] > t["context"]["final"] for t in long)
    for t in long:  # what was summarised is recorded: [turn, message index, tokens before, after]
        for turn, i, before, after in t["context"]["events"]:
            assert t["messages"][i]["role"] == "tool" and after < before and 1 <= turn <= t["turns"]


def test_voice_banks_agree_across_languages():
    """Every move the oracle can make is phrased in English and Chinese, with the same slots."""
    import string

    from worldforge.rollout.voice import EN, ZH

    assert set(EN) == set(ZH)
    fields = lambda t: {f for _, f, _, _ in string.Formatter().parse(t) if f}  # noqa: E731
    for move in EN:
        en = set().union(*(fields(t) for t in EN[move]))
        for t in ZH[move]:
            assert fields(t) <= en, (move, t)
        assert len(EN[move]) >= 2 or move in ("copy_only",), move
