"""The lineage rows derived from the two fact tables, ``queries`` and ``parsed_statements``.

Idempotency scheme: lineage rows are *derived* from the facts (``queries``: one row per log
row, keyed by query_id; ``parsed_statements``: one row per fingerprint, with its edges). For the
keys a batch touches, the edge tables are recomputed from those facts and reconciled with one
MERGE per table (``extract.merges``). Counters are never incremented (``occurrences =
count(DISTINCT query_id)``) and times come from the log (``start_time``), never the wall clock,
so re-running the same input changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from lineage_udfs.spark.storage.schemas import TABLES

DEFINITION_EDGE_KINDS: tuple[str, ...] = ("view", "procedure")
"""Edge kinds whose lineage is replaced by the newest definition of the object."""


# --- derivations from the facts ----------------------------------------------------------------


def fingerprint_stats(queries: DataFrame) -> DataFrame:
    """Per fingerprint: first_seen, last_seen (log start_time) and distinct query_id count."""
    return queries.groupBy("fingerprint").agg(
        F.min("start_time").alias("first_seen"),
        F.max("start_time").alias("last_seen"),
        F.countDistinct("query_id").cast("long").alias("occurrences"),
    )


def annotate_edge_kind(queries: DataFrame, parsed: DataFrame) -> DataFrame:
    """Add edge_kind and object_name (the lineage "owner") to query rows.

    A view or procedure definition row, or a logged CREATE VIEW, is a definition (edge_kind
    ``view`` / ``procedure``) of the object it creates; anything else is ``query`` lineage.
    The definition's object name is the statement's single target when it has one (canonical),
    else the row's object_name, lower-cased.
    """
    info = parsed.select(
        "fingerprint",
        "statement_type",
        F.when(F.size("targets") == 1, F.element_at("targets", 1)).alias("_target"),
    )
    kind = (
        F.when(F.col("object_kind") == "view", F.lit("view"))
        .when(F.col("object_kind") == "procedure", F.lit("procedure"))
        .when(F.col("statement_type") == "CREATE_VIEW", F.lit("view"))
        .otherwise(F.lit("query"))
    )
    return (
        queries.join(info, "fingerprint", "inner")
        .withColumn("edge_kind", kind)
        .withColumn(
            "object_name",
            F.when(
                F.col("edge_kind") == "procedure",
                F.coalesce(F.lower("object_name"), F.col("_target")),
            )
            .when(
                F.col("edge_kind") == "view",
                F.coalesce(
                    F.when(F.col("statement_type") == "CREATE_VIEW", F.col("_target")),
                    F.lower("object_name"),
                    F.col("_target"),
                ),
            )
            .otherwise(F.lit(None).cast("string")),
        )
        .drop("_target", "statement_type")
    )


def current_lineage_rows(annotated: DataFrame) -> DataFrame:
    """Rows whose lineage counts: every query row, and for each defined object only the rows of
    its newest definition (latest start_time, then query_id)."""
    newest = Window.partitionBy("edge_kind", "object_name").orderBy(
        F.col("start_time").desc_nulls_last(), F.col("query_id").desc()
    )
    definitions = (
        annotated.where(F.col("edge_kind").isin(*DEFINITION_EDGE_KINDS))
        .withColumn("_current", F.first("fingerprint").over(newest))
        .where(F.col("fingerprint") == F.col("_current"))
        .drop("_current")
    )
    return annotated.where(~F.col("edge_kind").isin(*DEFINITION_EDGE_KINDS)).unionByName(
        definitions
    )


def lineage_edges(rows: DataFrame, parsed: DataFrame, *, column_level: bool) -> DataFrame:
    """Edge rows (TABLE_LINEAGE / COLUMN_LINEAGE columns), unique on the natural key.

    ``rows`` are ``current_lineage_rows``; stats are computed over the rows of each (edge kind,
    object, fingerprint) group, so ``occurrences`` is a count of distinct query ids.
    """
    grouped = rows.groupBy("fingerprint", "edge_kind", "object_name").agg(
        F.max("source_system").alias("source_system"),
        F.min("start_time").alias("first_seen"),
        F.max("start_time").alias("last_seen"),
        F.countDistinct("query_id").cast("long").alias("occurrences"),
    )
    array_col = "column_edges" if column_level else "table_edges"
    edges = parsed.select("fingerprint", F.explode(array_col).alias("e")).select(
        "fingerprint", "e.*"
    )
    table = "column_lineage" if column_level else "table_lineage"
    key = list(TABLES[table].keys)
    joined = grouped.join(edges, "fingerprint", "inner").where(
        F.col("source_table").isNotNull() & F.col("target_table").isNotNull()
    )
    # A fingerprint shared by two objects (identical definitions) must not duplicate a key.
    return joined.groupBy(*key).agg(
        F.max("object_name").alias("object_name"),
        F.max("source_system").alias("source_system"),
        F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"),
        F.max("occurrences").alias("occurrences"),
    )


def stale_rows(existing_in_scope: DataFrame, desired: DataFrame, table: str) -> DataFrame:
    """Existing rows in scope whose key is no longer desired (null-safe key comparison)."""
    key = list(TABLES[table].keys)
    wanted = desired.select(*[F.col(k).alias(f"_d_{k}") for k in key])
    condition = reduce(
        lambda a, b: a & b,
        [existing_in_scope[k].eqNullSafe(wanted[f"_d_{k}"]) for k in key],
    )
    return existing_in_scope.join(wanted, condition, "left_anti")


def dict_to_map(values: Mapping[str, Any]) -> Column:
    """A literal map column from a Python dict (sorted keys, for stable output)."""
    items = sorted(values.items())
    if not items:
        return F.create_map().cast("map<string,bigint>")
    return F.create_map(*[x for k, v in items for x in (F.lit(k), F.lit(v))])
