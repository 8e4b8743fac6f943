"""The CLI: each command works on the demo and maps bad input to a clear message and exit code."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.conftest import DEMO, write_spec
from worldforge.cli import app

runner = CliRunner()


def test_validate_ok_and_bad(tmp_path):
    r = runner.invoke(app, ["validate", str(DEMO)])
    assert r.exit_code == 0, r.output
    assert "valid" in r.output and "invariants" in r.output
    bad = write_spec(tmp_path, counts={"country": 3, "persn": 1})
    r = runner.invoke(app, ["validate", str(bad)])
    assert r.exit_code == 2
    assert "persn" in r.output and "did you mean" in r.output and "Traceback" not in r.output


def test_plan_check_inspect(tmp_path):
    spec = write_spec(tmp_path)
    r = runner.invoke(app, ["plan", str(spec), "--build-dir", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "all invariants hold" in r.output
    r = runner.invoke(app, ["plan", str(spec), "--build-dir", str(tmp_path / "b")])
    assert r.exit_code == 1 and "--force" in r.output
    world = tmp_path / "b" / "small"
    r = runner.invoke(app, ["check", str(world)])
    assert r.exit_code == 0 and "invariants hold" in r.output
    r = runner.invoke(app, ["inspect", str(world), "-n", "1", "-t", "company"])
    assert r.exit_code == 0, r.output
    assert "degree statistics" in r.output and "founded_by" in r.output and "company company_" in r.output
    r = runner.invoke(app, ["inspect", str(world), "-t", "spaceship"])
    assert r.exit_code == 1 and "unknown type" in r.output


def test_check_reports_violations_with_exit_1(tmp_path):
    import duckdb

    spec = write_spec(tmp_path)
    runner.invoke(app, ["plan", str(spec), "--build-dir", str(tmp_path / "b")])
    con = duckdb.connect(str(tmp_path / "b" / "small" / "world.duckdb"))
    con.execute("DELETE FROM rel_born_in WHERE source = (SELECT min(id) FROM person)")
    con.close()
    r = runner.invoke(app, ["check", str(tmp_path / "b" / "small")])
    assert r.exit_code == 1 and "born_in.required" in r.output


def test_missing_world_and_missing_spec(tmp_path):
    r = runner.invoke(app, ["check", str(tmp_path / "nothing")])
    assert r.exit_code == 1 and "no world at" in r.output
    r = runner.invoke(app, ["plan", str(tmp_path / "nope.yaml")])
    assert r.exit_code == 2 and "file not found" in r.output


def test_render_search_open(tmp_path):
    """The simulated web from the command line, and each kind of bad input it refuses."""
    spec = write_spec(tmp_path, name="geo", counts={"country": 1}, packs=["geography"])
    world = tmp_path / "b" / "geo"
    r = runner.invoke(app, ["render", str(world)])
    assert r.exit_code == 1 and "no world at" in r.output and "worldforge plan" in r.output
    assert runner.invoke(app, ["plan", str(spec), "--build-dir", str(tmp_path / "b")]).exit_code == 0
    r = runner.invoke(app, ["search", str(world), "capital"])
    assert r.exit_code == 1 and "worldforge render" in r.output
    for args, msg in ((["--backend", "gpt"], "unknown backend"),
                      (["--backend", "vllm", "--model", str(tmp_path / "nope")], "does not exist"),
                      (["--backend", "vllm"], "needs a model"),
                      (["--backend", "vllm", "--model", str(tmp_path)], "no config.json")):
        r = runner.invoke(app, ["render", str(world), *args])
        assert r.exit_code == 1 and msg in r.output and "Traceback" not in r.output, (args, r.output)
    assert not (world / "web").exists()
    r = runner.invoke(app, ["render", str(world)])
    assert r.exit_code == 0, r.output
    assert "article pages" in r.output and "indexed for search" in r.output
    r = runner.invoke(app, ["render", str(world)])
    assert r.exit_code == 1 and "--force" in r.output
    r = runner.invoke(app, ["search", str(world), "capital city"])
    assert r.exit_code == 0 and "[1] https://" in r.output and "Title: " in r.output
    url = r.output.split("[1] ", 1)[1].split()[0]
    r2 = runner.invoke(app, ["search", str(world), "capital city", "--offset", "10"])
    assert r2.exit_code == 0 and "[11] https://" in r2.output
    r = runner.invoke(app, ["open", str(world), url])
    assert r.exit_code == 0 and r.output.startswith("# ")
    r = runner.invoke(app, ["open", str(world), "https://nowhere.example/page"])
    assert r.exit_code == 0 and "404 Not Found" in r.output
    r = runner.invoke(app, ["open", str(world), "nowhere"])
    assert r.exit_code == 1 and "malformed URL" in r.output
    r = runner.invoke(app, ["search", str(world), "  "])
    assert r.exit_code == 1 and "empty query" in r.output


def test_batch_gc_is_set_by_the_entry_point_only():
    """The command line (and a Ray worker's first job) collect garbage less often for batch work;
    importing worldforge as a library leaves the host process's settings alone."""
    import subprocess
    import sys

    from worldforge.plumbing import BATCH_GC_THRESHOLD

    probe = ("import gc, sys; before = gc.get_threshold(); import worldforge.cli, worldforge.cluster, "
             "worldforge.web.stage; assert gc.get_threshold() == before, gc.get_threshold(); "
             "from worldforge import __main__ as m; sys.argv = ['worldforge', '--help']\n"
             "try:\n    m.main()\nexcept SystemExit:\n    pass\nprint(gc.get_threshold()[0], before[1:] == gc.get_threshold()[1:])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out[-2:] == [str(BATCH_GC_THRESHOLD), "True"]


def test_out_of_memory_is_one_line(tmp_path, monkeypatch):
    """A plan that runs out of memory printed numpy's traceback."""
    import worldforge.world.planner as planner

    def oom(*a, **k):
        raise MemoryError("Unable to allocate 11.9 GiB for an array with shape (1600000000,) and data type float64")

    import worldforge.world as world_face

    monkeypatch.setattr(planner, "plan_world", oom)
    monkeypatch.setattr(world_face, "plan_world", oom)  # (the CLI takes it from the package's face)
    r = runner.invoke(app, ["plan", str(write_spec(tmp_path)), "-b", str(tmp_path / "b")])
    assert r.exit_code == 1 and "out of memory (Unable to allocate 11.9 GiB" in r.output and "lower the world's counts" in r.output
    assert "Traceback" not in r.output and not (tmp_path / "b" / "small").exists()


def test_an_empty_option_is_a_mistake_not_the_option_left_out(tmp_path):
    """`--tokenizer ""` or `--ray-address ""` (an unset shell variable) was silently taken as not given."""
    from worldforge.cli import app

    for args in (["export", str(tmp_path), "--tokenizer", ""], ["run", str(tmp_path / "x.yaml"), "--ray-address", " "],
                 ["rollout", str(tmp_path), "--tokenizer", ""]):
        res = CliRunner().invoke(app, args)
        words = " ".join(w for w in res.output.replace("│", " ").split())
        assert res.exit_code == 2 and "is empty; give a value, or leave the option out" in words, res.output
