"""Whether a run has anything to do: the marker each run records with its ``lineage_runs``
commit, and the checks that read it.

A rerun whose input files and settings are those of the last finished run, with no lineage
table written since, reads nothing (``unchanged_since``); a batch whose every row is stored
already needs no MERGE (``already_stored``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.redaction import settings_json
from lineage_udfs.spark.extract.batch import Batch, fact_table_versions
from lineage_udfs.spark.extract.context import RunContext
from lineage_udfs.spark.extract.edges import dict_to_map
from lineage_udfs.spark.extract.merges import load_quarantine
from lineage_udfs.spark.storage.facts import query_row_preferred
from lineage_udfs.spark.storage.schemas import QUERIES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Append

logger = logging.getLogger(__name__)


_RUN_KEY, _VERSIONS_KEY = "lineage_run", "fact_table_versions"
_LISTING_KEY, _PARSER_KEY = "input_listing", "parser_version"
_STATUS_KEY, _SETTINGS_KEY = "status", "row_settings"
"""Keys of the userMetadata of a run's ``lineage_runs`` commit: the run, the versions of the
fact tables when it ended, its input listing (None: not told), its parser version, its status
and the digest of its settings (``_settings_digest``)."""


def _last_recorded_run(tables: LineageTables) -> dict[str, Any] | None:
    """The userMetadata of the newest run recorded in ``lineage_runs`` (None: none, or
    recorded without one)."""
    for commit in tables.recent_commits("lineage_runs", 5):
        if commit["operation"] in ("OPTIMIZE", "SET TBLPROPERTIES"):
            continue
        try:
            marker = json.loads(commit["userMetadata"] or "")
        except ValueError:
            return None
        return marker if isinstance(marker, dict) and _RUN_KEY in marker else None
    return None


def already_stored(ctx: RunContext, rows: DataFrame, batch: Batch) -> bool:
    """Whether the write stage would change nothing, checked at a fraction of its cost.

    True when nothing was parsed anew, the newest run recorded in ``lineage_runs`` succeeded
    under the same settings (``NOT_ROW_SETTINGS`` aside: the sources read, the session, the
    later stages), no fact table was written since it ended (the versions it recorded are the
    current ones), every query row of the batch is stored with equal values (or its query id's
    stored row comes first in ``facts.query_row_order``, so the MERGE keeps it) and every load
    failure is quarantined.

    Every successful run leaves the derived rows (statement statistics, edges, parse
    quarantine) of every fingerprint it touched consistent with the facts, and the facts of a
    fingerprint change only in a run that touches it. So when no fact changed since a
    successful run, the derived rows of every stored fingerprint are what the facts give, and
    MERGEing a batch whose rows are all stored (the same export again, or a part of it
    delivered through another source) would change no row. Crash recovery holds: a run that
    died between two MERGEs either wrote a fact table (the versions differ) or recorded a
    failed run; both make the next run MERGE everything. A run that changes nothing records
    nothing, so a rerun of a rerun still finds the run that wrote the tables.
    """
    if ctx.summary.parsed_statements or _finished_run(ctx, fact_table_versions(ctx)) is None:
        return False
    stored = ctx.tables.read("queries").alias("s")
    batch_rows = batch.relevant.select(*QUERIES.columns).alias("b")
    # a batch row changes nothing where its query id's stored row equals it or comes first
    # (``merges.merge_queries``)
    kept = F.col("b.query_id").eqNullSafe(F.col("s.query_id")) & ~query_row_preferred("b", "s")
    if not batch_rows.join(stored, kept, "left_anti").isEmpty():
        return False
    quarantined = ctx.tables.read("quarantine").select("quarantine_id")
    load = load_quarantine(rows).select("quarantine_id")
    return load.join(quarantined, "quarantine_id", "left_anti").isEmpty()


def _finished_run(ctx: RunContext, versions: dict[str, int]) -> dict[str, Any] | None:
    """The marker of the newest run recorded in ``lineage_runs`` when that run succeeded under
    the same settings (``NOT_ROW_SETTINGS`` aside) and no fact table was written since it
    ended (``versions``, the current ones, are those it recorded); else None."""
    recorded = _last_recorded_run(ctx.tables)
    if recorded is None or recorded.get(_VERSIONS_KEY) != versions:
        return None
    settings = _settings_digest(settings_json(ctx.settings))
    if _SETTINGS_KEY in recorded:  # the marker says it all: no table read
        finished = recorded.get(_STATUS_KEY) == "succeeded" and recorded[_SETTINGS_KEY] == settings
        return recorded if finished else None
    run = (
        ctx.tables.read("lineage_runs")
        .where(F.col("run_id") == recorded[_RUN_KEY])
        .select("status", "config_json")
        .first()
    )
    if (
        run is None
        or run["status"] != "succeeded"
        or _settings_digest(run["config_json"]) != settings
    ):
        return None
    return recorded


def unchanged_since(ctx: RunContext, versions: dict[str, int]) -> str | None:
    """The run whose input this run's is, unchanged, or None.

    A run's input is unchanged when the newest recorded run finished as ``_finished_run``
    requires, under the same parser version (its catalog's digest included), and its input
    listing (``preflight.input_listing``: the sources' settings and every file's path, size
    and modification time) is this run's. Reading it again would find every row stored (see
    ``already_stored``), so the run reads nothing. Checked before the read stage: a few
    Delta log reads instead of reading, preparing and comparing the log.
    """
    listing = ctx.summary.input_listing
    if listing is None:
        return None
    recorded = _finished_run(ctx, versions)
    if (
        recorded is None
        or recorded.get(_LISTING_KEY) != listing
        or recorded.get(_PARSER_KEY) != ctx.summary.parser_version
    ):
        return None
    return str(recorded[_RUN_KEY])


NOT_ROW_SETTINGS = (
    "sources",
    "sink",
    "spark",
    "execution",
    "logging",
    "graph",
    "tags",
    "openlineage",
)
"""Settings sections that do not change what the write stage stores for given facts: which
files a run reads (its rows are compared themselves), where the tables are (the recorded run
is read from these tables: a copied warehouse holds its own history), the Spark session, how
the job sizes and keeps its intermediate data, logging, and the stages after the write (the
graph stage with its tag propagation, the emission)."""
ROW_ACTIVITY_SETTINGS = ("keep_reads",)
"""The keys of the ``activity`` section the write stage reads (which reads the prepared log
keeps); the rest belong to the activity stage, which runs after it."""


def _settings_digest(config_json: str | None) -> str | None:
    """Digest of a run's recorded settings without ``NOT_ROW_SETTINGS`` and with only the
    ``ROW_ACTIVITY_SETTINGS`` of the ``activity`` section."""
    if config_json is None:
        return None
    config = json.loads(config_json)
    for section in NOT_ROW_SETTINGS:
        config.pop(section, None)
    activity = config.get("activity")
    if isinstance(activity, dict):
        config["activity"] = {k: v for k, v in activity.items() if k in ROW_ACTIVITY_SETTINGS}
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_run(ctx: RunContext, fact_versions: dict[str, int] | None = None) -> None:
    """Append this run's row to lineage_runs (best effort when the run itself failed), its
    commit marked with the fact tables' versions (``fact_versions``, read when None)."""
    tables, summary = ctx.tables, ctx.summary
    try:
        tables.ensure("lineage_runs")
        row = ctx.spark.range(1).select(
            F.lit(summary.run_id).alias("run_id"),
            F.lit(summary.started_at).cast("timestamp").alias("started_at"),
            F.current_timestamp().alias("ended_at"),
            F.lit(settings_json(ctx.settings)).alias("config_json"),
            F.lit(summary.input_fingerprint).alias("input_fingerprint"),
            F.lit(summary.rows_read).cast("long").alias("rows_read"),
            F.lit(summary.rows_not_relevant).cast("long").alias("rows_not_relevant"),
            F.lit(summary.rows_relevant).cast("long").alias("rows_relevant"),
            F.lit(summary.distinct_statements).cast("long").alias("distinct_statements"),
            F.lit(summary.parsed_statements).cast("long").alias("parsed_statements"),
            dict_to_map(summary.by_status).cast("map<string,bigint>").alias("by_status"),
            dict_to_map(summary.by_parser).cast("map<string,bigint>").alias("by_parser"),
            F.lit(summary.table_edges_written).cast("long").alias("table_edges"),
            F.lit(summary.column_edges_written).cast("long").alias("column_edges"),
            F.lit(summary.quarantined_new).cast("long").alias("quarantined"),
            dict_to_map(summary.stage_seconds).cast("map<string,double>").alias("stage_seconds"),
            F.lit(summary.status).alias("status"),
        )
        versions = fact_versions if fact_versions is not None else fact_table_versions(ctx)
        marker = {
            _RUN_KEY: summary.run_id,
            _VERSIONS_KEY: versions,
            _LISTING_KEY: summary.input_listing,
            _PARSER_KEY: summary.parser_version,
            _STATUS_KEY: summary.status,
            _SETTINGS_KEY: _settings_digest(settings_json(ctx.settings)),
        }
        tables.write("lineage_runs", Append(row), metadata=json.dumps(marker, sort_keys=True))
    except Exception:
        if summary.status == "succeeded":
            raise
        logger.exception("could not record the failed run %s in lineage_runs", summary.run_id)
