"""How rows reach a lineage table: one kind of change per class, each a single Delta command.

``LineageTables.write(table, change)`` is the one write path: it runs ``change.commit`` through
``commit_with_retry`` and returns the commit's row counts. Nothing else in the Spark layer
writes a lineage table, so every writer resolves name or path the same way and retries a
commit that lost a race with another writer the same way.

A change's rows may be a DataFrame or a function that returns one. A function is called anew
for each attempt, so a retried commit recomputes its rows against the snapshot it commits to
(rows read from the table being written must be given that way).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from delta.tables import DeltaMergeBuilder
from pyspark.sql import Column, DataFrame, DataFrameWriter
from pyspark.sql import functions as F

from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.storage.schemas import TABLES

if TYPE_CHECKING:
    from lineage_udfs.spark.storage.tables import LineageTables

Rows: TypeAlias = DataFrame | Callable[[], DataFrame]
"""Rows to write, or how to compute them (called once per attempt)."""
Pair: TypeAlias = tuple[DataFrame, DataFrame]
PairRows: TypeAlias = Pair | Callable[[], Pair]
"""Two frames of rows (``Reconcile``: desired and stale), or how to compute them (called once
per attempt)."""

T = TypeVar("T")

DELETE_FLAG = "_delete"
"""Column of a change's source rows: true for a stored row to delete, false for one to write."""

VOLATILE_COLUMNS: dict[str, tuple[str, ...]] = {
    "parsed_statements": ("parse_ms",),
    "catalog_columns": ("imported_at",),
    "source_state": ("run_id", "committed_at"),
    "openlineage_events": ("run_id_read", "source_file"),
    "dataset_aliases": ("first_seen",),
    "openlineage_symlinks": ("emitted_at",),
}
"""Columns whose change alone does not rewrite a stored row: two parses of the same statement
differ in ``parse_ms`` (a forced re-parse with the same outcome changes nothing), an import of
the same catalog in its time, a watermark committed again in its run."""

BROADCAST_KEYS = 200_000
"""Keys of a partial recompute broadcast to the stored rows at most (the stored table is
scanned, not shuffled)."""


def rows_of(rows: Rows) -> DataFrame:
    """The DataFrame of ``rows`` (a function is called)."""
    return rows() if callable(rows) else rows


def again_on_retry(first: T, recompute: Callable[[], T]) -> Callable[[], T]:
    """A change's rows as a function: ``first`` (computed already, e.g. to count it) for the
    first attempt, ``recompute()`` for each retry, so that rows read from the table being
    written are read again from the snapshot the retry commits to."""
    attempts = itertools.count()

    def rows() -> T:
        return first if next(attempts) == 0 else recompute()

    return rows


def _differs(columns: Iterable[str]) -> str:
    """SQL condition: any column differs between target ``t`` and source ``s`` (null-safe)."""
    return " OR ".join(f"NOT (t.`{c}` <=> s.`{c}`)" for c in columns) or "false"


def _key_condition(table: str) -> str:
    return " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in TABLES[table].keys)


def _merge(tables: LineageTables, table: str, source: DataFrame, on: str) -> DeltaMergeBuilder:
    return tables.delta_table(table).alias("t").merge(source.alias("s"), on)


def _all(columns: Iterable[str]) -> dict[str, str | Column]:
    return {c: f"s.`{c}`" for c in columns}


@dataclass(frozen=True)
class Upsert:
    """Insert new keys, update rows whose values changed (``VOLATILE_COLUMNS`` aside);
    unchanged rows are not rewritten. ``delete_missing``: a condition on the stored row ``t``;
    stored rows it holds for whose key ``rows`` has none are deleted (a source's whole catalog
    or watermark set replaced). ``prefer``: given the aliases of the new row and the stored
    row, true where the new row replaces the stored one (default: wherever it differs), e.g.
    ``facts.query_row_preferred``. ``rows`` must be unique on the table's key."""

    rows: Rows
    delete_missing: str | None = None
    prefer: Callable[[str, str], Column] | None = None
    verb = "MERGE into"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        spec = TABLES[table]
        values = [c for c in spec.columns if c not in spec.keys]
        compared = [c for c in values if c not in VOLATILE_COLUMNS.get(table, ())]
        source = rows_of(self.rows).select(*spec.columns)
        differs = _differs(compared)
        update = differs if self.prefer is None else F.expr(differs) & self.prefer("s", "t")
        merge = (
            _merge(tables, table, source, _key_condition(table))
            .whenMatchedUpdate(condition=update, set=_all(values))
            .whenNotMatchedInsert(values=_all(spec.columns))
        )
        if self.delete_missing is not None:
            merge = merge.whenNotMatchedBySourceDelete(condition=self.delete_missing)
        merge.execute()


@dataclass(frozen=True)
class InsertNew:
    """Insert the rows whose key is new; stored rows are never touched (quarantine)."""

    rows: Rows
    verb = "MERGE into"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        columns = TABLES[table].columns
        source = rows_of(self.rows).select(*columns)
        _merge(tables, table, source, _key_condition(table)).whenNotMatchedInsert(
            values=_all(columns)
        ).execute()


@dataclass(frozen=True)
class Reconcile:
    """Upsert the desired rows and delete the stale keys (both unique on the key), in one
    MERGE. ``rows``: (desired, stale), or a function that returns them, called anew for each
    attempt: stale keys are found in the table written, and a retry must find them in the
    snapshot it commits to (the keys found before another writer's commit would delete what
    it just wrote)."""

    rows: PairRows
    verb = "MERGE into"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        spec = TABLES[table]
        values = [c for c in spec.columns if c not in spec.keys]
        desired, stale = self.rows() if callable(self.rows) else self.rows
        source = desired.select(*spec.columns, F.lit(False).alias(DELETE_FLAG)).unionByName(
            stale.select(*spec.columns, F.lit(True).alias(DELETE_FLAG))
        )
        (
            _merge(tables, table, source, _key_condition(table))
            .whenMatchedDelete(condition=f"s.{DELETE_FLAG}")
            .whenMatchedUpdate(
                condition=f"NOT s.{DELETE_FLAG} AND ({_differs(values)})", set=_all(values)
            )
            .whenNotMatchedInsert(condition=f"NOT s.{DELETE_FLAG}", values=_all(spec.columns))
            .execute()
        )


@dataclass(frozen=True)
class Replace:
    """Delete the stored rows flagged ``DELETE_FLAG`` (whole rows, matched on the key) and
    insert the others, in one MERGE; no commit when ``changes`` is empty. The graph stage's
    partial recompute: ``changes`` are the rows that differ between the stored and the
    recomputed ones (``replacement``)."""

    changes: Rows
    verb = "MERGE into"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        spec = TABLES[table]
        source = rows_of(self.changes)
        if source.isEmpty():
            return
        (
            _merge(tables, table, source, f"{_key_condition(table)} AND s.{DELETE_FLAG}")
            .withSchemaEvolution()  # a table written before a column was added to its schema
            .whenMatchedDelete()
            .whenNotMatchedInsert(condition=f"NOT s.{DELETE_FLAG}", values=_all(spec.columns))
            .execute()
        )


@dataclass(frozen=True)
class Overwrite:
    """Replace the table's rows (or those ``replace_where`` holds) in one commit, adding
    declared columns the table lacks; ``metadata`` is the commit's userMetadata."""

    rows: Rows
    replace_where: str | None = None
    verb = "overwrite"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        writer = rows_of(self.rows).select(*TABLES[table].columns).write.format("delta")
        writer = writer.mode("overwrite").option("mergeSchema", "true")
        if self.replace_where is not None:
            writer = writer.option("replaceWhere", self.replace_where)
        _save(tables, table, writer, metadata)


@dataclass(frozen=True)
class Append:
    """Append rows (``lineage_runs``, ``openlineage_emissions``: one row per run by design);
    ``metadata`` is the commit's userMetadata."""

    rows: Rows
    verb = "append to"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        writer = rows_of(self.rows).select(*TABLES[table].columns).write.format("delta")
        _save(tables, table, writer.mode("append"), metadata)


@dataclass(frozen=True)
class Record:
    """A commit that adds and removes no row (one empty data file, which compaction drops) and
    carries ``metadata`` (its userMetadata): the input state of a stage whose write was a
    MERGE, which takes none (``graph.tags``)."""

    verb = "record state in"

    def commit(self, tables: LineageTables, table: str, metadata: str | None) -> None:
        # Delta drops a commit that adds no row unless told otherwise; told in a session of its
        # own (same context and catalog), so that no other writer's empty change commits
        session = tables.spark.newSession()
        session.conf.set(RECORD_EMPTY_COMMITS, "false")
        empty = session.createDataFrame([], TABLES[table].schema)
        _save(tables, table, empty.write.format("delta").mode("append"), metadata)


RECORD_EMPTY_COMMITS = "spark.databricks.delta.skipRecordingEmptyCommits"


Change: TypeAlias = Upsert | InsertNew | Reconcile | Replace | Overwrite | Append | Record
"""What ``LineageTables.write`` takes."""


def _save(tables: LineageTables, table: str, writer: DataFrameWriter, metadata: str | None) -> None:
    if metadata is not None:
        writer = writer.option("userMetadata", metadata)
    name, path = tables.location(table)
    if name:
        writer.saveAsTable(name)
    else:
        writer.save(path)


def keyed(
    rows: DataFrame, keys: DataFrame, key: list[str], how: str, *, broadcast: bool = False
) -> DataFrame:
    """``rows`` joined with the distinct ``keys`` on the ``key`` columns, nulls equal to
    nulls (a column ref may have no column name); keeps the non-key columns of ``keys``.
    ``broadcast``: ``keys`` are few (the rows are scanned, not shuffled)."""
    right = keys.distinct().select(*[F.col(c).alias(f"_k_{c}") for c in keys.columns])
    if broadcast:
        right = F.broadcast(right)
    condition = None
    for c in key:
        term = rows[c].eqNullSafe(right[f"_k_{c}"])
        condition = term if condition is None else condition & term
    joined = rows.join(right, condition, how)
    if how in ("left_semi", "left_anti"):
        return joined
    extra = [F.col(f"_k_{c}").alias(c) for c in keys.columns if c not in key]
    return joined.select(*rows.columns, *extra)


def replacement(
    tables: LineageTables,
    table: str,
    rows: DataFrame,
    replaced: DataFrame,
    relabelled: DataFrame | None = None,
) -> Callable[[], DataFrame]:
    """The ``Replace`` changes that bring the stored rows of ``table`` in line with a partial
    recompute (read from the table's snapshot when called).

    ``rows`` are the recomputed rows of the keys in ``replaced`` (a frame of some of the
    table's columns): the stored rows of those keys are replaced by them. ``relabelled``
    (``(<key>, component_id)``, a key column and the new id) moves the other stored rows of
    those keys to that component. Only rows that differ are deleted and inserted.
    """
    columns = TABLES[table].columns
    key = replaced.columns
    few = replaced.count() <= BROADCAST_KEYS
    few_moved = relabelled is not None and relabelled.count() <= BROADCAST_KEYS
    new_rows = checkpointed(rows.select(*columns))  # read twice below, and on a retry

    def changes() -> DataFrame:
        stored = tables.read(table)
        old = keyed(stored, replaced, key, "left_semi", broadcast=few)
        new = new_rows
        if relabelled is not None:
            moved = relabelled.columns[0]
            moving = keyed(
                keyed(stored, relabelled, [moved], "left_semi", broadcast=few_moved),
                replaced, key, "left_anti", broadcast=few,
            )  # fmt: skip
            old = old.unionByName(moving)
            new = new.unionByName(
                keyed(moving.drop("component_id"), relabelled, [moved], "inner").select(*columns)
            )
        # the rows in one of the two but not the other, in one aggregation (two EXCEPTs are a
        # dozen more Spark jobs): a row only stored is deleted, a row only recomputed inserted
        side = "_side"
        return checkpointed(
            old.select(*columns, F.lit(True).alias(side))
            .unionByName(new.select(*columns, F.lit(False).alias(side)))
            .groupBy(*columns)
            .agg(F.min(side).alias("_first"), F.max(side).alias(DELETE_FLAG))
            .where(F.col("_first") == F.col(DELETE_FLAG))
            .drop("_first")
        )

    return changes
