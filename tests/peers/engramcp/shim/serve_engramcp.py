"""The control: the vendored EngraMCP server (upstream/src, see COMMIT) served
over stdio, as its own process.

At the vendored commit `engramcp/server.py` has no entry point of its own:
its tests call `configure(redis_url=...)` and then talk to the `mcp` object.
This does the same (nothing else is set: default audit and retrieval
configuration, no consolidation, as in upstream's `mcp_client` fixture) and
then serves `mcp` over stdio, so that a real MCP client can reach it.

Environment: ENGRAMCP_REDIS_URL (redis://127.0.0.1:PORT/0 of the harness's
own redis-server).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "upstream" / "src"))

from engramcp.server import configure  # noqa: E402
from engramcp.server import mcp  # noqa: E402


async def main() -> None:
    await configure(redis_url=os.environ["ENGRAMCP_REDIS_URL"])
    await mcp.run_async(transport="stdio", show_banner=False)


if __name__ == "__main__":
    asyncio.run(main())
