"""The truth model through MCP: store, snapshots with provenance, observations,
listings, lookup, correct, entity types; strong consistency, determinism and
isolation between users. The SDK client also checks every result against the
tool's outputSchema."""

from __future__ import annotations

import pytest
from conftest import Client, error, gateway_env, new_user, ok, stdio_client

pytestmark = pytest.mark.anyio

INVOICE = {
    "entity_type": "invoice",
    "invoice_number": "INV-100",
    "vendor_name": "Acme Corp",
    "amount_due": 250.0,
    "currency": "EUR",
    "invoice_date": "2024-03-01",
    "cost_center": "R&D",
}
PERSON = {"entity_type": "person", "name": "Bo Diaz", "email": "bo@example.com", "phone": "+1 555 0100"}


async def test_store_then_read_everything_back(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        stored = ok(await c.call_tool("store", {"entities": [INVOICE, PERSON]}))
        assert stored["deduplicated"] is False
        assert stored["unknown_fields_count"] == 1
        assert stored["interpretation"]["entities_created"] == 2
        invoice_id = stored["entities"][0]["entity_id"]
        person_id = stored["entities"][1]["entity_id"]

        # Strong consistency: the very next call sees it.
        snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": invoice_id}))
        assert snap["snapshot"]["amount_due"] == 250.0
        assert "cost_center" not in snap["snapshot"]
        assert snap["provenance"]["amount_due"] == stored["entities"][0]["observation_id"]
        assert snap["field_provenance"]["amount_due"]["source_id"] == stored["source_id"]

        obs = ok(await c.call_tool("list_observations", {"entity_id": invoice_id}))
        assert obs["total"] == 1 and obs["observations"][0]["fields"]["currency"] == "EUR"

        prov = ok(await c.call_tool("retrieve_field_provenance", {"entity_id": invoice_id, "field": "currency"}))
        assert prov["source_material"]["id"] == stored["source_id"]
        assert prov["source_material"]["content_hash"] == stored["content_hash"]

        listed = ok(await c.call_tool("retrieve_entities", {"entity_type": "person"}))
        assert [e["id"] for e in listed["entities"]] == [person_id]

        found = ok(await c.call_tool("retrieve_entity_by_identifier", {"identifier": "+1 (555) 0100"}))
        assert [e["id"] for e in found["entities"]] == [person_id]
        assert found["entities"][0]["matched_fields"] == ["phone"]

        fixed = ok(
            await c.call_tool(
                "correct",
                {"entity_id": invoice_id, "entity_type": "invoice", "field": "amount_due", "value": 199.0},
            )
        )
        snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": invoice_id}))
        assert snap["snapshot"]["amount_due"] == 199.0
        assert snap["provenance"]["amount_due"] == fixed["observation_id"]
        assert snap["field_provenance"]["amount_due"]["source_priority"] == 1000

        types = ok(await c.call_tool("list_entity_types", {"keyword": "bill"}))
        assert types["entity_types"][0]["entity_type"] == "invoice"

        # Legacy names keep working.
        legacy = ok(await c.call_tool("get_entity_snapshot", {"entity_id": invoice_id}))
        assert legacy["snapshot"] == snap["snapshot"]


async def test_same_input_same_ids_and_order(start_gateway, database: str) -> None:
    user = new_user()
    gw = start_gateway("--user-id", user)
    async with Client(gw.url) as c:
        first = ok(await c.call_tool("store", {"entities": [INVOICE, PERSON]}))
        again = ok(await c.call_tool("store", {"entities": [INVOICE, PERSON]}))
        assert again["deduplicated"] is True
        assert again["source_id"] == first["source_id"]
        assert again["entities"] == first["entities"]
        assert again["interpretation"]["observations_created"] == 0
        listing = ok(await c.call_tool("retrieve_entities", {}))
        assert listing == ok(await c.call_tool("retrieve_entities", {}))
    # Another gateway process, same user, same content: same ids.
    async with stdio_client(env=gateway_env(DATABASE_URL=database, NEOTOMA_USER_ID=user)) as c:
        third = ok(await c.call_tool("store", {"entities": [INVOICE, PERSON]}))
        assert third["source_id"] == first["source_id"] and third["deduplicated"] is True


async def test_two_sources_one_entity_and_isolation_between_users(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    ga = start_gateway("--user-id", alice)
    gb = start_gateway("--user-id", bob)
    async with Client(ga.url) as a, Client(gb.url) as b:
        one = ok(await a.call_tool("store", {"entities": [{**PERSON, "role": "buyer"}]}))
        two = ok(await a.call_tool("store", {"entities": [{"entity_type": "person", "email": " BO@example.com", "name": "Bo"}]}))
        assert one["entities"][0]["entity_id"] == two["entities"][0]["entity_id"]
        person = one["entities"][0]["entity_id"]
        snap = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": person}))
        assert snap["observation_count"] == 2

        # Bob sees nothing of Alice's, through every action.
        assert error(await b.call_tool("retrieve_entity_snapshot", {"entity_id": person}))["code"] == "ENTITY_NOT_FOUND"
        assert error(await b.call_tool("list_observations", {"entity_id": person}))["code"] == "ENTITY_NOT_FOUND"
        assert (
            error(await b.call_tool("retrieve_field_provenance", {"entity_id": person, "field": "name"}))["code"]
            == "ENTITY_NOT_FOUND"
        )
        assert ok(await b.call_tool("retrieve_entities", {}))["total"] == 0
        assert ok(await b.call_tool("retrieve_entity_by_identifier", {"identifier": "bo@example.com"}))["total"] == 0
        assert (
            error(
                await b.call_tool(
                    "correct", {"entity_id": person, "entity_type": "person", "field": "name", "value": "X"}
                )
            )["code"]
            == "ENTITY_NOT_FOUND"
        )
        # Bob cannot act for Alice by naming her.
        refused = error(await b.call_tool("retrieve_entities", {"user_id": alice}))
        assert refused["code"] == "FORBIDDEN"
        # The same content for Bob is Bob's own source and entity.
        mine = ok(await b.call_tool("store", {"entities": [{**PERSON, "role": "buyer"}]}))
        assert mine["deduplicated"] is False
        assert mine["entities"][0]["entity_id"] != person


async def test_bad_store_input_gets_the_envelope_and_writes_nothing(start_gateway, admin_db) -> None:
    user = new_user()
    gw = start_gateway("--user-id", user)
    async with Client(gw.url) as c:
        cases = [
            ({"entities": [{"name": "no type"}]}, "entities[0].entity_type"),
            ({"entities": [{"entity_type": "invoice", "amount_due": "lots"}]}, "entities[0].amount_due"),
            ({"entities": [{"entity_type": "note", "content": "fine"}, "not an object"]}, "entities[1]"),
            ({"entities": "nope"}, "entities"),
            ({"entities": [{"entity_type": "starship"}]}, "entities[0].entity_type"),
        ]
        for args, field in cases:
            e = error(await c.call_tool("store", args))
            assert e["code"] == "VALIDATION_ERROR", e
            assert e["details"]["field"] == field, e
    rows = admin_db.execute("SELECT count(*) FROM neotoma.sources WHERE user_id = %s", (user,)).fetchone()
    assert rows == (0,)


async def test_valid_time_now_then_and_as_history(start_gateway, admin_db) -> None:
    """What was true in the world, and when (docs/actions.md, valid time):
    stored out of order, the snapshot shows what holds now, valid_at what
    held then, the field's history the succession; another user sees none."""
    user = new_user()
    gw = start_gateway("--user-id", user)
    other = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c, Client(other.url) as o:
        person = ok(await c.call_tool("store", {"entities": [PERSON]}))["entities"][0]["entity_id"]
        later = {"entity_type": "person", "email": "bo@example.com", "organization": "Initech"}
        earlier = {**later, "organization": "Acme"}
        ok(await c.call_tool("store", {"entities": [later], "valid_from": "2022-03-01"}))
        ok(await c.call_tool("store", {"entities": [earlier], "valid_from": "2019-01-01", "valid_to": "2022-03-01"}))
        now = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": person}))
        assert now["snapshot"]["organization"] == "Initech" and now["snapshot"]["name"] == "Bo Diaz"
        then = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": person, "valid_at": "2020-06-01T12:00:00"}))
        assert then["snapshot"]["organization"] == "Acme"
        assert then["valid_until"].startswith("2022-03-01T00:00:00")
        assert then["valid_at"] == "2020-06-01T12:00:00"
        # The end is excluded: on the day of the move, Initech.
        moved = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": person, "valid_at": "2022-03-01"}))
        assert moved["snapshot"]["organization"] == "Initech"
        history = ok(await c.call_tool("retrieve_field_history", {"entity_id": person, "field": "organization"}))
        assert [(i["value"], i.get("valid_from", "")[:10], i.get("valid_to", "")[:10]) for i in history["intervals"]] == [
            ("Acme", "2019-01-01", "2022-03-01"),
            ("Initech", "2022-03-01", ""),
        ]
        assert all(i["provenance"]["source_id"] for i in history["intervals"])
        listed = ok(await c.call_tool("retrieve_entities", {"entity_type": "person", "valid_at": "2020-06-01"}))
        assert [e["snapshot"]["organization"] for e in listed["entities"]] == ["Acme"]
        # A correction over part of an interval wins there only.
        ok(await c.call_tool("correct", {"entity_id": person, "entity_type": "person", "field": "organization",
                                         "value": "Acme Corp", "valid_from": "2020-01-01", "valid_to": "2021-01-01"}))
        then = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": person, "valid_at": "2020-06-01"}))
        assert then["snapshot"]["organization"] == "Acme Corp"
        later = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": person, "valid_at": "2021-06-01"}))
        assert later["snapshot"]["organization"] == "Acme"
        events = ok(await c.call_tool("list_timeline_events", {"entity_id": person}))["events"]
        assert {(e["event_type"], e["event_timestamp"][:10]) for e in events} >= {
            ("ValidFrom", "2019-01-01"), ("ValidTo", "2022-03-01"), ("ValidFrom", "2022-03-01")}
        bad = error(await c.call_tool("store", {"entities": [later], "valid_from": "2023-01-01", "valid_to": "2022-01-01"}))
        assert (bad["code"], bad["details"]["field"]) == ("VALIDATION_ERROR", "valid_to")
        missing = error(await o.call_tool("retrieve_field_history", {"entity_id": person, "field": "organization"}))
        assert missing["code"] == "ENTITY_NOT_FOUND"
    report = admin_db.execute("SELECT neotoma.verify()").fetchone()[0]
    assert report["ok"] is True, report
    stored = admin_db.execute(
        "SELECT count(*) FROM neotoma.observations WHERE user_id = %s AND valid_from IS NOT NULL", (user,)
    ).fetchone()
    assert stored == (3,)  # two stores and a correction


async def test_relationships_over_valid_time(start_gateway, admin_db) -> None:
    """A relationship holds over the union of its assertions' intervals
    (docs/actions.md, valid time): listings, traversals and neighborhoods
    answer what holds at valid_at (default now), each with its metadata
    then; current_only false lists the others; another user sees none."""
    user = new_user()
    gw = start_gateway("--user-id", user)
    other = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c, Client(other.url) as o:
        stored = ok(await c.call_tool("store", {"entities": [
            PERSON, {"entity_type": "company", "name": "Acme"}, {"entity_type": "company", "name": "Initech"}]}))
        bo, acme, initech = (e["entity_id"] for e in stored["entities"])
        part_of = {"relationship_type": "PART_OF", "source_entity_id": bo}
        first = ok(await c.call_tool("create_relationship", {**part_of, "target_entity_id": acme,
                   "metadata": {"role": "engineer"}, "valid_from": "2019-01-01", "valid_to": "2020-06-01"}))
        assert first["valid_during"] == [{"valid_from": "2019-01-01T00:00:00.000000Z",
                                          "valid_to": "2020-06-01T00:00:00.000000Z"}]
        ok(await c.call_tool("create_relationships", {"relationships": [
            {**part_of, "target_entity_id": acme, "metadata": {"role": "manager"},
             "valid_from": "2020-06-01", "valid_to": "2022-03-01"},
            {**part_of, "target_entity_id": initech, "valid_from": "2022-03-01"}]}))

        async def targets(**args):
            listed = ok(await c.call_tool("list_relationships", {"entity_id": bo, **args}))
            return sorted((r["target_entity_id"], r["metadata"].get("role")) for r in listed["relationships"])

        assert await targets() == [(initech, None)]
        assert await targets(valid_at="2019-05-01") == [(acme, "engineer")]
        assert await targets(valid_at="2021-05-01") == [(acme, "manager")]
        assert await targets(valid_at="2018-01-01") == []
        assert len(await targets(current_only=False)) == 2
        snapshot = ok(await c.call_tool("get_relationship_snapshot", {**part_of, "target_entity_id": acme,
                                                                      "valid_at": "2019-05-01"}))
        assert snapshot["snapshot"]["snapshot"] == {"role": "engineer"}
        assert snapshot["snapshot"]["valid_during"] == [{"valid_from": "2019-01-01T00:00:00.000000Z",
                                                         "valid_to": "2022-03-01T00:00:00.000000Z"}]
        related = ok(await c.call_tool("retrieve_related_entities", {"entity_id": bo, "valid_at": "2020-01-01"}))
        assert [e["id"] for e in related["entities"]] == [acme]
        related = ok(await c.call_tool("retrieve_related_entities", {"entity_id": bo}))
        assert [e["id"] for e in related["entities"]] == [initech]
        around = ok(await c.call_tool("retrieve_graph_neighborhood", {"node_id": bo, "valid_at": "2021-01-01"}))
        assert [(r["target_entity_id"], r["metadata"]) for r in around["relationships"]] == [(acme, {"role": "manager"})]
        bad = error(await c.call_tool("create_relationship", {**part_of, "target_entity_id": initech,
                                                              "valid_from": "2023-01-01", "valid_to": "2022-01-01"}))
        assert (bad["code"], bad["details"]["field"]) == ("VALIDATION_ERROR", "valid_to")
        missing = error(await o.call_tool("list_relationships", {"entity_id": bo, "current_only": False}))
        assert missing["code"] == "ENTITY_NOT_FOUND"
    report = admin_db.execute("SELECT neotoma.verify()").fetchone()[0]
    assert report["ok"] is True, report
    assert admin_db.execute(
        "SELECT count(*) FROM neotoma.relationship_observations WHERE user_id = %s AND valid_from IS NOT NULL", (user,)
    ).fetchone() == (3,)


async def test_snapshots_verify_after_mcp_traffic(start_gateway, admin_db) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        for i in range(5):
            ok(await c.call_tool("store", {"entities": [{**INVOICE, "amount_due": float(i), "notes": f"v{i}"}]}))
    report = admin_db.execute("SELECT neotoma.verify()").fetchone()[0]
    assert report["ok"] is True, report
    assert report["entities_checked"] >= 1


async def test_submit_payload_of_the_earlier_specification(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    request = {
        "capability_id": "neotoma:store_invoice:v1",
        "body": {"invoice_number": "INV-001", "vendor_name": "Acme Corp", "amount_due": 1500.0},
        "provenance": {"source_refs": [], "extracted_at": "2025-01-15T10:30:00Z", "extractor_version": "neotoma-mcp:v0.2.1"},
    }
    async with Client(gw.url) as c:
        # Callable under its old name, though not listed among the tools.
        assert "submit_payload" not in {t.name for t in (await c.list_tools()).tools}
        first = ok(await c.call_tool("submit_payload", request))
        assert first["created"] is True and first["payload_content_id"].startswith("payload_")
        again = ok(await c.call_tool("submit_payload", request))
        assert again["created"] is False and again["payload_id"] == first["payload_id"]
        invoice_id = first["entities"][0]["entity_id"]
        snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": invoice_id}))
        assert snap["entity_type"] == "invoice" and snap["snapshot"]["amount_due"] == 1500.0
        unknown = error(await c.call_tool("submit_payload", {**request, "capability_id": "neotoma:store_person:v1"}))
        assert unknown["code"] == "UNKNOWN_CAPABILITY" and unknown["details"]["field"] == "capability_id"
        # Nothing was stored by the refused call.
        assert ok(await c.call_tool("retrieve_entities", {}))["total"] == 1
