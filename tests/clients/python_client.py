"""Drives the gateway with the official Python SDK client.

Usage: python_client.py URL MODE CALLS_JSON
MODE is "default" (2026-07-28 first, falls back) or "legacy" (initialize). CALLS_JSON is a list of
[tool, arguments]. Prints {"tools": [...names], "results": [...first text of each call]}.
"""
import asyncio
import json
import sys

from mcp import Client


async def main(url: str, mode: str, calls: list) -> None:
    kwargs = {} if mode == "default" else {"mode": mode}
    async with Client(url, **kwargs) as client:
        tools = await client.list_tools()
        results = []
        for name, args in calls:
            r = await client.call_tool(name, args)
            if r.is_error:
                raise SystemExit(f"{name} failed: {r.content}")
            results.append(r.content[0].text if r.content else "")
        print(json.dumps({"tools": [t.name for t in tools.tools], "results": results}))


asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
