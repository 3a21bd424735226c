"""Fuzzes the gateway's OAuth endpoints (docs/oauth.md) as a stranger would:
hostile registrations, authorization requests, consent forms, token and
revocation requests, from Hypothesis (derandomised: the same inputs on every
run) and a fixed corpus of known-bad ones.

Oracle: no answer is a 5xx, every JSON endpoint answers JSON (an OAuth error
object when it refuses), the consent page never reflects input unescaped,
the gateway never dies, nothing it refuses leaves a grant, a token or a
login behind, and a genuine authorization still works at the end.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import httpx2 as httpx
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mcp_support import Gateway, gateway_env, mcp_bin  # noqa: E402
from hostile import FUZZ, HOSTILE_TEXT, JSON_VALUES, database_dsn, fresh_database  # noqa: E402

DATABASE = "neotoma_fuzz_oauth"
USER = "0f000000-0000-0000-0000-0000000000f1"
PASSWORD = "fuzz-password-1"
REDIRECT = "http://127.0.0.1:9/cb"

def admin_dsn() -> str:
    return database_dsn(DATABASE)


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    fresh_database(DATABASE)
    subprocess.run(
        [mcp_bin(), "login", "set", "--user", USER, "--username", "fuzz", "--database-url", admin_dsn()],
        env=gateway_env(NEOTOMA_LOGIN_PASSWORD=PASSWORD),
        check=True,
        capture_output=True,
    )
    g = Gateway(env=gateway_env(DATABASE_URL=admin_dsn()))
    yield g
    g.stop()


@pytest.fixture(scope="module")
def client_id(gateway: Gateway) -> str:
    r = httpx.post(f"{gateway.base}/register", json={"redirect_uris": [REDIRECT], "client_name": "fuzz"})
    assert r.status_code == 201, r.text
    return r.json()["client_id"]


def check_answer(r: httpx.Response, gateway: Gateway, *, json_body: bool) -> None:
    assert r.status_code < 500, f"{r.status_code}: {r.text[:500]}"
    assert gateway.alive(), gateway.log_text()
    if json_body and r.status_code >= 400:
        body = r.json()
        assert isinstance(body.get("error"), str), body
    if "text/html" in r.headers.get("content-type", ""):
        assert "<script>" not in r.text and "onerror=alert" not in r.text.replace("onerror=alert(1)&gt;", "")


def counts() -> tuple[int, int, int]:
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM neotoma.oauth_grants), (SELECT count(*) FROM neotoma.api_tokens),"
            " (SELECT count(*) FROM neotoma.logins)"
        ).fetchone()
    assert row is not None
    return row[0], row[1], row[2]


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@FUZZ
@given(body=JSON_VALUES)
def test_registration(gateway: Gateway, client_id: str, body: Any) -> None:
    # (client_id: the fuzz client registers first.) The per-address limit
    # answers 429 after 20 registrations: still not a 5xx.
    r = httpx.post(f"{gateway.base}/register", content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    check_answer(r, gateway, json_body=True)
    if r.status_code == 201:
        assert r.json()["redirect_uris"], r.text


def test_registration_of_texts_json_cannot_hold(gateway: Gateway, client_id: str) -> None:
    for text in [b"", b"{", b"\xff\xfe", b'{"redirect_uris": ["' + b"a" * 70000 + b'"]}', b"[" * 10000]:
        r = httpx.post(f"{gateway.base}/register", content=text, headers={"content-type": "application/json"})
        assert r.status_code < 500 and gateway.alive(), r.text[:300]


@FUZZ
@given(params=st.dictionaries(
    st.sampled_from(["response_type", "client_id", "redirect_uri", "state", "code_challenge",
                     "code_challenge_method", "resource", "scope", "prompt"]),
    HOSTILE_TEXT, max_size=9))
def test_authorization_requests(gateway: Gateway, client_id: str, params: dict[str, str]) -> None:
    params = {k: v.replace("\x00", "") for k, v in params.items()}
    if "client_id" not in params:
        params["client_id"] = client_id
    before = counts()
    r = httpx.get(f"{gateway.base}/authorize", params=params)
    check_answer(r, gateway, json_body=False)
    if r.status_code in (302, 303):
        location = r.headers["location"]
        assert location.startswith(REDIRECT), location
        assert "code" not in parse_qs(urlparse(location).query)
    assert counts() == before


@FUZZ
@given(form=st.dictionaries(
    st.sampled_from(["response_type", "redirect_uri", "state", "code_challenge", "code_challenge_method",
                     "resource", "scope", "username", "password", "code", "decision"]),
    HOSTILE_TEXT, max_size=11))
def test_consent_forms(gateway: Gateway, client_id: str, form: dict[str, str]) -> None:
    form = {k: v.replace("\x00", "") for k, v in form.items()}
    form["client_id"] = client_id
    before = counts()
    r = httpx.post(f"{gateway.base}/authorize", data=form)
    check_answer(r, gateway, json_body=False)
    if r.status_code in (302, 303):
        assert "code" not in parse_qs(urlparse(r.headers["location"]).query), "no login, no code"
    assert counts() == before


@FUZZ
@given(form=st.dictionaries(
    st.sampled_from(["grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "resource",
                     "client_id", "client_secret", "token", "token_type_hint"]),
    HOSTILE_TEXT, max_size=10),
    basic=st.one_of(st.none(), HOSTILE_TEXT))
def test_token_and_revocation_requests(gateway: Gateway, client_id: str, form: dict[str, str], basic: str | None) -> None:
    form = {k: v.replace("\x00", "") for k, v in form.items()}
    # (Texts an HTTP client cannot send as a header value are left out.)
    sendable = bool(basic) and basic.isascii() and basic.isprintable() and basic == basic.strip()
    headers = {"authorization": f"Basic {basic}"} if sendable else {}
    before = counts()
    for path in ("/token", "/revoke"):
        r = httpx.post(f"{gateway.base}{path}", data=form, headers=headers)
        check_answer(r, gateway, json_body=True)
        assert r.status_code != 200 or path == "/revoke", r.text
    assert counts() == before


def test_a_genuine_authorization_still_works(gateway: Gateway, client_id: str) -> None:
    verifier, challenge = pkce()
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s",
              "code_challenge": challenge, "code_challenge_method": "S256", "resource": gateway.url, "scope": "memory"}
    page = httpx.get(f"{gateway.base}/authorize", params=params)
    assert page.status_code == 200, page.text
    form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    form.update(username="fuzz", password=PASSWORD, decision="allow")
    form = {k: v.replace("&amp;", "&") for k, v in form.items()}
    # Posted from another site (login CSRF): refused, even with the right password.
    r = httpx.post(f"{gateway.base}/authorize", data=form, headers={"origin": "https://evil.example"})
    assert r.status_code == 403 and "location" not in r.headers
    r = httpx.post(f"{gateway.base}/authorize", data=form)
    assert r.status_code in (302, 303), r.text
    code = parse_qs(urlparse(r.headers["location"]).query)["code"][0]
    t = httpx.post(f"{gateway.base}/token", data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                                 "client_id": client_id, "code_verifier": verifier, "resource": gateway.url})
    assert t.status_code == 200, t.text
    r = httpx.post(gateway.url, headers={"authorization": f"Bearer {t.json()['access_token']}",
                                         "content-type": "application/json", "accept": "application/json, text/event-stream"},
                   json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}}})
    assert r.status_code == 200, r.text
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        users = {row[0] for row in conn.execute("SELECT user_id FROM neotoma.oauth_grants")}
    assert users == {uuid.UUID(USER)}
