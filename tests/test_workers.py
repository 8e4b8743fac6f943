"""Worker processes of this machine (the command line's default, one per core): the stages'
shards (render shards, rollout chunks, export writers) run in them, results come back in item
order with the worker's own errors, and every output is the same bytes as in one process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, write_spec
from tests.shard_fns import _fail_on_4, _pid, _square

sys.path.insert(0, str(REPO / "benchmarks"))
from digest_run import digest  # noqa: E402

STAGES = {"tasks": {"table": 10, "multihop": 5}, "rollout": {"chunk_tasks": 4}}
COUNTS = {"country": 3, "person": 150, "company": 30, "university": 4, "researcher": 30, "award": 4, "publication": 30,
          "club": 8, "player": 60}


def _digests(*roots: Path) -> list[tuple[str, str]]:
    return [(h, f"{i}/{rel}") for i, r in enumerate(roots) for h, rel in digest(r)]


def test_shards_run_in_worker_processes_in_item_order():
    from worldforge.cluster import Local, Pool, current, use_cluster
    from worldforge.errors import RenderError, SpecError, SpecProblem

    with use_cluster(workers=2) as ex:
        assert isinstance(ex, Pool) and current() is ex and ex.workers == 2
        assert list(ex.map(_pid, [0])) == [os.getpid()] and ex._pool is None  # one shard: no process is started for it
        pids = set(ex.map(_pid, range(6)))
        assert os.getpid() not in pids and len(pids) == 2
        assert list(ex.map(_square, range(20), 3)) == [i * i + 3 for i in range(20)]  # item order, whoever finishes first
        with pytest.raises(RenderError, match="shard 4 failed"):
            list(ex.map(_fail_on_4, range(8)))
        with pytest.raises(SpecError) as err:  # an error with its own fields comes back whole
            list(ex.map(_spec_error, range(3)))
        assert err.value.problems == [SpecProblem("w.yaml", "counts.player", "-1", "give a count of 0 or more")]
        assert list(ex.map(_square, range(4), 0)) == [0, 1, 4, 9]  # the pool still answers
        assert set(ex.map(_pid, range(4))) == pids  # the same processes for the run's later stages
        assert list(ex.map(_threads, range(2))) == [("1", 1, 1)] * 2  # one thread for DuckDB and polars each
    assert isinstance(current(), Local) and ex._pool is None
    with use_cluster(workers=1) as one:
        assert isinstance(one, Local)


def test_a_worker_ends_with_its_parent(tmp_path):
    """A parent killed outright (SIGKILL, or SIGTERM's default) leaves no worker process behind
    holding a world open: each watches its parent and ends itself."""
    script = ("import os, sys, time\n"
              "from worldforge.cluster import use_cluster\n"
              "from tests.shard_fns import _pid\n"
              "with use_cluster(workers=2) as ex:\n"
              "    print(' '.join(map(str, sorted(set(ex.map(_pid, range(4)))))), flush=True)\n"
              "    time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=os.environ | {"PYTHONPATH": str(REPO)})
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    proc.kill()
    proc.wait()
    deadline = time.time() + 15
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(_alive(p) for p in pids)


def test_ctrl_c_stops_the_workers_at_once():
    """Ctrl-C while shards run: the command stops in seconds (it does not wait for shards that
    take minutes, such as a farm's worlds), and no worker is left."""
    import signal

    # (the child handles Ctrl-C as a terminal's command does: a process started with SIGINT ignored,
    # as this one can be after a library in the test session set it so, would pass the ignore on)
    script = ("import signal, time\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "from worldforge.cluster import use_cluster\n"
              "from tests.shard_fns import _pid\nfrom tests.test_workers import _sleep\n"
              "with use_cluster(workers=2) as ex:\n"
              "    print(' '.join(map(str, sorted(set(ex.map(_pid, range(4)))))), flush=True)\n"
              "    list(ex.map(_sleep, [60] * 4))\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=os.environ | {"PYTHONPATH": str(REPO)})
    pids = [int(p) for p in proc.stdout.readline().split()]
    time.sleep(1.0)
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.time() - t0 < 10 and "KeyboardInterrupt" in err
    deadline = time.time() + 10
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.2)
    assert len(pids) == 2 and not any(_alive(p) for p in pids)


def _sleep(seconds):
    time.sleep(seconds)
    return seconds


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def test_run_in_worker_processes_gives_the_same_bytes(tmp_path, monkeypatch):
    """`worldforge run` in two worker processes (the default on this machine) and in one: the
    same files, byte for byte; the render cut into shards and the rollout into chunks."""
    import json

    from typer.testing import CliRunner

    from worldforge.cli import app

    monkeypatch.setattr("worldforge.web.shards.MIN_ENTITIES", 40)  # several render shards (the workers read it too)
    spec = write_spec(tmp_path, "procs", counts=COUNTS, stages=STAGES)
    out = {}
    for n in (1, 2):
        res = CliRunner().invoke(app, ["run", str(spec), "-b", str(tmp_path / f"b{n}"), "-o", str(tmp_path / f"o{n}"),
                                       "--workers", str(n)])
        assert res.exit_code == 0, res.output
        out[n] = (tmp_path / f"b{n}", tmp_path / f"o{n}")
    a, b = _digests(*out[1]), _digests(*out[2])
    assert len(a) > 50 and a == b
    rep = json.loads((out[2][0] / "procs" / "web" / "render.json").read_text())["report"]
    assert rep["shards"] >= 3
    res = CliRunner().invoke(app, ["run", str(spec), "-b", str(tmp_path / "b3"), "-o", str(tmp_path / "o3"), "--workers", "0"])
    assert res.exit_code != 0 and "--workers" in res.output
    res = CliRunner().invoke(app, ["run", str(spec), "-b", str(tmp_path / "b3"), "-o", str(tmp_path / "o3"), "--workers", "100000"])
    assert res.exit_code == 1 and "at most" in res.output and not (tmp_path / "b3").exists()
    monkeypatch.setenv("WORLDFORGE_WORKERS", "two")
    res = CliRunner().invoke(app, ["run", str(spec), "-b", str(tmp_path / "b3"), "-o", str(tmp_path / "o3")])
    assert res.exit_code == 1 and "WORLDFORGE_WORKERS='two'" in res.output and "Traceback" not in res.output


def _spec_error(i):
    from worldforge.errors import SpecError, SpecProblem

    if i == 1:
        raise SpecError([SpecProblem("w.yaml", "counts.player", "-1", "give a count of 0 or more")])
    return i


def _threads(_):
    import polars as pl

    from worldforge.plumbing import WORKER_THREADS_ENV, duckdb_config

    time.sleep(0.2)
    return os.environ.get(WORKER_THREADS_ENV), duckdb_config().get("threads"), pl.thread_pool_size()
