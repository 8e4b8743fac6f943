"""The environment over MCP (the `mcp` SDK's low-level server, streamable HTTP, stateless, JSON).

Two kinds of tools:

- the web: `web_search` and `web_extractor`, listed with the canonical schemas (their
  `parameters` are the MCP `inputSchema`), answering from the clean web like
  `POST /tools/<name>`;
- episodes, as over HTTP: `start_episode` (a task's episode: its id, the system and user
  messages), `episode_step` (one assistant turn of tool calls, answered with the perturbed web
  the rollouts meet: observations, perturbations, done, the reward once done),
  `episode_reward` and `end_episode`, and `list_tasks`. Their results are JSON text, also given
  as MCP structured content.

A bad argument is a tool result with `isError` set whose text starts with `Error:`, so an
agent reads the same error text it would read in an episode. The server holds no MCP session:
episodes live in the environment service, under its limits (open episodes, idle expiry).
"""

from __future__ import annotations

import asyncio
import json

from ..rollout import TOOLS
from .service import EnvironmentService, ServiceError

MCP_TOOLS = [t for t in TOOLS if t["function"]["name"] in ("web_search", "web_extractor")]
MAX_LISTED_TASKS = 1000

_CALL = {"type": "object", "properties": {
    "name": {"type": "string", "description": "web_search, web_extractor or final_answer"},
    "arguments": {"type": "object", "description": "the tool's arguments, as its schema (GET /tools) gives them"}},
    "required": ["name", "arguments"]}
_EPISODE_ID = {"type": "string", "description": "the id start_episode returned"}

EPISODE_TOOLS = [
    {"name": "list_tasks", "description": "The tasks of this world: id, kind (table or multihop) and entity type.",
     "input_schema": {"type": "object", "properties": {
         "kind": {"type": "string", "description": "only tasks of this kind (table or multihop)"},
         "limit": {"type": "integer", "description": f"at most this many (default and most: {MAX_LISTED_TASKS})"}}}},
    {"name": "start_episode", "description": "Start an episode of a task: returns its episode_id and the system and user "
     "messages the agent starts from. Its tool calls go through episode_step, in the web the rollouts meet "
     "(perturbations included); final_answer ends it with its reward.",
     "input_schema": {"type": "object", "properties": {
         "task_id": {"type": "string", "description": "a task id (list_tasks)"},
         "seed": {"type": "integer", "description": "the perturbation seed (default: the world's)"},
         "sample": {"type": "integer", "description": "which of the task's samples (default 0): another sample meets other perturbations"},
         "max_turns": {"type": "integer", "description": "the turn limit (default: the world's)"}},
         "required": ["task_id"]}},
    {"name": "episode_step", "description": "One assistant turn of an episode: its tool calls, run in order. Returns the "
     "tool results, the perturbation each met, done, and the reward once final_answer was called.",
     "input_schema": {"type": "object", "properties": {
         "episode_id": _EPISODE_ID,
         "tool_calls": {"type": "array", "items": _CALL, "description": "the turn's calls"},
         "content": {"type": "string", "description": "the assistant's text of the turn (a turn without calls is a plain-text answer)"}},
         "required": ["episode_id"]}},
    {"name": "episode_reward", "description": "The reward and WideSearch scores of a finished episode.",
     "input_schema": {"type": "object", "properties": {"episode_id": _EPISODE_ID}, "required": ["episode_id"]}},
    {"name": "end_episode", "description": "Close an episode (an unanswered one ends with reward 0) and return its final status.",
     "input_schema": {"type": "object", "properties": {"episode_id": _EPISODE_ID}, "required": ["episode_id"]}},
]


def _episode_id(args: dict) -> str:
    eid = args.get("episode_id")
    if not isinstance(eid, str) or not eid:
        raise ServiceError(422, "give the episode as {\"episode_id\": \"...\"} (start_episode returns it)")
    return eid


def episode_call(service: EnvironmentService, name: str, args: dict) -> dict:
    """An episode tool's result (see the module docstring); a ServiceError says why not."""
    if name == "list_tasks":
        kind, limit = args.get("kind"), args.get("limit", MAX_LISTED_TASKS)
        if kind is not None and not isinstance(kind, str):
            raise ServiceError(422, "'kind' must be a string: table or multihop")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LISTED_TASKS:
            raise ServiceError(422, f"'limit' must be a whole number from 1 to {MAX_LISTED_TASKS:,}")
        tasks = [t for t in service.task_list() if kind is None or t["kind"] == kind]
        return {"tasks": tasks[:limit], "total": len(tasks)}
    if name == "start_episode":
        out = service.create(args)
        out.pop("tools", None)  # the client lists them (tools/list); the same schemas as GET /tools
        return out
    if name == "episode_step":  # a coroutine: the answer is scored off the event loop (the caller awaits it)
        return service.step_async(_episode_id(args), {k: v for k, v in args.items() if k != "episode_id"})
    if name == "episode_reward":
        return service.reward(_episode_id(args))
    if name == "end_episode":
        return service.close_episode(_episode_id(args))
    raise ServiceError(404, f"no tool {str(name)[:80]!r}; the tools are "
                            f"{', '.join([t['function']['name'] for t in MCP_TOOLS] + [t['name'] for t in EPISODE_TOOLS])}")


def mcp_server(service: EnvironmentService):
    """An `mcp.server.Server` serving the web tools and the episodes of `service`."""
    import mcp_types as types
    from mcp.server import Server

    from .. import __version__

    tools = [types.Tool(name=t["function"]["name"], description=t["function"]["description"],
                        input_schema=t["function"]["parameters"]) for t in MCP_TOOLS]
    tools += [types.Tool(**t) for t in EPISODE_TOOLS]
    web = {t["function"]["name"] for t in MCP_TOOLS}

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        try:
            if params.name in web:
                return types.CallToolResult(content=[types.TextContent(text=service.tool(params.name, args))])
            out = episode_call(service, params.name, args)
            if asyncio.iscoroutine(out):
                out = await out
        except ServiceError as exc:
            return types.CallToolResult(content=[types.TextContent(text=f"Error: {exc.message}")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(out, ensure_ascii=False))], structured_content=out)

    return Server("worldforge", version=__version__,
                  instructions="Search and open the pages of a fictional world's web; run its tasks as episodes with a reward.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def mcp_asgi(service: EnvironmentService):
    """(ASGI endpoint for /mcp, the session manager whose `run()` the app's lifespan enters)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=mcp_server(service), json_response=True, stateless=True)
    return StreamableHTTPASGIApp(manager), manager
