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
from ..plumbing import read_json, sha256_file, write_atomic
from ..world.options import RolloutOptions
from ..world.pack import _NAME_RE

SERVE_EXTRA = ("starlette", "uvicorn", "mcp", "markdown_it")
_PACK_NAME = re.compile(_NAME_RE)  # a pack's `pack:` name, as packs are validated


def require_serve_extra() -> None:
    """Fail with an install hint when the server's packages are missing."""
    import importlib.util

    missing = [m for m in SERVE_EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise WorldforgeError(f"the server needs {', '.join(missing)}: pip install 'worldforge[serve]'")


def rebuild_from_manifest(manifest_path: str | Path, build_dir: str | Path = "build",
                          on_stage: Callable[[str], None] | None = None) -> tuple[Path, RolloutOptions, int]:
    """(world folder, rollout options, perturbation seed) of the dataset `manifest_path`
    describes, planning, rendering and posing its tasks under `build_dir` unless an identical
    world is already there."""
    import yaml

    from ..tasks import generate_tasks
    from ..tasks.stage import TASKS_FILE, tasks_dir
    from ..web import is_rendered, render_world
    from ..world.planner import plan_world
    from ..world.store import is_complete, world_dir
    from ..world.validate import load_world

    manifest_path = Path(manifest_path)
    say = on_stage or (lambda m: None)
    man = read_json(manifest_path, "give the manifest.json of a worldforge dataset (exports/<world>/<version>/manifest.json)")
    if not isinstance(man, dict) or "world" not in man or "tasks_sha256" not in man:
        raise ExportError(f"{manifest_path} holds no world to rebuild (a dataset exported by an older worldforge); "
                          "export it again with this version, or serve the world folder itself")
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
        say(f"planning {world.spec.name} into {path}")
        plan_world(world, build_dir, force=True)
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
    try:
        return path, RolloutOptions.model_validate(man["rollout"]["options"]), int(man["seeds"]["perturbations"])
    except (KeyError, TypeError, ValueError):  # (pydantic's ValidationError is a ValueError)
        raise ExportError(f"{manifest_path}: its `rollout.options` or `seeds.perturbations` is damaged; export the dataset "
                          "again") from None
