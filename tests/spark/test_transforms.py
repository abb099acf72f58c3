"""Spark twins of the pure-Python fingerprint module, and the parse UDF contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core import fingerprint as fp
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.records import PARSE_RESULT_FIELDS
from lineage_udfs.settings import load_settings
from lineage_udfs.spark.extract.readers import LOAD_ERROR, read_query_logs
from lineage_udfs.spark.extract.transforms import (
    FINGERPRINT,
    IS_RELEVANT,
    MASKED_RECORD,
    MASKED_SQL,
    PARSE_RESULT,
    PARSE_TEXT,
    QUERY_BYTES,
    parse_statements,
    prepare_rows,
    prepare_statements,
    with_default_dialect,
)
from lineage_udfs.spark.storage.schemas import PARSE_RESULT_SCHEMA, UDF_RESULT_SCHEMA

ROOT = Path(__file__).resolve().parents[2]


def _sample_log(spark: SparkSession) -> Any:
    settings = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    sources = [s.model_copy(update={"path": str(ROOT / s.path)}) for s in settings.sources]
    return with_default_dialect(read_query_logs(spark, sources), "spark")


def test_spark_masking_and_fingerprints_equal_python_on_the_sample_log(
    spark: SparkSession,
) -> None:
    prepared = prepare_statements(_sample_log(spark).where(F.col(LOAD_ERROR).isNull()))
    rows = prepared.select(
        "query_text",
        "dialect",
        "default_database",
        "default_schema",
        "object_kind",
        PARSE_TEXT,
        MASKED_SQL,
        FINGERPRINT,
        IS_RELEVANT,
    ).collect()
    assert len(rows) > 200
    mismatches = []
    for r in rows:
        expected = (
            fp.clean_statement(r.query_text),
            fp.normalized_masked_sql(r.query_text, r.dialect),
            fp.fingerprint(
                r.query_text, r.dialect, r.default_database, r.default_schema, r.object_kind
            ),
            fp.is_lineage_relevant(
                fp.normalized_masked_sql(r.query_text, r.dialect), r.object_kind
            ),
        )
        actual = (r[PARSE_TEXT], r[MASKED_SQL], r[FINGERPRINT], r[IS_RELEVANT])
        if actual != expected:
            mismatches.append((r.query_text, actual, expected))
    assert mismatches == []
    # the sample has both kinds, so the comparison covered both branches of the prefilter
    assert {r[IS_RELEVANT] for r in rows} == {True, False}


def test_spark_masking_equals_python_on_edge_cases(spark: SparkSession) -> None:
    cases = [
        ("spark", "SELECT 'it''s', 'a\\'b', \"dq\", `bt`, 0x1F, X'FF', 1.5e3, 10L FROM t1"),
        ("snowflake", "SELECT \"Id\", $$x 'y'$$, $t$z$t$ FROM tab_2024 -- c 'q'\n/* 99 */;"),
        ("postgres", "INSERT INTO a SELECT E'\\n', INTERVAL '3 days', -7 FROM b WHERE c = 'open"),
        ("spark", "CREATE OR REPLACE TABLE a COPY GRANTS AS SELECT ü, '€' FROM b ; \n"),
        ("databricks", "INSERT INTO t SELECT `a` FROM delta.`s3://b/dt=1` d, parquet.`/m/x`"),
        ("oracle", "CREATE USER s IDENTIFIED BY tiger1 DEFAULT TABLESPACE u"),
        ("snowflake", 'ALTER USER u SET PASSWORD = "Hunter 2", pwd=x; SELECT password FROM t'),
        ("snowflake", "COPY INTO t FROM @s CREDENTIALS=(aws_key_id=AKIA1 aws_secret_key=a/b+c)"),
        ("postgres", "ALTER ROLE r PASSWORD /* c */ $q$a b$q$ VALID UNTIL x"),
        ("spark", "CREATE TABLE t USING jdbc OPTIONS (password => p@ss!, api_key `k`) AS x"),
        ("mysql", "ALTER USER a IDENTIFIED WITH caching_sha2_password BY hunter2"),
    ]
    frame = spark.createDataFrame(cases, "dialect string, query_text string")
    rows = prepare_statements(
        frame.withColumn("default_database", F.lit(None).cast("string"))
        .withColumn("default_schema", F.lit(None).cast("string"))
        .withColumn("object_kind", F.lit("query"))
    ).collect()
    for r in rows:
        assert r[MASKED_SQL] == fp.normalized_masked_sql(r.query_text, r.dialect), r.query_text
        assert r[FINGERPRINT] == fp.fingerprint(r.query_text, r.dialect), r.query_text


def test_parse_udf_returns_the_declared_struct_and_never_raises(spark: SparkSession) -> None:
    assert set(PARSE_RESULT_FIELDS) == set(PARSE_RESULT_SCHEMA.fieldNames())
    statements = spark.createDataFrame(
        [
            (
                "f1",
                "INSERT INTO db.dst SELECT a FROM db.src WHERE b = 'secret-42'",
                "INSERT INTO db.dst SELECT a FROM db.src WHERE b = ?",
                "spark",
            ),
            ("f2", "SELEC FROM WHERE 'secret-43'", "SELEC FROM WHERE ?", "spark"),
            ("f3", "", "", "spark"),
            ("f4", None, None, None),
        ],
        f"{FINGERPRINT} string, {PARSE_TEXT} string, {MASKED_SQL} string, dialect string",
    ).select(
        "*",
        F.lit(None).cast("string").alias("default_database"),
        F.lit(None).cast("string").alias("default_schema"),
    )
    parsed = parse_statements(statements, ParserOptions(), 2)
    assert parsed.schema[PARSE_RESULT].dataType == UDF_RESULT_SCHEMA
    assert set(UDF_RESULT_SCHEMA.fieldNames()) == set(PARSE_RESULT_FIELDS) - {MASKED_SQL}
    assert PARSE_TEXT not in parsed.columns
    rows = {r[FINGERPRINT]: r for r in parsed.collect()}
    results = {fp: r[PARSE_RESULT] for fp, r in rows.items()}
    assert set(results) == {"f1", "f2", "f3", "f4"}
    ok = results["f1"]
    assert ok.status == "ok"
    assert [(e.source_table, e.target_table) for e in ok.table_edges] == [("db.src", "db.dst")]
    assert rows["f1"][MASKED_SQL] == "INSERT INTO db.dst SELECT a FROM db.src WHERE b = ?"
    assert results["f2"].status == "failed"
    for row in rows.values():  # the output never carries the original text
        assert "secret" not in str(row.asDict(recursive=True))


def test_prepare_rows_keeps_sql_text_only_where_a_later_step_reads_it(spark: SparkSession) -> None:
    rows = {r.query_id: r for r in prepare_rows(_sample_log(spark)).collect()}
    assert "query_text" not in next(iter(rows.values())).asDict()
    relevant = [r for r in rows.values() if r[IS_RELEVANT]]
    noise = [r for r in rows.values() if r[LOAD_ERROR] is None and not r[IS_RELEVANT]]
    failures = [r for r in rows.values() if r[LOAD_ERROR] is not None]
    assert relevant and noise and failures
    assert all(r[PARSE_TEXT] and r[MASKED_SQL] and r[FINGERPRINT] for r in relevant)
    assert all(r[PARSE_TEXT] is None and r[MASKED_SQL] is None for r in noise + failures)
    assert all(r[FINGERPRINT] for r in noise)  # fingerprinted, then dropped as not relevant
    assert all(r[FINGERPRINT] is None for r in failures)
    assert any(r[MASKED_RECORD] for r in failures)  # the corrupt JSON line, masked
    assert all(r[MASKED_RECORD] is None for r in relevant + noise)
    assert all(r[QUERY_BYTES] >= 0 for r in rows.values())
    assert sum(r[QUERY_BYTES] for r in relevant) > 1000
