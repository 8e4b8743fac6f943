from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent

# verl cannot be pip-installed beside vLLM's CPU build (it would replace transformers), so CI
# installs it and the few packages its reward and tool code import, without dependencies,
# into .verl-pkgs/ (see .ci/run). Appended, so the venv's own packages always win.
if (REPO / ".verl-pkgs").is_dir():
    import sys

    sys.path.append(str(REPO / ".verl-pkgs"))
DEMO = REPO / "worlds" / "demo.yaml"

# The command line runs a stage's shards in one worker process per core; the tests run them in
# the test's own process (tests/test_workers.py runs the processes, and checks they give the
# same bytes), so a test's monkeypatches reach every shard and no test pays for starting them.
import os  # noqa: E402

os.environ.setdefault("WORLDFORGE_WORKERS", "1")

SMALL_COUNTS = {
    "country": 4, "person": 300, "company": 60, "university": 8, "researcher": 80,
    "award": 8, "publication": 80, "club": 16, "player": 120,
}


def cut_lists(md: str, lang: str = "en") -> list[tuple[int | None, int, str]]:
    """The sentences where an article says a list is cut short ("Only 8 of the 14 players appear
    here (see all 14)"), read with the writer's own phrase bank: (shown or None, total, URL)."""
    import re

    from worldforge.web.grammar import BANKS

    out = []
    for tpl in BANKS[lang]["more_list"]:
        rx = re.escape(tpl)
        for field, pat in (("count", r"(?P<count>[\d,]+)"), ("shown", r"(?P<shown>\d+)"), ("what", r"[^.\[\]()]+?"),
                           ("url", r"(?P<url>https://[^)\s]+)")):
            rx = rx.replace(re.escape("{" + field + "}"), pat, 1).replace(re.escape("{" + field + "}"), f"(?P={field})"
                                                                           if field in ("count", "shown") else pat)
        for m in re.finditer(rx, md):
            d = m.groupdict()
            out.append((int(d["shown"]) if d.get("shown") else None, int(d["count"].replace(",", "")), d["url"]))
    return out


@contextmanager
def served(app):
    """A real uvicorn server for `app` in a background thread, on a free port: its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)


def write_spec(tmp: Path, name: str = "small", seed: int = 11, counts: dict | None = None, **extra) -> Path:
    """A small world over all four shipped packs, written to `tmp/<name>.yaml`."""
    spec = {
        "name": name, "seed": seed, "as_of": "2025-06-30", "time_span": {"start": "1850-01-01"},
        "packs": ["geography", "organisations", "academia", "sport"],
        "counts": dict(SMALL_COUNTS if counts is None else counts),
    }
    spec.update(extra)
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def demo_world(tmp_path_factory):
    """The shipped demo world, planned once per test session."""
    from worldforge.world.planner import plan_world
    from worldforge.world.validate import load_world

    build = tmp_path_factory.mktemp("build")
    return plan_world(load_world(DEMO), build)


def copy_world(info, dest: Path) -> Path:
    """A private copy of a planned world (without its rendered web), for tests that write to it."""
    import shutil

    shutil.copytree(info.path, dest, ignore=shutil.ignore_patterns("web", ".web.*"))
    return dest


@pytest.fixture(scope="session")
def demo_web(demo_world, tmp_path_factory):
    """The demo world rendered once with the template backend: (world path, report)."""
    from worldforge.web import render_world

    path = copy_world(demo_world, tmp_path_factory.mktemp("render") / "demo")
    return path, render_world(path)


@pytest.fixture(scope="session")
def demo_tasks(demo_web):
    """The demo world's default task set: 200 tables and 100 multi-hop questions."""
    from worldforge.tasks import generate_tasks, read_tasks

    world, _ = demo_web
    report = generate_tasks(world, force=True)
    return world, report, read_tasks(world)


def _engine_opts():
    from worldforge.world.options import RenderOptions, SamplingSpec

    return RenderOptions(backend="vllm", max_model_len=4096, dtype="float32", kv_cache_gib=0.25, batch_size=48,
                         retries=1, sampling=SamplingSpec(max_tokens=24))


ENGINE_OPTS = _engine_opts()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    from tests.tiny_model import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny", seed=0)


@pytest.fixture(scope="session")
def engine(tiny_model):
    """One real vLLM engine (CPU build, tiny model) shared by every test that needs one."""
    pytest.importorskip("vllm")
    from worldforge.web.llm import close_llm, load_llm

    llm = load_llm(ENGINE_OPTS, str(tiny_model))
    yield llm
    close_llm(llm)  # shut the engine down while pytest's streams are still open


RUN_STAGES = {"tasks": {"table": 14, "multihop": 8}, "rollout": {"chunk_tasks": 3}, "export": {"shard_rows": 8}}


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """A small world run end to end by `run_pipeline`: (spec, world path, dataset path)."""
    from worldforge.run import run_pipeline

    tmp = tmp_path_factory.mktemp("run")
    # One pack from a file whose name is not its `pack:` name, as an author's own pack may be.
    pack = tmp / "my_research.yaml"
    pack.write_text((REPO / "schemas" / "academia.yaml").read_text())
    spec = write_spec(tmp, name="mini", stages=RUN_STAGES, packs=["geography", "organisations", str(pack), "sport"])
    report = run_pipeline(spec, tmp / "build", tmp / "exports")
    return spec, report.world, report.dataset
