"""Scale-out (issue 42, docs/scale-out.md): the same MCP workload over stdio,
in one run, against one private cluster (`neotoma-mcp`) and against a
router with two partitions (`neotoma-mcp --partitions 2`), all on this
machine. The gateway's role is an ordinary one (row level security applies
on every server). Goal: the router adds at most 0.5 ms p50 per call.

The router's hop is one PL/Proxy call per action: the router's backend
connects to the partition once and keeps the connection, then each call is
one more round trip on a Unix socket and a plan of `neotoma.routed` there.
Throughput with two partitions cannot double on a 2-core machine where
the gateways, the router and both partitions share the cores: it is
printed next to one server's, with each cluster's CPU time per call (read
from /proc), which says what a machine per partition would give.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from common import gateway_bin, goal, new_user, pct, table
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
CALLS = max(30, int(200 * SCALE))
STORED = max(20, int(200 * SCALE))
USERS = 4  # spread over the partitions by their hash
THROUGHPUT_S = max(3.0, 10 * SCALE)


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

            async def timed(label: str, tool: str, make: Callable[[int], dict]) -> None:
                await call(c, tool, make(0))
                for i in range(CALLS):
                    t = loop.time()
                    await call(c, tool, make(i))
                    out[label].append((loop.time() - t) * 1000)

            await timed("store", "store", lambda i: {"entities": [{"entity_type": "note", "title": f"timed {i} {user[:8]}"}]})
            await timed("retrieve_entity_snapshot", "retrieve_entity_snapshot", lambda i: {"entity_id": ids[i % len(ids)]})
            await timed("retrieve_entities, search", "retrieve_entities",
                        lambda i: {"search": f"plan {i % 17}", "search_mode": "lexical", "limit": 10})
    return out


def cpu_seconds(pgdata: Path) -> float:
    """CPU time (user + system) the cluster's postmaster and its children
    have used so far."""
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(proc.name) == postmaster or int(fields[1]) == postmaster:
            total += int(fields[11]) + int(fields[12])
    return total / tick


async def throughput(args: list[str], users: list[str], clusters: dict[str, Path]) -> tuple[float, dict[str, float]]:
    """All users' clients at once (a gateway each), reading snapshots for
    THROUGHPUT_S: calls per second, and each cluster's CPU milliseconds per
    call."""
    counts = [0] * len(users)
    ready = asyncio.Event()
    started = 0

    async def client(k: int, user: str) -> None:
        nonlocal started
        async with Client(params(args, user)) as c:
            stored = await call(c, "store", {"entities": [{"entity_type": "note", "title": f"read by {user[:8]}"}]})
            entity = stored["entities"][0]["entity_id"]
            started += 1
            if started == len(users):
                ready.set()
            await ready.wait()
            end = asyncio.get_running_loop().time() + THROUGHPUT_S
            while asyncio.get_running_loop().time() < end:
                await call(c, "retrieve_entity_snapshot", {"entity_id": entity})
                counts[k] += 1

    async def measured() -> dict[str, float]:
        await ready.wait()
        before = {name: cpu_seconds(d) for name, d in clusters.items()}
        await asyncio.sleep(THROUGHPUT_S)
        return {name: cpu_seconds(d) - before[name] for name, d in clusters.items()}

    *_, cpu = await asyncio.gather(*(client(k, u) for k, u in enumerate(users)), measured())
    calls = sum(counts)
    return calls / THROUGHPUT_S, {name: 1000 * seconds / max(1, calls) for name, seconds in cpu.items()}


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
        one_rate, one_cpu = asyncio.run(throughput(one, users, {"server": base / "one" / "pgdata"}))
        parts = {"router": base / "routed" / "router" / "pgdata",
                 "partition 0": base / "routed" / "partition-0" / "pgdata",
                 "partition 1": base / "routed" / "partition-1" / "pgdata"}  # fmt: skip
        routed_rate, routed_cpu = asyncio.run(throughput(routed, users, parts))
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
    cpu = lambda d: ", ".join(f"{name} {ms:.2f}" for name, ms in d.items())  # noqa: E731
    table(f"Throughput: {USERS} clients at once reading snapshots for {THROUGHPUT_S:.0f} s (2 cores for everything)", [
        ("layout", "calls/s", "CPU ms per call, by cluster"),
        ("one server", f"{one_rate:.0f}", cpu(one_cpu)),
        ("router + 2 partitions", f"{routed_rate:.0f}", cpu(routed_cpu)),
    ])
    # With a core per cluster, each one's CPU per call (of all the calls)
    # bounds the rate: the busiest is the limit (routers hold no user data,
    # so more of them can be added).
    bounds = {name: 1000 / ms for name, ms in routed_cpu.items() if ms > 0}
    print("  with a core each, calls/s each cluster could carry: "
          + ", ".join(f"{name} {rate:,.0f}" for name, rate in bounds.items())
          + f" (one server: {1000 / max(one_cpu['server'], 1e-9):,.0f})")


if __name__ == "__main__":
    main()
