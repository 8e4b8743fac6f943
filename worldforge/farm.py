"""`worldforge farm FARM.yaml`: many worlds, one dataset release.

A farm spec lists worlds (a world spec with overrides, or packs and counts of its own) and a
release version. Every world is built by `worldforge run` (resumable; in parallel as Ray tasks
under `--ray`), then their tasks and trajectories are merged into one dataset:

    <out>/<farm>/<release>/
      README.md            card: worlds, splits, what was dropped as a repeat, and a changelog
                           of every release so far
      manifest.json        the farm spec, each world's spec and dataset fingerprint, the
                           releases it was deduplicated against, the hashes of every task's
                           question and gold set, sha256 of every file
      data/{sft,rl}/<split>-0000i-of-0000n.parquet, jsonl/{sft,rl}/<split>.jsonl
      widesearch/<split>/{tasks.jsonl, gold/, widesearch.jsonl, widesearch_gold/, README.md}

Splits are by world: a whole world goes to one split (its `split:`, else by a seeded hash of
its name and the farm's `splits` fractions), so no evaluation world shares an entity or a page
with a training one. A world's own held-out parts (its export's `split_by: region`) are not
kept in a farm: its held-out tasks go to the world's split with the rest, and the card and the
manifest (`split_by: world`) say so. Tasks are deduplicated in farm order by their question and by their gold
set (normalised: case, spacing, row order), within the release and against every earlier
release of the farm (their manifests list the hashes): a refresh never repeats a released
task. A release rebuilt later keeps the list of earlier releases it was first built against,
so rerunning a farm gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .cluster import current
from .errors import SpecError, SpecProblem, WorldforgeError
from .language import BASE
from .plumbing import BuildLock, check_output_dir, read_json, sha256_file, stable_hash, swap_into_place

FARM_MANIFEST = "manifest.json"
SPLITS = ("train", "validation", "test")
_NAME = r"^[a-z0-9][a-z0-9_-]*$"


class FarmError(WorldforgeError):
    """A farm cannot be built or merged as asked."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FarmWorld(_Model):
    """One world of a farm: a spec file with overrides, or packs and counts of its own."""

    spec: str | None = None  # a world spec YAML, relative to the farm file
    name: str | None = Field(None, pattern=_NAME, max_length=100)  # default: <farm>-<index>
    packs: list[str] | None = Field(None, min_length=1)
    seed: int | None = Field(None, ge=0, lt=2**63)
    counts: dict[str, int] | None = None  # overrides (merged into the spec's counts)
    locale: str | None = None
    language: str | None = None  # en or zh (with a zh_CN locale): a farm may mix languages
    as_of: str | None = None
    stages: dict | None = None  # merged into the spec's stages, section by section
    split: Literal["train", "validation", "test"] | None = None


class FarmSpec(_Model):
    farm_version: Literal[1] = 1
    name: str = Field(pattern=_NAME, max_length=100)
    release: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=40)
    description: str = ""
    seed: int = Field(0, ge=0, lt=2**63)  # the world-level split draw
    splits: dict[Literal["train", "validation", "test"], float] = {"train": 0.8, "validation": 0.1, "test": 0.1}
    worlds: list[FarmWorld] = Field(min_length=1, max_length=10_000)

    @field_validator("splits")
    @classmethod
    def _fractions(cls, v):
        if not all(math.isfinite(x) and x >= 0 for x in v.values()) or not abs(sum(v.values()) - 1.0) <= 1e-6:  # (NaN fails)
            raise ValueError(f"split fractions must be >= 0 and add up to 1 (they add up to {sum(v.values()):g})")
        return v


# A world without a spec file of its own gets these, then its packs, counts and the rest.
BASE_WORLD = {"spec_version": 1, "as_of": "2025-06-30", "time_span": {"start": "1850-01-01"}, "counts": {}}


@dataclass
class FarmWorldPlan:
    name: str
    spec_path: Path  # the resolved spec, written under the farm's build folder
    split: str


@dataclass
class FarmReport:
    path: Path
    worlds: list[dict] = field(default_factory=list)  # per world: name, split, tasks, kept, dropped, seconds
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> tasks
    previous: list[str] = field(default_factory=list)
    seconds: float = 0.0
    fingerprint: str = ""


# --------------------------------------------------------------------------- the spec


def load_farm(path: str | Path) -> FarmSpec:
    """Read and validate a farm spec; every problem at once (SpecError, exit 2)."""
    from .world import pydantic_problems, read_yaml

    path = Path(path)
    problems: list[SpecProblem] = []
    raw = read_yaml(path, problems)
    if problems:
        raise SpecError(problems)
    if not isinstance(raw, dict):
        raise SpecError([SpecProblem(str(path), "", str(raw)[:60], "a farm spec must be a YAML mapping")])
    try:
        farm = FarmSpec.model_validate(raw)
    except ValidationError as exc:
        raise SpecError(pydantic_problems(str(path), exc, data=raw)) from None
    seen: dict[str, int] = {}
    for i, w in enumerate(farm.worlds):
        where = f"worlds.{i}"
        if w.spec is None and not w.packs:
            problems.append(SpecProblem(str(path), where, "", "give a world spec (spec: worlds/demo.yaml) or packs and counts"))
        if w.spec is not None and not (path.parent / w.spec).is_file():
            problems.append(SpecProblem(str(path), f"{where}.spec", w.spec, f"no such file (relative to {path.parent})"))
        name = world_name(farm, i)
        if name in seen:
            problems.append(SpecProblem(str(path), f"{where}.name", name, f"two worlds share this name (worlds.{seen[name]}); "
                                        "give each a name of its own"))
        seen.setdefault(name, i)
    if problems:
        raise SpecError(problems)
    return farm


def world_name(farm: FarmSpec, i: int) -> str:
    return farm.worlds[i].name or f"{farm.name}-{i}"


def resolve_worlds(farm: FarmSpec, farm_path: Path, spec_dir: Path,
                   on_checked: Callable[[int, int], None] | None = None) -> list[FarmWorldPlan]:
    """Each world's spec with its overrides, written to `spec_dir/<name>.yaml` and validated
    like any world spec (the problems of every world at once, named by their farm entry);
    `on_checked(done, total)` after each world."""
    import tempfile

    from .world import load_world, read_yaml

    plans, problems, texts = [], [], {}
    tmp = tempfile.mkdtemp(prefix="worldforge-farm-")
    names = [world_name(farm, i) for i in range(len(farm.worlds))]
    splits = world_splits(farm, names)
    for i, w in enumerate(farm.worlds):
        if w.spec is not None:
            base_file = (farm_path.parent / w.spec).resolve()
            read: list[SpecProblem] = []
            raw = read_yaml(base_file, read)
            if read or not isinstance(raw, dict):
                problems += [SpecProblem(str(farm_path), f"worlds.{i}.spec", w.spec, str(p)) for p in read] or [
                    SpecProblem(str(farm_path), f"worlds.{i}.spec", w.spec, "a world spec must be a YAML mapping")]
                continue
            # pack files named by path stay found from the new spec's folder
            raw["packs"] = [str((base_file.parent / p).resolve()) if isinstance(p, str) and p.endswith((".yaml", ".yml"))
                            else p for p in raw.get("packs") or []]
        else:
            raw = json.loads(json.dumps(BASE_WORLD))
            raw["seed"] = stable_hash(farm.seed, "world", names[i]) % 2**31
        raw["name"] = names[i]
        for k in ("packs", "seed", "locale", "language", "as_of"):
            v = getattr(w, k)
            if v is not None:
                raw[k] = v
        if w.counts:
            raw["counts"] = {**(raw.get("counts") or {}), **w.counts}
        if w.stages:
            st = dict(raw.get("stages") or {})
            for k, v in w.stages.items():
                st[k] = {**(st.get(k) or {}), **v} if isinstance(v, dict) and isinstance(st.get(k), dict) else v
            raw["stages"] = st
        out = spec_dir / f"{names[i]}.yaml"
        texts[out] = yaml.safe_dump(raw, sort_keys=False)
        trial = Path(tmp) / out.name
        trial.write_text(texts[out])
        try:
            load_world(trial)
        except SpecError as exc:
            problems += [SpecProblem(str(farm_path), f"worlds.{i} ({names[i]})", p.value, f"{p.path}: {p.message}" if p.path else p.message)
                         for p in exc.problems]
        plans.append(FarmWorldPlan(names[i], out, splits[names[i]]))
        if on_checked:
            on_checked(i + 1, len(farm.worlds))
    shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        raise SpecError(problems)
    spec_dir.mkdir(parents=True, exist_ok=True)
    for out, text in texts.items():
        if not out.is_file() or out.read_text() != text:  # an unchanged spec keeps its file (the world stays up to date)
            out.write_text(text)
    return plans


def world_splits(farm: FarmSpec, names: list[str]) -> dict[str, str]:
    """A split per world: its own `split:`, else the worlds ordered by a seeded hash of their
    names and cut at the farm's fractions (rounded; every world goes somewhere)."""
    fixed = {n: w.split for n, w in zip(names, farm.worlds) if w.split}
    rest = sorted((n for n in names if n not in fixed), key=lambda n: (stable_hash(farm.seed, "farm-split", n), n))
    out, start, acc = dict(fixed), 0, 0.0
    order = [s for s in SPLITS if farm.splits.get(s, 0) > 0]
    for s in order:
        acc += farm.splits[s]
        end = len(rest) if s == order[-1] else round(acc * len(rest))
        for n in rest[start:end]:
            out[n] = s
        start = max(start, end)
    return out


# --------------------------------------------------------------------------- dedupe keys


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", str(text).strip().casefold())


def task_hash(task) -> str:
    """A task's question, normalised (case and spacing): the same question is the same task."""
    return hashlib.sha256(f"{task.record['kind']}\n{_norm(task.query)}".encode()).hexdigest()[:24]


def gold_hash(task) -> str:
    """A task's gold set: its columns and rows, normalised, in any row order."""
    rows = sorted("\x1f".join(_norm(v) for v in r) for r in task.rows)
    return hashlib.sha256("\x1e".join(["\x1f".join(_norm(h) for h in task.header), *rows]).encode()).hexdigest()[:24]


# --------------------------------------------------------------------------- building


def _build_world(job: tuple[str, str, str, bool], build_root: str, export_root: str) -> dict:
    """One world, end to end, by `run` (resumes; skips what is up to date). A Ray task under --ray."""
    from .run import run_pipeline

    name, spec_path, split, force = job
    t0 = time.perf_counter()
    try:
        r = run_pipeline(spec_path, build_root, export_root, force=force)
    except SpecError:
        raise
    except WorldforgeError as exc:  # which world failed, with the stage's own message and exit code
        err = FarmError(f"world {name} ({spec_path}): {exc}")
        err.exit_code = exc.exit_code
        raise err from None
    ran = [s.stage for s in r.stages if s.status == "ran" and s.stage != "export"]
    return {"name": name, "world": str(r.world), "dataset": str(r.dataset), "split": split, "ran": ran,
            "seconds": round(time.perf_counter() - t0, 3)}


def run_farm(farm_path: str | Path, build_dir: str | Path = "build", out_root: str | Path = "exports", *,
             force: bool = False, on_world=None, on_checked: Callable[[int, int], None] | None = None) -> FarmReport:
    """Build every world of a farm and merge them into `<out>/<farm>/<release>/` (see the
    module docstring). `force` replaces a release folder that holds a different dataset."""
    t0 = time.perf_counter()
    farm_path = Path(farm_path)
    farm = load_farm(farm_path)
    root = Path(build_dir) / farm.name
    dest = Path(out_root) / farm.name / farm.release
    check_output_dir(root, "farm build folder")
    check_output_dir(dest, "release folder")
    if dest.exists() and not (dest / FARM_MANIFEST).is_file() and dest.is_dir() and any(dest.iterdir()):
        raise FarmError(f"{dest} is not empty and holds no farm release ({FARM_MANIFEST}); choose another release or output folder")
    with BuildLock(root):
        plans = resolve_worlds(farm, farm_path, root / "specs", on_checked)  # every world's problems before anything is written
        previous = _previous_releases(dest)
        jobs = [(p.name, str(p.spec_path), p.split, force) for p in plans]
        built = []
        for res in current().map(_build_world, jobs, str(root / "worlds"), str(root / "exports")):
            built.append(res)
            if on_world:
                on_world(res)
        report = _merge(farm, farm_path, plans, built, previous, dest, force)
    report.seconds = round(time.perf_counter() - t0, 3)
    return report


def _previous_releases(dest: Path) -> dict[str, dict]:
    """Release -> its manifest, for every earlier release this one is deduplicated against: the
    ones a rebuilt release recorded, else every other release of the farm on disk."""
    man = dest / FARM_MANIFEST
    names = None
    if man.is_file():
        names = read_json(man, f"delete {dest} and build the release again").get("previous")
    out = {}
    for d in sorted(p for p in dest.parent.iterdir() if p.is_dir() and p.name != dest.name) if dest.parent.is_dir() else []:
        if (d / FARM_MANIFEST).is_file() and (names is None or d.name in names):
            m = read_json(d / FARM_MANIFEST, f"delete {d} or move it away")
            if m.get("farm") == dest.parent.name and "task_hashes" in m:
                out[d.name] = m
    missing = sorted(set(names or []) - set(out))
    if missing:
        raise FarmError(f"{dest} was built against release(s) {', '.join(missing)}, which are gone; restore them or "
                        f"delete {dest} to build it against the releases there are")
    return out


def _merge(farm: FarmSpec, farm_path: Path, plans: list[FarmWorldPlan], built: list[dict], previous: dict[str, dict],
           dest: Path, force: bool) -> FarmReport:
    from .export import ground_truths, sft_rows
    from .rollout import SYSTEM_PROMPT, GroundingReport, load_tasks, read_report, read_trajectories
    from .tasks import gold_csv, write_widesearch
    from .world import open_world

    released_t = {h: r for r, m in previous.items() for h in m["task_hashes"]}
    released_g = {h: r for r, m in previous.items() for h in m["gold_hashes"]}
    seen_t: set[str] = set()
    seen_g: set[str] = set()
    dropped: Counter = Counter()
    sft = {s: [] for s in SPLITS}
    rl = {s: [] for s in SPLITS}
    ws = {s: [] for s in SPLITS}
    task_hashes, gold_hashes, worlds = [], [], []
    grounding = GroundingReport()  # every world's SFT samples, checked as a single export checks them
    for plan, b in zip(plans, built):
        wp = Path(b["world"])
        info = open_world(wp)
        spec = info.world.spec
        tasks = load_tasks(wp)
        trajs = read_trajectories(wp)
        rollout = read_report(wp)
        keep, w_drop = _new_tasks(tasks, (released_t, released_g), (seen_t, seen_g), (task_hashes, gold_hashes))
        dropped.update(w_drop)
        ids = {t.id for t in keep}
        s = plan.split
        system = SYSTEM_PROMPT.format(today=spec.as_of.strftime("%B %-d, %Y"))
        truths = ground_truths(wp, keep, rollout["options"])
        records = {t.id: t.record for t in keep}
        scorer = rollout["options"].get("scorer", "widesearch")
        sft[s] += [row for t in trajs if t["instance_id"] in ids
                   for row in sft_rows(t, spec.name, records[t["instance_id"]], spec.stages.export.context, grounding, scorer)]
        rl[s] += [(t, spec.name, system, truths[t.id]) for t in keep]
        ws[s] += keep
        man = read_json(Path(b["dataset"]) / "manifest.json", f"run the farm again with --force ({b['dataset']})")
        worlds.append({"name": plan.name, "split": s, "seed": spec.seed, "locale": spec.locale, "language": spec.language,
                       "packs": list(info.world.packs),  # by name: where a pack file lies is no part of the data
                       "entities": sum(info.manifest["counts"].values()), "facts": info.manifest["facts"],
                       "tasks": len(tasks), "kept": len(keep), "dropped": dict(sorted(w_drop.items())),
                       "region_split": any(t.record.get("split", "train") != "train" for t in tasks),
                       "trajectories": sum(1 for t in trajs if t["instance_id"] in ids),
                       "spec_sha256": sha256_file(plan.spec_path), "dataset_fingerprint": man.get("fingerprint")})

    partial = dest.with_name(f".{dest.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    rows: dict[str, dict[str, int]] = {"sft": {}, "rl": {}, "widesearch": {}}
    used = [s for s in SPLITS if rl[s]]
    jobs = [("sft", s, sft[s]) for s in used if sft[s]] + [("rl", s, rl[s]) for s in used]
    for (fmt, s, _), n in zip(jobs, current().map(_write_merged, jobs, str(partial))):
        rows[fmt][s] = n
    for s in used:
        mine = {t.id: t for t in ws[s]}
        write_widesearch(partial / "widesearch" / s, [t.record for t in ws[s]],
                         lambda iid, m=mine: gold_csv(m[iid].header, m[iid].rows), f"{farm.release}: {s} split")
        rows["widesearch"][s] = len(ws[s])

    entry = {"release": farm.release, "worlds": [w["name"] for w in worlds], "tasks": len(task_hashes),
             "trajectories": sum(w["trajectories"] for w in worlds), "samples": sum(rows["sft"].values()),
             "dropped": dict(sorted(dropped.items())),
             "previous": sorted(previous)}
    # this release, then the changelog of the latest earlier one (which holds the ones before it)
    changelog = [entry] + max((m.get("changelog", []) for m in previous.values()), key=len, default=[])
    card = farm_card(farm, farm_path.name, worlds, rows, changelog, grounding.as_dict())
    (partial / "README.md").write_text(card)
    files = {str(p.relative_to(partial)): p for p in sorted(partial.rglob("*")) if p.is_file()}
    hashes = {k: {"sha256": sha256_file(p), "bytes": p.stat().st_size} for k, p in files.items()}
    fingerprint = hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]
    manifest = {"farm": farm.name, "release": farm.release, "format": 1, "fingerprint": fingerprint,
                "farm_spec": farm.model_dump(mode="json"), "worlds": worlds, "previous": sorted(previous),
                "rows": rows, "changelog": changelog, "grounding": grounding.as_dict(), "split_by": "world",
                "task_hashes": sorted(task_hashes), "gold_hashes": sorted(gold_hashes), "files": dict(sorted(hashes.items()))}
    (partial / FARM_MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    if (dest / FARM_MANIFEST).is_file() and not force:
        old = read_json(dest / FARM_MANIFEST, f"delete {dest} and build the release again").get("fingerprint")
        if old != fingerprint:
            shutil.rmtree(partial)
            raise FarmError(f"{dest} already holds a different release {farm.release} (fingerprint {old}, this one is "
                            f"{fingerprint}); pass --force to replace it, or set a new release")
    swap_into_place(partial, dest)
    return FarmReport(dest, worlds, {k: v for k, v in rows.items() if v}, dict(sorted(dropped.items())), sorted(previous),
                      fingerprint=fingerprint)


def _new_tasks(tasks: list, released: tuple[dict, dict], seen: tuple[set, set], hashes: tuple[list, list]) -> tuple[list, Counter]:
    """The tasks of one world that no earlier release (`released`: question and gold hashes ->
    release) and no earlier world of this release (`seen`) holds, their hashes noted in `seen`
    and `hashes`; and why each other one was dropped, counted."""
    (released_t, released_g), (seen_t, seen_g), (task_hashes, gold_hashes) = released, seen, hashes
    keep, w_drop = [], Counter()
    for t in tasks:
        th, gh = task_hash(t), gold_hash(t)
        reason = None
        if th in released_t or gh in released_g:
            reason = f"released in {released_t.get(th) or released_g.get(gh)}"
        elif th in seen_t:
            reason = "same question as an earlier world's"
        elif gh in seen_g:
            reason = "same gold set as an earlier world's"
        if reason:
            w_drop[reason] += 1
            continue
        seen_t.add(th)
        seen_g.add(gh)
        task_hashes.append(th)
        gold_hashes.append(gh)
        keep.append(t)
    return keep, w_drop


def _write_merged(job: tuple[str, str, list], partial: str) -> int:
    """One format's rows of one split of the merged dataset (a Ray task under --ray)."""
    from .export import RL_SCHEMA, SFT_SCHEMA, rl_row, write_rows

    fmt, s, items = job
    if fmt == "sft":
        rows, schema = items, SFT_SCHEMA
    else:
        rows, schema = [rl_row(t, world, s, i, system, truth) for i, (t, world, system, truth) in enumerate(items)], RL_SCHEMA
    write_rows(rows, schema, Path(partial) / "data" / fmt, Path(partial) / "jsonl" / fmt / f"{s}.jsonl", s, 1000)
    return len(rows)


def farm_card(farm: FarmSpec, farm_file: str, worlds: list[dict], rows: dict, changelog: list[dict], grounding: dict | None = None) -> str:
    """README.md of a release: worlds, splits, the dedupe rule and the changelog of every release."""
    from .world import ExportOptions

    front = {"pretty_name": f"worldforge farm {farm.name} ({farm.release})", "license": ExportOptions().license,
             "language": sorted({w.get("language", BASE) for w in worlds}),
             "task_categories": ["question-answering", "text-generation"],
             "tags": ["synthetic", "agents", "tool-use", "web-search", "widesearch", "worldforge"],
             "configs": [{"config_name": fmt, "data_files": [{"split": s, "path": f"data/{fmt}/{s}-*.parquet"} for s in rows[fmt]],
                          **({"default": True} if fmt == "sft" else {})} for fmt in ("sft", "rl") if rows[fmt]]}
    lines = ["---", yaml.safe_dump(front, sort_keys=False).rstrip(), "---", "",
             f"# worldforge farm: {farm.name} ({farm.release})", "",
             (farm.description + " " if farm.description else "")
             + f"{len(worlds)} fictional worlds merged into one dataset of WideSearch-style tasks and agent trajectories. "
             "Splits are by world: every task and trajectory of a world is in that world's split"
             + (" (a world's own held-out parts, which its single-world export keeps as validation and test, are not kept "
                "here: its held-out tasks are in the world's split with the rest)" if any(w.get("region_split") for w in worlds)
                else "") + ".", "",
             "## Worlds", "", "| world | split | packs | seed | locale | language | entities | tasks | kept | trajectories |",
             "|---|---|---|---:|---|---|---:|---:|---:|---:|"]
    for w in worlds:
        lines.append(f"| {w['name']} | {w['split']} | {', '.join(w['packs'])} | {w['seed']} | {w['locale']} | {w.get('language', 'en')} "
                     f"| {w['entities']:,} "
                     f"| {w['tasks']:,} | {w['kept']:,} | {w['trajectories']:,} |")
    lines += ["", "## Splits", "", "| split | sft rows (samples) | rl rows (tasks) |", "|---|---:|---:|"]
    for s in SPLITS:
        if s in rows["rl"]:
            lines.append(f"| {s} | {rows['sft'].get(s, 0):,} | {rows['rl'][s]:,} |")
    lines += ["", "Tasks are deduplicated by question and by gold set (normalised), across worlds and against every "
              "earlier release of the farm, so a refresh never repeats a released task.", ""]
    if grounding and grounding.get("samples"):
        g = grounding
        lines += ["Each SFT row is one sample of a trajectory, exactly what the model saw (each world's `stages.export.context`: a "
                  "context segment, or the whole trajectory); rows of one trajectory share `trajectory_id` and its final reward. "
                  f"Every sample passed the grounding check: {g['samples'] - g['failed']:,} of {g['samples']:,} samples kept "
                  f"({g['unseen_opens']} pages opened unseen, {100 * g['visible_cell_share']:.2f} % of {g['cells']:,} informative "
                  f"answer cells visible, {g['contradicted']} narration counts contradicting the actions).", ""]
    lines += ["## Changelog", ""]
    for e in changelog:
        drops = "; ".join(f"{n:,} {r}" for r, n in e["dropped"].items()) or "none"
        lines += [f"### {e['release']}", "", f"- worlds: {', '.join(e['worlds'])}",
                  f"- {e['tasks']:,} tasks, {e['trajectories']:,} trajectories"
                  + (f" ({e['samples']:,} SFT samples)" if e.get("samples") else ""),
                  f"- deduplicated against: {', '.join(e['previous']) or 'no earlier release'}",
                  f"- dropped: {drops}", ""]
    lines += ["## Reproduce", "", "```bash", f"worldforge farm {farm_file}", "```", "",
              "`manifest.json` lists each world's resolved spec hash and dataset fingerprint, the hashes of every "
              "task's question and gold set, and the sha256 of every file.", ""]
    from .export import language_section

    for lang in sorted({w.get("language") or BASE for w in worlds} - {BASE}):
        lines += language_section(lang, sum(w["kept"] for w in worlds if w.get("language") == lang))
    return "\n".join(lines)

