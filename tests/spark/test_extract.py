"""End to end: ``extract(spark, settings)`` on the shipped sample logs, twice, into a temp
folder."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession

from lineage_udfs.core import fingerprint as fp
from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample"
LINEAGE_TABLES = ("parsed_statements", "queries", "table_lineage", "column_lineage", "quarantine")


@dataclass
class Outcome:
    settings: JobSettings
    tables: LineageTables
    first: RunSummary
    second: RunSummary
    after_first: dict[str, list[Row]]
    after_second: dict[str, list[Row]]


def _sample_settings(base_path: Path) -> JobSettings:
    settings = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    sources = [s.model_copy(update={"path": str(ROOT / s.path)}) for s in settings.sources]
    sink = settings.sink.model_copy(update={"base_path": str(base_path)})
    return settings.model_copy(update={"sources": sources, "sink": sink})


def _snapshot(tables: LineageTables) -> dict[str, list[Row]]:
    return {t: tables.read(t).collect() for t in TABLES}


@pytest.fixture(scope="module")
def outcome(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    settings = _sample_settings(tmp_path_factory.mktemp("lineage"))
    tables = LineageTables(spark, settings.sink)
    first = extract(spark, settings)
    after_first = _snapshot(tables)
    second = extract(spark, settings)
    yield Outcome(settings, tables, first, second, after_first, _snapshot(tables))


def _sample_records() -> list[dict[str, Any]]:
    """Every record of both sample files, read without Spark (corrupt JSON lines as raw text)."""
    records: list[dict[str, Any]] = []
    for line in (SAMPLE / "spark_query_log.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            records.append({"query_text": line})
    with (SAMPLE / "snowflake_query_history.csv").open(encoding="utf-8", newline="") as fh:
        records.extend({"query_text": r["QUERY_TEXT"]} for r in csv.DictReader(fh))
    return records


def test_summary_counts_every_row(outcome: Outcome) -> None:
    s = outcome.first
    assert s.status == "succeeded"
    assert s.rows_read == len(_sample_records())
    assert s.load_quarantined == 5
    # SHOW / SET / USE / DESCRIBE noise is counted, not lost; plain SELECTs are kept for their
    # reads (activity.keep_reads)
    assert s.rows_not_relevant > 40
    assert s.rows_read == s.load_quarantined + s.rows_not_relevant + s.rows_relevant
    assert s.distinct_statements < s.rows_relevant  # daily statements collapse to one parse
    assert s.parsed_statements == s.distinct_statements
    assert sum(s.by_status.values()) == s.distinct_statements


def _table_edges(outcome: Outcome, edge_kind: str) -> set[tuple[str, str]]:
    return {
        (r.source_table, r.target_table)
        for r in outcome.after_first["table_lineage"]
        if r.edge_kind == edge_kind
    }


def test_query_table_edges(outcome: Outcome) -> None:
    expected = {
        ("raw.orders", "staging.stg_orders"),  # INSERT OVERWRITE
        ("raw.customers", "staging.stg_customers"),  # INSERT INTO
        ("raw.order_items", "tmp.order_items_daily"),  # CTAS of a temp staging table
        ("staging.stg_orders", "marts.fct_sales"),  # INSERT … JOIN
        ("tmp.order_items_daily", "marts.fct_sales"),
        ("staging.stg_customers", "marts.dim_customer"),  # MERGE
        ("analytics.raw.web_events", "analytics.staging.web_sessions"),  # CTAS … COPY GRANTS
        ("analytics.raw.web_events", "analytics.marts.channel_revenue"),  # Snowflake INSERT
        ("staging.stg_orders", "marts.recent_orders"),  # script through a temporary view
    }
    assert expected <= _table_edges(outcome, "query")


def test_daily_statement_accumulates_first_last_seen_and_occurrences(outcome: Outcome) -> None:
    [edge] = [
        r
        for r in outcome.after_first["table_lineage"]
        if (r.source_table, r.target_table, r.edge_kind)
        == ("raw.orders", "staging.stg_orders", "query")
    ]
    assert edge.occurrences == 7  # seven days, seven log rows, one fingerprint
    assert edge.first_seen == datetime(2024, 3, 1, 2, 0, 0)
    assert edge.last_seen == datetime(2024, 3, 7, 2, 0, 6)


def test_view_edges_come_from_the_newest_definition_only(outcome: Outcome) -> None:
    views = {
        (r.source_table, r.target_table, r.object_name)
        for r in outcome.after_first["table_lineage"]
        if r.edge_kind == "view"
    }
    assert ("marts.fct_sales", "reports.daily_revenue", "reports.daily_revenue") in views
    assert ("marts.dim_customer", "reports.daily_revenue", "reports.daily_revenue") in views
    assert ("marts.fct_sales", "reports.top_customers", "reports.top_customers") in views
    # the first definition of reports.daily_revenue read staging.stg_orders; it was replaced
    assert not any(s == "staging.stg_orders" and t == "reports.daily_revenue" for s, t, _ in views)


def test_procedure_body_lineage(outcome: Outcome) -> None:
    procedures = {
        (r.source_table, r.target_table, r.object_name)
        for r in outcome.after_first["table_lineage"]
        if r.edge_kind == "procedure"
    }
    # INSERT INTO analytics.marts.sessions_daily … FROM analytics.staging.web_sessions inside $$…$$
    assert (
        "analytics.staging.web_sessions",
        "analytics.marts.sessions_daily",
        "analytics.marts.refresh_sessions",
    ) in procedures


def _direct_column_edges(outcome: Outcome, target_table: str) -> dict[tuple[str, str], str]:
    return {
        (f"{r.source_table}.{r.source_column}", r.target_column): r.transformation_subtype
        for r in outcome.after_first["column_lineage"]
        if r.target_table == target_table and r.transformation_type == "DIRECT"
    }


def test_column_edges_of_simple_statements(outcome: Outcome) -> None:
    stg_orders = _direct_column_edges(outcome, "staging.stg_orders")
    assert set(stg_orders) == {
        ("raw.orders.order_id", "order_id"),
        ("raw.orders.customer_id", "customer_id"),
        ("raw.orders.order_ts", "order_date"),  # CAST(order_ts AS DATE) AS order_date
        ("raw.orders.amount", "amount"),
    }
    assert stg_orders[("raw.orders.order_id", "order_id")] == "IDENTITY"
    assert stg_orders[("raw.orders.amount", "amount")] == "IDENTITY"
    stg_customers = _direct_column_edges(outcome, "staging.stg_customers")
    assert stg_customers[("raw.customers.email", "email")] == "TRANSFORMATION"  # lower(email)
    assert stg_customers[("raw.customers.country", "country")] == "IDENTITY"
    revenue = _direct_column_edges(outcome, "reports.daily_revenue")
    assert revenue[("marts.fct_sales.amount", "revenue")] == "AGGREGATION"  # SUM(s.amount)
    dim = _direct_column_edges(outcome, "marts.dim_customer")
    assert (
        dim[("staging.stg_customers.email", "email")] == "IDENTITY"
    )  # MERGE … SET t.email = s.email


def test_malformed_rows_are_quarantined_with_reasons(outcome: Outcome) -> None:
    rows = outcome.after_first["quarantine"]
    load = sorted((r.source_file.split(":")[0], r.reason) for r in rows if r.stage == "load")
    assert load == [
        ("snowflake_history", "null or empty query_text"),
        ("snowflake_history", "unparsable start_time (expected format yyyy-MM-dd HH:mm:ss.SSS)"),
        ("spark_history", "corrupt record"),
        ("spark_history", "null or empty query_text"),
        ("spark_history", "unparsable start_time (expected format yyyy-MM-dd'T'HH:mm:ss'Z')"),
    ]
    parse = {r.masked_record: r for r in rows if r.stage == "parse"}
    for truncated in ("INSERT OVERWRITE TABLE", "CREATE TABLE AS SELECT * FROM WHERE"):
        assert truncated in parse, sorted(parse)
        assert parse[truncated].reason.startswith("parse failed")
        assert parse[truncated].fingerprint
    assert len({r.quarantine_id for r in rows}) == len(rows)


def _literals() -> set[str]:
    """Every string literal and every number of 3+ characters in the sample's statements.

    Numbers of one or two characters are left out: they occur naturally in names and settings
    around the data (``v2``, ``local[2]``, ``4`` shuffle partitions, path segments of temporary
    folders), so finding them says nothing about a leak. Every value the sample varies from day
    to day (dates, ids, thresholds) is longer.
    """
    found: set[str] = set()
    for record in _sample_records():
        text = record.get("query_text") or ""
        strings = re.findall(r"'((?:[^'\\]|\\.|'')*)'", text)
        found.update(s for s in strings if s.strip())
        no_strings = re.sub(r"'(?:[^'\\]|\\.|'')*'", " ", text)
        numbers = re.findall(r"(?<![A-Za-z0-9_.$@])[0-9]+(?:\.[0-9]+)?(?![A-Za-z0-9_])", no_strings)
        found.update(n for n in numbers if len(n) >= 3)
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Row):
        for v in value.asDict(recursive=False).values():
            yield from _strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def test_no_literal_from_the_log_is_stored_anywhere(outcome: Outcome) -> None:
    literals = _literals()
    assert {"2024-03-01", "cancelled", "1250", "77777", "0.85", "paid_search"} <= literals
    stored = [s for rows in outcome.after_second.values() for r in rows for s in _strings(r)]
    assert len(stored) > 1000
    leaks = {
        lit
        for lit in literals
        for s in stored
        if re.search(rf"(?<![A-Za-z0-9]){re.escape(lit)}(?![A-Za-z0-9])", s)
    }
    assert leaks == set()
    # and the masked text is what the Python masker produces
    masked = {r.masked_sql for r in outcome.after_first["parsed_statements"]}
    assert (
        fp.normalized_masked_sql("INSERT INTO tab SELECT 1 FROM t WHERE d = '2024-03-01'", "spark")
        == "INSERT INTO tab SELECT ? FROM t WHERE d = ?"
    )
    assert any(
        m.startswith("INSERT OVERWRITE staging.stg_orders SELECT") and "DATE ?" in m for m in masked
    )


def test_second_run_changes_no_lineage_table(
    outcome: Outcome, spark: SparkSession, assert_frames_equal: Any
) -> None:
    assert outcome.second.status == "succeeded"
    assert outcome.second.parsed_statements == 0  # incremental: same parser_version
    assert outcome.second.table_edges_written == 0
    assert outcome.second.column_edges_written == 0
    assert outcome.second.quarantined_new == 0
    for table in LINEAGE_TABLES:
        schema = TABLES[table].schema
        assert_frames_equal(
            spark.createDataFrame(outcome.after_second[table], schema),
            spark.createDataFrame(outcome.after_first[table], schema),
        )
    # a run that found nothing new leaves no row: lineage_runs records every run that changed
    # a table (or failed)
    assert outcome.first.changed and not outcome.second.changed
    runs = outcome.after_second["lineage_runs"]
    assert [r.run_id for r in runs] == [outcome.first.run_id]
    # the files and settings are the first run's: the second read nothing
    assert outcome.second.unchanged_since == outcome.first.run_id
    assert outcome.second.rows_read == 0 and runs[0].rows_read == outcome.first.rows_read
