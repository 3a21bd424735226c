"""reclassify through MCP, over HTTP with tokens: a company stored as a
person moves to its type with its history (correction, relationship) kept;
the old id redirects; a later store under either type reaches it; the
audit trail says reclassify; a stranger can reclassify none of it."""

from __future__ import annotations

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio


async def test_reclassify_through_mcp(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        stored = ok(await a.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Initech", "email": "hello@initech.example"},
            {"entity_type": "note", "title": "Initech meeting", "content": "renewal"}]}))
        person, note = (e["entity_id"] for e in stored["entities"])
        ok(await a.call_tool("create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": note,
                                                     "target_entity_id": person}))
        ok(await a.call_tool("correct", {"entity_id": person, "entity_type": "person", "field": "name", "value": "Initech Corp"}))

        moved = ok(await a.call_tool("reclassify", {"entity_id": person, "new_entity_type": "company",
                                                    "reason": "a business, not a person"}))
        company = moved["entity_id"]
        assert (moved["entity_type"], moved["previous_entity_id"], moved["previous_entity_type"]) == ("company", person, "person")
        assert not moved["joined_existing"] and moved["relationships_moved"] == 1

        snap = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": person}))
        assert (snap["entity_id"], snap["redirected_from"], snap["entity_type"]) == (company, person, "company")
        assert snap["snapshot"]["name"] == "Initech Corp"
        rels = ok(await a.call_tool("list_relationships", {"entity_id": note}))["relationships"]
        assert [r["target_entity_id"] for r in rels] == [company]
        again = ok(await a.call_tool("store", {"entities": [{"entity_type": "company", "name": "Initech",
                                                             "email": "hello@initech.example", "industry": "software"}]}))
        assert again["entities"][0]["entity_id"] == company
        assert ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": company}))["snapshot"]["industry"] == "software"

        assert error(await a.call_tool("reclassify", {"entity_id": company, "new_entity_type": "company",
                                                      "reason": "again"}))["code"] == "VALIDATION_ERROR"
        assert error(await a.call_tool("reclassify", {"entity_id": company, "new_entity_type": "starship",
                                                      "reason": "x"}))["code"] == "SCHEMA_NOT_FOUND"
        assert error(await b.call_tool("reclassify", {"entity_id": company, "new_entity_type": "person",
                                                      "reason": "mine"}))["code"] == "ENTITY_NOT_FOUND"
