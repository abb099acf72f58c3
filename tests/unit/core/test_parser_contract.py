"""The parser's contract with the Spark UDF: never raises, never mutates, never leaks literals."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lineage_udfs.core.enums import ErrorKind, ParserName, ParseStatus, StatementType
from lineage_udfs.core.fingerprint import normalized_masked_sql
from lineage_udfs.core.models import ParseResult
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.records import PARSE_RESULT_FIELDS, to_record

GARBAGE = [
    None,
    "",
    "   \n\t ",
    ";;;",
    "SELECT",
    "SELECT * FROM",
    "INSERT INTO",
    ")))(((",
    "SELECT 'unterminated",
    "\x00\x01\x02 binary",
    "DROP",
    "WITH a AS (SELECT 1) ",
    "MERGE INTO t USING",
    "SELECT " + "(" * 400 + "1" + ")" * 400,
    "SELECT a FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(3000)),
    "😀 SELECT 1 FROM t",
    "CREATE PROCEDURE p() BEGIN IF x THEN END",
]


@pytest.mark.parametrize("sql", GARBAGE, ids=range(len(GARBAGE)))
@pytest.mark.parametrize("dialect", [None, "spark", "tsql", "snowflake", "no-such-dialect"])
def test_parse_never_raises_on_garbage(sql: str | None, dialect: str | None) -> None:
    result = LineageParser().parse(sql, dialect=dialect)
    assert isinstance(result, ParseResult)
    assert set(to_record(result)) == set(PARSE_RESULT_FIELDS)
    json.dumps(to_record(result))


def test_parse_empty_is_skipped() -> None:
    result = LineageParser().parse("  ")
    assert result.status == ParseStatus.SKIPPED
    assert result.failure is not None and result.failure.kind == ErrorKind.EMPTY


def test_parse_too_large_is_skipped() -> None:
    parser = LineageParser(ParserOptions(max_sql_chars=100))
    result = parser.parse("SELECT a FROM t WHERE " + "a = 1 AND " * 50 + "1 = 1")
    assert result.status == ParseStatus.SKIPPED
    assert result.failure is not None and result.failure.kind == ErrorKind.TOO_LARGE


def test_parse_non_string_input_does_not_raise() -> None:
    result = LineageParser().parse(12345)  # type: ignore[arg-type]
    assert result.status == ParseStatus.SKIPPED


def test_parse_does_not_mutate_inputs() -> None:
    catalog = {"db.s": {"a": "int", "b": "int"}}
    snapshot = json.dumps(catalog)
    options = ParserOptions()
    parser = LineageParser(options, catalog=catalog)
    sql = "INSERT INTO db.t SELECT * FROM db.s"
    parser.parse(sql, dialect="spark")
    assert json.dumps(catalog) == snapshot
    assert sql == "INSERT INTO db.t SELECT * FROM db.s"
    assert dataclasses.asdict(options) == dataclasses.asdict(ParserOptions())


def test_parse_column_failure_keeps_table_edges() -> None:
    result = LineageParser().parse("INSERT INTO t SELECT a FROM s", dialect="spark")
    assert result.table_edges and result.status == ParseStatus.OK


def test_session_statement_is_not_an_error() -> None:
    result = LineageParser().parse("USE db1", dialect="spark")
    assert result.failure is None
    assert result.statement_type == StatementType.SESSION
    assert result.sources == () and result.targets == ()


def test_fallback_tier_is_named_when_sqlglot_fails() -> None:
    result = LineageParser().parse("INSERT INTO t SELECT a FROM s WHERE a = = 1", dialect="spark")
    assert result.parser in (ParserName.SQLFLUFF, ParserName.SQLPARSE, ParserName.NONE)
    if result.parser != ParserName.NONE:
        assert result.targets == ("t",)


SECRET_CASES = [
    "SELECT 'secret_pw_1', 424242 FROM t",
    "INSERT INTO t SELECT * FROM s WHERE name = 'secret_pw_1' AND n > 424242",
    "UPDATE t SET a = 'secret_pw_1' WHERE id = 424242",
    "SELECT x FROM t WHERE d > DATE '2031-12-25' AND ts < INTERVAL '424242' DAY",
    "SELECT 0xCAFE42 AS k, x'DEADBEEF' AS h FROM t",
    "SELECT CASE WHEN a = 'secret_pw_1' THEN 424242 END FROM t",
    "SET my.password = 'secret_pw_1'",
    "INSERT INTO t VALUES ('secret_pw_1', 424242)",
    "SELECT * FROM t WHERE a = 'secret_pw_1",
    "SELECT * FROM t WHERE a = 'secret_pw_1' AND AND",
    "INSERT INTO t SELECT 'secret_pw_1' SELECT 424242",
    "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED AND s.k = 'secret_pw_1' "
    "THEN UPDATE SET t.v = 424242",
    "SELECT a AS x FROM t WHERE b IN ('secret_pw_1', 'DEADBEEF', 'CAFE42')",
]
SECRETS = ("secret_pw_1", "424242", "2031-12-25", "deadbeef", "cafe42")


@pytest.mark.parametrize("sql", SECRET_CASES)
@pytest.mark.parametrize("dialect", ["spark", "postgres", "tsql", "ansi"])
def test_no_literal_leaks_into_any_output_field(sql: str, dialect: str) -> None:
    result = LineageParser().parse(sql, dialect=dialect)
    record = to_record(result)
    record["result_columns"] = [dataclasses.asdict(r) for r in result.result_columns]
    text = json.dumps(record).lower()
    for secret in SECRETS:
        assert secret not in text, (secret, record)


def test_masked_sql_replaces_every_literal() -> None:
    result = LineageParser().parse(
        "SELECT a FROM t WHERE b = 'x' AND c > 3 AND d = DATE '2020-01-01'", dialect="spark"
    )
    assert result.masked_sql == "SELECT a FROM t WHERE b = ? AND c > ? AND d = DATE ?"


def test_masked_sql_is_the_jobs_masking() -> None:
    """One masking everywhere: the parser's masked text is what the Spark job stores."""
    sql = "INSERT INTO t SELECT a FROM parquet.`s3://b/k` WHERE x = 'v' -- note\n;"
    result = LineageParser().parse(sql, dialect="spark")
    assert result.masked_sql == normalized_masked_sql(sql, "spark")
    assert result.masked_sql == "INSERT INTO t SELECT a FROM parquet.? WHERE x = ?"


def test_masking_is_skipped_when_the_caller_has_the_masked_text() -> None:
    result = LineageParser().parse("INSERT INTO t SELECT a FROM s WHERE b = 'x'", mask=False)
    assert result.masked_sql == ""
    assert (result.sources, result.targets) == (("s",), ("t",))


def test_masked_sql_drops_comments_and_unparsed_text() -> None:
    parser = LineageParser()
    result = parser.parse("SELECT a FROM t -- token secret_pw_1\nWHERE b = TRUE", dialect="spark")
    assert "secret_pw_1" not in result.masked_sql
    assert result.masked_sql == "SELECT a FROM t WHERE b = TRUE"  # booleans are not data
    command = parser.parse("ADD JAR '/opt/jars/secret_pw_1.jar'", dialect="spark")
    assert "secret_pw_1" not in command.masked_sql


def test_masked_sql_uses_question_marks_in_every_dialect() -> None:
    sql = "COPY t FROM 's3://bucket/key' IAM_ROLE 'arn'"
    result = LineageParser().parse(sql, dialect="redshift")
    assert result.masked_sql == "COPY t FROM ? IAM_ROLE ?"


PATH_CASES = [
    ("spark", "INSERT INTO t SELECT a FROM parquet.`/secret_pw_1/x`"),
    ("databricks", "SELECT a FROM delta.`s3://secret_pw_1/p` d JOIN s ON d.id = s.id"),
    ("duckdb", "SELECT a FROM 's3://secret_pw_1/x.parquet'"),
    ("duckdb", "SELECT a FROM read_csv('/secret_pw_1/x.csv')"),
    ("hive", "LOAD DATA INPATH '/secret_pw_1/x' INTO TABLE t"),
    ("hive", "INSERT OVERWRITE DIRECTORY '/secret_pw_1' SELECT a FROM s"),
    ("snowflake", "COPY INTO t FROM 's3://secret_pw_1/p'"),
    ("redshift", "UNLOAD ('select a from s') TO 's3://secret_pw_1/p_' IAM_ROLE 'r'"),
    ("mysql", "SELECT a INTO OUTFILE '/secret_pw_1.csv' FROM t"),
    ("mysql", "LOAD DATA INFILE '/secret_pw_1.csv' INTO TABLE t"),
    ("bigquery", "EXPORT DATA OPTIONS (uri = 'gs://secret_pw_1/*.csv') AS SELECT a FROM d.s"),
    ("bigquery", "LOAD DATA INTO d.t FROM FILES (uris = ['gs://secret_pw_1/x.csv'])"),
    ("clickhouse", "INSERT INTO FUNCTION s3('https://h/secret_pw_1') SELECT a FROM s"),
    ("clickhouse", "SELECT a FROM url('https://h/secret_pw_1/x.csv', CSV)"),
]


@pytest.mark.parametrize(("dialect", "sql"), PATH_CASES)
def test_file_locations_never_leak_when_file_datasets_is_off(dialect: str, sql: str) -> None:
    result = LineageParser(ParserOptions(file_datasets=False)).parse(sql, dialect=dialect)
    record = to_record(result)
    record["result_columns"] = [dataclasses.asdict(r) for r in result.result_columns]
    assert "secret_pw_1" not in json.dumps(record).lower(), record


# A location is a dataset name by default; what varies per run or authenticates never shows.
LOCATION_SECRET_CASES = [
    ("redshift", "COPY t FROM 's3://AKIA_secret_pw_1:secret_pw_2@bucket/k?sig=secret_pw_3'"),
    ("hive", "LOAD DATA INPATH '/landing/o/dt=secret_pw_1/h=secret_pw_2' INTO TABLE t"),
    ("duckdb", "INSERT INTO t SELECT a FROM read_csv('https://h/x.csv?token=secret_pw_1')"),
    ("snowflake", "COPY INTO t FROM 'azure://acct.blob/c/p?sv=secret_pw_1&sig=secret_pw_2'"),
]


@pytest.mark.parametrize(("dialect", "sql"), LOCATION_SECRET_CASES)
def test_location_credentials_and_partition_values_never_leak(dialect: str, sql: str) -> None:
    result = LineageParser().parse(sql, dialect=dialect)
    assert result.sources, result  # the location itself is reported
    record = to_record(result)
    assert "secret_pw" not in json.dumps(record).lower(), record


EMBEDDED_CASES = [
    (
        "redshift",
        "UNLOAD ('select a from t where c = ''secret_pw_1''') TO 's3://b/p/' "
        "IAM_ROLE 'arn:aws:iam::424242:role/r'",
    ),
    ("snowflake", "EXECUTE IMMEDIATE 'INSERT INTO t SELECT ''secret_pw_1'', a FROM s'"),
    ("bigquery", "EXECUTE IMMEDIATE \"SELECT 'secret_pw_1' AS x, a FROM d.s WHERE n = 424242\""),
    (
        "tsql",
        "EXEC sp_executesql N'UPDATE t SET a = ''secret_pw_1'' WHERE id = @i', "
        "N'@i int', @i = 424242",
    ),
    ("snowflake", "EXECUTE IMMEDIATE 'INSERT INTO t SELECT a FROM s' || 'secret_pw_1'"),
]


@pytest.mark.parametrize(("dialect", "sql"), EMBEDDED_CASES)
def test_embedded_query_literals_never_leak(dialect: str, sql: str) -> None:
    result = LineageParser().parse(sql, dialect=dialect)
    record = to_record(result)
    record["result_columns"] = [dataclasses.asdict(r) for r in result.result_columns]
    text = json.dumps(record).lower()
    for secret in SECRETS:
        assert secret not in text, (secret, record)


def test_embedded_query_gives_lineage() -> None:
    result = LineageParser().parse(EMBEDDED_CASES[1][1], dialect="snowflake")
    assert (result.sources, result.targets) == (("s",), ("t",))
