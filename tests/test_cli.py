"""The CLI: each command works on the demo and maps bad input to a clear message and exit code."""

from __future__ import annotations

from typer.testing import CliRunner

from worldforge.cli import app

from .conftest import DEMO, write_spec

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
