"""delete_entity and restore_entity through MCP: the entity leaves the
listings and lookups until restored exactly as it was; another user can
neither delete nor see it."""

from __future__ import annotations

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio


async def test_delete_and_restore(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        stored = ok(await a.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com"},
            {"entity_type": "note", "title": "Compilers", "content": "COBOL", "created_date": "2026-01-02"}]}))
        grace, note = (e["entity_id"] for e in stored["entities"])
        before = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": grace}))

        assert error(await b.call_tool("delete_entity", {"entity_id": grace}))["code"] == "ENTITY_NOT_FOUND"
        deleted = ok(await a.call_tool("delete_entity", {"entity_id": grace, "reason": "left the team"}))
        assert deleted["deleted"] is True and deleted["reason"] == "left the team" and deleted["deleted_at"]
        assert ok(await a.call_tool("retrieve_entities", {}))["total"] == 1
        assert ok(await a.call_tool("retrieve_entity_by_identifier", {"identifier": "grace@example.com"}))["entities"] == []
        gone = error(await a.call_tool("retrieve_entity_snapshot", {"entity_id": grace}))
        assert gone["code"] == "ENTITY_NOT_FOUND" and gone["details"]["deleted_at"] == deleted["deleted_at"]
        shown = ok(await a.call_tool("retrieve_entities", {"include_deleted": True}))
        assert {e["id"]: e.get("deleted_reason") for e in shown["entities"]} == {grace: "left the team", note: None}
        again = error(await a.call_tool("delete_entity", {"entity_id": grace}))
        assert again["code"] == "VALIDATION_ERROR" and "already deleted" in again["message"]

        restored = ok(await a.call_tool("restore_entity", {"entity_id": grace}))
        assert restored["deleted"] is False and restored["deleted_at"] is None
        after = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": grace}))
        assert after["snapshot"] == before["snapshot"] and after["observation_count"] == before["observation_count"]
        assert ok(await a.call_tool("retrieve_entities", {}))["total"] == 2
        assert error(await a.call_tool("restore_entity", {"entity_id": grace}))["code"] == "VALIDATION_ERROR"
        kinds = [o["kind"] for o in ok(await a.call_tool("list_observations", {"entity_id": grace}))["observations"]]
        assert kinds == ["restoration", "deletion", "store"]

        # Deleting a note hides its timeline events too.
        assert ok(await a.call_tool("list_timeline_events", {}))["total"] == 1
        ok(await a.call_tool("delete_entity", {"entity_id": note}))
        assert ok(await a.call_tool("list_timeline_events", {}))["total"] == 0
