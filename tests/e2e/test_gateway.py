"""The gateway as an MCP server for agents: authentication, user isolation
through tokens, rate limits, resources, metrics, progress, timeouts, logs."""

from __future__ import annotations

import json
import subprocess

import httpx2 as httpx
import pytest
import psycopg
from conftest import (
    DATABASE,
    THROUGH_ROUTER,
    Client,
    admin_dsn,
    authed_client,
    create_token,
    error,
    gateway_env,
    mcp_bin,
    new_user,
    ok,
    token_cli,
)
from anyio import sleep as anyio_sleep
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio

EXPECTED_TOOLS = {
    "get_version", "get_current_time", "store", "retrieve_entity_snapshot", "list_observations",
    "retrieve_field_provenance", "retrieve_entities", "retrieve_entity_by_identifier", "list_entity_types",
    "correct", "create_relationship", "list_relationships", "get_relationship_snapshot",
    "retrieve_related_entities", "retrieve_graph_neighborhood", "list_timeline_events", "merge_entities",
    "delete_entity", "restore_entity", "delete_relationship", "restore_relationship", "erase",
    "list_recent_changes", "list_potential_duplicates", "split_entity", "search_subgraph", "get_subgraph_by_ids",
    "analyze_schema_candidates", "get_schema_recommendations", "update_schema_incremental", "register_schema",
    "reinterpret", "retrieve_file_url", "get_product_analytics", "get_technical_metrics",
    "plaid_create_link_token", "plaid_exchange_public_token", "plaid_sync", "plaid_list_items",
    "list_provider_catalog", "connect_provider", "list_connectors", "sync_provider_imports",
    "bulk", "create_relationships", "list_contradictions", "annotate", "contest", "reclassify",
    "retrieve_field_history", "list_workspaces", "set_context", "get_context", "clear_context",
}  # fmt: skip

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_every_action_is_a_tool_with_annotations(http_gateway) -> None:
    async with Client(http_gateway.url) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == EXPECTED_TOOLS
    for t in tools.values():
        assert t.description and len(t.description) > 40
        assert t.input_schema["type"] == "object"
        assert t.annotations.read_only_hint is not None
    assert tools["merge_entities"].annotations.destructive_hint is True
    assert tools["delete_entity"].annotations.destructive_hint is True
    assert tools["restore_entity"].annotations.destructive_hint is False
    assert tools["store"].annotations.read_only_hint is False
    assert tools["retrieve_entities"].annotations.idempotent_hint is True


def test_http_needs_a_valid_token(start_gateway) -> None:
    gw = start_gateway(auth=True)
    missing = httpx.post(gw.url, json=INIT, headers=HEADERS)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    bad = httpx.post(gw.url, json=INIT, headers={**HEADERS, "Authorization": "Bearer ntm_nope"})
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    # Health stays open.
    assert httpx.get(f"{gw.base}/healthz").status_code == 200


async def test_two_tokens_two_users(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    ta, tb = create_token(alice), create_token(bob)
    async with authed_client(gw.url, ta) as a, authed_client(gw.url, tb) as b:
        stored = ok(await a.call_tool("store", {"entities": [{"entity_type": "note", "title": "secret", "content": "x"}]}))
        note = stored["entities"][0]["entity_id"]
        assert ok(await a.call_tool("retrieve_entity_snapshot", {"entity_id": note}))["snapshot"]["title"] == "secret"
        assert error(await b.call_tool("retrieve_entity_snapshot", {"entity_id": note}))["code"] == "ENTITY_NOT_FOUND"
        assert ok(await b.call_tool("retrieve_entities", {}))["total"] == 0
        # A user_id argument naming someone else is refused, not obeyed.
        assert error(await b.call_tool("retrieve_entities", {"user_id": alice}))["code"] == "FORBIDDEN"
        assert ok(await a.call_tool("retrieve_entities", {"user_id": alice}))["total"] == 1
    # Revoked: a new gateway (no cached lookup) refuses it.
    listed = json.loads(token_cli("list").stdout)
    bob_token = next(t["id"] for t in listed if t["user_id"] == bob)
    token_cli("revoke", bob_token)
    gw2 = start_gateway(auth=True)
    r = httpx.post(gw2.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {tb}"})
    assert r.status_code == 401
    async with authed_client(gw2.url, ta) as a:
        ok(await a.call_tool("get_version", {}))


async def test_limited_tokens(start_gateway) -> None:
    """A read-only token reads and cannot write through any tool (bulk, the
    memory server's tools); a token made for some tools calls only those;
    `token list` shows the limits and when each token was last used; each
    observation names the agent (token) that wrote it."""
    user = new_user()
    gw = start_gateway("--tools", "memory,neotoma", auth=True)
    writer = token_cli("create", "--user", user, "--name", "writer agent").stdout.strip()
    reader = token_cli("create", "--user", user, "--read-only", "--name", "reader agent").stdout.strip()
    memory = token_cli("create", "--user", user, "--tools", "memory").stdout.strip()
    with pytest.raises(subprocess.CalledProcessError) as bad:
        token_cli("create", "--user", user, "--tools", "nonsense")
    assert "unknown tool set or group" in bad.value.stderr
    async with authed_client(gw.url, writer) as w:
        stored = ok(await w.call_tool("store", {"entities": [{"entity_type": "note", "title": "shared plan", "content": "x"}]}))
        note = stored["entities"][0]["entity_id"]
        # Who said what: the observation names the agent it came with.
        [seen] = ok(await w.call_tool("list_observations", {"entity_id": note}))["observations"]
        # (Through a router the partitions keep no tokens: the id, not the name.)
        assert seen["written_with"]["name"] == (None if THROUGH_ROUTER else "writer agent")
        provenance = ok(await w.call_tool("retrieve_field_provenance", {"entity_id": note, "field": "title"}))
        assert provenance["source_observation"]["written_with"] == seen["written_with"]
    async with authed_client(gw.url, writer) as w:
        everything = {t.name for t in (await w.list_tools()).tools}
    async with authed_client(gw.url, reader) as r:
        # Its session lists only what it may call.
        listed = {t.name for t in (await r.list_tools()).tools}
        assert {"retrieve_entities", "read_graph", "list_observations"} <= listed < everything
        assert not listed & {"store", "correct", "create_entities", "delete_entity"}
        assert ok(await r.call_tool("retrieve_entities", {"search": "shared plan"}))["total"] == 1
        for tool, args in [
            ("store", {"entities": [{"entity_type": "note", "title": "no"}]}),
            ("bulk", {"operations": [{"action": "store", "args": {"entities": [{"entity_type": "note", "title": "no"}]}}]}),
        ]:
            refused = error(await r.call_tool(tool, args))
            assert (refused["code"], refused["details"]["limit"]) == ("FORBIDDEN", "read_only"), tool
        # The memory server's tools answer its way: the refusal as text.
        created = await r.call_tool("create_entities", {"entities": [{"name": "No", "entityType": "person", "observations": []}]})
        assert created.is_error and "read-only" in created.content[0].text
        assert not (await r.call_tool("read_graph", {})).is_error
    async with authed_client(gw.url, memory) as m:
        listed = {t.name for t in (await m.list_tools()).tools}
        assert "create_entities" in listed and "retrieve_entities" not in listed and "store" not in listed
        graph = await m.call_tool("read_graph", {})
        assert not graph.is_error and "shared plan" in graph.content[0].text
        refused = error(await m.call_tool("retrieve_entities", {}))
        assert (refused["code"], refused["details"]["limit"]) == ("FORBIDDEN", "tools")
    async with authed_client(gw.url, writer) as w:
        # Nothing the refused calls asked for was written.
        assert ok(await w.call_tool("retrieve_entities", {}))["total"] == 1
    # The use is noted beside the call (at most once a minute per token).
    for _ in range(100):
        listed = {t["name"]: t for t in json.loads(token_cli("list").stdout) if t["user_id"] == user}
        if listed["reader agent"]["last_used_at"] is not None:
            break
        await anyio_sleep(0.05)
    assert listed["reader agent"]["read_only"] is True and listed["reader agent"]["last_used_at"] is not None
    assert next(t for t in listed.values() if t["tools"] == "memory")["read_only"] is False
    # Each refusal is in the owner's audit trail (noted beside the call,
    # once a minute per token, action and limit; on a router, the router's).
    if not THROUGH_ROUTER:
        with psycopg.connect(admin_dsn(DATABASE)) as conn:
            for _ in range(100):
                denied = conn.execute(
                    "SELECT target_id, reason, details->>'token_id' FROM neotoma.audit_trail "
                    "WHERE user_id = %s AND action = 'denied' ORDER BY target_id, reason", (user,)).fetchall()  # fmt: skip
                if len(denied) == 4:
                    break
                await anyio_sleep(0.05)
        assert [(a, r) for a, r, _ in denied] == [
            ("bulk", "read_only"), ("memory_create_entities", "read_only"),
            ("retrieve_entities", "tools"), ("store", "read_only"),
        ], denied  # fmt: skip
        assert all(t is not None for _, _, t in denied)


async def test_workspace_limited_tokens(start_gateway) -> None:
    """A token made for some workspaces finds, lists and changes only what
    lies there: not by id, search, resource URI, change feed or
    subscription; another workspace named is FORBIDDEN; actions across
    every workspace are not listed; `token list` shows the limit."""
    user = new_user()
    gw = start_gateway("--tools", "memory,all", auth=True)
    writer = token_cli("create", "--user", user).stdout.strip()
    team = token_cli("create", "--user", user, "--workspaces", "team", "--name", "team agent").stdout.strip()
    with pytest.raises(subprocess.CalledProcessError) as bad:
        token_cli("create", "--user", user, "--workspaces", "Not A Name")
    assert "not a workspace name" in bad.value.stderr
    async with authed_client(gw.url, writer) as w:
        everything = {t.name for t in (await w.list_tools()).tools}
        ours = ok(await w.call_tool("store", {"workspace": "team", "entities": [{"entity_type": "note", "title": "team plan"}]}))
        theirs = ok(await w.call_tool("store", {"workspace": "secret", "entities": [{"entity_type": "note", "title": "secret plan"}]}))
        ok(await w.call_tool("set_context", {"workspace": "secret", "level": "user"}))
    ours, theirs = ours["entities"][0]["entity_id"], theirs["entities"][0]["entity_id"]
    async with authed_client(gw.url, team, mode="legacy") as t:
        listed = {tool.name for tool in (await t.list_tools()).tools}
        assert {"store", "retrieve_entities", "read_graph"} <= listed < everything
        assert not listed & {"register_schema", "analyze_schema_candidates", "get_product_analytics"}
        found = ok(await t.call_tool("retrieve_entities", {"search": "plan", "workspace": "*"}))
        assert [e["id"] for e in found["entities"]] == [ours]
        assert found["workspace_context"]["workspaces"] == ["team"]
        assert error(await t.call_tool("retrieve_entity_snapshot", {"entity_id": theirs}))["code"] == "ENTITY_NOT_FOUND"
        refused = error(await t.call_tool("retrieve_entities", {"workspace": "secret"}))
        assert (refused["code"], refused["details"]["limit"]) == ("FORBIDDEN", "workspaces")
        with pytest.raises(MCPError):
            await t.read_resource(f"neotoma://entity/{theirs}")
        changes = ok(await t.call_tool("list_recent_changes", {"workspace": "*"}))["changes"]
        assert {c.get("entity_id") for c in changes if c["kind"] == "entity"} == {ours}
        # Subscriptions: one entity it can read, never another's or a collection.
        await t.subscribe_resource(f"neotoma://entity/{ours}")
        for uri in [f"neotoma://entity/{theirs}", "neotoma://entities/note"]:
            with pytest.raises(MCPError):
                await t.subscribe_resource(uri)
        # The memory server's tools work in its workspace.
        graph = await t.call_tool("read_graph", {})
        assert not graph.is_error and "team plan" in graph.content[0].text and "secret plan" not in graph.content[0].text
        wrote = ok(await t.call_tool("store", {"entities": [{"entity_type": "note", "title": "agent note"}]}))
        assert wrote["workspace_context"]["workspaces"] == ["team"]
    [listed] = [x for x in json.loads(token_cli("list").stdout) if x["user_id"] == user and x["name"] == "team agent"]
    assert listed["workspaces"] == ["team"]


async def test_rate_limits_per_user(start_gateway) -> None:
    gw = start_gateway("--rate-limit", "store=3", "--user-id", new_user())
    other = start_gateway("--rate-limit", "store=3", "--user-id", new_user())
    async with Client(gw.url) as c, Client(other.url) as o:
        for i in range(3):
            ok(await c.call_tool("store", {"entities": [{"entity_type": "note", "content": f"n{i}"}]}))
        limited = error(await c.call_tool("store", {"entities": [{"entity_type": "note", "content": "n4"}]}))
        assert limited["code"] == "RATE_LIMIT_EXCEEDED"
        assert limited["details"]["retry_after_seconds"] >= 1
        # Other actions are not limited; another user is not affected.
        ok(await c.call_tool("retrieve_entities", {}))
        ok(await o.call_tool("store", {"entities": [{"entity_type": "note", "content": "o1"}]}))
        # A bulk's stores count as stores: the other user's two left, not a bulk of three.
        three = {"operations": [{"action": "store", "args": {"entities": [{"entity_type": "note", "content": f"b{i}"}]}}
                                for i in range(3)]}
        assert error(await o.call_tool("bulk", three))["code"] == "RATE_LIMIT_EXCEEDED"


async def test_resources_from_data(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        stored = ok(
            await c.call_tool(
                "store",
                {
                    "entities": [
                        {"entity_type": "invoice", "invoice_number": "R-1", "vendor_name": "V", "invoice_date": "2024-03-05"},
                        {"entity_type": "company", "name": "V"},
                    ]
                },
            )
        )
        inv, company = (e["entity_id"] for e in stored["entities"])
        ok(await c.call_tool("create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": inv, "target_entity_id": company}))

        templates = {t.uri_template for t in (await c.list_resource_templates()).resource_templates}
        assert "neotoma://entity/{entity_id}/observations" in templates and len(templates) == 11
        uris = {r.uri for r in (await c.list_resources()).resources}
        assert {"neotoma://sources", "neotoma://entities/invoice", "neotoma://entities/company",
                "neotoma://timeline/2024", "neotoma://timeline/2024-03"} <= uris  # fmt: skip

        async def read(uri: str) -> dict:
            result = await c.read_resource(uri)
            assert result.contents[0].mime_type == "application/json"
            return json.loads(result.contents[0].text)

        coll = await read("neotoma://entities/invoice")
        assert coll["type"] == "entity_collection" and coll["total"] == 1 and coll["uri"] == "neotoma://entities/invoice"
        entity = await read(f"neotoma://entity/{inv}")
        assert entity["type"] == "entity" and entity["entity_id"] == inv and entity["observation_count"] == 1
        assert "invoice_number" in entity["provenance"]
        assert (await read(f"neotoma://entity/{inv}/observations"))["total"] == 1
        assert (await read(f"neotoma://entity/{inv}/relationships"))["relationships"][0]["target_entity_id"] == company
        year = await read("neotoma://timeline/2024")
        assert year["type"] == "timeline" and year["year"] == "2024" and year["total"] == 1
        assert (await read("neotoma://timeline/2024-03"))["month"] == "03"
        assert (await read("neotoma://timeline/2024-04"))["total"] == 0
        source = await read(f"neotoma://source/{stored['source_id']}")
        assert source["type"] == "source" and len(source["entities"]) == 2
        sources = await read("neotoma://sources")
        assert sorted(x["source_type"] for x in sources["sources"]) == ["relationship", "structured"]

        for missing in ("neotoma://entity/ent_00000000000000000000000000000000", "neotoma://nothing/here",
                        "neotoma://source/00000000-0000-0000-0000-000000000000"):  # fmt: skip
            with pytest.raises(MCPError) as e:
                await c.read_resource(missing)
            # -32002 before protocol 2026-07-28, -32602 from it on (SEP-2164).
            assert e.value.error.code in (-32002, -32602), missing
            assert e.value.error.data["error"]["code"].endswith("NOT_FOUND"), missing


async def test_metrics_count_calls_and_errors(http_gateway) -> None:
    async with Client(http_gateway.url) as c:
        ok(await c.call_tool("get_version", {}))
        error(await c.call_tool("get_version", {"bad": 1}))
    text = httpx.get(f"{http_gateway.base}/metrics").text
    assert 'neotoma_mcp_tool_calls_total{outcome="ok",tool="get_version"} 1' in text
    assert 'neotoma_mcp_tool_errors_total{code="VALIDATION_ERROR",tool="get_version"} 1' in text
    assert 'neotoma_mcp_tool_duration_seconds_count{tool="get_version"} 2' in text
    assert "neotoma_mcp_db_pool_connections" in text


async def test_progress_notifications_when_asked(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    batch = [{"entity_type": "note", "content": f"bulk {i}", "title": f"t{i}"} for i in range(1000)]
    async with Client(gw.url) as c:
        ok(await c.call_tool("store", {"entities": batch}, progress_callback=on_progress))
    assert seen, "no progress notification"
    assert seen[-1][0] == seen[-1][1], "the last notification completes the work"
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)


async def test_slow_actions_time_out_with_retry_advice(start_gateway) -> None:
    gw = start_gateway("--statement-timeout-ms", "50", "--user-id", new_user())
    batch = [{"entity_type": "note", "content": f"slow {i}", "title": f"s{i}"} for i in range(1000)]
    async with Client(gw.url) as c:
        e = error(await c.call_tool("store", {"entities": batch}))
        assert e["code"] == "DB_QUERY_FAILED"
        assert e["details"]["retryable"] is True
        ok(await c.call_tool("get_version", {}))


def test_the_statement_timeout_bounds_actions_not_the_gateways_own_reads(start_gateway) -> None:
    # Reading the action catalog alone takes longer than 1 ms: a gateway
    # whose start-up reads shared the actions' bound would not start, and its
    # readiness check would report the database unavailable.
    gw = start_gateway("--statement-timeout-ms", "1", "--user-id", new_user())
    ready = httpx.get(f"{gw.base}/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"


def test_json_logs_carry_the_trace_id(start_gateway) -> None:
    gw = start_gateway("--log-format", "json")
    import anyio

    async def go() -> str:
        async with Client(gw.url) as c:
            return error(await c.call_tool("nope", {}))["trace_id"]

    trace = anyio.run(go)
    lines = [json.loads(line) for line in gw.log_text().splitlines() if line.startswith("{")]
    hit = [line for line in lines if line.get("fields", {}).get("trace_id") == trace]
    assert hit and hit[0]["level"] == "WARN"


def test_help_documents_flags_and_environment() -> None:
    out = subprocess.run([mcp_bin(), "--help"], capture_output=True, text=True, env=gateway_env(), check=True).stdout
    for flag, env in [("--database-url", "DATABASE_URL"), ("--http", "NEOTOMA_HTTP"), ("--user-id", "NEOTOMA_USER_ID"),
                      ("--pool-size", "NEOTOMA_POOL_SIZE"), ("--rate-limit", "NEOTOMA_RATE_LIMITS"),
                      ("--no-auth", "NEOTOMA_NO_AUTH"), ("--data-dir", "NEOTOMA_DATA_DIR"),
                      ("--log-format", "NEOTOMA_LOG_FORMAT")]:  # fmt: skip
        assert flag in out and env in out, flag
    tokens = subprocess.run([mcp_bin(), "token", "--help"], capture_output=True, text=True, env=gateway_env(), check=True).stdout
    assert "create" in tokens and "revoke" in tokens


def test_an_extension_the_gateway_does_not_know_is_refused_at_start(database: str) -> None:
    """A database whose extension is of a newer minor or another major than
    the gateway: the gateway stops at start, saying which version it found
    and what to do, instead of serving it."""
    name = "neotoma_e2e_versions"
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(admin_dsn(name), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION neotoma")
            own = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'neotoma'").fetchone()[0]
            major, minor = (int(p) for p in own.split(".")[:2])
            dsn = database.replace(f"dbname={DATABASE}", f"dbname={name}")
            for fake, why in ((f"{major}.{minor + 1}.0", "newer than this gateway"),
                              (f"{major + 1}.0.0", "another major version")):
                conn.execute("UPDATE pg_extension SET extversion = %s WHERE extname = 'neotoma'", (fake,))
                run = subprocess.run([mcp_bin()], env=gateway_env(DATABASE_URL=dsn), capture_output=True,
                                     text=True, timeout=60, stdin=subprocess.DEVNULL)
                assert run.returncode != 0, run.stderr
                assert why in run.stderr and fake in run.stderr, run.stderr
    finally:
        with psycopg.connect(admin_dsn(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
