"""The incremental scope: which stored analytics rows a change of edges can affect.

A reverse bounded breadth-first search from the changed edges' sources over the current edges
plus the changed ones finds the ancestors whose closure rows can change (within ``max_depth -
1`` hops) and the roots whose paths can change (within ``max_depth`` hops of an end of a
changed edge); ``incremental_scope`` says why exactly these.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.spark.graph.frames import SEP, column_edges_of, table_edges_of
from lineage_udfs.spark.graph.options import GraphOptions, cut

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


def changed_rows(old: DataFrame, new: DataFrame) -> DataFrame:
    """Rows in one of ``old`` and ``new`` but not the other (both distinct), materialized."""
    return cut(old.subtract(new).unionByName(new.subtract(old)))


def upstream_within(edges: DataFrame, seeds: DataFrame, hops: dict[str, int]) -> DataFrame:
    """Reverse bounded breadth-first search: ``(node, tag)`` for every node that reaches a seed
    of ``tag`` within ``hops[tag]`` hops over the ``(src, dst)`` edges (the seeds included).

    One join per hop with only the previous hop's new nodes as the frontier: cheap while the
    seeds' upstream is small, however large the graph. ``edges`` should be materialized (each
    hop scans them).
    """
    reached = cut(seeds.select("node", "tag").distinct())
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
        found = cut(found)
        size = found.count()
        if not size:
            break
        reached = cut(reached.unionByName(found))
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
    changed = cut(table_edges_of(previous.table_changes))
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
    )
    closure_sources = cut(reached.where("tag = 'closure'").select(F.col("node").alias("ancestor")))
    path_roots = cut(reached.where("tag = 'paths'").select(F.col("node").alias("root")))

    column_sources = column_scope(previous, column_edges, options)

    was = previous.nodes.select("node", F.col("component_id").alias("was"))
    now = components.select(F.col("id").alias("node"), F.col("component_id").alias("now"))
    relabelled = cut(
        was.join(now, "node", "full")
        .where(~F.coalesce("was", "node").eqNullSafe(F.coalesce("now", "node")))
        .select("node", F.coalesce("now", "node").alias("component_id"))
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
    changed_columns = cut(column_edges_of(previous.column_changes))
    column_seeds = changed_columns.select(F.col("src").alias("node"), F.lit("closure").alias("tag"))
    column_reached = upstream_within(
        column_edges.select("src", "dst").unionByName(changed_columns.select("src", "dst")),
        column_seeds,
        {"closure": options.max_depth - 1},
    )
    parts = F.split(F.col("node"), SEP)
    return cut(
        column_reached.select(
            parts.getItem(0).alias("ancestor_table"), parts.getItem(1).alias("ancestor_column")
        )
    )


def changed_components(current: DataFrame, previous: DataFrame | None) -> DataFrame:
    """Components whose signature is not among the previous run's signatures."""
    if previous is None:
        return current.select("component_id")
    return current.join(
        previous.select("component_id", "signature"), ["component_id", "signature"], "left_anti"
    ).select("component_id")
