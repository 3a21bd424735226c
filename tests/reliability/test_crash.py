"""Crash safety: stores run continuously in a private cluster (fsync on)
when its postmaster is killed with SIGKILL. After crash recovery every store
whose call returned (its commit acknowledged) is there with its
observations, no store is there half, and verify() is clean. Two rounds on
the same cluster."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import psycopg
from conftest import (
    ActionError,
    PrivateCluster,
    assert_verified,
    call,
    connect_as,
    new_user,
    prepare_database,
    report,
)

WRITERS = 4
ROUNDS = 2
RUN_BEFORE_CRASH_SECONDS = 1.5
MAX_STORES_PER_WRITER = 100_000  # bound of each writer's loop
SHARED_EMAIL = "crash@example.com"


def writer(dsn: str, user: str, round_: int, w: int, stop: threading.Event, acked: list[dict[str, Any]], outcome: dict[str, Any]) -> Callable[[], None]:
    """Stores one shared person and one of its own per call until the
    connection is lost (or `stop`); records every store that returned."""

    def run() -> None:
        try:
            conn = connect_as(dsn, user)
        except psycopg.OperationalError as e:
            outcome["ended"] = f"could not connect: {e}"
            return
        try:
            for j in range(MAX_STORES_PER_WRITER):
                if stop.is_set():
                    outcome["ended"] = "stopped"
                    return
                entities = [
                    {"entity_type": "person", "email": SHARED_EMAIL, "name": f"C {round_}-{w}-{j}"},
                    {"entity_type": "person", "email": f"w{w}.r{round_}.{j}@example.com", "name": f"W {w}"},
                ]
                try:
                    r = call(conn, "store", {"entities": entities})
                except psycopg.OperationalError as e:
                    outcome["ended"] = "connection lost"
                    outcome["error"] = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                    return
                acked.append(r)
            outcome["ended"] = "loop bound reached"
        except (ActionError, psycopg.Error) as e:
            outcome["ended"] = "unexpected error"
            outcome["error"] = repr(e)
        finally:
            try:
                conn.close()
            except psycopg.Error:
                pass

    return run


def check_after_recovery(admin: psycopg.Connection, user: str, acked: list[dict[str, Any]]) -> None:
    sources = [r["source_id"] for r in acked]
    observations = [e["observation_id"] for r in acked for e in r["entities"]]
    obs_sources = [r["source_id"] for r in acked for _ in r["entities"]]
    assert len(set(sources)) == len(sources), "each acknowledged store is new content"
    present = admin.execute(
        "SELECT count(*) FROM neotoma.sources WHERE user_id = %s AND id = ANY(%s::uuid[])", (user, sources)
    ).fetchone()[0]
    assert present == len(sources), f"{len(sources) - present} acknowledged stores are gone after the crash"
    matched = admin.execute(
        """SELECT count(*) FROM unnest(%s::uuid[], %s::uuid[]) AS a(obs, src)
           JOIN neotoma.observations o ON o.user_id = %s AND o.id = a.obs AND o.source_id = a.src""",
        (observations, obs_sources, user),
    ).fetchone()[0]
    assert matched == len(observations), f"{len(observations) - matched} acknowledged observations are gone"
    # Atomic: every source that survived (acknowledged or not) has its run
    # completed and one observation per stored entity, none half-written.
    partial = admin.execute(
        """SELECT s.id, jsonb_array_length(s.content->'entities') AS expected,
                  (SELECT count(*) FROM neotoma.observations o WHERE o.user_id = s.user_id AND o.source_id = s.id) AS got,
                  (SELECT array_agg(status) FROM neotoma.interpretation_runs r WHERE r.user_id = s.user_id AND r.source_id = s.id) AS runs
           FROM neotoma.sources s WHERE s.user_id = %s AND s.source_type = 'structured'""",
        (user,),
    ).fetchall()
    bad = [row for row in partial if row[1] != row[2] or row[3] != ["completed"]]
    assert not bad, f"stores left half-written: {bad[:5]}"
    # The shared person's snapshot counts every observation of it.
    row = admin.execute(
        """SELECT s.observation_count, (SELECT count(*) FROM neotoma.observations o
                                         WHERE o.user_id = s.user_id AND o.entity_id = s.entity_id)
           FROM neotoma.entity_snapshots s JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id
           WHERE s.user_id = %s AND e.identity_key = 'email=' || lower(%s)""",
        (user, SHARED_EMAIL),
    ).fetchone()
    assert row is not None and row[0] == row[1], f"shared person: snapshot counts {row}"
    assert_verified(admin)


def test_acknowledged_stores_survive_kill_9(private_cluster: Callable[..., PrivateCluster]) -> None:
    cluster = private_cluster(fsync=True)
    cluster.start()
    db = prepare_database(cluster.dsn, "neotoma_crash")
    with psycopg.connect(db.admin_dsn, autocommit=True) as conn:
        assert conn.execute("SHOW fsync").fetchone() == ("on",)
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
    user = new_user()
    acked: list[dict[str, Any]] = []

    for round_ in range(ROUNDS):
        stop = threading.Event()
        per_writer: list[list[dict[str, Any]]] = [[] for _ in range(WRITERS)]
        outcomes: list[dict[str, Any]] = [{} for _ in range(WRITERS)]
        threads = [
            threading.Thread(target=writer(db.agent_dsn, user, round_, w, stop, per_writer[w], outcomes[w]), daemon=True)
            for w in range(WRITERS)
        ]
        for t in threads:
            t.start()
        # Let them store for a while, and until each has some stores
        # acknowledged (bounded); then crash mid-stream.
        started = time.monotonic()
        for _ in range(1200):
            if time.monotonic() - started >= RUN_BEFORE_CRASH_SECONDS and all(len(w) >= 5 for w in per_writer):
                break
            if not all(t.is_alive() for t in threads):
                break
            stop.wait(0.05)
        crash = cluster.crash()
        stop.set()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a writer hung after the crash"
        unexpected = [o for o in outcomes if o.get("ended") not in ("connection lost", "stopped")]
        assert not unexpected, f"writers ended unexpectedly: {unexpected}"
        assert any(o.get("ended") == "connection lost" for o in outcomes), (
            f"no writer was cut off by the crash: {outcomes}"
        )
        round_acked = [r for rs in per_writer for r in rs]
        assert all(w for w in per_writer), f"a writer stored nothing before the crash: {[len(w) for w in per_writer]}"
        acked.extend(round_acked)
        report(
            f"crash round {round_ + 1}: {len(round_acked)} stores acknowledged before kill -9 "
            f"({crash['children']} postmaster children, {crash['killed_leftover']} outlived it and were killed); "
            f"writers ended: {[o.get('ended') for o in outcomes]}"
        )

        cluster.start()  # crash recovery
        recoveries = cluster.log.read_text(errors="replace").count("automatic recovery in progress")
        assert recoveries == round_ + 1, f"the restart did not go through crash recovery:\n{cluster.log_tail()}"
        with psycopg.connect(db.admin_dsn, autocommit=True) as admin:
            check_after_recovery(admin, user, acked)
