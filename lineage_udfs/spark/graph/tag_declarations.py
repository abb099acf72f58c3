"""Tag declarations: the tags file, the source exports of ``tags.sources`` and the name rules
(``core.tags``) as one declared row per (column, tag), the strongest declaration's
(``core.tags.RULE_ORDER``), over the columns the column lineage names."""

from __future__ import annotations

import fnmatch

import yaml
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.core.tags import RULE_ORDER, Declaration, parse_tags_file
from lineage_udfs.settings import TagSourceSettings
from lineage_udfs.sources.tags import tag_export
from lineage_udfs.spark.graph.frames import SEP


def file_declarations(spark: SparkSession, path: str | None) -> list[Declaration]:
    """The declarations of the tags file at ``path`` (read through Spark: any file system)."""
    if path is None:
        return []
    try:
        rows = spark.read.text(path, wholetext=True).collect()
    except Exception as exc:
        raise InputError(f"cannot read the tags file {path}: {one_line(exc)}") from exc
    if not rows:
        raise InputError(f"cannot read the tags file {path}: no such file")
    try:
        data = yaml.safe_load(rows[0][0])
    except yaml.YAMLError as exc:
        raise InputError(f"tags file {path}: not YAML or JSON: {one_line(exc)}") from exc
    return parse_tags_file(data, f"tags file {path}")


def source_declarations(spark: SparkSession, source: TagSourceSettings) -> DataFrame:
    """The (ref, tag, rank, rule, value) rows of one tag export (``sources.tags``)."""
    rows = tag_export(spark, source)
    return rows.select(
        F.concat_ws(SEP, "table_name", "column_name").alias("ref"),
        "tag",
        F.lit(RULE_ORDER.index("source")).alias("rank"),
        "rule",
        "value",
    )


def declared_rows(
    spark: SparkSession, refs: DataFrame, declarations: list[Declaration], exports: list[DataFrame]
) -> DataFrame:
    """One ``(ref, tag, rule, value)`` row per declared (column, tag): the strongest
    declaration's (``core.tags.precedence``). ``refs``: ``(ref)`` the columns patterns match."""
    schema = "ref string, tag string, rank int, rule string, value string"
    explicit = spark.createDataFrame(
        [
            (_sep_ref(d.column), d.tag, RULE_ORDER.index(d.kind), d.rule, d.value)
            for d in declarations
            if d.column is not None
        ],
        schema,
    )
    globbed = [d for d in declarations if d.column is None]
    found = [explicit, *exports]
    if globbed:
        patterns = spark.createDataFrame(
            [
                (
                    "^" + fnmatch.translate(_glob(d)),
                    d.kind == "name rule",
                    d.tag,
                    RULE_ORDER.index(d.kind),
                    d.rule,
                    d.value,
                )
                for d in globbed
                if d.pattern is not None
            ],
            "regex string, on_column boolean, tag string, rank int, rule string, value string",
        )
        name = F.split(F.col("ref"), SEP)
        dotted = F.concat_ws(".", name.getItem(0), F.get(name, 1))
        subject = F.when(F.col("on_column"), F.get(name, 1)).otherwise(dotted)
        found.append(
            refs.crossJoin(F.broadcast(patterns))
            .where(F.regexp_like(subject, F.col("regex")))
            .select("ref", "tag", "rank", "rule", "value")
        )
    rows = found[0]
    for more in found[1:]:
        rows = rows.unionByName(more)
    best = F.min(F.struct("rank", "rule", F.coalesce("value", F.lit("")).alias("v"), "value"))
    return (
        rows.groupBy("ref", "tag")
        .agg(best.alias("b"))
        .select("ref", "tag", F.col("b.rule").alias("rule"), F.col("b.value").alias("value"))
    )


def _glob(d: Declaration) -> str:
    """The glob of a pattern declaration (a name rule's is matched on the column name)."""
    assert d.pattern is not None
    return d.pattern


def _sep_ref(dotted: str) -> str:
    table, _, column = dotted.rpartition(".")
    return f"{table}{SEP}{column}"


def column_refs(column_lineage: DataFrame) -> DataFrame:
    """``(ref)``: every column the column lineage names, at either end of any edge."""
    ends = [("source_table", "source_column"), ("target_table", "target_column")]
    frames = [
        column_lineage.where(F.col(t).isNotNull() & F.col(c).isNotNull()).select(
            F.concat_ws(SEP, t, c).alias("ref")
        )
        for t, c in ends
    ]
    return frames[0].union(frames[1]).distinct()
