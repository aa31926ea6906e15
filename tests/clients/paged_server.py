"""A stdio server built with the Python MCP SDK's low-level `Server` whose tool list comes in
pages, for the tests.

Usage: paged_server.py TOOLS PAGE. It serves TOOLS tools `t00`, `t01`, ... in pages of PAGE
(`nextCursor` is the index of the next page's first tool); calling one answers with its name.
"""

import asyncio
import sys

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS, PAGE = int(sys.argv[1]), int(sys.argv[2])


async def list_tools(ctx, params):
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = min(start + PAGE, TOOLS)
    tools = [
        types.Tool(name=f"t{i:02}", description=f"Tool number {i}.", input_schema={"type": "object"})
        for i in range(start, end)
    ]
    return types.ListToolsResult(tools=tools, next_cursor=str(end) if end < TOOLS else None)


async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {params.name}")])


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


asyncio.run(main())
