"""Rebuild a dataset's world from its manifest alone, to serve it (`worldforge serve --from-manifest`).

An export's `manifest.json` holds the resolved spec and packs (`world`), the rollout options
and seeds, and the sha256 of the world's `tasks.jsonl`. Planning, rendering and posing tasks
are deterministic, so the rebuilt world is the one the dataset was made from; the tasks'
digest proves it before anything is served (a different worldforge version could differ).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from ..errors import ExportError, WorldforgeError
from ..plumbing import sha256_file, write_atomic
from ..world import NAME_RE, RolloutOptions

SERVE_EXTRA = ("starlette", "uvicorn", "mcp", "markdown_it")
_PACK_NAME = re.compile(NAME_RE)  # a pack's `pack:` name, as packs are validated


def require_serve_extra() -> None:
    """Fail with an install hint when the server's packages are missing."""
    import importlib.util

    missing = [m for m in SERVE_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise WorldforgeError(f"the server needs {', '.join(missing)}: pip install 'worldforge[serve]'")


MAX_MANIFEST_BYTES = 64 << 20  # a manifest holds the spec and the packs' text: a few hundred kB
MARK = ".from-manifest"  # in a world folder this command made: the tasks digest it was made for
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _read_manifest(path: Path) -> dict:
    """The manifest, read at most MAX_MANIFEST_BYTES (a device or a huge file is refused, not
    read whole), with every field the rebuild uses type-checked."""
    fix = "give the manifest.json of a worldforge dataset (exports/<world>/<version>/manifest.json)"
    if not path.is_file():
        raise ExportError(f"{path} is not a file; {fix}")
    with path.open("rb") as f:
        data = f.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise ExportError(f"{path} is larger than {MAX_MANIFEST_BYTES >> 20} MiB: not a worldforge manifest; {fix}")
    try:
        man = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ExportError(f"{path} is not valid JSON ({str(exc).splitlines()[0][:100]}); {fix}") from None
    if not isinstance(man, dict) or "world" not in man or "tasks_sha256" not in man:
        raise ExportError(f"{path} holds no world to rebuild (a dataset exported by an older worldforge); "
                          "export it again with this version, or serve the world folder itself")
    wrong = []
    if not (isinstance(man["tasks_sha256"], str) and _SHA256.fullmatch(man["tasks_sha256"])):
        wrong.append("`tasks_sha256` (64 hex digits)")
    rollout = man.get("rollout")
    if not (isinstance(rollout, dict) and isinstance(rollout.get("options"), dict)):
        wrong.append("`rollout.options` (an object)")
    seeds = man.get("seeds")
    if not (isinstance(seeds, dict) and isinstance(seeds.get("perturbations"), int) and not isinstance(seeds["perturbations"], bool)):
        wrong.append("`seeds.perturbations` (a whole number)")
    if wrong:
        raise ExportError(f"{path}: {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} missing or damaged; "
                          "export the dataset again")
    return man


def rebuild_from_manifest(manifest_path: str | Path, build_dir: str | Path = "build", *, force: bool = False,
                          on_stage: Callable[[str], None] | None = None) -> tuple[Path, RolloutOptions, int]:
    """(world folder, rollout options, perturbation seed) of the dataset `manifest_path`
    describes, planning, rendering and posing its tasks under `build_dir` unless an identical
    world is already there. A folder of the world's name that this did not make (another spec's
    world, a run's trajectories) is never replaced: ExportError names it and the fix (another
    `build_dir`, or `force`)."""
    import yaml

    from ..tasks import TASKS_FILE, generate_tasks, tasks_dir
    from ..web import is_rendered, render_world
    from ..world import is_complete, load_world, plan_world, world_dir

    manifest_path = Path(manifest_path)
    say = on_stage or (lambda m: None)
    man = _read_manifest(manifest_path)
    try:  # checked before any work, as every field the rebuild reads
        options = RolloutOptions.model_validate(man["rollout"]["options"])
    except ValueError:  # (pydantic's ValidationError is a ValueError)
        raise ExportError(f"{manifest_path}: its `rollout.options` is damaged; export the dataset again") from None
    packs_dir = Path(build_dir) / ".manifest-packs"
    damaged = (f"{manifest_path}: its `world` field is damaged (it must be the JSON text of an object with `spec` and "
               "`pack_yaml`, as `worldforge export` writes it); export the dataset again")
    try:
        resolved = json.loads(man["world"]) if isinstance(man["world"], str) else None
    except (json.JSONDecodeError, RecursionError):
        resolved = None
    if not (isinstance(resolved, dict) and isinstance(resolved.get("spec"), dict) and isinstance(resolved.get("pack_yaml"), dict)
            and all(isinstance(t, str) for t in resolved["pack_yaml"].values())):
        raise ExportError(damaged)
    for name in resolved["pack_yaml"]:  # pack names become file names here: a name, never a path
        if not (isinstance(name, str) and _PACK_NAME.fullmatch(name)):
            raise ExportError(f"{manifest_path}: pack name {str(name)[:60]!r} in its `world` field is not a pack name "
                              "(snake_case letters, digits and _); the manifest was altered, export the dataset again")
    spec = dict(resolved["spec"])
    packs_dir.mkdir(parents=True, exist_ok=True)
    for name, text in resolved["pack_yaml"].items():  # the pack files as written: their order is the generation order
        write_atomic(packs_dir / f"{name}.yaml", text)
    spec["packs"] = [str((packs_dir / f"{name}.yaml").resolve()) for name in resolved["pack_yaml"]]
    spec_file = packs_dir / "spec.yaml"
    write_atomic(spec_file, yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    world = load_world(spec_file)
    if world.spec.stages.render.backend != "template":
        raise ExportError(f"the dataset's pages were written by the {world.spec.stages.render.backend} backend; "
                          "rebuild them with `worldforge render` and its model, then serve the world folder")
    path = world_dir(Path(build_dir), world.spec.name)
    want = man["tasks_sha256"]
    tasks_file = tasks_dir(path) / TASKS_FILE
    if not (is_complete(path) and is_rendered(path) and tasks_file.is_file() and sha256_file(tasks_file) == want):
        ours = (path / MARK).is_file() and (path / MARK).read_text(encoding="utf-8", errors="replace").strip() == want
        if path.exists() and any(path.iterdir()) and not (ours or force):
            raise ExportError(f"{path} holds another world named {world.spec.name!r} (not this dataset's, and not made by "
                              "--from-manifest), and rebuilding would delete it with everything in it; give another "
                              "--build-dir, or --force to replace it")
        say(f"planning {world.spec.name} into {path}")
        plan_world(world, build_dir, force=True)
        write_atomic(path / MARK, want + "\n")  # made here, for this dataset: an interrupted rebuild may resume over it
        say("rendering its web")
        render_world(path, force=True)
        say("posing its tasks")
        generate_tasks(path, force=True)
        got = sha256_file(tasks_file)
        if got != want:
            raise ExportError(f"the rebuilt world's tasks differ from the dataset's (tasks.jsonl sha256 {got[:12]}, the manifest "
                              f"says {want[:12]}): the dataset was made by another worldforge version "
                              f"({man.get('packages', {}).get('worldforge', '?')}); install that version")
    else:
        say(f"{path} already holds this dataset's world")
    return path, options, man["seeds"]["perturbations"]
