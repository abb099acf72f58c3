"""The extraction stages: query logs → parsed statements → lineage Delta tables.

:func:`extract` runs them in order over one :class:`~lineage_udfs.spark.run_context.RunContext`:

1. **read**: the only pass over the SQL text; every row is masked and fingerprinted
   (``transforms.prepare_rows``) and kept at ``execution.storage_level``;
2. **prepare**: narrow rows (no SQL text) are deduplicated by query id and one representative
   row per fingerprint gets its text back;
3. **parse**: the parse UDF over the fingerprints not parsed yet under this parser version;
4. **write**: ``queries``, ``parsed_statements``, the edge tables and the quarantine, each with
   an idempotent MERGE; then the run's ``lineage_runs`` row.

Memory does not grow with the log: shuffles by query id and by fingerprint carry narrow rows,
and the text joins back for one row per fingerprint. Shuffle partitions are derived from the
input's size (``execution``), and no join is broadcast from a size estimate
(``spark.sql.autoBroadcastJoinThreshold`` -1 in conf/base.yaml): only AQE broadcasts, from
measured sizes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ErrorKind, ParseStatus
from lineage_udfs.redaction import settings_json
from lineage_udfs.settings import ROW_OVERHEAD_BYTES, ExecutionSettings, JobSettings
from lineage_udfs.sources.jdbc import jdbc_passwords
from lineage_udfs.sources.reconcile import reconcile_native_lineage
from lineage_udfs.spark.catalog import (
    Catalog,
    import_catalog,
    load_catalog,
    with_statement_catalogs,
)
from lineage_udfs.spark.concurrency import in_background, run_concurrently
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
from lineage_udfs.spark.preflight import check_sink_writable, input_listing
from lineage_udfs.spark.readers import LOAD_ERROR, SOURCE_NAME, read_query_logs
from lineage_udfs.spark.run_context import (
    RunContext,
    RunSummary,
    default_parallelism,
    session_confs,
)
from lineage_udfs.spark.schemas import PARSED_STATEMENTS, QUARANTINE, QUERIES, UDF_RESULT_SCHEMA
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
from lineage_udfs.spark.watermark import IncrementalRead

logger = logging.getLogger(__name__)

SHUFFLE_PARTITIONS_CONF = "spark.sql.shuffle.partitions"
MIN_FILE_PARTITIONS_CONF = "spark.sql.files.minPartitionNum"
CACHE_BATCH_CONF = "spark.sql.inMemoryColumnarStorage.batchSize"

QUARANTINE_STATUSES: tuple[str, ...] = (str(ParseStatus.FAILED), str(ParseStatus.TIMEOUT))
"""Parse outcomes that give no lineage at all and are quarantined (plus skipped-as-too-large)."""


def extract(
    spark: SparkSession, settings: JobSettings, environ: Mapping[str, str] = os.environ
) -> RunSummary:
    """Extract lineage from the configured query logs into the configured Delta tables.

    Re-running on the same input leaves parsed_statements, queries, table_lineage,
    column_lineage and quarantine unchanged; lineage_runs gets one row per run. The watermarks
    of incremental sources are committed last, after every lineage table
    (``spark.watermark``). JDBC passwords are read from ``environ`` (``jdbc.password_env``).

    Raises:
        ConfigError: a JDBC source's password variable is not set.
        InputError: a source cannot be read or lacks a required column.
        OutputError: the output location is not writable (checked before any work).
    """
    check_sink_writable(spark, settings.sink)  # before any work
    ctx = RunContext.start(spark, settings, parser_version(settings.parser.options))
    confs = {
        CACHE_BATCH_CONF: str(settings.execution.cache_batch_rows),
        MIN_FILE_PARTITIONS_CONF: _min_read_partitions(spark, settings.execution),
    }
    versions: dict[str, int] = {}
    try:
        inputs = _Inputs(
            jdbc_passwords([*settings.sources, *settings.catalog.sources], environ),
            IncrementalRead(ctx.tables, ctx.summary.run_id),
        )
        with session_confs(spark, confs):
            versions = _stages(ctx, inputs)
            if ctx.summary.unchanged_since is None:  # else: as that run left it
                ctx.summary.reconciliation = reconcile_native_lineage(
                    spark, settings.sources, ctx.tables
                )
            inputs.incremental.commit()  # the last write: see spark.watermark
        ctx.finish("succeeded")
    except Exception:
        ctx.finish("failed")
        raise
    finally:
        ctx.release()
        current = _versions(ctx) if ctx.summary.status == "succeeded" else None
        if current is not None and versions == current:
            ctx.summary.changed = False  # nothing new: no table gets a new version
            logger.info("nothing new in the input: no lineage table changed, run not recorded")
        else:
            _record_run(ctx, current)
            if ctx.summary.status == "succeeded":
                for table in (*FACT_TABLES, "lineage_runs"):
                    ctx.tables.compact(table)
    logger.info("extraction summary\n%s", ctx.summary.describe())
    return ctx.summary


@dataclass
class _Inputs:
    """What a run reads besides the settings: JDBC passwords, the incremental sources'
    watermarks, and the catalog (after the setup stage)."""

    passwords: dict[str, str]
    incremental: IncrementalRead
    catalog: Catalog | None = field(default=None)


FACT_TABLES: tuple[str, ...] = (
    "queries",
    "parsed_statements",
    "table_lineage",
    "column_lineage",
    "quarantine",
)
"""The tables an extraction run writes (besides its own lineage_runs row)."""


def _versions(ctx: RunContext) -> dict[str, int]:
    return {table: ctx.tables.latest_version(table) for table in FACT_TABLES}


def _stages(ctx: RunContext, inputs: _Inputs) -> dict[str, int]:
    """Run the stages; returns the written tables' versions before the run wrote them.

    On a new warehouse (no ``lineage_runs`` yet, no incremental source: nothing to compare
    with, no watermark to read) the tables are created while the log is read and prepared:
    creating a dozen Delta tables is mostly the driver's work, reading the log the cores'."""
    settings, summary = ctx.settings, ctx.summary
    if settings.execution.skip_unchanged_input:
        summary.input_listing = input_listing(ctx.spark, settings.sources)
    fresh = not any(s.incremental for s in settings.sources) and not ctx.tables.exists(
        "lineage_runs"
    )
    creating = in_background(ctx.tables.ensure_all) if fresh else nullcontext(None)
    with creating as created:
        versions: dict[str, int] = {}
        if created is None:
            with ctx.stage("setup"):
                ctx.tables.ensure_all()
                versions = _setup(ctx, inputs)
                summary.unchanged_since = _unchanged_since(ctx, versions)
        if summary.unchanged_since is not None:
            summary.stored_already = True
            logger.info(
                "the input files and settings are those of run %s, and no lineage table was"
                " written since: nothing to read",
                summary.unchanged_since,
            )
            return versions
        with ctx.stage("read"):
            rows = _read(ctx, inputs)
        partitions = summary.shuffle_partitions
        shuffle = str(partitions) if partitions else None
        with session_confs(ctx.spark, {SHUFFLE_PARTITIONS_CONF: shuffle}), ctx.stage("prepare"):
            batch = _prepare(ctx, rows)
        if created is not None:
            with ctx.stage("setup"):
                created.result()  # raises what creating the tables raised
                versions = _setup(ctx, inputs)
    with session_confs(ctx.spark, {SHUFFLE_PARTITIONS_CONF: shuffle}):
        with ctx.stage("parse"):
            parsed = _parse(ctx, batch, inputs.catalog)
        with ctx.stage("write"):
            if _already_stored(ctx, rows, batch):
                ctx.summary.stored_already = True
                logger.info("every row of the batch is stored already: no MERGE needed")
                _tally_outcomes(ctx, batch.fingerprints)
            else:
                _write(ctx, rows, batch, parsed)
    return versions


def _setup(ctx: RunContext, inputs: _Inputs) -> dict[str, int]:
    """The written tables' versions before the run (its tables exist), and the catalog
    imported."""
    versions = _versions(ctx)
    inputs.catalog = _catalog(ctx, inputs)
    return versions


def _catalog(ctx: RunContext, inputs: _Inputs) -> Catalog | None:
    """Import the catalog sources; the catalog the parser gets (None: no catalog). Its digest
    joins the parser version, so statements are parsed again against a changed catalog."""
    settings = ctx.settings.catalog
    import_catalog(ctx.spark, settings, ctx.tables, inputs.passwords)
    catalog = load_catalog(ctx.tables) if settings.sources else None
    if catalog is not None:
        ctx.summary.parser_version = f"{ctx.summary.parser_version}+c{catalog.digest}"
        ctx.kept.append(catalog.tables)
    return catalog


def _read(ctx: RunContext, inputs: _Inputs) -> DataFrame:
    """Every log row (of incremental sources: those newer than their watermark), prepared once
    (``prepare_rows``) and persisted; fills the read counts and the shuffle partition count."""
    settings, summary = ctx.settings, ctx.summary
    logs = read_query_logs(
        ctx.spark,
        settings.sources,
        settings.limits.max_field_chars,
        passwords=inputs.passwords,
        incremental=inputs.incremental,
    )
    log = with_default_dialect(logs, settings.parser.options.default_dialect)
    rows = ctx.persist(prepare_rows(log, settings.limits.max_masked_sql_chars))
    stats = rows.agg(
        F.count(F.lit(1)).alias("rows"),
        F.count(F.when(F.col(LOAD_ERROR).isNotNull(), 1)).alias("bad"),
        F.sum(QUERY_BYTES).alias("bytes"),
        # order-independent, overflow-free digest of the input's identities
        F.sum(F.xxhash64(SOURCE_NAME, "query_id").bitwiseAND(F.lit(0xFFFFFFFF))).alias("input"),
    ).first()
    assert stats is not None  # an aggregate without grouping has one row
    summary.rows_read = int(stats["rows"] or 0)
    summary.load_quarantined = int(stats["bad"] or 0)
    summary.input_bytes = int(stats["bytes"] or 0)
    summary.input_fingerprint = f"{int(stats['input'] or 0):016x}"
    summary.shuffle_partitions = settings.execution.shuffle_partitions_for(
        summary.input_bytes + ROW_OVERHEAD_BYTES * summary.rows_read,
        default_parallelism(ctx.spark) or 1,
    )
    return rows


@dataclass(frozen=True)
class _Batch:
    """The run's relevant rows (one per query id), its distinct statements with their texts
    and their fingerprints."""

    relevant: DataFrame
    statements: DataFrame
    statement_count: int
    fingerprints: DataFrame


def _prepare(ctx: RunContext, rows: DataFrame) -> _Batch:
    """Narrow rows (no SQL text) through the shuffles by query id and by fingerprint, then the
    text of one row per fingerprint (the representatives are broadcast when small)."""
    summary = ctx.summary
    relevant, relevant_with_dups = ctx.keep(narrow_relevant_rows(rows))
    summary.rows_not_relevant = summary.rows_read - summary.load_quarantined - relevant_with_dups
    relevant = relevant.where(F.col(DEDUPE_RANK) == 1).drop(DEDUPE_RANK)
    summary.rows_relevant = relevant.count()
    summary.duplicate_query_ids = relevant_with_dups - summary.rows_relevant
    representatives, summary.distinct_statements = ctx.keep(representative_rows(relevant))
    statements, n_statements = ctx.keep(with_statement_texts(representatives, rows))
    if n_statements != summary.distinct_statements:
        raise RuntimeError(
            f"{summary.distinct_statements} distinct statements but {n_statements} with"
            " their text: the cached log rows changed under the run"
        )
    return _Batch(relevant, statements, n_statements, representatives.select(FINGERPRINT))


def _parse(ctx: RunContext, batch: _Batch, catalog: Catalog | None) -> DataFrame:
    """Parse the batch's statements not parsed yet under this parser version (all of them when
    ``parser.incremental`` is off), each with the part of the catalog its text names; the
    results are checkpointed."""
    settings, summary = ctx.settings, ctx.summary
    to_parse = batch.statements
    if settings.parser.incremental:
        done = (
            ctx.tables.read("parsed_statements")
            .where(F.col("parser_version") == summary.parser_version)
            .select(FINGERPRINT)
        )
        to_parse = to_parse.join(done, FINGERPRINT, "left_anti")
    if catalog is not None:
        to_parse = with_statement_catalogs(
            to_parse, catalog, settings.catalog.max_tables_per_statement
        )
    partitions = settings.parser.partitions or _parse_partitions(ctx.spark, batch.statement_count)
    parsed, summary.parsed_statements = ctx.keep(
        parse_statements(to_parse, settings.parser.options, partitions), checkpoint=True
    )
    summary.reused_statements = summary.distinct_statements - summary.parsed_statements
    return parsed


def _write(ctx: RunContext, rows: DataFrame, batch: _Batch, parsed: DataFrame) -> None:
    """Merge the batch into every lineage table; count the batch's outcomes."""
    tables, fps = ctx.tables, batch.fingerprints
    if batch.statement_count <= BROADCAST_FINGERPRINTS:
        # every derivation below keeps the rows of the batch's fingerprints: scanned, not
        # shuffled (a small batch against a million stored query rows or edges)
        fps = F.broadcast(fps)
    merge_upsert(tables, "queries", batch.relevant.select(*QUERIES.columns))
    stats = fingerprint_stats(tables.read("queries").join(fps, FINGERPRINT, "left_semi"))
    _merge_parsed_statements(ctx, parsed, stats, fps)
    # the rest reads queries and parsed_statements only, and each part writes its own table
    run_concurrently(
        [
            lambda: _merge_lineage(ctx, fps),
            lambda: _merge_quarantine(ctx, rows, fps),
            lambda: _tally_outcomes(ctx, fps),
        ]
    )


BROADCAST_FINGERPRINTS = 20_000
"""A batch of at most this many distinct statements (a small increment; a 1M-row log has about
40,000) has its fingerprints broadcast to the joins that select the batch's stored rows. On
the 1M-row benchmark broadcasting them measured no faster than the shuffles."""


def _tally_outcomes(ctx: RunContext, fps: DataFrame) -> None:
    """The batch's statements by status, parser and error kind (from parsed_statements)."""
    summary = ctx.summary
    outcomes = (
        ctx.tables.read("parsed_statements")
        .join(fps, FINGERPRINT, "left_semi")
        .groupBy("status", "parser", "error_kind")
        .count()
        .collect()
    )  # one job for the three tallies
    summary.by_status = _tally(outcomes, "status")
    summary.by_parser = _tally(outcomes, "parser")
    summary.by_error_kind = _tally(
        [r for r in outcomes if r["error_kind"] is not None], "error_kind"
    )


_RUN_KEY, _VERSIONS_KEY = "lineage_run", "fact_table_versions"
_LISTING_KEY, _PARSER_KEY = "input_listing", "parser_version"
_STATUS_KEY, _SETTINGS_KEY = "status", "row_settings"
"""Keys of the userMetadata of a run's ``lineage_runs`` commit: the run, the versions of the
fact tables when it ended, its input listing (None: not told), its parser version, its status
and the digest of its settings (``_settings_digest``)."""


def _last_recorded_run(tables: LineageTables) -> dict[str, Any] | None:
    """The userMetadata of the newest run recorded in ``lineage_runs`` (None: none, or
    recorded without one)."""
    for commit in tables.recent_commits("lineage_runs", 5):
        if commit["operation"] in ("OPTIMIZE", "SET TBLPROPERTIES"):
            continue
        try:
            marker = json.loads(commit["userMetadata"] or "")
        except ValueError:
            return None
        return marker if isinstance(marker, dict) and _RUN_KEY in marker else None
    return None


def _already_stored(ctx: RunContext, rows: DataFrame, batch: _Batch) -> bool:
    """Whether the write stage would change nothing, checked at a fraction of its cost.

    True when nothing was parsed anew, the newest run recorded in ``lineage_runs`` succeeded
    under the same settings (``NOT_ROW_SETTINGS`` aside: the sources read, the session, the
    later stages), no fact table was written since it ended (the versions it recorded are the
    current ones), every query row of the batch is stored with equal values and every load
    failure is quarantined.

    Every successful run leaves the derived rows (statement statistics, edges, parse
    quarantine) of every fingerprint it touched consistent with the facts, and the facts of a
    fingerprint change only in a run that touches it. So when no fact changed since a
    successful run, the derived rows of every stored fingerprint are what the facts give, and
    MERGEing a batch whose rows are all stored (the same export again, or a part of it
    delivered through another source) would change no row. Crash recovery holds: a run that
    died between two MERGEs either wrote a fact table (the versions differ) or recorded a
    failed run; both make the next run MERGE everything. A run that changes nothing records
    nothing, so a rerun of a rerun still finds the run that wrote the tables.
    """
    if ctx.summary.parsed_statements or _finished_run(ctx, _versions(ctx)) is None:
        return False
    stored = ctx.tables.read("queries")
    batch_rows = batch.relevant.select(*QUERIES.columns)
    same = reduce(
        lambda a, b: a & b,
        [batch_rows[c].eqNullSafe(stored[c]) for c in QUERIES.columns],
    )
    if not batch_rows.join(stored, same, "left_anti").isEmpty():
        return False
    quarantined = ctx.tables.read("quarantine").select("quarantine_id")
    load = _load_quarantine(rows).select("quarantine_id")
    return load.join(quarantined, "quarantine_id", "left_anti").isEmpty()


def _finished_run(ctx: RunContext, versions: dict[str, int]) -> dict[str, Any] | None:
    """The marker of the newest run recorded in ``lineage_runs`` when that run succeeded under
    the same settings (``NOT_ROW_SETTINGS`` aside) and no fact table was written since it
    ended (``versions``, the current ones, are those it recorded); else None."""
    recorded = _last_recorded_run(ctx.tables)
    if recorded is None or recorded.get(_VERSIONS_KEY) != versions:
        return None
    settings = _settings_digest(settings_json(ctx.settings))
    if _SETTINGS_KEY in recorded:  # the marker says it all: no table read
        finished = recorded.get(_STATUS_KEY) == "succeeded" and recorded[_SETTINGS_KEY] == settings
        return recorded if finished else None
    run = (
        ctx.tables.read("lineage_runs")
        .where(F.col("run_id") == recorded[_RUN_KEY])
        .select("status", "config_json")
        .first()
    )
    if (
        run is None
        or run["status"] != "succeeded"
        or _settings_digest(run["config_json"]) != settings
    ):
        return None
    return recorded


def _unchanged_since(ctx: RunContext, versions: dict[str, int]) -> str | None:
    """The run whose input this run's is, unchanged, or None.

    A run's input is unchanged when the newest recorded run finished as ``_finished_run``
    requires, under the same parser version (its catalog's digest included), and its input
    listing (``preflight.input_listing``: the sources' settings and every file's path, size
    and modification time) is this run's. Reading it again would find every row stored (see
    ``_already_stored``), so the run reads nothing. Checked before the read stage: a few
    Delta log reads instead of reading, preparing and comparing the log.
    """
    listing = ctx.summary.input_listing
    if listing is None:
        return None
    recorded = _finished_run(ctx, versions)
    if (
        recorded is None
        or recorded.get(_LISTING_KEY) != listing
        or recorded.get(_PARSER_KEY) != ctx.summary.parser_version
    ):
        return None
    return str(recorded[_RUN_KEY])


NOT_ROW_SETTINGS = ("sources", "sink", "spark", "execution", "logging", "graph", "openlineage")
"""Settings sections that do not change what the write stage stores for given facts: which
files a run reads (its rows are compared themselves), where the tables are (the recorded run
is read from these tables: a copied warehouse holds its own history), the Spark session, how
the job sizes and keeps its intermediate data, logging, and the stages after the write."""


def _settings_digest(config_json: str | None) -> str | None:
    """Digest of a run's recorded settings without ``NOT_ROW_SETTINGS``."""
    if config_json is None:
        return None
    config = json.loads(config_json)
    for section in NOT_ROW_SETTINGS:
        config.pop(section, None)
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
costs many times a good one, a rare huge one seconds): with few tasks per core, one core
finishes its last task while another still runs one, idle for up to a task's length. Smaller
tasks shorten that tail; Arrow batches and the per-worker parser make a task's fixed cost
small."""

MIN_STATEMENTS_PER_TASK = 32
"""Fewest statements a parse task is cut to before PARSE_TASKS_PER_CORE applies: below it a
task's fixed cost (scheduling, the Arrow round trip, result blocks) outweighs its parsing."""


def _min_read_partitions(spark: SparkSession, execution: ExecutionSettings) -> str | None:
    """``spark.sql.files.minPartitionNum`` for the run: ``execution.min_read_partitions``, else
    READ_TASKS_PER_CORE x the cores; None (leave the session's) where the session sets it or
    the cores are unknown. Spark cuts a file source into splits of at most total bytes / this
    (and at most ``spark.sql.files.maxPartitionBytes``), and the read stage (masking and
    fingerprinting every row) runs one task per split: with the default (the cores), a log of
    a few large files leaves cores idle while the last split is read alone."""
    if execution.min_read_partitions:
        return str(execution.min_read_partitions)
    if spark.conf.get(MIN_FILE_PARTITIONS_CONF, None):
        return None
    cores = default_parallelism(spark)
    return str(READ_TASKS_PER_CORE * cores) if cores else None


READ_TASKS_PER_CORE = 4
"""Read tasks per core when the session does not say: a core's idle tail at the end of the read
stage is at most a quarter of its share."""


def _written(metrics: dict[str, int]) -> int:
    return sum(
        metrics.get(k, 0)
        for k in ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
    )


def _tally(rows: list[Row], column: str) -> dict[str, int]:
    """Sum ``count`` over rows by ``column``, largest first."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r[column])] = counts.get(str(r[column]), 0) + int(r["count"])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _merge_parsed_statements(
    ctx: RunContext, parsed: DataFrame, stats: DataFrame, batch_fps: DataFrame
) -> None:
    """Upsert new parses and refresh usage stats of every fingerprint in the batch."""
    tables = ctx.tables
    result_fields = [f for f in UDF_RESULT_SCHEMA.fieldNames() if f in PARSED_STATEMENTS.columns]
    new_rows = parsed.select(
        FINGERPRINT,
        "dialect",
        MASKED_SQL,
        *[F.col(f"{PARSE_RESULT}.{f}").alias(f) for f in result_fields],
        F.lit(ctx.summary.parser_version).alias("parser_version"),
    )
    existing = (
        tables.read("parsed_statements")
        .join(batch_fps, FINGERPRINT, "left_semi")
        .join(new_rows.select(FINGERPRINT), FINGERPRINT, "left_anti")
        .drop("first_seen", "last_seen", "occurrences")
    )
    rows = new_rows.unionByName(existing).join(stats, FINGERPRINT, "inner")
    merge_upsert(tables, "parsed_statements", rows)


def _merge_lineage(ctx: RunContext, batch_fps: DataFrame) -> None:
    """Recompute the edges of the touched fingerprints and objects; reconcile both edge tables.

    Unless ``include_failed``, rows of failed or aborted executions give no edge: a statement
    whose every execution failed has none, and a failed redefinition leaves the view's current
    definition in place."""
    tables, summary = ctx.tables, ctx.summary
    include_failed = ctx.settings.lineage.include_failed_executions
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
    # both edge tables derive from these rows: computed once (a read of every query row of the
    # touched fingerprints and objects, with their parse results)
    current, _ = ctx.keep(current_lineage_rows(scope_rows), checkpoint=True)

    def reconcile(table: str, column_level: bool) -> None:
        desired, n_desired = ctx.keep(
            lineage_edges(current, parsed_all, column_level=column_level), checkpoint=True
        )
        existing = tables.read(table)
        in_scope = (
            existing.join(batch_fps, FINGERPRINT, "left_semi")
            .unionByName(existing.join(objects, ["edge_kind", "object_name"], "left_semi"))
            .distinct()
        )
        stale, n_stale = ctx.keep(stale_rows(in_scope, desired, table), checkpoint=True)
        written = 0
        if n_desired or n_stale:
            written = _written(merge_reconcile(tables, table, desired, stale))
        if column_level:
            summary.column_edges_in_scope, summary.column_edges_written = n_desired, written
        else:
            summary.table_edges_in_scope, summary.table_edges_written = n_desired, written

    run_concurrently(
        [lambda: reconcile("table_lineage", False), lambda: reconcile("column_lineage", True)]
    )


def _merge_quarantine(ctx: RunContext, rows: DataFrame, batch_fps: DataFrame) -> None:
    """Insert load failures and parse failures not yet quarantined (deterministic ids).

    Parse failures are read back from ``parsed_statements`` for the batch's fingerprints (not
    from this run's UDF output), so a run that stopped after parsing is completed by the next.
    """
    tables, summary = ctx.tables, ctx.summary
    load = _load_quarantine(rows)
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


def _load_quarantine(rows: DataFrame) -> DataFrame:
    """The load failures of ``rows`` as quarantine rows with their deterministic ids."""
    return load_failures(rows).withColumn(
        "quarantine_id",
        F.sha2(F.concat_ws("\x1f", F.lit("load"), F.col("source_file"), F.col("query_id")), 256),
    )


def _record_run(ctx: RunContext, fact_versions: dict[str, int] | None = None) -> None:
    """Append this run's row to lineage_runs (best effort when the run itself failed), its
    commit marked with the fact tables' versions (``fact_versions``, read when None)."""
    tables, summary = ctx.tables, ctx.summary
    try:
        tables.ensure("lineage_runs")
        row = ctx.spark.range(1).select(
            F.lit(summary.run_id).alias("run_id"),
            F.lit(summary.started_at).cast("timestamp").alias("started_at"),
            F.current_timestamp().alias("ended_at"),
            F.lit(settings_json(ctx.settings)).alias("config_json"),
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
        versions = fact_versions if fact_versions is not None else _versions(ctx)
        marker = {
            _RUN_KEY: summary.run_id,
            _VERSIONS_KEY: versions,
            _LISTING_KEY: summary.input_listing,
            _PARSER_KEY: summary.parser_version,
            _STATUS_KEY: summary.status,
            _SETTINGS_KEY: _settings_digest(settings_json(ctx.settings)),
        }
        tables.append("lineage_runs", row, metadata=json.dumps(marker, sort_keys=True))
    except Exception:
        if summary.status == "succeeded":
            raise
        logger.exception("could not record the failed run %s in lineage_runs", summary.run_id)
