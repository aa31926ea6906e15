"""Drives the gateway with the official Python SDK client.

Usage: python_client.py URL MODE CALLS_JSON
MODE is "default" (2026-07-28 first, falls back) or "legacy" (initialize). CALLS_JSON is a list of
[tool, arguments]. Elicitations are accepted, every string field answered with "Ada" (and they
are counted). With MCP_BEARER_TOKEN set, every request carries `Authorization: Bearer` with it.
Prints {"version": negotiated revision, "tools": [...names], "results": [...first
text of each call], "elicitations": n}.
"""
import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

elicitations = 0


async def answer_elicitation(context, params):
    global elicitations
    elicitations += 1
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content = {k: "Ada" for k, v in props.items() if v.get("type") == "string"}
    return types.ElicitResult(action="accept", content=content)


async def main(url: str, mode: str, calls: list) -> None:
    kwargs = {} if mode == "default" else {"mode": mode}
    server = url
    token = os.environ.get("MCP_BEARER_TOKEN")
    if token:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        server = streamable_http_client(url, http_client=http)
    async with Client(server, elicitation_callback=answer_elicitation, **kwargs) as client:
        tools = await client.list_tools()
        results = []
        for name, args in calls:
            r = await client.call_tool(name, args)
            if r.is_error:
                raise SystemExit(f"{name} failed: {r.content}")
            results.append(r.content[0].text if r.content else "")
        print(
            json.dumps(
                {
                    "version": client.protocol_version,
                    "tools": [t.name for t in tools.tools],
                    "results": results,
                    "elicitations": elicitations,
                }
            )
        )


asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
