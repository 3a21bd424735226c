"""Reads that stay fast as data grows (issue 14: plans, and listings).

One backend (one connection, as a gateway's pooled connection is) serves
reads while its user's data grows fast: 500 entities, then a burst to 5,000,
then to 50,000 and 100,000 (BENCH_SCALE scales the sizes), each step measured right
after it, before autovacuum can have analyzed anything (it is switched off
for the bench's tables, the worst case). The same reads are measured once
more after a manual ANALYZE: the ratio "right after / after ANALYZE" says how
much stale statistics and kept plans cost. Also prints the plan-relevant
settings. Figures only; nothing here is a test.
"""

from __future__ import annotations

import json
import os

import psycopg
from common import fresh_database, goal, latencies, new_user, pct, summary, table

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
TABLES = ["entities", "observations", "entity_snapshots", "entity_identifiers", "sources",
          "raw_fragments", "timeline_events", "interpretation_runs"]


def person(i: int) -> dict:
    return {"entity_type": "person", "name": f"Person {i}", "email": f"p{i}@example.com",
            "phone": f"+1 555 {i:07d}", "city": ["Oslo", "Lima", "Pune"][i % 3]}


def grow(conn: psycopg.Connection, start: int, end: int) -> None:
    for lo in range(start, end, 100):
        batch = [person(i) for i in range(lo, min(end, lo + 100))]
        conn.execute("SELECT neotoma.store(%s::jsonb)", (json.dumps({"entities": batch}),))


def reads(conn: psycopg.Connection, user: str, n: int, size: int) -> dict[str, list[float]]:
    def q(sql: str, args: tuple) -> object:
        return conn.execute(sql, args).fetchone()

    return {
        "exact identifier": latencies(
            lambda i: q("SELECT neotoma.retrieve_entity_by_identifier(%s::jsonb)",
                        (json.dumps({"identifier": f"p{(i * 7919) % size}@example.com"}),)), n),
        "partial identifier": latencies(
            lambda i: q("SELECT neotoma.retrieve_entity_by_identifier(%s::jsonb)",
                        (json.dumps({"identifier": f"{(i * 7919) % size:07d}"}),)), n),
        "listing, first 100 of a type": latencies(
            lambda i: q("SELECT neotoma.retrieve_entities(%s::jsonb)",
                        (json.dumps({"entity_type": "person", "limit": 100}),)), n),
        "listing, first 100 of any type": latencies(
            lambda i: q("SELECT neotoma.retrieve_entities(%s::jsonb)",
                        (json.dumps({"limit": 100}),)), n),
        "snapshot": latencies(
            lambda i: q("SELECT neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', "
                        "(SELECT entity_id FROM neotoma.entity_identifiers WHERE user_id = %s AND value = %s LIMIT 1)))",
                        (user, f"p{(i * 7919) % size}@example.com")), n),
    }


def main() -> None:
    dsn = fresh_database("neotoma_bench_plans")
    user = new_user()
    sizes = [int(s * SCALE) for s in (500, 5_000, 50_000, 100_000)]
    n = max(10, int(50 * SCALE))
    with psycopg.connect(dsn, autocommit=True) as admin:
        for t in TABLES:
            admin.execute(f"ALTER TABLE neotoma.{t} SET (autovacuum_enabled = off)")
    rows = [("entities", "moment", "read", "latency", "p99/p50")]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        settings = conn.execute(
            "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings "
            "WHERE name IN ('plan_cache_mode', 'default_statistics_target')").fetchone()[0]
        print(f"settings: {settings}")
        have = 0
        typed: dict[int, float] = {}
        for size in sizes:
            grow(conn, have, size)
            have = size
            after_growth = reads(conn, user, n, size)
            with psycopg.connect(dsn, autocommit=True) as admin:
                for t in TABLES:
                    admin.execute(f"ANALYZE neotoma.{t}")
            after_analyze = reads(conn, user, n, size)
            typed[size] = pct(after_growth["listing, first 100 of a type"], 50)
            for name in after_growth:
                for moment, values in (("right after growth", after_growth[name]),
                                       ("after ANALYZE", after_analyze[name])):
                    rows.append((f"{size:,}", moment, name, summary(values),
                                 f"{pct(values, 99) / max(pct(values, 50), 1e-9):.1f}"))
                ratio = pct(after_growth[name], 50) / max(pct(after_analyze[name], 50), 1e-9)
                rows.append((f"{size:,}", "ratio (p50)", name, f"{ratio:.2f}x stale / fresh", ""))
        verified = conn.execute("SELECT neotoma.verify()->'ok'").fetchone()[0]
    table("reads right after the data grew, and after ANALYZE (one backend throughout)", rows)
    small, large = sizes[1], sizes[-1]
    ratio = typed[large] / typed[small]
    table(
        f"retrieve_entities, first 100 of a type, right after growth (goal: flat, <= 1.2x from {small:,} to {large:,})",
        [("at " + f"{small:,}", "at " + f"{large:,}", "ratio", "goal"),
         (f"{typed[small]:.3f} ms", f"{typed[large]:.3f} ms", f"{ratio:.2f}x", goal(ratio <= 1.2))],
    )  # fmt: skip
    print(f"\nverify(): ok={verified}")


if __name__ == "__main__":
    main()
