"""The cascade's fallback tiers: sqlfluff, then sqlparse. Table lineage only.

They run on a statement sqlglot could not parse. Both work on a generic reading of the SQL:
a name after INSERT INTO / INSERT OVERWRITE TABLE / CREATE … TABLE|VIEW / UPDATE / MERGE INTO /
DELETE FROM / SELECT … INTO is a target; a name after FROM / JOIN / USING is a source; CTE
names are not tables.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from lineage_udfs.core.dialects import qualify_parts
from lineage_udfs.core.enums import ParserName, StatementType
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.statements import Chunk
from lineage_udfs.core.tiers import StatementTables
from lineage_udfs.core.timeout import ParseTimeoutError

_SQLFLUFF_DIALECTS = {
    None: "ansi",
    "spark": "sparksql",
    "spark2": "sparksql",
    "databricks": "databricks",
    "hive": "hive",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
    "postgres": "postgres",
    "redshift": "redshift",
    "mysql": "mysql",
    "tsql": "tsql",
    "oracle": "oracle",
    "trino": "trino",
    "presto": "trino",
    "athena": "athena",
    "duckdb": "duckdb",
    "clickhouse": "clickhouse",
    "sqlite": "sqlite",
    "teradata": "teradata",
    "materialize": "materialize",
    "exasol": "exasol",
}

_TARGET_RE = re.compile(
    r"\b(?:insert\s+(?:overwrite\s+table|overwrite|into\s+table|into)|"
    r"create\s+(?:or\s+replace\s+)?(?:(?:global\s+|local\s+)?(?:temporary|temp|volatile|"
    r"transient|external|materialized)\s+)*(?:table|view)(?:\s+if\s+not\s+exists)?|"
    r"merge\s+into|update|delete\s+from|into\s+table|\binto)\s+([\w.`\"\[\]#@$-]+)",
    re.IGNORECASE,
)
_SOURCE_RE = re.compile(r"\b(?:from|join|using)\s+([\w.`\"\[\]#@$-]+)", re.IGNORECASE)
_CTE_RE = re.compile(r"(?:\bwith|,)\s*([\w`\"]+)\s*(?:\([^)]*\)\s*)?as\s*\(", re.IGNORECASE)
_KEYWORDS = frozenset(
    {
        "select",
        "where",
        "set",
        "values",
        "lateral",
        "unnest",
        "table",
        "on",
        "as",
        "only",
        "dual",
        "the",
        "(",
        "with",
    }
)


def _strip(sql: str) -> str:
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"/\*.*?\*/", " ", sql, flags=re.DOTALL)
    return re.sub(r"'(?:[^']|'')*'", "''", sql)


def _name(raw: str, default_catalog: str | None, default_schema: str | None) -> str | None:
    raw = raw.strip().rstrip(",;)")
    parts = [p.strip('`"[]').lower() for p in raw.split(".") if p.strip('`"[]')]
    if not parts or parts[-1] in _KEYWORDS or not re.match(r"^[\w#@$-]", parts[-1]):
        return None
    return qualify_parts(parts, default_catalog=default_catalog, default_schema=default_schema)


def _statement_type(sql: str) -> StatementType:
    head = sql.lstrip().split(None, 3)
    first = head[0].lower() if head else ""
    second = " ".join(head[1:3]).lower() if len(head) > 1 else ""
    if first == "insert":
        return (
            StatementType.INSERT_OVERWRITE
            if second.startswith("overwrite")
            else (StatementType.INSERT)
        )
    if first == "create":
        if re.search(r"\bview\b", sql[:200], re.IGNORECASE):
            return StatementType.CREATE_VIEW
        return (
            StatementType.CTAS if re.search(r"\bas\b", sql, re.IGNORECASE) else (StatementType.DDL)
        )
    return {
        "select": StatementType.SELECT,
        "with": StatementType.SELECT,
        "merge": StatementType.MERGE,
        "update": StatementType.UPDATE,
        "delete": StatementType.DELETE,
        "drop": StatementType.DROP,
        "truncate": StatementType.TRUNCATE,
        "alter": StatementType.DDL,
        "copy": StatementType.COPY,
    }.get(first, StatementType.UNKNOWN)


def regex_tables(
    sql: str, default_catalog: str | None = None, default_schema: str | None = None
) -> StatementTables:
    """Table lineage from keywords alone (the last resort for text no parser accepts).

    Examples:
        >>> r = regex_tables("WITH c AS (SELECT * FROM a) INSERT INTO t SELECT * FROM c JOIN b")
        >>> r.sources, r.targets
        (['a', 'b'], ['t'])
    """
    text = _strip(sql)
    result = StatementTables(_statement_type(text))
    ctes = {m.group(1).strip('`"').lower() for m in _CTE_RE.finditer(text)}
    for m in _TARGET_RE.finditer(text):
        name = _name(m.group(1), default_catalog, default_schema)
        if name and name not in ctes and name not in result.targets:
            result.targets.append(name)
    for m in _SOURCE_RE.finditer(text):
        name = _name(m.group(1), default_catalog, default_schema)
        if (
            name
            and name not in ctes
            and name not in result.targets
            and (name not in result.sources)
        ):
            result.sources.append(name)
    if result.statement_type == StatementType.SELECT and result.targets:
        result.statement_type = StatementType.SELECT_INTO
    return result


def sqlparse_tables(
    sql: str, default_catalog: str | None = None, default_schema: str | None = None
) -> StatementTables:
    """The sqlparse tier: sqlparse's lexer drops comments (only lexing: its grouping stage
    costs several times more and refuses statements over 10,000 tokens), then
    :func:`regex_tables`.

    A text without ``--``, ``#`` or ``/*`` holds no comment for the lexer to drop (its comment
    tokens all start so) and goes to :func:`regex_tables` as it is: the lexer would give the
    same text back, at a cost that grows with every token.

    Examples:
        >>> r = sqlparse_tables("INSERT INTO t /* FROM x */ SELECT * FROM s -- JOIN y")
        >>> r.sources, r.targets
        (['s'], ['t'])
    """
    text = without_comments(sql) if may_hold_comment(sql) else sql
    return regex_tables(text, default_catalog, default_schema)


class SqlparseTier:
    """The last tier (a :class:`~lineage_udfs.core.tiers.TableTier`): :func:`sqlparse_tables`."""

    parser: ClassVar[ParserName] = ParserName.SQLPARSE

    def read(self, chunk: Chunk, ctx: NameContext) -> StatementTables:
        """The tables keywords name in the statement's text (see :func:`sqlparse_tables`)."""
        return sqlparse_tables(chunk.text, ctx.default_catalog, ctx.default_schema)


def without_comments(sql: str) -> str:
    """``sql`` with each comment sqlparse's lexer finds replaced by a space.

    Examples:
        >>> without_comments("SELECT a /* x */ FROM s -- y")
        'SELECT a   FROM s  '
    """
    from sqlparse import lexer
    from sqlparse import tokens as T

    return "".join(" " if ttype in T.Comment else value for ttype, value in lexer.tokenize(sql))


def may_hold_comment(sql: str) -> bool:
    """Whether sqlparse's lexer could find a comment in ``sql`` (``--`` or ``# `` to the end of
    the line, ``/* … */``); False means it finds none.

    Examples:
        >>> [may_hold_comment(s) for s in ("SELECT 1 -- x", "SELECT /*+ x */ 1", "SELECT 1")]
        [True, True, False]
    """
    return "--" in sql or "/*" in sql or "#" in sql


class SqlfluffTier:
    """Parses with sqlfluff; the parse tree's table references give table lineage.

    One linter per dialect is built on first use and kept (building one is costly).

    Most statements that reach this tier are ones no grammar reads (sqlglot rejected them), and
    building sqlfluff's Python tree from its Rust parser's match is most of the tier's cost.
    So the Rust parser's match is read first (:meth:`_rust_rejects`): a match with an
    unparsable part, or one that stops short of the text's end, would give a tree with an
    unparsable segment, and the statement is rejected there, before any tree is built;
    otherwise the linter parses it (a statement sqlfluff reads pays for the match twice).
    """

    parser: ClassVar[ParserName] = ParserName.SQLFLUFF

    def __init__(self) -> None:
        self._linters: dict[str, Any] = {}
        self._rust: dict[str, tuple[Any, Any] | None] = {}

    def built(self) -> int:
        """How many linters and Rust parser tool pairs the tier has built (one per dialect)."""
        return len(self._linters) + len(self._rust)

    def read(self, chunk: Chunk, ctx: NameContext) -> StatementTables | None:
        """The tier's protocol (:class:`~lineage_udfs.core.tiers.TableTier`): :meth:`tables` of
        the statement's text in the context's dialect and defaults."""
        return self.tables(chunk.text, ctx.dialect, ctx.default_catalog, ctx.default_schema)

    def prepare(self, dialect: str | None) -> None:
        """Import sqlfluff and build the dialect's linter and Rust tools now, so that the first
        statement to need them does not pay for it within its time limit (importing sqlfluff and
        loading a dialect take most of a second of CPU time, the tier's whole budget): a
        statement's answer must not depend on whether it was the first of its process.
        Raises what sqlfluff raises (the caller treats it as the tier's crash)."""
        self._linter(_SQLFLUFF_DIALECTS.get(dialect, "ansi"))

    def _linter(self, name: str) -> Any:
        """The linter of sqlfluff dialect ``name``, built with the dialect's Rust tools on first
        use and kept."""
        self._rust_tools(name)
        if name not in self._linters:
            from sqlfluff.core import FluffConfig, Linter

            self._linters[name] = Linter(config=FluffConfig(overrides={"dialect": name}))
        return self._linters[name]

    def tables(
        self,
        sql: str,
        dialect: str | None,
        default_catalog: str | None = None,
        default_schema: str | None = None,
    ) -> StatementTables | None:
        """Table lineage, or None when sqlfluff cannot parse the statement either."""
        name = _SQLFLUFF_DIALECTS.get(dialect, "ansi")
        linter = self._linter(name)
        if self._rust_rejects(sql, name):
            return None
        parsed = linter.parse_string(sql)
        tree = parsed.tree
        if tree is None or parsed.violations:
            return None
        if any(seg.is_type("unparsable") for seg in tree.recursive_crawl("unparsable")):
            return None
        ctes = {
            seg.raw.strip('`"').lower()
            for cte in tree.recursive_crawl("common_table_expression")
            for seg in cte.segments
            if seg.is_type("identifier")
        }
        result = StatementTables(_statement_type(sql))
        for stmt in tree.recursive_crawl("statement"):
            kind = stmt.segments[0].get_type() if stmt.segments else ""
            refs = list(stmt.recursive_crawl("table_reference"))
            target_ids: set[int] = set()
            if kind in (
                "insert_statement",
                "create_table_statement",
                "create_view_statement",
                "merge_statement",
                "update_statement",
                "delete_statement",
                "insert_overwrite_directory_statement",
            ):
                for ref in refs[:1]:
                    target_ids.add(id(ref))
                    n = _name(ref.raw, default_catalog, default_schema)
                    if n and n not in result.targets:
                        result.targets.append(n)
            for ref in refs:
                if id(ref) in target_ids:
                    continue
                n = _name(ref.raw, default_catalog, default_schema)
                if n and n not in ctes and n not in result.sources:
                    result.sources.append(n)
            break
        if not result.targets:
            # statements sqlfluff reads without a target role (LOAD DATA … INTO TABLE t, …)
            regex = regex_tables(sql, default_catalog, default_schema)
            result.targets = regex.targets
            result.sources = [s for s in result.sources if s not in regex.targets]
        return result

    def _rust_tools(self, name: str) -> tuple[Any, Any] | None:
        """The Rust lexer and parser of sqlfluff dialect ``name`` (None: not installed), built
        on first use and kept."""
        if name not in self._rust:
            self._rust[name] = _rust_tools(name)
        return self._rust[name]

    def _rust_rejects(self, sql: str, name: str) -> bool:
        """Whether sqlfluff's Rust parser's match for ``sql`` has an unparsable part (or the
        lexer an error): then the linter's tree would have an unparsable segment or a
        violation, and the tier would return None. False when unsure: the text holds what the
        linter reads differently from the raw lexer (a Jinja tag, an inline ``sqlfluff:``
        setting), the Rust parser is not installed, or reading its match fails in any way."""
        if _TEMPLATED_OR_CONFIGURED.search(sql):
            return False
        tools = self._rust_tools(name)
        if tools is None:
            return False
        lexer, parser = tools
        try:
            # the Rust lexer's own tokens: what the Rust parser reads (the linter wraps each in
            # a Python segment first, most of its lexing time)
            tokens, errors = lexer._lex(sql)
            if errors:
                return True
            start, end = 0, len(tokens)
            while start < end and not tokens[start].is_code:
                start += 1
            while end > start and not tokens[end - 1].is_code:
                end -= 1
            if start == end:
                return False
            code = list(tokens[start:end])
            match = parser._rs_parser.parse_match_result_from_tokens(code)
            first, stop = match.matched_slice
            if not (stop > first or match.insert_segments) or stop < len(code):
                return True
            stack = [match]
            while stack:
                node = stack.pop()
                if node.matched_class == "UnparsableSegment":
                    return True
                stack.extend(node.child_matches)
        except ParseTimeoutError:
            raise
        except Exception as exc:
            # the Rust parser's own syntax error (brackets that never close …) is a violation
            # for the linter; anything else (an internal of sqlfluff changed): ask the linter
            return type(exc).__name__ == "RsParseError"
        return False


_TEMPLATED_OR_CONFIGURED = re.compile(r"\{[{%#]|sqlfluff", re.IGNORECASE)
"""Text the linter reads otherwise than the raw lexer: Jinja tags (it renders them) and inline
``-- sqlfluff:`` settings (it applies them)."""


def _rust_tools(name: str) -> tuple[Any, Any] | None:
    """sqlfluff's lexer and Rust parser for dialect ``name``, configured as the linter's, or
    None when the Rust parser is not installed."""
    try:
        from sqlfluff.core import FluffConfig
        from sqlfluff.core.parser import Lexer
        from sqlfluff.core.parser.rust_parser import RustParser
    except ImportError:
        return None
    if RustParser is None:
        return None
    config = FluffConfig(overrides={"dialect": name})
    lexer = Lexer(config=config)
    if not hasattr(lexer, "_lex"):  # sqlfluff's Python lexer: no Rust tokens to hand over
        return None
    return lexer, RustParser(config=config)
