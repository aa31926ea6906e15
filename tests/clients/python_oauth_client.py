"""A real MCP host's OAuth flow against the gateway's authorization server: the Python SDK's
`OAuthClientProvider` discovers the server from the gateway's 401, registers itself (RFC 7591),
and hands the sign-in URL to its redirect handler. This script is the user's browser there: the
sign-in form with a personal access token, then the consent form, with the pages' cookie.

Usage: python_oauth_client.py MCP_URL PAT
Prints {"tools": [...], "text": first text of fx__echo, "client_id": ..., "iss": ..., "revision":
the protocol revision the session settled on}.
"""

import asyncio
import json
import re
import sys
import urllib.parse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT = "http://127.0.0.1:33419/callback"


class Memory:
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info: OAuthClientInformationFull):
        self.client = info


def hidden(html: str, name: str) -> str:
    m = re.search(rf'name="{name}" value="([^"]*)"', html)
    if not m:
        raise SystemExit(f"no {name} field in {html[:300]}")
    return m.group(1).replace("&quot;", '"').replace("&amp;", "&")


class Browser:
    def __init__(self, pat: str):
        self.pat = pat
        self.back = None

    async def open(self, url: str) -> None:
        origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(url))
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            page = await http.get(url)
            signed_in = await http.post(
                origin + "/oauth/authorize",
                data={"ticket": hidden(page.text, "ticket"), "pat": self.pat},
            )
            back = await http.post(
                origin + "/oauth/consent",
                data={"ticket": hidden(signed_in.text, "ticket"), "decision": "allow"},
            )
            self.back = urllib.parse.urlsplit(back.headers["location"])

    async def callback(self) -> AuthorizationCodeResult:
        q = dict(urllib.parse.parse_qsl(self.back.query))
        return AuthorizationCodeResult(code=q["code"], state=q.get("state"), iss=q.get("iss"))


async def main(url: str, pat: str) -> None:
    storage = Memory()
    browser = Browser(pat)
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK host",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    http = create_mcp_http_client(auth=auth)
    # The SDK's default: 2026-07-28 first (`server/discover`), the 2025 handshake otherwise.
    async with Client(streamable_http_client(url, http_client=http)) as client:
        tools = await client.list_tools()
        r = await client.call_tool("fx__echo", {"message": "from python"})
        q = dict(urllib.parse.parse_qsl(browser.back.query))
        print(
            json.dumps(
                {
                    "tools": [t.name for t in tools.tools],
                    "text": r.content[0].text if r.content else "",
                    "client_id": storage.client.client_id if storage.client else None,
                    "iss": q.get("iss"),
                    "revision": client.protocol_version,
                }
            )
        )


asyncio.run(main(sys.argv[1], sys.argv[2]))
