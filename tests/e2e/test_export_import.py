"""neotoma-mcp export / import: a user's memory written as JSON Lines and
replayed into another database (as the gateway's non-superuser role): the
same ids, the same snapshots, verify() clean, and importing twice adds
nothing. The history goes too: corrections, deletions, merges, splits,
files."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import psycopg
import pytest
from conftest import APP_ROLE, admin_dsn, new_user, ok
from mcp_support import gateway_env, mcp_bin

pytestmark = pytest.mark.anyio

TARGET = "neotoma_e2e_import"

# Current entities (a merged entity's own row is what it was before its merge).
SNAPSHOTS = """
    SELECT coalesce(md5(string_agg(s.entity_id || ':' || s.snapshot::text || s.provenance::text || s.observation_count,
                                   ',' ORDER BY s.entity_id)), '')
    FROM neotoma.entity_snapshots s JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id
    WHERE s.user_id = %s AND e.merged_into IS NULL"""
RELATIONSHIPS = """
    SELECT coalesce(md5(string_agg(id::text || snapshot::text || coalesce(deleted_at::text, '') || coalesce(merged_into::text, ''),
                                   ',' ORDER BY id)), '')
    FROM neotoma.relationships WHERE user_id = %s"""


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([mcp_bin(), *args], env=gateway_env(), capture_output=True, text=True)


def app_dsn(dbname: str) -> str:
    return os.environ["NEOTOMA_TEST_PG"].replace("user=postgres", f"user={APP_ROLE}") + f" dbname={dbname}"


async def test_export_then_import_rebuilds_the_same_memory(start_gateway, database: str, tmp_path: Path) -> None:
    user, other = new_user(), new_user()
    gw = start_gateway("--user-id", user)
    from conftest import Client

    async with Client(gw.url) as c:
        stored = ok(await c.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"},
            {"entity_type": "person", "name": "Ada L.", "email": "ada.l@example.com"},
            {"entity_type": "note", "title": "Engines", "content": "notes", "created_date": "2026-01-02"}]}))
        ada, ada2, note = (e["entity_id"] for e in stored["entities"])
        ok(await c.call_tool("store", {"file_content": base64.b64encode(b"name,email\nBo,bo@example.com\n").decode(),
                                       "mime_type": "text/csv", "interpretation_config": {"entity_type": "person"}}))
        ok(await c.call_tool("correct", {"entity_id": ada, "entity_type": "person", "field": "name", "value": "Augusta Ada King"}))
        ok(await c.call_tool("create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": note, "target_entity_id": ada}))
        ok(await c.call_tool("merge_entities", {"from_entity_id": ada2, "to_entity_id": ada}))
        moved = [o["id"] for o in ok(await c.call_tool("list_observations", {"entity_id": ada}))["observations"]
                 if o["entity_id"] == ada2]
        ok(await c.call_tool("split_entity", {"entity_id": ada, "observation_ids": moved}))
        ok(await c.call_tool("delete_entity", {"entity_id": note, "reason": "old"}))

    out = tmp_path / "memory.jsonl"
    exported = cli("export", "--user", user, "--out", str(out), "--database-url", database)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    tables = {line["table"] for line in lines}
    assert {"sources", "entities", "observations", "relationships", "entity_merges", "entity_splits"} <= tables
    assert all("user_id" not in line["row"] for line in lines)
    # Deterministic: the same memory exports the same file.
    again = tmp_path / "again.jsonl"
    assert cli("export", "--user", user, "--out", str(again), "--database-url", database).returncode == 0
    assert again.read_bytes() == out.read_bytes()

    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TARGET} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TARGET}")
    with psycopg.connect(admin_dsn(TARGET), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION neotoma")
        conn.execute(f"GRANT neotoma_operator TO {APP_ROLE}")
    imported = cli("import", "--user", user, str(out), "--database-url", app_dsn(TARGET))
    assert imported.returncode == 0, imported.stderr
    assert f"{len(lines)} new rows" in imported.stderr

    with psycopg.connect(admin_dsn("neotoma_e2e")) as a, psycopg.connect(admin_dsn(TARGET)) as b:
        for query in (SNAPSHOTS, RELATIONSHIPS):
            assert a.execute(query, (user,)).fetchone() == b.execute(query, (user,)).fetchone()
        deleted = "SELECT id, deleted_reason FROM neotoma.entities WHERE user_id = %s AND deleted_at IS NOT NULL"
        assert a.execute(deleted, (user,)).fetchall() == b.execute(deleted, (user,)).fetchall() == [(note, "old")]
        files = "SELECT md5(content) FROM neotoma.files WHERE user_id = %s"
        assert a.execute(files, (user,)).fetchall() == b.execute(files, (user,)).fetchall() != []
        assert b.execute("SELECT (neotoma.verify())->>'ok'").fetchone()[0] == "true"

    # Importing twice adds nothing; a broken file changes nothing.
    twice = cli("import", "--user", user, str(out), "--database-url", app_dsn(TARGET))
    assert twice.returncode == 0 and " 0 new rows" in twice.stderr, twice.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text().splitlines()[0] + "\n" + json.dumps({"table": "api_tokens", "row": {}}) + "\n")
    refused = cli("import", "--user", other, str(bad), "--database-url", app_dsn(TARGET))
    assert refused.returncode != 0 and "unknown table" in refused.stderr
    with psycopg.connect(admin_dsn(TARGET)) as b:
        assert b.execute("SELECT count(*) FROM neotoma.sources WHERE user_id = %s", (other,)).fetchone()[0] == 0
        # The gateway's role reads only the user it acts for.
    with psycopg.connect(app_dsn(TARGET)) as b:
        assert b.execute("SELECT count(*) FROM neotoma.export_lines()").fetchone()[0] == 0
        with pytest.raises(psycopg.Error):
            b.execute("SELECT neotoma.import_lines(ARRAY['{}'::jsonb])")
