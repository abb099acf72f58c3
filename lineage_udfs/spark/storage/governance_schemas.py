"""The governance tables: column tags (``lineage_udfs.spark.graph.tags``) and the activity
stage's freshness, ownership, usage and expectations (``lineage_udfs.spark.activity``)."""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lineage_udfs.spark.storage.table_spec import declare_table as _table

_STR_ARRAY = ArrayType(StringType())

COLUMN_TAGS = _table(
    "column_tags",
    "One row per (column, tag): declared (tags file, source export, name rule), carried "
    "downstream over DIRECT column edges, or masked (reached only through a masking "
    "function, where it stops); with the provenance of the row (docs/tags.md).",
    ("table_name", "column_name", "tag"),
    [
        ("table_name", StringType()),
        ("column_name", StringType()),
        ("tag", StringType()),
        ("tag_value", StringType()),
        ("status", StringType()),
        ("depth", IntegerType()),
        ("origin_table", StringType()),
        ("origin_column", StringType()),
        ("via_table", StringType()),
        ("via_column", StringType()),
        ("via_subtype", StringType()),
        ("rule", StringType()),
    ],
    comments={
        "tag_value": "the value declared with the tag at its origin (Snowflake TAG_VALUE …)",
        "status": "declared / propagated / masked (docs/tags.md, 'Conflicts')",
        "depth": "hops from the origin column (0: declared here)",
        "origin_table": "table of the declared column the tag came from",
        "origin_column": "the declared column the tag came from",
        "via_table": "table of the column of the edge the tag came through (null: declared)",
        "via_column": "the column of the edge the tag came through (null: declared)",
        "via_subtype": "subtype of that edge: IDENTITY, TRANSFORMATION, AGGREGATION or MASKED",
        "rule": "the declaration at the origin: column X, source P, pattern G or name rule R",
    },
)

# freshness, ownership, usage and expectations (lineage_udfs.spark.activity): rewritten by every
# run of the activity stage (one overwrite commit each); Delta history keeps the past
_WINDOW: list[tuple[str, DataType]] = [
    ("window_start", TimestampType()),
    ("as_of", TimestampType()),
]
_ACTIVITY_COMMENTS = {
    "dataset": "table, view or dataset (canonical name)",
    "column_name": "'' for the dataset itself; a column a write names (column lineage target)",
    "window_start": "start of the window the counts cover (as_of - activity.window_days)",
    "as_of": "the instant the stage computed the row at (activity.as_of)",
}

DATASET_ACTIVITY = _table(
    "dataset_activity",
    "One row per dataset (column_name '') and per column a write names: last successful and "
    "last failed write, writes, writers, last read and readers over the window. Failed writes "
    "never count as freshness.",
    ("dataset", "column_name"),
    [
        ("dataset", StringType()),
        ("column_name", StringType()),
        ("last_write_at", TimestampType()),
        ("last_write_fingerprint", StringType()),
        ("last_write_user", StringType()),
        ("last_write_source_system", StringType()),
        ("last_write_statement_type", StringType()),
        ("last_failed_write_at", TimestampType()),
        ("last_failed_write_fingerprint", StringType()),
        ("last_failed_write_user", StringType()),
        ("writes", LongType()),
        ("failed_writes", LongType()),
        ("writers", LongType()),
        ("last_read_at", TimestampType()),
        ("last_read_user", StringType()),
        ("reads", LongType()),
        ("readers", LongType()),
        *_WINDOW,
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "last_write_at": "end (else start) of the latest successful write",
        "last_write_fingerprint": "statement of the latest successful write",
        "last_write_user": "who ran the latest successful write",
        "last_write_source_system": "system that ran the latest successful write",
        "last_write_statement_type": "CTAS, INSERT, MERGE, ... of the latest successful write",
        "last_failed_write_at": "end (else start) of the latest write whose status says failed "
        "or aborted",
        "last_failed_write_fingerprint": "statement of the latest failed write",
        "last_failed_write_user": "who ran the latest failed write",
        "writes": "successful writes in the window",
        "failed_writes": "failed or aborted writes in the window",
        "writers": "distinct users with a successful write in the window",
        "last_read_at": "start of the latest successful statement reading the dataset (plain "
        "queries with activity.keep_reads, and every statement's sources); null for columns",
        "last_read_user": "who ran the latest read",
        "reads": "successful reads in the window",
        "readers": "distinct users with a read in the window",
    },
)

DATASET_USAGE = _table(
    "dataset_usage",
    "One row per dataset, user and kind (read / write / failed_write): how often and when "
    "last; the writers and readers behind dataset_activity's counts.",
    ("dataset", "user_name", "kind"),
    [
        ("dataset", StringType()),
        ("user_name", StringType()),
        ("kind", StringType()),
        ("count_in_window", LongType()),
        ("first_at", TimestampType()),
        ("last_at", TimestampType()),
        *_WINDOW,
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "user_name": "who ran the statements ('' when the log has no user)",
        "kind": "read / write (succeeded) / failed_write",
        "count_in_window": "statements of this kind by this user in the window",
        "first_at": "the user's first such statement in the log",
        "last_at": "the user's latest such statement in the log",
    },
)

DATASET_OWNERS = _table(
    "dataset_owners",
    "One row per dataset: its owner and which rule gave it (explicit owners file, catalog "
    "owner, else the dominant writer, inferred).",
    ("dataset",),
    [
        ("dataset", StringType()),
        ("owner", StringType()),
        ("contact", StringType()),
        ("rule", StringType()),
        ("evidence", StringType()),
        ("as_of", TimestampType()),
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "owner": "team or user responsible (null: no rule gave one)",
        "contact": "how to reach the owner (explicit rule only)",
        "rule": "explicit / catalog / inferred / none",
        "evidence": "the pattern, the catalog source, or the writer's share of writes",
    },
)

DATASET_EXPECTATIONS = _table(
    "dataset_expectations",
    "One row per dataset (fingerprint '') and per recurring statement writing it: the interval "
    "between successful writes, the expected next write and the status (on_time / late / "
    "stopped / new / irregular).",
    ("dataset", "fingerprint"),
    [
        ("dataset", StringType()),
        ("fingerprint", StringType()),
        ("occurrences", LongType()),
        ("median_interval_s", DoubleType()),
        ("p90_interval_s", DoubleType()),
        ("last_write_at", TimestampType()),
        ("expected_next_at", TimestampType()),
        ("late_after", TimestampType()),
        ("stopped_after", TimestampType()),
        ("status", StringType()),
        ("reason", StringType()),
        *_WINDOW,
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "fingerprint": "'' for the dataset; else the statement whose own cadence the row holds",
        "occurrences": "successful writes in the window_days up to last_write_at",
        "median_interval_s": "median seconds between consecutive successful writes",
        "p90_interval_s": "90th percentile of the seconds between successful writes",
        "last_write_at": "the latest successful write",
        "expected_next_at": "last_write_at + the median interval",
        "late_after": "last_write_at + activity.late_factor x p90",
        "stopped_after": "last_write_at + activity.stopped_factor x p90",
        "status": "on_time / late / stopped / new (fewer than activity.min_occurrences writes) "
        "/ irregular (p90 > activity.irregular_ratio x median)",
        "reason": "the status in words, with the figures",
        "window_start": "start of the cadence window (last_write_at - activity.window_days)",
    },
)

_HOP = StructType(
    [
        StructField("node", StringType(), True),
        StructField("owner", StringType(), True),
        StructField("contact", StringType(), True),
        StructField("rule", StringType(), True),
    ]
)

UPSTREAM_STALENESS = _table(
    "upstream_staleness",
    "One row per dataset and each late or stopped dataset upstream of it (table_closure): "
    "the shortest path to it and the owner of each hop.",
    ("dataset", "upstream"),
    [
        ("dataset", StringType()),
        ("upstream", StringType()),
        ("upstream_status", StringType()),
        ("upstream_last_write_at", TimestampType()),
        ("distance", IntegerType()),
        ("path", _STR_ARRAY),
        ("hops", ArrayType(_HOP)),
        ("as_of", TimestampType()),
    ],
    comments={
        **_ACTIVITY_COMMENTS,
        "upstream": "a late or stopped dataset upstream of dataset",
        "upstream_status": "late / stopped (dataset_expectations)",
        "upstream_last_write_at": "the upstream's latest successful write",
        "distance": "hops from upstream to dataset (table_closure.min_distance)",
        "path": "a shortest path from upstream to dataset (ties: smallest names)",
        "hops": "each node of the path with its owner, contact and owner rule",
    },
)
