"""Make tests/support importable as ``support`` for the emit tests; the stored emission rows
and the test collector as fixtures.

The ``spark`` fixture is the project's one session fixture in tests/spark/conftest.py.
"""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

_TESTS = str(Path(__file__).resolve().parents[2])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from support.collector import Collector  # noqa: E402
from support.emit_tables import stored_tables  # noqa: E402

from lineage_udfs.spark.storage.tables import LineageTables  # noqa: E402


@pytest.fixture
def tables(spark: SparkSession, tmp_path: Path) -> LineageTables:
    """The emission rows (support/emit_rows.py) in Delta tables under ``tmp_path``."""
    return stored_tables(spark, tmp_path / "lineage")


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector().start()
    yield server
    server.stop()
