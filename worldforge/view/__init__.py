"""The browser view of a world: its simulated web as web pages, its tasks, trajectories and export.

`worldforge view WORLD_DIR` serves it alone; `worldforge serve WORLD_DIR` serves it under
`/view/` beside the environment. Everything is read-only and rendered on the server: plain HTML,
one stylesheet and one small script shipped in the package (no build step, no CDN).

- `data.ViewData`: what the view reads from a world folder (pages through the search engine the
  tools use, page provenance, facts, tasks, trajectories, reports, the export).
- `markdown`: a page's Markdown as HTML, links kept inside the view, each sentence or cell a block
  that provenance can mark.
- `routes`: the Starlette routes and their pages.
"""

from .data import ViewData
from .routes import create_view_app, view_routes

__all__ = [
    "ViewData", "create_view_app", "view_routes",
]
