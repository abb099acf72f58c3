"""One worker's executor JVM killed by PID in the middle of the parse stage, and in another
run in the middle of the graph stage: the run completes with the tables and OpenLineage events
of a clean run, or fails with one line and its rerun has them. Nothing lost either way.

The input is bench/generate_log.py's log (the ``generated`` fixture), large enough that each
stage lasts seconds on the cluster; the clean run is the same extract on ``local[2]``. The
moment of the kill is the application's own report (its event log, :mod:`faults`): the first
job of the parse UDF's SQL execution, or the first GraphFrames job of the graph stage. The
event log then shows the kill fell inside that stage's jobs. Checkpoints go to
``execution.checkpoint_dir`` on the disk every process shares, as docs/deploy.md asks on a
cluster.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from .faults import Event, EventLog, graphframes_job, kill_executor_when, parse_job
from .sample import (
    EXTRACT,
    RUN_LOGS,
    SampleRun,
    event_log,
    log_overlay,
    run_sample,
    table_rows,
)
from .spark_submit import ROOT, start
from .standalone import StandaloneCluster

BOTH_EXECUTORS = {"spark.cores.max": "2", "spark.scheduler.minRegisteredResourcesRatio": "1.0"}
"""Scheduling starts once both workers' executors are registered: one of them is killed."""
TRIGGERS: dict[str, Callable[[], Callable[[Event], bool]]] = {
    "parse": parse_job,
    "graph": graphframes_job,
}


def _job_errors(output: str) -> list[str]:
    """The job's own ERROR lines (Spark's logs are WARN and above, in another format)."""
    return [line for line in output.splitlines() if " ERROR lineage_udfs." in line]


def _events(run: SampleRun) -> list[str]:
    return sorted(json.dumps(e, sort_keys=True) for e in run.events())


@pytest.mark.parametrize("stage", sorted(TRIGGERS))
def test_executor_killed_mid_stage_loses_nothing(
    stage: str,
    cluster: StandaloneCluster,
    generated: Path,
    generated_clean: SampleRun,
    tmp_path: Path,
) -> None:
    cwd = tmp_path / stage
    cwd.mkdir()
    overlay = log_overlay(cwd, generated)
    arguments = ["--config", str(ROOT / "conf" / "local.yaml"), "--config", str(overlay)]
    running = start(
        cluster.master_url,
        EXTRACT,
        arguments,
        cwd=cwd,
        confs={**event_log(cwd), **BOTH_EXECUTORS},
    )
    try:
        kill = kill_executor_when(running, cluster, cwd / "spark-events", TRIGGERS[stage])
        first = running.wait()
    finally:
        running.kill()

    log = EventLog.read(cwd / "spark-events", kill.app_id)
    began, ended = log.parse_jobs() if stage == "parse" else log.graph_jobs()
    assert began <= kill.at_ms <= ended, (began, kill.at_ms, ended)  # inside the stage
    assert log.removed_at(kill.executor_id) >= kill.at_ms  # and the driver lost the executor

    tables = sorted(p.name for p in generated_clean.lineage.iterdir())
    run, compared = SampleRun(cwd, first), tables
    if first.returncode == 0:
        assert _job_errors(first.output) == []
    else:
        (error,) = _job_errors(first.output)  # one line
        assert "extract failed: " in error, error
        run = run_sample(cluster.master_url, cwd, overlay=overlay, confs=BOTH_EXECUTORS)
        # the failed run's own row stays in the run logs
        compared = [t for t in tables if t not in RUN_LOGS]
    print(
        f"{stage}: executor {kill.executor_id} (pid {kill.pid}) killed"
        f" {(kill.at_ms - began) / 1000:.1f} s into the stage's {(ended - began) / 1000:.1f} s;"
        f" run exit {first.returncode}, {len(log.failed_tasks_of(kill.executor_id))} tasks lost"
    )

    assert sorted(p.name for p in run.lineage.iterdir()) == tables
    for table in compared:
        assert table_rows(run, table) == table_rows(generated_clean, table), table
    assert table_rows(generated_clean, "column_lineage"), "the log gives lineage"
    clean_events = _events(generated_clean)
    assert clean_events, "the clean run emits events"
    assert _events(run) == clean_events  # every event, each once
