"""Integration tests against real OpenLineage consumers (Marquez, Kafka): ``make test-integration``.

They are selected only by ``-m integration``; any other run (``make test``, ``make test-fast``)
deselects them. The fixtures start the services themselves and stop them by PID afterwards,
also when a test fails. The extract job runs once per session on the sample logs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.selection import select_only_by_marker

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from services import ROOT, Kafka, Marquez  # noqa: E402

POSTGRES_JDBC = "org.postgresql:postgresql:42.7.14"
"""The JDBC driver of the live PostgreSQL test (tests/integration/postgres)."""
SPARK_KAFKA = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"
"""Spark's Kafka source, for the Kafka topic as an OpenLineage source
(``lineage_udfs.sources.ol_kafka.SPARK_KAFKA_PACKAGE``)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    select_only_by_marker(config, items, HERE, "integration")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from support.spark_session import FEW_ROWS_CONFS

    from lineage_udfs.settings import SparkSettings
    from lineage_udfs.spark.runtime.session import build_spark_session

    base = yaml.safe_load((ROOT / "conf" / "base.yaml").read_text("utf-8"))["spark"]
    settings = SparkSettings(
        app_name="lineage-integration",
        master="local[2]",
        packages=[*base["packages"], POSTGRES_JDBC, SPARK_KAFKA],
        confs={
            **base["confs"],
            # as in tests/spark: a few rows (tests/support/spark_session.py); without adaptive
            # execution, joins of small sides are broadcast by their estimated size (base.yaml
            # leaves that to adaptive execution)
            **FEW_ROWS_CONFS,
            "spark.sql.autoBroadcastJoinThreshold": "10485760",
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
    no graph stage, no activity stage and no emission in the extract run (the tests emit
    themselves)."""
    out = tmp_path_factory.mktemp("sample")
    overlay = {
        "sink": {"base_path": str(out / "lineage")},
        "graph": {"enabled": False},
        # no test reads an activity table (Sample.read, the emission): on, it only costs time
        "activity": {"enabled": False},
        "openlineage": {"enabled": False},
    }
    path = out / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def sample_settings(spark: object, sample_overlay: Path, monkeypatch_session: None) -> object:
    """The extract job run once on the sample logs; its settings (sink = the Delta tables)."""
    from lineage_udfs.settings import load_settings
    from lineage_udfs.spark.pipeline import run_extract

    settings = load_settings(
        [ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml", sample_overlay]
    )
    outcome = run_extract(spark, settings)  # type: ignore[arg-type]
    assert outcome.run.status == "succeeded" and outcome.emit is None
    return settings


@pytest.fixture(scope="session")
def monkeypatch_session() -> Iterator[None]:
    """conf/local.yaml names the sample logs relative to the repository root."""
    before = Path.cwd()
    os.chdir(ROOT)
    yield
    os.chdir(before)


@pytest.fixture(scope="session", autouse=True)
def services() -> Iterator[dict[str, Future[Any]]]:
    """Marquez (unless ``MARQUEZ_URL`` names one) and Kafka start in the background at once,
    while the extract job runs; they are stopped by PID when the session ends, also on failure."""
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="service-start")
    started: dict[str, Future[Any]] = {"kafka": pool.submit(Kafka.start)}
    if not os.environ.get("MARQUEZ_URL"):
        started["marquez"] = pool.submit(Marquez.start)
    try:
        yield started
    finally:
        for future in started.values():
            try:
                service = future.result()
            except Exception:  # its start failed: up.sh / kafka.sh already cleaned up
                continue
            service.stop()
        pool.shutdown()


@pytest.fixture(scope="session")
def marquez(services: dict[str, Future[Any]]) -> Marquez:
    """``MARQUEZ_URL`` if set (left running), else Marquez from ../shared/services/marquez."""
    if "marquez" not in services:
        return Marquez(url=os.environ["MARQUEZ_URL"].rstrip("/"))
    return services["marquez"].result()


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
def kafka(services: dict[str, Future[Any]]) -> Kafka:
    return services["kafka"].result()
