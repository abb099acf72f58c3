"""Small runs: a rerun with nothing new adds no Delta version to any table, and each stage of
a run commits at most once per table (extract → graph → emit in one session, real Delta)."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.pipeline import run_extract
from lineage_udfs.spark.schemas import TABLES

ROOT = Path(__file__).resolve().parents[2]


def _settings(tmp_path: Path) -> JobSettings:
    settings = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    sources = [s.model_copy(update={"path": str(ROOT / s.path)}) for s in settings.sources]
    sink = settings.sink.model_copy(update={"base_path": str(tmp_path / "lineage")})
    ol = settings.openlineage
    openlineage = ol.model_copy(
        update={
            "transport": ol.transport.model_copy(  # type: ignore[union-attr]
                update={"log_file_path": str(tmp_path / "events.jsonl")}
            ),
            "spool": ol.spool.model_copy(update={"path": str(tmp_path / "spool")}),
        }
    )
    return settings.model_copy(
        update={"sources": sources, "sink": sink, "openlineage": openlineage}
    )


def _versions(tables: LineageTables) -> dict[str, int]:
    return {name: tables.latest_version(name) for name in TABLES}


def test_rerun_with_nothing_new_adds_no_delta_version(spark: SparkSession, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert settings.graph.enabled and settings.openlineage.enabled
    tables = LineageTables(spark, settings.sink)
    before_first = dict.fromkeys(TABLES, -1)

    first = run_extract(spark, settings)
    assert first.run.changed and first.emit is not None and first.emit.counts.emitted > 0
    after_first = _versions(tables)
    events = (tmp_path / "events.jsonl").read_text()
    # every table exists; setup (creation, properties) aside, one commit per table at most
    assert all(v >= 0 for v in after_first.values())
    history = {
        name: [
            r["operation"]
            for r in tables.delta_table(name).history().collect()
            if r["operation"] not in ("CREATE TABLE", "SET TBLPROPERTIES", "OPTIMIZE")
        ]
        for name in TABLES
        if after_first[name] > before_first[name]
    }
    assert all(len(ops) <= 1 for ops in history.values()), history

    second = run_extract(spark, settings)
    assert second.run.status == "succeeded" and not second.run.changed
    assert second.run.parsed_statements == 0
    assert second.graph is not None and second.graph.components_recomputed == 0
    assert second.emit is not None and second.emit.counts.rows == 0
    assert _versions(tables) == after_first
    assert (tmp_path / "events.jsonl").read_text() == events
