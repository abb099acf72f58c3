"""The maintenance job (jobs/maintain.py, as spark-submit runs it) on a copy of the sample
warehouse: every ``lineage`` answer is the same before and after, the closures are Z-ordered,
and the tables still read as of their version before it (VACUUM kept 30 days)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from support.sample_warehouse import ROOT, SampleWarehouse, copy_sample_warehouse

from lineage_udfs.spark.storage.tables import LineageTables

LINEAGE = Path(sys.executable).parent / "lineage"
QUESTIONS = [
    ("upstream", "reports.daily_revenue"),
    ("downstream", "raw.orders"),
    ("upstream", "reports.daily_revenue.revenue"),
    ("downstream", "raw.orders.amount"),
    ("path", "raw.orders", "reports.daily_revenue"),
    ("search", "revenue"),
    ("runs",),
    ("quarantine",),
    ("sql", "SELECT ancestor, descendant, min_distance FROM table_closure ORDER BY 1, 2"),
]


def _answers(wh: SampleWarehouse, *extra: str) -> list[dict[str, Any]]:
    out = []
    for question in QUESTIONS:
        done = subprocess.run(
            [str(LINEAGE), *question, "--config", str(wh.overlay), "--json", *extra],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        assert done.returncode == 0, (question, done.stderr)
        out.append(json.loads(done.stdout))
    return out


@pytest.fixture(scope="module")
def warehouse(
    sample_warehouse: SampleWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> SampleWarehouse:
    """The session's sample warehouse (``pipeline.run_extract`` on the sample), copied: the
    job rewrites its files."""
    return copy_sample_warehouse(sample_warehouse, tmp_path_factory.mktemp("maintained"))


def test_maintenance_keeps_every_answer(
    spark: SparkSession,
    warehouse: SampleWarehouse,
    session_confs_restored: None,
) -> None:
    wh = warehouse
    tables = LineageTables(spark, wh.settings.sink)
    version = tables.latest_version("table_closure")
    before = _answers(wh)
    time.sleep(1.5)
    moment = datetime.now(UTC).isoformat()
    spec = importlib.util.spec_from_file_location("jobs_maintain", ROOT / "jobs" / "maintain.py")
    assert spec is not None and spec.loader is not None
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    # the job's own session is the tests' (getOrCreate)
    assert job.main(["--config", str(wh.overlay)]) == 0
    optimize = [
        r.operationParameters
        for r in tables.delta_table("table_closure").history(8).collect()
        if r.operation == "OPTIMIZE"
    ]
    assert optimize and '["descendant","ancestor"]' in optimize[0]["zOrderBy"], optimize
    # Delta 4 ignores VACUUM's retention argument: the table property carries the 30 days
    shown = spark.sql(f"SHOW TBLPROPERTIES delta.`{tables.location('table_closure')[1]}`")
    properties = {r["key"]: r["value"] for r in shown.collect()}
    assert properties["delta.deletedFileRetentionDuration"] == "interval 720 hours"
    assert tables.latest_version("table_closure") > version
    assert _answers(wh) == before
    # time travel still reaches the version before: VACUUM kept its files
    then = _answers(wh, "--as-of", moment)[0]
    assert then["rows"] == before[0]["rows"]
