"""Column helpers the vendor presets share: quoted export columns, blanks as nulls, vendor
timestamp formats, status values, corrupt rows, required columns, companion CSV exports.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.settings import SourceSettings

CORRUPT_COLUMN = "_corrupt_record"
ISO_TIMESTAMP = "yyyy-MM-dd HH:mm:ss.SSSSSS"


def quoted(name: str) -> Column:
    return F.col(f"`{name}`")


def blank_null(col: Column) -> Column:
    return F.nullif(F.trim(col.cast(StringType())), F.lit(""))


def parse_timestamp(raw: Column, *formats: str) -> Column:
    """The first vendor format that parses ``raw`` (ISO-8601 last), as ISO text; else raw."""
    value = blank_null(raw)
    parsed = F.coalesce(
        *[F.try_to_timestamp(value, F.lit(f)) for f in formats], F.try_to_timestamp(value)
    )
    return F.coalesce(F.date_format(parsed, ISO_TIMESTAMP), value)


def has_columns(frame: DataFrame, *columns: str) -> bool:
    return all(c in frame.columns for c in columns)


INPUT_FILE = "_input_file"
"""The row's file, taken before a preset joins (a join makes ``_metadata`` ambiguous)."""


def keep_corrupt(frame: DataFrame) -> list[Column]:
    """The bookkeeping columns a preset passes through: the corrupt record, the input file."""
    return [F.col(c) for c in (CORRUPT_COLUMN, INPUT_FILE) if c in frame.columns]


def not_corrupt(frame: DataFrame) -> Column:
    """True for loaded rows: a corrupt record always passes a preset's row filter, so the reader
    quarantines it instead of the preset dropping it."""
    if CORRUPT_COLUMN in frame.columns:
        return F.col(CORRUPT_COLUMN).isNotNull()
    return F.lit(False)


def execution_status(
    raw: Column, failed: tuple[str, ...], cancelled: tuple[str, ...] = ()
) -> Column:
    value = F.lower(blank_null(raw))
    return (
        F.when(value.isin(*failed), F.lit("failed"))
        .when(value.isin(*cancelled), F.lit("cancelled"))
        .when(value.isNotNull(), F.lit("success"))
    )


def require_columns(frame: DataFrame, source: SourceSettings, *columns: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        available = [c for c in frame.columns if c != CORRUPT_COLUMN]
        raise InputError(
            f"source {source.name!r} ({source.path}) is not a {source.preset} export: missing"
            f" column(s) {missing}; available columns: {available}"
        )


def read_csv(spark: SparkSession, source: SourceSettings, path: str) -> DataFrame:
    try:
        return spark.read.options(header="true", multiLine="true", quote='"', escape='"').csv(path)
    except Exception as exc:
        raise InputError(
            f"cannot read the companion export of source {source.name!r} at {path}: "
            f"{one_line(exc, with_type=True)}"
        ) from exc


BQ_TABLE = "struct<project_id:string,dataset_id:string,table_id:string>"


def bq_name(col: Column) -> Column:
    return F.lower(F.concat_ws(".", col.project_id, col.dataset_id, col.table_id))
