"""Hostile input never crashes the search engine, the environment or a policy; damaged state
is detected, reported in one line and rebuilt; two writers never share a world; Ctrl-C exits
130 with a message. One test (or fuzz test) per class of failure."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import worldforge.world
from tests.conftest import RUN_STAGES, write_spec
from worldforge.cli import app
from worldforge.errors import OutputLocationError, PlanError, SearchInputError
from worldforge.plumbing import BuildLock, check_output_dir, file_digest, held_interrupts, watched_interrupts
from worldforge.rollout import Environment, ToolCall, load_tasks
from worldforge.web.search import MAX_OFFSET, SearchEngine

runner = CliRunner()
CLI = [sys.executable, "-m", "worldforge"]
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def world(small_run):
    return small_run[1]


@pytest.fixture(scope="module")
def engine(world):
    e = SearchEngine.for_world(world)
    yield e
    e.close()


@pytest.fixture(scope="module")
def env(world):
    e = Environment.for_world(world)
    yield e
    e.close()


# --------------------------------------------------------------------------- search and tools


HOSTILE_QUERIES = [
    "(" * 20000 + "x" + ")" * 20000,  # segfaulted tantivy's query parser
    "(" * 300 + "company",
    "title:*", "body:", "url:[a TO z]", "*", '"', '"""', "'", "x^1e308", "x~99", "-", "--", "NOT", "AND OR", "+ - ! ( ) { } [ ] ^ ~ : \\",
    "a" * 499, "word " * 31, "é" * 200, "\x00\x01", "北京 東京", "🙂 emoji",
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_queries_give_results_or_the_tools_error(engine, query):
    try:
        text = engine.call("web_search", {"query": query})
    except SearchInputError as exc:
        assert str(exc)  # a message, not a crash
    else:
        assert text.startswith(("Search results for", "No results found"))


@pytest.mark.parametrize("offset", [10**9, 2**63 - 1, 2**64, -1, MAX_OFFSET + 1, 1e300, float("inf"), float("nan"), "abc", True, [1], {}])
def test_out_of_range_offsets_are_refused(engine, offset):
    with pytest.raises(SearchInputError, match="offset"):
        engine.call("web_search", {"query": "company", "offset": offset})


def test_offsets_up_to_the_limit_work(engine):
    assert engine.call("web_search", {"query": "company", "offset": MAX_OFFSET})
    assert engine.call("web_search", {"query": "company", "offset": 20.0}).startswith(("Search results", "No results"))
    res = runner.invoke(app, ["search", str(engine_world(engine)), "company", "--offset", str(2**64)])
    assert res.exit_code == 1 and "offset must be a whole number" in res.output and "Traceback" not in res.output


def engine_world(engine) -> Path:
    return Path(engine.pages.execute("PRAGMA database_list").fetchall()[0][2]).parent.parent


@pytest.mark.parametrize("url", ["https://[::1", "http://[", "https://" + "a" * 5000, "https://x\ny", "ftp://x/y", "https://", "/wiki/x",
                                 "https://ex ample.org", None, 5, ["https://x"]])
def test_malformed_urls_are_refused(engine, url):
    with pytest.raises(SearchInputError):
        engine.call("web_extractor", {"url": url})


def test_cli_open_and_search_never_trace(world):
    for args in (["open", str(world), "https://[::1"], ["search", str(world), "title:*"], ["search", str(world), "(" * 20000],
                 ["open", str(world), "https://ismerpedia.org/wiki/\udcff"], ["search", str(world), "a\udcffb"]):  # a byte 0xff in argv
        res = runner.invoke(app, args)
        assert res.exit_code in (0, 1) and "Traceback" not in res.output, res.output
        assert res.exception is None or isinstance(res.exception, SystemExit), res.exception


def test_too_many_or_too_long_queries(engine):
    with pytest.raises(SearchInputError, match="at most"):
        engine.call("web_search", {"queries": ["a"] * 11})
    with pytest.raises(SearchInputError, match="too long"):
        engine.call("web_search", {"query": "a " * 400})


def test_non_dict_arguments_are_a_clear_error(env):
    for args in (None, [], "q", 3):
        with pytest.raises(SearchInputError, match="JSON object"):
            env.execute("k", 0, "web_search", args)
        with pytest.raises(SearchInputError, match="JSON object"):
            env.engine.call("web_extractor", args)


def test_episode_answers_every_bad_call_and_keeps_going(env, world):
    task = load_tasks(world)[0]
    ep = env.episode(task, sample=7)
    bad = [ToolCall("web_search", None), ToolCall("web_search", {"query": "company"}), ToolCall(None, "{}"),
           ToolCall("web_search", 42), ToolCall("web_search", "[1, 2]"), ToolCall("web_search", '{"query": "x", "offset": 1e300}'),
           ToolCall("web_search", '{"offset": Infinity, "query": "x"}'), ToolCall("web_extractor", '{"url": "https://[::1"}'),
           ToolCall("web_search", "[" * 100000), ToolCall("nonesuch", "{}"), ToolCall("final_answer", '{"answer": 5}')]
    out = ep.act("trying things", bad)
    assert len(out) == len(bad) and not ep.done
    assert all(m["content"].startswith("Error") for i, m in enumerate(out) if i != 1)
    assert out[1]["content"].startswith(("Search results", "No results"))  # a dict of arguments is accepted
    assert [s.error for s in ep.steps][:3] == ["malformed-arguments", None, "malformed-call"]
    assert json.loads(ep.messages[-len(bad) - 1]["tool_calls"][1]["function"]["arguments"]) == {"query": "company"}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=60),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=12)


@FUZZ
@given(name=st.sampled_from(["web_search", "web_extractor", "final_answer", "", "x"]),
       args=st.dictionaries(st.sampled_from(["query", "queries", "offset", "url", "answer", "z"]), JSON, max_size=4)
       | JSON | st.text(max_size=200))
def test_fuzz_tool_calls_never_raise(env, world, name, args):
    """Any name and any arguments (JSON values, dicts, raw text): the episode answers, never raises."""
    task = load_tasks(world)[0]
    ep = env.episode(task, sample=1)
    raw = args if isinstance(args, str) else json.dumps(args, allow_nan=True)
    out = ep.act("", [ToolCall(name, raw), ToolCall(name, args if isinstance(args, dict) else raw)])
    assert ep.done or len(out) == 2


@FUZZ
@given(query=st.text(alphabet=st.characters(codec="utf-8"), max_size=600) | st.text(alphabet='()[]{}"*:^~+-!\\/ abcOR AND', max_size=600),
       offset=st.integers(min_value=-5, max_value=2**70) | st.floats() | st.text(max_size=5))
def test_fuzz_search_never_crashes(engine, query, offset):
    try:
        text = engine.call("web_search", {"query": query, "offset": offset})
    except SearchInputError:
        return
    assert isinstance(text, str)


# --------------------------------------------------------------------------- damaged state


def _copy_run(small_run, tmp_path) -> tuple[Path, Path, Path]:
    spec, world, _ = small_run
    build = tmp_path / "build"
    shutil.copytree(world.parent, build)
    return spec, build, build / world.name


def _run(spec, build, out, *extra):
    return runner.invoke(app, ["run", str(spec), "--build-dir", str(build), "--out", str(out), *extra])


def _status(output: str, stage: str) -> str:
    return output.split(f"│ {stage}", 1)[1].split("│", 2)[1].strip()


def test_run_rebuilds_damaged_stages_and_only_what_depends_on_them(small_run, tmp_path):
    spec, build, world = _copy_run(small_run, tmp_path)
    out = tmp_path / "exports"
    gold = sorted((world / "tasks" / "gold").iterdir())[0]
    gold.write_bytes(gold.read_bytes()[:10])  # a truncated gold CSV
    res = _run(spec, build, out)
    assert res.exit_code == 0, res.output
    assert "tasks    will run: damaged outputs: tasks/gold/" in res.output
    assert [_status(res.output, s) for s in ("plan", "render", "tasks", "rollout")] == ["skipped", "skipped", "ran", "skipped"]
    assert (world / "tasks" / "gold" / gold.name).read_bytes() != gold.read_bytes()[:10]
    assert sorted(p.name for p in (out / "mini" / "v1").iterdir()) == sorted(p.name for p in small_run[2].iterdir())

    shutil.rmtree(world / "web" / "index")  # a deleted index
    res = _run(spec, build, out)
    assert res.exit_code == 0 and "render   will run: damaged outputs: web/index/" in res.output, res.output
    assert _status(res.output, "render") == "ran" and _status(res.output, "tasks") == "skipped"

    db = world / "world.duckdb"
    os.truncate(db, db.stat().st_size // 2)  # a truncated world database
    res = _run(spec, build, out, "--dry-run")
    assert res.exit_code == 0 and "plan     will run: damaged outputs: world.duckdb has" in res.output
    assert "rollout  will run: the world is planned again" in res.output
    res = runner.invoke(app, ["check", str(world)])
    assert res.exit_code == 1 and "world.duckdb is damaged" in res.output and "violated" not in res.output


@pytest.mark.parametrize("damage", ["database cut", "page file cut", "provenance file deleted", "page folder deleted",
                                    "page file footer damaged"])
def test_damaged_pages_are_reported(small_run, tmp_path, damage):
    """The pages database and every page file the render wrote are checked on open: a cut-off,
    missing or unreadable one names itself and how to rebuild."""
    _, _, world = _copy_run(small_run, tmp_path)
    web = world / "web"
    page_file = sorted((web / "pages").glob("*.pages.parquet"))[-1]
    facts_file = sorted((web / "pages").glob("*.facts.parquet"))[0]
    if damage == "database cut":
        victim = web / "pages.duckdb"
        os.truncate(victim, victim.stat().st_size - 4096)
    elif damage == "page file cut":
        victim = page_file
        os.truncate(victim, victim.stat().st_size // 2)
    elif damage == "page file footer damaged":  # same size: only reading it finds out
        victim = page_file
        _flip(victim, victim.stat().st_size - 300, victim.stat().st_size - 8, 1)
    elif damage == "provenance file deleted":
        victim = facts_file
        victim.unlink()
    else:
        victim = web / "pages"
        shutil.rmtree(victim)
    name = victim.name if damage != "page folder deleted" else sorted(p for p in json.loads(
        (web / "render.json").read_text())["files"] if p.startswith("pages/"))[0].split("/")[1]
    res = runner.invoke(app, ["search", str(world), "company"])
    assert res.exit_code == 1 and f"{name} is damaged" in res.output and "--force" in res.output, res.output


def _flip(path: Path, start: int, stop: int, step: int) -> None:
    data = bytearray(path.read_bytes())
    for i in range(start, stop, step):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def test_page_file_damaged_inside_is_reported(small_run, tmp_path):
    """A page file whose footer reads but whose data does not (same size, bytes changed inside)
    stops the stage that reads it with one line naming the file, not a traceback; `run` finds
    it by its recorded digest and renders again."""
    spec, build, world = _copy_run(small_run, tmp_path)
    victim = max((world / "web" / "pages").glob("*.pages.parquet"), key=lambda f: f.stat().st_size)
    size = victim.stat().st_size
    _flip(victim, size // 20, size * 6 // 10, 97)
    res = runner.invoke(app, ["tasks", str(world), "--force"])
    assert res.exit_code == 1 and "is damaged" in res.output and victim.name in res.output, res.output
    assert "Traceback" not in res.output
    res = _run(spec, build, tmp_path / "out", "--dry-run")
    assert res.exit_code == 0 and "render   will run: damaged outputs: web/pages/" in res.output, res.output


@pytest.mark.parametrize("rel, needle", [
    ("run.json", "run.json is damaged"), ("tasks/tasks.jsonl", "tasks.jsonl is damaged"),
    ("rollout/trajectories.jsonl", "trajectories.jsonl is damaged"), ("world.json", "world.json is damaged"),
    ("world.duckdb", "world.duckdb is damaged"),
])
def test_truncated_state_files_give_one_line_errors(small_run, tmp_path, rel, needle):
    spec, build, world = _copy_run(small_run, tmp_path)
    f = world / rel
    f.write_bytes(f.read_bytes()[: max(1, f.stat().st_size // 2)] if rel != "world.duckdb" else b"")
    command = {"run.json": ["run", str(spec), "--build-dir", str(build), "--out", str(tmp_path / "x")],
               "tasks/tasks.jsonl": ["rollout", str(world), "--force"], "rollout/trajectories.jsonl": ["export", str(world), "-o", str(tmp_path / "x")],
               "world.json": ["inspect", str(world)], "world.duckdb": ["check", str(world)]}[rel]
    res = runner.invoke(app, command)
    assert res.exit_code == 1, res.output
    assert needle in res.output and "Traceback" not in res.output
    assert len([x for x in res.output.splitlines() if x.startswith("error:")]) == 1


def test_damaged_export_manifest_is_named(small_run, tmp_path):
    spec, build, _ = _copy_run(small_run, tmp_path)
    out = tmp_path / "exports"
    shutil.copytree(small_run[2], out / "mini" / "v1")
    man = out / "mini" / "v1" / "manifest.json"
    man.write_text(man.read_text()[:100])
    res = _run(spec, build, out)
    assert res.exit_code == 1 and "manifest.json is damaged" in res.output


def test_file_digest_catches_truncation_of_large_files(tmp_path):
    f = tmp_path / "big.bin"
    f.write_bytes(os.urandom(40 << 20))
    d = file_digest(f)
    assert d["sha256"].startswith("sampled:")
    with open(f, "r+b") as fh:
        fh.seek((40 << 20) - 10)
        fh.write(b"x" * 10)
    assert file_digest(f) != d


# --------------------------------------------------------------------------- locks, folders, paths


def test_a_second_writer_exits_at_once_naming_the_holder(small_run, tmp_path):
    spec, build, world = _copy_run(small_run, tmp_path)
    with BuildLock(world):
        for args in (["plan", str(spec), "-b", str(build), "--force"], ["render", str(world), "--force"],
                     ["run", str(spec), "-b", str(build), "-o", str(tmp_path / "x")]):
            t0 = time.perf_counter()
            res = subprocess.run([*CLI, *args], capture_output=True, text=True)
            assert res.returncode == 1 and f"pid {os.getpid()}" in res.stderr, res.stderr
            assert time.perf_counter() - t0 < 20
    res = runner.invoke(app, ["run", str(spec), "-b", str(build), "-o", str(tmp_path / "x"), "--dry-run"])
    assert res.exit_code == 0  # released


def test_output_folders_are_checked_before_any_work(small_run, tmp_path, monkeypatch):
    spec = small_run[0]
    blocker = tmp_path / "build"
    blocker.write_text("not a folder")
    res = runner.invoke(app, ["run", str(spec), "--build-dir", str(blocker), "--out", str(tmp_path / "x")])
    assert res.exit_code == 1 and "is a file, but a folder is needed" in res.output
    res = runner.invoke(app, ["plan", str(spec), "--build-dir", str(blocker / "sub")])
    assert res.exit_code == 1 and "is a file" in res.output
    import shutil as sh

    monkeypatch.setattr(sh, "disk_usage", lambda p: sh._ntuple_diskusage(10 << 30, 10 << 30, 1 << 20))
    with pytest.raises(OutputLocationError, match="MiB free"):
        check_output_dir(tmp_path / "out", "dataset folder")


def test_paths_with_quotes_and_brackets(tmp_path):
    odd = tmp_path / "it's [a] \"path\" {x}"
    odd.mkdir()
    spec = write_spec(odd, name="odd", counts={"country": 2, "person": 40, "company": 8, "university": 2, "researcher": 10,
                                                "award": 2, "publication": 10, "club": 4, "player": 20},
                      stages={"tasks": {"table": 2, "multihop": 2, "rows": {"min": 1, "max": 60}}})
    res = _run(spec, odd / "b[1]'s", odd / "e'x[2]")
    assert res.exit_code == 0, res.output
    assert (odd / "e'x[2]" / "odd" / "v1" / "manifest.json").is_file()


@pytest.fixture
def interruptible():
    """Ctrl-C handled as Python does by default for the test's duration. A job started in the
    background by a non-interactive shell (`cmd &`, as CI may be) has SIGINT ignored, and so
    would the commands the test starts: an ignored signal stays ignored across exec."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_exits_130_with_the_message_at_any_point(tmp_path, interruptible):
    spec = write_spec(tmp_path, name="sig", stages=RUN_STAGES)
    # Dense while the libraries load (the first second or so): an interrupt inside a native
    # module's initialisation or inside an `exec` (dataclasses) is the hard case.
    for delay in (0.05, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5, 3.0, 5.0, 8.0):
        shutil.rmtree(tmp_path / "b", ignore_errors=True)
        p = subprocess.Popen([*CLI, "run", str(spec), "-b", str(tmp_path / "b"), "-o", str(tmp_path / "e")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        if p.poll() == 0:
            break  # finished before the signal
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=300)
        if delay < 0.5 and "/worldforge/" not in err:
            continue  # the interpreter itself was still starting (site packages): no worldforge code had run
        assert p.returncode == 130 and "Traceback" not in err, (delay, err[-2000:])
        assert "interrupted; nothing was marked complete" in err


def test_held_interrupts_raise_once_the_block_ends(interruptible):
    handler = signal.getsignal(signal.SIGINT)
    reached = False
    with pytest.raises(KeyboardInterrupt):
        with held_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler has run by now
            reached = True
    assert reached and signal.getsignal(signal.SIGINT) is handler
    with held_interrupts():  # no interrupt: nothing raised
        pass


def test_a_process_that_ignores_ctrl_c_keeps_ignoring_it():
    # A shell's background job starts with SIGINT ignored: the command line does not take it back.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with held_interrupts(), watched_interrupts() as seen:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        assert not seen() and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_interrupt_a_library_reports_as_its_own_error_exits_130(tmp_path, monkeypatch, interruptible):
    # DuckDB reports a KeyboardInterrupt raised while it reads a Python stream as an "Invalid Input
    # Error"; the planner turns DuckDB errors into a PlanError. Ctrl-C must still read as Ctrl-C.
    import duckdb
    import pyarrow as pa

    import worldforge.world.planner as planner

    def interrupted_scan(*args, **kwargs):
        def batches():
            yield pa.record_batch([pa.array([1])], names=["x"])
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            yield pa.record_batch([pa.array([2])], names=["x"])

        con = duckdb.connect()
        con.register("_src", pa.RecordBatchReader.from_batches(pa.schema([("x", pa.int64())]), batches()))
        try:
            con.execute("SELECT sum(x) FROM _src").fetchall()
        except duckdb.Error as exc:
            raise PlanError(f"the derived SQL failed: {exc}") from None

    monkeypatch.setattr(planner, "plan_world", interrupted_scan)
    monkeypatch.setattr(worldforge.world, "plan_world", interrupted_scan)  # (the CLI takes it from the package's face)
    handler = signal.getsignal(signal.SIGINT)
    res = CliRunner().invoke(app, ["plan", str(write_spec(tmp_path, name="lib")), "-b", str(tmp_path / "b")])
    assert res.exit_code == 130 and "interrupted; nothing was marked complete" in res.output, res.output
    assert "derived SQL" not in res.output and signal.getsignal(signal.SIGINT) is handler


def test_an_interrupt_a_library_swallows_stops_the_command_at_its_next_step(tmp_path, monkeypatch, interruptible):
    import worldforge.world.planner as planner

    steps = []

    def swallowing_plan(world, build_dir, force=False, on_step=None):
        try:  # C code that clears any error while it probes for an optional module
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        except KeyboardInterrupt:
            pass
        for desc in ("entities", "relations"):
            on_step(desc)
            steps.append(desc)
        raise AssertionError("the plan went on after Ctrl-C")

    monkeypatch.setattr(planner, "plan_world", swallowing_plan)
    monkeypatch.setattr(worldforge.world, "plan_world", swallowing_plan)
    res = CliRunner().invoke(app, ["plan", str(write_spec(tmp_path, name="sw")), "-b", str(tmp_path / "b")])
    assert res.exit_code == 130 and "interrupted; nothing was marked complete" in res.output, res.output
    assert steps == []


def test_an_interrupt_caught_inside_exec_still_exits_130(tmp_path):
    # CPython 3.11 marks a KeyboardInterrupt that passes through `exec` of a string as unhandled
    # even once caught; `python -m` then kills itself with SIGINT after `sys.exit(130)`.
    caught_in_exec = ("import sys\n\n\ndef interrupted():\n    try:\n        exec('raise KeyboardInterrupt')\n"
                      "    except KeyboardInterrupt:\n        sys.stderr.write('interrupted\\n')\n        sys.exit(130)\n")
    (tmp_path / "bare_exit.py").write_text(caught_in_exec + "\n\ninterrupted()\n")
    (tmp_path / "wf_exit.py").write_text(caught_in_exec + "\n\nimport worldforge.cli\n\nworldforge.cli.main = interrupted\n"
                                         "from worldforge.__main__ import main\n\nmain()\n")
    res = subprocess.run([sys.executable, "-m", "wf_exit"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 130 and res.stderr == "interrupted\n", (res.returncode, res.stderr)
    if sys.version_info[:2] == (3, 11):  # the interpreter's own behaviour, which the entry point corrects
        bare = subprocess.run([sys.executable, "-m", "bare_exit"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert bare.returncode == -signal.SIGINT


# --------------------------------------------------------------------------- edits after a run


def test_edits_name_the_stale_stages_and_a_refused_export_fails_first(small_run, tmp_path, monkeypatch):
    spec, build, world = _copy_run(small_run, tmp_path)
    import yaml

    raw = yaml.safe_load(spec.read_text())
    raw["stages"]["render"] = {"max_list_items": 12}
    edited = tmp_path / "mini.yaml"
    edited.write_text(yaml.safe_dump(raw))
    res = _run(edited, build, tmp_path / "x", "--dry-run")
    assert res.exit_code == 0
    assert "render   will run: inputs changed: stages.render.max_list_items: 8 -> 12" in res.output
    assert "plan     up to date" in res.output and "tasks    may run" in res.output

    # the same spec, but an edited pack (found first on $WORLDFORGE_SCHEMAS)
    from worldforge.world.spec import SCHEMAS_DIR

    packs = tmp_path / "packs"
    packs.mkdir()
    text = (SCHEMAS_DIR / "sport.yaml").read_text()
    (packs / "sport.yaml").write_text(text.replace("description:", "description: Edited.", 1))
    monkeypatch.setenv("WORLDFORGE_SCHEMAS", str(packs))
    res = _run(spec, build, tmp_path / "x", "--dry-run")
    assert "plan     will run: inputs changed: pack sport:" in res.output, res.output

    out = tmp_path / "exports"
    shutil.copytree(small_run[2], out / "mini" / "v1")
    planned = (world / "world.json").stat().st_mtime_ns
    t0 = time.perf_counter()
    res = _run(spec, build, out)
    assert res.exit_code == 1 and "different packs" in res.output and "spec" not in res.output.split("different", 1)[1]
    assert time.perf_counter() - t0 < 15 and (world / "world.json").stat().st_mtime_ns == planned  # refused before any work


def test_a_parquet_writer_broken_by_an_interrupt_prints_nothing_at_exit(tmp_path):
    """A render shard's writer that an interrupt broke mid-write fails to close when the shard is
    abandoned; its temporary file goes and its `__del__` does not try again (which printed a
    traceback after 'interrupted; ...', caught by the Ctrl-C test now and then)."""
    import subprocess
    import sys

    code = f"""
import pyarrow as pa
from worldforge.web.stage import _ParquetSink
sink = _ParquetSink(__import__("pathlib").Path({str(tmp_path / "x.parquet")!r}), pa.schema([("a", pa.int64())]))
sink.write(pa.table({{"a": [1, 2]}}))
inner = sink.writer.writer
class Broken:
    def close(self):
        raise KeyboardInterrupt
    def __getattr__(self, name):
        return getattr(inner, name)
sink.writer.writer = Broken()
try:
    sink.abandon()
except KeyboardInterrupt:
    pass
assert not sink.tmp.exists()
del sink
import gc; gc.collect()
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
