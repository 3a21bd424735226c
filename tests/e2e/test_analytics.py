"""get_product_analytics through MCP: operators only, aggregates only."""

from __future__ import annotations

import json

import pytest
from conftest import authed_client, create_token, error, new_user, ok, token_cli

pytestmark = pytest.mark.anyio


async def test_product_analytics_are_for_operators_and_name_nobody(start_gateway) -> None:
    alice, bob, op = new_user(), new_user(), new_user()
    gw = start_gateway(auth=True)
    operator_token = token_cli("create", "--user", op, "--scope", "operator").stdout.strip()
    async with (
        authed_client(gw.url, create_token(alice)) as a,
        authed_client(gw.url, create_token(bob)) as b,
        authed_client(gw.url, operator_token) as o,
    ):
        for client, who in ((a, "alice"), (b, "bob")):
            ok(await client.call_tool("store", {"entities": [{"entity_type": "note", "title": who, "content": "x"}]}))
        forbidden = error(await a.call_tool("get_product_analytics", {"metric_type": "usage"}))
        assert forbidden["code"] == "FORBIDDEN"

        daily = ok(await o.call_tool("get_product_analytics", {"metric_type": "usage", "metric_name": "daily_active_users"}))
        assert daily["metric_name"] == "daily_active_users" and len(daily["value"]) >= 30
        today = ok(await o.call_tool("get_current_time", {}))["now"][:10]
        assert next(d["value"] for d in daily["value"] if d["date"] == today) >= 2
        # Aggregates only: no user's id appears in any answer.
        for metric_type in ("activation", "retention", "usage", "funnel", "cohort"):
            answer = ok(await o.call_tool("get_product_analytics", {"metric_type": metric_type}))
            text = json.dumps(answer)
            assert alice not in text and bob not in text and "metadata" in answer
        missing = error(await o.call_tool("get_product_analytics", {"metric_type": "usage", "metric_name": "avg_searches_per_user_per_week"}))
        assert missing["code"] == "METRIC_NOT_FOUND"
