"""OpenLineage datasets: case-sensitive Snowflake names kept apart, no dataset from a failed
parse or a misread keyword, no invented 1970 times."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from cases import CTAS_PARSED, CTAS_QUERY, OPTIONS

from lineage_udfs.emit.events import ParsedStatement, build_run_events
from lineage_udfs.emit.naming import NamingContext, dataset_identity


def test_quoted_snowflake_identifier_is_not_merged_with_its_upper_cased_twin() -> None:
    ctx = NamingContext("snowflake://acme-prod", "lw", "analytics", "public")
    quoted = dataset_identity("analytics.public.MyTab", ctx)
    unquoted = dataset_identity("analytics.public.mytab", ctx)
    assert unquoted == ("snowflake://acme-prod", "ANALYTICS.PUBLIC.MYTAB")
    assert quoted == ("snowflake://acme-prod", "ANALYTICS.PUBLIC.MyTab")
    partial = NamingContext("snowflake://acct", "lw")
    assert dataset_identity("MyTab", partial)[1] == "MyTab"


def test_row_without_times_is_not_dated_1970() -> None:
    query = replace(CTAS_QUERY, start_time=None, end_time=None)
    before = datetime.now(UTC) - timedelta(seconds=5)
    events = build_run_events(query, CTAS_PARSED, options=OPTIONS)
    assert events
    for event in events:
        at = datetime.fromisoformat(event.eventTime.replace("Z", "+00:00"))
        assert at >= before, event.eventTime


def _datasets(parsed: ParsedStatement) -> set[str]:
    names: set[str] = set()
    for event in build_run_events(CTAS_QUERY, parsed, options=OPTIONS):
        names |= {d.name for d in (*event.inputs, *event.outputs)}
    return names


def test_no_dataset_from_a_failed_parse_or_a_misread_keyword() -> None:
    failed = replace(CTAS_PARSED, status="failed", error_kind="SYNTAX", error="bad")
    assert _datasets(failed) == set()
    misread = replace(
        CTAS_PARSED,
        statement_type="MERGE",
        status="partial",
        sources=("analytics.raw.orders", "when"),
        targets=("analytics.mart.daily",),
    )
    names = _datasets(misread)
    assert "WHEN" not in {n.upper().split(".")[-1] for n in names}
    assert "ANALYTICS.RAW.ORDERS" in names


def _parsed(sql: str, dialect: str, catalog: str | None = None) -> ParsedStatement:
    from lineage_udfs.core.options import ParserOptions
    from lineage_udfs.core.parser import LineageParser
    from lineage_udfs.core.records import PARSE_RESULT_FIELDS, parse_record

    parser = LineageParser(ParserOptions())
    record = parse_record(parser.parse(sql, dialect=dialect, default_catalog=catalog))
    fields = {f: getattr(record, f) for f in PARSE_RESULT_FIELDS}
    return ParsedStatement(fingerprint="fp_temp", dialect=dialect, **fields)


def _all_datasets(query: object, parsed: ParsedStatement) -> set[str]:
    options = replace(OPTIONS, emit_statement_runs=True)
    names: set[str] = set()
    for event in build_run_events(query, parsed, options=options):  # type: ignore[arg-type]
        names |= {d.name for d in (*event.inputs, *event.outputs)}
    return names


@pytest.mark.parametrize(
    ("sql", "dialect", "catalog", "expected"),
    [
        (
            "CREATE OR REPLACE TEMPORARY VIEW recent AS SELECT * FROM raw.events",
            "spark",
            None,
            {"raw.events"},
        ),
        ("CREATE TEMP TABLE t2 AS SELECT * FROM s.src", "snowflake", "db", {"DB.S.SRC"}),
        (
            "CREATE TEMP TABLE tmp AS SELECT * FROM ds.src; INSERT INTO ds.dst SELECT * FROM tmp",
            "bigquery",
            "project",
            {"project.ds.src", "project.ds.dst"},
        ),
    ],
    ids=["spark-temp-view", "snowflake-temp-table", "bigquery-script-temp-table"],
)
def test_temporary_objects_are_not_datasets(
    sql: str, dialect: str, catalog: str | None, expected: set[str]
) -> None:
    system = {"spark": "spark", "snowflake": "snowflake://acme", "bigquery": "bigquery"}[dialect]
    query = replace(CTAS_QUERY, source_system=system, default_database=catalog, default_schema=None)
    names = _all_datasets(query, _parsed(sql, dialect, catalog))
    assert names == expected
