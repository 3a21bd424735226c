"""Files: content-addressed storage, the built-in interpreters of every
format, dedup and limits, file_path reading, quota, reinterpret, signed URLs
fetched by a real HTTP client, the external model interpreter against a local
stand-in that speaks the OpenAI chat-completions protocol, and isolation."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2 as httpx
import psycopg
import pytest
from conftest import DATABASE, Client, admin_dsn, error, free_port, new_user, ok

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).parent / "fixtures"


def b64(name: str) -> str:
    return base64.b64encode((FIXTURES / name).read_bytes()).decode()


async def snapshots(c: Client, entity_type: str) -> list[dict]:
    listed = ok(await c.call_tool("retrieve_entities", {"entity_type": entity_type}))
    return sorted((e["snapshot"] for e in listed["entities"]), key=json.dumps)


@pytest.mark.parametrize(
    "fixture, mime, expected",
    [
        ("invoices.csv", None, {"invoice": 2}),
        ("notes.tsv", None, {"note": 2}),
        ("people.json", "application/json", {"person": 1, "company": 1}),
        ("contacts.vcf", None, {"contact": 2}),
        ("calendar.ics", None, {"event": 1, "task": 1}),
        ("message.eml", None, {"note": 1, "contact": 3}),
        ("reminder.txt", None, {"note": 1}),
        ("trip.md", None, {"note": 1}),
    ],
)
async def test_builtin_interpreters_round_trip(start_gateway, fixture: str, mime: str | None, expected: dict) -> None:
    gw = start_gateway("--user-id", new_user())
    args: dict[str, Any] = {"file_content": b64(fixture), "original_filename": fixture}
    if mime:
        args["mime_type"] = mime
    async with Client(gw.url) as c:
        stored = ok(await c.call_tool("store", args))
        data = (FIXTURES / fixture).read_bytes()
        assert stored["content_hash"] == hashlib.sha256(data).hexdigest()
        assert stored["file_size"] == len(data)
        assert stored["interpretation"]["status"] == "completed"
        counts: dict[str, int] = {}
        for e in stored["entities"]:
            counts[e["entity_type"]] = counts.get(e["entity_type"], 0) + 1
        assert counts == expected
        # Provenance runs back to the file and the run.
        first = stored["entities"][0]
        snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": first["entity_id"]}))
        field = sorted(snap["snapshot"])[0]
        prov = ok(await c.call_tool("retrieve_field_provenance", {"entity_id": first["entity_id"], "field": field}))
        assert prov["source_material"]["id"] == stored["source_id"]
        assert prov["source_material"]["original_filename"] == fixture
        assert prov["source_material"]["storage_path"] == stored["storage_path"]
        assert prov["interpretation_run"]["id"] == stored["interpretation"]["run_id"]
        # Same bytes again: deduplicated, nothing new.
        again = ok(await c.call_tool("store", args))
        assert again["deduplicated"] is True and again["source_id"] == stored["source_id"]
        assert again["interpretation"] is None
        assert len(again["entities"]) == len(stored["entities"])


async def test_interpreted_values_are_typed(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        ok(await c.call_tool("store", {"file_content": b64("invoices.csv"), "original_filename": "invoices.csv"}))
        invoices = await snapshots(c, "invoice")
        assert invoices[0]["amount_due"] == 1250 and invoices[0]["invoice_date"] == "2024-03-01"
        ok(await c.call_tool("store", {"file_content": b64("calendar.ics")}))
        events = ok(await c.call_tool("list_timeline_events", {}))
        assert {e["event_type"] for e in events["events"]} >= {"EventStarts", "EventEnds", "TaskDue", "InvoiceIssued"}


async def test_bad_files_and_paths(start_gateway, tmp_path: Path) -> None:
    # Over HTTP, file_path reads only under the directories the operator allows.
    gw = start_gateway("--user-id", new_user(), "--max-file-mb", "1",
                       "--file-root", str(tmp_path), "--file-root", str(FIXTURES))
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (1024 * 1024 + 1))
    async with Client(gw.url) as c:
        assert error(await c.call_tool("store", {"file_content": "not base64!!"}))["code"] == "VALIDATION_ERROR"
        assert error(await c.call_tool("store", {"file_content": ""}))["code"] == "VALIDATION_ERROR"
        missing = error(await c.call_tool("store", {"file_path": str(tmp_path / "nope.txt")}))
        assert missing["code"] == "FILE_NOT_FOUND"
        assert error(await c.call_tool("store", {"file_path": str(tmp_path)}))["code"] == "FILE_READ_ERROR"
        too_big = error(await c.call_tool("store", {"file_path": str(big)}))
        assert too_big["code"] == "FILE_TOO_LARGE" and too_big["details"]["max_size_bytes"] == 1024 * 1024
        # A readable path works like file_content, named after the file.
        by_path = ok(await c.call_tool("store", {"file_path": str(FIXTURES / "trip.md")}))
        assert by_path["mime_type"] == "text/markdown"
        by_content = ok(await c.call_tool("store", {"file_content": b64("trip.md")}))
        assert by_content["source_id"] == by_path["source_id"] and by_content["deduplicated"]
        # No interpreter for PDFs without a model: stored, skipped; asking explicitly is an error.
        skipped = ok(await c.call_tool("store", {"file_content": b64("invoice.pdf")}))
        assert skipped["interpretation"]["status"] == "skipped" and skipped["mime_type"] == "application/pdf"
        explicit = error(await c.call_tool("store", {"file_content": base64.b64encode(b"%PDF-1.4 other").decode(), "interpret": True}))
        assert explicit["code"] == "UNSUPPORTED_FILE_TYPE"


async def test_upload_file_of_the_earlier_specification(start_gateway, tmp_path: Path) -> None:
    gw = start_gateway("--user-id", new_user(), "--file-root", str(tmp_path), "--file-root", str(FIXTURES))
    async with Client(gw.url) as c:
        uploaded = ok(await c.call_tool("upload_file", {"file_path": str(FIXTURES / "trip.md")}))
        assert uploaded["content_type"] == "text/markdown" and uploaded["file_size"] == (FIXTURES / "trip.md").stat().st_size
        assert uploaded["record"]["id"] == uploaded["source_id"] and uploaded["interpretation"]["status"] == "completed"
        # The same bytes through store: the same source, deduplicated.
        stored = ok(await c.call_tool("store", {"file_content": b64("trip.md")}))
        assert stored["source_id"] == uploaded["source_id"] and stored["deduplicated"]
        # With properties the file is kept but not interpreted.
        props = ok(await c.call_tool("upload_file", {"file_path": str(FIXTURES / "reminder.txt"), "properties": '{"tag": "x"}'}))
        assert props["record"]["properties"] == {"tag": "x"} and props["interpretation"] is None and props["entities"] == []
        assert error(await c.call_tool("upload_file", {"file_path": str(tmp_path / "nope.txt")}))["code"] == "FILE_NOT_FOUND"
        assert error(await c.call_tool("upload_file", {}))["code"] == "VALIDATION_ERROR"
        bad = error(await c.call_tool("upload_file", {"file_path": str(FIXTURES / "trip.md"), "properties": "[1]"}))
        assert bad["code"] == "VALIDATION_ERROR" and bad["details"]["field"] == "properties"


async def test_reinterpret_with_a_new_config(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        stored = ok(await c.call_tool("store", {"file_content": b64("notes.tsv"), "original_filename": "notes.tsv"}))
        first_run = stored["interpretation"]["run_id"]
        again = ok(await c.call_tool("reinterpret", {"source_id": stored["source_id"], "interpretation_config": {"code_version": "2"}}))
        assert again["run_id"] != first_run and again["observations_created"] == 2
        same = ok(await c.call_tool("reinterpret", {"source_id": stored["source_id"], "interpretation_config": {"code_version": "2"}}))
        assert same["run_id"] == again["run_id"] and same["observations_created"] == 0
        note = stored["entities"][0]["entity_id"]
        assert ok(await c.call_tool("list_observations", {"entity_id": note}))["total"] == 2
        missing = error(await c.call_tool("reinterpret", {"source_id": new_user(), "interpretation_config": {}}))
        assert missing["code"] == "SOURCE_NOT_FOUND"


async def test_signed_urls(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    ga = start_gateway("--user-id", alice)
    gb = start_gateway("--user-id", bob)
    async with Client(ga.url) as a, Client(gb.url) as b:
        stored = ok(await a.call_tool("store", {"file_content": b64("message.eml"), "original_filename": "message.eml"}))
        url = ok(await a.call_tool("retrieve_file_url", {"file_path": stored["storage_path"]}))
        assert url["signed_url"].startswith(ga.base + "/files/")
        got = httpx.get(url["signed_url"])
        assert got.status_code == 200
        assert got.content == (FIXTURES / "message.eml").read_bytes()
        assert got.headers["content-type"] == "message/rfc822"
        tampered = url["signed_url"][:-4] + ("0000" if not url["signed_url"].endswith("0000") else "1111")
        assert httpx.get(tampered).status_code == 403
        assert httpx.get(url["signed_url"].split("?")[0]).status_code == 403
        short = ok(await a.call_tool("retrieve_file_url", {"file_path": stored["source_id"], "expires_in": 1}))
        time.sleep(2.1)
        assert httpx.get(short["signed_url"]).status_code == 403
        # Bob cannot have Alice's file, not even with her source id.
        assert error(await b.call_tool("retrieve_file_url", {"file_path": stored["source_id"]}))["code"] == "FILE_NOT_FOUND"
        assert error(await b.call_tool("reinterpret", {"source_id": stored["source_id"], "interpretation_config": {}}))["code"] == "SOURCE_NOT_FOUND"
        # Rotating the key with revocation invalidates earlier URLs.
        with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
            conn.execute("SELECT neotoma.rotate_signing_key(true)")
        assert httpx.get(url["signed_url"]).status_code == 403
        fresh = ok(await a.call_tool("retrieve_file_url", {"file_path": stored["source_id"]}))
        assert httpx.get(fresh["signed_url"]).status_code == 200


class StandIn(BaseHTTPRequestHandler):
    """Speaks the OpenAI chat-completions protocol with a canned answer."""

    requests: list[dict] = []
    answer: dict = {}

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        StandIn.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        reply = json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(StandIn.answer)}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


async def test_external_model_interpreter(start_gateway) -> None:
    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    StandIn.requests.clear()
    StandIn.answer = {"entities": [{"entity_type": "invoice", "invoice_number": "INV-PDF-7", "vendor_name": "Globex",
                                    "amount_due": 420, "currency": "EUR", "scanned": True}]}  # fmt: skip
    try:
        gw = start_gateway("--user-id", new_user(), "--model-url", f"http://127.0.0.1:{port}/v1",
                           "--model", "test-model", "--model-api-key", "sk-test")  # fmt: skip
        async with Client(gw.url) as c:
            stored = ok(await c.call_tool("store", {"file_content": b64("invoice.pdf"), "original_filename": "invoice.pdf"}))
            interp = stored["interpretation"]
            assert interp["status"] == "completed" and interp["observations_created"] == 1
            req = StandIn.requests[0]
            assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test"
            assert req["body"]["model"] == "test-model"
            assert "INV-PDF-7 from Globex" in req["body"]["messages"][1]["content"], "the PDF's text is sent"
            invoice = stored["entities"][0]["entity_id"]
            prov = ok(await c.call_tool("retrieve_field_provenance", {"entity_id": invoice, "field": "amount_due"}))
            assert prov["interpretation_run"]["interpreter"] == "model"
            assert prov["interpretation_run"]["config"]["call"]["completion_id"] == "chatcmpl-test"
            assert prov["source_material"]["mime_type"] == "application/pdf"
            # Reinterpret with another model id: a new run, the model id sent.
            StandIn.answer = {"entities": [{"entity_type": "invoice", "invoice_number": "INV-PDF-7", "vendor_name": "Globex", "amount_due": 421}]}
            again = ok(await c.call_tool("reinterpret", {"source_id": stored["source_id"], "interpretation_config": {"model_id": "bigger"}}))
            assert again["status"] == "completed" and again["observations_created"] == 1
            assert StandIn.requests[-1]["body"]["model"] == "bigger"
            snap = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": invoice}))
            assert snap["snapshot"]["amount_due"] == 421
            # A model that answers nonsense: the run fails, the file stays.
            StandIn.answer = "no entities here"  # type: ignore[assignment]
            png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()
            failed = ok(await c.call_tool("store", {"file_content": png}))
            assert failed["interpretation"]["status"] == "failed"
            assert StandIn.requests[-1]["body"]["messages"][1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    finally:
        server.shutdown()
