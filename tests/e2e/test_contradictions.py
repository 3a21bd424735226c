"""Contradictions and annotations through MCP, over HTTP with tokens: two
sources disagree on a field; list_contradictions and
retrieve_entity_snapshot {include_contradictions} say which value the
reducer chose and why; a correction resolves it; a note annotates the
entity without changing it; a stranger sees and annotates none of it."""

from __future__ import annotations

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio


def person(phone: str, at: str) -> dict:
    return {"entities": [{"entity_type": "person", "name": "Mary Jackson", "email": "mj@nasa.example", "phone": phone}],
            "provenance": {"extracted_at": at, "extractor_version": "e2e/1"}}


async def test_contradictions_through_mcp(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        mary = ok(await a.call_tool("store", person("+1 555 0001", "2026-01-01T00:00:00Z")))["entities"][0]["entity_id"]
        ok(await a.call_tool("store", person("+1 555 0002", "2026-02-01T00:00:00Z")))

        listed = ok(await a.call_tool("list_contradictions", {"entity_type": "person"}))
        [c] = listed["contradictions"]
        assert (c["entity_id"], c["field"], c["chosen_value"]) == (mary, "phone", "+1 555 0002")
        assert [v["value"] for v in c["values"]] == ["+1 555 0002", "+1 555 0001"]
        assert c["strategy"] == "highest_priority" and "broken by newer" in c["reason"] and not c["resolved"]
        assert c["values"][1]["observations"][0]["observed_at"].startswith("2026-01-01")

        snap = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": mary, "include_contradictions": True}))
        assert snap["contradictions"][0]["chosen_observation_id"] == snap["provenance"]["phone"]

        ok(await a.call_tool("correct", {"entity_id": mary, "entity_type": "person", "field": "phone", "value": "+1 555 0003"}))
        [c] = ok(await a.call_tool("list_contradictions", {"entity_id": mary}))["contradictions"]
        assert c["resolved"] and c["chosen_value"] == "+1 555 0003"
        assert ok(await a.call_tool("list_contradictions", {"entity_id": mary, "include_resolved": False}))["contradictions"] == []

        before = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": mary}))
        note = ok(await a.call_tool("annotate", {"entity_id": mary, "note": "Confirmed by phone."}))
        again = ok(await a.call_tool("annotate", {"entity_id": mary, "note": "Confirmed by phone."}))
        assert note["annotation_id"] == again["annotation_id"]
        annotated = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": mary, "include_annotations": True}))
        assert [n["note"] for n in annotated["annotations"]] == ["Confirmed by phone."]
        assert (annotated["snapshot"], annotated["provenance"]) == (before["snapshot"], before["provenance"])
        assert error(await b.call_tool("annotate", {"entity_id": mary, "note": "mine now"}))["code"] == "ENTITY_NOT_FOUND"

        assert ok(await b.call_tool("list_contradictions", {}))["contradictions"] == []
        assert error(await b.call_tool("list_contradictions", {"entity_id": mary}))["code"] == "ENTITY_NOT_FOUND"
        assert error(await a.call_tool("list_contradictions", {"limit": 500}))["code"] == "VALIDATION_ERROR"
