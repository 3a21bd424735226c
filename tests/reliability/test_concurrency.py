"""Concurrent sessions against one database of the shared test cluster:
parallel stores to one entity, overlapping entity sets, corrections and
merges interleaved with stores, identical calls at once, and REPEATABLE READ
transactions. Afterwards the snapshots must be exactly what recomputing them
from the observations gives (neotoma.verify()).

Each test acts for a fresh user, so row level security keeps the tests apart;
verify() runs as superuser and checks every user's data."""

from __future__ import annotations

import base64
import random
import threading
from collections import Counter
from typing import Any

import psycopg
import pytest
from conftest import ActionError, Database, assert_verified, call, new_user, report, run_parallel

PERSON = "person"


def person(email: str, name: str) -> dict[str, str]:
    return {"entity_type": PERSON, "email": email, "name": name}


def observations_of(admin: psycopg.Connection, user: str, entity_id: str) -> tuple[int, int]:
    """(snapshot observation_count, observations in the table) of an entity."""
    row = admin.execute(
        """SELECT (SELECT observation_count FROM neotoma.entity_snapshots WHERE user_id = %(u)s AND entity_id = %(e)s),
                  (SELECT count(*) FROM neotoma.observations WHERE user_id = %(u)s AND entity_id = %(e)s)""",
        {"u": user, "e": entity_id},
    ).fetchone()
    return row[0], row[1]


def is_sqlstate(e: BaseException, state: str) -> bool:
    return isinstance(e, psycopg.Error) and e.sqlstate == state


# ------------------------------------------------------------------ (a)


def test_parallel_stores_to_one_entity(shared_db: Database, admin: psycopg.Connection) -> None:
    """8 sessions × 50 stores of distinct names to one person (same e-mail),
    all at once: no observation is lost from the snapshot."""
    user, email, sessions, stores = new_user(), "ann@example.com", 8, 50
    conns = [shared_db.session(user) for _ in range(sessions)]

    def worker(i: int):
        def run(barrier: threading.Barrier) -> list[dict[str, Any]]:
            barrier.wait()
            return [call(conns[i], "store", {"entities": [person(email, f"Ann {i}-{j}")]}) for j in range(stores)]

        return run

    try:
        results = [r for rs in run_parallel([worker(i) for i in range(sessions)]) for r in rs]
    finally:
        for c in conns:
            c.close()

    assert len(results) == sessions * stores
    assert not any(r["deduplicated"] for r in results), "distinct content was answered as a duplicate"
    entity_ids = {e["entity_id"] for r in results for e in r["entities"]}
    assert len(entity_ids) == 1, f"one e-mail, one person; got {entity_ids}"
    assert len({r["source_id"] for r in results}) == sessions * stores
    (entity,) = entity_ids
    count, in_table = observations_of(admin, user, entity)
    assert in_table == sessions * stores
    assert count == in_table, f"snapshot counts {count} observations, the table holds {in_table}"
    names = {f"Ann {i}-{j}" for i in range(sessions) for j in range(stores)}
    snap = admin.execute(
        "SELECT snapshot FROM neotoma.entity_snapshots WHERE user_id = %s AND entity_id = %s", (user, entity)
    ).fetchone()[0]
    assert snap["email"] == email and snap["name"] in names
    assert_verified(admin)


# ------------------------------------------------------------------ (b)


def test_overlapping_entity_sets(shared_db: Database, admin: psycopg.Connection) -> None:
    """6 sessions × 40 stores, each naming 3 of 5 persons in random order:
    stores lock several entities at once. Deadlocks (40P01) are retried and
    counted; any other error fails."""
    user, threads, stores, max_attempts = new_user(), 6, 40, 10
    pool = [f"p{k}@example.com" for k in range(5)]
    conns = [shared_db.session(user) for _ in range(threads)]
    deadlocks = Counter()

    def worker(i: int):
        rng = random.Random(1000 + i)

        def run(barrier: threading.Barrier) -> list[dict[str, Any]]:
            barrier.wait()
            out = []
            for j in range(stores):
                entities = [person(email, f"P {i}-{j}-{k}") for k, email in enumerate(rng.sample(pool, 3))]
                for attempt in range(max_attempts):
                    try:
                        out.append(call(conns[i], "store", {"entities": entities}))
                        break
                    except psycopg.Error as e:
                        if not is_sqlstate(e, "40P01") or attempt == max_attempts - 1:
                            raise
                        deadlocks[i] += 1
            return out

        return run

    try:
        results = [r for rs in run_parallel([worker(i) for i in range(threads)]) for r in rs]
    finally:
        for c in conns:
            c.close()

    total_deadlocks = sum(deadlocks.values())
    report(f"overlapping entity sets: {total_deadlocks} deadlocks (40P01) retried in {threads * stores} stores")
    assert len(results) == threads * stores
    assert not any(r["deduplicated"] for r in results)
    entity_ids = {e["entity_id"] for r in results for e in r["entities"]}
    assert len(entity_ids) == len(pool)
    for entity in entity_ids:
        count, in_table = observations_of(admin, user, entity)
        assert count == in_table, f"{entity}: snapshot counts {count}, table holds {in_table}"
    total = admin.execute("SELECT count(*) FROM neotoma.observations WHERE user_id = %s", (user,)).fetchone()[0]
    assert total == threads * stores * 3
    assert_verified(admin)


# ------------------------------------------------------------------ (c)

ACCEPTABLE_MERGE_CODES = {"ENTITY_ALREADY_MERGED", "ENTITY_NOT_FOUND"}


def test_corrections_and_merges_interleaved_with_stores(shared_db: Database, admin: psycopg.Connection) -> None:
    """Stores, corrections and merges on a pool of persons at once. Merges may
    answer ENTITY_ALREADY_MERGED or ENTITY_NOT_FOUND; raw Postgres errors
    (deadlocks included) fail the test."""
    user = new_user()
    pool = [f"m{k}@example.com" for k in range(10)]
    with shared_db.session(user) as s:
        seeded = call(s, "store", {"entities": [person(e, f"Seed {k}") for k, e in enumerate(pool)]})
    ids = [e["entity_id"] for e in seeded["entities"]]
    assert len(set(ids)) == len(pool)

    outcomes: Counter[str] = Counter()
    merges_done: list[tuple[str, str]] = []
    lock = threading.Lock()

    def note(outcome: str) -> None:
        with lock:
            outcomes[outcome] += 1

    def storer(i: int):
        rng = random.Random(2000 + i)

        def run(barrier: threading.Barrier) -> None:
            with shared_db.session(user) as conn:
                barrier.wait()
                for j in range(60):
                    emails = rng.sample(pool, rng.choice([1, 2]))
                    r = call(conn, "store", {"entities": [person(e, f"S {i}-{j}-{k}") for k, e in enumerate(emails)]})
                    assert r["deduplicated"] is False
                    note("store ok")

        return run

    def corrector(i: int):
        rng = random.Random(3000 + i)

        def run(barrier: threading.Barrier) -> None:
            with shared_db.session(user) as conn:
                barrier.wait()
                for j in range(40):
                    args = {"entity_id": rng.choice(ids), "entity_type": PERSON, "field": "phone", "value": f"+1 555 {i}{j:03}"}
                    try:
                        r = call(conn, "correct", args)
                        assert r["field"] == "phone" and r["value"] == args["value"]
                        note("correct ok")
                    except ActionError as e:
                        assert e.code in ACCEPTABLE_MERGE_CODES, e.envelope
                        note(f"correct {e.code}")

        return run

    def merger(barrier: threading.Barrier) -> None:
        rng = random.Random(4000)
        with shared_db.session(user) as conn:
            barrier.wait()
            live = list(ids)  # as far as this thread knows
            for j in range(16):
                # Mostly pairs of live entities, now and then any pair (may be merged already).
                a, b = rng.sample(live if len(live) > 1 and rng.random() < 0.75 else ids, 2)
                try:
                    r = call(conn, "merge_entities", {"from_entity_id": a, "to_entity_id": b})
                    assert r["from_entity_id"] == a and r["to_entity_id"] == b
                    merges_done.append((a, b))
                    live.remove(a)
                    note("merge ok")
                except ActionError as e:
                    assert e.code in ACCEPTABLE_MERGE_CODES, e.envelope
                    note(f"merge {e.code}")
                # Let some stores and corrections through between merges.
                threading.Event().wait(0.02)

    run_parallel([storer(0), storer(1), storer(2), corrector(0), corrector(1), merger])
    report(f"corrections and merges: {dict(sorted(outcomes.items()))}")

    assert merges_done, "no merge succeeded: the test did not exercise merging"
    assert outcomes["store ok"] == 180
    assert sum(v for k, v in outcomes.items() if k.startswith("correct")) == 80
    rows = admin.execute(
        "SELECT id, merged_into FROM neotoma.entities WHERE user_id = %s AND id = ANY(%s)", (user, ids)
    ).fetchall()
    merged_into = dict(rows)
    assert sum(1 for v in merged_into.values() if v is not None) == len(merges_done)
    logged = admin.execute("SELECT count(*) FROM neotoma.entity_merges WHERE user_id = %s", (user,)).fetchone()[0]
    assert logged == len(merges_done)

    def resolve(start: str) -> str:
        """Follows merged_into to a live entity (bounded: no cycles)."""
        cur, hops = start, 0
        while merged_into.get(cur) is not None and hops <= len(ids):
            cur, hops = merged_into[cur], hops + 1
        assert merged_into.get(cur) is None, f"merge chain from {start} does not end"
        return cur

    for a, b in merges_done:
        assert resolve(a) == resolve(b), f"{a} was merged into {b} but they resolve apart"
    live = [e for e, m in merged_into.items() if m is None]
    counted = admin.execute(
        "SELECT coalesce(sum(observation_count), 0) FROM neotoma.entity_snapshots WHERE user_id = %s AND entity_id = ANY(%s)",
        (user, live),
    ).fetchone()[0]
    total = admin.execute("SELECT count(*) FROM neotoma.observations WHERE user_id = %s", (user,)).fetchone()[0]
    assert counted == total, f"live snapshots count {counted} observations, the table holds {total}"
    assert_verified(admin)


def wait_until_blocked_or_done(admin: psycopg.Connection, pid: int, thread: threading.Thread) -> str:
    """Polls (bounded) until backend `pid` waits for a lock or `thread` has
    finished its call; answers which."""
    for _ in range(3000):
        if not thread.is_alive():
            return "done"
        row = admin.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        if row is not None and row[0] == "Lock":
            return "blocked"
        threading.Event().wait(0.01)
    raise AssertionError(f"backend {pid} neither finished nor waited for a lock")


def test_merge_and_store_naming_both_entities_do_not_deadlock(shared_db: Database, admin: psycopg.Connection) -> None:
    """The interleaving behind the deadlocks the interleaved test above can
    hit, made deterministic with actions only: a store to T is in progress
    (its transaction still open), a merge of F into T (F < T by id) locks F
    and waits for T, and a store naming T then F arrives. When the first
    store commits, the merge and the second store must both succeed (or
    answer with an envelope); a deadlock (40P01) is a failure."""
    user = new_user()
    with shared_db.session(user) as s:
        r = call(s, "store", {"entities": [person("one@example.com", "One"), person("two@example.com", "Two")]})
    (f_id, f_email), (t_id, t_email) = sorted(
        (e["entity_id"], email) for e, email in zip(r["entities"], ["one@example.com", "two@example.com"])
    )
    merger, storer, holder = shared_db.session(user), shared_db.session(user), shared_db.session(user)
    outcome: dict[str, Any] = {}

    def attempt(name: str, conn: psycopg.Connection, action: str, args: dict[str, Any]) -> threading.Thread:
        def run() -> None:
            try:
                outcome[name] = call(conn, action, args)
            except (ActionError, psycopg.Error) as e:
                outcome[name] = e

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    try:
        holder.execute("BEGIN")
        held = call(holder, "store", {"entities": [person(t_email, "T held")]})
        assert held["entities"][0]["entity_id"] == t_id
        tm = attempt("merge", merger, "merge_entities", {"from_entity_id": f_id, "to_entity_id": t_id})
        merge_state = wait_until_blocked_or_done(admin, merger.info.backend_pid, tm)
        ts = attempt("store", storer, "store", {"entities": [person(t_email, "T again"), person(f_email, "F again")]})
        store_state = wait_until_blocked_or_done(admin, storer.info.backend_pid, ts)
        holder.execute("COMMIT")
        tm.join(120)
        ts.join(120)
        assert not tm.is_alive() and not ts.is_alive(), "merge or store hung"
    finally:
        for c in (merger, storer, holder):
            c.close()
    report(f"merge vs store in the other order: merge {merge_state}, store {store_state} before the release")
    raw = {k: v for k, v in outcome.items() if isinstance(v, psycopg.Error)}
    assert not raw, "raw Postgres errors: " + "; ".join(
        f"{k}: {v.sqlstate} {str(v).splitlines()[0]}" for k, v in raw.items()
    )
    assert not isinstance(outcome["merge"], ActionError), outcome["merge"].envelope
    assert outcome["merge"]["to_entity_id"] == t_id
    assert not isinstance(outcome["store"], ActionError), outcome["store"].envelope
    assert {e["entity_id"] for e in outcome["store"]["entities"]} <= {f_id, t_id}
    count, _ = observations_of(admin, user, t_id)
    assert count == 5, f"T counts {count} observations, expected its own 3 and F's 2"
    assert_verified(admin)


# ------------------------------------------------------------------ (d)


def identical_calls(shared_db: Database, user: str, action: str, args: dict[str, Any], n: int = 8) -> list[dict[str, Any]]:
    conns = [shared_db.session(user) for _ in range(n)]

    def worker(i: int):
        def run(barrier: threading.Barrier) -> dict[str, Any]:
            barrier.wait()
            return call(conns[i], action, args)

        return run

    try:
        return run_parallel([worker(i) for i in range(n)])
    finally:
        for c in conns:
            c.close()


@pytest.mark.parametrize("round_", range(3))
def test_identical_calls_at_once(shared_db: Database, admin: psycopg.Connection, round_: int) -> None:
    """8 sessions make the same call at once: the same structured content,
    the same file, the same correction. All succeed; exactly one does the
    work, the others answer it as already done."""
    user = new_user()
    with shared_db.session(user) as s:
        target = call(s, "store", {"entities": [{"entity_type": "note", "title": f"first {round_}"}]})["entities"][0]["entity_id"]

    stored = identical_calls(shared_db, user, "store", {"entities": [{"entity_type": "note", "title": f"same {round_}"}]})
    assert sorted(r["deduplicated"] for r in stored) == [False] + [True] * 7, [r["deduplicated"] for r in stored]
    assert len({r["source_id"] for r in stored}) == 1
    assert len({e["observation_id"] for r in stored for e in r["entities"]}) == 1

    content = base64.b64encode(f"reliability file, round {round_}\n".encode()).decode()
    files = identical_calls(shared_db, user, "store", {"file_content": content, "mime_type": "text/plain"})
    assert sorted(r["deduplicated"] for r in files) == [False] + [True] * 7, [r["deduplicated"] for r in files]
    assert len({r["source_id"] for r in files}) == 1

    correction = {"entity_id": target, "entity_type": "note", "field": "summary", "value": f"S {round_}"}
    corrected = identical_calls(shared_db, user, "correct", correction)
    messages = [r["message"] for r in corrected]
    assert sum(m.startswith("corrected") for m in messages) == 1, messages
    assert sum(m.startswith("already corrected") for m in messages) == 7, messages
    assert len({r["observation_id"] for r in corrected}) == 1

    counts = admin.execute(
        """SELECT (SELECT count(*) FROM neotoma.sources WHERE user_id = %(u)s),
                  (SELECT count(*) FROM neotoma.observations WHERE user_id = %(u)s),
                  (SELECT count(*) FROM neotoma.files WHERE user_id = %(u)s)""",
        {"u": user},
    ).fetchone()
    # first note, same note, the file, the correction: one source and one observation each.
    assert counts == (4, 4, 1), counts
    assert_verified(admin)


# ------------------------------------------------------------------ (e)


def rr_begin(conn: psycopg.Connection) -> None:
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    conn.execute("SELECT 1 FROM neotoma.entities LIMIT 1").fetchall()  # takes the snapshot


def test_repeatable_read_never_closes_a_cycle(shared_db: Database, admin: psycopg.Connection) -> None:
    """Two REPEATABLE READ transactions, snapshots taken, create PART_OF a→b
    and b→a at once, 20 times on fresh pairs: at most one edge of each pair
    exists afterwards. 40001 and CYCLE_DETECTED are the acceptable failures."""
    user, rounds = new_user(), 20
    with shared_db.session(user) as s:
        stored = call(s, "store", {"entities": [{"entity_type": "note", "title": f"{side}{k}"} for k in range(rounds) for side in "ab"]})
    ids = [e["entity_id"] for e in stored["entities"]]
    assert len(set(ids)) == 2 * rounds
    pairs = [(ids[2 * k], ids[2 * k + 1]) for k in range(rounds)]

    conns = [shared_db.session(user) for _ in range(2)]
    outcomes: Counter[str] = Counter()

    def link(i: int, source: str, target: str):
        def run(barrier: threading.Barrier) -> str:
            conn = conns[i]
            rr_begin(conn)
            barrier.wait()
            try:
                r = call(conn, "create_relationship", {"relationship_type": "PART_OF", "source_entity_id": source, "target_entity_id": target})
                assert r["relationship_type"] == "PART_OF"
                conn.execute("COMMIT")
                return "created"
            except ActionError as e:
                conn.execute("ROLLBACK")
                assert e.code == "CYCLE_DETECTED", e.envelope
                return "CYCLE_DETECTED"
            except psycopg.Error as e:
                conn.execute("ROLLBACK")
                if is_sqlstate(e, "40001"):
                    return "40001"
                raise

        return run

    try:
        for a, b in pairs:
            got = run_parallel([link(0, a, b), link(1, b, a)])
            outcomes.update(got)
            edges = admin.execute(
                """SELECT source_entity_id, target_entity_id FROM neotoma.relationships
                   WHERE user_id = %s AND relationship_type = 'PART_OF'
                     AND source_entity_id = ANY(%s) AND target_entity_id = ANY(%s)""",
                (user, [a, b], [a, b]),
            ).fetchall()
            assert len(edges) <= 1, f"a PART_OF cycle formed: {edges} (outcomes {got})"
            assert len(edges) == got.count("created"), (edges, got)
    finally:
        for c in conns:
            c.close()
    report(f"REPEATABLE READ 2-cycles: {dict(sorted(outcomes.items()))}")
    assert outcomes["created"] >= 1
    assert_verified(admin)


def test_repeatable_read_stores_to_one_entity(shared_db: Database, admin: psycopg.Connection) -> None:
    """4 sessions store to one person in REPEATABLE READ transactions (each
    with its snapshot taken first): the only acceptable failure is 40001
    (retried), and the snapshot misses nothing."""
    user, sessions, stores, max_attempts = new_user(), 4, 25, 200
    email = "rr@example.com"
    with shared_db.session(user) as s:
        entity = call(s, "store", {"entities": [person(email, "RR 0")]})["entities"][0]["entity_id"]
    conns = [shared_db.session(user) for _ in range(sessions)]
    failures = Counter()
    most_attempts = [1] * sessions

    def worker(i: int):
        rng = random.Random(5000 + i)

        def run(barrier: threading.Barrier) -> int:
            conn = conns[i]
            barrier.wait()
            committed = 0
            for j in range(stores):
                for attempt in range(max_attempts):
                    rr_begin(conn)
                    try:
                        r = call(conn, "store", {"entities": [person(email, f"RR {i}-{j}")]})
                        conn.execute("COMMIT")
                    except psycopg.Error as e:
                        conn.execute("ROLLBACK")
                        if not is_sqlstate(e, "40001") or attempt == max_attempts - 1:
                            raise
                        failures[i] += 1
                        most_attempts[i] = max(most_attempts[i], attempt + 2)
                        threading.Event().wait(rng.uniform(0, 0.003))  # jitter against livelock
                        continue
                    assert r["entities"][0]["entity_id"] == entity and r["deduplicated"] is False
                    committed += 1
                    break
            return committed

        return run

    try:
        committed = sum(run_parallel([worker(i) for i in range(sessions)]))
    finally:
        for c in conns:
            c.close()
    report(
        f"REPEATABLE READ stores to one entity: {sum(failures.values())} serialization failures (40001) retried, "
        f"at most {max(most_attempts)} attempts for one store"
    )
    assert committed == sessions * stores
    count, in_table = observations_of(admin, user, entity)
    assert in_table == sessions * stores + 1
    assert count == in_table, f"snapshot counts {count} observations, the table holds {in_table}"
    assert_verified(admin)


# ------------------------------------------------------------------ (f)


def test_concurrent_metadata_tags_on_shared_relationships(shared_db: Database, admin: psycopg.Connection) -> None:
    """8 sessions × 30 calls, each adding a metadata tag to one of 3
    relationships (REFERS_TO from one person to one of 3 companies); every
    5th call is a bulk of two create_relationship operations on two of them
    in random order. No retries: any Postgres error (a deadlock, 40P01,
    above all) fails the test. Afterwards each relationship's snapshot has
    every tag written to it, and verify() is clean."""
    user, sessions, calls = new_user(), 8, 30
    with shared_db.session(user) as s:
        stored = call(s, "store", {"entities": [person("rel@example.com", "Rel Person")] + [
            {"entity_type": "company", "name": f"Company {k}"} for k in range(3)]})  # fmt: skip
        ids = [e["entity_id"] for e in stored["entities"]]
        source, companies = ids[0], ids[1:]
        assert len(set(companies)) == 3

        def link(k: int, tag: str) -> dict[str, Any]:
            return {"relationship_type": "REFERS_TO", "source_entity_id": source, "target_entity_id": companies[k],
                    "metadata": {tag: True}}  # fmt: skip

        for k in range(3):
            call(s, "create_relationship", link(k, f"setup_{k}"))
    written: list[set[str]] = [{f"setup_{k}"} for k in range(3)]
    lock = threading.Lock()
    conns = [shared_db.session(user) for _ in range(sessions)]
    raw_errors: Counter[str] = Counter()

    def worker(i: int):
        rng = random.Random(6000 + i)

        def run(barrier: threading.Barrier) -> int:
            barrier.wait()
            done = 0
            for j in range(calls):
                try:
                    if j % 5 == 4:
                        pair = rng.sample(range(3), 2)
                        tags = [f"t_{i}_{j}_{n}" for n in range(2)]
                        ops = [{"action": "create_relationship", "args": link(k, t)} for k, t in zip(pair, tags)]
                        r = call(conns[i], "bulk", {"operations": ops})
                        assert len(r["results"]) == 2, r
                        with lock:
                            for k, t in zip(pair, tags):
                                written[k].add(t)
                    else:
                        k, tag = rng.randrange(3), f"t_{i}_{j}"
                        r = call(conns[i], "create_relationship", link(k, tag))
                        assert r["metadata"].get(tag) is True, r
                        with lock:
                            written[k].add(tag)
                except psycopg.Error as e:
                    with lock:
                        raw_errors[e.sqlstate or "?"] += 1
                    raise
                done += 1
            return done

        return run

    try:
        done = run_parallel([worker(i) for i in range(sessions)])
    finally:
        for c in conns:
            c.close()
        report(f"metadata tags on shared relationships: {raw_errors['40P01']} deadlocks (40P01), "
               f"other Postgres errors {dict((k, v) for k, v in raw_errors.items() if k != '40P01')}, no retries")  # fmt: skip

    assert sum(done) == sessions * calls
    rows = admin.execute(
        """SELECT target_entity_id::text, id::text, snapshot FROM neotoma.relationships
           WHERE user_id = %s AND relationship_type = 'REFERS_TO' AND source_entity_id = %s""",
        (user, source),
    ).fetchall()
    by_target = {target: (rel, snap) for target, rel, snap in rows}
    assert set(by_target) == set(companies), f"expected one relationship per company: {rows}"
    assert len(rows) == 3
    for k, company in enumerate(companies):
        rel, snap = by_target[company]
        missing = sorted(written[k] - set(snap))
        assert not missing, f"relationship {rel} lost {len(missing)} of {len(written[k])} tags: {missing[:20]}"
    assert sum(len(w) for w in written) == 3 + sessions * (calls + calls // 5)
    assert_verified(admin)
