"""``spark-submit`` of an application, as ``make run`` submits the job, from a given directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .standalone import HOST, SPARK_HOME

ROOT = Path(__file__).resolve().parents[2]
SUBMIT_TIMEOUT = 1800
"""Seconds one application may take (the sample's extract with the graph stage takes about
three minutes on a loaded two-core machine, and took 15 on one shared with other suites at a
load average of 30)."""


BOTH_EXECUTORS = {"spark.cores.max": "2", "spark.scheduler.minRegisteredResourcesRatio": "1.0"}
"""Confs of an application that wants both workers' executors: scheduling starts once both are
registered, so every stage has work on both."""
CLUSTER_CONFS = {"spark.locality.wait": "0s"}
"""Confs of every application submitted to the standalone cluster (a test's own ``confs`` take
precedence). No delay scheduling: by default a task whose preferred executor (the one holding
its persisted or shuffled block) is busy waits up to 3 s per locality level before it runs on
the other one, idle meanwhile. Both executors share this machine's disk, so a non-local task
costs nothing more; the job's hundreds of small stages lost many such pauses. Where a task
runs changes nothing the tests check."""
COLD_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""JVM options of every driver and executor the tests submit: the JIT's first tier only (C1,
no profiling, no C2) and the serial collector. Each application's JVMs start cold and live for
one run on a few rows; C2 spent more CPU compiling Spark's and Delta's code than the run gained
from it. The embedded default submitted with interpreted evaluation, user CPU: 276 s as
shipped, 232 s with C1 only, 214 s with C1 and the serial collector
(bench/results/test_suite.md)."""
SMALL_DATA_CONFS = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.driver.extraJavaOptions": COLD_JVM_OPTIONS,
    "spark.executor.extraJavaOptions": COLD_JVM_OPTIONS,
}
"""Confs of every application the tests submit, local or to the cluster (a test's own
``confs`` take precedence): Spark's interpreted evaluation instead of generated code, as the
Spark tests' session has it (tests/spark/conftest.py), and :data:`COLD_JVM_OPTIONS`. On the few
rows of the sample each driver and executor JVM, all started cold, spent more CPU compiling
query code (Janino, then the JIT) than running it. Results are the same by contract; what the
tests check (where tasks run, what executors write, what survives a lost executor) does not
depend on it."""


@dataclass(frozen=True)
class Submitted:
    """A finished ``spark-submit``: its exit code and output (stdout and stderr, merged)."""

    command: tuple[str, ...]
    returncode: int
    output: str

    def check(self) -> Submitted:
        assert self.returncode == 0, (
            f"{' '.join(self.command)} exited with {self.returncode}:\n{self.output[-5000:]}"
        )
        return self


def submit(
    master: str,
    application: Path,
    arguments: Sequence[str] = (),
    *,
    cwd: Path,
    confs: dict[str, str] | None = None,
    options: Sequence[str] = (),
    timeout: float = SUBMIT_TIMEOUT,
) -> Submitted:
    """``spark-submit --master master application arguments`` from ``cwd``, as ``make run``
    submits: ``SPARK_CONF_DIR`` = the repository's conf/ (the Delta and GraphFrames packages),
    ``--repositories`` from ``LINEAGE_MAVEN_REPOSITORIES``, this interpreter as the driver's and
    the executors' Python (``confs`` ``spark.pyspark.python`` / ``spark.pyspark.driver.python``
    take precedence), ``options`` before the application (``--archives ...``), and to a
    ``spark://`` master :data:`CLUSTER_CONFS`. The driver binds to 127.0.0.1. On timeout its
    process group is killed."""
    running = start(master, application, arguments, cwd=cwd, confs=confs, options=options)
    return running.wait(timeout)


@dataclass
class Running:
    """A ``spark-submit`` under way (:func:`start`), in its own process group."""

    command: tuple[str, ...]
    process: subprocess.Popen[bytes]
    output: IO[bytes]
    """stdout and stderr, merged: a file, so that a driver that writes much never blocks on a
    pipe nobody reads while the test waits for something else"""

    def wait(self, timeout: float = SUBMIT_TIMEOUT) -> Submitted:
        """Its exit code and output once it ends; after ``timeout`` seconds its process group
        is killed and the test fails."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"{' '.join(self.command)} still running after {timeout} s (killed):\n"
                f"{self.text()[-5000:]}"
            ) from None
        finally:  # interrupted (Ctrl-C): the driver and its children go too
            self.kill()
        return Submitted(self.command, self.process.returncode, self.text())

    def text(self) -> str:
        """What it has written so far."""
        self.output.seek(0)
        return self.output.read().decode("utf-8", "replace")

    def kill(self) -> None:
        """End the driver and its children now (nothing if it has ended)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def start(
    master: str,
    application: Path,
    arguments: Sequence[str] = (),
    *,
    cwd: Path,
    confs: dict[str, str] | None = None,
    options: Sequence[str] = (),
) -> Running:
    """:func:`submit` without waiting: the test acts while the application runs."""
    repositories = os.environ.get("LINEAGE_MAVEN_REPOSITORIES", "")
    command = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master]
    if repositories:
        command += ["--repositories", repositories]
    confs = {**SMALL_DATA_CONFS, **(confs or {})}
    if master.startswith("spark://"):
        confs = {**CLUSTER_CONFS, **confs}
    for key, value in (confs or {}).items():
        command += ["--conf", f"{key}={value}"]
    command += [*options, str(application), *arguments]
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_CONF_DIR": str(ROOT / "conf"),
        "SPARK_LOCAL_IP": HOST,
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    output = tempfile.TemporaryFile()  # noqa: SIM115 (closed when the Running is collected)
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return Running(tuple(command), process, output)
