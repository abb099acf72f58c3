"""What one extraction run carries from stage to stage: :class:`RunContext` and its
:class:`RunSummary`.

The context holds the session, the settings, the tables, the storage level of intermediate
results and the frames kept at it (released when the run ends); stages time themselves with
:meth:`RunContext.stage` and fill the summary, which becomes the run's ``lineage_runs`` row.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.settings import ExecutionSettings, JobSettings
from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.storage.tables import LineageTables


@dataclass
class OpenLineageSummary:
    """What the stage read and wrote."""

    lines_read: int = 0
    events: int = 0
    quarantined: int = 0
    jobs: int = 0
    table_edges_written: int = 0
    column_edges_written: int = 0
    by_producer: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return (
            f"openlineage: {self.lines_read} lines read, {self.events} events"
            f" {self.by_producer}, {self.quarantined} quarantined, {self.jobs} jobs touched,"
            f" {self.table_edges_written} table and {self.column_edges_written} column edge rows"
            " written"
        )


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
    reconciliation: dict[str, dict[str, int]] = field(default_factory=dict)
    openlineage: OpenLineageSummary | None = None
    """What the ``openlineage`` sources gave (``extract.ol_source``); None: no such source."""
    aliases: int | None = None
    """Links in ``dataset_aliases`` after the run (``extract.aliases``); None: identity off."""
    status: str = "running"
    changed: bool = True
    """False when the run found nothing new: no table changed and the run left no row in
    ``lineage_runs`` (a rerun on the same input adds no Delta version anywhere)."""
    stored_already: bool = False
    """True when the write stage found every row of the batch stored by a finished run and
    skipped its MERGEs (or the input is unchanged: ``unchanged_since``)."""
    input_listing: str | None = None
    """Digest of the sources' settings and files (``preflight.input_listing``); None: not told."""
    unchanged_since: str | None = None
    """The run whose input and settings this run's are, with no lineage table written since:
    this run read nothing."""

    def describe(self) -> str:
        """Multi-line human summary for the driver log."""
        seconds = ", ".join(f"{k}={v:.1f}s" for k, v in self.stage_seconds.items())
        return "\n".join(
            [
                f"run {self.run_id} ({self.status}), parser {self.parser_version}",
                *(
                    [
                        f"  input unchanged      files and settings as in run"
                        f" {self.unchanged_since}: nothing read"
                    ]
                    if self.unchanged_since
                    else []
                ),
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
                *([f"  {self.openlineage.line()}"] if self.openlineage else []),
                f"  seconds per stage    {seconds}",
            ]
        )

    def line(self) -> str:
        """One line: the run's outcome and its main counts."""
        nothing_new = "" if self.changed else ", nothing new"
        seconds = self.stage_seconds.get("total", 0.0)
        if self.unchanged_since:
            return (
                f"extract {self.status}{nothing_new} (run {self.run_id}): input unchanged since"
                f" run {self.unchanged_since}, nothing read, {seconds:.1f} s"
            )
        return (
            f"extract {self.status}{nothing_new} (run {self.run_id}): {self.rows_read} rows read,"
            f" {self.distinct_statements} distinct statements ({self.parsed_statements} parsed"
            f" now), {self.table_edges_in_scope} table and {self.column_edges_in_scope} column"
            f" edges in scope, {self.quarantined_new} newly quarantined,"
            f" {seconds:.1f} s"
        )


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


@contextmanager
def session_confs(spark: SparkSession, confs: dict[str, str | None]) -> Iterator[None]:
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


@dataclass
class RunContext:
    """One extraction run: session, settings, tables, summary and the intermediate results it
    persists (at ``level``) until :meth:`release`."""

    spark: SparkSession
    settings: JobSettings
    tables: LineageTables
    summary: RunSummary
    level: StorageLevel
    kept: list[DataFrame] = field(default_factory=list)

    @classmethod
    def start(cls, spark: SparkSession, settings: JobSettings, parser_version: str) -> RunContext:
        """A new run with a fresh id, starting now."""
        return cls(
            spark=spark,
            settings=settings,
            tables=LineageTables(spark, settings.sink),
            summary=RunSummary(uuid.uuid4().hex, datetime.now(UTC), parser_version),
            level=storage_level(settings.execution),
        )

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block as stage ``name`` of the summary (added to its earlier blocks)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            seconds = self.summary.stage_seconds.get(name, 0.0) + time.perf_counter() - started
            self.summary.stage_seconds[name] = round(seconds, 3)

    def keep(self, frame: DataFrame, *, checkpoint: bool = False) -> tuple[DataFrame, int]:
        """Compute ``frame`` once, stored at the run's level, and count it. ``checkpoint`` cuts
        the plan's lineage: needed for anything that reads a lineage table, because a Delta
        write invalidates cached plans that read the table and they would be recomputed
        against the new version (the parse UDF included). The checkpoint is reliable in a run
        with ``execution.checkpoint_dir`` (``runtime.checkpoints``), else local at ``level``."""
        stored = checkpointed(frame, level=self.level) if checkpoint else self.persist(frame)
        return stored, stored.count()

    def persist(self, frame: DataFrame) -> DataFrame:
        """``frame`` persisted at the run's level (computed when first used)."""
        stored = frame.persist(self.level)
        self.kept.append(stored)
        return stored

    def release(self) -> None:
        """Unpersist every kept frame."""
        for frame in self.kept:
            frame.unpersist()
        self.kept.clear()

    def finish(self, status: str) -> None:
        """Set the run's status and total time."""
        self.summary.status = status
        self.summary.stage_seconds["total"] = round(
            (datetime.now(UTC) - self.summary.started_at).total_seconds(), 3
        )
