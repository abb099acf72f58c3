"""The graph stage: Delta edge tables → analytics (``lineage_udfs.spark.graph``) → Delta.

Incremental by default: only components whose edge set changed since the last run are
recomputed; their old rows are deleted and the new ones appended, and the component
signatures are written last, so a run that dies halfway is simply redone by the next one.
``full_refresh`` recomputes everything.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from lineage_udfs.settings import GraphSettings
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.graph import GraphOptions, GraphResult, analyze
from lineage_udfs.spark.schemas import TABLES

logger = logging.getLogger(__name__)

GRAPH_TABLES: tuple[str, ...] = (
    "lineage_nodes",
    "lineage_paths",
    "table_closure",
    "column_closure",
)
COMPONENTS_TABLE = "graph_components"


@dataclass
class GraphSummary:
    """What one graph run did."""

    components: int = 0
    components_recomputed: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    step_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds per step: computing components, cycles, nodes and the table closure, then
    writing each table (``write:<table>``; the paths and the column closure are computed
    while they are written)."""


def graph_options(settings: GraphSettings) -> GraphOptions:
    """The algorithm knobs from settings, explicitly."""
    return GraphOptions(
        max_depth=settings.max_depth,
        max_paths_per_root=settings.max_paths_per_root,
        max_cc_iterations=settings.max_cc_iterations,
        max_closure_per_node=settings.max_closure_per_node,
        reliable_checkpoints=settings.reliable_checkpoints,
    )


def _replace_components(
    tables: LineageTables, table: str, rows: DataFrame, stale: DataFrame
) -> int:
    """Delete the rows of ``stale`` components, then append the recomputed ``rows``."""
    tables.ensure(table)
    (
        tables.delta_table(table)
        .alias("t")
        .merge(
            stale.select("component_id").distinct().alias("s"), "t.component_id = s.component_id"
        )
        .whenMatchedDelete()
        .execute()
    )
    version = tables.latest_version(table)
    # merge_schema: a table written before a column was added to its schema gets the column
    tables.append(table, rows.select(*TABLES[table].columns), merge_schema=True)
    return tables.metrics_since(table, version).get("numOutputRows", 0)


def _overwrite(tables: LineageTables, table: str, rows: DataFrame) -> None:
    """Replace the table's content in one Delta commit."""
    name, path = tables.location(table)
    writer = rows.write.format("delta").mode("overwrite")
    if name:
        writer.saveAsTable(name)
    else:
        writer.save(path)


def run_graph_stage(
    tables: LineageTables, settings: GraphSettings, *, full_refresh: bool = False
) -> GraphSummary:
    """Recompute the analytics tables from ``table_lineage`` and ``column_lineage``."""
    started = time.perf_counter()
    if settings.checkpoint_dir:
        tables.spark.sparkContext.setCheckpointDir(settings.checkpoint_dir)
    tables.ensure(COMPONENTS_TABLE)
    previous = None if full_refresh else tables.read(COMPONENTS_TABLE)
    if previous is not None and previous.isEmpty():
        full_refresh, previous = True, None  # first run, or nothing to be incremental against
    if full_refresh:
        for table in (*GRAPH_TABLES, COMPONENTS_TABLE):
            tables.ensure(table)
            tables.delta_table(table).delete()
    result: GraphResult
    result, stale = analyze(
        tables.read("table_lineage"),
        tables.read("column_lineage"),
        graph_options(settings),
        previous_components=previous,
    )
    summary = GraphSummary()
    outputs = {
        "lineage_nodes": result.nodes,
        "lineage_paths": result.paths,
        "table_closure": result.table_closure,
        "column_closure": result.column_closure,
    }
    summary.step_seconds.update(result.seconds)
    for table, rows in outputs.items():
        clock = time.perf_counter()
        summary.rows_written[table] = _replace_components(tables, table, rows, stale)
        summary.step_seconds[f"write:{table}"] = time.perf_counter() - clock
    # signatures last: a run that dies before this point is redone in full by the next one
    components = result.components.select(*TABLES[COMPONENTS_TABLE].columns)
    components = components.localCheckpoint()
    _overwrite(tables, COMPONENTS_TABLE, components)
    summary.components = components.count()
    summary.components_recomputed = stale.join(
        components.select("component_id"), "component_id"
    ).count()
    summary.seconds = time.perf_counter() - started
    logger.info(
        "graph: %d components, %d recomputed, rows %s in %.1fs",
        summary.components,
        summary.components_recomputed,
        summary.rows_written,
        summary.seconds,
    )
    return summary
