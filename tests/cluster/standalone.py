"""A Spark standalone cluster on 127.0.0.1: one master and its workers, from the pip pyspark.

``SPARK_HOME`` is the installed ``pyspark`` package folder; the daemons are started with its
``bin/spark-class`` (``org.apache.spark.deploy.master.Master`` and ``...worker.Worker``), each in
its own process group, on free ports; :meth:`StandaloneCluster.start` returns once the master's
JSON (its web UI's ``/json/``) lists every worker ALIVE, and :meth:`StandaloneCluster.stop`
ends the workers, then the master, by process group (SIGTERM, then SIGKILL). A worker's
executors are its child JVMs: they are in its process group and end with it.

Every daemon binds to 127.0.0.1 (``--host`` for the RPC endpoints, ``SPARK_LOCAL_IP`` for the
web UIs, which otherwise listen on every interface). The daemons read an empty configuration
folder of their own (``DAEMON_DEFAULTS``), so neither a caller's ``SPARK_CONF_DIR`` (the
Makefile exports the repository's conf/, whose log level is WARN) nor its spark-defaults apply
to them; their logs (INFO) are files next to it.

Run it by hand::

    .venv/bin/python tests/cluster/standalone.py --workers 2   # prints the master URL and PIDs;
                                                               # Ctrl-C or SIGTERM stops them
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
DAEMON_MEMORY = "512m"
"""Heap of the master and worker JVMs themselves (Spark's default is 1g); executors get theirs
from the application (``spark.executor.memory``), within the worker's ``--memory``."""
DAEMON_DEFAULTS = """\
# the master's REST submission server would listen on the fixed port 6066 (one cluster per
# machine); spark-submit reaches the master over RPC
spark.master.rest.enabled false
"""
_WEB_UI = re.compile(r"MasterWebUI.* started at (http://[^\s]+)")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the daemon binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class ClusterError(RuntimeError):
    """The cluster did not come up; the message ends with the daemon's log tail."""


@dataclass
class Daemon:
    """One daemon JVM: its process (leader of its own process group) and its log."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM to the process group (the worker's shutdown hook kills its executors), then
        SIGKILL to whatever of the group is left after ``timeout``."""
        if self.process.poll() is None:
            _signal_group(self.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout)
        # the leader may be gone while a child (an executor) still runs in its group
        _signal_group(self.pid, signal.SIGKILL)
        self.process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


@dataclass
class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each, under ``root``
    (daemon logs, the daemons' configuration folder, one work dir per worker)."""

    root: Path
    workers: int = 2
    cores: int = 1
    memory: str = "2g"
    port: int = 0
    web_ui: str = ""
    daemons: list[Daemon] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def work_dir(self, index: int) -> Path:
        """Worker ``index``'s work dir: ``<app id>/<executor id>/`` per executor it ran (the
        executor's working directory: its stdout, stderr and the files shipped to it)."""
        return self.root / f"worker-{index}"

    def environment(self) -> dict[str, str]:
        conf = self.root / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "spark-defaults.conf").write_text(DAEMON_DEFAULTS, encoding="utf-8")
        return {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOCAL_IP": HOST,
            "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
            "SPARK_LOG_DIR": str(self.root / "logs"),
            "SPARK_PID_DIR": str(self.root),
        }

    def start(self, timeout: float = START_TIMEOUT) -> StandaloneCluster:
        """Start the master, then the workers; return once every worker is registered and
        ALIVE. On any failure everything started so far is stopped before the error rises."""
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        self.port = free_port()
        master = self._spawn(
            "master",
            [MASTER_CLASS, "--host", HOST, "--port", str(self.port), "--webui-port", "0"],
        )
        self.web_ui = self._wait_for(master, deadline, self._web_ui_of)
        for index in range(self.workers):
            work_dir = self.work_dir(index)
            work_dir.mkdir(parents=True, exist_ok=True)
            self._spawn(
                f"worker-{index}",
                [
                    WORKER_CLASS,
                    "--host",
                    HOST,
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--work-dir",
                    str(work_dir),
                    "--webui-port",
                    "0",
                    self.master_url,
                ],
            )
        self._wait_for(master, deadline, self._all_alive)

    def _spawn(self, name: str, arguments: Sequence[str]) -> Daemon:
        log = self.root / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *arguments],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=self.root,
                start_new_session=True,  # its own process group, stopped as one
            )
        daemon = Daemon(name, process, log)
        self.daemons.append(daemon)
        return daemon

    def _wait_for(self, master: Daemon, deadline: float, probe: Any) -> Any:
        """Poll ``probe(master)`` until it returns a value; fail when a daemon exits or at
        ``deadline``, with the logs' tails."""
        while True:
            value = probe(master)
            if value:
                return value
            for daemon in self.daemons:
                if daemon.process.poll() is not None:
                    raise ClusterError(
                        f"{daemon.name} (pid {daemon.pid}) exited with {daemon.process.returncode}"
                        f":\n{daemon.tail()}"
                    )
            if time.monotonic() > deadline:
                tails = "\n".join(f"--- {d.name}\n{d.tail()}" for d in self.daemons)
                raise ClusterError(f"cluster not up at {self.master_url}:\n{tails}")
            time.sleep(0.5)

    @staticmethod
    def _web_ui_of(master: Daemon) -> str | None:
        found = _WEB_UI.search(master.log_text())
        return found.group(1).rstrip("/") if found else None

    def state(self) -> dict[str, Any]:
        """The master's view (its web UI's JSON): workers, applications, status."""
        with urllib.request.urlopen(f"{self.web_ui}/json/", timeout=5) as answer:
            return json.loads(answer.read())  # type: ignore[no-any-return]

    def _all_alive(self, master: Daemon) -> bool:
        try:
            state = self.state()
        except (OSError, urllib.error.URLError, ValueError):
            return False
        alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
        return state.get("status") == "ALIVE" and len(alive) == self.workers

    def pids(self) -> dict[str, int]:
        return {d.name: d.pid for d in self.daemons}

    def stop(self) -> None:
        """Stop the workers (and with them their executors), then the master."""
        for daemon in reversed(self.daemons):
            daemon.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--memory", default="2g")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="spark-standalone-"))
    cluster = StandaloneCluster(root, args.workers, args.cores, args.memory)
    # Ctrl-C, or SIGTERM to this process (SIGINT is ignored when started with & from a script)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    try:
        cluster.start()
        print(f"{cluster.master_url} (web UI {cluster.web_ui}; logs and work dirs in {root})")
        print(f"pids: {cluster.pids()}; Ctrl-C or SIGTERM to {os.getpid()} stops them", flush=True)
        while True:
            signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
