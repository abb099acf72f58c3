"""The jobs as functions: settings → session → stages → one summary line.

Each script under ``jobs/`` parses its arguments and calls :func:`run_job` with one of the job
functions here, so the four jobs start alike (``conf/base.yaml`` plus the ``--config``
overlays, ``conf/local.yaml`` when none is given), check the session's JVM libraries alike and
end alike: exit code 0 with one summary line, 1 with one error line when the job fails, 2 when
the settings are invalid.

- :func:`extract_job`: read → parse → write (:mod:`~lineage_udfs.spark.extract.stage`), then the
  graph stage and the OpenLineage emission when the settings enable them; each stage reads what
  the previous one committed to Delta.
- :func:`graph_job`: the graph stage alone; :func:`path_job`: how one table reaches another.
- :func:`emit_job`: the OpenLineage emission alone (or only the spool's replay).
- :func:`query_job`: SQL over the lineage tables by their plain names.
"""

from __future__ import annotations

import argparse
import logging
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from lineage_udfs.core.errors import ConfigError, LineageError
from lineage_udfs.emit.config import openlineage_secrets
from lineage_udfs.emit.spool import ReplaySummary
from lineage_udfs.logging_setup import configure_logging, log_failure
from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.activity.stage import ActivitySummary, run_activity_stage
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.graph.frames import reach_paths
from lineage_udfs.spark.graph.stage import GraphSummary, run_graph_stage
from lineage_udfs.spark.graph.tags import TagSummary, run_tag_stage
from lineage_udfs.spark.openlineage.emission import EmitSummary, emit_openlineage, replay_spool
from lineage_udfs.spark.runtime.checkpoints import run_checkpoints
from lineage_udfs.spark.runtime.concurrency import in_background
from lineage_udfs.spark.runtime.session import (
    DELTA,
    GRAPHFRAMES,
    JvmLibrary,
    build_spark_session,
    require_libraries,
)
from lineage_udfs.spark.storage.maintain import RETAIN_HOURS, maintain
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

logger = logging.getLogger(__name__)

BASE_CONFIG = "base.yaml"
DEFAULT_OVERLAY = "local.yaml"


def job_arguments(description: str) -> argparse.ArgumentParser:
    """An argument parser with the ``--config`` option every job takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--config",
        action="append",
        type=Path,
        default=None,
        help="overlay YAML on conf/base.yaml (repeatable, applied in order; "
        "default: conf/local.yaml)",
    )
    return parser


def job_settings(conf_dir: Path, overlays: Sequence[Path] | None) -> JobSettings:
    """``conf_dir/base.yaml`` deep-merged with ``overlays`` (default ``conf_dir/local.yaml``)."""
    return load_settings([conf_dir / BASE_CONFIG, *(overlays or [conf_dir / DEFAULT_OVERLAY])])


def run_job(
    name: str,
    conf_dir: Path,
    overlays: Sequence[Path] | None,
    job: Callable[[JobSettings], str],
) -> int:
    """Load ``conf_dir/base.yaml`` with ``overlays``, then :func:`run_loaded_job`."""
    return run_loaded_job(name, lambda: job_settings(conf_dir, overlays), job)


def run_loaded_job(
    name: str, load: Callable[[], JobSettings], job: Callable[[JobSettings], str]
) -> int:
    """Load the settings, configure logging, run ``job`` and log its summary line.

    Returns:
        The exit code: 0, 1 when the job failed, 2 when the settings are invalid. A failure is
        one ERROR line whatever raised it (a ``LineageError``, a Py4J error carrying a Java
        stack, anything else); its traceback is logged at DEBUG only.
    """
    try:
        settings = load()
    except ConfigError as exc:
        configure_logging()
        logger.error("%s: %s", name, exc)
        return 2
    configure_logging(settings.logging)
    try:
        line = job(settings)
    except Exception as exc:  # one line for a person; the stack at DEBUG
        log_failure(logger, f"{name} failed", exc)
        return 1
    logger.info("%s", line)
    return 0


def start_session(settings: JobSettings, libraries: Sequence[JvmLibrary]) -> SparkSession:
    """The session of ``settings.spark``, checked to load the classes of ``libraries``."""
    spark = build_spark_session(settings.spark)
    require_libraries(spark, settings.spark, libraries)
    return spark


GRAPH_LIBRARIES: tuple[JvmLibrary, ...] = (DELTA, GRAPHFRAMES)
"""What the graph stage needs on the classpath (checked when the session starts)."""


# --- summary lines -----------------------------------------------------------------------------


def graph_line(summary: GraphSummary) -> str:
    """One line for a graph run."""
    rows = sum(summary.rows_written.values())
    return (
        f"graph: {summary.components} components ({summary.components_recomputed} recomputed),"
        f" closures of {summary.closure_sources_recomputed} tables and"
        f" {summary.column_sources_recomputed} columns recomputed"
        f"{' (full refresh)' if summary.full_refresh else ''},"
        f" {rows} rows written, {summary.seconds:.1f} s"
        + (f"; {tag_line(summary.tags)}" if summary.tags is not None else "")
    )


def tag_line(summary: TagSummary) -> str:
    """One line for a tag propagation run."""
    if summary.unchanged:
        return "tags: unchanged"
    return (
        f"tags: {summary.tags} tags, {summary.declared} declared, {summary.propagated}"
        f" propagated, {summary.masked} masked columns, {summary.columns_recomputed} columns"
        f" recomputed{' (full recompute)' if summary.full_refresh else ''},"
        f" {summary.seconds:.1f} s"
    )


def emit_line(summary: EmitSummary) -> str:
    """One line for an OpenLineage emission."""
    c = summary.counts
    return (
        f"openlineage {summary.status} ({summary.scope}): {c.rows} runs, {c.emitted} events"
        f" emitted, {c.spooled} spooled, {c.failed + c.overflowed} lost,"
        f" {summary.replay.delivered} replayed, {summary.spool_pending} pending"
    )


def replay_line(summary: ReplaySummary) -> str:
    """One line for a replay of the spool alone."""
    stopped = ", stopped at an undeliverable event" if summary.failed else ""
    return (
        f"openlineage replay: {summary.delivered} events delivered,"
        f" {summary.pending} pending{stopped}"
    )


# --- the jobs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractOutcome:
    """What the extract job did: the extraction, then the graph stage and the emission when
    they ran."""

    run: RunSummary
    graph: GraphSummary | None = None
    emit: EmitSummary | None = None
    activity: ActivitySummary | None = None

    def line(self) -> str:
        """One line for the whole job."""
        parts = [self.run.line()]
        if self.graph is not None:
            parts.append(graph_line(self.graph))
        if self.activity is not None:
            parts.append(self.activity.line())
        if self.emit is not None:
            parts.append(emit_line(self.emit))
        return "; ".join(parts)


def run_extract(
    spark: SparkSession, settings: JobSettings, environ: Mapping[str, str] = os.environ
) -> ExtractOutcome:
    """Extraction, then the graph stage and the emission where the settings enable them.

    The two read what the extraction wrote and write tables of their own (the emission reads
    no graph table), so they run at once; when one fails, the other still finishes (the graph
    stage's failure is raised first). With ``execution.checkpoint_dir`` their checkpoints go
    to the extraction run's folder again (``runtime.checkpoints``), removed when both end."""
    run = extract(spark, settings, environ)
    ol = settings.openlineage
    secrets = openlineage_secrets(ol, environ) if ol.enabled else {}

    def emit() -> EmitSummary | None:
        return emit_openlineage(spark, settings, secrets) if ol.enabled else None

    with (
        run_checkpoints(spark, settings.execution.checkpoint_dir, run.run_id),
        in_background(emit) as emitting,
    ):
        graph = activity = None
        if settings.graph.enabled:
            graph = run_graph(spark, settings, full_refresh=settings.graph.full_refresh)
        if settings.activity.enabled:
            activity = run_activity(spark, settings)
    return ExtractOutcome(run, graph, emitting.result(), activity)


def run_activity(spark: SparkSession, settings: JobSettings) -> ActivitySummary:
    """Recompute freshness, ownership, usage and expectations (``spark.activity.stage``) from
    the tables the extraction and the graph stage committed."""
    return run_activity_stage(
        LineageTables(spark, settings.sink), settings.activity, max_depth=settings.graph.max_depth
    )


def run_graph(spark: SparkSession, settings: JobSettings, *, full_refresh: bool) -> GraphSummary:
    """Recompute the graph analytics tables from the edge tables (checkpoints in a run folder
    of their own with ``execution.checkpoint_dir``, or in the one already in place)."""
    with run_checkpoints(spark, settings.execution.checkpoint_dir, uuid.uuid4().hex):
        tables = LineageTables(spark, settings.sink)
        summary = run_graph_stage(
            tables, settings.graph, full_refresh=full_refresh or settings.graph.full_refresh
        )
        if settings.tags.enabled:
            summary.tags = run_tag_stage(
                tables,
                settings.tags,
                full_refresh=full_refresh or settings.graph.full_refresh,
                alias_min_confidence=settings.graph.alias_min_confidence,
            )
        return summary


def extract_job(settings: JobSettings) -> str:
    """The extract job: :func:`run_extract` in a checked session."""
    libraries = GRAPH_LIBRARIES if settings.graph.enabled else (DELTA,)
    return run_extract(start_session(settings, libraries), settings).line()


def graph_job(settings: JobSettings, *, full_refresh: bool = False) -> str:
    """The graph job: :func:`run_graph` in a checked session."""
    spark = start_session(settings, GRAPH_LIBRARIES)
    return graph_line(run_graph(spark, settings, full_refresh=full_refresh))


def maintain_job(
    settings: JobSettings,
    *,
    only: Sequence[str] | None = None,
    zorder: bool = True,
    vacuum: bool = True,
    retain_hours: int = RETAIN_HOURS,
) -> str:
    """The maintenance job: Z-order / compact and vacuum the lineage tables (see
    ``lineage_udfs.spark.storage.maintain``); safe beside the other jobs."""
    spark = start_session(settings, (DELTA,))
    tables = LineageTables(spark, settings.sink)
    summary = maintain(tables, only=only, zorder=zorder, vacuum=vacuum, retain_hours=retain_hours)
    return summary.line()


def path_job(settings: JobSettings, source: str, target: str) -> str:
    """The path query: print every shortest path from table ``source`` to table ``target``
    (GraphFrames BFS over table_lineage, at most ``graph.max_depth`` hops); writes nothing."""
    spark = start_session(settings, GRAPH_LIBRARIES)
    table_lineage = LineageTables(spark, settings.sink).read("table_lineage")
    rows = reach_paths(table_lineage, source, target, max_depth=settings.graph.max_depth).collect()
    for row in rows:
        print(" -> ".join(row["path"]))
    hops = settings.graph.max_depth
    if not rows:
        return f"path: {target} is not downstream of {source} within {hops} hops"
    depth = rows[0]["depth"]
    return f"path: {len(rows)} shortest path(s) of {depth} hops from {source} to {target}"


def emit_job(
    settings: JobSettings,
    *,
    replay_only: bool = False,
    emit_all: bool = False,
    environ: Mapping[str, str] = os.environ,
) -> str:
    """The emit job: emit what changed since the last emission (everything with ``emit_all``),
    or only replay the spool (no Spark). Secrets are read from ``environ``.

    Raises:
        ConfigError: ``openlineage.transport`` is not configured.
        LineageError: the replay left events in the spool (the job exits 1).
    """
    ol = settings.openlineage
    if ol.transport is None:
        raise ConfigError("openlineage.transport is not configured")
    secrets = openlineage_secrets(ol, environ)
    if replay_only:
        replayed = replay_spool(ol, secrets)
        if replayed.failed or replayed.pending:
            raise LineageError(
                f"replay could not deliver {replayed.pending} spooled events (collector"
                f" unreachable?); they stay in the spool: run --replay again when the collector"
                f" is up ({replay_line(replayed)})"
            )
        return replay_line(replayed)
    if emit_all:
        settings = settings.model_copy(
            update={"openlineage": ol.model_copy(update={"scope": "all"})}
        )
    spark = start_session(settings, [DELTA])
    with run_checkpoints(spark, settings.execution.checkpoint_dir, uuid.uuid4().hex):
        return emit_line(emit_openlineage(spark, settings, secrets))


def register_tables(spark: SparkSession, settings: JobSettings) -> list[str]:
    """Register every lineage table that exists as a temporary view of its plain name; returns
    the names registered (a table not written yet is not)."""
    tables = LineageTables(spark, settings.sink)
    registered = []
    for name in TABLES:
        catalog_name, path = tables.location(name)
        exists = (
            spark.catalog.tableExists(catalog_name)
            if catalog_name
            else DeltaTable.isDeltaTable(spark, str(path))
        )
        if exists:
            tables.read(name).createOrReplaceTempView(name)
            registered.append(name)
    return registered


def query_job(settings: JobSettings, statements: Sequence[str], *, limit: int = 100) -> str:
    """The query job: show the result of each statement over the lineage tables' views."""
    spark = start_session(settings, [DELTA])
    registered = register_tables(spark, settings)
    for statement in statements:
        print(statement)
        spark.sql(statement).show(limit, truncate=False)
    return (
        f"query: {len(registered)} lineage tables registered as views, "
        f"{len(statements)} statement(s), up to {limit} rows shown each"
    )
