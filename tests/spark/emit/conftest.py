"""Make tests/support importable as ``support`` for the emit tests."""

import os
import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[2])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """Local Spark with Delta (same shape as the project fixture; used until one exists)."""
    # Python workers must run this venv's interpreter (lineage_udfs, sqlglot, openlineage).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lineage-emit-tests")
        .config("spark.jars.packages", DELTA_PACKAGE)
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .getOrCreate()
    )
    yield session
    session.stop()
