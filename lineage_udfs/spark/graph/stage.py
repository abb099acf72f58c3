"""The graph stage: Delta edge tables → analytics (``graph.analyze``) → Delta.

Incremental by default (``graph.state`` reads what changed since the last run and what it
stored). Each analytics table gets at most one commit per run: one MERGE deletes the stored
rows that differ from the recomputed ones and inserts the new ones; a table whose rows did not
change gets none. The components table is written last, its commit recording the input state,
so a run that dies halfway is detected and redone in full by the next one.

A run whose input did not change returns at once: same edge table versions: nothing is read;
other versions but no edge that appeared or went (a run that only updated usage stats): only
the change, or where the feed cannot say, a digest of the edges is computed. Either way
nothing is written.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.core.errors import LineageError
from lineage_udfs.settings import GraphSettings
from lineage_udfs.spark.graph.analyze import analyze, analyze_columns
from lineage_udfs.spark.graph.options import GraphOptions, GraphResult, graph_options
from lineage_udfs.spark.graph.scope import PreviousRun, Scope
from lineage_udfs.spark.graph.state import (
    ALIASES_KEY,
    COMPONENTS_TABLE,
    GRAPH_INPUTS,
    GRAPH_TABLES,
    STATE_KEY,
    changes_from_feed,
    input_digest,
    input_versions,
    previous_run,
    record_state,
    stored_state,
)
from lineage_udfs.spark.graph.stitch import names_digest, stitch_names, stitched
from lineage_udfs.spark.graph.tags import TagSummary
from lineage_udfs.spark.runtime.concurrency import in_background, run_concurrently
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Overwrite, Replace, replacement

logger = logging.getLogger(__name__)


@dataclass
class GraphSummary:
    """What one graph run did."""

    components: int = 0
    components_recomputed: int = 0
    closure_sources_recomputed: int = 0
    """Ancestor tables whose ``table_closure`` rows were recomputed (all on a full refresh)."""
    column_sources_recomputed: int = 0
    """Ancestor columns whose ``column_closure`` rows were recomputed."""
    path_roots_recomputed: int = 0
    """Nodes whose ``lineage_paths`` were recomputed (as roots)."""
    full_refresh: bool = False
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    step_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds per step: computing components, cycles, nodes, the table closure, the paths and
    the column closure, then writing each table (``write:<table>``)."""
    tags: TagSummary | None = None
    """The tag propagation after the stage (``graph.tags``; None when ``tags.enabled`` is off)."""


def _unchanged(state: dict[str, Any], started: float, why: str) -> GraphSummary:
    summary = GraphSummary(components=int(state.get("components", 0)))
    summary.seconds = time.perf_counter() - started
    logger.info("graph: input unchanged (%s), nothing recomputed or written", why)
    return summary


def _incremental_writes(
    result: GraphResult, scope: Scope
) -> dict[str, tuple[DataFrame, DataFrame, DataFrame | None]]:
    """Per analytics table: (recomputed rows, keys they replace, relabelled keys)."""
    moved = scope.relabelled
    return {
        "lineage_nodes": (result.nodes, scope.components, None),
        "lineage_paths": (
            result.paths,
            scope.path_roots,
            moved.withColumnRenamed("node", "root"),
        ),
        "table_closure": (
            result.table_closure,
            scope.closure_sources,
            moved.withColumnRenamed("node", "ancestor"),
        ),
        "column_closure": (
            result.column_closure,
            scope.column_sources,
            moved.withColumnRenamed("node", "ancestor_table"),
        ),
    }


def _replace(
    tables: LineageTables,
    table: str,
    rows: DataFrame,
    replaced: DataFrame,
    relabelled: DataFrame | None = None,
) -> int:
    """Replace the stored rows of the ``replaced`` keys by ``rows`` (``storage.writes.
    replacement``) in one commit; returns the rows inserted."""
    change = Replace(replacement(tables, table, rows, replaced, relabelled))
    return tables.write(table, change).get("numTargetRowsInserted", 0)


def _fewer_edges(tables: LineageTables, limit: int) -> bool:
    """Whether the edge tables hold fewer than ``limit`` rows together (Delta answers the
    counts from its log's file statistics)."""
    if limit <= 0:
        return False
    return sum(tables.read(table).count() for table in GRAPH_INPUTS) < limit


EDGES_PER_DRIVER_GIB = 11_000_000
"""Edges (``table_lineage`` plus ``column_lineage`` rows) allowed per GiB of
``spark.driver.memory`` when ``graph.max_edges`` is 0: the largest graph measured to run with
a 1 GiB driver heap (1M table and 10M column edges, bench/results/graph.md), scaled linearly."""
DEFAULT_DRIVER_MEMORY = "1g"
"""Spark's default ``spark.driver.memory``."""


class GraphTooLargeError(LineageError):
    """The edge tables hold more edges than the graph stage's bound (``graph.max_edges``)."""


def edge_bound(spark: SparkSession, settings: GraphSettings) -> tuple[int, str]:
    """The most edges the stage takes and where that figure comes from: ``graph.max_edges``,
    or when it is 0 ``EDGES_PER_DRIVER_GIB`` per GiB of ``spark.driver.memory``."""
    if settings.max_edges:
        return settings.max_edges, f"graph.max_edges = {settings.max_edges:,}"
    memory = spark.sparkContext.getConf().get("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    size = int(jvm.org.apache.spark.network.util.JavaUtils.byteStringAsBytes(memory))
    bound = size * EDGES_PER_DRIVER_GIB // 2**30
    return bound, (
        f"graph.max_edges = 0: {EDGES_PER_DRIVER_GIB:,} per GiB of spark.driver.memory {memory}"
    )


def check_edge_bound(tables: LineageTables, settings: GraphSettings) -> int:
    """The edges the stage would take (``table_lineage`` plus ``column_lineage`` rows: Delta
    counts them from its log's file statistics, reading no data file); raises when they
    exceed ``edge_bound``.

    Raises:
        GraphTooLargeError: one line naming the setting.
    """
    edges = sum(tables.read(t).count() for t in GRAPH_INPUTS if tables.exists(t))
    bound, source = edge_bound(tables.spark, settings)
    if edges > bound:
        raise GraphTooLargeError(
            f"graph: {edges:,} edges (table_lineage plus column_lineage rows) exceed the"
            f" stage's bound of {bound:,} ({source}); raise graph.max_edges with the driver's"
            ' and executors\' memory (docs/graph.md, "How large a graph")'
        )
    return edges


def _column_closures_only(
    tables: LineageTables,
    previous: PreviousRun,
    options: GraphOptions,
    versions: dict[str, int],
    digest: str | None,
    started: float,
) -> GraphSummary:
    """Only column edges changed: the column closures they can affect are recomputed; the
    components, nodes, paths and table closures stand (no commit to their tables)."""
    rows, sources, seconds = analyze_columns(tables.read("column_lineage"), previous, options)
    summary = GraphSummary()
    summary.step_seconds.update(seconds)
    clock = time.perf_counter()
    summary.rows_written["column_closure"] = _replace(tables, "column_closure", rows, sources)
    tables.compact("column_closure")
    summary.step_seconds["write:column_closure"] = time.perf_counter() - clock
    _, summary.components = record_state(
        tables, previous.components, versions, digest or input_digest(tables, versions)
    )
    summary.column_sources_recomputed = sources.count()
    summary.seconds = time.perf_counter() - started
    logger.info(
        "graph: %d components, the table edges unchanged; closure sources recomputed: %d"
        " columns; rows %s in %.1fs",
        summary.components,
        summary.column_sources_recomputed,
        summary.rows_written,
        summary.seconds,
    )
    return summary


def run_graph_stage(
    tables: LineageTables, settings: GraphSettings, *, full_refresh: bool = False
) -> GraphSummary:
    """Recompute the analytics tables from ``table_lineage`` and ``column_lineage``.

    Intermediate frames are checkpointed where ``runtime.checkpoints`` says: reliably in the
    run folder the caller put in place (``run_checkpoints``; the jobs do it when
    ``execution.checkpoint_dir`` is set), else locally."""
    started = time.perf_counter()
    check_edge_bound(tables, settings)
    options = graph_options(settings)
    tables.ensure_all((*GRAPH_TABLES, COMPONENTS_TABLE))
    versions = input_versions(tables)
    names = stitch_names(tables, settings.alias_min_confidence)
    aliases = names_digest(names)
    stored = None if full_refresh else stored_state(tables)
    if stored is not None and stored.get(ALIASES_KEY, "") != aliases:
        logger.info("graph: full refresh: the dataset aliases that hold changed")
        stored = None
    if stored is not None and stored[STATE_KEY] == versions:
        return _unchanged(stored, started, "same edge table versions")
    digest, changes = None, None
    if stored is not None:  # else: nothing to compare with; the digest is computed meanwhile
        changes = changes_from_feed(tables, stored, versions)
        if changes is not None:
            if changes.empty:
                return _unchanged(stored, started, "same edges")
            digest = changes.digest
        else:
            digest = input_digest(tables, versions)
            if stored.get("digest") == digest:
                return _unchanged(stored, started, "same edges")
    previous = None if full_refresh else previous_run(tables, stored, changes)
    if names:  # the incremental scope is told in stored spellings: recompute over identities
        previous = None
    if previous is not None and previous.tables_unchanged:
        return _column_closures_only(tables, previous, options, versions, digest, started)
    if previous is not None and _fewer_edges(tables, settings.incremental_min_edges):
        logger.info(
            "graph: full refresh: fewer than %d edges (graph.incremental_min_edges)",
            settings.incremental_min_edges,
        )
        previous = None
    result, scope = analyze(
        stitched(tables.read("table_lineage"), names, "source_table", "target_table"),
        stitched(tables.read("column_lineage"), names, "source_table", "target_table"),
        options,
        previous=previous,
    )
    summary = GraphSummary(full_refresh=scope is None)
    summary.step_seconds.update(result.seconds)
    full = {
        "lineage_nodes": result.nodes,
        "lineage_paths": result.paths,
        "table_closure": result.table_closure,
        "column_closure": result.column_closure,
    }
    partial = _incremental_writes(result, scope) if scope is not None else {}

    def write(table: str) -> None:
        clock = time.perf_counter()
        if table in partial:
            rows, replaced, relabelled = partial[table]
            summary.rows_written[table] = _replace(tables, table, rows, replaced, relabelled)
        else:
            written = tables.write(table, Overwrite(full[table]))
            summary.rows_written[table] = written.get("numOutputRows", 0)
        tables.compact(table)
        summary.step_seconds[f"write:{table}"] = time.perf_counter() - clock

    # four tables, each computed and written by its own jobs, and the input's digest where it
    # is not known yet: at once
    with in_background(lambda: digest or input_digest(tables, versions)) as digesting:
        run_concurrently([functools.partial(write, table) for table in GRAPH_TABLES])
    digest = digesting.result()
    components, summary.components = record_state(
        tables, result.components, versions, digest, aliases=aliases
    )
    if scope is None:
        summary.components_recomputed = summary.components
    else:
        summary.components_recomputed = scope.components.join(
            components.select("component_id"), "component_id"
        ).count()
    summary.closure_sources_recomputed = result.recomputed.get("table_closure", 0)
    summary.column_sources_recomputed = result.recomputed.get("column_closure", 0)
    summary.path_roots_recomputed = result.recomputed.get("lineage_paths", 0)
    summary.seconds = time.perf_counter() - started
    logger.info(
        "graph: %d components, %d recomputed; closure sources recomputed: %d tables, %d columns;"
        " %d path roots; rows %s in %.1fs%s",
        summary.components,
        summary.components_recomputed,
        summary.closure_sources_recomputed,
        summary.column_sources_recomputed,
        summary.path_roots_recomputed,
        summary.rows_written,
        summary.seconds,
        " (full refresh)" if summary.full_refresh else "",
    )
    return summary
