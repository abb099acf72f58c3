"""Statement splitting: procedural leftovers are control flow, embedded queries are found."""

from __future__ import annotations

import pytest
import sqlglot

from lineage_udfs.core import attempts
from lineage_udfs.core.embedded import embedded_query
from lineage_udfs.core.enums import ParserName, ParseStatus
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.statements import split_statements

ORACLE_BLOCK = """BEGIN
  IF p IS NULL THEN
    p := 0;
  END IF;
  LOOP
    v := v + 1;
    INSERT INTO t SELECT a FROM s;
    EXIT WHEN v >= p;
  END LOOP;
  RAISE;
END;
/"""


def test_procedural_leftovers_are_control_not_statements() -> None:
    chunks = [c for c in split_statements(ORACLE_BLOCK, "oracle") if not c.control]
    assert [type(c.expression).__name__ for c in chunks] == ["Transaction", "Insert"]


def test_procedural_block_stays_on_the_sqlglot_tier() -> None:
    result = LineageParser().parse(ORACLE_BLOCK, dialect="oracle")
    assert (result.parser, result.status) == (ParserName.SQLGLOT, ParseStatus.OK)
    assert (result.sources, result.targets) == (("s",), ("t",))


def test_embedded_query_needs_a_single_constant_string() -> None:
    assert embedded_query("EXECUTE IMMEDIATE 'SELECT a FROM s' || x") is None
    assert embedded_query("EXECUTE IMMEDIATE v_sql") is None
    assert embedded_query("EXECUTE IMMEDIATE 'not sql at all'") is None
    assert embedded_query("UNLOAD ('select a from s') TO 'x'") == "select a from s"


def test_broken_insert_with_column_list_stays_one_statement() -> None:
    # the query after `INSERT INTO t (cols)` belongs to the INSERT, even when the statement
    # is broken further on: one statement whose fallback tier keeps the source → target edge
    sql = "INSERT INTO db.t (a, b) SELECT a, b FROM db.s WHERE a = = 1 AND b = 2"
    result = LineageParser().parse(sql, dialect="spark")
    assert result.status == ParseStatus.PARTIAL
    assert len(result.statements) == 1
    assert (result.sources, result.targets) == (("db.s",), ("db.t",))
    assert [(e.source_table, e.target_table) for e in result.table_edges] == [("db.s", "db.t")]


def test_batch_without_semicolons_still_splits_after_values() -> None:
    sql = "INSERT INTO t (a) VALUES (1) SELECT a FROM s"
    chunks = [c for c in split_statements(sql, "tsql") if not c.control]
    assert [type(c.expression).__name__ for c in chunks] == ["Insert", "Select"]


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("INSERT INTO db.t SELECT a FROM FROM db.s WHERE b = = 1", "spark"),
        ("INSERT INTO t SELECT a FROM s WHERE b = 'x' AND", "postgres"),
        ("SELECT a FROM s; INSERT INTO t SELEC a FROM u WHERE c = = 2", "snowflake"),
    ],
)
def test_a_failed_chunk_carries_sqlglots_own_error(sql: str, dialect: str) -> None:
    """The splitter keeps the error of its own failed attempt (instead of parsing the text a
    third time to get it): the same error, with or without that attempt's error still kept."""
    failed = [c for c in split_statements(sql, dialect) if c.expression is None and not c.control]
    assert failed, "the case must hold a statement sqlglot rejects"
    for chunk in failed:
        try:
            sqlglot.parse(chunk.text, read=dialect)
        except sqlglot.errors.ParseError as exc:
            expected = exc.errors
        else:
            expected = None
        assert getattr(chunk.error, "errors", None) == expected
        attempts._ERRORS.clear()
        assert getattr(attempts.parse_error(chunk.text, dialect), "errors", None) == expected
