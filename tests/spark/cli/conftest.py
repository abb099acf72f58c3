"""The sample warehouse, built once per test run (tests/support/sample_warehouse.py)."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession
from support.sample_warehouse import SampleWarehouse, build_sample_warehouse, screenshots


@pytest.fixture(scope="session")
def sample_warehouse(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> SampleWarehouse:
    """Built by the first test process that needs it; the other pytest-xdist processes wait for
    it and read the same tables (no test writes them: one that changes tables copies them)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build_sample_warehouse(spark, tmp_path_factory.mktemp("sample-warehouse"))
    shared = tmp_path_factory.getbasetemp().parent  # the run's folder, common to its workers
    root = shared / "sample-warehouse"
    with open(shared / "sample-warehouse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if (root / "built").exists():
                return SampleWarehouse.at(root)
            if root.exists():  # a process that failed building it: build it again
                shutil.rmtree(root)
            root.mkdir()
            built = build_sample_warehouse(spark, root)
            (root / "built").write_text("", encoding="utf-8")
            return built
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _screenshots_reported(request: pytest.FixtureRequest) -> Iterator[None]:
    """The screenshots a test took, as properties of its report: they reach the summary also
    from a pytest-xdist worker process."""
    taken = len(screenshots)
    yield
    for png in screenshots[taken:]:
        request.node.user_properties.append(("screenshot", str(png)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    seen: list[str] = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "screenshot" and value not in seen:
                    seen.append(value)
    for png in seen:
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
