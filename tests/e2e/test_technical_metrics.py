"""get_technical_metrics through MCP with a real Prometheus (Debian's
`prometheus`) scraping the gateway's /metrics: the seed's metric names are
exported, the answers are Prometheus' own for the query, operators only."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from conftest import authed_client, create_token, error, new_user, ok, token_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.prometheus_server import Prometheus  # noqa: E402

pytestmark = pytest.mark.anyio

SEED_METRICS = [
    "neotoma_record_upload_duration_ms", "neotoma_record_upload_total", "neotoma_search_duration_ms",
    "neotoma_extraction_errors_total", "neotoma_mcp_error_rate", "neotoma_graph_orphan_nodes_total",
    "neotoma_db_connection_pool_usage",
]


async def test_metrics_come_back_from_prometheus_for_operators(start_gateway, tmp_path) -> None:
    prometheus = Prometheus(tmp_path, targets=[], scrape_interval="1s")
    gw = start_gateway(auth=True, NEOTOMA_PROMETHEUS_URL=prometheus.url)
    prometheus.targets = [f"127.0.0.1:{gw.port}"]
    prometheus.start()
    try:
        alice, op = new_user(), new_user()
        operator_token = token_cli("create", "--user", op, "--scope", "operator").stdout.strip()
        async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, operator_token) as o:
            for i in range(3):
                ok(await a.call_tool("store", {"entities": [{"entity_type": "note", "title": f"n{i}", "content": "x"}]}))
            error(await a.call_tool("store", {"entities": []}))
            ok(await a.call_tool("retrieve_entities", {"entity_type": "note"}))
            ok(await a.call_tool("store", {"file_content": "AAEC", "mime_type": "application/x-unknown-binary"}))

            text = httpx.get(f"{gw.base}/metrics").text
            for name in SEED_METRICS:
                assert f"# TYPE {name} " in text, name
            assert 'neotoma_record_upload_total{action="store",status="success"} 4' in text
            assert 'neotoma_record_upload_total{action="store",status="failure"} 1' in text
            assert 'neotoma_search_duration_ms_count{action="retrieve_entities"} 1' in text
            # Alice's three notes are linked to nothing (other tests' entities may add to them).
            orphans = next(line for line in text.splitlines() if line.startswith("neotoma_graph_orphan_nodes_total "))
            assert int(orphans.split()[1]) >= 3

            forbidden = error(await a.call_tool("get_technical_metrics", {"metric_name": "neotoma_mcp_error_rate"}))
            assert forbidden["code"] == "FORBIDDEN"
            unknown = error(await o.call_tool("get_technical_metrics", {"metric_name": "neotoma_coffee_total"}))
            assert unknown["code"] == "METRIC_NOT_FOUND"

            prometheus.wait_for_series('neotoma_record_upload_total{status="failure"}')
            # Until Prometheus has two scrapes of the series, the range is
            # empty: ask again (bounded), then compare with Prometheus itself.
            request = {"metric_name": "neotoma_record_upload_total", "aggregation": "max", "step": "2s",
                       "labels": {"status": "success"}}
            for _ in range(60):
                now = time.time()
                request["time_range"] = {"start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60)),
                                         "end": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))}
                answer = ok(await o.call_tool("get_technical_metrics", request))
                if answer["values"]:
                    break
                time.sleep(1)
            assert answer["values"], "Prometheus never answered points"
            assert answer["aggregation"] == "max" and answer["metadata"]["unit"] == "count"
            query = answer["metadata"]["query"]
            assert query == 'max(increase(neotoma_record_upload_total{status="success"}[2s]))'
            direct = prometheus.query_range(query, now - 60, now, step=2)
            direct_values = [float(v) for _, v in direct["result"][0]["values"]] if direct["result"] else []
            assert [v["value"] for v in answer["values"]] == [v for v in direct_values if v == v]
            assert all(v["value"] >= 0 for v in answer["values"])

            latency = ok(await o.call_tool("get_technical_metrics",
                                           {"metric_name": "neotoma_record_upload_duration_ms", "aggregation": "p95"}))
            assert latency["metadata"]["unit"] == "ms" and "histogram_quantile(0.95" in latency["metadata"]["query"]
            assert all(v["value"] >= 0 for v in latency["values"])

            prometheus.stop()
            gone = error(await o.call_tool("get_technical_metrics", {"metric_name": "neotoma_mcp_error_rate"}))
            assert gone["code"] == "METRICS_SERVICE_UNAVAILABLE"
    finally:
        prometheus.stop()


async def test_without_prometheus_metrics_are_unavailable(start_gateway) -> None:
    gw = start_gateway(auth=True)
    operator_token = token_cli("create", "--user", new_user(), "--scope", "operator").stdout.strip()
    async with authed_client(gw.url, operator_token) as o:
        e = error(await o.call_tool("get_technical_metrics", {"metric_name": "neotoma_db_connection_pool_usage"}))
        assert e["code"] == "METRICS_SERVICE_UNAVAILABLE"
