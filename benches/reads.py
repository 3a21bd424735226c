"""Every read, small user against big user (issue 40: every read flat under
row level security), in SQL as an ordinary role.

Two users in one database: 10,000 entities and BIG (200,000 × BENCH_SCALE,
at least 20,000), of million.py's shape (persons, tasks with due dates,
notes, REFERS_TO chains), with their semantic lists and common words built
as a gateway's upkeep builds them. Then each read action of the catalog
(and of the tool sets), with arguments taken from the user's own data, is
timed for both users: p50 of 7 calls after one untimed. A read whose p50
grows more than 1.3× from the small to the big user is flagged: it reads
something that grows with the user's data (under RLS a condition that is
not leakproof is no index condition, docs/decisions.md). Reads whose answer
counts everything by contract are marked so. Figures only; nothing here is
a test.
"""

from __future__ import annotations

import json
import os
import time
import uuid

import psycopg
from common import connect_as, fresh_database, ordinary_role, pct, table, timer
from million import link, load

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
SMALL = 10_000
BIG = max(20_000, int(200_000 * SCALE))
CALLS = 7
ROLE = "neotoma_bench_reads"
DATABASE = "neotoma_bench_reads"
# Answers that count every matching row by contract (a total, a count per
# type or month): they grow with the data however they are read.
COUNTS_ALL = {"list_timeline_events (no range, its total)", "list_resources", "retrieve_records",
              "memory_search_nodes"}


def context(conn: psycopg.Connection, user: str) -> dict[str, str]:
    """Ids and names of the user's own data for the reads' arguments."""
    eid, name, email = conn.execute(
        "SELECT e.id, s.snapshot->>'name', s.snapshot->>'email' FROM neotoma.entities e "
        "JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id "
        "WHERE e.user_id = %s AND e.entity_type = 'person' ORDER BY e.id LIMIT 1 OFFSET 500", (user,)).fetchone()  # fmt: skip
    linked, rel, rtype, target = conn.execute(
        "SELECT source_entity_id, id, relationship_type, target_entity_id FROM neotoma.relationships "
        "WHERE user_id = %s ORDER BY id LIMIT 1 OFFSET 50", (user,)).fetchone()  # fmt: skip
    source = conn.execute("SELECT source_id FROM neotoma.observations WHERE user_id = %s AND entity_id = %s LIMIT 1",
                          (user, eid)).fetchone()[0]  # fmt: skip
    return {"eid": eid, "name": name, "email": email, "linked": linked, "rel": str(rel), "rtype": rtype,
            "target": target, "source": str(source)}


def reads(c: dict[str, str]) -> list[tuple[str, str, dict]]:
    """(label, action, arguments) of each read."""
    return [
        ("retrieve_entity_snapshot", "retrieve_entity_snapshot", {"entity_id": c["eid"]}),
        ("retrieve_entity_snapshot at a time", "retrieve_entity_snapshot", {"entity_id": c["eid"], "at": "2030-01-01T00:00:00Z"}),
        ("list_observations", "list_observations", {"entity_id": c["eid"]}),
        ("retrieve_field_provenance", "retrieve_field_provenance", {"entity_id": c["eid"], "field": "name"}),
        ("retrieve_entities, typed", "retrieve_entities", {"entity_type": "person", "limit": 20}),
        ("retrieve_entities, offset 1,000", "retrieve_entities", {"limit": 20, "offset": 1000}),
        ("retrieve_entity_by_identifier, exact", "retrieve_entity_by_identifier", {"identifier": c["email"]}),
        ("retrieve_entity_by_identifier, partial", "retrieve_entity_by_identifier", {"identifier": c["email"].split("@")[0][1:]}),
        ("list_relationships", "list_relationships", {"entity_id": c["linked"]}),
        ("get_relationship_snapshot", "get_relationship_snapshot",
         {"relationship_type": c["rtype"], "source_entity_id": c["linked"], "target_entity_id": c["target"]}),
        ("retrieve_related_entities, 2 hops", "retrieve_related_entities", {"entity_id": c["linked"], "max_hops": 2}),
        ("retrieve_graph_neighborhood, entity", "retrieve_graph_neighborhood", {"node_id": c["linked"]}),
        ("retrieve_graph_neighborhood, source", "retrieve_graph_neighborhood", {"node_id": c["source"], "node_type": "source"}),
        ("list_timeline_events, an entity", "list_timeline_events", {"entity_id": c["eid"]}),
        ("list_timeline_events, one month", "list_timeline_events", {"after_date": "2025-06-01", "before_date": "2025-07-01", "limit": 20}),
        ("list_timeline_events (no range, its total)", "list_timeline_events", {"limit": 20}),
        ("search, a name (lexical)", "retrieve_entities", {"search": c["name"], "search_mode": "lexical", "limit": 10}),
        ("search, with observations", "retrieve_entities", {"search": c["name"], "include_observations": True, "limit": 10}),
        ("search_subgraph", "search_subgraph", {"query": c["name"]}),
        ("get_subgraph_by_ids", "get_subgraph_by_ids", {"entity_ids": [c["eid"], c["linked"]]}),
        ("list_entity_types", "list_entity_types", {}),
        ("list_recent_changes", "list_recent_changes", {"limit": 20}),
        ("list_workspaces", "list_workspaces", {}),
        ("list_resources", "list_resources", {}),
        ("retrieve_records", "retrieve_records", {"limit": 20}),
        ("list_contradictions", "list_contradictions", {"limit": 10}),
        ("list_potential_duplicates", "list_potential_duplicates", {"entity_type": "person", "limit": 10}),
        ("memory_read_graph, a page", "memory_read_graph", {}),
        ("memory_open_nodes", "memory_open_nodes", {"names": [c["name"]]}),
        ("memory_search_nodes", "memory_search_nodes", {"query": c["name"]}),
        ("workspace_get_entity_relations", "workspace_get_entity_relations", {"workspaceName": "default", "entityName": c["name"]}),
        ("graphmem_list_entities", "graphmem_list_entities", {"per_page": 20}),
        ("engram_get_memory", "engram_get_memory", {"query": c["name"]}),
    ]


def measure(conn: psycopg.Connection, user: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, action, args in reads(context(conn, user)):
        def once() -> None:
            conn.execute(f"SELECT neotoma.{action}(%s::jsonb)", (json.dumps(args),))

        try:
            once()
        except psycopg.Error as e:
            print(f"  {label}: {str(e).splitlines()[0][:120]}", flush=True)
            out[label] = float("nan")
            continue
        times = []
        for _ in range(CALLS):
            start = time.perf_counter()
            once()
            times.append((time.perf_counter() - start) * 1000)
        out[label] = pct(times, 50)
    return out


def main() -> None:
    dsn = fresh_database(DATABASE)
    small, big = (str(uuid.UUID(int=0x41 << 120 | k)) for k in (1, 2))
    with psycopg.connect(dsn, autocommit=True) as admin:
        ordinary_role(admin, ROLE)
        for user, n in ((small, SMALL), (big, BIG)):
            with connect_as(dsn, ROLE, user) as conn:
                load(conn, user, 0, n)
                link(conn, user, SMALL // 100)
                with timer() as t:
                    conn.execute("SELECT neotoma.index_embeddings()")
                print(f"  semantic lists and common words built in {t():.1f} s", flush=True)
        admin.execute("VACUUM (ANALYZE)")
    at = {}
    for user in (small, big):
        with connect_as(dsn, ROLE, user) as conn:
            at[user] = measure(conn, user)
    rows = [("read", f"{SMALL:,}", f"{BIG:,}", "ratio", "")]
    for label, a in at[small].items():
        b = at[big][label]
        ratio = b / a if a == a and b == b and a > 0 else float("nan")
        note = "counts all (by contract)" if label in COUNTS_ALL else ("GROWS" if ratio > 1.3 else "flat")
        rows.append((label, f"{a:.2f} ms", f"{b:.2f} ms", f"{ratio:.2f}x", note))
    table(f"every read as an ordinary role (RLS), p50 of {CALLS}: {SMALL:,} against {BIG:,} entities", rows)


if __name__ == "__main__":
    main()
