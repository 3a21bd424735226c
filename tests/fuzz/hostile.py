"""What the HTTP fuzzers (test_fuzz_oauth.py, test_fuzz_inspector.py) share:
Hypothesis settings (derandomised: the same inputs on every run), texts a
stranger would try, and the fresh database each fuzzes a gateway on."""

from __future__ import annotations

import os

import psycopg
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

EXAMPLES = 5 * int(os.environ.get("FUZZ_EXAMPLES", "40"))

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)

HOSTILE_TEXT = st.one_of(
    st.text(max_size=50),
    st.sampled_from(
        [
            "",
            "\x00",
            "<script>alert(1)</script>",
            "\"'><img src=x onerror=alert(1)>",
            "javascript:alert(1)",
            "http://evil.example/cb",
            "https://127.0.0.1:1/x.json",
            "https://169.254.169.254/latest/meta-data/",
            "x" * 5000,
            "%00%ff",
            "S256",
            "plain",
            "code",
            "memory offline_access operator",
            "../../etc/passwd",
            "ntc_" + "0" * 32,
        ]
    ),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4),
    max_leaves=12,
)


def database_dsn(dbname: str) -> str:
    """A superuser libpq string to `dbname` in scripts/test's cluster."""
    base = os.environ.get("NEOTOMA_TEST_PG")
    if not base:
        pytest.exit("NEOTOMA_TEST_PG is not set: run the tests with scripts/test", returncode=2)
    return f"{base} dbname={dbname}"


def fresh_database(dbname: str) -> str:
    """`dbname` dropped and created again with the extension; its DSN."""
    with psycopg.connect(database_dsn("postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {dbname}")
    dsn = database_dsn(dbname)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION neotoma")
    return dsn
