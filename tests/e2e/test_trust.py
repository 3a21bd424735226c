"""A hostile client over HTTP: server files, shared schemas, tokens (scope,
revocation, expiry, brute force), sessions, rate limits, request sizes."""

from __future__ import annotations

import base64
import json
import os
import time
import uuid
from pathlib import Path

import httpx2 as httpx
import pytest
from conftest import (
    Client,
    authed_client,
    create_token,
    error,
    new_user,
    ok,
    stdio_client,
    token_cli,
)

pytestmark = pytest.mark.anyio

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# The earlier protocol generation, which has sessions.
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
NOTE = {"entities": [{"entity_type": "note", "title": "t", "content": "x"}]}


def scratch(tmp_path: Path) -> tuple[Path, Path]:
    """A root the operator allows, with a file, and a secret next to it."""
    root = tmp_path / "allowed"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "ok.txt").write_text("hello from an allowed file")
    secret = tmp_path / "secret.txt"
    secret.write_text("the gateway's secret")
    return root, secret


async def test_http_callers_read_no_server_files_by_default(start_gateway, tmp_path: Path) -> None:
    root, secret = scratch(tmp_path)
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        for path in ["/etc/passwd", "/proc/self/environ", str(secret), str(root / "sub" / "ok.txt")]:
            for tool in ["store", "upload_file", "ingest"]:
                e = error(await c.call_tool(tool, {"file_path": path}))
                assert e["code"] == "FORBIDDEN", (tool, path, e)
                assert "--file-root" in e["message"]
        assert ok(await c.call_tool("retrieve_entities", {}))["total"] == 0


async def test_file_roots_bound_http_callers(start_gateway, tmp_path: Path) -> None:
    root, secret = scratch(tmp_path)
    (root / "escape").symlink_to(secret)
    gw = start_gateway("--user-id", new_user(), "--file-root", str(root))
    async with Client(gw.url) as c:
        stored = ok(await c.call_tool("store", {"file_path": str(root / "sub" / "ok.txt")}))
        assert stored["file_size"] == len("hello from an allowed file")
        outside = [
            str(secret),
            str(root / ".." / "secret.txt"),
            str(root / "sub" / ".." / ".." / "secret.txt"),
            str(root / "escape"),
            "/etc/passwd",
            "/proc/self/environ",
            f"/proc/self/root{secret}",
            str(tmp_path / "missing.txt"),
        ]
        for path in outside:
            e = error(await c.call_tool("store", {"file_path": path}))
            assert e["code"] == "FORBIDDEN", (path, e)
        # Inside the root, a missing file is reported as missing.
        assert error(await c.call_tool("store", {"file_path": str(root / "nope.txt")}))["code"] == "FILE_NOT_FOUND"
        # Nothing of the secret was stored.
        sources = ok(await c.call_tool("retrieve_entities", {}))
        assert all("secret" not in str(e) for e in sources["entities"])


async def test_file_roots_from_the_environment(start_gateway, tmp_path: Path) -> None:
    root, secret = scratch(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("b")
    gw = start_gateway("--user-id", new_user(), NEOTOMA_FILE_ROOTS=f"{root}:{other}")
    async with Client(gw.url) as c:
        ok(await c.call_tool("store", {"file_path": str(root / "sub" / "ok.txt")}))
        ok(await c.call_tool("store", {"file_path": str(other / "b.txt")}))
        assert error(await c.call_tool("store", {"file_path": str(secret)}))["code"] == "FORBIDDEN"


async def test_stdio_reads_local_files_unless_bounded(database: str, tmp_path: Path) -> None:
    from conftest import gateway_env

    root, secret = scratch(tmp_path)
    env = gateway_env(DATABASE_URL=database)
    async with stdio_client("--user-id", new_user(), env=env) as c:
        ok(await c.call_tool("store", {"file_path": str(secret)}))
    async with stdio_client("--user-id", new_user(), "--file-root", str(root), env=env) as c:
        assert error(await c.call_tool("store", {"file_path": str(secret)}))["code"] == "FORBIDDEN"
        ok(await c.call_tool("store", {"file_path": str(root / "sub" / "ok.txt")}))


def probe_schema(entity_type: str, version: str, strategy: str) -> dict:
    return {
        "entity_type": entity_type, "schema_version": version, "activate": True,
        "schema_definition": {"fields": {"name": {"type": "string"}, "code": {"type": "string"}},
                              "identity_fields": ["code"]},
        "reducer_config": {"merge_policies": {"name": {"strategy": strategy}}},
    }  # fmt: skip


async def test_only_operators_change_the_shared_schemas(start_gateway, admin_db) -> None:
    alice, bob, op = new_user(), new_user(), new_user()
    probe = f"probe_{uuid.uuid4().hex[:8]}"
    gw = start_gateway(auth=True)
    ta, tb = create_token(alice), create_token(bob)
    to = token_cli("create", "--user", op, "--scope", "operator").stdout.strip()
    async with authed_client(gw.url, ta) as a, authed_client(gw.url, tb) as b, authed_client(gw.url, to) as o:
        # A user cannot touch the global schemas everyone relies on.
        for tool, args in [
            ("register_schema", {**probe_schema("person", "77.0", "last_write")}),
            ("register_schema", probe_schema(probe, "1.0", "last_write")),
            ("update_schema_incremental", {"entity_type": "person",
                                           "fields_to_add": [{"field_name": "nickname", "field_type": "string"}]}),
        ]:  # fmt: skip
            e = error(await a.call_tool(tool, args))
            assert e["code"] == "FORBIDDEN" and e["details"]["field"] == "user_specific", e
        # An operator token can: a new global type, then a new merge policy.
        assert ok(await o.call_tool("register_schema", probe_schema(probe, "1.0", "last_write")))["scope"] == "global"
        ok(await b.call_tool("store", {"entities": [{"entity_type": probe, "code": "c1", "name": "first"}],
                                       "source_priority": 900}))  # fmt: skip
        ok(await b.call_tool("store", {"entities": [{"entity_type": probe, "code": "c1", "name": "second"}],
                                       "source_priority": 10}))  # fmt: skip
        # Alice's own variant changes nothing for Bob.
        assert ok(await a.call_tool("register_schema", {**probe_schema(probe, "1.1", "highest_priority"),
                                                        "user_specific": True}))["scope"] == "user"  # fmt: skip
        listed = ok(await b.call_tool("retrieve_entities", {"entity_type": probe}))["entities"]
        assert listed[0]["snapshot"]["name"] == "second"
        changed = ok(await o.call_tool("register_schema", probe_schema(probe, "2.0", "highest_priority")))
        assert changed["scope"] == "global" and changed["entities_recomputed"] >= 1
        listed = ok(await b.call_tool("retrieve_entities", {"entity_type": probe}))["entities"]
        assert listed[0]["snapshot"]["name"] == "first"
    assert admin_db.execute("SELECT neotoma.verify()->>'ok'").fetchone()[0] == "true"


def test_revocation_takes_effect_at_once(start_gateway) -> None:
    gw = start_gateway(auth=True)
    user = new_user()
    token = create_token(user)
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    assert httpx.post(gw.url, json=INIT, headers=auth).status_code == 200
    # The gateway caches a known token: revocation must reach it anyway.
    assert httpx.post(gw.url, json=INIT, headers=auth).status_code == 200
    listed = json.loads(token_cli("list").stdout)
    token_id = next(t["id"] for t in listed if t["user_id"] == user)
    token_cli("revoke", token_id)
    refused = httpx.post(gw.url, json=INIT, headers=auth)
    assert refused.status_code == 401, refused.text


def test_tokens_expire_and_the_scheme_is_case_insensitive(start_gateway) -> None:
    gw = start_gateway(auth=True)
    token = token_cli("create", "--user", new_user(), "--expires-in", "2s").stdout.strip()
    for scheme in ["Bearer", "bearer", "BEARER"]:
        r = httpx.post(gw.url, json=INIT, headers={**HEADERS, "Authorization": f"{scheme} {token}"})
        assert r.status_code == 200, (scheme, r.text)
    time.sleep(2.5)
    assert httpx.post(gw.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {token}"}).status_code == 401
    with pytest.raises(Exception):
        token_cli("create", "--user", new_user(), "--expires-in", "soon")


def test_failed_authentications_are_limited_per_address(start_gateway) -> None:
    gw = start_gateway(auth=True)
    good = create_token(new_user())
    statuses = [
        httpx.post(gw.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer ntm_{uuid.uuid4().hex}"}).status_code
        for _ in range(32)
    ]
    assert statuses[:30] == [401] * 30
    assert statuses[30:] == [429, 429]
    limited = httpx.post(gw.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {good}"})
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1


def test_sessions_belong_to_their_user(start_gateway) -> None:
    gw = start_gateway(auth=True)
    ta, tb = create_token(new_user()), create_token(new_user())
    a = {**HEADERS, "Authorization": f"Bearer {ta}"}
    b = {**HEADERS, "Authorization": f"Bearer {tb}"}
    opened = httpx.post(gw.url, json=INIT, headers=a)
    session = opened.headers["mcp-session-id"]
    notify = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx.post(gw.url, json=notify, headers={**a, "mcp-session-id": session}).status_code == 202
    # Another user can neither use nor delete it: it does not exist for them.
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert httpx.post(gw.url, json=call, headers={**b, "mcp-session-id": session}).status_code == 404
    assert httpx.delete(gw.url, headers={**b, "mcp-session-id": session}).status_code == 404
    mine = httpx.post(gw.url, json=call, headers={**a, "mcp-session-id": session})
    assert mine.status_code == 200 and "store" in mine.text
    # Its owner ends it: 200, as the MCP SDKs' servers answer (their clients
    # report anything but 200 or 204 as a failed termination); then it is gone.
    assert httpx.delete(gw.url, headers={**a, "mcp-session-id": session}).status_code == 200
    assert httpx.post(gw.url, json=call, headers={**a, "mcp-session-id": session}).status_code == 404


def test_sessions_per_user_are_bounded(start_gateway) -> None:
    gw = start_gateway("--sessions-per-user", "2", auth=True)
    token = create_token(new_user())
    auth = {**HEADERS, "Authorization": f"Bearer {token}"}
    sessions = [httpx.post(gw.url, json=INIT, headers=auth).headers["mcp-session-id"] for _ in range(3)]
    call = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    # The least recently used session was closed to make room for the third.
    assert httpx.post(gw.url, json=call, headers={**auth, "mcp-session-id": sessions[0]}).status_code == 404
    for s in sessions[1:]:
        assert httpx.post(gw.url, json=call, headers={**auth, "mcp-session-id": s}).status_code == 202


async def test_rate_limit_admits_exactly_the_limit(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user(), "--rate-limit", "store=5")
    async with Client(gw.url) as c:
        results = [await c.call_tool("store", {"entities": [{"entity_type": "note", "title": f"n{i}"}]}) for i in range(8)]
    assert [r.is_error for r in results] == [False] * 5 + [True] * 3
    e = error(results[5])
    assert e["code"] == "RATE_LIMIT_EXCEEDED" and e["details"]["retry_after_seconds"] >= 1


def test_metrics_are_behind_the_host_guard(http_gateway) -> None:
    assert httpx.get(f"{http_gateway.base}/metrics").status_code == 200
    evil = httpx.get(f"{http_gateway.base}/metrics", headers={"Host": "evil.example"})
    assert evil.status_code == 403
    # Health endpoints stay open (load balancers call them by address).
    assert httpx.get(f"{http_gateway.base}/healthz", headers={"Host": "evil.example"}).status_code == 200


def test_bodies_larger_than_any_file_are_refused_unread(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user(), "--max-file-mb", "1")
    content = base64.b64encode(os.urandom(2 * 1024 * 1024)).decode()
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "store", "arguments": {"file_content": content}}}  # fmt: skip
    r = httpx.post(gw.url, json=call, headers={**HEADERS, "mcp-protocol-version": "2025-06-18"})
    assert r.status_code == 413, r.text[:200]
    assert r.json()["error"]["code"] == "FILE_TOO_LARGE"


async def test_every_action_accepts_user_id(start_gateway) -> None:
    user = new_user()
    gw = start_gateway("--user-id", user)
    async with Client(gw.url) as c:
        assert ok(await c.call_tool("get_version", {"user_id": user}))["extension_version"]
        assert ok(await c.call_tool("get_current_time", {"user_id": user}))["timezone"] == "UTC"
        assert error(await c.call_tool("get_version", {"user_id": new_user()}))["code"] == "FORBIDDEN"
