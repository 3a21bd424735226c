"""Fuzzes the inspector's forms and pages (docs/inspector.md) as a stranger
and as a signed-in user would: hostile sign-in forms, query parameters of
every page, and the forms that write (correct, merge, delete, restore,
promote), from Hypothesis (derandomised) and the corpus of hostile.py.

Oracle: no answer is a 5xx, no page reflects input unescaped, the gateway
never dies, a failed sign-in opens no session, nothing is written for
another user, `verify()` is clean, and a genuine sign-in still works at the
end.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator
from urllib.parse import quote

import httpx2 as httpx
import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mcp_support import Gateway, gateway_env, mcp_bin  # noqa: E402
from hostile import FUZZ, HOSTILE_TEXT, database_dsn, fresh_database  # noqa: E402

DATABASE = "neotoma_fuzz_inspector"
USER = "0f000000-0000-0000-0000-0000000000f2"
OTHER = "0f000000-0000-0000-0000-0000000000f3"
COOKIE = "neotoma_inspector"
# Sign-ins are limited per address: the fuzzed ones come from 127.0.0.1,
# the session the pages are fuzzed with and the last check from others.
SESSION_ADDRESS = "127.0.0.2"
LAST_ADDRESS = "127.0.0.3"
# Texts an HTTP client can send (a NUL is refused before it leaves).
TEXT = HOSTILE_TEXT.map(lambda t: t.replace("\x00", ""))


def admin_dsn() -> str:
    return database_dsn(DATABASE)


def token_for(user: str) -> str:
    return subprocess.run([mcp_bin(), "token", "create", "--user", user, "--database-url", admin_dsn()],
                          env=gateway_env(), capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip


def client(address: str | None = None) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address) if address else None
    return httpx.Client(follow_redirects=False, timeout=60, transport=transport)


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with psycopg.connect(fresh_database(DATABASE), autocommit=True) as conn:
        for user, name in ((USER, "Grace Hopper"), (OTHER, "Ada Lovelace")):
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
            conn.execute("SELECT neotoma.store(jsonb_build_object('entities', jsonb_build_array("
                         "jsonb_build_object('entity_type', 'person', 'name', %s::text, 'nickname', 'x'),"
                         "jsonb_build_object('entity_type', 'task', 'title', 'Call ' || %s::text, 'due_date', '2026-01-02'))))",
                         (name, name))  # fmt: skip
    g = Gateway(env=gateway_env(DATABASE_URL=admin_dsn()))
    yield g
    g.stop()


@pytest.fixture(scope="module")
def session(gateway: Gateway) -> str:
    with client(SESSION_ADDRESS) as h:
        r = h.post(f"{gateway.base}/inspector/login", data={"token": token_for(USER)})
    assert r.status_code == 303, r.text
    m = re.search(rf"{COOKIE}=([^;]+)", r.headers["set-cookie"])
    assert m
    return m.group(1)


@pytest.fixture(scope="module")
def ids(gateway: Gateway) -> dict[str, str]:
    """An entity of the user's and one of the other user's."""
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        rows = conn.execute("SELECT user_id::text, min(id) FROM neotoma.entities GROUP BY 1").fetchall()
    return {user: entity for user, entity in rows}


def other_users_rows() -> tuple[int, str]:
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        row = conn.execute("SELECT count(*), coalesce(max(s.snapshot::text), '') FROM neotoma.observations o "
                           "JOIN neotoma.entity_snapshots s ON s.user_id = o.user_id AND s.entity_id = o.entity_id "
                           "WHERE o.user_id = %s", (OTHER,)).fetchone()  # fmt: skip
    assert row is not None
    return row[0], row[1]


def check_page(r: httpx.Response, gateway: Gateway) -> None:
    assert r.status_code < 500, f"{r.request.method} {r.request.url}: {r.status_code}: {r.text[:500]}"
    assert gateway.alive(), gateway.log_text()
    if "text/html" in r.headers.get("content-type", ""):
        assert "<script>alert" not in r.text and "<img src=x" not in r.text, r.text[:2000]


@FUZZ
@given(form=st.dictionaries(st.sampled_from(["token", "username", "password", "code"]), TEXT, max_size=4))
def test_sign_in_forms(gateway: Gateway, form: dict[str, str]) -> None:
    with client() as h:
        r = h.post(f"{gateway.base}/inspector/login", data=form)
    check_page(r, gateway)
    # Nothing a stranger can type opens a session.
    assert COOKIE not in r.headers.get("set-cookie", "") or "Max-Age=0" in r.headers["set-cookie"], r.headers


PAGES = ["/inspector/overview", "/inspector/schema", "/inspector/entities", "/inspector/timeline",
         "/inspector/sources", "/inspector/entities/{id}", "/inspector/graph/{id}", "/inspector/sources/{id}"]


@FUZZ
@given(page=st.sampled_from(PAGES), path_id=TEXT,
       params=st.dictionaries(st.sampled_from(["search", "type", "workspace", "offset", "at", "corrected", "hops",
                                               "event_type", "after_date", "before_date", "promoted"]),
                              TEXT, max_size=5))
def test_pages_and_their_parameters(gateway: Gateway, session: str, page: str, path_id: str,
                                    params: dict[str, str]) -> None:
    path = page.replace("{id}", quote(path_id, safe="") or "x")
    with client() as h:
        r = h.get(f"{gateway.base}{path}", params=params, cookies={COOKIE: session})
    check_page(r, gateway)


@FUZZ
@given(action=st.sampled_from(["correct", "merge", "delete", "restore"]),
       target=st.sampled_from(["mine", "other", "made up"]),
       form=st.dictionaries(st.sampled_from(["entity_type", "field", "value", "from_entity_id", "reason"]),
                            TEXT, max_size=5),
       steal=st.booleans())
def test_entity_forms(gateway: Gateway, session: str, ids: dict[str, str], action: str, target: str,
                      form: dict[str, str], steal: bool) -> None:
    before = other_users_rows()
    entity = {"mine": ids[USER], "other": ids[OTHER], "made up": "ent_" + "0" * 32}[target]
    if steal:
        # Merging the other user's entity into one's own.
        form["from_entity_id"] = ids[OTHER]
    with client() as h:
        r = h.post(f"{gateway.base}/inspector/entities/{entity}/{action}", data=form, cookies={COOKIE: session})
    check_page(r, gateway)
    assert other_users_rows() == before, "a form wrote to another user's memory"


@FUZZ
@given(form=st.dictionaries(st.sampled_from(["entity_type", "field_name", "field_type"]), TEXT, max_size=3))
def test_promote_forms(gateway: Gateway, session: str, form: dict[str, str]) -> None:
    with client() as h:
        r = h.post(f"{gateway.base}/inspector/schema/promote", data=form, cookies={COOKIE: session})
    check_page(r, gateway)


def test_forms_without_a_session_or_from_another_site_write_nothing(gateway: Gateway, session: str,
                                                                     ids: dict[str, str]) -> None:
    form = {"entity_type": "person", "field": "name", "value": "<script>alert(1)</script>"}
    with client() as h:
        r = h.post(f"{gateway.base}/inspector/entities/{ids[USER]}/correct", data=form)
        assert r.status_code == 303 and r.headers["location"] == "/inspector/login"
        r = h.post(f"{gateway.base}/inspector/entities/{ids[USER]}/correct", data=form,
                   cookies={COOKIE: session}, headers={"origin": "https://evil.example"})
        assert r.status_code == 403


def test_the_memory_is_whole_and_a_genuine_sign_in_works(gateway: Gateway, session: str) -> None:
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        for user in (USER, OTHER):
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
            assert conn.execute("SELECT (neotoma.verify())->'ok'").fetchone()[0] is True
    with client(LAST_ADDRESS) as h:
        r = h.post(f"{gateway.base}/inspector/login", data={"token": token_for(USER)})
        assert r.status_code == 303, r.text
        cookie = re.search(rf"{COOKIE}=([^;]+)", r.headers["set-cookie"])
        assert cookie
        page = h.get(f"{gateway.base}/inspector/entities", cookies={COOKIE: cookie.group(1)})
        assert page.status_code == 200 and "Grace Hopper" in page.text and "Ada Lovelace" not in page.text
