"""The graph stage: Delta edge tables → analytics (``lineage_udfs.spark.graph``) → Delta.

Incremental by default: only components whose edge set changed since the last run are
recomputed; their old rows are deleted and the new ones appended, and the component
signatures are written last, so a run that dies halfway is simply redone by the next one.
``full_refresh`` recomputes everything.

A run whose input did not change returns at once: the components table's commit records the
edge tables' versions and a digest of the edges the graph is built from. Same versions: nothing
is read; other versions but the same digest (a run that only updated usage stats): only the
digest is computed. Either way nothing is written. Each analytics table gets at most one
commit per run (one MERGE deletes the changed components' rows and inserts their new ones).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

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
GRAPH_INPUTS: dict[str, tuple[str, ...]] = {
    "table_lineage": ("source_table", "target_table", "edge_kind"),
    "column_lineage": (
        "source_table",
        "source_column",
        "target_table",
        "target_column",
        "transformation_type",
    ),
}
"""The edge tables the graph is built from, and the columns of theirs it reads."""
_STATE_KEY = "lineage_graph_inputs"
_DELETE_FLAG = "_delete"


@dataclass
class GraphSummary:
    """What one graph run did."""

    components: int = 0
    components_recomputed: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    step_seconds: dict[str, float] = field(default_factory=dict)
    """Seconds per step: computing components, cycles, nodes, the table closure, the paths and
    the column closure, then writing each table (``write:<table>``)."""


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
    """Delete the rows of ``stale`` components and insert the recomputed ``rows``, in one
    MERGE (one commit); returns the rows inserted."""
    columns = TABLES[table].columns
    markers = stale.select("component_id").distinct()
    source = rows.select(*columns, F.lit(False).alias(_DELETE_FLAG)).unionByName(
        markers.select(
            *[
                F.col(c) if c == "component_id" else F.lit(None).cast(t).alias(c)
                for c, t in ((f.name, f.dataType) for f in TABLES[table].schema)
            ],
            F.lit(True).alias(_DELETE_FLAG),
        )
    )
    version = tables.latest_version(table)
    (
        tables.delta_table(table)
        .alias("t")
        .merge(source.alias("s"), f"t.component_id = s.component_id AND s.{_DELETE_FLAG}")
        .withSchemaEvolution()  # a table written before a column was added to its schema
        .whenMatchedDelete()
        .whenNotMatchedInsert(
            condition=f"NOT s.{_DELETE_FLAG}", values={c: f"s.`{c}`" for c in columns}
        )
        .execute()
    )
    return tables.metrics_since(table, version).get("numTargetRowsInserted", 0)


def _overwrite(
    tables: LineageTables, table: str, rows: DataFrame, metadata: str | None = None
) -> int:
    """Replace the table's content in one Delta commit (``metadata``: the commit's
    userMetadata); returns the rows written."""
    name, path = tables.location(table)
    version = tables.latest_version(table)
    writer = (
        rows.select(*TABLES[table].columns)
        .write.format("delta")
        .mode("overwrite")
        .option("mergeSchema", "true")  # a table written before a column was added
    )
    if metadata is not None:
        writer = writer.option("userMetadata", metadata)
    if name:
        writer.saveAsTable(name)
    else:
        writer.save(path)
    return tables.metrics_since(table, version).get("numOutputRows", 0)


def _input_versions(tables: LineageTables) -> dict[str, int]:
    return {table: tables.latest_version(table) for table in GRAPH_INPUTS}


def _input_digest(tables: LineageTables) -> str:
    """An order-independent digest of the distinct edges the graph reads (two 32-bit hash
    sums and the count per table): equal when the graph's input is equal."""
    parts = []
    for table, columns in GRAPH_INPUTS.items():
        h = F.xxhash64(F.to_json(F.struct(*columns)))
        row = (
            tables.read(table)
            .select(*columns)
            .distinct()
            .agg(
                F.count(F.lit(1)),
                F.sum(h.bitwiseAND(F.lit(0xFFFFFFFF))),
                F.sum(F.shiftrightunsigned(h, 32)),
            )
            .first()
        )
        assert row is not None  # an aggregate without grouping has one row
        parts.append(f"{table}:{row[0]}:{row[1] or 0:x}:{row[2] or 0:x}")
    return ";".join(parts)


def _stored_state(tables: LineageTables) -> dict[str, Any] | None:
    """The input state recorded with the components table's newest graph commit (a
    maintenance commit, e.g. auto compaction, may follow it)."""
    for row in tables.delta_table(COMPONENTS_TABLE).history(5).select("userMetadata").collect():
        try:
            state = json.loads(row["userMetadata"] or "")
        except ValueError:
            continue
        if isinstance(state, dict) and _STATE_KEY in state:
            return state
    return None


def _unchanged(state: dict[str, Any], started: float, why: str) -> GraphSummary:
    summary = GraphSummary(components=int(state.get("components", 0)))
    summary.seconds = time.perf_counter() - started
    logger.info("graph: input unchanged (%s), nothing recomputed or written", why)
    return summary


def run_graph_stage(
    tables: LineageTables, settings: GraphSettings, *, full_refresh: bool = False
) -> GraphSummary:
    """Recompute the analytics tables from ``table_lineage`` and ``column_lineage``."""
    started = time.perf_counter()
    if settings.checkpoint_dir:
        tables.spark.sparkContext.setCheckpointDir(settings.checkpoint_dir)
    tables.ensure_all((*GRAPH_TABLES, COMPONENTS_TABLE))
    versions = _input_versions(tables)
    stored = None if full_refresh else _stored_state(tables)
    if stored is not None and stored[_STATE_KEY] == versions:
        return _unchanged(stored, started, "same edge table versions")
    digest = _input_digest(tables)
    if stored is not None and stored.get("digest") == digest:
        return _unchanged(stored, started, "same edges")
    previous = None if full_refresh else tables.read(COMPONENTS_TABLE)
    if previous is not None and previous.isEmpty():
        full_refresh, previous = True, None  # first run, or nothing to be incremental against
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
    if full_refresh or not stale.isEmpty():
        for table, rows in outputs.items():
            clock = time.perf_counter()
            summary.rows_written[table] = (
                _overwrite(tables, table, rows)
                if full_refresh
                else _replace_components(tables, table, rows, stale)
            )
            summary.step_seconds[f"write:{table}"] = time.perf_counter() - clock
    # signatures last: a run that dies before this point is redone in full by the next one
    components = result.components.select(*TABLES[COMPONENTS_TABLE].columns)
    components = components.localCheckpoint()
    summary.components = components.count()
    state = {_STATE_KEY: versions, "digest": digest, "components": summary.components}
    _overwrite(tables, COMPONENTS_TABLE, components, json.dumps(state, sort_keys=True))
    summary.components_recomputed = stale.join(
        components.select("component_id"), "component_id"
    ).count()
    for table in (*GRAPH_TABLES, COMPONENTS_TABLE):
        tables.compact(table)
    summary.seconds = time.perf_counter() - started
    logger.info(
        "graph: %d components, %d recomputed, rows %s in %.1fs",
        summary.components,
        summary.components_recomputed,
        summary.rows_written,
        summary.seconds,
    )
    return summary
