"""The HTTP server: a Starlette app over `EnvironmentService`, served by uvicorn.

    GET    /health                      liveness, open episodes
    GET    /tools                       the canonical tool schemas (as in SFT and RL rows)
    GET    /tasks                       task ids of the world
    POST   /episodes                    {"task_id", "seed"?, "sample"?} -> episode id, messages, tools
    POST   /episodes/{id}/step          one assistant turn: {"name", "arguments"} or {"content", "tool_calls"}
    GET    /episodes/{id}               status (done, reward once done)
    GET    /episodes/{id}/reward        the reward and WideSearch scores (409 until the episode ends)
    DELETE /episodes/{id}               close (an unfinished episode ends with reward 0)
    POST   /tools/web_search            the clean tools, outside episodes (Qwen-AgentWorld arguments)
    POST   /tools/web_extractor
    POST   /retrieve                    Search-R1's retrieval API (its own client's batches, thousands of queries)
    POST   /mcp                         the web tools and episodes over MCP (streamable HTTP, stateless)

Every refused request is a 4xx JSON body `{"error": "..."}`; nothing a client sends can stop the
server (an unexpected failure is a 500 with a message, and the server goes on). A client that
goes away mid-request is not an error: its request is dropped without a log entry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path

from ..rollout import TOOLS
from .service import RETRIEVE_SLICE, EnvironmentService, ServiceError, ServiceLimits, retrieve_response

_log = logging.getLogger(__name__)
_TOOLS_BODY = json.dumps({"tools": TOOLS}, ensure_ascii=False).encode()
RETRIEVE_MAX_BODY = 16 << 20  # /retrieve takes a whole Search-R1 batch: this, or --max-body when larger


def _json_response(data, status: int = 200):
    from starlette.responses import Response

    return Response(json.dumps(data, ensure_ascii=False), status_code=status, media_type="application/json")


def _error(status: int, message: str):
    return _json_response({"error": message, "status": status}, status)


async def _body(request, limit: int):
    """The request's JSON object, read at most `limit` bytes deep."""
    size = request.headers.get("content-length")
    if size is not None:
        if not size.isdigit():
            raise ServiceError(400, "Content-Length is not a number")
        if int(size) > limit:
            raise ServiceError(413, f"request body of {int(size):,} bytes; the limit is {limit:,}")
    chunks, n = [], 0
    async for chunk in request.stream():
        n += len(chunk)
        if n > limit:
            raise ServiceError(413, f"request body over the limit of {limit:,} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ServiceError(400, f"the body is not valid JSON ({str(exc).splitlines()[0][:120]})") from None
    if not isinstance(data, dict):
        raise ServiceError(422, f"the body must be a JSON object, got a JSON {type(data).__name__}")
    return data


def _endpoint(fn, body_limit: int | None, ok: int):
    """A route's endpoint around `fn(request[, body])`: the body read (at most `body_limit` bytes)
    when there is a limit, a coroutine awaited, the answer as JSON with status `ok`; a service
    error as its own status and message, any other failure a 500 that leaves the server up."""
    from starlette.requests import ClientDisconnect
    from starlette.responses import Response

    async def endpoint(request):
        try:
            if body_limit is not None:
                out = fn(request, await _body(request, body_limit))
            else:
                out = fn(request)
            if asyncio.iscoroutine(out):
                out = await out
            return _json_response(out, ok)
        except ServiceError as exc:
            return _error(exc.status, exc.message)
        except ClientDisconnect:  # the client went away mid-request: nobody reads an answer, nothing to log
            return Response(status_code=400)
        except Exception as exc:  # noqa: BLE001 - one request never takes the server down
            _log.exception("request %s %s failed", request.method, request.url.path)
            return _error(500, f"internal error ({type(exc).__name__}); the server is still up")
    return endpoint


async def _http_error(request, exc):
    hint = {404: f"no route {request.url.path[:200]}; see GET /tools, /tasks, POST /episodes",
            405: f"{request.method} is not allowed on {request.url.path[:200]}"
                 + ("; MCP here is stateless JSON over POST (no event stream to GET, no session to DELETE)"
                    if request.url.path == "/mcp" else "")}.get(exc.status_code, exc.detail)
    return _error(exc.status_code, hint)


async def _server_error(request, exc: Exception):
    return _error(500, f"internal error ({type(exc).__name__}); the server is still up")


def create_app(service: EnvironmentService, *, mcp: bool = True, view=None):
    """The ASGI app serving `service` (see the module docstring); with `view` (a
    `view.data.ViewData` over the same world), the browser view under /view/ too."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import Response
    from starlette.routing import Route

    limit = service.limits.max_body

    def handler(fn, with_body: bool = False, ok: int = 200, body_limit: int | None = None):
        return _endpoint(fn, (body_limit or limit) if with_body else None, ok)

    def tools(request):
        return Response(_TOOLS_BODY, media_type="application/json")

    def health(request):
        return {"status": "ok", "world": service.world_path.name, "tasks": len(service.tasks),
                "splits": list(service.splits or ()) or "all", "open_episodes": len(service.episodes), "max_episodes": service.limits.max_episodes,
                "episodes_created": service.created, "search_cache": {"hits": service.base.engine.cache_hits,
                                                                       "misses": service.base.engine.cache_misses}}

    def create(request, body):
        return service.create(body)

    def step(request, body):
        return service.step_async(request.path_params["eid"], body)  # (the handler awaits it)

    def status(request):
        return service.status(request.path_params["eid"])

    def reward(request):
        return service.reward(request.path_params["eid"])

    def close(request):
        return service.close_episode(request.path_params["eid"])

    def tool(request, body):
        return {"content": service.tool(request.path_params["name"], body)}

    async def retrieve(request, body):
        """`service.retrieve`, yielding to other requests after every RETRIEVE_SLICE seconds of
        searching: a batch of thousands of queries adds at most a slice to anyone's wait."""
        answers = []
        start = time.perf_counter()
        for answer in service.retrieve_each(body):
            answers.append(answer)
            if time.perf_counter() - start > RETRIEVE_SLICE:
                await asyncio.sleep(0)
                start = time.perf_counter()
        return retrieve_response(answers)

    routes = [
        Route("/health", handler(health), methods=["GET"]),
        Route("/tools", tools, methods=["GET"]),
        Route("/tasks", handler(lambda r: {"tasks": service.task_list()}), methods=["GET"]),
        Route("/episodes", handler(create, True, 201), methods=["POST"]),
        Route("/episodes/{eid}/step", handler(step, True), methods=["POST"]),
        Route("/episodes/{eid}/reward", handler(reward), methods=["GET"]),
        Route("/episodes/{eid}", handler(status), methods=["GET"]),
        Route("/episodes/{eid}", handler(close), methods=["DELETE"]),
        Route("/tools/{name}", handler(tool, True), methods=["POST"]),
        Route("/retrieve", handler(retrieve, True, body_limit=max(limit, RETRIEVE_MAX_BODY)), methods=["POST"]),
    ]
    if view is not None:
        from ..view import view_routes

        routes.extend(view_routes(view))
    manager = None
    if mcp:
        from .mcp import mcp_asgi

        endpoint, manager = mcp_asgi(service)
        # POST only: the server is stateless and answers in JSON, so there is no session to DELETE
        # and no server-to-client stream to GET (a GET stream was held open, never sent nor ended)
        routes.append(Route("/mcp", endpoint, methods=["POST"]))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if manager is None:
            yield
        else:
            async with manager.run():
                yield

    return Starlette(routes=routes, lifespan=lifespan, exception_handlers={HTTPException: _http_error, Exception: _server_error})


def serve(world_path: str | Path, *, host: str = "127.0.0.1", port: int = 8000, limits: ServiceLimits | None = None,
          seed: int | None = None, options=None, log_level: str = "warning", search_cache: int | None = None,
          export=None, splits: tuple[str, ...] | None = None) -> None:
    """Open a world and serve it until interrupted (the `worldforge serve` command), with the
    browser view under /view/ (`export`: the dataset it shows)."""
    import uvicorn

    from ..view import ViewData

    service = EnvironmentService(world_path, options, seed=seed, limits=limits, splits=splits)
    if search_cache is not None:
        service.base.engine.search_cache = search_cache
    view = ViewData(world_path, env=service.base, export=export)
    view.warm()
    try:
        uvicorn.run(create_app(service, view=view), host=host, port=port, log_level=log_level, access_log=False,
                    timeout_keep_alive=30, h11_max_incomplete_event_size=64 * 1024)
    finally:
        view.close()
        service.close()
