"""The graph's GraphFrames and DataFrame side: edges of the lineage tables, dense vertex ids,
connected and strongly connected components, shortest paths between two tables, component
signatures and the ``lineage_nodes`` rows.

The only modules that know the vertex/edge column names ``id``/``src``/``dst`` are this one
and ``graph.arrays``.
"""

from __future__ import annotations

from graphframes import GraphFrame
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.spark.graph.options import GraphOptions, cut
from lineage_udfs.spark.runtime.checkpoints import reliable_checkpoints
from lineage_udfs.spark.runtime.session import GRAPHFRAMES, LaunchError, missing_libraries

DIRECT = "DIRECT"
GRAPHFRAMES_PACKAGE = GRAPHFRAMES.coordinates
"""The GraphFrames jar the stage needs (the same version as the graphframes-py package)."""


def _require(df: DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(
            f"{what} needs columns {list(columns)}; missing {missing}; has {df.columns}"
        )


# --- table graph ---------------------------------------------------------------------------


def table_edges_of(table_lineage: DataFrame) -> DataFrame:
    """Distinct directed table edges ``(src, dst)`` with self-loops kept (they mark cycles)."""
    _require(table_lineage, ("source_table", "target_table"), "table_lineage")
    return (
        table_lineage.where(F.col("source_table").isNotNull() & F.col("target_table").isNotNull())
        .select(F.col("source_table").alias("src"), F.col("target_table").alias("dst"))
        .distinct()
    )


def require_graphframes(spark: SparkSession) -> None:
    """Fail with one clear line when the GraphFrames jar is not on the driver's classpath.

    Raises:
        LaunchError: naming the coordinates and the settings that put them on the classpath.
    """
    if missing_libraries(spark, [GRAPHFRAMES]):
        raise LaunchError(
            f"the graph stage needs the GraphFrames jar {GRAPHFRAMES_PACKAGE}: list it in "
            "spark.jars.packages (conf/spark-defaults.conf for spark-submit, spark.packages in "
            "the settings, a cluster library on Databricks); if Maven Central does not serve it, "
            "add a repository that does (spark.repositories, LINEAGE_MAVEN_REPOSITORIES or "
            "spark-submit --repositories)"
        )


NAMES_PER_TASK = 500_000
"""Name rows per task when numbering the nodes (``dense_ids``)."""


def dense_ids(names: DataFrame) -> tuple[DataFrame, int]:
    """``(name, id)``: the distinct ``name`` rows numbered ``0..n-1`` in name order (Spark's
    string order), materialized. GraphFrames runs on these ids, and the driver's arrays are
    indexed by them, so ordering ids orders names."""
    # an explicit partition count: AQE would coalesce the distinct's input to 64 MB partitions,
    # millions of names per task, whose hash map does not fit a 1 GiB heap
    spark = names.sparkSession
    partitions = max(spark.sparkContext.defaultParallelism, -(-names.count() // NAMES_PER_TASK))
    ordered = cut(
        names.repartition(partitions, "name")
        .distinct()
        .orderBy("name")
        .select(
            "name",
            F.spark_partition_id().alias("part"),
            F.monotonically_increasing_id().alias("position"),
        )
    )
    sizes = sorted((r["part"], r["count"]) for r in ordered.groupBy("part").count().collect())
    offsets: list[Column] = []
    total = 0
    for part, count in sizes:
        offsets += [F.lit(part), F.lit(total).cast("long")]
        total += count
    offset = F.create_map(*offsets)[F.col("part")] if offsets else F.lit(0).cast("long")
    within = F.col("position") - F.shiftleft(F.col("part").cast("long"), 33)
    return cut(ordered.select("name", (offset + within).alias("id"))), total


def _long_edges(edges: DataFrame, ids: DataFrame) -> DataFrame:
    """``edges`` (names) as ``(src, dst)`` long ids."""
    return (
        edges.join(ids.select(F.col("name").alias("src"), F.col("id").alias("src_id")), "src")
        .join(ids.select(F.col("name").alias("dst"), F.col("id").alias("dst_id")), "dst")
        .select(F.col("src_id").alias("src"), F.col("dst_id").alias("dst"))
    )


def connected_components(edges: DataFrame, ids: DataFrame, options: GraphOptions) -> DataFrame:
    """``(id, component_id)`` for every node of ``edges`` (undirected connectivity), ``id``
    being the node's name. The component id is the smallest node name of the component."""
    graph = GraphFrame(ids.select("id"), _long_edges(edges, ids))
    labelled = graph.connectedComponents(
        algorithm=options.cc_algorithm,
        broadcastThreshold=-1,
        use_local_checkpoints=not reliable_checkpoints(),
        max_iter=options.max_cc_iterations,
    )
    named = cut(labelled.join(ids, "id").select("name", "component"))
    labelled.unpersist()
    smallest = named.groupBy("component").agg(F.min("name").alias("component_id"))
    return named.join(smallest, "component").select(F.col("name").alias("id"), "component_id")


def cycle_nodes(edges: DataFrame, ids: DataFrame, options: GraphOptions) -> DataFrame:
    """``(id)`` names of the nodes on a directed cycle: a strongly connected component of two
    or more nodes, or a self-loop."""
    graph = GraphFrame(ids.select("id"), _long_edges(edges, ids))
    scc = cut(graph.stronglyConnectedComponents(maxIter=options.max_cc_iterations))
    sizes = scc.groupBy("component").agg(F.count(F.lit(1)).alias("size"))
    in_cycle = scc.join(sizes.where("size > 1"), "component").join(ids, "id").select("name")
    loops = edges.where(F.col("src") == F.col("dst")).select(F.col("src").alias("name"))
    return in_cycle.union(loops).distinct().select(F.col("name").alias("id"))


def reach_paths(
    table_lineage: DataFrame, source: str, target: str, *, max_depth: int = 20
) -> DataFrame:
    """How does ``source`` reach ``target``: every shortest path between them (GraphFrames BFS).

    Returns ``(path, depth)`` rows (``path``: table names from source to target); none when
    ``target`` is not downstream of ``source`` within ``max_depth`` hops.
    """
    edges = table_edges_of(table_lineage).where(F.col("src") != F.col("dst"))
    names = edges.select(F.col("src").alias("id")).union(edges.select("dst")).distinct()
    vertices = names.select(
        "id",
        (F.col("id") == F.lit(source)).alias("is_from"),
        (F.col("id") == target).alias("is_to"),
    )
    found = GraphFrame(vertices, edges).bfs("is_from", "is_to", maxPathLength=max_depth)
    if "from" not in found.columns:  # no path: BFS answers with an empty frame of no columns
        schema = "path array<string>, depth int"
        return table_lineage.sparkSession.createDataFrame([], schema)
    hops = [c for c in found.columns if c.startswith("v")]
    hops.sort(key=lambda c: int(c[1:]))
    steps = [F.col("from.id"), *(F.col(f"{c}.id") for c in hops), F.col("to.id")]
    return found.select(F.array(*steps).alias("path")).select(
        "path", (F.size("path") - 1).alias("depth")
    )


def component_signatures(table_lineage: DataFrame, components: DataFrame) -> DataFrame:
    """``(component_id, signature, node_count, edge_count)``.

    The signature hashes the component's sorted ``(source, target, edge_kind)`` triples, so two
    runs give the same signature exactly when the component's edges (and node kinds) are equal.
    """
    triples = table_lineage.select(
        F.col("source_table").alias("src"), F.col("target_table").alias("dst"), "edge_kind"
    ).distinct()
    with_component = triples.join(components.withColumnRenamed("id", "src"), "src")
    per_edges = with_component.groupBy("component_id").agg(
        F.sha2(
            F.concat_ws(
                "\n",
                F.array_sort(F.collect_list(F.concat_ws("\t", "src", "dst", "edge_kind"))),
            ),
            256,
        ).alias("signature"),
        F.countDistinct("src", "dst").alias("edge_count"),
    )
    sizes = components.groupBy("component_id").agg(F.count(F.lit(1)).alias("node_count"))
    return per_edges.join(sizes, "component_id")


def nodes_of(
    edges: DataFrame,
    components: DataFrame,
    signatures: DataFrame,
    on_cycle: DataFrame,
    node_kinds: DataFrame,
) -> DataFrame:
    """One row per table/view/external dataset with degrees, root/leaf flags and component."""
    proper = edges.where(F.col("src") != F.col("dst"))
    out_deg = proper.groupBy(F.col("src").alias("id")).agg(F.count(F.lit(1)).alias("out_degree"))
    in_deg = proper.groupBy(F.col("dst").alias("id")).agg(F.count(F.lit(1)).alias("in_degree"))
    return (
        components.join(out_deg, "id", "left")
        .join(in_deg, "id", "left")
        .join(
            signatures.select("component_id", F.col("node_count").alias("component_size")),
            "component_id",
        )
        .join(on_cycle.select("id", F.lit(True).alias("on_cycle")).distinct(), "id", "left")
        .join(node_kinds, "id", "left")
        .select(
            F.col("id").alias("node"),
            F.coalesce("kind", F.lit("table")).alias("kind"),
            F.coalesce("in_degree", F.lit(0)).cast("long").alias("in_degree"),
            F.coalesce("out_degree", F.lit(0)).cast("long").alias("out_degree"),
            (F.coalesce("in_degree", F.lit(0)) == 0).alias("is_root"),
            (F.coalesce("out_degree", F.lit(0)) == 0).alias("is_leaf"),
            F.coalesce("on_cycle", F.lit(False)).alias("on_cycle"),
            "component_id",
            F.col("component_size").cast("long").alias("component_size"),
        )
    )


# --- column graph --------------------------------------------------------------------------


SEP = "\u0001"
"""Column refs are one string: table SEP column (no table or column name holds it)."""


def column_edges_of(column_lineage: DataFrame) -> DataFrame:
    """Distinct column edges ``(src, dst, is_direct)``, ``src``/``dst`` being column refs."""
    _require(
        column_lineage,
        ("source_table", "source_column", "target_table", "target_column", "transformation_type"),
        "column_lineage",
    )

    def ref(table: str, column: str) -> Column:
        return F.concat_ws(SEP, F.col(table), F.col(column))

    return column_lineage.select(
        ref("source_table", "source_column").alias("src"),
        ref("target_table", "target_column").alias("dst"),
        (F.col("transformation_type") == DIRECT).alias("is_direct"),
    ).distinct()


# --- the stage -----------------------------------------------------------------------------


_LOCATION_RE = r"^@|://|^/"
"""Names the parser gives file locations and stages (``s3://…``, ``/mnt/…``, ``@stage``)."""


def node_kinds(table_lineage: DataFrame) -> DataFrame:
    """A node is a view if a view definition writes it, external if it names a file location
    or stage, else a table."""
    ends = table_lineage.select(
        F.col("target_table").alias("id"), (F.col("edge_kind") == "view").alias("is_view")
    ).union(table_lineage.select(F.col("source_table").alias("id"), F.lit(False)))
    return ends.groupBy("id").agg(
        F.when(F.max(F.col("is_view").cast("int")) == 1, "view")
        .when(F.col("id").rlike(_LOCATION_RE), "external")
        .otherwise("table")
        .alias("kind")
    )
