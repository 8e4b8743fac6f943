from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "worlds" / "demo.yaml"

SMALL_COUNTS = {
    "country": 4, "person": 300, "company": 60, "university": 8, "researcher": 80,
    "award": 8, "publication": 80, "club": 16, "player": 120,
}


def write_spec(tmp: Path, name: str = "small", seed: int = 11, counts: dict | None = None, **extra) -> Path:
    """A small world over all four shipped packs, written to `tmp/<name>.yaml`."""
    spec = {
        "name": name, "seed": seed, "as_of": "2025-06-30", "time_span": {"start": "1850-01-01"},
        "packs": ["geography", "organisations", "academia", "sport"],
        "counts": dict(SMALL_COUNTS if counts is None else counts),
    }
    spec.update(extra)
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def demo_world(tmp_path_factory):
    """The shipped demo world, planned once per test session."""
    from worldforge.planner import plan_world
    from worldforge.spec import load_world

    build = tmp_path_factory.mktemp("build")
    return plan_world(load_world(DEMO), build)


def copy_world(info, dest: Path) -> Path:
    """A private copy of a planned world (without its rendered web), for tests that write to it."""
    import shutil

    shutil.copytree(info.path, dest, ignore=shutil.ignore_patterns("web", ".web.*"))
    return dest


@pytest.fixture(scope="session")
def demo_web(demo_world, tmp_path_factory):
    """The demo world rendered once with the template backend: (world path, report)."""
    from worldforge.render import render_world

    path = copy_world(demo_world, tmp_path_factory.mktemp("render") / "demo")
    return path, render_world(path)
