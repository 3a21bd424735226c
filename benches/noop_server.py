"""The harness's floor for benches/mcp_stdio.py: an MCP server over stdio
(the official Python SDK) with one tool, `noop`, that answers "ok". A call to
it costs the client, the transport and the SDK's dispatch, nothing else."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("noop", log_level="WARNING")


@server.tool()
def noop() -> str:
    """Does nothing; answers "ok"."""
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
