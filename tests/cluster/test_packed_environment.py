"""The job shipped as users ship it (docs/deploy.md): the project's wheel inside a venv-pack
archive (``make dist``, scripts/pack_env.sh), passed with ``--archives <archive>#environment``
and ``spark.pyspark.python=./environment/bin/python``; the executors unpack it and run their
Python workers from it, with the pyspark of the Spark that runs them.

The driver runs in client mode from the same archive, unpacked next to the submit
(``spark.pyspark.driver.python``), so neither side imports the repository's sources or its
development venv: the archive alone runs the job. The session's applications on the cluster
are submitted so (:mod:`packing`): its probe (``probe``, :mod:`parse_probe`), which reports
from inside each task where its Python comes from, and its run of the sample (``cluster_run``),
checked here against the local one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

from .faults import ClusterRun
from .packing import ENVIRONMENT, Packed
from .sample import EVENTS, RUN_LOGS, SampleRun
from .spark_submit import ROOT
from .standalone import SPARK_HOME, StandaloneCluster

LINEAGE = Path("warehouse") / "lineage"
"""conf/local.yaml's sink, relative to the driver's working directory."""
EXTRACT_TABLES = (
    "parsed_statements",
    "queries",
    "table_lineage",
    "column_lineage",
    "quarantine",
    "lineage_runs",
    "openlineage_emissions",
)
"""The tables every extract writes (the graph stage's come on top)."""
SAME_ROWS = ("table_lineage", "column_lineage")
"""Tables with no column of the run itself (ids, times): equal row for row across two runs."""


def _site_packages(prefix: Path) -> Path:
    return prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def test_packed_environment_runs_the_driver_and_every_executor_task(
    probe: dict[str, Any], packed: Packed, cluster: StandaloneCluster
) -> None:
    """From inside each task (:mod:`parse_probe` submitted with the packed environment, the
    session's ``probe``): its Python is ``<executor dir>/environment/bin/python`` (the
    unpacked archive, one per executor, on both workers), the project and sqlglot come from that
    environment's site-packages, pyspark from Spark's own ``python/lib/pyspark.zip``; nothing
    from the repository or its venv. The driver's Python is the archive unpacked for it. (That
    each task parsed as the core parses here is test_sample_on_cluster's, on the same report.)
    """
    driver, rows = probe["driver"], probe["rows"]
    pyspark_zip = SPARK_HOME / "python" / "lib" / "pyspark.zip"

    assert driver["master"] == cluster.master_url
    assert Path(driver["prefix"]) == packed.driver_env
    assert Path(driver["lineage_udfs"]).is_relative_to(_site_packages(packed.driver_env))
    assert Path(driver["pyspark"]).is_relative_to(pyspark_zip), driver["pyspark"]

    assert rows and sorted(r["row"] for r in rows) == list(range(probe["statements"]))
    workers = {cluster.work_dir(i) / driver["app_id"]: i for i in range(cluster.workers)}
    seen_workers = set()
    for row in rows:
        executor_dir = Path(row["cwd"])
        assert executor_dir.parent in workers and executor_dir.name.isdigit(), row["cwd"]
        seen_workers.add(workers[executor_dir.parent])
        environment = executor_dir / ENVIRONMENT
        assert Path(row["executable"]) == environment / "bin" / "python", row
        assert Path(row["prefix"]) == environment, row
        for module in ("lineage_udfs", "sqlglot"):
            assert Path(row[module]).is_relative_to(_site_packages(environment)), row
            assert not Path(row[module]).is_relative_to(ROOT), row
        assert Path(row["pyspark"]).is_relative_to(pyspark_zip), row
        assert row["pid"] != driver["pid"]
    assert seen_workers == set(range(cluster.workers))


def _table(run: Path, table: str) -> list[str]:
    """Every row of ``table`` as sorted canonical JSON (read with delta-rs' query engine, which
    applies deletion vectors)."""
    delta = DeltaTable(str(run / LINEAGE / table))
    data = pa.table(QueryBuilder().register("t", delta).execute("SELECT * FROM t").read_all())
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in data.to_pylist())


def test_packed_extract_on_the_cluster_equals_a_local_run(
    packed: Packed,
    cluster: StandaloneCluster,
    cluster_run: ClusterRun,
    sample_local: SampleRun,
) -> None:
    """``jobs/extract.py`` on the sample, submitted to the cluster with the packed environment
    (the session's cluster run), against the session's ``local[2]`` run of the same job
    (submitted as ``make run`` does, the development venv): shipped with the archive (its
    Spark properties; every executor of the run, a replaced one too, unpacked it), the
    extraction's tables with as many rows each, the edges row for row, the same OpenLineage
    events. (Every table row for row, the graph stage's included, is test_sample_on_cluster's.)
    """
    shipped, local = cluster_run.run, sample_local
    assert f"master {cluster.master_url})" in shipped.submitted.output
    _, confs = packed.submit_options()
    for run in cluster_run.submits:
        events = run.log().events
        (environment,) = [e for e in events if e["Event"] == "SparkListenerEnvironmentUpdate"]
        properties = dict(environment["Spark Properties"])
        for key, value in confs.items():
            assert properties[key] == value, key
        assert str(packed.archive) in properties["spark.archives"], properties["spark.archives"]
        (app_id,) = {e["App ID"] for e in events if e["Event"] == "SparkListenerApplicationStart"}
        executors = {e["Executor ID"] for e in events if e["Event"] == "SparkListenerExecutorAdded"}
        unpacked = {
            d.name
            for i in range(cluster.workers)
            for d in (cluster.work_dir(i) / str(app_id)).glob("*")
            if (d / ENVIRONMENT / "bin" / "python").exists()
        }
        assert executors and unpacked == executors, (unpacked, executors)

    tables = sorted(p.name for p in shipped.lineage.iterdir())
    assert set(EXTRACT_TABLES) <= set(tables)
    assert set(tables) <= {p.name for p in local.lineage.iterdir()}
    for table in EXTRACT_TABLES:
        if cluster_run.failed and table in RUN_LOGS:
            continue  # a run that failed for a lost executor left its own row (test_executor_loss)
        assert len(_table(shipped.cwd, table)) == len(_table(local.cwd, table)), table
    for table in SAME_ROWS:
        assert _table(shipped.cwd, table) == _table(local.cwd, table), table
    assert _table(shipped.cwd, "column_lineage"), "the sample gives column lineage"
    assert (shipped.cwd / EVENTS).exists()
    got = sorted(json.dumps(e, sort_keys=True) for e in shipped.events())
    assert got == sorted(json.dumps(e, sort_keys=True) for e in local.events())
    assert got
