"""Self-tests of the test-support servers: the Plaid stand-in, Dovecot (IMAP)
and Prometheus. They run real servers on 127.0.0.1 and never reach the
internet; none asserts on wall-clock time."""

from __future__ import annotations

import base64
import datetime as dt
import email
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import imaplib
import re
import sys
import threading
import time
from pathlib import Path

import httpx2 as httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support.fixtures_mail import message  # noqa: E402
from support.imap_server import Dovecot  # noqa: E402
from support.plaid_standin import PlaidStandin  # noqa: E402
from support.prometheus_server import Prometheus  # noqa: E402

# ---------------------------------------------------------------- Plaid


@pytest.fixture
def plaid():
    with PlaidStandin() as standin:
        yield standin


@pytest.fixture
def http():
    with httpx.Client(trust_env=False, timeout=60) as client:
        yield client


def call(http, plaid, path, **body):
    body = {"client_id": "test-client", "secret": "test-secret", **body}
    return http.post(plaid.url + path, json=body)


def five_transactions():
    return [
        {"transaction_id": f"t{i}", "amount": 10.5 * i, "date": f"2026-11-0{i}", "name": f"Shop {i}",
         "merchant_name": f"Shop {i}"}
        for i in range(1, 6)
    ]


def add_bank(plaid):
    return plaid.add_item(
        "public-sandbox-1", item_id="item-1", institution_id="ins_1", institution_name="Bank One",
        accounts=[{"account_id": "acc-1", "name": "Checking"}], transactions=five_transactions(),
    )


def test_plaid_exchange_accounts_institution(plaid, http):
    access = add_bank(plaid)
    r = call(http, plaid, "/item/public_token/exchange", public_token="public-sandbox-1")
    assert r.status_code == 200, r.text
    assert r.json()["access_token"] == access and access.startswith("access-sandbox-")
    assert r.json()["item_id"] == "item-1" and r.json()["request_id"]

    # Credentials in headers work as well as in the body.
    r = http.post(plaid.url + "/accounts/get", json={"access_token": access},
                  headers={"PLAID-CLIENT-ID": "test-client", "PLAID-SECRET": "test-secret"})
    assert r.status_code == 200, r.text
    body = r.json()
    (account,) = body["accounts"]
    assert account["account_id"] == "acc-1" and account["name"] == "Checking"
    assert {"official_name", "type", "subtype", "mask"} <= account.keys()
    assert {"available", "current", "iso_currency_code"} <= account["balances"].keys()
    assert body["item"]["item_id"] == "item-1" and body["item"]["institution_id"] == "ins_1"
    assert body["item"]["products"] == ["transactions"] and body["item"]["error"] is None

    r = call(http, plaid, "/institutions/get_by_id", institution_id="ins_1", country_codes=["US"])
    assert r.status_code == 200 and r.json()["institution"]["name"] == "Bank One"
    r = call(http, plaid, "/institutions/get_by_id", institution_id="ins_x", country_codes=["US"])
    assert r.status_code == 400 and r.json()["error_code"] == "INVALID_INSTITUTION"

    r = call(http, plaid, "/accounts/get", access_token="access-sandbox-nope")
    assert r.status_code == 400 and r.json()["error_code"] == "INVALID_ACCESS_TOKEN"

    assert [p for p, _ in plaid.requests][:2] == ["/item/public_token/exchange", "/accounts/get"]
    assert plaid.requests_to("/item/public_token/exchange") == [
        {"client_id": "test-client", "secret": "test-secret", "public_token": "public-sandbox-1"}
    ]


def test_plaid_link_token(plaid, http):
    r = call(http, plaid, "/link/token/create", client_name="Neotoma", user={"client_user_id": "u1"},
             country_codes=["US"], language="en", products=["transactions"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["link_token"].startswith("link-sandbox-") and body["request_id"]
    expiration = dt.datetime.strptime(body["expiration"], "%Y-%m-%dT%H:%M:%SZ")
    assert expiration.year >= 2000
    r = call(http, plaid, "/link/token/create", client_name="Neotoma", user={"client_user_id": "u1"},
             country_codes=["US"], language="en")
    assert r.status_code == 400
    assert (r.json()["error_type"], r.json()["error_code"]) == ("INVALID_REQUEST", "MISSING_FIELDS")
    access = add_bank(plaid)  # update mode: access_token instead of products
    r = call(http, plaid, "/link/token/create", client_name="Neotoma", user={"client_user_id": "u1"},
             country_codes=["US"], language="en", access_token=access)
    assert r.status_code == 200, r.text


def sync(http, plaid, access, cursor=None, count=None):
    body = {"access_token": access}
    if cursor is not None:
        body["cursor"] = cursor
    if count is not None:
        body["count"] = count
    r = call(http, plaid, "/transactions/sync", **body)
    assert r.status_code == 200, r.text
    return r.json()


def test_plaid_transactions_sync(plaid, http):
    access = add_bank(plaid)
    seen, cursor, pages = [], "", 0
    while True:
        page = sync(http, plaid, access, cursor, count=2)
        pages += 1
        assert page["modified"] == [] and page["removed"] == []
        assert page["transactions_update_status"] == "HISTORICAL_UPDATE_COMPLETE"
        assert page["accounts"][0]["account_id"] == "acc-1" and page["request_id"]
        assert len(page["added"]) <= 2
        seen += page["added"]
        cursor = page["next_cursor"]
        if not page["has_more"]:
            break
    assert pages == 3
    assert [t["transaction_id"] for t in seen] == ["t1", "t2", "t3", "t4", "t5"]
    t1 = seen[0]
    assert t1["amount"] == 10.5 and t1["date"] == "2026-11-01" and t1["account_id"] == "acc-1"
    assert t1["pending"] is False and t1["iso_currency_code"] == "USD"
    assert {"authorized_date", "name", "merchant_name", "payment_channel"} <= t1.keys()
    assert {"primary", "detailed"} <= t1["personal_finance_category"].keys()

    # Nothing new: an empty page with the same position.
    page = sync(http, plaid, access, cursor)
    assert (page["added"], page["modified"], page["removed"], page["has_more"]) == ([], [], [], False)

    plaid.modify_transaction("item-1", "t2", amount=99.0, name="Shop 2 (corrected)")
    plaid.remove_transaction("item-1", "t4")
    page = sync(http, plaid, access, cursor)
    assert page["added"] == [] and page["has_more"] is False
    (mod,) = page["modified"]
    assert mod["transaction_id"] == "t2" and mod["amount"] == 99.0 and mod["name"] == "Shop 2 (corrected)"
    assert page["removed"] == [{"transaction_id": "t4", "account_id": "acc-1"}]
    cursor2 = page["next_cursor"]

    # A new transaction appears incrementally; a full sync shows the current state.
    plaid.add_transaction("item-1", {"transaction_id": "t6", "amount": 1.25, "pending": True})
    page = sync(http, plaid, access, cursor2)
    assert [t["transaction_id"] for t in page["added"]] == ["t6"] and page["added"][0]["pending"] is True
    full = sync(http, plaid, access)
    assert [t["transaction_id"] for t in full["added"]] == ["t1", "t2", "t3", "t5", "t6"]
    assert full["added"][1]["amount"] == 99.0 and full["has_more"] is False

    for bad in ("not-a-cursor!", base64.urlsafe_b64encode(b'{"i":"other","p":0}').decode()):
        r = call(http, plaid, "/transactions/sync", access_token=access, cursor=bad)
        assert r.status_code == 400 and r.json()["error_code"] == "INVALID_CURSOR"
    r = call(http, plaid, "/transactions/sync", access_token=access, count=501)
    assert r.status_code == 400


def test_plaid_errors(plaid, http):
    access = add_bank(plaid)
    plaid.expire_public_token("public-sandbox-1")
    r = call(http, plaid, "/item/public_token/exchange", public_token="public-sandbox-1")
    assert r.status_code == 400
    err = r.json()
    assert (err["error_type"], err["error_code"]) == ("INVALID_INPUT", "INVALID_PUBLIC_TOKEN")
    assert err["error_message"] and err["display_message"] is None and err["request_id"]

    r = http.post(plaid.url + "/accounts/get", json={"client_id": "test-client", "secret": "wrong",
                                                     "access_token": access})
    assert r.status_code == 400
    assert (r.json()["error_type"], r.json()["error_code"]) == ("INVALID_INPUT", "INVALID_API_KEYS")
    r = http.post(plaid.url + "/accounts/get", json={"access_token": access})
    assert r.status_code == 400 and r.json()["error_code"] == "INVALID_API_KEYS"

    plaid.fail_next("/transactions/sync", times=2)
    for _ in range(2):
        r = call(http, plaid, "/transactions/sync", access_token=access)
        assert r.status_code == 500
        assert (r.json()["error_type"], r.json()["error_code"]) == ("API_ERROR", "INTERNAL_SERVER_ERROR")
    assert sync(http, plaid, access)["added"]

    plaid.fail_next("/accounts/get", status=429, error_type="RATE_LIMIT_EXCEEDED",
                    error_code="ACCOUNTS_LIMIT")
    r = call(http, plaid, "/accounts/get", access_token=access)
    assert r.status_code == 429 and r.json()["error_code"] == "ACCOUNTS_LIMIT"

    plaid.set_item_error("item-1")
    for path in ("/transactions/sync", "/accounts/get"):
        r = call(http, plaid, path, access_token=access)
        assert r.status_code == 400
        assert (r.json()["error_type"], r.json()["error_code"]) == ("ITEM_ERROR", "ITEM_LOGIN_REQUIRED")
    plaid.clear_item_error("item-1")
    assert call(http, plaid, "/accounts/get", access_token=access).status_code == 200


# ---------------------------------------------------------------- IMAP


def test_dovecot_delivers_and_serves(tmp_path):
    with Dovecot(tmp_path, {"ada": "pw"}) as imap:
        for n in (1, 2, 3):
            imap.deliver("ada", message(n, subject=f"Message {n}"))
        conn = imaplib.IMAP4("127.0.0.1", imap.port)
        try:
            assert conn.login("ada", "pw")[0] == "OK"
            typ, data = conn.select("INBOX", readonly=True)
            assert typ == "OK" and data == [b"3"]
            uidvalidity = int(conn.response("UIDVALIDITY")[1][0])
            assert uidvalidity > 0
            typ, data = conn.uid("FETCH", "1:*", "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            assert typ == "OK"
            by_uid = {}
            for part in data:
                if isinstance(part, tuple):
                    uid = int(re.search(rb"UID (\d+)", part[0]).group(1))
                    by_uid[uid] = email.message_from_bytes(part[1])["Message-ID"]
            assert by_uid == {n: f"<fixture-{n}@example.com>" for n in (1, 2, 3)}
            typ, data = conn.uid("FETCH", "2", "(BODY.PEEK[])")
            raw = data[0][1]
            assert b"Subject: Message 2\r\n" in raw and raw.endswith(b"\r\n")
        finally:
            conn.logout()
        assert imap.uidvalidity("ada") == uidvalidity

        # A later delivery gets the next UID; a wrong password fails.
        imap.deliver("ada", message(4, subject="Later"))
        conn = imap.connect("ada")
        try:
            conn.select("INBOX", readonly=True)
            assert conn.uid("SEARCH", "ALL")[1] == [b"1 2 3 4"]
        finally:
            conn.logout()
        conn = imaplib.IMAP4("127.0.0.1", imap.port)
        with pytest.raises(imaplib.IMAP4.error):
            conn.login("ada", "wrong")
        conn.shutdown()


def test_dovecot_tls(tmp_path):
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command")
    with Dovecot(tmp_path, {"bob": "secret"}, tls=True) as imap:
        imap.deliver("bob", message(1, subject="Archived", body="caf\u00e9\n"), mailbox="Archive")
        conn = imap.connect("bob", tls=True)
        try:
            typ, data = conn.select('"Archive"', readonly=True)
            assert typ == "OK" and data == [b"1"]
        finally:
            conn.logout()
        conn = imaplib.IMAP4("127.0.0.1", imap.port)
        conn.starttls(ssl_context=imap.ssl_context())
        assert conn.login("bob", "secret")[0] == "OK"
        conn.logout()


# ---------------------------------------------------------------- Prometheus


class _MetricsHandler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if self.path != "/metrics":
            self.send_error(404)
            return
        data = b"# HELP selftest_metric A test metric.\n# TYPE selftest_metric gauge\nselftest_metric 1\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_prometheus_scrapes(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _MetricsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        target = f"127.0.0.1:{server.server_address[1]}"
        with Prometheus(tmp_path, [target], scrape_interval="1s") as prom:
            series = prom.wait_for_series("selftest_metric", timeout_s=120)
            assert series[0]["__name__"] == "selftest_metric" and series[0]["instance"] == target
            now = time.time()
            data = prom.query_range("selftest_metric", now - 60, now, "1s")
            assert data["resultType"] == "matrix"
            (result,) = data["result"]
            assert result["metric"]["instance"] == target
            assert result["values"] and all(v == "1" for _, v in result["values"])
            assert prom.query("up")["result"][0]["value"][1] == "1"
    finally:
        server.shutdown()
        server.server_close()
