"""What one OpenLineage emission covers: every row, or only what changed since the watermark.

The watermark is the newest *succeeded* row of the ``openlineage_emissions`` Delta table with
the same ``options_digest`` (the event-shaping settings): the ``queries`` and
``parsed_statements`` versions up to which every change has been emitted. An incremental
emission pins both tables at their current versions and reads their change data feed (CDF)
from the watermark on:

- ``queries`` inserts and update post-images: new (or re-logged) rows. They are emitted from
  the change feed itself, so the emission never scans the whole history for them.
- ``parsed_statements`` update pairs whose event-shaping columns differ (:data:`PARSE_COLUMNS`):
  statements re-parsed with another outcome, e.g. under a new ``parser_version``. Every
  ``queries`` row of those fingerprints is emitted again. Usage stats (first_seen, last_seen,
  occurrences), parse_ms and a new parser_version with an identical outcome do not count:
  the events would be the same.
- ``per_statement_day``: every (statement, source, day) group a changed row falls in (before
  or after the change) is re-emitted whole.

Why the change data feed rather than time travel plus anti-joins: an anti-join of the current
``queries`` against the watermark version reads and shuffles every query id of the history on
every run (the O(history) this replaces, minus the network); the change feed reads only the
commits since the watermark. The feed is a table property (``TableSpec.properties`` in
``schemas.py``): ``LineageTables.ensure`` sets it on new tables and adds it to existing ones
with ``ALTER TABLE ... SET TBLPROPERTIES`` (the extract job and the emission both call it), and
changes are recorded from that commit on. The first emission has no watermark and is full, so
it never needs changes from before the feed was enabled.

The emission falls back to a full one (logged as a warning, recorded in ``reason``) when the
change feed cannot serve the range: VACUUM removed files it needs, the Delta log of those
versions was cleaned up, or the feed was switched off. Also full: ``scope: all`` (``--all``),
no watermark yet, a watermark written under other event options, or a table whose version is
older than the watermark (re-created).

The extract job commits ``queries`` before ``parsed_statements``. An emission that runs in
between sees log rows whose statement has no parse yet; they cannot be emitted. The
``queries`` watermark is then held just before the first commit holding such a row, so the
next emission reads them again (after a full emission it is recorded as null: the next
emission is full).
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import reduce
from typing import Literal

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from lineage_udfs.core.errors import one_line
from lineage_udfs.emit.events import EventOptions
from lineage_udfs.emit.spool import EmitCounts, ReplaySummary
from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.storage.schemas import OPENLINEAGE_EMISSIONS, QUERIES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Append

logger = logging.getLogger(__name__)

EMISSIONS_TABLE = "openlineage_emissions"

STATEMENT_DAY_KEYS: tuple[str, ...] = (
    "fingerprint",
    "source_system",
    "object_kind",
    "object_name",
    "default_database",
    "default_schema",
)
"""Group keys of one ``per_statement_day`` run, besides the UTC day of ``start_time``."""

PARSE_COLUMNS: tuple[str, ...] = (
    "dialect",
    "statement_type",
    "masked_sql",
    "status",
    "error_kind",
    "error",
    "sources",
    "targets",
    "statements",
    "column_edges",
)
"""``parsed_statements`` columns the events are built from (``column_edges`` stands for the
``column_lineage`` rows of the fingerprint): a change in any of them is a changed parse."""

_UPSERTS = ("insert", "update_postimage")

ScopeKind = Literal["incremental", "full"]


@dataclass(frozen=True)
class Watermark:
    """The versions a previous, succeeded emission covered."""

    emission_id: str
    queries_version: int | None
    parsed_statements_version: int | None


@dataclass(frozen=True)
class EmissionScope:
    """What to emit, against which table versions.

    Attributes:
        kind: ``incremental`` (changes since ``previous``) or ``full``.
        reason: why the emission is full (None for incremental).
        queries_version: version ``queries`` is read at (pinned for the whole emission).
        parsed_statements_version: version ``parsed_statements`` is read at.
        previous: the watermark an incremental emission starts from.
        changed_queries: incremental: the latest image of every queries row inserted or
            updated since the watermark (queries columns plus ``_commit_version``).
        touched_groups: incremental ``per_statement_day``: group keys plus ``day`` of every
            changed row (pre- and post-images).
        reparsed: incremental: fingerprints whose parse changed, or that name a dataset whose
            other names (``symlinks`` facet) changed (one column).
        changed_count: rows in ``changed_queries``.
        reparsed_count: fingerprints in ``reparsed`` whose parse changed.
        realiased_count: fingerprints in ``reparsed`` that name a dataset whose other names
            changed (:mod:`lineage_udfs.spark.openlineage.symlinks`).
        queries_watermark: the ``queries`` version to record when the emission succeeds
            (held back when rows without a parse were seen; None: the next emission is full).
        held_reason: why ``queries_watermark`` is behind ``queries_version``.
    """

    kind: ScopeKind
    reason: str | None
    queries_version: int
    parsed_statements_version: int
    previous: Watermark | None = None
    changed_queries: DataFrame | None = None
    touched_groups: DataFrame | None = None
    reparsed: DataFrame | None = None
    changed_count: int = 0
    reparsed_count: int = 0
    realiased_count: int = 0
    queries_watermark: int | None = None
    held_reason: str | None = None

    @property
    def is_empty(self) -> bool:
        """Incremental with nothing changed: nothing to read or emit."""
        return self.kind == "incremental" and not (
            self.changed_count or self.reparsed_count or self.realiased_count
        )


def options_digest(options: EventOptions) -> str:
    """Digest of the options that shape events (the producer URI excluded: a release bump must
    not re-emit the history). A watermark only counts for the same digest."""
    values = {k: v for k, v in asdict(options).items() if k != "producer"}
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


def last_watermark(tables: LineageTables, digest: str) -> tuple[Watermark | None, str]:
    """The newest succeeded emission with ``digest``, or None and why there is none.

    When the newest emission's commit says it succeeded with ``digest`` (its userMetadata,
    ``record_emission``), that is the answer without reading the table."""
    for commit in tables.recent_commits(EMISSIONS_TABLE, 3):
        try:
            marker = json.loads(commit["userMetadata"] or "").get(_EMISSION_KEY)
        except (ValueError, AttributeError):
            continue  # a maintenance commit (compaction), or one without a marker
        if (
            isinstance(marker, dict)
            and marker.get("status") == "succeeded"
            and marker.get("options_digest") == digest
        ):
            return (
                Watermark(
                    marker["emission_id"],
                    marker["queries_version"],
                    marker["parsed_statements_version"],
                ),
                "",
            )
        break  # the newest emission is another: the table says which one counts
    emissions = tables.read(EMISSIONS_TABLE)
    row = (
        emissions.where((F.col("status") == "succeeded") & (F.col("options_digest") == digest))
        .orderBy(F.col("ended_at").desc(), F.col("emission_id").desc())
        .select("emission_id", "queries_version", "parsed_statements_version")
        .first()
    )
    if row is not None:
        return Watermark(row[0], row[1], row[2]), ""
    if emissions.where(F.col("status") == "succeeded").limit(1).count():
        return None, "event options changed since the last emission"
    return None, "no previous successful emission"


def plan_scope(tables: LineageTables, *, scope: str, emit_mode: str, digest: str) -> EmissionScope:
    """Decide full or incremental and, for incremental, materialize the changes.

    Args:
        tables: the lineage tables (``openlineage_emissions`` must exist).
        scope: ``incremental`` or ``all`` (settings, or ``--all``).
        emit_mode: ``per_run`` or ``per_statement_day``.
        digest: :func:`options_digest` of the current event options.
    """
    versions = (tables.latest_version("queries"), tables.latest_version("parsed_statements"))

    def full(reason: str) -> EmissionScope:
        return _full(tables, *versions, reason)

    if scope == "all":
        return full("scope all requested")
    previous, why = last_watermark(tables, digest)
    if previous is None:
        return full(why)
    if previous.queries_version is None or previous.parsed_statements_version is None:
        return full("the previous emission could not cover every queries row")
    if previous.queries_version > versions[0] or previous.parsed_statements_version > versions[1]:
        return full(
            f"table versions {versions} are older than the watermark "
            f"({previous.queries_version}, {previous.parsed_statements_version}): re-created?"
        )
    try:
        return _incremental(tables, previous, *versions, emit_mode=emit_mode)
    except (PySparkException, Py4JJavaError) as exc:
        message = one_line(exc)
        logger.warning(
            "OpenLineage: change data since queries v%s / parsed_statements v%s is not "
            "available (%s); falling back to a FULL emission",
            previous.queries_version,
            previous.parsed_statements_version,
            message,
        )
        return full(f"change data unavailable: {message}")


def _full(tables: LineageTables, vq: int, vp: int, reason: str) -> EmissionScope:
    queries = tables.read("queries", version=vq)
    parsed = tables.read("parsed_statements", version=vp).select("fingerprint")
    unparsed = queries.select("fingerprint").distinct().join(parsed, "fingerprint", "left_anti")
    held = None
    if unparsed.limit(1).count():
        held = "rows without a parse (extract job still writing?): the next emission is full again"
        logger.warning("OpenLineage: queries v%d has %s", vq, held)
    return EmissionScope(
        kind="full",
        reason=reason,
        queries_version=vq,
        parsed_statements_version=vp,
        queries_watermark=None if held else vq,
        held_reason=held,
    )


def _incremental(
    tables: LineageTables, previous: Watermark, vq: int, vp: int, *, emit_mode: str
) -> EmissionScope:
    wq, wp = previous.queries_version, previous.parsed_statements_version
    assert wq is not None and wp is not None  # checked by the caller
    changed = touched = reparsed = None
    n_changed = n_reparsed = 0
    queries_watermark, held = vq, None
    if vq > wq:
        raw = checkpointed(tables.changes("queries", wq + 1, vq))
        latest = Window.partitionBy("query_id").orderBy(
            F.col("_commit_version").desc(),
            F.when(F.col("_change_type") == "update_postimage", 0).otherwise(1),
        )
        changed = checkpointed(
            raw.withColumn("_n", F.row_number().over(latest))
            .where((F.col("_n") == 1) & F.col("_change_type").isin(*_UPSERTS))
            .select(*QUERIES.columns, "_commit_version")
        )
        n_changed = changed.count()
        if emit_mode == "per_statement_day":
            touched = checkpointed(
                raw.select(*STATEMENT_DAY_KEYS, F.to_date("start_time").alias("day")).distinct()
            )
        parsed_fps = tables.read("parsed_statements", version=vp).select("fingerprint")
        first_unparsed = (
            changed.join(parsed_fps, "fingerprint", "left_anti")
            .agg(F.min("_commit_version"), F.count(F.lit(1)))
            .first()
        )
        if first_unparsed is not None and first_unparsed[1]:
            queries_watermark = max(wq, int(first_unparsed[0]) - 1)
            held = (
                f"{first_unparsed[1]} changed rows without a parse yet (extract job still "
                f"writing?): queries watermark held at v{queries_watermark}"
            )
            logger.warning("OpenLineage: %s", held)
    if vp > wp:
        reparsed = checkpointed(_reparsed(tables.changes("parsed_statements", wp + 1, vp)))
        n_reparsed = reparsed.count()
    return EmissionScope(
        kind="incremental",
        reason=None,
        queries_version=vq,
        parsed_statements_version=vp,
        previous=previous,
        changed_queries=changed,
        touched_groups=touched,
        reparsed=reparsed,
        changed_count=n_changed,
        reparsed_count=n_reparsed,
        queries_watermark=queries_watermark,
        held_reason=held,
    )


def with_realiased(scope: EmissionScope, fingerprints: DataFrame) -> EmissionScope:
    """An incremental ``scope`` that also emits every run of ``fingerprints`` (statements that
    name a dataset whose other names changed); a full scope emits them already."""
    if scope.kind != "incremental":
        return scope
    realiased = checkpointed(fingerprints.select("fingerprint").distinct())
    count = realiased.count()
    if not count:
        return scope
    both = realiased if scope.reparsed is None else scope.reparsed.union(realiased).distinct()
    return replace(scope, reparsed=both, realiased_count=count)


def _reparsed(changes: DataFrame) -> DataFrame:
    """Fingerprints with an update whose pre- and post-image differ in :data:`PARSE_COLUMNS`."""
    columns = ["fingerprint", "_commit_version", *PARSE_COLUMNS]
    pre = changes.where(F.col("_change_type") == "update_preimage").select(*columns).alias("pre")
    post = changes.where(F.col("_change_type") == "update_postimage").select(*columns).alias("post")
    differs = reduce(
        lambda a, b: a | b,
        [~F.col(f"pre.{c}").eqNullSafe(F.col(f"post.{c}")) for c in PARSE_COLUMNS],
    )
    return (
        pre.join(post, ["fingerprint", "_commit_version"])
        .where(differs)
        .select("fingerprint")
        .distinct()
    )


def queries_in_scope(tables: LineageTables, scope: EmissionScope, emit_mode: str) -> DataFrame:
    """The ``queries`` rows to emit (declared columns): all of them for a full emission, else
    the changed rows (``per_run``) or the rows of every touched group (``per_statement_day``),
    plus every row of a re-parsed fingerprint."""
    columns = QUERIES.columns
    queries = tables.read("queries", version=scope.queries_version)
    if scope.kind == "full":
        return queries
    parts: list[DataFrame] = []
    if scope.changed_count and emit_mode == "per_statement_day":
        assert scope.touched_groups is not None
        parts.append(_rows_of_groups(queries, scope.touched_groups))
    elif scope.changed_count:
        assert scope.changed_queries is not None
        parts.append(scope.changed_queries.select(*columns))
    if scope.reparsed_count or scope.realiased_count:
        assert scope.reparsed is not None
        parts.append(queries.join(scope.reparsed, "fingerprint", "left_semi"))
    if not parts:
        return queries.limit(0)
    selected = reduce(DataFrame.unionByName, parts)
    return selected.dropDuplicates(["query_id"]) if len(parts) > 1 else selected


def _rows_of_groups(queries: DataFrame, groups: DataFrame) -> DataFrame:
    """Rows of ``queries`` in ``groups`` (null-safe keys), pruned to the groups' day range so
    Delta can skip files by their ``start_time`` statistics."""
    bounds = groups.agg(
        F.min("day"), F.max("day"), F.max(F.col("day").isNull().cast("int"))
    ).first()
    assert bounds is not None
    low, high, has_null_day = bounds
    in_range: Column = F.lit(False)
    if low is not None:
        in_range = (F.col("start_time") >= F.lit(low).cast("timestamp")) & (
            F.col("start_time") < F.date_add(F.lit(high), 1).cast("timestamp")
        )
    if has_null_day:
        in_range = in_range | F.col("start_time").isNull()
    candidates = queries.where(in_range).withColumn("_day", F.to_date("start_time"))
    keyed = groups.select(*[F.col(k).alias(f"_g_{k}") for k in (*STATEMENT_DAY_KEYS, "day")])
    condition = reduce(
        lambda a, b: a & b,
        [candidates[k].eqNullSafe(keyed[f"_g_{k}"]) for k in STATEMENT_DAY_KEYS]
        + [candidates["_day"].eqNullSafe(keyed["_g_day"])],
    )
    return candidates.join(keyed, condition, "left_semi").drop("_day")


def record_emission(
    tables: LineageTables,
    scope: EmissionScope,
    *,
    emit_mode: str,
    digest: str,
    counts: EmitCounts,
    replayed: ReplaySummary,
    started_at: datetime,
    ended_at: datetime,
) -> str:
    """Append this emission's row; it is the next watermark only if ``status`` is succeeded
    (no event rejected or dropped: every event was delivered or spooled for replay).

    Returns:
        The status written: ``succeeded`` or ``failed``.
    """
    status = "failed" if counts.failed or counts.overflowed else "succeeded"
    previous = scope.previous
    reason = "; ".join(r for r in (scope.reason, scope.held_reason) if r) or None
    values = {
        "emission_id": uuid.uuid4().hex,
        "started_at": started_at,
        "ended_at": ended_at,
        "scope": scope.kind,
        "reason": reason,
        "emit_mode": emit_mode,
        "options_digest": digest,
        "queries_from_version": previous.queries_version if previous else None,
        "queries_version": scope.queries_watermark,
        "parsed_statements_from_version": previous.parsed_statements_version if previous else None,
        "parsed_statements_version": scope.parsed_statements_version,
        "changed_queries": scope.changed_count,
        "reparsed_statements": scope.reparsed_count,
        "rows": counts.rows,
        "skipped": counts.skipped,
        "emitted": counts.emitted,
        "spooled": counts.spooled,
        "overflowed": counts.overflowed,
        "failed": counts.failed,
        "replayed": replayed.delivered,
        "status": status,
    }
    row = tuple(values[f] for f in OPENLINEAGE_EMISSIONS.columns)
    marker = {
        k: values[k]
        for k in (
            "emission_id",
            "status",
            "options_digest",
            "queries_version",
            "parsed_statements_version",
        )
    }
    tables.write(
        EMISSIONS_TABLE,
        Append(tables.spark.createDataFrame([row], OPENLINEAGE_EMISSIONS.schema)),
        metadata=json.dumps({_EMISSION_KEY: marker}, sort_keys=True),
    )
    return status


_EMISSION_KEY = "openlineage_emission"
"""Key of the userMetadata of an emission's commit: the watermark fields of its row."""
