"""A slice of the hostile-input harness (bench/hostile_bench.py) through the real job, in the
test session: every row accounted for, no planted secret in any table, event or log line, and
none readable in spark.local.dir; the harness's table check reads every table, finds a canary
planted in one, and names a table it cannot read."""

from __future__ import annotations

import importlib.util
import logging
import shutil
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import load_settings
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.openlineage.emission import emit_openlineage
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("hostile_bench", ROOT / "bench/hostile_bench.py")
assert _SPEC is not None and _SPEC.loader is not None
hb = importlib.util.module_from_spec(_SPEC)
sys.modules["hostile_bench"] = hb  # its dataclasses look their module up
_SPEC.loader.exec_module(hb)


def test_hostile_slice_accounts_for_every_row_and_leaks_nothing(
    spark: SparkSession, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plan = hb.generate(tmp_path, 500, seed=11)
    settings = load_settings([ROOT / "conf/base.yaml", hb.write_config(tmp_path)])
    # the package's own log at DEBUG (the jobs keep py4j, which echoes Java calls, at WARNING)
    with caplog.at_level(logging.DEBUG, logger="lineage_udfs"):
        summary = extract(spark, settings)
        emit_openlineage(spark, settings, {})
    # every row: read, or absorbed by a broken CSV quote (quarantined with its carrier)
    records = hb.count_records(tmp_path, seed=11)
    assert records["records_in_files"] == plan.records
    assert summary.rows_read + records["csv_records_absorbed"] == plan.records
    assert summary.rows_read == (
        summary.load_quarantined
        + summary.rows_not_relevant
        + summary.rows_relevant
        + summary.duplicate_query_ids
    )
    assert plan.kinds["secret"] > 100 and summary.load_quarantined > 0
    # the harness's own check: every table read, each holding rows, no canary in any
    warehouse = Path(settings.sink.base_path)
    checked = hb.check_tables(spark, warehouse)
    assert checked["unreadable"] == {}
    assert set(hb.TABLES_TO_CHECK) <= set(checked["tables"])
    assert {n: checked["tables"][n]["rows"] > 0 for n in hb.TABLES_TO_CHECK} == dict.fromkeys(
        hb.TABLES_TO_CHECK, True
    )
    assert {n: t["canaries"] for n, t in checked["tables"].items()} == dict.fromkeys(
        checked["tables"], 0
    )
    tables = LineageTables(spark, settings.sink)
    for name in hb.TABLES_TO_CHECK:  # the rows checked are the table's rows
        assert checked["tables"][name]["rows"] == tables.read(name).count(), name
    assert checked["run_status"] is not None
    assert sum(checked["quarantine_reasons"].values()) == checked["tables"]["quarantine"]["rows"]
    events = (tmp_path / "events.jsonl").read_text(errors="replace")
    assert events.count("\n") > 0 and hb.CANARY not in events
    assert hb.CANARY not in caplog.text
    env = spark.sparkContext._jsc.sc().env()
    local_dirs = [Path(str(d)) for d in env.blockManager().diskBlockManager().localDirsString()]
    assert local_dirs and all(d.is_dir() for d in local_dirs)
    for root in local_dirs:
        files, hits = hb.scan_folder(root)
        assert hits == 0, (root, files)

    # the check can fail: a canary planted in one row of one table is found there and only there
    quarantine = warehouse / "quarantine"
    frame = spark.read.format("delta").load(str(quarantine))
    frame.limit(1).withColumn("reason", F.lit(f"planted {hb.CANARY}0000001")).write.format(
        "delta"
    ).mode("append").save(str(quarantine))
    planted = hb.check_tables(spark, warehouse)
    rows = checked["tables"]["quarantine"]["rows"]
    assert planted["tables"]["quarantine"] == {"rows": rows + 1, "canaries": 1}
    assert sum(t["canaries"] for t in planted["tables"].values()) == 1
    report = {
        "tables": planted["tables"],
        "unreadable_tables": planted["unreadable"],
        "every_row_accounted": True,
        "events": 1,
    }
    assert hb.problems(report) == ["planted secrets found in table quarantine: 1"]

    # a table that cannot be read, or is not there, is named with the reason, never skipped
    data_files = [
        f for f in (warehouse / "lineage_runs").rglob("*.parquet") if "_delta_log" not in f.parts
    ]
    assert data_files
    for data_file in data_files:
        data_file.unlink()
    shutil.rmtree(warehouse / "openlineage_emissions" / "_delta_log")
    broken = hb.check_tables(spark, warehouse)
    assert set(broken["unreadable"]) == {"lineage_runs", "openlineage_emissions"}
    assert broken["unreadable"]["openlineage_emissions"] == "no Delta table (no _delta_log folder)"
    assert "FILE_NOT_EXIST" in broken["unreadable"]["lineage_runs"]  # Spark's reason
    report.update(tables=broken["tables"], unreadable_tables=broken["unreadable"])
    lines = hb.problems(report)
    assert lines[:2] == [
        f"table lineage_runs was not checked: {broken['unreadable']['lineage_runs']}",
        "table openlineage_emissions was not checked: no Delta table (no _delta_log folder)",
    ]
