"""Table maintenance: lay the tables out for the questions asked of them, compact, vacuum.

Readers (the ``lineage`` command, the explore notebook, ``lineage sql``) filter the closure,
path and edge tables by one node; Delta skips every file whose min/max statistics of the
filtered column exclude the node, and Parquet skips row groups the same way. That skipping
works only when the rows of a node sit together: :data:`LAYOUT` names, per table, the columns
the questions filter by, and :func:`maintain` Z-orders each table on them (``OPTIMIZE ...
ZORDER BY``), so that a filter on either column reads a few files of the table.

Every step commits with ``dataChange = false`` (OPTIMIZE), sets table properties or only
deletes unreferenced files (VACUUM), so the job is safe beside the extraction and graph jobs: a
concurrent commit that conflicts is retried (``commit_with_retry``). VACUUM keeps
:data:`RETAIN_HOURS` of removed files (30 days, Delta's default log retention): ``lineage ...
--as-of`` and ``lineage diff --since`` read back that far. Delta 4 ignores the retention given
to VACUUM (``spark.databricks.delta.vacuum.retentionWindowIgnore.enabled``) and keeps the
table's ``delta.deletedFileRetentionDuration`` (7 days unless set): the job sets that property
(and ``delta.logRetentionDuration``, so the log reaches as far back) to the hours asked for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark.sql import SparkSession

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.spark.storage.commits import commit_with_retry
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

logger = logging.getLogger("lineage_udfs.spark.storage.maintain")

LAYOUT: Mapping[str, tuple[str, ...]] = {
    "table_closure": ("descendant", "ancestor"),
    "column_closure": ("descendant_table", "ancestor_table"),
    "lineage_paths": ("root", "leaf"),
    "table_lineage": ("target_table", "source_table"),
    "column_lineage": ("target_table", "source_table"),
    "lineage_nodes": ("node",),
}
"""Z-order columns per table: upstream questions filter the closures by descendant, downstream
ones by ancestor; edges are drawn by source and target; names are looked up by node."""

RETAIN_HOURS = 30 * 24
"""Removed files VACUUM keeps (30 days, as Delta keeps its log by default): time travel and
``lineage diff`` reach back that far."""

FILE_MB = 32
"""Target size of the files OPTIMIZE writes: small enough that a node's rows sit in a few of
them (Delta's default, 1 GB, leaves a 1M-edge closure in two files that every question reads)."""

MIN_RETAIN_HOURS = 7 * 24
"""Below Delta's default retention check a concurrent reader or writer can lose files."""


@dataclass
class MaintainSummary:
    """What :func:`maintain` did, per table."""

    optimized: dict[str, str] = field(default_factory=dict)
    vacuumed: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    files_before: dict[str, int] = field(default_factory=dict)
    files_after: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        parts = [
            f"{t}: {how} {self.files_before.get(t, 0)} -> {self.files_after.get(t, 0)} files "
            f"in {self.seconds.get(t, 0.0):.1f} s"
            for t, how in self.optimized.items()
        ]
        return (
            "maintain: "
            + ("; ".join(parts) or "no table to maintain")
            + (f"; vacuumed {len(self.vacuumed)} tables" if self.vacuumed else "")
        )


def _files(tables: LineageTables, table: str) -> int:
    detail = tables.delta_table(table).detail().select("numFiles").first()
    return int(detail[0] or 0) if detail is not None else 0


def maintain(
    tables: LineageTables,
    *,
    only: Iterable[str] | None = None,
    zorder: bool = True,
    vacuum: bool = True,
    retain_hours: int = RETAIN_HOURS,
    file_mb: int = FILE_MB,
) -> MaintainSummary:
    """Z-order (the :data:`LAYOUT` tables) or compact (the others), then VACUUM every existing
    lineage table (``only``: these).

    Raises:
        ConfigError: an unknown table, or ``retain_hours`` below :data:`MIN_RETAIN_HOURS`.
    """
    names = list(only) if only else list(TABLES)
    unknown = sorted(set(names) - set(TABLES))
    if unknown:
        raise ConfigError(f"unknown table(s) {', '.join(unknown)}; known: {', '.join(TABLES)}")
    if vacuum and retain_hours < MIN_RETAIN_HOURS:
        raise ConfigError(
            f"--retain-hours {retain_hours} is below {MIN_RETAIN_HOURS} (7 days): a concurrent "
            "run could lose files it still reads"
        )
    summary = MaintainSummary()
    confs = {
        "spark.databricks.delta.optimize.maxFileSize": str(file_mb * 1024 * 1024),
        # VACUUM lists a table's directories in this many tasks (Spark's default: 10,000, a
        # minute and a half of empty tasks per table on two cores); the tables are not
        # partitioned, a few tasks per core list them
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": str(
            max(8, 4 * tables.spark.sparkContext.defaultParallelism)
        ),
    }
    with _session_confs(tables.spark, confs):
        for table in names:
            _maintain_one(tables, table, summary, zorder, vacuum, retain_hours)
    return summary


def retention_properties(retain_hours: int) -> dict[str, str]:
    """The table properties VACUUM (and the log cleanup) keep ``retain_hours`` by."""
    return {
        "delta.deletedFileRetentionDuration": f"interval {retain_hours} hours",
        "delta.logRetentionDuration": f"interval {max(retain_hours, RETAIN_HOURS)} hours",
    }


@contextmanager
def _session_confs(spark: SparkSession, confs: Mapping[str, str]) -> Iterator[None]:
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def _maintain_one(
    tables: LineageTables,
    table: str,
    summary: MaintainSummary,
    zorder: bool,
    vacuum: bool,
    retain_hours: int,
) -> None:
    if not tables.exists(table):
        return
    clock = time.perf_counter()
    summary.files_before[table] = _files(tables, table)
    columns = LAYOUT.get(table) if zorder else None
    how = f"zorder({', '.join(columns)})" if columns else "compaction"

    def optimize(table: str = table, columns: tuple[str, ...] | None = columns) -> None:
        builder = tables.delta_table(table).optimize()
        if columns:
            builder.executeZOrderBy(*columns)
        else:
            builder.executeCompaction()

    logger.info("maintain: %s %s", how, tables.describe(table))
    commit_with_retry(optimize, f"optimize {table}")
    if vacuum:
        commit_with_retry(
            lambda: tables.ensure_properties(table, retention_properties(retain_hours)),
            f"set the retention of {table}",
        )
        tables.delta_table(table).vacuum(float(retain_hours))
        summary.vacuumed.append(table)
    summary.files_after[table] = _files(tables, table)
    summary.optimized[table] = how
    summary.seconds[table] = time.perf_counter() - clock
