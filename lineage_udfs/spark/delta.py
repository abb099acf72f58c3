"""The Delta tables: creation (declared schemas, comments), idempotent MERGEs, run history.

Idempotency scheme: lineage rows are *derived* from two fact tables, ``queries`` (one row per
log row, keyed by query_id) and ``parsed_statements`` (one row per fingerprint, with its edges).
For the keys a batch touches, the edge tables are recomputed from those facts and reconciled with
one MERGE per table (insert new keys, update changed rows, delete stale keys in scope). Counters
are never incremented (``occurrences = count(DISTINCT query_id)``) and times come from the log
(``start_time``), never the wall clock, so re-running the same input changes nothing.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any, TypeVar

from delta.exceptions import (
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentTransactionException,
    ConcurrentWriteException,
    DeltaConcurrentModificationException,
    MetadataChangedException,
)
from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from lineage_udfs.core.enums import ABORTED_EXECUTION_STATUSES, FAILED_EXECUTION_STATUSES
from lineage_udfs.settings import SinkSettings
from lineage_udfs.spark.preflight import fs_and_path
from lineage_udfs.spark.schemas import TABLES

logger = logging.getLogger(__name__)

DEFINITION_EDGE_KINDS: tuple[str, ...] = ("view", "procedure")
"""Edge kinds whose lineage is replaced by the newest definition of the object."""

_STATS = ("first_seen", "last_seen", "occurrences")
COMPACT_FILES = 64
"""A table with more data files than this is compacted (``LineageTables.compact``) by the run
that wrote it: about every 60 small runs, one OPTIMIZE commit."""
COMPACT_CHECK_EVERY = 10
"""The file count is checked on versions that are a multiple of this."""
ENSURE_THREADS = 16
"""Tables ``LineageTables.ensure_all`` creates at once."""
_DELETE_FLAG = "_delete"


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
        if path and "://" not in path and not path.startswith("/"):
            path = str(Path(path).resolve())  # relative to the working directory
        return name, path

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
        table properties); on an existing table, set the declared properties it lacks."""
        if self.exists(table):  # the cheap check: no CREATE TABLE IF NOT EXISTS to resolve
            self.ensure_properties(table)
            return
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

    def ensure_properties(self, table: str) -> None:
        """Set the declared table properties (``TableSpec.properties``) that ``table`` lacks.

        A table created before a property was declared (e.g. the change data feed of
        ``queries``) gets it with one ``ALTER TABLE ... SET TBLPROPERTIES`` commit; changes
        are recorded from that version on.
        """
        wanted = TABLES[table].properties
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
        self.spark.sql(f"ALTER TABLE {self._identifier(table)} SET TBLPROPERTIES ({assignments})")

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

    def append(
        self,
        table: str,
        rows: DataFrame,
        *,
        merge_schema: bool = False,
        metadata: str | None = None,
    ) -> None:
        """Append rows (``lineage_runs``: one row per run by design; the graph tables: the rows
        of recomputed components). ``merge_schema`` adds declared columns the table lacks;
        ``metadata`` is the commit's userMetadata."""
        name, path = self.location(table)
        writer = rows.select(*TABLES[table].columns).write.format("delta").mode("append")
        if merge_schema:
            writer = writer.option("mergeSchema", "true")
        if metadata is not None:
            writer = writer.option("userMetadata", metadata)
        if name:
            writer.saveAsTable(name)
        else:
            writer.save(path)

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
        listed = _newest_commit(self.spark, path) if path else None
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
        commits = _read_commits(self.spark, path, count) if path else None
        if commits is not None:
            return commits
        history = self.delta_table(table).history(count)
        return [
            row.asDict()
            for row in history.select(
                "version", "operation", "userMetadata", "operationMetrics"
            ).collect()
        ]

    def metrics_since(self, table: str, version: int) -> dict[str, int]:
        """Row counts of the latest commit if it is newer than ``version`` (a no-op MERGE may
        not commit at all), e.g. numTargetRowsInserted/Updated/Deleted."""
        commits = self.recent_commits(table, 1)
        if not commits or int(commits[0]["version"]) <= version:
            return {}
        metrics: Mapping[str, Any] = commits[0]["operationMetrics"] or {}
        return {k: int(v) for k, v in metrics.items() if str(v).isdigit()}


_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


def _commit_files(spark: SparkSession, path: str) -> tuple[Any, dict[int, Any]] | None:
    """The file system and ``{version: path}`` of the commit files in ``path/_delta_log``
    (``<version>.json``, 20 digits, as Delta lists them); None where nothing can be listed
    (no JVM, as on Spark Connect; no log)."""
    try:
        fs, log = fs_and_path(spark, f"{path.rstrip('/')}/_delta_log")
        if not fs.exists(log):
            return None
        files = {
            int(match.group(1)): status.getPath()
            for status in fs.listStatus(log)
            if (match := _COMMIT_FILE.match(status.getPath().getName()))
        }
    except Exception:  # no file system to list: the history says it
        return None
    return fs, files


def _newest_commit(spark: SparkSession, path: str) -> int | None:
    """The newest commit version of the Delta table at ``path`` (None: not listed)."""
    found = _commit_files(spark, path)
    return max(found[1]) if found is not None and found[1] else None


def _read_commits(spark: SparkSession, path: str, count: int) -> list[dict[str, Any]] | None:
    """The commit infos of the newest ``count`` commit files, newest first (None: not read,
    or a commit without its commit info)."""
    found = _commit_files(spark, path)
    if found is None or not found[1]:
        return None
    fs, files = found
    commits = []
    try:
        for version in sorted(files, reverse=True)[:count]:
            stream = fs.open(files[version])
            try:
                text = bytes(stream.readAllBytes()).decode("utf-8")
            finally:
                stream.close()
            info = next(
                (
                    json.loads(line)["commitInfo"]
                    for line in text.splitlines()
                    if line.startswith('{"commitInfo"')
                ),
                None,
            )
            if info is None:
                return None
            commits.append(
                {
                    "version": version,
                    "operation": info.get("operation"),
                    "userMetadata": info.get("userMetadata"),
                    "operationMetrics": info.get("operationMetrics") or {},
                }
            )
    except Exception:  # removed by log cleanup meanwhile, unreadable: the history says it
        return None
    return commits


def _differs(columns: Iterable[str]) -> str:
    """SQL condition: any column differs between target ``t`` and source ``s`` (null-safe)."""
    return " OR ".join(f"NOT (t.`{c}` <=> s.`{c}`)" for c in columns)


def _key_condition(table: str) -> str:
    return " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in TABLES[table].keys)


VOLATILE_COLUMNS: dict[str, tuple[str, ...]] = {"parsed_statements": ("parse_ms",)}
"""Columns that differ between two parses of the same statement; a change in them alone does
not rewrite a row (so a forced re-parse with the same outcome changes nothing)."""


T = TypeVar("T")

CONCURRENT_MODIFICATION: tuple[type[BaseException], ...] = (
    DeltaConcurrentModificationException,
    ConcurrentWriteException,
    ConcurrentAppendException,
    ConcurrentDeleteReadException,
    ConcurrentDeleteDeleteException,
    ConcurrentTransactionException,
    MetadataChangedException,
)
"""Delta's answers to a commit that lost a race with another writer's commit: the same command
run again on the new snapshot can succeed (``ProtocolChangedException`` cannot: not here)."""
_CONCURRENT_NAMES = tuple(c.__name__ for c in CONCURRENT_MODIFICATION)

COMMIT_ATTEMPTS = 6
"""How many times a MERGE is tried when another writer commits to its table meanwhile."""
COMMIT_BACKOFF_SECONDS = 0.5
"""The first wait before a retry; each later wait doubles (plus up to 50% random jitter, so
two writers that collided do not retry in lockstep)."""


def is_concurrent_modification(exc: BaseException) -> bool:
    """True for Delta's concurrent-modification errors (also when Py4J did not convert them)."""
    if isinstance(exc, CONCURRENT_MODIFICATION):
        return True
    head = str(exc)[:500]
    return any(f"io.delta.exceptions.{name}" in head for name in _CONCURRENT_NAMES)


def commit_with_retry(
    commit: Callable[[], T],
    what: str,
    *,
    attempts: int = COMMIT_ATTEMPTS,
    backoff: float = COMMIT_BACKOFF_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``commit`` (one Delta command that reads the table and commits to it); when another
    writer committed conflicting files meanwhile, wait and run it again on the new snapshot
    (exponential backoff, ``attempts`` tries in all). Other errors are raised at once.

    The lineage MERGEs are idempotent and computed from the facts, so a command run again after
    the other writer's commit gives what the two runs give one after the other.
    """
    for attempt in range(1, attempts + 1):
        try:
            return commit()
        except Exception as exc:
            if attempt == attempts or not is_concurrent_modification(exc):
                raise
            delay = backoff * 2 ** (attempt - 1) * (1 + random.random() / 2)
            logger.warning(
                "%s: another writer committed to the table meanwhile (%s); retry %d of %d"
                " in %.1f s",
                what,
                type(exc).__name__,
                attempt,
                attempts - 1,
                delay,
            )
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def merge_upsert(tables: LineageTables, table: str, rows: DataFrame) -> dict[str, int]:
    """Insert new keys, update rows whose values changed; unchanged rows are not rewritten.

    ``rows`` must be unique on the table's key (callers dedupe; MERGE rejects duplicates).
    """
    columns = TABLES[table].columns
    values = [c for c in columns if c not in TABLES[table].keys]
    compared = [c for c in values if c not in VOLATILE_COLUMNS.get(table, ())]
    source = rows.select(*columns)

    def attempt() -> dict[str, int]:
        before = tables.latest_version(table)
        (
            tables.delta_table(table)
            .alias("t")
            .merge(source.alias("s"), _key_condition(table))
            .whenMatchedUpdate(condition=_differs(compared), set={c: f"s.`{c}`" for c in values})
            .whenNotMatchedInsert(values={c: f"s.`{c}`" for c in columns})
            .execute()
        )
        return tables.metrics_since(table, before)

    return commit_with_retry(attempt, f"MERGE into {table}")


def merge_insert_only(tables: LineageTables, table: str, rows: DataFrame) -> dict[str, int]:
    """Insert rows whose key is new; existing rows are never touched (quarantine)."""
    columns = TABLES[table].columns

    def attempt() -> dict[str, int]:
        before = tables.latest_version(table)
        (
            tables.delta_table(table)
            .alias("t")
            .merge(rows.select(*columns).alias("s"), _key_condition(table))
            .whenNotMatchedInsert(values={c: f"s.`{c}`" for c in columns})
            .execute()
        )
        return tables.metrics_since(table, before)

    return commit_with_retry(attempt, f"MERGE into {table}")


def merge_reconcile(
    tables: LineageTables, table: str, desired: DataFrame, stale: DataFrame
) -> dict[str, int]:
    """One MERGE: upsert ``desired`` rows and delete the ``stale`` keys (both unique on key)."""
    columns = TABLES[table].columns
    values = [c for c in columns if c not in TABLES[table].keys]
    source = desired.select(*columns, F.lit(False).alias(_DELETE_FLAG)).unionByName(
        stale.select(*columns, F.lit(True).alias(_DELETE_FLAG))
    )

    def attempt() -> dict[str, int]:
        before = tables.latest_version(table)
        (
            tables.delta_table(table)
            .alias("t")
            .merge(source.alias("s"), _key_condition(table))
            .whenMatchedDelete(condition=f"s.{_DELETE_FLAG}")
            .whenMatchedUpdate(
                condition=f"NOT s.{_DELETE_FLAG} AND ({_differs(values)})",
                set={c: f"s.`{c}`" for c in values},
            )
            .whenNotMatchedInsert(
                condition=f"NOT s.{_DELETE_FLAG}", values={c: f"s.`{c}`" for c in columns}
            )
            .execute()
        )
        return tables.metrics_since(table, before)

    return commit_with_retry(attempt, f"MERGE into {table}")


# --- derivations from the facts ----------------------------------------------------------------


def fingerprint_stats(queries: DataFrame) -> DataFrame:
    """Per fingerprint: first_seen, last_seen (log start_time) and distinct query_id count."""
    return queries.groupBy("fingerprint").agg(
        F.min("start_time").alias("first_seen"),
        F.max("start_time").alias("last_seen"),
        F.countDistinct("query_id").cast("long").alias("occurrences"),
    )


def annotate_edge_kind(queries: DataFrame, parsed: DataFrame) -> DataFrame:
    """Add edge_kind and object_name (the lineage "owner") to query rows.

    A view or procedure definition row, or a logged CREATE VIEW, is a definition (edge_kind
    ``view`` / ``procedure``) of the object it creates; anything else is ``query`` lineage.
    The definition's object name is the statement's single target when it has one (canonical),
    else the row's object_name, lower-cased.
    """
    info = parsed.select(
        "fingerprint",
        "statement_type",
        F.when(F.size("targets") == 1, F.element_at("targets", 1)).alias("_target"),
    )
    kind = (
        F.when(F.col("object_kind") == "view", F.lit("view"))
        .when(F.col("object_kind") == "procedure", F.lit("procedure"))
        .when(F.col("statement_type") == "CREATE_VIEW", F.lit("view"))
        .otherwise(F.lit("query"))
    )
    return (
        queries.join(info, "fingerprint", "inner")
        .withColumn("edge_kind", kind)
        .withColumn(
            "object_name",
            F.when(
                F.col("edge_kind") == "procedure",
                F.coalesce(F.lower("object_name"), F.col("_target")),
            )
            .when(
                F.col("edge_kind") == "view",
                F.coalesce(
                    F.when(F.col("statement_type") == "CREATE_VIEW", F.col("_target")),
                    F.lower("object_name"),
                    F.col("_target"),
                ),
            )
            .otherwise(F.lit(None).cast("string")),
        )
        .drop("_target", "statement_type")
    )


def failed_execution(status: Column) -> Column:
    """True where a logged execution status says the statement failed or was aborted (any case,
    surrounding blanks ignored); false for a null status (unknown counts as succeeded)."""
    statuses = sorted(FAILED_EXECUTION_STATUSES | ABORTED_EXECUTION_STATUSES)
    return F.coalesce(F.lower(F.trim(status)).isin(*statuses), F.lit(False))


def current_lineage_rows(annotated: DataFrame) -> DataFrame:
    """Rows whose lineage counts: every query row, and for each defined object only the rows of
    its newest definition (latest start_time, then query_id)."""
    newest = Window.partitionBy("edge_kind", "object_name").orderBy(
        F.col("start_time").desc_nulls_last(), F.col("query_id").desc()
    )
    definitions = (
        annotated.where(F.col("edge_kind").isin(*DEFINITION_EDGE_KINDS))
        .withColumn("_current", F.first("fingerprint").over(newest))
        .where(F.col("fingerprint") == F.col("_current"))
        .drop("_current")
    )
    return annotated.where(~F.col("edge_kind").isin(*DEFINITION_EDGE_KINDS)).unionByName(
        definitions
    )


def lineage_edges(rows: DataFrame, parsed: DataFrame, *, column_level: bool) -> DataFrame:
    """Edge rows (TABLE_LINEAGE / COLUMN_LINEAGE columns), unique on the natural key.

    ``rows`` are ``current_lineage_rows``; stats are computed over the rows of each (edge kind,
    object, fingerprint) group, so ``occurrences`` is a count of distinct query ids.
    """
    grouped = rows.groupBy("fingerprint", "edge_kind", "object_name").agg(
        F.max("source_system").alias("source_system"),
        F.min("start_time").alias("first_seen"),
        F.max("start_time").alias("last_seen"),
        F.countDistinct("query_id").cast("long").alias("occurrences"),
    )
    array_col = "column_edges" if column_level else "table_edges"
    edges = parsed.select("fingerprint", F.explode(array_col).alias("e")).select(
        "fingerprint", "e.*"
    )
    table = "column_lineage" if column_level else "table_lineage"
    key = list(TABLES[table].keys)
    joined = grouped.join(edges, "fingerprint", "inner").where(
        F.col("source_table").isNotNull() & F.col("target_table").isNotNull()
    )
    # A fingerprint shared by two objects (identical definitions) must not duplicate a key.
    return joined.groupBy(*key).agg(
        F.max("object_name").alias("object_name"),
        F.max("source_system").alias("source_system"),
        F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"),
        F.max("occurrences").alias("occurrences"),
    )


def stale_rows(existing_in_scope: DataFrame, desired: DataFrame, table: str) -> DataFrame:
    """Existing rows in scope whose key is no longer desired (null-safe key comparison)."""
    key = list(TABLES[table].keys)
    wanted = desired.select(*[F.col(k).alias(f"_d_{k}") for k in key])
    condition = reduce(
        lambda a, b: a & b,
        [existing_in_scope[k].eqNullSafe(wanted[f"_d_{k}"]) for k in key],
    )
    return existing_in_scope.join(wanted, condition, "left_anti")


def dict_to_map(values: Mapping[str, Any]) -> Column:
    """A literal map column from a Python dict (sorted keys, for stable output)."""
    items = sorted(values.items())
    if not items:
        return F.create_map().cast("map<string,bigint>")
    return F.create_map(*[x for k, v in items for x in (F.lit(k), F.lit(v))])
