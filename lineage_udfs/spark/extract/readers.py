"""Query-log readers: CSV, JSON Lines, Parquet and Delta → the canonical log schema.

Every reader returns the columns of ``QUERY_LOG_SCHEMA`` plus four bookkeeping columns
(:data:`SOURCE_NAME`, :data:`SOURCE_FILE`, :data:`RAW_RECORD`, :data:`LOAD_ERROR`). A row that
cannot be loaded (corrupt CSV/JSON record, unparsable timestamp, null or blank query text) is
kept with its ``LOAD_ERROR`` reason, so the job can quarantine it: nothing is silently dropped
and one bad row never fails the job. A missing required column fails fast with ``InputError``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, StringType, StructField, StructType, TimestampType

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.core.records import QUERY_LOG_COLUMNS
from lineage_udfs.settings import SourceSettings
from lineage_udfs.sources.columns import INPUT_FILE
from lineage_udfs.sources.jdbc import read_jdbc
from lineage_udfs.sources.presets import apply_preset, with_preset_options
from lineage_udfs.spark.extract.watermark import IncrementalRead
from lineage_udfs.spark.runtime.checkpoints import checkpointed
from lineage_udfs.spark.runtime.preflight import TEXT_FORMATS, inspect_source, names_catalog_table
from lineage_udfs.spark.storage.schemas import QUERY_LOG_SCHEMA

logger = logging.getLogger(__name__)

SOURCE_NAME = "_source_name"
SOURCE_FILE = "_source_file"
RAW_RECORD = "_raw_record"
"""The unparsed text of a corrupt record (masked before it is stored)."""
LOAD_ERROR = "_load_error"
"""Why the row cannot be loaded, or null."""
LOAD_COLUMNS: tuple[str, ...] = (SOURCE_NAME, SOURCE_FILE, RAW_RECORD, LOAD_ERROR)
_LOAD_FIELDS = [StructField(c, StringType(), True) for c in LOAD_COLUMNS]

CORRUPT_COLUMN = "_corrupt_record"
REQUIRED_COLUMNS: tuple[str, ...] = ("query_text",)
TIMESTAMP_COLUMNS: tuple[str, ...] = ("start_time", "end_time")

_CSV_DEFAULTS = {
    "header": "true",
    "multiLine": "true",
    "quote": '"',
    "escape": '"',
    # a quote that does not close its value leaves the value unquoted, opening quote included:
    # how a record that absorbed the next one is recognised (CSV_QUOTING_ERROR)
    "unescapedQuoteHandling": "STOP_AT_DELIMITER",
}

ERROR_COLUMNS: tuple[str, ...] = (
    "error_result",
    "errorresult",
    "error_message",
    "errormessage",
    "error_code",
    "errorcode",
)
"""Source columns (any case) that vendors set when an execution failed whatever its state says:
BigQuery ``state = DONE`` with ``error_result``, Snowflake ``ERROR_CODE``/``ERROR_MESSAGE``,
Redshift/Postgres-style ``error_message``. A row with one of them set has ``status = failed``."""
_NO_ERROR_VALUES: tuple[str, ...] = ("", "null", "{}", "[]", "0", "none")

CSV_QUOTING_ERROR = (
    "malformed CSV quoting: a quote is not closed where its value ends (the next record may"
    " be inside this one); fix the quoting in the export"
)
NUL_ERROR = "record holds NUL bytes (binary input?)"
UTF8_ERROR = "record is not valid UTF-8 (bytes replaced by U+FFFD)"
_HASH_SEPARATOR = "\x1f"


TRUNCATION_MARKER = "…[cut]"
"""Appended to a stored value cut at its cap (``limits`` in settings)."""


def capped(value: Column, limit: int) -> Column:
    """``value`` cut to ``limit`` characters with :data:`TRUNCATION_MARKER` when longer."""
    keep = max(1, limit - len(TRUNCATION_MARKER))
    return F.when(
        F.length(value) > limit, F.concat(F.substring(value, 1, keep), F.lit(TRUNCATION_MARKER))
    ).otherwise(value)


def read_query_logs(
    spark: SparkSession,
    sources: list[SourceSettings],
    max_field_chars: int | None = None,
    *,
    passwords: Mapping[str, str] | None = None,
    incremental: IncrementalRead | None = None,
) -> DataFrame:
    """Read and union every enabled source (canonical + bookkeeping columns); with
    ``max_field_chars``, every canonical field but the query text is capped (``limits``).

    Raises:
        InputError: no enabled source, or a source lacks a required column.
    """
    enabled = [s for s in sources if s.enabled and s.format != "openlineage"]
    if not enabled and any(s.enabled for s in sources):  # events only (extract.ol_source)
        return spark.createDataFrame([], StructType([*QUERY_LOG_SCHEMA.fields, *_LOAD_FIELDS]))
    if not enabled:
        raise InputError("no enabled query-log source in settings (sources: [])")
    frames = [
        read_query_log(spark, source, passwords=passwords, incremental=incremental)
        for source in enabled
    ]
    log = reduce(DataFrame.unionByName, frames)
    if max_field_chars is None:
        return log
    capped_fields = {
        f.name: capped(F.col(f.name), max_field_chars)
        for f in QUERY_LOG_SCHEMA
        if f.dataType == StringType() and f.name not in ("query_text", "query_id")
    }
    capped_fields["query_id"] = F.when(
        F.length("query_id") > max_field_chars,
        F.concat(F.lit("sha256:"), F.sha2(F.col("query_id"), 256)),
    ).otherwise(F.col("query_id"))
    return log.withColumns(capped_fields)


def read_query_log(
    spark: SparkSession,
    source: SourceSettings,
    *,
    passwords: Mapping[str, str] | None = None,
    incremental: IncrementalRead | None = None,
) -> DataFrame:
    """Read one source and map it to the canonical log schema.

    Args:
        spark: the session.
        source: format, path, column mapping, constant defaults, timestamp format.
        passwords: JDBC passwords by source name (``sources.jdbc.jdbc_passwords``).
        incremental: the run's watermarks: an ``incremental`` source gives only the rows newer
            than its committed watermark (without it, every row).

    Returns:
        ``QUERY_LOG_SCHEMA`` columns in order, then ``LOAD_COLUMNS``.

    Raises:
        InputError: the source cannot be opened, or a required or explicitly mapped column is
            missing (the message names it and lists the available columns).
    """
    source = with_preset_options(source)
    raw = _read_raw(spark, source, (passwords or {}).get(source.name))
    is_live = source.format == "jdbc"
    if source.incremental is not None and incremental is not None:
        raw = incremental.new_rows(source, raw, materialize=is_live)
    elif is_live:  # one snapshot of a live database per run
        raw = checkpointed(raw)
    raw = apply_preset(spark, source, raw)
    available = [c for c in raw.columns if c != CORRUPT_COLUMN]
    mapping = _resolve_mapping(source, available)
    types = dict(raw.dtypes)

    def value(canonical: str) -> Column:
        src = mapping.get(canonical)
        col = F.col(f"`{src}`").cast(StringType()) if src else F.lit(None).cast(StringType())
        if canonical != "query_text":
            col = F.nullif(F.trim(col), F.lit(""))
        if canonical in source.defaults:
            col = F.coalesce(col, F.lit(source.defaults[canonical]))
        return col

    selected: dict[str, Column] = {}
    errors: list[Column] = []
    has_corrupt = CORRUPT_COLUMN in raw.columns
    if has_corrupt:
        errors.append(F.when(F.col(CORRUPT_COLUMN).isNotNull(), F.lit("corrupt record")))
    strings = [F.col(f"`{c}`") for c in available if types.get(c) == "string"]
    raw_text = F.concat_ws(_HASH_SEPARATOR, *strings) if strings else F.lit("")
    if source.format == "csv" and strings:
        quote = {**_CSV_DEFAULTS, **source.options}["quote"][:1] or '"'
        errors.append(
            F.when(
                F.exists(F.array(*strings), lambda v: v.startswith(quote)),
                F.lit(CSV_QUOTING_ERROR),
            )
        )
    errors.append(F.when(F.instr(raw_text, "\x00") > 0, F.lit(NUL_ERROR)))
    errors.append(F.when(F.instr(raw_text, "\ufffd") > 0, F.lit(UTF8_ERROR)))
    text = value("query_text")
    errors.append(
        F.when(
            text.isNull() | (F.length(F.trim(text)) == 0),
            F.lit("null or empty query_text"),
        )
    )
    for canonical in QUERY_LOG_COLUMNS:
        if canonical in TIMESTAMP_COLUMNS:
            parsed, error = _timestamp(mapping.get(canonical), types, source, canonical)
            selected[canonical] = parsed
            errors.append(error)
        elif canonical != "query_id":
            selected[canonical] = text if canonical == "query_text" else value(canonical)
    vendor_failed = _vendor_failed(source, available)
    if vendor_failed is not None:
        selected["status"] = F.when(vendor_failed, F.lit("failed")).otherwise(selected["status"])
    selected["object_kind"] = F.lower(F.coalesce(selected["object_kind"], F.lit("query")))
    selected["dialect"] = F.lower(selected["dialect"])
    row_hash = F.sha2(
        F.concat_ws(
            _HASH_SEPARATOR,
            F.lit(source.name),
            *[F.coalesce(F.col(f"`{c}`").cast(StringType()), F.lit("")) for c in available],
            *([F.coalesce(F.col(CORRUPT_COLUMN), F.lit(""))] if has_corrupt else []),
        ),
        256,
    )
    selected["query_id"] = F.coalesce(value("query_id"), row_hash)
    source_file = (
        F.lit(source.path) if source.format in ("delta", "jdbc") else F.col("_metadata.file_path")
    )
    if INPUT_FILE in raw.columns:  # a preset took it before joining
        source_file = F.col(INPUT_FILE)
        available = [c for c in available if c != INPUT_FILE]
    columns = [selected[f.name].cast(f.dataType).alias(f.name) for f in QUERY_LOG_SCHEMA]
    return raw.select(
        *columns,
        F.lit(source.name).alias(SOURCE_NAME),
        source_file.cast(StringType()).alias(SOURCE_FILE),
        (F.col(CORRUPT_COLUMN) if has_corrupt else F.lit(None).cast(StringType())).alias(
            RAW_RECORD
        ),
        _with_span(F.coalesce(*errors), raw_text, has_corrupt, source).alias(LOAD_ERROR),
    )


def read_raw(spark: SparkSession, source: SourceSettings, password: str | None = None) -> DataFrame:
    """A source's rows as its file holds them (CSV and JSON fields as strings)."""
    return _read_raw(spark, with_preset_options(source), password)


def _with_span(
    error: Column, raw_text: Column, has_corrupt: bool, source: SourceSettings
) -> Column:
    """A CSV load error of a record spanning several lines says so: the lines after its first
    may be records it absorbed, quarantined with it (``rows read`` counts it once)."""
    if source.format != "csv":
        return error
    text = F.coalesce(F.col(CORRUPT_COLUMN), raw_text) if has_corrupt else raw_text
    lines = F.size(F.split(text, "\n"))
    return F.when(
        error.isNotNull() & (lines > 1),
        F.concat(
            error,
            F.lit(" (the record spans "),
            lines.cast(StringType()),
            F.lit(" lines: the records after its first line may be inside it)"),
        ),
    ).otherwise(error)


def _vendor_failed(source: SourceSettings, available: list[str]) -> Column | None:
    """True where one of the source's ERROR_COLUMNS is set; None when it has none."""
    mapped = set(source.columns.values())
    columns = [c for c in available if c.lower() in ERROR_COLUMNS and c not in mapped]
    if not columns:
        return None
    checks = [
        ~F.coalesce(
            F.lower(F.trim(F.col(f"`{c}`").cast(StringType()))).isin(*_NO_ERROR_VALUES),
            F.lit(True),
        )
        for c in columns
    ]
    return reduce(lambda a, b: a | b, checks)


def _empty_source(spark: SparkSession, source: SourceSettings) -> DataFrame:
    """A text source whose files are all empty: no rows, the columns the mapping names."""
    names = list(dict.fromkeys([*source.columns.values(), *QUERY_LOG_COLUMNS]))
    schema = StructType(
        [StructField(c, StringType(), True) for c in names]
        + [StructField(CORRUPT_COLUMN, StringType(), True)]
    )
    reader = spark.read.schema(schema)
    return reader.csv(source.path) if source.format == "csv" else reader.json(source.path)


def _read_raw(spark: SparkSession, source: SourceSettings, password: str | None) -> DataFrame:
    fmt = source.format
    if fmt == "jdbc":
        return read_jdbc(spark, source, password)
    if fmt in TEXT_FORMATS and inspect_source(spark, source).all_empty:
        logger.info("source %r: every file at %s is empty (0 rows)", source.name, source.path)
        return _empty_source(spark, source)
    try:
        if fmt == "csv":
            options = {**_CSV_DEFAULTS, **source.options}
            header = spark.read.options(**options).csv(source.path).columns
            schema = StructType(
                [StructField(c, StringType(), True) for c in header]
                + [StructField(CORRUPT_COLUMN, StringType(), True)]
            )
            return (
                spark.read.options(**options)
                .option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", CORRUPT_COLUMN)
                .schema(schema)
                .csv(source.path)
            )
        if fmt == "jsonl":
            options = {**source.options, "columnNameOfCorruptRecord": CORRUPT_COLUMN}
            inferred = spark.read.options(**options).json(source.path).columns
            # Re-read with every field as a string: types come from the mapping, not inference.
            schema = StructType(
                [StructField(c, StringType(), True) for c in inferred if c != CORRUPT_COLUMN]
                + [StructField(CORRUPT_COLUMN, StringType(), True)]
            )
            return (
                spark.read.options(**options)
                .option("mode", "PERMISSIVE")
                .schema(schema)
                .json(source.path)
            )
        if fmt == "parquet":
            return spark.read.options(**source.options).parquet(source.path)
        if names_catalog_table(source):
            return spark.read.table(source.path)
        return spark.read.options(**source.options).format("delta").load(source.path)
    except InputError:
        raise
    except Exception as exc:  # AnalysisException and friends: path missing, bad format
        raise InputError(
            f"cannot read {fmt} source {source.name!r} at {source.path}: "
            f"{one_line(exc, with_type=True)}"
        ) from exc


def _resolve_mapping(source: SourceSettings, available: list[str]) -> dict[str, str]:
    """canonical → source column; explicit mappings must exist, same-named columns are used."""
    mapping: dict[str, str] = {}
    for canonical in QUERY_LOG_COLUMNS:
        explicit = source.columns.get(canonical)
        if explicit is not None:
            if explicit not in available:
                raise InputError(
                    f"source {source.name!r} ({source.path}): column {explicit!r} mapped to "
                    f"{canonical} is missing; available columns: {available}"
                )
            mapping[canonical] = explicit
        elif canonical in available:
            mapping[canonical] = canonical
    for required in REQUIRED_COLUMNS:
        if required not in mapping:
            raise InputError(
                f"source {source.name!r} ({source.path}) has no {required} column (map one with "
                f"sources[].columns.{required}); available columns: {available}"
            )
    return mapping


def _timestamp(
    src: str | None, types: dict[str, str], source: SourceSettings, canonical: str
) -> tuple[Column, Column]:
    """(parsed timestamp, load error or null) for one timestamp column."""
    if src is None:
        default = source.defaults.get(canonical)
        if default is None:
            return F.lit(None).cast(TimestampType()), F.lit(None).cast(StringType())
        raw = F.lit(default)
    else:
        dtype = types[src]
        if dtype.startswith("timestamp"):
            return F.col(f"`{src}`").cast(TimestampType()), F.lit(None).cast(StringType())
        if dtype == DateType().simpleString():
            return F.col(f"`{src}`").cast(TimestampType()), F.lit(None).cast(StringType())
        raw = F.nullif(F.trim(F.col(f"`{src}`").cast(StringType())), F.lit(""))
    parsed = (
        F.try_to_timestamp(raw, F.lit(source.timestamp_format))
        if source.timestamp_format
        else F.try_to_timestamp(raw)
    )
    expected = source.timestamp_format or "ISO-8601"
    error = F.when(
        raw.isNotNull() & parsed.isNull(),
        F.lit(f"unparsable {canonical} (expected format {expected})"),
    )
    return parsed, error
