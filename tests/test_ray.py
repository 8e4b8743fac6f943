"""Ray: the stages' shards (render shards, rollout chunks, export writers) and a farm's worlds
run as Ray tasks on a local 2-CPU cluster, and every output is the same as in one process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, write_spec

pytest.importorskip("ray")

sys.path.insert(0, str(REPO / "benchmarks"))
from digest_run import digest  # noqa: E402

STAGES = {"tasks": {"table": 12, "multihop": 6}, "rollout": {"chunk_tasks": 4}}
COUNTS = {"country": 3, "person": 150, "company": 30, "university": 4, "researcher": 30, "award": 4, "publication": 30,
          "club": 8, "player": 60}


def _digests(*roots: Path) -> list[tuple[str, str]]:
    return [(h, f"{i}/{rel}") for i, r in enumerate(roots) for h, rel in digest(r)]


# first: no cluster is running yet
def test_cli_ray_flags(tmp_path):
    """--ray-address to nothing fails in one line with exit 1; without Ray installed, --ray says how to get it."""
    from typer.testing import CliRunner

    from worldforge.cli import app

    spec = write_spec(tmp_path, "flags", counts=COUNTS, stages=STAGES)
    res = CliRunner().invoke(app, ["run", str(spec), "-b", str(tmp_path / "b"), "-o", str(tmp_path / "o"), "--ray-address", "127.0.0.1:1"])
    assert res.exit_code == 1, res.output
    assert "Ray cluster at 127.0.0.1:1" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(app, ["run", str(spec), "-b", str(tmp_path / "b"), "-o", str(tmp_path / "o"), "--ray-address", "head"])
    assert res.exit_code != 0 and "give HOST:PORT" in res.output


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, monkeypatch_module):
    from worldforge.run import run_pipeline

    tmp = tmp_path_factory.mktemp("one")
    spec = write_spec(tmp, "rayw", counts=COUNTS, stages=STAGES)
    r = run_pipeline(spec, tmp / "build", tmp / "out")
    return spec, r


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    mp.setattr("worldforge.web.stage.TEMPLATE_SHARD", 300)  # several render shards even in a small world
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def cluster():
    from worldforge.cluster import use_cluster

    with use_cluster(ray=True, num_cpus=2) as ex:
        yield ex


def test_run_on_ray_gives_the_same_bytes(one_process, cluster, tmp_path, monkeypatch_module):
    from worldforge.cluster import RayCluster, current
    from worldforge.run import run_pipeline

    spec, local = one_process
    assert isinstance(current(), RayCluster) and current().workers == 2
    r = run_pipeline(spec, tmp_path / "build", tmp_path / "out")
    assert [s.status for s in r.stages] == ["ran"] * 5
    a, b = _digests(local.world, local.dataset), _digests(r.world, r.dataset)
    assert len(a) > 50 and a == b
    # the render really was cut into shards, and the rollout into chunks
    rep = json.loads((r.world / "web" / "render.json").read_text())["report"]
    assert rep["shards"] >= 3 and rep["resumed_shards"] == 0
    assert json.loads((r.world / "tasks" / "report.json").read_text())["kept"]["table"] > 4


def test_shards_run_in_ray_workers_and_errors_come_back(cluster):
    import os

    from worldforge.cluster import current
    from worldforge.errors import RenderError

    pids = set(current().map(_pid, range(6)))
    assert os.getpid() not in pids
    assert list(current().map(_square, range(10), 3)) == [i * i + 3 for i in range(10)]  # item order, whoever finishes first
    with pytest.raises(RenderError, match="shard 4 failed"):
        list(current().map(_fail_on_4, range(8)))


def _pid(_):
    import os
    import time

    time.sleep(0.2)
    return os.getpid()


def _square(i, plus):
    import random
    import time

    time.sleep(random.random() * 0.05)
    return i * i + plus


def _fail_on_4(i):
    from worldforge.errors import RenderError

    if i == 4:
        raise RenderError("shard 4 failed")
    return i
