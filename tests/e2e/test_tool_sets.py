"""The tool sets of other memory servers (`neotoma-mcp --tools …`,
docs/tool-sets.md), through a real MCP client:

- `memory` answers a script of calls exactly as the reference memory
  server from npm does (run side by side), and loses no concurrent write;
- `workspace` runs seed 003's examples, answers its health and readiness
  endpoints and fails as `{success: false, message}`;
- `engram` runs seed 004's tools and fails as `{error_code, message}`;
- what one set writes, the others, Neotoma's own tools and SQL read, with
  provenance; another user sees none of it;
- `--tools` lists the sets chosen, a name an earlier set took by its
  action's name, and refuses an unknown set."""

from __future__ import annotations

import re

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from conftest import Client, authed_client, create_token, new_user, ok, stdio_client
from mcp.client.stdio import StdioServerParameters
from mcp_support import gateway_env, mcp_bin

pytestmark = pytest.mark.anyio

MEMORY_SERVER = (Path(__file__).resolve().parents[1] / "conformance" / "node_modules" / "@modelcontextprotocol"
                 / "server-memory" / "dist" / "index.js")

# The reference server's README example, then every tool: duplicates,
# repeats, deletions, a failure.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("create_entities", {"entities": [
        {"name": "John_Smith", "entityType": "person", "observations": ["Speaks fluent Spanish"]},
        {"name": "Anthropic", "entityType": "organization", "observations": ["AI safety company"]},
        {"name": "Graduated in 2019", "entityType": "Life Event", "observations": []}]}),
    ("create_entities", {"entities": [{"name": "John_Smith", "entityType": "robot", "observations": ["beep"]},
                                      {"name": "Claude", "entityType": "AI Model", "observations": []}]}),
    ("create_relations", {"relations": [
        {"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
        {"from": "John_Smith", "to": "Anthropic", "relationType": "admires"},
        {"from": "Anthropic", "to": "Claude", "relationType": "develops"}]}),
    ("create_relations", {"relations": [{"from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
                                        {"from": "Claude", "to": "John_Smith", "relationType": "helps"}]}),
    ("add_observations", {"observations": [
        {"entityName": "John_Smith", "contents": ["Graduated in 2019", "Speaks fluent Spanish", "Prefers mornings"]},
        {"entityName": "Claude", "contents": ["Writes code"]}]}),
    ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}),
    ("search_nodes", {"query": "SPANISH"}),
    ("search_nodes", {"query": "ai model"}),
    ("open_nodes", {"names": ["Anthropic", "Nobody"]}),
    ("delete_observations", {"deletions": [{"entityName": "John_Smith", "observations": ["Graduated in 2019"]},
                                           {"entityName": "Nobody", "observations": ["x"]}]}),
    ("delete_relations", {"relations": [{"from": "John_Smith", "to": "Anthropic", "relationType": "admires"},
                                        {"from": "Anthropic", "to": "Nobody", "relationType": "x"}]}),
    ("read_graph", {}),
    ("delete_entities", {"entityNames": ["Graduated in 2019", "Claude", "Nobody"]}),
    ("read_graph", {}),
    ("open_nodes", {"names": ["John_Smith", "Claude"]}),
]


def answer(result: Any) -> Any:
    """A call's answer, comparable across servers: a failure's text, or the
    structured content with entities and relations in a fixed order."""
    if result.is_error:
        return ("error", result.content[0].text)
    body = dict(result.structured_content)
    if "entities" in body:
        body["entities"] = sorted(body["entities"], key=lambda e: e["name"])
    if "relations" in body:
        body["relations"] = sorted(body["relations"], key=lambda r: (r["from"], r["to"], r["relationType"]))
    return body


async def test_memory_set_answers_like_the_reference_server(database: str, tmp_path: Path, admin_db) -> None:
    assert MEMORY_SERVER.exists(), "run `npm ci` in tests/conformance (scripts/test does)"
    user = new_user()
    reference = StdioServerParameters(command="node", args=[str(MEMORY_SERVER)],
                                      env={**os.environ, "MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")})
    async with Client(reference) as theirs, stdio_client(
            "--tools", "memory", "--user-id", user, env=gateway_env(DATABASE_URL=database)) as ours:
        their_tools = {t.name: t for t in (await theirs.list_tools()).tools}
        our_tools = {t.name: t for t in (await ours.list_tools()).tools}
        assert set(our_tools) == set(their_tools)
        for name, tool in their_tools.items():
            # Every parameter of theirs, with its type; read_graph pages besides.
            theirs_props = tool.input_schema.get("properties", {})
            ours_props = our_tools[name].input_schema.get("properties", {})
            assert set(theirs_props) <= set(ours_props), name
            for p, schema in theirs_props.items():
                assert ours_props[p].get("type") == schema.get("type"), (name, p)
            assert our_tools[name].annotations.read_only_hint == tool.annotations.read_only_hint, name
        for name, args in SCRIPT:
            expected = answer(await theirs.call_tool(name, args))
            got = answer(await ours.call_tool(name, args))
            assert got == expected, (name, args)
    # Kept as Neotoma keeps everything: typed entities, deletions with
    # history, a clean fold.
    rows = admin_db.execute(
        """SELECT e.entity_type, e.deleted_at IS NOT NULL FROM neotoma.entities e
           WHERE e.user_id = %s ORDER BY e.entity_type""", (user,)).fetchall()
    assert rows == [("ai_model", True), ("life_event", True), ("organization", False), ("person", False)]
    assert admin_db.execute("SELECT (neotoma.verify())->>'ok'").fetchone()[0] == "true"


async def test_memory_set_pages_and_fails_as_the_original(database: str) -> None:
    user = new_user()
    async with stdio_client("--tools", "memory", "--user-id", user, env=gateway_env(DATABASE_URL=database)) as c:
        entities = [{"name": f"n{i:03}", "entityType": "thing", "observations": [f"o{i}"]} for i in range(25)]
        ok(await c.call_tool("create_entities", {"entities": entities}))
        ok(await c.call_tool("create_relations", {"relations": [
            {"from": f"n{i:03}", "to": f"n{i + 1:03}", "relationType": "next"} for i in range(24)]}))
        seen, relations, cursor, pages = [], [], None, 0
        while True:
            page = ok(await c.call_tool("read_graph", {"limit": 10, **({"cursor": cursor} if cursor else {})}))
            seen += [e["name"] for e in page["entities"]]
            relations += page["relations"]
            pages += 1
            cursor = page.get("nextCursor")
            if not cursor:
                break
        assert pages == 3 and sorted(seen) == [e["name"] for e in entities]
        assert len(relations) == 24 and len({json.dumps(r, sort_keys=True) for r in relations}) == 24
        # Without a limit: 100 entities a page; the first page holds all 25.
        assert len(ok(await c.call_tool("read_graph", {}))["entities"]) == 25
        # Failures are the tool's message, as the original's exceptions are.
        refused = await c.call_tool("create_relations", {"relations": [{"from": "n000", "to": "ghost", "relationType": "x"}]})
        assert refused.is_error and refused.content[0].text == "Entity with name ghost not found"
        bad = await c.call_tool("read_graph", {"limit": 5000})
        assert bad.is_error and "limit" in bad.content[0].text and bad.structured_content is None
        unknown = await c.call_tool("store", {"entities": []})
        assert unknown.is_error and "unknown tool" in unknown.content[0].text


async def test_memory_set_loses_no_concurrent_write(start_gateway, admin_db) -> None:
    """Eight clients on their own connections add observations to one entity
    and relations between the same two: every one is kept (the original
    rewrites its whole file per call, and loses writes under this load)."""
    user = new_user()
    gw = start_gateway("--tools", "memory", "--user-id", user)

    def client() -> Client:
        return Client(gw.url)

    async with client() as c:
        ok(await c.call_tool("create_entities", {"entities": [
            {"name": "Hub", "entityType": "thing", "observations": []},
            {"name": "Spoke", "entityType": "thing", "observations": []}]}))

    async def writer(n: int) -> None:
        async with client() as c:
            for k in range(5):
                ok(await c.call_tool("add_observations", {"observations": [
                    {"entityName": "Hub", "contents": [f"writer {n} fact {k}"]}]}))
            ok(await c.call_tool("create_relations", {"relations": [
                {"from": "Hub", "to": "Spoke", "relationType": f"kind_{n}"}]}))

    await asyncio.gather(*(writer(n) for n in range(8)))
    async with client() as c:
        hub = ok(await c.call_tool("open_nodes", {"names": ["Hub"]}))
    assert sorted(hub["entities"][0]["observations"]) == sorted(f"writer {n} fact {k}" for n in range(8) for k in range(5))
    assert sorted(r["relationType"] for r in hub["relations"]) == [f"kind_{n}" for n in range(8)]
    assert admin_db.execute("SELECT (neotoma.verify())->>'ok'").fetchone()[0] == "true"


def failure(result: Any) -> dict[str, Any]:
    assert result.is_error, result.content[0].text
    return result.structured_content


async def test_workspace_set_runs_its_examples(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway("--tools", "workspace", auth=True)
    for path in ("/api/health", "/api/ready"):
        r = httpx.get(f"{gw.base}{path}", timeout=10)
        assert r.status_code == 200, (path, r.text)
    assert httpx.get(f"{gw.base}/api/health", timeout=10).json()["status"] == "ok"
    async with authed_client(gw.url, create_token(alice)) as a:
        names = sorted(t.name for t in (await a.list_tools()).tools)
        assert names == ["get_entity_relations", "read_graph", "upsert_entity", "upsert_relation"]
        made = ok(await a.call_tool("upsert_entity", {
            "workspaceName": "demo", "name": "Alice", "entityType": "Person",
            "observations": ["Software engineer"], "metadata": "{\"dept\":\"Engineering\"}"}))
        assert made["success"] is True and made["workspace"] == "demo" and made["name"] == "Alice"
        project = ok(await a.call_tool("upsert_entity", {"workspaceName": "demo", "name": "ProjectX", "entityType": "Project"}))
        # By legacy names, then by ids: the same relation, its metadata updated.
        rel = ok(await a.call_tool("upsert_relation", {"workspaceName": "demo", "from": "Alice", "to": "ProjectX",
                                                       "relationType": "works_on"}))
        assert (rel["fromEntityId"], rel["toEntityId"], rel["relationType"]) == (made["id"], project["id"], "works_on")
        again = ok(await a.call_tool("upsert_relation", {
            "workspaceName": "demo", "fromEntityId": made["id"], "toEntityId": project["id"],
            "relationType": "works_on", "metadata": "{\"since\":\"2025\"}"}))
        assert again["relationId"] == rel["relationId"]
        # Upsert by name: the same entity, observations replaced.
        updated = ok(await a.call_tool("upsert_entity", {"workspaceName": "demo", "name": "Alice", "entityType": "Person",
                                                         "observations": ["Staff engineer"]}))
        assert updated["id"] == made["id"]
        graph = ok(await a.call_tool("read_graph", {"workspaceName": "demo"}))
        assert graph["workspaceName"] == "demo"
        alice_model = next(e for e in graph["entities"] if e["name"] == "Alice")
        assert alice_model == {"workspaceName": "demo", "name": "Alice", "entityType": "Person",
                               "observations": ["Staff engineer"], "metadata": "{\"dept\":\"Engineering\"}",
                               "id": made["id"]}
        assert [(r["relationType"], r["metadata"]) for r in graph["relations"]] == [("works_on", "{\"since\":\"2025\"}")]
        listed = ok(await a.call_tool("get_entity_relations", {"workspaceName": "demo", "entityName": "Alice"}))
        assert listed["success"] and listed["entityId"] == made["id"]
        assert [(r["relationType"], r["toEntityId"]) for r in listed["relations"]] == [("works_on", project["id"])]
        # Workspaces partition: another one is empty.
        assert ok(await a.call_tool("read_graph", {"workspaceName": "other"}))["entities"] == []
        # Failures: {success: false, message}, the document's messages.
        assert failure(await a.call_tool("upsert_relation", {"workspaceName": "demo", "from": "Alice", "to": "Bob",
                                                             "relationType": "knows"})) == {
            "success": False, "message": "Target entity 'Bob' not found."}
        assert failure(await a.call_tool("upsert_entity", {"workspaceName": "demo", "name": " ", "entityType": "Person"})) == {
            "success": False, "message": "Invalid entity payload. Require workspaceName, name and entityType."}
        missing = failure(await a.call_tool("get_entity_relations", {"workspaceName": "demo", "entityName": "Bob"}))
        assert missing == {"success": False, "message": "Entity 'Bob' not found in workspace 'demo'."}
        assert failure(await a.call_tool("upsert_entity", {"workspaceName": "demo", "name": "x"}))["success"] is False
    # Another user's token reaches none of it.
    async with authed_client(gw.url, create_token(bob)) as b:
        assert ok(await b.call_tool("read_graph", {"workspaceName": "demo"}))["entities"] == []
        refused = failure(await b.call_tool("get_entity_relations", {"workspaceName": "demo", "entityId": made["id"]}))
        assert refused["success"] is False


async def test_engram_set_runs_its_tools(database: str) -> None:
    user = new_user()
    async with stdio_client("--tools", "engram", "--user-id", user, env=gateway_env(DATABASE_URL=database)) as c:
        names = sorted(t.name for t in (await c.list_tools()).tools)
        assert names == ["correct_memory", "get_memory", "send_memory"]
        sent = ok(await c.call_tool("send_memory", {
            "content": "The staging deploy failed because the disk was full",
            "source": {"type": "log", "ref": "ci#42", "citation": "No space left on device"},
            "confidence_hint": "B", "agent_id": "ops-agent"}))
        assert sent["status"] == "accepted" and re.fullmatch(r"mem_[0-9a-f]{16}", sent["memory_id"]), sent
        assert sent["error_code"] is None and sent["message"] is None
        other = ok(await c.call_tool("send_memory", {"content": "The staging disk holds build caches"}))
        got = ok(await c.call_tool("get_memory", {"query": "staging deploy disk"}))
        assert got["status"] == "ok" and got["meta"]["truncated"] is False
        by_id = {m["id"]: m for m in got["memories"]}
        memory = by_id[sent["memory_id"]]
        assert memory["confidence"] == "B3" and memory["type"] == "Fact" and memory["dynamic_type"] is None
        assert {"type": "log", "ref": "ci#42", "citation": "No space left on device", "agent_id": "ops-agent"}.items() <= \
            memory["sources"][0].items()
        assert by_id[other["memory_id"]]["confidence"] == "F3" and by_id[other["memory_id"]]["sources"] == []
        assert got["meta"]["total_found"] == 2 and got["meta"]["min_confidence"] == "F6"
        # AND semantics: C3 lets B3 through, not F3.
        filtered = ok(await c.call_tool("get_memory", {"query": "staging deploy disk", "min_confidence": "C3"}))
        assert [m["id"] for m in filtered["memories"]] == [sent["memory_id"]]
        compact = ok(await c.call_tool("get_memory", {"query": "staging deploy disk", "compact": True}))
        assert all(m["sources"] == [] and m["causal_chain"] == [] for m in compact["memories"])
        # Corrections: contest lowers the rating a step; annotate; both show in properties; merge.
        contested = ok(await c.call_tool("correct_memory", {"target_id": sent["memory_id"], "action": "contest",
                                                            "payload": {"reason": "the quota, not the disk"}}))
        assert contested["status"] == "applied" and contested["details"]["new_confidence"] == "B4"
        noted = ok(await c.call_tool("correct_memory", {"target_id": sent["memory_id"], "action": "annotate",
                                                        "payload": {"note": "see the post-mortem"}}))
        assert noted["details"]["note"] == "see the post-mortem" and noted["details"]["annotation_count"] == 1
        marked = next(m for m in ok(await c.call_tool("get_memory", {"query": "staging deploy disk"}))["memories"]
                      if m["id"] == sent["memory_id"])
        assert marked["properties"]["status"] == "contested"
        assert marked["properties"]["contest_reason"] == "the quota, not the disk"
        assert [a["note"] for a in marked["properties"]["annotations"]] == ["see the post-mortem"]
        merged = ok(await c.call_tool("correct_memory", {"target_id": sent["memory_id"], "action": "merge_entities",
                                                         "payload": {"merge_with": other["memory_id"]}}))
        assert merged["status"] == "applied" and merged["details"]["merged_into"] == sent["memory_id"]
        gone = ok(await c.call_tool("correct_memory", {"target_id": "mem_000000000000dead",
                                                       "action": "annotate", "payload": {"note": "x"}}))
        assert gone["status"] == "not_found"
        # Refusals are answers with error_code and message, as the original's.
        bad = ok(await c.call_tool("send_memory", {"content": "x", "confidence_hint": "Z"}))
        assert bad["status"] == "rejected" and bad["error_code"] == "validation_error" and "A to F" in bad["message"]
        bad = ok(await c.call_tool("correct_memory", {"target_id": sent["memory_id"], "action": "contest"}))
        assert bad["status"] == "rejected" and "reason" in bad["message"]
        bad = ok(await c.call_tool("correct_memory", {"target_id": sent["memory_id"], "action": "forget"}))
        assert bad["status"] == "rejected" and bad["action"] == "forget" and bad["error_code"] == "validation_error"
        # Arguments that cannot be read are an error, {error_code, message}.
        unreadable = failure(await c.call_tool("send_memory", {}))
        assert set(unreadable) == {"error_code", "message"}


async def test_one_memory_through_every_set(database: str, admin_db) -> None:
    """What the memory set writes, the workspace and engram sets, Neotoma's
    tools and SQL read, with the source it came from."""
    user = new_user()
    async with stdio_client("--tools", "memory,workspace,engram,neotoma,workspaces", "--user-id", user,
                            env=gateway_env(DATABASE_URL=database)) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert len(names) == len(set(names))
        # memory lists read_graph; the workspace set's goes by its action's name.
        assert {"read_graph", "workspace_read_graph", "send_memory", "store", "set_context"} <= set(names)
        ok(await c.call_tool("create_entities", {"entities": [
            {"name": "Grace Hopper", "entityType": "person", "observations": ["invented the compiler"]},
            {"name": "COBOL", "entityType": "language", "observations": []}]}))
        ok(await c.call_tool("create_relations", {"relations": [{"from": "Grace Hopper", "to": "COBOL", "relationType": "designed"}]}))
        ws = ok(await c.call_tool("workspace_read_graph", {"workspaceName": "default"}))
        assert {e["name"] for e in ws["entities"]} == {"Grace Hopper", "COBOL"}
        assert [r["relationType"] for r in ws["relations"]] == ["designed"]
        grace_id = next(e["id"] for e in ws["entities"] if e["name"] == "Grace Hopper")
        memories = ok(await c.call_tool("get_memory", {"query": "Grace Hopper"}))
        grace = next(m for m in memories["memories"] if m["content"] == "Grace Hopper")
        assert grace["causal_chain"][0]["relation"] == "designed" and grace["causal_chain"][0]["to_content"] == "COBOL"
        snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": grace_id}))
        assert snap["snapshot"]["observations"] == ["invented the compiler"]
        assert snap["snapshot"]["entity_type_label"] == "person"
        observations = ok(await c.call_tool("list_observations", {"entity_id": grace_id}))
        assert observations["observations"][0]["source_id"]
        # What Neotoma stores shows in the memory set too.
        ok(await c.call_tool("store", {"entities": [{"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"}]}))
        found = ok(await c.call_tool("search_nodes", {"query": "lovelace"}))
        assert [e["name"] for e in found["entities"]] == ["Ada Lovelace"]
        # A workspace set write lands in its workspace, which set_context brings the memory set to.
        ok(await c.call_tool("upsert_entity", {"workspaceName": "Lab", "name": "Centrifuge", "entityType": "Equipment"}))
        ok(await c.call_tool("set_context", {"workspace": "lab"}))
        assert [e["name"] for e in ok(await c.call_tool("read_graph", {}))["entities"]] == ["Centrifuge"]
    view = admin_db.execute(
        "SELECT workspace, entity_type FROM neotoma.entity_snapshots WHERE user_id = %s ORDER BY entity_type",
        (user,)).fetchall()
    assert view == [("lab", "equipment"), ("default", "language"), ("default", "person"), ("default", "person")]
    # Another user, by every set: nothing.
    async with stdio_client("--tools", "memory,workspace,engram", "--user-id", new_user(),
                            env=gateway_env(DATABASE_URL=database)) as stranger:
        assert ok(await stranger.call_tool("read_graph", {}))["entities"] == []
        assert ok(await stranger.call_tool("workspace_read_graph", {"workspaceName": "lab"}))["entities"] == []
        assert ok(await stranger.call_tool("get_memory", {"query": "Grace Hopper"}))["memories"] == []


def test_an_unknown_tool_set_is_refused(database: str) -> None:
    run = subprocess.run([mcp_bin(), "--tools", "memory,mem0"], env=gateway_env(DATABASE_URL=database),
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert run.returncode != 0 and "unknown tool set or group `mem0`" in run.stderr, run.stderr


async def test_graphmem_set_runs_its_tools(database: str, admin_db) -> None:
    user = new_user()
    async with stdio_client("--tools", "graphmem,memory", "--user-id", user, env=gateway_env(DATABASE_URL=database)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert {"create_entity", "get_entity", "search_entities", "suggest_merges", "bulk_update", "set_context",
                "get_version", "get_current_time"} <= names and len(names) == 20 + 9
        assert ok(await c.call_tool("get_version", {}))["server"] == "neotoma"
        # "repo" is canonicalized to Project; ids are integers, from 1.
        made = ok(await c.call_tool("create_entity", {"name": "neotoma", "entity_type": "repo", "aliases": "ntm",
                                                      "description": "agent memory in Postgres",
                                                      "observations": ["written in Rust"]}))
        assert made["status"] == "created"
        project = made["entity"]
        assert (project["entity_id"], project["entity_type"], project["aliases"]) == (1, "Project", "ntm")
        assert [o["text_content"] for o in project["observations"]] == ["written in Rust"]
        bug = ok(await c.call_tool("create_entity", {"name": "Crash on empty query", "entity_type": "bug"}))["entity"]
        assert bug["entity_type"] == "Issue"
        warned = ok(await c.call_tool("create_entity", {"name": "neotoma", "entity_type": "project"}))
        assert warned["status"] == "duplicate_warning" and warned["existing_entity"]["entity_id"] == 1
        rel = ok(await c.call_tool("create_relation", {"from_entity_id": bug["entity_id"], "to_entity_id": 1,
                                                       "relation_type": "part_of"}))
        obs = ok(await c.call_tool("create_observation", {"entity_id": 1, "text_content": "serves MCP"}))
        got = ok(await c.call_tool("get_entity", {"entity_id": 1}))
        assert [o["text_content"] for o in got["observations"]] == ["written in Rust", "serves MCP"]
        assert [(r["relation_id"], r["from_entity_id"], r["relation_type"]) for r in got["relations"]] == [
            (rel["relation_id"], bug["entity_id"], "part_of")]
        # Ids are stable: asked again, the same numbers.
        assert ok(await c.call_tool("get_entity", {"entity_id": 1}))["observations"][1]["observation_id"] == obs["observation_id"]
        hits = ok(await c.call_tool("search_entities", {"query": "postgres memory"}))["results"]
        assert hits[0]["entity_id"] == 1 and "description" in hits[0]["matched_fields"]
        # The memory set reads the same graph.
        graph = ok(await c.call_tool("read_graph", {}))
        assert {(e["name"], e["entityType"]) for e in graph["entities"]} == {("neotoma", "Project"), ("Crash on empty query", "Issue")}
        assert graph["relations"] == [{"from": "Crash on empty query", "to": "neotoma", "relationType": "part_of"}]
        # Context by project id.
        assert ok(await c.call_tool("set_context", {"project_id": 1}))["project_name"] == "neotoma"
        assert ok(await c.call_tool("get_context", {}))["status"] == "active"
        assert ok(await c.call_tool("clear_context", {}))["status"] == "context_cleared"
        assert ok(await c.call_tool("get_context", {})) == {"status": "no_context"}
        # bulk_update: all or nothing.
        before = admin_db.execute("SELECT count(*) FROM neotoma.entities WHERE user_id = %s", (user,)).fetchone()[0]
        failed = await c.call_tool("bulk_update", {"entities": [{"name": "Tokio", "entity_type": "library"}],
                                                   "relations": [{"from_entity_id": 1, "to_entity_id": 404, "relation_type": "uses"}]})
        assert failed.is_error and failed.structured_content is None and "404" in failed.content[0].text
        assert admin_db.execute("SELECT count(*) FROM neotoma.entities WHERE user_id = %s", (user,)).fetchone()[0] == before
        done = ok(await c.call_tool("bulk_update", {"entities": [{"name": "Tokio", "entity_type": "library"}],
                                                    "observations": [{"entity_id": 1, "text_content": "async"}]}))
        assert done["operations"] == 2 and done["entities"][0]["entity_type"] == "Technology"
        listed = ok(await c.call_tool("list_entities", {"per_page": 2}))
        assert listed["total_count"] == 3 and listed["total_pages"] == 2
        ok(await c.call_tool("delete_relation", {"relation_id": rel["relation_id"]}))
        assert ok(await c.call_tool("find_relations", {})) == {"relations": []}
        ok(await c.call_tool("delete_entity", {"entity_id": bug["entity_id"]}))
        gone = await c.call_tool("get_entity", {"entity_id": bug["entity_id"]})
        assert gone.is_error and gone.content[0].text == f"Entity with ID {bug['entity_id']} not found"
    assert admin_db.execute("SELECT (neotoma.verify())->>'ok'").fetchone()[0] == "true"
