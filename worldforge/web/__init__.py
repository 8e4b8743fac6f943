"""The simulated web of a world: the page plan, the template and vLLM page writers, the
render stage that stores pages with provenance, and the search engine with its tools.

`render_world(world_dir)` is the stage's entry point; `SearchEngine` serves the tools."""

from .search import TOOLS, SearchEngine
from .stage import RenderReport, render_world
from .store import is_rendered, read_report, require_rendered

__all__ = ["TOOLS", "RenderReport", "SearchEngine", "is_rendered", "read_report", "render_world", "require_rendered"]
