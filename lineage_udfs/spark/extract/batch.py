"""What one extraction run carries between its stages: the inputs besides the settings, the
batch of rows and statements, and the fact tables it writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from lineage_udfs.spark.extract.catalog import Catalog
from lineage_udfs.spark.extract.context import RunContext
from lineage_udfs.spark.extract.watermark import IncrementalRead


@dataclass
class Inputs:
    """What a run reads besides the settings: the sources' credentials (JDBC and Kafka
    passwords, Marquez tokens, by source name), the incremental sources' watermarks, and the
    catalog (after the setup stage)."""

    passwords: dict[str, str]
    incremental: IncrementalRead
    catalog: Catalog | None = field(default=None)


FACT_TABLES: tuple[str, ...] = (
    "queries",
    "parsed_statements",
    "table_lineage",
    "column_lineage",
    "quarantine",
    "openlineage_events",
)
"""The tables an extraction run writes (besides its own lineage_runs row)."""


def fact_table_versions(ctx: RunContext) -> dict[str, int]:
    """The fact tables' current versions."""
    return {table: ctx.tables.latest_version(table) for table in FACT_TABLES}


@dataclass(frozen=True)
class Batch:
    """The run's relevant rows (one per query id), its distinct statements with their texts
    and their fingerprints."""

    relevant: DataFrame
    statements: DataFrame
    statement_count: int
    fingerprints: DataFrame
