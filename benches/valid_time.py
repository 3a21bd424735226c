"""Valid time (issue 44): what intervals cost, in SQL as an ordinary role
(row level security applies), at 100,000 entities (× BENCH_SCALE, at least
10,000) of million.py's shape, 2,000 of whose people have a role that
changed over valid time.

Goals (docs/design/valid-time.md): a store with an interval within 1.2× of
the same store without one; a snapshot read and a listing's first page
with `valid_at` within 1.3× of the same call without it. The same bars for
relationships: a creation with an interval, and an entity's relationships
(RELATED of them, half over intervals, with metadata per stretch) listed,
and walked two hops, at a `valid_at`. Each pair is timed alternately in one connection
(p50 of CALLS each), so that the machine's drift falls on both alike.
Figures only; nothing here is a test.
"""

from __future__ import annotations

import json
import os
import time
import uuid

import psycopg
from common import connect_as, fresh_database, goal, ordinary_role, pct, table
from million import load

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ENTITIES = max(10_000, int(100_000 * SCALE))
WITH_HISTORY = 2_000
RELATED = 40
CALLS = 41
ROLE = "neotoma_bench_valid_time"
DATABASE = "neotoma_bench_valid_time"


def act(conn: psycopg.Connection, action: str, args: dict) -> dict:
    return conn.execute(f"SELECT neotoma.{action}(%s::jsonb)", (json.dumps(args),)).fetchone()[0]


def give_histories(conn: psycopg.Connection, n: int) -> None:
    """n people (million.py's p{i}, every tenth i) were engineers from 2019
    to March 2022 and are managers since."""
    emails = [f"p{i}@million.example" for i in range(0, n * 10, 10)]
    for start in range(0, len(emails), 500):
        chunk = emails[start:start + 500]
        for role, interval in (("engineer", {"valid_from": "2019-01-01", "valid_to": "2022-03-01"}),
                               ("manager", {"valid_from": "2022-03-01"})):
            act(conn, "store", {"entities": [{"entity_type": "person", "email": e, "role": role} for e in chunk],
                                **interval})


def alternate(conn: psycopg.Connection, a, b) -> tuple[float, float]:
    """p50 of `a` and of `b` (functions of the call's number), called in turn."""
    ta, tb = [], []
    a(0)
    b(0)
    for k in range(1, CALLS + 1):
        for fn, into in ((a, ta), (b, tb)) if k % 2 else ((b, tb), (a, ta)):
            start = time.perf_counter()
            fn(k)
            into.append((time.perf_counter() - start) * 1000)
    return pct(ta, 50), pct(tb, 50)


def main() -> None:
    dsn = fresh_database(DATABASE)
    user = str(uuid.UUID(int=0x44 << 120 | 1))
    with psycopg.connect(dsn, autocommit=True) as admin:
        ordinary_role(admin, ROLE)
    with connect_as(dsn, ROLE, user) as conn:
        load(conn, user, 0, ENTITIES)
        give_histories(conn, WITH_HISTORY)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("VACUUM (ANALYZE)")
    with connect_as(dsn, ROLE, user) as conn:
        person = conn.execute(
            "SELECT entity_id FROM neotoma.entity_snapshots WHERE valid_until IS NULL AND reducer_state ? 'timelines' "
            "ORDER BY entity_id LIMIT 1 OFFSET 100").fetchone()[0]  # fmt: skip

        def store(interval: dict):
            def call(k: int) -> None:
                tag = f"{'v' if interval else 'p'}{k}-{uuid.uuid4().hex[:8]}"
                act(conn, "store", {"entities": [{"entity_type": "person", "name": f"Bench {tag}",
                                                  "email": f"{tag}@valid.example", "role": "analyst"}], **interval})
            return call

        plain_store, timed_store = alternate(
            conn, store({}), store({"valid_from": "2024-01-01", "valid_to": "2030-01-01"}))
        others = [r[0] for r in conn.execute(
            "SELECT entity_id FROM neotoma.entity_snapshots WHERE entity_id <> %s ORDER BY entity_id LIMIT %s",
            (person, 2 * CALLS + 2 + RELATED)).fetchall()]

        def relate(interval: dict, targets: list[str]):
            def call(k: int) -> None:
                act(conn, "create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": person,
                                                  "target_entity_id": targets[k], **interval})
            return call

        plain_relate, timed_relate = alternate(
            conn, relate({}, others[:CALLS + 1]),
            relate({"valid_from": "2024-01-01", "valid_to": "2030-01-01"}, others[CALLS + 1:2 * CALLS + 2]))
        hub = others[-1]
        for i, other in enumerate(others[-RELATED - 1:-1]):
            for role, interval in (("engineer", {"valid_from": "2019-01-01", "valid_to": "2022-03-01"}),
                                   ("manager", {"valid_from": "2022-03-01"})) if i % 2 else (("member", {}),):
                act(conn, "create_relationship", {"relationship_type": "PART_OF", "source_entity_id": other,
                                                  "target_entity_id": hub, "metadata": {"role": role}, **interval})
        listed = {"entity_id": hub, "limit": 100}
        plain_rels, timed_rels = alternate(
            conn,
            lambda _: act(conn, "list_relationships", listed),
            lambda _: act(conn, "list_relationships", {**listed, "valid_at": "2020-06-01"}))
        walk = {"entity_id": hub, "max_hops": 2, "include_entities": False}
        plain_walk, timed_walk = alternate(
            conn,
            lambda _: act(conn, "retrieve_related_entities", walk),
            lambda _: act(conn, "retrieve_related_entities", {**walk, "valid_at": "2020-06-01"}))
        roles = sorted(r["metadata"]["role"] for r in act(conn, "list_relationships",
                                                          {**listed, "valid_at": "2020-06-01"})["relationships"])
        assert roles == ["engineer"] * (RELATED // 2) + ["member"] * (RELATED // 2), roles
        plain_read, timed_read = alternate(
            conn,
            lambda _: act(conn, "retrieve_entity_snapshot", {"entity_id": person}),
            lambda _: act(conn, "retrieve_entity_snapshot", {"entity_id": person, "valid_at": "2020-06-01"}))
        listing = {"entity_type": "person", "limit": 100}
        plain_page, timed_page = alternate(
            conn,
            lambda _: act(conn, "retrieve_entities", listing),
            lambda _: act(conn, "retrieve_entities", {**listing, "valid_at": "2020-06-01"}))
        _, history = alternate(
            conn,
            lambda _: act(conn, "retrieve_entity_snapshot", {"entity_id": person}),
            lambda _: act(conn, "retrieve_field_history", {"entity_id": person, "field": "role"}))
        then = act(conn, "retrieve_entity_snapshot", {"entity_id": person, "valid_at": "2020-06-01"})
        now = act(conn, "retrieve_entity_snapshot", {"entity_id": person})
        assert (then["snapshot"]["role"], now["snapshot"]["role"]) == ("engineer", "manager"), (then, now)
    rows = [("operation", "without", "with valid time", "ratio", "goal", "")]
    for label, a, b, bar in (("store one entity (with valid_from/valid_to)", plain_store, timed_store, 1.2),
                             ("retrieve_entity_snapshot (with valid_at)", plain_read, timed_read, 1.3),
                             ("retrieve_entities, typed, first page (with valid_at)", plain_page, timed_page, 1.3),
                             ("create_relationship (with valid_from/valid_to)", plain_relate, timed_relate, 1.2),
                             (f"list_relationships, {RELATED} (with valid_at)", plain_rels, timed_rels, 1.3),
                             ("retrieve_related_entities, 2 hops (with valid_at)", plain_walk, timed_walk, 1.3)):
        rows.append((label, f"{a:.2f} ms", f"{b:.2f} ms", f"{b / a:.2f}x", f"≤ {bar}x", goal(b / a <= bar)))
    rows.append(("retrieve_field_history (against the snapshot read)", f"{plain_read:.2f} ms", f"{history:.2f} ms",
                 f"{history / plain_read:.2f}x", "", ""))
    table(f"valid time at {ENTITIES:,} entities ({WITH_HISTORY:,} with a history), as an ordinary role (RLS), "
          f"p50 of {CALLS} each, alternated", rows)


if __name__ == "__main__":
    main()
