"""Column tag exports of the sources (``tags.sources``): each preset maps an export to
``(table_name, column_name, tag, rule, value)`` rows (docs/tags.md, "Declaring tags").

* ``snowflake_tag_references``: ``SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES``, the rows with
  ``DOMAIN = 'COLUMN'`` and no ``OBJECT_DELETED``;
* ``unity_column_tags``: Unity Catalog ``information_schema.column_tags``;
* ``column_tags``: any export with ``table_name``, ``column_name``, ``tag`` (and ``tag_value``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.settings import TagSourceSettings


def _lower_col(raw: DataFrame, name: str) -> Column:
    by_lower = {c.lower(): c for c in raw.columns}
    if name not in by_lower:
        raise InputError(f"tag export lacks column {name!r}; has {sorted(raw.columns)}")
    return F.trim(F.col(f"`{by_lower[name]}`").cast("string"))


def _read_export(spark: SparkSession, source: TagSourceSettings) -> DataFrame:
    reader = spark.read
    try:
        if source.format == "csv":
            return reader.options(header="true", multiLine="true", escape='"').csv(source.path)
        if source.format == "jsonl":
            return reader.json(source.path)
        return reader.format(source.format).load(source.path)
    except Exception as exc:
        raise InputError(
            f"cannot read the tag export {source.path} ({source.preset}): {one_line(exc)}"
        ) from exc


def tag_export(spark: SparkSession, source: TagSourceSettings) -> DataFrame:
    """``(table_name, column_name, tag, rule, value)``: the column tags of one export, names
    lower-cased, the table named by its last ``source.name_parts`` parts.

    Raises:
        InputError: the export cannot be read or lacks a column its preset needs (one line).
    """
    raw = _read_export(spark, source)
    if source.preset == "snowflake_tag_references":
        parts = ["object_database", "object_schema", "object_name"]
        column, tag, value = "column_name", "tag_name", "tag_value"
        keep = F.upper(_lower_col(raw, "domain")) == "COLUMN"
        if "object_deleted" in {c.lower() for c in raw.columns}:
            keep = keep & F.coalesce(_lower_col(raw, "object_deleted"), F.lit("")).isin("")
    elif source.preset == "unity_column_tags":
        parts = ["catalog_name", "schema_name", "table_name"]
        column, tag, value = "column_name", "tag_name", "tag_value"
        keep = F.lit(True)
    else:
        parts, column, tag, value = ["table_name"], "column_name", "tag", "tag_value"
        keep = F.lit(True)
    has_value = value in {c.lower() for c in raw.columns}
    names = [_lower_col(raw, p) for p in parts[-source.name_parts :]]
    rows = raw.where(keep).select(
        F.lower(F.concat_ws(".", *names)).alias("table_name"),
        F.lower(_lower_col(raw, column)).alias("column_name"),
        F.lower(_lower_col(raw, tag)).alias("tag"),
        F.lit(f"source {source.preset}").alias("rule"),
        (_lower_col(raw, value) if has_value else F.lit(None).cast("string")).alias("value"),
    )
    return rows.where(
        (F.col("table_name") != "") & (F.col("column_name") != "") & (F.col("tag") != "")
    )
