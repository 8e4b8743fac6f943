"""Ray: the stages' shards (render shards, rollout chunks, export writers) and a farm's worlds
run as Ray tasks on a local 2-CPU cluster, and every output is the same as in one process."""

from __future__ import annotations

import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO, write_spec
from tests.shard_fns import _fail_on_4, _pid, _square

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


def test_an_address_that_is_not_ray_fails_in_seconds():
    """A port that accepts connections and stays silent ran for more than 300 s in Ray's retries;
    one that answers in another protocol too. Ray's head and client server speak gRPC (HTTP/2)."""
    import socket
    import threading
    import time

    from worldforge.cluster import ClusterError, _check_reachable

    with socket.socket() as silent, socket.socket() as http:
        for s_ in (silent, http):
            s_.bind(("127.0.0.1", 0))
            s_.listen(8)

        def answer():  # an HTTP/1.1 server's reply to anything
            conn, _ = http.accept()
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

        threading.Thread(target=answer, daemon=True).start()
        t0 = time.perf_counter()
        with pytest.raises(ClusterError, match="accepts connections but does not answer as a Ray cluster"):
            _check_reachable(f"127.0.0.1:{silent.getsockname()[1]}", timeout=1.0)
        with pytest.raises(ClusterError, match="is not a Ray cluster"):
            _check_reachable(f"127.0.0.1:{http.getsockname()[1]}", timeout=5.0)
        assert time.perf_counter() - t0 < 10


@contextmanager
def _one_process():
    """In this process, even while the module's cluster runs."""
    from worldforge import cluster

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cluster, "_current", cluster.Local())
        yield


@pytest.fixture(scope="module")
def one_process(tmp_path_factory, monkeypatch_module):
    from worldforge.run import run_pipeline

    tmp = tmp_path_factory.mktemp("one")
    spec = write_spec(tmp, "rayw", counts=COUNTS, stages=STAGES)
    with _one_process():
        r = run_pipeline(spec, tmp / "build", tmp / "out")
    return spec, r


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    mp.setattr("worldforge.web.shards.MIN_ENTITIES", 40)  # several render shards per type even in a small world
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
    # A failure while other shards are finishing: cancelling them raced their replies and Ray's
    # driver aborted the whole test process (exit 1, once in 300 such maps). 150 in a row, then
    # the cluster still answers.
    for _ in range(150):
        with pytest.raises(RenderError, match="shard 4 failed"):
            list(current().map(_fail_on_4, range(8)))
    assert list(current().map(_square, range(4), 0)) == [0, 1, 4, 9]


def test_workers_run_duckdb_and_polars_on_one_thread(cluster, tmp_path):
    """A Ray task holds one CPU: the job's runtime env caps its DuckDB connections and polars'
    pool at one thread (the driver keeps its own), and a stage's connection takes the cap."""
    import duckdb

    from worldforge.cluster import current

    db = tmp_path / "x.duckdb"
    duckdb.connect(str(db)).close()
    got = list(current().map(_threads, [str(db)] * 2))
    assert got == [("1", 1, 1)] * 2


def _threads(path):
    import os
    from pathlib import Path

    import polars as pl

    from worldforge.plumbing import WORKER_THREADS_ENV, connect_duckdb

    con = connect_duckdb(Path(path), "unused")
    try:
        n = con.execute("SELECT current_setting('threads')").fetchone()[0]
    finally:
        con.close()
    return os.environ.get(WORKER_THREADS_ENV), int(n), pl.thread_pool_size()


def test_a_worker_holds_one_jobs_state_at_a_time():
    """`worker_state` makes a job's state once, reuses it for the job's later shards, and closes
    it when the worker moves on to another job (a render's world view is not carried into the
    rollout)."""
    from worldforge.cluster import worker_state

    made, closed = [], []

    def make(name):
        def m():
            made.append(name)
            return {"name": name}
        return m

    close = closed.append
    a = worker_state(("render", "w1"), make("a"), close)
    assert worker_state(("render", "w1"), make("a2"), close) is a and made == ["a"] and not closed
    b = worker_state(("rollout", "w1"), make("b"), close)
    assert made == ["a", "b"] and closed == [a] and b == {"name": "b"}
    worker_state(("render", "w1"), make("c"), None)
    assert closed == [a, b] and made == ["a", "b", "c"]
    worker_state(("render", "w2"), make("d"), close)  # the state made without a close function is just dropped
    assert closed == [a, b] and made[-1] == "d"


def test_sharded_plan_is_the_serial_plan(one_process):
    """Shards planned one by one (each knowing only its own news URLs) give exactly the pages
    of pages.plan_pages, in order; a news URL taken by an earlier shard is caught."""
    from worldforge.web.pages import WorldView
    from worldforge.web.planning import plan_pages
    from worldforge.web.shards import LoggedSet, NewsURLs, plan_shards, shard_pages
    from worldforge.world.store import open_world

    _, r = one_process
    info = open_world(r.world)
    view = WorldView(info, info.world.spec.stages.render)
    try:
        serial = list(plan_pages(view))
        for per in (13, 1000):
            news, pages = NewsURLs(), []
            shards = plan_shards(view, per)
            for sh in shards:
                seen = LoggedSet()
                pages += shard_pages(view, sh, seen)
                assert news.check(seen.log)
            assert pages == serial and len(shards) > (40 if per == 13 else 10)
        assert any(p.kind == "news" for p in serial) and any(p.kind == "directory" for p in serial)
    finally:
        view.close()
    news = NewsURLs()
    assert news.check([("https://a/x", "https://a/x"), ("https://a/x", "https://a/x-2")])
    assert not news.check([("https://a/x", "https://a/x")])  # planned alone, it would have taken an earlier shard's URL
    assert news.check([("https://a/x", "https://a/x-3")]) and "https://a/x-3" in news.taken


# --------------------------------------------------------------------------- farms

FARM_COUNTS = {"country": 3, "person": 260, "company": 30, "university": 4, "researcher": 30, "award": 4, "publication": 30,
               "club": 8, "player": 60}


def _farm(tmp: Path, release: str, worlds: list[dict], name: str = "tiny") -> Path:
    import yaml

    spec = {"farm_version": 1, "name": name, "release": release, "seed": 3,
            "worlds": [{"packs": ["geography", "organisations", "academia", "sport"], "counts": FARM_COUNTS,
                        "stages": STAGES, **w} for w in worlds]}
    path = tmp / f"{name}-{release}.farm.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


TWO = [{"name": "tiny-a", "seed": 1, "split": "train"}, {"name": "tiny-b", "seed": 2, "locale": "en_GB", "split": "test"}]


@pytest.fixture(scope="module")
def farm_v1(tmp_path_factory):
    from worldforge.farm import run_farm

    tmp = tmp_path_factory.mktemp("farm")
    spec = _farm(tmp, "v1", TWO)
    with _one_process():
        r = run_farm(spec, tmp / "build", tmp / "out")
    return tmp, spec, r


def test_farm_merges_worlds_by_world_split(farm_v1):
    from worldforge.farm import FARM_MANIFEST

    tmp, _, r = farm_v1
    man = json.loads((r.path / FARM_MANIFEST).read_text())
    assert [w["name"] for w in man["worlds"]] == ["tiny-a", "tiny-b"]
    assert r.rows["rl"] == {"train": man["worlds"][0]["kept"], "test": man["worlds"][1]["kept"]} and all(r.rows["rl"].values())
    train = [json.loads(x) for x in (r.path / "jsonl" / "rl" / "train.jsonl").read_text().splitlines()]
    assert {x["extra_info"]["world"] for x in train} == {"tiny-a"}  # a world is in one split only
    assert [x["extra_info"]["index"] for x in train] == list(range(len(train)))
    assert len(man["task_hashes"]) == len(set(man["task_hashes"])) == sum(r.rows["rl"].values())
    card = (r.path / "README.md").read_text()
    assert "## Changelog" in card and "### v1" in card and "| tiny-b | test |" in card and "en_GB" in card


def test_farm_on_ray_gives_the_same_bytes(farm_v1, cluster, tmp_path):
    """`worldforge farm --ray --ray-cpus 2`: the worlds are Ray tasks; the release is the same bytes."""
    from typer.testing import CliRunner

    from worldforge.cli import app

    tmp, spec, local = farm_v1
    res = CliRunner().invoke(app, ["farm", str(spec), "-b", str(tmp_path / "build"), "-o", str(tmp_path / "out"),
                                   "--ray", "--ray-cpus", "2"])
    assert res.exit_code == 0, res.output
    assert "running on Ray (2 CPUs" in res.output and local.fingerprint in res.output
    assert digest(tmp_path / "out" / "tiny" / "v1") == digest(local.path)


def test_refresh_never_repeats_a_released_task(farm_v1):
    """v2 keeps world tiny-a (same seed: its tasks were released in v1) and adds tiny-c: only
    tiny-c's tasks are new; v2 is rebuilt to the same bytes (worlds up to date); v1 is kept."""
    from worldforge.farm import FARM_MANIFEST, run_farm

    tmp, _, v1 = farm_v1
    spec = _farm(tmp, "v2", [TWO[0], {"name": "tiny-c", "seed": 5, "split": "test"}])
    with _one_process():
        r = run_farm(spec, tmp / "build", tmp / "out")
        again = run_farm(spec, tmp / "build", tmp / "out")
    m1 = json.loads((v1.path / FARM_MANIFEST).read_text())
    m2 = json.loads((r.path / FARM_MANIFEST).read_text())
    assert r.previous == ["v1"] and again.fingerprint == r.fingerprint
    assert not set(m1["task_hashes"]) & set(m2["task_hashes"]) and not set(m1["gold_hashes"]) & set(m2["gold_hashes"])
    a = next(w for w in m2["worlds"] if w["name"] == "tiny-a")
    assert a["kept"] == 0 and a["dropped"] == {"released in v1": a["tasks"]}
    c = next(w for w in m2["worlds"] if w["name"] == "tiny-c")
    assert c["kept"] > 0 and r.rows["rl"] == {"test": c["kept"]}
    card = (r.path / "README.md").read_text()
    assert card.index("### v2") < card.index("### v1") and f"{a['tasks']:,} released in v1" in card


def test_farm_mixes_an_english_and_a_chinese_world(tmp_path):
    """A farm world may set `language: zh` (with a zh_CN locale): one release holds both
    languages, each task posed in its world's language, and the card says so in both."""
    from worldforge.farm import FARM_MANIFEST, run_farm

    spec = _farm(tmp_path, "v1", [{"name": "two-en", "seed": 1, "split": "train"},
                                  {"name": "two-zh", "seed": 2, "locale": "zh_CN", "language": "zh", "split": "train"}], name="two")
    with _one_process():
        r = run_farm(spec, tmp_path / "build", tmp_path / "out")
    man = json.loads((r.path / FARM_MANIFEST).read_text())
    assert {w["name"]: w["language"] for w in man["worlds"]} == {"two-en": "en", "two-zh": "zh"}
    assert all(w["kept"] > 0 for w in man["worlds"])
    rows = [json.loads(x) for x in (r.path / "jsonl" / "rl" / "train.jsonl").read_text().splitlines()]
    han = re.compile(r"[\u3400-\u9fff]")
    by_world = {w: [x["prompt"][-1]["content"] for x in rows if x["extra_info"]["world"] == w] for w in ("two-en", "two-zh")}
    assert by_world["two-zh"] and all(han.search(q) for q in by_world["two-zh"])
    assert by_world["two-en"] and not any(han.search(q) for q in by_world["two-en"])
    card = (r.path / "README.md").read_text()
    assert "- en\n- zh" in card and "## 中文说明" in card and "| two-zh | train |" in card


def test_farm_spec_errors(tmp_path):
    from typer.testing import CliRunner

    from worldforge.cli import app

    bad = tmp_path / "bad.farm.yaml"
    bad.write_text("farm_version: 1\nname: Bad Farm\nrelease: v1\nsplits: {train: 0.5}\nworlds:\n"
                   "  - {spec: nowhere.yaml, name: w}\n  - {packs: [geography], name: w, colour: red}\n  - {seed: 3}\n")
    res = CliRunner().invoke(app, ["farm", str(bad), "-b", str(tmp_path / "b")])
    assert res.exit_code == 2, res.output
    for text in ("name: String should match", "add up to 1", "worlds.1.colour: unknown field"):
        assert text in res.output
    for fractions in ("{train: .nan, validation: 0.5, test: 0.5}", "{train: .inf, validation: -.inf, test: 1}"):  # NaN passed
        bad.write_text(f"farm_version: 1\nname: nan\nrelease: v1\nsplits: {fractions}\nworlds:\n  - {{packs: [geography]}}\n")
        res = CliRunner().invoke(app, ["farm", str(bad), "-b", str(tmp_path / "b")])
        assert res.exit_code == 2 and "split fractions must be" in res.output, res.output
    bad.write_text("farm_version: 1\nname: bad\nrelease: v1\nworlds:\n  - {spec: nowhere.yaml, name: w}\n"
                   "  - {packs: [geography], name: w}\n  - {seed: 3}\n  - {packs: [geograpy], counts: {country: 2}}\n")
    res = CliRunner().invoke(app, ["farm", str(bad), "-b", str(tmp_path / "b")])
    assert res.exit_code == 2, res.output
    for text in ("worlds.0.spec: no such file", "worlds.1.name: two worlds share this name", "worlds.2: give a world spec"):
        assert text in res.output
    # each world's own spec, with its overrides, is validated like any world spec, before anything is written
    (tmp_path / "broken.yaml").write_text("name: [unclosed\n")
    bad.write_text("farm_version: 1\nname: bad\nrelease: v1\nworlds:\n  - {spec: broken.yaml}\n"
                   "  - {packs: [geograpy], counts: {country: 2}}\n  - {packs: [geography], counts: {cty: 2}}\n")
    res = CliRunner().invoke(app, ["farm", str(bad), "-b", str(tmp_path / "b")])
    assert res.exit_code == 2, res.output
    for text in ("worlds.0.spec", "invalid YAML", "worlds.1 (bad-1): packs.0: unknown pack", "worlds.2 (bad-2): counts.cty: unknown type"):
        assert text in res.output
    assert not (tmp_path / "b" / "bad").exists()


def test_farm_says_how_far_its_spec_checks_are(tmp_path):
    """Every world's spec is checked before anything is built: the farm reports each one as it
    goes (300 worlds printed nothing for 394 s before their error list)."""
    from worldforge.farm import load_farm, resolve_worlds

    spec = tmp_path / "f.farm.yaml"
    spec.write_text("farm_version: 1\nname: f\nrelease: v1\nworlds:\n"
                    + "".join(f"  - {{packs: [geography], counts: {{country: {n}}}}}\n" for n in (1, 2, 3)))
    seen = []
    plans = resolve_worlds(load_farm(spec), spec, tmp_path / "specs", lambda done, total: seen.append((done, total)))
    assert len(plans) == 3 and seen == [(1, 3), (2, 3), (3, 3)]
