"""The notebooks, executed top to bottom as scripts (their Databricks source form), against the
sample warehouse; any error fails the test."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from support.sample_warehouse import ROOT, SampleWarehouse

NOTEBOOKS = ROOT / "notebooks"


def _cells(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Databricks notebook source\n"), path
    return text.split("\n# COMMAND ----------\n")


def test_notebooks_are_databricks_source_notebooks() -> None:
    found = sorted(p.name for p in NOTEBOOKS.glob("*.py"))
    assert found == ["explore_lineage.py", "run_the_job.py"]
    for name in found:
        cells = _cells(NOTEBOOKS / name)
        assert len(cells) >= 5
        assert cells[0].splitlines()[1].startswith("# MAGIC %md")


def test_explore_lineage_notebook_runs(
    sample_warehouse: SampleWarehouse,
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = tmp_path / "explore.html"
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("LINEAGE_CONFIG", str(sample_warehouse.overlay))
    monkeypatch.setenv("LINEAGE_HTML_OUT", str(page))
    runpy.run_path(str(NOTEBOOKS / "explore_lineage.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "upstream of reports.daily_revenue" in out
    assert "upstream of reports.daily_revenue.revenue" in out
    assert "marts.fct_sales" in out and "raw.orders" in out
    assert "freshness of reports.daily_revenue: reports.daily_revenue:" in out
    assert "owner of reports.daily_revenue" in out and "\nalerts: " in out
    failed = (
        spark.read.format("delta")
        .load(str(sample_warehouse.base_path / "parsed_statements"))
        .where(F.col("status") == "failed")
        .collect()
    )
    assert failed and all(r.fingerprint in out for r in failed)
    assert "cytoscape" in page.read_text(encoding="utf-8")


@pytest.mark.usefixtures("session_confs_restored")
def test_run_the_job_notebook_runs(
    sample_warehouse: SampleWarehouse,
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def run_ids() -> set[str]:  # read anew: a Delta DataFrame keeps the version it was read at
        path = str(sample_warehouse.base_path / "lineage_runs")
        return {r.run_id for r in spark.read.format("delta").load(path).collect()}

    before = run_ids()
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("LINEAGE_CONFIG", str(sample_warehouse.overlay))
    monkeypatch.setenv("LINEAGE_FULL_REFRESH", "true")
    runpy.run_path(str(NOTEBOOKS / "run_the_job.py"), run_name="__main__")
    out = capsys.readouterr().out
    new = run_ids() - before
    found = re.search(r"extraction succeeded: run (\S+)", out)
    assert found, out
    if "nothing new in the input" in out:  # the sample warehouse already holds this input
        assert new == set()
    else:
        assert new == {found.group(1)}
        assert "rows read" in out
    assert "openlineage:" in out
