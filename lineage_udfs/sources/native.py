"""The engines' own lineage from their query-history exports (Snowflake ``ACCESS_HISTORY``,
BigQuery ``referenced_tables`` / ``destination_table``, Databricks ``system.access`` lineage,
Trino ``ioMetadata``), in the ``NATIVE_COLUMNS`` shape the reconciliation compares with the
parser's edges (``lineage_udfs.spark.extract.reconcile``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.settings import SourceSettings
from lineage_udfs.sources.columns import BQ_TABLE, blank_null, bq_name, quoted

NATIVE_COLUMNS: tuple[str, ...] = (
    "query_id",
    "source_table",
    "source_column",
    "target_table",
    "target_column",
)
"""Columns of a preset's native lineage (column names null for a table edge)."""


_SF_OBJECTS = "array<struct<objectName:string,objectDomain:string>>"
_SF_MODIFIED = (
    "array<struct<objectName:string,objectDomain:string,columns:array<struct<columnName:string,"
    "directSources:array<struct<columnName:string,objectName:string,objectDomain:string>>>>>>"
)
_SF_TABLE_DOMAINS = ("TABLE", "VIEW", "MATERIALIZED VIEW", "EXTERNAL TABLE", "DYNAMIC TABLE")


def snowflake_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame] | None:
    """ACCOUNT_USAGE.ACCESS_HISTORY joined to the export by QUERY_ID (its
    ``DIRECT_OBJECTS_ACCESSED`` and ``OBJECTS_MODIFIED`` columns), when the export has them:
    every table read x every table written, and ``columns[].directSources`` for column edges.
    A written table read by the same query (MERGE, UPDATE) is not its own source, as in the
    parser's default (``update_target_as_source=false``). Queries that modified nothing are
    outside the comparison."""
    if "OBJECTS_MODIFIED" not in raw.columns or "DIRECT_OBJECTS_ACCESSED" not in raw.columns:
        return None
    ok = F.lower(F.coalesce(quoted("EXECUTION_STATUS"), F.lit("success"))) == "success"
    access = (
        raw.where(ok)
        .select(
            quoted("QUERY_ID").alias("query_id"),
            F.from_json(quoted("DIRECT_OBJECTS_ACCESSED"), _SF_OBJECTS).alias("read"),
            F.from_json(quoted("OBJECTS_MODIFIED"), _SF_MODIFIED).alias("modified"),
        )
        .where(F.size("modified") > 0)
    )

    def table_like(domain: Column) -> Column:
        return F.upper(domain).isin(*_SF_TABLE_DOMAINS)

    written = access.select("query_id", "read", F.explode("modified").alias("m")).where(
        table_like(F.col("m.objectDomain"))
    )
    tables = (
        written.select("query_id", "m", F.explode("read").alias("r"))
        .where(table_like(F.col("r.objectDomain")))
        .select(
            "query_id",
            F.lower(F.col("r.objectName")).alias("source_table"),
            F.lower(F.col("m.objectName")).alias("target_table"),
        )
        .where(F.col("source_table") != F.col("target_table"))
    )
    columns = (
        written.select("query_id", "m", F.explode("m.columns").alias("c"))
        .select("query_id", "m", "c", F.explode("c.directSources").alias("s"))
        .where(table_like(F.col("s.objectDomain")))
        .select(
            "query_id",
            F.lower(F.col("s.objectName")).alias("source_table"),
            F.lower(F.col("s.columnName")).alias("source_column"),
            F.lower(F.col("m.objectName")).alias("target_table"),
            F.lower(F.col("c.columnName")).alias("target_column"),
        )
        .where(F.col("source_table") != F.col("target_table"))
    )
    return native_edges(tables).unionByName(columns), access.select("query_id").distinct()


def bigquery_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame]:
    """referenced_tables x destination_table of each finished, error-free job, child jobs under
    their script; anonymous results and script temporaries (datasets named ``_…``) left out."""
    done = raw.where(
        (F.upper(quoted("state")) == "DONE")
        & blank_null(F.get_json_object(quoted("error_result"), "$.reason")).isNull()
    )
    parent = F.coalesce(blank_null(quoted("parent_job_id")), quoted("job_id"))
    jobs = done.select(
        parent.alias("query_id"),
        F.from_json(quoted("referenced_tables"), f"array<{BQ_TABLE}>").alias("refs"),
        F.from_json(quoted("destination_table"), BQ_TABLE).alias("dest"),
    )
    edges = jobs.select("query_id", F.explode_outer("refs").alias("ref"), "dest").where(
        F.col("ref").isNotNull()
        & F.col("dest").isNotNull()
        & ~F.col("ref.dataset_id").startswith("_")
        & ~F.col("dest.dataset_id").startswith("_")
    )
    return native_edges(
        edges.select(
            "query_id",
            bq_name(F.col("ref")).alias("source_table"),
            bq_name(F.col("dest")).alias("target_table"),
        )
    ), jobs.select("query_id").distinct()


def databricks_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame] | None:
    """system.access.table_lineage / column_lineage exports (``extra_paths``, read in the
    source's own format), matched to the history by ``statement_id``. Every FINISHED statement
    of the history is compared, so a statement the lineage tables left out shows its parser
    edges as parser_only. Rows without a source or a target table (a path, a notebook) are left
    out."""
    table_path = source.extra_paths.get("table_lineage")
    if table_path is None:
        return None

    def read(path: str) -> DataFrame:
        reader = spark.read.format("json" if source.format == "jsonl" else source.format)
        if source.format == "csv":
            reader = reader.option("header", "true")
        return reader.load(path)

    def named(frame: DataFrame, *columns: tuple[str, str]) -> DataFrame:
        return frame.where(
            F.col("statement_id").isNotNull()
            & F.col("source_table_full_name").isNotNull()
            & F.col("target_table_full_name").isNotNull()
        ).select(
            F.col("statement_id").alias("query_id"),
            F.lower(F.col("source_table_full_name")).alias("source_table"),
            *[F.lower(F.col(c)).alias(a) for c, a in columns],
            F.lower(F.col("target_table_full_name")).alias("target_table"),
        )

    edges = native_edges(named(read(table_path)).distinct())
    column_path = source.extra_paths.get("column_lineage")
    if column_path is not None:
        columns = named(
            read(column_path),
            ("source_column_name", "source_column"),
            ("target_column_name", "target_column"),
        )
        edges = edges.unionByName(columns.distinct(), allowMissingColumns=False)
    finished = raw.where(F.upper(quoted("execution_status")) == "FINISHED")
    return edges, finished.select(quoted("statement_id").alias("query_id")).distinct()


_TRINO_IO = (
    "struct<inputs:array<struct<catalogName:string,schema:string,table:string>>,"
    "output:struct<catalogName:string,schema:string,table:string,"
    "columns:array<struct<column:string,sourceColumns:array<struct<catalog:string,"
    "schema:string,table:string,columnName:string>>>>>>"
)


def trino_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame]:
    """ioMetadata: every input x the output table; output.columns[].sourceColumns per column."""
    finished = raw.where(
        F.upper(F.get_json_object(quoted("metadata"), "$.queryState")) == "FINISHED"
    )
    io = finished.select(
        F.get_json_object(quoted("metadata"), "$.queryId").alias("query_id"),
        F.from_json(quoted("ioMetadata"), _TRINO_IO).alias("io"),
    )
    out = F.col("io.output")
    out_name = F.lower(F.concat_ws(".", out.catalogName, out.schema, out.table))
    tables = io.where(out.isNotNull()).select(
        "query_id", F.explode("io.inputs").alias("i"), out_name.alias("target_table")
    )
    tables = tables.select(
        "query_id",
        F.lower(
            F.concat_ws(".", F.col("i.catalogName"), F.col("i.schema"), F.col("i.table"))
        ).alias("source_table"),
        "target_table",
    )
    columns = (
        io.where(out.isNotNull())
        .select("query_id", out_name.alias("target_table"), F.explode(out.columns).alias("c"))
        .select(
            "query_id",
            "target_table",
            F.col("c.column").alias("target_column"),
            F.explode("c.sourceColumns").alias("s"),
        )
        .select(
            "query_id",
            F.lower(
                F.concat_ws(".", F.col("s.catalog"), F.col("s.schema"), F.col("s.table"))
            ).alias("source_table"),
            F.lower(F.col("s.columnName")).alias("source_column"),
            "target_table",
            F.lower(F.col("target_column")).alias("target_column"),
        )
    )
    return native_edges(tables).unionByName(columns), io.select("query_id").distinct()


def native_edges(tables: DataFrame) -> DataFrame:
    """Table edges in the NATIVE_COLUMNS shape."""
    return tables.select(
        "query_id",
        "source_table",
        F.lit(None).cast(StringType()).alias("source_column"),
        "target_table",
        F.lit(None).cast(StringType()).alias("target_column"),
    )
