"""Provider imports through MCP against a real IMAP server (Debian's
dovecot, started on 127.0.0.1): the catalog, connecting a mailbox (the
login checked, the password sealed), syncing new messages by UID into
e-mail sources, incremental syncs, failures, and users who cannot reach
each other's connectors. A remote caller may not point the server at a
private address unless the operator allows it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import authed_client, create_token, error, new_user, ok

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.fixtures_mail import message  # noqa: E402
from support.imap_server import Dovecot  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def dovecot(tmp_path):
    server = Dovecot(tmp_path, {"ada": "secret-pw"})
    server.start()
    yield server
    server.stop()


def mailbox(server: Dovecot, **extra) -> dict:
    return {"provider": "imap", "settings": {"host": server.host, "port": server.port, "tls": False,
                                            "username": "ada", "password": "secret-pw", **extra}}


async def notes(client) -> list[str]:
    listed = ok(await client.call_tool("retrieve_entities", {"entity_type": "note", "limit": 100}))
    return sorted(e["snapshot"].get("title", "") for e in listed["entities"])


async def test_the_catalog_is_honest(start_gateway) -> None:
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(new_user())) as a:
        providers = ok(await a.call_tool("list_provider_catalog", {}))["providers"]
        status = {p["id"]: p["status"] for p in providers}
        assert status["plaid"] == status["imap"] == status["gmail"] == "available"
        assert set(status.values()) <= {"available", "beta", "coming_soon"}
        assert all({"id", "name", "description", "capabilities", "auth_type", "popularity_score"} <= p.keys() for p in providers)
        assert error(await a.call_tool("sync_provider_imports", {"provider": "myspace"}))["code"] == "PROVIDER_NOT_FOUND"
        assert error(await a.call_tool("connect_provider", {"provider": "myspace", "settings": {}}))["code"] == "PROVIDER_NOT_FOUND"
        assert error(await a.call_tool("sync_provider_imports", {"provider": "imap"}))["code"] == "CONNECTOR_NOT_FOUND"


async def test_mail_is_imported_by_uid(start_gateway, dovecot, tmp_path) -> None:
    for n in range(1, 4):
        dovecot.deliver("ada", message(n, subject=f"Fixture {n}", body=f"Message number {n}."))
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True, NEOTOMA_ALLOW_PRIVATE_HOSTS="true", NEOTOMA_SECRETS_KEY_FILE=str(tmp_path / "k"))
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        wrong = error(await a.call_tool("connect_provider", {**mailbox(dovecot, password="nope")}))
        assert wrong["code"] == "VALIDATION_ERROR" and "login" in wrong["message"]
        bad = error(await a.call_tool("connect_provider", {"provider": "imap", "settings": {"host": "x"}}))
        assert bad["code"] == "VALIDATION_ERROR"

        connector = ok(await a.call_tool("connect_provider", mailbox(dovecot)))
        cid = connector["connector_id"]
        assert connector["settings"]["mailbox"] == "INBOX" and "password" not in json.dumps(connector)
        listed = ok(await a.call_tool("list_connectors", {}))["connectors"]
        assert [c["connector_id"] for c in listed] == [cid] and "secret-pw" not in json.dumps(listed)

        run = ok(await a.call_tool("sync_provider_imports", {"provider": "imap", "limit": 2, "max_pages": 1}))
        assert run["status"] == "completed" and run["stats"] == {"records_added": 2, "records_updated": 0, "errors": 0}
        assert run["sync_run_id"] and run["started_at"] and run["completed_at"]
        run = ok(await a.call_tool("sync_provider_imports", {"provider": "imap", "connector_id": cid}))
        assert run["stats"]["records_added"] == 1
        assert await notes(a) == ["Fixture 1", "Fixture 2", "Fixture 3"]
        # Nothing new: nothing added; a new message: only it.
        assert ok(await a.call_tool("sync_provider_imports", {"provider": "imap"}))["stats"]["records_added"] == 0
        dovecot.deliver("ada", message(4, subject="Fixture 4", body="Late news."))
        assert ok(await a.call_tool("sync_provider_imports", {"provider": "imap"}))["stats"]["records_added"] == 1
        # An initial sync reads everything again and stores nothing twice.
        again = ok(await a.call_tool("sync_provider_imports", {"provider": "imap", "sync_type": "initial"}))
        assert again["stats"]["records_added"] == 0 and len(await notes(a)) == 4
        # Messages stay unread on the server.
        conn = dovecot.connect("ada")
        conn.select("INBOX")
        assert conn.search(None, "UNSEEN")[1][0].split() == [b"1", b"2", b"3", b"4"]
        conn.logout()

        # Bob sees none of it.
        assert ok(await b.call_tool("list_connectors", {}))["connectors"] == []
        assert error(await b.call_tool("sync_provider_imports", {"provider": "imap", "connector_id": cid}))["code"] == "CONNECTOR_NOT_FOUND"
        assert await notes(b) == []

        # The server goes away: the run fails, the connector says why, nothing is lost.
        dovecot.stop()
        down = ok(await a.call_tool("sync_provider_imports", {"provider": "imap"}))
        assert down["status"] == "failed" and down["stats"]["errors"] == 1 and down["error"]
        assert ok(await a.call_tool("list_connectors", {"provider": "imap"}))["connectors"][0]["status"] == "error"
        assert len(await notes(a)) == 4


async def test_remote_callers_cannot_reach_private_hosts(start_gateway, dovecot) -> None:
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(new_user())) as a:
        refused = error(await a.call_tool("connect_provider", mailbox(dovecot)))
        assert refused["code"] == "VALIDATION_ERROR" and "private" in refused["message"]
