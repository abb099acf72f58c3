"""``ParseResult`` → plain dict shaped like the Spark UDF return schema (still pure Python).

The Spark schema in ``lineage_udfs.spark.schemas.PARSE_RESULT_SCHEMA`` must have exactly the
fields of ``PARSE_RESULT_FIELDS``; a Spark test guards the two against drift.
"""

from __future__ import annotations

from typing import Any

from lineage_udfs.core.models import ParseResult

PARSE_RESULT_FIELDS: tuple[str, ...] = (
    "statement_type",
    "parser",
    "status",
    "error_kind",
    "error",
    "parse_ms",
    "masked_sql",
    "sources",
    "targets",
    "intermediates",
    "table_edges",
    "column_edges",
    "statements",
)


def to_record(result: ParseResult) -> dict[str, Any]:
    """Flatten a result into scalars, lists of strings and lists of flat dicts.

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, ParseStatus, StatementType
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("db.a",), targets=("db.b",))
        >>> rec = to_record(r)
        >>> rec["status"], rec["sources"], rec["error_kind"]
        ('ok', ['db.a'], None)
    """
    failure = result.failure
    return {
        "statement_type": str(result.statement_type),
        "parser": str(result.parser),
        "status": str(result.status),
        "error_kind": str(failure.kind) if failure else None,
        "error": failure.message if failure else None,
        "parse_ms": float(result.parse_ms),
        "masked_sql": result.masked_sql,
        "sources": list(result.sources),
        "targets": list(result.targets),
        "intermediates": list(result.intermediates),
        "table_edges": [
            {"source_table": e.source_table, "target_table": e.target_table}
            for e in result.table_edges
        ],
        "column_edges": [
            {
                "source_table": e.source_table,
                "source_column": e.source_column,
                "target_table": e.target_table,
                "target_column": e.target_column,
                "transformation_type": str(e.transformation_type),
                "transformation_subtype": str(e.transformation_subtype),
            }
            for e in result.column_edges
        ],
        "statements": [
            {
                "index": s.index,
                "statement_type": str(s.statement_type),
                "status": str(s.status),
                "sources": list(s.sources),
                "targets": list(s.targets),
                "error_kind": str(s.failure.kind) if s.failure else None,
                "error": s.failure.message if s.failure else None,
            }
            for s in result.statements
        ],
    }
