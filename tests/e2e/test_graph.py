"""Graph, timeline and merge through MCP, plus the concurrency rule for
cycles (checked with two real transactions)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from conftest import DATABASE, Client, admin_dsn, error, new_user, ok, single_database

pytestmark = pytest.mark.anyio


async def store_ids(c: Client, entities: list[dict]) -> list[str]:
    stored = ok(await c.call_tool("store", {"entities": entities}))
    return [e["entity_id"] for e in stored["entities"]]


async def test_graph_actions_over_mcp(start_gateway) -> None:
    gw = start_gateway("--user-id", new_user())
    async with Client(gw.url) as c:
        epic, story, bug = await store_ids(
            c,
            [
                {"entity_type": "task", "title": "Epic", "status": "open", "due_date": "2024-06-30"},
                {"entity_type": "task", "title": "Story", "status": "open", "due_date": "2024-06-15"},
                {"entity_type": "task", "title": "Bug", "status": "open"},
            ],
        )
        rel = ok(
            await c.call_tool(
                "create_relationship",
                {"relationship_type": "PART_OF", "source_entity_id": story, "target_entity_id": epic, "metadata": {"order": 1}},
            )
        )
        again = ok(
            await c.call_tool(
                "create_relationship",
                {"relationship_type": "PART_OF", "source_entity_id": story, "target_entity_id": epic, "metadata": {"order": 1}},
            )
        )
        assert again["id"] == rel["id"]
        ok(await c.call_tool("create_relationship", {"relationship_type": "PART_OF", "source_entity_id": bug, "target_entity_id": story}))

        cycle = error(
            await c.call_tool("create_relationship", {"relationship_type": "PART_OF", "source_entity_id": epic, "target_entity_id": bug})
        )
        assert cycle["code"] == "CYCLE_DETECTED"
        assert cycle["details"]["cycle"] == [epic, bug, story, epic]
        bad = error(
            await c.call_tool("create_relationship", {"relationship_type": "OWNS", "source_entity_id": epic, "target_entity_id": bug})
        )
        assert bad["code"] == "INVALID_RELATIONSHIP_TYPE"

        listed = ok(await c.call_tool("list_relationships", {"entity_id": story}))
        assert listed["total"] == 2
        snap = ok(
            await c.call_tool(
                "get_relationship_snapshot",
                {"relationship_type": "PART_OF", "source_entity_id": story, "target_entity_id": epic},
            )
        )
        assert snap["snapshot"]["snapshot"] == {"order": 1}
        assert snap["snapshot"]["observation_count"] == 1

        related = ok(await c.call_tool("retrieve_related_entities", {"entity_id": bug, "max_hops": 3}))
        assert [(e["id"], e["hop"]) for e in related["entities"]] == [(story, 1), (epic, 2)]
        assert related["entities"][0]["snapshot"]["title"] == "Story"

        hood = ok(await c.call_tool("retrieve_graph_neighborhood", {"node_id": story, "include_observations": True}))
        assert {e["id"] for e in hood["related_entities"]} == {epic, bug}
        assert [t["event_type"] for t in hood["timeline_events"]] == ["TaskDue"]
        assert len(hood["observations"]) == 1

        events = ok(await c.call_tool("list_timeline_events", {"event_type": "TaskDue"}))
        assert [e["event_timestamp"][:10] for e in events["events"]] == ["2024-06-30", "2024-06-15"]
        window = ok(await c.call_tool("list_timeline_events", {"after_date": "2024-06-01", "before_date": "2024-06-20"}))
        assert [e["entity_ids"] for e in window["events"]] == [[story]]

        # A duplicate of Story, then merged into it.
        (dup,) = await store_ids(c, [{"entity_type": "task", "title": "Story (copy)", "status": "done", "notes": "dup"}])
        ok(await c.call_tool("create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": dup, "target_entity_id": bug}))
        merged = ok(await c.call_tool("merge_entities", {"from_entity_id": dup, "to_entity_id": story, "merge_reason": "duplicate"}))
        assert merged["observations_moved"] == 1 and merged["relationships_moved"] == 1
        redirected = ok(await c.call_tool("retrieve_entity_snapshot", {"entity_id": dup}))
        assert redirected["entity_id"] == story and redirected["redirected_from"] == dup
        assert redirected["snapshot"]["notes"] == "dup"
        twice = error(await c.call_tool("merge_entities", {"from_entity_id": dup, "to_entity_id": story}))
        assert twice["code"] == "ENTITY_ALREADY_MERGED"
        kinds = {r["relationship_type"] for r in ok(await c.call_tool("list_relationships", {"entity_id": story}))["relationships"]}
        assert kinds == {"PART_OF", "REFERS_TO"}


async def test_graph_is_isolated_between_users(start_gateway) -> None:
    ga = start_gateway("--user-id", new_user())
    gb = start_gateway("--user-id", new_user())
    async with Client(ga.url) as a, Client(gb.url) as b:
        x, y = await store_ids(a, [{"entity_type": "note", "title": "X", "content": "x"}, {"entity_type": "note", "title": "Y", "content": "y", "created_date": "2024-01-01"}])
        ok(await a.call_tool("create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": x, "target_entity_id": y}))
        (z,) = await store_ids(b, [{"entity_type": "note", "title": "Z", "content": "z"}])
        assert error(await b.call_tool("list_relationships", {"entity_id": x}))["code"] == "ENTITY_NOT_FOUND"
        assert error(await b.call_tool("retrieve_related_entities", {"entity_id": x}))["code"] == "ENTITY_NOT_FOUND"
        assert (
            error(await b.call_tool("create_relationship", {"relationship_type": "REFERS_TO", "source_entity_id": z, "target_entity_id": x}))["code"]
            == "ENTITY_NOT_FOUND"
        )
        assert error(await b.call_tool("merge_entities", {"from_entity_id": z, "to_entity_id": y}))["code"] == "ENTITY_NOT_FOUND"
        assert ok(await b.call_tool("list_timeline_events", {}))["total"] == 0
        assert ok(await a.call_tool("list_timeline_events", {}))["total"] == 1


@single_database
def test_concurrent_inserts_cannot_close_a_cycle(database: str) -> None:
    """T1 adds A→B and holds its transaction open; T2 adds B→A meanwhile. T2
    waits for T1's cycle lock, then sees A→B and refuses: no cycle, ever."""
    user = new_user()
    with psycopg.connect(admin_dsn(DATABASE), autocommit=True) as c:
        c.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
        r = c.execute(
            "SELECT neotoma.store(%s::jsonb)",
            ('{"entities": [{"entity_type": "task", "title": "A", "status": "x"}, {"entity_type": "task", "title": "B", "status": "x"}]}',),
        ).fetchone()[0]
        a, b = (e["entity_id"] for e in r["entities"])

    def rel(conn: psycopg.Connection, s: str, t: str):
        return conn.execute(
            "SELECT neotoma.create_relationship(jsonb_build_object('relationship_type', 'DEPENDS_ON', "
            "'source_entity_id', %s::text, 'target_entity_id', %s::text))",
            (s, t),
        ).fetchone()[0]

    t1 = psycopg.connect(admin_dsn(DATABASE))
    t2 = psycopg.connect(admin_dsn(DATABASE))
    outcome: dict[str, object] = {}
    try:
        for conn in (t1, t2):
            conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))
            conn.commit()
        rel(t1, a, b)  # T1 open, holding the DEPENDS_ON lock

        def second() -> None:
            try:
                outcome["t2"] = rel(t2, b, a)
                t2.commit()
            except psycopg.Error as e:
                outcome["t2"] = e
                t2.rollback()

        th = threading.Thread(target=second)
        th.start()
        time.sleep(1.0)
        assert th.is_alive(), "T2 must wait for T1's cycle lock"
        t1.commit()
        th.join(timeout=60)
        assert not th.is_alive()
    finally:
        t1.close()
        t2.close()
    err = outcome["t2"]
    assert isinstance(err, psycopg.Error) and err.sqlstate == "NT001", err
    assert '"CYCLE_DETECTED"' in err.diag.message_detail
    with psycopg.connect(admin_dsn(DATABASE)) as c:
        rows = c.execute(
            "SELECT count(*) FROM neotoma.relationships WHERE user_id = %s AND relationship_type = 'DEPENDS_ON'", (user,)
        ).fetchone()
        assert rows == (1,)
