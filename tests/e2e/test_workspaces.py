"""Workspaces and context through MCP, over HTTP with tokens and over
stdio: one user's two tokens on two connections each keep their own
context (set_context on one leaves the other alone), a fresh connection
and a second gateway process see it, the user-level context applies to a
token without its own, every tool that takes `workspace` says where it
answered from, pinned resources read their workspace, the change feed
filters by workspace, revoking a token forgets its context, and another
user sees none of it."""

from __future__ import annotations

import pytest
from conftest import Client, authed_client, create_token, error, new_user, ok, stdio_client, token_cli
from mcp_support import gateway_env

pytestmark = pytest.mark.anyio

PERSON = {"entity_type": "person", "name": "Ada", "email": "ada@example.com"}


async def test_contexts_hold_per_token_across_connections_and_gateways(start_gateway, database: str, admin_db) -> None:
    alice, bob = new_user(), new_user()
    t1, t2 = create_token(alice), create_token(alice)
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, t1) as a1, authed_client(gw.url, t2) as a2:
        home = ok(await a1.call_tool("store", {"entities": [PERSON]}))
        assert home["workspace_context"] == {"workspaces": ["default"], "all": False, "from": "default"}
        ctx = ok(await a1.call_tool("set_context", {"workspace": "work"}))
        assert ctx["has_token"] and ctx["token"]["workspace"] == "work" and "user" not in ctx
        assert ctx["effective"] == {"workspace": "work", "from": "token_context"}
        # Stored without `workspace`: in the token's context, a new entity there.
        work = ok(await a1.call_tool("store", {"entities": [{**PERSON, "name": "Ada at work"}]}))
        assert work["workspace_context"]["from"] == "token_context"
        assert work["entities"][0]["entity_id"] != home["entities"][0]["entity_id"]
        # The other token of the same user is not in that context.
        assert ok(await a2.call_tool("get_context", {}))["effective"] == {"workspace": "default", "from": "default"}
        listed = ok(await a2.call_tool("retrieve_entities", {"entity_type": "person"}))
        assert [e["workspace"] for e in listed["entities"]] == ["default"]
        everywhere = ok(await a2.call_tool("retrieve_entities", {"entity_type": "person", "workspace": "*"}))
        assert everywhere["total"] == 2 and everywhere["workspace_context"]["all"] is True
    # A fresh connection with the first token, and a second gateway process.
    other_gw = start_gateway(auth=True)
    for url in (gw.url, other_gw.url):
        async with authed_client(url, t1) as again:
            got = ok(await again.call_tool("retrieve_entities", {"entity_type": "person"}))
            assert got["workspace_context"]["workspaces"] == ["work"]
            assert [e["snapshot"]["name"] for e in got["entities"]] == ["Ada at work"]

    # Over stdio (no token): the user's own context, which a token without
    # one follows; the token with one keeps it.
    async with stdio_client("--user-id", alice, env=gateway_env(DATABASE_URL=database)) as local:
        ctx = ok(await local.call_tool("set_context", {"workspace": "home"}))
        assert not ctx["has_token"] and ctx["user"]["workspace"] == "home"
        assert error(await local.call_tool("set_context", {"workspace": "x", "level": "token"}))["code"] == "VALIDATION_ERROR"
    async with authed_client(gw.url, t2) as a2, authed_client(gw.url, t1) as a1:
        assert ok(await a2.call_tool("get_context", {}))["effective"] == {"workspace": "home", "from": "user_context"}
        assert ok(await a1.call_tool("get_context", {}))["effective"] == {"workspace": "work", "from": "token_context"}
        spaces = ok(await a1.call_tool("list_workspaces", {}))
        assert [(w["name"], w["entities"], w["in_context"]) for w in spaces["workspaces"]] == [
            ("default", 1, False), ("home", 0, False), ("work", 1, True)]
        cleared = ok(await a1.call_tool("clear_context", {}))
        assert cleared["cleared"] and cleared["effective"] == {"workspace": "home", "from": "user_context"}
        ok(await a1.call_tool("set_context", {"workspace": "work"}))

    # Revoking a token forgets its context.
    token_id = admin_db.execute("SELECT token_id FROM neotoma.contexts WHERE user_id = %s AND token_id IS NOT NULL",
                                (alice,)).fetchone()[0]
    token_cli("revoke", str(token_id))
    assert admin_db.execute("SELECT count(*) FROM neotoma.contexts WHERE token_id = %s", (token_id,)).fetchone()[0] == 0

    # Bob: none of alice's workspaces, and her names are unknown to him.
    async with authed_client(gw.url, create_token(bob)) as b:
        assert [w["name"] for w in ok(await b.call_tool("list_workspaces", {}))["workspaces"]] == ["default"]
        refused = error(await b.call_tool("retrieve_entities", {"workspace": "work"}))
        assert refused["code"] == "WORKSPACE_NOT_FOUND"


async def test_every_tool_of_a_workspace_says_where_it_answered(start_gateway) -> None:
    user = new_user()
    gw = start_gateway("--user-id", user)
    async with Client(gw.url) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        scoped = {n for n, t in tools.items() if "workspace" in t.input_schema.get("properties", {})}
        scoped.discard("set_context")  # its workspace is what it sets
        # Reads and writes of stored memory take it; what is about the user or
        # the server does not.
        assert {"store", "retrieve_entities", "retrieve_entity_snapshot", "list_timeline_events", "correct",
                "create_relationship", "merge_entities", "bulk", "list_recent_changes", "search_subgraph"} <= scoped
        assert not scoped & {"get_version", "list_entity_types", "register_schema", "list_workspaces",
                             "get_product_analytics", "list_connectors"}
        for name in scoped:
            out = tools[name].output_schema
            # (Listed output schemas require nothing: answers are lean
            # unless asked; the catalog's require workspace_context.)
            if out:
                assert "workspace_context" in out["properties"], name

        stored = ok(await c.call_tool("store", {"workspace": "lab", "entities": [
            {"entity_type": "note", "title": "Centrifuge", "content": "calibrated", "created_date": "2026-02-03"}]}))
        note = stored["entities"][0]["entity_id"]
        for tool, args in [
            ("retrieve_entity_snapshot", {"entity_id": note, "workspace": "lab"}),
            ("list_observations", {"entity_id": note, "workspace": "lab"}),
            ("retrieve_entities", {"workspace": ["lab", "default"]}),
            ("retrieve_entities", {"search": "centrifuge", "workspace": "lab"}),
            ("list_timeline_events", {"workspace": "lab"}),
            ("search_subgraph", {"query": "centrifuge", "workspace": "lab"}),
            ("list_contradictions", {"workspace": "lab"}),
        ]:
            answer = ok(await c.call_tool(tool, args))
            assert answer["workspace_context"]["from"] == "argument", tool
            assert "lab" in answer["workspace_context"]["workspaces"], tool
        assert ok(await c.call_tool("retrieve_entities", {"search": "centrifuge"}))["total"] == 0
        assert ok(await c.call_tool("list_timeline_events", {"workspace": "lab"}))["total"] == 1
        assert ok(await c.call_tool("list_timeline_events", {}))["total"] == 0
        missing = error(await c.call_tool("retrieve_entity_snapshot", {"entity_id": note}))
        assert missing["code"] == "ENTITY_NOT_FOUND" and missing["details"]["workspace"] == "lab"

        # Resources: a pinned URI reads its workspace, an unpinned one the context's.
        pinned = await c.read_resource(f"neotoma://workspace/lab/entity/{note}")
        assert '"Centrifuge"' in pinned.contents[0].text and '"lab"' in pinned.contents[0].text
        listed = await c.list_resources()
        assert all(not str(r.uri).startswith("neotoma://workspace/") for r in listed.resources)
        ok(await c.call_tool("set_context", {"workspace": "lab"}))
        listed = await c.list_resources()
        assert "neotoma://workspace/lab/entities/note" in {str(r.uri) for r in listed.resources}
        unpinned = await c.read_resource(f"neotoma://entity/{note}")
        assert '"Centrifuge"' in unpinned.contents[0].text
        ok(await c.call_tool("clear_context", {}))

        # The change feed: committed changes of the selected workspaces only.
        changes = ok(await c.call_tool("list_recent_changes", {"workspace": "lab", "limit": 100}))["changes"]
        assert {ch["entity_id"] for ch in changes if ch["kind"] == "entity"} == {note}
        changes = ok(await c.call_tool("list_recent_changes", {"limit": 100}))["changes"]
        assert note not in {ch["entity_id"] for ch in changes}
