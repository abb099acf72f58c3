"""Two writers MERGE into the same Delta table at once: the one that loses the commit race is
retried on the new snapshot, and the table ends as the two MERGEs run one after the other leave
it. Deterministic: writer A's MERGE is held inside its source scan (after it took its snapshot)
until writer B has committed, so A's first commit always conflicts."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.settings import SinkSettings
from lineage_udfs.spark.storage.schemas import QUERIES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

WAIT_SECONDS = 180


def _rows(spark: SparkSession, pairs: list[tuple[str, str]]) -> DataFrame:
    frame = spark.createDataFrame(pairs, "query_id string, fingerprint string")
    return frame.select(
        *[
            F.col(f.name) if f.name in frame.columns else F.lit(None).cast(f.dataType).alias(f.name)
            for f in QUERIES.schema
        ]
    )


def _held(rows: DataFrame, started: Path, release: Path) -> DataFrame:
    """``rows`` whose scan signals ``started`` and then waits for ``release`` (a file: the scan
    runs in a Python worker process)."""

    def hold(value: str) -> str:
        started.touch()
        deadline = time.monotonic() + WAIT_SECONDS
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return value

    return rows.coalesce(1).withColumn("fingerprint", F.udf(hold, StringType())("fingerprint"))


def _table(tables: LineageTables) -> list[tuple[str, str]]:
    rows = tables.read("queries").select("query_id", "fingerprint").collect()
    return sorted((r["query_id"], r["fingerprint"]) for r in rows)


SEED = [("q0", "f0"), ("q2", "f2-old")]
WRITER_A = [("q1", "a1"), ("q2", "a2")]
WRITER_B = [("q2", "b2"), ("q3", "b3")]


def test_concurrent_merges_are_retried_and_equal_the_serial_result(
    spark: SparkSession, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    serial = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "serial")))
    serial.ensure("queries")
    serial.write("queries", Upsert(_rows(spark, SEED)))
    serial.write("queries", Upsert(_rows(spark, WRITER_B)))
    serial.write("queries", Upsert(_rows(spark, WRITER_A)))

    tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "concurrent")))
    tables.ensure("queries")
    tables.write("queries", Upsert(_rows(spark, SEED)))
    started, release = tmp_path / "a-started", tmp_path / "a-release"
    outcome: dict[str, object] = {}

    def writer_a() -> None:
        try:
            outcome["a"] = tables.write(
                "queries", Upsert(_held(_rows(spark, WRITER_A), started, release))
            )
        except Exception as exc:  # surfaced by the assertion below
            outcome["a"] = exc

    with caplog.at_level(logging.WARNING, logger="lineage_udfs.spark.storage"):
        thread = threading.Thread(target=writer_a)
        thread.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "writer A never reached its source scan"
        tables.write("queries", Upsert(_rows(spark, WRITER_B)))  # B commits while A is held
        release.touch()
        thread.join(WAIT_SECONDS)
    assert not thread.is_alive()
    assert not isinstance(outcome["a"], Exception), outcome["a"]
    retries = [r for r in caplog.records if "another writer committed" in r.getMessage()]
    assert retries, "writer A's first commit did not conflict"
    assert "MERGE into queries" in retries[0].getMessage()
    assert _table(tables) == _table(serial) == sorted([*SEED[:1], *WRITER_A, WRITER_B[1]])
