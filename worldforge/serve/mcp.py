"""The web tools over MCP (the `mcp` SDK's low-level server, streamable HTTP, stateless).

`web_search` and `web_extractor` are listed with the canonical schemas (their `parameters`
are the MCP `inputSchema`) and answer from the clean web, like `POST /tools/<name>`. A bad
argument is a tool result with `isError` set, so an agent reads the same error text it would
read in an episode.
"""

from __future__ import annotations

from ..rollout.env import TOOLS
from .service import EnvironmentService, ServiceError

MCP_TOOLS = [t for t in TOOLS if t["function"]["name"] in ("web_search", "web_extractor")]


def mcp_server(service: EnvironmentService):
    """An `mcp.server.Server` serving the web tools of `service`."""
    import mcp_types as types
    from mcp.server import Server

    from .. import __version__

    tools = [types.Tool(name=t["function"]["name"], description=t["function"]["description"],
                        input_schema=t["function"]["parameters"]) for t in MCP_TOOLS]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            text = service.tool(params.name, params.arguments or {})
            error = False
        except ServiceError as exc:
            text, error = f"Error: {exc.message}", True
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)

    return Server("worldforge", version=__version__, instructions="Search and open the pages of a fictional world's web.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def mcp_asgi(service: EnvironmentService):
    """(ASGI endpoint for /mcp, the session manager whose `run()` the app's lifespan enters)."""
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=mcp_server(service), json_response=True, stateless=True)
    return StreamableHTTPASGIApp(manager), manager
