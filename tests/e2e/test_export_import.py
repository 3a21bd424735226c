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
from conftest import APP_ROLE, admin_dsn, new_user, ok, single_database, stdio_client
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


@single_database
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
        ok(await c.call_tool("annotate", {"entity_id": ada, "note": "Met at the archive."}))
        named = next(o["id"] for o in ok(await c.call_tool("list_observations", {"entity_id": ada}))["observations"]
                     if o["kind"] == "store" and o["entity_id"] == ada and "name" in o["fields"])
        ok(await c.call_tool("contest", {"observation_id": named, "reason": "The archive spells it otherwise."}))
        ok(await c.call_tool("store", {"entities": [{"entity_type": "person", "name": "Bo", "email": "bo2@example.com"}],
                                       "confidence": "B2"}))
        ok(await c.call_tool("delete_entity", {"entity_id": note, "reason": "old"}))
        # The same person in another workspace: another entity, kept there.
        ok(await c.call_tool("store", {"workspace": "archive", "entities": [
            {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"}]}))

    out = tmp_path / "memory.jsonl"
    exported = cli("export", "--user", user, "--out", str(out), "--database-url", database)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    tables = {line["table"] for line in lines}
    assert {"workspaces", "sources", "entities", "observations", "relationships", "entity_merges", "entity_splits",
            "annotations", "observation_contests"} <= tables
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
        notes = "SELECT id, entity_id, note, created_at FROM neotoma.annotations WHERE user_id = %s ORDER BY id"
        assert a.execute(notes, (user,)).fetchall() == b.execute(notes, (user,)).fetchall() != []
        contests = "SELECT id, observation_id, reason, created_at FROM neotoma.observation_contests WHERE user_id = %s"
        assert a.execute(contests, (user,)).fetchall() == b.execute(contests, (user,)).fetchall() != []
        rated = "SELECT id, confidence FROM neotoma.observations WHERE user_id = %s AND confidence IS NOT NULL ORDER BY id"
        assert a.execute(rated, (user,)).fetchall() == b.execute(rated, (user,)).fetchall() != []
        placed = "SELECT id, workspace FROM neotoma.entities WHERE user_id = %s ORDER BY id"
        assert a.execute(placed, (user,)).fetchall() == b.execute(placed, (user,)).fetchall()
        named = "SELECT name FROM neotoma.workspaces WHERE user_id = %s"
        assert a.execute(named, (user,)).fetchall() == b.execute(named, (user,)).fetchall() == [("archive",)]
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


MEMORY_SERVER = Path(__file__).resolve().parents[1] / "conformance" / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"


@single_database
async def test_import_from_the_memory_server(database: str, tmp_path: Path) -> None:
    """The reference MCP memory server (npm) writes its memory.jsonl through
    its own tools; `import --format memory-jsonl` brings it in through the
    memory tool set's actions: entities with their observations (provenance:
    the file), relations (two types between the same entities both kept),
    types registered or extended for the user; `--tools memory` then reads
    the graph the reference server reads; importing again adds nothing; bad
    files change nothing."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    assert MEMORY_SERVER.exists(), "run `npm ci` in tests/conformance (scripts/test does)"
    memory_file = tmp_path / "memory.jsonl"
    params = StdioServerParameters(command="node", args=[str(MEMORY_SERVER)],
                                   env={**os.environ, "MEMORY_FILE_PATH": str(memory_file)})
    async with Client(params) as memory:
        await memory.call_tool("create_entities", {"entities": [
            {"name": "Ada Lovelace", "entityType": "person", "observations": ["wrote the first program"]},
            {"name": "Analytical Engine", "entityType": "Machine Design", "observations": ["designed by Babbage", "never built"]},
            {"name": "Engines", "entityType": "note", "observations": []}]})
        await memory.call_tool("create_relations", {"relations": [
            {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "wrote programs for"},
            {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "described"},
            {"from": "Analytical Engine", "to": "Ada Lovelace", "relationType": "was described by"}]})
        await memory.call_tool("add_observations", {"observations": [
            {"entityName": "Ada Lovelace", "contents": ["likes poetry"]}]})
        theirs = (await memory.call_tool("read_graph", {})).structured_content
    assert memory_file.exists()

    user = new_user()
    run = cli("import", "--format", "memory-jsonl", "--user", user, str(memory_file), "--database-url", database)
    assert run.returncode == 0, run.stderr
    assert "3 entities (3 new)" in run.stderr and "3 relations (3 new)" in run.stderr, run.stderr
    # Read through the memory tool set: the reference server's graph.
    async with stdio_client("--tools", "memory", "--user-id", user, env=gateway_env(DATABASE_URL=database)) as ours:
        graph = (await ours.call_tool("read_graph", {})).structured_content
    order = lambda g: (sorted(g["entities"], key=lambda e: e["name"]),  # noqa: E731
                       sorted(g["relations"], key=lambda r: (r["from"], r["to"], r["relationType"])))
    assert order(graph) == order(theirs)
    with psycopg.connect(admin_dsn("neotoma_e2e"), autocommit=True) as conn:
        rows = conn.execute(
            """SELECT s.entity_type, s.snapshot FROM neotoma.entity_snapshots s
               WHERE s.user_id = %s ORDER BY s.entity_type""", (user,)).fetchall()
        assert rows == [
            ("machine_design", {"name": "Analytical Engine", "observations": ["designed by Babbage", "never built"],
                                "entity_type_label": "Machine Design"}),
            # note identifies by title: its own type for name-identified memory entities.
            ("memory_note", {"name": "Engines", "observations": [], "entity_type_label": "note"}),
            ("person", {"name": "Ada Lovelace", "observations": ["wrote the first program", "likes poetry"],
                        "entity_type_label": "person"}),
        ]
        # One observation per entity, from a source whose provenance names the kept file.
        file_source = conn.execute(
            "SELECT id, original_filename, mime_type FROM neotoma.sources WHERE user_id = %s AND original_filename = 'memory.jsonl'",
            (user,)).fetchone()
        assert file_source is not None and file_source[2] == "application/x-ndjson"
        refs = conn.execute(
            """SELECT count(*), count(*) FILTER (WHERE s.provenance->'source_refs' ? %s)
               FROM neotoma.observations o JOIN neotoma.sources s ON s.user_id = o.user_id AND s.id = o.source_id
               WHERE o.user_id = %s""", (str(file_source[0]), user)).fetchall()[0]
        assert refs == (3, 3)
        relations = conn.execute(
            """SELECT relationship_type, (SELECT jsonb_agg(v->'relation_type' ORDER BY v->>'relation_type')
                                          FROM jsonb_each(snapshot) e(k, v) WHERE starts_with(k, 'rel_'))
               FROM neotoma.relationships WHERE user_id = %s ORDER BY 2::text""", (user,)).fetchall()
        assert relations == [("REFERS_TO", ["described", "wrote programs for"]), ("REFERS_TO", ["was described by"])]
        # The person type got the graph's fields for this user only; the global schema is unchanged.
        scopes = conn.execute(
            """SELECT user_id = neotoma.global_user_id(), definition->'fields' ? 'observations'
               FROM neotoma.entity_schemas WHERE entity_type = 'person' AND active AND user_id IN (%s, neotoma.global_user_id())
               ORDER BY 1""", (user,)).fetchall()
        assert scopes == [(False, True), (True, False)]
        count = "SELECT (SELECT count(*) FROM neotoma.observations WHERE user_id = %s) + (SELECT count(*) FROM neotoma.relationship_observations WHERE user_id = %s)"
        before = conn.execute(count, (user, user)).fetchone()
        again = cli("import", "--format", "memory-jsonl", "--user", user, str(memory_file), "--database-url", database)
        assert again.returncode == 0, again.stderr
        assert "(0 new), 0 observations added" in again.stderr and "3 relations (0 new)" in again.stderr, again.stderr
        assert conn.execute(count, (user, user)).fetchone() == before

        bad = tmp_path / "bad.jsonl"
        bad.write_text(memory_file.read_text().rstrip("\n") + '\n{"type":"entity","name":"X"}\n')
        stranger = new_user()
        refused = cli("import", "--format", "memory-jsonl", "--user", stranger, str(bad), "--database-url", database)
        assert refused.returncode != 0 and "line 7:" in refused.stderr, refused.stderr
        assert conn.execute("SELECT count(*) FROM neotoma.sources WHERE user_id = %s", (stranger,)).fetchone()[0] == 0
        # Refused by the database halfway (after the file and the types): all or nothing.
        bad.write_text(memory_file.read_text().rstrip("\n") + "\n"
                       + json.dumps({"type": "entity", "name": "x" * 5000, "entityType": "person"}) + "\n")
        refused = cli("import", "--format", "memory-jsonl", "--user", stranger, str(bad), "--database-url", database)
        assert refused.returncode != 0 and "refused" in refused.stderr, refused.stderr
        for table in ("sources", "observations", "entity_schemas", "relationships"):
            assert conn.execute(f"SELECT count(*) FROM neotoma.{table} WHERE user_id = %s", (stranger,)).fetchone()[0] == 0
        assert conn.execute("SELECT (neotoma.verify())->>'ok'").fetchone()[0] == "true"
