"""Column tags over the column lineage: declarations in, propagation, the ``column_tags`` table.

Declarations (``core.tags``: the tags file, the source exports of ``tags.sources``, the name
rules) become one declared row per (column, tag), the strongest declaration's
(``core.tags.RULE_ORDER``; ``graph.tag_declarations``). Each tag then spreads from its
declared columns over the column edges (``graph.kernels.spread_tag``, in Spark tasks over the
broadcast arrays):

* DIRECT edges of subtype IDENTITY and TRANSFORMATION carry it; AGGREGATION carries it unless
  ``tags.carry_aggregation`` is off (``count(*)`` reads no column, so it has no edge at all);
* a DIRECT edge of subtype MASKED (a hashing or masking function: the parser's built-in list
  plus ``parser.masking_functions``) marks its target ``masked`` and stops there;
* INDIRECT edges (filters, joins, grouping …) never carry it;
* at most ``tags.max_depth`` hops; a column is expanded once, so cycles end.

Conflicts, per (column, tag), in this order: declared beats propagated beats masked (a column
with a carrying path keeps the tag even when another path masks it); among declarations the
``RULE_ORDER``; among propagated rows the fewest hops, then the smallest origin name, then the
smallest ``via`` name. So one row per (column, tag), never a silent choice.

Incremental like the graph stage: a column's rows depend only on the tag edges and the
declarations of its weakly connected component of tag edges (a tag travels nowhere else). So a
run recomputes only the components that hold an end of a tag edge that appeared, went or
changed its subtype since the last run (read back from ``column_lineage`` as of the version
that run recorded), or a column whose declaration appeared, went or changed; the stored rows of
those components are replaced in one MERGE (``storage.writes.Replace``: only the rows that
differ), every other stored row stays as it is, and a second commit (no row) records the
inputs; where nothing a tag travels changed, only that record is written. A tag removed upstream
is gone downstream after the next run: its declaration's column is in a recomputed component,
and so is every column it had reached.

The whole table is recomputed and overwritten in one commit that records the inputs when the
stored rows cannot be trusted to be the last run's: no recorded state (the first run, or a run
that died between its MERGE and its record), a commit to ``column_tags`` after the recorded one
other than a compaction, other settings (``carry_aggregation``, ``max_depth``), a
``column_lineage`` dropped and created again, or its recorded version no longer readable (history
vacuumed); and on a ``--full-refresh``. A run whose inputs are the recorded ones writes nothing.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.core.errors import one_line
from lineage_udfs.core.tags import (
    name_rule_declarations,
)
from lineage_udfs.settings import TagSettings
from lineage_udfs.spark.graph.arrays import _to_arrow, in_tasks
from lineage_udfs.spark.graph.frames import SEP, dense_ids
from lineage_udfs.spark.graph.kernels import Csr, Flags, spread_tag, weak_reach
from lineage_udfs.spark.graph.options import cut
from lineage_udfs.spark.graph.scope import changed_rows
from lineage_udfs.spark.graph.state import table_id
from lineage_udfs.spark.graph.stitch import names_digest, stitch_names, stitched
from lineage_udfs.spark.graph.tag_declarations import (
    column_refs,
    declared_rows,
    file_declarations,
    source_declarations,
)
from lineage_udfs.spark.storage.digest import frame_digest
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Overwrite, Record, Replace, replacement

logger = logging.getLogger(__name__)

TAGS_TABLE = "column_tags"
STATE_KEY = "column_tags_inputs"
"""Key of the state a tag run records with its commit: the ``column_lineage`` version it read."""
INPUT_ID = "column_lineage_id"
ALIASES_KEY = "aliases"
"""Key of the digest of the alias links that held (``graph.stitch``), when any did."""
"""Key of the recorded ``column_lineage`` table id (``graph.state.table_id``)."""
MAINTENANCE = ("OPTIMIZE",)
"""Operations of commits that may follow a tag run's without changing a row (compaction)."""
CARRY = ("IDENTITY", "TRANSFORMATION")
MASKED = "MASKED"


@dataclass
class TagSummary:
    """What one tag run did."""

    tags: int = 0
    declared: int = 0
    propagated: int = 0
    masked: int = 0
    unknown: int = 0
    """Declared columns no column edge names: their tag goes nowhere (a typo, or a column no
    logged statement reads yet); a WARNING names the first few."""
    unchanged: bool = False
    """No row written: the inputs are the last run's (nothing written at all), or no tag edge
    or declared row changed (only the new inputs recorded)."""
    full_refresh: bool = False
    """The whole table was recomputed and overwritten (else only the changed components)."""
    columns_recomputed: int = 0
    """Columns of the components recomputed (every column of the tag edges and declarations on a
    full recompute)."""
    rows_written: int = 0
    """Rows the commit inserted plus those it deleted (a full recompute: all rows written)."""
    seconds: float = 0.0
    step_seconds: dict[str, float] = field(default_factory=dict)


# --- edges and propagation ------------------------------------------------------------------


def tag_edges(column_lineage: DataFrame, carry_aggregation: bool) -> DataFrame:
    """``(src, dst, kind, subtype)``: the DIRECT column edges that carry a tag (``carry``,
    the weakest subtype among the statements that make the edge) or mask it (``mask``; an
    edge both carries and masks when different statements do each)."""
    carrying = [*CARRY, *(["AGGREGATION"] if carry_aggregation else [])]
    sub = F.col("transformation_subtype")
    kind = F.when(sub.isin(*carrying), "carry").when(sub == MASKED, "mask")
    rank = F.array_position(F.array(*[F.lit(s) for s in [*carrying, MASKED]]), sub)
    edges = column_lineage.where(
        (F.col("transformation_type") == "DIRECT")
        & F.col("source_column").isNotNull()
        & F.col("target_column").isNotNull()
        & F.col("source_table").isNotNull()
        & F.col("target_table").isNotNull()
    ).select(
        F.concat_ws(SEP, "source_table", "source_column").alias("src"),
        F.concat_ws(SEP, "target_table", "target_column").alias("dst"),
        kind.alias("kind"),
        rank.alias("rank"),
        sub.alias("subtype"),
    )
    return (
        edges.where(F.col("kind").isNotNull())
        .groupBy("src", "dst", "kind")
        .agg(F.min(F.struct("rank", "subtype")).getField("subtype").alias("subtype"))
    )


@dataclass(frozen=True, slots=True)
class _TagGraph:
    carry: Csr
    mask: Csr
    seeds: list[np.ndarray]
    max_depth: int


def _spread_rows(graph: _TagGraph, tags: np.ndarray) -> pa.RecordBatch:
    parts = []
    for t in tags.tolist():
        s = spread_tag(graph.carry, graph.mask, graph.seeds[t], graph.max_depth)
        parts.append(
            pa.RecordBatch.from_arrays(
                [
                    pa.array(np.full(s.node.size, t, dtype=np.int32)),
                    pa.array(s.node),
                    pa.array(s.depth.astype(np.int32)),
                    pa.array(s.origin),
                    pa.array(s.via, mask=s.via < 0),
                    pa.array(s.masked),
                ],
                names=["t", "node", "depth", "origin", "via", "masked"],
            )
        )
    if not parts:
        return pa.RecordBatch.from_pylist([], schema=pa.schema(_SPREAD_FIELDS))
    return pa.Table.from_batches(parts).combine_chunks().to_batches()[0]


_SPREAD_FIELDS = [
    ("t", pa.int32()),
    ("node", pa.int64()),
    ("depth", pa.int32()),
    ("origin", pa.int64()),
    ("via", pa.int64()),
    ("masked", pa.bool_()),
]
SPREAD_SCHEMA = "t int, node long, depth int, origin long, via long, masked boolean"


@dataclass(frozen=True, slots=True)
class Propagated:
    """What ``propagate`` computed.

    Attributes:
        rows: the ``column_tags`` rows (of the recomputed components only, when ``touched``).
        ids: ``(name, id)``: every column of the edges and declarations (``dense_ids``).
        in_scope: per id, whether its component was recomputed (None: all were).
    """

    rows: DataFrame
    ids: DataFrame
    in_scope: Flags | None


def propagate(
    edges: DataFrame, declared: DataFrame, max_depth: int, touched: DataFrame | None = None
) -> Propagated:
    """The ``column_tags`` rows of the ``declared`` rows (``declared_rows``) spread over the
    ``edges`` (``tag_edges``, materialized); with ``touched`` (``(ref)``), only those of the
    weakly connected components of tag edges that hold a touched column."""
    spark = edges.sparkSession
    ids, n = dense_ids(
        edges.select(F.col("src").alias("name"))
        .union(edges.select("dst"))
        .union(declared.select("ref"))
    )

    # both kinds in one pass over the edges
    pairs = _to_arrow(
        edges.join(ids.select(F.col("name").alias("src"), F.col("id").alias("s")), "src")
        .join(ids.select(F.col("name").alias("dst"), F.col("id").alias("d")), "dst")
        .select("s", "d", (F.col("kind") == "mask").alias("m")),
        n // 4,
    )
    masking = pairs["m"].to_numpy(zero_copy_only=False)
    src, dst = pairs["s"].to_numpy(), pairs["d"].to_numpy()
    names = sorted(r["tag"] for r in declared.select("tag").distinct().collect())
    tag_ids = spark.createDataFrame([(i, t) for i, t in enumerate(names)], "t int, tag string")
    seeded = (
        declared.join(F.broadcast(tag_ids), "tag")
        .join(ids.withColumnRenamed("name", "ref"), "ref")
        .select("t", "id")
        .toArrow()
    )
    t_col = seeded["t"].to_numpy()
    id_col = seeded["id"].to_numpy()
    in_scope = None
    if touched is not None:
        found = touched.distinct().withColumnRenamed("ref", "name").join(ids, "name")
        both = Csr.of(np.concatenate([src, dst]), np.concatenate([dst, src]), n)
        in_scope = weak_reach(both, found.select("id").toArrow()["id"].to_numpy())
        keep = in_scope[id_col]
        t_col, id_col = t_col[keep], id_col[keep]
    graph = _TagGraph(
        carry=Csr.of(src[~masking], dst[~masking], n),
        mask=Csr.of(src[masking], dst[masking], n),
        seeds=[id_col[t_col == t] for t in range(len(names))],
        max_depth=max_depth,
    )
    # the tagged columns are few next to the graph: materialized, then broadcast into each
    # join with the (large) ids and edges, which are only scanned
    spread = cut(
        in_tasks(
            spark, _spread_rows, graph, np.unique(t_col).astype(np.int64), 1, SPREAD_SCHEMA
        ).join(F.broadcast(tag_ids), "t")
    )

    def named(col: str, alias: str) -> DataFrame:
        parts = F.split(F.col("name"), SEP)
        return ids.select(
            F.col("id").alias(col),
            parts.getItem(0).alias(f"{alias}_table"),
            F.get(parts, 1).alias(f"{alias}_column"),
            F.col("name").alias(f"{alias}_ref"),
        )

    via_subtype = edges.select(
        F.col("src").alias("via_ref"),
        F.col("dst").alias("node_ref"),
        F.col("kind"),
        "subtype",
    )
    rows = named("node", "node").join(F.broadcast(spread), "node")
    rows = named("origin", "origin").join(F.broadcast(rows), "origin")
    rows = named("via", "via").join(F.broadcast(rows), "via", "right")
    rows = declared.select(
        F.col("ref").alias("origin_ref"), "tag", "rule", F.col("value").alias("tag_value")
    ).join(F.broadcast(rows), ["origin_ref", "tag"])
    rows = via_subtype.join(
        F.broadcast(rows.withColumn("kind", F.when(F.col("masked"), "mask").otherwise("carry"))),
        ["via_ref", "node_ref", "kind"],
        "right",
    )
    status = (
        F.when(F.col("depth") == 0, "declared")
        .when(F.col("masked"), "masked")
        .otherwise("propagated")
    )
    rows = rows.select(
        F.col("node_table").alias("table_name"),
        F.col("node_column").alias("column_name"),
        "tag",
        "tag_value",
        status.alias("status"),
        "depth",
        "origin_table",
        "origin_column",
        "via_table",
        "via_column",
        "subtype",
        "rule",
    ).withColumnRenamed("subtype", "via_subtype")
    return Propagated(rows, ids, in_scope)


# --- the stage ------------------------------------------------------------------------------


def _settings_key(settings: TagSettings) -> str:
    return json.dumps(
        {"carry_aggregation": settings.carry_aggregation, "max_depth": settings.max_depth},
        sort_keys=True,
    )


def _stored_declarations(tables: LineageTables) -> DataFrame:
    """The ``declared_rows`` the stored rows were computed from: every declared row is stored
    (a declared column keeps its tag: declared beats propagated)."""
    return (
        tables.read(TAGS_TABLE)
        .where(F.col("status") == "declared")
        .select(
            F.concat_ws(SEP, "table_name", "column_name").alias("ref"),
            "tag",
            "rule",
            F.col("tag_value").alias("value"),
        )
    )


def distrust(
    tables: LineageTables,
    recorded: tuple[dict[str, Any], dict[str, Any]] | None,
    state: dict[str, Any],
) -> str | None:
    """Why a run with the inputs ``state`` cannot be incremental against the stored rows: they
    are not known to be those of the run that recorded ``recorded`` (its state and commit; None:
    nothing recorded) with the same settings and ``column_lineage``; None when they are."""
    if recorded is None:
        return "no recorded state"
    stored, commit = recorded
    later = [
        c
        for c in tables.recent_commits(TAGS_TABLE, 5)
        if int(c["version"]) > int(commit["version"])
    ]
    if stored.get("settings") != state["settings"]:
        return "the tag settings changed"
    if stored.get(ALIASES_KEY, "") != state.get(ALIASES_KEY, ""):
        return "the dataset aliases that hold changed"
    if INPUT_ID not in stored:
        return "the recorded state names no column_lineage table id (an earlier version's run)"
    if stored[INPUT_ID] != state[INPUT_ID]:
        return "column_lineage was created anew since the last tag run"
    if any(c["operation"] not in MAINTENANCE for c in later):
        return "column_tags was written after the last tag run"
    return None


def touched_columns(
    tables: LineageTables,
    stored: dict[str, Any],
    state: dict[str, Any],
    edges: DataFrame,
    declared: DataFrame,
    carry_aggregation: bool,
    names: dict[str, str] | None = None,
) -> DataFrame | None:
    """``(ref)``, materialized: the ends of the tag edges that appeared, went or changed subtype
    since the run that recorded ``stored`` (trusted: ``distrust``), and the columns whose
    declared row changed; None (with one INFO line saying why) when the edges that run read
    cannot be read back and the whole table must be recomputed."""
    spark = edges.sparkSession
    parts = [spark.createDataFrame([], "ref string")]
    if stored[STATE_KEY] != state[STATE_KEY]:
        version = int(stored[STATE_KEY])
        try:
            stored_edges = tables.read("column_lineage", version=version)
            before = tag_edges(_stitched(stored_edges, names or {}), carry_aggregation)
            changed = changed_rows(before, edges)
        except (PySparkException, Py4JJavaError) as exc:
            logger.info(
                "tags: full recompute: the column edges of the last tag run (column_lineage"
                " version %d) cannot be read back: %s",
                version,
                one_line(exc),
            )
            return None
        parts += [changed.select(F.col("src").alias("ref")), changed.select(F.col("dst"))]
    if stored.get("declared") != state["declared"]:
        now = declared.select("ref", "tag", "rule", "value")
        parts.append(changed_rows(_stored_declarations(tables), now).select("ref"))
    touched = parts[0]
    for part in parts[1:]:
        touched = touched.union(part)
    return cut(touched.distinct())


def _replaced_keys(tables: LineageTables, ids: DataFrame, in_scope: Flags) -> DataFrame:
    """``(table_name, column_name)``: the stored columns whose rows an incremental run replaces:
    those in a recomputed component, and those no tag edge or declaration names any more (their
    edges or declarations went, so they are touched). The stored tagged columns are few next to
    the graph: collected to the driver."""
    stored = tables.read(TAGS_TABLE).select("table_name", "column_name").distinct()
    found = (
        stored.withColumn("name", F.concat_ws(SEP, "table_name", "column_name"))
        .join(ids, "name", "left")
        .select("table_name", "column_name", "id")
        .toArrow()
    )
    at = found["id"].to_numpy(zero_copy_only=False)
    gone = np.isnan(at) if at.dtype.kind == "f" else np.zeros(at.size, dtype=bool)
    keep = gone.copy()
    keep[~gone] = in_scope[at[~gone].astype(np.int64)]
    kept = found.filter(pa.array(keep)).select(["table_name", "column_name"])
    return tables.spark.createDataFrame(kept.to_pylist(), "table_name string, column_name string")


def run_tag_stage(
    tables: LineageTables,
    settings: TagSettings,
    *,
    full_refresh: bool = False,
    alias_min_confidence: float = 0.9,
) -> TagSummary:
    """Bring ``column_tags`` up to date with the declarations and ``column_lineage``: the
    components a change touched (``touched_columns``), or all of them where the stored rows
    cannot be trusted or ``full_refresh``; nothing is written when neither the inputs nor the
    settings changed since the last run."""
    started = time.perf_counter()
    spark = tables.spark
    tables.ensure_all((TAGS_TABLE,))
    summary = TagSummary()
    clock = time.perf_counter()
    declarations = file_declarations(spark, settings.file)
    declarations += name_rule_declarations(settings.name_rules)
    exports = [source_declarations(spark, s) for s in settings.sources]
    # over graph nodes, as the graph stage: an edge stored under an alias (a path) is its node's
    names = stitch_names(tables, alias_min_confidence)
    column_lineage = _stitched(tables.read("column_lineage"), names)
    edges = tag_edges(column_lineage, settings.carry_aggregation).cache()
    refs = column_refs(column_lineage)
    declared = declared_rows(spark, refs, declarations, exports).cache()
    state = {
        STATE_KEY: tables.latest_version("column_lineage"),
        INPUT_ID: table_id(tables, "column_lineage"),
        "declared": frame_digest(declared, ("ref", "tag", "rule", "value")),
        "settings": _settings_key(settings),
    }
    if names:
        state[ALIASES_KEY] = names_digest(names)
    summary.step_seconds["declarations"] = time.perf_counter() - clock
    recorded = tables.recorded_commit(TAGS_TABLE, STATE_KEY)
    why = "a full refresh was asked for" if full_refresh else distrust(tables, recorded, state)
    if why is None and recorded is not None:
        stored = recorded[0]
        if {k: stored.get(k) for k in state} == state:
            return _unchanged(summary, started, edges, declared, "declarations and column edges")
    clock = time.perf_counter()
    touched = None
    if why is not None:
        logger.info("tags: full recompute: %s", why)
    elif recorded is not None:
        touched = touched_columns(
            tables, recorded[0], state, edges, declared, settings.carry_aggregation, names
        )
    summary.step_seconds["changes"] = time.perf_counter() - clock
    metadata = json.dumps(state, sort_keys=True)
    if touched is not None and touched.isEmpty():
        # the stored rows are the new inputs' too: recorded as such, so the next run compares
        # with these inputs (and not with a version that may be vacuumed by then)
        tables.write(TAGS_TABLE, Record(), metadata=metadata)
        return _unchanged(summary, started, edges, declared, "tag edges and declared rows")
    clock = time.perf_counter()
    _warn_unknown(declared, refs, summary)
    if declared.isEmpty() or touched is None:
        summary.full_refresh = True
        if declared.isEmpty():
            rows = spark.createDataFrame([], TABLES[TAGS_TABLE].schema)
        else:
            done = propagate(edges, declared, settings.max_depth)
            rows, summary.columns_recomputed = done.rows, done.ids.count()
        written = tables.write(TAGS_TABLE, Overwrite(rows), metadata=metadata)
        summary.rows_written = written.get("numOutputRows", 0)
    else:
        done = propagate(edges, declared, settings.max_depth, touched)
        assert done.in_scope is not None  # for mypy: touched was given
        summary.columns_recomputed = int(done.in_scope.sum())
        replaced = _replaced_keys(tables, done.ids, done.in_scope)
        written = tables.write(
            TAGS_TABLE, Replace(replacement(tables, TAGS_TABLE, done.rows, replaced))
        )
        summary.rows_written = written.get("numTargetRowsInserted", 0) + written.get(
            "numTargetRowsDeleted", 0
        )
        tables.write(TAGS_TABLE, Record(), metadata=metadata)
    tables.compact(TAGS_TABLE)
    summary.step_seconds["propagate+write"] = time.perf_counter() - clock
    by_status = (
        tables.read(TAGS_TABLE)
        .groupBy("status")
        .agg(F.count(F.lit(1)).alias("count"), F.collect_set("tag").alias("tags"))
        .collect()
    )  # one job: a handful of statuses, each with its (few) tag names
    counts = {r["status"]: r["count"] for r in by_status}
    summary.tags = len({tag for r in by_status for tag in r["tags"]})
    summary.declared = counts.get("declared", 0)
    summary.propagated = counts.get("propagated", 0)
    summary.masked = counts.get("masked", 0)
    edges.unpersist()
    declared.unpersist()
    summary.seconds = time.perf_counter() - started
    logger.info(
        "tags: %d tags on %d declared, %d propagated, %d masked columns; %d columns recomputed"
        "%s, %d rows written in %.1fs",
        summary.tags,
        summary.declared,
        summary.propagated,
        summary.masked,
        summary.columns_recomputed,
        " (full recompute)" if summary.full_refresh else "",
        summary.rows_written,
        summary.seconds,
    )
    return summary


def _unchanged(
    summary: TagSummary, started: float, edges: DataFrame, declared: DataFrame, what: str
) -> TagSummary:
    summary.unchanged = True
    summary.seconds = time.perf_counter() - started
    logger.info("tags: %s unchanged, nothing written", what)
    edges.unpersist()
    declared.unpersist()
    return summary


def _warn_unknown(declared: DataFrame, refs: DataFrame, summary: TagSummary) -> None:
    """Count (and name the first few of) the declared columns no column edge names."""
    unknown = declared.select("ref").distinct().join(refs, "ref", "left_anti")
    summary.unknown = unknown.count()
    if summary.unknown:
        first = sorted(r["ref"].replace(SEP, ".") for r in unknown.limit(5).collect())
        logger.warning(
            "tags: %d declared column(s) named by no column edge, their tags go nowhere: %s%s",
            summary.unknown,
            ", ".join(first),
            ", ..." if summary.unknown > len(first) else "",
        )


def _stitched(column_lineage: DataFrame, names: dict[str, str]) -> DataFrame:
    return stitched(column_lineage, names, "source_table", "target_table")
