"""Graph analytics over the lineage edge tables: nodes, components, paths and impact closures.

GraphFrames computes what it has an algorithm for; the rest is DataFrame code:

* **Vertex ids**: table names are mapped once to long ids (``vertex_ids``). GraphFrames'
  algorithms run on those (under Spark 4's ANSI mode some of them fail on string ids), and
  the names are joined back on their results.
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
  vertex); this is semi-naive transitive closure, one join per hop with only the *new* pairs
  of the previous hop as the frontier. Bounded by ``max_depth`` hops and by
  ``max_closure_per_node`` descendants per ancestor (nearest first, then by name): an ancestor
  with more has its rows flagged ``truncated``. A hub read by half the warehouse would
  otherwise make the closure quadratic. The first hop can be restricted to some sources: their
  rows are exactly their rows of the whole closure.
* **Root-to-leaf paths**: bounded breadth-first expansion of simple paths from every root (or
  from some roots), cycle-safe (a path never revisits a node), with at most
  ``max_paths_per_root`` live paths per root per hop; capped or depth-cut paths carry
  ``truncated = true``. (GraphFrames has no simple-path enumeration.)
* **Incremental runs** (``previous``: the edges the last run was computed from, and its stored
  components and nodes): the changed table and column edges are diffed, and a reverse bounded
  BFS from their sources finds the ancestors whose closure rows can change (within
  ``max_depth - 1`` hops) and the roots whose paths can change (within ``max_depth`` hops of
  an end of a changed edge); only those are recomputed, over the whole new edge sets
  (``incremental_scope`` says why exactly these). Components are recomputed whole (cheap);
  cycles and ``lineage_nodes`` for the components whose signature (a hash of their sorted
  edges) is new. Rows kept whose node changed component get the new component id. The result
  equals a full recompute's (tested on random edit sequences).

This module is the only one that knows the vertex/edge column names ``id``/``src``/``dst``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from graphframes import GraphFrame
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

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
    table_closure, lineage_paths, column_closure (the hops of the paths and closures are
    materialized as they go; each table's last join runs when it is written)."""
    recomputed: dict[str, int] = field(default_factory=dict)
    """How many keys were recomputed: ``table_closure`` and ``column_closure`` sources
    (ancestors), ``lineage_paths`` roots (candidates: nodes that may be roots)."""


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


def vertex_ids(edges: DataFrame, options: GraphOptions) -> DataFrame:
    """``(name, id)``: every node of ``edges`` with a long id, assigned once and materialized."""
    names = edges.select(F.col("src").alias("name")).union(edges.select("dst")).distinct()
    return _cut(names.withColumn("id", F.monotonically_increasing_id()), options)


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


def _closure(
    edges: DataFrame, options: GraphOptions, sources: DataFrame | None = None
) -> DataFrame:
    """Semi-naive closure of ``(src, dst)`` edges, from every source or from ``sources``.

    Returns ``(src, dst, distance, truncated)`` with ``src != dst``: for each ``src`` (every
    node with an out-edge, or the ``(src)`` rows of ``sources``) the nodes within
    ``max_depth`` hops at their fewest hops, at most ``max_closure_per_node`` of them (nearest
    first, then by name); ``truncated`` marks every row of a ``src`` that had more. A source's
    rows depend on the edges it reaches only: restricting the first hop to ``sources`` gives
    exactly their rows of the whole closure.
    """
    cap = options.max_closure_per_node
    step = _cut(edges.select("src", "dst").distinct(), options)
    first = step
    if sources is not None:
        first = step.join(sources.select("src").distinct(), "src", "left_semi")
    reach: DataFrame | None = None
    counts: DataFrame | None = None  # (src, reached, capped): sources that reached anything
    frontier = step.select("src", F.col("dst").alias("mid")).where(F.lit(False))
    for depth in range(1, options.max_depth + 1):
        if depth == 1:
            candidates = first
        else:
            candidates = frontier.join(step.select(F.col("src").alias("mid"), "dst"), "mid").select(
                "src", "dst"
            )
        candidates = candidates.where(F.col("src") != F.col("dst")).distinct()
        if reach is not None and counts is not None:
            candidates = candidates.join(
                reach.select("src", "dst"), ["src", "dst"], "left_anti"
            ).join(counts.select("src", "reached"), "src", "left")
        else:
            candidates = candidates.withColumn("reached", F.lit(None).cast("long"))
        ranked = candidates.withColumn(
            "rank", F.row_number().over(Window.partitionBy("src").orderBy("dst"))
        ).withColumn("room", F.lit(cap) - F.coalesce("reached", F.lit(0)))
        ranked = _cut(ranked, options)
        new = ranked.where(F.col("rank") <= F.col("room")).select(
            "src", "dst", F.lit(depth).alias("distance")
        )
        hop_counts = ranked.groupBy("src").agg(
            F.count(F.when(F.col("rank") <= F.col("room"), 1)).alias("added"),
            F.max((F.col("rank") > F.col("room")).cast("int")).alias("over"),
        )
        if counts is None:
            counts = hop_counts.select(
                "src",
                F.col("added").cast("long").alias("reached"),
                (F.col("over") == 1).alias("capped"),
            )
        else:
            counts = counts.join(hop_counts, "src", "full").select(
                "src",
                (F.coalesce("reached", F.lit(0)) + F.coalesce("added", F.lit(0)))
                .cast("long")
                .alias("reached"),
                (F.coalesce("capped", F.lit(False)) | (F.coalesce("over", F.lit(0)) == 1)).alias(
                    "capped"
                ),
            )
        counts = _cut(counts, options)
        if new.isEmpty():
            break
        # a union of materialized pieces: the plan stays one scan per hop
        reach = new if reach is None else reach.unionByName(new)
        # sources that filled their cap stop expanding
        frontier = new.join(counts.where("NOT capped").select("src"), "src").select(
            "src", F.col("dst").alias("mid")
        )
    if reach is None or counts is None:
        return step.select(
            "src", "dst", F.lit(1).alias("distance"), F.lit(False).alias("truncated")
        ).where(F.lit(False))
    return reach.join(counts.select("src", F.col("capped").alias("truncated")), "src").select(
        "src", "dst", "distance", "truncated"
    )


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


def root_to_leaf_paths(
    edges: DataFrame, nodes: DataFrame, options: GraphOptions, roots: DataFrame | None = None
) -> DataFrame:
    """Simple paths from every root (or every root among the ``(root)`` rows of ``roots``) to
    a leaf, at most ``max_depth`` edges long.

    ``nodes`` has ``node``, ``is_root``, ``is_leaf`` and ``component_id`` for every node.
    Returns ``(component_id, root, leaf, path, depth, truncated)``. A path that cannot go on
    because every successor is already on it (a cycle) ends where it stands. A path still
    able to go on at ``max_depth`` hops, or from a root whose live paths were capped at some
    hop, has ``truncated = true``.
    """
    proper = _cut(edges.where(F.col("src") != F.col("dst")).select("src", "dst"), options)
    starts = nodes.where("is_root AND NOT is_leaf")
    if roots is not None:
        starts = starts.join(roots.select(F.col("root").alias("node")), "node", "left_semi")
    live = starts.select(
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


def _ref_table(ref: str) -> Column:
    return F.split(F.col(ref), _SEP).getItem(0)


def column_closure(
    column_lineage: DataFrame,
    components: DataFrame,
    options: GraphOptions,
    sources: DataFrame | None = None,
) -> DataFrame:
    """Column-level closure with DIRECT-only and any-edge reachability told apart.

    Returns ``(component_id, ancestor_table, ancestor_column, descendant_table,
    descendant_column, min_distance, direct_min_distance, truncated)`` for every ancestor
    column, or for the ancestor column refs in the ``(src)`` rows of ``sources``;
    ``direct_min_distance`` is null when the descendant is reachable only through some INDIRECT
    edge (or, on a ``truncated`` ancestor, when the DIRECT-only closure was cut before it).
    A row's ``component_id`` is the table component of its ancestor table (the ancestor table's
    own name when no table edge touches it); the closure follows column edges wherever they
    lead.
    """
    edges = _cut(column_edges_of(column_lineage), options)
    any_reach = _closure(edges, options, sources).withColumnRenamed("distance", "min_distance")
    direct_reach = _closure(edges.where("is_direct"), options, sources)
    direct_capped = direct_reach.where("truncated").select("src").distinct()
    both = (
        any_reach.join(
            direct_reach.select("src", "dst", F.col("distance").alias("direct_min_distance")),
            ["src", "dst"],
            "left",
        )
        .join(direct_capped.select("src", F.lit(True).alias("direct_capped")), "src", "left")
        .withColumn("truncated", F.col("truncated") | F.coalesce("direct_capped", F.lit(False)))
        .withColumn("ancestor_table", _ref_table("src"))
        .join(components.withColumnRenamed("id", "ancestor_table"), "ancestor_table", "left")
    )
    src_parts = F.split(F.col("src"), _SEP)
    dst_parts = F.split(F.col("dst"), _SEP)
    return both.select(
        F.coalesce("component_id", "ancestor_table").alias("component_id"),
        "ancestor_table",
        src_parts.getItem(1).alias("ancestor_column"),
        dst_parts.getItem(0).alias("descendant_table"),
        dst_parts.getItem(1).alias("descendant_column"),
        "min_distance",
        "direct_min_distance",
        "truncated",
    )


# --- incremental scope ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreviousRun:
    """What the last run was computed from, and what it stored.

    Attributes:
        table_lineage: the table edges as of the last run (``source_table``, ``target_table``,
            ``edge_kind``).
        column_lineage: the column edges as of the last run.
        components: the stored ``graph_components`` (``component_id``, ``signature``).
        nodes: the stored ``lineage_nodes`` (``node``, ``component_id``).
    """

    table_lineage: DataFrame
    column_lineage: DataFrame
    components: DataFrame
    nodes: DataFrame


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


def _changed_edges(old: DataFrame, new: DataFrame, options: GraphOptions) -> DataFrame:
    """Rows in one of ``old`` and ``new`` but not the other (both distinct)."""
    return _cut(old.subtract(new).unionByName(new.subtract(old)), options)


def upstream_within(
    edges: DataFrame, seeds: DataFrame, hops: dict[str, int], options: GraphOptions
) -> DataFrame:
    """Reverse bounded breadth-first search: ``(node, tag)`` for every node that reaches a seed
    of ``tag`` within ``hops[tag]`` hops over the ``(src, dst)`` edges (the seeds included).

    One join per hop with only the previous hop's new nodes as the frontier: cheap while the
    seeds' upstream is small, however large the graph.
    """
    reached = _cut(seeds.select("node", "tag").distinct(), options)
    frontier = reached
    reverse = edges.select(F.col("dst").alias("node"), F.col("src").alias("up")).distinct()
    for hop in range(1, max(hops.values(), default=0) + 1):
        live = [tag for tag, budget in hops.items() if budget >= hop]
        found = (
            frontier.where(F.col("tag").isin(live))
            .join(reverse, "node")
            .select(F.col("up").alias("node"), "tag")
            .distinct()
            .join(reached, ["node", "tag"], "left_anti")
        )
        found = _cut(found, options)
        if found.isEmpty():
            break
        reached = _cut(reached.unionByName(found), options)
        frontier = found
    return reached


def incremental_scope(
    previous: PreviousRun,
    table_lineage: DataFrame,
    column_lineage: DataFrame,
    components: DataFrame,
    stale: DataFrame,
    options: GraphOptions,
) -> Scope:
    """Which stored rows can differ from a full refresh's after the edges changed from
    ``previous``'s to these.

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
    triples = ("source_table", "target_table", "edge_kind")

    def table_triples(frame: DataFrame) -> DataFrame:
        return (
            frame.select(*triples)
            .where(F.col("source_table").isNotNull() & F.col("target_table").isNotNull())
            .distinct()
        )

    changed = _changed_edges(
        table_triples(previous.table_lineage), table_triples(table_lineage), options
    ).select(F.col("source_table").alias("src"), F.col("target_table").alias("dst"))
    both = table_edges_of(previous.table_lineage).unionByName(table_edges_of(table_lineage))
    seeds = (
        changed.select(F.col("src").alias("node"), F.lit("closure").alias("tag"))
        .unionByName(changed.select(F.col("src").alias("node"), F.lit("paths").alias("tag")))
        .unionByName(changed.select(F.col("dst").alias("node"), F.lit("paths").alias("tag")))
    )
    reached = upstream_within(
        both.distinct(),
        seeds,
        {"closure": options.max_depth - 1, "paths": options.max_depth},
        options,
    )
    closure_sources = _cut(
        reached.where("tag = 'closure'").select(F.col("node").alias("ancestor")), options
    )
    path_roots = _cut(reached.where("tag = 'paths'").select(F.col("node").alias("root")), options)

    old_columns = column_edges_of(previous.column_lineage)
    new_columns = column_edges_of(column_lineage)
    changed_columns = _changed_edges(old_columns, new_columns, options)
    column_seeds = changed_columns.select(F.col("src").alias("node"), F.lit("closure").alias("tag"))
    column_reached = upstream_within(
        old_columns.select("src", "dst").unionByName(new_columns.select("src", "dst")),
        column_seeds,
        {"closure": options.max_depth - 1},
        options,
    )
    parts = F.split(F.col("node"), _SEP)
    column_sources = _cut(
        column_reached.select(
            parts.getItem(0).alias("ancestor_table"), parts.getItem(1).alias("ancestor_column")
        ),
        options,
    )

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


def node_flags(edges: DataFrame, components: DataFrame) -> DataFrame:
    """``(node, is_root, is_leaf, component_id)`` of every node (self-loops do not count)."""
    proper = edges.where(F.col("src") != F.col("dst"))
    has_out = proper.select(F.col("src").alias("id"), F.lit(True).alias("has_out")).distinct()
    has_in = proper.select(F.col("dst").alias("id"), F.lit(True).alias("has_in")).distinct()
    return (
        components.join(has_out, "id", "left")
        .join(has_in, "id", "left")
        .select(
            F.col("id").alias("node"),
            F.col("has_in").isNull().alias("is_root"),
            F.col("has_out").isNull().alias("is_leaf"),
            "component_id",
        )
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
    ids = vertex_ids(edges, options)
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
        scope = incremental_scope(
            previous, table_lineage, column_lineage, components, stale, options
        )
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
    closure_sources = None
    if scope is not None:
        closure_sources = scope.closure_sources.select(F.col("ancestor").alias("src"))
    closure = _cut(
        _closure(edges, options, closure_sources).join(
            components.withColumnRenamed("id", "src"), "src"
        ),
        options,
    ).select(
        "component_id",
        F.col("src").alias("ancestor"),
        F.col("dst").alias("descendant"),
        F.col("distance").alias("min_distance"),
        "truncated",
    )
    lap("table_closure")
    flags = node_flags(edges, components)
    roots = scope.path_roots if scope is not None else None
    paths = root_to_leaf_paths(edges, flags, options, roots)
    lap("lineage_paths")
    column_sources = None
    if scope is not None:
        column_sources = scope.column_sources.select(
            F.concat_ws(_SEP, "ancestor_table", "ancestor_column").alias("src")
        )
    columns = column_closure(column_lineage, components, options, column_sources)
    lap("column_closure")
    if scope is not None:
        recomputed = {
            "table_closure": scope.closure_sources.count(),
            "column_closure": scope.column_sources.count(),
            "lineage_paths": scope.path_roots.count(),
        }
    else:
        recomputed = {
            "table_closure": edges.select("src").distinct().count(),
            "column_closure": column_edges_of(column_lineage).select("src").distinct().count(),
            "lineage_paths": flags.where("is_root AND NOT is_leaf").count(),
        }
    result = GraphResult(
        recomputed=recomputed,
        components=signatures,
        nodes=nodes,
        paths=paths,
        table_closure=closure,
        column_closure=columns,
        seconds=seconds,
    )
    return result, scope


def changed_components(current: DataFrame, previous: DataFrame | None) -> DataFrame:
    """Components whose signature is not among the previous run's signatures."""
    if previous is None:
        return current.select("component_id")
    return current.join(
        previous.select("component_id", "signature"), ["component_id", "signature"], "left_anti"
    ).select("component_id")
