"""What the HTTP fuzzers (test_fuzz_oauth.py, test_fuzz_inspector.py) send:
Hypothesis settings (derandomised: the same inputs on every run) and texts
a stranger would try."""

from __future__ import annotations

import os

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
