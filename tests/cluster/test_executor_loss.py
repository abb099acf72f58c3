"""Executor JVMs killed by PID while the job runs on the cluster: worker 0's in the middle of
the parse stage, then worker 1's in the middle of the graph stage of the same application (the
standalone worker launches a new executor for the application after each kill). The run
completes with the tables and OpenLineage events of a clean run, or fails with one line and its
rerun has them. Nothing lost either way.

The run is the session's run of the sample on the cluster (``cluster_run``: shipped in the
packed environment, the OpenLineage folder the driver's only), the clean run the session's
``local[2]`` run of the same extract with the same settings (``sample_local``). The parse
stage is one job whose tasks run on both executors (each starts its Python workers in it: the
job lasts seconds); the graph stage is dozens of jobs. The moment of each kill is the
application's own report (its event log, :mod:`faults`): the first job of the parse UDF's SQL
execution, then the third job of the graph stage. The event log then shows each kill fell
inside that stage's jobs. Checkpoints go to ``execution.checkpoint_dir`` on the disk every
process shares, as docs/deploy.md asks on a cluster (:func:`sample.sample_overlay`).
"""

from __future__ import annotations

import json

from .faults import STAGES, ClusterRun
from .sample import RUN_LOGS, SampleRun, table_rows


def _job_errors(output: str) -> list[str]:
    """The job's own ERROR lines (Spark's logs are WARN and above, in another format)."""
    return [line for line in output.splitlines() if " ERROR lineage_udfs." in line]


def _events(run: SampleRun) -> list[str]:
    return sorted(json.dumps(e, sort_keys=True) for e in run.events())


def test_each_executor_died_inside_its_stage(cluster_run: ClusterRun) -> None:
    """One kill per stage, each between the first start and the last end of that stage's jobs
    in the application's event log, and the driver learnt of each lost executor."""
    killed = [stage for s in cluster_run.submits for stage in s.kills]
    assert killed == list(STAGES)
    for number, submit in enumerate(cluster_run.submits, 1):
        log = submit.log() if submit.kills else None
        for stage, kill in submit.kills.items():
            assert log is not None
            began, ended = log.parse_jobs() if stage == "parse" else log.graph_jobs()
            assert began <= kill.at_ms <= ended, (stage, began, kill.at_ms, ended)  # inside
            assert log.removed_at(kill.executor_id) >= kill.at_ms  # and the driver lost it
            print(
                f"run {number}, {stage}: executor {kill.executor_id} (pid {kill.pid}) killed"
                f" {(kill.at_ms - began) / 1000:.1f} s into the stage's"
                f" {(ended - began) / 1000:.1f} s;"
                f" {len(log.failed_tasks_of(kill.executor_id))} tasks lost;"
                f" run exit {submit.submitted.returncode}"
            )


def test_a_run_that_lost_executors_ends_or_fails_with_one_line(cluster_run: ClusterRun) -> None:
    """The last run succeeded with no error line; a run before it failed for an executor it
    lost (:func:`faults.submit_killing` reruns only those), with one line."""
    *failed, last = cluster_run.submits
    assert last.submitted.returncode == 0
    assert _job_errors(last.submitted.output) == []
    for submit in failed:
        assert submit.kills and submit.submitted.returncode != 0
        (error,) = _job_errors(submit.submitted.output)  # one line
        assert "extract failed: " in error, error


def test_executors_killed_in_the_parse_and_the_graph_stage_lose_nothing(
    cluster_run: ClusterRun, sample_local: SampleRun
) -> None:
    """Every table row for row and every OpenLineage event, each once, as in the clean run
    (but the failed runs' own rows in the run logs, when a run failed)."""
    run = cluster_run.run
    tables = sorted(p.name for p in sample_local.lineage.iterdir())
    compared = [t for t in tables if not cluster_run.failed or t not in RUN_LOGS]
    assert sorted(p.name for p in run.lineage.iterdir()) == tables
    for table in compared:
        assert table_rows(run, table) == table_rows(sample_local, table), table
    assert table_rows(sample_local, "column_lineage"), "the sample gives lineage"
    clean_events = _events(sample_local)
    assert clean_events, "the clean run emits events"
    assert _events(run) == clean_events  # every event, each once
