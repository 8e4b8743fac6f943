"""The web folder of a world, `<world>/web/`: where the render stage puts its pages, index and
report, and how later stages find out whether a world is rendered."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DamagedStateError, NotRenderedError
from ..plumbing import read_json, truncation
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


def rerender(world_path: Path) -> str:
    return f"render it again with `worldforge render {world_path} --force` (or `worldforge run SPEC`)"


def require_rendered(world_path: str | Path) -> Path:
    """The web folder of a rendered world, or a clear error saying what to run. The page
    database must be the one the render wrote (its size and digest are in render.json)."""
    path = Path(world_path)
    open_world(path)  # a missing or unplanned world gets the planner's message
    if not is_rendered(path):
        hint = " (an interrupted render can be resumed with the same command)" if (path / PARTIAL_DIR).exists() else ""
        if (web_dir(path) / REPORT_FILE).is_file():
            read_json(web_dir(path) / REPORT_FILE, rerender(path))  # a damaged report says so
        raise NotRenderedError(f"{path} has no rendered pages yet; run `worldforge render {path}`{hint}")
    web = web_dir(path)
    recorded = read_json(web / REPORT_FILE, rerender(path)).get("files", {})
    cut = truncation(web / PAGES_DB, recorded.get(PAGES_DB, {}))
    if cut:
        raise DamagedStateError(f"{web / PAGES_DB} is damaged ({cut}); {rerender(path)}")
    return web


def read_report(world_path: str | Path) -> dict:
    return read_json(require_rendered(world_path) / REPORT_FILE, rerender(Path(world_path)))
