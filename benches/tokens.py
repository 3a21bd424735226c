"""What a call that comes with a token pays for its limits (issue 43): the
extension reads the token's limits (`read_only`, `tools`, `workspaces`) before every call
that names one (`neotoma.token_id`, as the gateway sets it), and each
observation keeps the token it was written with.

As an ordinary role (a neotoma_service member, row level security applies),
a user of 10,000 entities × BENCH_SCALE (at least 1,000):
`retrieve_entity_snapshot`, `retrieve_entities` first page and `store` of
one entity without a token, with a token without limits, with a
read-only one and with one limited to the workspace the data is in (whose
scope is bounded by it); four alternating rounds, p50 of each. Goal: within 1.2× of
the call without a token (the issue's budget for the grant check).
"""

from __future__ import annotations

import json
import os
import statistics
import uuid

import psycopg
from common import connect_as, fresh_database, goal, latencies, ordinary_role, pct, table

SCALE = float(os.environ.get("BENCH_SCALE", "1"))
ENTITIES = max(1_000, int(10_000 * SCALE))
CALLS = max(100, int(300 * SCALE))
ROLE = "neotoma_bench_tokens"
USER = "43000000-0000-0000-0000-0000000000b1"


def main() -> None:
    dsn = fresh_database("neotoma_bench_tokens")
    with psycopg.connect(dsn, autocommit=True) as admin:
        ordinary_role(admin, ROLE)
        full = admin.execute("SELECT (neotoma.create_api_token(%s, 'bench-full', 'bench agent'))->>'id'",
                             (USER,)).fetchone()[0]  # fmt: skip
        reader = admin.execute(
            "SELECT (neotoma.create_api_token(%s, 'bench-reader', 'bench reader', 'user', NULL, true))->>'id'",
            (USER,)).fetchone()[0]  # fmt: skip
        in_default = admin.execute(
            "SELECT (neotoma.create_api_token(%s, 'bench-ws', 'bench workspace', 'user', NULL, false, NULL,"
            " '{default}'))->>'id'", (USER,)).fetchone()[0]  # fmt: skip
    with connect_as(dsn, ROLE, USER) as conn:
        for b in range(0, ENTITIES, 500):
            people = [{"entity_type": "person", "name": f"Person {i}", "email": f"p{i}@tokens.example"}
                      for i in range(b, min(b + 500, ENTITIES))]  # fmt: skip
            conn.execute("SELECT neotoma.store(%s::jsonb)", (json.dumps({"entities": people}),))
        conn.execute("ANALYZE")
        ids = [r[0] for r in conn.execute("SELECT id FROM neotoma.entities ORDER BY id LIMIT 500")]

        def call(action: str, args: dict) -> None:
            conn.execute(f"SELECT neotoma.{action}(%s::jsonb)", (json.dumps(args),))

        ops = {
            "retrieve_entity_snapshot": lambda i: call("retrieve_entity_snapshot", {"entity_id": ids[i % len(ids)]}),
            "retrieve_entities, first page": lambda i: call("retrieve_entities", {"entity_type": "person", "limit": 20}),
            "store one entity": lambda i: call("store", {"entities": [{"entity_type": "person", "name": f"N {uuid.uuid4()}",
                                                                      "email": f"{uuid.uuid4()}@tokens.example"}]}),
        }
        tokens = {"no token": "", "token without limits": full, "read-only token": reader,
                  "workspace-limited token": in_default}  # fmt: skip
        rows = [("operation", *tokens, "goal", "")]
        for label, fn in ops.items():
            kinds = [k for k in tokens if not (label.startswith("store") and k == "read-only token")]
            rounds: dict[str, list[float]] = {k: [] for k in kinds}
            for _ in range(4):
                for k in kinds:
                    conn.execute("SELECT set_config('neotoma.token_id', %s, false)", (tokens[k],))
                    fn(0)
                    rounds[k].append(pct(latencies(fn, CALLS), 50))
            p50 = {k: statistics.median(v) for k, v in rounds.items()}
            worst = max(p50[k] / p50["no token"] for k in kinds)
            cells = [f"{p50[k]:.3f} ms ({p50[k] / p50['no token']:.2f}x)" if k in p50 else "(refused)" for k in tokens]
            rows.append((label, *cells, "≤ 1.2x", goal(worst <= 1.2)))
        conn.execute("SELECT set_config('neotoma.token_id', '', false)")
    table(f"calls with a token, as an ordinary role, {ENTITIES:,} entities (p50 of 4 alternating rounds of {CALLS})", rows)


if __name__ == "__main__":
    main()
