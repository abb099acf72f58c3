"""The embedded default on the cluster: the same lineage and the same OpenLineage events as a
``local[2]`` run; the parser runs in the workers' executors.

The job is submitted as a user submits it (``spark-submit jobs/extract.py`` with
``conf/local.yaml``, :mod:`sample`), once with ``--master local[2]`` and once to the cluster,
each from its own working directory (the ``sample_runs`` fixture). On the cluster the executors
may not write the OpenLineage folder (the events file and the spool): it is the driver's.
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

from .parse_probe import statements_of
from .sample import SampleRun, table_rows
from .spark_submit import ROOT, submit
from .standalone import StandaloneCluster

PROBE = Path(__file__).resolve().parent / "parse_probe.py"
SPARK_LOG = ROOT / "data" / "sample" / "spark_query_log.jsonl"


def test_sample_on_cluster_writes_every_table_of_a_local_run(
    sample_runs: dict[str, SampleRun],
) -> None:
    local, on_cluster = sample_runs["local"], sample_runs["cluster"]
    tables = sorted(p.name for p in local.lineage.iterdir())
    assert set(TABLES) <= set(tables)
    assert sorted(p.name for p in on_cluster.lineage.iterdir()) == tables
    for table in tables:
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
    sample_runs: dict[str, SampleRun], cluster: StandaloneCluster
) -> None:
    """The job's own run, from its event log: the tasks that passed rows through the parse
    UDF (its plan node's metrics moved) and the tasks of the emission's stage ran in executors
    that this cluster's workers started."""
    cwd = sample_runs["cluster"].cwd
    (log,) = (cwd / "spark-events").iterdir()
    events = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    workers = {w["webuiaddress"] for w in cluster.state()["workers"]}
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
    assert parse_metrics, "the parse UDF is in a plan of the run"
    emission_stages = {
        e["Stage Info"]["Stage ID"]
        for e in events
        if e["Event"] == "SparkListenerStageCompleted"
        and "lineage_udfs/spark/openlineage/emission.py" in e["Stage Info"]["Stage Name"]
    }
    assert emission_stages, "the emission's stage ran"
    parsed_in, emitted_in = set(), set()
    for e in events:
        if e["Event"] != "SparkListenerTaskEnd":
            continue
        info = e["Task Info"]
        moved = {a["ID"] for a in info.get("Accumulables", []) if str(a.get("Update")) != "0"}
        if moved & parse_metrics:
            parsed_in.add(info["Executor ID"])
        if e["Stage ID"] in emission_stages:
            emitted_in.add(info["Executor ID"])
    assert parsed_in and parsed_in <= set(executor_worker), parsed_in
    assert emitted_in and emitted_in <= set(executor_worker), emitted_in


def _plan_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("children", []) for n in _plan_nodes(child))]


def _worker_ui(log_url: str) -> str:
    """``http://127.0.0.1:PORT`` of a worker web UI, from an executor's log URL on it."""
    scheme, _, rest = log_url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def test_parser_runs_in_the_executors_of_both_workers(
    cluster: StandaloneCluster, tmp_path: Path
) -> None:
    """What the tasks report from inside: each statement parsed in a Python worker of an
    executor of this application (working directory ``<worker work dir>/<app id>/<executor
    id>``), on both workers, never in the driver; and parsed as the core parses it here."""
    out = tmp_path / "probe.json"
    submit(
        cluster.master_url,
        PROBE,
        [str(SPARK_LOG), str(out)],
        cwd=tmp_path,
        # scheduling starts once both executors are registered
        confs={"spark.cores.max": "2", "spark.scheduler.minRegisteredResourcesRatio": "1.0"},
    ).check()
    report = json.loads(out.read_text("utf-8"))
    driver, rows = report["driver"], report["rows"]
    assert driver["master"] == cluster.master_url
    assert sorted(r["row"] for r in rows) == list(range(report["statements"]))

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
