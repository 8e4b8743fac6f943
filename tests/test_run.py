"""`worldforge run`: end to end, killed mid-way and resumed to identical bytes; same seed, same bytes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from typer.testing import CliRunner

from tests.conftest import RUN_STAGES, write_spec
from worldforge.cli import app

runner = CliRunner()
CLI = [sys.executable, "-c", "from worldforge.cli import main; main()"]


def _packs(spec) -> list[str]:
    """small_run's packs as its spec names them (one is a file of another name)."""
    import yaml

    return yaml.safe_load(spec.read_text())["packs"]


def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_killed_run_resumes_to_identical_bytes(small_run, tmp_path):
    spec, _, reference = small_run
    stages = {**RUN_STAGES, "rollout": {"chunk_tasks": 1}}
    spec_k = write_spec(tmp_path, name="mini", stages=stages, packs=_packs(spec))
    build, out = tmp_path / "build", tmp_path / "exports"
    proc = subprocess.Popen([*CLI, "run", str(spec_k), "--build-dir", str(build), "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chunk = build / "mini" / ".rollout.partial" / "chunks" / "00002.jsonl"
    deadline = time.time() + 300
    while not chunk.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert chunk.exists() and not (build / "mini" / "rollout").exists(), "the run was not stopped mid-rollout"
    assert not (out / "mini").exists()
    res = runner.invoke(app, ["run", str(spec_k), "--build-dir", str(build), "--out", str(out)])
    assert res.exit_code == 0, res.output
    for stage in ("plan", "render", "tasks"):
        assert f"│ {stage}" in res.output and "skipped" in res.output.split(f"│ {stage}", 1)[1].split("\n", 1)[0]
    # chunking does not change a trajectory: the killed-and-resumed dataset equals the session's uninterrupted one,
    # apart from the spec recorded in the manifest and card (chunk_tasks differs)
    got, ref = _tree(out / "mini" / "v1"), _tree(reference)
    assert set(got) == set(ref)
    differ = {k for k in got if got[k] != ref[k]}
    assert differ <= {"manifest.json"}, differ


def test_same_seed_same_bytes_and_run_guards(small_run, tmp_path):
    spec, _, reference = small_run
    build, out = tmp_path / "build", tmp_path / "exports"
    res = runner.invoke(app, ["run", str(spec), "--build-dir", str(build), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert _tree(out / "mini" / "v1") == _tree(reference)
    # a second run skips every stage and rewrites the same dataset
    res = runner.invoke(app, ["run", str(spec), "--build-dir", str(build), "--out", str(out)])
    assert res.exit_code == 0 and res.output.count("skipped") == 4
    assert _tree(out / "mini" / "v1") == _tree(reference)
    # another rollout seed is another dataset: refused over v1 unless forced
    other = write_spec(tmp_path, name="mini", stages={**RUN_STAGES, "rollout": {"chunk_tasks": 3, "seed": 5}}, packs=_packs(spec))
    res = runner.invoke(app, ["run", str(other), "--build-dir", str(build), "--out", str(out)])
    assert res.exit_code == 1 and "different spec" in res.output and "--force" in res.output
    assert _tree(out / "mini" / "v1") == _tree(reference)
    res = runner.invoke(app, ["run", str(other), "--build-dir", str(build), "--out", str(out), "--force"])
    assert res.exit_code == 0, res.output
    assert "skipped" in res.output.split("│ tasks", 1)[1].split("\n", 1)[0]  # only rollout and export ran again
    sft = lambda tree: {k: v for k, v in tree.items() if k.startswith("data/sft/")}  # noqa: E731
    assert sft(_tree(out / "mini" / "v1")) != sft(_tree(reference))
    # bad specs fail before any work
    bad = write_spec(tmp_path, name="bad", stages={"rollout": {"policy": "random", "perturbations": {"lag": {"web_search": 0.1}}}})
    res = runner.invoke(app, ["run", str(bad), "--build-dir", str(build)])
    assert res.exit_code == 2 and "stages.rollout.policy" in res.output and "unknown perturbation 'lag'" in res.output
    assert not (build / "bad").exists()
