"""The graph as arrays on the driver, and the Spark tasks that run the kernels over them.

The driver collects the edges as id pairs into compressed sparse rows (``TableGraph``,
``ColumnGraph``); ``in_tasks`` broadcasts them once and each task computes the closure or path
rows of its share of the keys with ``graph.kernels``. The bound this puts on the graph's size
is the driver's memory for the arrays and each Python worker's for the broadcast.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.core.broadcast import Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.spark.graph.frames import SEP, dense_ids
from lineage_udfs.spark.graph.kernels import Csr, Ids, closure, column_closure, root_paths
from lineage_udfs.spark.graph.options import GraphOptions

logger = logging.getLogger(__name__)

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


def column_graph(edges: DataFrame, components: DataFrame) -> tuple[ColumnGraph, DataFrame]:
    """The arrays of the column graph of ``edges`` (``column_edges_of``, materialized), and
    its ``(name, id)`` refs (``dense_ids``)."""
    ids, n = dense_ids(edges.select(F.col("src").alias("name")).union(edges.select("dst")))
    parts = F.split(F.col("name"), SEP)
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


def table_closure_rows(options: GraphOptions, graph: TableGraph, sources: Ids) -> pa.RecordBatch:
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


def path_rows(options: GraphOptions, graph: TableGraph, roots: Ids) -> pa.RecordBatch:
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


def column_closure_rows(options: GraphOptions, graph: ColumnGraph, sources: Ids) -> pa.RecordBatch:
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


TABLE_CLOSURE_SCHEMA = (
    "component_id string, ancestor string, descendant string, min_distance int, truncated boolean"
)
PATHS_SCHEMA = (
    "component_id string, root string, leaf string, path array<string>, depth int,"
    " truncated boolean"
)
COLUMN_CLOSURE_SCHEMA = (
    "component_id string, ancestor_table string, ancestor_column string,"
    " descendant_table string, descendant_column string, min_distance int,"
    " direct_min_distance int, truncated boolean"
)


def in_tasks(
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
    payload = pickle.dumps((graph, keys), protocol=5)
    logger.info(
        "graph: %s broadcast: %d bytes, %d keys in %d tasks",
        getattr(getattr(rows_of, "func", rows_of), "__name__", "rows"),
        len(payload),
        keys.size,
        tasks,
    )
    shared = spark.sparkContext.broadcast(payload)
    del payload

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


def keys_of(names: DataFrame, ids: DataFrame) -> Ids:
    """The ids of the ``(name)`` rows that are nodes, sorted."""
    found = names.distinct().join(ids, "name").select(F.col("id").cast("long")).toArrow()
    return np.sort(found["id"].to_numpy())
