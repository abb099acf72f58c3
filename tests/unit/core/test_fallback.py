"""The sqlfluff tier: sqlfluff's Rust parser, and the size past which the tier is not tried."""

from __future__ import annotations

import logging

import pytest

from lineage_udfs.core.enums import ErrorKind, ParserName, ParseStatus
from lineage_udfs.core.fallback import SqlfluffTier
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

# sqlglot rejects it (MySQL's INSERT modifiers), sqlfluff reads it
RESCUED = "INSERT LOW_PRIORITY IGNORE INTO db.t SELECT a FROM db.s"


def test_the_tier_runs_sqlfluffs_rust_parser(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sqlfluff.linter"):
        found = SqlfluffTier().tables(RESCUED, "mysql")
    assert found is not None and (found.sources, found.targets) == (["db.s"], ["db.t"])
    assert "Using Rust parser" in caplog.text  # sqlfluff[rs] installed, not switched off


@pytest.mark.parametrize(
    ("max_chars", "parser", "status"),
    [
        (len(RESCUED), ParserName.SQLFLUFF, ParseStatus.OK),
        (len(RESCUED) - 1, ParserName.SQLPARSE, ParseStatus.PARTIAL),
        (0, ParserName.SQLPARSE, ParseStatus.PARTIAL),
    ],
)
def test_statements_over_sqlfluff_max_chars_go_to_sqlparse(
    max_chars: int, parser: ParserName, status: ParseStatus
) -> None:
    result = LineageParser(ParserOptions(sqlfluff_max_chars=max_chars)).parse(
        RESCUED, dialect="mysql"
    )
    assert (result.parser, result.status) == (parser, status)
    assert (result.sources, result.targets) == (("db.s",), ("db.t",))
    if status == ParseStatus.PARTIAL:  # the reason stays sqlglot's syntax error
        assert result.failure is not None and result.failure.kind == ErrorKind.SYNTAX
