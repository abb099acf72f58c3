"""Masking, cleaning, normalization, fingerprints and the relevance prefilter (pure Python)."""

from __future__ import annotations

import random
import re

import pytest

from lineage_udfs.core import fingerprint as fp

MASK_CASES = [
    # (id, dialect, sql, expected masked text)
    ("plain_string", "snowflake", "SELECT * FROM t WHERE a = 'x'", "SELECT * FROM t WHERE a = ?"),
    ("doubled_quote", "snowflake", "SELECT 'it''s' FROM t", "SELECT ? FROM t"),
    ("backslash_escape", "spark", r"SELECT 'a\'b', c FROM t", "SELECT ?, c FROM t"),
    ("dollar_quoted", "postgres", "SELECT $$it's$$, $tag$x$tag$ FROM t", "SELECT ?, ? FROM t"),
    (
        "digits_in_identifiers",
        "spark",
        "SELECT t1.a FROM tab_2024 t1",
        "SELECT t1.a FROM tab_2024 t1",
    ),
    ("numbers", "spark", "SELECT 10, 1.5, .5, 1e-3, 2.5E+10 FROM t", "SELECT ?, ?, ?, ?, ? FROM t"),
    (
        "hex_and_typed",
        "spark",
        "SELECT 0x1F, X'1F', DATE '2024-01-01', 10L, 1.5BD",
        "SELECT ?, ?, DATE ?, ?, ?",
    ),
    ("interval", "postgres", "SELECT now() - INTERVAL '3 days'", "SELECT now() - INTERVAL ?"),
    (
        "double_quote_identifier",
        "snowflake",
        'SELECT "Amount 1" FROM "T"',
        'SELECT "Amount 1" FROM "T"',
    ),
    ("double_quote_string_spark", "spark", 'SELECT "abc" FROM t', "SELECT ? FROM t"),
    ("double_quote_string_mysql", "mysql", 'SELECT "abc" FROM t', "SELECT ? FROM t"),
    ("double_quote_string_bigquery", "bigquery", 'SELECT "abc" FROM t', "SELECT ? FROM t"),
    ("backtick_identifier_kept", "spark", "SELECT `it's 1` FROM t", "SELECT `it's 1` FROM t"),
    (
        "backtick_path_masked",
        "databricks",
        "SELECT `a` FROM delta.`s3://b/dt=2024-01-01` JOIN parquet.`/mnt/x` USING (`a`)",
        "SELECT `a` FROM delta.? JOIN parquet.? USING (`a`)",
    ),
    ("comment_with_quote", "spark", "SELECT a -- it's 42\nFROM t", "SELECT a  \nFROM t"),
    ("string_with_comment_marks", "spark", "SELECT '--x', '/*y*/' FROM t", "SELECT ?, ? FROM t"),
    ("block_comment", "spark", "SELECT /* 'x' 99 */ a FROM t", "SELECT   a FROM t"),
    ("unterminated_string", "spark", "INSERT INTO t SELECT 'abc", "INSERT INTO t SELECT ?"),
    ("negative_number", "spark", "SELECT -42 FROM t", "SELECT -? FROM t"),
    ("word_starting_with_digit", "hive", "SELECT * FROM 2024_sales", "SELECT * FROM 2024_sales"),
    # credential clauses: the value is masked whatever its token type
    (
        "identified_by_word",
        "oracle",
        "CREATE USER s IDENTIFIED BY tiger1",
        "CREATE USER s IDENTIFIED BY  ?",
    ),
    (
        "identified_with_plugin_by",
        "mysql",
        "ALTER USER a IDENTIFIED WITH caching_sha2_password BY hunter2",
        "ALTER USER a IDENTIFIED WITH caching_sha2_password BY  ?",
    ),
    (
        "password_word",
        "postgres",
        "ALTER ROLE r PASSWORD hunter2 VALID UNTIL x",
        "ALTER ROLE r PASSWORD  ? VALID UNTIL x",
    ),
    (
        "password_equals_word",
        "snowflake",
        "ALTER USER u SET PASSWORD=Hunter_2",
        "ALTER USER u SET PASSWORD = ?",
    ),
    (
        "password_quoted_identifier",
        "snowflake",
        'ALTER USER u SET PASSWORD = "Hunter 2"',
        "ALTER USER u SET PASSWORD = ?",
    ),
    ("password_backtick", "spark", "OPTIONS (pwd `s3cr3t`)", "OPTIONS (pwd  ?)"),
    ("password_dollar", "postgres", "ALTER ROLE r PASSWORD $q$a b$q$", "ALTER ROLE r PASSWORD  ?"),
    (
        "password_after_comment",
        "postgres",
        "ALTER ROLE r PASSWORD /* c */ hunter2",
        "ALTER ROLE r PASSWORD  ?",
    ),
    (
        "aws_credentials_unquoted",
        "snowflake",
        "COPY INTO t FROM @s CREDENTIALS=(aws_key_id=AKIAX1 AWS_SECRET_KEY = ab/c+d aws_token=z)",
        "COPY INTO t FROM @s CREDENTIALS=(aws_key_id = ? AWS_SECRET_KEY = ? aws_token = ?)",
    ),
    (
        "azure_sas_and_options",
        "spark",
        "CREATE TABLE t USING jdbc OPTIONS (url ?, password => p@ss!, azure_sas_token: sv=1&sig=x)",
        "CREATE TABLE t USING jdbc OPTIONS (url ?, password => ?, azure_sas_token : ?)",
    ),
    (
        "connection_name",
        "bigquery",
        "SELECT 1 FROM t WITH CONNECTION conn_x",
        "SELECT ? FROM t WITH CONNECTION  ?",
    ),
    (
        "columns_named_like_credentials_kept",
        "spark",
        "SELECT password, token AS t FROM u",
        "SELECT password, token AS t FROM u",
    ),
    (
        "credential_column_types_kept",
        "spark",
        "CREATE TABLE u (password VARCHAR(9), api_key STRING)",
        "CREATE TABLE u (password VARCHAR(?), api_key STRING)",
    ),
    (
        "credential_prefix_is_not_a_credential",
        "spark",
        "SELECT password_hash h FROM u",
        "SELECT password_hash h FROM u",
    ),
    (
        "credential_word_in_comment_and_string",
        "spark",
        "SELECT 'password x' /* token y */ FROM u",
        "SELECT ?   FROM u",
    ),
    (
        "quoted_credential_identifier_kept",
        "snowflake",
        'SELECT "PASSWORD" FROM u',
        'SELECT "PASSWORD" FROM u',
    ),
]


@pytest.mark.parametrize(
    ("dialect", "sql", "expected"), [c[1:] for c in MASK_CASES], ids=[c[0] for c in MASK_CASES]
)
def test_mask_literals_cases(dialect: str, sql: str, expected: str) -> None:
    assert fp.mask_literals(sql, dialect) == expected
    assert fp.mask_literals_reference(sql, dialect) == expected


_FRAGMENTS = [
    "SELECT",
    " ",
    "\n",
    "'a''b'",
    "'x\\'y'",
    "'open",
    '"dq"',
    '""',
    "`bt`",
    "`s3://b/k`",
    "`a``b`",
    "$$p$$",
    "$t$q$t$",
    "$",
    "-- c\n",
    "/* c */",
    "/*",
    "*/",
    "1",
    "1.5e3",
    "0x1F",
    "10L",
    "t1",
    "2024_sales",
    ".",
    "-",
    "(",
    ")",
    ",",
    ";",
    "ü",
    "@v",
    "#t",
    "N'n'",
    "X'FF'",
    "E'\\n'",
    "/",
    "password",
    "IDENTIFIED BY",
    " = ",
    "hunter2",
    "aws_key_id=",
    "FROM",
]


@pytest.mark.parametrize("dialect", ["spark", "snowflake", "postgres"])
def test_fast_masking_equals_token_by_token_reference(dialect: str) -> None:
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 12)))
        assert fp.mask_literals(text, dialect) == fp.mask_literals_reference(text, dialect), text


def test_token_pattern_covers_every_character() -> None:
    text = "SELECT 'a', \"b\", `c`, $$d$$, 1.5e3 -- e\n/* f */ ü € \\ ; \x00"
    assert "".join(m.group(0) for m in re.finditer(fp.TOKEN_PATTERN, text)) == text


def test_clean_statement_removes_copy_grants_and_trailing_semicolons() -> None:
    sql = "CREATE OR REPLACE TABLE a.b COPY GRANTS AS SELECT x FROM c ;  \n;\n"
    assert fp.clean_statement(sql) == "CREATE OR REPLACE TABLE a.b AS SELECT x FROM c"


def test_normalized_masked_sql_collapses_whitespace() -> None:
    sql = "INSERT INTO t\n  SELECT a,\tb -- note\nFROM s WHERE d = '2024-01-01';"
    assert fp.normalized_masked_sql(sql, "spark") == "INSERT INTO t SELECT a, b FROM s WHERE d = ?"


def test_fingerprint_same_for_different_literals_and_layout() -> None:
    a = fp.fingerprint("INSERT INTO t SELECT * FROM s WHERE d = '2024-01-01' AND n > 5", "spark")
    b = fp.fingerprint(
        "INSERT INTO t\nSELECT * FROM s\nWHERE d = '2024-03-09' AND n > 70;", "spark"
    )
    assert a == b
    assert re.fullmatch(r"[0-9a-f]{32}", a)


def test_fingerprint_depends_on_dialect_and_session_context() -> None:
    sql = "INSERT INTO t SELECT * FROM s"
    base = fp.fingerprint(sql, "spark")
    assert fp.fingerprint(sql, "snowflake") != base
    assert fp.fingerprint(sql, "spark", default_database="db1") != base
    assert fp.fingerprint(sql, "spark", default_schema="sch") != base


def test_fingerprint_of_definitions_covers_dollar_quoted_bodies() -> None:
    v1 = "CREATE PROCEDURE p() AS $$ INSERT INTO a SELECT * FROM b $$"
    v2 = "CREATE PROCEDURE p() AS $$ INSERT INTO a SELECT * FROM c $$"
    assert fp.fingerprint(v1, "snowflake") == fp.fingerprint(v2, "snowflake")  # masked alike
    assert fp.fingerprint(v1, "snowflake", object_kind="procedure") != fp.fingerprint(
        v2, "snowflake", object_kind="procedure"
    )


RELEVANCE_CASES = [
    ("ctas", "CREATE TABLE a AS SELECT * FROM b", None, True),
    ("insert", "INSERT INTO a SELECT * FROM b", None, True),
    ("insert_overwrite", "INSERT OVERWRITE TABLE a SELECT * FROM b", None, True),
    ("merge", "MERGE INTO a USING b ON a.k = b.k WHEN MATCHED THEN DELETE", None, True),
    ("update_from", "UPDATE a SET x = b.x FROM b WHERE a.k = b.k", None, True),
    ("select_into", "SELECT * INTO a FROM b", None, True),
    ("cte_insert", "WITH s AS (SELECT ?) INSERT INTO a SELECT * FROM s", None, True),
    ("copy", "COPY INTO a FROM @stage", None, True),
    ("script", "SELECT ?; INSERT INTO a SELECT ?", None, True),
    ("view_row_plain_select", "SELECT * FROM b", "view", True),
    ("plain_select", "SELECT a FROM b WHERE c = ?", None, False),
    ("cte_select", "WITH s AS (SELECT ?) SELECT * FROM s", None, False),
    ("parenthesized_select", "(SELECT a FROM b) UNION (SELECT a FROM c)", None, False),
    ("show", "SHOW TABLES IN staging", None, False),
    ("set", "SET spark.sql.shuffle.partitions = ?", None, False),
    ("use", "USE SCHEMA analytics.marts", None, False),
    ("describe", "DESCRIBE TABLE a", None, False),
    ("alter_session", "ALTER SESSION SET TIMEZONE = ?", None, False),
    ("unknown_is_kept", "FROB a INTO b", None, True),
    ("selected_column_named_like_keyword_is_kept", "SELECT created, updates FROM b", None, False),
    ("create_user", "CREATE USER u PASSWORD = ? DEFAULT_ROLE = r", None, False),
    ("create_or_replace_role", "CREATE OR REPLACE ROLE analyst", None, False),
    ("alter_role", "ALTER ROLE r WITH LOGIN PASSWORD ?", None, False),
    ("grant_insert", "GRANT INSERT, UPDATE ON TABLE a TO ROLE r", None, False),
    ("revoke_merge", "REVOKE MERGE ON a FROM u", None, False),
    ("create_secret", "CREATE SECRET s TYPE = PASSWORD USERNAME = ? PASSWORD = ?", None, False),
    ("drop_user", "DROP USER IF EXISTS u", None, False),
    ("create_user_table_is_lineage", "CREATE TABLE users AS SELECT * FROM b", None, True),
]


@pytest.mark.parametrize(
    ("sql", "kind", "expected"),
    [c[1:] for c in RELEVANCE_CASES],
    ids=[c[0] for c in RELEVANCE_CASES],
)
def test_is_lineage_relevant_cases(sql: str, kind: str | None, expected: bool) -> None:
    assert fp.is_lineage_relevant(sql, kind) is expected


MESSAGE_CASES = [
    ("statement longer than 1000000 characters", "statement longer than 1000000 characters"),
    ("Invalid expression at line 12, col 7", "Invalid expression at line 12, col 7"),
    ("parse timed out after 30 s", "parse timed out after 30 s"),
    ("near WHERE id = 4111 AND pw = 'x'", "near WHERE id = ? AND pw = ?"),
    ("near PASSWORD hunter2 at line 1, col 9", "near PASSWORD  ? at line 1, col 9"),
    ('near "secret" 42', "near ? ?"),
]


@pytest.mark.parametrize(("message", "expected"), MESSAGE_CASES)
def test_mask_message_masks_the_sql_and_keeps_our_figures(message: str, expected: str) -> None:
    assert fp.mask_message(message) == expected


@pytest.mark.parametrize(
    ("masked", "expected"),
    [
        ("INSERT INTO t SELECT Cn4ry, a FROM s", "INSERT INTO ? SELECT ?, ? FROM ?"),
        ("insert into `Cn4ry` select ?", "insert into `?` select ?"),
        ("SELECT Ünïcode_Cn4ry FROM x9", "SELECT ? FROM ?"),
        ("password = ? identified by ?", "password = ? identified by ?"),
        ("SELECTED FROMAGE INTOx", "? ? ?"),
    ],
)
def test_skeleton_keeps_only_keywords(masked: str, expected: str) -> None:
    assert fp.skeleton(masked) == expected
