"""`worldforge run`: every stage of a spec, end to end, resumable.

plan -> render (pages and search index) -> tasks -> rollout -> export. Each stage writes
atomically and `<world>/run.json` records the fingerprint of the inputs each finished stage
used (the spec's relevant part plus the previous stage's fingerprint). A rerun skips every
stage whose fingerprint is unchanged and redoes the rest; a stage cut off mid-way resumes
from its own checkpoints (render shards, rollout chunks). The export is rebuilt each time,
and is byte-identical for identical inputs.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .plumbing import write_atomic
from .world.spec import ResolvedWorld
from .world.store import is_complete, world_dir
from .world.validate import load_world

RUN_FILE = "run.json"
STAGES = ("plan", "render", "tasks", "rollout", "export")


@dataclass
class StageResult:
    stage: str
    status: str  # ran | skipped
    seconds: float
    summary: str


@dataclass
class RunReport:
    world: Path
    dataset: Path | None = None
    stages: list[StageResult] = field(default_factory=list)


def _hash(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _fingerprints(world: ResolvedWorld) -> dict[str, str]:
    spec = world.spec.model_dump(mode="json")
    stages = spec.pop("stages")
    packs = {k: Path(f).read_text() for k, f in sorted(world.pack_files.items())}
    fp = {"plan": _hash(spec, packs)}
    fp["render"] = _hash(fp["plan"], stages["render"])
    fp["tasks"] = _hash(fp["render"], stages["tasks"])
    fp["rollout"] = _hash(fp["tasks"], stages["rollout"])
    return fp


def _done(path: Path) -> dict[str, str]:
    f = path / RUN_FILE
    return json.loads(f.read_text()) if f.is_file() else {}


def _mark(path: Path, stage: str, fp: str) -> None:
    done = _done(path)
    done[stage] = fp
    write_atomic(path / RUN_FILE, json.dumps(done, indent=2, sort_keys=True) + "\n")


def _check_export(world: ResolvedWorld, out_root: str | Path, force: bool) -> None:
    """Fail before any work when the export folder holds something else, or a dataset made
    from another spec (the fingerprint check at the end catches any other difference)."""
    from .errors import ExportError
    from .export import MANIFEST, check_dest, export_path

    dest = export_path(out_root, world.spec.name, world.spec.stages.export.version)
    if check_dest(dest, None, force) and not force:
        old = json.loads((dest / MANIFEST).read_text()).get("spec")
        if old != world.spec.model_dump(mode="json"):
            raise ExportError(f"{dest} already holds a dataset made from a different spec; pass --force to replace it, "
                              "or set stages.export.version to a new version")


def run_pipeline(spec_path: str | Path, build_dir: str | Path = "build", out_root: str | Path = "exports", *,
                 force: bool = False, on_stage: Callable[[str], None] | None = None,
                 on_progress: Callable[[str, int, int], None] | None = None) -> RunReport:
    """Run every stage of `spec_path` (see the module docstring). `force` replaces an export
    folder that holds a different version of the dataset."""
    from .export import export_dataset
    from .rollout import run_rollout
    from .tasks import generate_tasks
    from .web import render_world
    from .world.planner import plan_world

    world = load_world(spec_path)  # every spec problem is reported before any work
    st = world.spec.stages
    _check_export(world, out_root, force)
    fps = _fingerprints(world)
    path = world_dir(Path(build_dir), world.spec.name)
    report = RunReport(path)
    progress = on_progress or (lambda stage, done, total: None)
    done = _done(path) if is_complete(path) else {}

    def stage(name: str, fn: Callable[[], str]) -> None:
        if on_stage:
            on_stage(name)
        t0 = time.perf_counter()
        if name != "export" and done.get(name) == fps[name]:
            report.stages.append(StageResult(name, "skipped", 0.0, "up to date"))
            return
        summary = fn()
        if name != "export":
            _mark(path, name, fps[name])
            done[name] = fps[name]
        report.stages.append(StageResult(name, "ran", time.perf_counter() - t0, summary))

    def plan() -> str:
        from .world.planner import count_steps

        total, steps = count_steps(world) + 2, iter(range(1, 10**9))
        info = plan_world(world, build_dir, force=True, on_step=lambda desc: progress("plan", min(next(steps), total), total))
        progress("plan", total, total)
        done.clear()  # a new world: every later stage runs again
        return f"{sum(info.manifest['counts'].values()):,} entities, {info.manifest['facts']:,} facts"

    def render() -> str:
        r = render_world(path, st.render, force=True, on_progress=progress)
        return f"{r.pages:,} pages ({r.backend})"

    def tasks() -> str:
        r = generate_tasks(path, st.tasks, force=True, on_progress=progress)
        return ", ".join(f"{v:,} {k}" for k, v in r.kept.items())

    def rollout() -> str:
        r = run_rollout(path, st.rollout, force=True, on_progress=lambda d, n: progress("rollout", d, n))
        s = r.stats
        return (f"{r.trajectories:,} trajectories ({r.policy}), mean reward {s['reward_mean']:.3f}, "
                f"{s['turns_mean']:.1f} turns, {sum(s['perturbations'].values()):,} perturbations")

    def export() -> str:
        r = export_dataset(path, out_root, st.export, force=force, on_progress=progress)
        report.dataset = r.path
        return ", ".join(f"{fmt} {sum(v.values()):,}" for fmt, v in r.rows.items()) + f" rows, {r.bytes / 1e6:.1f} MB"

    for name, fn in zip(STAGES, (plan, render, tasks, rollout, export)):
        stage(name, fn)
    return report
