"""A slice of the hostile-input harness (bench/hostile_bench.py) through the real job, in the
test session: every row accounted for, no planted secret in any table, event or log line, and
none readable in spark.local.dir."""

from __future__ import annotations

import importlib.util
import logging
import os
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

TABLES = ("parsed_statements", "queries", "table_lineage", "column_lineage", "quarantine")


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
    tables = LineageTables(spark, settings.sink)
    for name in (*TABLES, "lineage_runs"):
        frame = tables.read(name)
        text = F.to_json(F.struct(*[F.col(c) for c in frame.columns]))
        assert frame.where(text.contains(hb.CANARY)).count() == 0, name
    assert tables.read("queries").count() > 0
    events = (tmp_path / "events.jsonl").read_text(errors="replace")
    assert events.count("\n") > 0 and hb.CANARY not in events
    assert hb.CANARY not in caplog.text
    env = spark.sparkContext._jsc.sc().env()
    for root in env.blockManager().diskBlockManager().localDirsString():
        files, hits = hb.scan_folder(Path(str(root)))
        assert hits == 0, (root, files)
    assert os.path.isdir(str(root))
