"""The three tiers of the cascade share one protocol and one result record."""

from __future__ import annotations

import pytest

from lineage_udfs.core.enums import ParserName, StatementType
from lineage_udfs.core.fallback import SqlfluffTier, SqlparseTier
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.statements import Chunk, split_statements
from lineage_udfs.core.tables import SqlglotTier
from lineage_udfs.core.tiers import StatementTables, TableTier

TIERS = [SqlglotTier(), SqlfluffTier(), SqlparseTier()]

CASES = [  # (sql, dialect, statement type, sources, targets): every tier reads these alike
    ("INSERT INTO db.t SELECT a FROM db.s JOIN db.u ON s.k = u.k", "spark", StatementType.INSERT,
     ["db.s", "db.u"], ["db.t"]),
    ("CREATE TABLE x.t AS SELECT a FROM x.s", "snowflake", StatementType.CTAS, ["x.s"], ["x.t"]),
    ("MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v", "databricks",
     StatementType.MERGE, ["s"], ["t"]),
]  # fmt: skip


@pytest.mark.parametrize("tier", TIERS, ids=lambda t: t.parser.value)
def test_tier_follows_the_protocol_and_names_itself(tier: TableTier) -> None:
    assert isinstance(tier, TableTier)
    assert tier.parser in (ParserName.SQLGLOT, ParserName.SQLFLUFF, ParserName.SQLPARSE)


@pytest.mark.parametrize(("sql", "dialect", "kind", "sources", "targets"), CASES)
def test_tiers_read_a_statement_into_the_same_record(
    sql: str, dialect: str, kind: StatementType, sources: list[str], targets: list[str]
) -> None:
    [chunk] = split_statements(sql, dialect)
    ctx = NameContext(dialect)
    for tier in TIERS:
        found = tier.read(chunk, ctx)
        assert isinstance(found, StatementTables), tier.parser
        assert (found.statement_type, sorted(found.sources), found.targets) == (
            kind,
            sources,
            targets,
        ), tier.parser


def test_sqlglot_tier_reads_only_what_sqlglot_parsed() -> None:
    broken = Chunk("INSERT INTO t SELEC a FROM s")
    assert SqlglotTier().read(broken, NameContext("spark")) is None
    assert SqlparseTier().read(broken, NameContext("spark")) == StatementTables(
        StatementType.INSERT, ["s"], ["t"]
    )
