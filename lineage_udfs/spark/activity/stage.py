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
from pathlib import Path

import yaml
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from lineage_udfs.core.enums import ParseStatus
from lineage_udfs.core.errors import ConfigError, InputError, one_line
from lineage_udfs.core.ownership import OwnerRule, glob_regex, owner_rules
from lineage_udfs.settings import ActivitySettings
from lineage_udfs.spark.storage.facts import failed_execution
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Overwrite

logger = logging.getLogger(__name__)

ACTIVITY_TABLES: tuple[str, ...] = (
    "dataset_activity",
    "dataset_usage",
    "dataset_owners",
    "dataset_expectations",
    "upstream_staleness",
)
"""The tables the stage writes."""

LATE_STATUSES: tuple[str, ...] = ("late", "stopped")
"""Statuses an alert is raised for."""

_TS = "yyyy-MM-dd HH:mm:ss.SSSSSS"
_DAY_S = 86_400.0
_NO_LINEAGE = (str(ParseStatus.FAILED), str(ParseStatus.TIMEOUT), str(ParseStatus.SKIPPED))


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
        known = _datasets(tables, events)
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


# --- settings-driven inputs --------------------------------------------------------------------


def load_owner_rules(path: str | None) -> tuple[OwnerRule, ...]:
    """The rules of the owners file at ``path`` (none without a path).

    Raises:
        ConfigError: the file cannot be read, is not YAML or not of the owners shape.
    """
    if not path:
        return ()
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"activity.owners_file {path}: {one_line(exc)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"activity.owners_file {path} is not valid YAML: {one_line(exc)}"
        ) from None
    return owner_rules(document, f"activity.owners_file {path}")


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


def catalog_owners(spark: SparkSession, path: str | None) -> DataFrame | None:
    """(name, owner, evidence) from a catalog's table export (``activity.catalog_owners``):
    each table under its ``catalog.schema.table`` and ``schema.table`` names, lower-case.

    Raises:
        InputError: the export cannot be read or has no TABLE_NAME / TABLE_OWNER column.
    """
    if not path:
        return None
    try:
        frame = spark.read.option("header", "true").csv(path)
        columns = {c.lower(): c for c in frame.columns}
    except Exception as exc:  # a missing file is an AnalysisException with a Java stack
        raise InputError(f"activity.catalog_owners {path}: {one_line(exc)}") from None
    if "table_name" not in columns or "table_owner" not in columns:
        raise InputError(
            f"activity.catalog_owners {path}: needs TABLE_NAME and TABLE_OWNER columns"
            f" (has {', '.join(frame.columns)})"
        )

    def col(name: str) -> Column:
        return F.col(f"`{columns[name]}`") if name in columns else F.lit(None).cast("string")

    parts = [col("table_catalog"), col("table_schema"), col("table_name")]
    owned = frame.where(col("table_owner").isNotNull() & (F.trim(col("table_owner")) != ""))
    full = owned.select(
        F.lower(F.concat_ws(".", *parts)).alias("name"),
        F.trim(col("table_owner")).alias("owner"),
        F.lit(0).alias("rank"),
    )
    short = owned.select(
        F.lower(F.concat_ws(".", *parts[1:])).alias("name"),
        F.trim(col("table_owner")).alias("owner"),
        F.lit(1).alias("rank"),
    )
    evidence = F.concat(F.lit(f"TABLE_OWNER in {Path(path).name}"))
    return full.unionByName(short).withColumn("evidence", evidence)


# --- events ------------------------------------------------------------------------------------


def activity_events(queries: DataFrame, parsed: DataFrame, as_of: Column) -> DataFrame:
    """One row per (log row, dataset or written column, kind): kind ``write`` (succeeded),
    ``failed_write`` or ``read``, with when, who, which statement and system.

    A write is dated by its end (else its start): when the data landed; a read by its start.
    Rows logged after ``as_of``, rows without a time and statements whose parse gave no
    lineage are left out."""
    p = parsed.select(
        "fingerprint",
        "statement_type",
        F.col("status").alias("parse_status"),
        F.array_except(
            F.coalesce("targets", F.array().cast("array<string>")),
            F.coalesce("intermediates", F.array().cast("array<string>")),
        ).alias("written"),
        F.array_except(
            F.coalesce("sources", F.array().cast("array<string>")),
            F.array_union(
                F.coalesce("intermediates", F.array().cast("array<string>")),
                F.coalesce("targets", F.array().cast("array<string>")),
            ),
        ).alias("read"),
        F.coalesce("column_edges", F.array()).alias("column_edges"),
    ).where(~F.col("parse_status").isin(*_NO_LINEAGE))
    q = queries.select(
        "fingerprint",
        F.coalesce("user_name", F.lit("")).alias("user_name"),
        "source_system",
        F.col("start_time"),
        F.coalesce("end_time", "start_time").alias("ended"),
        failed_execution(F.col("status")).alias("failed"),
    ).where(F.col("start_time").isNotNull() & (F.col("start_time") <= as_of))
    rows = q.join(p, "fingerprint")
    common = ["fingerprint", "user_name", "source_system", "statement_type"]
    write_kind = F.when(F.col("failed"), "failed_write").otherwise("write")
    tables_written = rows.select(
        F.explode("written").alias("dataset"),
        F.lit("").alias("column_name"),
        write_kind.alias("kind"),
        F.col("ended").alias("at"),
        *common,
    )
    columns_written = rows.select(
        "*",
        F.explode(
            F.array_distinct(
                F.transform(
                    F.filter(
                        "column_edges",
                        lambda e: (
                            e["target_column"].isNotNull()
                            & (e["target_column"] != "")
                            & F.array_contains(F.col("written"), e["target_table"])
                        ),
                    ),
                    lambda e: F.struct(
                        e["target_table"].alias("dataset"),
                        e["target_column"].alias("column_name"),
                    ),
                )
            )
        ).alias("wc"),
    ).select(
        F.col("wc.dataset").alias("dataset"),
        F.col("wc.column_name").alias("column_name"),
        write_kind.alias("kind"),
        F.col("ended").alias("at"),
        *common,
    )
    reads = rows.where(~F.col("failed")).select(
        F.explode("read").alias("dataset"),
        F.lit("").alias("column_name"),
        F.lit("read").alias("kind"),
        F.col("start_time").alias("at"),
        *common,
    )
    return tables_written.unionByName(columns_written).unionByName(reads)


def _datasets(tables: LineageTables, events: DataFrame) -> DataFrame:
    """Every dataset the stage knows: written or read in the log, or a node of the graph."""
    seen = events.where(F.col("column_name") == "").select("dataset")
    if tables.exists("lineage_nodes"):
        seen = seen.unionByName(tables.read("lineage_nodes").select(F.col("node").alias("dataset")))
    return seen.distinct()


# --- dataset_activity, dataset_usage -----------------------------------------------------------


def dataset_activity(events: DataFrame, window_start: Column, as_of: Column) -> DataFrame:
    """``dataset_activity``: the latest write, failed write and read (all history up to
    as_of) and the counts over the window."""
    kind, window = F.col("kind"), F.col("at") >= window_start

    def latest(of_kind: str, *fields: str) -> Column:
        return F.max(F.when(kind == of_kind, F.struct("at", *fields)))

    def counted(of_kind: str) -> Column:
        return F.count(F.when((kind == of_kind) & window, 1))

    def distinct_users(of_kind: str) -> Column:
        return F.count_distinct(F.when((kind == of_kind) & window, F.col("user_name")))

    write_fields = ("fingerprint", "user_name", "source_system", "statement_type")
    return (
        events.groupBy("dataset", "column_name")
        .agg(
            latest("write", *write_fields).alias("w"),
            latest("failed_write", "fingerprint", "user_name").alias("f"),
            latest("read", "user_name").alias("r"),
            counted("write").alias("writes"),
            counted("failed_write").alias("failed_writes"),
            distinct_users("write").alias("writers"),
            counted("read").alias("reads"),
            distinct_users("read").alias("readers"),
        )
        .select(
            "dataset",
            "column_name",
            F.col("w.at").alias("last_write_at"),
            F.col("w.fingerprint").alias("last_write_fingerprint"),
            F.col("w.user_name").alias("last_write_user"),
            F.col("w.source_system").alias("last_write_source_system"),
            F.col("w.statement_type").alias("last_write_statement_type"),
            F.col("f.at").alias("last_failed_write_at"),
            F.col("f.fingerprint").alias("last_failed_write_fingerprint"),
            F.col("f.user_name").alias("last_failed_write_user"),
            "writes",
            "failed_writes",
            "writers",
            F.col("r.at").alias("last_read_at"),
            F.col("r.user_name").alias("last_read_user"),
            "reads",
            "readers",
            window_start.alias("window_start"),
            as_of.alias("as_of"),
        )
    )


def dataset_usage(events: DataFrame, window_start: Column, as_of: Column) -> DataFrame:
    """``dataset_usage``: per dataset, user and kind, the count over the window and the first
    and latest time (table level only)."""
    return (
        events.where(F.col("column_name") == "")
        .groupBy("dataset", "user_name", "kind")
        .agg(
            F.count(F.when(F.col("at") >= window_start, 1)).alias("count_in_window"),
            F.min("at").alias("first_at"),
            F.max("at").alias("last_at"),
        )
        .select("*", window_start.alias("window_start"), as_of.alias("as_of"))
    )


# --- dataset_expectations ----------------------------------------------------------------------


def dataset_expectations(events: DataFrame, settings: ActivitySettings, as_of: Column) -> DataFrame:
    """``dataset_expectations``: per dataset ('' fingerprint) and per statement writing it
    at least ``min_occurrences`` times, the intervals between successful writes over the
    ``window_days`` up to the latest one, and the status at ``as_of``."""
    writes = events.where((F.col("kind") == "write") & (F.col("column_name") == "")).select(
        "dataset", "fingerprint", "at"
    )
    both = writes.select("dataset", F.lit("").alias("fingerprint"), "at").unionByName(writes)
    instants = both.distinct()
    key = Window.partitionBy("dataset", "fingerprint")
    last = F.max("at").over(key)
    window_s = settings.window_days * _DAY_S
    recent = instants.withColumn("_last", last).where(
        F.col("at").cast("double") >= F.col("_last").cast("double") - window_s
    )
    with_interval = recent.withColumn(
        "interval_s",
        F.col("at").cast("double") - F.lag(F.col("at").cast("double")).over(key.orderBy("at")),
    )
    stats = with_interval.groupBy("dataset", "fingerprint").agg(
        F.count(F.lit(1)).alias("occurrences"),
        F.percentile("interval_s", F.lit(0.5)).alias("median_interval_s"),
        F.percentile("interval_s", F.lit(0.9)).alias("p90_interval_s"),
        F.max("at").alias("last_write_at"),
    )
    stats = stats.where(
        (F.col("fingerprint") == "") | (F.col("occurrences") >= settings.min_occurrences)
    )
    # datasets with failed writes only: no cadence, status new
    failed_only = (
        events.where((F.col("kind") == "failed_write") & (F.col("column_name") == ""))
        .select("dataset")
        .distinct()
        .join(stats.where(F.col("fingerprint") == "").select("dataset"), "dataset", "left_anti")
        .select(
            "dataset",
            F.lit("").alias("fingerprint"),
            F.lit(0).cast("long").alias("occurrences"),
            F.lit(None).cast("double").alias("median_interval_s"),
            F.lit(None).cast("double").alias("p90_interval_s"),
            F.lit(None).cast("timestamp").alias("last_write_at"),
        )
    )
    stats = stats.unionByName(failed_only)
    return _with_status(stats, settings, as_of)


def _after(at: Column, seconds: Column) -> Column:
    return F.timestamp_seconds(at.cast("double") + seconds)


def _human(seconds: Column) -> Column:
    """Seconds as text: ``26.0 h`` / ``3.2 d`` / ``45 min``."""
    return (
        F.when(seconds >= 2 * _DAY_S, F.concat(F.format_number(seconds / _DAY_S, 1), F.lit(" d")))
        .when(seconds >= 7200, F.concat(F.format_number(seconds / 3600, 1), F.lit(" h")))
        .otherwise(F.concat(F.format_number(seconds / 60, 0), F.lit(" min")))
    )


def _with_status(stats: DataFrame, s: ActivitySettings, as_of: Column) -> DataFrame:
    """The status at ``as_of``, in this order: ``new`` (fewer than min_occurrences successful
    writes, or none), ``stopped`` (silent for more than stopped_factor x p90), ``irregular``
    (p90 above irregular_ratio x median), ``late`` (silent for more than late_factor x p90),
    else ``on_time``."""
    median, p90, last = F.col("median_interval_s"), F.col("p90_interval_s"), F.col("last_write_at")
    silent = as_of.cast("double") - last.cast("double")
    new = last.isNull() | (F.col("occurrences") < s.min_occurrences) | p90.isNull()
    status = (
        F.when(new, "new")
        .when(silent > s.stopped_factor * p90, "stopped")
        .when(p90 > s.irregular_ratio * median, "irregular")
        .when(silent > s.late_factor * p90, "late")
        .otherwise("on_time")
    )
    silent_text = F.concat(
        F.lit("no successful write for "), _human(F.greatest(silent, F.lit(0.0)))
    )
    cadence = F.concat(F.lit("median "), _human(median), F.lit(", p90 "), _human(p90))
    reason = (
        F.when(
            last.isNull(),
            F.lit("no successful write (failed writes only)"),
        )
        .when(
            new,
            F.concat(
                F.col("occurrences").cast("string"),
                F.lit(f" successful writes in the window, fewer than {s.min_occurrences}"),
            ),
        )
        .when(
            F.lit(True),
            F.concat_ws(
                "; ",
                silent_text,
                cadence,
                F.when(
                    F.col("_status") == "stopped",
                    F.lit(f"more than {s.stopped_factor:g} x p90"),
                )
                .when(F.col("_status") == "late", F.lit(f"more than {s.late_factor:g} x p90"))
                .when(
                    F.col("_status") == "irregular",
                    F.lit(f"p90 above {s.irregular_ratio:g} x median: no expectation"),
                ),
            ),
        )
    )
    return stats.withColumn("_status", status).select(
        "dataset",
        "fingerprint",
        F.col("occurrences").cast("long").alias("occurrences"),
        median.alias("median_interval_s"),
        p90.alias("p90_interval_s"),
        last.alias("last_write_at"),
        F.when(~new, _after(last, median)).alias("expected_next_at"),
        F.when(~new, _after(last, s.late_factor * p90)).alias("late_after"),
        F.when(~new, _after(last, s.stopped_factor * p90)).alias("stopped_after"),
        F.col("_status").alias("status"),
        reason.alias("reason"),
        F.when(last.isNotNull(), _after(last, F.lit(-s.window_days * _DAY_S))).alias(
            "window_start"
        ),
        as_of.alias("as_of"),
    )


# --- dataset_owners ----------------------------------------------------------------------------


def dataset_owners(
    datasets: DataFrame,
    usage: DataFrame,
    rules: tuple[OwnerRule, ...],
    catalog: DataFrame | None,
    settings: ActivitySettings,
    as_of: Column,
) -> DataFrame:
    """``dataset_owners``: per dataset, the first rule that gives an owner: an explicit
    pattern, the catalog's owner, else the dominant writer over the window (inferred)."""
    name = F.col("dataset")
    explicit: Column = F.lit(None)
    for index, rule in reversed(list(enumerate(rules, start=1))):
        explicit = F.when(
            name.rlike(glob_regex(rule.pattern)),
            F.struct(
                F.lit(rule.team).alias("owner"),
                F.lit(rule.contact).cast("string").alias("contact"),
                F.lit(f"owners file entry {index}: {rule.pattern}").alias("evidence"),
            ),
        ).otherwise(explicit)
    frame = datasets.withColumn("_explicit", explicit)
    if catalog is not None:
        best = (
            catalog.withColumn(
                "_r", F.row_number().over(Window.partitionBy("name").orderBy("rank", "owner"))
            )
            .where(F.col("_r") == 1)
            .select(F.col("name").alias("dataset"), F.struct("owner", "evidence").alias("_catalog"))
        )
        frame = frame.join(best, "dataset", "left")
    else:
        frame = frame.withColumn(
            "_catalog", F.lit(None).cast("struct<owner:string,evidence:string>")
        )
    writes = usage.where((F.col("kind") == "write") & (F.col("count_in_window") > 0))
    ranked = writes.withColumn(
        "_r",
        F.row_number().over(
            Window.partitionBy("dataset").orderBy(F.desc("count_in_window"), "user_name")
        ),
    ).withColumn("_total", F.sum("count_in_window").over(Window.partitionBy("dataset")))
    dominant = ranked.where((F.col("_r") == 1) & (F.col("user_name") != "")).select(
        "dataset",
        F.struct(
            F.col("user_name").alias("owner"),
            F.concat(
                F.col("user_name"),
                F.lit(": "),
                F.col("count_in_window").cast("string"),
                F.lit(" of "),
                F.col("_total").cast("string"),
                F.lit(f" successful writes in {settings.window_days} days"),
            ).alias("evidence"),
        ).alias("_inferred"),
    )
    frame = frame.join(dominant, "dataset", "left")
    return frame.select(
        "dataset",
        F.coalesce("_explicit.owner", "_catalog.owner", "_inferred.owner").alias("owner"),
        F.col("_explicit.contact").alias("contact"),
        F.when(F.col("_explicit").isNotNull(), "explicit")
        .when(F.col("_catalog").isNotNull(), "catalog")
        .when(F.col("_inferred").isNotNull(), "inferred")
        .otherwise("none")
        .alias("rule"),
        F.coalesce("_explicit.evidence", "_catalog.evidence", "_inferred.evidence").alias(
            "evidence"
        ),
        as_of.alias("as_of"),
    )


# --- upstream_staleness ------------------------------------------------------------------------

_PATH_SCHEMA = StructType(
    [
        StructField("dataset", StringType()),
        StructField("upstream", StringType()),
        StructField("node", StringType()),
        StructField("pos", StringType()),
    ]
)


def upstream_staleness(
    tables: LineageTables,
    expectations: DataFrame,
    owners: DataFrame,
    as_of: Column,
    max_per_dataset: int,
    max_depth: int,
) -> DataFrame:
    """``upstream_staleness``: for every dataset, each late or stopped dataset upstream of it
    (``table_closure``), the shortest path from it (ties: the smallest next name) and each
    hop's owner.

    A hop's predecessor on the path is found in one join: the smallest ``m`` with an edge
    ``m -> n`` and ``distance(upstream, m) + 1 = distance(upstream, n)``. The predecessors of
    the late datasets' descendants are brought to the driver (their number is bounded by
    ``graph.max_closure_per_node`` per late dataset) and the paths followed back there."""
    spark = tables.spark
    late = expectations.where(
        (F.col("fingerprint") == "") & F.col("status").isin(*LATE_STATUSES)
    ).select(
        F.col("dataset").alias("upstream"),
        F.col("status").alias("upstream_status"),
        F.col("last_write_at").alias("upstream_last_write_at"),
    )
    empty = spark.createDataFrame([], tables_schema("upstream_staleness"))
    if not (tables.exists("table_closure") and tables.exists("table_lineage")):
        return empty
    closure = (
        tables.read("table_closure")
        .where((F.col("ancestor") != F.col("descendant")) & (F.col("min_distance") <= max_depth))
        .select(F.col("ancestor").alias("upstream"), F.col("descendant").alias("dataset"),
                F.col("min_distance").alias("distance"))
        .join(late.select("upstream"), "upstream", "left_semi")
    )  # fmt: skip
    nearest = Window.partitionBy("dataset").orderBy("distance", "upstream")
    pairs = (
        closure.withColumn("_r", F.row_number().over(nearest))
        .where(F.col("_r") <= max_per_dataset)
        .drop("_r")
    )
    edges = (
        tables.read("table_lineage")
        .where(F.col("source_table") != F.col("target_table"))
        .select(F.col("source_table").alias("m"), F.col("target_table").alias("n"))
        .distinct()
    )
    reach = closure.select("upstream", F.col("dataset").alias("node"), "distance")
    at_m = reach.select("upstream", F.col("node").alias("m"), F.col("distance").alias("dm"))
    via_node = (
        reach.join(edges, reach["node"] == edges["n"])
        .join(at_m, ["upstream", "m"], "left")
        .where(
            ((F.col("distance") == 1) & (F.col("m") == F.col("upstream")))
            | (F.col("dm") == F.col("distance") - 1)
        )
        .groupBy("upstream", "node")
        .agg(F.min("m").alias("previous"))
    )
    previous = {(r["upstream"], r["node"]): r["previous"] for r in via_node.collect()}
    wanted = pairs.select("upstream", "dataset").collect()
    hops: list[tuple[str, str, str, str]] = []
    for row in wanted:
        upstream, node = row["upstream"], row["dataset"]
        path = [node]
        while node != upstream and len(path) <= max_depth + 1:
            found = previous.get((upstream, node))
            if found is None:
                break
            node = found
            path.append(node)
        for pos, hop in enumerate(reversed(path)):
            hops.append((row["dataset"], upstream, hop, f"{pos:03d}"))
    hop_rows = spark.createDataFrame(hops, _PATH_SCHEMA)
    owned = hop_rows.join(
        owners.select(F.col("dataset").alias("node"), "owner", "contact", "rule"), "node", "left"
    )
    paths = owned.groupBy("dataset", "upstream").agg(
        F.sort_array(F.collect_list(F.struct("pos", "node", "owner", "contact", "rule"))).alias(
            "_hops"
        )
    )
    return (
        pairs.join(late, "upstream")
        .join(paths, ["dataset", "upstream"], "left")
        .select(
            "dataset",
            "upstream",
            "upstream_status",
            "upstream_last_write_at",
            F.col("distance").cast("int").alias("distance"),
            F.transform("_hops", lambda h: h["node"]).alias("path"),
            F.transform(
                "_hops",
                lambda h: F.struct(
                    h["node"].alias("node"),
                    h["owner"].alias("owner"),
                    h["contact"].alias("contact"),
                    h["rule"].alias("rule"),
                ),
            ).alias("hops"),
            as_of.alias("as_of"),
        )
    )


def tables_schema(table: str) -> StructType:
    """The declared schema of ``table``."""
    from lineage_udfs.spark.storage.schemas import TABLES

    return TABLES[table].schema
