"""The web folder of a world, `<world>/web/`: where the render stage puts its pages, index and
report, and how later stages find out whether a world is rendered."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import NotRenderedError
from ..world.store import open_world

WEB_DIR = "web"
PARTIAL_DIR = ".web.partial"
PAGES_DB = "pages.duckdb"
REPORT_FILE = "render.json"


def web_dir(world_path: Path) -> Path:
    return Path(world_path) / WEB_DIR


def is_rendered(world_path: Path) -> bool:
    f = web_dir(world_path) / REPORT_FILE
    try:
        return json.loads(f.read_text()).get("status") == "complete"
    except (OSError, ValueError):
        return False


def require_rendered(world_path: str | Path) -> Path:
    """The web folder of a rendered world, or a clear error saying what to run."""
    path = Path(world_path)
    open_world(path)  # a missing or unplanned world gets the planner's message
    if not is_rendered(path):
        hint = " (an interrupted render can be resumed with the same command)" if (path / PARTIAL_DIR).exists() else ""
        raise NotRenderedError(f"{path} has no rendered pages yet; run `worldforge render {path}`{hint}")
    return web_dir(path)


def read_report(world_path: str | Path) -> dict:
    return json.loads((require_rendered(world_path) / REPORT_FILE).read_text())
