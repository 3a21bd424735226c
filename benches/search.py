"""Benchmark of search (issue 17): retrieve_entities with `search` over one
user's 10,000 and 100,000 entities (plus two other users' as noise), next to
a plain `ILIKE '%term%'` scan over the same snapshots as the baseline, in
the lexical, semantic and hybrid modes (embeddings by the built-in model);
and the cost of keeping search current per store (single-entity stores with
everything, without embeddings, and without any search upkeep).

Queries: exact names, names with a typo, single words of the notes (any,
and one of the 50 common ones). Names are made of syllables and notes of
5,000 words, for the variety of real data.
Goals (issue 17): search p50 under 20 ms at 100,000 entities; store
throughput with search maintenance within 1.5x of without. Searches run as
an ordinary role (row level security applies), as every user's do.
"""

from __future__ import annotations

import json
import os
import random

import psycopg
from common import connect_as, fresh_database, goal, latencies, new_user, ordinary_role, pct, summary, table, timer

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
SIZES = [int(10_000 * SCALE), int(100_000 * SCALE)]
NOISE = int(5_000 * SCALE)
CALLS = 200
STORES = int(2_000 * SCALE)
# Searches run as this ordinary role, through row level security.
ROLE = "neotoma_bench_search"

SYLLABLES = ("ka ri mo ta lu ne so vi ra de lo mi za pe gu ho ba ti fe ro na ju le si "
             "ar en ol is um ed an or").split()


def word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts))


# A corpus with the variety of real names and notes (names made of
# syllables; notes drawn from 5,000 words, a few much more common).
_rng = random.Random(1)
FIRST = sorted({word(_rng, 2).capitalize() for _ in range(3_000)})
LAST = sorted({word(_rng, 3).capitalize() for _ in range(8_000)})
WORDS = sorted({word(_rng, 3) for _ in range(5_000)})


def person(rng: random.Random, i: int) -> dict:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    notes = " ".join(rng.choice(WORDS[:50] if rng.random() < 0.2 else WORDS) for _ in range(8))
    return {"entity_type": "person", "name": name, "email": f"p{i}@example.com", "notes": notes}


def load(conn: psycopg.Connection, user: str, start: int, end: int, seed: int) -> None:
    rng = random.Random(seed)
    conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
    with timer() as t:
        for s in range(start, end, 1000):
            batch = [person(rng, i) for i in range(s, min(end, s + 1000))]
            conn.execute("SELECT neotoma.store(%s::jsonb)", (json.dumps({"entities": batch}),))
    n = end - start
    print(f"  stored {n:,} entities for {user[:8]} in {t():.1f}s ({n / max(t(), 1e-9):,.0f}/s)")


def typo(rng: random.Random, name: str) -> str:
    i = rng.randrange(1, len(name) - 1)
    return name[:i] + name[i + 1:]


def queries(conn: psycopg.Connection, user: str, rng: random.Random) -> dict[str, list[str]]:
    names = [r[0] for r in conn.execute(
        "SELECT snapshot->>'name' FROM neotoma.entity_snapshots WHERE user_id = %s ORDER BY entity_id LIMIT 2000",
        (user,)).fetchall()]
    picked = [rng.choice(names) for _ in range(CALLS)]
    return {
        "exact name": picked,
        "name with a typo": [typo(rng, n) for n in picked],
        "one word": [rng.choice(WORDS) for _ in range(CALLS)],
        "a common word": [rng.choice(WORDS[:50]) for _ in range(CALLS)],
    }


def measure(conn: psycopg.Connection, user: str, size: int, rows: list[tuple[str, ...]]) -> float:
    rng = random.Random(size)
    conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
    lexical_p50 = 0.0
    for kind, qs in queries(conn, user, rng).items():
        def mode(m: str, n: int = len(qs)) -> list[float]:
            return latencies(lambda i: conn.execute(
                "SELECT neotoma.retrieve_entities(%s::jsonb)",
                (json.dumps({"search": qs[i], "search_mode": m, "limit": 10, "include_snapshots": False}),)).fetchone(), n)
        search = mode("lexical")
        # The baseline: what one would write without search, a scan of the snapshots' text.
        term = [q.split()[0] if kind == "name with a typo" else q for q in qs]
        ilike = latencies(lambda i: conn.execute(
            "SELECT entity_id FROM neotoma.entity_snapshots WHERE user_id = %s AND snapshot::text ILIKE %s LIMIT 10",
            (user, f"%{term[i]}%")).fetchall(), len(qs))
        rows.append((f"{size:,}", kind, "lexical", summary(search)))
        rows.append((f"{size:,}", kind, "ILIKE scan", summary(ilike)))
        if kind in ("exact name", "one word"):
            rows.append((f"{size:,}", kind, "semantic", summary(mode("semantic", CALLS // 4))))
            rows.append((f"{size:,}", kind, "hybrid", summary(mode("hybrid", CALLS // 4))))
        if kind == "exact name":
            lexical_p50 = pct(search, 50)
    return lexical_p50


def store_latencies(variants: list[str]) -> dict[str, list[float]]:
    """Single-entity stores after 10,000 into one fresh database per
    variant, taken in turn (one store in each, then the next), so that
    drift in the machine's speed weighs on every variant alike. A variant:
    "" keeps all search upkeep; "embeddings" drops the embedding triggers;
    "all" also the search columns, the trigram index and the index of
    observations' and files' words."""
    conns = {}
    for n, drop in enumerate(variants):
        conn = psycopg.connect(fresh_database(f"neotoma_bench_search_store_{n}"), autocommit=True)
        if drop in ("embeddings", "all"):
            conn.execute("DROP TRIGGER entity_snapshots_embedding ON neotoma.entity_snapshots")
            conn.execute("DROP TRIGGER entity_snapshots_embedding_changed ON neotoma.entity_snapshots")
        if drop == "all":
            conn.execute("DROP TRIGGER entity_snapshots_name_trigrams ON neotoma.entity_snapshots")
            conn.execute("ALTER TABLE neotoma.entity_snapshots DROP COLUMN search_vector, DROP COLUMN name_trigrams CASCADE")
            conn.execute("DROP INDEX neotoma.observations_search")
            conn.execute("ALTER TABLE neotoma.files DROP COLUMN search_vector")
        user = new_user()
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        load(conn, user, 0, 10_000 if SCALE >= 1 else 1_000, seed=7)
        conns[drop] = conn
    out: dict[str, list[float]] = {drop: [] for drop in variants}
    rngs = {drop: random.Random(11) for drop in variants}
    for i in range(STORES):
        for drop, conn in conns.items():
            entity = person(rngs[drop], 1_000_000 + i)
            out[drop] += latencies(lambda _: conn.execute(
                "SELECT neotoma.store(%s::jsonb)", (json.dumps({"entities": [entity]}),)), 1)
    for conn in conns.values():
        conn.close()
    return out


def main() -> None:
    dsn = fresh_database("neotoma_bench_search")
    user, others = new_user(), [new_user(), new_user()]
    rows = [("entities", "query", "how", "latency")]
    p50_at_largest = 0.0
    with psycopg.connect(dsn, autocommit=True) as conn:
        ordinary_role(conn, ROLE)
        for k, other in enumerate(others):
            load(conn, other, 0, NOISE, seed=100 + k)
        loaded = 0
        for size in SIZES:
            load(conn, user, loaded, size, seed=size)
            loaded = size
            # As autovacuum leaves them: statistics, visibility, GIN pending lists merged.
            conn.execute("VACUUM (ANALYZE) neotoma.entity_snapshots, neotoma.entity_name_trigrams, "
                         "neotoma.entity_embeddings, neotoma.entities")
            with connect_as(dsn, ROLE, user) as reader:
                p50_at_largest = measure(reader, user, size, rows)
    table("search latency (one user; limit 10; no snapshots in the answer)", rows)

    stores = store_latencies(["", "embeddings", "all"])
    with_search, lexical_only, without = stores[""], stores["embeddings"], stores["all"]
    ratio = pct(with_search, 50) / max(pct(without, 50), 1e-9)
    table("store of one entity (after 10,000), with and without search maintenance", [
        ("", "latency", "stores/s"),
        ("with search columns and embeddings", summary(with_search), f"{1000 / pct(with_search, 50):,.0f}"),
        ("without embeddings (triggers dropped)", summary(lexical_only), f"{1000 / pct(lexical_only, 50):,.0f}"),
        ("without any (columns dropped too)", summary(without), f"{1000 / pct(without, 50):,.0f}"),
    ])
    table("goals", [
        ("goal", "figure", ""),
        (f"search p50 < 20 ms at {SIZES[-1]:,} entities (exact names)", f"{p50_at_largest:.2f} ms", goal(p50_at_largest < 20)),
        ("store with search within 1.5x of without (p50)", f"{ratio:.2f}x", goal(ratio <= 1.5)),
    ])


if __name__ == "__main__":
    main()
