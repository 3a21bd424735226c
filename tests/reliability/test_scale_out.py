"""Users spread over several servers (docs/scale-out.md): a router cluster
(the neotoma and neotoma_router extensions, PL/Proxy) and two partition
clusters (the neotoma extension), each a private cluster of this test.

Through the router, as the gateway's kind of role (a member of
neotoma_service, never a superuser): each user's writes land on the user's
partition only and reads find them there; an error comes back as the same
envelope a single server raises; a role that is not the gateway's is
refused by the router, and a role that is not a router's is refused by the
partitions; an operator's global schema reaches every partition, and with
one partition down it is reported as partially applied, never silently;
a user placed on another partition is served there; the gateway
(`neotoma-mcp --database-url <router>`) works unchanged; `verify()` is
clean on every partition.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator

import anyio
import httpx2 as httpx
import psycopg
import pytest
from conftest import (
    ActionError,
    Database,
    Gateway,
    PrivateCluster,
    assert_verified,
    call,
    connect_as,
    error,
    free_port,
    mcp_bin,
    new_user,
    ok,
    prepare_database,
    with_params,
)
from mcp import Client

pytestmark = pytest.mark.anyio

ROUTER_LINK = "scale_router_link"  # the router's login on the partitions
DATABASE = "neotoma_scale"
# Waiting for a notification or an embedding that should come: a hang
# guard, not a speed target.
PATIENCE = 60


@dataclass
class Layout:
    router: Database
    partitions: list[Database]
    clusters: list[PrivateCluster]

    def partition_of(self, user: str) -> int:
        with self.router.admin() as conn:
            route = conn.execute("SELECT neotoma_router.partition_of(%s)", (user,)).fetchone()[0]
        return abs(route) % len(self.partitions)

    def users_on(self, partition: int, count: int = 1) -> list[str]:
        """New users whose hash places them on `partition`."""
        found: list[str] = []
        while len(found) < count:
            user = new_user()
            if self.partition_of(user) == partition:
                found.append(user)
        return found


def entity_count(db: Database, user: str) -> int:
    with db.admin() as conn:
        return conn.execute("SELECT count(*) FROM neotoma.entities WHERE user_id = %s", (user,)).fetchone()[0]


@pytest.fixture
def layout(private_cluster: Callable[..., PrivateCluster]) -> Iterator[Layout]:
    clusters = [private_cluster(fsync=False) for _ in range(3)]
    for c in clusters:
        c.start()
    router, *partitions = (prepare_database(c.dsn, DATABASE) for c in clusters)
    for p in partitions:
        with p.admin() as conn:
            conn.execute(f"CREATE ROLE {ROUTER_LINK} LOGIN IN ROLE neotoma_router")
    with router.admin() as conn:
        conn.execute("CREATE EXTENSION neotoma_router CASCADE")
        conn.execute(
            "SELECT neotoma_router.set_partitions(%s)",
            ([with_params(p.admin_dsn, user=ROUTER_LINK) for p in partitions],),
        )
        conn.execute("CREATE USER MAPPING FOR PUBLIC SERVER neotoma_partitions")
    yield Layout(router, partitions, clusters)


def note(title: str) -> dict[str, Any]:
    return {"entities": [{"entity_type": "note", "title": title, "content": f"{title} body"}]}


def test_each_user_lives_on_one_partition(layout: Layout) -> None:
    (on0,) = layout.users_on(0)
    (on1,) = layout.users_on(1)
    stored = {}
    for user in (on0, on1):
        with connect_as(layout.router.agent_dsn, user) as conn:
            answer = call(conn, "store", note(f"kept by {user}"))
            stored[user] = answer["entities"][0]["entity_id"]
    assert (entity_count(layout.partitions[0], on0), entity_count(layout.partitions[1], on0)) == (1, 0)
    assert (entity_count(layout.partitions[0], on1), entity_count(layout.partitions[1], on1)) == (0, 1)
    # The router itself holds none of the users' data.
    with layout.router.admin() as conn:
        assert conn.execute("SELECT count(*) FROM neotoma.entities").fetchone() == (0,)

    with connect_as(layout.router.agent_dsn, on1) as conn:
        snapshot = call(conn, "retrieve_entity_snapshot", {"entity_id": stored[on1]})
        assert snapshot["snapshot"]["title"] == f"kept by {on1}"
        # Another user's entity is not found: row level security on the partition.
        with pytest.raises(ActionError) as refused:
            call(conn, "retrieve_entity_snapshot", {"entity_id": stored[on0]})
        assert refused.value.code == "ENTITY_NOT_FOUND"
        listed = call(conn, "retrieve_entities", {})
        assert [e["id"] for e in listed["entities"]] == [stored[on1]]
    # A trusted role may name the user instead of setting it.
    with psycopg.connect(layout.router.agent_dsn, autocommit=True) as conn:
        named = call(conn, "retrieve_entities", {"user_id": on0})
        assert [e["id"] for e in named["entities"]] == [stored[on0]]

    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


def test_errors_come_back_as_the_envelope(layout: Layout) -> None:
    (user,) = layout.users_on(1)
    with connect_as(layout.router.agent_dsn, user) as conn:
        with pytest.raises(ActionError) as invalid:
            call(conn, "store", {"entities": [{"title": "no type"}]})
        assert invalid.value.code == "VALIDATION_ERROR"
        with pytest.raises(ActionError) as missing:
            call(conn, "retrieve_entity_snapshot", {"entity_id": "ent_" + "0" * 32})
        assert missing.value.code == "ENTITY_NOT_FOUND"
        # A user_id other than the session's is refused, as on one server.
        with pytest.raises(ActionError) as other:
            call(conn, "retrieve_entities", {"user_id": new_user()})
        assert other.value.code == "FORBIDDEN"
    assert entity_count(layout.partitions[1], user) == 0


def test_only_the_gateways_role_calls_through_the_router(layout: Layout) -> None:
    user = new_user()
    # A user's own role on the router (not neotoma_service) is refused:
    # the router's link may act for any user on the partitions.
    with layout.router.admin() as conn:
        conn.execute("CREATE ROLE scale_plain LOGIN IN ROLE neotoma_user")
    plain = with_params(layout.router.admin_dsn, user="scale_plain")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(
            "SELECT set_config('request.jwt.claims', %s, false)", (f'{{"sub": "{user}"}}',)
        )
        with pytest.raises(ActionError) as refused:
            call(conn, "store", note("from a plain role"))
        assert refused.value.code == "FORBIDDEN"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT neotoma_router.call(%s, '{}', 'store', '{}')", (user,))
    # The gateway's kind of role chooses neither the partition nor whether
    # it acts as an operator: PL/Proxy's function is the router's alone.
    with psycopg.connect(layout.router.agent_dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT neotoma_router.run(1, %s, true, '{}', 'store', '{}')", (user,))
    # On a partition, neotoma.routed is the router's alone: not even the
    # gateway's kind of role may name users through it.
    partition = layout.partitions[0]
    with psycopg.connect(partition.agent_dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT neotoma.routed(%s, false, '{}', 'store', %s)", (user, '{"entities": []}'))
    with partition.admin() as conn:
        conn.execute("GRANT EXECUTE ON FUNCTION neotoma.routed(uuid, boolean, jsonb, text, text) TO neotoma_service")
    with psycopg.connect(partition.agent_dsn, autocommit=True) as conn:
        answer = conn.execute(
            "SELECT neotoma.routed(%s, false, '{}', 'store', %s)", (user, '{"entities": []}')
        ).fetchone()[0]
        assert answer["error"]["code"] == "FORBIDDEN", answer
    assert entity_count(partition, user) == 0


def schema(version: str) -> dict[str, Any]:
    return {
        "entity_type": "ticket",
        "schema_version": version,
        "activate": True,
        "schema_definition": {"fields": {"number": {"type": "string"}, "status": {"type": "string"}},
                              "identity_fields": ["number"]},
        "reducer_config": {"merge_policies": {}},
    }  # fmt: skip


def global_versions(db: Database) -> list[str]:
    with db.admin() as conn:
        rows = conn.execute(
            "SELECT schema_version FROM neotoma.entity_schemas "
            "WHERE user_id = neotoma.global_user_id() AND entity_type = 'ticket' ORDER BY schema_version"
        ).fetchall()
    return [r[0] for r in rows]


def test_global_schemas_reach_every_partition(layout: Layout) -> None:
    user = new_user()
    with connect_as(layout.router.operator_dsn, user) as conn:
        answer = call(conn, "register_schema", schema("1.0"))
        assert answer["scope"] == "global" and answer["activated"] is True
    assert [global_versions(p) for p in layout.partitions] == [["1.0"], ["1.0"]]
    # The gateway's kind of role is no operator: refused on every partition alike.
    with connect_as(layout.router.agent_dsn, user) as conn:
        with pytest.raises(ActionError) as refused:
            call(conn, "register_schema", schema("1.1"))
        assert refused.value.code == "FORBIDDEN"
    assert [global_versions(p) for p in layout.partitions] == [["1.0"], ["1.0"]]

    # One partition down: applied where it could be, and said so.
    layout.clusters[2].stop("fast")
    with connect_as(layout.router.operator_dsn, user) as conn:
        with pytest.raises(ActionError) as partial:
            call(conn, "register_schema", schema("2.0"))
    assert partial.value.code == "SERVICE_UNAVAILABLE"
    answers = {p["partition"]: p["answer"] for p in partial.value.envelope["details"]["partitions"]}
    assert "ok" in answers[0] and answers[1]["error"]["code"] == "SERVICE_UNAVAILABLE", answers
    layout.clusters[2].start()
    assert [global_versions(p) for p in layout.partitions] == [["1.0", "2.0"], ["1.0"]]
    # The router's verify() sees the partitions disagree; the same change
    # again (the partition that has it says so) makes them agree.
    with psycopg.connect(layout.router.agent_dsn, autocommit=True) as conn:
        verified = conn.execute("SELECT neotoma_router.verify()").fetchone()[0]
        assert verified["ok"] is False, verified
        states = [p["shared_state"] for p in verified["partitions"]]
        assert len(states) == 2 and states[0] != states[1], verified
        # neotoma.verify() on the router says so too.
        whole = conn.execute("SELECT neotoma.verify()").fetchone()[0]
        assert whole["ok"] is False and whole["mismatch_count"] == 0, whole
        assert whole["partitions"] == verified["partitions"], whole
    with connect_as(layout.router.operator_dsn, user) as conn:
        with pytest.raises(ActionError) as again:
            call(conn, "register_schema", schema("2.0"))
    answers = {p["partition"]: p["answer"] for p in again.value.envelope["details"]["partitions"]}
    assert answers[0]["error"]["code"] == "SCHEMA_EXISTS" and "ok" in answers[1], answers
    assert [global_versions(p) for p in layout.partitions] == [["1.0", "2.0"], ["1.0", "2.0"]]
    with psycopg.connect(layout.router.agent_dsn, autocommit=True) as conn:
        verified = conn.execute("SELECT neotoma_router.verify()").fetchone()[0]
        assert verified["ok"] is True, verified
        assert conn.execute("SELECT neotoma.verify()->'ok'").fetchone()[0] is True
    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


def test_a_placed_user_is_served_on_its_partition(layout: Layout) -> None:
    (user,) = layout.users_on(0)
    with layout.router.admin() as conn:
        conn.execute("INSERT INTO neotoma_router.placements (user_id, partition) VALUES (%s, 1)", (user,))
    with connect_as(layout.router.agent_dsn, user) as conn:
        call(conn, "store", note("placed"))
    assert (entity_count(layout.partitions[0], user), entity_count(layout.partitions[1], user)) == (0, 1)


async def store_and_read_back(gateway_args: tuple[str, ...], user: str, title: str, log_dir: Path) -> None:
    """Through a gateway of its own acting for `user`: stores a note titled
    `title`, reads it back, and hears of its next change."""
    gw = Gateway(*gateway_args, "--user-id", user, log_dir=log_dir)
    try:
        async with Client(gw.url) as c:
            stored = ok(await c.call_tool("store", note(title)))
            entity = stored["entities"][0]["entity_id"]
            found = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": entity}))
            assert found["snapshot"]["title"] == title
            uri = f"neotoma://entity/{entity}"
            async with c.listen(resource_subscriptions=[uri]) as sub:
                ok(await c.call_tool("correct", {"entity_id": entity, "entity_type": "note", "field": "content",
                                                 "value": "changed"}))  # fmt: skip
                with anyio.fail_after(PATIENCE):
                    assert (await anext(aiter(sub))).uri == uri
    finally:
        gw.stop()


async def test_the_gateway_serves_through_the_router(layout: Layout) -> None:
    users = [*layout.users_on(0), *layout.users_on(1)]
    for user in users:
        await store_and_read_back(("--no-auth", "--database-url", layout.router.agent_dsn), user,
                                  f"through the gateway, {user}", layout.clusters[0].dir)  # fmt: skip
    assert [entity_count(p, u) for p, u in zip(layout.partitions, users)] == [1, 1]
    assert uuid.UUID(users[0]) != uuid.UUID(users[1])


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A data directory the clusters' OS user can reach (pytest's tmp_path
    is private to root)."""
    base = Path(tempfile.mkdtemp(prefix="neotoma-partitions-"))
    base.chmod(0o755)
    yield base / "neotoma"
    shutil.rmtree(base, ignore_errors=True)


async def test_the_embedded_router_and_partitions(data_dir: Path) -> None:
    """`neotoma-mcp --partitions 2` (what `scripts/run --partitions 2` runs):
    a router and two partitions as private clusters, set up with no other
    configuration; users land on their partitions; a second start reuses
    them."""
    data = data_dir
    tmp_path = data.parent
    port = free_port()
    args = ("--no-auth", "--data-dir", str(data), "--pg-port", str(port), "--partitions", "2")
    users: list[str] = []
    for start in range(2):
        for _ in range(3):
            user = new_user()
            await store_and_read_back(args, user, f"embedded, start {start}", tmp_path)
            users.append(user)
    held = []
    for k in range(2):
        dsn = f"host={data / f'partition-{k}' / 'run'} port={port + 1 + k} user=neotoma dbname=neotoma"
        with psycopg.connect(dsn, autocommit=True) as conn:
            held.append({str(r[0]) for r in conn.execute("SELECT DISTINCT user_id FROM neotoma.entities")})
            assert_verified(conn)
    assert held[0] | held[1] == set(users) and not held[0] & held[1], held
    stop = subprocess.run([mcp_bin(), "cluster", "stop", "--data-dir", str(data), "--pg-port", str(port),
                           "--partitions", "2"], capture_output=True, text=True)  # fmt: skip
    assert stop.returncode == 0, stop.stderr
    # Another number of partitions would send users where their data is not.
    gw = None
    try:
        gw = Gateway("--no-auth", "--data-dir", str(data), "--pg-port", str(port), "--partitions", "3",
                     "--user-id", users[0], log_dir=tmp_path)  # fmt: skip
    except RuntimeError as refused:
        assert "partitions, not 3" in str(refused), refused
    else:
        gw.stop()
        raise AssertionError("a router of 2 partitions started with 3")
    subprocess.run([mcp_bin(), "cluster", "stop", "--data-dir", str(data), "--pg-port", str(port),
                    "--partitions", "3"], capture_output=True, text=True)  # fmt: skip


def test_upkeep_runs_on_every_partition(layout: Layout) -> None:
    """A gateway on a router (its handshake says so) runs the upkeep of
    semantic search's lists on every partition: a user past 4,096
    embeddings gets its lists built on its own partition."""
    (user,) = layout.users_on(1)
    with connect_as(layout.router.agent_dsn, user) as conn:
        for batch in range(9):
            call(conn, "store", {"entities": [{"entity_type": "note", "title": f"note {batch}-{i}",
                                               "content": f"harbour log {batch} {i}"} for i in range(500)]})  # fmt: skip
        assert conn.execute("SELECT neotoma.gateway_handshake()->'router'").fetchone()[0] is True
        built = conn.execute("SELECT neotoma_router.maintain_embedding_lists(1)").fetchone()[0]
        assert len(built) == 1, built
        # PL/Proxy's own function is the router owner's alone.
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT neotoma_router.maintain_lists_on_all(1)")
    with layout.partitions[1].admin() as conn:
        lists = conn.execute("SELECT count(*) FROM neotoma.embedding_lists WHERE user_id = %s", (user,)).fetchone()[0]
        assert lists > 0
        assert conn.execute("SELECT neotoma.gateway_handshake()->'router'").fetchone()[0] is False
    with layout.partitions[0].admin() as conn:
        assert conn.execute("SELECT count(*) FROM neotoma.embedding_lists").fetchone() == (0,)


def test_readyz_reports_each_partition(layout: Layout) -> None:
    """A gateway on the router reports each partition in /readyz: all ready,
    then one stopped (degraded: the other's users are still served)."""
    user = layout.users_on(0)[0]
    gw = Gateway("--no-auth", "--user-id", user, "--database-url", layout.router.agent_dsn,
                 log_dir=layout.clusters[0].dir)  # fmt: skip
    try:
        ready = httpx.get(f"{gw.base}/readyz", timeout=30)
        assert ready.status_code == 200, ready.text
        body = ready.json()
        assert body["status"] == "ready", body
        assert [(p["partition"], p["ready"]) for p in body["partitions"]] == [(0, True), (1, True)], body
        layout.clusters[2].stop("fast")
        degraded = httpx.get(f"{gw.base}/readyz", timeout=30)
        assert degraded.status_code == 200, degraded.text
        body = degraded.json()
        assert body["status"] == "degraded", body
        assert [(p["partition"], p["ready"]) for p in body["partitions"]] == [(0, True), (1, False)], body
        assert body["partitions"][1]["error"], body
    finally:
        gw.stop()
        layout.clusters[2].start()


def test_moving_a_user(layout: Layout) -> None:
    """`neotoma-mcp partition move`: the user's calls are refused while it
    is moved (retryable), its memory is copied, checked and served from the
    new partition, and the old copy is erased."""
    (user,) = layout.users_on(0)
    with connect_as(layout.router.agent_dsn, user) as conn:
        first = call(conn, "store", note("before the move"))["entities"][0]["entity_id"]
        second = call(conn, "store", note("also before"))["entities"][0]["entity_id"]
        call(conn, "create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": first,
                                           "target_entity_id": second})  # fmt: skip
        call(conn, "correct", {"entity_id": first, "entity_type": "note", "field": "title", "value": "corrected"})
    # While a move is under way the user's calls are refused, others' served.
    with layout.router.admin() as conn:
        assert conn.execute("SELECT neotoma_router.start_move(%s, 1)", (user,)).fetchone() == (0,)
    with connect_as(layout.router.agent_dsn, user) as conn:
        with pytest.raises(ActionError) as waiting:
            call(conn, "store", note("during the move"))
        assert waiting.value.code == "SERVICE_UNAVAILABLE" and waiting.value.envelope["details"]["retryable"] is True
    with connect_as(layout.router.agent_dsn, new_user()) as conn:
        call(conn, "store", note("someone else"))
    with layout.router.admin() as conn:
        conn.execute("SELECT neotoma_router.abort_move(%s)", (user,))

    moved = subprocess.run([mcp_bin(), "partition", "move", "--user", user, "--to", "1",
                            "--database-url", layout.router.admin_dsn], capture_output=True, text=True)  # fmt: skip
    assert moved.returncode == 0, moved.stderr
    assert (entity_count(layout.partitions[0], user), entity_count(layout.partitions[1], user)) == (0, 2)
    with connect_as(layout.router.agent_dsn, user) as conn:
        snapshot = call(conn, "retrieve_entity_snapshot", {"entity_id": first})
        assert snapshot["snapshot"]["title"] == "corrected"
        related = call(conn, "list_relationships", {"entity_id": first})
        assert len(related["relationships"]) == 1, related
        call(conn, "store", note("after the move"))
    assert entity_count(layout.partitions[1], user) == 3
    # Moving it where it is already is refused, and nothing changes.
    again = subprocess.run([mcp_bin(), "partition", "move", "--user", user, "--to", "1",
                            "--database-url", layout.router.admin_dsn], capture_output=True, text=True)  # fmt: skip
    assert again.returncode != 0 and "already" in again.stderr, again.stderr
    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


async def test_files_through_the_router(layout: Layout) -> None:
    """A file stored through the router is served by a signed URL the
    gateway hands out (checked with its partition's keys), and its bytes
    are read on its partition for a model interpreter."""
    (user,) = layout.users_on(1)
    content = b"From: a@example.com\nSubject: routed\n\nThe harbour plan, routed.\n"
    gw = Gateway("--no-auth", "--user-id", user, "--database-url", layout.router.agent_dsn,
                 "--public-url", "http://127.0.0.1:1", log_dir=layout.clusters[0].dir)  # fmt: skip
    try:
        async with Client(gw.url) as c:
            stored = ok(await c.call_tool("store", {"file_content": base64.b64encode(content).decode(),
                                                    "original_filename": "routed.eml"}))  # fmt: skip
            url = ok(await c.call_tool("retrieve_file_url", {"file_path": stored["source_id"]}))["signed_url"]
        assert url.startswith("http://127.0.0.1:1/files/"), url
        got = httpx.get(gw.base + url.removeprefix("http://127.0.0.1:1"), timeout=30)
        assert got.status_code == 200 and got.content == content, got.text[:300]
        tampered = url[:-4] + ("0000" if not url.endswith("0000") else "1111")
        assert httpx.get(gw.base + tampered.removeprefix("http://127.0.0.1:1"), timeout=30).status_code == 403
    finally:
        gw.stop()
    with psycopg.connect(layout.router.agent_dsn, autocommit=True) as conn:
        read = conn.execute("SELECT neotoma_router.file_content(%s, %s)", (user, stored["source_id"])).fetchone()[0]
        assert bytes(read) == content
        other = conn.execute("SELECT neotoma_router.file_content(%s, %s)", (new_user(), stored["source_id"])).fetchone()[0]
        assert other is None


def test_product_analytics_add_up_over_partitions(layout: Layout) -> None:
    users = layout.users_on(0, 2) + layout.users_on(1)
    for user in users:
        with connect_as(layout.router.agent_dsn, user) as conn:
            call(conn, "store", note(f"kept by {user}"))
    with psycopg.connect(layout.router.admin_dsn, autocommit=True) as conn:
        today = conn.execute("SELECT (now() AT TIME ZONE 'UTC')::date::text").fetchone()[0]
        monday = conn.execute("SELECT date_trunc('week', now() AT TIME ZONE 'UTC')::date::text").fetchone()[0]
    week = {"start": f"{monday}T00:00:00Z", "end": f"{today}T23:59:59Z"}

    def daily(dsn: str) -> dict[str, Any]:
        with connect_as(dsn, users[0]) as conn:
            return call(conn, "get_product_analytics", {"metric_type": "usage", "metric_name": "daily_active_users",
                                                        "time_range": week})

    # Each partition counts its own users; the router, all of them.
    mine = [daily(p.operator_dsn) for p in layout.partitions]
    assert [m["metadata"]["users"] for m in mine] == [2, 1], mine
    routed = daily(layout.router.operator_dsn)
    assert routed["metadata"]["users"] == 3 and "counters" not in routed, routed
    assert [d["date"] for d in routed["value"]] == [d["date"] for d in mine[0]["value"]]
    assert {d["date"]: d["value"] for d in routed["value"]}[today] == 3
    assert routed["time_range"] == mine[0]["time_range"]
    with connect_as(layout.router.operator_dsn, users[0]) as conn:
        cohorts = call(conn, "get_product_analytics", {"metric_type": "cohort", "time_range": week})
        assert cohorts["value"] == [{"date": monday, "value": 3}], cohorts
        curve = call(conn, "get_product_analytics", {"metric_type": "cohort", "cohort": monday, "time_range": week})
        assert curve["metadata"]["users"] == 3 and curve["value"][0] == {"date": monday, "value": 1.0}, curve
        # A share is made of the summed counts, not an average of shares.
        rate = call(conn, "get_product_analytics", {"metric_type": "activation",
                                                    "metric_name": "activation_first_entity_rate", "time_range": week})
        assert rate["value"] == 1.0 and rate["metadata"]["users"] == 3, rate
        funnel = call(conn, "get_product_analytics", {"metric_type": "funnel", "time_range": week})
        assert funnel["metadata"]["steps"][0] == {"step": "signup", "users": 3}, funnel
    # Not an operator: refused, by the router before any partition.
    with connect_as(layout.router.agent_dsn, users[0]) as conn:
        with pytest.raises(ActionError) as refused:
            call(conn, "get_product_analytics", {"metric_type": "usage"})
        assert refused.value.code == "FORBIDDEN"
    # A partition down: no sum of the others, but which one could not answer.
    layout.clusters[2].stop("fast")
    with pytest.raises(ActionError) as partial:
        daily(layout.router.operator_dsn)
    assert partial.value.code == "SERVICE_UNAVAILABLE"
    answers = {p["partition"]: p["answer"] for p in partial.value.envelope["details"]["partitions"]}
    assert "ok" in answers[0] and answers[1]["error"]["code"] == "SERVICE_UNAVAILABLE", answers
    layout.clusters[2].start()
    assert daily(layout.router.operator_dsn)["metadata"]["users"] == 3


class FixedEmbeddings(BaseHTTPRequestHandler):
    """A stand-in of OpenAI's POST /v1/embeddings: a vector of each text's
    length, so any text embeds."""

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = json.dumps({"object": "list", "model": body["model"], "data": [
            {"object": "embedding", "index": i, "embedding": [1.0, len(t) / 100.0]} for i, t in enumerate(inputs)]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def log_message(self, *args: Any) -> None:
        pass


def remote_embeddings(db: Database, user: str) -> int:
    with db.admin() as conn:
        return conn.execute("SELECT count(*) FROM neotoma.entity_embeddings WHERE user_id = %s AND model = %s",
                            (user, "remote:fixed-1")).fetchone()[0]  # fmt: skip


async def test_the_gateway_hears_every_partition(layout: Layout) -> None:
    """A gateway on a router listens on each partition (as its own login
    there, which the router's connection strings name without their user):
    a subscriber hears its changes whichever partition holds it, made
    through the gateway or through SQL on the router, and still after its
    user is moved to the other partition; a remote embeddings provider's
    worker embeds each partition's entities there."""
    port = free_port()
    provider = ThreadingHTTPServer(("127.0.0.1", port), FixedEmbeddings)
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    with psycopg.connect(layout.router.agent_dsn, autocommit=True) as conn:
        named = conn.execute("SELECT neotoma_router.partition_connections()").fetchone()[0]
        # A partition the router does not have is refused (modular mapping
        # would wrap it around to one it has).
        with pytest.raises(psycopg.errors.RaiseException, match="no partition 2"):
            conn.execute("SELECT neotoma_router.pending_embeddings(2, 'fixed-1', 1, '{}')")
    assert [p["partition"] for p in named] == [0, 1], named
    assert all(ROUTER_LINK not in p["connection"] and "user" not in p["connection"] for p in named), named
    gateways: list[Gateway] = []
    try:
        for user in [*layout.users_on(0), *layout.users_on(1)]:
            gw = Gateway("--no-auth", "--user-id", user, "--database-url", layout.router.agent_dsn,
                         "--embeddings-url", f"http://127.0.0.1:{port}/v1", "--embeddings-model", "fixed-1",
                         log_dir=layout.clusters[0].dir)  # fmt: skip
            gateways.append(gw)
            async with Client(gw.url) as c:
                entity = ok(await c.call_tool("store", note(f"heard of {user}")))["entities"][0]["entity_id"]
                uri = f"neotoma://entity/{entity}"
                async with c.listen(resource_subscriptions=[uri]) as sub:
                    events = aiter(sub)

                    async def hear() -> str:
                        with anyio.fail_after(PATIENCE):
                            return (await anext(events)).uri

                    ok(await c.call_tool("correct", {"entity_id": entity, "entity_type": "note", "field": "title",
                                                     "value": "changed through the gateway"}))  # fmt: skip
                    assert await hear() == uri
                    with connect_as(layout.router.agent_dsn, user) as conn:
                        call(conn, "correct", {"entity_id": entity, "entity_type": "note", "field": "title",
                                               "value": "changed in SQL"})  # fmt: skip
                    assert await hear() == uri
                    # Moved to the other partition: still heard.
                    here = layout.partition_of(user)
                    moved = subprocess.run([mcp_bin(), "partition", "move", "--user", user, "--to", str(1 - here),
                                            "--database-url", layout.router.admin_dsn],
                                           capture_output=True, text=True)  # fmt: skip
                    assert moved.returncode == 0, moved.stderr
                    ok(await c.call_tool("correct", {"entity_id": entity, "entity_type": "note", "field": "title",
                                                     "value": "changed after the move"}))  # fmt: skip
                    assert await hear() == uri
            # Its entity embedded by the provider, on the partition it is on now.
            on = layout.partitions[layout.partition_of(user)]
            for _ in range(PATIENCE * 10):
                if remote_embeddings(on, user) == 1:
                    break
                await anyio.sleep(0.1)
            assert remote_embeddings(on, user) == 1
    finally:
        for gw in gateways:
            gw.stop()
        provider.shutdown()
    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


async def test_read_replicas(layout: Layout, private_cluster: Callable[..., PrivateCluster]) -> None:
    """A streaming replica of partition 0 serves read-only actions when the
    caller asks: `fresh` once it has what the partition had when the call
    began (else refused, retryable), `stale` as it is; by default reads stay
    on the partition (read-after-write), and writes always go there. The
    gateway's --replica-reads sets it; /readyz reports the replica's lag."""
    replica = private_cluster(fsync=False, replica_of=layout.clusters[1])
    replica.start()
    with layout.router.admin() as conn:
        with pytest.raises(psycopg.errors.RaiseException, match="one replica each"):
            conn.execute("SELECT neotoma_router.set_replicas(%s)", ([replica.dsn],))
        conn.execute("SELECT neotoma_router.set_replicas(%s)",
                     ([with_params(replica.dsn, dbname=DATABASE, user=ROUTER_LINK), None],))  # fmt: skip
        conn.execute("CREATE USER MAPPING FOR PUBLIC SERVER neotoma_replicas")
    (user,) = layout.users_on(0)
    (other,) = layout.users_on(1)

    def session(mode: str, who: str = user) -> psycopg.Connection:
        conn = connect_as(layout.router.agent_dsn, who)
        conn.execute("SELECT set_config('neotoma.replica_reads', %s, false)", (mode,))
        return conn

    def title(mode: str, entity: str, who: str = user) -> str:
        with session(mode, who) as conn:
            return call(conn, "retrieve_entity_snapshot", {"entity_id": entity})["snapshot"]["title"]

    with session("fresh") as conn:  # a write goes to the partition all the same
        entity = call(conn, "store", note("kept"))["entities"][0]["entity_id"]
    assert title("fresh", entity) == "kept"
    with session("stale", other) as conn:  # a partition without a replica reads itself
        theirs = call(conn, "store", note("theirs"))["entities"][0]["entity_id"]
    assert title("stale", theirs, other) == "theirs"

    with psycopg.connect(with_params(replica.dsn, dbname=DATABASE), autocommit=True) as on_replica:
        on_replica.execute("SELECT pg_wal_replay_pause()")
        with session("stale") as conn:
            call(conn, "correct", {"entity_id": entity, "entity_type": "note", "field": "title", "value": "changed"})
        assert title("off", entity) == "changed"  # the partition: read-after-write
        assert title("stale", entity) == "kept"  # the replica, behind
        with pytest.raises(ActionError) as behind:
            title("fresh", entity)
        assert behind.value.code == "SERVICE_UNAVAILABLE" and behind.value.envelope["details"]["retryable"] is True
        assert "behind" in behind.value.envelope["message"]

        gw = Gateway("--no-auth", "--user-id", user, "--database-url", layout.router.agent_dsn,
                     "--replica-reads", "stale", log_dir=layout.clusters[0].dir)  # fmt: skip
        try:
            async with Client(gw.url) as c:
                read = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": entity}))
                assert read["snapshot"]["title"] == "kept"
            ready = httpx.get(f"{gw.base}/readyz", timeout=30).json()
            assert ready["partitions"][0]["replica"]["ready"] is True, ready
            assert ready["partitions"][0]["replica"]["lag_bytes"] > 0, ready
            assert "replica" not in ready["partitions"][1], ready
        finally:
            gw.stop()
        on_replica.execute("SELECT pg_wal_replay_resume()")
    assert title("fresh", entity) == "changed"
    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


def test_a_move_under_four_writers_loses_nothing(layout: Layout) -> None:
    """Four connections store for a user while it is moved: each write is
    either acknowledged or refused as retryable (SERVICE_UNAVAILABLE, while
    the move runs), never lost; every acknowledged entity is on the new
    partition, none is left on the old one, and both verify clean."""
    (user,) = layout.users_on(0)
    acknowledged: list[str] = []
    refusals: list[dict[str, Any]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(k: int) -> None:
        try:
            with connect_as(layout.router.agent_dsn, user) as conn:
                for i in range(400):  # bounded
                    if stop.is_set():
                        return
                    while True:
                        try:
                            stored = call(conn, "store", note(f"writer {k}, note {i}"))
                            break
                        except ActionError as refused:
                            with lock:
                                refusals.append(refused.envelope)
                            time.sleep(0.05)
                    with lock:
                        acknowledged.append(stored["entities"][0]["entity_id"])
        except BaseException as e:  # noqa: BLE001 (reported below)
            failures.append(e)

    def wait_for(count: int) -> None:
        for _ in range(600):
            with lock:
                if len(acknowledged) >= count or failures:
                    return
            time.sleep(0.05)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    try:
        wait_for(40)
        moved = subprocess.run([mcp_bin(), "partition", "move", "--user", user, "--to", "1",
                                "--database-url", layout.router.admin_dsn], capture_output=True, text=True)  # fmt: skip
        with lock:
            after_move = len(acknowledged)
        wait_for(after_move + 40)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
    assert not failures, failures
    assert moved.returncode == 0, moved.stderr
    # The writers were writing while the move ran: refused meanwhile, retried.
    assert refusals and all(r["code"] == "SERVICE_UNAVAILABLE" and r["details"]["retryable"] for r in refusals)
    assert len(acknowledged) > after_move > 0
    with layout.partitions[1].admin() as conn:
        held = {r[0] for r in conn.execute("SELECT id FROM neotoma.entities WHERE user_id = %s", (user,))}
    assert set(acknowledged) <= held, len(set(acknowledged) - held)
    assert len(held) == len(set(acknowledged))
    assert entity_count(layout.partitions[0], user) == 0
    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


async def test_a_partition_down_and_back(layout: Layout) -> None:
    """Through gateways on the router: with partition 1 down, its user's
    calls answer SERVICE_UNAVAILABLE (retryable) while partition 0's user is
    served; once it is back, its user is served again, no restart."""
    (first,) = layout.users_on(0)
    (second,) = layout.users_on(1)
    gateways = [Gateway("--no-auth", "--user-id", u, "--database-url", layout.router.agent_dsn,
                        log_dir=layout.clusters[0].dir) for u in (first, second)]  # fmt: skip
    try:
        async with Client(gateways[0].url) as c0, Client(gateways[1].url) as c1:
            ok(await c0.call_tool("store", note("before, on 0")))
            ok(await c1.call_tool("store", note("before, on 1")))
            layout.clusters[2].stop("fast")
            try:
                down = error(await c1.call_tool("store", note("while down")))
                assert down["code"] == "SERVICE_UNAVAILABLE" and down["details"]["retryable"] is True, down
                ok(await c0.call_tool("store", note("while 1 is down")))
            finally:
                layout.clusters[2].start()
            for _ in range(50):  # the router reconnects at the next call
                back = await c1.call_tool("store", note("after"))
                if not back.is_error:
                    break
                await anyio.sleep(0.1)
            ok(back)
    finally:
        for gw in gateways:
            gw.stop()
    assert (entity_count(layout.partitions[0], first), entity_count(layout.partitions[1], second)) == (2, 2)


def test_export_and_import_through_the_router(layout: Layout, tmp_path: Path) -> None:
    """`neotoma-mcp export` / `import` given the router (a superuser's URL)
    work on the user's partition: a user's memory exported from partition
    1 is imported as another user's, on that user's partition; both verify."""
    (first,) = layout.users_on(1)
    (second,) = layout.users_on(0)
    with connect_as(layout.router.agent_dsn, first) as conn:
        call(conn, "store", note("exported through the router"))
    out = tmp_path / "memory.jsonl"

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([mcp_bin(), *args, "--database-url", layout.router.admin_dsn],
                              capture_output=True, text=True)  # fmt: skip

    exported = cli("export", "--user", first, "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert "exported through the router" in out.read_text()
    imported = cli("import", "--user", second, str(out))
    assert imported.returncode == 0, imported.stderr
    assert (entity_count(layout.partitions[0], second), entity_count(layout.partitions[1], second)) == (1, 0)
    with connect_as(layout.router.agent_dsn, second) as conn:
        found = call(conn, "retrieve_entities", {"entity_type": "note"})
        assert [e["snapshot"]["title"] for e in found["entities"]] == ["exported through the router"]
    # A user being moved is neither exported nor imported meanwhile.
    with layout.router.admin() as conn:
        conn.execute("SELECT neotoma_router.start_move(%s, 0)", (first,))
    refused = cli("export", "--user", first, "--out", str(tmp_path / "again.jsonl"))
    assert refused.returncode != 0 and "being moved" in refused.stderr, refused.stderr
    with layout.router.admin() as conn:
        conn.execute("SELECT neotoma_router.abort_move(%s)", (first,))
    for p in layout.partitions:
        with p.admin() as conn:
            assert_verified(conn)


def test_connection_strings_carry_no_password(layout: Layout) -> None:
    """Every role can read a foreign server's options: the router refuses
    a connection string with a password (it belongs in the user mapping),
    in both forms, and keeps the partitions it had."""
    with layout.router.admin() as conn:
        before = conn.execute("SELECT array_agg(connection ORDER BY number) FROM neotoma_router.partitions").fetchone()[0]
        for secret in ["host=h dbname=d user=u password=s3cret", "host=h sslpassword=s3cret dbname=d",
                       "postgresql://u:s3cret@h/d", "postgres://h/d?password=s3cret"]:  # fmt: skip
            with pytest.raises(psycopg.errors.RaiseException, match="carries no password"):
                conn.execute("SELECT neotoma_router.set_partitions(%s)", ([secret, before[1]],))
            with pytest.raises(psycopg.errors.RaiseException, match="carries no password"):
                conn.execute("SELECT neotoma_router.set_replicas(%s)", ([secret, None],))
        after = conn.execute("SELECT array_agg(connection ORDER BY number) FROM neotoma_router.partitions").fetchone()[0]
        assert after == before
