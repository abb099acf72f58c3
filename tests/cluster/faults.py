"""Killing one worker's executor JVM at a moment the running application reports.

The moment is read from the application's own Spark event log while it is written (the
driver flushes the file at every job start and every SQL execution start): the test waits for
a job of the stage it wants to hit, then sends SIGKILL to the executor JVM of this application
that a given worker started (the worker's child ``CoarseGrainedExecutorBackend``, found under
/proc by its ``--app-id``). After the run, :class:`EventLog` tells when the executor was
removed and when the stage ran, so the test can show the kill landed inside the stage.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .spark_submit import Running
from .standalone import StandaloneCluster

Event = dict[str, Any]
EXECUTOR_MAIN = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
WATCH_TIMEOUT = 600.0


@dataclass
class EventLogTail:
    """The complete lines written so far to the one event log file under ``folder``."""

    folder: Path
    app_id: str = ""
    _offset: int = 0
    _path: Path | None = None

    def poll(self) -> list[Event]:
        """The events added since the last call."""
        if self._path is None:
            found = sorted(self.folder.glob("app-*"))
            if not found:
                return []
            self._path = found[0]
        try:
            with self._path.open("rb") as log:
                log.seek(self._offset)
                data = log.read()
        except FileNotFoundError:  # renamed from .inprogress when the application ended
            self._path = self._path.with_name(self._path.name.removesuffix(".inprogress"))
            return []
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        new = [json.loads(line) for line in complete.splitlines() if line.strip()]
        for event in new:
            if event["Event"] == "SparkListenerApplicationStart":
                self.app_id = str(event["App ID"])
        return new


def parse_job() -> Callable[[Event], bool]:
    """Accepts a job of the SQL execution whose plan holds the parse UDF (``parse_sql(``).
    Fed every event in order (it remembers the executions it has seen start)."""
    executions: set[str] = set()

    def accepts(event: Event) -> bool:
        if _is_parse_execution(event):
            executions.add(str(event["executionId"]))
        return event["Event"] == "SparkListenerJobStart" and (
            event.get("Properties", {}).get("spark.sql.execution.id") in executions
        )

    return accepts


def _is_parse_execution(event: Event) -> bool:
    return event["Event"].endswith("SparkListenerSQLExecutionStart") and "parse_sql(" in (
        json.dumps(event["sparkPlanInfo"])
    )


def _parse_executions(events: list[Event]) -> set[str]:
    return {str(e["executionId"]) for e in events if _is_parse_execution(e)}


GRAPH_CODE = "/lineage_udfs/spark/graph/"
GRAPHFRAMES_CODE = ("GraphFrame.scala", "Pregel.scala", "ConnectedComponents.scala")


GRAPH_JOBS_BEFORE_KILL = 3
"""The graph-stage job at whose start the executor dies: a few jobs in, so the stage has work
(and cached or checkpointed results) on both executors."""


def graphframes_job() -> Callable[[Event], bool]:
    """Accepts the :data:`GRAPH_JOBS_BEFORE_KILL`-th job of the graph stage: one called from
    ``lineage_udfs/spark/graph/`` or one of GraphFrames' algorithms (connected components,
    Pregel rounds). Fed every event in order. (GraphFrames' own jobs carry its Scala call
    sites only with some algorithms; the stage's Python call sites are always there.)"""
    seen = 0

    def accepts(event: Event) -> bool:
        nonlocal seen
        names = _stage_names(event)
        if any(GRAPH_CODE in n or any(c in n for c in GRAPHFRAMES_CODE) for n in names):
            seen += 1
        return seen == GRAPH_JOBS_BEFORE_KILL and bool(names)

    return accepts


def _stage_names(event: Event) -> list[str]:
    if event["Event"] != "SparkListenerJobStart":
        return []
    return [str(s["Stage Name"]) for s in event.get("Stage Infos", [])]


@dataclass(frozen=True)
class Kill:
    """The executor killed: its application, its JVM's pid, its executor id, the wall-clock
    time (ms)."""

    app_id: str
    pid: int
    executor_id: str
    at_ms: int


def executor_pids(cluster: StandaloneCluster, worker: int, app_id: str) -> dict[str, int]:
    """Executor id -> pid of the executor JVMs of ``app_id`` running under worker ``worker``
    (in its process group)."""
    group = cluster.daemons[1 + worker].pid  # the master first, then the workers in order
    assert cluster.daemons[1 + worker].name == f"worker-{worker}"
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        words = [a.decode("utf-8", "replace") for a in argv]
        if EXECUTOR_MAIN not in words or app_id not in words:
            continue
        pgrp = int(stat.rsplit(")", 1)[1].split()[2])
        if pgrp == group:
            found[words[words.index("--executor-id") + 1]] = int(entry.name)
    return found


def kill_executor_when(
    running: Running,
    cluster: StandaloneCluster,
    events_folder: Path,
    trigger: Callable[[], Callable[[Event], bool]],
    *,
    worker: int = 0,
    timeout: float = WATCH_TIMEOUT,
) -> Kill:
    """Watch the running application's event log; at the first event ``trigger()`` accepts,
    SIGKILL worker ``worker``'s executor JVM of this application. Fails (the application
    killed) if the application ends or ``timeout`` passes first."""
    tail = EventLogTail(events_folder)
    accepts = trigger()
    deadline = time.monotonic() + timeout
    while True:
        if any([accepts(e) for e in tail.poll()]):  # every event seen, in order
            break
        if running.process.poll() is not None or time.monotonic() > deadline:
            running.kill()
            raise AssertionError(
                f"the moment to kill never came (exit {running.process.returncode}):\n"
                f"{running.text()[-3000:]}"
            )
        time.sleep(0.05)
    pids = executor_pids(cluster, worker, tail.app_id)
    assert len(pids) == 1, pids
    ((executor_id, pid),) = pids.items()
    os.kill(pid, signal.SIGKILL)
    return Kill(tail.app_id, pid, executor_id, int(time.time() * 1000))


@dataclass(frozen=True)
class EventLog:
    """A finished application's event log."""

    events: list[Event]

    @classmethod
    def read(cls, folder: Path, app_id: str) -> EventLog:
        (path,) = folder.glob(f"{app_id}*")
        return cls([json.loads(line) for line in path.read_text("utf-8").splitlines() if line])

    def removed_at(self, executor_id: str) -> int:
        """When the driver learnt that the executor was lost (ms)."""
        (removed,) = [
            e["Timestamp"]
            for e in self.events
            if e["Event"] == "SparkListenerExecutorRemoved" and e["Executor ID"] == executor_id
        ]
        return int(removed)

    def jobs(self, accepts: Callable[[Event], bool]) -> tuple[int, int]:
        """From the first start to the last end (ms) of the jobs whose start ``accepts``."""
        chosen = {e["Job ID"]: e["Submission Time"] for e in self.events if accepts(e)}
        assert chosen, "no such job in the event log"
        ends = [
            e["Completion Time"]
            for e in self.events
            if e["Event"] == "SparkListenerJobEnd" and e["Job ID"] in chosen
        ]
        return int(min(chosen.values())), int(max(ends))

    def parse_jobs(self) -> tuple[int, int]:
        """When the parse UDF's SQL execution ran its jobs."""
        executions = _parse_executions(self.events)
        return self.jobs(
            lambda e: (
                e["Event"] == "SparkListenerJobStart"
                and e.get("Properties", {}).get("spark.sql.execution.id") in executions
            )
        )

    def graph_jobs(self) -> tuple[int, int]:
        """When the graph stage ran its jobs (called from ``lineage_udfs/spark/graph/``, or
        GraphFrames' own)."""
        return self.jobs(
            lambda e: any(
                GRAPH_CODE in n or any(code in n for code in GRAPHFRAMES_CODE)
                for n in _stage_names(e)
            )
        )

    def failed_tasks_of(self, executor_id: str) -> list[Event]:
        """The tasks that ended because the executor was lost."""
        return [
            e
            for e in self.events
            if e["Event"] == "SparkListenerTaskEnd"
            and e["Task Info"]["Executor ID"] == executor_id
            and e["Task End Reason"]["Reason"] != "Success"
        ]
