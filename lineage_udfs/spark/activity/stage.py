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

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

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


@dataclass
class ActivitySummary:
    """What one run of the stage found."""

    as_of: str = ""
    datasets: int = 0
    late: int = 0
    stopped: int = 0
    late_upstream_rows: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        """One line for the job's summary."""
        return (
            f"activity: {self.datasets} datasets as of {self.as_of[:19]} UTC, {self.late} late,"
            f" {self.stopped} stopped, {self.late_upstream_rows} late-upstream rows,"
            f" {self.seconds:.1f} s"
        )


def run_activity_stage(
    tables: LineageTables, settings: ActivitySettings, *, max_depth: int = 20
) -> ActivitySummary:
    """Recompute the activity tables from ``queries``, ``parsed_statements``,
    ``table_closure`` and ``table_lineage``; one overwrite commit per table.

    Raises:
        ConfigError: the owners file or the catalog owners export cannot be read.
    """
    started = time.monotonic()
    spark = tables.spark
    rules = load_owner_rules(settings.owners_file)
    tables.ensure_all(ACTIVITY_TABLES)
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
        owners = dataset_owners(
            known, usage, rules, catalog_owners(spark, settings.catalog_owners), settings, as_of_col
        ).persist()
        tables.write("dataset_activity", Overwrite(activity))
        tables.write("dataset_usage", Overwrite(usage))
        tables.write("dataset_expectations", Overwrite(expectations))
        tables.write("dataset_owners", Overwrite(owners))
        staleness = upstream_staleness(
            tables, expectations, owners, as_of_col, settings.max_upstream_per_dataset, max_depth
        )
        summary.late_upstream_rows = tables.write("upstream_staleness", Overwrite(staleness)).get(
            "numOutputRows", 0
        )
        counts = (
            expectations.where(F.col("fingerprint") == "")
            .groupBy()
            .agg(
                F.count(F.lit(1)).alias("datasets"),
                F.count(F.when(F.col("status") == "late", 1)).alias("late"),
                F.count(F.when(F.col("status") == "stopped", 1)).alias("stopped"),
            )
            .first()
        )
        assert counts is not None  # an aggregate without grouping has one row
        summary.datasets = int(counts["datasets"] or 0)
        summary.late = int(counts["late"] or 0)
        summary.stopped = int(counts["stopped"] or 0)
        expectations.unpersist()
        owners.unpersist()
    finally:
        events.unpersist()
    summary.seconds = time.monotonic() - started
    return summary


def resolve_as_of(spark: SparkSession, queries: DataFrame, setting: str) -> str:
    """``activity.as_of`` as a UTC timestamp string Spark parses (session time zone UTC)."""
    if setting == "log_end":
        row = queries.agg(F.date_format(F.max("start_time"), _TS).alias("t")).first()
        if row is not None and row["t"] is not None:
            return str(row["t"])
        setting = "now"
    if setting == "now":
        return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    parsed = datetime.fromisoformat(setting)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed.strftime("%Y-%m-%d %H:%M:%S.%f")
