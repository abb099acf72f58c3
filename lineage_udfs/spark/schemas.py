"""Declared Spark schemas: the canonical query log, the parse UDF's return type and every Delta
table. Writers always ``select`` these columns in this order; nothing relies on inference."""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def _s(*fields: tuple[str, object]) -> StructType:
    return StructType([StructField(name, dtype, True) for name, dtype in fields])  # type: ignore[arg-type]


_STR_ARRAY = ArrayType(StringType())

# --- canonical query-log schema (what every reader produces; DESIGN.md) -----------------------
QUERY_LOG_SCHEMA = _s(
    ("query_id", StringType()),
    ("query_text", StringType()),
    ("dialect", StringType()),
    ("default_database", StringType()),
    ("default_schema", StringType()),
    ("user_name", StringType()),
    ("start_time", TimestampType()),
    ("end_time", TimestampType()),
    ("status", StringType()),
    ("source_system", StringType()),
    ("object_kind", StringType()),
    ("object_name", StringType()),
)

# --- the parse UDF's return struct (mirrors lineage_udfs.core.records.PARSE_RESULT_FIELDS) ----
TABLE_EDGE_STRUCT = _s(("source_table", StringType()), ("target_table", StringType()))
COLUMN_EDGE_STRUCT = _s(
    ("source_table", StringType()),
    ("source_column", StringType()),
    ("target_table", StringType()),
    ("target_column", StringType()),
    ("transformation_type", StringType()),
    ("transformation_subtype", StringType()),
)
STATEMENT_STRUCT = _s(
    ("index", IntegerType()),
    ("statement_type", StringType()),
    ("status", StringType()),
    ("sources", _STR_ARRAY),
    ("targets", _STR_ARRAY),
    ("error_kind", StringType()),
    ("error", StringType()),
)
PARSE_RESULT_SCHEMA = _s(
    ("statement_type", StringType()),
    ("parser", StringType()),
    ("status", StringType()),
    ("error_kind", StringType()),
    ("error", StringType()),
    ("parse_ms", DoubleType()),
    ("masked_sql", StringType()),
    ("sources", _STR_ARRAY),
    ("targets", _STR_ARRAY),
    ("intermediates", _STR_ARRAY),
    ("table_edges", ArrayType(TABLE_EDGE_STRUCT)),
    ("column_edges", ArrayType(COLUMN_EDGE_STRUCT)),
    ("statements", ArrayType(STATEMENT_STRUCT)),
)

# --- Delta tables (DESIGN.md "Lineage tables") -----------------------------------------------
PARSED_STATEMENTS_SCHEMA = _s(
    ("fingerprint", StringType()),
    ("dialect", StringType()),
    ("statement_type", StringType()),
    ("masked_sql", StringType()),
    ("parser", StringType()),
    ("parser_version", StringType()),
    ("status", StringType()),
    ("error_kind", StringType()),
    ("error", StringType()),
    ("parse_ms", DoubleType()),
    ("sources", _STR_ARRAY),
    ("targets", _STR_ARRAY),
    ("intermediates", _STR_ARRAY),
    ("statements", ArrayType(STATEMENT_STRUCT)),
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
)

QUERIES_SCHEMA = _s(
    # one row per log row that was lineage-relevant: the log's metadata without its text
    ("query_id", StringType()),
    ("fingerprint", StringType()),
    ("dialect", StringType()),
    ("default_database", StringType()),
    ("default_schema", StringType()),
    ("user_name", StringType()),
    ("start_time", TimestampType()),
    ("end_time", TimestampType()),
    ("status", StringType()),
    ("source_system", StringType()),
    ("object_kind", StringType()),
    ("object_name", StringType()),
)

TABLE_LINEAGE_SCHEMA = _s(
    ("source_table", StringType()),
    ("target_table", StringType()),
    ("edge_kind", StringType()),  # query / view / procedure / external
    ("fingerprint", StringType()),
    ("object_name", StringType()),
    ("source_system", StringType()),
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
)

COLUMN_LINEAGE_SCHEMA = _s(
    ("source_table", StringType()),
    ("source_column", StringType()),
    ("target_table", StringType()),
    ("target_column", StringType()),
    ("transformation_type", StringType()),
    ("transformation_subtype", StringType()),
    ("edge_kind", StringType()),
    ("fingerprint", StringType()),
    ("object_name", StringType()),
    ("source_system", StringType()),
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("occurrences", LongType()),
)

QUARANTINE_SCHEMA = _s(
    ("quarantine_id", StringType()),  # deterministic: hash of stage + source identity
    ("stage", StringType()),  # load / parse
    ("reason", StringType()),
    ("error_kind", StringType()),
    ("query_id", StringType()),
    ("fingerprint", StringType()),
    ("source_file", StringType()),
    ("masked_record", StringType()),  # literals masked to ?
    ("first_seen", TimestampType()),
    ("last_seen", TimestampType()),
    ("run_id", StringType()),
)

LINEAGE_RUNS_SCHEMA = _s(
    ("run_id", StringType()),
    ("started_at", TimestampType()),
    ("ended_at", TimestampType()),
    ("config_json", StringType()),
    ("input_fingerprint", StringType()),
    ("rows_read", LongType()),
    ("rows_relevant", LongType()),
    ("distinct_statements", LongType()),
    ("by_status", MapType(StringType(), LongType())),
    ("by_parser", MapType(StringType(), LongType())),
    ("table_edges", LongType()),
    ("column_edges", LongType()),
    ("quarantined", LongType()),
    ("stage_seconds", MapType(StringType(), DoubleType())),
    ("status", StringType()),
)
