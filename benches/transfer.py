"""Export and import of a large user (issue 40: a million entities at
≥ 20,000 entities/s each way), through the commands a user runs:
`neotoma-mcp export` and `neotoma-mcp import`, connected as an ordinary
role (neotoma_user and neotoma_service, no superuser, no BYPASSRLS: row
level security applies).

A user gets N entities (1,000,000 × BENCH_SCALE, at least 10,000; persons,
tasks and notes as benches/million.py stores them, with relationship
chains), a second user as much as noise. Then: the export's rate, the
import's rate into a new user (replaying the lines, each batch folded as it
is written), the file's size, and the imported user checked against the
exported one (the same entities, snapshots and relationships).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
from common import connect_as, fresh_database, gateway_bin, goal, ordinary_role, table
from million import link, load

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
N = max(10_000, int(1_000_000 * SCALE))
ROLE = "neotoma_bench_transfer"
DATABASE = "neotoma_bench_transfer"
GOAL = 20_000  # entities per second, each way


def cli(dsn: str, *args: str) -> float:
    """Runs `neotoma-mcp ARGS` as ROLE; answers the seconds it took."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    start = time.perf_counter()
    done = subprocess.run([gateway_bin(), *args], env={**env, "DATABASE_URL": dsn},
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"neotoma-mcp {args[0]} failed: {done.stderr}")
    return took


def fingerprint(admin: psycopg.Connection, user: str) -> tuple:
    """What must come back the same: entities with their snapshots, and
    relationships."""
    return admin.execute(
        "SELECT (SELECT count(*) FROM neotoma.entities WHERE user_id = %(u)s), "
        "(SELECT md5(string_agg(entity_id || snapshot::text, ',' ORDER BY entity_id)) "
        " FROM neotoma.entity_snapshots WHERE user_id = %(u)s), "
        "(SELECT count(*) FROM neotoma.relationships WHERE user_id = %(u)s)", {"u": user}).fetchone()


def main() -> None:
    dsn = fresh_database(DATABASE)
    role_dsn = dsn.replace("user=postgres", f"user={ROLE}")
    source, noise = (str(uuid.UUID(int=0x41 << 120 | k)) for k in (1, 2))
    target = str(uuid.uuid4())
    with psycopg.connect(dsn, autocommit=True) as admin:
        ordinary_role(admin, ROLE)
        print(f"  {N:,} entities for one user and {N:,} for another; role {ROLE}")
        for user in (noise, source):
            with connect_as(dsn, ROLE, user) as conn:
                load(conn, user, 0, N)
                link(conn, user, N // 100)
        admin.execute("VACUUM (ANALYZE)")
        with tempfile.TemporaryDirectory() as work:
            file = Path(work) / "memory.jsonl"
            export_s = cli(role_dsn, "export", "--user", source, "--out", str(file))
            lines = sum(1 for _ in file.open())
            size = file.stat().st_size
            import_s = cli(role_dsn, "import", "--user", target, str(file))
        same = fingerprint(admin, source) == fingerprint(admin, target)
    export_rate, import_rate = N / export_s, N / import_s
    table("export and import, as an ordinary role", [
        ("phase", f"{N:,} entities", "entities/s", "goal", ""),
        ("export", f"{export_s:.1f} s ({lines:,} lines, {size / 2**20:,.0f} MiB)", f"{export_rate:,.0f}",
         f"≥ {GOAL:,}/s", goal(export_rate >= GOAL)),
        ("import (replay and fold)", f"{import_s:.1f} s", f"{import_rate:,.0f}",
         f"≥ {GOAL:,}/s", goal(import_rate >= GOAL)),
        ("imported = exported", "entities, snapshots, relationships", "", "", "yes" if same else "NO"),
    ])


if __name__ == "__main__":
    main()
