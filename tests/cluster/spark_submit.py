"""``spark-submit`` of an application, as ``make run`` submits the job, from a given directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .standalone import HOST, SPARK_HOME

ROOT = Path(__file__).resolve().parents[2]
SUBMIT_TIMEOUT = 900
"""Seconds one application may take (the sample's extract with the graph stage takes about
three minutes on a loaded two-core machine)."""


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
    take precedence), ``options`` before the application (``--archives ...``). The driver binds
    to 127.0.0.1. On timeout its process group is killed."""
    repositories = os.environ.get("LINEAGE_MAVEN_REPOSITORIES", "")
    command = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master]
    if repositories:
        command += ["--repositories", repositories]
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
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise AssertionError(
            f"{' '.join(command)} still running after {timeout} s (killed):\n"
            f"{output.decode('utf-8', 'replace')[-5000:]}"
        ) from None
    finally:  # interrupted (Ctrl-C): the driver and its children go too
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return Submitted(tuple(command), process.returncode, output.decode("utf-8", "replace"))
