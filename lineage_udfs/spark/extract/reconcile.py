"""Native lineage reconciliation: the parser's edges against the engine's own record of them.

For every source whose preset export records lineage (Snowflake ``ACCESS_HISTORY``, BigQuery
``referenced_tables`` / ``destination_table``, Databricks ``system.access`` lineage tables, Trino
``ioMetadata``), each query the export covers gets its table edges
compared: ``agree`` (both), ``parser_only``, ``warehouse_only``; column edges likewise for the
queries whose export lists column lineage. All three kinds are written to the
``lineage_reconciliation`` Delta table (a source's rows are replaced on each run).
"""

from __future__ import annotations

import logging

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.settings import SourceSettings
from lineage_udfs.sources.presets import has_native_lineage, native_lineage
from lineage_udfs.spark.extract.readers import read_raw
from lineage_udfs.spark.storage.schemas import RECONCILIATION
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Overwrite

logger = logging.getLogger(__name__)

RECONCILIATION_TABLE = RECONCILIATION.name
_TABLE_KEYS = ["query_id", "source_table", "target_table"]
_COLUMN_KEYS = ["query_id", "source_table", "source_column", "target_table", "target_column"]


def reconcile_native_lineage(
    spark: SparkSession, sources: list[SourceSettings], tables: LineageTables
) -> dict[str, dict[str, int]]:
    """Write the reconciliation of every enabled source with native lineage.

    Returns:
        ``{"<source> <level>": {status: count}}`` for the log and the caller.
    """
    counts: dict[str, dict[str, int]] = {}
    for source in sources:
        if not source.enabled or not has_native_lineage(source):
            continue
        native = native_lineage(spark, source, read_raw(spark, source))
        if native is None:
            continue
        edges, scope = native
        result = _reconcile(source.name, edges, scope, tables).cache()
        try:
            _write(tables, source.name, result)
            for row in result.groupBy("level", "status").count().collect():
                key = f"{source.name} {row['level']}"
                counts.setdefault(key, {})[row["status"]] = int(row["count"])
        finally:
            result.unpersist()
    for key, by_status in sorted(counts.items()):
        logger.info("native lineage reconciliation %s: %s", key, dict(sorted(by_status.items())))
    return counts


def _reconcile(name: str, native: DataFrame, scope: DataFrame, tables: LineageTables) -> DataFrame:
    queries = tables.read("queries").join(scope, "query_id", "left_semi")
    queries = queries.select("query_id", "fingerprint")

    def lower(frame: DataFrame, columns: list[str]) -> DataFrame:
        return frame.select(
            *[F.lower(F.col(c)).alias(c) if c != "query_id" else F.col(c) for c in columns]
        ).distinct()

    parser_tables = lower(
        queries.join(tables.read("table_lineage"), "fingerprint").select(*_TABLE_KEYS), _TABLE_KEYS
    )
    native_tables = lower(native.where(F.col("source_column").isNull()), _TABLE_KEYS)
    column_scope = native.where(F.col("source_column").isNotNull()).select("query_id").distinct()
    parser_columns = lower(
        queries.join(column_scope, "query_id", "left_semi")
        .join(tables.read("column_lineage"), "fingerprint")
        .select(*_COLUMN_KEYS),
        _COLUMN_KEYS,
    )
    native_columns = lower(native.where(F.col("source_column").isNotNull()), _COLUMN_KEYS)
    return _compare(name, "table", parser_tables, native_tables, _TABLE_KEYS).unionByName(
        _compare(name, "column", parser_columns, native_columns, _COLUMN_KEYS)
    )


def _compare(
    name: str, level: str, parser: DataFrame, native: DataFrame, keys: list[str]
) -> DataFrame:
    joined = parser.withColumn("_p", F.lit(True)).join(
        native.withColumn("_n", F.lit(True)), keys, "full_outer"
    )
    status = (
        F.when(F.col("_p") & F.col("_n"), F.lit("agree"))
        .when(F.col("_p"), F.lit("parser_only"))
        .otherwise(F.lit("warehouse_only"))
    )
    missing = [F.lit(None).cast(StringType()).alias(c) for c in _COLUMN_KEYS if c not in keys]
    return joined.select(
        F.lit(name).alias("source_name"),
        F.lit(level).alias("level"),
        *[F.col(k) for k in keys],
        *missing,
        status.alias("status"),
    ).select(*RECONCILIATION.columns)


def _write(tables: LineageTables, name: str, rows: DataFrame) -> None:
    """Replace the source's rows in one Delta commit."""
    literal = name.replace("\\", "\\\\").replace("'", "\\'")
    tables.ensure(RECONCILIATION_TABLE)
    tables.write(RECONCILIATION_TABLE, Overwrite(rows, replace_where=f"source_name = '{literal}'"))
