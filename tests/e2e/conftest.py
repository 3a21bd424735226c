"""Fixtures for the end-to-end tests: a database with the extension, the
`neotoma-mcp` binary, and MCP clients (the official Python SDK) connected to it
over stdio and over Streamable HTTP.

scripts/test starts the cluster and sets NEOTOMA_TEST_PG (a superuser
connection string) and NEOTOMA_MCP_BIN.
"""

from __future__ import annotations

import contextlib
import sys
import os
import subprocess
import tempfile
import tomllib
import uuid
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import psycopg
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mcp_support import Gateway, error, free_port, gateway_env, mcp_bin, ok, result_json  # noqa: E402,F401

APP_ROLE = "neotoma_app"
# The version of the workspace (extension and gateway).
VERSION = tomllib.loads((Path(__file__).resolve().parents[2] / "Cargo.toml").read_text())["workspace"]["package"]["version"]
DATABASE = "neotoma_e2e"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def admin_dsn(dbname: str = "postgres") -> str:
    base = os.environ.get("NEOTOMA_TEST_PG")
    if not base:
        pytest.exit("NEOTOMA_TEST_PG is not set: run the tests with scripts/test", returncode=2)
    return f"{base} dbname={dbname}"


# NEOTOMA_E2E_ROUTER=1 (scripts/test runs the core files so): the test
# database is a router (docs/scale-out.md) whose users live on two partition
# databases of the same cluster, reached through PL/Proxy.
THROUGH_ROUTER = os.environ.get("NEOTOMA_E2E_ROUTER") == "1"
PARTITIONS = [f"{DATABASE}_p0", f"{DATABASE}_p1"]
ROUTER_LINK = "neotoma_e2e_router_link"


def fresh_database(name: str, *extensions: str) -> None:
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    with psycopg.connect(admin_dsn(name), autocommit=True) as conn:
        for extension in extensions:
            conn.execute(f"CREATE EXTENSION {extension} CASCADE")


@pytest.fixture(scope="session")
def database() -> str:
    """A fresh database with the extension (or a router and its partitions);
    answers the gateway's DSN (a non-superuser role, so row level security
    applies)."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        for role in (APP_ROLE, ROUTER_LINK):
            if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
    if THROUGH_ROUTER:
        for partition in PARTITIONS:
            fresh_database(partition, "neotoma")
        fresh_database(DATABASE, "neotoma", "neotoma_router")
    else:
        fresh_database(DATABASE, "neotoma")
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        # Like the embedded default: the gateway's role may name users and
        # act as an operator (for stdio and operator-scoped tokens).
        conn.execute(f"GRANT neotoma_operator TO {APP_ROLE}")
        if THROUGH_ROUTER:
            conn.execute(f"GRANT neotoma_router TO {ROUTER_LINK}")
            base = os.environ["NEOTOMA_TEST_PG"].replace("user=postgres", f"user={ROUTER_LINK}")
            conn.execute("SELECT neotoma_router.set_partitions(%s)", ([f"{base} dbname={p}" for p in PARTITIONS],))
            conn.execute("CREATE USER MAPPING FOR PUBLIC SERVER neotoma_partitions")
    base = os.environ["NEOTOMA_TEST_PG"].replace("user=postgres", f"user={APP_ROLE}")
    return f"{base} dbname={DATABASE}"


single_database = pytest.mark.skipif(
    THROUGH_ROUTER, reason="reads or holds the rows of one database: through a router they are on the partitions"
)


@pytest.fixture
def admin_db(database: str) -> Iterator[psycopg.Connection]:
    """A superuser connection to the test database (sees every user's rows;
    a test that needs one runs on one server only)."""
    if THROUGH_ROUTER:
        pytest.skip("reads the rows of one database: through a router they are on the partitions")
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        yield conn


def new_user() -> str:
    return str(uuid.uuid4())


@contextlib.asynccontextmanager
async def stdio_client(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=mcp_bin(), args=list(args), env=env or gateway_env())
    async with Client(params, **kwargs) as client:
        yield client


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


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    """Debian's headless Chromium through Debian's chromedriver (the
    inspector's tests, the OAuth consent page)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="neotoma-chromium-")
    for arg in [
        "--headless=new",
        "--no-sandbox",  # the tests run as root in CI
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1366,900",  # a laptop screen
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        # Only the gateway on loopback: no lookups of Google's hosts.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
    ]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
