"""The environment server and trainer integrations.

- `service.EnvironmentService`: episodes (create, step, reward, close) over one world, with
  limits and expiry, plus the clean tools and Search-R1 retrieval; no HTTP in it.
- `app.create_app` / `app.serve`: the HTTP server (Starlette on uvicorn) and MCP endpoint.
- `env.WebSearchEnv`: a framework-neutral reset/step/reward environment, over HTTP or in-process.
- `trl.WorldforgeToolEnv`: a TRL GRPO `environment_factory` class.
- `verl`: verl tool classes and an agent loop that stops at `final_answer` (imports verl).

Needs the `serve` extra (`pip install 'worldforge[serve]'`).
"""

from .app import serve
from .build import rebuild_from_manifest, require_serve_extra
from .service import EnvironmentService, ServiceError, ServiceLimits

__all__ = [
    "EnvironmentService", "ServiceError", "ServiceLimits", "rebuild_from_manifest", "require_serve_extra",
    "serve",
]
