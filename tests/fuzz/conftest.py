"""Plumbing of the action fuzzer: a database with the extension, a
non-superuser role that is a member of `neotoma_service`, a little seeded data
whose ids the generated inputs reuse, and the oracle every call goes through.

The oracle (`Session.check`) sends an input as JSON *text* and accepts only

* success, or
* SQLSTATE NT001 whose DETAIL is the JSON envelope `{code, message, details}`
  with no trace of a Rust backtrace,

and the connection must still answer `SELECT 1` afterwards. Texts that
Postgres itself refuses to cast to jsonb (`\\u0000`, lone surrogates, nesting
deeper than its stack allows…) are not sent to the action: the cast failing is
Postgres' own input parsing. They are kept for test_dispatcher_on_refused_texts,
which sends them to the dispatcher behind every action,
`neotoma._invoke(action, text)`: it parses text itself and must answer
`{"ok": …}` or `{"error": envelope}` (`Session.check_invoke`).

NEOTOMA_TEST_PG (a libpq string for the superuser, as set by
scripts/test-cluster) names the cluster; without it every test is skipped.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import functools
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import psycopg
import pytest
from psycopg import sql

DATABASE = "neotoma_fuzz"
AGENT_ROLE = "fuzz_agent"
# The user every fuzzing session acts as (it owns the seeded rows), and a
# second user whose ids are mixed in to try to reach across tenants.
USER_A = "f0220000-0000-4000-8000-0000000000aa"
USER_B = "f0220000-0000-4000-8000-0000000000bb"
STATEMENT_TIMEOUT_MS = 30_000
# Placeholders an input may hold, replaced before sending by the id of a row
# made for that call: a pending interpretation run (record_interpretation
# completes it, so each call needs its own) and a new person (to merge away).
PENDING_RUN = "@@PENDING_RUN@@"
FRESH_PERSON = "@@FRESH_PERSON@@"
FAILURES_FILE = Path(os.environ.get("FUZZ_FAILURES_FILE", "/tmp/neotoma-fuzz-failures.jsonl"))
SKIP_REASON = (
    "NEOTOMA_TEST_PG is not set: start a cluster first "
    "(source scripts/test-cluster && test_cluster_start)"
)

BACKTRACE = re.compile(
    r"std::|core::|pgrx|panicked|stack backtrace|RUST_BACKTRACE|\.rs:\d+|/rustc/|/\.cargo/",
    re.IGNORECASE,
)
ERROR_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def base_dsn() -> str | None:
    return os.environ.get("NEOTOMA_TEST_PG") or None


def admin_dsn(dbname: str = DATABASE) -> str:
    return f"{base_dsn()} dbname={dbname}"


def agent_dsn() -> str:
    base = re.sub(r"\buser=\S+", "", base_dsn() or "")
    return f"{base} user={AGENT_ROLE} dbname={DATABASE}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# ---------------------------------------------------------------------------
# The environment: database, catalog, seeded data


@dataclasses.dataclass
class Pools:
    """Real ids (and other values) of seeded rows, for inputs to reuse."""

    entity_ids: list[str] = dataclasses.field(default_factory=list)
    entity_types_of: dict[str, str] = dataclasses.field(default_factory=dict)
    other_user_entity_ids: list[str] = dataclasses.field(default_factory=list)
    source_ids: list[str] = dataclasses.field(default_factory=list)
    other_user_source_ids: list[str] = dataclasses.field(default_factory=list)
    storage_paths: list[str] = dataclasses.field(default_factory=list)
    run_ids: list[str] = dataclasses.field(default_factory=list)
    pending_run_ids: list[str] = dataclasses.field(default_factory=list)
    observation_ids: list[str] = dataclasses.field(default_factory=list)
    relationships: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    merge_candidates: list[str] = dataclasses.field(default_factory=list)

    def ids(self) -> list[str]:
        return (
            self.entity_ids
            + self.source_ids
            + self.storage_paths
            + self.run_ids
            + self.observation_ids
            + self.other_user_entity_ids
            + self.other_user_source_ids
        )

    def entity_of_type(self, entity_type: str) -> str | None:
        for eid, t in self.entity_types_of.items():
            if t == entity_type:
                return eid
        return None


@dataclasses.dataclass
class TypeInfo:
    fields: dict[str, str]  # field name → type (string, number, date…)
    identity: list[str]
    date_fields: list[str]


@dataclasses.dataclass
class FuzzEnv:
    catalog: dict[str, Any]
    # action or alias name → (canonical name, input schema)
    actions: dict[str, tuple[str, dict[str, Any]]]
    types: dict[str, TypeInfo]
    capabilities: list[str]
    pools: Pools


def _identity_fields(identity: Any) -> list[str]:
    out: list[str] = []
    for level in identity or []:
        if isinstance(level, str):
            out.append(level)
        elif isinstance(level, dict):
            out.extend(f for f in level.get("composite", []) if isinstance(f, str))
    return sorted(set(out))


def _call(conn: psycopg.Connection, action: str, args: Any) -> Any:
    query = sql.SQL("SELECT neotoma.{}(%s::text::jsonb)").format(sql.Identifier(action))
    return conn.execute(query, (json.dumps(args),)).fetchone()[0]


def _seed_user(conn: psycopg.Connection, user: str, pools: Pools, main: bool) -> None:
    conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user,))

    def store(args: Any) -> dict[str, Any]:
        r = _call(conn, "store", args)
        if main:
            for e in r.get("entities", []):
                pools.entity_types_of[e["entity_id"]] = e["entity_type"]
                pools.entity_ids.append(e["entity_id"])
                pools.observation_ids.append(e["observation_id"])
            pools.source_ids.append(r["source_id"])
            if r.get("storage_path"):
                pools.storage_paths.append(r["storage_path"])
            run = (r.get("interpretation") or {}).get("run_id")
            if run:
                pools.run_ids.append(run)
        else:
            pools.other_user_entity_ids.extend(e["entity_id"] for e in r.get("entities", []))
            pools.other_user_source_ids.append(r["source_id"])
        return r

    store({"entities": [{"entity_type": "person", "name": "Ann", "email": "ann@example.com"}]})
    if not main:
        return
    store(
        {
            "entities": [
                {
                    "entity_type": "invoice",
                    "invoice_number": "INV-1",
                    "vendor_name": "Acme",
                    "amount_due": 12.5,
                    "currency": "EUR",
                    "invoice_date": "2024-01-15",
                    "date_due": "2024-02-15",
                    "po_number": "PO-1",
                },
                {"entity_type": "note", "title": "Hello", "content": "world", "mood": None},
                {"entity_type": "task", "title": "Do it", "due_date": "2024-03-01", "status": "open"},
                {"entity_type": "company", "name": "Acme", "website": "https://acme.example"},
            ],
            "provenance": {"extracted_at": "2024-01-16T10:00:00Z", "extractor_version": "fuzz/1"},
        }
    )
    store({"file_content": b64(b"name,email\nBob,bob@example.com\nCy,cy@example.com\n"), "mime_type": "text/csv"})
    store(
        {
            "file_content": b64(
                b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e1@fuzz\r\nSUMMARY:Review\r\n"
                b"DTSTART:20240620T140000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
            ),
            "mime_type": "text/calendar",
        }
    )
    # Two people with the same name but different e-mails: candidates to merge.
    for i in range(4):
        r = store({"entities": [{"entity_type": "person", "name": "Dup", "email": f"dup{i}@example.com"}]})
        pools.merge_candidates.append(r["entities"][0]["entity_id"])
    # Files no built-in reader knows, with a model interpreter: pending runs
    # for record_interpretation.
    conn.execute("SELECT set_config('neotoma.model_interpreter', 'on', false)")
    for i in range(6):
        r = store({"file_content": b64(b"%PDF-1.4\n% fuzz " + str(i).encode() + b"\n%%EOF\n"), "mime_type": "application/pdf"})
        run = (r.get("interpretation") or {}).get("run_id")
        if run and r["interpretation"].get("status") == "pending":
            pools.pending_run_ids.append(run)
    conn.execute("SELECT set_config('neotoma.model_interpreter', 'off', false)")

    e = pools.entity_of_type
    rels = [
        ("REFERS_TO", e("note"), e("person")),
        ("PART_OF", e("task"), e("note")),
        ("SETTLES", e("invoice"), e("company")),
        ("DEPENDS_ON", e("task"), e("invoice")),
    ]
    for rtype, src, dst in rels:
        if src and dst:
            _call(
                conn,
                "create_relationship",
                {"relationship_type": rtype, "source_entity_id": src, "target_entity_id": dst, "metadata": {"role": "seed", "amount": 1}},
            )
            pools.relationships.append((rtype, src, dst))


@functools.cache
def fuzz_env() -> FuzzEnv:
    with psycopg.connect(admin_dsn("postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (AGENT_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {AGENT_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")
    with psycopg.connect(admin_dsn(), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION neotoma")
        conn.execute(f"GRANT neotoma_service TO {AGENT_ROLE}")
        # Fuzzing interprets a lot of files: no monthly quota to run into.
        conn.execute(f"ALTER DATABASE {DATABASE} SET neotoma.interpretation_quota = 0")
        catalog = conn.execute("SELECT neotoma.action_catalog()").fetchone()[0]
        builtin = conn.execute("SELECT neotoma._builtin_schemas()").fetchone()[0]

    actions: dict[str, tuple[str, dict[str, Any]]] = {}
    for a in catalog["actions"]:
        actions[a["name"]] = (a["name"], a["input_schema"])
    for a in catalog["actions"]:
        for alias in a.get("aliases") or []:
            actions.setdefault(alias, (a["name"], a["input_schema"]))

    types: dict[str, TypeInfo] = {}
    for s in builtin:
        d = s.get("definition") or s
        fields = {k: (v or {}).get("type", "string") for k, v in (d.get("fields") or {}).items()}
        types[d["entity_type"]] = TypeInfo(
            fields=fields,
            identity=_identity_fields(d.get("identity") or d.get("identity_fields")),
            date_fields=sorted({k for k, t in fields.items() if t == "date"} | {t["field"] for t in d.get("temporal_fields") or []}),
        )
    capabilities = [f"neotoma:store_{t}:v1" for t in ("invoice", "transaction", "receipt", "contract", "note")]

    pools = Pools()
    with psycopg.connect(agent_dsn(), autocommit=True) as conn:
        _seed_user(conn, USER_B, pools, main=False)
        _seed_user(conn, USER_A, pools, main=True)
    return FuzzEnv(catalog=catalog, actions=actions, types=types, capabilities=capabilities, pools=pools)


# ---------------------------------------------------------------------------
# The oracle


def collapse(text: str, limit: int = 6000) -> str:
    """`text` for a report: runs of 40+ equal characters written `c<×N>`
    (e.g. `[<×200>` is 200 `[`), the rest cut past `limit` characters."""
    out = re.sub(r"(.)\1{39,}", lambda m: f"{m.group(1)}<×{len(m.group(0))}>", text, flags=re.S)
    if len(out) > limit:
        out = out[: limit // 2] + f" …[{len(out) - limit} chars cut]… " + out[-limit // 2 :]
    return out


@dataclasses.dataclass
class Failure:
    action: str
    kind: str
    text: str
    sqlstate: str | None
    message: str
    detail: str | None

    def signature(self) -> tuple[str, str, str | None, str]:
        first = (self.message or "").splitlines()[0] if self.message else ""
        # One dispatcher bug shows in every action: group those together.
        action = "_invoke" if self.action.startswith("_invoke/") else self.action
        return (action, self.kind, self.sqlstate, re.sub(r"[0-9a-f]{8,}|\d+", "#", first)[:200])

    def report(self) -> str:
        return (
            f"action:   {self.action}\n"
            f"problem:  {self.kind}\n"
            f"input:    {collapse(self.text)}  ({len(self.text)} chars of JSON text)\n"
            f"SQLSTATE: {self.sqlstate}\n"
            f"message:  {collapse(self.message or '', 3000)}\n"
            f"detail:   {collapse(self.detail or '', 3000)}"
        )


class Stats:
    def __init__(self) -> None:
        self.calls = 0
        self.by_action: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.cast_refused: collections.Counter = collections.Counter()
        self.failures: list[Failure] = []
        self.started = time.monotonic()

    def count(self, action: str, outcome: str) -> None:
        self.by_action[action][outcome] += 1


STATS = Stats()
# (action, text) of the texts the ::jsonb cast refused, in the order met.
REFUSED: dict[tuple[str, str], None] = {}


def envelope_problem(detail: str | None) -> str | None:
    """Why `detail` is not a Neotoma error envelope body (None when it is)."""
    if detail is None:
        return "NT001 without a DETAIL"
    try:
        body = json.loads(detail)
    except ValueError:
        return "NT001 DETAIL is not JSON"
    return body_problem(body)


def body_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "error envelope is not a JSON object"
    missing = {"code", "message", "details"} - set(body)
    if missing:
        return f"error envelope lacks {sorted(missing)}"
    if not isinstance(body["code"], str) or not ERROR_CODE.match(body["code"]):
        return "error envelope code is not an UPPER_SNAKE_CASE string"
    if not isinstance(body["message"], str):
        return "error envelope message is not a string"
    if not isinstance(body["details"], dict):
        return "error envelope details is not an object"
    return None


class Session:
    """One connection as the agent role, acting as one user."""

    made = 0  # rows made for placeholders, for unique contents

    def __init__(self, user: str = USER_A) -> None:
        self.user = user
        self.conn: psycopg.Connection | None = None
        self.connect()

    def connect(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                self.conn = psycopg.connect(agent_dsn(), autocommit=True)
                break
            except psycopg.OperationalError:
                # The postmaster restarts every backend after one crashes.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        self.conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (self.user,))
        self.conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")

    def prepare(self, text: str) -> str:
        """`text` with its placeholders replaced by fresh rows' ids."""
        while PENDING_RUN in text:
            text = text.replace(PENDING_RUN, self._fresh("run"), 1)
        while FRESH_PERSON in text:
            text = text.replace(FRESH_PERSON, self._fresh("person"), 1)
        return text

    def _fresh(self, kind: str) -> str:
        Session.made += 1
        n = Session.made
        assert self.conn is not None
        try:
            with self.conn.transaction():
                if kind == "run":
                    self.conn.execute("SELECT set_config('neotoma.model_interpreter', 'on', true)")
                    r = _call(self.conn, "store", {"file_content": b64(b"%PDF-1.4\n% fresh " + str(n).encode()), "mime_type": "application/pdf"})
                    return r["interpretation"]["run_id"]
                r = _call(self.conn, "store", {"entities": [{"entity_type": "person", "name": f"Fresh {n}", "email": f"fresh{n}@example.com"}]})
                return r["entities"][0]["entity_id"]
        except (psycopg.Error, KeyError, IndexError, TypeError):
            # Earlier fuzzing may have changed schemas or used up a quota:
            # the call then just meets a row that is not fresh.
            if self._lost():
                self.connect()
            return str(uuid.UUID(int=n))

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()

    def _fail(self, action: str, kind: str, text: str, e: BaseException | None = None, detail: str | None = None) -> None:
        sqlstate = getattr(e, "sqlstate", None) if e is not None else None
        message = str(e) if e is not None else ""
        if e is not None and detail is None:
            diag = getattr(e, "diag", None)
            detail = getattr(diag, "message_detail", None) if diag is not None else None
        f = Failure(action, kind, text, sqlstate, message, detail)
        STATS.failures.append(f)
        STATS.count(action, "FAILURE")
        try:
            with FAILURES_FILE.open("a") as out:
                out.write(json.dumps(dataclasses.asdict(f)) + "\n")
        except OSError:
            pass

    def _lost(self) -> bool:
        return self.conn is None or self.conn.closed or self.conn.broken

    def check(self, action: str, text: str, *, model_interpreter: bool | None = None) -> None:
        """Sends `text` to `action` and records any answer that is not
        success or an NT001 envelope."""
        STATS.calls += 1
        if self._lost():
            self.connect()
        text = self.prepare(text)
        conn = self.conn
        assert conn is not None
        call = sql.SQL("SELECT (neotoma.{}(%s::text::jsonb))::text").format(sql.Identifier(action))
        stage = "cast"
        try:
            with conn.transaction():
                if model_interpreter is not None:
                    conn.execute(
                        "SELECT set_config('neotoma.model_interpreter', %s, true)",
                        ("on" if model_interpreter else "off",),
                    )
                try:
                    with conn.transaction():
                        conn.execute("SELECT (%s::text::jsonb) IS NULL", (text,))
                except psycopg.Error as e:
                    if self._lost():
                        raise
                    # Postgres' own jsonb input refused the text: not an
                    # action's answer. The dispatcher gets it later
                    # (test_dispatcher_on_refused_texts).
                    STATS.cast_refused[e.sqlstate] += 1
                    STATS.count(action, f"cast refused {e.sqlstate}")
                    REFUSED.setdefault((action, text), None)
                    return
                stage = "action"
                conn.execute(call, (text,)).fetchone()
            STATS.count(action, "ok")
        except psycopg.Error as e:
            if self._lost():
                self._fail(action, f"connection lost during the {stage} (backend crash?)", text, e)
                self.conn = None
                self.connect()
                return
            if stage == "cast":
                self._fail(action, f"unexpected error in the {stage} step", text, e)
            else:
                self._judge(action, text, e)
        except UnicodeEncodeError as e:  # a bug of the fuzzer itself
            raise AssertionError(f"fuzzer produced text that cannot be sent: {e}") from e
        self._alive(action, text)

    def _judge(self, action: str, text: str, e: psycopg.Error) -> None:
        detail = e.diag.message_detail
        if e.sqlstate != "NT001":
            self._fail(action, "error that is not NT001", text, e)
            return
        problem = envelope_problem(detail)
        if problem:
            self._fail(action, problem, text, e)
            return
        if BACKTRACE.search(detail or "") or BACKTRACE.search(e.diag.message_primary or ""):
            self._fail(action, "NT001 with a backtrace in it", text, e)
            return
        STATS.count(action, "NT001 " + json.loads(detail)["code"])

    def check_invoke(self, action: str, text: str) -> None:
        """Sends `text` to the dispatcher, `neotoma._invoke(action, text)`,
        which must answer `{"ok": …}` or `{"error": envelope}`."""
        STATS.calls += 1
        if self._lost():
            self.connect()
        text = self.prepare(text)
        assert self.conn is not None
        action = "_invoke/" + action
        try:
            with self.conn.transaction():
                answer = self.conn.execute("SELECT neotoma._invoke(%s, %s)::text", (action.split("/", 1)[1], text)).fetchone()[0]
        except psycopg.Error as e:
            if self._lost():
                self._fail(action, "connection lost (backend crash?)", text, e)
                self.conn = None
                self.connect()
                return
            if e.sqlstate == "NT001" and not envelope_problem(e.diag.message_detail):
                STATS.count(action, "NT001")
            else:
                self._fail(action, "_invoke(action, text) raised an error", text, e)
            self._alive(action, text)
            return
        try:
            body = json.loads(answer)
        except ValueError:
            body = None
        if isinstance(body, dict) and set(body) == {"ok"}:
            STATS.count(action, "ok")
        elif isinstance(body, dict) and set(body) == {"error"} and not body_problem(body["error"]):
            if BACKTRACE.search(json.dumps(body["error"])):
                self._fail(action, "_invoke answered a backtrace", text, detail=answer)
            else:
                STATS.count(action, "error " + body["error"]["code"])
        else:
            self._fail(action, "_invoke answered neither {ok} nor {error: envelope}", text, detail=answer)
        self._alive(action, text)

    def _alive(self, action: str, text: str) -> None:
        try:
            assert self.conn is not None
            self.conn.execute("SELECT 1").fetchone()
        except psycopg.Error as e:
            self._fail(action, "connection unusable after the call", text, e)
            self.conn = None
            self.connect()


def assert_clean(since: int = 0) -> None:
    """Fails with every distinct problem recorded since the `since`-th."""
    failures = STATS.failures[since:]
    if not failures:
        return
    groups: dict[tuple, list[Failure]] = {}
    for f in failures:
        groups.setdefault(f.signature(), []).append(f)
    parts = []
    for group in groups.values():
        smallest = min(group, key=lambda f: len(f.text))
        actions = sorted({f.action for f in group})
        also = f" in {len(actions)} actions" if len(actions) > 1 else ""
        parts.append(f"[{len(group)} input(s) like this{also}]\n{smallest.report()}")
    pytest.fail(
        f"{len(failures)} call(s) got an answer that is neither success nor an NT001 envelope "
        f"({len(groups)} distinct; every input in {FAILURES_FILE}):\n\n" + "\n\n".join(parts),
        pytrace=False,
    )


# ---------------------------------------------------------------------------
# pytest wiring


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "action" not in metafunc.fixturenames:
        return
    if not base_dsn():
        metafunc.parametrize("action", [pytest.param("-", marks=pytest.mark.skip(reason=SKIP_REASON))])
        return
    metafunc.parametrize("action", list(fuzz_env().actions))


@pytest.fixture(scope="session")
def env() -> FuzzEnv:
    if not base_dsn():
        pytest.skip(SKIP_REASON)
    return fuzz_env()


@pytest.fixture
def session(env: FuzzEnv) -> Iterator[Session]:
    s = Session(USER_A)
    yield s
    s.close()


def pytest_sessionstart(session: pytest.Session) -> None:
    try:
        FAILURES_FILE.unlink()
    except OSError:
        pass


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not STATS.calls:
        return
    outcomes: collections.Counter = collections.Counter()
    for c in STATS.by_action.values():
        outcomes.update(c)
    tr = terminalreporter
    tr.write_line(
        f"fuzz: {STATS.calls} calls over {len(STATS.by_action)} actions in "
        f"{time.monotonic() - STATS.started:.1f}s; {len(STATS.failures)} bad answers"
    )
    tr.write_line("fuzz: outcomes " + ", ".join(f"{k}={v}" for k, v in sorted(outcomes.items())))
    if tr.config.getoption("verbose") > 0:
        for action, c in sorted(STATS.by_action.items()):
            tr.write_line(f"fuzz: {action}: " + ", ".join(f"{k}={v}" for k, v in sorted(c.items())))
    if STATS.cast_refused:
        tr.write_line(
            "fuzz: texts refused by the ::jsonb cast itself (kept for _invoke) "
            + ", ".join(f"{k}={v}" for k, v in sorted(STATS.cast_refused.items()))
        )
