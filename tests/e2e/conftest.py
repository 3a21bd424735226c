"""Fixtures for the end-to-end tests: a database with the extension, the
`neotoma-mcp` binary, and MCP clients (the official Python SDK) connected to it
over stdio and over Streamable HTTP.

scripts/test starts the cluster and sets NEOTOMA_TEST_PG (a superuser
connection string) and NEOTOMA_MCP_BIN.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx2 as httpx
import psycopg
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

APP_ROLE = "neotoma_app"
DATABASE = "neotoma_e2e"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def admin_dsn(dbname: str = "postgres") -> str:
    base = os.environ.get("NEOTOMA_TEST_PG")
    if not base:
        pytest.exit("NEOTOMA_TEST_PG is not set: run the tests with scripts/test", returncode=2)
    return f"{base} dbname={dbname}"


def mcp_bin() -> str:
    path = os.environ.get("NEOTOMA_MCP_BIN") or str(
        Path(__file__).resolve().parents[2] / "target" / "release" / "neotoma-mcp"
    )
    assert Path(path).exists(), f"no gateway binary at {path}: run scripts/setup"
    return path


@pytest.fixture(scope="session")
def database() -> str:
    """A fresh database with the extension; answers the gateway's DSN (a
    non-superuser role, so row level security applies)."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION neotoma")
    base = os.environ["NEOTOMA_TEST_PG"].replace("user=postgres", f"user={APP_ROLE}")
    return f"{base} dbname={DATABASE}"


@pytest.fixture
def admin_db(database: str) -> Iterator[psycopg.Connection]:
    """A superuser connection to the test database (sees every user's rows)."""
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        yield conn


def new_user() -> str:
    return str(uuid.uuid4())


def gateway_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    env.update({"NEOTOMA_LOG": "info", "RUST_BACKTRACE": "0"})
    env.update(extra)
    return env


@contextlib.asynccontextmanager
async def stdio_client(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=mcp_bin(), args=list(args), env=env or gateway_env())
    async with Client(params, **kwargs) as client:
        yield client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    """A `neotoma-mcp --http` process on a free loopback port."""

    def __init__(self, *args: str, env: dict[str, str]):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        self.log_path = Path(f"/tmp/neotoma-e2e-gateway-{self.port}.log")
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [mcp_bin(), "--http", f"127.0.0.1:{self.port}", *args],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited early:\n{self.log_text()}")
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"gateway did not come up:\n{self.log_text()}")
            time.sleep(0.1)

    def log_text(self) -> str:
        self.log.flush()
        return self.log_path.read_text()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def start_gateway(database: str) -> Iterator[Any]:
    """Starts HTTP gateways against the test database; stops them after the test."""
    started: list[Gateway] = []

    def start(*args: str, auth: bool = False, **env: str) -> Gateway:
        """Without `auth`, HTTP requests need no token and act for --user-id."""
        flags = args if auth else ("--no-auth", *args)
        g = Gateway(*flags, env=gateway_env(DATABASE_URL=database, **env))
        started.append(g)
        return g

    yield start
    for g in started:
        g.stop()


@pytest.fixture
def http_gateway(start_gateway: Any) -> Gateway:
    return start_gateway()


def token_cli(*args: str) -> subprocess.CompletedProcess:
    """Runs `neotoma-mcp token …` against the test database as its owner."""
    return subprocess.run(
        [mcp_bin(), "token", *args, "--database-url", admin_dsn(DATABASE)],
        env=gateway_env(),
        capture_output=True,
        text=True,
        check=True,
    )


def create_token(user: str) -> str:
    return token_cli("create", "--user", user).stdout.strip()


def authed_client(url: str, token: str, **kwargs: Any) -> Client:
    """An MCP client that sends `Authorization: Bearer <token>`."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http), **kwargs)


def result_json(result: Any) -> dict[str, Any]:
    """The JSON of a tool result; asserts the text and structured copies agree."""
    assert result.content, "a tool result carries text content"
    text = json.loads(result.content[0].text)
    if result.structured_content is not None:
        assert text == result.structured_content
    return text


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, f"tool call failed: {result.content[0].text}"
    return result_json(result)


def error(result: Any) -> dict[str, Any]:
    """The error envelope body of a failed call."""
    assert result.is_error, f"expected an error, got {result.content[0].text}"
    body = result_json(result)["error"]
    assert set(body) >= {"code", "message", "details", "trace_id"}, body
    assert body["trace_id"].startswith("trace_")
    return body
