"""pytest plugin (`-p engramcp_peer`): runs EngraMCP's own MCP tests, unchanged,
against a server started as a separate process and reached by a real MCP
client (fastmcp.Client over stdio), instead of upstream's in-process
`Client(mcp)`.

Upstream's tests get their client in two ways, and both are served here:

* `tests/unit/test_mcp_interface.py` uses the fixture `mcp_client` (from
  upstream's tests/unit/conftest.py, not vendored: it imports the server
  in-process). The fixture below yields a `fastmcp.Client` connected to the
  external server instead.
* `tests/integration/test_mcp_protocol.py` imports
  `configure`, `_reset_working_memory` and `mcp` from `engramcp.server` and
  opens `Client(mcp)` itself. A stand-in module `engramcp.server` is put in
  `sys.modules` before the tests are collected: `configure` and
  `_reset_working_memory` do nothing (the harness isolates each test
  instead), and `mcp` is a fastmcp client transport that starts the external
  server, so `Client(mcp)` talks MCP over stdio to it.

Both also take the fixture `redis_container` (upstream's root conftest
starts a Redis container with testcontainers; not vendored): it yields the
harness's redis URL for the control, a placeholder for Neotoma.

Isolation, per test (upstream flushes Redis and resets its working memory
before each test): a new server process; for the control the harness's
redis is flushed first; for Neotoma `{user_id}` in the command becomes a new
UUID, so each test starts from an empty memory.

Environment (set by ../run):
  ENGRAMCP_PEER_CMD    JSON list: the server command; `{user_id}` is replaced
                       by a new UUID per test
  ENGRAMCP_REDIS_URL   the control's redis (flushed before each test); unset
                       for Neotoma
  ENGRAMCP_PEER_WORKDIR  the servers' working directory (the control writes
                       its audit log, engramcp_audit.jsonl, there)
  ENGRAMCP_PEER_LOG    file the servers' stderr is appended to
  ENGRAMCP_PEER_TRACE  file every test's calls and answers are written to
                       (JSON lines); failing tests also show them in the report
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types
import uuid
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports import StdioTransport

_state: dict = {"user_id": None, "calls": [], "nodeid": None}


def _command() -> list[str]:
    raw = os.environ.get("ENGRAMCP_PEER_CMD")
    if not raw:
        raise RuntimeError("ENGRAMCP_PEER_CMD is not set: run the suite through tests/peers/engramcp/run")
    cmd = json.loads(raw)
    user_id = _state["user_id"] or str(uuid.uuid4())
    return [part.replace("{user_id}", user_id) for part in cmd]


class ExternalServerTransport(ClientTransport):
    """A client transport that starts the target server (a new process for
    each connection) and speaks MCP to it over stdio."""

    @contextlib.asynccontextmanager
    async def connect_session(self, **session_kwargs):
        cmd = _command()
        log = os.environ.get("ENGRAMCP_PEER_LOG")
        transport = StdioTransport(
            command=cmd[0],
            args=cmd[1:],
            env=dict(os.environ),
            cwd=os.environ.get("ENGRAMCP_PEER_WORKDIR"),
            keep_alive=False,
            log_file=Path(log) if log else None,
        )
        async with transport.connect_session(**session_kwargs) as session:
            yield session

    def __repr__(self) -> str:
        return f"<ExternalServerTransport({os.environ.get('ENGRAMCP_PEER_CMD')})>"


# ---------------------------------------------------------------------------
# The stand-in `engramcp.server` for tests that import it.
# ---------------------------------------------------------------------------


async def _configure(redis_url: str = "", **_kwargs) -> None:
    """Upstream points the in-process server at a Redis; the external server
    was given its backend when the harness started it."""


async def _reset_working_memory() -> None:
    """Upstream clears its working memory; here each test gets a fresh server
    process and an empty memory (see _fresh_target)."""


_server = types.ModuleType("engramcp.server")
_server.__doc__ = "Stand-in for engramcp.server (tests/peers/engramcp/shim/engramcp_peer.py)"
_server.configure = _configure
_server._reset_working_memory = _reset_working_memory
_server.mcp = ExternalServerTransport()
_package = types.ModuleType("engramcp")
_package.__path__ = []  # a package, with nothing else in it
_package.server = _server
sys.modules["engramcp"] = _package
sys.modules["engramcp.server"] = _server


# ---------------------------------------------------------------------------
# What every call sent and got, for the report.
# ---------------------------------------------------------------------------

_original_call_tool_mcp = Client.call_tool_mcp


async def _recording_call_tool_mcp(self, name, arguments, *args, **kwargs):
    entry = {"tool": name, "arguments": arguments}
    _state["calls"].append(entry)
    try:
        result = await _original_call_tool_mcp(self, name, arguments, *args, **kwargs)
    except BaseException as exc:  # an MCP (JSON-RPC) error, a timeout, ...
        entry["raised"] = f"{type(exc).__name__}: {exc}"
        raise
    entry["result"] = result.model_dump(mode="json", exclude_none=True, by_alias=True)
    return result


Client.call_tool_mcp = _recording_call_tool_mcp


def _transcript(calls: list[dict]) -> str:
    return "\n".join(json.dumps(c, ensure_ascii=False) for c in calls)


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_container():
    return os.environ.get("ENGRAMCP_REDIS_URL", "redis://unused.invalid:0 (not the control)")


@pytest.fixture(autouse=True)
def _fresh_target(request):
    """Each test: a new user id (Neotoma) or a flushed redis (control)."""
    _state["user_id"] = str(uuid.uuid4())
    _state["calls"] = []
    _state["nodeid"] = request.node.nodeid
    url = os.environ.get("ENGRAMCP_REDIS_URL")
    if url:
        import redis

        client = redis.Redis.from_url(url)
        try:
            client.flushdb()
        finally:
            client.close()
    yield


@pytest.fixture()
async def mcp_client(_fresh_target):
    async with Client(_server.mcp) as client:
        yield client


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        calls = list(_state["calls"])
        if report.outcome == "failed" and calls:
            report.sections.append(("engramcp calls (tool, arguments, answer)", _transcript(calls)))
        trace = os.environ.get("ENGRAMCP_PEER_TRACE")
        if trace:
            with open(trace, "a", encoding="utf-8") as f:
                f.write(
                    json.dumps(
                        {
                            "test": item.nodeid,
                            "outcome": report.outcome,
                            "user_id": _state["user_id"],
                            "calls": calls,
                            "error": [
                                line
                                for line in report.longreprtext.splitlines()
                                if line.startswith("E ")
                            ][:12],
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
