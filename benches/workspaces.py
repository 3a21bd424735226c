"""Benchmark of workspaces (issue 18), all in one run on one cluster.

A user has most entities in `default` and a tenth in `lab`. Measured:

* the first page of `retrieve_entities` (20, with the exact total) in one
  workspace, in the small one, in both (`*`), next to the baseline: the
  same page in plain SQL from the snapshots' index, without actions or RLS;
* the first page of `list_timeline_events`, in one workspace and in all;
* a lexical search in `default` and in `lab`;
* `store` of one entity in `default` and in `lab` (ids per workspace, the
  workspace copied into the derived rows), and the context lookup every
  action without `workspace` does (`get_context`).

No goal is set here: one workspace must keep the listing's constant-time
first page (the index leads with the workspace), several pay a sort.
"""

from __future__ import annotations

import json
import os

import psycopg
from common import fresh_database, latencies, new_user, pct, table

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ENTITIES = max(1000, int(20_000 * SCALE))
CALLS = max(20, int(200 * SCALE))


def action(conn: psycopg.Connection, name: str, args: dict) -> dict:
    return conn.execute(f"SELECT neotoma.{name}(%s::jsonb)", (json.dumps(args),)).fetchone()[0]


def main() -> None:
    dsn = fresh_database("neotoma_bench_workspaces")
    user = new_user()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        for start in range(0, ENTITIES, 500):
            rows = [{"entity_type": "note", "title": f"note {i}", "content": f"text {i}",
                     "created_date": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}"}
                    for i in range(start, min(start + 500, ENTITIES))]
            where = {"workspace": "lab"} if (start // 500) % 10 == 0 else {}
            action(conn, "store", {"entities": rows, **where})
        conn.execute("ANALYZE")
        counts = {w["name"]: w["entities"] for w in action(conn, "list_workspaces", {})["workspaces"]}
        baseline_sql = """
            SELECT count(*) FROM (SELECT s.entity_id FROM neotoma.entity_snapshots s
                                  WHERE s.user_id = %s::uuid AND s.workspace = 'default'
                                  ORDER BY s.last_observation_at DESC NULLS LAST, s.entity_id LIMIT 20) p"""
        rows = []

        def measure(label: str, fn) -> None:
            fn(0)  # warm: plans kept
            ms = latencies(fn, CALLS)
            rows.append([label, f"{pct(ms, 50):.2f}", f"{pct(ms, 95):.2f}"])

        measure("retrieve_entities, default (one workspace)",
                lambda i: action(conn, "retrieve_entities", {"limit": 20}))
        measure("retrieve_entities, lab (a tenth)",
                lambda i: action(conn, "retrieve_entities", {"limit": 20, "workspace": "lab"}))
        measure("retrieve_entities, \"*\" (both)",
                lambda i: action(conn, "retrieve_entities", {"limit": 20, "workspace": "*"}))
        measure("baseline: the page in plain SQL",
                lambda i: conn.execute(baseline_sql, (user,)).fetchone())
        measure("list_timeline_events, default",
                lambda i: action(conn, "list_timeline_events", {"limit": 20}))
        measure("list_timeline_events, \"*\"",
                lambda i: action(conn, "list_timeline_events", {"limit": 20, "workspace": "*"}))
        measure("search (lexical), default",
                lambda i: action(conn, "retrieve_entities", {"search": "note 42", "search_mode": "lexical", "limit": 10}))
        measure("search (lexical), lab",
                lambda i: action(conn, "retrieve_entities", {"search": "note 42", "search_mode": "lexical", "limit": 10,
                                                             "workspace": "lab"}))
        measure("store one entity, default",
                lambda i: action(conn, "store", {"entities": [{"entity_type": "note", "title": f"d{i}"}]}))
        measure("store one entity, lab",
                lambda i: action(conn, "store", {"workspace": "lab", "entities": [{"entity_type": "note", "title": f"l{i}"}]}))
        measure("get_context (what every action reads)", lambda i: action(conn, "get_context", {}))
    print(f"{ENTITIES} entities: {counts}; {CALLS} calls each")
    table("workspaces", [("what", "p50 ms", "p95 ms"), *rows])


if __name__ == "__main__":
    main()
