"""The columns one OpenLineage RunEvent gives (the ``openlineage_events`` table's, besides the
source's): Spark types only, so the table declarations import them without the source's reader
(pandas, jsonschema), which the parse UDF's workers never load."""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

_TABLE_EDGE = StructType(
    [StructField("source_table", StringType()), StructField("target_table", StringType())]
)
_COLUMN_EDGE = StructType(
    [
        StructField(name, StringType())
        for name in (
            "source_table",
            "source_column",
            "target_table",
            "target_column",
            "transformation_type",
            "transformation_subtype",
        )
    ]
    + [StructField("masking", BooleanType())]
)
_SYMLINK = StructType(
    [StructField(name, StringType()) for name in ("node", "alias", "namespace", "type")]
)

EVENT_FIELDS: list[tuple[str, Any]] = [
    ("event_id", StringType()),
    ("run_id", StringType()),
    ("job", StringType()),
    ("job_namespace", StringType()),
    ("job_name", StringType()),
    ("event_type", StringType()),
    ("event_time", TimestampType()),
    ("producer", StringType()),
    ("table_edges", ArrayType(_TABLE_EDGE)),
    ("column_edges", ArrayType(_COLUMN_EDGE)),
    ("symlinks", ArrayType(_SYMLINK)),
    ("datasets", ArrayType(StringType())),
]
"""What one event gives (the ``openlineage_events`` table's columns besides the source's)."""
