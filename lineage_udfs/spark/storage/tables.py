"""The Delta tables: where they are, their creation (declared schemas, comments, properties),
reads, the change data feed, versions and commits, compaction, and the one write path
(``LineageTables.write``, built by ``storage.writes``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.paths import resolve_path
from lineage_udfs.settings import SinkSettings
from lineage_udfs.spark.storage.commits import commit_with_retry, is_concurrent_modification
from lineage_udfs.spark.storage.delta_log import newest_commit, read_commits
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.writes import Change

logger = logging.getLogger(__name__)

_STATS = ("first_seen", "last_seen", "occurrences")
COMPACT_FILES = 64
"""A table with more data files than this is compacted (``LineageTables.compact``) by the run
that wrote it: about every 60 small runs, one OPTIMIZE commit."""
COMPACT_CHECK_EVERY = 10
"""The file count is checked on versions that are a multiple of this."""
ENSURE_THREADS = 16
"""Tables ``LineageTables.ensure_all`` creates at once."""
CREATE_RACES = (
    "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION",
    "DELTA_TABLE_NOT_FOUND",  # its _delta_log folder there, no commit in it yet
    "DELTA_TABLE_ALREADY_EXISTS",
    "DELTA_PROTOCOL_CHANGED",  # both wrote version 0 of an empty folder; the other one won
    "TABLE_OR_VIEW_ALREADY_EXISTS",
    "FileAlreadyExistsException",
)
"""Errors of a CREATE that lost the race with another writer creating the same table (besides
Delta's concurrent-modification errors)."""
CREATE_RACE_SECONDS = 30.0
"""How long a writer that lost a create race waits for the other writer's first commit."""


@dataclass(frozen=True)
class LineageTables:
    """Locations of the lineage tables and the operations on them.

    Attributes:
        spark: the session.
        sink: base path, or database for catalog tables, plus per-table overrides.
    """

    spark: SparkSession
    sink: SinkSettings

    def location(self, table: str) -> tuple[str | None, str | None]:
        """(catalog name, path) of ``table``; exactly one of them drives reads and writes."""
        override = self.sink.tables.get(table)  # type: ignore[call-overload]
        name = override.name if override and override.name else None
        path = override.path if override and override.path else None
        if name is None and self.sink.database:
            name = f"{self.sink.database}.{table}"
        if name is None and path is None:
            path = f"{self.sink.base_path.rstrip('/')}/{table}"
        # the settings hold resolved paths; one built by hand may not
        return name, None if path is None else resolve_path(path)

    def describe(self, table: str) -> str:
        """Human-readable location, e.g. ``delta.`warehouse/lineage/queries```."""
        name, path = self.location(table)
        return name if name else f"delta.`{path}`"

    def ensure_all(self, tables: Iterable[str] | None = None) -> None:
        """Create every missing table of ``tables`` (default: all of them) with its declared
        schema and comments. The tables are independent and a CREATE is mostly the driver
        writing the first commit, so ENSURE_THREADS of them are created at once (one after the
        other, creating a new warehouse's tables took most of its first run's setup)."""
        names = list(TABLES if tables is None else tables)
        with ThreadPoolExecutor(max_workers=max(1, min(ENSURE_THREADS, len(names)))) as pool:
            for _ in pool.map(self.ensure, names):  # re-raises the first failure
                pass

    def ensure(self, table: str) -> None:
        """Create ``table`` if it does not exist (declared schema, table and column comments,
        table properties); on an existing table, set the declared properties it lacks.

        Two jobs starting at once on a new warehouse both create its tables: the one that
        loses the race fails its CREATE (the folder is there, its first commit not yet, or
        the commit is taken), then uses the table the other one created."""
        if self.exists(table):  # the cheap check: no CREATE TABLE IF NOT EXISTS to resolve
            self.ensure_properties(table)
            return
        try:
            self._create(table)
        except Exception as exc:
            if not self._created_meanwhile(table, exc):
                raise
            logger.info("%s: created by another writer at the same time", self.describe(table))
            self.ensure_properties(table)

    def _created_meanwhile(self, table: str, exc: BaseException) -> bool:
        """After a failed CREATE: whether ``exc`` is a create race lost to another writer and
        that writer's table now exists (its first commit can land a moment after its folder:
        waits up to ``CREATE_RACE_SECONDS``)."""
        head = str(exc)[:500]
        if not (is_concurrent_modification(exc) or any(m in head for m in CREATE_RACES)):
            return False
        deadline = time.monotonic() + CREATE_RACE_SECONDS
        while not self._exists_now(table):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        return True

    def _exists_now(self, table: str) -> bool:
        """``exists``, for a path table without the log Delta cached when it was not there."""
        _, path = self.location(table)
        if path:
            jvm = self.spark.sparkContext._jvm
            assert jvm is not None
            hadoop_path = jvm.org.apache.hadoop.fs.Path(str(path))
            jvm.org.apache.spark.sql.delta.DeltaLog.invalidateCache(
                self.spark._jsparkSession, hadoop_path
            )
        return self.exists(table)

    def _create(self, table: str) -> None:
        name, path = self.location(table)
        builder = DeltaTable.createIfNotExists(self.spark)
        if name:
            builder = builder.tableName(name)
        if path:
            builder = builder.location(path)
        spec = TABLES[table]
        for field in spec.schema:
            builder = builder.addColumn(
                field.name, field.dataType, nullable=True, comment=spec.column_comments[field.name]
            )
        for key, value in spec.properties.items():
            builder = builder.property(key, value)
        builder.comment(spec.comment).execute()  # with every declared property

    def exists(self, table: str) -> bool:
        """Whether ``table`` exists (catalog table) or has a Delta log at its path."""
        name, path = self.location(table)
        if name:
            return bool(self.spark.catalog.tableExists(name))
        return bool(DeltaTable.isDeltaTable(self.spark, str(path)))

    def ensure_properties(self, table: str, extra: Mapping[str, str] | None = None) -> None:
        """Set the declared table properties (``TableSpec.properties``), and ``extra``, that
        ``table`` lacks or holds with another value.

        A table created before a property was declared (e.g. the change data feed of
        ``queries``) gets it with one ``ALTER TABLE ... SET TBLPROPERTIES`` commit; changes
        are recorded from that version on.
        """
        wanted = {**TABLES[table].properties, **(extra or {})}
        if not wanted:
            return
        # SHOW TBLPROPERTIES reads the table's metadata only; detail() also reconstructs its
        # file list (a Spark job per table, every run)
        shown = self.spark.sql(f"SHOW TBLPROPERTIES {self._identifier(table)}").collect()
        current: Mapping[str, str] = {r["key"]: r["value"] for r in shown}
        missing = {k: v for k, v in wanted.items() if current.get(k, "").lower() != v.lower()}
        if not missing:
            return
        assignments = ", ".join(f"'{k}' = '{v}'" for k, v in sorted(missing.items()))
        logger.info("setting table properties on %s: %s", self.describe(table), assignments)
        statement = f"ALTER TABLE {self._identifier(table)} SET TBLPROPERTIES ({assignments})"
        commit_with_retry(lambda: self.spark.sql(statement), f"properties of {table}")

    def _identifier(self, table: str) -> str:
        name, path = self.location(table)
        if name:
            return name
        return "delta.`" + str(path).replace("`", "``") + "`"

    def delta_table(self, table: str) -> DeltaTable:
        """The ``DeltaTable`` handle."""
        name, path = self.location(table)
        if name:
            return DeltaTable.forName(self.spark, name)
        return DeltaTable.forPath(self.spark, path)  # type: ignore[arg-type]

    def read(self, table: str, *, version: int | None = None) -> DataFrame:
        """The table's rows, columns in declared order: current, or as of ``version``."""
        name, path = self.location(table)
        reader = self.spark.read.format("delta")
        if version is not None:
            reader = reader.option("versionAsOf", version)
        frame = reader.table(name) if name else reader.load(path)  # type: ignore[arg-type]
        return frame.select(*TABLES[table].columns)

    def changes(self, table: str, start: int, end: int) -> DataFrame:
        """Change data feed rows of versions ``start`` to ``end`` (inclusive): the declared
        columns plus ``_change_type`` (insert / update_preimage / update_postimage / delete)
        and ``_commit_version``.

        Raises (when the plan is analysed or run, not here): an AnalysisException when change
        data was not recorded for the range; a FileNotFound error when VACUUM removed files
        the range needs.
        """
        name, path = self.location(table)
        reader = (
            self.spark.read.format("delta")
            .option("readChangeFeed", "true")
            .option("startingVersion", start)
            .option("endingVersion", end)
        )
        frame = reader.table(name) if name else reader.load(path)  # type: ignore[arg-type]
        return frame.select(*TABLES[table].columns, "_change_type", "_commit_version")

    def write(self, table: str, change: Change, *, metadata: str | None = None) -> dict[str, int]:
        """Write ``change`` to ``table`` in one Delta commit (none where it changes nothing),
        run again on the new snapshot when another writer committed meanwhile
        (``commit_with_retry``); ``metadata`` is the commit's userMetadata where the change
        takes one (appends and overwrites). Returns the commit's row counts (empty: no
        commit), e.g. ``numTargetRowsInserted``, ``numOutputRows``."""

        def attempt() -> dict[str, int]:
            before = self.latest_version(table)
            change.commit(self, table, metadata)
            return self.metrics_since(table, before)

        return commit_with_retry(attempt, f"{change.verb} {table}")

    def compact(self, table: str, max_files: int = COMPACT_FILES) -> bool:
        """OPTIMIZE ``table`` (one commit, no data change) when it holds more than
        ``max_files`` data files; returns whether it did. Each small run adds a few small
        files: without this, reads and MERGEs slow down as runs pile up. The file count is
        read on every COMPACT_CHECK_EVERY-th version only (it costs a Spark job)."""
        if self.latest_version(table) % COMPACT_CHECK_EVERY:
            return False
        detail = self.delta_table(table).detail().select("numFiles").first()
        if detail is None or int(detail[0] or 0) <= max_files:
            return False
        logger.info("compacting %s (%d files)", self.describe(table), int(detail[0]))
        self.delta_table(table).optimize().executeCompaction()
        return True

    def latest_version(self, table: str) -> int:
        """Version of the table's latest commit: of a path table, the newest commit file in
        its ``_delta_log`` (a listing; the table's history costs a Spark job, and a run asks
        dozens of times); else, or where the log cannot be listed, from its history."""
        _, path = self.location(table)
        listed = newest_commit(self.spark, path) if path else None
        if listed is not None:
            return listed
        row = self.delta_table(table).history(1).select("version").first()
        return int(row["version"]) if row else -1

    def recent_commits(self, table: str, count: int) -> list[dict[str, Any]]:
        """The newest ``count`` commits of ``table``, newest first: ``version``, ``operation``,
        ``userMetadata`` and ``operationMetrics`` of each. Of a path table, read from its
        newest commit files (no Spark job); else, or where they cannot be read, from its
        history."""
        _, path = self.location(table)
        commits = read_commits(self.spark, path, count) if path else None
        if commits is not None:
            return commits
        history = self.delta_table(table).history(count)
        return [
            row.asDict()
            for row in history.select(
                "version", "operation", "userMetadata", "operationMetrics"
            ).collect()
        ]

    def recorded_state(self, table: str, key: str, count: int = 5) -> dict[str, Any] | None:
        """The userMetadata (a JSON object holding ``key``) of the newest of ``table``'s last
        ``count`` commits that has one: the state a stage recorded with its write (maintenance
        commits, e.g. compaction, may follow it)."""
        found = self.recorded_commit(table, key, count)
        return None if found is None else found[0]

    def recorded_commit(
        self, table: str, key: str, count: int = 5
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """As :meth:`recorded_state`, with the commit that recorded it (``recent_commits``)."""
        for commit in self.recent_commits(table, count):
            try:
                state = json.loads(commit["userMetadata"] or "")
            except ValueError:
                continue
            if isinstance(state, dict) and key in state:
                return state, commit
        return None

    def metrics_since(self, table: str, version: int) -> dict[str, int]:
        """Row counts of the latest commit if it is newer than ``version`` (a no-op MERGE may
        not commit at all), e.g. numTargetRowsInserted/Updated/Deleted."""
        commits = self.recent_commits(table, 1)
        if not commits or int(commits[0]["version"]) <= version:
            return {}
        metrics: Mapping[str, Any] = commits[0]["operationMetrics"] or {}
        return {k: int(v) for k, v in metrics.items() if str(v).isdigit()}
