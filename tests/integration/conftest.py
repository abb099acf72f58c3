"""Integration tests against real OpenLineage consumers (Marquez, Kafka): ``make test-integration``.

They are selected only by ``-m integration``; any other run (``make test``, ``make test-fast``)
deselects them. The fixtures start the services themselves and stop them by PID afterwards,
also when a test fails. The extract job runs once per session on the sample logs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from services import ROOT, Kafka, Marquez  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    chosen = "integration" in (config.getoption("markexpr") or "")
    kept, dropped = [], []
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.integration)
            (kept if chosen else dropped).append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from lineage_udfs.settings import SparkSettings
    from lineage_udfs.spark.session import build_spark_session

    base = yaml.safe_load((ROOT / "conf" / "base.yaml").read_text("utf-8"))["spark"]
    settings = SparkSettings(
        app_name="lineage-integration",
        master="local[2]",
        packages=base["packages"],
        confs={
            **base["confs"],
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse")),
        },
    )
    session = build_spark_session(settings)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def sample_overlay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Overlay on the embedded default (conf/base.yaml + conf/local.yaml): outputs under tmp;
    no graph stage and no emission in the extract run (the tests emit themselves)."""
    out = tmp_path_factory.mktemp("sample")
    overlay = {
        "sink": {"base_path": str(out / "lineage")},
        "graph": {"enabled": False},
        "openlineage": {"enabled": False},
    }
    path = out / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sample_settings(spark: object, sample_overlay: Path, monkeypatch_session: None) -> object:
    """The extract job run once on the sample logs; its settings (sink = the Delta tables)."""
    from lineage_udfs.settings import load_settings
    from lineage_udfs.spark.extract import run as run_extraction

    settings = load_settings(
        [ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml", sample_overlay]
    )
    summary = run_extraction(spark, settings)  # type: ignore[arg-type]
    assert summary.status == "succeeded"
    return settings


@pytest.fixture(scope="session")
def monkeypatch_session() -> Iterator[None]:
    """conf/local.yaml names the sample logs relative to the repository root."""
    import os

    before = Path.cwd()
    os.chdir(ROOT)
    yield
    os.chdir(before)


@pytest.fixture(scope="session")
def marquez() -> Iterator[Marquez]:
    """``MARQUEZ_URL`` if set (left running), else Marquez from ../shared/services/marquez."""
    import os

    if os.environ.get("MARQUEZ_URL"):
        yield Marquez(url=os.environ["MARQUEZ_URL"].rstrip("/"))
        return
    server = Marquez.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def own_marquez(marquez: Marquez) -> Iterator[Marquez]:
    """A Marquez the tests may stop and restart: the session's one when they started it."""
    if marquez.owned:
        yield marquez
        return
    server = Marquez.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def kafka() -> Iterator[Kafka]:
    broker = Kafka.start()
    try:
        yield broker
    finally:
        broker.stop()
