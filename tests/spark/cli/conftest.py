"""The sample warehouse, built once per test session (tests/support/sample_warehouse.py)."""

from __future__ import annotations

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
