"""A real machine host against the gateway's authorization server: the Python SDK's
`ClientCredentialsOAuthProvider` takes the gateway's 401, finds the configured issuer through
the protected resource metadata, and gets a token with its client id and secret (the client
credentials grant), for itself, not for a user.

Usage: python_client_credentials.py MCP_URL ISSUER CLIENT_ID CLIENT_SECRET
Prints {"tools": [...], "text": first text of fx__echo, "refresh": whether a refresh token came}.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthToken


class Memory:
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


async def main(url, issuer, client_id, secret):
    storage = Memory()
    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        client_secret=secret,
        issuer=issuer,
    )
    http = create_mcp_http_client(auth=auth)
    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools = await client.list_tools()
        r = await client.call_tool("fx__echo", {"message": "from a machine"})
        print(
            json.dumps(
                {
                    "tools": [t.name for t in tools.tools],
                    "text": r.content[0].text if r.content else "",
                    "refresh": bool(storage.tokens and storage.tokens.refresh_token),
                }
            )
        )


asyncio.run(main(*sys.argv[1:5]))
