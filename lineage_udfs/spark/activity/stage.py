"""The activity stage: ``queries`` + ``parsed_statements`` + the graph tables → when each
dataset was last written and read, by whom, who owns it, how often it is written, whether it is
late, and which late datasets lie upstream of each dataset.

Every log row of ``queries`` is joined with its statement's parse: a statement writes its
targets and reads its sources (temporary tables of a script excluded). A row whose logged status
says the execution failed or was aborted (``facts.failed_execution``) is a failed write of its
targets: it never counts as freshness, nor as a read. Plain queries are in ``queries`` when
``activity.keep_reads`` is on (the default): they give the reads of the datasets nobody
writes through the warehouse (reports read by a BI tool).

Five tables, each rewritten by one overwrite commit per run (``LineageTables.write``; Delta
history keeps the past):

- ``dataset_activity``: per dataset (``column_name`` '') and per column a write names;
- ``dataset_usage``: per dataset, user and kind (read / write / failed_write);
- ``dataset_owners``: the owner and the rule that gave it (explicit, catalog, inferred);
- ``dataset_expectations``: the cadence of successful writes and the status at ``as_of``;
- ``upstream_staleness``: per dataset, its late or stopped upstream datasets
  (``table_closure``) with a shortest path and each hop's owner.

The instant statuses are computed at is ``activity.as_of``: now, the log's end, or a given
timestamp. Only rows logged up to it count.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.ownership import OwnerRule
from lineage_udfs.settings import ActivitySettings
from lineage_udfs.spark.activity.events import (
    activity_events,
    dataset_activity,
    dataset_usage,
    known_datasets,
)
from lineage_udfs.spark.activity.expectations import dataset_expectations
from lineage_udfs.spark.activity.owners import catalog_owners, dataset_owners, load_owner_rules
from lineage_udfs.spark.activity.staleness import LATE_STATUSES, upstream_staleness
from lineage_udfs.spark.storage.digest import frame_digest
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Overwrite

__all__ = ["LATE_STATUSES", "load_owner_rules"]

logger = logging.getLogger(__name__)

ACTIVITY_TABLES: tuple[str, ...] = (
    "dataset_activity",
    "dataset_usage",
    "dataset_owners",
    "dataset_expectations",
    "upstream_staleness",
)
"""The tables the stage writes."""

_TS = "yyyy-MM-dd HH:mm:ss.SSSSSS"
_PY_TS = "%Y-%m-%d %H:%M:%S.%f"  # the same format: the strings compare as the instants


STATE_KEY = "activity_inputs"
"""The key of the state the stage records with its last write (``upstream_staleness``)."""

INPUT_TABLES: tuple[str, ...] = (
    "queries",
    "parsed_statements",
    "lineage_nodes",
    "table_closure",
    "table_lineage",
)
"""The tables the stage reads: a new version of any of them means a recompute."""


@dataclass
class ActivitySummary:
    """What one run of the stage found (or, ``unchanged``, what the last run found)."""

    as_of: str = ""
    datasets: int = 0
    late: int = 0
    stopped: int = 0
    late_upstream_rows: int = 0
    due: str | None = None
    """The earliest instant after ``as_of`` at which a status or a window count changes with
    no new input: a status's late_after / stopped_after, or a counted event leaving the
    window. Until then a rerun with unchanged inputs writes nothing."""
    unchanged: bool = False
    seconds: float = 0.0

    def line(self) -> str:
        """One line for the job's summary."""
        figures = (
            f"{self.datasets} datasets as of {self.as_of[:19]} UTC, {self.late} late,"
            f" {self.stopped} stopped, {self.late_upstream_rows} late-upstream rows"
        )
        if self.unchanged:
            due = f"next change due {self.due[:19]} UTC" if self.due else "no change due"
            return f"activity: unchanged ({figures}; inputs unchanged, {due}), {self.seconds:.1f} s"
        return f"activity: {figures}, {self.seconds:.1f} s"


def run_activity_stage(
    tables: LineageTables, settings: ActivitySettings, *, max_depth: int = 20
) -> ActivitySummary:
    """Recompute the activity tables from ``queries``, ``parsed_statements``,
    ``lineage_nodes``, ``table_closure`` and ``table_lineage``; one overwrite commit per table.

    Nothing is written when no input (those tables, the owners file, the catalog export, the
    settings) changed since the last run and, with ``as_of: now``, no status or window count
    is due to change yet (``ActivitySummary.due``): the tables are then what a recompute would
    write, but for their ``as_of`` column and the "no successful write for ..." figure of
    ``reason``, which keep the instant they were computed at.

    Raises:
        ConfigError: the owners file or the catalog owners export cannot be read.
    """
    started = time.monotonic()
    spark = tables.spark
    rules = load_owner_rules(settings.owners_file)
    tables.ensure_all(ACTIVITY_TABLES)
    catalog = catalog_owners(spark, settings.catalog_owners)
    inputs = _inputs(tables, settings, rules, catalog)
    stored = _stored(tables)
    if stored is not None and _still_valid(stored[0], inputs, settings):
        summary = ActivitySummary(**stored[0]["summary"], unchanged=True)
        summary.late_upstream_rows = stored[1]
        summary.seconds = time.monotonic() - started
        logger.info("activity: inputs unchanged, no status due to change, nothing written")
        return summary
    summary = ActivitySummary()
    queries = tables.read("queries")
    as_of = resolve_as_of(spark, queries, settings.as_of)
    summary.as_of = as_of
    as_of_col = F.to_timestamp(F.lit(as_of))
    window_start = as_of_col - F.make_interval(days=F.lit(settings.window_days))
    events = activity_events(queries, tables.read("parsed_statements"), as_of_col).persist()
    try:
        activity = dataset_activity(events, window_start, as_of_col)
        usage = dataset_usage(events, window_start, as_of_col)
        expectations = dataset_expectations(events, settings, as_of_col).persist()
        known = known_datasets(tables, events)
        owners = dataset_owners(known, usage, rules, catalog, settings, as_of_col).persist()
        tables.write("dataset_activity", Overwrite(activity))
        tables.write("dataset_usage", Overwrite(usage))
        tables.write("dataset_expectations", Overwrite(expectations))
        tables.write("dataset_owners", Overwrite(owners))
        _count(summary, expectations, events, window_start, as_of_col, settings.window_days)
        staleness = upstream_staleness(
            tables, expectations, owners, as_of_col, settings.max_upstream_per_dataset, max_depth
        )
        state = {**inputs, "summary": _recorded(summary)}
        written = tables.write(
            "upstream_staleness", Overwrite(staleness), metadata=json.dumps(state, sort_keys=True)
        )
        summary.late_upstream_rows = written.get("numOutputRows", 0)
        expectations.unpersist()
        owners.unpersist()
    finally:
        events.unpersist()
    summary.seconds = time.monotonic() - started
    return summary


def _inputs(
    tables: LineageTables,
    settings: ActivitySettings,
    rules: tuple[OwnerRule, ...],
    catalog: DataFrame | None,
) -> dict[str, Any]:
    """What the stage's result depends on, but for the clock: the input tables' versions, the
    settings, the owners file's rules and the catalog export's rows."""
    text = json.dumps(
        {"settings": settings.model_dump(mode="json"), "rules": [repr(r) for r in rules]},
        sort_keys=True,
    )
    return {
        STATE_KEY: {name: tables.latest_version(name) for name in INPUT_TABLES},
        "config": hashlib.sha256(text.encode()).hexdigest()[:16],
        "catalog": frame_digest(catalog) if catalog is not None else "",
    }


def _stored(tables: LineageTables) -> tuple[dict[str, Any], int] | None:
    """The state the last complete run recorded with ``upstream_staleness`` and the row count
    it wrote there; None when no run completed (the table's write is the stage's last)."""
    found = tables.recorded_commit("upstream_staleness", STATE_KEY)
    if found is None or "summary" not in found[0]:
        return None
    state, commit = found
    return state, int((commit["operationMetrics"] or {}).get("numOutputRows") or 0)


def _still_valid(
    stored: dict[str, Any], inputs: dict[str, Any], settings: ActivitySettings
) -> bool:
    """Whether the recorded tables are what a recompute would write now: the same inputs and,
    with ``as_of: now``, no change due yet."""
    if any(stored.get(key) != value for key, value in inputs.items()):
        return False
    if settings.as_of != "now":
        return True  # log_end follows queries; a fixed instant is in the settings
    due = stored["summary"].get("due")
    return due is None or datetime.now(UTC).strftime(_PY_TS) < due


def _count(
    summary: ActivitySummary,
    expectations: DataFrame,
    events: DataFrame,
    window_start: Column,
    as_of: Column,
    window_days: int,
) -> None:
    """The summary's counts and ``due``: the nearest late_after / stopped_after ahead of
    ``as_of``, or the instant the oldest counted event leaves the window."""
    ahead = [F.when(F.col(c) > as_of, F.col(c)) for c in ("late_after", "stopped_after")]
    row = (
        expectations.groupBy()
        .agg(
            F.count(F.when(F.col("fingerprint") == "", 1)).alias("datasets"),
            F.count(F.when((F.col("fingerprint") == "") & (F.col("status") == "late"), 1)).alias(
                "late"
            ),
            F.count(F.when((F.col("fingerprint") == "") & (F.col("status") == "stopped"), 1)).alias(
                "stopped"
            ),
            F.date_format(F.min(F.least(*ahead)), _TS).alias("due"),
        )
        .first()
    )
    assert row is not None  # an aggregate without grouping has one row
    summary.datasets = int(row["datasets"] or 0)
    summary.late = int(row["late"] or 0)
    summary.stopped = int(row["stopped"] or 0)
    leaves = (
        events.where(F.col("at") >= window_start)
        .agg(F.min("at").alias("oldest"))
        .select(F.date_format(F.col("oldest") + F.make_interval(days=F.lit(window_days)), _TS))
        .first()
    )
    status_due = row["due"]
    window_due = None if leaves is None else leaves[0]
    candidates = [d for d in (status_due, window_due) if d is not None]
    summary.due = min(candidates) if candidates else None


def _recorded(summary: ActivitySummary) -> dict[str, Any]:
    return {
        "as_of": summary.as_of,
        "datasets": summary.datasets,
        "late": summary.late,
        "stopped": summary.stopped,
        "due": summary.due,
    }


def resolve_as_of(spark: SparkSession, queries: DataFrame, setting: str) -> str:
    """``activity.as_of`` as a UTC timestamp string Spark parses (session time zone UTC)."""
    if setting == "log_end":
        row = queries.agg(F.date_format(F.max("start_time"), _TS).alias("t")).first()
        if row is not None and row["t"] is not None:
            return str(row["t"])
        setting = "now"
    if setting == "now":
        return datetime.now(UTC).strftime(_PY_TS)
    parsed = datetime.fromisoformat(setting)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.strftime(_PY_TS)
