"""The memory tool set against the server it speaks for: `neotoma-mcp --tools
memory` and the reference MCP memory server from npm
(@modelcontextprotocol/server-memory), driven over stdio by the same client
(the official Python SDK) with the same calls, in one run.

At 500 and 5,000 entities (times BENCH_SCALE), grown on both with
create_entities batches of 100 (with 2 observations each), it times:
create_entities of one new entity, add_observations to one entity,
open_nodes of one name, search_nodes of a rare word, and read_graph (the
reference answers the whole graph; ours a page of 100 entities, the first
of ceil(N/100) pages, reported as well).

Prints one table per size: ours, the reference, the ratio. Asserts nothing
about time. Node comes from PATH (NEOTOMA_BENCH_NODE overrides it).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable

from common import gateway_bin, gateway_database, gateway_env, pct, table
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
SIZES = [max(20, int(n * SCALE)) for n in (500, 5_000)]
CALLS = max(20, int(100 * SCALE))
BATCH = 100
DATABASE = "neotoma_bench_tool_sets"
APP_ROLE = "neotoma_bench_mcp"
HERE = Path(__file__).resolve().parent
REFERENCE_JS = HERE / "node/node_modules/@modelcontextprotocol/server-memory/dist/index.js"


def entity(i: int) -> dict[str, Any]:
    return {"name": f"Person {i:06d}", "entityType": "person",
            "observations": [f"works on project {i % 97}", f"tag{i:06d}x"]}


def ours() -> StdioServerParameters:
    env = gateway_env(gateway_database(DATABASE, APP_ROLE))
    return StdioServerParameters(command=gateway_bin(), args=["--tools", "memory", "--user-id", str(uuid.uuid4())], env=env)


def reference(memory_file: Path) -> StdioServerParameters:
    if not REFERENCE_JS.exists():
        raise SystemExit(f"no {REFERENCE_JS}: run (cd benches/node && npm ci) or scripts/bench")
    node = os.environ.get("NEOTOMA_BENCH_NODE") or shutil.which("node") or "/usr/bin/node"
    return StdioServerParameters(command=node, args=[str(REFERENCE_JS)],
                                 env={**os.environ, "MEMORY_FILE_PATH": str(memory_file)})


async def call(c: Client, tool: str, args: dict[str, Any]) -> Any:
    r = await c.call_tool(tool, args)
    if r.is_error:
        raise RuntimeError(f"{tool} failed: {r.content[0].text}")
    return r.structured_content


async def timed(fn: Callable[[int], Awaitable[Any]], n: int) -> list[float]:
    await fn(-1)  # untimed: the client lists the tools on its first call
    out = []
    for i in range(n):
        t = time.perf_counter()
        await fn(i)
        out.append((time.perf_counter() - t) * 1000)
    return out


async def phases(c: Client, size: int, fresh: int) -> dict[str, list[float]]:
    rng = random.Random(size)
    picks = [rng.randrange(size) for _ in range(CALLS)]
    out = {}
    out["create_entities (1 new)"] = await timed(
        lambda i: call(c, "create_entities", {"entities": [entity(fresh + i + 1)]}), CALLS)
    out["add_observations (1)"] = await timed(
        lambda i: call(c, "add_observations", {"observations": [
            {"entityName": entity(picks[i])["name"], "contents": [f"seen at {size}/{i}"]}]}), CALLS)
    out["open_nodes (1 name)"] = await timed(
        lambda i: call(c, "open_nodes", {"names": [entity(picks[i])["name"]]}), CALLS)
    out["search_nodes (rare word)"] = await timed(
        lambda i: call(c, "search_nodes", {"query": f"tag{picks[i]:06d}x"}), CALLS)
    out["read_graph"] = await timed(lambda i: call(c, "read_graph", {}), max(5, CALLS // 10))
    return out


async def main() -> None:
    print(f"sizes {SIZES}, {CALLS} calls a phase")
    with tempfile.TemporaryDirectory() as tmp:
        async with Client(ours()) as a, Client(reference(Path(tmp) / "memory.jsonl")) as b:
            have = 0
            for size in SIZES:
                grow = []
                for c in (a, b):
                    t = time.perf_counter()
                    for first in range(have, size, BATCH):
                        await call(c, "create_entities", {"entities": [entity(i) for i in range(first, min(size, first + BATCH))]})
                    grow.append(time.perf_counter() - t)
                print(f"\n  grew to {size:,} entities: ours {grow[0]:.1f}s, reference {grow[1]:.1f}s")
                fresh = 10_000_000 + size * 1000
                mine, theirs = await phases(a, size, fresh), await phases(b, size, fresh)
                pages = len((await call(a, "read_graph", {}))["entities"])
                rows = [("call", "ours p50 ms", "reference p50 ms", "ours / reference")]
                for phase in mine:
                    o, r = pct(mine[phase], 50), pct(theirs[phase], 50)
                    rows.append((phase, f"{o:.2f}", f"{r:.2f}", f"{o / r:.2f}"))
                table(f"{size:,} entities (read_graph: ours answers {pages} of {size + CALLS:,} entities a page)", rows)
                have = size


if __name__ == "__main__":
    asyncio.run(main())
