"""The graph stage's state: what the last run read and stored, and what changed since.

The components table's commit records the edge tables' versions (and ids) the stored analytics
were computed from, and the analytics tables' versions after the run. The next run reads which
edges appeared or went since those versions from the edge tables' change data feed (where the
feed cannot say, it reads the edges of those versions by Delta time travel and diffs them with
the current ones). It falls back to a full refresh, with one INFO line, when the recorded state
is missing, the last run did not finish (an analytics table moved on since the recorded
version), an edge table was replaced, or time travel fails (versions vacuumed).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_udfs.core.errors import one_line
from lineage_udfs.spark.graph.scope import PreviousRun, changed_rows
from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import BROADCAST_KEYS, Overwrite, keyed

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
STATE_KEY = "lineage_graph_inputs"
ALIASES_KEY = "aliases"
"""The digest of the alias mapping the stored analytics were stitched with ('' for none)."""


def input_versions(tables: LineageTables) -> dict[str, int]:
    return {table: tables.latest_version(table) for table in GRAPH_INPUTS}


def _edge_hash(columns: tuple[str, ...]) -> Column:
    return F.xxhash64(F.to_json(F.struct(*columns)))


def input_digest(tables: LineageTables, versions: dict[str, int]) -> str:
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
    """``digest`` (``input_digest``'s) after adding the per-table ``(count, low, high)``
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


def changes_from_feed(
    tables: LineageTables, stored: dict[str, Any], versions: dict[str, int]
) -> _Changes | None:
    """Which edges appeared or went between the stored run's versions and ``versions``, from
    the edge tables' change data feed; None where the feed cannot say: a table replaced since
    or whose history went back (``previous_run`` tells), change data not recorded for the
    whole range or files it needs vacuumed (one INFO line).

    Per edge (the graph's columns of a row): the feed's rows of the range give the change in
    its row count (inserts and update postimages add one, deletes and update preimages take
    one away); the current count of the edges whose count changed is read from the table (a
    broadcast join when they are few: one scan, no shuffle of the table). An edge changed when
    it had rows before (current count less the change) and has none now, or the reverse. So
    only the changed rows and one scan of each edge table are read, not both versions of every
    edge.
    """
    then = stored[STATE_KEY]
    if any(table_id(tables, t) != i for t, i in stored.get("input_ids", {}).items()):
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
            net = checkpointed(
                tables.changes(table, start, end)
                .groupBy(*columns)
                .agg(F.sum(sign).alias("_delta"))
                .where(F.col("_delta") != 0)
            )
            key = list(columns)
            few = net.count() <= BROADCAST_KEYS
            now = (
                keyed(tables.read(table).select(*columns), net.select(*columns), key,
                       "left_semi", broadcast=few)
                .groupBy(*columns)
                .agg(F.count(F.lit(1)).alias("_now"))
            )  # fmt: skip
            present = F.coalesce(F.col("_now"), F.lit(0))
            changed = checkpointed(
                keyed(net, now, key, "left")
                .where((present > 0) != (present - F.col("_delta") > 0))
                .select(*columns, (present > 0).alias("_added"))
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


def stored_state(tables: LineageTables) -> dict[str, Any] | None:
    """The input state recorded with the components table's newest graph commit (a
    maintenance commit, e.g. auto compaction, may follow it)."""
    return tables.recorded_state(COMPONENTS_TABLE, STATE_KEY)


def table_id(tables: LineageTables, table: str) -> str:
    """The Delta table id: a new one when the table is dropped and created again."""
    row = tables.delta_table(table).detail().select("id").first()
    return str(row["id"]) if row else ""


def previous_run(
    tables: LineageTables,
    state: dict[str, Any] | None,
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
    elif changes is None and any(table_id(tables, t) != i for t, i in state["input_ids"].items()):
        why = "an edge table was replaced since the last graph run"
    if why is not None:
        logger.info("graph: full refresh: %s", why)
        return None
    assert state is not None  # for mypy: why is set otherwise
    if changes is not None:
        rows = changes.rows
    else:
        versions = state[STATE_KEY]
        try:
            rows = {}
            for table, columns in GRAPH_INPUTS.items():
                old = tables.read(table, version=int(versions[table])).select(*columns).distinct()
                new = tables.read(table).select(*columns).distinct()
                rows[table] = changed_rows(checkpointed(old), new)
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


def record_state(
    tables: LineageTables,
    components: DataFrame,
    versions: dict[str, int],
    digest: str,
    *,
    aliases: str = "",
) -> tuple[DataFrame, int]:
    """Overwrite ``graph_components`` with ``components``, the commit recording the input state
    (``versions``, ``digest``); the rows written (materialized) and their count.

    The state last: a run that dies before this point leaves an analytics table newer than the
    recorded version, and the next run is a full refresh."""
    rows = checkpointed(components.select(*TABLES[COMPONENTS_TABLE].columns))
    count = rows.count()
    state = {
        STATE_KEY: versions,
        "digest": digest,
        ALIASES_KEY: aliases,
        "components": count,
        "input_ids": {table: table_id(tables, table) for table in GRAPH_INPUTS},
        "outputs": {table: tables.latest_version(table) for table in GRAPH_TABLES},
    }
    tables.write(COMPONENTS_TABLE, Overwrite(rows), metadata=json.dumps(state, sort_keys=True))
    tables.compact(COMPONENTS_TABLE)
    return rows, count
