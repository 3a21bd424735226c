"""Schema evolution through MCP: unknown fields land in raw_fragments, are
analysed, recommended and added (with migration), then routed into
observations; new types are registered; automatic promotion fills a user's
own schema variant, invisible to other users."""

from __future__ import annotations

import pytest
from conftest import Client, error, new_user, ok

pytestmark = pytest.mark.anyio


async def test_fragments_to_schema_loop(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        ids = []
        for i in (1, 2):  # two sources, below the automatic promotion threshold
            stored = ok(
                await c.call_tool(
                    "store",
                    {"entities": [{"entity_type": "receipt", "merchant_name": f"Shop {i}", "amount_total": 9.5 * i,
                                   "currency": "EUR", "date_purchased": f"2024-06-0{i}", "loyalty_points": 10 * i}]},  # fmt: skip
                )
            )
            assert stored["unknown_fields_count"] == 1
            ids.append(stored["entities"][0]["entity_id"])

        analysis = ok(await c.call_tool("analyze_schema_candidates", {"entity_type": "receipt", "min_frequency": 2, "min_confidence": 0.5}))
        field = analysis["recommendations"][0]["fields"][0]
        assert field["field_name"] == "loyalty_points" and field["field_type"] == "number"
        assert field["frequency"] == 2 and field["distinct_sources"] == 2
        assert sorted(field["sample_values"]) == [10, 20]
        pending = ok(await c.call_tool("get_schema_recommendations", {"entity_type": "receipt"}))
        assert pending["total"] == 1

        updated = ok(
            await c.call_tool(
                "update_schema_incremental",
                {"entity_type": "receipt", "migrate_existing": True, "user_specific": True,
                 "fields_to_add": [{"field_name": "loyalty_points", "field_type": "number"}]},  # fmt: skip
            )
        )
        assert updated["fields_added"] == ["loyalty_points"] and updated["fragments_migrated"] == 2
        assert updated["scope"] == "user"
        snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": ids[1]}))
        assert snap["snapshot"]["loyalty_points"] == 20
        prov = ok(await c.call_tool("retrieve_field_provenance", {"entity_id": ids[1], "field": "loyalty_points"}))
        assert prov["source_observation"]["kind"] == "migration"
        assert prov["source_material"]["source_type"] == "structured"

        # New stores route the field into observations.
        third = ok(
            await c.call_tool(
                "store",
                {"entities": [{"entity_type": "receipt", "merchant_name": "Shop 3", "amount_total": 1,
                               "currency": "EUR", "date_purchased": "2024-06-03", "loyalty_points": 1}]},  # fmt: skip
            )
        )
        assert third["unknown_fields_count"] == 0
        applied = ok(await c.call_tool("get_schema_recommendations", {"entity_type": "receipt", "status": "applied"}))
        assert applied["total"] == 1


async def test_register_a_type_and_use_it(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    other = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c, Client(other.url) as o:
        reg = ok(
            await c.call_tool(
                "register_schema",
                {"entity_type": "plant", "user_specific": True,
                 "schema_definition": {"description": "A house plant and how it is watered.",
                                       "fields": {"name": {"type": "string", "required": True}, "watered_on": {"type": "date"}},
                                       "identity_fields": ["name"]},
                 "reducer_config": {"merge_policies": {"watered_on": {"strategy": "last_write"}}}},  # fmt: skip
            )
        )
        assert reg["activated"] is True and reg["scope"] == "user"
        found = ok(await c.call_tool("list_entity_types", {"keyword": "plant"}))
        assert found["entity_types"][0]["entity_type"] == "plant"
        ok(await c.call_tool("store", {"entities": [{"entity_type": "plant", "name": "Fern", "watered_on": "2024-07-01"}]}))
        assert ok(await c.call_tool("list_timeline_events", {"event_type": "WateredOn"}))["total"] == 1
        # Another user has no such type.
        assert all(t["entity_type"] != "plant" for t in ok(await o.call_tool("list_entity_types", {}))["entity_types"])
        refused = error(await o.call_tool("store", {"entities": [{"entity_type": "plant", "name": "Fern"}]}))
        assert refused["code"] == "VALIDATION_ERROR"
        bad = error(
            await c.call_tool(
                "register_schema",
                {"entity_type": "plant2", "schema_definition": {"fields": {"name": {"type": "string"}}},
                 "reducer_config": {"merge_policies": {"name": {"strategy": "loudest"}}}},  # fmt: skip
            )
        )
        assert bad["code"] == "VALIDATION_ERROR" and bad["details"]["field"] == "reducer_config.merge_policies.name.strategy"


async def test_automatic_promotion_is_per_user(start_gateway) -> None:
    alice = start_gateway("--user-id", new_user())
    bob = start_gateway("--user-id", new_user())
    async with Client(alice.url) as a, Client(bob.url) as b:
        for i in range(3):
            ok(await a.call_tool("store", {"entities": [{"entity_type": "task", "title": f"t{i}", "status": "open", "effort": i + 1}]}))
        auto = ok(await a.call_tool("get_schema_recommendations", {"entity_type": "task", "status": "auto_applied"}))
        assert auto["recommendations"][0]["fields"][0]["field_name"] == "effort"
        assert auto["recommendations"][0]["evidence"]["effort"]["frequency"] == 3
        mine = next(t for t in ok(await a.call_tool("list_entity_types", {"detail": True}))["entity_types"] if t["entity_type"] == "task")
        assert "effort" in mine["field_names"] and mine["scope"] == "user"
        theirs = next(t for t in ok(await b.call_tool("list_entity_types", {"detail": True}))["entity_types"] if t["entity_type"] == "task")
        assert "effort" not in theirs["field_names"] and theirs["scope"] == "global"
        listed = ok(await a.call_tool("retrieve_entities", {"entity_type": "task"}))
        assert sorted(e["snapshot"]["effort"] for e in listed["entities"]) == [1, 2, 3]
