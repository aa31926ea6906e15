"""A Streamable HTTP server built with the Python MCP SDK (PyPI `mcp`), for the tests.

Usage: sdk_server.py PORT. It serves one tool, `shout`, at /mcp. Like every server built this
way (Starlette routing), a POST to /mcp/ is answered with a 307 redirect to /mcp.
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-server")


@server.tool()
def shout(text: str) -> str:
    """Upper-cases text."""
    return text.upper()


server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
