"""A real machine host against the gateway's authorization server: the Python SDK's
`ClientCredentialsOAuthProvider` takes the gateway's 401, finds the configured issuer through
the protected resource metadata, and gets a token with its client id and secret (the client
credentials grant), for itself, not for a user.

Usage: python_client_credentials.py MCP_URL ISSUER CLIENT_ID CLIENT_SECRET
Prints {"tools": [...], "text": first text of fx__echo, "refresh": whether a refresh token came}.
"""

import asyncio
import sys

from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from sdk_host import Memory, list_and_call


async def main(url, issuer, client_id, secret):
    storage = Memory()
    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        client_secret=secret,
        issuer=issuer,
    )
    await list_and_call(
        url,
        auth,
        "from a machine",
        refresh=lambda: bool(storage.tokens and storage.tokens.refresh_token),
    )


asyncio.run(main(*sys.argv[1:5]))
