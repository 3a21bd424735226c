"""Fixtures and helpers of the reliability tests: concurrency against the
shared test cluster, crash safety and gateway recovery against private,
throw-away clusters.

scripts/test-cluster starts the shared cluster and sets NEOTOMA_TEST_PG (a
superuser libpq string); NEOTOMA_MCP_BIN names the gateway binary.

Sessions that call actions are never superusers (row level security does not
apply to superusers): they log in as a member of `neotoma_service` and set
`neotoma.user_id`. Only verify() and checks across users run as superuser.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mcp_support import Gateway, error, free_port, gateway_env, mcp_bin, ok, result_json  # noqa: E402,F401

PG_MAJOR = os.environ.get("PG_MAJOR", "15")
PG_BIN = Path(f"/usr/lib/postgresql/{PG_MAJOR}/bin")
DATABASE = "neotoma_reliability"
AGENT_ROLE = "rel_agent"  # member of neotoma_service: calls actions as a user
OPERATOR_ROLE = "rel_operator"  # member of neotoma_operator: the gateway's role
# Upper bound on how long a helper waits for threads (a guard against hangs,
# not a performance assertion: a hang is reported as such).
HANG_GUARD_SECONDS = 180

# Lines shown under "reliability report" at the end of the run: retries,
# outcome counts and which error code an outage produced.
REPORT: list[str] = []


def report(line: str) -> None:
    REPORT.append(line)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT:
        terminalreporter.section("reliability report")
        for line in REPORT:
            terminalreporter.write_line(line)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def new_user() -> str:
    return str(uuid.uuid4())


# ---------------------------------------------------------------- actions


class ActionError(Exception):
    """An action refused with SQLSTATE NT001; `envelope` is the DETAIL."""

    def __init__(self, envelope: dict[str, Any]):
        super().__init__(f"{envelope.get('code')}: {envelope.get('message')}")
        self.envelope = envelope
        self.code = envelope.get("code")


def call(conn: psycopg.Connection, action: str, args: dict[str, Any]) -> dict[str, Any]:
    """`SELECT neotoma.<action>(args)`; NT001 becomes ActionError, any other
    Postgres error propagates as it is."""
    query = sql.SQL("SELECT neotoma.{}(%s)").format(sql.Identifier(action))
    try:
        row = conn.execute(query, (Jsonb(args),)).fetchone()
    except psycopg.Error as e:
        if e.sqlstate == "NT001":
            detail = e.diag.message_detail
            assert detail, f"NT001 without a DETAIL envelope: {e}"
            envelope = json.loads(detail)
            assert {"code", "message", "details"} <= set(envelope), envelope
            raise ActionError(envelope) from e
        raise
    assert row is not None
    return row[0]


def connect_as(dsn: str, user_id: str, *, autocommit: bool = True) -> psycopg.Connection:
    """A session of a non-superuser role acting for `user_id`."""
    conn = psycopg.connect(dsn, autocommit=autocommit)
    conn.execute("SELECT set_config('neotoma.user_id', %s, false)", (user_id,))
    if not autocommit:
        conn.commit()
    assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
    return conn


def verify(admin: psycopg.Connection) -> dict[str, Any]:
    """neotoma.verify() as superuser: every user's snapshots recomputed."""
    return admin.execute("SELECT neotoma.verify()").fetchone()[0]


def assert_verified(admin: psycopg.Connection) -> dict[str, Any]:
    result = verify(admin)
    assert result["ok"] is True and result["mismatch_count"] == 0, (
        f"verify() found {result['mismatch_count']} mismatches: {json.dumps(result['mismatches'])[:4000]}"
    )
    return result


# ---------------------------------------------------------------- threads


def run_parallel(workers: list[Callable[[threading.Barrier], Any]]) -> list[Any]:
    """Runs each worker in its own thread; all start together at a barrier
    the worker waits on. Returns the results in order; re-raises the first
    exception a worker raised."""
    barrier = threading.Barrier(len(workers), timeout=HANG_GUARD_SECONDS)
    results: list[Any] = [None] * len(workers)
    errors: list[BaseException | None] = [None] * len(workers)

    def run(i: int) -> None:
        try:
            results[i] = workers[i](barrier)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors[i] = e
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD_SECONDS)
    hung = [i for i, t in enumerate(threads) if t.is_alive()]
    assert not hung, f"workers {hung} did not finish (a hang: lock wait or deadlock not detected?)"
    real = [e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)]
    if real:
        raise real[0]
    broken = [e for e in errors if e is not None]
    if broken:
        raise broken[0]
    return results


# ---------------------------------------------------------------- databases


@dataclass
class Database:
    """A database with the extension and the two test roles."""

    admin_dsn: str  # superuser
    agent_dsn: str  # member of neotoma_service
    operator_dsn: str  # member of neotoma_operator

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(self.admin_dsn, autocommit=True)

    def session(self, user_id: str, *, autocommit: bool = True) -> psycopg.Connection:
        return connect_as(self.agent_dsn, user_id, autocommit=autocommit)


def with_params(base: str, **params: str) -> str:
    """`base` with libpq parameters replaced or added."""
    parts = {}
    for item in base.split():
        key, _, value = item.partition("=")
        parts[key] = value
    parts.update(params)
    return " ".join(f"{k}={v}" for k, v in parts.items())


def prepare_database(server_dsn: str, dbname: str) -> Database:
    """(Re)creates `dbname` with the extension in the cluster `server_dsn`
    (a superuser libpq string without dbname) and the test roles."""
    with psycopg.connect(with_params(server_dsn, dbname="postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
        for role in (AGENT_ROLE, OPERATOR_ROLE):
            if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS").format(sql.Identifier(role)))
    admin = with_params(server_dsn, dbname=dbname, connect_timeout="10")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION neotoma")
        conn.execute(sql.SQL("GRANT neotoma_service TO {}").format(sql.Identifier(AGENT_ROLE)))
        conn.execute(sql.SQL("GRANT neotoma_operator TO {}").format(sql.Identifier(OPERATOR_ROLE)))
    return Database(
        admin_dsn=admin,
        agent_dsn=with_params(admin, user=AGENT_ROLE),
        operator_dsn=with_params(admin, user=OPERATOR_ROLE),
    )


def shared_cluster_dsn() -> str:
    base = os.environ.get("NEOTOMA_TEST_PG")
    if not base:
        pytest.exit("NEOTOMA_TEST_PG is not set: start a cluster with scripts/test-cluster", returncode=2)
    return base


@pytest.fixture(scope="session")
def shared_db() -> Iterator[Database]:
    """The reliability database in the shared test cluster."""
    db = prepare_database(shared_cluster_dsn(), DATABASE)
    yield db
    with psycopg.connect(with_params(shared_cluster_dsn(), dbname="postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))


@pytest.fixture
def admin(shared_db: Database) -> Iterator[psycopg.Connection]:
    with shared_db.admin() as conn:
        yield conn


# ---------------------------------------------------------------- private clusters


def as_pg_owner(*args: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else list(args)


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            children.append(int(entry.name))
    return children


def pid_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class PrivateCluster:
    """A throw-away Postgres cluster of one test: its own directory, Unix
    socket and port, fsync on (unless asked otherwise); with `replica_of`, a
    streaming replica of that (running) cluster instead of a new one."""

    def __init__(self, *, fsync: bool = True, replica_of: PrivateCluster | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="neotoma-rel-"))
        os.chmod(self.dir, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
        self.data = self.dir / "data"
        self.log = self.dir / "log"
        self.port = free_port()
        self.fsync = fsync
        self.proc: subprocess.Popen | None = None
        if replica_of is None:
            subprocess.run(
                as_pg_owner(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust",
                            "-E", "UTF8", "--locale=C", "--no-instructions"),
                check=True, capture_output=True,
            )  # fmt: skip
        else:
            # A base backup that streams the WAL it needs and configures
            # itself as a standby of the primary (standby.signal,
            # primary_conninfo).
            subprocess.run(
                as_pg_owner(str(PG_BIN / "pg_basebackup"), "-D", str(self.data), "-h", str(replica_of.dir),
                            "-p", str(replica_of.port), "-U", "postgres", "-X", "stream", "-R", "-c", "fast"),
                check=True, capture_output=True,
            )  # fmt: skip
        self.dsn = f"host={self.dir} port={self.port} user=postgres"

    def pg_ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            as_pg_owner(str(PG_BIN / "pg_ctl"), "-D", str(self.data), *args),
            capture_output=True, text=True, check=check,
        )  # fmt: skip

    def start(self) -> None:
        """Starts the postmaster as a child of this process (not through
        `pg_ctl start`, whose postmaster is orphaned): after a kill -9 it is
        reaped here at once, so its pid cannot linger as a zombie that the
        next start would take for a running postmaster. Waits (bounded)
        until it accepts connections, crash recovery included."""
        cmd = [
            str(PG_BIN / "postgres"), "-D", str(self.data), "-k", str(self.dir), "-c", "listen_addresses=",
            "-p", str(self.port), "-c", "max_connections=50", "-c", f"fsync={'on' if self.fsync else 'off'}",
            "-c", "synchronous_commit=on", "-c", "full_page_writes=on",
        ]  # fmt: skip
        owner = {"user": "postgres", "group": "postgres", "extra_groups": []} if os.geteuid() == 0 else {}
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir, start_new_session=True, **owner
            )
        for _ in range(1200):
            if self.proc.poll() is not None:
                raise AssertionError(f"postgres exited with {self.proc.returncode}:\n{self.log_tail()}")
            ready = subprocess.run(
                [str(PG_BIN / "pg_isready"), "-q", "-h", str(self.dir), "-p", str(self.port)], check=False
            )
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise AssertionError(f"postgres did not accept connections:\n{self.log_tail()}")

    def stop(self, mode: str = "fast") -> None:
        r = self.pg_ctl("-m", mode, "-w", "stop", check=False)
        assert r.returncode == 0, f"pg_ctl stop failed: {r.stdout}{r.stderr}\n{self.log_tail()}"
        self.proc.wait(timeout=60)

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().splitlines()[0])

    def crash(self) -> dict[str, int]:
        """kill -9 of the postmaster (its pid read from postmaster.pid); waits
        (bounded) until its former children are gone too, so that the
        cluster can start again. Returns how many children there were and
        how many outlived it long enough that they had to be killed."""
        pid = self.postmaster_pid()
        assert pid == self.proc.pid
        children = child_pids(pid)
        os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        for _ in range(300):
            if not any(pid_alive(c) for c in children):
                break
            time.sleep(0.1)
        leftover = [c for c in children if pid_alive(c)]
        for c in leftover:  # children of the postmaster this test started
            os.kill(c, signal.SIGKILL)
        for _ in range(100):
            if not any(pid_alive(c) for c in leftover):
                break
            time.sleep(0.1)
        return {"children": len(children), "killed_leftover": len(leftover)}

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def remove(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.pg_ctl("-m", "immediate", "-w", "stop", check=False)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def private_cluster() -> Iterator[Callable[..., PrivateCluster]]:
    """Makes private clusters (initialised, not started); removes them after the test."""
    made: list[PrivateCluster] = []

    def make(**kwargs: Any) -> PrivateCluster:
        c = PrivateCluster(**kwargs)
        made.append(c)
        return c

    yield make
    for c in made:
        c.remove()


# ---------------------------------------------------------------- gateway (as in tests/e2e)
