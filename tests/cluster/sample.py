"""The sample's extract submitted as a user submits it (``spark-submit jobs/extract.py`` with
``conf/local.yaml``), from a working directory of its own, and what the cluster tests read back.

The overlay only names the sample logs by absolute path (every run reads the same files, so the
quarantine's source file and ids agree); the sink, the OpenLineage file and the spool keep
conf/local.yaml's relative paths, which the driver resolves against its working directory, as
after ``make run``. (Absolute paths would hide where a path is resolved: on this one machine an
executor could write the driver's absolute path, on a real cluster it cannot.)

On one machine every process shares one disk, so "the executors cannot reach the driver's
disk" is made true with :func:`driver_only`: the executors' Python processes may not write
under the given folders, and each attempt is recorded for the test to read.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .spark_submit import ROOT, Submitted, submit

EXTRACT = ROOT / "jobs" / "extract.py"
LINEAGE = Path("warehouse") / "lineage"
"""conf/local.yaml's sink and OpenLineage file, relative to the driver's working directory."""
EVENTS = Path("warehouse") / "openlineage" / "events.jsonl"
GUARD = Path(__file__).resolve().parent / "executor_guard"
"""Its ``sitecustomize`` refuses the executors' writes under the driver-only folders."""


@dataclass(frozen=True)
class SampleRun:
    """One ``spark-submit jobs/extract.py`` of the sample, from ``cwd``."""

    cwd: Path
    submitted: Submitted

    @property
    def lineage(self) -> Path:
        return self.cwd / LINEAGE

    def events(self) -> list[dict[str, Any]]:
        """The events in the OpenLineage file, where the driver reads it."""
        path = self.cwd / EVENTS
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]

    def executor_writes(self) -> list[str]:
        """The executors' attempts to write a driver-only folder (:func:`driver_only`)."""
        records = self.cwd / "executor-writes"
        if not records.exists():
            return []
        return sorted(p.read_text("utf-8").strip() for p in records.iterdir())


def sample_overlay(cwd: Path, **sections: Any) -> Path:
    """``cwd/overlay.yaml``: the sample logs by absolute path, plus ``sections``."""
    local = yaml.safe_load((ROOT / "conf" / "local.yaml").read_text("utf-8"))
    sources = [{**s, "path": str(ROOT / s["path"])} for s in local["sources"]]
    overlay = cwd / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"sources": sources, **sections}), encoding="utf-8")
    return overlay


def driver_only(cwd: Path, *folders: Path) -> dict[str, str]:
    """Confs that keep every executor's Python process from writing under ``folders`` (the
    ``executor_guard`` folder first on their ``PYTHONPATH``); attempts are recorded under
    ``cwd/executor-writes``. The driver is not affected."""
    records = cwd / "executor-writes"
    records.mkdir(exist_ok=True)
    return {
        "spark.executorEnv.PYTHONPATH": str(GUARD),
        "spark.executorEnv.LINEAGE_TEST_DRIVER_ONLY": os.pathsep.join(map(str, folders)),
        "spark.executorEnv.LINEAGE_TEST_EXECUTOR_WRITES": str(records),
    }


def event_log(cwd: Path) -> dict[str, str]:
    """Spark's event log of the run into ``cwd/spark-events``: what the executors reported of
    every task (executor id, SQL metrics), read after the run."""
    events = cwd / "spark-events"
    events.mkdir(exist_ok=True)
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": events.as_uri(),
        # one plain JSON-lines file (Spark 4 otherwise may roll it into a folder of parts)
        "spark.eventLog.rolling.enabled": "false",
        "spark.eventLog.compress": "false",
    }


def run_sample(
    master: str,
    cwd: Path,
    *,
    overlay: Path | None = None,
    base: Path = ROOT / "conf" / "local.yaml",
    confs: dict[str, str] | None = None,
) -> SampleRun:
    """``spark-submit jobs/extract.py --config base --config overlay`` from ``cwd``."""
    cwd.mkdir(parents=True, exist_ok=True)
    overlay = overlay or sample_overlay(cwd)
    arguments = ["--config", str(base), "--config", str(overlay)]
    return SampleRun(cwd, submit(master, EXTRACT, arguments, cwd=cwd, confs=confs).check())
