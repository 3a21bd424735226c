"""Shared bits of the benchmarks: a fresh database with the extension, timing
and percentiles, and a table printer. Benchmarks print figures; they assert
nothing about time (the machines are shared and noisy)."""

from __future__ import annotations

import os
import statistics
import time
import uuid
from contextlib import contextmanager
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


def new_user() -> str:
    return str(uuid.uuid4())


@contextmanager
def timer() -> Iterator[Callable[[], float]]:
    start = time.perf_counter()
    elapsed: list[float] = []
    yield lambda: elapsed[0] if elapsed else time.perf_counter() - start
    elapsed.append(time.perf_counter() - start)


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
