"""A real MCP host of enterprise-managed authorization (SEP-990) against the gateway's
authorization server: the Python SDK's `IdentityAssertionOAuthProvider` takes the gateway's 401,
reads the configured issuer's metadata, and redeems an identity assertion grant (ID-JAG) at its
token endpoint (RFC 7523 jwt-bearer). Getting the grant is the host's own business, as the SDK
says: this script exchanges the user's ID token for one at the company's provider (RFC 8693).

Usage: python_id_jag_client.py MCP_URL ISSUER CLIENT_ID CLIENT_SECRET IDP_TOKEN_ENDPOINT
       IDP_CLIENT_ID IDP_CLIENT_SECRET ID_TOKEN
Prints {"tools": [...], "text": first text of fx__echo, "grants": how many grants it fetched,
"token_type": ...}.
"""

import asyncio
import sys

import httpx2
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from sdk_host import Memory, list_and_call


async def main(url, issuer, client_id, secret, idp_token, idp_client, idp_secret, id_token):
    fetched = []

    async def grant(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient() as http:
            r = await http.post(
                idp_token,
                auth=(idp_client, idp_secret),
                data={
                    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "audience": audience,
                    "resource": resource,
                    "subject_token": id_token,
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                },
            )
            body = r.json()
            if "access_token" not in body:
                raise SystemExit(f"the company's provider refused: {body}")
            fetched.append(body["access_token"])
            return body["access_token"]

    storage = Memory()
    auth = IdentityAssertionOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client_id,
        client_secret=secret,
        issuer=issuer,
        assertion_provider=grant,
    )
    await list_and_call(
        url,
        auth,
        "from an enterprise host",
        grants=lambda: len(fetched),
        token_type=lambda: storage.tokens.token_type if storage.tokens else None,
    )


asyncio.run(main(*sys.argv[1:9]))
