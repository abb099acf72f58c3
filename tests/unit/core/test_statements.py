"""Statement splitting: procedural leftovers are control flow, embedded queries are found."""

from __future__ import annotations

from lineage_udfs.core.enums import ParserName, ParseStatus
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.statements import Chunk, _embedded_query, split_statements

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
    assert _embedded_query(Chunk("EXECUTE IMMEDIATE 'SELECT a FROM s' || x")) is None
    assert _embedded_query(Chunk("EXECUTE IMMEDIATE v_sql")) is None
    assert _embedded_query(Chunk("EXECUTE IMMEDIATE 'not sql at all'")) is None
    assert _embedded_query(Chunk("UNLOAD ('select a from s') TO 'x'")) == "select a from s"
