"""The middle of a rolling update: today's library and today's gateway on a
database that still has the previous release's SQL (before its
`ALTER EXTENSION neotoma UPDATE`). The gateway must start, serve tools and
export and import a memory as on an updated database (the functions the
gateway calls since 0.20 do not exist there yet: it reads as the previous
gateway did).

    rolling.py DSN USER     DSN: a superuser's connection to the database;
                            USER: a user with data there (before.sql's)

Run by tests/upgrade/from-release with NEOTOMA_MCP_BIN set.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg
from mcp import Client
from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mcp_support import gateway_env, mcp_bin, ok  # noqa: E402


async def serve(dsn: str, user: str) -> None:
    params = StdioServerParameters(
        command=mcp_bin(), args=["--user-id", user], env=gateway_env(DATABASE_URL=dsn, NEOTOMA_LOG="warn")
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        assert len(tools.tools) > 10, [t.name for t in tools.tools]
        listed = ok(await client.call_tool("retrieve_entities", {"entity_type": "person"}))
        assert listed["total"] == 1, listed


def run(*args: str, dsn: str) -> None:
    done = subprocess.run(
        [mcp_bin(), *args, "--database-url", dsn],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr


def entity_count(conn: psycopg.Connection, user: str) -> int:
    return conn.execute("SELECT count(*) FROM neotoma.entities WHERE user_id = %s", (user,)).fetchone()[0]


def main() -> None:
    dsn, user = sys.argv[1], sys.argv[2]
    with psycopg.connect(dsn, autocommit=True) as conn:
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'neotoma'").fetchone()[0]
        asyncio.run(serve(dsn, user))
        copy = str(uuid.uuid4())
        with tempfile.TemporaryDirectory() as work:
            export = Path(work) / "memory.jsonl"
            run("export", "--user", user, "--out", str(export), dsn=dsn)
            lines = export.read_text().splitlines()
            assert any(json.loads(line)["table"] == "entities" for line in lines), lines[:3]
            run("import", "--user", copy, str(export), dsn=dsn)
        try:
            assert entity_count(conn, copy) == entity_count(conn, user) > 0
            verified = conn.execute("SELECT neotoma.verify()").fetchone()[0]
            assert verified["ok"], verified
            # Semantic lists built through today's library on the previous
            # SQL (which packs no lists), and a search that reads them.
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
            built = conn.execute("SELECT neotoma.index_embeddings(1)").fetchone()[0]
            assert built and built[0]["lists"] > 0, built
            found = conn.execute("SELECT neotoma.retrieve_entities(%s)", (
                json.dumps({"search": "person", "search_mode": "semantic"}),)).fetchone()[0]
            assert found["search_method"] == "semantic" and found["total"] > 0, found
            conn.execute("RESET neotoma.user_id")
        finally:
            conn.execute("SELECT neotoma.erase_user(%s, true)", (copy,))
    print(f"rolling update: today's gateway serves, exports and imports on a {version} database")


if __name__ == "__main__":
    main()
