"""The write stage of an extraction: each lineage table brought in line with the batch by one
idempotent MERGE (``LineageTables.write``), and the batch's outcomes tallied.

A MERGE whose rows are read from the facts or from the table it writes gives its rows as a
function (``storage.writes``): when another writer committed to the table meanwhile, the retry
derives them again from the snapshot it commits to. Rows derived from the snapshot before the
other writer's commit would undo it: overwrite the statistics it brought up to date, keep a
view definition it superseded, delete an edge it just added.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ErrorKind, ParseStatus
from lineage_udfs.spark.extract.batch import Batch
from lineage_udfs.spark.extract.context import RunContext
from lineage_udfs.spark.extract.edges import (
    DEFINITION_EDGE_KINDS,
    annotate_edge_kind,
    current_lineage_rows,
    fingerprint_stats,
    lineage_edges,
    stale_rows,
)
from lineage_udfs.spark.extract.transforms import (
    FINGERPRINT,
    MASKED_SQL,
    PARSE_RESULT,
    load_failures,
)
from lineage_udfs.spark.runtime.concurrency import run_concurrently
from lineage_udfs.spark.storage.facts import failed_execution, query_row_preferred
from lineage_udfs.spark.storage.schemas import (
    PARSED_STATEMENTS,
    QUARANTINE,
    QUERIES,
    UDF_RESULT_SCHEMA,
)
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import InsertNew, Pair, Reconcile, Upsert, again_on_retry

QUARANTINE_STATUSES: tuple[str, ...] = (str(ParseStatus.FAILED), str(ParseStatus.TIMEOUT))
"""Parse outcomes that give no lineage at all and are quarantined (plus skipped-as-too-large)."""


def write_batch(ctx: RunContext, rows: DataFrame, batch: Batch, parsed: DataFrame) -> None:
    """Merge the batch into every lineage table; count the batch's outcomes."""
    tables, fps = ctx.tables, batch.fingerprints
    if batch.statement_count <= BROADCAST_FINGERPRINTS:
        # every derivation below keeps the rows of the batch's fingerprints: scanned, not
        # shuffled (a small batch against a million stored query rows or edges)
        fps = F.broadcast(fps)
    merge_queries(tables, batch.relevant)
    _merge_parsed_statements(ctx, parsed, fps)
    # the rest reads queries and parsed_statements only, and each part writes its own table
    run_concurrently(
        [
            lambda: _merge_lineage(ctx, fps),
            lambda: _merge_quarantine(ctx, rows, fps),
            lambda: tally_outcomes(ctx, fps),
        ]
    )


def merge_queries(tables: LineageTables, relevant: DataFrame) -> None:
    """Upsert the batch's ``queries`` rows (one per query id). A stored row of the same query
    id is replaced only by a row that comes before it in ``facts.query_row_order``, so the
    stored row is the first of every row read for that query id, whatever runs read them in
    (an incremental source's lookback window reads stored rows again)."""
    tables.write("queries", Upsert(relevant.select(*QUERIES.columns), prefer=query_row_preferred))


BROADCAST_FINGERPRINTS = 20_000
"""A batch of at most this many distinct statements (a small increment; a 1M-row log has about
40,000) has its fingerprints broadcast to the joins that select the batch's stored rows. On
the 1M-row benchmark broadcasting them measured no faster than the shuffles."""


def tally_outcomes(ctx: RunContext, fps: DataFrame) -> None:
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


def _merge_parsed_statements(ctx: RunContext, parsed: DataFrame, batch_fps: DataFrame) -> None:
    """Upsert new parses and refresh usage stats of every fingerprint in the batch (stats and
    the stored parses read anew for each attempt)."""
    tables = ctx.tables
    result_fields = [f for f in UDF_RESULT_SCHEMA.fieldNames() if f in PARSED_STATEMENTS.columns]
    new_rows = parsed.select(
        FINGERPRINT,
        "dialect",
        MASKED_SQL,
        *[F.col(f"{PARSE_RESULT}.{f}").alias(f) for f in result_fields],
        F.lit(ctx.summary.parser_version).alias("parser_version"),
    )

    def rows() -> DataFrame:
        stats = fingerprint_stats(tables.read("queries").join(batch_fps, FINGERPRINT, "left_semi"))
        existing = (
            tables.read("parsed_statements")
            .join(batch_fps, FINGERPRINT, "left_semi")
            .join(new_rows.select(FINGERPRINT), FINGERPRINT, "left_anti")
            .drop("first_seen", "last_seen", "occurrences")
        )
        return new_rows.unionByName(existing).join(stats, FINGERPRINT, "inner")

    tables.write("parsed_statements", Upsert(rows))


def _merge_lineage(ctx: RunContext, batch_fps: DataFrame) -> None:
    """Recompute the edges of the touched fingerprints and objects; reconcile both edge tables.

    Unless ``include_failed``, rows of failed or aborted executions give no edge: a statement
    whose every execution failed has none, and a failed redefinition leaves the view's current
    definition in place.

    A retried MERGE (another writer committed to the edge table meanwhile) derives its desired
    and stale rows again from the facts and the edges as they are then."""
    tables, summary = ctx.tables, ctx.summary
    # both edge tables derive from these rows: computed once (a read of every query row of the
    # touched fingerprints and objects, with their parse results); a retry reads them again
    shared = _lineage_scope(ctx, batch_fps)

    def reconcile(table: str, column_level: bool) -> None:
        counts: dict[str, int] = {}

        def changes(scope: _LineageScope) -> Pair:
            desired, counts["desired"] = ctx.keep(
                lineage_edges(scope.current, scope.parsed, column_level=column_level),
                checkpoint=True,
            )
            existing = tables.read(table)
            in_scope = (
                existing.join(batch_fps, FINGERPRINT, "left_semi")
                .unionByName(
                    existing.join(scope.objects, ["edge_kind", "object_name"], "left_semi")
                )
                .distinct()
            )
            stale, counts["stale"] = ctx.keep(stale_rows(in_scope, desired, table), checkpoint=True)
            return desired, stale

        first = changes(shared)
        written = 0
        if counts["desired"] or counts["stale"]:
            rows = again_on_retry(first, lambda: changes(_lineage_scope(ctx, batch_fps)))
            written = _written(tables.write(table, Reconcile(rows)))
        n_desired = counts["desired"]  # of the attempt that committed
        if column_level:
            summary.column_edges_in_scope, summary.column_edges_written = n_desired, written
        else:
            summary.table_edges_in_scope, summary.table_edges_written = n_desired, written

    run_concurrently(
        [lambda: reconcile("table_lineage", False), lambda: reconcile("column_lineage", True)]
    )


@dataclass(frozen=True)
class _LineageScope:
    """What both edge tables of a batch derive from, read from the facts at one time."""

    current: DataFrame
    """``current_lineage_rows`` of the batch's fingerprints and defined objects (materialized)."""
    objects: DataFrame
    """``(edge_kind, object_name)`` of the views and procedures the batch defines."""
    parsed: DataFrame
    """``parsed_statements``."""


def _lineage_scope(ctx: RunContext, batch_fps: DataFrame) -> _LineageScope:
    """The query rows whose lineage counts for the batch's fingerprints and the objects it
    defines (their newest definitions), read from ``queries`` and ``parsed_statements`` now."""
    parsed_all = ctx.tables.read("parsed_statements")
    queries = ctx.tables.read("queries")
    if not ctx.settings.lineage.include_failed_executions:
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
    current, _ = ctx.keep(current_lineage_rows(scope_rows), checkpoint=True)
    return _LineageScope(current, objects, parsed_all)


def _merge_quarantine(ctx: RunContext, rows: DataFrame, batch_fps: DataFrame) -> None:
    """Insert load failures and parse failures not yet quarantined (deterministic ids).

    Parse failures are read back from ``parsed_statements`` for the batch's fingerprints (not
    from this run's UDF output), so a run that stopped after parsing is completed by the next.
    """
    tables, summary = ctx.tables, ctx.summary
    load = load_quarantine(rows)
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
    metrics = tables.write("quarantine", InsertNew(rows))
    summary.quarantined_new = metrics.get("numTargetRowsInserted", 0)


def load_quarantine(rows: DataFrame) -> DataFrame:
    """The load failures of ``rows`` as quarantine rows with their deterministic ids."""
    return load_failures(rows).withColumn(
        "quarantine_id",
        F.sha2(F.concat_ws("\x1f", F.lit("load"), F.col("source_file"), F.col("query_id")), 256),
    )
