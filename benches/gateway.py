"""Benchmark of the MCP gateway's overhead: the same action (a snapshot
read, and a small store) called N times through MCP over Streamable HTTP (the
official Python SDK as client) and directly as SQL (psycopg), in the same
run, against the same database. Prints both and the ratio."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx2 as httpx
import psycopg
from common import admin_dsn, fresh_database, pct, summary, table
from mcp import Client

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
N = max(50, int(1000 * SCALE))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def mcp_latencies(url: str, calls: list[tuple[str, dict]]) -> list[float]:
    out = []
    async with Client(url) as client:
        await client.call_tool(*calls[0])  # warm up the session and plans
        for name, args in calls:
            t = time.perf_counter()
            r = await client.call_tool(name, args)
            out.append((time.perf_counter() - t) * 1000)
            assert not r.is_error, r.content[0].text
    return out


def main() -> None:
    dsn = fresh_database("neotoma_bench_gateway")
    user = str(uuid.uuid4())
    with psycopg.connect(dsn, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'neotoma_bench'").fetchone():
            conn.execute("CREATE ROLE neotoma_bench LOGIN")
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        stored = conn.execute(
            "SELECT neotoma.store(%s::jsonb)",
            (json.dumps({"entities": [{"entity_type": "person", "name": f"P{i}", "email": f"p{i}@x.example"} for i in range(100)]}),),
        ).fetchone()[0]
    ids = [e["entity_id"] for e in stored["entities"]]
    binary = os.environ.get("NEOTOMA_MCP_BIN") or str(Path(__file__).resolve().parents[1] / "target/release/neotoma-mcp")
    port = free_port()
    app_dsn = f"{admin_dsn('neotoma_bench_gateway').replace('user=postgres', 'user=neotoma_bench')}"
    env = {**os.environ, "DATABASE_URL": app_dsn, "NEOTOMA_LOG": "warn"}
    proc = subprocess.Popen(
        [binary, "--http", f"127.0.0.1:{port}", "--no-auth", "--user-id", user, "--rate-limit", "store=0", "--rate-limit", "retrieve_entities=0"],
        env=env, stdout=subprocess.DEVNULL, stderr=sys.stderr,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        reads = [("retrieve_entity_snapshot", {"entity_id": ids[i % len(ids)]}) for i in range(N)]
        writes = [("store", {"entities": [{"entity_type": "note", "title": f"n{i}", "content": f"bench {i}"}]}) for i in range(N // 2)]
        mcp_reads = asyncio.run(mcp_latencies(f"http://127.0.0.1:{port}/mcp", reads))
        mcp_writes = asyncio.run(mcp_latencies(f"http://127.0.0.1:{port}/mcp", writes))
        with psycopg.connect(app_dsn, autocommit=True) as conn:
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))

            def sql(name: str, args: dict) -> float:
                t = time.perf_counter()
                conn.execute(f"SELECT neotoma.{name}(%s::jsonb)", (json.dumps(args),)).fetchone()
                return (time.perf_counter() - t) * 1000

            sql("retrieve_entity_snapshot", reads[0][1])
            sql_reads = [sql(n, a) for n, a in reads]
            sql_writes = [sql(n, {"entities": [{**a["entities"][0], "title": a["entities"][0]["title"] + "-sql"}]}) for n, a in writes]
        rows = [("call", "through MCP (HTTP, Python SDK)", "direct SQL (psycopg)", "ratio p50")]
        rows.append(("retrieve_entity_snapshot", summary(mcp_reads), summary(sql_reads), f"{pct(mcp_reads, 50) / pct(sql_reads, 50):.1f}x"))
        rows.append(("store (1 entity)", summary(mcp_writes), summary(sql_writes), f"{pct(mcp_writes, 50) / pct(sql_writes, 50):.1f}x"))
        table(f"gateway overhead, {N} reads and {N // 2} stores", rows)
        print(f"  overhead per call (p50): reads {pct(mcp_reads, 50) - pct(sql_reads, 50):.2f} ms, stores {pct(mcp_writes, 50) - pct(sql_writes, 50):.2f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
