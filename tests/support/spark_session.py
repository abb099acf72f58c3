"""The Spark tests' session: its master, packages and confs, in one place for
tests/spark/conftest.py and for bench/test_session.py (what a small extract costs in it)."""

from __future__ import annotations

from collections.abc import Mapping

from lineage_udfs.settings import SparkSettings
from lineage_udfs.spark.graph.frames import GRAPHFRAMES_PACKAGE
from lineage_udfs.spark.runtime.session import DELTA

PACKAGES = [DELTA.coordinates, GRAPHFRAMES_PACKAGE]
FEW_ROWS_CONFS: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    # Delta's log replay of a table a few commits long: one shuffle partition is enough
    "spark.databricks.delta.snapshotPartitions": "1",
    # adaptive execution plans a query stage by stage, each its own Spark job; on the
    # tests' few rows that costs more than it saves. A warm extract of three statements into
    # a new warehouse took 35-42 s and 58-75 s of the JVM's CPU, 27.5 s and 44 s with these
    # two confs (bench/test_session.py, bench/results/test_suite.md). Results are the same by
    # Spark's contract. The job's own confs (conf/base.yaml) keep it on, and so do the
    # applications the cluster and engine tests start and the jobs the CLI tests run here
    # (they set the job's confs, put back after each test); the integration tests' session
    # has it off too (tests/integration/conftest.py).
    "spark.sql.adaptive.enabled": "false",
    # the tests' data are a few rows per table, so compiling code for each query costs
    # far more than running it: Janino compiles a class per plan shape, and the JIT
    # compiles each class again when it turns hot (C2 took 37 % of the JVM's CPU over
    # two cold runs). Spark's interpreted evaluation (its own test suites run both
    # modes; results are the same by contract) cut the JVM's CPU for two
    # extract+graph+emission runs from 489 to 351 s cold and from 277 to 186 s warm
    # (bench/results/test_suite.md). The job's own confs keep code generation.
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""What a session that runs the job on a few rows sets over the job's confs: the Spark tests'
session (:data:`SESSION_CONFS`) and the integration tests' (tests/integration/conftest.py)."""
SESSION_CONFS: dict[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    "spark.sql.session.timeZone": "UTC",
    **FEW_ROWS_CONFS,
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "50",
    "spark.ui.enabled": "false",
    # as conf/base.yaml: no unmasked query text readable in spark.local.dir
    "spark.io.encryption.enabled": "true",
    # one JVM runs every test's queries: Spark's execution memory (~60 % of the heap)
    # plus the plans of hundreds of queries. At 1g the old generation sat at ~800 MB by
    # test_graph_stage.py, with full collections; at 2g it held 1.0-1.2 GB by the end of
    # `make test` (84-99 % full), and G1 ran 1,300-1,600 concurrent marking cycles per
    # JVM, 280-430 s of CPU on the 2-core CI machine. At 4g marking starts at ~1.8 GB.
    "spark.driver.memory": "4g",
    # the status store keeps this many finished queries' plans and metrics even with
    # the UI off (default 1,000): the test run makes thousands of small queries
    "spark.sql.ui.retainedExecutions": "50",
    # compiled query code is cached by its source, which names no table path: the
    # tests' thousands of small queries repeat a few hundred plans. At the default 100
    # entries the cache turned over within each run and Janino compiled the same code
    # again; two extract+graph+emission runs in a warm test JVM took 161 s and 247 CPU-s
    # at 100, 128-142 s and 197-211 CPU-s at 5,000 (bench/results/test_suite.md)
    "spark.sql.codegen.cache.maxEntries": "5000",
}
"""The confs of the tests' session, but for its warehouse folder (a temporary one per run)."""


def session_settings(warehouse_dir: str, extra: Mapping[str, str] | None = None) -> SparkSettings:
    """The tests' session settings with ``warehouse_dir`` as ``spark.sql.warehouse.dir`` and
    ``extra`` confs over :data:`SESSION_CONFS`."""
    confs = {**SESSION_CONFS, "spark.sql.warehouse.dir": warehouse_dir, **(extra or {})}
    return SparkSettings(
        app_name="lineage-tests", master="local[2]", packages=PACKAGES, confs=confs
    )
