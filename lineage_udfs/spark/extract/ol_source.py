"""The OpenLineage stage of an extraction: ``format: openlineage`` sources → the
``openlineage_events`` fact table → edges in ``table_lineage`` and ``column_lineage``.

Each source is read where the last committed run stopped (``source_state``): files and a Marquez
server by their events' ``eventTime``, as an incremental query log (``lookback`` re-reads late
arrivals); a Kafka topic by its partitions' offsets (``sources.ol_kafka``). Every line or
message is validated and mapped on the executors (``sources.openlineage``). Events are upserted
by their identity (run, type, time, job), bad lines quarantined at stage ``load`` with their
reason. Then, for the jobs the batch touched, the edges are derived again from every stored
COMPLETE event of the job and reconciled with one MERGE per edge table, as the query lineage is
from ``queries`` (``extract.merges``): an edge row per (source, target, edge_kind = the
producer, fingerprint = the job), ``object_name`` the job (``namespace/name``),
``source_system`` its namespace, the first and last event times and the number of runs.
Re-running on the same events changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import reduce

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from lineage_udfs.settings import SourceSettings
from lineage_udfs.sources.ol_kafka import (
    committed_offsets,
    plan_offsets,
    read_kafka_events,
    topic_offsets,
)
from lineage_udfs.sources.ol_marquez import read_marquez_events
from lineage_udfs.sources.openlineage import (
    EVENT_TIME,
    LINE_ID,
    REASON,
    SOURCE_FILE,
    incremental_settings,
    parse_openlineage_events,
    read_openlineage_events,
)
from lineage_udfs.spark.extract.context import OpenLineageSummary, RunContext
from lineage_udfs.spark.extract.edges import stale_rows
from lineage_udfs.spark.extract.watermark import COLUMN_KEY, IncrementalRead
from lineage_udfs.spark.storage.schemas import OPENLINEAGE_EVENTS, QUARANTINE, TABLES
from lineage_udfs.spark.storage.writes import InsertNew, Reconcile, Upsert, again_on_retry

logger = logging.getLogger(__name__)

OPENLINEAGE_FORMAT = "openlineage"
FINGERPRINT_PREFIX = "ol:"
"""``fingerprint`` of an edge from events: ``ol:`` and a digest of the job."""


def openlineage_sources(sources: list[SourceSettings]) -> list[SourceSettings]:
    return [s for s in sources if s.enabled and s.format == OPENLINEAGE_FORMAT]


def job_fingerprint(job: Column) -> Column:
    return F.concat(F.lit(FINGERPRINT_PREFIX), F.substring(F.sha2(job, 256), 1, 32))


def ingest_openlineage(
    ctx: RunContext,
    sources: list[SourceSettings],
    incremental: IncrementalRead,
    secrets: Mapping[str, str],
) -> OpenLineageSummary:
    """Read the ``openlineage`` sources (their new events) into the lineage tables.

    ``secrets``: a Kafka source's SASL password or a Marquez source's token, by source name.
    """
    summary = OpenLineageSummary()
    frames = []
    for source in sources:
        lines = _new_lines(ctx, source, incremental, secrets.get(source.name))
        parsed = parse_openlineage_events(lines).withColumn("source_name", F.lit(source.name))
        frames.append(parsed)
    rows, summary.lines_read = ctx.keep(reduce(DataFrame.unionByName, frames), checkpoint=True)
    if not summary.lines_read:
        return summary
    good = rows.where(F.col(REASON).isNull())
    events = good.dropDuplicates(["event_id"]).select(
        *[F.col(c) for c in OPENLINEAGE_EVENTS.columns if c != "run_id_read"],
        F.lit(ctx.summary.run_id).alias("run_id_read"),
    )
    # a stored event keeps the run that read it first (run_id_read is a volatile column)
    tables = ctx.tables
    tables.write("openlineage_events", Upsert(events))
    bad = rows.where(F.col(REASON).isNotNull())
    quarantine = bad.select(
        F.sha2(F.concat_ws("\x1f", F.lit("openlineage"), SOURCE_FILE, LINE_ID), 256).alias(
            "quarantine_id"
        ),
        F.lit("load").alias("stage"),
        F.concat(F.lit("openlineage event: "), F.col(REASON)).alias("reason"),
        F.lit("INPUT").alias("error_kind"),
        F.lit(None).cast("string").alias("query_id"),
        F.lit(None).cast("string").alias("fingerprint"),
        F.concat_ws(": ", "source_name", SOURCE_FILE).alias("source_file"),
        F.lit(None).cast("string").alias("masked_record"),
        F.col(EVENT_TIME).alias("first_seen"),
        F.col(EVENT_TIME).alias("last_seen"),
        F.lit(ctx.summary.run_id).alias("run_id"),
    ).dropDuplicates(["quarantine_id"])
    summary.quarantined = tables.write(
        "quarantine", InsertNew(quarantine.select(*QUARANTINE.columns))
    ).get("numTargetRowsInserted", 0)
    counts = good.groupBy("producer").agg(F.countDistinct("event_id").alias("n")).collect()
    summary.by_producer = {str(r["producer"]): int(r["n"]) for r in counts}
    summary.events = sum(summary.by_producer.values())
    jobs, summary.jobs = ctx.keep(
        good.select(job_fingerprint(F.col("job")).alias("fingerprint")).distinct(), checkpoint=True
    )
    if summary.jobs:
        summary.table_edges_written = _reconcile(ctx, jobs, column_level=False)
        summary.column_edges_written = _reconcile(ctx, jobs, column_level=True)
    logger.info(summary.line())
    return summary


def _new_lines(
    ctx: RunContext, source: SourceSettings, incremental: IncrementalRead, secret: str | None
) -> DataFrame:
    """The source's lines not read by a committed run: of a Kafka topic, the offsets after
    the committed ones; of files or Marquez, the events above the eventTime watermark minus
    the lookback."""
    if source.kafka is not None:
        earliest, latest = topic_offsets(ctx.spark, source, secret)
        committed = committed_offsets(source.kafka.topic, incremental.committed_state(source.name))
        plan = plan_offsets(source.kafka.topic, committed, earliest, latest)
        for partition, count in plan.lost.items():
            logger.warning(
                "kafka source %s: %d offsets of partition %d were deleted by the topic's"
                " retention before they were read",
                source.name,
                count,
                partition,
            )
        if plan.restarted:
            logger.warning(
                "kafka source %s: committed offsets beyond the end of partitions %s (the topic"
                " was created again): read from their start",
                source.name,
                list(plan.restarted),
            )
        logger.info(
            "kafka source %s: %d offsets to read in %d partitions (%s -> %s)",
            source.name,
            plan.to_read,
            len(plan.partitions),
            plan.start,
            plan.end,
        )
        incremental.record_state(source.name, plan.state(committed), plan.to_read)
        return read_kafka_events(ctx.spark, source, plan, secret)
    source = incremental_settings(source)
    if source.marquez is not None:
        state = incremental.committed_state(source.name)
        lines = read_marquez_events(ctx.spark, source, state.get(COLUMN_KEY), secret)
    else:
        lines = read_openlineage_events(ctx.spark, source)
    return incremental.new_rows(source, lines, materialize=False)


def event_edges(events: DataFrame, *, column_level: bool) -> DataFrame:
    """Edge rows (TABLE_LINEAGE / COLUMN_LINEAGE columns) from COMPLETE events, per job."""
    complete = events.where(F.col("event_type") == "COMPLETE").withColumn(
        "fingerprint", job_fingerprint(F.col("job"))
    )
    array = "column_edges" if column_level else "table_edges"
    exploded = complete.select(
        "fingerprint",
        "job",
        "job_namespace",
        "producer",
        "run_id",
        EVENT_TIME,
        F.explode(array).alias("e"),
    ).select("*", "e.*")
    table = "column_lineage" if column_level else "table_lineage"
    key = [k for k in TABLES[table].keys if k != "edge_kind"]
    return (
        exploded.withColumn("edge_kind", F.col("producer"))
        .groupBy(*key, "edge_kind")
        .agg(
            F.max("job").alias("object_name"),
            F.max("job_namespace").alias("source_system"),
            F.min(EVENT_TIME).alias("first_seen"),
            F.max(EVENT_TIME).alias("last_seen"),
            F.countDistinct("run_id").cast("long").alias("occurrences"),
        )
        .select(*TABLES[table].columns)
    )


def _reconcile(ctx: RunContext, jobs: DataFrame, *, column_level: bool) -> int:
    """Recompute the edges of ``jobs`` from the stored events; one MERGE; rows written."""
    tables = ctx.tables
    table = "column_lineage" if column_level else "table_lineage"

    def changes() -> tuple[DataFrame, DataFrame]:
        events = tables.read("openlineage_events").withColumn(
            "fingerprint", job_fingerprint(F.col("job"))
        )
        touched = events.join(jobs, "fingerprint", "left_semi").drop("fingerprint")
        desired, _ = ctx.keep(event_edges(touched, column_level=column_level), checkpoint=True)
        in_scope = tables.read(table).join(jobs, "fingerprint", "left_semi")
        stale, _ = ctx.keep(stale_rows(in_scope, desired, table), checkpoint=True)
        return desired, stale

    first = changes()
    metrics = tables.write(table, Reconcile(again_on_retry(first, changes)))
    return sum(
        metrics.get(k, 0)
        for k in ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
    )
