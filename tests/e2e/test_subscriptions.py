"""Resource subscriptions through real MCP clients, in both protocol
generations (resources/subscribe before 2026-07-28, subscriptions/listen
from it on): a change made through another gateway on the same database, or
by a plain SQL session, reaches the subscriber; a stranger subscribed to the
same URI hears nothing; unsubscribing stops it; a change that commits behind
a long transaction is told late, not lost."""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator

import anyio
import psycopg
import pytest
from conftest import APP_ROLE, DATABASE, admin_dsn, authed_client, create_token, new_user, ok, stdio_client
from mcp_support import gateway_env
from mcp.shared.exceptions import MCPError
from mcp_types import ResourceUpdatedNotification

# resources/subscribe is the generation before 2026-07-28: tested on purpose.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

# Waiting for a notification that should come: a hang guard, not a speed target.
PATIENCE = 60


class Heard:
    """The URIs a legacy session was told about, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self.changed.set()

    async def until(self, uri: str) -> list[str]:
        """Waits until `uri` is heard; answers what was heard before it."""
        with anyio.fail_after(PATIENCE):
            while uri not in self.uris:
                await self.changed.wait()
                self.changed = anyio.Event()
        return self.uris[: self.uris.index(uri)]

    def clear(self) -> None:
        self.uris.clear()


def entity_uri(entity_id: str) -> str:
    return f"neotoma://entity/{entity_id}"


async def store_person(client: Any, name: str, **fields: Any) -> str:
    stored = ok(await client.call_tool("store", {"entities": [
        {"entity_type": "person", "name": name, "email": f"{name.lower()}@example.com", **fields}]}))
    return stored["entities"][0]["entity_id"]


@contextlib.contextmanager
def sql_session(user: str):
    """A plain SQL session as the gateway's non-superuser role, acting for `user`."""
    base = admin_dsn(DATABASE).replace("user=postgres", f"user={APP_ROLE}")
    with psycopg.connect(base) as conn:
        conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        yield conn


def sql_store(conn: psycopg.Connection, name: str, **fields: Any) -> None:
    entity = {"entity_type": "person", "name": name, "email": f"{name.lower()}@example.com", **fields}
    conn.execute("SELECT neotoma.store(jsonb_build_object('entities', jsonb_build_array(%s::jsonb)))",
                 (psycopg.types.json.Jsonb(entity),))
    conn.commit()


@contextlib.asynccontextmanager
async def legacy_client(url: str, token: str, heard: Heard) -> AsyncIterator[Any]:
    async with authed_client(url, token, mode="legacy", message_handler=heard) as client:
        yield client


async def test_legacy_sessions_hear_other_gateways_and_sql(start_gateway) -> None:
    alice, bob = new_user(), new_user()
    g1, g2 = start_gateway(auth=True), start_gateway(auth=True)
    alice_token, bob_token = create_token(alice), create_token(bob)
    heard_a, heard_b = Heard(), Heard()
    async with (legacy_client(g1.url, alice_token, heard_a) as a1,
                authed_client(g2.url, alice_token) as a2,
                legacy_client(g1.url, bob_token, heard_b) as b1):
        assert a1.server_capabilities.resources.subscribe is True
        ada = await store_person(a2, "Ada")
        bea = await store_person(a2, "Bea")
        own = await store_person(b1, "Bob")
        await a1.subscribe_resource(entity_uri(ada))
        await a1.subscribe_resource("neotoma://entities/person")
        await a1.subscribe_resource(entity_uri(bea))
        with pytest.raises(MCPError) as refused:
            await a1.subscribe_resource("neotoma://entity/not-an-id")
        assert refused.value.error.data["error"]["code"] == "NOT_FOUND"
        # A stranger may name Alice's entity; it never hears of it.
        await b1.subscribe_resource(entity_uri(ada))
        await b1.subscribe_resource(entity_uri(own))

        # Through the other gateway.
        await store_person(a2, "Ada", phone="+1 555 0100")
        await heard_a.until(entity_uri(ada))
        await heard_a.until("neotoma://entities/person")

        # Through plain SQL, as a non-superuser role.
        heard_a.clear()
        with sql_session(alice) as conn:
            sql_store(conn, "Ada", phone="+1 555 0101")
        await heard_a.until(entity_uri(ada))
        # Every notice of that change delivered before unsubscribing (one
        # still in flight would land after the clear below).
        await heard_a.until("neotoma://entities/person")

        # Unsubscribed: Ada's next change is not told; Bea's, later, is.
        # A change of Bea's, heard, first: notices are sent in the order of
        # the changes, so one of the earlier change still in flight (a
        # second notification of it) has landed before the clear.
        await a1.unsubscribe_resource(entity_uri(ada))
        await store_person(a2, "Bea", phone="+1 555 0098")
        await heard_a.until(entity_uri(bea))
        heard_a.clear()
        await store_person(a2, "Ada", phone="+1 555 0102")
        await heard_a.until("neotoma://entities/person")
        await store_person(a2, "Bea", phone="+1 555 0103")
        before = await heard_a.until(entity_uri(bea))
        assert entity_uri(ada) not in heard_a.uris, before

        # Bob hears his own change, and nothing of Alice's before it.
        await store_person(b1, "Bob", phone="+1 555 0199")
        before = await heard_b.until(entity_uri(own))
        assert entity_uri(ada) not in before and entity_uri(ada) not in heard_b.uris


async def test_listen_hears_other_gateways_and_sql(start_gateway) -> None:
    """Protocol 2026-07-28: subscriptions/listen, acknowledged with the
    neotoma:// URIs it honours."""
    alice, bob = new_user(), new_user()
    g1, g2 = start_gateway(auth=True), start_gateway(auth=True)
    alice_token, bob_token = create_token(alice), create_token(bob)
    async with (authed_client(g1.url, alice_token) as a1,
                authed_client(g2.url, alice_token) as a2,
                authed_client(g1.url, bob_token) as b1):
        assert a1.protocol_version == "2026-07-28"
        assert a1.server_capabilities.resources.subscribe is True
        ada = await store_person(a2, "Ada")
        own = await store_person(b1, "Bob")
        wanted = [entity_uri(ada), f"neotoma://entity/{ada}/observations"]
        async with (a1.listen(resource_subscriptions=[*wanted, "https://example.com/x"]) as sub,
                    b1.listen(resource_subscriptions=[entity_uri(ada), entity_uri(own)]) as stranger):
            assert sorted(sub.honored.resource_subscriptions) == sorted(wanted)
            events = aiter(sub)

            async def next_uris(n: int) -> set[str]:
                uris = set()
                with anyio.fail_after(PATIENCE):
                    while len(uris) < n:
                        uris.add((await anext(events)).uri)
                return uris

            await store_person(a2, "Ada", phone="+1 555 0100")
            assert await next_uris(2) == set(wanted)
            with sql_session(alice) as conn:
                sql_store(conn, "Ada", phone="+1 555 0101")
            assert await next_uris(2) == set(wanted)

            await store_person(b1, "Bob", phone="+1 555 0199")
            with anyio.fail_after(PATIENCE):
                told = await anext(aiter(stranger))
            assert told.uri == entity_uri(own)


async def test_a_change_behind_a_long_transaction_is_told_late_not_lost(start_gateway) -> None:
    """The feed shows a change once every older transaction has ended: the
    subscriber still hears of it when the older one ends."""
    alice, carol = new_user(), new_user()
    gw = start_gateway(auth=True)
    heard = Heard()
    companies = "neotoma://entities/company"
    async with legacy_client(gw.url, create_token(alice), heard) as a:
        # Nothing of the type exists yet: nothing to hear before the change.
        await a.subscribe_resource(companies)
        with sql_session(carol) as older:
            # An older transaction with an id, still running.
            older.execute("SELECT pg_current_xact_id()")
            ok(await a.call_tool("store", {"entities": [{"entity_type": "company", "name": "Acme"}]}))
            await anyio.sleep(1.5)  # the gateway reads the feed meanwhile, and waits
            assert companies not in heard.uris
            older.commit()
        await heard.until(companies)


async def test_stdio_session_hears_sql(database: str) -> None:
    user = new_user()
    heard = Heard()
    env = gateway_env(DATABASE_URL=database)
    async with stdio_client("--user-id", user, env=env, mode="legacy", message_handler=heard) as client:
        ada = await store_person(client, "Ada")
        await client.subscribe_resource(entity_uri(ada))
        with sql_session(user) as conn:
            sql_store(conn, "Ada", phone="+1 555 0100")
        await heard.until(entity_uri(ada))
