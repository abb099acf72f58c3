"""Pathological statements in the parse UDF: too large → skipped, too slow → timeout; the batch
around them is parsed normally (no stage stalls on them)."""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.spark.extract.transforms import (
    FINGERPRINT,
    MASKED_SQL,
    PARSE_RESULT,
    PARSE_TEXT,
    parse_statements,
)

# ~0.55 MB: seconds of sqlglot work, each parser tier far beyond the 0.2 s limit below (an
# 8,000-term statement, ~0.13 MB, now parses within 0.2 s per tier on a fast machine)
WIDE = "INSERT INTO db.wide SELECT " + " + ".join(f"(a{i} * {i})" for i in range(30000)) + " FROM s"
# ~1.2 MB: over max_sql_chars
HUGE = "INSERT INTO db.huge SELECT " + ", ".join(f"c{i}" for i in range(150000)) + " FROM s"


def test_too_large_and_too_slow_statements_are_recorded_not_stalled(spark: SparkSession) -> None:
    rows = [
        ("ok1", "INSERT INTO db.a SELECT x FROM db.b", "spark"),
        ("wide", WIDE, "spark"),
        ("huge", HUGE, "spark"),
        ("ok2", "INSERT INTO db.c SELECT y FROM db.d", "spark"),
    ]
    statements = spark.createDataFrame(
        [(f, sql, sql, d) for f, sql, d in rows],
        f"{FINGERPRINT} string, {PARSE_TEXT} string, {MASKED_SQL} string, dialect string",
    ).select(
        "*",
        F.lit(None).cast("string").alias("default_database"),
        F.lit(None).cast("string").alias("default_schema"),
    )
    options = ParserOptions(timeout_seconds=0.2, max_sql_chars=1_000_000, use_sqlfluff=False)
    parsed = parse_statements(statements, options, 1)  # one partition: all in one batch
    results = {r[FINGERPRINT]: r[PARSE_RESULT] for r in parsed.collect()}
    assert results["ok1"].status == "ok" and results["ok2"].status == "ok"
    assert results["huge"].status == "skipped"
    assert results["huge"].error_kind == "TOO_LARGE"
    assert results["wide"].status == "timeout"
    assert results["wide"].error_kind == "TIMEOUT"
    assert results["wide"].error
