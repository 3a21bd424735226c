"""Confidence through MCP, over HTTP with tokens: stores rated with the
admiralty code, a schema merging a field by highest_confidence, each
field's rating in field_provenance, min_confidence filters (letter AND
number), contest lowering a rating (recorded, audited, the snapshot
refolded), and a stranger who can contest and see none of it."""

from __future__ import annotations

import pytest
from conftest import authed_client, create_token, error, new_user, ok

pytestmark = pytest.mark.anyio


def sighting(place: str, at: str, confidence: str | None = None) -> dict:
    args = {"entities": [{"entity_type": "sighting", "ref": "S1", "place": place}],
            "provenance": {"extracted_at": at, "extractor_version": "e2e/1"}}
    if confidence:
        args["confidence"] = confidence
    return args


async def test_confidence_through_mcp(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        ok(await a.call_tool("register_schema", {
            "entity_type": "sighting", "user_specific": True,
            "schema_definition": {"fields": {"ref": {"type": "string", "required": True}, "place": {"type": "string"}},
                                  "identity_fields": ["ref"]},
            "reducer_config": {"merge_policies": {"place": {"strategy": "highest_confidence"}}}}))
        s1 = ok(await a.call_tool("store", sighting("harbour", "2026-05-01T00:00:00Z", "B2")))["entities"][0]["entity_id"]
        ok(await a.call_tool("store", sighting("station", "2026-05-02T00:00:00Z")))
        ok(await a.call_tool("store", sighting("market", "2026-05-03T00:00:00Z", "C1")))

        snap = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": s1}))
        assert snap["snapshot"]["place"] == "harbour"
        assert snap["field_provenance"]["place"]["confidence"] == "B2"
        assert snap["field_provenance"]["ref"]["confidence"] == "C1"
        filtered = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": s1, "min_confidence": "B2"}))
        assert filtered["snapshot"] == {"place": "harbour"} and set(filtered["field_provenance"]) == {"place"}
        listed = ok(await a.call_tool("retrieve_entities", {"entity_type": "sighting", "min_confidence": "C1"}))
        assert listed["total"] == 1 and listed["entities"][0]["snapshot"] == {"ref": "S1"}
        assert ok(await a.call_tool("retrieve_entities", {"min_confidence": "A1"}))["total"] == 0

        harbour = snap["provenance"]["place"]
        for n, reason in enumerate(["closed that day", "no ferry ran", "the witness was elsewhere"], start=1):
            contested = ok(await a.call_tool("contest", {"observation_id": harbour, "reason": reason}))
            assert contested["entity_id"] == s1 and contested["contests"] == n
        assert contested["confidence_before"] == "B4" and contested["confidence"] == "B5"
        # Still B: a more reliable source than C, whatever its credibility.
        snap = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": s1, "include_contradictions": True}))
        assert snap["snapshot"]["place"] == "harbour" and snap["field_provenance"]["place"]["confidence"] == "B5"
        [c] = [c for c in snap["contradictions"] if c["field"] == "place"]
        assert c["strategy"] == "highest_confidence"
        assert [o["confidence"] for v in c["values"] for o in v["observations"]] == ["B5", "C1", "F3"]
        assert ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": s1, "min_confidence": "B4"}))["snapshot"] == {}
        again = ok(await a.call_tool("contest", {"observation_id": harbour, "reason": "closed that day"}))
        assert again["already_contested"] and again["confidence"] == "B5"

        # A rated correction beats every value, and says its rating.
        ok(await a.call_tool("correct", {"entity_id": s1, "entity_type": "sighting", "field": "place",
                                         "value": "quay", "confidence": "B1"}))
        snap = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": s1}))
        assert (snap["snapshot"]["place"], snap["field_provenance"]["place"]["confidence"]) == ("quay", "B1")

        assert error(await b.call_tool("contest", {"observation_id": harbour, "reason": "mine"}))["code"] == "NOT_FOUND"
        bad = error(await a.call_tool("store", sighting("pier", "2026-05-04T00:00:00Z", "G7")))
        assert bad["code"] == "VALIDATION_ERROR" and "confidence" in bad["message"]
        assert error(await a.call_tool("contest", {"observation_id": harbour, "reason": " "}))["code"] == "VALIDATION_ERROR"
