"""Scale-out (issue 42, docs/scale-out.md): the same MCP workload over stdio,
in one run, against one private cluster (`neotoma-mcp`) and against a
router with two partitions (`neotoma-mcp --partitions 2`), all on this
machine. The gateway's role is an ordinary one (row level security applies
on every server). Goal: the router adds at most 0.5 ms p50 per call.

The router's hop is one PL/Proxy call per action: the router's backend
connects to the partition once and keeps the connection, then each call is
one more round trip on a Unix socket and a plan of `neotoma.routed` there.
(Throughput with two partitions cannot double on a 2-core machine where
the gateway, the router and both partitions share the cores: not measured
here yet.)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import gateway_bin, goal, new_user, pct, table
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
CALLS = max(30, int(200 * SCALE))
STORED = max(20, int(200 * SCALE))
USERS = 4  # spread over the partitions by their hash


def layout_args(data: Path, port: int, partitions: int) -> list[str]:
    args = ["--data-dir", str(data), "--pg-port", str(port)]
    return args + (["--partitions", str(partitions)] if partitions else [])


def params(args: list[str], user: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    env["NEOTOMA_LOG"] = "warn"
    limits = [a for action in ("store", "retrieve_entities", "retrieve_entity_snapshot")
              for a in ("--rate-limit", f"{action}=0")]  # fmt: skip
    return StdioServerParameters(command=gateway_bin(), args=[*args, "--user-id", user, *limits], env=env)


async def call(client: Client, tool: str, args: dict) -> dict:
    r = await client.call_tool(tool, args)
    if r.is_error:
        raise RuntimeError(f"{tool} failed: {r.content[0].text if r.content else r}")
    return r.structured_content


async def workload(args: list[str], users: list[str]) -> dict[str, list[float]]:
    """Per user: STORED notes, then CALLS of each timed operation; the
    latencies of all users together."""
    loop = asyncio.get_running_loop()
    out: dict[str, list[float]] = {"store": [], "retrieve_entity_snapshot": [], "retrieve_entities, search": []}
    for user in users:
        async with Client(params(args, user)) as c:
            ids = []
            for i in range(STORED):
                stored = await call(c, "store", {"entities": [{"entity_type": "note", "title": f"note {i} of {user[:8]}",
                                                               "content": f"harbour plan {i % 17} for {user[:8]}"}]})  # fmt: skip
                ids.append(stored["entities"][0]["entity_id"])

            async def timed(tool: str, make: object) -> None:
                await call(c, tool, make(0))  # type: ignore[operator]
                for i in range(CALLS):
                    t = loop.time()
                    await call(c, tool, make(i))  # type: ignore[operator]
                    out[label].append((loop.time() - t) * 1000)

            label = "store"
            await timed("store", lambda i: {"entities": [{"entity_type": "note", "title": f"timed {i} {user[:8]}"}]})
            label = "retrieve_entity_snapshot"
            await timed("retrieve_entity_snapshot", lambda i: {"entity_id": ids[i % len(ids)]})
            label = "retrieve_entities, search"
            await timed("retrieve_entities", lambda i: {"search": f"plan {i % 17}", "search_mode": "lexical", "limit": 10})
    return out


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="neotoma-bench-scale-out-"))
    base.chmod(0o755)  # the clusters' OS user (postgres, under root) reaches it
    one = layout_args(base / "one", 56400, 0)
    routed = layout_args(base / "routed", 56410, 2)
    users = [new_user() for _ in range(USERS)]
    print(f"  {USERS} users, {STORED} notes each, {CALLS} timed calls of each operation per user")
    try:
        direct = asyncio.run(workload(one, users))
        through = asyncio.run(workload(routed, users))
    finally:
        for args in (one, routed):
            stop = [gateway_bin(), "cluster", "stop", *args]
            subprocess.run(stop, capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)
    rows = [("operation", "one server p50", "router + 2 p50", "added", "goal", "")]
    for op in direct:
        a, b = pct(direct[op], 50), pct(through[op], 50)
        rows.append((op, f"{a:.2f} ms", f"{b:.2f} ms", f"{b - a:+.2f} ms", "≤ +0.5 ms", goal(b - a <= 0.5)))
    table("MCP over stdio: one server against a router with two partitions", rows)


if __name__ == "__main__":
    main()
