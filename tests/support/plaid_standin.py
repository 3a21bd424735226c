"""A local stand-in for Plaid's HTTP API, for tests that must never reach the
internet.

It speaks Plaid's wire format (POST, JSON bodies, credentials in the body as
`client_id`/`secret` or in the `PLAID-CLIENT-ID`/`PLAID-SECRET` headers, error
objects with `error_type`/`error_code`/`error_message`/`display_message`/
`request_id`) for the endpoints a transactions integration uses:

    /link/token/create            /item/public_token/exchange
    /accounts/get                 /institutions/get_by_id
    /transactions/sync            /item/get            /item/remove

The test controls the data through methods (`add_item`, `add_transaction`,
`modify_transaction`, `remove_transaction`, `expire_public_token`,
`fail_next`, `set_item_error`, `clear_item_error`).

`/transactions/sync` semantics: each item keeps an append-only change log of
events ("added", "modified", "removed", each with the transaction's form at
that moment). A cursor is an opaque string (urlsafe base64 of JSON) naming a
position in that log.

* No cursor (or ""): the item's *current* transactions (as of the log's end at
  the time of the first page), all in `added`, paged by `count`; the pages of
  that snapshot are replayed from the log so later changes do not shift them;
  the last page's `next_cursor` points at that log position.
* A cursor: the events after it, at most `count` per page, each transaction
  in its event's category; events on one transaction within a page are
  coalesced as Plaid does (added+modified -> added in its latest form,
  modified+modified -> modified in its latest form, added+removed -> nothing,
  modified+removed -> removed).
* `has_more` is true while events (or snapshot entries) remain after the page.

Usage:

    with PlaidStandin() as plaid:
        access = plaid.add_item("public-sandbox-1", item_id="item-1", ...)
        httpx.post(plaid.url + "/accounts/get", json={...})
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime as dt
import json
import secrets
import string
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["PlaidStandin", "PlaidError"]

_ALNUM = string.ascii_letters + string.digits


def _request_id() -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(15))


def _iso_date(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


class PlaidError(Exception):
    """An error answered as Plaid's error object with an HTTP status."""

    def __init__(
        self,
        status: int,
        error_type: str,
        error_code: str,
        error_message: str,
        display_message: str | None = None,
    ) -> None:
        super().__init__(f"{status} {error_type}/{error_code}: {error_message}")
        self.status = status
        self.error_type = error_type
        self.error_code = error_code
        self.error_message = error_message
        self.display_message = display_message

    def body(self) -> dict[str, Any]:
        return {
            "error_type": self.error_type,
            "error_code": self.error_code,
            "error_code_reason": None,
            "error_message": self.error_message,
            "display_message": self.display_message,
            "request_id": _request_id(),
            "causes": [],
            "status": self.status,
            "documentation_url": f"https://plaid.com/docs/errors/{self.error_type.lower().replace('_', '-')}/",
            "suggested_action": None,
        }


def _invalid_input(code: str, message: str) -> PlaidError:
    return PlaidError(400, "INVALID_INPUT", code, message)


def _invalid_request(code: str, message: str) -> PlaidError:
    return PlaidError(400, "INVALID_REQUEST", code, message)


class _Item:
    def __init__(self, item_id: str, access_token: str, institution_id: str, accounts: list[dict]) -> None:
        self.item_id = item_id
        self.access_token = access_token
        self.institution_id = institution_id
        self.accounts = accounts
        # Each event: (kind, transaction dict); "removed" holds {transaction_id, account_id}.
        self.log: list[tuple[str, dict[str, Any]]] = []
        self.current: dict[str, dict[str, Any]] = {}  # transaction_id -> latest form (not removed)
        self.known_ids: set[str] = set()  # every id ever added (ids are never reused)
        self.error_code: str | None = None
        self.webhook = ""


class PlaidStandin:
    """A threaded HTTP server on 127.0.0.1 (free port) answering like Plaid.

    Attributes: `url` ("http://127.0.0.1:PORT"), `port`, `client_id`,
    `secret`, `requests` (list of (path, parsed_body) in arrival order;
    appended under a lock, read it after the requests you care about returned).
    """

    def __init__(self, client_id: str = "test-client", secret: str = "test-secret") -> None:
        self.client_id = client_id
        self.secret = secret
        self.requests: list[tuple[str, Any]] = []
        self._lock = threading.RLock()
        self._items: dict[str, _Item] = {}
        self._by_access: dict[str, _Item] = {}
        self._public_tokens: dict[str, dict[str, Any]] = {}  # token -> {item_id, expired}
        self._institutions: dict[str, dict[str, Any]] = {}
        self._link_tokens: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, list[PlaidError]] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port: int = 0
        self.url: str = ""
        self.start()

    # -- lifecycle -------------------------------------------------------

    def start(self) -> "PlaidStandin":
        """Starts listening (the constructor already did; idempotent)."""
        if self._server is not None:
            return self
        standin = self

        class Handler(_Handler):
            owner = standin

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=server.serve_forever, name="plaid-standin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def __enter__(self) -> "PlaidStandin":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test control ----------------------------------------------------

    def requests_to(self, path: str) -> list[Any]:
        """The parsed bodies of the requests received on `path`, in order."""
        with self._lock:
            return [body for p, body in self.requests if p == path]

    def add_item(
        self,
        public_token: str,
        *,
        item_id: str,
        institution_id: str = "ins_109508",
        institution_name: str = "First Platypus Bank",
        accounts: list[dict] | None = None,
        transactions: list[dict] | None = None,
    ) -> str:
        """Registers an item reachable by exchanging `public_token`, with its
        institution, accounts and initial transactions (each an "added" event
        in the item's log). Returns the item's access token."""
        with self._lock:
            if item_id in self._items:
                raise ValueError(f"item {item_id} already exists")
            if public_token in self._public_tokens:
                raise ValueError(f"public token {public_token} already exists")
            filled = [self._fill_account(a, i) for i, a in enumerate(accounts or [{}])]
            access_token = f"access-sandbox-{uuid.uuid4()}"
            item = _Item(item_id, access_token, institution_id, filled)
            self._items[item_id] = item
            self._by_access[access_token] = item
            self._public_tokens[public_token] = {"item_id": item_id, "expired": False}
            self._institutions.setdefault(
                institution_id,
                {
                    "institution_id": institution_id,
                    "name": institution_name,
                    "products": ["assets", "auth", "balance", "identity", "transactions"],
                    "country_codes": ["US"],
                    "url": None,
                    "primary_color": None,
                    "logo": None,
                    "routing_numbers": [],
                    "oauth": False,
                },
            )
            for txn in transactions or []:
                self._add_transaction(item, txn)
            return access_token

    def expire_public_token(self, public_token: str) -> None:
        with self._lock:
            self._public_tokens[public_token]["expired"] = True

    def add_transaction(self, item_id: str, txn: dict) -> dict:
        """Appends an "added" event; returns the transaction as Plaid will send it."""
        with self._lock:
            return copy.deepcopy(self._add_transaction(self._items[item_id], txn))

    def modify_transaction(self, item_id: str, transaction_id: str, **fields: Any) -> dict:
        """Changes fields of a current transaction; appends a "modified" event."""
        with self._lock:
            item = self._items[item_id]
            if transaction_id not in item.current:
                raise KeyError(f"no current transaction {transaction_id} in item {item_id}")
            if "transaction_id" in fields and fields["transaction_id"] != transaction_id:
                raise ValueError("a transaction's id cannot change (Plaid removes and adds instead)")
            txn = copy.deepcopy(item.current[transaction_id])
            for key, value in fields.items():
                txn[key] = _iso_date(value) if key in ("date", "authorized_date") else copy.deepcopy(value)
            item.current[transaction_id] = txn
            item.log.append(("modified", copy.deepcopy(txn)))
            return copy.deepcopy(txn)

    def remove_transaction(self, item_id: str, transaction_id: str) -> None:
        """Removes a current transaction; appends a "removed" event."""
        with self._lock:
            item = self._items[item_id]
            txn = item.current.pop(transaction_id, None)
            if txn is None:
                raise KeyError(f"no current transaction {transaction_id} in item {item_id}")
            item.log.append(("removed", {"transaction_id": transaction_id, "account_id": txn["account_id"]}))

    def transactions(self, item_id: str) -> list[dict]:
        """The item's current transactions (latest forms), in the order added."""
        with self._lock:
            return copy.deepcopy(list(self._items[item_id].current.values()))

    def fail_next(
        self,
        path: str,
        *,
        status: int = 500,
        error_type: str = "API_ERROR",
        error_code: str = "INTERNAL_SERVER_ERROR",
        times: int = 1,
        error_message: str = "an unexpected error occurred",
    ) -> None:
        """The next `times` requests to `path` answer this error object
        (before credentials are checked)."""
        with self._lock:
            self._failures.setdefault(path, []).extend(
                PlaidError(status, error_type, error_code, error_message) for _ in range(times)
            )

    def set_item_error(self, item_id: str, error_code: str = "ITEM_LOGIN_REQUIRED") -> None:
        """/accounts/get and /transactions/sync for the item answer 400 ITEM_ERROR/`error_code`."""
        with self._lock:
            self._items[item_id].error_code = error_code

    def clear_item_error(self, item_id: str) -> None:
        with self._lock:
            self._items[item_id].error_code = None

    # -- filling defaults ------------------------------------------------

    @staticmethod
    def _fill_account(account: dict, index: int) -> dict:
        a = copy.deepcopy(account)
        a.setdefault("account_id", f"acc-{uuid.uuid4().hex[:20]}")
        a.setdefault("name", "Plaid Checking" if index == 0 else f"Plaid Account {index + 1}")
        a.setdefault("official_name", f"{a['name']} Official")
        a.setdefault("type", "depository")
        a.setdefault("subtype", "checking" if a["type"] == "depository" else None)
        a.setdefault("mask", f"{(index + 1) % 10000:04d}")
        balances = {"available": 100.0, "current": 110.0, "iso_currency_code": "USD", "limit": None,
                    "unofficial_currency_code": None}
        balances.update(a.get("balances") or {})
        a["balances"] = balances
        a.setdefault("persistent_account_id", None)
        return a

    def _add_transaction(self, item: _Item, txn: dict) -> dict:
        t = {k: (_iso_date(v) if k in ("date", "authorized_date") else copy.deepcopy(v)) for k, v in txn.items()}
        t.setdefault("transaction_id", f"txn-{uuid.uuid4().hex[:24]}")
        if t["transaction_id"] in item.known_ids:
            raise ValueError(f"transaction {t['transaction_id']} already exists in item {item.item_id}")
        t.setdefault("account_id", item.accounts[0]["account_id"])
        t.setdefault("amount", 1.0)
        t.setdefault("iso_currency_code", "USD")
        t.setdefault("unofficial_currency_code", None)
        t.setdefault("date", dt.date.today().isoformat())
        t.setdefault("authorized_date", t["date"])
        t.setdefault("datetime", None)
        t.setdefault("authorized_datetime", None)
        t.setdefault("name", "Transaction")
        t.setdefault("merchant_name", None)
        t.setdefault("merchant_entity_id", None)
        t.setdefault("logo_url", None)
        t.setdefault("website", None)
        t.setdefault("pending", False)
        t.setdefault("pending_transaction_id", None)
        t.setdefault("payment_channel", "other")
        t.setdefault("transaction_type", "special")
        t.setdefault("transaction_code", None)
        t.setdefault("check_number", None)
        t.setdefault("account_owner", None)
        t.setdefault(
            "personal_finance_category",
            {"primary": "GENERAL_MERCHANDISE", "detailed": "GENERAL_MERCHANDISE_OTHER_GENERAL_MERCHANDISE",
             "confidence_level": "LOW"},
        )
        t.setdefault("category", None)
        t.setdefault("category_id", None)
        t.setdefault(
            "location",
            {"address": None, "city": None, "region": None, "postal_code": None, "country": None,
             "lat": None, "lon": None, "store_number": None},
        )
        t.setdefault("payment_meta", {})
        t.setdefault("counterparties", [])
        item.known_ids.add(t["transaction_id"])
        item.current[t["transaction_id"]] = t
        item.log.append(("added", copy.deepcopy(t)))
        return t

    # -- request handling -------------------------------------------------

    def _handle(self, path: str, headers: Any, raw: bytes) -> tuple[int, dict[str, Any]]:
        try:
            body: Any = json.loads(raw.decode("utf-8")) if raw else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        with self._lock:
            self.requests.append((path, copy.deepcopy(body)))
            failures = self._failures.get(path)
            failure = failures.pop(0) if failures else None
        if failure is not None:
            return failure.status, failure.body()
        try:
            if body is None or not isinstance(body, dict):
                raise _invalid_request("INVALID_BODY", "body could not be parsed as JSON")
            client_id = body.get("client_id") or headers.get("PLAID-CLIENT-ID")
            secret = body.get("secret") or headers.get("PLAID-SECRET")
            if client_id != self.client_id or secret != self.secret:
                raise _invalid_input(
                    "INVALID_API_KEYS", "invalid client_id or secret provided"
                )
            route = _ROUTES.get(path)
            if route is None:
                raise PlaidError(404, "INVALID_REQUEST", "NOT_FOUND", f"unknown endpoint {path}")
            with self._lock:
                result = route(self, body)
        except PlaidError as e:
            return e.status, e.body()
        result["request_id"] = _request_id()
        return 200, result

    @staticmethod
    def _require(body: dict, *fields: str) -> None:
        missing = []
        for field in fields:
            value: Any = body
            for part in field.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is None or value == "" or value == []:
                missing.append(field)
        if missing:
            raise _invalid_request(
                "MISSING_FIELDS", "the following required fields are missing: " + ", ".join(missing)
            )

    def _item_for(self, body: dict, check_error: bool = True) -> _Item:
        self._require(body, "access_token")
        item = self._by_access.get(body["access_token"]) if isinstance(body["access_token"], str) else None
        if item is None:
            raise _invalid_input("INVALID_ACCESS_TOKEN", "provided access token is in an invalid format or does not exist")
        if check_error and item.error_code:
            raise PlaidError(
                400, "ITEM_ERROR", item.error_code,
                "the login details of this item have changed (credentials, MFA, or required user action) "
                "and a user login is required to update this information",
                "To update your credentials, please log in to your bank.",
            )
        return item

    def _item_json(self, item: _Item) -> dict[str, Any]:
        return {
            "item_id": item.item_id,
            "institution_id": item.institution_id,
            "products": ["transactions"],
            "billed_products": ["transactions"],
            "available_products": ["balance"],
            "consented_products": ["transactions"],
            "webhook": item.webhook,
            "error": None,
            "consent_expiration_time": None,
            "update_type": "background",
        }

    def _link_token_create(self, body: dict) -> dict[str, Any]:
        self._require(body, "client_name", "user.client_user_id", "country_codes", "language")
        if body.get("access_token"):
            self._item_for(body, check_error=False)
        elif not isinstance(body.get("products"), list) or not body["products"]:
            raise _invalid_request("MISSING_FIELDS", "the following required fields are missing: products")
        token = f"link-sandbox-{uuid.uuid4()}"
        expiration = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
        self._link_tokens[token] = {"expiration": expiration, "request": copy.deepcopy(body)}
        return {"link_token": token, "expiration": expiration}

    def _exchange(self, body: dict) -> dict[str, Any]:
        self._require(body, "public_token")
        entry = self._public_tokens.get(body["public_token"]) if isinstance(body["public_token"], str) else None
        if entry is None or entry["expired"]:
            raise _invalid_input("INVALID_PUBLIC_TOKEN", "provided public token is expired. Public tokens expire 30 minutes after creation at which point they can no longer be exchanged")
        item = self._items[entry["item_id"]]
        return {"access_token": item.access_token, "item_id": item.item_id}

    def _accounts_get(self, body: dict) -> dict[str, Any]:
        item = self._item_for(body)
        return {"accounts": copy.deepcopy(item.accounts), "item": self._item_json(item)}

    def _item_get(self, body: dict) -> dict[str, Any]:
        item = self._item_for(body, check_error=False)
        out = self._item_json(item)
        if item.error_code:
            out["error"] = {"error_type": "ITEM_ERROR", "error_code": item.error_code, "error_message": "",
                            "display_message": None}
        return {"item": out, "status": None}

    def _item_remove(self, body: dict) -> dict[str, Any]:
        item = self._item_for(body, check_error=False)
        del self._by_access[item.access_token]
        return {}

    def _institution_get(self, body: dict) -> dict[str, Any]:
        self._require(body, "institution_id", "country_codes")
        inst = self._institutions.get(body["institution_id"]) if isinstance(body["institution_id"], str) else None
        if inst is None:
            raise _invalid_input("INVALID_INSTITUTION", "invalid institution_id provided")
        return {"institution": copy.deepcopy(inst)}

    # Cursors: urlsafe base64 of JSON {"i": item_id, "p": log position} or,
    # inside the pages of a from-the-beginning snapshot, {"i", "p", "o": offset}.
    @staticmethod
    def _encode_cursor(item_id: str, pos: int, offset: int | None = None) -> str:
        data: dict[str, Any] = {"i": item_id, "p": pos}
        if offset is not None:
            data["o"] = offset
        return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")

    @staticmethod
    def _decode_cursor(item: _Item, cursor: str) -> tuple[int, int | None]:
        try:
            data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            pos, offset = data["p"], data.get("o")
            ok = (data["i"] == item.item_id and isinstance(pos, int) and 0 <= pos <= len(item.log)
                  and (offset is None or (isinstance(offset, int) and offset >= 0)))
        except (binascii.Error, ValueError, KeyError, TypeError, UnicodeDecodeError):
            ok = False
        if not ok:
            raise _invalid_input("INVALID_CURSOR", "cursor is not valid for this item")
        return pos, offset

    @staticmethod
    def _snapshot(item: _Item, pos: int) -> list[dict[str, Any]]:
        state: dict[str, dict[str, Any]] = {}
        for kind, txn in item.log[:pos]:
            if kind == "removed":
                state.pop(txn["transaction_id"], None)
            else:
                state[txn["transaction_id"]] = txn
        return list(state.values())

    def _transactions_sync(self, body: dict) -> dict[str, Any]:
        item = self._item_for(body)
        count = body.get("count", 100)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 500:
            raise _invalid_request("INVALID_FIELD", "count must be an integer between 1 and 500")
        cursor = body.get("cursor") or ""
        if not isinstance(cursor, str):
            raise _invalid_input("INVALID_CURSOR", "cursor must be a string")
        added: list[dict] = []
        modified: list[dict] = []
        removed: list[dict] = []
        if cursor == "" or self._decode_cursor(item, cursor)[1] is not None:
            # From the beginning: the snapshot at log position `pos`, paged.
            if cursor == "":
                pos, offset = len(item.log), 0
            else:
                pos, offset = self._decode_cursor(item, cursor)
                assert offset is not None
            snapshot = self._snapshot(item, pos)
            added = copy.deepcopy(snapshot[offset:offset + count])
            end = offset + len(added)
            if end < len(snapshot):
                next_cursor, has_more = self._encode_cursor(item.item_id, pos, end), True
            else:
                next_cursor, has_more = self._encode_cursor(item.item_id, pos), pos < len(item.log)
        else:
            pos, _ = self._decode_cursor(item, cursor)
            events = item.log[pos:pos + count]
            state: dict[str, tuple[str, dict]] = {}  # insertion-ordered per transaction id
            for kind, txn in events:
                tid = txn["transaction_id"]
                prev = state.get(tid)
                if kind == "added":
                    state[tid] = ("added", txn)
                elif kind == "modified":
                    state[tid] = ("added" if prev and prev[0] == "added" else "modified", txn)
                elif prev and prev[0] == "added":
                    del state[tid]
                else:
                    state[tid] = ("removed", txn)
            for kind, txn in state.values():
                {"added": added, "modified": modified, "removed": removed}[kind].append(copy.deepcopy(txn))
            new_pos = pos + len(events)
            next_cursor, has_more = self._encode_cursor(item.item_id, new_pos), new_pos < len(item.log)
        return {
            "added": added,
            "modified": modified,
            "removed": removed,
            "next_cursor": next_cursor,
            "has_more": has_more,
            "accounts": copy.deepcopy(item.accounts),
            "transactions_update_status": "HISTORICAL_UPDATE_COMPLETE",
        }


_ROUTES = {
    "/link/token/create": PlaidStandin._link_token_create,
    "/item/public_token/exchange": PlaidStandin._exchange,
    "/accounts/get": PlaidStandin._accounts_get,
    "/item/get": PlaidStandin._item_get,
    "/item/remove": PlaidStandin._item_remove,
    "/institutions/get_by_id": PlaidStandin._institution_get,
    "/transactions/sync": PlaidStandin._transactions_sync,
}


class _Handler(BaseHTTPRequestHandler):
    owner: PlaidStandin
    protocol_version = "HTTP/1.1"
    server_version = "PlaidStandin/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Plaid-Request-Id", str(body.get("request_id", "")))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        path = self.path.split("?", 1)[0]
        status, body = self.owner._handle(path, self.headers, raw)
        self._send(status, body)

    def _not_allowed(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > 0:
            self.rfile.read(length)
        self._send(405, PlaidError(405, "INVALID_REQUEST", "METHOD_NOT_ALLOWED", "only POST is supported").body())

    do_GET = do_PUT = do_DELETE = do_PATCH = _not_allowed  # noqa: N815
