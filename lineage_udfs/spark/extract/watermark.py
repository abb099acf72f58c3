"""Incremental sources: per-source read watermarks in the ``source_state`` Delta table.

A source with ``incremental:`` is read in one of two ways (``IncrementalSettings``):

- **column**: rows whose watermark column is above the committed maximum minus the source's
  ``lookback`` (pushed down to the database for a JDBC source), plus rows where the column is
  null (they cannot be ordered, so every run reads them again; the writes are idempotent). The
  run commits the maximum it read when that is above the committed one. The lookback window
  reads stored rows again so that rows arriving late are not skipped: they MERGE onto their
  query ids and change nothing (``merges.merge_queries``, ``rerun.already_stored``), and a run
  that read nothing new commits nothing.
- **key set** (``keys`` + optional ``version``): for snapshot sources without a time column,
  such as PostgreSQL's ``pg_stat_statements`` (one cumulative row per statement, no timestamps).
  The run reads the whole snapshot, keeps the rows whose key is new or whose version (e.g.
  ``calls``) differs from the committed one, and commits the snapshot's key set (keys gone
  from the snapshot, e.g. after ``pg_stat_statements_reset()``, are removed).

Exactly once, without a multi-table transaction: Delta commits one table at a time, so the
watermark cannot share a commit with the lineage tables. Instead (1) the watermarks of all
sources are committed in one MERGE, the run's very last write, after every lineage MERGE
succeeded; (2) everything before it is idempotent: the lineage tables are MERGEd on natural keys
derived from the log rows' ``query_id`` (a deterministic id), and counters are recounted from
``queries``, never incremented. A run that stops anywhere before the watermark commit leaves the
watermark where it was; the next run reads the same rows again (plus newer ones) and MERGEs
them onto the same keys, so nothing is skipped and nothing counted twice. A run that stops after
it has nothing left to do. What a JDBC source returned is materialised once per run (a local
checkpoint), so the rows the lineage came from and the watermark committed are the same
snapshot even if the database moves on during the run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import IncrementalSettings, SourceSettings
from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.storage.schemas import SOURCE_STATE
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

logger = logging.getLogger(__name__)

STATE_TABLE = SOURCE_STATE.name
COLUMN_KEY = ""
"""``state_key`` of a column watermark."""

_KEY = "_state_key"
_VERSION = "_state_version"
_COMMITTED = "_committed_version"


@dataclass
class IncrementalRead:
    """One run's reads of its incremental sources: the committed watermarks in, the ones to
    commit out (:meth:`commit`, after the run's lineage is written).

    Attributes:
        tables: where ``source_state`` lives.
        run_id: the run, recorded with each committed row.
        pending: per source, the (state_key, state_value) rows to commit.
        key_sets: the sources whose committed keys are replaced by their pending ones.
        counts: per source, the rows read (above its watermark minus its lookback).
    """

    tables: LineageTables
    run_id: str
    pending: dict[str, DataFrame] = field(default_factory=dict)
    key_sets: set[str] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def spark(self) -> SparkSession:
        return self.tables.spark

    def new_rows(self, source: SourceSettings, raw: DataFrame, *, materialize: bool) -> DataFrame:
        """The rows of ``raw`` newer than ``source``'s committed watermark; records the
        watermark this read reaches.

        Args:
            source: an incremental source.
            raw: its rows as read (before any preset transform).
            materialize: compute the read once and keep it (a live database: the watermark and
                the lineage must come from the same snapshot).

        Raises:
            InputError: a watermark or key column is not among the source's columns.
        """
        spec = source.incremental
        assert spec is not None
        needed = [spec.column] if spec.column else [*spec.keys, *filter(None, [spec.version])]
        missing = [c for c in needed if c not in raw.columns]
        if missing:
            raise InputError(
                f"source {source.name!r} ({source.path}): incremental column(s) {missing} not"
                f" among its columns {raw.columns}"
            )
        if spec.column:
            return self._column(source, spec.column, raw, materialize)
        return self._key_set(source, spec.keys, spec.version, raw, materialize)

    def _committed(self, source: str) -> DataFrame:
        self.tables.ensure(STATE_TABLE)
        return self.tables.read(STATE_TABLE).where(F.col("source_name") == source)

    def _column(
        self, source: SourceSettings, column: str, raw: DataFrame, materialize: bool
    ) -> DataFrame:
        spec = source.incremental
        assert spec is not None
        dtype = spec.type or dict(raw.dtypes)[column]
        mismatch = spec.lookback_mismatch(dtype)
        if mismatch is not None:  # a type given in the settings was checked when they loaded
            raise InputError(f"source {source.name!r} ({source.path}): {mismatch}")
        col = F.col(f"`{column}`")
        if spec.type is not None:
            col = col.cast(spec.type)
        row = self._committed(source.name).where(F.col("state_key") == COLUMN_KEY).first()
        committed = None if row is None else row["state_value"]
        reached = F.max(col)
        if committed is not None:
            mark = F.lit(committed).cast(dtype)
            raw = raw.where((col > _minus_lookback(mark, spec)) | col.isNull())
            # rows read again under the lookback never move the watermark back
            reached = F.greatest(reached, mark)
        if materialize:
            raw = checkpointed(raw)
        stats = raw.agg(F.count(F.lit(1)).alias("n"), reached.cast("string").alias("m")).first()
        assert stats is not None
        high = stats["m"]
        if high is not None and high != committed:  # the same watermark again: no commit
            self.pending[source.name] = self.spark.createDataFrame(
                [(COLUMN_KEY, str(high))], "state_key string, state_value string"
            )
        self.counts[source.name] = int(stats["n"])
        logger.info(
            "source %s: %d rows above watermark %s (lookback %s) on %s; watermark to commit %s",
            source.name,
            stats["n"],
            committed if committed is not None else "(none)",
            spec.lookback,
            column,
            high if high != committed else "(unchanged)",
        )
        return raw

    def _key_set(
        self,
        source: SourceSettings,
        keys: list[str],
        version: str | None,
        raw: DataFrame,
        materialize: bool,
    ) -> DataFrame:
        key = F.to_json(F.struct(*[F.col(f"`{k}`") for k in keys]))
        ver = F.coalesce(F.col(f"`{version}`").cast("string"), F.lit("")) if version else F.lit("")
        snapshot = raw.select("*", key.alias(_KEY), ver.alias(_VERSION))
        if materialize:
            snapshot = checkpointed(snapshot)
        committed = self._committed(source.name).select(
            F.col("state_key").alias(_KEY), F.col("state_value").alias(_COMMITTED)
        )
        new = (
            snapshot.join(committed, _KEY, "left")
            .where(F.col(_COMMITTED).isNull() | (F.col(_COMMITTED) != F.col(_VERSION)))
            .drop(_KEY, _VERSION, _COMMITTED)
        )
        if materialize:  # independent of source_state, which this run rewrites at its end
            new = checkpointed(new)
        self.pending[source.name] = snapshot.groupBy(F.col(_KEY).alias("state_key")).agg(
            F.max(_VERSION).alias("state_value")
        )
        self.key_sets.add(source.name)
        total, fresh = snapshot.count(), new.count()
        self.counts[source.name] = fresh
        logger.info(
            "source %s: %d of %d rows new or changed since the committed key set",
            source.name,
            fresh,
            total,
        )
        return new

    def committed_state(self, source: str) -> dict[str, str]:
        """The committed ``source_state`` rows of ``source`` (state_key → state_value): a
        column watermark under ``COLUMN_KEY``, or what a source keeps of its own (a Kafka
        topic's offsets)."""
        rows = self._committed(source).select("state_key", "state_value").collect()
        return {str(r["state_key"]): str(r["state_value"]) for r in rows}

    def record_state(self, source: str, state: dict[str, str], rows_read: int) -> None:
        """Rows to commit for ``source`` with the run's watermarks (upserted by key; keys not
        named stay as they are), and the rows the read covered."""
        self.counts[source] = rows_read
        if state:
            self.pending[source] = self.spark.createDataFrame(
                sorted(state.items()), "state_key string, state_value string"
            )

    def commit(self) -> dict[str, int]:
        """Commit every pending watermark in one MERGE into ``source_state``: the run's last
        write. Returns the MERGE's row counts (inserted / updated / deleted)."""
        if not self.pending:
            return {}
        rows = None
        for source, state in self.pending.items():
            part = state.select(F.lit(source).alias("source_name"), "state_key", "state_value")
            rows = part if rows is None else rows.unionByName(part)
        assert rows is not None
        rows = rows.select(
            "source_name",
            "state_key",
            "state_value",
            F.lit(self.run_id).alias("run_id"),
            F.current_timestamp().alias("committed_at"),
        )
        delete_missing = None
        if self.key_sets:
            names = ", ".join("'" + n.replace("'", "''") + "'" for n in sorted(self.key_sets))
            delete_missing = f"t.source_name IN ({names})"
        metrics = self.tables.write(STATE_TABLE, Upsert(rows, delete_missing=delete_missing))
        logger.info("committed the watermarks of %s: %s", sorted(self.pending), metrics)
        return metrics


def _minus_lookback(mark: Column, spec: IncrementalSettings) -> Column:
    """The lower bound of a run's read: the committed watermark ``mark`` minus the lookback (a
    duration for a time column, a number for a numeric one; ``lookback_mismatch`` has checked
    which). A constant, so a JDBC source still pushes the condition down."""
    amount = spec.lookback_amount
    if not amount:
        return mark
    if spec.lookback_is_duration:
        return mark - F.expr(f"INTERVAL {int(amount)} SECONDS")
    return mark - F.lit(int(amount) if amount.is_integer() else amount)
