"""``dataset_expectations``: the cadence of successful writes and the status at ``as_of``."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from lineage_udfs.settings import ActivitySettings

_DAY_S = 86_400.0


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
