"""Spark adapter: publish the Delta lineage tables as OpenLineage events, in parallel.

``queries ⋈ parsed_statements ⋈ column_lineage (collected per fingerprint)`` is built with
DataFrames; each partition then builds its events with the pure :mod:`lineage_udfs.emit.events`
and sends them through one client per partition (``mapPartitions``). Nothing is written on an
executor's disk: an event a network transport (http, kafka) could not deliver now goes back to
the driver in the partition's results, in order, and the driver spools it; a file transport
(alone or in a composite) has every event built on the executors and written by the driver.
The partitions run at once (their results cached on the executors); the driver then reads the
events handed back one partition at a time (``toLocalIterator``), so an outage on a large run
never holds every event on the driver. Before sending, the driver replays the spool; if the
spool still holds events afterwards (collector still down), new events are spooled behind them
instead of being sent, so delivery order is kept.

By default (``openlineage.scope: incremental``) only what changed since the last successful
emission is emitted, and each emission appends its watermark row to ``openlineage_emissions``
once its events are delivered or spooled: see :mod:`lineage_udfs.spark.openlineage.scope`.

Each dataset lists its other names (``dataset_aliases``) in a ``symlinks`` facet; the
statements of a dataset whose names changed since the last emission are emitted again:
see :mod:`lineage_udfs.spark.openlineage.symlinks`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from pyspark import Broadcast, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.models import ColumnEdge
from lineage_udfs.core.records import field_names
from lineage_udfs.emit.client import make_client, make_transport, prepare_event, preparing_client
from lineage_udfs.emit.config import ConsoleTransportSettings, OpenLineageSettings
from lineage_udfs.emit.events import (
    EventOptions,
    build_run_events,
    column_edges_from_dicts,
    parsed_statement_from_dict,
    query_run_from_dict,
)
from lineage_udfs.emit.spool import (
    MAX_REASONS,
    EmitCounts,
    ReplaySummary,
    Spool,
    SpoolingEmitter,
    replay,
)
from lineage_udfs.paths import resolve_path
from lineage_udfs.settings import JobSettings
from lineage_udfs.spark.openlineage.scope import (
    EMISSIONS_TABLE,
    PARSE_COLUMNS,
    STATEMENT_DAY_KEYS,
    EmissionScope,
    Watermark,
    last_watermark,
    options_digest,
    plan_scope,
    queries_in_scope,
    record_emission,
    with_realiased,
)
from lineage_udfs.spark.openlineage.symlinks import (
    Names,
    changed_datasets,
    current_symlinks,
    emitted_symlinks,
    record_symlinks,
    statements_naming,
)
from lineage_udfs.spark.storage.claim import EMISSION, warehouse_claim
from lineage_udfs.spark.storage.facts import failed_execution
from lineage_udfs.spark.storage.tables import LineageTables

logger = logging.getLogger(__name__)

_EDGE_COLUMNS = field_names(ColumnEdge)
_PARSED_COLUMNS = tuple(c for c in PARSE_COLUMNS if c != "column_edges")
"""The ``parsed_statements`` columns events are built from (edges come from column_lineage)."""
EVENT, DONE = "event", "done"
"""Kinds of a partition's result records: ``(EVENT, partition, JSON line)`` for each event
handed back to the driver, in order, then one ``(DONE, partition, counts, rejections,
events handed back)``."""


@dataclass(frozen=True)
class EmitSummary:
    """Totals of one emission (driver side).

    Attributes:
        counts: rows, skipped, emitted, spooled, overflowed, failed (summed over partitions).
        replay: what the replay before the emission delivered.
        spool_pending: events left in the spool afterwards.
        scope: ``incremental`` or ``full``.
        reason: why the emission was full, or why its watermark was held back.
        changed_queries: incremental: queries rows new or updated since the watermark.
        reparsed_statements: incremental: fingerprints whose parse changed.
        realiased_statements: incremental: fingerprints emitted again because a dataset they
            name has other names (``symlinks``) now.
        status: ``succeeded`` (the emission is the next watermark) or ``failed`` (events were
            rejected or dropped; the watermark did not move).
    """

    counts: EmitCounts
    replay: ReplaySummary
    spool_pending: int
    scope: str = "full"
    reason: str | None = None
    changed_queries: int = 0
    reparsed_statements: int = 0
    realiased_statements: int = 0
    status: str = "succeeded"
    rejections: tuple[str, ...] = ()
    """Why events were rejected (event, HTTP status and the collector's answer; the first
    few per partition, ``counts.failed`` counts them all)."""


def _options(settings: OpenLineageSettings) -> EventOptions:
    return EventOptions(
        job_namespace=settings.job_namespace,
        default_namespace=settings.namespace,
        producer=settings.producer,
        include_selects=settings.include_selects,
        emit_statement_runs=settings.emit_statement_runs,
        mode=settings.emit_mode,
        indirect_lineage=settings.indirect_lineage,
    )


def _spool(settings: OpenLineageSettings) -> Spool | None:
    if not settings.spool.enabled:
        return None
    return Spool(Path(resolve_path(settings.spool.path)), settings.spool.max_bytes)


def emission_rows(
    tables: LineageTables, settings: OpenLineageSettings, scope: EmissionScope | None = None
) -> DataFrame:
    """One row per run to emit: the query (or statement-day), its parse and its column edges.

    ``scope`` selects the rows and pins the table versions (None: every current row).
    Timestamps travel as epoch microseconds so the executors' local time zone cannot shift them.
    """
    if scope is None:
        queries = tables.read("queries")
        parsed_rows = tables.read("parsed_statements")
    else:
        queries = queries_in_scope(tables, scope, settings.emit_mode)
        parsed_rows = tables.read("parsed_statements", version=scope.parsed_statements_version)
    if settings.emit_mode == "per_statement_day":
        day = F.to_date("start_time")
        queries = (
            queries.withColumn("day", day)
            .groupBy(*STATEMENT_DAY_KEYS, "day")
            .agg(
                F.min("start_time").alias("start_time"),
                F.max("end_time").alias("end_time"),
                F.max(F.when(failed_execution(F.col("status")), 0).otherwise(1)).alias("any_ok"),
                F.min("user_name").alias("user_name"),
            )
            .withColumn("status", F.when(F.col("any_ok") == 1, "success").otherwise("failed"))
            .withColumn("query_id", F.concat_ws("@", "fingerprint", F.col("day").cast("string")))
            .drop("any_ok", "day")
        )
    parsed = parsed_rows.select("fingerprint", *[F.col(c).alias(f"p_{c}") for c in _PARSED_COLUMNS])
    if not settings.include_selects:
        parsed = parsed.where(
            ~((F.col("p_statement_type") == "SELECT") & (F.size("p_targets") <= 0))
        )
    edge_rows = tables.read("column_lineage")
    if scope is not None and scope.kind == "incremental":
        # only the edges of the statements emitted now, not a pass over every edge
        edge_rows = edge_rows.join(
            queries.select("fingerprint").distinct(), "fingerprint", "left_semi"
        )
    edges = edge_rows.groupBy("fingerprint").agg(
        F.collect_set(F.struct(*_EDGE_COLUMNS)).alias("column_edges")
    )
    return (
        queries.select(
            "query_id",
            "fingerprint",
            F.unix_micros("start_time").alias("start_us"),
            F.unix_micros("end_time").alias("end_us"),
            "status",
            "user_name",
            "source_system",
            "object_kind",
            "object_name",
            "default_database",
            "default_schema",
        )
        .join(parsed, "fingerprint")
        .join(edges, "fingerprint", "left")
        .sortWithinPartitions("start_us", "query_id")
    )


def _ts(micros: int | None) -> datetime | None:
    return None if micros is None else datetime.fromtimestamp(micros / 1e6, tz=UTC)


def _row_inputs(row: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    query = query_run_from_dict(
        {**row, "start_time": _ts(row.get("start_us")), "end_time": _ts(row.get("end_us"))}
    )
    parsed = parsed_statement_from_dict(
        {"fingerprint": row["fingerprint"], **{c: row.get(f"p_{c}") for c in _PARSED_COLUMNS}}
    )
    return query, parsed, column_edges_from_dicts(row.get("column_edges"))


def _emit_partition(
    settings: OpenLineageSettings,
    secrets: Mapping[str, str],
    spool_only: bool,
    symlinks: Broadcast[Names] | None = None,
) -> Callable[[int, Iterable[Any]], Iterator[tuple[Any, ...]]]:
    """The task of one partition: build its events and deliver them through a network
    transport, handing back (as :data:`EVENT` records) what the driver must spool (the
    collector is down, or the spool already holds events) or write (a file transport)."""
    options = _options(settings)
    from_driver = settings.writes_files()
    spool_enabled = settings.spool.enabled

    def run(index: int, rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        if isinstance(settings.transport, ConsoleTransportSettings):
            _console_on_stderr()
        client = preparing_client() if from_driver else make_client(settings, secrets)
        held: list[str] = []
        emitter = SpoolingEmitter(
            send=client.transport.emit,
            prepare=partial(prepare_event, client),
            spool=None,
            hold=held.append if from_driver or spool_enabled else None,
            spool_only=spool_only or from_driver,
        )
        handed = 0
        names = symlinks.value if symlinks is not None else None
        try:
            for row in rows:
                emitter.counts.rows += 1
                query, parsed, edges = _row_inputs(row.asDict(recursive=True))
                events = build_run_events(query, parsed, edges, options=options, symlinks=names)
                if not events:
                    emitter.counts.skipped += 1
                for event in events:
                    emitter.emit(event)
                for line in held:
                    yield EVENT, index, line
                handed += len(held)
                held.clear()
        finally:
            counts = emitter.close()
            client.close(timeout=10.0)
        yield DONE, index, counts.as_tuple(), tuple(emitter.rejections), handed

    return run


def _take_over(
    records: Iterable[tuple[Any, ...]],
    spool: Spool | None,
    deliver: Callable[[Any], object] | None,
    spool_only: bool,
) -> tuple[EmitCounts, tuple[str, ...]]:
    """On the driver: deliver (``deliver``: a file transport) or spool the events the
    partitions handed back, in partition order, one spool segment per partition; count them
    only now, once delivered or spooled."""
    counts = EmitCounts()
    rejections: list[str] = []
    emitter: SpoolingEmitter | None = None
    down = spool_only or deliver is None
    current = -1
    for _, index, line in records:
        if emitter is None or index != current:
            if emitter is not None:
                counts += emitter.close()
                rejections += emitter.rejections
                down = down or emitter.is_down  # keep order: the collector stays down
            emitter = SpoolingEmitter(
                send=deliver or _not_sent,
                spool=spool,
                writer_id=f"p{index:05d}",
                spool_only=down,
            )
            current = index
        emitter.emit(json.loads(line))
    if emitter is not None:
        counts += emitter.close()
        rejections += emitter.rejections
    return counts, tuple(rejections[:MAX_REASONS])


def _not_sent(event: Any) -> None:
    """``send`` of an emitter that only spools (``spool_only``): never called."""
    raise RuntimeError("an event to spool was sent")


def _run_partitions(
    rows: DataFrame,
    settings: OpenLineageSettings,
    secrets: Mapping[str, str],
    spool: Spool | None,
    spool_only: bool,
    symlinks: Names | None = None,
) -> tuple[EmitCounts, tuple[str, ...]]:
    """Run every partition's task at once, then take over what they handed back."""
    shared = rows.sparkSession.sparkContext.broadcast(symlinks) if symlinks else None
    results = rows.rdd.mapPartitionsWithIndex(
        _emit_partition(settings, secrets, spool_only, shared)
    )
    # the tasks' results stay on the executors (memory, then disk) until the driver has read
    # them; lost blocks are recomputed (the partition is built, and sent, again)
    results.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        partials = results.filter(lambda r: r[0] == DONE).collect()
        counts = sum((EmitCounts.from_tuple(p[2]) for p in partials), EmitCounts())
        rejections = tuple(r for p in partials for r in p[3])
        if sum(p[4] for p in partials):
            transport = make_transport(settings, secrets) if settings.writes_files() else None
            try:
                taken, more = _take_over(
                    results.filter(lambda r: r[0] == EVENT).toLocalIterator(),
                    spool,
                    transport.emit if transport is not None else None,
                    spool_only,
                )
            finally:
                if transport is not None:
                    transport.close(timeout=10.0)
            counts += taken
            rejections += more
    finally:
        results.unpersist()
        if shared is not None:
            shared.destroy()
    return counts, rejections


def _console_on_stderr() -> None:
    """The console transport logs each event at INFO through its logger; a Python worker has no
    logging set up (WARNING), so give that logger a stderr handler (the executor's log; the
    terminal in local mode)."""
    console = logging.getLogger("openlineage.client.transport.console")
    if not console.handlers:
        console.addHandler(logging.StreamHandler())
        console.setLevel(logging.INFO)
        console.propagate = False


def replay_spool(
    settings: JobSettings | OpenLineageSettings, secrets: Mapping[str, str] | None = None
) -> ReplaySummary:
    """Replay the spool through the configured transport (driver side, no Spark needed)."""
    ol = settings.openlineage if isinstance(settings, JobSettings) else settings
    spool = _spool(ol)
    if spool is None:
        return ReplaySummary()
    transport = make_transport(ol, secrets)
    # Transport.emit is typed for event objects; it serialises the spooled dicts as they are
    summary = replay(spool, transport.emit)  # type: ignore[arg-type]
    if summary.delivered or summary.pending or summary.rejected:
        logger.info(
            "OpenLineage spool replay: delivered=%d pending=%d rejected=%d segments_done=%d "
            "stopped=%s",
            summary.delivered,
            summary.pending,
            summary.rejected,
            summary.segments_done,
            summary.failed,
        )
    return summary


def emit_openlineage(
    spark: SparkSession, settings: JobSettings, secrets: Mapping[str, str] | None = None
) -> EmitSummary:
    """Emit OpenLineage events for the Delta lineage tables: what changed since the last
    successful emission (``openlineage.scope: incremental``) or everything (``all``).

    The emission's row is appended to ``openlineage_emissions`` after its events were sent;
    it becomes the next watermark when every event was delivered or spooled. An exception
    leaves no row, so the next emission covers the same changes again.

    Args:
        spark: the session.
        settings: job settings (``sink`` locates the tables, ``openlineage`` configures emission).
        secrets: API keys by environment-variable name (``openlineage_secrets(settings.openlineage,
            os.environ)`` in jobs/).

    Raises:
        ConfigError: the transport is missing or cannot be built.
    """
    started_at = datetime.now(UTC)
    ol = settings.openlineage
    secrets = dict(secrets or {})
    tables = LineageTables(spark, settings.sink)
    tables.ensure(EMISSIONS_TABLE)
    for table in ("queries", "parsed_statements"):
        tables.ensure_properties(table)  # change data feed on tables created before it
    spool = _spool(ol)
    digest = options_digest(_options(ol))
    plan = _plan(tables, settings, digest)
    if plan.nothing_to_send(spool):
        return _nothing_new(tables, plan, ol.emit_mode, digest, started_at)
    with warehouse_claim(tables, EMISSION, wait_seconds=ol.claim_wait_seconds) as claim:
        newest, _ = last_watermark(tables, digest)
        moved = _emission_id(newest) != _emission_id(plan.scope.previous)
        if claim.waited or (ol.scope != "all" and moved):
            logger.info("OpenLineage: another job held the warehouse claim; planning again")
            plan = _plan(tables, settings, digest)
            if plan.nothing_to_send(spool):
                return _nothing_new(tables, plan, ol.emit_mode, digest, started_at)
        return _send(tables, settings, secrets, plan, spool, digest, started_at)


@dataclass(frozen=True)
class _Plan:
    """What an emission sends: the scope, and the datasets' other names for the facets."""

    scope: EmissionScope
    symlinks: Names
    changed: list[str]
    """Datasets whose names differ from what their last emitted events listed."""

    def nothing_to_send(self, spool: Spool | None) -> bool:
        return self.scope.is_empty and not (spool is not None and spool.pending())


def _emission_id(watermark: Watermark | None) -> str | None:
    return None if watermark is None else watermark.emission_id


def _plan(tables: LineageTables, settings: JobSettings, digest: str) -> _Plan:
    ol = settings.openlineage
    scope = plan_scope(tables, scope=ol.scope, emit_mode=ol.emit_mode, digest=digest)
    symlinks = current_symlinks(tables, settings.graph.alias_min_confidence) if ol.symlinks else {}
    changed = changed_datasets(symlinks, emitted_symlinks(tables))
    if changed and scope.kind == "incremental":
        naming = statements_naming(tables, changed, scope.parsed_statements_version)
        scope = with_realiased(scope, naming)
        logger.info(
            "OpenLineage: %d datasets have other names than their events listed (%s); %d "
            "statements naming them are emitted again",
            len(changed),
            ", ".join(changed[:5]) + (", ..." if len(changed) > 5 else ""),
            scope.realiased_count,
        )
    return _Plan(scope, symlinks, changed)


def _send(
    tables: LineageTables,
    settings: JobSettings,
    secrets: Mapping[str, str],
    plan: _Plan,
    spool: Spool | None,
    digest: str,
    started_at: datetime,
) -> EmitSummary:
    """Replay the spool, send the plan's events, record the emission (the claim held)."""
    ol = settings.openlineage
    scope, symlinks, changed = plan.scope, plan.symlinks, plan.changed
    make_transport(ol, secrets)  # fail fast on the driver, before any task starts
    replayed = replay_spool(ol, secrets)
    spool_only = bool(spool is not None and spool.pending())
    if spool_only:
        logger.warning(
            "OpenLineage spool still holds %d events; new events are spooled behind them",
            spool.pending() if spool else 0,
        )
    rejections: tuple[str, ...] = ()
    if scope.is_empty:
        counts = EmitCounts()
    else:
        rows = emission_rows(tables, ol, scope)
        counts, rejections = _run_partitions(rows, ol, secrets, spool, spool_only, symlinks)
    pending = spool.pending() if spool else 0
    status = record_emission(
        tables,
        scope,
        emit_mode=ol.emit_mode,
        digest=digest,
        counts=counts,
        replayed=replayed,
        started_at=started_at,
        ended_at=datetime.now(UTC),
    )
    tables.compact(EMISSIONS_TABLE)
    if status == "succeeded" and changed:
        record_symlinks(tables, symlinks, started_at)
    since = (
        f" since queries v{scope.previous.queries_version}"
        f" / parsed_statements v{scope.previous.parsed_statements_version}"
        if scope.previous
        else f" ({scope.reason})"
    )
    logger.info(
        "OpenLineage emit, %s%s: changed_queries=%d reparsed=%d realiased=%d rows=%d skipped=%d "
        "emitted=%d spooled=%d overflowed=%d failed=%d replayed=%d spool_pending=%d status=%s",
        scope.kind,
        since,
        scope.changed_count,
        scope.reparsed_count,
        scope.realiased_count,
        counts.rows,
        counts.skipped,
        counts.emitted,
        counts.spooled,
        counts.overflowed,
        counts.failed,
        replayed.delivered,
        pending,
        status,
    )
    if counts.overflowed:
        logger.warning(
            "OpenLineage spool full (%s, max_bytes=%d): %d events not spooled (collector"
            " unreachable); the next emission re-emits them: run --replay when the collector is"
            " up, or raise openlineage.spool.max_bytes",
            ol.spool.path,
            ol.spool.max_bytes,
            counts.overflowed,
        )
    if counts.failed:
        logger.error("OpenLineage: %d events rejected by the transport", counts.failed)
        for reason in rejections[:MAX_REASONS]:
            logger.error("OpenLineage rejected: %s", reason)
    if status != "succeeded":
        logger.error(
            "OpenLineage emission failed: watermark not advanced; the next emission re-emits "
            "these changes"
        )
    return EmitSummary(
        counts=counts,
        replay=replayed,
        spool_pending=pending,
        scope=scope.kind,
        reason="; ".join(r for r in (scope.reason, scope.held_reason) if r) or None,
        changed_queries=scope.changed_count,
        reparsed_statements=scope.reparsed_count,
        realiased_statements=scope.realiased_count,
        status=status,
        rejections=rejections,
    )


def _nothing_new(
    tables: LineageTables, plan: _Plan, emit_mode: str, digest: str, started_at: datetime
) -> EmitSummary:
    """An incremental emission with no change to emit and an empty spool: no transport is
    built, no task runs and no claim is taken. Its row is appended only when the watermark
    moves (commits without an event-shaping change); otherwise no table gets a version."""
    scope = plan.scope
    if plan.changed:  # names of datasets no emitted statement names: nothing to send again
        record_symlinks(tables, plan.symlinks, started_at)
    previous = scope.previous
    moved = previous is None or (
        previous.queries_version != scope.queries_watermark
        or previous.parsed_statements_version != scope.parsed_statements_version
    )
    status = "succeeded"
    if moved:
        status = record_emission(
            tables,
            scope,
            emit_mode=emit_mode,
            digest=digest,
            counts=EmitCounts(),
            replayed=ReplaySummary(),
            started_at=started_at,
            ended_at=datetime.now(UTC),
        )
    logger.info(
        "OpenLineage emit, incremental: nothing new since queries v%s / parsed_statements v%s%s",
        previous.queries_version if previous else None,
        previous.parsed_statements_version if previous else None,
        ", watermark advanced" if moved else "",
    )
    return EmitSummary(
        counts=EmitCounts(),
        replay=ReplaySummary(),
        spool_pending=0,
        scope=scope.kind,
        status=status,
    )
