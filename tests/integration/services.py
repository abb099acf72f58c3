"""Real services for the integration tests, started and stopped by PID.

- :class:`Marquez`: the OpenLineage reference server from ``../shared/services/marquez``
  (``up.sh`` / ``down.sh``: a Maven-built Marquez 0.51.1 API server with a private PostgreSQL),
  on free ports on 127.0.0.1; or the server ``MARQUEZ_URL`` names (never stopped by the tests).
- :class:`Kafka`: a single-node KRaft Apache Kafka 4.1.1 from the jars ``scripts/kafka/kafka.sh``
  resolves from Maven Central (cached under ``~/.cache/lineage-warehouse``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
MARQUEZ_DIR = Path(
    os.environ.get("MARQUEZ_SERVICE_DIR", ROOT.parent / "shared" / "services" / "marquez")
)
KAFKA_SH = ROOT / "scripts" / "kafka" / "kafka.sh"
START_TIMEOUT = 900  # a cold Marquez build (Maven) takes a few minutes; warm starts ~20 s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _exports(output: str) -> dict[str, str]:
    """``export A=1 B=2`` lines (what up.sh / kafka.sh print) as a dict."""
    values: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith("export "):
            for pair in line[len("export ") :].split():
                key, _, value = pair.partition("=")
                values[key] = value
    return values


def _run(command: list[str], env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def _wait_gone(pid: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)


@dataclass
class Marquez:
    """A Marquez server: ``url`` for the API; ``owned`` when this process started it."""

    url: str
    state: Path | None = None
    ports: dict[str, str] = field(default_factory=dict)

    @property
    def owned(self) -> bool:
        return self.state is not None

    @classmethod
    def start(cls) -> Marquez:
        state = Path(tempfile.mkdtemp(prefix="lw-marquez-"))
        state.chmod(0o755)  # PostgreSQL runs as the postgres user and must reach its folders
        ports = {
            "PGPORT": str(free_port()),
            "MARQUEZ_PORT": str(free_port()),
            "MARQUEZ_ADMIN_PORT": str(free_port()),
        }
        try:
            out = _run(["bash", str(MARQUEZ_DIR / "up.sh"), str(state)], ports)
        except BaseException:
            subprocess.run(["bash", str(MARQUEZ_DIR / "down.sh"), str(state)], check=False)
            shutil.rmtree(state, ignore_errors=True)
            raise
        return cls(url=_exports(out)["MARQUEZ_URL"], state=state, ports=ports)

    def stop(self) -> None:
        """Stop Marquez (by its pid file) and its PostgreSQL; remove the state folder."""
        if self.state is None:
            return
        subprocess.run(
            ["bash", str(MARQUEZ_DIR / "down.sh"), str(self.state)], check=False, timeout=120
        )
        shutil.rmtree(self.state, ignore_errors=True)
        self.state = None

    def _pid_file(self) -> Path:
        assert self.state is not None, "only a Marquez started by the tests can be stopped"
        return self.state / "marquez.pid"

    def kill_api(self) -> int:
        """Stop the API server process by its PID (PostgreSQL and the data stay)."""
        pid = int(self._pid_file().read_text().strip())
        os.kill(pid, signal.SIGTERM)
        _wait_gone(pid)
        return pid

    def restart_api(self) -> int:
        """Start the API server again on the same ports and database (what up.sh runs)."""
        assert self.state is not None
        jar = _run(["bash", str(MARQUEZ_DIR / "build.sh")]).strip().splitlines()[-1]
        env = {
            **os.environ,
            "POSTGRES_PORT": self.ports["PGPORT"],
            "MARQUEZ_PORT": self.ports["MARQUEZ_PORT"],
            "MARQUEZ_ADMIN_PORT": self.ports["MARQUEZ_ADMIN_PORT"],
        }
        log = open(self.state / "logs" / "marquez-restart.log", "ab")  # noqa: SIM115
        process = subprocess.Popen(
            ["java", "-Xmx1g", "-jar", jar, "server", str(MARQUEZ_DIR / "marquez.yml")],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._pid_file().write_text(f"{process.pid}\n")
        health = f"http://127.0.0.1:{self.ports['MARQUEZ_ADMIN_PORT']}/healthcheck"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"Marquez exited with {process.returncode} on restart")
            try:
                if requests.get(health, timeout=2).ok:
                    return process.pid
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise RuntimeError("Marquez not healthy 180 s after restart")


@dataclass
class Kafka:
    """A single-node KRaft broker started by ``scripts/kafka/kafka.sh``: ``bootstrap`` its
    PLAINTEXT listener, ``sasl_bootstrap`` its SASL_PLAINTEXT one (mechanism PLAIN, user
    ``lineage`` with the password ``sasl_password``, made up for the session)."""

    bootstrap: str
    state: Path
    sasl_bootstrap: str = ""
    sasl_password: str = ""

    @classmethod
    def start(cls) -> Kafka:
        state = Path(tempfile.mkdtemp(prefix="lw-kafka-"))
        password = secrets.token_hex(12)
        try:
            out = _run(["bash", str(KAFKA_SH), "up", str(state)], {"KAFKA_SASL_PASSWORD": password})
        except BaseException:
            subprocess.run(["bash", str(KAFKA_SH), "down", str(state)], check=False)
            shutil.rmtree(state, ignore_errors=True)
            raise
        exports = _exports(out)
        return cls(
            bootstrap=exports["KAFKA_BOOTSTRAP_SERVERS"],
            state=state,
            sasl_bootstrap=exports["KAFKA_SASL_BOOTSTRAP_SERVERS"],
            sasl_password=password,
        )

    @property
    def pid(self) -> int:
        return int((self.state / "kafka.pid").read_text().strip())

    def kill(self) -> int:
        """Stop the broker by its PID (its data folder stays)."""
        pid = self.pid
        os.kill(pid, signal.SIGTERM)
        _wait_gone(pid)
        (self.state / "kafka.pid").unlink(missing_ok=True)
        return pid

    def restart(self) -> None:
        """Start the same node again (same ports, same data)."""
        _exports(_run(["bash", str(KAFKA_SH), "up", str(self.state)]))

    def stop(self) -> None:
        subprocess.run(["bash", str(KAFKA_SH), "down", str(self.state)], check=False, timeout=120)
        shutil.rmtree(self.state, ignore_errors=True)


PG_BIN_ROOT = Path("/usr/lib/postgresql")


def postgres_bin() -> Path:
    """The newest ``/usr/lib/postgresql/<major>/bin`` of the OS packages."""
    found = sorted(
        (p for p in PG_BIN_ROOT.glob("*/bin") if (p / "postgres").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not found:
        raise RuntimeError(
            "no PostgreSQL server under /usr/lib/postgresql: apt-get install postgresql"
        )
    return found[-1]


@dataclass
class Postgres:
    """A private PostgreSQL cluster on 127.0.0.1 (the OS packages' server), with
    ``pg_stat_statements`` preloaded and tracking nested statements. The server runs as the
    ``postgres`` user when started by root (initdb refuses root); it is stopped by its PID.

    Host connections need a password (scram-sha-256); the Unix socket in ``state`` trusts the
    superuser, for the test's own setup and workload through ``psql``.
    """

    port: int
    state: Path
    process: subprocess.Popen[bytes]
    bin: Path

    @property
    def socket_dir(self) -> Path:
        return self.state / "sock"

    @classmethod
    def start(cls, timeout: float = 60.0) -> Postgres:
        pg_bin = postgres_bin()
        state = Path(tempfile.mkdtemp(prefix="lw-postgres-"))
        state.chmod(0o755)
        user = "postgres" if os.geteuid() == 0 else None
        data, sock = state / "data", state / "sock"
        for folder in (data, sock):
            folder.mkdir(mode=0o700)
            if user:
                shutil.chown(folder, user, user)
        port = free_port()
        try:
            subprocess.run(
                [
                    str(pg_bin / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-locale",
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                ],
                user=user,
                capture_output=True,
                check=True,
                timeout=120,
            )
            log = open(state / "postgres.log", "ab")  # noqa: SIM115
            process = subprocess.Popen(
                [
                    str(pg_bin / "postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(port),
                    "-k",
                    str(sock),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "shared_preload_libraries=pg_stat_statements",
                    "-c",
                    "pg_stat_statements.track=all",
                    "-c",
                    "fsync=off",
                ],
                user=user,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()
        except BaseException:
            shutil.rmtree(state, ignore_errors=True)
            raise
        server = cls(port=port, state=state, process=process, bin=pg_bin)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                server.stop()
                raise RuntimeError(f"PostgreSQL exited with {process.returncode}")
            ready = subprocess.run(
                [str(pg_bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                capture_output=True,
                check=False,
            )
            if ready.returncode == 0:
                return server
            time.sleep(0.2)
        server.stop()
        raise RuntimeError(f"PostgreSQL not ready {timeout:.0f} s after start")

    def psql(self, sql: str, *, database: str = "postgres") -> str:
        """Run ``sql`` as the superuser over the Unix socket; stop at the first error."""
        done = subprocess.run(
            [
                str(self.bin / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
            ],
            input=sql,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr[-2000:]}")
        return done.stdout

    def stop(self) -> None:
        """Fast shutdown by the postmaster's PID (SIGINT), then remove the state folder."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        shutil.rmtree(self.state, ignore_errors=True)
