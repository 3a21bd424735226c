"""Benchmark of the truth model (issue 4), all in one run on one cluster:

* structured `store` throughput, batches of 1 and of 100 entities, next to a
  plain INSERT of the same rows into an equivalent table (the baseline);
* `retrieve_entity_snapshot` latency (p50/p99);
* `store` latency for an entity with 1 prior observation vs 10,000 (the
  snapshot is maintained incrementally, so the ratio should be near 1).
"""

from __future__ import annotations

import json
import os

import psycopg
from common import fresh_database, latencies, new_user, pct, summary, table, timer

SCALE = float(os.environ.get("BENCH_SCALE", "1"))


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


def main() -> None:
    dsn = fresh_database("neotoma_bench_truth")
    user = new_user()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute(
            "CREATE TABLE plain_invoices (user_id uuid, id text, entity_type text, fields jsonb, "
            "created_at timestamptz DEFAULT now(), PRIMARY KEY (user_id, id))"
        )
        store = "SELECT neotoma.store(%s::jsonb)"
        plain = "INSERT INTO plain_invoices (user_id, id, entity_type, fields) VALUES (%s, %s, 'invoice', %s::jsonb)"

        rows = []
        n1 = int(2000 * SCALE)
        with timer() as t:
            for i in range(n1):
                conn.execute(store, (json.dumps({"entities": [invoice(i, "B1")]}),))
        store1 = n1 / t()
        with timer() as t:
            for i in range(n1):
                conn.execute(plain, (user, f"B1-{i}", json.dumps(invoice(i, "B1"))))
        plain1 = n1 / t()
        rows.append(("batch 1", f"{store1:,.0f}", f"{plain1:,.0f}", f"{plain1 / store1:.1f}x"))

        batches = int(50 * SCALE)
        with timer() as t:
            for b in range(batches):
                batch = [invoice(b * 100 + j, "B100") for j in range(100)]
                conn.execute(store, (json.dumps({"entities": batch}),))
        store100 = batches * 100 / t()
        with timer() as t:
            for b in range(batches):
                with conn.cursor() as cur:
                    cur.executemany(
                        plain, [(user, f"B100-{b * 100 + j}", json.dumps(invoice(b * 100 + j, "B100"))) for j in range(100)]
                    )
        plain100 = batches * 100 / t()
        rows.append(("batch 100", f"{store100:,.0f}", f"{plain100:,.0f}", f"{plain100 / store100:.1f}x"))
        table(
            "store throughput (entities/s) vs plain INSERT of the same rows",
            [("", "neotoma.store", "plain INSERT", "plain/store")] + rows,
        )

        ids = [r[0] for r in conn.execute("SELECT id FROM neotoma.entities ORDER BY id LIMIT 1000").fetchall()]
        snap = latencies(
            lambda i: conn.execute(
                "SELECT neotoma.retrieve_entity_snapshot(%s::jsonb)", (json.dumps({"entity_id": ids[i % len(ids)]}),)
            ).fetchone(),
            int(2000 * SCALE),
        )
        print(f"\nretrieve_entity_snapshot over {len(snap)} calls:  {summary(snap)}")

        # One entity with 1 prior observation, one with 10,000.
        def obs(number: str, k: int) -> dict:
            return {"entity_type": "invoice", "invoice_number": number, "vendor_name": "Deep", "amount_due": float(k)}

        conn.execute(store, (json.dumps({"entities": [obs("SHALLOW", -1)]}),))
        deep_n = int(10_000 * min(SCALE, 1))
        for b in range(deep_n // 100):
            conn.execute(store, (json.dumps({"entities": [obs("DEEP", b * 100 + j) for j in range(100)]}),))
        counts = dict(
            conn.execute(
                "SELECT e.canonical_name, s.observation_count FROM neotoma.entities e "
                "JOIN neotoma.entity_snapshots s ON s.entity_id = e.id AND s.user_id = e.user_id "
                "WHERE e.canonical_name IN ('SHALLOW · Deep', 'DEEP · Deep')"
            ).fetchall()
        )
        n = int(300 * SCALE)
        shallow = latencies(lambda i: conn.execute(store, (json.dumps({"entities": [obs("SHALLOW", 100_000 + i)]}),)), n)
        deep = latencies(lambda i: conn.execute(store, (json.dumps({"entities": [obs("DEEP", 100_000 + i)]}),)), n)
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
