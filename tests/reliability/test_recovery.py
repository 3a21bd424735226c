"""Gateway recovery: the database behind a running gateway goes away and
comes back. While it is down a call is an error envelope (not a crash, not a
hang); once it is back, calls succeed again without restarting the gateway."""

from __future__ import annotations

from typing import Any, Callable

import anyio
import httpx2 as httpx
import pytest
from conftest import Gateway, PrivateCluster, error, new_user, ok, prepare_database, report
from mcp import Client

pytestmark = pytest.mark.anyio

RECOVERY_ATTEMPTS = 60
RECOVERY_PAUSE_SECONDS = 0.25


def note(title: str) -> dict[str, Any]:
    return {"entities": [{"entity_type": "note", "title": title, "content": f"{title} body"}]}


@pytest.mark.parametrize("outage", ["stop", "crash"])
async def test_gateway_recovers_after_database_restart(private_cluster: Callable[..., PrivateCluster], outage: str) -> None:
    """`stop`: pg_ctl stop -m fast; `crash`: kill -9 of the postmaster (the
    restart then goes through crash recovery)."""
    cluster = private_cluster()
    cluster.start()
    db = prepare_database(cluster.dsn, "neotoma_recovery")
    user = new_user()
    gw = Gateway("--no-auth", "--user-id", user, "--database-url", db.operator_dsn, "--rate-limit", "store=0",
                 log_dir=cluster.dir)  # fmt: skip
    try:
        async with Client(gw.url) as c:
            before = ok(await c.call_tool("store", note("before")))
            assert before["deduplicated"] is False
            assert httpx.get(f"{gw.base}/readyz", timeout=10).status_code == 200

            if outage == "stop":
                cluster.stop("fast")
            else:
                cluster.crash()
            down = error(await c.call_tool("store", note("while down")))
            assert down["code"] in ("SERVICE_UNAVAILABLE", "DB_QUERY_FAILED"), down
            if down["code"] == "DB_QUERY_FAILED":
                assert down["details"].get("retryable") is True, down
            report(f"gateway, database down ({outage}): {down['code']} (retryable={down['details'].get('retryable')})")
            # A read fails the same way, and the process is still serving.
            down_read = error(await c.call_tool("retrieve_entities", {}))
            assert down_read["code"] in ("SERVICE_UNAVAILABLE", "DB_QUERY_FAILED"), down_read
            assert gw.alive(), f"the gateway exited when the database went away:\n{gw.log_text()}"
            assert httpx.get(f"{gw.base}/healthz", timeout=10).status_code == 200
            assert httpx.get(f"{gw.base}/readyz", timeout=10).status_code != 200

            cluster.start()
            codes: list[str] = []
            after = None
            for _ in range(RECOVERY_ATTEMPTS):
                result = await c.call_tool("store", note("after"))
                if not result.is_error:
                    after = ok(result)
                    break
                codes.append(error(result)["code"])
                await anyio.sleep(RECOVERY_PAUSE_SECONDS)
            report(f"gateway, database back ({outage}): succeeded after {len(codes)} failed attempts {codes}")
            assert after is not None, f"no success in {RECOVERY_ATTEMPTS} attempts after the restart: {codes}"
            assert set(codes) <= {"SERVICE_UNAVAILABLE", "DB_QUERY_FAILED"}, codes
            assert gw.alive()

            # What was stored before the outage is there; the failed call stored nothing.
            listed = ok(await c.call_tool("retrieve_entities", {"entity_type": "note"}))
            assert listed["total"] == 2, listed
            assert sorted(e["snapshot"]["title"] for e in listed["entities"]) == ["after", "before"]
            snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": before["entities"][0]["entity_id"]}))
            assert snap["snapshot"]["title"] == "before"
            assert httpx.get(f"{gw.base}/readyz", timeout=10).status_code == 200
    finally:
        code = gw.stop()
    assert code == 0, f"gateway exit code {code}:\n{gw.log_text()}"
