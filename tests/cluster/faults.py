"""Killing workers' executor JVMs at moments the running application reports.

Each moment is read from the application's own Spark event log while it is written (the
driver flushes the file at every job start and every SQL execution start): the test waits for
a job of the stage it wants to hit, then sends SIGKILL to the executor JVM of this application
that a given worker runs (the worker's child ``CoarseGrainedExecutorBackend``, found under
/proc by its ``--app-id``; the worker launches a new one for the application). After the run,
:class:`EventLog` tells when each executor was removed and when each stage ran, so the test can
show each kill landed inside its stage.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sample import SampleRun, event_log
from .spark_submit import SUBMIT_TIMEOUT, Running, Submitted, start
from .standalone import StandaloneCluster

Event = dict[str, Any]
EXECUTOR_MAIN = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
WATCH_TIMEOUT = float(SUBMIT_TIMEOUT)
"""Seconds to wait for every moment of one application (the spark-submit timeout)."""


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
            data = self._read(self._path)
        except FileNotFoundError:  # renamed from .inprogress when the application ended
            self._path = self._path.with_name(self._path.name.removesuffix(".inprogress"))
            data = self._read(self._path)
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        new = [json.loads(line) for line in complete.splitlines() if line.strip()]
        for event in new:
            if event["Event"] == "SparkListenerApplicationStart":
                self.app_id = str(event["App ID"])
        return new

    def _read(self, path: Path) -> bytes:
        with path.open("rb") as log:
            log.seek(self._offset)
            return log.read()


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


Trigger = Callable[[], Callable[[Event], bool]]
"""Makes a fresh predicate over the application's events, fed every event in order."""


def kill_executors_when(
    running: Running,
    cluster: StandaloneCluster,
    events_folder: Path,
    moments: Sequence[tuple[Trigger, int]],
    *,
    timeout: float = WATCH_TIMEOUT,
) -> list[Kill]:
    """Watch the running application's event log; for each ``(trigger, worker)`` of
    ``moments`` in turn, at the first event its trigger accepts, SIGKILL worker ``worker``'s
    executor JVM of this application (a later moment's kill never comes before an earlier
    one's). Returns the kills made: fewer than ``moments`` when the application ended first
    (the test tells a failed run from a missed moment). After ``timeout`` the application is
    killed and the test fails."""
    tail = EventLogTail(events_folder)
    accepts = [trigger() for trigger, _ in moments]
    seen = [False] * len(moments)
    kills: list[Kill] = []
    deadline = time.monotonic() + timeout
    while len(kills) < len(moments):
        ended = running.process.poll() is not None  # before the poll: its last events are read
        for event in tail.poll():
            for index, accept in enumerate(accepts):  # every predicate sees every event
                seen[index] = accept(event) or seen[index]
            while len(kills) < len(moments) and seen[len(kills)]:
                kills.append(_kill(cluster, moments[len(kills)][1], tail.app_id))
        if ended:
            break
        if time.monotonic() > deadline:
            running.kill()
            raise AssertionError(
                f"{len(kills)} of {len(moments)} moments to kill came in {timeout} s:\n"
                f"{running.text()[-3000:]}"
            )
        time.sleep(0.05)
    return kills


def _kill(cluster: StandaloneCluster, worker: int, app_id: str) -> Kill:
    """SIGKILL the one executor JVM of ``app_id`` that worker ``worker`` runs."""
    pids = executor_pids(cluster, worker, app_id)
    assert len(pids) == 1, pids
    ((executor_id, pid),) = pids.items()
    os.kill(pid, signal.SIGKILL)
    return Kill(app_id, pid, executor_id, int(time.time() * 1000))


STAGES = ("parse", "graph")
"""The stages hit, in the order the job runs them."""
MOMENTS: dict[str, tuple[Trigger, int]] = {"parse": (parse_job, 0), "graph": (graphframes_job, 1)}
"""Each stage's moment and the worker whose executor dies then: worker 0's in the parse stage,
worker 1's (the executor that outlived the first kill) in the graph stage, when worker 0 runs
the application's new executor."""


@dataclass(frozen=True)
class KilledRun:
    """One ``spark-submit`` of :func:`submit_killing`: its event log folder, how it ended, and
    the executors killed in it (stage -> kill)."""

    events: Path
    submitted: Submitted
    kills: dict[str, Kill]

    def log(self) -> EventLog:
        """Its event log (there is one once it started)."""
        (path,) = (self.events / "spark-events").glob("app-*")
        return EventLog([json.loads(line) for line in path.read_text("utf-8").splitlines()])


@dataclass(frozen=True)
class ClusterRun:
    """A run of :func:`submit_killing`: the warehouse and output of its last ``spark-submit``,
    and every submit (more than one when a run failed after a lost executor and was run
    again)."""

    run: SampleRun
    submits: list[KilledRun]

    @property
    def failed(self) -> bool:
        """A submit failed: its own rows stay in the run logs (lineage_runs, emissions)."""
        return any(s.submitted.returncode != 0 for s in self.submits)


def submit_killing(
    cluster: StandaloneCluster,
    application: Path,
    arguments: Sequence[str],
    *,
    cwd: Path,
    confs: dict[str, str],
    options: Sequence[str] = (),
    stages: Sequence[str] = STAGES,
) -> list[KilledRun]:
    """Submit ``application`` to ``cluster`` from ``cwd`` with Spark's event log on (each run's
    in ``cwd/run-N``), and kill an executor at the :data:`MOMENTS` of ``stages``. A run that
    fails after a kill is submitted again, from the same working directory (the rerun goes on
    from what the failed run left), with the stages still to hit. Returns every run; the last
    one ended with exit code 0. A run that fails with no kill, or ends without a stage's
    moment, fails the test."""
    pending, runs = list(stages), list[KilledRun]()
    while True:  # each failed run made a kill: at most len(stages) + 1 runs
        events = cwd / f"run-{len(runs) + 1}"
        events.mkdir()
        running = start(
            cluster.master_url,
            application,
            arguments,
            cwd=cwd,
            confs={**confs, **event_log(events)},
            options=options,
        )
        try:
            moments = [MOMENTS[stage] for stage in pending]
            kills = kill_executors_when(running, cluster, events / "spark-events", moments)
            submitted = running.wait()
        finally:
            running.kill()
        runs.append(KilledRun(events, submitted, dict(zip(pending, kills, strict=False))))
        pending = pending[len(kills) :]
        if submitted.returncode == 0:
            assert not pending, f"the run ended before its {pending} stage's moment to kill"
            return runs
        assert kills, f"a run with no executor killed failed:\n{submitted.output[-5000:]}"


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
