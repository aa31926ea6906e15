"""A real machine host against the gateway's authorization server: the Python SDK's
`ClientCredentialsOAuthProvider` takes the gateway's 401, finds the configured issuer through
the protected resource metadata, and gets a token with its client id and secret (the client
credentials grant), for itself, not for a user.

With CLIENT_SECRET `key:PATH` it signs its assertions with the private key at PATH instead
(`PrivateKeyJWTOAuthProvider`, ES256, private_key_jwt).

Usage: python_client_credentials.py MCP_URL ISSUER CLIENT_ID CLIENT_SECRET
Prints {"tools": [...], "text": first text of fx__echo, "refresh": whether a refresh token came}.
"""

import asyncio
import sys

from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from sdk_host import Memory, list_and_call


async def main(url, issuer, client_id, secret):
    storage = Memory()
    if secret.startswith("key:"):
        with open(secret[4:]) as f:
            signing = SignedJWTParameters(
                issuer=client_id, subject=client_id, signing_key=f.read(), signing_algorithm="ES256"
            )
        auth = PrivateKeyJWTOAuthProvider(
            server_url=url,
            storage=storage,
            client_id=client_id,
            assertion_provider=signing.create_assertion_provider(),
            issuer=issuer,
        )
    else:
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
        f"from a machine ({client_id})",
        refresh=lambda: bool(storage.tokens and storage.tokens.refresh_token),
    )


asyncio.run(main(*sys.argv[1:5]))
