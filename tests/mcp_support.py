"""What the end-to-end and reliability tests share: the gateway binary and
its environment, a `neotoma-mcp --http` process on a free loopback port, and
reading MCP tool results (a result, or the error envelope of a failure)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx


def mcp_bin() -> str:
    path = os.environ.get("NEOTOMA_MCP_BIN") or str(
        Path(__file__).resolve().parents[1] / "target" / "release" / "neotoma-mcp"
    )
    assert Path(path).exists(), f"no gateway binary at {path}: run scripts/setup"
    return path


def gateway_env(**extra: str) -> dict[str, str]:
    """The test's environment without NEOTOMA_* and DATABASE_URL, plus `extra`.
    The tests of what the actions do see every tool and whole answers
    (`--tools all`, `--verbose-answers`); those of what an agent sees by
    default (tests/e2e/test_agent_surface.py) pass NEOTOMA_TOOLS and
    NEOTOMA_VERBOSE_ANSWERS themselves."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOTOMA_") and k != "DATABASE_URL"}
    env.update({"NEOTOMA_LOG": "info", "RUST_BACKTRACE": "0", "NEOTOMA_TOOLS": "all", "NEOTOMA_VERBOSE_ANSWERS": "true"})
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    """A `neotoma-mcp --http` process on a free loopback port, up once
    /healthz answers (within 60 s, else the test fails with its log)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, log_dir: Path = Path("/tmp")):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        self.log_path = log_dir / f"neotoma-gateway-{self.port}.log"
        self.log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [mcp_bin(), "--http", f"127.0.0.1:{self.port}", *args],
            env=env or gateway_env(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        for _ in range(600):
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited early:\n{self.log_text()}")
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"gateway did not come up:\n{self.log_text()}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        if not self.log.closed:
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
