"""`worldforge run`: every stage of a spec, end to end, resumable, never trusting damaged state.

plan -> render (pages and search index) -> tasks -> rollout -> export. Each stage writes
atomically. `<world>/run.json` records, per finished stage, the inputs it used (the spec's
relevant part, pack hashes, the stage's options) and a digest of every file it wrote
(`plumbing.folder_digests`: size and sha256, sampled for files over 32 MiB).

A rerun decides stage by stage, before any work, and says why:
- a stage whose inputs changed is out of date (the message names what changed);
- a stage whose outputs no longer match their digests (a truncated gold CSV, a deleted
  index, a cut-off database) is damaged and rebuilt;
- a stage after a rebuilt one runs again only if the rebuilt stage's outputs differ from
  what was recorded;
- everything else is skipped. A stage cut off mid-way resumes from its own checkpoints
  (render shards, rollout chunks).
The export is rebuilt each time, and is byte-identical for identical inputs. The whole run
holds the world's build lock, checks its output folders before any work, and refuses at
once (not after minutes of work) when the export folder holds a dataset it would not replace.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .plumbing import BuildLock, check_output_dir, digest_problems, folder_digests, read_json, release_memory, sha256_file, write_atomic
from .world import ResolvedWorld, is_complete, load_world, world_dir

RUN_FILE = "run.json"
RUN_FORMAT = 3  # 3: the pages stay Parquet files in web/pages/ (a run.json of 2 rebuilds from the plan)
STAGES = ("plan", "render", "tasks", "rollout", "export")
OUTPUTS = {"plan": ["world.duckdb", "world.json"], "render": ["web"], "tasks": ["tasks"], "rollout": ["rollout"]}


@dataclass
class StageResult:
    stage: str
    status: str  # ran | skipped
    seconds: float
    summary: str


@dataclass
class StageDecision:
    """What a run will do with one stage, and why."""

    stage: str
    action: str  # skip | run | depends (runs only if an earlier rebuilt stage's outputs change)
    reason: str


@dataclass
class RunReport:
    world: Path
    dataset: Path | None = None
    decisions: list[StageDecision] = field(default_factory=list)
    stages: list[StageResult] = field(default_factory=list)


def _hash(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def stage_inputs(world: ResolvedWorld) -> dict[str, dict]:
    """The inputs of each stage by name: the spec (without stage options) and the packs' hashes
    for the plan, each later stage's own options."""
    spec = world.spec.model_dump(mode="json")
    stages = spec.pop("stages")
    spec["packs"] = list(world.packs)  # by name, in order: where a pack file lies is no input (its content is)
    plan = {"spec": spec} | {f"pack {k}": sha256_file(Path(f)) for k, f in sorted(world.pack_files.items())}
    return {"plan": plan, "render": {"stages.render": stages["render"]}, "tasks": {"stages.tasks": stages["tasks"]},
            "rollout": {"stages.rollout": stages["rollout"]}}


def _fingerprints(inputs: dict[str, dict]) -> dict[str, str]:
    fp, prev = {}, None
    for s in ("plan", "render", "tasks", "rollout"):
        fp[s] = prev = _hash(prev, inputs[s])
    return fp


def _changes(old, new, path: str = "") -> list[str]:
    """Dotted paths where two JSON values differ, shallowest first ("stages.render.max_list_items: 8 -> 12")."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new), key=str):
            out += _changes(old.get(k), new.get(k), f"{path}.{k}" if path else str(k))
        return out
    if old == new:
        return []
    show = lambda v: json.dumps(v)[:40] if v is not None else "(none)"  # noqa: E731
    return [f"{path}: {show(old)} -> {show(new)}" if not isinstance(old, dict) and not isinstance(new, dict) else f"{path} changed"]


def _load_record(path: Path) -> tuple[dict, str | None]:
    """The stages recorded in run.json, and a note when there is none to trust."""
    f = path / RUN_FILE
    if not f.is_file():
        return {}, None
    rec = read_json(f, f"delete {f}: the next run then rebuilds every stage")
    if not isinstance(rec, dict) or rec.get("format") != RUN_FORMAT or not isinstance(rec.get("stages"), dict):
        return {}, "run.json was written by another worldforge version"
    return rec["stages"], None


def _write_record(path: Path, stages: dict) -> None:
    write_atomic(path / RUN_FILE, json.dumps({"format": RUN_FORMAT, "stages": stages}, indent=2, sort_keys=True) + "\n")


def decide(world: ResolvedWorld, path: Path, recorded: dict, note: str | None = None) -> list[StageDecision]:
    """Each stage's action and reason, as far as it can be known before any work: a stage after
    one that runs is marked `depends` (it runs only if that stage's outputs come out different)."""
    inputs = stage_inputs(world)
    fps = _fingerprints(inputs)
    out, upstream = [], None
    for s in ("plan", "render", "tasks", "rollout"):
        rec = recorded.get(s)
        reason = None
        if s == "plan" and not is_complete(path):
            reason = "no complete world yet"
        elif rec is None:
            reason = note or "not built yet"
        elif rec.get("fingerprint") != fps[s]:
            changed = _changes(rec.get("inputs", {}), inputs[s])
            if changed:
                reason = "inputs changed: " + "; ".join(changed[:3]) + (f"; and {len(changed) - 3} more" if len(changed) > 3 else "")
            elif upstream is None:
                reason = "an earlier stage's inputs changed"
        if reason is None and rec is not None:
            problems = digest_problems(path, rec.get("outputs", {}))
            if problems:
                reason = "damaged outputs: " + "; ".join(problems[:2]) + (f"; and {len(problems) - 2} more" if len(problems) > 2 else "")
        if reason is not None:
            out.append(StageDecision(s, "run", reason))
            upstream = upstream or s
        elif upstream == "plan":  # a new plan replaces the world folder, this stage's outputs with it
            out.append(StageDecision(s, "run", "the world is planned again"))
        elif upstream is not None:
            out.append(StageDecision(s, "depends", f"runs again if {upstream} writes different outputs"))
        else:
            out.append(StageDecision(s, "skip", "up to date"))
    out.append(StageDecision("export", "run", "rebuilt every run (byte-identical for identical inputs)"))
    return out


def _data(stage: str, path: Path, outputs: dict[str, dict]) -> dict:
    """What later stages read of a stage's outputs: its files without the reports (they hold
    timings); for render, the pages' content digest (DuckDB and index files differ byte-wise
    from one identical render to the next)."""
    if stage == "render":
        rep = path / "web" / "render.json"
        return {"content": read_json(rep, "").get("report", {}).get("content")} if rep.is_file() else {}
    return {k: v for k, v in outputs.items() if Path(k).name not in ("render.json", "report.json")}


def _check_export(world: ResolvedWorld, out_root: str | Path, force: bool) -> Path:
    """Fail before any work when the export folder holds something else, or a dataset made from
    another spec or other packs: that export would be refused after all the work anyway."""
    from .errors import ExportError
    from .export import MANIFEST, check_dest, export_path

    dest = export_path(out_root, world.spec.name, world.spec.stages.export.version)
    check_output_dir(dest, "dataset folder")
    if check_dest(dest, None, force) and not force:
        old = read_json(dest / MANIFEST, f"delete {dest} or set stages.export.version to a new version")
        if not isinstance(old, dict):
            raise ExportError(f"{dest / MANIFEST} is not a worldforge manifest (a JSON {type(old).__name__}); delete {dest} "
                              "or set stages.export.version to a new version")
        packs = {name: sha256_file(Path(f)) for name, f in sorted(world.pack_files.items())}
        what = [w for w, a, b in (("spec", old.get("spec"), world.spec.model_dump(mode="json")), ("packs", old.get("packs"), packs))
                if a != b]
        if what:
            raise ExportError(f"{dest} already holds a dataset made from a different {' and '.join(what)}; pass --force to "
                              "replace it, or set stages.export.version to a new version")
    return dest


def run_pipeline(spec_path: str | Path, build_dir: str | Path = "build", out_root: str | Path = "exports", *,
                 force: bool = False, dry_run: bool = False,
                 on_plan: Callable[[list[StageDecision]], None] | None = None,
                 on_stage: Callable[[str], None] | None = None,
                 on_progress: Callable[[str, int, int], None] | None = None) -> RunReport:
    """Run every stage of `spec_path` (see the module docstring). `force` replaces an export
    folder that holds a different version of the dataset. `dry_run` decides and returns the
    decisions without running anything. `on_plan` receives the decisions before any work."""
    world = load_world(spec_path)  # every spec problem is reported before any work
    path = world_dir(Path(build_dir), world.spec.name)
    report = RunReport(path)
    check_output_dir(path, "build folder")
    _check_export(world, out_root, force)
    with BuildLock(path):
        recorded, note = _load_record(path) if is_complete(path) else ({}, None)
        report.decisions = decide(world, path, recorded, note)
        if on_plan:
            on_plan(report.decisions)
        if dry_run:
            return report
        _run_stages(world, path, build_dir, out_root, force, recorded, report, on_stage, on_progress)
    return report


def _run_stages(world, path: Path, build_dir, out_root, force: bool, recorded: dict, report: RunReport,
                on_stage, on_progress) -> None:
    from .export import export_dataset
    from .rollout import run_rollout
    from .tasks import generate_tasks
    from .web import render_world
    from .world import count_steps, heavy_drops, plan_world

    st = world.spec.stages
    inputs = stage_inputs(world)
    fps = _fingerprints(inputs)
    progress = on_progress or (lambda stage, done, total: None)
    decisions = {d.stage: d for d in report.decisions}
    changed_upstream = False  # a rebuilt stage wrote outputs other than the recorded ones

    def plan() -> str:
        total, steps = count_steps(world) + 2, iter(range(1, 10**9))
        info = plan_world(world, build_dir, force=True, on_step=lambda desc: progress("plan", min(next(steps), total), total))
        progress("plan", total, total)
        drops = heavy_drops(info.manifest)
        return (f"{sum(info.manifest['counts'].values()):,} entities, {info.manifest['facts']:,} facts"
                + "".join(f"; warning: {w}" for w in drops))

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

    for name, fn in zip(STAGES[:-1], (plan, render, tasks, rollout)):
        if on_stage:
            on_stage(name)
        d = decisions[name]
        if d.action == "skip" or (d.action == "depends" and not changed_upstream):
            report.stages.append(StageResult(name, "skipped", 0.0, "up to date"))
            continue
        t0 = time.perf_counter()
        summary = fn()
        release_memory()  # what a stage read in bulk does not stay resident through the next ones
        outputs = folder_digests(path, OUTPUTS[name])
        data = _data(name, path, outputs)
        # A later stage reruns when this one's data came out different. A new plan replaces the
        # whole world folder, later stages' outputs included.
        changed_upstream = changed_upstream or name == "plan" or data != recorded.get(name, {}).get("data")
        recorded[name] = {"fingerprint": fps[name], "inputs": inputs[name], "outputs": outputs, "data": data}
        _write_record(path, recorded)
        report.stages.append(StageResult(name, "ran", time.perf_counter() - t0, summary))

    if on_stage:
        on_stage("export")
    t0 = time.perf_counter()
    r = export_dataset(path, out_root, st.export, force=force, on_progress=progress)
    report.dataset = r.path
    summary = ", ".join(f"{fmt} {sum(v.values()):,}" for fmt, v in r.rows.items()) + f" rows, {r.bytes / 1e6:.1f} MB"
    if r.splits:
        lk = r.leak or {}
        summary += "; splits " + ", ".join(f"{k} {r.splits[k]:,}" for k in ("train", "validation", "test") if k in r.splits)
        if lk.get("split_by") == "region":
            summary += f" ({lk.get('leaked_pages', 0)} leaked held-out evidence pages"
            summary += f", {len(lk['dropped_training_tasks'])} training tasks dropped)" if lk.get("dropped_training_tasks") else ")"
    g = r.grounding or {}
    if g.get("samples"):
        summary += (f"; grounding: {g['samples'] - g['failed']:,} of {g['samples']:,} samples grounded"
                    f" ({g['unseen_opens']} unseen opens, {100 * g['visible_cell_share']:.1f} % of answer cells visible,"
                    f" {g['contradicted']} narration contradictions)")
    report.stages.append(StageResult("export", "ran", time.perf_counter() - t0, summary))
