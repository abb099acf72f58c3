"""The fallback tiers: sqlfluff's Rust parser, the size past which the sqlfluff tier is not
tried, and what a crashing tier leaves in the result."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from lineage_udfs.core.enums import ErrorKind, ParserName, ParseStatus
from lineage_udfs.core.fallback import (
    SqlfluffTier,
    may_hold_comment,
    regex_tables,
    sqlparse_tables,
    without_comments,
)
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.records import to_record
from lineage_udfs.core.statements import Chunk
from lineage_udfs.core.tiers import StatementTables

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


def _case_texts_and_dialects() -> list[tuple[str, str | None]]:
    import yaml

    out = []
    for path in sorted((Path(__file__).parent / "cases").glob("*.yaml")):
        out.extend(
            (case["sql"], case.get("dialect"))
            for case in yaml.safe_load(path.read_text(encoding="utf-8"))
        )
    return out


def _case_texts() -> list[str]:
    return [sql for sql, _ in _case_texts_and_dialects()]


TRICKY = [
    "INSERT INTO t SELECT a FROM s WHERE b = 'x -- not a comment'",  # markers inside literals
    "INSERT INTO t SELECT a FROM s WHERE b = 'x /* y */'",
    "INSERT INTO t SELECT a FROM s # JOIN hidden\nJOIN u ON s.k = u.k",  # MySQL comment
    "INSERT INTO t SELECT a#b FROM s",  # '#' in a name: not a comment for the lexer
    "INSERT INTO t SELECT a FROM s -- JOIN y",
    "INSERT INTO t /* FROM x */ SELECT a FROM s",
    "INSERT INTO t SELECT a FROM s WHERE c = 'it''s' AND d = \"q\"",
    "INSERT INTO t SELECT a FROM s\r\nJOIN u ON 1 = 1",
]


@pytest.mark.parametrize("sql", TRICKY + _case_texts())
def test_the_sqlparse_tier_skips_the_lexer_only_where_it_finds_no_comment(sql: str) -> None:
    """The shortcut's premise on every unit case's text and a few tricky ones: a text without
    comment markers comes back from sqlparse's lexer unchanged, so the tier's tables are the
    same with or without the lexer."""
    if not may_hold_comment(sql):
        assert without_comments(sql) == sql
    assert sqlparse_tables(sql, "c", "d") == regex_tables(without_comments(sql), "c", "d")


def _broken(sql: str) -> str:
    """A stray keyword in the middle: what no grammar reads, and most of what reaches the tier."""
    words = sql.split(" ")
    return " ".join([*words[: len(words) // 2], "FROM FROM", *words[len(words) // 2 :]])


CASES = _case_texts_and_dialects()
PARITY = [
    *CASES,
    *((_broken(sql), d) for sql, d in CASES),
    (RESCUED, "mysql"),
    ("INSERT INTO t SELECT a FROM {{ source_table }}", "spark"),  # Jinja: the linter renders it
    ("-- sqlfluff:dialect:ansi\nINSERT INTO t SELECT a FROM s", "spark"),  # inline setting
]


def _linter_only() -> SqlfluffTier:
    tier = SqlfluffTier()
    tier._rust_rejects = lambda sql, name: False  # type: ignore[method-assign]
    return tier


@pytest.fixture(scope="module")
def tiers() -> tuple[SqlfluffTier, SqlfluffTier]:
    return SqlfluffTier(), _linter_only()


@pytest.mark.parametrize(("sql", "dialect"), PARITY)
def test_the_rust_match_rejects_only_what_the_linter_rejects(
    tiers: tuple[SqlfluffTier, SqlfluffTier], sql: str, dialect: str | None
) -> None:
    """The early rejection's premise on every unit case's text, a broken variant of each and a
    few texts the linter reads otherwise than the raw lexer: the tier gives the same tables
    with it as with the linter alone."""
    tier, linter_only = tiers
    assert _tables(tier, sql, dialect) == _tables(linter_only, sql, dialect)


def _tables(tier: SqlfluffTier, sql: str, dialect: str | None) -> object:
    """The tier's tables, or None where it raises (the linter does on some text cut short
    inside brackets): the cascade treats both alike and goes on to the sqlparse tier."""
    try:
        return tier.tables(sql, dialect, "c", "d")
    except Exception:
        return None


@pytest.mark.parametrize(
    ("sql", "rejected"),
    [
        ("INSERT INTO t SELECT a FROM FROM s", True),  # the early path is live
        ("INSERT INTO t SELECT a FROM s WHERE b IN (1", True),  # brackets never close
        (RESCUED, False),
        ("INSERT INTO t SELECT a FROM FROM {{ s }}", False),  # Jinja: left to the linter
        ("", False),
    ],
)
def test_the_rust_match_rejects_early(sql: str, rejected: bool) -> None:
    assert SqlfluffTier()._rust_rejects(sql, "mysql") is rejected


# A fallback tier that crashes: the cascade goes on to the next tier, and the result tells the
# crash (INTERNAL, the tier and the exception's type; never the exception's text, which may
# quote the statement) instead of sqlglot's syntax error.
RESCUED_WITH_LITERAL = "INSERT LOW_PRIORITY IGNORE INTO db.t SELECT a FROM db.s WHERE b = 'pw_42'"
REJECTED_BY_BOTH = "INSERT INTO db.t SELECT a FROM db.s WHERE b = = 'pw_42'"  # sqlfluff too
CUT_SHORT = "INSERT INTO db.t SELECT a FROM db.s WHERE b IN ('pw_42', 2"  # sqlfluff not tried
SQLFLUFF_CRASHED = "sqlfluff tier failed: RuntimeError"
SQLPARSE_CRASHED = "sqlparse tier failed: RuntimeError"
TIER_CRASHES = [  # crashing tiers, sql, parser, status, sources, targets, failure
    pytest.param((), RESCUED_WITH_LITERAL, "sqlfluff", "ok", ["db.s"], ["db.t"], None,
                 id="no_crash"),
    pytest.param(("sqlfluff",), RESCUED_WITH_LITERAL, "sqlparse", "partial", ["db.s"], ["db.t"],
                 ("INTERNAL", SQLFLUFF_CRASHED), id="sqlfluff_crashes_sqlparse_reads"),
    pytest.param(("sqlparse",), REJECTED_BY_BOTH, "none", "failed", [], [],
                 ("INTERNAL", SQLPARSE_CRASHED), id="sqlfluff_rejects_sqlparse_crashes"),
    pytest.param(("sqlparse",), CUT_SHORT, "none", "failed", [], [],
                 ("INTERNAL", SQLPARSE_CRASHED), id="cut_short_sqlparse_crashes"),
    pytest.param(("sqlfluff", "sqlparse"), RESCUED_WITH_LITERAL, "none", "failed", [], [],
                 ("INTERNAL", SQLFLUFF_CRASHED), id="both_crash_the_first_is_told"),
    pytest.param(("sqlfluff",), f"INSERT INTO db.u SELECT a FROM db.t; {RESCUED_WITH_LITERAL}",
                 "sqlparse", "partial", ["db.s", "db.t"], ["db.t", "db.u"],
                 ("INTERNAL", SQLFLUFF_CRASHED), id="a_script_statement_crashes"),
]  # fmt: skip


def _crash(chunk: Chunk, ctx: NameContext) -> StatementTables | None:
    raise RuntimeError(f"cannot read {chunk.text}")


@pytest.mark.parametrize(
    ("crashing", "sql", "parser", "status", "sources", "targets", "failure"), TIER_CRASHES
)
def test_a_crashing_fallback_tier_is_recorded_as_internal(
    monkeypatch: pytest.MonkeyPatch,
    crashing: tuple[str, ...],
    sql: str,
    parser: str,
    status: str,
    sources: list[str],
    targets: list[str],
    failure: tuple[str, str] | None,
) -> None:
    lineage = LineageParser()
    for tier in crashing:
        monkeypatch.setattr(getattr(lineage, f"_{tier}"), "read", _crash)
    result = lineage.parse(sql, dialect="mysql")
    assert (str(result.parser), str(result.status)) == (parser, status)
    assert (sorted(result.sources), sorted(result.targets)) == (sources, targets)
    assert (
        None if result.failure is None else (str(result.failure.kind), result.failure.message)
    ) == failure
    record = to_record(result)
    assert "pw_42" not in json.dumps(record)
    assert record["error_kind"] == (failure[0] if failure else None)
