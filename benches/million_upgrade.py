"""The last upgrade script and verify() on a million-entity user (issue 40),
timed: a database at the previous release (the version before the
extension's default) gets the million bench's data (benches/million.py:
10,000 entities, BIG = 1,000,000 × BENCH_SCALE for another user, BIG for a
third, stored through `store` batches of 1,000 as an ordinary role through
row level security, with their relationships and semantic lists); then
`ALTER EXTENSION neotoma UPDATE` (what an operator runs), `verify()` of the
big user as the ordinary role, and the lists built again on the new SQL
(as a gateway's upkeep does). The database it leaves, renamed
neotoma_bench_million, is one `BENCH_REUSE=1 BENCH_VERIFY=0 scripts/bench
million` measures.

At full scale it runs for over an hour (the load is most of it);
BENCH_SCALE=0.02 for a quick run.
"""

from __future__ import annotations

import psycopg
from common import admin_dsn, connect_as, ordinary_role, table, timer
from million import BIG, ROLE, USERS, build_lists, load_all

DATABASE = "neotoma_bench_million_upgrade"


def versions(admin: psycopg.Connection) -> tuple[str, str]:
    """(previous, current): the default version and the one before it."""
    current = admin.execute("SELECT default_version FROM pg_available_extensions WHERE name = 'neotoma'").fetchone()[0]
    known = [r[0] for r in admin.execute(
        "SELECT version FROM pg_available_extension_versions WHERE name = 'neotoma'").fetchall()]  # fmt: skip
    earlier = sorted((v for v in known if v != current), key=lambda v: tuple(int(p) for p in v.split(".")))
    return earlier[-1], current


def main() -> None:
    with psycopg.connect(admin_dsn(), autocommit=True) as admin:
        previous, current = versions(admin)
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    dsn = admin_dsn(DATABASE)
    user = USERS[1]
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE EXTENSION neotoma VERSION '{previous}' CASCADE")
        ordinary_role(admin, ROLE)
        print(f"  the million bench's data ({BIG:,} entities for the big user) on the {previous} SQL, "
              f"then the update to {current}; role {ROLE}", flush=True)
        rate, memory = load_all(dsn)
        build_lists(dsn)
        admin.execute("VACUUM (ANALYZE)")
        before = admin.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        # Cancelled by a deadlock with a write (docs/upgrades.md), it
        # changed nothing: run it again.
        for _ in range(3):
            try:
                with timer() as t:
                    admin.execute("ALTER EXTENSION neotoma UPDATE")
                break
            except psycopg.errors.DeadlockDetected:
                print("  the update was cancelled by a deadlock with a write: again", flush=True)
        else:
            raise SystemExit("the update was cancelled three times")
        update_s = t()
        print(f"  ALTER EXTENSION neotoma UPDATE ({previous} → {current}): {update_s:.1f} s", flush=True)
        after = admin.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        with connect_as(dsn, ROLE, user) as conn, timer() as t:
            report = conn.execute("SELECT neotoma.verify()").fetchone()[0]
        verify_s = t()
        print(f"  verify(): {verify_s:.1f} s, ok: {report.get('ok')}", flush=True)
        if not report.get("ok"):
            print(f"  verify() found: {str(report)[:2000]}")
        build_lists(dsn)
        size = admin.execute("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                             "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'neotoma' AND c.relkind IN ('r', 'm')"
                             ).fetchone()[0]  # fmt: skip
        entities = admin.execute("SELECT count(*) FROM neotoma.entities").fetchone()[0]
    table(f"the last upgrade and verify() at {BIG:,} entities", [
        ("figure", "value", ""),
        ("store batches of 1,000 (the big user's load, beside the third's)", f"{rate:,.0f} entities/s", f"on the {previous} SQL"),
        ("the loading backend's private memory (RssAnon), at most", f"{memory:.0f} MB", ""),
        (f"ALTER EXTENSION neotoma UPDATE, {previous} → {current}, {entities:,} entities", f"{update_s:.1f} s",
         f"database {before / 2**30:.2f} → {after / 2**30:.2f} GiB"),
        (f"verify() of {BIG:,} entities, as the ordinary role", f"{verify_s:.1f} s", f"clean: {report.get('ok')}"),
        ("disk per million entities (tables and indexes)", f"{float(size) / entities * 1e6 / 2**30:.2f} GiB", f"{entities:,} entities"),
    ])


if __name__ == "__main__":
    main()
