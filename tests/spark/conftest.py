"""One local SparkSession with real Delta for the whole test run, and the DataFrame helper."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pytest
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.settings import SparkSettings
from lineage_udfs.spark.session import build_spark_session

DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"
VOLATILE_COLUMNS: tuple[str, ...] = ("run_id", "parsed_at", "started_at", "ended_at")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """Built by the production session factory (local master, Delta package, Arrow confs)."""
    settings = SparkSettings(
        app_name="lineage-tests",
        master="local[2]",
        packages=[DELTA_PACKAGE],
        confs={
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.sql.execution.arrow.maxRecordsPerBatch": "50",
            "spark.ui.enabled": "false",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse")),
        },
    )
    try:
        session = build_spark_session(settings)
    except Exception as exc:  # make a jar problem obvious instead of a bare Py4J trace
        pytest.fail(f"cannot start Spark with {DELTA_PACKAGE} from Maven Central: {exc}")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _assert_frames_equal(
    actual: DataFrame, expected: DataFrame, *, ignore_columns: Sequence[str] = ()
) -> None:
    """chispa equality ignoring row order and nullability, without volatile columns."""
    drop = [c for c in (*VOLATILE_COLUMNS, *ignore_columns) if c in actual.columns]
    assert_df_equality(
        actual.drop(*drop),
        expected.drop(*[c for c in drop if c in expected.columns]),
        ignore_row_order=True,
        ignore_nullable=True,
    )


@pytest.fixture(scope="session")
def assert_frames_equal() -> Callable[..., None]:
    """The one DataFrame assertion helper: ``assert_frames_equal(actual, expected)``."""
    return _assert_frames_equal
