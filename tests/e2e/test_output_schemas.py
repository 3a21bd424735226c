"""What is published is what is served: every tool that publishes an
outputSchema is called with a fixture, and its real result must validate
against that schema and hold no field the schema does not declare (at any
depth where the schema lists properties). A tool with an outputSchema and
no fixture here fails the test, so new actions cannot skip it."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from conftest import Client, new_user, ok
from jsonschema import Draft202012Validator

pytestmark = pytest.mark.anyio


def undeclared(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Paths of object keys the schema's `properties` do not declare (where
    it declares properties and allows nothing else explicitly)."""
    found: list[str] = []
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        for key, v in value.items():
            if key not in props:
                if schema.get("additionalProperties") in (None, False):
                    found.append(f"{path}.{key}")
                continue
            found += undeclared(v, props[key], f"{path}.{key}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            found += undeclared(v, schema["items"], f"{path}[{i}]")
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        if isinstance(branch, dict) and branch.get("type") == "object" and isinstance(value, dict):
            found += undeclared(value, branch, path)
    return found


async def check_against_schema(c: Client, published: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    schema = published[name]
    result = ok(await c.call_tool(name, args))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in Draft202012Validator(schema).iter_errors(result)]
    assert not errors, f"{name} answered outside its outputSchema: {errors}"
    extra = undeclared(result, schema)
    assert not extra, f"{name} answered fields its outputSchema does not declare: {extra}"
    return result


async def test_the_other_tool_sets_answer_their_output_schemas(start_gateway) -> None:
    gw = start_gateway("--tools", "memory,workspace,engram,graphmem", "--user-id", new_user())
    async with Client(gw.url) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        published = {name: t.output_schema for name, t in tools.items() if t.output_schema}
        fixtures: list[tuple[str, dict[str, Any]]] = [
            ("create_entities", {"entities": [{"name": "A", "entityType": "thing", "observations": ["a"]},
                                              {"name": "B", "entityType": "thing", "observations": []}]}),
            ("create_relations", {"relations": [{"from": "A", "to": "B", "relationType": "knows"}]}),
            ("add_observations", {"observations": [{"entityName": "A", "contents": ["b"]}]}),
            ("read_graph", {"limit": 1}),
            ("search_nodes", {"query": "a"}),
            ("open_nodes", {"names": ["A"]}),
            ("delete_observations", {"deletions": [{"entityName": "A", "observations": ["b"]}]}),
            ("delete_relations", {"relations": [{"from": "A", "to": "B", "relationType": "knows"}]}),
            ("delete_entities", {"entityNames": ["B"]}),
            ("upsert_entity", {"workspaceName": "demo", "name": "Alice", "entityType": "Person", "metadata": "{}"}),
            ("upsert_entity", {"workspaceName": "demo", "name": "Bob", "entityType": "Person"}),
            ("upsert_relation", {"workspaceName": "demo", "from": "Alice", "to": "Bob", "relationType": "knows"}),
            ("workspace_read_graph", {"workspaceName": "demo"}),
            ("get_entity_relations", {"workspaceName": "demo", "entityName": "Alice"}),
            ("send_memory", {"content": "A knows things", "source": {"type": "chat"}, "confidence_hint": "B"}),
            ("get_memory", {"query": "A"}),
            ("get_version", {}),
            ("get_current_time", {}),
        ]
        # Then those that need ids answered before them.
        later = {"correct_memory", "create_entity", "create_observation", "create_relation", "get_entity",
                 "update_entity", "find_relations", "search_entities", "list_entities", "search_subgraph",
                 "get_subgraph_by_ids", "set_context", "get_context", "clear_context", "bulk_update",
                 "suggest_merges", "delete_observation", "delete_relation", "delete_entity"}
        missing = set(published) - {name for name, _ in fixtures} - later
        assert not missing, f"tools with an outputSchema but no fixture here: {sorted(missing)}"

        async def check(name: str, args: dict[str, Any]) -> dict[str, Any]:
            return await check_against_schema(c, published, name, args)

        for name, args in fixtures:
            await check(name, args)
        memory = ok(await c.call_tool("get_memory", {"query": "knows things"}))["memories"][0]["id"]
        await check("correct_memory", {"target_id": memory, "action": "annotate", "payload": {"note": "n"}})
        neo = (await check("create_entity", {"name": "Neotoma gateway", "entity_type": "repo", "observations": ["o"]}))["entity"]
        await check("create_entity", {"name": "Neotoma gateway", "entity_type": "repo"})
        bug = (await check("create_entity", {"name": "Crash when the cache is cold", "entity_type": "bug"}))["entity"]
        observation = await check("create_observation", {"entity_id": neo["entity_id"], "text_content": "p"})
        relation = await check("create_relation", {"from_entity_id": bug["entity_id"], "to_entity_id": neo["entity_id"],
                                                   "relation_type": "part_of"})
        await check("get_entity", {"entity_id": neo["entity_id"]})
        await check("update_entity", {"entity_id": neo["entity_id"], "description": "d"})
        await check("find_relations", {"to_entity_id": neo["entity_id"]})
        await check("search_entities", {"query": "Neotoma"})
        await check("list_entities", {})
        await check("search_subgraph", {"query": "neotoma"})
        await check("get_subgraph_by_ids", {"entity_ids": [neo["entity_id"], bug["entity_id"]]})
        await check("set_context", {"project_id": neo["entity_id"]})
        await check("get_context", {})
        await check("clear_context", {})
        await check("bulk_update", {"entities": [{"name": "Bulk task", "entity_type": "task"}]})
        await check("suggest_merges", {"threshold": 1})
        await check("delete_observation", {"observation_id": observation["observation_id"]})
        await check("delete_relation", {"relation_id": relation["relation_id"]})
        await check("delete_entity", {"entity_id": bug["entity_id"]})


@pytest.mark.parametrize("answers", ["whole", "lean"])
async def test_every_published_output_schema_is_what_the_action_returns(start_gateway, answers: str) -> None:
    """Every answer validates in both forms: whole (--verbose-answers) and
    lean (the default: null, empty and bookkeeping fields left out)."""
    verbose = "true" if answers == "whole" else "false"
    gw = start_gateway("--user-id", new_user(), NEOTOMA_VERBOSE_ANSWERS=verbose)
    async with Client(gw.url) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        published = {name: t.output_schema for name, t in tools.items() if t.output_schema}

        invoice = {"entity_type": "invoice", "invoice_number": "S-1", "vendor_name": "Acme",
                   "amount_due": 10, "invoice_date": "2024-05-01", "cost_center": "X"}
        person = {"entity_type": "person", "name": "Ana Lima", "email": "ana@example.com"}
        duplicate = {"entity_type": "person", "name": "Ana L.", "email": "ana.lima@example.com"}
        stored = ok(await c.call_tool("store", {"entities": [invoice, person, duplicate]}))
        inv, ana, ana2 = (e["entity_id"] for e in stored["entities"])
        rel = {"relationship_type": "REFERS_TO", "source_entity_id": inv, "target_entity_id": ana}
        csv = base64.b64encode(b"name,email\nBo,bo@example.com\n").decode()
        stored_file = ok(await c.call_tool("store", {"file_content": csv, "mime_type": "text/csv",
                                                     "interpretation_config": {"entity_type": "person"}}))

        inv_observation = ok(await c.call_tool("list_observations", {"entity_id": inv}))["observations"][0]["id"]

        umbrella = ok(await c.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Umbrella", "email": "u@umbrella.example"}]}))["entities"][0]["entity_id"]

        # In an order where each call has what it needs.
        fixtures: list[tuple[str, dict[str, Any]]] = [
            ("get_version", {}),
            ("get_current_time", {}),
            ("store", {"entities": [{"entity_type": "note", "title": "t", "content": "c"}],
                       "provenance": {"extracted_at": "2024-05-02T10:00:00", "extractor_version": "t/1"}}),
            ("retrieve_entity_snapshot", {"entity_id": inv}),
            ("list_observations", {"entity_id": inv}),
            ("retrieve_field_provenance", {"entity_id": inv, "field": "vendor_name"}),
            ("store", {"entities": [{"entity_type": "person", "email": "ana@example.com", "role": "intern"}],
                       "valid_from": "2020-01-01", "valid_to": "2999-01-01"}),
            ("retrieve_entity_snapshot", {"entity_id": ana, "valid_at": "2021-06-01"}),
            ("retrieve_field_history", {"entity_id": ana, "field": "role"}),
            ("retrieve_entities", {"entity_type": "invoice"}),
            ("retrieve_entity_by_identifier", {"identifier": "ana@example.com"}),
            ("list_entity_types", {"keyword": "bill"}),
            ("correct", {"entity_id": inv, "entity_type": "invoice", "field": "amount_due", "value": 12}),
            ("create_relationship", {**rel, "metadata": {"note": "billed"}}),
            ("list_relationships", {"entity_id": inv}),
            ("get_relationship_snapshot", rel),
            ("retrieve_related_entities", {"entity_id": inv, "max_hops": 2}),
            ("list_timeline_events", {"after_date": "2024-01-01"}),
            ("analyze_schema_candidates", {"entity_type": "invoice", "min_frequency": 1, "min_confidence": 0}),
            ("get_schema_recommendations", {"entity_type": "invoice", "status": "all"}),
            ("update_schema_incremental", {"entity_type": "invoice", "user_specific": True,
                                           "fields_to_add": [{"field_name": "cost_center", "field_type": "string"}]}),
            ("register_schema", {"entity_type": "output_check", "user_specific": True,
                                 "schema_definition": {"fields": {"label": {"type": "string"}}},
                                 "reducer_config": {"merge_policies": {}}}),
            ("reinterpret", {"source_id": stored_file["source_id"],
                             "interpretation_config": {"entity_type": "person", "code_version": "2"}}),
            ("retrieve_file_url", {"file_path": stored_file["storage_path"]}),
            ("merge_entities", {"from_entity_id": ana2, "to_entity_id": ana, "merge_reason": "same person"}),
            ("delete_entity", {"entity_id": inv, "reason": "checking schemas"}),
            ("retrieve_entities", {"entity_type": "invoice", "include_deleted": True}),
            ("retrieve_entities", {"search": "invoice acme", "search_mode": "hybrid"}),
            ("retrieve_entity_snapshot", {"entity_id": inv, "include_deleted": True}),
            ("restore_entity", {"entity_id": inv}),
            ("delete_relationship", {**rel, "reason": "checking schemas"}),
            ("list_relationships", {"entity_id": inv, "include_deleted": True}),
            ("get_relationship_snapshot", {**rel, "include_deleted": True}),
            ("restore_relationship", rel),
            ("list_recent_changes", {"limit": 5}),
            ("list_potential_duplicates", {"entity_type": "person", "threshold": 0.1}),
            ("search_subgraph", {"query": "invoice acme"}),
            ("get_subgraph_by_ids", {"entity_ids": [inv, "ent_00000000000000000000000000000000"]}),
            ("bulk", {"operations": [
                {"action": "store", "ref": "n", "args": {"entities": [{"entity_type": "note", "title": "bulk", "content": "c"}]}},
                {"action": "correct", "args": {"entity_id": "$n", "entity_type": "note", "field": "content", "value": "d"}},
                {"action": "create_relationship", "args": {"relationship_type": "REFERS_TO", "source_entity_id": "$n",
                                                           "target_entity_id": inv}}]}),
            ("create_relationships", {"relationships": [rel]}),
            # The correction above contradicts the stored amount (resolved).
            ("list_contradictions", {"entity_type": "invoice"}),
            ("retrieve_entity_snapshot", {"entity_id": inv, "include_contradictions": True}),
            ("annotate", {"entity_id": inv, "note": "checked against the paper copy"}),
            ("retrieve_entity_snapshot", {"entity_id": inv, "include_annotations": True}),
            ("retrieve_entity_snapshot", {"entity_id": inv, "min_confidence": "A1"}),
            ("retrieve_entities", {"min_confidence": "F3", "entity_type": "invoice"}),
            ("list_observations", {"entity_id": inv}),
            ("contest", {"observation_id": inv_observation, "reason": "the amount looks wrong"}),
            ("reclassify", {"entity_id": umbrella, "new_entity_type": "company", "reason": "a business"}),
            ("set_context", {"workspace": "schemas"}),
            ("get_context", {}),
            ("list_workspaces", {}),
            ("clear_context", {}),
            # (split_entity and erase follow: they need what these made.)
        ]
        later = ["split_entity", "erase"]
        missing = set(published) - {name for name, _ in fixtures} - set(later)
        assert not missing, f"tools with an outputSchema but no fixture here: {sorted(missing)}"

        async def check(name: str, args: dict[str, Any]) -> None:
            await check_against_schema(c, published, name, args)

        for name, args in fixtures:
            await check(name, args)
        observations = ok(await c.call_tool("list_observations", {"entity_id": ana}))["observations"]
        merged_in = [o["id"] for o in observations if o["entity_id"] == ana2]
        await check("split_entity", {"entity_id": ana, "observation_ids": merged_in, "reason": "two people"})
        await check("erase", {"entity_id": inv, "confirm": True, "reason": "checking schemas"})

