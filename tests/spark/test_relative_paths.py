"""A relative path in the settings points at one location wherever it is read (the sink's
Delta tables, Hadoop's FileSystem in the preflight, the sources, the checkpoint folder, the
``lineage`` command, and a Spark task's OpenLineage file transport and spool), even where the
process's working directory is another one (``lineage_udfs.paths``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from lineage_udfs.cli.store import table_locations
from lineage_udfs.emit.client import make_client
from lineage_udfs.paths import resolve_path
from lineage_udfs.settings import load_settings
from lineage_udfs.spark.openlineage.emission import _spool
from lineage_udfs.spark.runtime.checkpoints import run_checkpoints
from lineage_udfs.spark.runtime.preflight import fs_and_path
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]

RELATIVE = """
sources:
  - {name: logs, format: jsonl, path: logs/*.jsonl}
sink:
  base_path: wh/lineage
  tables: {queries: {path: wh/queries}}
execution: {checkpoint_dir: wh/checkpoints}
openlineage:
  enabled: true
  transport: {type: file, log_file_path: ol/events.jsonl}
  spool: {path: ol/spool}
"""


def _qualified(spark: SparkSession, location: str) -> str:
    """What Hadoop's FileSystem (the preflight's, Spark's readers') makes of ``location``."""
    fs, path = fs_and_path(spark, location)
    return str(fs.makeQualified(path).toUri().getPath())


def test_relative_paths_point_at_one_location_in_every_place(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver, executor = tmp_path / "driver", tmp_path / "executor"
    driver.mkdir()
    executor.mkdir()
    (driver / "job.yaml").write_text(RELATIVE, encoding="utf-8")
    # the driver runs here; the JVM (and its Hadoop FileSystem) started in another folder
    monkeypatch.chdir(driver)
    assert Path(spark.sparkContext._jvm.System.getProperty("user.dir")) != driver
    settings = load_settings([ROOT / "conf" / "base.yaml", driver / "job.yaml"])
    base = driver / "wh" / "lineage"

    tables = LineageTables(spark, settings.sink)
    assert tables.location("lineage_runs") == (None, str(base / "lineage_runs"))
    assert tables.location("queries") == (None, str(driver / "wh" / "queries"))
    assert table_locations(settings.sink)["lineage_runs"] == str(base / "lineage_runs")
    assert _qualified(spark, settings.sink.base_path) == str(base)
    assert _qualified(spark, settings.sources[0].path) == str(driver / "logs" / "*.jsonl")
    with run_checkpoints(spark, settings.execution.checkpoint_dir, "run1") as folder:
        assert folder == str(driver / "wh" / "checkpoints" / "run1")
        checkpoints = spark.sparkContext.getCheckpointDir()  # Spark's, qualified by Hadoop
        assert checkpoints is not None
        assert checkpoints.startswith(f"file:{driver / 'wh' / 'checkpoints' / 'run1'}/")

    ol, sink_base = settings.openlineage, settings.sink.base_path

    def in_a_task(_: Iterator[Any]) -> Iterator[tuple[str, str, str]]:
        """What a task of the emission opens, from an executor's own working directory."""
        before = os.getcwd()
        os.chdir(executor)
        try:
            spool = _spool(ol)
            assert spool is not None
            events = make_client(ol, {}).transport.config.log_file_path  # type: ignore[attr-defined]
            yield str(spool.path), os.path.abspath(events), resolve_path(sink_base)
        finally:
            os.chdir(before)

    seen = spark.sparkContext.parallelize([0], 1).mapPartitions(in_a_task).collect()
    assert seen == [(str(driver / "ol" / "spool"), str(driver / "ol" / "events.jsonl"), str(base))]
