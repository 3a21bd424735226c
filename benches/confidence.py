"""Benchmark of confidence ratings (issue 18), all in one run on one cluster:

* `retrieve_entities {min_confidence}` (a page of 20 and the exact total,
  read from every snapshot of the user) next to the plain listing (the
  count rows give its total) and to the baseline: the same filter in plain
  SQL over the snapshots' field_provenance, without actions or RLS;
* `retrieve_entity_snapshot {min_confidence}` next to the plain snapshot;
* `contest` (insert, refold of the entity, change feed) next to `correct`
  (a new observation folded), each on an entity of one observation.

Half the entities are rated B2, half unrated (F3); no goal is set for these
figures, they show what the filter costs.
"""

from __future__ import annotations

import json
import os

import psycopg
from common import fresh_database, latencies, new_user, pct, table

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ENTITIES = max(500, int(10_000 * SCALE))
CALLS = max(20, int(200 * SCALE))


def action(conn: psycopg.Connection, name: str, args: dict) -> dict:
    return conn.execute(f"SELECT neotoma.{name}(%s::jsonb)", (json.dumps(args),)).fetchone()[0]


def main() -> None:
    dsn = fresh_database("neotoma_bench_confidence")
    user = new_user()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        for start in range(0, ENTITIES, 500):
            rows = [{"entity_type": "note", "title": f"note {i}", "content": f"text {i}"}
                    for i in range(start, min(start + 500, ENTITIES))]
            rated = {"confidence": "B2"} if (start // 500) % 2 == 0 else {}
            action(conn, "store", {"entities": rows, **rated})
        conn.execute("ANALYZE")
        ids = [r[0] for r in conn.execute("SELECT id FROM neotoma.entities ORDER BY id LIMIT %s", (CALLS,))]
        baseline = """
            SELECT count(*) FROM neotoma.entity_snapshots s
            WHERE s.user_id = %s::uuid AND EXISTS (
              SELECT FROM jsonb_each(s.field_provenance) f
              WHERE substr(f.value->>'confidence', 1, 1) COLLATE "C" <= 'B'
                AND substr(f.value->>'confidence', 2, 1) COLLATE "C" <= '2')"""
        listing = latencies(lambda i: action(conn, "retrieve_entities", {"limit": 20}), CALLS)
        confident = latencies(lambda i: action(conn, "retrieve_entities", {"limit": 20, "min_confidence": "B2"}), CALLS)
        plain = latencies(lambda i: conn.execute(baseline, (user,)).fetchone(), CALLS)
        total = action(conn, "retrieve_entities", {"limit": 1, "min_confidence": "B2"})["total"]
        snap = latencies(lambda i: action(conn, "retrieve_entity_snapshot", {"entity_id": ids[i % len(ids)]}), CALLS)
        snap_min = latencies(lambda i: action(conn, "retrieve_entity_snapshot",
                                              {"entity_id": ids[i % len(ids)], "min_confidence": "B2"}), CALLS)
        observation = {e: conn.execute("SELECT id FROM neotoma.observations WHERE entity_id = %s LIMIT 1", (e,)).fetchone()[0]
                       for e in ids}
        contests = latencies(lambda i: action(conn, "contest", {"observation_id": str(observation[ids[i]]),
                                                                 "reason": f"doubt {i}"}), len(ids))
        corrects = latencies(lambda i: action(conn, "correct", {"entity_id": ids[i], "entity_type": "note",
                                                                 "field": "content", "value": f"fixed {i}"}), len(ids))
        verified = conn.execute("SELECT neotoma.verify()->>'ok'").fetchone()[0]

    table(f"Listing {ENTITIES:,} notes ({total:,} pass B2), p50 / p99 ms", [
        ("call", "p50", "p99"),
        ("retrieve_entities {limit 20}", f"{pct(listing, 50):.2f}", f"{pct(listing, 99):.2f}"),
        ("retrieve_entities {limit 20, min_confidence B2}", f"{pct(confident, 50):.2f}", f"{pct(confident, 99):.2f}"),
        ("baseline: plain SQL count of passing snapshots", f"{pct(plain, 50):.2f}", f"{pct(plain, 99):.2f}"),
    ])
    table("One entity, p50 / p99 ms", [
        ("call", "p50", "p99"),
        ("retrieve_entity_snapshot", f"{pct(snap, 50):.2f}", f"{pct(snap, 99):.2f}"),
        ("retrieve_entity_snapshot {min_confidence B2}", f"{pct(snap_min, 50):.2f}", f"{pct(snap_min, 99):.2f}"),
        ("correct (a new observation folded)", f"{pct(corrects, 50):.2f}", f"{pct(corrects, 99):.2f}"),
        ("contest (recorded, entity refolded)", f"{pct(contests, 50):.2f}", f"{pct(contests, 99):.2f}"),
    ])
    print(f"\nverify() after the run: ok = {verified}")


if __name__ == "__main__":
    main()
