"""The deprecated record actions of the earlier specification through MCP:
callable but not listed, answering on the truth model, each user's own
records only."""

from __future__ import annotations

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio

RECORD_ACTIONS = {"update_record", "retrieve_records", "delete_record"}


async def test_record_actions_are_callable_unlisted_and_per_user(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        assert not RECORD_ACTIONS & {t.name for t in (await a.list_tools()).tools}
        stored = ok(await a.call_tool("store", {"entities": [
            {"entity_type": "invoice", "invoice_number": "E-1", "vendor_name": "MCP Co", "amount_due": 5}]}))  # fmt: skip
        record_id = stored["entities"][0]["entity_id"]

        listed = ok(await a.call_tool("retrieve_records", {"type": "invoice", "search": ["mcp co"]}))
        assert listed["total"] == 1 and listed["records"][0]["id"] == record_id
        assert listed["deprecated"] is True and listed["replacement"] == "retrieve_entities"

        updated = ok(await a.call_tool("update_record", {"id": record_id, "properties": {"amount_due": 6}}))
        assert updated["properties"]["amount_due"] == 6 and updated["replacement"] == "correct"
        snapshot = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": record_id}))
        assert snapshot["snapshot"]["amount_due"] == 6

        # Bob sees none of Alice's records and cannot touch them.
        assert ok(await b.call_tool("retrieve_records", {}))["total"] == 0
        assert error(await b.call_tool("update_record", {"id": record_id, "properties": {"amount_due": 0}}))["code"] == "RECORD_NOT_FOUND"
        assert error(await b.call_tool("delete_record", {"id": record_id}))["code"] == "RECORD_NOT_FOUND"

        deleted = ok(await a.call_tool("delete_record", {"id": record_id}))
        # (Like every write, it also says which workspace it wrote in.)
        assert deleted.pop("workspace_context")["workspaces"] == ["default"]
        assert deleted == {"success": True, "deleted_id": record_id, "deprecated": True, "replacement": "delete_entity"}
        assert ok(await a.call_tool("retrieve_records", {"type": "invoice"}))["total"] == 0
        assert ok(await a.call_tool("retrieve_entities", {"entity_type": "invoice"}))["total"] == 0
        assert error(await a.call_tool("delete_record", {"id": record_id}))["code"] == "RECORD_NOT_FOUND"
        # A deleted record is not updated either (restore_entity brings it back).
        gone = error(await a.call_tool("update_record", {"id": record_id, "properties": {"status": "paid"}}))
        assert gone["code"] == "RECORD_NOT_FOUND"
        ok(await a.call_tool("restore_entity", {"entity_id": record_id}))
        bad = error(await a.call_tool("update_record", {"id": record_id, "properties": {"colour": "red"}}))
        assert bad["code"] == "VALIDATION_ERROR" and bad["details"]["field"] == "properties.colour"
