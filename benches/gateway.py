"""Benchmark of the MCP gateway's overhead (issue 14's goal: the gateway adds
at most 0.5 ms p50 over the same call in SQL, on both transports, with the MCP
client's own floor reported).

The same actions (a snapshot read, retrieve_entity_snapshot, and a 1-entity
store) are called N times through neotoma-mcp over stdio and over Streamable
HTTP (the official Python SDK as client, one client per transport), and
directly as SQL (psycopg, as the same non-superuser role, with
`set_config('neotoma.user_id', …)`), against the same database. Each tool is
called once untimed first (the client lists the tools on its first call of
each, to validate results against their output schemas). The calls are made
in rounds, each round a slice of every series in turn, so that the machine's
drifting load falls on all of them alike.

The floor is a no-op tool (benches/noop_server.py, a server of the Python
SDK) driven by the same client over the same transport, over HTTP by
MCPServer.run("streamable-http"): what the client, the transport and a
minimal Python server cost, with no database at all. It is printed next to
our MCP p50, so a reader sees how much of the "added" time is the Python
client itself.

The reads are also made through minimal clients (JSON-RPC lines over the
gateway's stdio; one kept-alive HTTP/1.1 connection), which show the
gateway's own cost without the SDK's.

Prints per transport the latencies (p50, p99, mean), then the goal table: MCP
p50, SQL p50, the added milliseconds (MCP p50 - SQL p50) and whether they are
at most 0.5 ms. Asserts nothing about time (the machines are shared and
noisy)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path

import httpx2 as httpx
import psycopg
from common import fresh_database, goal, pct, summary, table
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
N = max(50, int(1000 * SCALE))  # reads (and no-op calls) per series; half as many stores
ROUNDS = 5
DATABASE = "neotoma_bench_gateway"
APP_ROLE = "neotoma_bench"
HERE = Path(__file__).resolve().parent
GOAL_MS = 0.5
TRANSPORTS = ("stdio", "HTTP")

Call = tuple[str, dict]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create_database() -> str:
    """fresh_database, retried: the extension may be reinstalled meanwhile."""
    for attempt in range(5):
        try:
            return fresh_database(DATABASE)
        except psycopg.Error as e:
            if attempt == 4:
                raise
            print(f"  (creating the database failed, retrying: {str(e).strip()})")
            time.sleep(3)
    raise AssertionError


def wait_http(url: str, proc: subprocess.Popen, what: str) -> None:
    """Waits until `url` answers anything over HTTP (within 60 s)."""
    for _ in range(600):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited early ({proc.returncode})")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not come up at {url}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def timed(client: Client, calls: list[Call]) -> list[float]:
    """Calls each (tool, args) through `client`; answers their latencies in
    milliseconds. Fails on a tool error."""
    out = []
    for name, args in calls:
        t = time.perf_counter()
        r = await client.call_tool(name, args)
        out.append((time.perf_counter() - t) * 1000)
        if r.is_error:
            raise RuntimeError(f"{name} failed: {r.content[0].text if r.content else r}")
    return out


def minimal_stdio(binary: str, env: dict[str, str], flags: list[str], calls: list[Call]) -> list[float]:
    """The same calls through a minimal client: JSON-RPC lines over the
    gateway's stdin and stdout, nothing else, so that the gateway's own cost
    shows without the Python SDK's."""
    proc = subprocess.Popen([binary, *flags], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer(id_: int) -> dict:
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the gateway closed stdout")
            message = json.loads(line)
            if message.get("id") == id_:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
        answer(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        out = []
        for i, (name, args) in enumerate(calls, start=1):
            t = time.perf_counter()
            send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}})
            reply = answer(i)
            out.append((time.perf_counter() - t) * 1000)
            if "error" in reply or reply["result"].get("isError"):
                raise RuntimeError(f"{name} failed: {reply}")
        return out[len(out) // 10:]  # the first tenth warms up
    finally:
        proc.stdin.close()
        stop(proc)


def minimal_http(port: int, calls: list[Call]) -> list[float]:
    """The same calls through a minimal client: one kept-alive HTTP/1.1
    connection (http.client), a session, JSON-RPC bodies."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}  # fmt: skip

    def post(message: dict) -> tuple[http.client.HTTPResponse, bytes]:
        conn.request("POST", "/mcp", json.dumps(message), headers)
        response = conn.getresponse()
        return response, response.read()

    def parse(body: bytes) -> dict:
        text = body.decode()
        if text.lstrip().startswith("{"):
            return json.loads(text)
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return json.loads(data[-1])

    response, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    session = response.getheader("mcp-session-id")
    if session:
        headers["mcp-session-id"] = session
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    out = []
    for i, (name, args) in enumerate(calls, start=1):
        t = time.perf_counter()
        _, body = post({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}})
        reply = parse(body)
        out.append((time.perf_counter() - t) * 1000)
        if "error" in reply or reply["result"].get("isError"):
            raise RuntimeError(f"{name} failed: {reply}")
    conn.close()
    return out[len(out) // 10:]


def chunk(calls: list[Call], r: int) -> list[Call]:
    """Round r's slice of a series."""
    return calls[r * len(calls) // ROUNDS:(r + 1) * len(calls) // ROUNDS]


async def run(binary: str, env: dict[str, str], flags: list[str], app_dsn: str, user: str, ids: list[str]) -> None:
    reads = [("retrieve_entity_snapshot", {"entity_id": ids[i % len(ids)]}) for i in range(N)]

    def writes(tag: str) -> list[Call]:  # new titles per series, so that nothing deduplicates
        return [("store", {"entities": [{"entity_type": "note", "title": f"n{i}-{tag}", "content": f"bench {i}"}]})
                for i in range(N // 2)]  # fmt: skip

    warm = [reads[-1], ("store", {"entities": [{"entity_type": "note", "title": "warm-up", "content": "warm-up"}]})]
    noops = [("noop", {})] * N
    notes: list[str] = []
    async with AsyncExitStack() as stack:  # closes the clients, then stops the servers
        # stdio: the gateway as the client's child process, as an agent runs it.
        ours = {"stdio": await stack.enter_async_context(Client(StdioServerParameters(command=binary, args=flags, env=env)))}
        floors = {"stdio": await stack.enter_async_context(Client(StdioServerParameters(
            command=sys.executable, args=[str(HERE / "noop_server.py")], env=dict(os.environ))))}  # fmt: skip
        # Streamable HTTP on loopback, without tokens (every request acts for --user-id).
        port = free_port()
        log = stack.enter_context(open(f"/tmp/neotoma-bench-gateway-{port}.log", "w"))
        proc = subprocess.Popen([binary, "--http", f"127.0.0.1:{port}", "--no-auth", *flags], env=env,
                                stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        stack.callback(stop, proc)
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, "neotoma-mcp --http")
        ours["HTTP"] = await stack.enter_async_context(Client(f"http://127.0.0.1:{port}/mcp"))
        gateway_port = port
        # The same no-op server over Streamable HTTP (uvicorn/starlette).
        port = free_port()
        noop_http = (f"import sys; sys.path.insert(0, {str(HERE)!r}); from noop_server import server; "
                     f"server.run('streamable-http', host='127.0.0.1', port={port})")  # fmt: skip
        proc = subprocess.Popen([sys.executable, "-c", noop_http], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(stop, proc)
        try:
            wait_http(f"http://127.0.0.1:{port}/mcp", proc, "the no-op server over HTTP")
            floors["HTTP"] = await stack.enter_async_context(Client(f"http://127.0.0.1:{port}/mcp"))
        except RuntimeError as e:
            notes.append(f"no HTTP floor: {e}")
        conn = stack.enter_context(psycopg.connect(app_dsn, autocommit=True))
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        protocol = ours["HTTP"].protocol_version

        def sql(calls: list[Call]) -> list[float]:
            out = []
            for name, args in calls:
                t = time.perf_counter()
                conn.execute(f"SELECT neotoma.{name}(%s::jsonb)", (json.dumps(args),)).fetchone()
                out.append((time.perf_counter() - t) * 1000)
            return out

        # Untimed warm-up: one call of each tool on every client, and in SQL.
        for t in TRANSPORTS:
            await timed(ours[t], warm)
        for client in floors.values():
            await timed(client, noops[:5])
        sql(warm)

        series_writes = {t: writes(t) for t in TRANSPORTS}
        sql_writes_calls = writes("sql")
        mcp = {t: ([], []) for t in TRANSPORTS}
        floor: dict[str, list[float]] = {t: [] for t in floors}
        sql_reads: list[float] = []
        sql_writes: list[float] = []
        for r in range(ROUNDS):
            for t in TRANSPORTS:
                mcp[t][0].extend(await timed(ours[t], chunk(reads, r)))
                mcp[t][1].extend(await timed(ours[t], chunk(series_writes[t], r)))
            for t, client in floors.items():
                floor[t].extend(await timed(client, chunk(noops, r)))
            sql_reads.extend(sql(chunk(reads, r)))
            sql_writes.extend(sql(chunk(sql_writes_calls, r)))
        # The gateway's own cost: the reads through minimal clients, then in
        # SQL once more, back to back.
        minimal = {"stdio": minimal_stdio(binary, env, flags, reads), "HTTP": minimal_http(gateway_port, reads)}
        sql_reads_again = sql(reads)

    notes.append(f"HTTP clients negotiated MCP protocol {protocol}; the HTTP floor's server is the Python SDK's "
                 f"(uvicorn/starlette), so it includes a Python server's cost")  # fmt: skip
    rows = [("call", "through MCP over stdio", "through MCP over HTTP", "direct SQL (psycopg)")]
    rows.append(("retrieve_entity_snapshot", summary(mcp["stdio"][0]), summary(mcp["HTTP"][0]), summary(sql_reads)))
    rows.append(("store (1 entity)", summary(mcp["stdio"][1]), summary(mcp["HTTP"][1]), summary(sql_writes)))
    rows.append(("no-op tool (the floor)", summary(floor["stdio"]), summary(floor["HTTP"]) if "HTTP" in floor else "-", "-"))
    table(f"gateway latency, {N} reads and {N // 2} stores (floor: {N} no-op calls) per transport, in {ROUNDS} rounds", rows)

    rows = [("transport / call", "ours: MCP p50", "baseline: SQL p50", "added (MCP - SQL)", "client floor p50 (no-op)",
             f"goal: added <= {GOAL_MS} ms")]  # fmt: skip
    for t in TRANSPORTS:
        fl = f"{pct(floor[t], 50):.3f} ms" if t in floor else "-"
        for call, lat, base in (("retrieve_entity_snapshot", mcp[t][0], sql_reads), ("store (1 entity)", mcp[t][1], sql_writes)):
            m, s = pct(lat, 50), pct(base, 50)
            rows.append((f"{t} / {call}", f"{m:.3f} ms", f"{s:.3f} ms", f"{m - s:+.3f} ms", fl, goal(m - s <= GOAL_MS)))
    s = pct(sql_reads_again, 50)
    for t in TRANSPORTS:
        m = pct(minimal[t], 50)
        rows.append((f"{t} / retrieve_entity_snapshot, minimal client", f"{m:.3f} ms", f"{s:.3f} ms", f"{m - s:+.3f} ms",
                     "-", goal(m - s <= GOAL_MS)))  # fmt: skip
    table(f"goal: the gateway adds <= {GOAL_MS} ms p50 over the same call in SQL (both transports)", rows)
    print("  note: the minimal clients (JSON-RPC lines over stdio; one kept-alive HTTP/1.1 connection) show the gateway's "
          "own cost; the Python SDK rows add the SDK's")  # fmt: skip
    print("  note: the client floor is a no-op tool through the same Python client and transport (and a Python server)")
    for n in notes:
        print(f"  note: {n}")


def main() -> None:
    dsn = create_database()
    user = str(uuid.uuid4())
    with psycopg.connect(dsn, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
        # Like the embedded default: the gateway's role may name the user it acts for.
        conn.execute(f"GRANT neotoma_operator TO {APP_ROLE}")
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'neotoma'").fetchone()[0]
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        stored = conn.execute(
            "SELECT neotoma.store(%s::jsonb)",
            (json.dumps({"entities": [{"entity_type": "person", "name": f"P{i}", "email": f"p{i}@x.example"} for i in range(100)]}),),
        ).fetchone()[0]
    ids = [e["entity_id"] for e in stored["entities"]]
    binary = os.environ.get("NEOTOMA_MCP_BIN") or str(HERE.parent / "target/release/neotoma-mcp")
    app_dsn = dsn.replace("user=postgres", f"user={APP_ROLE}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    env.update(DATABASE_URL=app_dsn, NEOTOMA_LOG="warn", RUST_BACKTRACE="0")
    flags = ["--user-id", user, "--rate-limit", "store=0", "--rate-limit", "retrieve_entities=0"]
    print(f"neotoma {version} in database {DATABASE}, role {APP_ROLE} (granted neotoma_operator); {N} reads and "
          f"{N // 2} stores per transport and in SQL; client: the official Python MCP SDK, one per transport")  # fmt: skip
    asyncio.run(run(binary, env, flags, app_dsn, user, ids))


if __name__ == "__main__":
    main()
