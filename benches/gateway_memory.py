"""The gateway's memory under an authenticated client's attack (issue: one
95 MB body, four concurrent ~50 MB stores, 5,000 initialize calls): resident
memory (RSS) of the gateway process before, at its peak, and after each
attack. Prints figures, asserts nothing."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2 as httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import fresh_database, new_user, table  # noqa: E402

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "mcp-protocol-version": "2025-06-18"}  # fmt: skip
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}}  # fmt: skip


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """Samples a process's RSS every 20 ms while it runs."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, 0.0, False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop:
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.02)

    def __enter__(self) -> "Peak":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop = True
        self.thread.join()


def store_body(megabytes: int) -> dict:
    content = base64.b64encode(os.urandom(megabytes * 1024 * 1024)).decode()
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "store", "arguments": {"file_content": content, "interpret": False}}}  # fmt: skip


def main() -> None:
    dsn = fresh_database("neotoma_bench_memory")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'neotoma_app') THEN "
                     "CREATE ROLE neotoma_app LOGIN; END IF; END $$")
        conn.execute("GRANT neotoma_operator TO neotoma_app")
    app_dsn = dsn.replace("user=postgres", "user=neotoma_app")
    port = 18000 + os.getpid() % 1000
    url = f"http://127.0.0.1:{port}/mcp"
    log = open(f"/tmp/neotoma-bench-memory-{port}.log", "w")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_")}
    proc = subprocess.Popen([os.environ["NEOTOMA_MCP_BIN"], "--http", f"127.0.0.1:{port}", "--no-auth",
                             "--user-id", new_user(), "--database-url", app_dsn, "--rate-limit", "store=0"],
                            env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
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
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
