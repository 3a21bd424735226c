"""What an agent pays for, in bytes, through a real MCP client over stdio
(the gateway as a user runs it: NEOTOMA_TOOLS and NEOTOMA_VERBOSE_ANSWERS
unset, an ordinary database role):

- `tools/list`: tools and bytes of what a model reads (name, description,
  inputSchema as compact JSON) in the default profile, against every tool
  with the catalog's whole input schemas (what 0.15.0 listed by default),
  and per default tool before (whole schema) and after (as listed);
- a typical answer of each default tool, lean (the default) against whole
  (`verbose: true`, what 0.15.0 answered);
- the instructions and `list_entity_types` (compact and in full).

Budgets (issue 39): at most 24 tools and 24 KB in the default profile,
`list_entity_types` within 4 KB, instructions within 2 KB.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import psycopg
from common import gateway_bin, gateway_database, gateway_env, goal, table
from mcp import Client
from mcp.client.stdio import StdioServerParameters

DATABASE = "neotoma_bench_agent_surface"
APP_ROLE = "neotoma_bench_agent"


def compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def model_view(name: str, description: str, schema: dict) -> dict:
    return {"name": name, "description": description, "inputSchema": schema}


async def answer(client: Client, tool: str, args: dict) -> int:
    """The bytes of the answer's text."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, result.content[0].text)
    return len(result.content[0].text.encode())


async def answer_bytes(client: Client, tool: str, args: dict) -> tuple[int, int]:
    """The bytes of the answer, lean and whole."""
    return await answer(client, tool, args), await answer(client, tool, {**args, "verbose": True})


async def run() -> None:
    dsn = gateway_database(DATABASE, APP_ROLE)
    with psycopg.connect(dsn.replace(f"user={APP_ROLE}", "user=postgres")) as conn:
        catalog = conn.execute("SELECT neotoma.action_catalog()").fetchone()[0]["actions"]
    whole_schemas = {a["name"]: a for a in catalog if a["tool_set"] == "neotoma" and a["tool"] and not a["legacy"]}
    before = sum(compact(model_view(a["name"], a["description"], a["input_schema"])) for a in whole_schemas.values())

    params = StdioServerParameters(command=gateway_bin(), args=["--user-id", str(uuid.uuid4())], env=gateway_env(dsn))
    async with Client(params) as client:
        listing = await client.list_tools()
        tools = listing.tools
        after = sum(compact(model_view(t.name, t.description or "", t.input_schema)) for t in tools)
        whole_listing = compact(listing.model_dump(by_alias=True, exclude_none=True, mode="json"))
        instructions = len((client.instructions or "").encode())

        table("tools/list (what a model reads: name + description + inputSchema, compact JSON)", [
            ("listing", "tools", "bytes", "≈ tokens", "budget", "goal"),
            ("0.15.0 default (every tool, whole schemas)", str(len(whole_schemas)), str(before), str(before // 4), "", ""),
            ("default profile now", str(len(tools)), str(after), str(after // 4), "≤ 24 tools, ≤ 24576 B",
             goal(len(tools) <= 24 and after <= 24 * 1024)),
            ("whole tools/list answer now (titles, annotations, output schemas)", str(len(tools)), str(whole_listing), "", "", ""),
            ("instructions", "", str(instructions), str(instructions // 4), "≤ 2048 B", goal(instructions <= 2048)),
        ])

        per_tool = [("tool", "definition before", "after", "answer whole", "lean")]
        stored = json.loads((await client.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com", "notes": "Wrote the first program"},
            {"entity_type": "company", "name": "Analytical Engines Ltd", "website": "engines.example"},
            {"entity_type": "task", "title": "Call Ada about the engine", "status": "open", "due_date": "2026-12-01"}]})).content[0].text)
        ada, company, task = (e["entity_id"] for e in stored["entities"])
        csv = "bmFtZSxlbWFpbApCbyxib0BleGFtcGxlLmNvbQo="  # name,email / Bo,bo@example.com
        stored_file = json.loads((await client.call_tool("store", {
            "file_content": csv, "mime_type": "text/csv", "interpretation_config": {"entity_type": "person"}})).content[0].text)
        relationship = {"relationship_type": "REFERS_TO", "source_entity_id": task, "target_entity_id": ada}
        calls: dict[str, dict] = {
            "store": {"entities": [{"entity_type": "person", "name": "Grace Hopper", "email": "grace@example.com"}]},
            "list_entity_types": {"keyword": "invoice"},
            "retrieve_entities": {"search": "Who wrote the first program?"},
            "retrieve_entity_snapshot": {"entity_id": ada},
            "retrieve_entity_by_identifier": {"identifier": "ada@example.com"},
            "retrieve_field_provenance": {"entity_id": ada, "field": "email"},
            "list_observations": {"entity_id": ada},
            "correct": {"entity_id": task, "entity_type": "task", "field": "status", "value": "done"},
            "create_relationship": relationship,
            "list_relationships": {"entity_id": ada},
            "get_relationship_snapshot": relationship,
            "retrieve_related_entities": {"entity_id": ada},
            "retrieve_graph_neighborhood": {"node_id": ada},
            "list_timeline_events": {},
            "retrieve_file_url": {"file_path": stored_file["source_id"]},
            "reinterpret": {"source_id": stored_file["source_id"],
                            "interpretation_config": {"entity_type": "person", "code_version": "2"}},
        }

        async def duplicate(n: int) -> str:
            stored = json.loads((await client.call_tool("store", {"entities": [
                {"entity_type": "person", "name": "Ada L.", "email": f"ada.{n}@example.com"}]})).content[0].text)
            return stored["entities"][0]["entity_id"]

        total = [0, 0, 0, 0]
        for t in tools:
            d_before = compact(model_view(t.name, whole_schemas[t.name]["description"], whole_schemas[t.name]["input_schema"]))
            d_after = compact(model_view(t.name, t.description or "", t.input_schema))
            if t.name == "merge_entities":
                # Twice, each time a duplicate of its own: a merge happens once.
                lean, whole = [await answer(client, t.name, {**args, "from_entity_id": await duplicate(n)})
                               for n, args in enumerate(({"to_entity_id": ada}, {"to_entity_id": ada, "verbose": True}))]
            elif t.name in calls:
                lean, whole = await answer_bytes(client, t.name, calls[t.name])
            else:
                lean = whole = 0
            for i, v in enumerate((d_before, d_after, whole, lean)):
                total[i] += v
            per_tool.append((t.name, str(d_before), str(d_after), str(whole) if whole else "-", str(lean) if lean else "-"))
        per_tool.append(("total", *(str(v) for v in total)))
        table("per default tool, bytes: its definition (before: whole schema; after: as listed) and a typical answer (whole = verbose: true)", per_tool)

        compact_types = len((await client.call_tool("list_entity_types", {})).content[0].text.encode())
        full_types = len((await client.call_tool("list_entity_types", {"detail": True})).content[0].text.encode())
        table("list_entity_types, the seeded types", [
            ("answer", "bytes", "≈ tokens", "budget", "goal"),
            ("full detail (0.15.0's default)", str(full_types), str(full_types // 4), "", ""),
            ("compact (the default now)", str(compact_types), str(compact_types // 4), "≤ 4096 B", goal(compact_types <= 4096)),
        ])


if __name__ == "__main__":
    asyncio.run(run())
