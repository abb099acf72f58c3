"""Graph analytics over the lineage edge tables: nodes, components, paths and impact closures.

Everything here is DataFrame-native and partitions its work by connected component:

* **Connected components**: min-label propagation with pointer jumping over the undirected
  table graph (each round takes the smallest label among a node's neighbours, then jumps to
  its label's label), checkpointed every round. Converges in O(log diameter) to O(diameter)
  rounds; a component's id is its smallest node name, so it is readable and deterministic.
  GraphFrames' ``connectedComponents`` would be the library choice, but its jar is not
  reachable from this project's machines (see the note in README "Graph analytics"); the
  algorithm is the same family (hash-min with shortcutting).
* **Closures** (``table_closure``, ``column_closure``): semi-naive transitive closure, one
  join per hop with only the *new* pairs of the previous hop as the frontier, the component
  id in every join key so shuffles stay within a component. Bounded by ``max_depth`` hops.
  GraphFrames' BFS returns only globally shortest paths between two sets and all-landmark
  ``shortestPaths`` is quadratic in the node count, so neither fits "every pair within 20 hops".
* **Root-to-leaf paths**: bounded breadth-first expansion of simple paths from every root,
  cycle-safe (a path never revisits a node), with at most ``max_paths_per_root`` live paths
  per root per hop; capped or depth-cut paths carry ``truncated = true``.
* **Incremental runs**: each component has a signature (a hash of its sorted edges). Only
  components whose signature is new are recomputed; rows of vanished or changed components
  are replaced. A full recompute gives the same tables (tested).

This module is the only one that knows the vertex/edge column names ``id``/``src``/``dst``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

logger = logging.getLogger(__name__)

DIRECT = "DIRECT"


@dataclass(frozen=True, slots=True)
class GraphOptions:
    """Knobs of the graph stage, passed explicitly (never library defaults).

    Attributes:
        max_depth: longest path / closure distance in hops (1..20).
        max_paths_per_root: live partial paths kept per root at each hop.
        max_cc_iterations: bound on connected-component rounds.
        reliable_checkpoints: use ``checkpoint()`` (needs a checkpoint dir; survives executor
            loss on a cluster) instead of ``localCheckpoint()``.
    """

    max_depth: int = 20
    max_paths_per_root: int = 1000
    max_cc_iterations: int = 100
    reliable_checkpoints: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= 20:
            raise ValueError(f"max_depth must be within 1..20, got {self.max_depth}")
        if self.max_paths_per_root < 1:
            raise ValueError("max_paths_per_root must be >= 1")


@dataclass(frozen=True, slots=True)
class GraphResult:
    """The analytics tables of one run (DataFrames, not yet written)."""

    components: DataFrame
    nodes: DataFrame
    paths: DataFrame
    table_closure: DataFrame
    column_closure: DataFrame


def _cut(df: DataFrame, options: GraphOptions) -> DataFrame:
    """Materialize and truncate the plan so iterative loops do not grow it without bound."""
    return df.checkpoint() if options.reliable_checkpoints else df.localCheckpoint()


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


def connected_components(edges: DataFrame, options: GraphOptions) -> DataFrame:
    """``(id, component_id)`` for every node of ``edges`` (undirected connectivity).

    The component id is the smallest node name of the component.
    """
    undirected = edges.select("src", "dst").union(edges.select(F.col("dst"), F.col("src")))
    undirected = _cut(undirected.where(F.col("src") != F.col("dst")).distinct(), options)
    nodes = edges.select(F.col("src").alias("id")).union(edges.select(F.col("dst"))).distinct()
    labels = _cut(nodes.select("id", F.col("id").alias("label")), options)
    for round_no in range(1, options.max_cc_iterations + 1):
        # smallest label among the node itself and its neighbours
        neighbour_min = (
            undirected.join(labels.withColumnRenamed("id", "src"), "src")
            .groupBy(F.col("dst").alias("id"))
            .agg(F.min("label").alias("nlabel"))
        )
        hooked = labels.join(neighbour_min, "id", "left").select(
            "id", F.least("label", F.coalesce("nlabel", "label")).alias("label")
        )
        # pointer jumping: a node adopts its label's label (shortcutting)
        jumped = hooked.join(
            hooked.select(F.col("id").alias("label"), F.col("label").alias("label2")),
            "label",
            "left",
        ).select("id", F.least("label", F.coalesce("label2", "label")).alias("label"))
        jumped = _cut(jumped, options)
        changed = jumped.join(labels.withColumnRenamed("label", "old"), "id").where(
            F.col("label") != F.col("old")
        )
        if changed.isEmpty():
            logger.info("connected components converged after %d rounds", round_no)
            return jumped.withColumnRenamed("label", "component_id")
        labels = jumped
    raise RuntimeError(
        f"connected components did not converge in {options.max_cc_iterations} rounds"
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


def _closure(edges: DataFrame, options: GraphOptions) -> DataFrame:
    """Semi-naive closure of ``(component_id, src, dst)``: ``(component_id, src, dst, distance)``.

    Pairs ``(x, x)`` appear when ``x`` lies on a cycle (distance = the cycle's length).
    """
    step = edges.select("component_id", "src", "dst").distinct()
    step = _cut(step, options)
    reach = step.withColumn("distance", F.lit(1))
    frontier = reach
    for depth in range(2, options.max_depth + 1):
        nxt = (
            frontier.select("component_id", "src", F.col("dst").alias("mid"))
            .join(
                step.select("component_id", F.col("src").alias("mid"), "dst"),
                ["component_id", "mid"],
            )
            .select("component_id", "src", "dst")
            .distinct()
            .join(
                reach.select("component_id", "src", "dst"),
                ["component_id", "src", "dst"],
                "left_anti",
            )
            .withColumn("distance", F.lit(depth))
        )
        nxt = _cut(nxt, options)
        if nxt.isEmpty():
            break
        reach = _cut(reach.unionByName(nxt), options)
        frontier = nxt
    return reach


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


def root_to_leaf_paths(edges: DataFrame, nodes: DataFrame, options: GraphOptions) -> DataFrame:
    """Simple paths from every root to a leaf, at most ``max_depth`` edges long.

    Returns ``(component_id, root, leaf, path, depth, truncated)``. A path that cannot go on
    because every successor is already on it (a cycle) ends where it stands. A path still
    able to go on at ``max_depth`` hops, or from a root whose live paths were capped at some
    hop, has ``truncated = true``.
    """
    proper = _cut(edges.where(F.col("src") != F.col("dst")).select("src", "dst"), options)
    live = nodes.where("is_root AND NOT is_leaf").select(
        "component_id",
        F.col("node").alias("root"),
        F.array(F.col("node")).alias("path"),
        F.col("node").alias("last"),
    )
    capped_roots = None
    done: DataFrame | None = None
    cap = options.max_paths_per_root
    for depth in range(1, options.max_depth + 1):
        extended = (
            live.join(proper, F.col("last") == F.col("src"))
            .where(~F.array_contains("path", F.col("dst")))
            .select(
                "component_id",
                "root",
                F.concat("path", F.array(F.col("dst"))).alias("path"),
                F.col("dst").alias("last"),
            )
        )
        # paths whose every successor is already on the path stop here (cycle)
        stuck = live.join(
            extended.select("root", F.slice("path", 1, depth).alias("path")).distinct(),
            ["root", "path"],
            "left_anti",
        ).where(F.size("path") > 1)
        ranked = extended.withColumn(
            "rn", F.row_number().over(Window.partitionBy("root").orderBy("path"))
        )
        over_cap = ranked.where(F.col("rn") > cap).select("root").distinct()
        capped_roots = over_cap if capped_roots is None else capped_roots.union(over_cap).distinct()
        kept = _cut(ranked.where(F.col("rn") <= cap).drop("rn"), options)
        is_leaf = nodes.select(F.col("node").alias("last"), "is_leaf")
        kept = kept.join(is_leaf, "last")
        finished = kept.where("is_leaf").select(
            "component_id", "root", "path", F.lit(False).alias("cut")
        )
        finished = finished.unionByName(
            stuck.select("component_id", "root", "path", F.lit(False).alias("cut"))
        )
        done = finished if done is None else done.unionByName(finished)
        live = kept.where("NOT is_leaf").drop("is_leaf")
        if depth == options.max_depth:
            done = done.unionByName(
                live.select("component_id", "root", "path", F.lit(True).alias("cut"))
            )
        done = _cut(done, options)
        if live.isEmpty():
            break
    if done is None:  # pragma: no cover - max_depth >= 1 always runs one hop
        raise RuntimeError("no hop ran")
    # at most `cap` paths per root in all: the shortest first, then in path order
    ranked = done.withColumn(
        "rn", F.row_number().over(Window.partitionBy("root").orderBy(F.size("path"), "path"))
    )
    over_cap = ranked.where(F.col("rn") > cap).select("root").distinct()
    capped_roots = over_cap if capped_roots is None else capped_roots.union(over_cap).distinct()
    truncated_roots = capped_roots.select("root", F.lit(True).alias("root_capped"))
    return (
        ranked.where(F.col("rn") <= cap)
        .join(truncated_roots, "root", "left")
        .select(
            "component_id",
            "root",
            F.element_at("path", -1).alias("leaf"),
            "path",
            (F.size("path") - 1).alias("depth"),
            (F.col("cut") | F.coalesce("root_capped", F.lit(False))).alias("truncated"),
        )
    )


# --- column graph --------------------------------------------------------------------------


def column_closure(
    column_lineage: DataFrame, components: DataFrame, options: GraphOptions
) -> DataFrame:
    """Column-level closure with DIRECT-only and any-edge reachability told apart.

    Returns ``(component_id, ancestor_table, ancestor_column, descendant_table,
    descendant_column, min_distance, direct_min_distance)``; ``direct_min_distance`` is null
    when the descendant is reachable only through some INDIRECT edge. Column edges are keyed
    by the table component of their target table.
    """
    _require(
        column_lineage,
        ("source_table", "source_column", "target_table", "target_column", "transformation_type"),
        "column_lineage",
    )
    sep = "\u0001"  # column refs as one string: table SEP column (no table or column holds it)

    def ref(table: str, column: str) -> Column:
        return F.concat_ws(sep, F.col(table), F.col(column))

    keyed = (
        column_lineage.select(
            ref("source_table", "source_column").alias("src"),
            ref("target_table", "target_column").alias("dst"),
            (F.col("transformation_type") == DIRECT).alias("is_direct"),
            "target_table",
        )
        .join(components.withColumnRenamed("id", "target_table"), "target_table", "left")
        .withColumn("component_id", F.coalesce("component_id", "target_table"))
        .drop("target_table")
    )
    keyed = _cut(keyed, options)
    any_reach = _closure(keyed, options).withColumnRenamed("distance", "min_distance")
    direct_reach = _closure(keyed.where("is_direct"), options).withColumnRenamed(
        "distance", "direct_min_distance"
    )
    both = any_reach.join(direct_reach, ["component_id", "src", "dst"], "left").where(
        F.col("src") != F.col("dst")
    )
    src_parts = F.split(F.col("src"), sep)
    dst_parts = F.split(F.col("dst"), sep)
    return both.select(
        "component_id",
        src_parts.getItem(0).alias("ancestor_table"),
        src_parts.getItem(1).alias("ancestor_column"),
        dst_parts.getItem(0).alias("descendant_table"),
        dst_parts.getItem(1).alias("descendant_column"),
        "min_distance",
        "direct_min_distance",
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
    previous_components: DataFrame | None = None,
) -> tuple[GraphResult, DataFrame]:
    """Compute the analytics tables for the components that changed since the last run.

    Args:
        table_lineage: rows with ``source_table``, ``target_table``, ``edge_kind``.
        column_lineage: rows with source/target table and column and ``transformation_type``.
        options: algorithm knobs.
        previous_components: the ``components`` table of the last run (``component_id``,
            ``signature``), or None for a full recompute.

    Returns:
        The tables restricted to changed components (``components`` covers all of them) and
        ``(component_id)`` of every component whose stored rows must be replaced: changed,
        new, or gone since the last run.
    """
    edges = _cut(table_edges_of(table_lineage), options)
    components = _cut(connected_components(edges, options), options)
    signatures = _cut(component_signatures(table_lineage, components), options)
    changed = _cut(changed_components(signatures, previous_components), options)
    stale = changed
    if previous_components is not None:
        gone = previous_components.select("component_id").join(
            signatures.select("component_id"), "component_id", "left_anti"
        )
        stale = _cut(changed.union(gone).distinct(), options)
    scoped = components.join(changed, "component_id")
    keyed = edges.join(scoped.withColumnRenamed("id", "src"), "src")
    reach = _cut(_closure(keyed, options), options)
    cycles = reach.where(F.col("src") == F.col("dst")).select(F.col("src").alias("id"))
    nodes = _cut(
        nodes_of(
            edges.join(scoped.select(F.col("id").alias("src")), "src"),
            scoped,
            signatures,
            cycles,
            _node_kinds(table_lineage),
        ),
        options,
    )
    closure = reach.where(F.col("src") != F.col("dst")).select(
        "component_id",
        F.col("src").alias("ancestor"),
        F.col("dst").alias("descendant"),
        F.col("distance").alias("min_distance"),
    )
    scoped_columns = column_lineage.join(
        scoped.select(F.col("id").alias("target_table")), "target_table"
    )
    result = GraphResult(
        components=signatures,
        nodes=nodes,
        paths=root_to_leaf_paths(keyed, nodes, options),
        table_closure=closure,
        column_closure=column_closure(scoped_columns, scoped, options),
    )
    return result, stale


def changed_components(current: DataFrame, previous: DataFrame | None) -> DataFrame:
    """Components whose signature is not among the previous run's signatures."""
    if previous is None:
        return current.select("component_id")
    return current.join(
        previous.select("component_id", "signature"), ["component_id", "signature"], "left_anti"
    ).select("component_id")
