"""The embedded default on the cluster: the same lineage and the same OpenLineage events as a
``local[2]`` run; the parser runs in the workers' executors.

The job is submitted as a user submits it (``spark-submit jobs/extract.py`` with
``conf/local.yaml``, :mod:`sample`), once with ``--master local[2]`` and once to the cluster,
each from its own working directory (the ``sample_runs`` fixture); to the cluster it is shipped
as users ship it, in the packed environment (test_packed_environment checks that part). On the
cluster the executors may not write the OpenLineage folder (the events file and the spool): it
is the driver's.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.spark.parse.udf_worker import redact_names
from lineage_udfs.spark.storage.schemas import TABLES

from .faults import ClusterRun
from .parse_probe import statements_of
from .sample import RUN_LOGS, SampleRun, table_rows
from .spark_submit import ROOT
from .standalone import StandaloneCluster

SPARK_LOG = ROOT / "data" / "sample" / "spark_query_log.jsonl"


def test_sample_on_cluster_writes_every_table_of_a_local_run(
    sample_runs: dict[str, SampleRun], cluster_run: ClusterRun
) -> None:
    local, on_cluster = sample_runs["local"], sample_runs["cluster"]
    tables = sorted(p.name for p in local.lineage.iterdir())
    assert set(TABLES) <= set(tables)
    assert sorted(p.name for p in on_cluster.lineage.iterdir()) == tables
    for table in tables:
        if cluster_run.failed and table in RUN_LOGS:
            continue  # a run that failed for a lost executor left its own row (test_executor_loss)
        assert table_rows(on_cluster, table) == table_rows(local, table), table
    assert table_rows(local, "queries"), "the sample gives lineage rows"


def test_sample_on_cluster_emits_the_events_of_a_local_run(
    sample_runs: dict[str, SampleRun],
) -> None:
    local, on_cluster = sample_runs["local"], sample_runs["cluster"]
    expected = sorted(json.dumps(e, sort_keys=True) for e in local.events())
    assert expected, "the local run writes the sample's events"
    got = sorted(json.dumps(e, sort_keys=True) for e in on_cluster.events())
    assert len(got) == len(expected)
    assert got == expected
    # written by the driver: the executors could not write the OpenLineage folder, and none tried
    assert on_cluster.executor_writes() == []


def test_sample_on_cluster_parses_and_emits_in_the_workers_executors(
    cluster_run: ClusterRun, cluster: StandaloneCluster
) -> None:
    """The job's own runs, from their event logs: the tasks that passed rows through the parse
    UDF (its plan node's metrics moved) and the tasks of the emission's stage ran in executors
    that this cluster's workers started (those that replaced a killed one included)."""
    workers = {w["webuiaddress"] for w in cluster.state()["workers"]}
    parsed_in, emitted_in = set(), set()
    for run in cluster_run.submits:
        events = run.log().events
        executor_worker = {
            e["Executor ID"]: _worker_ui(e["Executor Info"]["Log Urls"]["stderr"])
            for e in events
            if e["Event"] == "SparkListenerExecutorAdded"
        }
        assert executor_worker and set(executor_worker.values()) <= workers
        parse_metrics = {
            m["accumulatorId"]
            for e in events
            if "sparkPlanInfo" in e
            for node in _plan_nodes(e["sparkPlanInfo"])
            if "parse_sql(" in node["simpleString"]
            for m in node["metrics"]
        }
        emission_stages = {
            e["Stage Info"]["Stage ID"]
            for e in events
            if e["Event"] == "SparkListenerStageCompleted"
            and "lineage_udfs/spark/openlineage/emission.py" in e["Stage Info"]["Stage Name"]
        }
        for e in events:
            if e["Event"] != "SparkListenerTaskEnd":
                continue
            info = e["Task Info"]
            moved = {a["ID"] for a in info.get("Accumulables", []) if str(a.get("Update")) != "0"}
            if moved & parse_metrics:
                assert info["Executor ID"] in executor_worker, info
                parsed_in.add(info["Executor ID"])
            if e["Stage ID"] in emission_stages:
                assert info["Executor ID"] in executor_worker, info
                emitted_in.add(info["Executor ID"])
    assert parsed_in, "the parse UDF passed rows in a task of the run"
    assert emitted_in, "the emission's stage ran tasks"


def _plan_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("children", []) for n in _plan_nodes(child))]


def _worker_ui(log_url: str) -> str:
    """``http://127.0.0.1:PORT`` of a worker web UI, from an executor's log URL on it."""
    scheme, _, rest = log_url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def test_parser_runs_in_the_executors_of_both_workers(
    probe: dict[str, Any], cluster: StandaloneCluster
) -> None:
    """What the tasks report from inside (:mod:`parse_probe`, the session's ``probe``): each
    statement parsed in a Python worker of an executor of this application (working directory
    ``<worker work dir>/<app id>/<executor id>``), on both workers, never in the driver; and
    parsed as the core parses it here."""
    driver, rows = probe["driver"], probe["rows"]
    assert driver["master"] == cluster.master_url
    assert sorted(r["row"] for r in rows) == list(range(probe["statements"]))

    workers = {cluster.work_dir(i) / driver["app_id"]: i for i in range(cluster.workers)}
    pids_by_worker: dict[int, set[int]] = {}
    for row in rows:
        executor_dir = Path(row["cwd"])
        assert executor_dir.parent in workers, row["cwd"]
        assert executor_dir.name.isdigit(), row["cwd"]  # the executor id
        pids_by_worker.setdefault(workers[executor_dir.parent], set()).add(row["pid"])
        assert row["pid"] not in (driver["pid"], os.getpid())
    assert sorted(pids_by_worker) == list(range(cluster.workers))
    assert not pids_by_worker[0] & pids_by_worker[1]

    parser = LineageParser(ParserOptions())
    texts = statements_of(SPARK_LOG)
    for row in rows:
        here = redact_names(parser.parse(texts[row["row"]], dialect="spark", mask=False))
        assert (row["status"], row["statement_type"], tuple(row["targets"])) == (
            str(here.status),
            str(here.statement_type),
            here.targets,
        ), texts[row["row"]]
    assert Counter(r["status"] for r in rows)["ok"] > len(rows) // 2
