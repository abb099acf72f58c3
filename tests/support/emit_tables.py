"""The lineage tables of the emission tests (tests/support/emit_rows.py written like the extract
job writes them) and the job settings that emit them over http to the test collector."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from lineage_udfs.settings import JobSettings, SinkSettings
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert
from support.collector import Collector
from support.emit_rows import EDGES, PARSED, QUERIES


def upsert(
    spark: SparkSession, tables: LineageTables, name: str, rows: list[dict[str, Any]]
) -> None:
    """Write like the extract job: one MERGE per table (so the change data feed records it)."""
    schema = TABLES[name].schema
    data = [tuple(r.get(f) for f in schema.fieldNames()) for r in rows]
    tables.write(name, Upsert(spark.createDataFrame(data, schema)))


def stored_tables(spark: SparkSession, base: Path) -> LineageTables:
    """``queries``, ``parsed_statements`` (parser_version v1) and ``column_lineage`` of the
    emission rows, under ``base``."""
    tables = LineageTables(spark, SinkSettings(base_path=str(base)))
    for name in ("queries", "parsed_statements", "column_lineage"):
        tables.ensure(name)
    upsert(spark, tables, "queries", QUERIES)
    upsert(spark, tables, "parsed_statements", [{**p, "parser_version": "v1"} for p in PARSED])
    upsert(spark, tables, "column_lineage", EDGES)
    return tables


def http_settings(
    tables: LineageTables,
    collector: Collector,
    spool: Path,
    *,
    scope: str = "incremental",
    emit_mode: str = "per_run",
    spool_enabled: bool = True,
) -> JobSettings:
    """Emission of ``tables`` to ``collector`` (no retries), spooling under ``spool``."""
    return JobSettings.model_validate(
        {
            "sink": tables.sink.model_dump(),
            "openlineage": {
                "enabled": True,
                "scope": scope,
                "emit_mode": emit_mode,
                "job_namespace": "lw-test",
                "transport": {"type": "http", "url": collector.url, "retries": 0, "timeout": 2},
                "spool": {"enabled": spool_enabled, "path": str(spool)},
            },
        }
    )
