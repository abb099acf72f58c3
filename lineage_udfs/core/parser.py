"""Orchestration: SQL text → ``ParseResult``. Never raises, whatever the input.

The cascade, per statement: sqlglot in the row's dialect (optionally retried in
``options.fallback_dialect``), then sqlfluff (table lineage), then sqlparse (table lineage).
Each tier runs under ``options.timeout_seconds`` (see :mod:`timeout`). Table and column tiers fail
separately: a column failure keeps the table lineage and marks the result PARTIAL.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from sqlglot import exp

from lineage_udfs.core.attempts import IncompleteStatementError
from lineage_udfs.core.catalog import CatalogIndex
from lineage_udfs.core.columns import ColumnLineage, extract_column_edges
from lineage_udfs.core.dialects import to_sqlglot_dialect
from lineage_udfs.core.enums import (
    ErrorKind,
    ParserName,
    ParseStatus,
    StatementType,
    TransformationType,
)
from lineage_udfs.core.fallback import SqlfluffTier, SqlparseTier
from lineage_udfs.core.fingerprint import mask_literals, normalized_masked_sql
from lineage_udfs.core.garbage_collection import fewer_young_collections
from lineage_udfs.core.models import (
    ColumnEdge,
    ParseFailure,
    ParseResult,
    ResultColumn,
    StatementLineage,
    TableEdge,
)
from lineage_udfs.core.naming import NameContext, after_use
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.script import ScriptStep, collapse_script
from lineage_udfs.core.statements import Chunk, split_statements
from lineage_udfs.core.tables import SqlglotTier
from lineage_udfs.core.tiers import StatementTables, TableTier
from lineage_udfs.core.timeout import ParseTimeoutError, time_limit
from lineage_udfs.core.variables import assigned_variables, declared_variables, variable_uses

Catalog = Mapping[str, Mapping[str, object]]
"""``{qualified table name: {column: type}}`` with columns in declared order."""


class _QuietSqlglot(logging.Filter):
    """sqlglot logs unsupported SQL verbatim (literals included): keep it out of our logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR and "contains unsupported syntax" not in str(
            record.msg
        )


def _silence_sqlglot() -> None:
    logger = logging.getLogger("sqlglot")
    if not any(isinstance(f, _QuietSqlglot) for f in logger.filters):
        logger.addFilter(_QuietSqlglot())


@dataclass(slots=True)
class _Step:
    """One statement's lineage while the result is assembled."""

    index: int
    statement_type: StatementType
    status: ParseStatus
    parser: ParserName
    tables: StatementTables | None = None
    columns: ColumnLineage = field(default_factory=ColumnLineage)
    failure: ParseFailure | None = None


class LineageParser:
    """Parses statements with per-worker state built once (options, catalog index, linters).

    Args:
        options: parser knobs.
        catalog: optional ``{table: {column: type}}`` (columns in declared order) for ``*``
            expansion, positional INSERT mapping and unqualified columns in joins.

    Examples:
        >>> r = LineageParser().parse("INSERT INTO db.t SELECT a FROM db.s", dialect="spark")
        >>> r.sources, r.targets, [(e.source_column, e.target_column) for e in r.column_edges]
        (('db.s',), ('db.t',), [('a', 'a')])
    """

    def __init__(self, options: ParserOptions | None = None, catalog: Catalog | None = None):
        self.options = options or ParserOptions()
        self.catalog = CatalogIndex(catalog)
        self._sqlglot: TableTier = SqlglotTier(self.options)
        self._sqlfluff = SqlfluffTier()
        self._sqlparse: TableTier = SqlparseTier()
        self._dialects_used: set[str | None] = set()
        _silence_sqlglot()

    # ------------------------------------------------------------------ public
    def parse(
        self,
        sql: str | None,
        *,
        dialect: str | None = None,
        default_catalog: str | None = None,
        default_schema: str | None = None,
        mask: bool = True,
        catalog: Catalog | None = None,
    ) -> ParseResult:
        """Parse one logged statement or script. Never raises.

        Args:
            sql: the statement text as logged (may hold several statements).
            dialect: dialect or connection type; ``options.default_dialect`` when None.
            default_catalog: session catalog/database that qualifies bare names.
            default_schema: session schema that qualifies bare names.
            mask: fill ``masked_sql`` (False when the caller has the masked text already, as
                the Spark job has: it masks every row with Spark expressions).
            catalog: the tables this statement may read or write, ``{table: {column: type}}``,
                used for this call instead of the parser's own catalog (the Spark job hands
                each statement the part of ``catalog_columns`` its text names).

        Examples:
            >>> p = LineageParser()
            >>> sql = "INSERT INTO db.t SELECT * FROM db.s"
            >>> [e.source_column for e in p.parse(sql, catalog={"db.s": {"a": "int"}}).column_edges]
            ['a']
            >>> p.parse(sql).column_edges
            ()

        Returns:
            The lineage, or a result whose ``failure`` says why there is none.
        """
        started = time.perf_counter()
        try:
            with fewer_young_collections():  # sqlglot trees are cycles: see garbage_collection.py
                index = self.catalog if catalog is None else CatalogIndex(catalog)
                result = self._parse(sql, dialect, default_catalog, default_schema, index)
        except ParseTimeoutError:
            result = _failed(ErrorKind.TIMEOUT, "parse timed out", status=ParseStatus.TIMEOUT)
        except RecursionError:
            result = _failed(ErrorKind.INTERNAL, "statement nested too deeply")
        except Exception as exc:
            result = _failed(ErrorKind.INTERNAL, f"internal error: {type(exc).__name__}")
        if mask and isinstance(sql, str) and sql.strip() and len(sql) <= self.options.max_sql_chars:
            # the same masking as the Spark job's (a regex scan, no AST copy or regeneration)
            read = to_sqlglot_dialect(dialect if dialect else self.options.default_dialect)
            result = replace(result, masked_sql=normalized_masked_sql(sql, read))
        return _with_ms(result, started)

    def lazy_state(self) -> int:
        """How many pieces of long-lived state the parser has built on first use: the dialects
        it has read (sqlglot imports a dialect and builds its tables on first use) and sqlfluff's
        tools per dialect. A caller that keeps long-lived objects out of the cyclic collector's
        scans (``gc.freeze()``, as the Spark worker does) freezes again when this grows.

        Examples:
            >>> parser = LineageParser()
            >>> before = parser.lazy_state()
            >>> _ = parser.parse("SELECT a FROM t", dialect="snowflake")
            >>> parser.lazy_state() > before
            True
        """
        return len(self._dialects_used) + self._sqlfluff.built()

    # ------------------------------------------------------------------ orchestration
    def _parse(
        self,
        sql: str | None,
        dialect: str | None,
        default_catalog: str | None,
        default_schema: str | None,
        catalog: CatalogIndex | None = None,
    ) -> ParseResult:
        if not isinstance(sql, str) or not sql.strip():
            return _failed(ErrorKind.EMPTY, "empty statement", status=ParseStatus.SKIPPED)
        if len(sql) > self.options.max_sql_chars:
            return _failed(
                ErrorKind.TOO_LARGE,
                f"statement longer than {self.options.max_sql_chars} characters",
                status=ParseStatus.SKIPPED,
            )
        read = to_sqlglot_dialect(dialect if dialect else self.options.default_dialect)
        self._dialects_used.add(read)
        ctx = NameContext(
            read,
            _lower(default_catalog or self.options.default_catalog),
            _lower(default_schema or self.options.default_schema),
            file_datasets=self.options.file_datasets,
            variables=declared_variables(sql, read),
        )
        timeout = self.options.timeout_seconds
        try:
            with time_limit(timeout):
                chunks = split_statements(sql, read)
        except ParseTimeoutError:
            return _failed(ErrorKind.TIMEOUT, "split timed out", status=ParseStatus.TIMEOUT)
        fallback = to_sqlglot_dialect(self.options.fallback_dialect)
        if (
            self.options.fallback_dialect
            and fallback != read
            and all(c.expression is None for c in chunks)
        ):
            self._dialects_used.add(fallback)
            with time_limit(timeout):
                retry = split_statements(sql, fallback)
            if any(c.expression is not None for c in retry):
                chunks, read = retry, fallback
                ctx = replace(ctx, dialect=fallback)
        steps: list[_Step] = []
        catalog = self.catalog if catalog is None else catalog
        values: dict[str, _VariableValue] = {}
        for chunk in chunks:
            if chunk.control:
                continue
            step, ctx, catalog = self._statement(chunk, len(steps), ctx, catalog)
            if chunk.expression is not None and step.parser is ParserName.SQLGLOT:
                _track_variables(step, chunk.expression, ctx, values)
            steps.append(step)
        if not steps:
            return ParseResult(StatementType.SESSION, ParserName.SQLGLOT, ParseStatus.OK)
        return self._assemble(steps, read)

    def _statement(
        self, chunk: Chunk, index: int, ctx: NameContext, catalog: CatalogIndex
    ) -> tuple[_Step, NameContext, CatalogIndex]:
        timeout = self.options.timeout_seconds
        if chunk.expression is None:
            return self._fallback(chunk, index, ctx), ctx, catalog
        statement = chunk.expression
        try:
            with time_limit(timeout):
                tables = self._sqlglot.read(chunk, ctx)
        except ParseTimeoutError:
            return (
                _Step(
                    index,
                    StatementType.UNKNOWN,
                    ParseStatus.TIMEOUT,
                    ParserName.SQLGLOT,
                    failure=ParseFailure(ErrorKind.TIMEOUT, "table lineage timed out"),
                ),
                (ctx),
                catalog,
            )
        except Exception as exc:
            step = self._fallback(chunk, index, ctx)
            if step.status == ParseStatus.FAILED:
                step.failure = ParseFailure(ErrorKind.INTERNAL, type(exc).__name__)
            return step, ctx, catalog
        if tables is None:  # (not reached: the chunk has a tree)
            return self._fallback(chunk, index, ctx), ctx, catalog
        if tables.use_database:
            ctx = after_use(ctx, statement, tables.use_database)
        step = _Step(index, tables.statement_type, ParseStatus.OK, ParserName.SQLGLOT, tables)
        if self.options.column_lineage and tables.statement_type not in (
            StatementType.SESSION,
            StatementType.DROP,
            StatementType.TRUNCATE,
            StatementType.DELETE,
            StatementType.UNKNOWN,
        ):
            try:
                with time_limit(timeout):
                    step.columns = extract_column_edges(
                        statement,
                        tables,
                        ctx,
                        catalog,
                        conditions_as_direct=self.options.conditions_as_direct,
                        masking_functions=self.options.masking_functions,
                        merge_unchanged_columns_as_identity=(
                            self.options.merge_unchanged_columns_as_identity
                        ),
                    )
            except ParseTimeoutError:
                step.status = ParseStatus.PARTIAL
                step.failure = ParseFailure(ErrorKind.TIMEOUT, "column lineage timed out")
            except Exception as exc:
                step.status = ParseStatus.PARTIAL
                step.failure = ParseFailure(
                    ErrorKind.COLUMN_LINEAGE, f"column lineage failed: {type(exc).__name__}"
                )
        if tables.targets and step.columns.target_columns and not step.columns.star_sources:
            # (a * over a table without schema: the target has more columns than those named)
            created = tables.statement_type in (
                StatementType.CTAS,
                StatementType.CREATE_VIEW,
                StatementType.SELECT_INTO,
            )
            if created and catalog.columns(tables.targets[0]) is None:
                catalog = catalog.with_table(tables.targets[0], step.columns.target_columns)
        return step, ctx, catalog

    def _fallback(self, chunk: Chunk, index: int, ctx: NameContext) -> _Step:
        """The fallback tiers on a statement sqlglot could not read: sqlfluff, then sqlparse.

        The statement keeps sqlglot's syntax error as its reason, unless a tier ran out of time
        (TIMEOUT) or crashed: a crash is INTERNAL (a bug in us or in the tier's library), the
        cascade goes on to the next tier, and the first crash stays the reason whatever the
        later tiers give.
        """
        failure = _syntax_failure(chunk.error)
        crash: ParseFailure | None = None
        timeout = self.options.timeout_seconds
        if (
            self.options.use_sqlfluff
            and len(chunk.text) <= self.options.sqlfluff_max_chars
            and not _cut_short(chunk.text, chunk.error, ctx.dialect)
        ):
            budget = min(timeout, self.options.sqlfluff_timeout_seconds)
            try:
                self._sqlfluff.prepare(ctx.dialect)  # (outside the limit: once per dialect)
                with time_limit(budget):
                    found = self._sqlfluff.read(chunk, ctx)
                if found is not None:
                    return _Step(
                        index, found.statement_type, ParseStatus.OK, ParserName.SQLFLUFF, found
                    )
            except ParseTimeoutError:
                if budget >= timeout:  # the statement's own limit, not the tier's budget
                    failure = ParseFailure(ErrorKind.TIMEOUT, "sqlfluff timed out")
            except Exception as exc:
                crash = _tier_crash(ParserName.SQLFLUFF, exc)
        if self.options.use_sqlparse:
            try:
                with time_limit(timeout):
                    found = self._sqlparse.read(chunk, ctx)
                if found is not None and (found.sources or found.targets):
                    return _Step(
                        index,
                        found.statement_type,
                        ParseStatus.PARTIAL,
                        ParserName.SQLPARSE,
                        found,
                        failure=crash or failure,
                    )
            except ParseTimeoutError:
                failure = ParseFailure(ErrorKind.TIMEOUT, "sqlparse timed out")
            except Exception as exc:
                crash = crash or _tier_crash(ParserName.SQLPARSE, exc)
        failure = crash or failure
        status = ParseStatus.TIMEOUT if failure.kind == ErrorKind.TIMEOUT else ParseStatus.FAILED
        return _Step(index, StatementType.UNKNOWN, status, ParserName.NONE, failure=failure)

    # ------------------------------------------------------------------ assembly
    def _assemble(self, steps: list[_Step], dialect: str | None) -> ParseResult:
        statements = tuple(_statement_lineage(s) for s in steps)
        parser = _worst_parser(steps)
        failed = [s for s in steps if s.status in (ParseStatus.FAILED, ParseStatus.TIMEOUT)]
        partial = [s for s in steps if s.status == ParseStatus.PARTIAL]
        if len(steps) == 1:
            step = steps[0]
            sources = tuple(sorted(step.tables.sources)) if step.tables else ()
            targets = tuple(sorted(step.tables.targets)) if step.tables else ()
            return ParseResult(
                statement_type=step.statement_type,
                parser=parser,
                status=step.status,
                sources=sources,
                targets=targets,
                # a temporary object it creates (temp view or table): a target, never a dataset
                intermediates=tuple(sorted(set(step.tables.temporary))) if step.tables else (),
                table_edges=tuple(TableEdge(s, t) for s in sources for t in targets),
                column_edges=step.columns.edges,
                result_columns=step.columns.result_columns,
                statements=statements,
                failure=step.failure,
            )
        script = collapse_script(
            [
                ScriptStep(
                    s.statement_type,
                    list(s.tables.sources) if s.tables else [],
                    list(s.tables.targets) if s.tables else [],
                    list(s.columns.edges),
                    list(s.tables.temporary) if s.tables else [],
                    list(s.tables.dropped) if s.tables else [],
                    [old for old, _ in s.tables.renamed] if s.tables else [],
                    list(s.columns.star_sources),
                    list(s.columns.star_indirect),
                )
                for s in steps
            ],
            collapse_persistent=self.options.collapse_persistent_intermediates,
        )
        if failed and len(failed) == len(steps):
            status = failed[0].status
        elif failed or partial:
            status = ParseStatus.PARTIAL
        else:
            status = ParseStatus.OK
        failure = (failed or partial)[0].failure if (failed or partial) else None
        result_columns: tuple[ResultColumn, ...] = ()
        for s in steps:
            result_columns += s.columns.result_columns
        return ParseResult(
            statement_type=StatementType.SCRIPT,
            parser=parser,
            status=status,
            sources=tuple(sorted(script.sources)),
            targets=tuple(sorted(script.targets)),
            intermediates=script.intermediates,
            table_edges=script.table_edges,
            column_edges=script.column_edges,
            result_columns=result_columns if not script.targets else (),
            statements=statements,
            failure=failure,
        )


# ---------------------------------------------------------------------- helpers
_VariableValue = tuple[frozenset[str], frozenset[tuple[str, str]]]
"""What a variable set from a query was computed from: tables, and (table, column) pairs."""


def _track_variables(
    step: _Step, statement: exp.Expr, ctx: NameContext, values: dict[str, _VariableValue]
) -> None:
    """Variables set from queries, through a script (see :mod:`~lineage_udfs.core.variables`).

    A statement that reads a variable (``$m``, ``@m``, ``:m``, a declared ``m``) also reads the
    tables the variable's query read: they become its sources, and their columns INDIRECT
    dependencies of each of its target columns (subtype: where the variable is read). A
    statement that sets variables from a query records what they were computed from,
    including the variables that query read in turn.
    """
    tables = step.tables
    if tables is None:
        return
    read_tables: set[str] = set()
    read_columns: set[tuple[str, str]] = set()
    extra: dict[ColumnEdge, None] = {}
    for name, subtype in variable_uses(statement, frozenset(values), ctx):
        from_tables, from_columns = values[name]
        read_tables.update(from_tables)
        read_columns.update(from_columns)
        for target in tables.targets[:1]:
            for column in step.columns.target_columns:
                for table, source in sorted(from_columns):
                    extra[
                        ColumnEdge(
                            table, source, target, column, TransformationType.INDIRECT, subtype
                        )
                    ] = None
    for name in sorted(read_tables):
        if name not in tables.sources:
            tables.sources.append(name)
    if extra:
        known = set(step.columns.edges)
        step.columns = replace(
            step.columns, edges=step.columns.edges + tuple(e for e in extra if e not in known)
        )
    assigned = assigned_variables(statement, step.statement_type)
    if assigned:
        read_tables.update(tables.sources)
        read_columns.update((r.source_table, r.source_column) for r in step.columns.result_columns)
        for name in assigned:
            values[name] = (frozenset(read_tables), frozenset(read_columns))


def _lower(value: str | None) -> str | None:
    return value.lower() if value else None


def _failed(
    kind: ErrorKind, message: str, *, status: ParseStatus = ParseStatus.FAILED
) -> ParseResult:
    return ParseResult(
        StatementType.UNKNOWN, ParserName.NONE, status, failure=ParseFailure(kind, message)
    )


def _tier_crash(tier: ParserName, exc: Exception) -> ParseFailure:
    """A fallback tier raised: INTERNAL, naming the tier and the exception's type only (its
    text may quote the statement, literals included).

    Examples:
        >>> failure = _tier_crash(ParserName.SQLFLUFF, ValueError("near 'pw_42'"))
        >>> failure.kind, failure.message
        (<ErrorKind.INTERNAL: 'INTERNAL'>, 'sqlfluff tier failed: ValueError')
    """
    return ParseFailure(ErrorKind.INTERNAL, f"{tier} tier failed: {type(exc).__name__}")


def _with_ms(result: ParseResult, started: float) -> ParseResult:
    from dataclasses import replace

    return replace(result, parse_ms=(time.perf_counter() - started) * 1000)


def _worst_parser(steps: list[_Step]) -> ParserName:
    order = [ParserName.SQLGLOT, ParserName.SQLFLUFF, ParserName.SQLPARSE, ParserName.NONE]
    used = {s.parser for s in steps}
    for name in reversed(order):
        if name in used and name != ParserName.NONE:
            return name
    return ParserName.NONE if ParserName.NONE in used else ParserName.SQLGLOT


def _statement_lineage(step: _Step) -> StatementLineage:
    return StatementLineage(
        index=step.index,
        statement_type=step.statement_type,
        status=step.status,
        sources=tuple(step.tables.sources) if step.tables else (),
        targets=tuple(step.tables.targets) if step.tables else (),
        column_edges=step.columns.edges,
        failure=step.failure,
    )


def _cut_short(text: str, error: Exception | None, dialect: str | None) -> bool:
    """Whether a statement sqlglot rejected is cut short: a string or comment that never ends,
    brackets that never close, or a syntax error at the very end of the text (a log that
    truncates long statements). No grammar reads such text, so the sqlfluff tier (the costly
    one) is not tried; the sqlparse tier still finds what tables it can.

    Examples:
        >>> _cut_short("INSERT INTO t SELECT a FROM s WHERE b IN (1, 2", None, "spark")
        True
        >>> import sqlglot
        >>> def error(sql):
        ...     try:
        ...         sqlglot.parse(sql, read="spark")
        ...     except Exception as exc:
        ...         return exc
        >>> [_cut_short(s, error(s), "spark") for s in (
        ...     "INSERT INTO t SELECT a FROM s WHERE b = 'x",  # string never ends
        ...     "INSERT INTO t SELECT a FROM s JOIN u ON s.",  # error at the end
        ...     "INSERT INTO t SELECT a FROM s WHERE b = 'x'",
        ...     "INSERT INTO t SELECT a FROM s WHERE b = 'x' AND",
        ...     "INSERT INTO t SELECT a FROM s WHERE b = = 1 AND c = 2")]
        [True, True, False, True, False]
        >>> _cut_short("INSERT INTO t", IncompleteStatementError(), "spark")
        True
    """
    if isinstance(error, IncompleteStatementError) or type(error).__name__ == "TokenError":
        return True
    masked = mask_literals(text, dialect)
    if masked.count("(") != masked.count(")"):
        return True
    errors = getattr(error, "errors", None)
    if errors:
        line, col = errors[0].get("line"), errors[0].get("col")
        if isinstance(line, int) and isinstance(col, int) and line >= 1:
            lines = text.split("\n")
            offset = sum(len(x) + 1 for x in lines[: line - 1]) + col
            return not text[offset:].strip()
    return False


_QUOTED_RE = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\[[^\]]*\]")


def _syntax_failure(error: Exception | None) -> ParseFailure:
    """A syntax failure built from the error's description and position only (no SQL text)."""
    line = col = None
    description = "could not parse statement"
    errors = getattr(error, "errors", None)
    if errors:
        first = errors[0]
        line, col = first.get("line"), first.get("col")
        description = str(first.get("description") or description)
    elif error is not None and type(error).__name__ == "TokenError":
        description = "could not tokenize statement"
    description = re.sub(r"<Token[^>]*>", "token", description.split("\n")[0])
    description = _QUOTED_RE.sub("?", description)
    description = re.sub(r"\d+", "?", description)[:160]
    where = f" at line {line}, col {col}" if line is not None else ""
    return ParseFailure(ErrorKind.SYNTAX, f"{description}{where}", line, col)
