"""Shared inputs for the emit tests: a CTAS, a MERGE, a failed parse and a procedure."""

from __future__ import annotations

from datetime import UTC, datetime

from lineage_udfs.core.models import ColumnEdge
from lineage_udfs.core.records import StatementRecord
from lineage_udfs.emit.events import EventOptions, ParsedStatement, QueryRun

OPTIONS = EventOptions(
    job_namespace="lineage-tests",
    default_namespace="lineage-warehouse",
    producer="https://github.com/lineage-warehouse/lineage-warehouse/tree/test",
)
T0 = datetime(2026, 3, 2, 8, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 3, 2, 8, 0, 42, 123000, tzinfo=UTC)
SECRET_LITERALS = ("'ACME-SECRET'", "ACME-SECRET", "4242", "'2026-01-01'")

CTAS_QUERY = QueryRun(
    query_id="q-ctas-1",
    fingerprint="fp_ctas_0001",
    start_time=T0,
    end_time=T1,
    status="success",
    user_name="etl",
    source_system="snowflake://acme-prod",
    object_kind="query",
    default_database="analytics",
    default_schema="public",
)
CTAS_PARSED = ParsedStatement(
    fingerprint="fp_ctas_0001",
    statement_type="CTAS",
    masked_sql="CREATE TABLE mart.daily AS SELECT o.day, SUM(o.amount) AS total "
    "FROM raw.orders AS o "
    "WHERE o.customer = ? GROUP BY o.day",
    status="ok",
    sources=("analytics.raw.orders",),
    targets=("analytics.mart.daily",),
    dialect="snowflake",
)
CTAS_EDGES = (
    ColumnEdge("analytics.raw.orders", "day", "analytics.mart.daily", "day", "DIRECT", "IDENTITY"),
    ColumnEdge(
        "analytics.raw.orders", "amount", "analytics.mart.daily", "total", "DIRECT", "AGGREGATION"
    ),
    ColumnEdge(
        "analytics.raw.orders", "customer", "analytics.mart.daily", "day", "INDIRECT", "FILTER"
    ),
    ColumnEdge(
        "analytics.raw.orders", "customer", "analytics.mart.daily", "total", "INDIRECT", "FILTER"
    ),
)
CTAS_CATALOG = {
    "analytics.raw.orders": (("day", "DATE"), ("amount", "NUMBER"), ("customer", "VARCHAR")),
}

MERGE_QUERY = QueryRun(
    query_id="q-merge-7",
    fingerprint="fp_merge_0007",
    start_time=T0,
    end_time=T1,
    status="FAILED",
    source_system="postgres://db1:5432",
    object_kind="query",
    default_database="shop",
    default_schema="public",
)
MERGE_PARSED = ParsedStatement(
    fingerprint="fp_merge_0007",
    statement_type="MERGE",
    masked_sql="MERGE INTO dim.customer AS t USING stage.customer AS s ON t.id = s.id "
    "WHEN MATCHED AND s.tier = ? THEN UPDATE SET email_hash = MD5(s.email), tier = "
    "CASE WHEN s.score > ? THEN ? ELSE s.tier END",
    status="ok",
    sources=("stage.customer",),
    targets=("dim.customer",),
    dialect="postgres",
)
MERGE_EDGES = (
    ColumnEdge("stage.customer", "email", "dim.customer", "email_hash", "DIRECT", "MASKED"),
    ColumnEdge("stage.customer", "tier", "dim.customer", "tier", "DIRECT", "IDENTITY"),
    ColumnEdge("stage.customer", "score", "dim.customer", "tier", "INDIRECT", "CONDITIONAL"),
    ColumnEdge("stage.customer", "id", "dim.customer", "tier", "INDIRECT", "JOIN"),
    ColumnEdge("stage.customer", "id", "dim.customer", "email_hash", "INDIRECT", "JOIN"),
    ColumnEdge("stage.customer", "tier", "dim.customer", "tier", "INDIRECT", "FILTER"),
)

FAILED_QUERY = QueryRun(
    query_id="q-bad-3",
    fingerprint="fp_bad_0003",
    start_time=T0,
    end_time=T1,
    status="success",
    source_system=None,
    object_kind="query",
)
FAILED_PARSED = ParsedStatement(
    fingerprint="fp_bad_0003",
    statement_type="UNKNOWN",
    masked_sql="INSERT INTO x SELEC ? FROM",
    status="failed",
    error_kind="SYNTAX",
    error="Expected table name but got FROM at line 1, col 26",
)

PROC_QUERY = QueryRun(
    query_id="q-proc-9",
    fingerprint="fp_proc_0009",
    start_time=T0,
    end_time=T1,
    status="success",
    source_system="databricks://adb-123.azuredatabricks.net",
    object_kind="procedure",
    object_name="main.etl.load_sales",
)
PROC_PARSED = ParsedStatement(
    fingerprint="fp_proc_0009",
    statement_type="SCRIPT",
    masked_sql="CREATE TEMP VIEW s AS SELECT * FROM main.raw.sales WHERE amt > ?; "
    "INSERT INTO main.mart.sales SELECT id, amt FROM s; BOGUS ?",
    status="partial",
    sources=("main.raw.sales",),
    targets=("main.mart.sales",),
    statements=(
        StatementRecord(0, "CREATE_VIEW", "ok", ("main.raw.sales",), ("s",)),
        StatementRecord(1, "INSERT", "ok", ("s",), ("main.mart.sales",)),
        StatementRecord(2, "UNKNOWN", "failed", (), (), "SYNTAX", "Invalid expression at col 1"),
    ),
    dialect="databricks",
)
PROC_EDGES = (
    ColumnEdge("main.raw.sales", "id", "main.mart.sales", "id", "DIRECT", "IDENTITY"),
    ColumnEdge("main.raw.sales", "amt", "main.mart.sales", "amt", "DIRECT", "IDENTITY"),
    ColumnEdge("main.raw.sales", "amt", "main.mart.sales", "amt", "INDIRECT", "FILTER"),
)


def _built(query: QueryRun, parsed: ParsedStatement, edges: tuple[ColumnEdge, ...]):
    from lineage_udfs.emit.events import build_run_events

    return lambda: build_run_events(query, parsed, edges, options=OPTIONS)


CASES_FOR_KEYS = {
    "ctas": _built(CTAS_QUERY, CTAS_PARSED, CTAS_EDGES),
    "procedure_with_child_runs": _built(PROC_QUERY, PROC_PARSED, PROC_EDGES),
}
