"""Plaid through MCP against a stand-in that speaks Plaid's wire format:
link tokens, the exchange (an expired public token), a paginated sync,
a modified and a removed transaction, an API failure that writes nothing,
an item that needs a new login, and users who cannot see each other's
items. Access tokens are stored encrypted and never answered."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg
import pytest
from conftest import authed_client, create_token, error, new_user, ok

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.plaid_standin import PlaidStandin  # noqa: E402

pytestmark = pytest.mark.anyio

TRANSACTIONS = [
    {"transaction_id": f"tx{i}", "account_id": "acc-checking", "amount": 10.0 * i, "date": f"2026-11-0{i}",
     "name": f"Shop {i}", "merchant_name": f"Shop {i}", "iso_currency_code": "USD", "pending": False}
    for i in range(1, 6)
]


@pytest.fixture
def plaid():
    with PlaidStandin() as p:
        yield p


def plaid_env(plaid: PlaidStandin, tmp_path: Path) -> dict[str, str]:
    return {
        "NEOTOMA_PLAID_URL": plaid.url,
        "NEOTOMA_PLAID_CLIENT_ID": plaid.client_id,
        "NEOTOMA_PLAID_SECRET": plaid.secret,
        "NEOTOMA_PLAID_PAGE_SIZE": "2",
        "NEOTOMA_SECRETS_KEY_FILE": str(tmp_path / "secrets.key"),
    }


async def transactions(client, include_deleted: bool = False) -> dict[str, dict]:
    listed = ok(await client.call_tool("retrieve_entities", {"entity_type": "transaction", "limit": 100,
                                                             "include_deleted": include_deleted}))
    return {e["snapshot"]["transaction_id"]: e for e in listed["entities"]}


async def test_without_credentials_plaid_is_not_configured(start_gateway) -> None:
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(new_user())) as a:
        e = error(await a.call_tool("plaid_create_link_token", {}))
        assert e["code"] == "PLAID_NOT_CONFIGURED"
        # Listing needs no Plaid.
        assert ok(await a.call_tool("plaid_list_items", {}))["items"] == []


async def test_plaid_items_sync_into_the_truth_model(start_gateway, plaid, tmp_path, admin_db) -> None:
    alice, bob = new_user(), new_user()
    access = plaid.add_item("public-sandbox-alice", item_id="item-alice", institution_name="First Platypus Bank",
                            accounts=[{"account_id": "acc-checking", "name": "Checking", "mask": "0000"}],
                            transactions=TRANSACTIONS)
    plaid.add_item("public-sandbox-old", item_id="item-old")
    plaid.expire_public_token("public-sandbox-old")
    gw = start_gateway(auth=True, **plaid_env(plaid, tmp_path))
    async with authed_client(gw.url, create_token(alice)) as a, authed_client(gw.url, create_token(bob)) as b:
        link = ok(await a.call_tool("plaid_create_link_token", {"client_name": "My memory"}))
        assert link["link_token"].startswith("link-sandbox-") and link["expiration"]
        sent = plaid.requests_to("/link/token/create")[-1]
        assert sent["user"]["client_user_id"] == alice and sent["products"] == ["transactions"]
        assert error(await a.call_tool("plaid_create_link_token", {"products": ["coffee"]}))["code"] == "VALIDATION_ERROR"

        expired = error(await a.call_tool("plaid_exchange_public_token", {"public_token": "public-sandbox-old"}))
        assert expired["code"] == "PLAID_INVALID_TOKEN"
        assert expired["details"]["plaid_error_code"] == "INVALID_PUBLIC_TOKEN"

        linked = ok(await a.call_tool("plaid_exchange_public_token",
                                      {"public_token": "public-sandbox-alice", "trigger_initial_sync": True}))
        item = linked["plaid_item"]
        assert item["item_id"] == "item-alice" and item["institution_name"] == "First Platypus Bank"
        assert [x["id"] for x in item["accounts"]] == ["acc-checking"]
        assert linked["sync_summary"] == {"added": 5, "modified": 0, "removed": 0}
        # Five transactions in pages of two: three pages, the cursor kept.
        assert len(plaid.requests_to("/transactions/sync")) == 3
        txs = await transactions(a)
        assert sorted(txs) == ["tx1", "tx2", "tx3", "tx4", "tx5"]
        assert txs["tx2"]["snapshot"]["amount"] == 20.0 and txs["tx2"]["snapshot"]["bank_provider"] == "plaid"
        # Linked: each transaction is PART_OF its account, the account of the bank.
        related = ok(await a.call_tool("retrieve_related_entities", {"entity_id": txs["tx1"]["id"], "max_hops": 2}))
        assert {"account", "company"} <= {e["entity_type"] for e in related["entities"]}

        # The token is stored sealed, and answered nowhere.
        row = admin_db.execute("SELECT secret, settings::text FROM neotoma.connectors WHERE user_id = %s", (alice,)).fetchone()
        assert access.encode() not in bytes(row[0]) and access not in row[1]
        items = ok(await a.call_tool("plaid_list_items", {}))
        assert access not in json.dumps(items) and "access_token" not in json.dumps(items)
        assert [(i["id"], i["item_id"], i["status"]) for i in items["items"]] == [(item["id"], "item-alice", "active")]
        assert items["items"][0]["last_successful_sync"]

        # A change and a removal: an observation each, no new entity; the
        # removed one is deleted (out of the listings) and keeps its history.
        plaid.modify_transaction("item-alice", "tx2", amount=25.5)
        plaid.remove_transaction("item-alice", "tx3")
        synced = ok(await a.call_tool("plaid_sync", {"item_id": "item-alice"}))
        assert synced["total_synced_items"] == 1
        assert synced["syncs"][0]["summary"] == {"added": 0, "modified": 1, "removed": 1}
        assert synced["syncs"][0]["next_cursor"]
        txs = await transactions(a)
        assert sorted(txs) == ["tx1", "tx2", "tx4", "tx5"] and txs["tx2"]["snapshot"]["amount"] == 25.5
        removed = (await transactions(a, include_deleted=True))["tx3"]
        assert removed["snapshot"]["status"] == "removed" and removed["deleted_reason"] == "removed by Plaid"
        assert error(await a.call_tool("retrieve_entity_snapshot", {"entity_id": removed["id"]}))["code"] == "ENTITY_NOT_FOUND"
        history = ok(await a.call_tool("list_observations", {"entity_id": removed["id"]}))
        said = [o["fields"].get("status") for o in history["observations"] if o["kind"] == "store"]
        assert said == ["removed", "posted"]
        assert [o["kind"] for o in history["observations"]][0] == "deletion"
        again = ok(await a.call_tool("plaid_sync", {"plaid_item_id": item["id"]}))
        assert again["syncs"][0]["summary"] == {"added": 0, "modified": 0, "removed": 0}
        # A full sync reads everything again and creates nothing new.
        full = ok(await a.call_tool("plaid_sync", {"item_id": "item-alice", "force_full_sync": True}))
        assert full["syncs"][0]["summary"]["added"] == 4
        assert len(await transactions(a)) == 4 and len(await transactions(a, include_deleted=True)) == 5

        # Plaid fails: the error, and nothing of that sync is written.
        plaid.add_transaction("item-alice", {"transaction_id": "tx6", "account_id": "acc-checking", "amount": 60.0,
                                             "date": "2026-11-06", "name": "Shop 6"})
        cursor_before = admin_db.execute("SELECT cursor FROM neotoma.connectors WHERE user_id = %s", (alice,)).fetchone()[0]
        plaid.fail_next("/transactions/sync")
        failed = error(await a.call_tool("plaid_sync", {"item_id": "item-alice"}))
        assert failed["code"] == "PLAID_API_ERROR" and failed["details"]["plaid_error_code"] == "INTERNAL_SERVER_ERROR"
        assert "tx6" not in await transactions(a)
        assert admin_db.execute("SELECT cursor FROM neotoma.connectors WHERE user_id = %s", (alice,)).fetchone()[0] == cursor_before
        assert ok(await a.call_tool("plaid_sync", {"item_id": "item-alice"}))["syncs"][0]["summary"]["added"] == 1
        assert "tx6" in await transactions(a)

        # The bank wants a new login: the item says so until it is fixed.
        plaid.set_item_error("item-alice", "ITEM_LOGIN_REQUIRED")
        login = error(await a.call_tool("plaid_sync", {"item_id": "item-alice"}))
        assert login["code"] == "PLAID_API_ERROR" and login["details"]["plaid_error_code"] == "ITEM_LOGIN_REQUIRED"
        assert ok(await a.call_tool("plaid_list_items", {}))["items"][0]["status"] == "error"
        everything = ok(await a.call_tool("plaid_sync", {"sync_all": True}))
        assert everything["total_synced_items"] == 0 and everything["syncs"][0]["status"] == "failed"
        plaid.clear_item_error("item-alice")
        assert ok(await a.call_tool("plaid_sync", {"sync_all": True}))["total_synced_items"] == 1

        # Bob sees and syncs none of it.
        assert ok(await b.call_tool("plaid_list_items", {}))["items"] == []
        assert ok(await b.call_tool("plaid_list_items", {"plaid_item_id": item["id"]}))["items"] == []
        assert error(await b.call_tool("plaid_sync", {"plaid_item_id": item["id"]}))["code"] == "PLAID_ITEM_NOT_FOUND"
        assert error(await b.call_tool("plaid_sync", {"item_id": "item-alice"}))["code"] == "PLAID_ITEM_NOT_FOUND"
        assert ok(await b.call_tool("plaid_sync", {"sync_all": True}))["total_synced_items"] == 0
        assert ok(await b.call_tool("retrieve_entities", {"entity_type": "transaction"}))["total"] == 0
        assert error(await a.call_tool("plaid_sync", {}))["code"] == "VALIDATION_ERROR"

    # No user may read the sealed secrets in SQL, not even their own.
    with psycopg.connect(admin_db.info.dsn, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'plaid_e2e_user') THEN "
                     "CREATE ROLE plaid_e2e_user NOLOGIN; GRANT neotoma_user TO plaid_e2e_user; END IF; END $$")
        conn.execute("SET ROLE plaid_e2e_user")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT secret FROM neotoma.connectors")
        assert conn.execute("SELECT count(*) FROM neotoma.connectors").fetchone()[0] == 0


async def test_an_item_connected_in_a_workspace_syncs_into_it(start_gateway, plaid, tmp_path) -> None:
    """A bank connected with `workspace` keeps its accounts and every later
    sync's transactions there (sync_all too), not in the context's."""
    carol = new_user()
    plaid.add_item("public-sandbox-carol", item_id="item-carol", institution_name="Second Bank",
                   accounts=[{"account_id": "acc-c", "name": "Checking", "mask": "0001"}],
                   transactions=[{**t, "account_id": "acc-c"} for t in TRANSACTIONS[:2]])
    gw = start_gateway(auth=True, **plaid_env(plaid, tmp_path))
    async with authed_client(gw.url, create_token(carol)) as c:
        linked = ok(await c.call_tool("plaid_exchange_public_token",
                                      {"public_token": "public-sandbox-carol", "workspace": "bank"}))
        assert linked["workspace_context"]["workspaces"] == ["bank"]
        [connector] = ok(await c.call_tool("list_connectors", {}))["connectors"]
        assert connector["workspace"] == "bank"
        ok(await c.call_tool("set_context", {"workspace": "elsewhere"}))
        synced = ok(await c.call_tool("plaid_sync", {"sync_all": True}))
        assert synced["syncs"][0]["summary"]["added"] == 2
        in_bank = ok(await c.call_tool("retrieve_entities", {"workspace": "bank", "limit": 100}))
        assert sorted(e["entity_type"] for e in in_bank["entities"]) == ["account", "company", "transaction", "transaction"]
        assert ok(await c.call_tool("retrieve_entities", {}))["total"] == 0
        assert ok(await c.call_tool("retrieve_entities", {"workspace": "default"}))["total"] == 0
