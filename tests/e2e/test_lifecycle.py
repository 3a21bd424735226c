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


async def test_relationships_erase_and_change_feed(start_gateway) -> None:
    """delete_relationship / restore_relationship, erase and the change feed
    over HTTP with tokens: another user reaches none of it."""
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        tools = {t.name: t for t in (await a.list_tools()).tools}
        assert tools["erase"].annotations.destructive_hint is True
        assert tools["delete_relationship"].annotations.destructive_hint is True
        assert tools["list_recent_changes"].annotations.read_only_hint is True

        start = ok(await a.call_tool("list_recent_changes", {}))
        stored = ok(await a.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Ada", "email": "ada@example.com", "notes": "E2E-SECRET-ADA"},
            {"entity_type": "company", "name": "Analytical Engines Ltd"}]}))
        ada, company = (e["entity_id"] for e in stored["entities"])
        link = {"relationship_type": "PART_OF", "source_entity_id": ada, "target_entity_id": company}
        ok(await a.call_tool("create_relationship", link))

        assert error(await b.call_tool("delete_relationship", link))["code"] == "ENTITY_NOT_FOUND"
        deleted = ok(await a.call_tool("delete_relationship", {**link, "reason": "left"}))
        assert deleted["deleted"] is True and deleted["reason"] == "left"
        assert ok(await a.call_tool("list_relationships", {"entity_id": ada}))["total"] == 0
        assert error(await a.call_tool("get_relationship_snapshot", link))["code"] == "NOT_FOUND"
        assert error(await a.call_tool("delete_relationship", link))["code"] == "VALIDATION_ERROR"
        ok(await a.call_tool("restore_relationship", link))
        assert ok(await a.call_tool("list_relationships", {"entity_id": ada}))["total"] == 1

        feed = ok(await a.call_tool("list_recent_changes", {"since": start["next_cursor"]}))
        seen = {(c["kind"], c["operation"]) for c in feed["changes"]}
        assert {("entity", "observed"), ("relationship", "asserted"), ("relationship", "deleted"),
                ("relationship", "restored"), ("source", "created")} <= seen
        assert ok(await b.call_tool("list_recent_changes", {}))["changes"] == []
        polled = ok(await a.call_tool("list_recent_changes", {"since": feed["next_cursor"]}))
        assert polled["changes"] == [] and polled["next_cursor"] == feed["next_cursor"]

        assert error(await a.call_tool("erase", {"entity_id": ada}))["code"] == "VALIDATION_ERROR"
        assert error(await b.call_tool("erase", {"entity_id": ada, "confirm": True}))["code"] == "ENTITY_NOT_FOUND"
        erased = ok(await a.call_tool("erase", {"entity_id": ada, "confirm": True}))
        assert erased["erased"] == "entity" and erased["counts"]["entities"] == 1
        assert erased["counts"]["relationships"] == 1
        assert error(await a.call_tool("retrieve_entity_snapshot", {"entity_id": ada, "include_deleted": True}))["code"] == "ENTITY_NOT_FOUND"
        listed = ok(await a.call_tool("retrieve_entities", {"include_deleted": True}))
        assert [e["id"] for e in listed["entities"]] == [company]
        resources = await a.list_resources()
        for r in resources.resources:
            body = await a.read_resource(r.uri)
            assert "E2E-SECRET-ADA" not in str(body)
        after = ok(await a.call_tool("list_recent_changes", {"since": feed["next_cursor"]}))
        assert [(c["kind"], c["operation"]) for c in after["changes"]] == [("erasure", "entity")]


async def test_duplicates_and_split(start_gateway) -> None:
    """list_potential_duplicates and split_entity over MCP: read-only pairs
    with evidence, a split that merge undoes, another user's refusal."""
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        tools = {t.name: t for t in (await a.list_tools()).tools}
        assert tools["list_potential_duplicates"].annotations.read_only_hint is True
        assert tools["split_entity"].annotations.destructive_hint is True
        stored = ok(await a.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Katherine Johnson", "email": "kj@example.com"},
            {"entity_type": "person", "name": "Katherine Jonson", "email": "kjonson@example.com"}]}))
        first, second = (e["entity_id"] for e in stored["entities"])
        pairs = ok(await a.call_tool("list_potential_duplicates", {"entity_type": "person"}))["pairs"]
        assert [(p["entity_id"], p["other_entity_id"]) for p in pairs] == [tuple(sorted([first, second]))]
        assert pairs[0]["evidence"][0]["method"] == "trigram"
        assert ok(await b.call_tool("list_potential_duplicates", {"entity_type": "person"}))["pairs"] == []

        merged = ok(await a.call_tool("merge_entities", {"from_entity_id": second, "to_entity_id": first}))
        assert merged["observations_moved"] == 1
        observations = ok(await a.call_tool("list_observations", {"entity_id": first}))["observations"]
        moved = [o["id"] for o in observations if o["entity_id"] == second]
        assert error(await b.call_tool("split_entity", {"entity_id": first, "observation_ids": moved}))["code"] == "ENTITY_NOT_FOUND"
        split = ok(await a.call_tool("split_entity", {"entity_id": first, "observation_ids": moved, "reason": "two people"}))
        assert split["created"] is True and split["observations_moved"] == 1
        off = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": split["to_entity_id"]}))
        assert off["snapshot"]["email"] == "kjonson@example.com"
        kept = ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": first}))
        assert kept["snapshot"]["email"] == "kj@example.com" and kept["observation_count"] == 1
        again = error(await a.call_tool("split_entity", {"entity_id": first, "observation_ids": moved}))
        assert again["code"] == "VALIDATION_ERROR"
