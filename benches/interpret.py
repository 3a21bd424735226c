"""A large CSV interpreted inside the database: a 200,000-row file (scaled by
BENCH_SCALE) stored with `store`, next to the plain-SQL baseline of inserting
the same rows into an ordinary table with one index. Prints figures."""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import fresh_database, new_user, table  # noqa: E402


def main() -> None:
    rows = int(200_000 * float(os.environ.get("BENCH_SCALE", "1")))
    data = "name,email,amount\n" + "".join(f"Person {i},p{i}@example.com,{i % 1000}\n" for i in range(rows))
    dsn = fresh_database("neotoma_bench_interpret")
    out = [("what", "rows", "seconds", "rows/s")]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        t = time.perf_counter()
        conn.execute("CREATE TABLE plain (name text, email text PRIMARY KEY, amount int)")
        conn.execute(
            "INSERT INTO plain SELECT split_part(l, ',', 1), split_part(l, ',', 2), split_part(l, ',', 3)::int "
            "FROM unnest(string_to_array(rtrim(%s, E'\\n'), E'\\n')) WITH ORDINALITY AS x(l, n) WHERE n > 1",
            (data,),
        )
        baseline = time.perf_counter() - t
        out.append(("plain SQL: INSERT into a table with a primary key", str(rows), f"{baseline:.1f}", f"{rows / baseline:,.0f}"))
        for limit in (None, rows):
            # With the default row limit (100,000) a bigger file is refused
            # at once with a reason; raised, it is interpreted.
            conn.execute("RESET neotoma.interpret_max_rows" if limit is None
                         else f"SET neotoma.interpret_max_rows = {limit}")
            request = {"user_id": new_user(), "file_content": base64.b64encode(data.encode()).decode(),
                       "mime_type": "text/csv", "original_filename": "people.csv"}  # fmt: skip
            t = time.perf_counter()
            answer = conn.execute("SELECT neotoma.store(%s::jsonb)", (json.dumps(request),)).fetchone()[0]
            took = time.perf_counter() - t
            run = answer["interpretation"]
            setting = "default row limit" if limit is None else f"interpret_max_rows = {limit}"
            out.append((f"store ({setting}): run {run['status']}, {run['entities_created']} entities",
                        str(rows), f"{took:.1f}", f"{rows / took:,.0f}"))  # fmt: skip
        ok = conn.execute("SELECT neotoma.verify()->>'ok'").fetchone()[0]
    table(f"Interpreting a {rows:,}-row CSV ({len(data) / 1e6:.1f} MB); verify() ok: {ok}", out)


if __name__ == "__main__":
    main()
