"""Statements sqlglot keeps as an unparsed Command that still move data between tables.

Owns the patterns of such statements (``RENAME TABLE a TO b``, Databricks ``CREATE TABLE t
CLONE s``, ``ALTER TABLE t EXCHANGE PARTITION … WITH TABLE s``, ClickHouse ``ATTACH|REPLACE|MOVE
PARTITION``, Redshift ``ALTER TABLE t APPEND FROM s``, ``EXCHANGE TABLES``, ``MSCK REPAIR``,
``REFRESH MATERIALIZED VIEW``), their statement type (:func:`classify_command`) and the tables
they name (:func:`command_tables`).
"""

from __future__ import annotations

import re

from sqlglot import exp

from lineage_udfs.core.dialects import qualify_parts
from lineage_udfs.core.enums import StatementType
from lineage_udfs.core.naming import NameContext, split_name
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.tiers import StatementTables

_PART = r"(?:`[^`]+`|\"[^\"]+\"|\[[^\]]+\]|[\w$#@]+)"
"""One part of a table name in a Command's text: quoted in any style, or a bare word."""


def _named(group: str) -> str:
    """A pattern capturing a dotted table name as group ``group``."""
    return rf"(?P<{group}>{_PART}(?:\.{_PART})*)"


_RENAME_RE = re.compile(
    r"^\s*(?:(?:TABLES?|VIEW)\s+)?(?!(?:USER|DATABASE|SCHEMA|COLUMN|INDEX|ROLE|DICTIONARY|"
    r"PROCEDURE|FUNCTION|MACRO|TRIGGER|SEQUENCE)\b)(.+\s+TO\s+.+)$",
    re.IGNORECASE | re.DOTALL,
)
"""``RENAME TABLE a TO b[, c TO d]`` (MySQL, ClickHouse), ``RENAME VIEW`` (Teradata) and
Oracle's ``RENAME a TO b``; not users, databases, routines or sequences."""


_CLONE_RE = re.compile(
    r"^\s*(?:OR\s+REPLACE\s+)?(?:SNAPSHOT\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    + _named("dst")
    + r"\s+(?:SHALLOW\s+|DEEP\s+)?CLONE\s+"
    + _named("src"),
    re.IGNORECASE,
)
"""Databricks ``CREATE TABLE t [SHALLOW|DEEP] CLONE s``, BigQuery ``CREATE SNAPSHOT TABLE t
CLONE s [FOR SYSTEM_TIME AS OF …]`` (Commands to sqlglot): s's data is copied into t."""


_EXCHANGE_RE = re.compile(
    r"^\s*TABLE\s+" + _named("dst") + r"\s+EXCHANGE\s+(?:SUB)?PARTITION\s*(?:\(.*?\)|\S+)\s*"
    r"WITH\s+TABLE\s+" + _named("src") + r"(?:\s+.*)?$",
    re.IGNORECASE | re.DOTALL,
)
"""Hive ``ALTER TABLE t EXCHANGE PARTITION (…) WITH TABLE s``, Oracle ``ALTER TABLE t EXCHANGE
PARTITION p WITH TABLE s [INCLUDING INDEXES …]``: s's rows become a partition of t."""


_PARTITION_FROM_RE = re.compile(
    r"^\s*TABLE\s+" + _named("dst") + r"(?:\s+ON\s+CLUSTER\s+\S+)?\s+(?:ATTACH|REPLACE)\s+"
    r"PARTITION\s+.+?\s+FROM\s+" + _named("src") + r"\s*$",
    re.IGNORECASE | re.DOTALL,
)
"""ClickHouse ``ALTER TABLE t ATTACH|REPLACE PARTITION p FROM s``: s's partition copied to t."""


_MOVE_PARTITION_RE = re.compile(
    r"^\s*TABLE\s+" + _named("src") + r"(?:\s+ON\s+CLUSTER\s+\S+)?\s+MOVE\s+PARTITION\s+.+?\s+"
    r"TO\s+TABLE\s+" + _named("dst") + r"\s*$",
    re.IGNORECASE | re.DOTALL,
)
"""ClickHouse ``ALTER TABLE s MOVE PARTITION p TO TABLE t``: the partition moves to t."""


_APPEND_RE = re.compile(
    r"^\s*TABLE\s+"
    + _named("dst")
    + r"\s+APPEND\s+FROM\s+"
    + _named("src")
    + r"(?:\s+(?:IGNOREEXTRA|FILLTARGET))?\s*$",
    re.IGNORECASE,
)
"""Redshift ``ALTER TABLE t APPEND FROM s``: s's rows move into t."""


_EXCHANGE_TABLES_RE = re.compile(
    r"^\s*(?:TABLES|DICTIONARIES)\s+" + _named("dst") + r"\s+AND\s+" + _named("src") + r"\s*$",
    re.IGNORECASE,
)
"""ClickHouse ``EXCHANGE TABLES a AND b``: the tables swap contents."""


_REPAIR_TABLE_RE = re.compile(r"^\s*(?:REPAIR\s+)?TABLE\s+" + _named("dst"), re.IGNORECASE)
"""Hive/Spark ``MSCK REPAIR TABLE t``: t's partition metadata is rebuilt (DDL on t)."""


_REFRESH_RE = re.compile(
    r"^\s*(?:MATERIALIZED\s+VIEW|STREAMING\s+TABLE)\s+(?:CONCURRENTLY\s+)?"
    + _named("dst")
    + r"(?:\s+(?:WITH\s+(?:NO\s+)?DATA|FULL|SYNC|ASYNC|RESTRICT|CASCADE))*\s*;?\s*$",
    re.IGNORECASE,
)
"""``REFRESH MATERIALIZED VIEW [CONCURRENTLY] mv`` (Postgres, Redshift, Databricks, Trino) and
Databricks ``REFRESH STREAMING TABLE t``: the object's rows are recomputed (see
:func:`~lineage_udfs.core.classify.refreshes_rows`). Not Spark ``REFRESH TABLE t``, which only
reloads cached metadata."""


_DYNAMIC_REFRESH_RE = re.compile(
    r"^\s*DYNAMIC\s+TABLE\s+(?:IF\s+EXISTS\s+)?" + _named("dst") + r"\s+REFRESH\s*;?\s*$",
    re.IGNORECASE,
)
"""Snowflake ``ALTER DYNAMIC TABLE dt REFRESH`` (Snowflake's materialized views refresh by
themselves and have no REFRESH statement)."""


_COMMAND_RULES: tuple[tuple[str, re.Pattern[str], StatementType], ...] = (
    ("CREATE", _CLONE_RE, StatementType.CTAS),
    ("ALTER", _EXCHANGE_RE, StatementType.SWAP),
    ("ALTER", _PARTITION_FROM_RE, StatementType.INSERT),
    ("ALTER", _MOVE_PARTITION_RE, StatementType.INSERT),
    ("ALTER", _APPEND_RE, StatementType.INSERT),
    ("EXCHANGE", _EXCHANGE_TABLES_RE, StatementType.SWAP),
    ("MSCK", _REPAIR_TABLE_RE, StatementType.DDL),
    ("MSCK REPAIR", _REPAIR_TABLE_RE, StatementType.DDL),
    ("REFRESH", _REFRESH_RE, StatementType.INSERT_OVERWRITE),
    ("ALTER", _DYNAMIC_REFRESH_RE, StatementType.INSERT_OVERWRITE),
)
"""Statements sqlglot reads as a Command that name the tables data moves between: the keyword,
the pattern of the rest (groups ``src`` and ``dst``) and the statement type."""


def _command_text(statement: exp.Command) -> str:
    expression = statement.expression
    if isinstance(expression, str):
        return expression
    return expression.this if isinstance(expression, exp.Literal) else ""


def _command_rule(statement: exp.Command) -> tuple[re.Match[str], StatementType] | None:
    keyword = str(statement.this or "").upper()
    text = _command_text(statement)
    for word, pattern, kind in _COMMAND_RULES:
        if word == keyword:
            match = pattern.match(text)
            if match is not None:
                return match, kind
    return None


def classify_command(statement: exp.Command) -> StatementType:
    keyword = str(statement.this or "").upper()
    text = _command_text(statement)
    if keyword == "RENAME" and _RENAME_RE.match(text):
        return StatementType.RENAME
    rule = _command_rule(statement)
    if rule is not None:
        return rule[1]
    if keyword in ("CREATE", "ALTER", "DROP", "REPLACE"):
        return StatementType.DDL
    return StatementType.SESSION


def command_tables(
    statement: exp.Command,
    kind: StatementType,
    ctx: NameContext,
    opts: ParserOptions,
    result: StatementTables,
) -> None:
    text = _command_text(statement)

    def name_of(raw: str) -> str:
        parts = [p.strip('`"[]').lower() for p in split_name(raw.strip())]
        return qualify_parts(
            parts, default_catalog=ctx.default_catalog, default_schema=ctx.default_schema
        )

    if kind == StatementType.RENAME:
        match = _RENAME_RE.match(text)
        for pair in (match.group(1) if match else "").split(","):
            bits = re.split(r"\s+to\s+", pair.strip(), flags=re.IGNORECASE)
            if len(bits) == 2:
                old, new = name_of(bits[0]), name_of(bits[1])
                result.renamed.append((old, new))
                if opts.rename_as_lineage:
                    result.sources.append(old)
                    result.targets.append(new)
        return
    rule = _command_rule(statement)
    if rule is None:
        return
    match, _ = rule
    groups = match.groupdict()
    target = name_of(groups["dst"])
    source = name_of(groups["src"]) if groups.get("src") else None
    if kind == StatementType.DDL or source is None:  # names only the table it changes
        if opts.ddl_as_target:
            result.targets.append(target)
        return
    if source is not None:
        result.sources.append(source)
    result.targets.append(target)
    if (
        kind == StatementType.SWAP
        and source is not None
        and (statement.this or "").upper() == "EXCHANGE"
    ):
        result.sources.append(target)  # EXCHANGE TABLES: each table gets the other's rows
        result.targets.append(source)
