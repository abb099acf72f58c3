"""Writes, failed writes and reads per dataset from ``queries`` and the statements' parses;
``dataset_activity`` and ``dataset_usage`` from them."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ParseStatus
from lineage_udfs.spark.storage.facts import failed_execution
from lineage_udfs.spark.storage.tables import LineageTables

_NO_LINEAGE = (str(ParseStatus.FAILED), str(ParseStatus.TIMEOUT), str(ParseStatus.SKIPPED))


# --- events ------------------------------------------------------------------------------------


def activity_events(queries: DataFrame, parsed: DataFrame, as_of: Column) -> DataFrame:
    """One row per (log row, dataset or written column, kind): kind ``write`` (succeeded),
    ``failed_write`` or ``read``, with when, who, which statement and system.

    A write is dated by its end (else its start): when the data landed; a read by its start.
    Rows logged after ``as_of``, rows without a time and statements whose parse gave no
    lineage are left out."""
    p = parsed.select(
        "fingerprint",
        "statement_type",
        F.col("status").alias("parse_status"),
        F.array_except(
            F.coalesce("targets", F.array().cast("array<string>")),
            F.coalesce("intermediates", F.array().cast("array<string>")),
        ).alias("written"),
        F.array_except(
            F.coalesce("sources", F.array().cast("array<string>")),
            F.array_union(
                F.coalesce("intermediates", F.array().cast("array<string>")),
                F.coalesce("targets", F.array().cast("array<string>")),
            ),
        ).alias("read"),
        F.coalesce("column_edges", F.array()).alias("column_edges"),
    ).where(~F.col("parse_status").isin(*_NO_LINEAGE))
    q = queries.select(
        "fingerprint",
        F.coalesce("user_name", F.lit("")).alias("user_name"),
        "source_system",
        F.col("start_time"),
        F.coalesce("end_time", "start_time").alias("ended"),
        failed_execution(F.col("status")).alias("failed"),
    ).where(F.col("start_time").isNotNull() & (F.col("start_time") <= as_of))
    rows = q.join(p, "fingerprint")
    common = ["fingerprint", "user_name", "source_system", "statement_type"]
    write_kind = F.when(F.col("failed"), "failed_write").otherwise("write")
    tables_written = rows.select(
        F.explode("written").alias("dataset"),
        F.lit("").alias("column_name"),
        write_kind.alias("kind"),
        F.col("ended").alias("at"),
        *common,
    )
    columns_written = rows.select(
        "*",
        F.explode(
            F.array_distinct(
                F.transform(
                    F.filter(
                        "column_edges",
                        lambda e: (
                            e["target_column"].isNotNull()
                            & (e["target_column"] != "")
                            & F.array_contains(F.col("written"), e["target_table"])
                        ),
                    ),
                    lambda e: F.struct(
                        e["target_table"].alias("dataset"),
                        e["target_column"].alias("column_name"),
                    ),
                )
            )
        ).alias("wc"),
    ).select(
        F.col("wc.dataset").alias("dataset"),
        F.col("wc.column_name").alias("column_name"),
        write_kind.alias("kind"),
        F.col("ended").alias("at"),
        *common,
    )
    reads = rows.where(~F.col("failed")).select(
        F.explode("read").alias("dataset"),
        F.lit("").alias("column_name"),
        F.lit("read").alias("kind"),
        F.col("start_time").alias("at"),
        *common,
    )
    return tables_written.unionByName(columns_written).unionByName(reads)


def known_datasets(tables: LineageTables, events: DataFrame) -> DataFrame:
    """Every dataset the stage knows: written or read in the log, or a node of the graph."""
    seen = events.where(F.col("column_name") == "").select("dataset")
    if tables.exists("lineage_nodes"):
        seen = seen.unionByName(tables.read("lineage_nodes").select(F.col("node").alias("dataset")))
    return seen.distinct()


# --- dataset_activity, dataset_usage -----------------------------------------------------------


def dataset_activity(events: DataFrame, window_start: Column, as_of: Column) -> DataFrame:
    """``dataset_activity``: the latest write, failed write and read (all history up to
    as_of) and the counts over the window."""
    kind, window = F.col("kind"), F.col("at") >= window_start

    def latest(of_kind: str, *fields: str) -> Column:
        return F.max(F.when(kind == of_kind, F.struct("at", *fields)))

    def counted(of_kind: str) -> Column:
        return F.count(F.when((kind == of_kind) & window, 1))

    def distinct_users(of_kind: str) -> Column:
        return F.count_distinct(F.when((kind == of_kind) & window, F.col("user_name")))

    write_fields = ("fingerprint", "user_name", "source_system", "statement_type")
    return (
        events.groupBy("dataset", "column_name")
        .agg(
            latest("write", *write_fields).alias("w"),
            latest("failed_write", "fingerprint", "user_name").alias("f"),
            latest("read", "user_name").alias("r"),
            counted("write").alias("writes"),
            counted("failed_write").alias("failed_writes"),
            distinct_users("write").alias("writers"),
            counted("read").alias("reads"),
            distinct_users("read").alias("readers"),
        )
        .select(
            "dataset",
            "column_name",
            F.col("w.at").alias("last_write_at"),
            F.col("w.fingerprint").alias("last_write_fingerprint"),
            F.col("w.user_name").alias("last_write_user"),
            F.col("w.source_system").alias("last_write_source_system"),
            F.col("w.statement_type").alias("last_write_statement_type"),
            F.col("f.at").alias("last_failed_write_at"),
            F.col("f.fingerprint").alias("last_failed_write_fingerprint"),
            F.col("f.user_name").alias("last_failed_write_user"),
            "writes",
            "failed_writes",
            "writers",
            F.col("r.at").alias("last_read_at"),
            F.col("r.user_name").alias("last_read_user"),
            "reads",
            "readers",
            window_start.alias("window_start"),
            as_of.alias("as_of"),
        )
    )


def dataset_usage(events: DataFrame, window_start: Column, as_of: Column) -> DataFrame:
    """``dataset_usage``: per dataset, user and kind, the count over the window and the first
    and latest time (table level only)."""
    return (
        events.where(F.col("column_name") == "")
        .groupBy("dataset", "user_name", "kind")
        .agg(
            F.count(F.when(F.col("at") >= window_start, 1)).alias("count_in_window"),
            F.min("at").alias("first_at"),
            F.max("at").alias("last_at"),
        )
        .select("*", window_start.alias("window_start"), as_of.alias("as_of"))
    )
