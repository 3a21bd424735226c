"""bulk and create_relationships through MCP, over HTTP with tokens: two
entities and the relationship between them in one call by references; the
37th of 40 operations fails and nothing of the call is kept, the error
naming it; a batch of relationships all or none; a stranger reaches none of
it."""

from __future__ import annotations

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio


def person(i: int) -> dict:
    return {"action": "store", "ref": f"p{i}",
            "args": {"entities": [{"entity_type": "person", "name": f"Bulk Person {i}", "email": f"bp{i}@example.com"}]}}


async def test_bulk_through_mcp(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        tools = {t.name: t for t in (await a.list_tools()).tools}
        assert {"bulk", "create_relationships"} <= set(tools)
        assert tools["bulk"].annotations.destructive_hint is True

        linked = ok(await a.call_tool("bulk", {"operations": [
            {"action": "store", "ref": "grace", "args": {"entities": [{"entity_type": "person", "name": "Grace Hopper", "email": "grace@navy.example"}]}},
            {"action": "store", "ref": "cobol", "args": {"entities": [{"entity_type": "note", "title": "COBOL", "content": "a language"}]}},
            {"action": "create_relationship", "args": {"relationship_type": "REFERS_TO", "source_entity_id": "$cobol", "target_entity_id": "$grace"}}]}))
        grace, cobol = linked["results"][0]["entity_id"], linked["results"][1]["entity_id"]
        assert [r["index"] for r in linked["results"]] == [0, 1, 2] and linked["operations"] == 3
        rels = ok(await a.call_tool("list_relationships", {"entity_id": grace, "direction": "inbound"}))
        assert [(r["source_entity_id"], r["relationship_type"]) for r in rels["relationships"]] == [(cobol, "REFERS_TO")]

        # The 37th of 40 fails: the error names it, and none of the 36 before is kept.
        ops = [person(i) for i in range(1, 41)]
        ops[36] = {"action": "correct", "args": {"entity_id": "$nobody", "entity_type": "person", "field": "name", "value": "x"}}
        failed = error(await a.call_tool("bulk", {"operations": ops}))
        assert failed["code"] == "VALIDATION_ERROR", failed
        assert failed["details"]["operation"] == 37 and failed["details"]["operation_index"] == 36
        assert "operation 37 of 40" in failed["message"]
        found = ok(await a.call_tool("retrieve_entities", {"search": "Bulk Person", "search_mode": "lexical"}))
        assert found["total"] == 0

        ops[36] = person(37)
        stored = ok(await a.call_tool("bulk", {"operations": ops}))
        assert len(stored["results"]) == 40
        ids = [r["entity_id"] for r in stored["results"]]

        batch = ok(await a.call_tool("create_relationships", {"relationships": [
            {"relationship_type": "PART_OF", "source_entity_id": ids[0], "target_entity_id": ids[1]},
            {"relationship_type": "PART_OF", "source_entity_id": ids[1], "target_entity_id": ids[2]}]}))
        assert batch["count"] == 2
        cycle = error(await a.call_tool("create_relationships", {"relationships": [
            {"relationship_type": "PART_OF", "source_entity_id": ids[3], "target_entity_id": ids[4]},
            {"relationship_type": "PART_OF", "source_entity_id": ids[2], "target_entity_id": ids[0]}]}))
        assert cycle["code"] == "CYCLE_DETECTED" and cycle["details"]["relationship"] == 2
        none = ok(await a.call_tool("list_relationships", {"entity_id": ids[3]}))
        assert none["total"] == 0

        stranger = error(await b.call_tool("bulk", {"operations": [
            {"action": "correct", "args": {"entity_id": grace, "entity_type": "person", "field": "name", "value": "Mallory"}}]}))
        assert stranger["code"] == "ENTITY_NOT_FOUND"
        assert error(await b.call_tool("create_relationships", {"relationships": [
            {"relationship_type": "REFERS_TO", "source_entity_id": grace, "target_entity_id": cobol}]}))["code"] == "ENTITY_NOT_FOUND"
        snapshot = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": grace}))
        assert snapshot["snapshot"]["name"] == "Grace Hopper"

        for args in ({"operations": []}, {"operations": [{"action": "erase"}]}, {"operations": "x"}):
            assert error(await a.call_tool("bulk", args))["code"] == "VALIDATION_ERROR", args
