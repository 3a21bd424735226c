"""The gateway's memory, and a backend's (issue 14):

- attacks: resident memory (RSS) of the gateway process before, at its peak,
  and after each of an authenticated client's attacks (one 95 MB body, four
  concurrent ~50 MB stores, 5,000 initialize calls).
- clients: the goal "the gateway's RSS under 32 concurrent clients stays
  under 64 MB". 32 MCP clients (the official Python SDK, each its own
  Client, all in one asyncio loop) each make a bounded number of calls, a mix
  of store (1-10 entities), retrieve_entities (limit 100) and
  retrieve_entity_snapshot, against one `neotoma-mcp --http` (default pool);
  the gateway's VmRSS is sampled every 50 ms. Run twice, each against a fresh
  gateway: with the SDK's default protocol (sessionless) and with its legacy
  initialize handshake (the gateway keeps 32 Streamable HTTP sessions).
  Prints the peak, calls/s and the calls' p50/p99 (the clients share the
  machine's cores with the gateway and the database, so the rate is the
  Python clients' as much as the gateway's).
- backend: "a store of 1,000 entities in one call does not hold more than a
  few MB per backend beyond the rows themselves". A fresh connection (a new
  backend) stores 10 entities (so the library and caches are loaded), then
  its peak RSS (VmHWM, reset to the current RSS where the kernel allows it) is
  read before and after one neotoma.store of 1,000 person entities; the
  increase is compared with the size of the request. The backend's private
  (anonymous) memory is also sampled during the call and read after it (what
  it keeps: a pooled connection holds that until it closes), and
  pg_backend_memory_contexts summed before and right after it.

GATEWAY_MEMORY_PHASES=attacks,clients,backend chooses phases (all by
default). Prints figures, asserts nothing."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2 as httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Peak, fresh_database, goal, new_user, pct, status_mb, table  # noqa: E402
from mcp import Client  # noqa: E402

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
PHASES = [p.strip() for p in os.environ.get("GATEWAY_MEMORY_PHASES", "attacks,clients,backend").split(",") if p.strip()]
CLIENTS = 32
CALLS_PER_CLIENT = max(10, int(50 * SCALE))
CLIENTS_GOAL_MB = 64
BACKEND_ENTITIES = 1000
BACKEND_GOAL_MB = 8  # "a few MB"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "mcp-protocol-version": "2025-06-18"}  # fmt: skip
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}}  # fmt: skip


def rss_mb(pid: int) -> float:
    return status_mb(pid, "VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gateway(app_dsn: str, port: int, *flags: str, log_name: str) -> subprocess.Popen:
    """`neotoma-mcp --http` on 127.0.0.1:<port> without tokens, up once /healthz answers."""
    log = open(f"/tmp/neotoma-bench-memory-{log_name}-{port}.log", "w")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    proc = subprocess.Popen([os.environ["NEOTOMA_MCP_BIN"], "--http", f"127.0.0.1:{port}", "--no-auth",
                             "--database-url", app_dsn, *flags],
                            env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"the gateway exited early; see {log.name}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def create_database() -> str:
    """fresh_database, retried: the extension may be reinstalled meanwhile."""
    for attempt in range(5):
        try:
            return fresh_database("neotoma_bench_memory")
        except psycopg.Error as e:
            if attempt == 4:
                raise
            print(f"  (creating the database failed, retrying: {str(e).strip()})")
            time.sleep(3)
    raise AssertionError


def store_body(megabytes: int) -> dict:
    content = base64.b64encode(os.urandom(megabytes * 1024 * 1024)).decode()
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "store", "arguments": {"file_content": content, "interpret": False}}}  # fmt: skip


def attacks(app_dsn: str) -> None:
    port = 18000 + os.getpid() % 1000
    url = f"http://127.0.0.1:{port}/mcp"
    proc = gateway(app_dsn, port, "--user-id", new_user(), "--rate-limit", "store=0", log_name="attacks")
    try:
        rows = [("attack", "answers", "RSS before", "RSS peak", "RSS after")]
        client = httpx.Client(timeout=300)

        def attack(name: str, fn) -> None:
            before = rss_mb(proc.pid)
            with Peak(proc.pid) as peak:
                answers = fn()
            time.sleep(1)
            rows.append((name, answers, f"{before:.0f} MB", f"{peak.peak:.0f} MB", f"{rss_mb(proc.pid):.0f} MB"))

        def session() -> dict:
            sid = client.post(url, json=INIT, headers=HEADERS).headers["mcp-session-id"]
            h = {**HEADERS, "mcp-session-id": sid}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h)
            return h

        def one_large_body() -> str:
            r = client.post(url, json=store_body(95), headers=session())
            return str(r.status_code)

        def four_concurrent_stores() -> str:
            codes: list[str] = []
            bodies = [(store_body(48), session()) for _ in range(4)]

            def send(b: tuple[dict, dict]) -> None:
                r = httpx.post(url, json=b[0], headers=b[1], timeout=300)
                failed = '"isError":true' in r.text.replace(' ', '')
                codes.append(f"{r.status_code}{' error' if failed else ''}")

            threads = [threading.Thread(target=send, args=(b,)) for b in bodies]
            del bodies
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return ",".join(str(c) for c in sorted(codes))

        def many_sessions() -> str:
            codes: dict[int, int] = {}
            for _ in range(5000):
                c = client.post(url, json=INIT, headers=HEADERS).status_code
                codes[c] = codes.get(c, 0) + 1
            return " ".join(f"{n}x{c}" for c, n in sorted(codes.items()))

        attack("one 95 MB body", one_large_body)
        attack("four concurrent 48 MB stores", four_concurrent_stores)
        attack("5,000 initialize calls", many_sessions)
        table("Gateway memory (max file 50 MB, 2 large requests at once, 16 sessions per user)", rows)
    finally:
        stop(proc)


def person(tag: str, k: int) -> dict:
    return {"entity_type": "person", "name": f"Person {tag}-{k}", "email": f"{tag}-{k}@bench.example",
            "phone": f"+1-555-{k % 10000:04d}", "city": random.choice(["Lisbon", "Oslo", "Quito", "Perth", "Accra"])}  # fmt: skip


async def client_run(url: str, mode: str, n: int, ids: list[str], ready: asyncio.Barrier, lat: list[float],
                     errors: list[str], protocols: set[str]) -> None:  # fmt: skip
    """One client: one session, one untimed call per tool, then (once every
    client is connected) CALLS_PER_CLIENT timed calls cycling store, listing
    and read."""
    rng = random.Random(n)
    async with Client(url, mode=mode) as c:
        protocols.add(str(c.protocol_version))

        async def call(name: str, args: dict) -> None:
            r = await c.call_tool(name, args)
            if r.is_error:
                errors.append(f"{name}: {r.content[0].text[:200] if r.content else r}")
            elif name == "store":
                ids.extend(e["entity_id"] for e in r.structured_content["entities"])

        tag = f"{mode}{n}"
        await call("store", {"entities": [person(tag, 0)]})
        await call("retrieve_entities", {"entity_type": "person", "limit": 100})
        await call("retrieve_entity_snapshot", {"entity_id": rng.choice(ids)})
        await ready.wait()
        for j in range(CALLS_PER_CLIENT):
            if j % 3 == 0:
                name, args = "store", {"entities": [person(tag, 100 * j + k) for k in range(1 + rng.randrange(10))]}
            elif j % 3 == 1:
                name, args = "retrieve_entities", {"entity_type": "person", "limit": 100}
            else:
                name, args = "retrieve_entity_snapshot", {"entity_id": rng.choice(ids)}
            t = time.perf_counter()
            await call(name, args)
            lat.append((time.perf_counter() - t) * 1000)


def clients(dsn: str, app_dsn: str) -> None:
    rows = [("client protocol", "ours: peak RSS", "baseline: idle RSS", "peak / limit", f"goal: peak < {CLIENTS_GOAL_MB} MB")]
    print(f"\n{CLIENTS} concurrent clients, {CALLS_PER_CLIENT} calls each (store of 1-10 entities, retrieve_entities "
          f"limit 100, retrieve_entity_snapshot, in turn), against a fresh gateway per client protocol")  # fmt: skip
    # The SDK's default negotiates a sessionless protocol; `legacy` makes each
    # client initialize a Streamable HTTP session that the gateway keeps.
    for mode in ("auto", "legacy"):
        user = new_user()
        with psycopg.connect(dsn, autocommit=True) as conn:  # something to list and read from the start
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
            out = conn.execute("SELECT neotoma.store(%s::jsonb)",
                               (json.dumps({"entities": [person("seed", k) for k in range(200)]}),)).fetchone()[0]  # fmt: skip
        ids = [e["entity_id"] for e in out["entities"]]
        port = free_port()
        # Every client acts for --user-id: with sessions, 32 of one user's,
        # more than the default 16 a user may keep (the 17th closes the first).
        flags = ["--user-id", user, "--rate-limit", "store=0", "--rate-limit", "retrieve_entities=0",
                 "--sessions-per-user", str(CLIENTS)]  # fmt: skip
        proc = gateway(app_dsn, port, *flags, log_name=f"clients-{mode}")
        url = f"http://127.0.0.1:{port}/mcp"
        lat: list[float] = []
        errors: list[str] = []
        protocols: set[str] = set()
        wall = [0.0]

        async def run() -> None:
            ready = asyncio.Barrier(CLIENTS + 1)
            tasks = [asyncio.create_task(client_run(url, mode, n, ids, ready, lat, errors, protocols)) for n in range(CLIENTS)]
            await ready.wait()
            t = time.perf_counter()
            await asyncio.gather(*tasks)
            wall[0] = time.perf_counter() - t

        quiet = Quiet()
        logging.getLogger("mcp.client.streamable_http").addFilter(quiet)
        try:
            before = rss_mb(proc.pid)
            with Peak(proc.pid, every=0.05) as peak:
                asyncio.run(run())
            after = rss_mb(proc.pid)
        finally:
            stop(proc)
            logging.getLogger("mcp.client.streamable_http").removeFilter(quiet)
        calls = CLIENTS * CALLS_PER_CLIENT
        protocol = ", ".join(sorted(protocols)) + (" (sessions)" if mode == "legacy" else " (no sessions)")
        print(f"  {protocol}: {calls} calls in {wall[0]:.1f}s, {calls / wall[0]:.0f} calls/s, p50 {pct(lat, 50):.1f} ms, "
              f"p99 {pct(lat, 99):.1f} ms, {len(errors)} tool errors; gateway RSS {before:.1f} MB before (idle), "
              f"{peak.peak:.1f} MB peak (sampled every 50 ms), {after:.1f} MB after")  # fmt: skip
        for e in errors[:3]:
            print(f"    error: {e}")
        if quiet.dropped:
            print(f"    note: the client warned {len(quiet.dropped)}x on closing its session: {quiet.dropped[0]} "
                  f"(the SDK expects 200 or 204 to a session's DELETE)")  # fmt: skip
        rows.append((protocol, f"{peak.peak:.1f} MB", f"{before:.1f} MB", f"{peak.peak / CLIENTS_GOAL_MB:.0%}",
                     goal(peak.peak < CLIENTS_GOAL_MB)))  # fmt: skip
    table(f"goal: the gateway's RSS under {CLIENTS} concurrent clients stays under {CLIENTS_GOAL_MB} MB "
          f"(HTTP, no tokens, --pool-size default)", rows)  # fmt: skip


class Quiet(logging.Filter):
    """Counts (and drops) the SDK client's "Session termination failed"
    warnings (it expects 200 or 204 to a session's DELETE; the gateway
    answers 200), so that a regression shows in the report."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Session termination failed"):
            self.dropped.append(record.getMessage())
            return False
        return True


def reset_peak(pid: int) -> bool:
    """Resets the process's VmHWM to its current RSS (Linux 4.0+, as root)."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def backend(dsn: str) -> None:
    user = new_user()
    request = json.dumps({"entities": [person("bulk", k) for k in range(BACKEND_ENTITIES)]})
    request_mb = len(request.encode()) / 2**20
    contexts = "SELECT sum(total_bytes), sum(used_bytes) FROM pg_backend_memory_contexts"
    with psycopg.connect(dsn, autocommit=True) as conn:  # a new backend
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute("SELECT neotoma.store(%s::jsonb)",
                     (json.dumps({"entities": [person("warm", k) for k in range(10)]}),)).fetchone()  # fmt: skip
        reset = reset_peak(pid)
        rss0, hwm0, anon0 = status_mb(pid, "VmRSS"), status_mb(pid, "VmHWM"), status_mb(pid, "RssAnon")
        ctx0 = conn.execute(contexts).fetchone()
        with Peak(pid, every=0.002, field="RssAnon") as anon:
            t = time.perf_counter()
            answer = conn.execute("SELECT neotoma.store(%s::jsonb)::text", (request,)).fetchone()[0]
            elapsed = time.perf_counter() - t
        ctx1 = conn.execute(contexts).fetchone()
        rss1, hwm1, anon1 = status_mb(pid, "VmRSS"), status_mb(pid, "VmHWM"), status_mb(pid, "RssAnon")
    stored = len(json.loads(answer)["entities"])
    answer_mb = len(answer.encode()) / 2**20
    growth = hwm1 - (rss0 if reset else hwm0)
    print(f"\none neotoma.store of {BACKEND_ENTITIES:,} person entities (name, email, phone, city) in a fresh backend "
          f"(pid {pid}) after a 10-entity warm-up: {stored:,} stored in {elapsed:.2f}s")  # fmt: skip
    print(f"  request {request_mb:.2f} MB of JSON, answer {answer_mb:.2f} MB")
    print(f"  backend VmRSS {rss0:.1f} -> {rss1:.1f} MB, VmHWM {hwm0:.1f} -> {hwm1:.1f} MB"
          f"{' (reset to VmRSS before the call)' if reset else ' (could not reset it: growth counted from the old peak)'}")  # fmt: skip
    print(f"  private memory (RssAnon) {anon0:.1f} MB before, {anon.peak:.1f} MB peak (sampled every 2 ms), {anon1:.1f} MB after")
    print(f"  memory contexts (pg_backend_memory_contexts): {ctx0[0] / 2**20:.2f} MB allocated ({ctx0[1] / 2**20:.2f} used) before, "
          f"{ctx1[0] / 2**20:.2f} MB ({ctx1[1] / 2**20:.2f} used) right after")  # fmt: skip
    print("  (VmHWM counts shared buffers the backend touches for the first time; RssAnon is its own memory only,\n"
          "  and what it keeps after the call beyond the memory contexts is freed memory malloc has not returned)")
    rows = [("measure", "ours: growth", "baseline: request JSON", "value: beyond the request", f"goal: <= {BACKEND_GOAL_MB} MB")]
    rows.append(("VmHWM (peak RSS)", f"{growth:.2f} MB", f"{request_mb:.2f} MB", f"{growth - request_mb:.2f} MB",
                 goal(growth - request_mb <= BACKEND_GOAL_MB)))  # fmt: skip
    anon_growth = anon.peak - anon0
    rows.append(("RssAnon (private, sampled)", f"{anon_growth:.2f} MB", f"{request_mb:.2f} MB", f"{anon_growth - request_mb:.2f} MB",
                 goal(anon_growth - request_mb <= BACKEND_GOAL_MB)))  # fmt: skip
    kept = anon1 - anon0  # freed memory that malloc keeps: the backend holds it until it exits
    rows.append(("RssAnon kept after the call", f"{kept:.2f} MB", f"{request_mb:.2f} MB", f"{kept - request_mb:.2f} MB",
                 goal(kept - request_mb <= BACKEND_GOAL_MB)))  # fmt: skip
    table(f"goal: a store of {BACKEND_ENTITIES:,} entities in one call holds no more than a few MB (<= {BACKEND_GOAL_MB} MB) "
          f"per backend beyond the request", rows)  # fmt: skip


def main() -> None:
    unknown = set(PHASES) - {"attacks", "clients", "backend"}
    if unknown:
        raise SystemExit(f"GATEWAY_MEMORY_PHASES: unknown {', '.join(sorted(unknown))} (attacks, clients, backend)")
    dsn = create_database()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_app') THEN "
                     "CREATE ROLE neotoma_app LOGIN; END IF; END $$")
        conn.execute("GRANT neotoma_operator TO neotoma_app")
    app_dsn = dsn.replace("user=postgres", "user=neotoma_app")
    if "attacks" in PHASES:
        attacks(app_dsn)
    if "clients" in PHASES:
        clients(dsn, app_dsn)
    if "backend" in PHASES:
        backend(dsn)


if __name__ == "__main__":
    main()
