"""Graph analytics over the lineage edge tables: nodes, components, paths and impact closures.

GraphFrames computes what it has an algorithm for; the rest is DataFrame code:

* **Vertex ids**: node names are numbered once, ``0..n-1`` in name order (``dense_ids``).
  GraphFrames' algorithms run on those (under Spark 4's ANSI mode some of them fail on string
  ids), and the names are joined back on their results.
* **Connected components**: GraphFrames ``connectedComponents`` over the table graph (the
  algorithm is ``GraphOptions.cc_algorithm``, chosen by measurement: docs/graph.md). A
  component's id is its smallest node name, so it is readable and stable across runs.
* **Cycles** (``lineage_nodes.on_cycle``): GraphFrames ``stronglyConnectedComponents``; a node
  is on a cycle when its strongly connected component has two or more nodes, or it has a
  self-loop.
* **How does A reach B** (``reach_paths``, on demand): GraphFrames ``bfs`` (the shortest
  paths between two tables).
* **Closures** (``table_closure``, ``column_closure``): GraphFrames has no all-pairs closure
  (``bfs`` joins one set to another, ``shortestPaths`` keeps a map of every landmark on every
  vertex). The driver collects the edges as id pairs into compressed sparse rows
  (``table_graph``, ``column_graph``), broadcasts them, and Spark tasks run a vectorized
  bounded breadth-first search over their share of the ancestors (``graph_kernels``,
  ``mapInArrow``). Bounded by ``max_depth`` hops and by ``max_closure_per_node`` descendants
  per ancestor (nearest first, then by name): an ancestor with more has its rows flagged
  ``truncated``. A hub read by half the warehouse would otherwise make the closure quadratic.
  The search can start from some ancestors only: their rows are exactly their rows of the
  whole closure.
* **Root-to-leaf paths**: the same tasks expand simple paths from every root (or from some
  roots), cycle-safe (a path never revisits a node), with at most ``max_paths_per_root`` live
  paths per root per hop; capped or depth-cut paths carry ``truncated = true``. (GraphFrames
  has no simple-path enumeration.)
* **Incremental runs** (``previous``: the table and column edges that appeared or went since
  the last run, and its stored components and nodes): a reverse bounded BFS from the changed
  edges' sources over the current edges plus the changed ones finds the ancestors whose
  closure rows can change (within ``max_depth - 1`` hops) and the roots whose paths can change
  (within ``max_depth`` hops of an end of a changed edge); only those are recomputed, over the
  whole new edge sets (``incremental_scope`` says why exactly these). Components are
  recomputed whole (cheap); cycles and ``lineage_nodes`` for the components whose signature (a
  hash of their sorted edges) is new. Rows kept whose node changed component get the new
  component id. The result equals a full recompute's (tested on random edit sequences).

This module is the only one that knows the vertex/edge column names ``id``/``src``/``dst``.
"""

from __future__ import annotations

import functools
import logging
import pickle
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from graphframes import GraphFrame
from pyspark.core.broadcast import Broadcast
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.spark.graph_kernels import Csr, Ids, closure, column_closure, root_paths
from lineage_udfs.spark.session import GRAPHFRAMES, LaunchError, missing_libraries

logger = logging.getLogger(__name__)

DIRECT = "DIRECT"
GRAPHFRAMES_PACKAGE = GRAPHFRAMES.coordinates
"""The GraphFrames jar the stage needs (the same version as the graphframes-py package)."""
CC_ALGORITHMS = ("graphx", "two_phase")
"""GraphFrames connectedComponents algorithms that work on the stage's long vertex ids."""


@dataclass(frozen=True, slots=True)
class GraphOptions:
    """Knobs of the graph stage, passed explicitly (never library defaults).

    Attributes:
        max_depth: longest path / closure distance in hops (1..20).
        max_paths_per_root: live partial paths kept per root at each hop.
        max_cc_iterations: bound on connected-component rounds and on the strongly connected
            components algorithm's outer rounds.
        max_closure_per_node: descendants kept per ancestor in a closure (nearest first, then
            by name); an ancestor with more has its rows flagged ``truncated``.
        reliable_checkpoints: use ``checkpoint()`` (needs a checkpoint dir; survives executor
            loss on a cluster) instead of ``localCheckpoint()``.
        cc_algorithm: GraphFrames connectedComponents algorithm (one of ``CC_ALGORITHMS``).
    """

    max_depth: int = 20
    max_paths_per_root: int = 1000
    max_cc_iterations: int = 100
    max_closure_per_node: int = 10000
    reliable_checkpoints: bool = False
    cc_algorithm: str = "graphx"

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= 20:
            raise ValueError(f"max_depth must be within 1..20, got {self.max_depth}")
        if self.max_paths_per_root < 1:
            raise ValueError("max_paths_per_root must be >= 1")
        if self.max_closure_per_node < 1:
            raise ValueError("max_closure_per_node must be >= 1")
        if self.cc_algorithm not in CC_ALGORITHMS:
            raise ValueError(f"cc_algorithm must be one of {CC_ALGORITHMS}: {self.cc_algorithm}")


@dataclass(frozen=True, slots=True)
class GraphResult:
    """The analytics tables of one run (DataFrames, not yet written)."""

    components: DataFrame
    nodes: DataFrame
    paths: DataFrame
    table_closure: DataFrame
    column_closure: DataFrame
    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds of the steps computed inside ``analyze``: components, cycles, lineage_nodes,
    table_graph and column_graph (the arrays); the closures and paths are computed by their
    tasks when their tables are written."""
    recomputed: dict[str, int] = field(default_factory=dict)
    """How many keys were recomputed: ``table_closure`` and ``column_closure`` sources
    (ancestors), ``lineage_paths`` roots."""


def _cut(df: DataFrame, options: GraphOptions) -> DataFrame:
    """Materialize and truncate the plan so iterative loops do not grow it without bound.

    A checkpoint keeps the size estimate of the plan it replaces, and Spark estimates a join as
    the product of its inputs' sizes: over the hops of a closure the estimate's digits double
    each hop, until estimating a plan takes hours. The checkpointed rows are therefore wrapped
    in a fresh DataFrame that carries no estimate (the default size), so each hop starts anew.
    """
    cut = df.checkpoint() if options.reliable_checkpoints else df.localCheckpoint()
    spark = cut.sparkSession
    fresh = spark._jsparkSession.createDataFrame(cut._jdf.rdd(), cut._jdf.schema())
    return DataFrame(fresh, spark)


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


def dense_ids(names: DataFrame, options: GraphOptions) -> tuple[DataFrame, int]:
    """``(name, id)``: the distinct ``name`` rows numbered ``0..n-1`` in name order (Spark's
    string order), materialized. GraphFrames runs on these ids, and the driver's arrays are
    indexed by them, so ordering ids orders names."""
    # an explicit partition count: AQE would coalesce the distinct's input to 64 MB partitions,
    # millions of names per task, whose hash map does not fit a 1 GiB heap
    spark = names.sparkSession
    partitions = max(spark.sparkContext.defaultParallelism, -(-names.count() // NAMES_PER_TASK))
    ordered = _cut(
        names.repartition(partitions, "name")
        .distinct()
        .orderBy("name")
        .select(
            "name",
            F.spark_partition_id().alias("part"),
            F.monotonically_increasing_id().alias("position"),
        ),
        options,
    )
    sizes = sorted((r["part"], r["count"]) for r in ordered.groupBy("part").count().collect())
    offsets: list[Column] = []
    total = 0
    for part, count in sizes:
        offsets += [F.lit(part), F.lit(total).cast("long")]
        total += count
    offset = F.create_map(*offsets)[F.col("part")] if offsets else F.lit(0).cast("long")
    within = F.col("position") - F.shiftleft(F.col("part").cast("long"), 33)
    return _cut(ordered.select("name", (offset + within).alias("id")), options), total


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
        use_local_checkpoints=not options.reliable_checkpoints,
        max_iter=options.max_cc_iterations,
    )
    named = _cut(labelled.join(ids, "id").select("name", "component"), options)
    labelled.unpersist()
    smallest = named.groupBy("component").agg(F.min("name").alias("component_id"))
    return named.join(smallest, "component").select(F.col("name").alias("id"), "component_id")


def cycle_nodes(edges: DataFrame, ids: DataFrame, options: GraphOptions) -> DataFrame:
    """``(id)`` names of the nodes on a directed cycle: a strongly connected component of two
    or more nodes, or a self-loop."""
    graph = GraphFrame(ids.select("id"), _long_edges(edges, ids))
    scc = _cut(graph.stronglyConnectedComponents(maxIter=options.max_cc_iterations), options)
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


_SEP = "\u0001"
"""Column refs are one string: table SEP column (no table or column name holds it)."""


def column_edges_of(column_lineage: DataFrame) -> DataFrame:
    """Distinct column edges ``(src, dst, is_direct)``, ``src``/``dst`` being column refs."""
    _require(
        column_lineage,
        ("source_table", "source_column", "target_table", "target_column", "transformation_type"),
        "column_lineage",
    )

    def ref(table: str, column: str) -> Column:
        return F.concat_ws(_SEP, F.col(table), F.col(column))

    return column_lineage.select(
        ref("source_table", "source_column").alias("src"),
        ref("target_table", "target_column").alias("dst"),
        (F.col("transformation_type") == DIRECT).alias("is_direct"),
    ).distinct()


# --- closures and paths: the graph's arrays on the driver, the kernels in the tasks ---------


CLOSURE_CHUNK = 1024
"""Sources a task computes together (one kernel call)."""
PATH_CHUNK = 64
"""Roots a task computes together (each may hold ``max_paths_per_root`` live paths)."""
SOURCES_PER_TASK = 50_000
"""With more sources than this per core, the stage runs more tasks than cores."""


@dataclass(frozen=True, slots=True)
class TableGraph:
    """The table graph as arrays indexed by dense node id (``dense_ids``).

    Attributes:
        edges: every distinct edge, self-loops included (closures).
        proper: the edges without self-loops (paths, roots and leaves).
        names: node name per id.
        component: per id, the id of its component's name.
    """

    edges: Csr
    proper: Csr
    names: pa.Array
    component: Ids


@dataclass(frozen=True, slots=True)
class ColumnGraph:
    """The column graph as arrays indexed by dense column-ref id.

    Attributes:
        edges: every distinct column edge.
        direct: the DIRECT edges.
        table: per id, an index into ``tables`` (the ref's table).
        tables: table names.
        component: per ``tables`` entry, the table's component id (the table's own name when
            no table edge touches it).
        column: per id, the column name (null for a ref with none).
    """

    edges: Csr
    direct: Csr
    table: Ids
    tables: pa.Array
    component: pa.Array
    column: pa.Array


def _edge_ids(edges: DataFrame, ids: DataFrame, *extra: str) -> pa.Table:
    """``edges`` (names in ``src``/``dst``) as ``(s, d, *extra)`` int ids, on the driver."""
    pairs = (
        edges.join(ids.select(F.col("name").alias("src"), F.col("id").alias("s")), "src")
        .join(ids.select(F.col("name").alias("dst"), F.col("id").alias("d")), "dst")
        .select(F.col("s").cast("int"), F.col("d").cast("int"), *extra)
    )
    return _to_arrow(pairs, edges.count() // 4)  # int rows: a quarter of a name row's size


COLLECT_ROWS_PER_TASK = 50_000
"""Rows per task result when arrays are collected to the driver: a large task result goes
through the block manager, which in a 1 GiB local heap can lose it."""


def _to_arrow(rows: DataFrame, count: int) -> pa.Table:
    """``rows`` (about ``count`` name-sized rows) on the driver, in small task results."""
    parts = max(1, -(-count // COLLECT_ROWS_PER_TASK))
    if parts > rows.rdd.getNumPartitions():
        rows = rows.repartition(parts)
    return rows.toArrow()


def _by_id(table: pa.Table, n: int) -> pa.Table:
    """The rows of ``table`` (one per id ``0..n-1``) in id order."""
    if table.num_rows != n:
        raise RuntimeError(f"expected {n} node rows, got {table.num_rows}")
    return table.take(pc.sort_indices(table["id"]))


def table_graph(edges: DataFrame, ids: DataFrame, n: int, components: DataFrame) -> TableGraph:
    """The arrays of the table graph: ``edges`` ``(src, dst)``, ``ids`` and their number ``n``
    from ``dense_ids``, ``components`` ``(id, component_id)`` (names)."""
    nodes = _by_id(
        ids.join(components.withColumnRenamed("id", "name"), "name")
        .join(
            ids.select(F.col("name").alias("component_id"), F.col("id").alias("cid")),
            "component_id",
        )
        .select("id", "name", "cid")
        .toArrow(),
        n,
    )
    pairs = _edge_ids(edges, ids)
    src = pairs["s"].to_numpy()
    dst = pairs["d"].to_numpy()
    loop = src == dst
    return TableGraph(
        edges=Csr.of(src, dst, n),
        proper=Csr.of(src[~loop], dst[~loop], n),
        names=nodes["name"].combine_chunks(),
        component=nodes["cid"].to_numpy(),
    )


def column_graph(
    edges: DataFrame, components: DataFrame, options: GraphOptions
) -> tuple[ColumnGraph, DataFrame]:
    """The arrays of the column graph of ``edges`` (``column_edges_of``, materialized), and
    its ``(name, id)`` refs (``dense_ids``)."""
    ids, n = dense_ids(edges.select(F.col("src").alias("name")).union(edges.select("dst")), options)
    parts = F.split(F.col("name"), _SEP)
    nodes = _by_id(
        _to_arrow(
            ids.select("id", parts.getItem(0).alias("table"), F.get(parts, 1).alias("column")),
            n,
        ),
        n,
    )
    encoded = nodes["table"].combine_chunks().dictionary_encode()
    tables = encoded.dictionary
    named = components.select(F.col("id").alias("name"), "component_id").toArrow()
    at = pc.index_in(tables, value_set=named["name"])
    component = pc.coalesce(named["component_id"].combine_chunks().take(at), tables)
    pairs = _edge_ids(edges, ids, "is_direct")
    src, dst = pairs["s"].to_numpy(), pairs["d"].to_numpy()
    direct = pairs["is_direct"].to_numpy(zero_copy_only=False)
    graph = ColumnGraph(
        edges=Csr.of(src, dst, n),
        direct=Csr.of(src[direct], dst[direct], n),
        table=encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64),
        tables=tables,
        component=component,
        column=nodes["column"].combine_chunks(),
    )
    return graph, ids


def _table_closure_rows(options: GraphOptions, graph: TableGraph, sources: Ids) -> pa.RecordBatch:
    reach = closure(graph.edges, sources, options.max_depth, options.max_closure_per_node)
    src = sources[reach.row]
    return pa.RecordBatch.from_arrays(
        [
            graph.names.take(graph.component[src]),
            graph.names.take(src),
            graph.names.take(reach.target),
            pa.array(reach.distance.astype(np.int32)),
            pa.array(reach.capped[reach.row]),
        ],
        names=["component_id", "ancestor", "descendant", "min_distance", "truncated"],
    )


def _path_rows(options: GraphOptions, graph: TableGraph, roots: Ids) -> pa.RecordBatch:
    found = root_paths(graph.proper, roots, options.max_depth, options.max_paths_per_root)
    root = roots[found.row]
    path = pa.ListArray.from_arrays(
        pa.array(found.offsets.astype(np.int32)), graph.names.take(found.nodes)
    )
    return pa.RecordBatch.from_arrays(
        [
            graph.names.take(graph.component[root]),
            graph.names.take(root),
            graph.names.take(found.nodes[found.offsets[1:] - 1]),
            path,
            pa.array((np.diff(found.offsets) - 1).astype(np.int32)),
            pa.array(found.truncated),
        ],
        names=["component_id", "root", "leaf", "path", "depth", "truncated"],
    )


def _column_closure_rows(options: GraphOptions, graph: ColumnGraph, sources: Ids) -> pa.RecordBatch:
    reach = column_closure(
        graph.edges, graph.direct, sources, options.max_depth, options.max_closure_per_node
    )
    src_table = graph.table[sources[reach.row]]
    dst_table = graph.table[reach.target]
    direct = reach.direct_distance.astype(np.int32)
    return pa.RecordBatch.from_arrays(
        [
            graph.component.take(src_table),
            graph.tables.take(src_table),
            graph.column.take(sources[reach.row]),
            graph.tables.take(dst_table),
            graph.column.take(reach.target),
            pa.array(reach.distance.astype(np.int32)),
            pa.array(direct, mask=direct < 0),
            pa.array(reach.truncated),
        ],
        names=[
            "component_id",
            "ancestor_table",
            "ancestor_column",
            "descendant_table",
            "descendant_column",
            "min_distance",
            "direct_min_distance",
            "truncated",
        ],
    )


_TABLE_CLOSURE_SCHEMA = (
    "component_id string, ancestor string, descendant string, min_distance int, truncated boolean"
)
_PATHS_SCHEMA = (
    "component_id string, root string, leaf string, path array<string>, depth int,"
    " truncated boolean"
)
_COLUMN_CLOSURE_SCHEMA = (
    "component_id string, ancestor_table string, ancestor_column string,"
    " descendant_table string, descendant_column string, min_distance int,"
    " direct_min_distance int, truncated boolean"
)


def _in_tasks(
    spark: SparkSession,
    rows_of: Callable[[Any, Ids], pa.RecordBatch],
    graph: Any,
    keys: Ids,
    chunk: int,
    schema: str,
) -> DataFrame:
    """The rows ``rows_of(graph, some keys)`` of every key, computed by Spark tasks: the graph
    and the keys are broadcast once, each task takes every ``tasks``-th key (hubs spread
    evenly) and calls ``rows_of`` ``chunk`` keys at a time."""
    if keys.size == 0:
        return spark.createDataFrame([], schema)
    cores = spark.sparkContext.defaultParallelism
    tasks = min(-(-keys.size // chunk), max(cores, -(-keys.size // SOURCES_PER_TASK)))
    # pickled here: pyspark's broadcast writer, under spark.io.encryption.enabled, cannot take
    # the out-of-band buffers pickle protocol 5 makes of numpy and Arrow arrays over 64 KiB
    shared = spark.sparkContext.broadcast(pickle.dumps((graph, keys), protocol=5))

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        data, todo = _unpickled(shared)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                mine = todo[task::tasks]
                for start in range(0, mine.size, chunk):
                    out = rows_of(data, mine[start : start + chunk])
                    if out.num_rows:
                        yield out

    return spark.range(tasks, numPartitions=tasks).mapInArrow(run, schema)


_LOADED: list[tuple[Broadcast[bytes], Any]] = []
"""In a Python worker: the broadcast last unpickled and its value (one at a time; the reference
keeps the broadcast object, whose identity is the key, alive)."""


def _unpickled(shared: Broadcast[bytes]) -> Any:
    if not _LOADED or _LOADED[0][0] is not shared:
        _LOADED[:] = [(shared, pickle.loads(shared.value))]
    return _LOADED[0][1]


def _keys_of(names: DataFrame, ids: DataFrame) -> Ids:
    """The ids of the ``(name)`` rows that are nodes, sorted."""
    found = names.distinct().join(ids, "name").select(F.col("id").cast("long")).toArrow()
    return np.sort(found["id"].to_numpy())


# --- incremental scope ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreviousRun:
    """How the edges changed since the last run, and what that run stored.

    Attributes:
        table_changes: the table edge triples (``source_table``, ``target_table``,
            ``edge_kind``) in the last run's edges or the current ones but not both; may hold
            some in both (a superset only widens the scope: the result is the same).
        column_changes: the same for the column edges (``source_table``, ``source_column``,
            ``target_table``, ``target_column``, ``transformation_type``).
        components: the stored ``graph_components`` (``component_id``, ``signature``).
        nodes: the stored ``lineage_nodes`` (``node``, ``component_id``).
        tables_unchanged: see below.
    """

    table_changes: DataFrame
    column_changes: DataFrame
    components: DataFrame
    nodes: DataFrame
    tables_unchanged: bool = False
    """The table edges are the last run's (known from the change data feed): the components,
    nodes, paths and table closures it stored stand; only column closures can change."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The stored rows an incremental result replaces, per table.

    Attributes:
        components: ``(component_id)``: ``lineage_nodes`` rows of these components (changed,
            new or gone) are replaced by the result's.
        closure_sources: ``(ancestor)``: ``table_closure`` rows of these ancestors.
        column_sources: ``(ancestor_table, ancestor_column)``: ``column_closure`` rows.
        path_roots: ``(root)``: ``lineage_paths`` rows of these roots.
        relabelled: ``(node, component_id)``: nodes whose component id changed, with the new
            one; stored rows keyed by them and not replaced keep their values with this id.
    """

    components: DataFrame
    closure_sources: DataFrame
    column_sources: DataFrame
    path_roots: DataFrame
    relabelled: DataFrame


def changed_rows(old: DataFrame, new: DataFrame, options: GraphOptions) -> DataFrame:
    """Rows in one of ``old`` and ``new`` but not the other (both distinct), materialized."""
    return _cut(old.subtract(new).unionByName(new.subtract(old)), options)


def upstream_within(
    edges: DataFrame, seeds: DataFrame, hops: dict[str, int], options: GraphOptions
) -> DataFrame:
    """Reverse bounded breadth-first search: ``(node, tag)`` for every node that reaches a seed
    of ``tag`` within ``hops[tag]`` hops over the ``(src, dst)`` edges (the seeds included).

    One join per hop with only the previous hop's new nodes as the frontier: cheap while the
    seeds' upstream is small, however large the graph. ``edges`` should be materialized (each
    hop scans them).
    """
    reached = _cut(seeds.select("node", "tag").distinct(), options)
    frontier, size = reached, reached.count()
    # not deduplicated: a repeated edge only repeats a found row, and the found rows are
    reverse = edges.select(F.col("dst").alias("node"), F.col("src").alias("up"))
    for hop in range(1, max(hops.values(), default=0) + 1):
        live = [tag for tag, budget in hops.items() if budget >= hop]
        # a small frontier is broadcast: the edges are scanned, not shuffled, at every hop
        side = frontier.where(F.col("tag").isin(live))
        side = F.broadcast(side) if size <= BROADCAST_FRONTIER_ROWS else side
        found = (
            reverse.join(side, "node")
            .select(F.col("up").alias("node"), "tag")
            .distinct()
            .join(reached, ["node", "tag"], "left_anti")
        )
        found = _cut(found, options)
        size = found.count()
        if not size:
            break
        reached = _cut(reached.unionByName(found), options)
        frontier = found
    return reached


BROADCAST_FRONTIER_ROWS = 1_000_000
"""Frontier rows of ``upstream_within`` broadcast to the edges at most (a few tens of MB)."""


def incremental_scope(
    previous: PreviousRun,
    edges: DataFrame,
    column_edges: DataFrame,
    components: DataFrame,
    stale: DataFrame,
    options: GraphOptions,
) -> Scope:
    """Which stored rows can differ from a full refresh's after the edges changed by
    ``previous``'s changes to these: ``edges`` (``table_edges_of``) and ``column_edges``
    (``column_edges_of``) of the current edge tables, both materialized.

    A closure row ``(a, d, distance, truncated)`` is a function of ``a``'s ball: the nodes ``a``
    reaches within ``max_depth`` hops, each at its fewest hops (the cap keeps the nearest of
    them, then by name, and flags ``a`` when the ball holds more; a source stops expanding at
    the hop that fills its cap, having kept every node of the previous hops, so the kept set is
    still decided by the ball alone). Removing or adding the edge ``(u, v)`` changes a hop
    count within ``max_depth`` only along a walk ``a -> ... -> u -> v`` whose prefix to ``u``
    has at most ``max_depth - 1`` hops, in the old graph (removal) or the new one (addition).
    So the affected ancestors are the changed edges' sources plus every node that reaches one
    of them within ``max_depth - 1`` hops in the union of the old and new edges (a superset of
    either graph's); every other ancestor's ball, hence its capped rows and its ``truncated``
    flag, is unchanged. The same holds for column edges (an edge whose DIRECT flag changes is
    one removed and one added).

    A root-to-leaf path of at most ``max_depth`` edges changes when an edge on it changes, or
    when its last node's leaf status or a node's root status changes (its out- or in-edges
    changed): every such node is an end of a changed edge and lies within ``max_depth`` hops
    of the root. So the roots to recompute are the nodes that reach an end of a changed edge
    within ``max_depth`` hops (union graph), the ends themselves included (a node that became
    or stopped being a root).

    Component ids: rows outside these scopes keep their values but must carry the component
    id a full refresh gives; ``relabelled`` lists the nodes whose id changed (components
    merged or split).
    """
    changed = _cut(table_edges_of(previous.table_changes), options)
    # the union of the old and the new edges: the new ones and the changed ones (each changed
    # edge is in one of the two)
    both = edges.unionByName(changed)
    seeds = (
        changed.select(F.col("src").alias("node"), F.lit("closure").alias("tag"))
        .unionByName(changed.select(F.col("src").alias("node"), F.lit("paths").alias("tag")))
        .unionByName(changed.select(F.col("dst").alias("node"), F.lit("paths").alias("tag")))
    )
    reached = upstream_within(
        both,
        seeds,
        {"closure": options.max_depth - 1, "paths": options.max_depth},
        options,
    )
    closure_sources = _cut(
        reached.where("tag = 'closure'").select(F.col("node").alias("ancestor")), options
    )
    path_roots = _cut(reached.where("tag = 'paths'").select(F.col("node").alias("root")), options)

    column_sources = column_scope(previous, column_edges, options)

    was = previous.nodes.select("node", F.col("component_id").alias("was"))
    now = components.select(F.col("id").alias("node"), F.col("component_id").alias("now"))
    relabelled = _cut(
        was.join(now, "node", "full")
        .where(~F.coalesce("was", "node").eqNullSafe(F.coalesce("now", "node")))
        .select("node", F.coalesce("now", "node").alias("component_id")),
        options,
    )
    return Scope(
        components=stale,
        closure_sources=closure_sources,
        column_sources=column_sources,
        path_roots=path_roots,
        relabelled=relabelled,
    )


def column_scope(
    previous: PreviousRun, column_edges: DataFrame, options: GraphOptions
) -> DataFrame:
    """``(ancestor_table, ancestor_column)``: the columns whose ``column_closure`` rows a
    changed column edge can affect (``incremental_scope`` says why), materialized."""
    changed_columns = _cut(column_edges_of(previous.column_changes), options)
    column_seeds = changed_columns.select(F.col("src").alias("node"), F.lit("closure").alias("tag"))
    column_reached = upstream_within(
        column_edges.select("src", "dst").unionByName(changed_columns.select("src", "dst")),
        column_seeds,
        {"closure": options.max_depth - 1},
        options,
    )
    parts = F.split(F.col("node"), _SEP)
    return _cut(
        column_reached.select(
            parts.getItem(0).alias("ancestor_table"), parts.getItem(1).alias("ancestor_column")
        ),
        options,
    )


# --- the stage -----------------------------------------------------------------------------


_LOCATION_RE = r"^@|://|^/"
"""Names the parser gives file locations and stages (``s3://…``, ``/mnt/…``, ``@stage``)."""


def _node_kinds(table_lineage: DataFrame) -> DataFrame:
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


def analyze(
    table_lineage: DataFrame,
    column_lineage: DataFrame,
    options: GraphOptions,
    *,
    previous: PreviousRun | None = None,
) -> tuple[GraphResult, Scope | None]:
    """Compute the analytics tables, all of them or what changed since ``previous``.

    Args:
        table_lineage: rows with ``source_table``, ``target_table``, ``edge_kind``.
        column_lineage: rows with source/target table and column and ``transformation_type``.
        options: algorithm knobs.
        previous: the last run's input and stored state, or None for a full recompute.

    Returns:
        The tables (``components`` covers every component) and, for an incremental run, the
        ``Scope`` of stored rows they replace: ``lineage_nodes`` of the components whose
        signature is new (changed, merged, split or new), the closures of the ancestors a
        changed edge can affect (``incremental_scope``) and the paths of the roots it can
        affect. None for a full recompute (the tables are complete).
    """
    require_graphframes(table_lineage.sparkSession)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[step] = now - clock
        clock = now
        logger.info("graph step %s: %.1f s", step, seconds[step])

    edges = _cut(table_edges_of(table_lineage), options)
    # the distinct column edges, materialized once for the incremental scope and the arrays
    column_edges = functools.cache(lambda: _cut(column_edges_of(column_lineage), options))
    ids, n_nodes = dense_ids(
        edges.select(F.col("src").alias("name")).union(edges.select("dst")), options
    )
    components = _cut(connected_components(edges, ids, options), options)
    signatures = _cut(component_signatures(table_lineage, components), options)
    previous_components = previous.components if previous is not None else None
    changed = _cut(changed_components(signatures, previous_components), options)
    scope: Scope | None = None
    if previous is not None:
        gone = previous.components.select("component_id").join(
            signatures.select("component_id"), "component_id", "left_anti"
        )
        stale = _cut(changed.union(gone).distinct(), options)
        scope = incremental_scope(previous, edges, column_edges(), components, stale, options)
    lap("components")
    scoped = components.join(changed, "component_id")
    keyed = _cut(edges.join(scoped.withColumnRenamed("id", "src"), "src"), options)
    scoped_ids = ids.join(scoped.select(F.col("id").alias("name")), "name")
    cycles = _cut(cycle_nodes(keyed.select("src", "dst"), scoped_ids, options), options)
    lap("cycles")
    nodes = _cut(
        nodes_of(keyed, scoped, signatures, cycles, _node_kinds(table_lineage)),
        options,
    )
    lap("lineage_nodes")
    spark = table_lineage.sparkSession
    tables = table_graph(edges, ids, n_nodes, components)
    lap("table_graph")
    if scope is not None:
        closure_sources = _keys_of(
            scope.closure_sources.select(F.col("ancestor").alias("name")), ids
        )
        roots = _keys_of(scope.path_roots.select(F.col("root").alias("name")), ids)
    else:
        closure_sources = np.arange(tables.edges.n, dtype=np.int64)
        roots = closure_sources
    closure_sources = closure_sources[tables.edges.degree()[closure_sources] > 0]
    out_degree = tables.proper.degree()
    in_degree = np.bincount(tables.proper.indices, minlength=tables.proper.n)
    roots = roots[(out_degree[roots] > 0) & (in_degree[roots] == 0)]
    closure = _in_tasks(
        spark,
        functools.partial(_table_closure_rows, options),
        tables,
        closure_sources,
        CLOSURE_CHUNK,
        _TABLE_CLOSURE_SCHEMA,
    )
    paths = _in_tasks(
        spark, functools.partial(_path_rows, options), tables, roots, PATH_CHUNK, _PATHS_SCHEMA
    )
    column_rows, n_column_sources = _column_closures(
        column_edges(), components, scope.column_sources if scope else None, options
    )
    lap("column_graph")
    if scope is not None:
        recomputed = {
            "table_closure": scope.closure_sources.count(),
            "column_closure": scope.column_sources.count(),
            "lineage_paths": scope.path_roots.count(),
        }
    else:
        recomputed = {
            "table_closure": int(closure_sources.size),
            "column_closure": n_column_sources,
            "lineage_paths": int(roots.size),
        }
    result = GraphResult(
        recomputed=recomputed,
        components=signatures,
        nodes=nodes,
        paths=paths,
        table_closure=closure,
        column_closure=column_rows,
        seconds=seconds,
    )
    return result, scope


def _column_closures(
    column_edges: DataFrame,
    components: DataFrame,
    sources: DataFrame | None,
    options: GraphOptions,
) -> tuple[DataFrame, int]:
    """The ``column_closure`` rows of ``sources`` (``(ancestor_table, ancestor_column)``; None:
    every column with an out-edge) over ``column_edges`` (materialized), with the component
    ids of ``components`` (``(id, component_id)``, table names); and how many sources."""
    columns, column_ids = column_graph(column_edges, components, options)
    if sources is not None:
        keys = _keys_of(
            sources.select(F.concat_ws(_SEP, "ancestor_table", "ancestor_column").alias("name")),
            column_ids,
        )
    else:
        keys = np.arange(columns.edges.n, dtype=np.int64)
    keys = keys[columns.edges.degree()[keys] > 0]
    rows = _in_tasks(
        column_edges.sparkSession,
        functools.partial(_column_closure_rows, options),
        columns,
        keys,
        CLOSURE_CHUNK,
        _COLUMN_CLOSURE_SCHEMA,
    )
    return rows, int(keys.size)


def analyze_columns(
    column_lineage: DataFrame, previous: PreviousRun, options: GraphOptions
) -> tuple[DataFrame, DataFrame, dict[str, float]]:
    """The column closures that can differ from the stored ones when only column edges
    changed (``previous.tables_unchanged``): ``(rows, sources they replace, seconds)``.

    The components, nodes, paths and table closures are functions of the table edges alone,
    so they stand; the column closure rows take their component ids from the stored nodes.
    """
    started = time.perf_counter()
    column_edges = _cut(column_edges_of(column_lineage), options)
    sources = column_scope(previous, column_edges, options)
    components = previous.nodes.select(F.col("node").alias("id"), "component_id")
    rows, _ = _column_closures(column_edges, components, sources, options)
    seconds = {"column_graph": time.perf_counter() - started}
    logger.info("graph step column_graph: %.1f s", seconds["column_graph"])
    return rows, sources, seconds


def changed_components(current: DataFrame, previous: DataFrame | None) -> DataFrame:
    """Components whose signature is not among the previous run's signatures."""
    if previous is None:
        return current.select("component_id")
    return current.join(
        previous.select("component_id", "signature"), ["component_id", "signature"], "left_anti"
    ).select("component_id")
