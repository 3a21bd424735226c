"""Hardening of the HTTP gateway, end to end: inspector sessions kept in the
database (ending on every gateway with what they were signed in with), the
cap on a user's sessions and the sign-in rate limits, one-time codes in the
inspector, the consent page's answers to bad codes and concurrent guesses,
/authorize never redirecting a request nobody saw a consent page for,
revoking an OAuth access token by its id, the inspector's answers to bad
input, connect_provider's refusal of loopback hosts, a FIFO under
--file-root, and imports of malformed entity schemas.

Raw HTTP with httpx (no browser): a POST without an Origin header passes the
same-origin checks, as a browser's form on the page itself would."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin

import anyio
import httpx2 as httpx
import psycopg
import pytest
from conftest import (
    single_database,
    DATABASE,
    Client,
    admin_dsn,
    authed_client,
    create_token,
    error,
    gateway_env,
    mcp_bin,
    new_user,
    ok,
    stdio_client,
    token_cli,
)
from test_oauth import (
    ConsentPage,
    authorize,
    authorize_params,
    code_login,
    exchange,
    grant,
    issued,
    login_cli,
    mcp,
    not_redirected,
    oauth_error,
    password_login,
    pkce,
    redirected,
    refresh,
    register,
)

pytestmark = pytest.mark.anyio

COOKIE = "neotoma_inspector"
LOGIN = "/inspector/login"
# A guard against hangs (a call that must return), not a performance limit.
HANG_GUARD_SECONDS = 60


# --- The inspector over raw HTTP ------------------------------------------------


def sign_in(base: str, local_address: str | None = None, **form: str) -> httpx.Response:
    """POST /inspector/login with `form` (token, username/password or code),
    from `local_address` when given; redirects are not followed."""
    transport = httpx.HTTPTransport(local_address=local_address) if local_address else None
    with httpx.Client(follow_redirects=False, timeout=HANG_GUARD_SECONDS, transport=transport) as h:
        return h.post(f"{base}{LOGIN}", data=form)


def session_of(r: httpx.Response) -> str:
    """The session cookie of a successful sign-in (303 to the overview)."""
    assert r.status_code == 303, f"sign-in answered {r.status_code}: {r.text[:1000]}"
    assert r.headers["location"] == "/inspector/overview", r.headers["location"]
    m = re.search(rf"(?:^|[;,]\s*){COOKIE}=([^;]+)", r.headers.get("set-cookie", ""))
    assert m and m.group(1), f"no {COOKIE} cookie: {r.headers.get('set-cookie')}"
    return m.group(1)


def get(base: str, path: str, cookie: str | None = None) -> httpx.Response:
    cookies = {COOKIE: cookie} if cookie else None
    return httpx.get(base + path, cookies=cookies, follow_redirects=False, timeout=HANG_GUARD_SECONDS)


def post(base: str, path: str, cookie: str, data: dict[str, str]) -> httpx.Response:
    return httpx.post(base + path, cookies={COOKIE: cookie}, data=data, follow_redirects=False,
                      timeout=HANG_GUARD_SECONDS)  # fmt: skip


def opens(base: str, cookie: str) -> None:
    r = get(base, "/inspector/entities", cookie)
    assert r.status_code == 200, f"{base}: the session should open pages, got {r.status_code} {r.headers.get('location')}"


def to_login(r: httpx.Response, what: str) -> None:
    assert r.status_code == 303 and r.headers.get("location") == LOGIN, (
        f"{what}: expected 303 to {LOGIN}, got {r.status_code} {r.headers.get('location')}: {r.text[:300]}"
    )


def ended(base: str, cookie: str) -> None:
    """The session no longer opens pages, nor writes (nothing is promoted)."""
    to_login(get(base, "/inspector/entities", cookie), f"GET {base}/inspector/entities")
    promoted = post(base, "/inspector/schema/promote", cookie,
                    {"entity_type": "person", "field_name": "nickname", "field_type": "string"})  # fmt: skip
    to_login(promoted, f"POST {base}/inspector/schema/promote")


def seed_candidate(user: str) -> None:
    """A person with a field outside the schema (what promote would add)."""
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "person", "name": "Grace Hopper",
                        "email": "grace@example.com", "nickname": "Amazing Grace"}]}')""")


def user_schemas(admin_db: psycopg.Connection, user: str) -> int:
    return admin_db.execute("SELECT count(*) FROM neotoma.entity_schemas WHERE user_id = %s", (user,)).fetchone()[0]


def token_id(admin_db: psycopg.Connection, token: str) -> str:
    """The id of a token in neotoma.api_tokens (stored as its SHA-256)."""
    row = admin_db.execute("SELECT id::text FROM neotoma.api_tokens WHERE token_hash = %s",
                           (hashlib.sha256(token.encode()).hexdigest(),)).fetchone()  # fmt: skip
    assert row, "the token is not in neotoma.api_tokens"
    return row[0]


# --- 1, 8: inspector sessions live in the database ------------------------------


def test_inspector_session_ends_with_its_revoked_token_on_every_gateway(start_gateway, admin_db) -> None:
    """Signed in on A with a token, the cookie opens pages on A and on B;
    the token revoked, the next request on either is sent to sign in, and a
    write with the cookie writes nothing."""
    user = new_user()
    seed_candidate(user)
    a, b = start_gateway(auth=True), start_gateway(auth=True)
    token = create_token(user)
    cookie = session_of(sign_in(a.base, token=token))
    opens(a.base, cookie)
    opens(b.base, cookie)

    token_cli("revoke", token_id(admin_db, token))
    ended(a.base, cookie)
    ended(b.base, cookie)
    assert user_schemas(admin_db, user) == 0, "a revoked session promoted a field"
    # The token itself signs in no more.
    refused = sign_in(b.base, token=token)
    assert refused.status_code == 401 and "set-cookie" not in refused.headers, refused.status_code


def test_inspector_sessions_end_with_their_login_and_user(start_gateway, admin_db) -> None:
    """A password session ends when the login gets a new password (on both
    gateways), another when the login is removed; the login page takes a
    one-time code, whose session ends when the user is erased."""
    user = new_user()
    seed_candidate(user)
    a, b = start_gateway(auth=True), start_gateway(auth=True)

    page = get(a.base, LOGIN)
    assert page.status_code == 200
    assert re.search(r'name="code"', page.text), "the inspector's sign-in page has a one-time code field"

    login = password_login(user)
    first = session_of(sign_in(a.base, **login))
    opens(a.base, first)
    opens(b.base, first)
    new_password = login["password"] + "-new"
    login_cli("set", "--user", user, "--username", login["username"], password=new_password)
    ended(a.base, first)
    ended(b.base, first)
    assert sign_in(a.base, **login).status_code == 401, "the old password still signs in"

    second = session_of(sign_in(b.base, username=login["username"], password=new_password))
    opens(a.base, second)
    login_cli("remove", "--user", user)
    ended(a.base, second)
    ended(b.base, second)

    coded = session_of(sign_in(a.base, **code_login(user)))
    opens(a.base, coded)
    opens(b.base, coded)
    erased = admin_db.execute("SELECT neotoma.erase_user(%s, true)", (user,)).fetchone()[0]
    assert erased["user_id"] == user
    ended(a.base, coded)
    ended(b.base, coded)
    assert user_schemas(admin_db, user) == 0


def test_inspector_code_is_good_once(start_gateway) -> None:
    """A one-time code signs in once; the same code again is refused (401)."""
    user = new_user()
    gw = start_gateway(auth=True)
    code = code_login(user)
    opens(gw.base, session_of(sign_in(gw.base, **code)))
    again = sign_in(gw.base, **code)
    assert again.status_code == 401 and "set-cookie" not in again.headers, again.status_code


def test_inspector_session_ends_when_its_token_expires(start_gateway) -> None:
    """A session signed in with a token that expires ends with it."""
    user = new_user()
    gw = start_gateway(auth=True)
    token = token_cli("create", "--user", user, "--expires-in", "10s").stdout.strip()
    cookie = session_of(sign_in(gw.base, token=token))
    opens(gw.base, cookie)
    # Bounded wait for the expiry (a hang guard, not a performance limit).
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while True:
        r = get(gw.base, "/inspector/entities", cookie)
        if r.status_code != 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    to_login(r, "GET /inspector/entities after the token expired")


# --- 2: sessions per user, sign-in rate limits -----------------------------------


def test_sessions_per_user_and_sign_in_rate_limits(start_gateway) -> None:
    """With --sessions-per-user 3, a fourth sign-in closes the least recently
    used session. One address signs in at most 30 times a minute (the 31st
    is 429); another address is not held back by it."""
    user, other = new_user(), new_user()
    gw = start_gateway("--sessions-per-user", "3", auth=True)
    token = create_token(user)
    cookies = [session_of(sign_in(gw.base, token=token)) for _ in range(4)]
    to_login(get(gw.base, "/inspector/entities", cookies[0]), "the least recently used of 4 sessions (cap 3)")
    for c in cookies[1:]:
        opens(gw.base, c)

    answers = [303] * 4
    while len(answers) < 31:
        r = sign_in(gw.base, token=token)
        answers.append(r.status_code)
        if r.status_code == 429:
            break
        session_of(r)
    assert answers[-1] == 429, f"no 429 by the 31st sign-in in a minute from one address: {answers}"
    assert set(answers[:-1]) == {303}, answers
    assert "set-cookie" not in r.headers
    assert "text/html" in r.headers["content-type"]
    # The limit is the address's: another user from it is refused too ...
    assert sign_in(gw.base, token=create_token(other)).status_code == 429
    # ... and the same user from another address is not.
    opens(gw.base, session_of(sign_in(gw.base, local_address="127.0.0.2", token=create_token(other))))


def test_failed_inspector_sign_ins_are_limited(start_gateway) -> None:
    """Ten failed sign-ins from an address in a minute: the next, even a
    right one, is 429."""
    user = new_user()
    gw = start_gateway(auth=True)
    token = create_token(user)
    for _ in range(10):
        assert sign_in(gw.base, token="ntm_wrong").status_code == 401
    r = sign_in(gw.base, token=token)
    assert r.status_code == 429 and "set-cookie" not in r.headers, r.status_code


# --- 4, 5, 6, 7: the consent page and OAuth ---------------------------------------


def consent_url(base: str, client: dict[str, Any], **overrides: str) -> str:
    _, challenge = pkce()
    return f"{base}/authorize?{urlencode(authorize_params(base, client, challenge, 'st', **overrides))}"


def consent_form(page: ConsentPage, login: dict[str, str], decision: str = "allow") -> tuple[str, dict[str, str]]:
    """Where the consent form posts and what (without sending it)."""
    f = page.form(login)
    return urljoin(page.url, f["action"] or page.url), {**f["fields"], **login, "decision": decision}


def test_consent_page_refuses_bad_codes_with_401_and_counts_them(start_gateway) -> None:
    """A wrong or spent one-time code answers 401 with the page (not 503) and
    counts as a failed login: after 10, the next attempt is 429."""
    user = new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    spent = code_login(user)
    redirected(authorize(gw.base, authorize_params(gw.base, client, pkce()[1], "s"), spent), client["redirect_uris"][0])

    answers = []
    for login in [spent] + [{"code": "wrong-" + str(i)} for i in range(9)]:
        r = authorize(gw.base, authorize_params(gw.base, client, pkce()[1], "s"), login)
        not_redirected(r)
        assert "text/html" in r.headers["content-type"] and 'name="code"' in r.text, r.text[:500]
        answers.append(r.status_code)
    assert answers == [401] * 10, answers
    r = authorize(gw.base, authorize_params(gw.base, client, pkce()[1], "s"), code_login(user))
    not_redirected(r)
    assert r.status_code == 429, (r.status_code, r.text[:500])


def test_failed_login_limit_holds_under_concurrency(start_gateway) -> None:
    """48 wrong passwords posted at once from one address: at most 10 are
    checked (401), the rest are 429; none is a server error."""
    user = new_user()
    gw = start_gateway(auth=True)
    client = register(gw.base)
    login = password_login(user)
    page = ConsentPage(consent_url(gw.base, client))
    assert page.response.status_code == 200
    action, data = consent_form(page, {**login, "password": "wrong"})
    n = 48
    barrier = threading.Barrier(n, timeout=HANG_GUARD_SECONDS)
    statuses: list[int | str] = [0] * n

    def attempt(i: int) -> None:
        try:
            with httpx.Client(follow_redirects=False, timeout=HANG_GUARD_SECONDS) as h:
                barrier.wait()
                statuses[i] = h.post(action, data=data).status_code
        except Exception as e:  # noqa: BLE001 - reported below
            statuses[i] = repr(e)

    threads = [threading.Thread(target=attempt, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD_SECONDS * 2)
    assert not any(t.is_alive() for t in threads), "a login attempt hung"
    counts = {s: statuses.count(s) for s in set(statuses)}
    assert set(counts) <= {401, 429}, counts
    assert 1 <= counts.get(401, 0) <= 10, counts


def test_authorize_never_redirects_an_unseen_request(start_gateway) -> None:
    """The GET alone (no form submitted) of a request with response_type
    token, operator scope, no PKCE, the plain method or a foreign resource
    answers a 400 page naming the error, without a Location; posting the
    form of such a request (even Deny) redirects nowhere either. A valid
    request shows the page; Deny goes back with access_denied."""
    gw = start_gateway(auth=True)
    client = register(gw.base)
    redirect = client["redirect_uris"][0]
    for overrides, expected in (
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"scope": "operator"}, "invalid_scope"),
        ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"resource": "http://elsewhere.example/mcp"}, "invalid_target"),
    ):
        url = consent_url(gw.base, client, **overrides)
        r = ConsentPage(url).response
        not_redirected(r)
        assert r.status_code == 400, (overrides, r.status_code, r.text[:500])
        assert "text/html" in r.headers["content-type"], (overrides, r.headers["content-type"])
        assert expected in r.text, (overrides, r.text[:500])
        assert redirect not in r.text, "the page offers no way to the redirect URI"

    valid = ConsentPage(consent_url(gw.base, client))
    assert valid.response.status_code == 200 and "text/html" in valid.response.headers["content-type"]
    # The valid page's form with a bad request's parameters, denied.
    action, data = consent_form(valid, {"username": "", "password": ""}, decision="deny")
    for overrides in ({"response_type": "token"}, {"code_challenge_method": "plain"}, {"scope": "operator"}):
        r = httpx.post(action, data={**data, **overrides}, follow_redirects=False)
        not_redirected(r)
        assert r.status_code == 400, (overrides, r.status_code, r.text[:500])

    denied = redirected(authorize(gw.base, authorize_params(gw.base, client, pkce()[1], "d"), {"username": "x", "password": "y"},
                                  decision="deny"), redirect)  # fmt: skip
    assert denied["error"] == "access_denied" and denied["state"] == "d" and "code" not in denied, denied


def test_revoking_an_oauth_access_token_by_id_ends_its_grant(start_gateway, admin_db) -> None:
    """`neotoma-mcp token revoke <id>` of an OAuth access token: the grant's
    refresh token is invalid_grant, its other access tokens 401; another
    grant of the same user is untouched."""
    user = new_user()
    gw = start_gateway(auth=True)
    login = password_login(user)
    tokens = grant(gw.base, login)
    client = tokens["client"]
    rotated = issued(refresh(gw.base, client, tokens["refresh_token"]))
    other = grant(gw.base, login, client)
    for t in (tokens, rotated, other):
        assert mcp(gw.url, t["access_token"]).status_code == 200

    token_cli("revoke", token_id(admin_db, rotated["access_token"]))
    assert mcp(gw.url, rotated["access_token"]).status_code == 401
    assert mcp(gw.url, tokens["access_token"]).status_code == 401, "the grant's other access token still works"
    assert oauth_error(refresh(gw.base, client, rotated["refresh_token"])) == "invalid_grant"
    assert mcp(gw.url, other["access_token"]).status_code == 200, "another grant was revoked too"
    assert issued(refresh(gw.base, client, other["refresh_token"]))


# --- 9: the inspector's answers to bad input --------------------------------------


@single_database
def test_inspector_answers_bad_input_with_4xx_pages(start_gateway) -> None:
    user = new_user()
    seed_candidate(user)
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        entity = conn.execute("SELECT id FROM neotoma.entities WHERE user_id = %s", (user,)).fetchone()[0]
    gw = start_gateway("--user-id", user)

    def readable(path: str, allowed: tuple[int, ...]) -> httpx.Response:
        r = get(gw.base, path)
        assert r.status_code in allowed, f"GET {path}: {r.status_code} (expected {allowed}): {r.text[:500]}"
        assert "text/html" in r.headers.get("content-type", ""), (path, r.headers.get("content-type"))
        assert "<html" in r.text.lower() and len(r.text) > 100, (path, r.text[:300])
        return r

    readable("/inspector/entities?workspace=nope", (400, 404))
    readable(f"/inspector/graph/{entity}?type=x", (400,))
    readable("/inspector/entities/not-an-id", tuple(range(400, 500)))
    readable("/inspector/timeline?after_date=garbage", (400,))
    # More of the same kind: never a server error.
    for path in ("/inspector/timeline?before_date=2026-13-45", "/inspector/graph/not-an-id",
                 f"/inspector/graph/{entity}?hops=999", "/inspector/sources/not-an-id",
                 "/inspector/entities?offset=abc", f"/inspector/entities/{entity}?at=garbage"):  # fmt: skip
        r = get(gw.base, path)
        assert r.status_code < 500, f"GET {path}: {r.status_code}: {r.text[:500]}"


def test_inspector_answers_a_nul_character_with_a_4xx_page(start_gateway) -> None:
    """A NUL character in a filter (Postgres text cannot hold one) is bad
    input too: a 4xx page, not 503 'the database cannot be reached'."""
    gw = start_gateway("--user-id", new_user())
    for path in ("/inspector/entities?type=%00", "/inspector/entities?search=a%00b",
                 "/inspector/timeline?event_type=%00"):  # fmt: skip
        r = get(gw.base, path)
        assert 400 <= r.status_code < 500, f"GET {path}: {r.status_code}: {r.text[:500]}"


# --- 10: connect_provider does not say what a host resolved to ---------------------


async def test_connect_provider_refuses_localhost_without_naming_its_address(start_gateway) -> None:
    gw = start_gateway(auth=True)
    async with authed_client(gw.url, create_token(new_user())) as c:
        for host in ("localhost", "127.0.0.1"):
            args = {"provider": "imap", "settings": {"host": host, "port": 143, "tls": False,
                                                     "username": "ada", "password": "secret-pw"}}  # fmt: skip
            refused = error(await c.call_tool("connect_provider", args))
            assert refused["code"] == "VALIDATION_ERROR", refused
            if host == "localhost":
                said = refused["message"] + json.dumps(refused["details"])
                assert "127.0.0.1" not in said and "::1" not in said, refused


# --- 11: a FIFO under --file-root ------------------------------------------------


async def test_fifo_under_file_root_is_refused_at_once(start_gateway, admin_db, tmp_path: Path) -> None:
    user = new_user()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    regular = tmp_path / "note.txt"
    regular.write_text("a regular file next to a FIFO\n")
    gw = start_gateway("--user-id", user, "--file-root", str(tmp_path))
    sources = "SELECT count(*) FROM neotoma.sources WHERE user_id = %s"
    try:
        async with Client(gw.url) as c:
            with anyio.fail_after(HANG_GUARD_SECONDS):  # a hang guard: the call must return
                refused = error(await c.call_tool("store", {"file_path": str(fifo)}))
            assert refused["code"] == "FILE_READ_ERROR", refused
            assert admin_db.execute(sources, (user,)).fetchone()[0] == 0
            stored = ok(await c.call_tool("store", {"file_path": str(regular)}))
            assert stored["source_id"] and stored["deduplicated"] is False
    finally:
        # Free a gateway thread stuck opening the FIFO, if any.
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert admin_db.execute(sources, (user,)).fetchone()[0] == 1


# --- 13: imports of malformed entity schemas ---------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([mcp_bin(), *args], env=gateway_env(), capture_output=True, text=True,
                          timeout=HANG_GUARD_SECONDS * 5)  # fmt: skip


ROWS_OF = """SELECT (SELECT count(*) FROM neotoma.sources WHERE user_id = %(u)s)
                  + (SELECT count(*) FROM neotoma.entities WHERE user_id = %(u)s)
                  + (SELECT count(*) FROM neotoma.observations WHERE user_id = %(u)s)
                  + (SELECT count(*) FROM neotoma.entity_schemas WHERE user_id = %(u)s)
                  + (SELECT count(*) FROM neotoma.relationships WHERE user_id = %(u)s)"""


@pytest.mark.parametrize(
    "definition",
    [{"entity_type": "gadget"}, "not an object", [1, 2], {"entity_type": "gadget", "schema_version": "1.0", "fields": 7}],
    ids=["no-fields", "a-string", "an-array", "fields-not-an-object"],
)
async def test_import_refuses_a_malformed_entity_schema(database: str, admin_db, tmp_path: Path, definition: Any) -> None:
    """A file whose entity_schemas line cannot be used is refused whole: a
    non-zero exit naming the line, nothing imported, and the user's types and
    stores of that type still work."""
    source, user = new_user(), new_user()
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as conn:
        # Both users have their own gadget schema; the source stores some.
        for u in (source, user):
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (u,))
            conn.execute("""SELECT neotoma.register_schema('{"entity_type": "gadget", "user_specific": true,
                            "schema_definition": {"fields": {"serial": {"type": "string", "required": true},
                            "label": {"type": "string"}}, "identity_fields": ["serial"]},
                            "reducer_config": {"merge_policies": {}}}')""")
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (source,))
        conn.execute("""SELECT neotoma.store('{"entities": [{"entity_type": "gadget", "serial": "G-1", "label": "one"},
                        {"entity_type": "note", "title": "a note"}]}')""")
    before = admin_db.execute(ROWS_OF, {"u": user}).fetchone()[0]
    out = tmp_path / "memory.jsonl"
    exported = cli("export", "--user", source, "--out", str(out), "--database-url", database)
    assert exported.returncode == 0, exported.stderr
    lines = out.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["table"] == "entity_schemas")
    bad = json.loads(lines[at])
    bad["row"]["definition"] = definition
    # Valid lines before and after the malformed one.
    lines[at] = json.dumps(bad)
    assert at > 0 and at < len(lines) - 1, "the schema line should lie between other lines"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")

    for fmt in ((), ("--format", "neotoma")):
        refused = cli("import", *fmt, "--user", user, str(broken), "--database-url", database)
        assert refused.returncode != 0, f"import {fmt} of a malformed schema succeeded: {refused.stderr}"
        assert re.search(rf"\bline {at + 1}\b", refused.stderr), f"the message does not name line {at + 1}: {refused.stderr}"
        assert admin_db.execute(ROWS_OF, {"u": user}).fetchone()[0] == before, "something of the file was imported"

    async with stdio_client("--user-id", user, env=gateway_env(DATABASE_URL=database)) as c:
        types = json.dumps(ok(await c.call_tool("list_entity_types", {})))
        assert "gadget" in types, types[:1000]
        stored = ok(await c.call_tool("store", {"entities": [{"entity_type": "gadget", "serial": "G-2"}]}))
        entity = stored["entities"][0]["entity_id"]
        assert ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": entity}))["snapshot"]["serial"] == "G-2"
