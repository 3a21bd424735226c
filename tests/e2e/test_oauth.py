"""OAuth 2.1 in the gateway (docs/oauth.md): discovery, dynamic registration
and client ID metadata documents, the consent page (password and one-time
code logins), PKCE, resource binding, expiry, refresh rotation with reuse
detection, revocation, and user isolation, driven by raw HTTP and by the
official SDK's OAuthClientProvider."""

from __future__ import annotations

import base64
import hashlib
import html
import http.server
import json
import secrets
import ssl
import subprocess
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import anyio
import httpx2 as httpx
import pytest
from conftest import (
    DATABASE,
    Client,
    admin_dsn,
    authed_client,
    create_mcp_http_client,
    create_token,
    error,
    free_port,
    gateway_env,
    mcp_bin,
    new_user,
    ok,
    streamable_http_client,
    token_cli,
)
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

pytestmark = pytest.mark.anyio

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
NOTE = {"entities": [{"entity_type": "note", "title": "oauth note", "content": "x"}]}
REDIRECTS = (302, 303)


# --- Logins (the operator's CLI) ----------------------------------------------


def login_cli(*args: str, password: str | None = None) -> subprocess.CompletedProcess:
    """Runs `neotoma-mcp login …` against the test database as its owner."""
    env = gateway_env(NEOTOMA_LOGIN_PASSWORD=password) if password is not None else gateway_env()
    done = subprocess.run(
        [mcp_bin(), "login", *args, "--database-url", admin_dsn(DATABASE)],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"`login {' '.join(args)}` failed: {done.stderr.strip()}"
    return done


def password_login(user: str) -> dict[str, str]:
    """Gives `user` a username and password; answers the consent form's fields."""
    username, password = f"u{secrets.token_hex(6)}", secrets.token_urlsafe(12)
    login_cli("set", "--user", user, "--username", username, password=password)
    return {"username": username, "password": password}


def code_login(user: str) -> dict[str, str]:
    """A one-time code for `user`, as the consent form's field."""
    code = login_cli("code", "--user", user).stdout.strip()
    assert code and len(code.split()) == 1, f"`login code` printed {code!r}"
    return {"code": code}


# --- Clients, PKCE, tokens ----------------------------------------------------


def pkce() -> tuple[str, str]:
    """A code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def loopback_redirect() -> str:
    """A redirect URI on the loopback (nothing needs to listen there)."""
    return f"http://127.0.0.1:{free_port()}/callback"


def register(base: str, **metadata: Any) -> dict[str, Any]:
    """A dynamically registered client (public unless told otherwise)."""
    body = {
        "client_name": "Neotoma e2e agent",
        "redirect_uris": [loopback_redirect()],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    r = httpx.post(f"{base}/register", json=body)
    assert r.status_code == 201, r.text
    client = r.json()
    assert client["client_id"] and client["redirect_uris"] == body["redirect_uris"]
    return client


def authorize_params(base: str, client: dict[str, Any], challenge: str, state: str, **overrides: str) -> dict[str, str]:
    params = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": client["redirect_uris"][0],
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{base}/mcp",
        "scope": "memory",
        **overrides,
    }
    return {k: v for k, v in params.items() if v is not None}


def token(base: str, **data: str) -> httpx.Response:
    return httpx.post(f"{base}/token", data=data)


def exchange(base: str, client: dict[str, Any], code: str, verifier: str, **extra: str) -> httpx.Response:
    """POST /token with the authorization_code grant."""
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": client["redirect_uris"][0],
            "client_id": client["client_id"], "code_verifier": verifier, "resource": f"{base}/mcp"}  # fmt: skip
    return token(base, **{**data, **extra})


def refresh(base: str, client: dict[str, Any], refresh_token: str) -> httpx.Response:
    return token(base, grant_type="refresh_token", refresh_token=refresh_token, client_id=client["client_id"],
                 resource=f"{base}/mcp")  # fmt: skip


def issued(r: httpx.Response) -> dict[str, Any]:
    """A successful token answer, checked for its shape."""
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"] == "Bearer"
    assert body["access_token"].startswith("nta_") and body["refresh_token"].startswith("ntr_")
    assert isinstance(body["expires_in"], int) and body["expires_in"] > 0
    assert {"memory", "memory:read"} & set(body["scope"].split())
    assert "operator" not in body["scope"].split()
    return body


def oauth_error(r: httpx.Response, status: int = 400) -> str:
    """The `error` of an OAuth error answer (RFC 6749 5.2)."""
    assert r.status_code == status, f"{r.status_code}: {r.text}"
    return r.json()["error"]


def mcp(gw_url: str, access_token: str) -> httpx.Response:
    """An MCP initialize with a bearer token: 200 if the token is accepted."""
    return httpx.post(gw_url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {access_token}"})


def metadata_pointer(base: str) -> str:
    return f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'


def assert_refused(r: httpx.Response, base: str) -> None:
    """401 invalid_token with the pointer to `base`'s resource metadata."""
    assert r.status_code == 401, r.text
    challenge = r.headers["www-authenticate"]
    assert challenge.startswith("Bearer") and 'error="invalid_token"' in challenge, challenge
    assert metadata_pointer(base) in challenge, challenge


# --- The browser on the consent page -------------------------------------------


class _Forms(HTMLParser):
    """The forms of a page: action, method, the fields a browser submits
    (hidden and text inputs with their values, checked boxes) and the submit
    buttons as (name, value)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self._form: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self._form = {"action": a.get("action", ""), "method": a.get("method", "get").lower(),
                          "fields": {}, "buttons": []}  # fmt: skip
            self.forms.append(self._form)
        elif self._form is not None and tag in ("input", "button", "textarea", "select") and a.get("name"):
            kind = a.get("type", "submit" if tag == "button" else "text").lower()
            if kind in ("submit", "image"):
                self._form["buttons"].append((a["name"], a.get("value", "")))
            elif kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._form["fields"][a["name"]] = a.get("value", "on")
            elif kind not in ("button", "reset", "file"):
                self._form["fields"][a["name"]] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None


class ConsentPage:
    """GET /authorize as a browser (no redirects followed, cookies kept)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(follow_redirects=False, timeout=30)
        self.response = self.http.get(url)
        self.forms: list[dict[str, Any]] = []
        if self.response.status_code == 200:
            parser = _Forms()
            parser.feed(self.response.text)
            self.forms = [f for f in parser.forms if f["method"] == "post"]

    @property
    def text(self) -> str:
        return html.unescape(self.response.text)

    def form(self, login: dict[str, str]) -> dict[str, Any]:
        """The form that takes this kind of login and has the decision buttons."""
        for f in self.forms:
            if set(login) <= set(f["fields"]) and any(name == "decision" for name, _ in f["buttons"]):
                return f
        raise AssertionError(f"no consent form takes {sorted(login)}: {self.forms}\n{self.response.text[:2000]}")

    def submit(self, login: dict[str, str], decision: str = "allow") -> httpx.Response:
        f = self.form(login)
        assert ("decision", decision) in f["buttons"], f["buttons"]
        data = {**f["fields"], **login, "decision": decision}
        return self.http.post(urljoin(self.url, f["action"] or self.url), data=data)


def authorize(base: str, params: dict[str, str], login: dict[str, str], decision: str = "allow") -> httpx.Response:
    """Drives the consent page: the answer to GET /authorize if it does not
    show the page (a redirect or an error page), else the answer to the form."""
    page = ConsentPage(f"{base}/authorize?{urlencode(params)}")
    if page.response.status_code != 200:
        return page.response
    assert "text/html" in page.response.headers["content-type"]
    return page.submit(login, decision)


def redirected(r: httpx.Response, redirect_uri: str) -> dict[str, str]:
    """The query of a redirect to `redirect_uri` (one value per name)."""
    assert r.status_code in REDIRECTS, f"expected a redirect, got {r.status_code}: {r.text[:1000]}"
    parts = urlsplit(r.headers["location"])
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == redirect_uri, r.headers["location"]
    query = parse_qs(parts.query)
    assert all(len(v) == 1 for v in query.values()), query
    return {k: v[0] for k, v in query.items()}


def not_redirected(r: httpx.Response) -> None:
    """Refused on the page: no redirect (so no code) went anywhere."""
    assert r.status_code not in (301, 302, 303, 307, 308), f"redirected to {r.headers.get('location')}"
    assert "location" not in r.headers


def allow(base: str, client: dict[str, Any], login: dict[str, str]) -> tuple[str, str]:
    """An authorization the owner allows: the code and its verifier."""
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    q = redirected(authorize(base, authorize_params(base, client, challenge, state), login), client["redirect_uris"][0])
    assert q["state"] == state and q["iss"] == base and "error" not in q, q
    return q["code"], verifier


def grant(base: str, login: dict[str, str], client: dict[str, Any] | None = None) -> dict[str, Any]:
    """Tokens for `login` through the whole flow (registering a public client if none is given)."""
    client = client or register(base)
    code, verifier = allow(base, client, login)
    return {**issued(exchange(base, client, code, verifier)), "client": client}


# --- The SDK's client --------------------------------------------------------------


class MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Owner:
    """Plays the owner in the SDK's flow: the redirect handler opens the consent
    page and allows with `login`; the callback handler answers the redirect."""

    def __init__(self, login: dict[str, str], redirect_uri: str) -> None:
        self.login, self.redirect_uri = login, redirect_uri
        self.authorize_url: str | None = None
        self.page: ConsentPage | None = None
        self.query: dict[str, str] | None = None

    def _browse(self, url: str) -> None:
        self.page = ConsentPage(url)
        assert self.page.response.status_code == 200, self.page.response.text
        self.query = redirected(self.page.submit(self.login), self.redirect_uri)

    async def redirect_handler(self, url: str) -> None:
        self.authorize_url = url
        await anyio.to_thread.run_sync(self._browse, url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.query is not None
        return AuthorizationCodeResult(code=self.query["code"], state=self.query.get("state"), iss=self.query.get("iss"))


def sdk_client(gw_url: str, owner: Owner, storage: MemoryStorage, client_metadata_url: str | None = None) -> Client:
    metadata = OAuthClientMetadata(
        client_name="Neotoma SDK agent",
        redirect_uris=[owner.redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider = OAuthClientProvider(
        gw_url, metadata, storage, owner.redirect_handler, owner.callback_handler, client_metadata_url=client_metadata_url
    )
    return Client(streamable_http_client(gw_url, http_client=create_mcp_http_client(auth=provider)))


# --- Tests -----------------------------------------------------------------------------


def test_discovery(start_gateway) -> None:
    """A 401 points at the protected resource metadata, which names this
    gateway as the authorization server, whose metadata lists the endpoints."""
    gw = start_gateway(auth=True)
    r = httpx.post(gw.url, json=INIT, headers=HEADERS)
    assert r.status_code == 401
    challenge = r.headers["www-authenticate"]
    assert challenge.startswith("Bearer") and metadata_pointer(gw.base) in challenge, challenge
    assert "error=" not in challenge, "no token presented, so no error"
    assert_refused(mcp(gw.url, "nta_" + secrets.token_hex(32)), gw.base)

    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        prm = httpx.get(f"{gw.base}{path}")
        assert prm.status_code == 200, path
        doc = prm.json()
        assert doc["resource"] == f"{gw.base}/mcp" and doc["authorization_servers"] == [gw.base], doc
        assert doc["scopes_supported"] == ["memory", "memory:read"], doc

    asm = httpx.get(f"{gw.base}/.well-known/oauth-authorization-server")
    assert asm.status_code == 200
    meta = asm.json()
    assert meta["issuer"] == gw.base
    assert meta["authorization_endpoint"] == f"{gw.base}/authorize"
    assert meta["token_endpoint"] == f"{gw.base}/token"
    assert meta["registration_endpoint"] == f"{gw.base}/register"
    assert meta["revocation_endpoint"] == f"{gw.base}/revoke"
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["client_id_metadata_document_supported"] is True
    assert "code" in meta["response_types_supported"]
    if "grant_types_supported" in meta:
        assert {"authorization_code", "refresh_token"} <= set(meta["grant_types_supported"])
    if "token_endpoint_auth_methods_supported" in meta:
        assert "none" in meta["token_endpoint_auth_methods_supported"]


async def test_sdk_flow_with_dynamic_registration(start_gateway, admin_db) -> None:
    """The SDK discovers, registers a public client, sends the owner to the
    consent page (password login), exchanges the code, and its MCP session
    stores and reads as the login's user."""
    user = new_user()
    gw = start_gateway(auth=True)
    owner = Owner(password_login(user), loopback_redirect())
    storage = MemoryStorage()
    async with sdk_client(gw.url, owner, storage) as c:
        assert "store" in {t.name for t in (await c.list_tools()).tools}
        stored = ok(await c.call_tool("store", NOTE))
        entity = stored["entities"][0]["entity_id"]
        listed = ok(await c.call_tool("retrieve_entities", {}))
        assert listed["total"] == 1 and listed["entities"][0]["id"] == entity

    assert owner.authorize_url and owner.authorize_url.startswith(f"{gw.base}/authorize?")
    asked = parse_qs(urlsplit(owner.authorize_url).query)
    assert asked["code_challenge_method"] == ["S256"] and asked["resource"] == [f"{gw.base}/mcp"]
    assert "Neotoma SDK agent" in owner.page.text, "the consent page names the client"
    assert owner.query["iss"] == gw.base
    assert storage.client_info.token_endpoint_auth_method == "none" and storage.client_info.client_secret is None
    assert storage.tokens.access_token.startswith("nta_") and storage.tokens.refresh_token.startswith("ntr_")
    # The data is the login's user's, and `token list` shows what OAuth issued.
    assert admin_db.execute("SELECT user_id::text FROM neotoma.entities WHERE id = %s", (entity,)).fetchone()[0] == user
    assert any(t["user_id"] == user for t in json.loads(token_cli("list").stdout))


def test_consent_page_names_the_client_and_cannot_be_framed(start_gateway) -> None:
    """The page shows the client's name (escaped) and where it sends the
    browser, refuses framing and is not cached."""
    gw = start_gateway(auth=True)
    client = register(gw.base, client_name="<script>alert(1)</script> Agent")
    _, challenge = pkce()
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(authorize_params(gw.base, client, challenge, 'st'))}")
    assert page.response.status_code == 200, page.response.text
    assert "<script>alert(1)</script>" not in page.response.text, "client_name is escaped"
    assert "<script>alert(1)</script> Agent" in page.text
    assert urlsplit(client["redirect_uris"][0]).netloc in page.text
    assert page.response.headers["x-frame-options"].upper() == "DENY"
    assert "frame-ancestors 'none'" in page.response.headers["content-security-policy"]
    assert "no-store" in page.response.headers["cache-control"]
    page.form({"username": "", "password": ""})
    page.form({"code": ""})


def test_one_time_code_works_once(start_gateway) -> None:
    """A one-time code logs in once; the same code again is refused on the page."""
    user = new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    login = code_login(user)
    code, verifier = allow(gw.base, client, login)
    tokens = issued(exchange(gw.base, client, code, verifier))
    assert mcp(gw.url, tokens["access_token"]).status_code == 200

    _, challenge = pkce()
    again = authorize(gw.base, authorize_params(gw.base, client, challenge, "second"), login)
    not_redirected(again)


def test_wrong_password_is_refused_and_deny_is_access_denied(start_gateway) -> None:
    """A wrong password or unknown username issues nothing; Deny goes back
    with access_denied and the state."""
    user = new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    login = password_login(user)
    _, challenge = pkce()
    params = authorize_params(gw.base, client, challenge, "s1")
    not_redirected(authorize(gw.base, params, {**login, "password": login["password"] + "x"}))
    not_redirected(authorize(gw.base, params, {**login, "username": "nobody-" + secrets.token_hex(4)}))
    allow(gw.base, client, login)

    denied = redirected(authorize(gw.base, params, login, decision="deny"), client["redirect_uris"][0])
    assert denied["error"] == "access_denied" and denied["state"] == "s1" and "code" not in denied


def test_pkce_and_single_use_codes(start_gateway) -> None:
    """A wrong verifier is invalid_grant; a code used twice is invalid_grant and
    revokes what its first use got; `plain` and a missing challenge are refused."""
    user = new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    login = password_login(user)

    code, verifier = allow(gw.base, client, login)
    assert oauth_error(exchange(gw.base, client, code, pkce()[0])) == "invalid_grant"

    code, verifier = allow(gw.base, client, login)
    first = issued(exchange(gw.base, client, code, verifier))
    assert mcp(gw.url, first["access_token"]).status_code == 200
    assert oauth_error(exchange(gw.base, client, code, verifier)) == "invalid_grant"
    assert_refused(mcp(gw.url, first["access_token"]), gw.base)
    assert oauth_error(refresh(gw.base, client, first["refresh_token"])) == "invalid_grant"

    # Refused on a page, never sent to the redirect URI (no open redirector).
    verifier, _ = pkce()
    plain = authorize(gw.base, authorize_params(gw.base, client, verifier, "p", code_challenge_method="plain"), login)
    not_redirected(plain)
    assert plain.status_code == 400 and "invalid_request" in plain.text
    missing = authorize(gw.base, authorize_params(gw.base, client, None, "m", code_challenge_method=None), login)
    not_redirected(missing)
    assert missing.status_code == 400 and "invalid_request" in missing.text


def test_authorize_request_errors(start_gateway) -> None:
    """An unknown client or unregistered redirect URI gets an error page; so
    does a foreign resource (invalid_target), operator scope (invalid_scope)
    or another response type (unsupported_response_type): a request nobody
    saw a consent page for is never sent to a redirect URI, or anyone who
    registers a client would have an open redirector (docs/oauth.md)."""
    gw = start_gateway(auth=True)
    client = register(gw.base)
    login = {"username": "x", "password": "y"}
    _, challenge = pkce()
    redirect = client["redirect_uris"][0]

    stranger = authorize_params(gw.base, {**client, "client_id": "nope"}, challenge, "s")
    unknown = ConsentPage(f"{gw.base}/authorize?{urlencode(stranger)}")
    not_redirected(unknown.response)
    assert 400 <= unknown.response.status_code < 500
    registered = urlsplit(redirect)
    elsewhere = authorize_params(gw.base, client, challenge, "s",
                                 redirect_uri=f"http://{registered.netloc}/elsewhere")  # fmt: skip
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(elsewhere)}")
    not_redirected(page.response)
    assert 400 <= page.response.status_code < 500

    for overrides, expected in (
        ({"resource": "http://elsewhere.example/mcp"}, "invalid_target"),
        ({"scope": "operator"}, "invalid_scope"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ):
        r = authorize(gw.base, authorize_params(gw.base, client, challenge, "st", **overrides), login)
        not_redirected(r)
        assert r.status_code == 400 and expected in r.text, (overrides, r.text[:500])
        assert redirect not in r.text, "the page offers no way to the redirect URI"


async def test_tokens_are_bound_to_their_gateway(start_gateway) -> None:
    """Two gateways on one database: a token from A is invalid_token on B (with
    B's metadata pointer) and works on A; A will not issue a token for B."""
    user = new_user()
    a, b = start_gateway(auth=True), start_gateway(auth=True)
    login = password_login(user)
    tokens = grant(a.base, login)
    assert_refused(mcp(b.url, tokens["access_token"]), b.base)
    assert mcp(a.url, tokens["access_token"]).status_code == 200
    async with authed_client(a.url, tokens["access_token"]) as c:
        ok(await c.call_tool("store", NOTE))

    client = tokens["client"]
    code, verifier = allow(a.base, client, login)
    assert oauth_error(exchange(a.base, client, code, verifier, resource=f"{b.base}/mcp")) == "invalid_target"


async def test_read_only_grants(start_gateway) -> None:
    """A client that asks for `memory:read`, or an owner who ticks "Read
    only" on the consent page, gets read-only tokens, refreshed ones too:
    reads answer, every write is FORBIDDEN; `token list` shows them
    read-only. The owner can narrow a grant, never widen it."""
    user = new_user()
    gw = start_gateway(auth=True)
    login = password_login(user)
    full = grant(gw.base, login)
    async with authed_client(gw.url, full["access_token"]) as c:
        ok(await c.call_tool("store", NOTE))

    # The client asks to read only: the page says so and offers nothing more.
    client = register(gw.base)
    verifier, challenge = pkce()
    params = authorize_params(gw.base, client, challenge, "s1", scope="memory:read offline_access")
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(params)}")
    assert "not to change it" in page.text and 'name="read_only"' not in page.response.text
    q = redirected(page.submit(login), client["redirect_uris"][0])
    asked = issued(exchange(gw.base, client, q["code"], verifier))
    assert asked["scope"] == "memory:read offline_access"

    # The owner narrows a client that asked for everything.
    client2 = register(gw.base)
    verifier2, challenge2 = pkce()
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(authorize_params(gw.base, client2, challenge2, 's2'))}")
    assert "read and write" in page.text
    f = page.form(login)
    r = page.http.post(urljoin(page.url, f["action"]), data={**f["fields"], **login, "read_only": "on", "decision": "allow"})
    narrowed = issued(exchange(gw.base, client2, redirected(r, client2["redirect_uris"][0])["code"], verifier2))
    assert narrowed["scope"] == "memory:read"

    for tokens in (asked, narrowed, issued(refresh(gw.base, client, asked["refresh_token"]))):
        async with authed_client(gw.url, tokens["access_token"]) as c:
            assert ok(await c.call_tool("retrieve_entities", {}))["total"] == 1
            refused = error(await c.call_tool("store", NOTE))
            assert (refused["code"], refused["details"]["limit"]) == ("FORBIDDEN", "read_only")
            assert error(await c.call_tool("delete_entity", {"entity_id": "ent_x"}))["code"] == "FORBIDDEN"
    listed = [t for t in json.loads(token_cli("list").stdout) if t["user_id"] == user]
    assert sorted(t["read_only"] for t in listed) == [False, True, True, True], listed


async def test_workspace_grants(start_gateway) -> None:
    """A client that asks for `workspace:<name>` scopes, or an owner who
    names workspaces on the consent page, gets tokens that reach only those
    workspaces (refreshed ones too); the owner can name only workspaces the
    client asked for, if it asked for some."""
    user = new_user()
    gw = start_gateway(auth=True)
    login = password_login(user)
    full = grant(gw.base, login)
    async with authed_client(gw.url, full["access_token"]) as c:
        for w in ("team", "secret"):
            ok(await c.call_tool("store", {**NOTE, "workspace": w}))

    # The client asks for one workspace: the page says so.
    client = register(gw.base)
    verifier, challenge = pkce()
    params = authorize_params(gw.base, client, challenge, "w1", scope="memory offline_access workspace:team")
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(params)}")
    assert "in the workspaces team only" in page.text
    asked = issued(exchange(gw.base, client, redirected(page.submit(login), client["redirect_uris"][0])["code"], verifier))
    assert asked["scope"] == "memory offline_access workspace:team"

    # The owner names the workspace for a client that asked for everything.
    client2 = register(gw.base)
    verifier2, challenge2 = pkce()
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(authorize_params(gw.base, client2, challenge2, 'w2'))}")
    f = page.form(login)
    r = page.http.post(urljoin(page.url, f["action"]), data={**f["fields"], **login, "workspaces": "team", "decision": "allow"})
    narrowed = issued(exchange(gw.base, client2, redirected(r, client2["redirect_uris"][0])["code"], verifier2))
    assert narrowed["scope"] == "memory workspace:team"

    # Never one the client did not ask for.
    client3 = register(gw.base)
    _, challenge3 = pkce()
    params3 = authorize_params(gw.base, client3, challenge3, "w3", scope="memory workspace:team")
    page = ConsentPage(f"{gw.base}/authorize?{urlencode(params3)}")
    f = page.form(login)
    r = page.http.post(urljoin(page.url, f["action"]), data={**f["fields"], **login, "workspaces": "secret", "decision": "allow"})
    assert r.status_code == 400 and "was not asked for" in html.unescape(r.text)

    for tokens in (asked, narrowed, issued(refresh(gw.base, client, asked["refresh_token"]))):
        async with authed_client(gw.url, tokens["access_token"]) as c:
            found = ok(await c.call_tool("retrieve_entities", {"workspace": "*"}))
            assert found["total"] == 1 and found["workspace_context"]["workspaces"] == ["team"]
            refused = error(await c.call_tool("retrieve_entities", {"workspace": "secret"}))
            assert (refused["code"], refused["details"]["limit"]) == ("FORBIDDEN", "workspaces")
    listed = [t for t in json.loads(token_cli("list").stdout) if t["user_id"] == user]
    assert sorted(str(t["workspaces"]) for t in listed) == ["None", "['team']", "['team']", "['team']"], listed


def test_expiry_refresh_rotation_and_reuse_detection(start_gateway) -> None:
    """An expired access token is refused with the metadata pointer; a refresh
    rotates both tokens; replaying the spent refresh token revokes the grant."""
    user = new_user()
    gw = start_gateway(auth=True, NEOTOMA_OAUTH_ACCESS_TOKEN_SECS="2")
    tokens = grant(gw.base, password_login(user))
    client = tokens["client"]
    assert tokens["expires_in"] <= 2
    for _ in range(60):
        expired = mcp(gw.url, tokens["access_token"])
        if expired.status_code == 401:
            break
        assert expired.status_code == 200
        time.sleep(0.2)
    assert_refused(expired, gw.base)

    rotated = issued(refresh(gw.base, client, tokens["refresh_token"]))
    assert rotated["access_token"] != tokens["access_token"] and rotated["refresh_token"] != tokens["refresh_token"]
    assert mcp(gw.url, rotated["access_token"]).status_code == 200

    # The spent refresh token again: refused, and the whole grant is revoked.
    assert oauth_error(refresh(gw.base, client, tokens["refresh_token"])) == "invalid_grant"
    assert_refused(mcp(gw.url, rotated["access_token"]), gw.base)
    assert oauth_error(refresh(gw.base, client, rotated["refresh_token"])) == "invalid_grant"


def test_revocation(start_gateway) -> None:
    """Revoking a refresh token or an access token ends the whole grant; a
    garbage token is answered 200 too."""
    user = new_user()
    gw = start_gateway(auth=True)
    login = password_login(user)
    first = grant(gw.base, login)
    client = first["client"]
    second = grant(gw.base, login, client)
    for t in (first, second):
        assert mcp(gw.url, t["access_token"]).status_code == 200

    r = httpx.post(f"{gw.base}/revoke", data={"token": first["refresh_token"], "client_id": client["client_id"]})
    assert r.status_code == 200, r.text
    assert_refused(mcp(gw.url, first["access_token"]), gw.base)
    assert oauth_error(refresh(gw.base, client, first["refresh_token"])) == "invalid_grant"
    # The other grant is untouched until its access token is revoked.
    assert mcp(gw.url, second["access_token"]).status_code == 200
    r = httpx.post(f"{gw.base}/revoke", data={"token": second["access_token"], "client_id": client["client_id"]})
    assert r.status_code == 200, r.text
    assert_refused(mcp(gw.url, second["access_token"]), gw.base)
    assert oauth_error(refresh(gw.base, client, second["refresh_token"])) == "invalid_grant"

    garbage = httpx.post(f"{gw.base}/revoke", data={"token": "ntr_" + secrets.token_hex(32), "client_id": client["client_id"]})
    assert garbage.status_code == 200, garbage.text


@pytest.fixture
def metadata_server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """An HTTPS server on the loopback with a self-signed certificate, serving
    the client ID metadata documents put in its `documents` (path -> JSON) and
    recording the paths asked for in `hits`."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    documents: dict[str, Any] = {}
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            if self.path not in documents:
                self.send_error(404)
                return
            body = json.dumps(documents[self.path]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"base": f"https://127.0.0.1:{server.server_address[1]}", "cert": str(cert),
               "documents": documents, "hits": hits}  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()


def client_document(url: str, redirect_uri: str, name: str = "Metadata Document Agent") -> dict[str, Any]:
    return {"client_id": url, "client_name": name, "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none"}  # fmt: skip


async def test_client_id_metadata_documents(start_gateway, metadata_server) -> None:
    """A client identified by its metadata document's URL: the SDK uses it
    instead of registering, the consent page shows the document's name, the
    flow completes. A document whose client_id differs is refused, and so is a
    loopback document on a gateway that does not allow private hosts."""
    user = new_user()
    url = f"{metadata_server['base']}/client.json"
    redirect = loopback_redirect()
    metadata_server["documents"]["/client.json"] = client_document(url, redirect)
    gw = start_gateway("--allow-private-hosts", auth=True, SSL_CERT_FILE=metadata_server["cert"])

    owner = Owner(password_login(user), redirect)
    storage = MemoryStorage()
    async with sdk_client(gw.url, owner, storage, client_metadata_url=url) as c:
        ok(await c.call_tool("store", NOTE))
        assert ok(await c.call_tool("retrieve_entities", {}))["total"] == 1
    assert parse_qs(urlsplit(owner.authorize_url).query)["client_id"] == [url]
    assert "Metadata Document Agent" in owner.page.text
    assert "/client.json" in metadata_server["hits"]
    assert storage.tokens.access_token.startswith("nta_")

    # A document that names another client_id.
    bad = f"{metadata_server['base']}/bad.json"
    metadata_server["documents"]["/bad.json"] = client_document(f"{metadata_server['base']}/other.json", redirect)
    _, challenge = pkce()
    params = authorize_params(gw.base, {"client_id": bad, "redirect_uris": [redirect]}, challenge, "s")
    refused = ConsentPage(f"{gw.base}/authorize?{urlencode(params)}").response
    not_redirected(refused)
    assert 400 <= refused.status_code < 500

    # Without --allow-private-hosts the loopback document is not even fetched.
    strict = start_gateway(auth=True, SSL_CERT_FILE=metadata_server["cert"])
    before = len(metadata_server["hits"])
    params = authorize_params(strict.base, {"client_id": url, "redirect_uris": [redirect]}, challenge, "s")
    refused = ConsentPage(f"{strict.base}/authorize?{urlencode(params)}").response
    not_redirected(refused)
    assert 400 <= refused.status_code < 500
    assert len(metadata_server["hits"]) == before


def test_dynamic_registration_validation(start_gateway) -> None:
    """Redirect URIs must be https or loopback http, without fragment, and are
    required; a confidential client gets a secret once and must present it."""
    gw = start_gateway(auth=True)
    bad_metadata = ("invalid_redirect_uri", "invalid_client_metadata")
    for body in (
        {"client_name": "evil", "redirect_uris": ["http://evil.example/cb"]},
        {"client_name": "fragment", "redirect_uris": ["https://app.example/cb#frag"]},
        {"client_name": "none"},
        {"client_name": "empty", "redirect_uris": []},
    ):
        r = httpx.post(f"{gw.base}/register", json=body)
        assert r.status_code == 400, (body, r.status_code, r.text)
        assert r.json()["error"] in bad_metadata, (body, r.text)

    public = register(gw.base, redirect_uris=["https://app.example/oauth/cb"])
    assert "client_secret" not in public or public["client_secret"] is None

    confidential = register(gw.base, token_endpoint_auth_method="client_secret_post")
    secret = confidential["client_secret"]
    assert secret and confidential["token_endpoint_auth_method"] == "client_secret_post"
    login = password_login(new_user())
    code, verifier = allow(gw.base, confidential, login)
    assert oauth_error(exchange(gw.base, confidential, code, verifier), 401) == "invalid_client"
    assert oauth_error(exchange(gw.base, confidential, code, verifier, client_secret=secret + "x"), 401) == "invalid_client"
    code, verifier = allow(gw.base, confidential, login)
    tokens = issued(exchange(gw.base, confidential, code, verifier, client_secret=secret))
    assert mcp(gw.url, tokens["access_token"]).status_code == 200
    # Its refresh needs the secret too.
    r = refresh(gw.base, confidential, tokens["refresh_token"])
    assert oauth_error(r, 401) == "invalid_client"


async def test_oauth_users_are_isolated(start_gateway) -> None:
    """Two users authorize the same client; neither sees the other's memory."""
    alice, bob = new_user(), new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    ta = grant(gw.base, password_login(alice), client)["access_token"]
    tb = grant(gw.base, code_login(bob), client)["access_token"]
    async with authed_client(gw.url, ta) as a, authed_client(gw.url, tb) as b:
        mine = ok(await a.call_tool("store", {"entities": [{"entity_type": "note", "title": "alice zanzibar"}]}))
        theirs = ok(await b.call_tool("store", {"entities": [{"entity_type": "note", "title": "bob kathmandu"}]}))
        a_id, b_id = mine["entities"][0]["entity_id"], theirs["entities"][0]["entity_id"]
        assert [e["id"] for e in ok(await a.call_tool("retrieve_entities", {}))["entities"]] == [a_id]
        assert [e["id"] for e in ok(await b.call_tool("retrieve_entities", {}))["entities"]] == [b_id]
        assert error(await b.call_tool("retrieve_entity_snapshot", {"entity_id": a_id}))["code"] == "ENTITY_NOT_FOUND"
        assert error(await a.call_tool("retrieve_entity_snapshot", {"entity_id": b_id}))["code"] == "ENTITY_NOT_FOUND"
        search = {"search": "zanzibar", "search_mode": "lexical"}
        assert ok(await a.call_tool("retrieve_entities", search))["total"] == 1
        assert ok(await b.call_tool("retrieve_entities", search))["total"] == 0
        # OAuth never grants operator rights: naming another user is refused.
        assert error(await b.call_tool("retrieve_entities", {"user_id": alice}))["code"] == "FORBIDDEN"


async def test_static_tokens_work_alongside(start_gateway) -> None:
    """A static bearer token and an OAuth token for the same user both work on
    one gateway and reach the same memory."""
    user = new_user()
    gw = start_gateway(auth=True)
    static = create_token(user)
    oauth = grant(gw.base, password_login(user))["access_token"]
    async with authed_client(gw.url, static) as s, authed_client(gw.url, oauth) as o:
        entity = ok(await s.call_tool("store", NOTE))["entities"][0]["entity_id"]
        assert ok(await o.call_tool("retrieve_entity_snapshot", {"entity_id": entity}))["snapshot"]["title"] == "oauth note"
    assert_refused(mcp(gw.url, "ntm_" + secrets.token_hex(16)), gw.base)


def test_failed_logins_are_limited(start_gateway) -> None:
    """After ten failed logins from an address in a minute, even the right
    password is refused for the rest of the minute."""
    user = new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    login = password_login(user)
    _, challenge = pkce()
    params = authorize_params(gw.base, client, challenge, "s")
    allow(gw.base, client, login)
    for _ in range(10):
        not_redirected(authorize(gw.base, params, {**login, "password": "wrong"}))
    not_redirected(authorize(gw.base, params, login))


def test_registrations_are_limited_per_address(start_gateway) -> None:
    """One address registers at most 20 clients an hour."""
    gw = start_gateway(auth=True)
    for _ in range(20):
        register(gw.base)
    r = httpx.post(f"{gw.base}/register", json={"client_name": "21st", "redirect_uris": [loopback_redirect()]})
    assert 400 <= r.status_code < 500 and "client_id" not in r.text, (r.status_code, r.text)


def test_consent_page_in_a_real_browser(start_gateway: Any, browser: Any) -> None:
    """A browser posts the consent form with its Origin and follows the
    redirect to the client: the page's referrer policy and content security
    policy must let both through (an HTTP library sends neither)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    class Callback(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.end_headers()
            self.wfile.write(b"<title>client callback</title>")

        def log_message(self, *args: Any) -> None:
            pass

    callback = http.server.HTTPServer(("127.0.0.1", 0), Callback)
    threading.Thread(target=callback.serve_forever, daemon=True).start()
    try:
        gw = start_gateway(auth=True)
        redirect_uri = f"http://127.0.0.1:{callback.server_port}/callback"
        client = register(gw.base, redirect_uris=[redirect_uri])
        login = password_login(new_user())
        verifier, challenge = pkce()
        browser.get(f"{gw.base}/authorize?{urlencode(authorize_params(gw.base, client, challenge, 'st'))}")
        browser.find_element(By.ID, "username").send_keys(login["username"])
        browser.find_element(By.ID, "password").send_keys(login["password"])
        browser.find_element(By.CSS_SELECTOR, "button[value=allow]").click()
        WebDriverWait(browser, 20).until(lambda d: d.current_url.startswith(redirect_uri))
        query = {k: v[0] for k, v in parse_qs(urlsplit(browser.current_url).query).items()}
        assert query["state"] == "st" and query["iss"] == gw.base
        assert exchange(gw.base, client, query["code"], verifier).status_code == 200
    finally:
        callback.shutdown()
