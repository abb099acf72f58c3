"""The identity step of an extraction: the evidence in the lineage tables (and the settings'
table locations and steward file) → ``dataset_aliases`` (``lineage_udfs.core.identity``).

Every run derives the whole set again from what is stored, so a link whose evidence arrives
late (an event with a symlinks facet, a new locations export, a steward's decision) is there
after the next run, and the graph stage merges the stored history through it without any
statement being parsed again. The evidence is one row per distinct name or (name, session
default) pair, collected to the driver for the pure rules: its size is the number of datasets,
not of log rows.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lineage_udfs.core import identity
from lineage_udfs.core.errors import ConfigError, InputError, one_line
from lineage_udfs.settings import IdentitySettings
from lineage_udfs.spark.extract.context import RunContext
from lineage_udfs.spark.storage.schemas import DATASET_ALIASES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

logger = logging.getLogger(__name__)


def _names(tables: LineageTables) -> list[str]:
    edges = tables.read("table_lineage")
    nodes = edges.select(F.col("source_table").alias("n")).union(edges.select("target_table"))
    named = tables.read("openlineage_events").select(F.explode("datasets").alias("n"))
    return sorted(r.n for r in nodes.union(named).distinct().collect() if r.n)


def _symlinks(tables: LineageTables) -> list[tuple[str, str, str]]:
    links = tables.read("openlineage_events").select(F.explode("symlinks").alias("s"))
    rows = links.select("s.node", "s.alias", "s.type").distinct().collect()
    return sorted((r.node, r.alias, r.type or "") for r in rows)


def _sessions(tables: LineageTables) -> list[tuple[str | None, str | None]]:
    """The distinct session defaults (default_database, default_schema) of the query rows."""
    rows = (
        tables.read("queries")
        .where(F.col("default_database").isNotNull() | F.col("default_schema").isNotNull())
        .select(F.lower("default_database").alias("d"), F.lower("default_schema").alias("s"))
        .distinct()
        .collect()
    )
    return sorted(((r.d, r.s) for r in rows), key=str)


def _read_export(ctx: RunContext, path: str) -> DataFrame:
    reader = ctx.spark.read
    suffix = Path(path).suffix.lower()
    try:
        if suffix in (".json", ".jsonl"):
            return reader.json(path)
        if suffix == ".csv":
            return reader.option("header", "true").csv(path)
        if suffix == ".parquet":
            return reader.parquet(path)
        return reader.format("delta").load(path)
    except Exception as exc:
        raise InputError(
            f"cannot read identity.table_locations at {path}: {one_line(exc, with_type=True)}"
        ) from exc


def _locations(ctx: RunContext, settings: IdentitySettings) -> list[tuple[str, str]]:
    if settings.table_locations is None:
        return []
    export = _read_export(ctx, settings.table_locations)
    lowered = {c.lower(): c for c in export.columns}
    missing = [c for c in ("name", "location") if c not in lowered]
    if missing:
        raise InputError(
            f"identity.table_locations ({settings.table_locations}) is not a DESCRIBE DETAIL"
            f" export: missing column(s) {missing}; available columns: {export.columns}"
        )
    rows = export.select(F.col(lowered["name"]), F.col(lowered["location"])).collect()
    return sorted((str(r[0]), str(r[1])) for r in rows if r[0] and r[1])


def steward_decisions(path: str | None) -> list[identity.Decision]:
    """The steward file's decisions (none without a file).

    Raises:
        ConfigError: the file is missing, not YAML, not a list, or a line is malformed.
    """
    if path is None:
        return []
    try:
        loaded: Any = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"identity.steward_file {path}: {one_line(exc)}") from exc
    if loaded is None:
        return []
    if not isinstance(loaded, list) or not all(isinstance(x, dict) for x in loaded):
        raise ConfigError(f"identity.steward_file {path}: a YAML list of mappings is expected")
    try:
        return identity.decisions_from(loaded)
    except ValueError as exc:
        raise ConfigError(f"identity.steward_file {path}: {exc}") from exc


def derive_links(ctx: RunContext, settings: IdentitySettings) -> list[identity.AliasLink]:
    """Every link the evidence gives, with the steward's decisions applied."""
    tables = ctx.tables
    names = _names(tables)
    links = [
        *identity.symlink_links(_symlinks(tables)),
        *identity.location_links(_locations(ctx, settings)),
        *identity.storage_links(names),
        *identity.case_links(names),
    ]
    # the table names the links above give are names of the graph too
    named = sorted({*names, *(x.canonical for x in links)})
    links += identity.default_schema_links(named, _sessions(tables))
    unique = {(x.alias, x.canonical, x.evidence): x for x in links}
    return identity.apply_decisions(unique.values(), steward_decisions(settings.steward_file))


def write_aliases(ctx: RunContext, settings: IdentitySettings) -> int:
    """Replace ``dataset_aliases`` by the links derived now; returns how many there are."""
    links = derive_links(ctx, settings)
    rows = [
        (x.alias, x.canonical, x.evidence, x.detail, float(x.confidence), x.status) for x in links
    ]
    frame = ctx.spark.createDataFrame(
        rows,
        "alias string, canonical string, evidence string, detail string,"
        " confidence double, status string",
    ).withColumn("first_seen", F.lit(ctx.summary.started_at).cast("timestamp"))
    ctx.tables.write(
        "dataset_aliases",
        Upsert(frame.select(*DATASET_ALIASES.columns), delete_missing="true"),
    )
    by_evidence: dict[str, int] = {}
    for x in links:
        by_evidence[x.evidence] = by_evidence.get(x.evidence, 0) + 1
    logger.info("dataset aliases: %d links %s", len(links), dict(sorted(by_evidence.items())))
    return len(links)
