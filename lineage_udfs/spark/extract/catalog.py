"""The catalog: table and column definitions imported into ``catalog_columns``, and the part of
them each statement gets when it is parsed.

:func:`import_catalog` reads every catalog source (``information_schema.columns`` over JDBC, or
an exported CSV / JSON lines / Parquet / Delta file with the same columns) and MERGEs it into
``catalog_columns``: a source's rows are replaced (new columns inserted, changed ones updated,
dropped ones deleted; unchanged rows are not rewritten).

:func:`with_statement_catalogs` gives each statement to parse the catalog tables whose name
appears as a word of its text (a cheap superset of the tables it reads or writes): the parser
resolves ``SELECT *``, unqualified columns and ``INSERT`` without a column list against them.
A table is matched by its last name part, so ``orders`` in the text brings every catalog table
named ``orders``; the parser then picks the one its qualified name resolves to.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.settings import CATALOG_COLUMNS, CatalogSettings, CatalogSourceSettings
from lineage_udfs.sources.jdbc import read_jdbc
from lineage_udfs.spark.extract.transforms import FINGERPRINT, PARSE_TEXT, STATEMENT_CATALOG
from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.storage.schemas import CATALOG_COLUMNS_TABLE
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

logger = logging.getLogger(__name__)

TABLE = CATALOG_COLUMNS_TABLE.name
_WORD = r"[\p{L}_][\p{L}\p{N}_$]*"
"""An unquoted identifier (any script); quoted names made of such words match too."""
_CSV = {"header": "true", "multiLine": "true", "quote": '"', "escape": '"'}


@dataclass(frozen=True)
class Catalog:
    """The catalog as the parse stage uses it.

    Attributes:
        tables: one row per table: ``table_id``, ``table_name`` (its last part, lower-cased),
            ``columns`` (names in declared order) and their ``types`` (as the catalog names
            them: a cast to a column's own type is no transformation).
        table_count: how many tables.
        digest: eight hex characters that change with any definition (part of the parser
            version: statements parsed against another catalog are parsed again).
    """

    tables: DataFrame
    table_count: int
    digest: str


def import_catalog(
    spark: SparkSession,
    settings: CatalogSettings,
    tables: LineageTables,
    passwords: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """Import every enabled catalog source into ``catalog_columns``.

    Returns:
        Per source, the columns it defines now.

    Raises:
        InputError: a source cannot be read, or lacks table_name / column_name.
    """
    counts: dict[str, int] = {}
    sources = [s for s in settings.sources if s.enabled]
    if not sources:
        return counts
    tables.ensure(TABLE)
    for source in sources:
        rows = _catalog_rows(spark, source, (passwords or {}).get(source.name))
        rows = checkpointed(rows)  # one read of a live database
        counts[source.name] = rows.count()
        _replace(tables, source.name, rows)
        logger.info("catalog source %s: %d columns", source.name, counts[source.name])
    return counts


def load_catalog(tables: LineageTables) -> Catalog | None:
    """The imported catalog (every source), or None when it is empty."""
    tables.ensure(TABLE)
    columns = tables.read(TABLE)
    stats = columns.agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(
            F.xxhash64("table_id", "column_name", "ordinal_position", "data_type").bitwiseAND(
                F.lit(0xFFFFFFFF)
            )
        ).alias("h"),
    ).first()
    if stats is None or not stats["n"]:
        return None
    ordered = F.array_sort(
        F.collect_list(
            F.struct(
                F.col("ordinal_position"),
                F.lower("column_name").alias("c"),
                F.col("data_type").alias("t"),
            )
        )
    )
    by_table = (
        columns.groupBy("table_id")
        .agg(ordered.alias("cols"))
        .select(
            "table_id",
            F.element_at(F.split("table_id", r"\."), -1).alias("table_name"),
            F.col("cols.c").alias("columns"),
            F.col("cols.t").alias("types"),
        )
    )
    by_table, count = checkpointed(by_table), by_table.count()
    digest = f"{(int(stats['n']) * 0x9E3779B1 + int(stats['h'])) & 0xFFFFFFFF:08x}"
    return Catalog(by_table, count, digest)


def with_statement_catalogs(statements: DataFrame, catalog: Catalog, max_tables: int) -> DataFrame:
    """``statements`` plus ``statement_catalog``: the JSON of the catalog tables whose name is
    a word of the statement's text (null when none, or more than ``max_tables``)."""
    words = statements.select(
        FINGERPRINT,
        F.explode(
            F.array_distinct(F.regexp_extract_all(F.lower(PARSE_TEXT), F.lit(_WORD), F.lit(0)))
        ).alias("word"),
    )
    named = (
        words.join(catalog.tables, words["word"] == catalog.tables["table_name"])
        .groupBy(FINGERPRINT)
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.array_sort(
                F.collect_list(F.struct(F.col("table_id").alias("table"), "columns", "types"))
            ).alias("entries"),
        )
        .select(
            FINGERPRINT,
            F.when(F.col("n") <= max_tables, F.to_json("entries")).alias(STATEMENT_CATALOG),
        )
    )
    return statements.join(named, FINGERPRINT, "left")


def _catalog_rows(
    spark: SparkSession, source: CatalogSourceSettings, password: str | None
) -> DataFrame:
    raw = _read(spark, source, password)
    lowered = {c.lower(): c for c in raw.columns}

    def value(name: str) -> Column:
        src = source.columns.get(name) or lowered.get(name)
        col = F.col(f"`{src}`").cast(StringType()) if src else F.lit(None).cast(StringType())
        col = F.nullif(F.trim(col), F.lit(""))
        if name in source.defaults:
            col = F.coalesce(col, F.lit(source.defaults[name]))
        return col

    for required in ("table_name", "column_name"):
        src = source.columns.get(required) or lowered.get(required)
        if src is None or src not in raw.columns:
            raise InputError(
                f"catalog source {source.name!r} ({source.path}) has no {required} column"
                f" (map one with catalog.sources[].columns.{required}); available: {raw.columns}"
            )
    mapped = raw.select(*[value(c).alias(c) for c in CATALOG_COLUMNS])
    table_id = F.lower(F.concat_ws(".", "table_catalog", "table_schema", "table_name"))
    position = F.coalesce(F.col("ordinal_position").cast("int"), F.lit(1_000_000))
    return (
        mapped.where(F.col("table_name").isNotNull() & F.col("column_name").isNotNull())
        .select(
            F.lit(source.name).alias("source_name"),
            table_id.alias("table_id"),
            "table_catalog",
            "table_schema",
            "table_name",
            "column_name",
            position.alias("ordinal_position"),
            "data_type",
            F.current_timestamp().alias("imported_at"),
        )
        .dropDuplicates(["table_id", "column_name"])
    )


def _read(spark: SparkSession, source: CatalogSourceSettings, password: str | None) -> DataFrame:
    if source.format == "jdbc":
        return read_jdbc(spark, source, password)
    reader = spark.read
    try:
        if source.format == "csv":
            return reader.options(**{**_CSV, **source.options}).csv(source.path)
        if source.format == "jsonl":
            return reader.options(**source.options).json(source.path)
        if source.format == "parquet":
            return reader.options(**source.options).parquet(source.path)
        return reader.options(**source.options).format("delta").load(source.path)
    except Exception as exc:  # AnalysisException and friends: path missing, bad format
        raise InputError(
            f"cannot read {source.format} catalog source {source.name!r} at {source.path}: "
            f"{one_line(exc, with_type=True)}"
        ) from exc


def _replace(tables: LineageTables, source: str, rows: DataFrame) -> None:
    """MERGE ``rows`` as the source's whole catalog: insert, update changed, delete gone."""
    quoted = source.replace("'", "''")
    tables.write(TABLE, Upsert(rows, delete_missing=f"t.source_name = '{quoted}'"))
