"""The sample warehouse, built once per test session (tests/support/sample_warehouse.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession
from support.sample_warehouse import SampleWarehouse, build_sample_warehouse, screenshots


@pytest.fixture(scope="session")
def sample_warehouse(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> SampleWarehouse:
    return build_sample_warehouse(spark, tmp_path_factory.mktemp("sample-warehouse"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for png in screenshots:
        terminalreporter.write_line(f"lineage HTML screenshot: {png}")


@pytest.fixture
def session_confs_restored(spark: SparkSession) -> Iterator[None]:
    """Code that builds its session from the sample's settings reuses the tests' session and
    sets its confs there (e.g. spark.sql.shuffle.partitions); put them back for later tests."""
    before = dict(spark.conf.getAll)
    yield
    after = dict(spark.conf.getAll)
    for key, value in after.items():
        if not spark.conf.isModifiable(key):  # static and core confs keep the session's
            continue
        if key not in before:
            spark.conf.unset(key)
        elif before[key] != value:
            spark.conf.set(key, before[key])
