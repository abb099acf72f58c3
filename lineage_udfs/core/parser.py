"""Orchestration: SQL text → ``ParseResult``. Never raises for bad SQL.

BASELINE: a first sqlglot-only table-lineage pass so the Spark pipeline has a real parser to
call. The cascade (sqlglot → sqlfluff → sqlparse), scripts, column lineage and name resolution
replace it behind the same ``LineageParser.parse`` signature.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import sqlglot
from sqlglot import exp

from lineage_udfs.core.enums import ErrorKind, ParserName, ParseStatus, StatementType
from lineage_udfs.core.models import ParseFailure, ParseResult, TableEdge
from lineage_udfs.core.options import ParserOptions

Catalog = Mapping[str, Mapping[str, object]]
"""``{qualified table name: {column: type}}`` with columns in declared order."""


class LineageParser:
    """Parses statements with per-worker state built once (options, catalog, dialect objects).

    Args:
        options: parser knobs.
        catalog: optional table → ordered columns mapping for ``*`` expansion and qualification.
    """

    def __init__(self, options: ParserOptions | None = None, catalog: Catalog | None = None):
        self.options = options or ParserOptions()
        self.catalog = catalog or {}

    def parse(
        self,
        sql: str | None,
        *,
        dialect: str | None = None,
        default_catalog: str | None = None,
        default_schema: str | None = None,
    ) -> ParseResult:
        """Parse one logged statement or script. Never raises for bad input.

        Args:
            sql: the statement text as logged (may hold several statements).
            dialect: sqlglot dialect name; ``options.default_dialect`` when None.
            default_catalog: session catalog/database that qualifies bare names.
            default_schema: session schema that qualifies bare names.

        Returns:
            The lineage, or a result whose ``failure`` says why there is none.
        """
        started = time.perf_counter()
        if not sql or not sql.strip():
            return ParseResult(
                StatementType.UNKNOWN,
                ParserName.NONE,
                ParseStatus.SKIPPED,
                failure=ParseFailure(ErrorKind.EMPTY, "empty statement"),
            )
        try:
            tree = sqlglot.parse_one(sql, read=dialect or self.options.default_dialect)
        except Exception as exc:  # noqa: BLE001 - failures are data
            return ParseResult(
                StatementType.UNKNOWN,
                ParserName.NONE,
                ParseStatus.FAILED,
                failure=ParseFailure(ErrorKind.SYNTAX, type(exc).__name__),
                parse_ms=(time.perf_counter() - started) * 1000,
            )
        target_nodes = []
        if isinstance(tree, exp.Insert | exp.Create):
            t = tree.this
            target_nodes = [t.this if isinstance(t, exp.Schema) else t]
        targets = tuple(sorted({_name(t) for t in target_nodes if isinstance(t, exp.Table)}))
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        sources = tuple(
            sorted(
                {
                    _name(t)
                    for t in tree.find_all(exp.Table)
                    if not any(t is n for n in target_nodes) and t.name.lower() not in ctes
                }
                - set(targets)
            )
        )
        return ParseResult(
            StatementType.INSERT if targets else StatementType.SELECT,
            ParserName.SQLGLOT,
            ParseStatus.OK,
            sources=sources,
            targets=targets,
            table_edges=tuple(TableEdge(s, t) for s in sources for t in targets),
            parse_ms=(time.perf_counter() - started) * 1000,
        )


def _name(table: exp.Table) -> str:
    return ".".join(p.lower() for p in (table.catalog, table.db, table.name) if p)
