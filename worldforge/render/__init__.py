"""The render stage: a world's pages (template or vLLM backend) with provenance, and their index.

`render_world(world_dir)` is the one public entry point; see `stage.py` for the layout."""

from .stage import RenderReport, is_rendered, read_report, render_world, require_rendered

__all__ = ["RenderReport", "is_rendered", "read_report", "render_world", "require_rendered"]
