"""Benchmark of the truth model's writes and snapshot reads, all in one run on
one cluster (issue 14's goals, each printed with its baseline and whether it
is met):

* structured `store` throughput as an ordinary role, batches of 1 and of
  100 entities, against the floor (issue 40): every row a store writes
  (derived rows, embedding and change feed included), precomputed, into
  equivalent tables (the same columns and indexes, without the truth
  model's triggers, keys and row level security), one statement and one
  transaction per call, as `store` is; and beside it issue 14's baseline,
  the source, entity and observation rows alone;
* the statements one `store` runs inside Postgres (with pg_stat_statements,
  which scripts/bench preloads);
* 8 concurrent clients against 1, storing entities of which some are the
  same for every client (1 of 10, then 5 of 10), then `verify()`: no lost or
  wrong snapshot;
* `retrieve_entity_snapshot` latency;
* `store` latency for an entity with 1 prior observation vs 10,000 (the
  snapshot is maintained incrementally, so the ratio should be near 1).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid

import psycopg
from common import (connect_as, fresh_database, goal, latencies, new_user, ordinary_role, pct, stat_statements,
                    summary, table, timer)

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
STORE = "SELECT neotoma.store(%s::jsonb)"
ROLE = "neotoma_bench_truth"

# The baseline: source, entities and observations rows written in one
# statement, into tables like the truth model's (columns, defaults, checks,
# indexes).
PLAIN = """
WITH src AS (
  INSERT INTO plain.sources (user_id, id, content_hash, source_type, content)
  VALUES (%(user)s::uuid, %(source)s::uuid, %(hash)s, 'structured', %(content)s::jsonb)),
ent AS (
  INSERT INTO plain.entities (user_id, id, entity_type, canonical_name, identity_key)
  SELECT %(user)s::uuid, r.id, 'invoice', r.fields->>'invoice_number', r.fields->>'invoice_number'
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, fields jsonb))
INSERT INTO plain.observations (user_id, id, entity_id, entity_type, schema_version, source_id, kind,
                                observed_at, fields)
SELECT %(user)s::uuid, r.observation, r.id, 'invoice', '1.0', %(source)s::uuid, 'store', now(), r.fields
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, observation uuid, fields jsonb)"""


# The floor: every row a `store` of new entities writes (source, run,
# entities, observations, and the derived rows: snapshots, identifiers, a
# timeline event, the embedding, the change feed's entry, the count deltas),
# precomputed, written by one statement into tables like the truth model's
# (columns, generated columns and indexes, without keys, triggers and row
# level security). The derived JSON and the embedding are a real snapshot's
# (`template`), so the rows are the same size. What `store` adds beyond it is
# reading and locking what it folds, the fold, computing the embedding, the
# keys' checks, and its statements' overhead.
FLOOR_TABLES = ("sources", "interpretation_runs", "entities", "observations", "entity_snapshots",
                "entity_identifiers", "timeline_events", "entity_embeddings", "changes", "entity_counts",
                "timeline_counts")  # fmt: skip
FLOOR = """
WITH src AS (
  INSERT INTO floor.sources (user_id, id, content_hash, source_type, content)
  VALUES (%(user)s::uuid, %(source)s::uuid, %(hash)s, 'structured', %(content)s::jsonb)),
run AS (
  INSERT INTO floor.interpretation_runs (user_id, id, source_id, interpreter, status, entities_created,
                                         observations_created, finished_at)
  VALUES (%(user)s::uuid, %(run)s::uuid, %(source)s::uuid, 'structured', 'completed', %(n)s, %(n)s, now())),
rows AS (SELECT * FROM jsonb_to_recordset(%(rows)s::jsonb)
         AS r(id text, observation uuid, event uuid, fields jsonb, provenance jsonb, field_provenance jsonb,
              reducer_state jsonb)),
ent AS (
  INSERT INTO floor.entities (user_id, id, entity_type, canonical_name, identity_key)
  SELECT %(user)s::uuid, r.id, 'invoice', r.fields->>'invoice_number', r.fields->>'invoice_number' FROM rows r),
obs AS (
  INSERT INTO floor.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
                                  interpretation_run_id, kind, observed_at, fields)
  SELECT %(user)s::uuid, r.observation, r.id, 'invoice', '1.0', %(source)s::uuid, %(run)s::uuid, 'store', now(), r.fields
  FROM rows r),
snap AS (
  INSERT INTO floor.entity_snapshots (user_id, entity_id, entity_type, schema_version, snapshot, provenance,
                                      field_provenance, reducer_state, observation_count, last_observation_at, computed_at)
  SELECT %(user)s::uuid, r.id, 'invoice', '1.0', r.fields, r.provenance, r.field_provenance, r.reducer_state, 1, now(), now()
  FROM rows r),
ids AS (
  INSERT INTO floor.entity_identifiers (user_id, entity_id, field, value)
  SELECT %(user)s::uuid, r.id, f.field, r.fields->>f.field FROM rows r, (VALUES ('invoice_number'), ('vendor_name')) f(field)),
ev AS (
  INSERT INTO floor.timeline_events (user_id, id, event_type, event_timestamp, source_id, entity_id, entity_ids,
                                     source_field, observation_id)
  SELECT %(user)s::uuid, r.event, 'InvoiceIssued', (r.fields->>'invoice_date')::timestamptz, %(source)s::uuid, r.id,
         ARRAY[r.id], 'invoice_date', r.observation FROM rows r),
emb AS (
  INSERT INTO floor.entity_embeddings (user_id, entity_id, entity_type, model, embedding, list_no)
  SELECT %(user)s::uuid, r.id, 'invoice', %(model)s, %(embedding)s::real[], %(list_no)s FROM rows r
  WHERE %(embedding)s IS NOT NULL),
feed AS (
  INSERT INTO floor.changes (user_id, kind, operation, entity_id, entity_type, source_id)
  SELECT %(user)s::uuid, 'entity', 'observed', r.id, 'invoice', %(source)s::uuid FROM rows r),
days AS (
  INSERT INTO floor.timeline_counts (user_id, workspace, day, event_type, events)
  VALUES (%(user)s::uuid, 'default', '2024-01-15', 'InvoiceIssued', %(n)s))
INSERT INTO floor.entity_counts (user_id, entity_type, current, total) VALUES (%(user)s::uuid, 'invoice', %(n)s, %(n)s)"""


def floor_template(conn: psycopg.Connection, user: str) -> dict:
    """The derived JSON and the embedding of one of `user`'s stored invoices,
    which the floor's rows copy (so they are the same size)."""
    row = conn.execute(
        "SELECT s.provenance, s.field_provenance, s.reducer_state, e.model, e.embedding::text, e.list_no "
        "FROM neotoma.entity_snapshots s LEFT JOIN neotoma.entity_embeddings e "
        "ON e.user_id = s.user_id AND e.entity_id = s.entity_id "
        "WHERE s.user_id = %s AND s.entity_type = 'invoice' ORDER BY s.entity_id LIMIT 1", (user,)).fetchone()  # fmt: skip
    return dict(zip(("provenance", "field_provenance", "reducer_state"), row[:3])) | {
        "model": row[3], "embedding": row[4], "list_no": row[5]}


def floor_store(conn: psycopg.Connection, user: str, entities: list[dict], template: dict) -> None:
    content = json.dumps({"entities": entities})
    # Each row's JSON arrives with the row, as a store's derived rows do.
    derived = {k: template[k] for k in ("provenance", "field_provenance", "reducer_state")}
    rows = [{"id": f"ent_{e['invoice_number']}", "observation": str(uuid.uuid4()), "event": str(uuid.uuid4()), "fields": e}
            | derived for e in entities]  # fmt: skip
    conn.execute(
        FLOOR,
        {"user": user, "source": uuid.uuid4(), "run": uuid.uuid4(), "hash": hashlib.sha256(content.encode()).hexdigest(),
         "content": content, "rows": json.dumps(rows), "n": len(entities)}
        | {k: template[k] for k in ("model", "embedding", "list_no")},
    )  # fmt: skip


def invoice(i: int, tag: str) -> dict:
    return {
        "entity_type": "invoice",
        "invoice_number": f"{tag}-{i}",
        "vendor_name": f"Vendor {i % 97}",
        "amount_due": i * 1.5,
        "currency": "EUR",
        "invoice_date": "2024-01-15",
        "notes": f"bench row {i}",
    }


def plain_store(conn: psycopg.Connection, user: str, entities: list[dict]) -> None:
    content = json.dumps({"entities": entities})
    rows = [{"id": f"ent_{e['invoice_number']}", "observation": str(uuid.uuid4()), "fields": e} for e in entities]
    conn.execute(
        PLAIN,
        {"user": user, "source": uuid.uuid4(), "hash": hashlib.sha256(content.encode()).hexdigest(),
         "content": content, "rows": json.dumps(rows)},
    )  # fmt: skip


def throughput(conn: psycopg.Connection, as_user: psycopg.Connection, user: str, batch: int, calls: int,
               tag: str) -> tuple[float, float, float]:
    """Entities per second through neotoma.store (as an ordinary role,
    `as_user`: row level security applies), through the baseline and through
    the floor (every row a store writes, in one statement)."""
    with timer() as t:
        for b in range(calls):
            as_user.execute(STORE, (json.dumps({"entities": [invoice(b * batch + j, tag) for j in range(batch)]}),))
    ours = calls * batch / t()
    with timer() as t:
        for b in range(calls):
            plain_store(conn, user, [invoice(b * batch + j, tag) for j in range(batch)])
    plain = calls * batch / t()
    template = floor_template(conn, user)
    with timer() as t:
        for b in range(calls):
            floor_store(conn, user, [invoice(b * batch + j, tag) for j in range(batch)], template)
    return ours, plain, calls * batch / t()


def statements_per_store(conn: psycopg.Connection, batch: int, tag: str) -> tuple[int, int]:
    """Statements (and foreign-key checks among them) one store of `batch`
    new entities runs inside Postgres, median of 5 stores."""
    counts = []
    for k in range(5):
        conn.execute("SELECT pg_stat_statements_reset()")
        conn.execute(STORE, (json.dumps({"entities": [invoice(k * batch + j, tag) for j in range(batch)]}),))
        counts.append(
            conn.execute(
                "SELECT coalesce(sum(calls), 0)::int, coalesce(sum(calls) FILTER (WHERE query LIKE 'SELECT 1 FROM ONLY%%'), 0)::int "
                "FROM pg_stat_statements WHERE NOT toplevel"
            ).fetchone()
        )
    return sorted(counts)[2]


def concurrent_throughput(dsn: str, user: str, clients: int, calls: int, shared: int) -> float:
    """Entities per second stored by `clients` connections at once, each
    storing batches of 10 entities of which `shared` are the same for every
    client (the same invoices, so the same entities, folded concurrently:
    their stores wait for each other's locks)."""
    barrier = threading.Barrier(clients + 1)
    errors: list[BaseException] = []
    tag = f"C{clients}-S{shared}"

    def client(c: int) -> None:
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
                # Serialised before the clock starts: the clients share the
                # server's two cores, so they do as little as they can.
                bodies = [
                    json.dumps({"entities":
                        [invoice(b * shared + j, f"{tag}-shared") | {"notes": f"client {c} call {b}"} for j in range(shared)]
                        + [invoice(b * 10 + j, f"{tag}-own{c}") for j in range(10 - shared)]})
                    for b in range(calls)
                ]  # fmt: skip
                conn.execute(STORE, (json.dumps({"entities": [invoice(c, f"{tag}-warm{c}")]}),))
                barrier.wait()
                for body in bodies:
                    conn.execute(STORE, (body,), prepare=True)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    with timer() as t:
        for th in threads:
            th.join()
    if errors:
        raise errors[0]
    return clients * calls * 10 / t()


def main() -> None:
    dsn = fresh_database("neotoma_bench_truth")
    user = new_user()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute("CREATE SCHEMA plain")
        conn.execute("CREATE SCHEMA floor")
        for t in ("sources", "entities", "observations"):
            conn.execute(f"CREATE TABLE plain.{t} (LIKE neotoma.{t} INCLUDING ALL)")
        for t in FLOOR_TABLES:
            conn.execute(f"CREATE TABLE floor.{t} (LIKE neotoma.{t} INCLUDING ALL)")

        ordinary_role(conn, ROLE)
        with connect_as(dsn, ROLE, user) as as_user:
            store1, plain1, floor1 = throughput(conn, as_user, user, 1, int(2000 * SCALE), "B1")
            store100, plain100, floor100 = throughput(conn, as_user, user, 100, max(5, int(50 * SCALE)), "B100")
        table(
            f"store throughput (entities/s, as the ordinary role {ROLE}) against the floor: every row a store writes "
            "(11 tables, derived rows included), precomputed, in one statement (goal, issue 40: >= 60% for 1, >= 50% "
            "for 100); the baseline: the source, entity and observation rows alone",
            [
                ("batch", "neotoma.store", "floor", "store/floor", "goal", "baseline", "store/baseline"),
                ("1", f"{store1:,.0f}", f"{floor1:,.0f}", f"{store1 / floor1:.0%}", goal(store1 >= 0.6 * floor1),
                 f"{plain1:,.0f}", f"{store1 / plain1:.0%}"),
                ("100", f"{store100:,.0f}", f"{floor100:,.0f}", f"{store100 / floor100:.0%}", goal(store100 >= 0.5 * floor100),
                 f"{plain100:,.0f}", f"{store100 / plain100:.0%}"),
            ],
        )  # fmt: skip

        if stat_statements(conn):
            rows = [("batch", "statements inside Postgres", "of which foreign-key checks")]
            for batch in (1, 100):
                total, fk = statements_per_store(conn, batch, f"S{batch}")
                rows.append((str(batch), str(total), str(fk)))
            table("statements per store of new entities (pg_stat_statements, nested)", rows)

        ids = [r[0] for r in conn.execute("SELECT id FROM neotoma.entities ORDER BY id LIMIT 1000").fetchall()]
        snap = latencies(
            lambda i: conn.execute(
                "SELECT neotoma.retrieve_entity_snapshot(%s::jsonb)", (json.dumps({"entity_id": ids[i % len(ids)]}),)
            ).fetchone(),
            int(2000 * SCALE),
        )
        table(
            "retrieve_entity_snapshot in SQL (goal: p50 <= 0.3 ms)",
            [("calls", "latency", "goal"), (str(len(snap)), summary(snap), goal(pct(snap, 50) <= 0.3))],
        )

    calls = max(10, int(100 * SCALE))
    rows = [("entities shared by all clients", "1 client", "8 clients", "8 vs 1", "verify()", "goal")]
    for shared in (1, 5):
        one = concurrent_throughput(dsn, user, 1, calls * 4, shared)
        eight = concurrent_throughput(dsn, user, 8, calls, shared)
        with psycopg.connect(dsn, autocommit=True) as conn:
            report = conn.execute("SELECT neotoma.verify()").fetchone()[0]
        rows.append((f"{shared} of 10", f"{one:,.0f}/s", f"{eight:,.0f}/s", f"{eight / one:.1f}x",
                     f"ok={report['ok']} ({report['entities_checked']} entities)",
                     goal(eight >= 1.8 * one and report["ok"]) if shared == 1 else "(contention)"))  # fmt: skip
    table(
        "concurrent stores, batches of 10 entities (goal: 8 clients >= 1.8x one with 1 of 10 shared, verify() clean; "
        "with 5 of 10 shared, stores of the same entities wait for each other)",
        rows,
    )

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))

        # One entity with 1 prior observation, one with 10,000.
        def obs(number: str, k: int) -> dict:
            return {"entity_type": "invoice", "invoice_number": number, "vendor_name": "Deep", "amount_due": float(k)}

        conn.execute(STORE, (json.dumps({"entities": [obs("SHALLOW", -1)]}),))
        deep_n = int(10_000 * min(SCALE, 1))
        for b in range(deep_n // 100):
            conn.execute(STORE, (json.dumps({"entities": [obs("DEEP", b * 100 + j) for j in range(100)]}),))
        counts = dict(
            conn.execute(
                "SELECT e.canonical_name, s.observation_count FROM neotoma.entities e "
                "JOIN neotoma.entity_snapshots s ON s.entity_id = e.id AND s.user_id = e.user_id "
                "WHERE e.canonical_name IN ('SHALLOW · Deep', 'DEEP · Deep')"
            ).fetchall()
        )
        n = int(300 * SCALE)
        shallow = latencies(lambda i: conn.execute(STORE, (json.dumps({"entities": [obs("SHALLOW", 100_000 + i)]}),)), n)
        deep = latencies(lambda i: conn.execute(STORE, (json.dumps({"entities": [obs("DEEP", 100_000 + i)]}),)), n)
        table(
            "store latency of one observation, by the entity's prior observations",
            [
                ("entity", "prior observations", "latency"),
                ("shallow", str(counts.get("SHALLOW · Deep", 0)), summary(shallow)),
                ("deep", str(counts.get("DEEP · Deep", 0)), summary(deep)),
            ],
        )
        print(f"  ratio deep/shallow (p50): {pct(deep, 50) / pct(shallow, 50):.2f}")
        report = conn.execute("SELECT neotoma.verify()").fetchone()[0]
        print(f"\nverify(): ok={report['ok']} entities_checked={report['entities_checked']}")


if __name__ == "__main__":
    main()
