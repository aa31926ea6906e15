"""What the Python SDK hosts without a browser share: tokens kept in memory, and one session
that lists the tools and calls `fx__echo`, printed as one JSON line."""

import json

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthToken


class Memory:
    """Token storage in memory (these hosts register nothing)."""

    def __init__(self):
        self.tokens = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return None

    async def set_client_info(self, info):
        pass


async def list_and_call(url, auth, message, **extra):
    """Lists the tools through `auth`, calls fx__echo with `message`, and prints
    {"tools", "text", "revision"} with each of `extra` (a name and a function, read after the
    call)."""
    http = create_mcp_http_client(auth=auth)
    # The SDK's default client: 2026-07-28 first (`server/discover`), the 2025 handshake otherwise.
    async with Client(streamable_http_client(url, http_client=http)) as client:
        tools = await client.list_tools()
        r = await client.call_tool("fx__echo", {"message": message})
        out = {
            "tools": [t.name for t in tools.tools],
            "text": r.content[0].text if r.content else "",
            "revision": client.protocol_version,
        }
        out.update({k: f() for k, f in extra.items()})
        print(json.dumps(out))
