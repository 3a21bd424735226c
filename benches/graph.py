"""Benchmark of the graph (issue 6): a graph of 100,000 entities and 500,000
relationships for one user, plus noise from two other users. Prints, next to a
hand-written recursive-CTE / plain SQL baseline over the same tables:

* retrieve_related_entities latency at 1, 2 and 3 hops (p50/p99);
* retrieve_graph_neighborhood latency;
* list_timeline_events latency for a one-month window.

Entities are stored through neotoma.store (batches of 1000); relationships are
bulk-loaded with SQL (same ids and shape create_relationship makes) so the
graph builds in minutes.
"""

from __future__ import annotations

import json
import os
import random

import psycopg
from common import fresh_database, goal, latencies, new_user, pct, summary, table, timer

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ENTITIES = int(100_000 * SCALE)
DEGREE = 5  # outgoing relationships per entity → 500,000 for 100,000 entities
CALLS = 200


def load(conn: psycopg.Connection, user: str, n: int) -> None:
    conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
    with timer() as t:
        for start in range(0, n, 1000):
            batch = [
                {
                    "entity_type": "task",
                    "title": f"task {i}",
                    "status": "open",
                    "due_date": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
                }
                for i in range(start, min(n, start + 1000))
            ]
            conn.execute("SELECT neotoma.store(%s::jsonb)", (json.dumps({"entities": batch}),))
    print(f"  stored {n:,} entities for {user[:8]} in {t():.1f}s ({n / t():,.0f}/s)")
    with timer() as t:
        conn.execute(
            """
            WITH e AS (SELECT id, row_number() OVER (ORDER BY id) AS n, count(*) OVER () AS total
                       FROM neotoma.entities WHERE user_id = %(u)s::uuid),
            pairs AS (
              SELECT DISTINCT a.id AS s, b.id AS t
              FROM e a CROSS JOIN generate_series(1, %(d)s) k
              JOIN e b ON b.n = 1 + (abs(hashint8(a.n * 31 + k)) %% a.total)
              WHERE a.id <> b.id)
            INSERT INTO neotoma.relationships (user_id, id, relationship_type, source_entity_id, target_entity_id,
                                               snapshot, observation_count, last_observation_at)
            SELECT %(u)s::uuid, neotoma._derived_uuid('relationship', ARRAY[%(u)s::text, 'REFERS_TO', s, t]),
                   'REFERS_TO', s, t, '{}', 1, now()
            FROM pairs ON CONFLICT DO NOTHING
            """,
            {"u": user, "d": DEGREE},
        )
    count = conn.execute("SELECT count(*) FROM neotoma.relationships WHERE user_id = %s", (user,)).fetchone()[0]
    print(f"  loaded {count:,} relationships in {t():.1f}s")


# The same answer as retrieve_related_entities (entities with their hop and
# names, the relationships walked), from a hand-written recursive CTE.
BASELINE_HOPS = """
WITH RECURSIVE walk(id, hop) AS (
  SELECT %(start)s::text, 0
  UNION
  SELECT CASE WHEN r.source_entity_id = w.id THEN r.target_entity_id ELSE r.source_entity_id END, w.hop + 1
  FROM walk w JOIN neotoma.relationships r
    ON r.user_id = %(u)s::uuid AND r.merged_into IS NULL
   AND (r.source_entity_id = w.id OR r.target_entity_id = w.id)
  WHERE w.hop < %(hops)s),
reached AS (SELECT id, min(hop) AS hop FROM walk GROUP BY id)
SELECT json_build_object(
  'entities', (SELECT json_agg(json_build_object('id', e.id, 'entity_type', e.entity_type,
                 'canonical_name', e.canonical_name, 'hop', r.hop) ORDER BY r.hop, r.id)
               FROM reached r JOIN neotoma.entities e ON e.user_id = %(u)s::uuid AND e.id = r.id WHERE r.hop > 0),
  'relationships', (SELECT json_agg(json_build_object('id', x.id, 'relationship_type', x.relationship_type,
                      'source_entity_id', x.source_entity_id, 'target_entity_id', x.target_entity_id))
                    FROM (SELECT DISTINCT r.id, r.relationship_type, r.source_entity_id, r.target_entity_id
                          FROM reached f JOIN neotoma.relationships r
                            ON r.user_id = %(u)s::uuid AND r.merged_into IS NULL
                           AND (r.source_entity_id = f.id OR r.target_entity_id = f.id)
                          WHERE f.hop < %(hops)s) x))
"""

BASELINE_NEIGHBORHOOD = """
SELECT (SELECT snapshot FROM neotoma.entity_snapshots WHERE user_id = %(u)s::uuid AND entity_id = %(start)s),
       (SELECT jsonb_agg(r) FROM neotoma.relationships r WHERE r.user_id = %(u)s::uuid
          AND (r.source_entity_id = %(start)s OR r.target_entity_id = %(start)s)),
       (SELECT jsonb_agg(t) FROM neotoma.timeline_events t WHERE t.user_id = %(u)s::uuid AND t.entity_id = %(start)s)
"""

BASELINE_TIMELINE = """
SELECT jsonb_agg(t ORDER BY event_timestamp DESC, id) FROM (
  SELECT * FROM neotoma.timeline_events WHERE user_id = %(u)s::uuid
    AND event_timestamp >= '2024-03-01' AND event_timestamp < '2024-04-01'
  ORDER BY event_timestamp DESC, id LIMIT 100) t
"""


def main() -> None:
    dsn = fresh_database("neotoma_bench_graph")
    user = new_user()
    with psycopg.connect(dsn, autocommit=True) as conn:
        print("building the graph")
        for noise in (new_user(), new_user()):
            load(conn, noise, ENTITIES // 10)
        load(conn, user, ENTITIES)
        conn.execute("ANALYZE")
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        ids = [r[0] for r in conn.execute("SELECT id FROM neotoma.entities WHERE user_id = %s ORDER BY id", (user,))]
        rng = random.Random(7)
        starts = [rng.choice(ids) for _ in range(CALLS)]

        rows = [("query", "neotoma action", "baseline SQL", "ratio p50", "avg reached", "goal")]
        for hops in (1, 2, 3):
            n = CALLS if hops < 3 else CALLS // 2
            reached: list[int] = []

            def action(i: int) -> None:
                r = conn.execute(
                    "SELECT neotoma.retrieve_related_entities(%s::jsonb)",
                    (json.dumps({"entity_id": starts[i], "max_hops": hops, "include_entities": False}),),
                ).fetchone()[0]
                reached.append(r["total_entities"])

            a = latencies(action, n)
            b = latencies(
                lambda i: conn.execute(BASELINE_HOPS, {"start": starts[i], "u": user, "hops": hops}).fetchone(), n
            )
            ratio = pct(a, 50) / pct(b, 50)
            rows.append((f"related entities, {hops} hop(s)", summary(a), summary(b), f"{ratio:.1f}x",
                         f"{sum(reached) / len(reached):,.0f}", goal(ratio <= 2) if hops == 3 else ""))  # fmt: skip
        a = latencies(
            lambda i: conn.execute(
                "SELECT neotoma.retrieve_graph_neighborhood(%s::jsonb)", (json.dumps({"node_id": starts[i]}),)
            ).fetchone(),
            CALLS,
        )
        b = latencies(lambda i: conn.execute(BASELINE_NEIGHBORHOOD, {"start": starts[i], "u": user}).fetchone(), CALLS)
        rows.append(("graph neighborhood", summary(a), summary(b), f"{pct(a, 50) / pct(b, 50):.1f}x", "", ""))
        a = latencies(
            lambda i: conn.execute(
                "SELECT neotoma.list_timeline_events(%s::jsonb)",
                (json.dumps({"after_date": "2024-03-01", "before_date": "2024-04-01"}),),
            ).fetchone(),
            CALLS,
        )
        b = latencies(lambda i: conn.execute(BASELINE_TIMELINE, {"u": user}).fetchone(), CALLS)
        ratio = pct(a, 50) / pct(b, 50)
        rows.append(("timeline, one month", summary(a), summary(b), f"{ratio:.1f}x", "", goal(ratio <= 2)))
        table(
            f"graph of {len(ids):,} entities ({DEGREE} outgoing relationships each), latency per call "
            "(goal: 3 hops and one month within 2x of the baseline)",
            rows,
        )


if __name__ == "__main__":
    main()
