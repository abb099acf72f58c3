"""Lineage-table rows for the emission tests: five log rows, four parses, four column edges.

q1, q2 (CTAS, one failed run), q3 (a two-statement procedure), q4 (a plain SELECT, not
emitted), q5 (a statement that failed to parse).
"""

from __future__ import annotations

from datetime import datetime

T0, T1 = datetime(2026, 3, 2, 8, 0, 0), datetime(2026, 3, 2, 8, 1, 0)
SNOW = "snowflake://acme-prod"

QUERIES = [
    dict(
        query_id="q1",
        fingerprint="fp_ctas",
        start_time=T0,
        end_time=T1,
        status="success",
        source_system=SNOW,
        object_kind="query",
        default_database="an",
        default_schema="pub",
    ),
    dict(
        query_id="q2",
        fingerprint="fp_ctas",
        start_time=T1,
        end_time=T1,
        status="failed",
        source_system=SNOW,
        object_kind="query",
        default_database="an",
        default_schema="pub",
    ),
    dict(
        query_id="q3",
        fingerprint="fp_proc",
        start_time=T0,
        end_time=T1,
        status="success",
        source_system=SNOW,
        object_kind="procedure",
        object_name="an.etl.load",
        default_database="an",
        default_schema="pub",
    ),
    dict(
        query_id="q4",
        fingerprint="fp_sel",
        start_time=T0,
        end_time=T1,
        status="success",
        source_system=SNOW,
        object_kind="query",
        default_database="an",
        default_schema="pub",
    ),
    dict(
        query_id="q5",
        fingerprint="fp_bad",
        start_time=T0,
        end_time=T1,
        status="success",
        source_system=SNOW,
        object_kind="query",
        default_database="an",
        default_schema="pub",
    ),
]
PARSED = [
    dict(
        fingerprint="fp_ctas",
        dialect="snowflake",
        statement_type="CTAS",
        status="ok",
        masked_sql="CREATE TABLE mart.d AS SELECT a, b FROM raw.o WHERE c = ?",
        sources=["an.raw.o"],
        targets=["an.mart.d"],
        statements=[],
    ),
    dict(
        fingerprint="fp_proc",
        dialect="snowflake",
        statement_type="SCRIPT",
        status="ok",
        masked_sql="INSERT INTO tmp SELECT a FROM raw.o; INSERT INTO mart.e SELECT a FROM tmp",
        sources=["an.raw.o"],
        targets=["an.mart.e"],
        statements=[
            dict(
                index=0,
                statement_type="INSERT",
                status="ok",
                sources=["an.raw.o"],
                targets=["an.pub.tmp"],
            ),
            dict(
                index=1,
                statement_type="INSERT",
                status="ok",
                sources=["an.pub.tmp"],
                targets=["an.mart.e"],
            ),
        ],
    ),
    dict(
        fingerprint="fp_sel",
        dialect="snowflake",
        statement_type="SELECT",
        status="ok",
        masked_sql="SELECT a FROM raw.o WHERE b = ?",
        sources=["an.raw.o"],
        targets=[],
        statements=[],
    ),
    dict(
        fingerprint="fp_bad",
        dialect="snowflake",
        statement_type="UNKNOWN",
        status="failed",
        masked_sql="INSERT INTO SELEC ?",
        error_kind="SYNTAX",
        error="bad token at col 13",
        sources=[],
        targets=[],
        statements=[],
    ),
]
EDGES = [
    dict(
        fingerprint="fp_ctas",
        source_table="an.raw.o",
        source_column="a",
        target_table="an.mart.d",
        target_column="a",
        transformation_type="DIRECT",
        transformation_subtype="IDENTITY",
    ),
    dict(
        fingerprint="fp_ctas",
        source_table="an.raw.o",
        source_column="b",
        target_table="an.mart.d",
        target_column="b",
        transformation_type="DIRECT",
        transformation_subtype="MASKED",
    ),
    dict(
        fingerprint="fp_ctas",
        source_table="an.raw.o",
        source_column="c",
        target_table="an.mart.d",
        target_column="a",
        transformation_type="INDIRECT",
        transformation_subtype="FILTER",
    ),
    dict(
        fingerprint="fp_proc",
        source_table="an.raw.o",
        source_column="a",
        target_table="an.mart.e",
        target_column="a",
        transformation_type="DIRECT",
        transformation_subtype="IDENTITY",
    ),
]
# q1, q2: 2 events each; q3: parent 2 + 2 children x 2; q4 SELECT skipped; q5: 2
EXPECTED_EVENTS = 2 + 2 + 6 + 2
