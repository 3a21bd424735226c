"""A real Prometheus for tests: Debian's `/usr/bin/prometheus` (package
`prometheus`, 2.42) run as a child process with its configuration and TSDB
under a test's directory, listening on 127.0.0.1 on a free port, scraping
the given targets. The system's Prometheus service is not involved.

    with Prometheus(tmp_path, ["127.0.0.1:9123"]) as prom:
        prom.wait_for_series("my_metric")
        prom.query("my_metric")

Prometheus applies a new scrape configuration's targets about 5 seconds after
it starts (its discovery updates are batched), so the first samples arrive a
few seconds after `start()` returns; `wait_for_series` is the way to wait.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["Prometheus", "PROMETHEUS_BIN"]

PROMETHEUS_BIN = "/usr/bin/prometheus"

# Never through an HTTP proxy from the environment: the server is on loopback.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# Bounds so that a broken setup fails the test instead of hanging it; never a
# statement about how fast anything is.
START_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    """Attributes: `url` ("http://127.0.0.1:PORT"), `port`, `targets`,
    `root` (tmp_dir/"prometheus"), `config_path`, `data_dir`, `log_path`."""

    def __init__(self, tmp_dir: Path, targets: list[str], scrape_interval: str = "1s",
                 metrics_path: str = "/metrics", *, job_name: str = "test",
                 binary: str = PROMETHEUS_BIN) -> None:
        self.binary = binary
        self.targets = list(targets)
        self.scrape_interval = scrape_interval
        self.metrics_path = metrics_path
        self.job_name = job_name
        self.root = Path(tmp_dir) / "prometheus"
        self.config_path = self.root / "prometheus.yml"
        self.data_dir = self.root / "data"
        self.log_path = self.root / "prometheus.log"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen | None = None

    # -- lifecycle -------------------------------------------------------

    def start(self) -> "Prometheus":
        if self._proc is not None:
            return self
        if not Path(self.binary).exists():
            raise RuntimeError(f"{self.binary} not found: install the Debian package prometheus")
        self.root.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(exist_ok=True)
        self.config_path.write_text(self._config())
        log = open(self.log_path, "ab")
        try:
            self._proc = subprocess.Popen(
                [
                    self.binary,
                    f"--config.file={self.config_path}",
                    f"--storage.tsdb.path={self.data_dir}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--log.level=info",
                ],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.root, start_new_session=True,
            )
        finally:
            log.close()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> "Prometheus":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    # -- HTTP API ----------------------------------------------------------

    def api(self, path: str, params: dict[str, Any] | list[tuple[str, Any]] | None = None) -> Any:
        """GET `path` (e.g. "/api/v1/query") and return its `data`, raising
        RuntimeError on an error answer."""
        query = urllib.parse.urlencode(params or {}, doseq=True)
        url = self.url + path + ("?" + query if query else "")
        try:
            with _opener.open(url, timeout=60) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{url}: HTTP {e.code}: {e.read().decode(errors='replace')}") from e
        if body.get("status") != "success":
            raise RuntimeError(f"{url}: {body}")
        return body["data"]

    def query(self, expr: str, time_: float | None = None) -> dict[str, Any]:
        """An instant query; returns `data` ({"resultType", "result"})."""
        params: dict[str, Any] = {"query": expr}
        if time_ is not None:
            params["time"] = time_
        return self.api("/api/v1/query", params)

    def query_range(self, expr: str, start: float, end: float, step: str | float = "1s") -> dict[str, Any]:
        """A range query; returns `data` ({"resultType": "matrix", "result"})."""
        return self.api("/api/v1/query_range", {"query": expr, "start": start, "end": end, "step": step})

    def series(self, match: str) -> list[dict[str, str]]:
        """The label sets of the series matching the selector `match`."""
        return self.api("/api/v1/series", [("match[]", match)])

    def targets_status(self) -> list[dict[str, Any]]:
        return self.api("/api/v1/targets")["activeTargets"]

    def wait_for_series(self, metric_name: str, timeout_s: float = 60) -> list[dict[str, str]]:
        """Polls until series of `metric_name` (or any selector) exist and
        returns their label sets; raises with the targets' state and the log
        after `timeout_s` (a bound against hanging, not an expectation)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.series(metric_name)
            if found:
                return found
            if self._proc is None or self._proc.poll() is not None:
                raise RuntimeError(f"prometheus is not running:\n{self.log()}")
            if time.monotonic() >= deadline:
                try:
                    targets = json.dumps(self.targets_status(), indent=1)
                except RuntimeError as e:
                    targets = str(e)
                raise RuntimeError(
                    f"no series {metric_name!r} after {timeout_s}s; targets: {targets}\n{self.log()}"
                )
            time.sleep(0.2)

    # -- internals ---------------------------------------------------------

    def _config(self) -> str:
        targets = ", ".join(json.dumps(t) for t in self.targets)
        # JSON strings are valid YAML scalars.
        return (
            "# Generated by tests/support/prometheus_server.py\n"
            "global:\n"
            f"  scrape_interval: {self.scrape_interval}\n"
            f"  scrape_timeout: {self.scrape_interval}\n"
            f"  evaluation_interval: {self.scrape_interval}\n"
            "scrape_configs:\n"
            f"  - job_name: {json.dumps(self.job_name)}\n"
            f"    metrics_path: {json.dumps(self.metrics_path)}\n"
            "    static_configs:\n"
            f"      - targets: [{targets}]\n"
        )

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last: Exception | None = None
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self._proc.returncode}:\n{self.log()}")
            try:
                with _opener.open(self.url + "/-/ready", timeout=10) as resp:
                    if resp.status == 200:
                        return
            except (OSError, urllib.error.URLError) as e:
                last = e
            time.sleep(0.1)
        raise RuntimeError(f"prometheus not ready at {self.url}: {last!r}\n{self.log()}")
