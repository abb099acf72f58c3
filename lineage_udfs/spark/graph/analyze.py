"""Graph analytics over the lineage edge tables: nodes, components, paths and impact closures.

GraphFrames computes what it has an algorithm for (``graph.frames``); the rest is DataFrame code
and array kernels run in Spark tasks (``graph.arrays``, ``graph.kernels``):

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
  bounded breadth-first search over their share of the ancestors (``graph.kernels``,
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
  the last run, and its stored components and nodes): ``graph.scope`` finds the ancestors
  whose closure rows and the roots whose paths can change; only those are recomputed, over
  the whole new edge sets. Components are recomputed whole (cheap); cycles and
  ``lineage_nodes`` for the components whose signature (a hash of their sorted edges) is new.
  Rows kept whose node changed component get the new component id. The result equals a full
  recompute's (tested on random edit sequences).
"""

from __future__ import annotations

import functools
import logging
import time

import numpy as np
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.spark.graph.arrays import (
    CLOSURE_CHUNK,
    COLUMN_CLOSURE_SCHEMA,
    PATH_CHUNK,
    PATHS_SCHEMA,
    TABLE_CLOSURE_SCHEMA,
    column_closure_rows,
    column_graph,
    in_tasks,
    keys_of,
    path_rows,
    table_closure_rows,
    table_graph,
)
from lineage_udfs.spark.graph.frames import (
    SEP,
    column_edges_of,
    component_signatures,
    connected_components,
    cycle_nodes,
    dense_ids,
    node_kinds,
    nodes_of,
    require_graphframes,
    table_edges_of,
)
from lineage_udfs.spark.graph.options import GraphOptions, GraphResult, cut
from lineage_udfs.spark.graph.scope import (
    PreviousRun,
    Scope,
    changed_components,
    column_scope,
    incremental_scope,
)

logger = logging.getLogger(__name__)


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

    edges = cut(table_edges_of(table_lineage))
    # the distinct column edges, materialized once for the incremental scope and the arrays
    column_edges = functools.cache(lambda: cut(column_edges_of(column_lineage)))
    ids, n_nodes = dense_ids(edges.select(F.col("src").alias("name")).union(edges.select("dst")))
    components = cut(connected_components(edges, ids, options))
    signatures = cut(component_signatures(table_lineage, components))
    previous_components = previous.components if previous is not None else None
    changed = cut(changed_components(signatures, previous_components))
    scope: Scope | None = None
    if previous is not None:
        gone = previous.components.select("component_id").join(
            signatures.select("component_id"), "component_id", "left_anti"
        )
        stale = cut(changed.union(gone).distinct())
        scope = incremental_scope(previous, edges, column_edges(), components, stale, options)
    lap("components")
    scoped = components.join(changed, "component_id")
    keyed = cut(edges.join(scoped.withColumnRenamed("id", "src"), "src"))
    scoped_ids = ids.join(scoped.select(F.col("id").alias("name")), "name")
    cycles = cut(cycle_nodes(keyed.select("src", "dst"), scoped_ids, options))
    lap("cycles")
    nodes = cut(nodes_of(keyed, scoped, signatures, cycles, node_kinds(table_lineage)))
    lap("lineage_nodes")
    spark = table_lineage.sparkSession
    tables = table_graph(edges, ids, n_nodes, components)
    lap("table_graph")
    if scope is not None:
        closure_sources = keys_of(
            scope.closure_sources.select(F.col("ancestor").alias("name")), ids
        )
        roots = keys_of(scope.path_roots.select(F.col("root").alias("name")), ids)
    else:
        closure_sources = np.arange(tables.edges.n, dtype=np.int64)
        roots = closure_sources
    closure_sources = closure_sources[tables.edges.degree()[closure_sources] > 0]
    out_degree = tables.proper.degree()
    in_degree = np.bincount(tables.proper.indices, minlength=tables.proper.n)
    roots = roots[(out_degree[roots] > 0) & (in_degree[roots] == 0)]
    closure = in_tasks(
        spark,
        functools.partial(table_closure_rows, options),
        tables,
        closure_sources,
        CLOSURE_CHUNK,
        TABLE_CLOSURE_SCHEMA,
    )
    paths = in_tasks(
        spark, functools.partial(path_rows, options), tables, roots, PATH_CHUNK, PATHS_SCHEMA
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
    columns, column_ids = column_graph(column_edges, components)
    if sources is not None:
        keys = keys_of(
            sources.select(F.concat_ws(SEP, "ancestor_table", "ancestor_column").alias("name")),
            column_ids,
        )
    else:
        keys = np.arange(columns.edges.n, dtype=np.int64)
    keys = keys[columns.edges.degree()[keys] > 0]
    rows = in_tasks(
        column_edges.sparkSession,
        functools.partial(column_closure_rows, options),
        columns,
        keys,
        CLOSURE_CHUNK,
        COLUMN_CLOSURE_SCHEMA,
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
    column_edges = cut(column_edges_of(column_lineage))
    sources = column_scope(previous, column_edges, options)
    components = previous.nodes.select(F.col("node").alias("id"), "component_id")
    rows, _ = _column_closures(column_edges, components, sources, options)
    seconds = {"column_graph": time.perf_counter() - started}
    logger.info("graph step column_graph: %.1f s", seconds["column_graph"])
    return rows, sources, seconds
