"""Shared bits of the benchmarks: a fresh database with the extension, timing
and percentiles, and a table printer. Benchmarks print figures; they assert
nothing about time (the machines are shared and noisy)."""

from __future__ import annotations

import os
import statistics
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import psycopg


def admin_dsn(dbname: str = "postgres") -> str:
    base = os.environ.get("NEOTOMA_TEST_PG")
    if not base:
        raise SystemExit("NEOTOMA_TEST_PG is not set: run benchmarks with scripts/bench")
    return f"{base} dbname={dbname}"


def fresh_database(name: str) -> str:
    """Drops and creates `name` with the extension; answers its superuser DSN."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    dsn = admin_dsn(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION neotoma")
    return dsn


def gateway_database(name: str, role: str) -> str:
    """A fresh database `name` with the extension, for a gateway that connects
    as `role`: an ordinary role (row level security applies) that may name
    the user it acts for, like the embedded default. Answers role's DSN."""
    dsn = fresh_database(name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
            conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        conn.execute(f"GRANT neotoma_operator TO {role}")
    return dsn.replace("user=postgres", f"user={role}")


def ordinary_role(admin: psycopg.Connection, role: str) -> None:
    """`role`: what an application's own role would be, neotoma_user's
    privileges and allowed to say which user it acts for (a member of
    neotoma_service); no superuser, no BYPASSRLS, so row level security
    applies to everything it does."""
    if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
        admin.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
    admin.execute(f"GRANT neotoma_user, neotoma_service TO {role}")


def connect_as(dsn: str, role: str, user: str) -> psycopg.Connection:
    """A connection of `role` (superuser `dsn` with the role swapped in)
    acting for `user`; checks that row level security applies to it."""
    conn = psycopg.connect(dsn.replace("user=postgres", f"user={role}"), autocommit=True)
    superuser, bypass = conn.execute(
        "SELECT current_setting('is_superuser'), rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
    assert superuser == "off" and not bypass, "the benchmark must run as an ordinary role"
    conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
    return conn


def gateway_env(dsn: str, **extra: str) -> dict[str, str]:
    """The environment of a gateway on `dsn`: none of the caller's NEOTOMA_*
    settings, warnings only in its log, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    env.update(DATABASE_URL=dsn, NEOTOMA_LOG="warn", RUST_BACKTRACE="0", **extra)
    return env


def gateway_bin() -> str:
    return os.environ.get("NEOTOMA_MCP_BIN") or str(Path(__file__).resolve().parent.parent / "target/release/neotoma-mcp")


def new_user() -> str:
    return str(uuid.uuid4())


@contextmanager
def timer() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    elapsed: list[float] = []
    yield lambda: elapsed[0] if elapsed else time.perf_counter() - start
    elapsed.append(time.perf_counter() - start)


def status_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory field of /proc/<pid>/status (VmRSS, VmHWM, RssAnon, …) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


class Peak:
    """Samples a process's memory field (VmRSS by default) every `every`
    seconds while it runs."""

    def __init__(self, pid: int, every: float = 0.02, field: str = "VmRSS"):
        self.pid, self.every, self.field, self.peak, self.stop = pid, every, field, 0.0, False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop:
            self.peak = max(self.peak, status_mb(self.pid, self.field))
            time.sleep(self.every)

    def __enter__(self) -> "Peak":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop = True
        self.thread.join()
        self.peak = max(self.peak, status_mb(self.pid, self.field))


def latencies(fn: Callable[[int], object], n: int) -> list[float]:
    """Calls fn(i) n times; answers each call's latency in milliseconds."""
    out = []
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t) * 1000)
    return out


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def summary(values: list[float]) -> str:
    return f"p50 {pct(values, 50):7.3f} ms   p99 {pct(values, 99):7.3f} ms   mean {statistics.fmean(values):7.3f} ms"


def table(title: str, rows: list[tuple[str, ...]]) -> None:
    print(f"\n{title}")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for j, r in enumerate(rows):
        print("  " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)))
        if j == 0:
            print("  " + "  ".join("-" * w for w in widths))


def goal(met: bool) -> str:
    """The last column of a goal table."""
    return "met" if met else "NOT MET"


def stat_statements(conn: psycopg.Connection) -> bool:
    """Whether pg_stat_statements is loaded (scripts/bench preloads it), so a
    benchmark can count the statements an action runs; creates it."""
    loaded = conn.execute("SELECT 'pg_stat_statements' = ANY (string_to_array(current_setting('shared_preload_libraries'), ', '))").fetchone()[0]
    if loaded:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    return bool(loaded)
