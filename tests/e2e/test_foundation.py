"""The foundation: the gateway serves the extension's catalog over stdio and
Streamable HTTP, errors carry the seed's envelope, and the embedded default
creates and reuses a private cluster."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import httpx2 as httpx
import psycopg
import pytest
from conftest import (
    DATABASE,
    VERSION,
    Client,
    admin_dsn,
    error,
    free_port,
    gateway_env,
    mcp_bin,
    ok,
    stdio_client,
)

pytestmark = pytest.mark.anyio


async def check_tools_and_calls(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"get_version", "get_current_time"} <= set(tools)
    v = tools["get_version"]
    assert v.annotations.read_only_hint is True
    assert v.annotations.destructive_hint is False
    assert v.input_schema["type"] == "object"
    assert v.output_schema["type"] == "object"

    version = ok(await client.call_tool("get_version", {}))
    assert version["extension_version"] == VERSION
    assert version["server_version"] == VERSION
    assert version["catalog_version"].startswith(VERSION + "+")
    assert version["postgres_version"].startswith("15")

    now = ok(await client.call_tool("get_current_time", {}))
    assert now["timezone"] == "UTC"
    assert now["now"].endswith("Z")
    assert isinstance(now["unix_ms"], int)


async def test_stdio_lists_and_calls_tools(database: str) -> None:
    async with stdio_client(env=gateway_env(DATABASE_URL=database)) as client:
        assert client.server_info.name == "neotoma-mcp"
        await check_tools_and_calls(client)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_http_lists_and_calls_tools(http_gateway, mode: str) -> None:
    async with Client(http_gateway.url, mode=mode) as client:
        await check_tools_and_calls(client)


async def test_bad_calls_get_the_error_envelope(http_gateway) -> None:
    async with Client(http_gateway.url) as client:
        unknown = error(await client.call_tool("no_such_tool", {}))
        assert unknown["code"] == "VALIDATION_ERROR"
        assert unknown["details"]["tool"] == "no_such_tool"

        wrong = error(await client.call_tool("get_version", {"unexpected": 1}))
        assert wrong["code"] == "VALIDATION_ERROR"
        assert wrong["details"]["field"] == "unexpected"

        # The server is still fine after bad calls.
        ok(await client.call_tool("get_version", {}))

    # The trace id of a failure is in the gateway's log line for that call.
    assert unknown["trace_id"] in http_gateway.log_text()
    assert wrong["trace_id"] in http_gateway.log_text()


async def test_http_health_endpoints(http_gateway) -> None:
    assert httpx.get(f"{http_gateway.base}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{http_gateway.base}/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    assert ready.json()["extension_version"] == VERSION


def test_sigterm_shuts_the_http_gateway_down_cleanly(http_gateway) -> None:
    assert http_gateway.stop() == 0


async def test_unreachable_database_is_service_unavailable(start_gateway) -> None:
    gw = start_gateway()
    # Close every connection of the gateway's role and forbid new ones.
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("ALTER ROLE neotoma_app NOLOGIN")
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'neotoma_app'")
    try:
        async with Client(gw.url) as client:
            failed = error(await client.call_tool("get_version", {}))
            assert failed["code"] == "SERVICE_UNAVAILABLE"
    finally:
        with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
            conn.execute("ALTER ROLE neotoma_app LOGIN")
    async with Client(gw.url) as client:
        ok(await client.call_tool("get_version", {}))


async def test_embedded_default_creates_then_reuses_a_private_cluster() -> None:
    # Under /tmp so that, when the tests run as root, the cluster's OS user
    # (postgres) can reach it.
    data_dir = Path(tempfile.mkdtemp(prefix="neotoma-embedded-", dir="/tmp")) / "data"
    data_dir.parent.chmod(0o755)
    port = str(free_port())
    env = gateway_env()
    args = ("--data-dir", str(data_dir), "--pg-port", port)
    try:
        async with stdio_client(*args, env=env) as client:
            await check_tools_and_calls(client)
        assert (data_dir / "pgdata" / "PG_VERSION").exists()
        dsn = f"host={data_dir / 'run'} port={port} user=neotoma dbname=neotoma"
        marker = str(uuid.uuid4())
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE reuse_marker (v text)")
            conn.execute("INSERT INTO reuse_marker VALUES (%s)", (marker,))
        # Second start: same cluster, same data.
        async with stdio_client(*args, env=env) as client:
            ok(await client.call_tool("get_version", {}))
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT v FROM reuse_marker").fetchone() == (marker,)
        status = subprocess.run(
            [mcp_bin(), "cluster", "status", *args], env=env, capture_output=True, text=True, check=True
        ).stdout
        assert str(data_dir) in status and "running: true" in status
    finally:
        subprocess.run([mcp_bin(), "cluster", "stop", *args], env=env, check=False)
    status = subprocess.run(
        [mcp_bin(), "cluster", "status", *args], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "running: false" in status
    shutil.rmtree(data_dir.parent, ignore_errors=True)
