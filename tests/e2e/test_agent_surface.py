"""What an agent sees by default (README "Tools an agent sees"), from a real
`tools/list` over stdio with NEOTOMA_TOOLS and NEOTOMA_VERBOSE_ANSWERS unset:

- the default profile stays within its budgets: at most 24 tools and 24 KB
  of name + description + inputSchema as compact JSON;
- every group is listed under its name, `--tools all` lists every action of
  the catalog once, and an action no group lists is still callable;
- answers leave out empty and bookkeeping fields unless `verbose: true`;
- `list_entity_types` answers within 4 KB, one type in full on request;
- the instructions stay within 2 KB and name the groups;
- search reads a question: partial overlap, stop words, words inside
  sentences without spaces, the exact name first."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from conftest import admin_dsn, new_user, ok, stdio_client
from mcp_support import gateway_env

pytestmark = pytest.mark.anyio

TOOL_BUDGET = 24
BYTES_BUDGET = 24 * 1024


def defaults(database: str, **extra: str) -> dict[str, str]:
    """The gateway's environment as a user's: no tool or answer settings
    but `extra`."""
    settings: dict[str, Any] = {"NEOTOMA_TOOLS": None, "NEOTOMA_VERBOSE_ANSWERS": None, **extra}
    return gateway_env(DATABASE_URL=database, **settings)


def model_view(tools: list[Any]) -> bytes:
    """What a model reads of the tools: name, description, inputSchema."""
    view = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools]
    return json.dumps(view, separators=(",", ":"), ensure_ascii=False).encode()


def catalog_actions() -> list[dict[str, Any]]:
    with psycopg.connect(admin_dsn("neotoma_e2e")) as conn:
        return conn.execute("SELECT neotoma.action_catalog()").fetchone()[0]["actions"]


async def test_the_default_profile_stays_within_its_budgets(database: str) -> None:
    async with stdio_client("--user-id", new_user(), env=defaults(database)) as client:
        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        size = len(model_view(tools))
        print(f"default profile: {len(tools)} tools, {size} bytes of name + description + inputSchema")
        assert len(tools) <= TOOL_BUDGET
        assert size <= BYTES_BUDGET
        # What an agent needs to store, find, read with provenance, correct,
        # relate and follow time.
        assert {"store", "retrieve_entities", "retrieve_entity_snapshot", "retrieve_field_provenance",
                "list_observations", "correct", "create_relationship", "list_relationships",
                "list_timeline_events", "list_entity_types", "merge_entities"} <= names
        # Each described in a few words, and no schema carries the user.
        for t in tools:
            assert t.description and len(t.description) <= 1000, t.name
            assert "user_id" not in t.input_schema.get("properties", {}), t.name
        assert client.instructions
        instructions = client.instructions
        assert len(instructions.encode()) <= 2048
        assert "lifecycle" in instructions and "--tools" in instructions

        # Tools of other groups are not listed, yet still callable.
        assert "delete_entity" not in names and "get_version" not in names
        assert ok(await client.call_tool("get_version", {}))["server_version"]


async def test_groups_are_listed_by_name_and_all_lists_every_action_once(database: str) -> None:
    catalog = catalog_actions()
    groups: dict[str, set[str]] = {}
    for a in catalog:
        # Tools of Neotoma's own set; the legacy names are callable, not listed.
        if a["tool_set"] == "neotoma" and a["tool"] and not a["legacy"]:
            groups.setdefault(a["tool_group"], set()).add(a["name"])
    assert {"core", "lifecycle", "review", "workspaces", "bulk", "subgraphs", "schema", "connectors", "admin"} <= set(groups)

    async with stdio_client("--user-id", new_user(), env=defaults(database)) as client:
        default = {t.name for t in (await client.list_tools()).tools}
    assert default == groups["core"]

    for group, members in groups.items():
        if group == "core":
            continue
        env = defaults(database, NEOTOMA_TOOLS=group)
        async with stdio_client("--user-id", new_user(), env=env) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
        # A group comes with the core, which an agent always needs.
        assert set(listed) == members | groups["core"], group
        assert len(listed) == len(set(listed))

    async with stdio_client("--user-id", new_user(), env=defaults(database, NEOTOMA_TOOLS="all")) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
    assert len(listed) == len(set(listed))
    assert set(listed) == set().union(*groups.values())


async def test_lean_answers_and_verbose(database: str) -> None:
    async with stdio_client("--user-id", new_user(), env=defaults(database)) as client:
        stored = ok(await client.call_tool("store", {"entities": [
            {"entity_type": "person", "name": "Ada Lovelace", "email": "ada@example.com"}]}))
        ada = stored["entities"][0]["entity_id"]

        lean = ok(await client.call_tool("retrieve_entities", {"entity_type": "person"}))
        whole = ok(await client.call_tool("retrieve_entities", {"entity_type": "person", "verbose": True}))
        assert len(json.dumps(lean)) < len(json.dumps(whole))
        for bookkeeping in ("excluded_merged", "workspace_context"):
            assert bookkeeping not in lean
        assert "excluded_merged" in whole

        person = lean["entities"][0]
        # A person with a name and an e-mail is called by the name.
        assert person["canonical_name"] == "Ada Lovelace"
        assert person["id"] == ada and person["snapshot"]["email"] == "ada@example.com"
        # Nothing null or empty anywhere in a lean answer.
        def walk(value: Any, path: str) -> None:
            if isinstance(value, dict):
                for k, v in value.items():
                    assert v is not None and v != [] and v != {}, f"{path}.{k}"
                    walk(v, f"{path}.{k}")
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    walk(v, f"{path}[{i}]")
        walk(lean, "retrieve_entities")
        walk(ok(await client.call_tool("retrieve_entity_snapshot", {"entity_id": ada})), "retrieve_entity_snapshot")

    # The operator's switch gives every answer whole.
    async with stdio_client("--user-id", new_user(), env=defaults(database, NEOTOMA_VERBOSE_ANSWERS="true")) as client:
        whole = ok(await client.call_tool("retrieve_entities", {"entity_type": "person"}))
        assert "excluded_merged" in whole


async def test_list_entity_types_is_a_compact_catalogue(database: str) -> None:
    async with stdio_client("--user-id", new_user(), env=defaults(database)) as client:
        result = await client.call_tool("list_entity_types", {})
        text = result.content[0].text
        print(f"list_entity_types: {len(text.encode())} bytes")
        assert len(text.encode()) <= 4096
        compact = json.loads(text)
        assert any(t["entity_type"] == "person" for t in compact["entity_types"])

        one = ok(await client.call_tool("list_entity_types", {"entity_type": "invoice"}))
        assert [t["entity_type"] for t in one["entity_types"]] == ["invoice"]
        fields = one["entity_types"][0]["field_summary"]
        assert "merge_policy" in fields["invoice_number"]
        detail = await client.call_tool("list_entity_types", {"detail": True})
        assert len(detail.content[0].text) > 4 * len(text)


SEARCH_CORPUS = [
    {"entity_type": "person", "name": "Ada Lovelace", "notes": "Wrote the first program"},
    {"entity_type": "task", "title": "Call Ada about the engine", "status": "open"},
    {"entity_type": "note", "title": "Baxter", "content": "We adopted Baxter, a beagle puppy, from the shelter."},
    {"entity_type": "note", "title": "Holiday", "content": "We chose the beach this summer."},
    {"entity_type": "note", "title": "Hiking", "content": "The mountains in autumn."},
    {"entity_type": "note", "title": "Report", "content": "The report is ready. Der Bericht ist fertig. Le rapport est prêt."},
    {"entity_type": "note", "title": "Dog", "content": "Rex the dog; der Hund Bello; le chat Minou."},
    {"entity_type": "note", "title": "会议", "content": "我们明天在北京开会讨论预算。"},
    {"entity_type": "note", "title": "日本", "content": "来週は東京で新しいプロジェクトを始めます。"},
    {"entity_type": "note", "title": "ไทย", "content": "พรุ่งนี้เราจะไปเชียงใหม่เพื่อประชุมลูกค้า"},
]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
async def test_search_reads_a_question(database: str, mode: str) -> None:
    async with stdio_client("--user-id", new_user(), env=defaults(database)) as client:
        ok(await client.call_tool("store", {"entities": SEARCH_CORPUS}))

        async def found(query: str, limit: int = 10) -> list[str]:
            answer = ok(await client.call_tool("retrieve_entities", {"search": query, "search_mode": mode, "limit": limit}))
            return [e["snapshot"].get("name") or e["snapshot"].get("title") for e in answer["entities"]]

        # Partial overlap: each matches one word of two, both are found.
        assert set(await found("engine program", 2)) == {"Ada Lovelace", "Call Ada about the engine"}
        # A natural question; "or" is a word, not an operator.
        assert (await found("When did I adopt Baxter?"))[0] == "Baxter"
        assert set((await found("beach or mountains?"))[:2]) == {"Holiday", "Hiking"}
        # Stop words in English, German and French match nothing.
        for question in ("Where is the dog?", "Wo ist der Hund?", "Où est le chat ?"):
            assert (await found(question))[0] == "Dog", question
        if mode == "lexical":
            for question in ("Where is the dog?", "Wo ist der Hund?", "Où est le chat ?"):
                assert await found(question) == ["Dog"], question
        # A Chinese, Japanese and Thai word inside a sentence.
        assert (await found("北京"))[0] == "会议"
        assert (await found("東京"))[0] == "日本"
        assert (await found("เชียงใหม่"))[0] == "ไทย"
        # The exact name first.
        assert (await found("Ada Lovelace"))[0] == "Ada Lovelace"
