"""``upstream_staleness``: the late or stopped datasets upstream of each dataset, with a
shortest path and the owner of each hop."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

LATE_STATUSES: tuple[str, ...] = ("late", "stopped")
"""Statuses an alert is raised for."""

# --- upstream_staleness ------------------------------------------------------------------------

_PATH_SCHEMA = StructType(
    [
        StructField("dataset", StringType()),
        StructField("upstream", StringType()),
        StructField("node", StringType()),
        StructField("pos", StringType()),
    ]
)


def upstream_staleness(
    tables: LineageTables,
    expectations: DataFrame,
    owners: DataFrame,
    as_of: Column,
    max_per_dataset: int,
    max_depth: int,
) -> DataFrame:
    """``upstream_staleness``: for every dataset, each late or stopped dataset upstream of it
    (``table_closure``), the shortest path from it (ties: the smallest next name) and each
    hop's owner.

    A hop's predecessor on the path is found in one join: the smallest ``m`` with an edge
    ``m -> n`` and ``distance(upstream, m) + 1 = distance(upstream, n)``. The predecessors of
    the late datasets' descendants are brought to the driver (their number is bounded by
    ``graph.max_closure_per_node`` per late dataset) and the paths followed back there."""
    spark = tables.spark
    late = expectations.where(
        (F.col("fingerprint") == "") & F.col("status").isin(*LATE_STATUSES)
    ).select(
        F.col("dataset").alias("upstream"),
        F.col("status").alias("upstream_status"),
        F.col("last_write_at").alias("upstream_last_write_at"),
    )
    empty = spark.createDataFrame([], tables_schema("upstream_staleness"))
    if not (tables.exists("table_closure") and tables.exists("table_lineage")):
        return empty
    closure = (
        tables.read("table_closure")
        .where((F.col("ancestor") != F.col("descendant")) & (F.col("min_distance") <= max_depth))
        .select(F.col("ancestor").alias("upstream"), F.col("descendant").alias("dataset"),
                F.col("min_distance").alias("distance"))
        .join(late.select("upstream"), "upstream", "left_semi")
    )  # fmt: skip
    nearest = Window.partitionBy("dataset").orderBy("distance", "upstream")
    pairs = (
        closure.withColumn("_r", F.row_number().over(nearest))
        .where(F.col("_r") <= max_per_dataset)
        .drop("_r")
    )
    edges = (
        tables.read("table_lineage")
        .where(F.col("source_table") != F.col("target_table"))
        .select(F.col("source_table").alias("m"), F.col("target_table").alias("n"))
        .distinct()
    )
    reach = closure.select("upstream", F.col("dataset").alias("node"), "distance")
    at_m = reach.select("upstream", F.col("node").alias("m"), F.col("distance").alias("dm"))
    via_node = (
        reach.join(edges, reach["node"] == edges["n"])
        .join(at_m, ["upstream", "m"], "left")
        .where(
            ((F.col("distance") == 1) & (F.col("m") == F.col("upstream")))
            | (F.col("dm") == F.col("distance") - 1)
        )
        .groupBy("upstream", "node")
        .agg(F.min("m").alias("previous"))
    )
    previous = {(r["upstream"], r["node"]): r["previous"] for r in via_node.collect()}
    wanted = pairs.select("upstream", "dataset").collect()
    hops: list[tuple[str, str, str, str]] = []
    for row in wanted:
        upstream, node = row["upstream"], row["dataset"]
        path = [node]
        while node != upstream and len(path) <= max_depth + 1:
            found = previous.get((upstream, node))
            if found is None:
                break
            node = found
            path.append(node)
        for pos, hop in enumerate(reversed(path)):
            hops.append((row["dataset"], upstream, hop, f"{pos:03d}"))
    hop_rows = spark.createDataFrame(hops, _PATH_SCHEMA)
    owned = hop_rows.join(
        owners.select(F.col("dataset").alias("node"), "owner", "contact", "rule"), "node", "left"
    )
    paths = owned.groupBy("dataset", "upstream").agg(
        F.sort_array(F.collect_list(F.struct("pos", "node", "owner", "contact", "rule"))).alias(
            "_hops"
        )
    )
    return (
        pairs.join(late, "upstream")
        .join(paths, ["dataset", "upstream"], "left")
        .select(
            "dataset",
            "upstream",
            "upstream_status",
            "upstream_last_write_at",
            F.col("distance").cast("int").alias("distance"),
            F.transform("_hops", lambda h: h["node"]).alias("path"),
            F.transform(
                "_hops",
                lambda h: F.struct(
                    h["node"].alias("node"),
                    h["owner"].alias("owner"),
                    h["contact"].alias("contact"),
                    h["rule"].alias("rule"),
                ),
            ).alias("hops"),
            as_of.alias("as_of"),
        )
    )


def tables_schema(table: str) -> StructType:
    """The declared schema of ``table``."""
    return TABLES[table].schema
