"""The extraction pipeline: query logs → parsed statements → lineage Delta tables.

``run(spark, settings)`` sequences the steps; each step is a function of ``readers``,
``transforms``, ``udfs`` and ``delta``. Stages are timed on the driver at their materialization
points (read, prepare, parse, write).

Memory does not grow with the log: the SQL text of a row is read, masked and fingerprinted once
(read stage) and kept only on disk (``execution.storage_level``); shuffles by query id and by
fingerprint carry narrow rows, and the text joins back for one row per fingerprint. Shuffle
partitions are derived from the input's size (``execution``), and no join is broadcast from a
size estimate (``spark.sql.autoBroadcastJoinThreshold`` -1 in conf/base.yaml): only AQE
broadcasts, from measured sizes.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ErrorKind, ParseStatus
from lineage_udfs.settings import ROW_OVERHEAD_BYTES, ExecutionSettings, JobSettings
from lineage_udfs.spark.delta import (
    DEFINITION_EDGE_KINDS,
    LineageTables,
    annotate_edge_kind,
    current_lineage_rows,
    dict_to_map,
    failed_execution,
    fingerprint_stats,
    lineage_edges,
    merge_insert_only,
    merge_reconcile,
    merge_upsert,
    stale_rows,
)
from lineage_udfs.spark.readers import LOAD_ERROR, SOURCE_NAME, read_query_logs
from lineage_udfs.spark.schemas import (
    PARSED_STATEMENTS,
    QUARANTINE,
    QUERIES,
    UDF_RESULT_SCHEMA,
)
from lineage_udfs.spark.transforms import (
    DEDUPE_RANK,
    FINGERPRINT,
    MASKED_SQL,
    PARSE_RESULT,
    QUERY_BYTES,
    load_failures,
    narrow_relevant_rows,
    parse_statements,
    prepare_rows,
    representative_rows,
    with_default_dialect,
    with_statement_texts,
)
from lineage_udfs.spark.udfs import parser_version

logger = logging.getLogger(__name__)

SHUFFLE_PARTITIONS_CONF = "spark.sql.shuffle.partitions"
MIN_FILE_PARTITIONS_CONF = "spark.sql.files.minPartitionNum"
CACHE_BATCH_CONF = "spark.sql.inMemoryColumnarStorage.batchSize"

QUARANTINE_STATUSES: tuple[str, ...] = (str(ParseStatus.FAILED), str(ParseStatus.TIMEOUT))
"""Parse outcomes that give no lineage at all and are quarantined (plus skipped-as-too-large)."""


@dataclass
class RunSummary:
    """Counts and timings of one run (also the ``lineage_runs`` row)."""

    run_id: str
    started_at: datetime
    parser_version: str
    rows_read: int = 0
    load_quarantined: int = 0
    rows_not_relevant: int = 0
    rows_relevant: int = 0
    duplicate_query_ids: int = 0
    distinct_statements: int = 0
    parsed_statements: int = 0
    reused_statements: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    by_parser: dict[str, int] = field(default_factory=dict)
    by_error_kind: dict[str, int] = field(default_factory=dict)
    table_edges_written: int = 0
    column_edges_written: int = 0
    table_edges_in_scope: int = 0
    column_edges_in_scope: int = 0
    quarantined_new: int = 0
    input_fingerprint: str = ""
    input_bytes: int = 0
    shuffle_partitions: int | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)
    status: str = "running"

    def describe(self) -> str:
        """Multi-line human summary for the driver log."""
        seconds = ", ".join(f"{k}={v:.1f}s" for k, v in self.stage_seconds.items())
        return "\n".join(
            [
                f"run {self.run_id} ({self.status}), parser {self.parser_version}",
                f"  rows read            {self.rows_read}",
                f"  quarantined at load  {self.load_quarantined}",
                f"  not lineage-relevant {self.rows_not_relevant}",
                f"  relevant rows        {self.rows_relevant}"
                f" (duplicate query ids dropped: {self.duplicate_query_ids})",
                f"  distinct statements  {self.distinct_statements}"
                f" (parsed now {self.parsed_statements}, reused {self.reused_statements})",
                f"  by status            {self.by_status}",
                f"  by parser            {self.by_parser}",
                f"  by error kind        {self.by_error_kind}",
                f"  table edges          {self.table_edges_in_scope} in scope,"
                f" {self.table_edges_written} written (inserted/updated/deleted)",
                f"  column edges         {self.column_edges_in_scope} in scope,"
                f" {self.column_edges_written} written (inserted/updated/deleted)",
                f"  quarantined (new)    {self.quarantined_new}",
                f"  input                {self.input_bytes} bytes of SQL text,"
                f" shuffle partitions {self.shuffle_partitions or 'from the session'}",
                f"  seconds per stage    {seconds}",
            ]
        )


@contextmanager
def _stage(summary: RunSummary, name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        summary.stage_seconds[name] = round(time.perf_counter() - started, 3)


def _written(metrics: dict[str, int]) -> int:
    return sum(
        metrics.get(k, 0)
        for k in ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
    )


def _materialize(
    frame: DataFrame, level: StorageLevel, *, checkpoint: bool = False
) -> tuple[DataFrame, int]:
    """Compute ``frame`` once, stored at ``level``. ``checkpoint`` cuts the plan's lineage:
    needed for anything that reads a lineage table, because a Delta write invalidates cached
    plans that read the table and they would be recomputed against the new version (the parse
    UDF included)."""
    if checkpoint:
        stored = frame.localCheckpoint(eager=True, storageLevel=level)
    else:
        stored = frame.persist(level)
    return stored, stored.count()


def storage_level(execution: ExecutionSettings) -> StorageLevel:
    """The ``StorageLevel`` named by ``execution.storage_level``."""
    return getattr(StorageLevel, execution.storage_level)  # type: ignore[no-any-return]


def default_parallelism(spark: SparkSession) -> int | None:
    """Cores of the cluster, or None where the SparkContext is not reachable (Spark Connect,
    Databricks serverless)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # Connect sessions raise various errors here
        return None


def _parse_partitions(spark: SparkSession, statements: int) -> int:
    """PARSE_TASKS_PER_CORE x the cores (shuffle partitions where the SparkContext is not
    reachable), but no more tasks than it takes to give each MIN_STATEMENTS_PER_TASK
    statements, and never fewer than min(cores, statements): a run of a few dozen statements
    is not cut into dozens of near-empty tasks, and still uses every core."""
    cores = default_parallelism(spark)
    most = (
        PARSE_TASKS_PER_CORE * cores
        if cores
        else int(spark.conf.get(SHUFFLE_PARTITIONS_CONF) or "200")
    )
    by_size = -(-statements // MIN_STATEMENTS_PER_TASK)  # ceiling
    return max(1, min(most, max(by_size, min(cores or most, statements))))


PARSE_TASKS_PER_CORE = 8
"""Parse tasks per core. Parse tasks are all Python work of uneven length (a broken statement
costs ~20 x a good one, a rare huge one seconds): with few tasks per core, one core finishes its
last task while the other still runs one, idle for up to a task's length (at 3 per core on the
1M-row log, the two cores' last tasks ended 12.6 s apart in a 103 s stage). Smaller tasks shorten
that tail; Arrow batches and the per-worker parser make a task's fixed cost small."""

MIN_STATEMENTS_PER_TASK = 32
"""Fewest statements a parse task is cut to before PARSE_TASKS_PER_CORE applies: below it a
task's fixed cost (scheduling, the Arrow round trip, result blocks) outweighs its parsing."""


def _min_read_partitions(spark: SparkSession, execution: ExecutionSettings) -> str | None:
    """``spark.sql.files.minPartitionNum`` for the run: ``execution.min_read_partitions``, else
    READ_TASKS_PER_CORE x the cores; None (leave the session's) where the session sets it or
    the cores are unknown. Spark cuts a file source into splits of at most total bytes / this
    (and at most ``spark.sql.files.maxPartitionBytes``), and the read stage (masking and
    fingerprinting every row) runs one task per split: with the default (the cores), a 343 MB
    log on 2 cores became 3 splits of 128 MB, and the third ran alone (2M rows: read 326 s,
    2.6 x the 1M log's)."""
    if execution.min_read_partitions:
        return str(execution.min_read_partitions)
    if spark.conf.get(MIN_FILE_PARTITIONS_CONF, None):
        return None
    cores = default_parallelism(spark)
    return str(READ_TASKS_PER_CORE * cores) if cores else None


READ_TASKS_PER_CORE = 4
"""Read tasks per core when the session does not say: a core's idle tail at the end of the read
stage is at most a quarter of its share."""


@contextmanager
def _session_confs(spark: SparkSession, confs: dict[str, str | None]) -> Iterator[None]:
    """Set runtime SQL confs for the block (None: leave as is), then restore the session's
    values (a notebook session outlives the job)."""
    previous = {}
    for key, value in confs.items():
        if value is not None:
            previous[key] = spark.conf.get(key, None)
            spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def run(spark: SparkSession, settings: JobSettings) -> RunSummary:
    """Extract lineage from the configured query logs into the configured Delta tables.

    Re-running on the same input leaves parsed_statements, queries, table_lineage,
    column_lineage and quarantine unchanged; lineage_runs gets one row per run.

    Raises:
        InputError: a source cannot be read or lacks a required column.
    """
    summary = RunSummary(
        uuid.uuid4().hex, datetime.now(UTC), parser_version(settings.parser.to_options())
    )
    tables = LineageTables(spark, settings.sink)
    cached: list[DataFrame] = []
    confs = {
        CACHE_BATCH_CONF: str(settings.execution.cache_batch_rows),
        MIN_FILE_PARTITIONS_CONF: _min_read_partitions(spark, settings.execution),
    }
    try:
        with _session_confs(spark, confs):
            _run(spark, settings, tables, summary, cached)
        summary.status = "succeeded"
    except Exception:
        summary.status = "failed"
        raise
    finally:
        for frame in cached:
            frame.unpersist()
        summary.stage_seconds["total"] = round(
            (datetime.now(UTC) - summary.started_at).total_seconds(), 3
        )
        _record_run(spark, tables, settings, summary)
    logger.info("extraction summary\n%s", summary.describe())
    return summary


def _run(
    spark: SparkSession,
    settings: JobSettings,
    tables: LineageTables,
    summary: RunSummary,
    cached: list[DataFrame],
) -> None:
    level = storage_level(settings.execution)
    with _stage(summary, "setup"):
        tables.ensure_all()

    with _stage(summary, "read"):
        # the only pass over the SQL text: mask, fingerprint, keep texts of relevant rows only
        log = with_default_dialect(
            read_query_logs(spark, settings.sources), settings.parser.default_dialect
        )
        rows = prepare_rows(log).persist(level)
        cached.append(rows)
        stats = rows.agg(
            F.count(F.lit(1)).alias("rows"),
            F.count(F.when(F.col(LOAD_ERROR).isNotNull(), 1)).alias("bad"),
            F.sum(QUERY_BYTES).alias("bytes"),
            # order-independent, overflow-free digest of the input's identities
            F.sum(F.xxhash64(SOURCE_NAME, "query_id").bitwiseAND(F.lit(0xFFFFFFFF))).alias("input"),
        ).first()
        summary.rows_read = int(stats["rows"] or 0)  # type: ignore[index]
        summary.load_quarantined = int(stats["bad"] or 0)  # type: ignore[index]
        summary.input_bytes = int(stats["bytes"] or 0)  # type: ignore[index]
        summary.input_fingerprint = f"{int(stats['input'] or 0):016x}"  # type: ignore[index]
        summary.shuffle_partitions = settings.execution.shuffle_partitions_for(
            summary.input_bytes + ROW_OVERHEAD_BYTES * summary.rows_read,
            default_parallelism(spark) or 1,
        )

    partitions = summary.shuffle_partitions
    with _session_confs(spark, {SHUFFLE_PARTITIONS_CONF: partitions and str(partitions)}):
        _prepare_parse_write(spark, settings, tables, summary, cached, rows, level)


def _prepare_parse_write(
    spark: SparkSession,
    settings: JobSettings,
    tables: LineageTables,
    summary: RunSummary,
    cached: list[DataFrame],
    rows: DataFrame,
    level: StorageLevel,
) -> None:
    with _stage(summary, "prepare"):
        # narrow rows (no SQL text) through the shuffles by query id and by fingerprint
        relevant, relevant_with_dups = _materialize(narrow_relevant_rows(rows), level)
        cached.append(relevant)
        summary.rows_not_relevant = (
            summary.rows_read - summary.load_quarantined - relevant_with_dups
        )
        relevant = relevant.where(F.col(DEDUPE_RANK) == 1).drop(DEDUPE_RANK)
        summary.rows_relevant = relevant.count()
        summary.duplicate_query_ids = relevant_with_dups - summary.rows_relevant
        representatives, summary.distinct_statements = _materialize(
            representative_rows(relevant), level
        )
        cached.append(representatives)
        # the text of one row per fingerprint (the representatives are broadcast when small)
        statements, n_statements = _materialize(with_statement_texts(representatives, rows), level)
        cached.append(statements)
        if n_statements != summary.distinct_statements:
            raise RuntimeError(
                f"{summary.distinct_statements} distinct statements but {n_statements} with"
                " their text: the cached log rows changed under the run"
            )
        batch_fps = representatives.select(FINGERPRINT)

    with _stage(summary, "parse"):
        version = summary.parser_version
        to_parse = statements
        if settings.parser.incremental:
            done = (
                tables.read("parsed_statements")
                .where(F.col("parser_version") == version)
                .select(FINGERPRINT)
            )
            to_parse = statements.join(done, FINGERPRINT, "left_anti")
        partitions = settings.parser.partitions or _parse_partitions(spark, n_statements)
        parsed, summary.parsed_statements = _materialize(
            parse_statements(to_parse, settings.parser.to_options(), partitions),
            level,
            checkpoint=True,
        )
        summary.reused_statements = summary.distinct_statements - summary.parsed_statements

    with _stage(summary, "write"):
        merge_upsert(tables, "queries", relevant.select(*QUERIES.columns))
        stats_df = fingerprint_stats(
            tables.read("queries").join(batch_fps, FINGERPRINT, "left_semi")
        )
        _merge_parsed_statements(tables, parsed, stats_df, batch_fps, version)
        _merge_lineage(
            tables, batch_fps, summary, level, settings.lineage.include_failed_executions
        )
        _merge_quarantine(tables, rows, batch_fps, summary)
        counts = tables.read("parsed_statements").join(batch_fps, FINGERPRINT, "left_semi")
        summary.by_status = _count_by(counts, "status")
        summary.by_parser = _count_by(counts, "parser")
        summary.by_error_kind = _count_by(
            counts.where(F.col("error_kind").isNotNull()), "error_kind"
        )


def _count_by(frame: DataFrame, column: str) -> dict[str, int]:
    counts = {str(r[column]): int(r["count"]) for r in frame.groupBy(column).count().collect()}
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))  # largest first


def _merge_parsed_statements(
    tables: LineageTables,
    parsed: DataFrame,
    stats: DataFrame,
    batch_fps: DataFrame,
    version: str,
) -> None:
    """Upsert new parses and refresh usage stats of every fingerprint in the batch."""
    result_fields = [
        f for f in UDF_RESULT_SCHEMA.fieldNames() if f in PARSED_STATEMENTS.columns
    ]
    new_rows = parsed.select(
        FINGERPRINT,
        "dialect",
        MASKED_SQL,
        *[F.col(f"{PARSE_RESULT}.{f}").alias(f) for f in result_fields],
        F.lit(version).alias("parser_version"),
    )
    existing = (
        tables.read("parsed_statements")
        .join(batch_fps, FINGERPRINT, "left_semi")
        .join(new_rows.select(FINGERPRINT), FINGERPRINT, "left_anti")
        .drop("first_seen", "last_seen", "occurrences")
    )
    rows = new_rows.unionByName(existing).join(stats, FINGERPRINT, "inner")
    merge_upsert(tables, "parsed_statements", rows)


def _merge_lineage(
    tables: LineageTables,
    batch_fps: DataFrame,
    summary: RunSummary,
    level: StorageLevel,
    include_failed: bool,
) -> None:
    """Recompute the edges of the touched fingerprints and objects; reconcile both edge tables.

    Unless ``include_failed``, rows of failed or aborted executions give no edge: a statement
    whose every execution failed has none, and a failed redefinition leaves the view's current
    definition in place."""
    parsed_all = tables.read("parsed_statements")
    queries = tables.read("queries")
    if not include_failed:
        queries = queries.where(~failed_execution(F.col("status")))
    annotated = annotate_edge_kind(queries, parsed_all)
    batch_rows = annotated.join(batch_fps, FINGERPRINT, "left_semi")
    objects = (
        batch_rows.where(F.col("edge_kind").isin(*DEFINITION_EDGE_KINDS))
        .select("edge_kind", "object_name")
        .distinct()
    )
    object_rows = annotated.join(objects, ["edge_kind", "object_name"], "left_semi")
    scope_rows = batch_rows.unionByName(object_rows).dropDuplicates(["query_id"])
    current = current_lineage_rows(scope_rows)
    for table, column_level in (("table_lineage", False), ("column_lineage", True)):
        desired, n_desired = _materialize(
            lineage_edges(current, parsed_all, column_level=column_level), level, checkpoint=True
        )
        existing = tables.read(table)
        in_scope = (
            existing.join(batch_fps, FINGERPRINT, "left_semi")
            .unionByName(existing.join(objects, ["edge_kind", "object_name"], "left_semi"))
            .distinct()
        )
        stale, n_stale = _materialize(stale_rows(in_scope, desired, table), level, checkpoint=True)
        written = 0
        if n_desired or n_stale:
            written = _written(merge_reconcile(tables, table, desired, stale))
        if column_level:
            summary.column_edges_in_scope, summary.column_edges_written = n_desired, written
        else:
            summary.table_edges_in_scope, summary.table_edges_written = n_desired, written


def _merge_quarantine(
    tables: LineageTables,
    rows: DataFrame,
    batch_fps: DataFrame,
    summary: RunSummary,
) -> None:
    """Insert load failures and parse failures not yet quarantined (deterministic ids).

    Parse failures are read back from ``parsed_statements`` for the batch's fingerprints (not
    from this run's UDF output), so a run that stopped after parsing is completed by the next.
    """
    load = load_failures(rows).withColumn(
        "quarantine_id",
        F.sha2(F.concat_ws("\x1f", F.lit("load"), F.col("source_file"), F.col("query_id")), 256),
    )
    status = F.col("status")
    failed = (
        tables.read("parsed_statements")
        .join(batch_fps, FINGERPRINT, "left_semi")
        .where(
            status.isin(*QUARANTINE_STATUSES)
            | (
                (status == str(ParseStatus.SKIPPED))
                & (F.col("error_kind") == str(ErrorKind.TOO_LARGE))
            )
        )
    )
    parse = failed.select(
        F.sha2(F.concat_ws("\x1f", F.lit("parse"), F.col(FINGERPRINT)), 256).alias("quarantine_id"),
        F.lit("parse").alias("stage"),
        F.concat_ws(
            ": ",
            F.concat(F.lit("parse "), status),
            F.coalesce(F.col("error"), F.lit("no lineage")),
        ).alias("reason"),
        "error_kind",
        F.lit(None).cast("string").alias("query_id"),
        FINGERPRINT,
        F.lit(None).cast("string").alias("source_file"),
        F.col("masked_sql").alias("masked_record"),
        "first_seen",
        "last_seen",
    )
    rows = (
        load.unionByName(parse)
        .withColumn("run_id", F.lit(summary.run_id))
        .dropDuplicates(["quarantine_id"])
        .select(*QUARANTINE.columns)
    )
    metrics = merge_insert_only(tables, "quarantine", rows)
    summary.quarantined_new = metrics.get("numTargetRowsInserted", 0)


def _record_run(
    spark: SparkSession, tables: LineageTables, settings: JobSettings, summary: RunSummary
) -> None:
    """Append this run's row to lineage_runs (best effort when the run itself failed)."""
    try:
        tables.ensure("lineage_runs")
        row = spark.range(1).select(
            F.lit(summary.run_id).alias("run_id"),
            F.lit(summary.started_at).cast("timestamp").alias("started_at"),
            F.current_timestamp().alias("ended_at"),
            F.lit(settings.model_dump_json()).alias("config_json"),
            F.lit(summary.input_fingerprint).alias("input_fingerprint"),
            F.lit(summary.rows_read).cast("long").alias("rows_read"),
            F.lit(summary.rows_not_relevant).cast("long").alias("rows_not_relevant"),
            F.lit(summary.rows_relevant).cast("long").alias("rows_relevant"),
            F.lit(summary.distinct_statements).cast("long").alias("distinct_statements"),
            F.lit(summary.parsed_statements).cast("long").alias("parsed_statements"),
            dict_to_map(summary.by_status).cast("map<string,bigint>").alias("by_status"),
            dict_to_map(summary.by_parser).cast("map<string,bigint>").alias("by_parser"),
            F.lit(summary.table_edges_written).cast("long").alias("table_edges"),
            F.lit(summary.column_edges_written).cast("long").alias("column_edges"),
            F.lit(summary.quarantined_new).cast("long").alias("quarantined"),
            dict_to_map(summary.stage_seconds).cast("map<string,double>").alias("stage_seconds"),
            F.lit(summary.status).alias("status"),
        )
        tables.append("lineage_runs", row)
    except Exception:
        if summary.status == "succeeded":
            raise
        logger.exception("could not record the failed run %s in lineage_runs", summary.run_id)
