"""The graph stage: Delta edge tables → analytics (``lineage_udfs.spark.graph``) → Delta.

Incremental by default. The components table's commit records the edge tables' versions (and
ids) the stored analytics were computed from, and the analytics tables' versions after the
run. The next run reads which edges appeared or went since those versions from the edge tables'
change data feed (where the feed cannot say, it reads the edges of those versions by Delta time
travel and diffs them with the current ones) and recomputes only the rows a changed edge can
affect (``graph.incremental_scope``: the closures of the ancestors within reach of a changed
edge, the paths of the roots within reach, ``lineage_nodes`` of the components whose edges
changed, and the component id of rows whose component merged or split). It falls back to a
full refresh, with one INFO line, when the recorded state is missing, the last run did not
finish (an analytics table moved on since the recorded version), an edge table was replaced,
or time travel fails (versions vacuumed). ``full_refresh`` recomputes everything.

Each analytics table gets at most one commit per run: one MERGE deletes the stored rows that
differ from the recomputed ones and inserts the new ones; a table whose rows did not change
gets none. The components table is written last, so a run that dies halfway is detected and
redone in full by the next one.

A run whose input did not change returns at once: same edge table versions: nothing is read;
other versions but no edge that appeared or went (a run that only updated usage stats): only
the change, or where the feed cannot say, a digest of the edges is computed. Either way
nothing is written.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_udfs.logging_setup import one_line
from lineage_udfs.settings import GraphSettings
from lineage_udfs.spark.concurrency import in_background, run_concurrently
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.graph import (
    GraphOptions,
    GraphResult,
    PreviousRun,
    Scope,
    analyze,
    analyze_columns,
    changed_rows,
)
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


def graph_options(settings: GraphSettings) -> GraphOptions:
    """The algorithm knobs from settings, explicitly."""
    return GraphOptions(
        max_depth=settings.max_depth,
        max_paths_per_root=settings.max_paths_per_root,
        max_cc_iterations=settings.max_cc_iterations,
        max_closure_per_node=settings.max_closure_per_node,
        reliable_checkpoints=settings.reliable_checkpoints,
    )


def _keyed(
    rows: DataFrame, keys: DataFrame, key: list[str], how: str, *, broadcast: bool = False
) -> DataFrame:
    """``rows`` joined with the distinct ``keys`` on the ``key`` columns, nulls equal to
    nulls (a column ref may have no column name); keeps the non-key columns of ``keys``.
    ``broadcast``: ``keys`` are few (the rows are scanned, not shuffled)."""
    right = keys.distinct().select(*[F.col(c).alias(f"_k_{c}") for c in keys.columns])
    if broadcast:
        right = F.broadcast(right)
    condition = None
    for c in key:
        term = rows[c].eqNullSafe(right[f"_k_{c}"])
        condition = term if condition is None else condition & term
    joined = rows.join(right, condition, how)
    if how in ("left_semi", "left_anti"):
        return joined
    extra = [F.col(f"_k_{c}").alias(c) for c in keys.columns if c not in key]
    return joined.select(*rows.columns, *extra)


BROADCAST_KEYS = 200_000
"""Keys of a partial recompute broadcast to the stored rows at most (the stored table is
scanned, not shuffled)."""


def _write_changes(
    tables: LineageTables,
    table: str,
    rows: DataFrame,
    replaced: DataFrame,
    relabelled: DataFrame | None = None,
) -> int:
    """Bring the stored rows of ``table`` in line with a partial recompute, in one MERGE (one
    commit; none when nothing differs); returns the rows inserted.

    ``rows`` are the recomputed rows of the keys in ``replaced`` (a frame of some of the
    table's columns): the stored rows of those keys are replaced by them. ``relabelled``
    (``(<key>, component_id)``, a key column and the new id) moves the other stored rows of
    those keys to that component. Only rows that differ are deleted and inserted.
    """
    spec = TABLES[table]
    columns = spec.columns
    stored = tables.read(table)
    key = replaced.columns
    few = replaced.count() <= BROADCAST_KEYS
    old = _keyed(stored, replaced, key, "left_semi", broadcast=few)
    new = rows.select(*columns).localCheckpoint()  # read twice below
    if relabelled is not None:
        moved = relabelled.columns[0]
        moving = _keyed(
            _keyed(
                stored, relabelled, [moved], "left_semi",
                broadcast=relabelled.count() <= BROADCAST_KEYS,
            ),
            replaced, key, "left_anti", broadcast=few,
        )  # fmt: skip
        old = old.unionByName(moving)
        new = new.unionByName(
            _keyed(moving.drop("component_id"), relabelled, [moved], "inner").select(*columns)
        )
    # the rows in one of the two but not the other, in one aggregation (two EXCEPTs are a
    # dozen more Spark jobs): a row only stored is deleted, a row only recomputed inserted
    side = "_side"
    source = (
        old.select(*columns, F.lit(True).alias(side))
        .unionByName(new.select(*columns, F.lit(False).alias(side)))
        .groupBy(*columns)
        .agg(F.min(side).alias("_first"), F.max(side).alias(_DELETE_FLAG))
        .where(F.col("_first") == F.col(_DELETE_FLAG))
        .drop("_first")
        .localCheckpoint()
    )
    if source.isEmpty():
        return 0
    matches = " AND ".join(f"t.`{c}` <=> s.`{c}`" for c in spec.keys)
    version = tables.latest_version(table)
    (
        tables.delta_table(table)
        .alias("t")
        .merge(source.alias("s"), f"{matches} AND s.{_DELETE_FLAG}")
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


def _edge_hash(columns: tuple[str, ...]) -> Column:
    return F.xxhash64(F.to_json(F.struct(*columns)))


def _input_digest(tables: LineageTables, versions: dict[str, int]) -> str:
    """An order-independent digest of the distinct edges the graph reads, at ``versions`` (the
    count and two 32-bit hash sums per table): equal when the graph's input is equal."""
    parts = []
    for table, columns in GRAPH_INPUTS.items():
        h = _edge_hash(columns)
        row = (
            tables.read(table, version=versions[table])
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
        parts.append(_digest_part(table, row[0], row[1] or 0, row[2] or 0))
    return ";".join(parts)


def _digest_part(table: str, count: int, low: int, high: int) -> str:
    return f"{table}:{count}:{low:x}:{high:x}"


def _updated_digest(digest: str | None, deltas: dict[str, tuple[int, int, int]]) -> str | None:
    """``digest`` (``_input_digest``'s) after adding the per-table ``(count, low, high)``
    deltas of the edges that appeared less those that went; None where ``digest`` is not one."""
    if not digest:
        return None
    parts = []
    try:
        for part in digest.split(";"):
            table, count, low, high = part.split(":")
            d_count, d_low, d_high = deltas.get(table, (0, 0, 0))
            parts.append(
                _digest_part(
                    table, int(count) + d_count, int(low, 16) + d_low, int(high, 16) + d_high
                )
            )
    except ValueError:
        return None
    return ";".join(parts)


@dataclass(frozen=True)
class _Changes:
    """The edges whose presence changed since the last graph run, per edge table (the
    ``GRAPH_INPUTS`` columns, materialized), and the input digest after the change (None:
    not known from the change)."""

    rows: dict[str, DataFrame]
    digest: str | None
    empty: bool
    counts: dict[str, int]
    """Per edge table: how many of its edges appeared or went."""


def _changes_from_feed(
    tables: LineageTables, stored: dict[str, Any], versions: dict[str, int], options: GraphOptions
) -> _Changes | None:
    """Which edges appeared or went between the stored run's versions and ``versions``, from
    the edge tables' change data feed; None where the feed cannot say: a table replaced since
    or whose history went back (``_previous_run`` tells), change data not recorded for the
    whole range or files it needs vacuumed (one INFO line).

    Per edge (the graph's columns of a row): the feed's rows of the range give the change in
    its row count (inserts and update postimages add one, deletes and update preimages take
    one away); the current count of the edges whose count changed is read from the table (a
    broadcast join when they are few: one scan, no shuffle of the table). An edge changed when
    it had rows before (current count less the change) and has none now, or the reverse. So
    only the changed rows and one scan of each edge table are read, not both versions of every
    edge.
    """
    then = stored[_STATE_KEY]
    if any(_table_id(tables, t) != i for t, i in stored.get("input_ids", {}).items()):
        return None  # a replaced table: its feed does not continue the old one's
    if set(stored.get("input_ids", {})) != set(GRAPH_INPUTS):
        return None
    rows: dict[str, DataFrame] = {}
    deltas: dict[str, tuple[int, int, int]] = {}
    counts: dict[str, int] = {}
    try:
        for table, columns in GRAPH_INPUTS.items():
            start, end = int(then[table]) + 1, versions[table]
            if start > end + 1:
                return None  # the table's history went back: not a continuation
            if start > end:  # no new version of this table: no change
                rows[table] = tables.read(table).select(*columns).where(F.lit(False))
                deltas[table], counts[table] = (0, 0, 0), 0
                continue
            sign = F.when(F.col("_change_type").isin("insert", "update_postimage"), 1).otherwise(-1)
            net = _materialized(
                tables.changes(table, start, end)
                .groupBy(*columns)
                .agg(F.sum(sign).alias("_delta"))
                .where(F.col("_delta") != 0),
                options,
            )
            key = list(columns)
            few = net.count() <= BROADCAST_KEYS
            now = (
                _keyed(tables.read(table).select(*columns), net.select(*columns), key,
                       "left_semi", broadcast=few)
                .groupBy(*columns)
                .agg(F.count(F.lit(1)).alias("_now"))
            )  # fmt: skip
            present = F.coalesce(F.col("_now"), F.lit(0))
            changed = _materialized(
                _keyed(net, now, key, "left")
                .where((present > 0) != (present - F.col("_delta") > 0))
                .select(*columns, (present > 0).alias("_added")),
                options,
            )
            h = _edge_hash(columns)
            signed = F.when(F.col("_added"), 1).otherwise(-1)
            totals = changed.agg(
                F.count(F.lit(1)),
                F.sum(signed),
                F.sum(signed * h.bitwiseAND(F.lit(0xFFFFFFFF))),
                F.sum(signed * F.shiftrightunsigned(h, 32)),
            ).first()
            assert totals is not None  # an aggregate without grouping has one row
            counts[table] = int(totals[0])
            deltas[table] = (int(totals[1] or 0), int(totals[2] or 0), int(totals[3] or 0))
            rows[table] = changed.drop("_added")
    except (PySparkException, Py4JJavaError) as exc:
        logger.info(
            "graph: the edge tables' change data feed cannot say what changed since the last"
            " graph run (versions %s): %s; comparing the edges instead",
            then,
            one_line(exc),
        )
        return None
    digest = _updated_digest(stored.get("digest"), deltas)
    return _Changes(rows, digest, not any(counts.values()), counts)


def _materialized(frame: DataFrame, options: GraphOptions) -> DataFrame:
    return frame.checkpoint() if options.reliable_checkpoints else frame.localCheckpoint()


def _stored_state(tables: LineageTables) -> dict[str, Any] | None:
    """The input state recorded with the components table's newest graph commit (a
    maintenance commit, e.g. auto compaction, may follow it)."""
    for commit in tables.recent_commits(COMPONENTS_TABLE, 5):
        try:
            state = json.loads(commit["userMetadata"] or "")
        except ValueError:
            continue
        if isinstance(state, dict) and _STATE_KEY in state:
            return state
    return None


def _table_id(tables: LineageTables, table: str) -> str:
    """The Delta table id: a new one when the table is dropped and created again."""
    row = tables.delta_table(table).detail().select("id").first()
    return str(row["id"]) if row else ""


def _previous_run(
    tables: LineageTables,
    state: dict[str, Any] | None,
    options: GraphOptions,
    changes: _Changes | None,
) -> PreviousRun | None:
    """How the edges changed since the last run (``changes``, from the change data feed; where
    None, the edges of the versions the last run read are compared with the current ones) and
    what it stored; or None (with one INFO line saying why) when the next run must be a full
    refresh."""
    if tables.latest_version(COMPONENTS_TABLE) == 0:
        return None  # first run (the table as created): nothing to be incremental against
    components = tables.read(COMPONENTS_TABLE)
    if components.isEmpty():
        return None  # nothing stored: nothing to be incremental against
    why = None
    if state is None or "outputs" not in state or "input_ids" not in state:
        why = "no recorded input state"
    elif any(tables.latest_version(t) != v for t, v in state["outputs"].items()):
        why = "an analytics table changed after the last graph run (it did not finish)"
    elif changes is None and any(_table_id(tables, t) != i for t, i in state["input_ids"].items()):
        why = "an edge table was replaced since the last graph run"
    if why is not None:
        logger.info("graph: full refresh: %s", why)
        return None
    assert state is not None  # for mypy: why is set otherwise
    if changes is not None:
        rows = changes.rows
    else:
        versions = state[_STATE_KEY]
        try:
            rows = {}
            for table, columns in GRAPH_INPUTS.items():
                old = tables.read(table, version=int(versions[table])).select(*columns).distinct()
                new = tables.read(table).select(*columns).distinct()
                rows[table] = changed_rows(_materialized(old, options), new, options)
        except (PySparkException, Py4JJavaError) as exc:
            logger.info(
                "graph: full refresh: the edges of the last graph run (versions %s) cannot be"
                " read back: %s",
                versions,
                one_line(exc),
            )
            return None
    return PreviousRun(
        table_changes=rows["table_lineage"],
        column_changes=rows["column_lineage"],
        components=components,
        nodes=tables.read("lineage_nodes").select("node", "component_id"),
        tables_unchanged=changes is not None and changes.counts.get("table_lineage") == 0,
    )


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


def _fewer_edges(tables: LineageTables, limit: int) -> bool:
    """Whether the edge tables hold fewer than ``limit`` rows together (Delta answers the
    counts from its log's file statistics)."""
    if limit <= 0:
        return False
    return sum(tables.read(table).count() for table in GRAPH_INPUTS) < limit


def _record_state(
    tables: LineageTables, components: DataFrame, versions: dict[str, int], digest: str
) -> tuple[DataFrame, int]:
    """Overwrite ``graph_components`` with ``components``, the commit recording the input state
    (``versions``, ``digest``); the rows written (materialized) and their count.

    The state last: a run that dies before this point leaves an analytics table newer than the
    recorded version, and the next run is a full refresh."""
    rows = components.select(*TABLES[COMPONENTS_TABLE].columns).localCheckpoint()
    count = rows.count()
    state = {
        _STATE_KEY: versions,
        "digest": digest,
        "components": count,
        "input_ids": {table: _table_id(tables, table) for table in GRAPH_INPUTS},
        "outputs": {table: tables.latest_version(table) for table in GRAPH_TABLES},
    }
    _overwrite(tables, COMPONENTS_TABLE, rows, json.dumps(state, sort_keys=True))
    tables.compact(COMPONENTS_TABLE)
    return rows, count


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
    summary.rows_written["column_closure"] = _write_changes(
        tables, "column_closure", rows, sources, None
    )
    tables.compact("column_closure")
    summary.step_seconds["write:column_closure"] = time.perf_counter() - clock
    _, summary.components = _record_state(
        tables, previous.components, versions, digest or _input_digest(tables, versions)
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
    """Recompute the analytics tables from ``table_lineage`` and ``column_lineage``."""
    started = time.perf_counter()
    options = graph_options(settings)
    if settings.checkpoint_dir:
        tables.spark.sparkContext.setCheckpointDir(settings.checkpoint_dir)
    tables.ensure_all((*GRAPH_TABLES, COMPONENTS_TABLE))
    versions = _input_versions(tables)
    stored = None if full_refresh else _stored_state(tables)
    if stored is not None and stored[_STATE_KEY] == versions:
        return _unchanged(stored, started, "same edge table versions")
    digest, changes = None, None
    if stored is not None:  # else: nothing to compare with; the digest is computed meanwhile
        changes = _changes_from_feed(tables, stored, versions, options)
        if changes is not None:
            if changes.empty:
                return _unchanged(stored, started, "same edges")
            digest = changes.digest
        else:
            digest = _input_digest(tables, versions)
            if stored.get("digest") == digest:
                return _unchanged(stored, started, "same edges")
    previous = None if full_refresh else _previous_run(tables, stored, options, changes)
    if previous is not None and previous.tables_unchanged:
        return _column_closures_only(tables, previous, options, versions, digest, started)
    if previous is not None and _fewer_edges(tables, settings.incremental_min_edges):
        logger.info(
            "graph: full refresh: fewer than %d edges (graph.incremental_min_edges)",
            settings.incremental_min_edges,
        )
        previous = None
    result, scope = analyze(
        tables.read("table_lineage"),
        tables.read("column_lineage"),
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
            summary.rows_written[table] = _write_changes(tables, table, rows, replaced, relabelled)
        else:
            summary.rows_written[table] = _overwrite(tables, table, full[table])
        tables.compact(table)
        summary.step_seconds[f"write:{table}"] = time.perf_counter() - clock

    # four tables, each computed and written by its own jobs, and the input's digest where it
    # is not known yet: at once
    with in_background(lambda: digest or _input_digest(tables, versions)) as digesting:
        run_concurrently([functools.partial(write, table) for table in GRAPH_TABLES])
    digest = digesting.result()
    components, summary.components = _record_state(tables, result.components, versions, digest)
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
