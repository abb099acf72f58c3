"""Dialect names and identifier normalization: the one place that maps names to sqlglot's.

Every table and column name in a result goes through :func:`normalize_identifier` so that the
same object is spelled the same way whatever the statement's quoting and case.
"""

from __future__ import annotations

import functools
from typing import Final

_ALIASES: Final[dict[str, str | None]] = {
    "ansi": None,
    "default": None,
    "sql": None,
    "generic": None,
    "sqlserver": "tsql",
    "mssql": "tsql",
    "azuresql": "tsql",
    "synapse": "tsql",
    "fabric": "fabric",
    "sparksql": "spark",
    "spark2": "spark2",
    "spark3": "spark",
    "postgresql": "postgres",
    "pg": "postgres",
    "greenplum": "postgres",
    "mariadb": "mysql",
    "aurora": "mysql",
    "bq": "bigquery",
    "googlesql": "bigquery",
    "awsathena": "athena",
    "presto": "presto",
    "trino": "trino",
    "starburst": "trino",
    "ch": "clickhouse",
    "delta": "databricks",
    "azuredatabricks": "databricks",
    "oracle": "oracle",
    "plsql": "oracle",
    "tsql": "tsql",
    "db2": None,
}

CASE_SENSITIVE_QUOTED: Final[frozenset[str | None]] = frozenset(
    {
        None,  # ANSI: a quoted identifier is case-sensitive
        "postgres",  # folds unquoted to lower; quoted keeps case
        "snowflake",  # folds unquoted to upper; quoted keeps case
        "oracle",  # folds unquoted to upper; quoted keeps case
        "clickhouse",  # identifiers are case-sensitive
        "materialize",
        "risingwave",
    }
)
"""Dialects where a quoted identifier keeps its case in our canonical names.

Everywhere else (Spark, Hive, Databricks, BigQuery, MySQL, T-SQL, Trino, DuckDB, Redshift with its
default ``enable_case_sensitive_identifier=off``) identifiers compare case-insensitively, so the
canonical name is lower-case.
"""


@functools.lru_cache(maxsize=512)
def to_sqlglot_dialect(name: str | None) -> str | None:
    """Map a source/connection type to sqlglot's dialect name (``None``: sqlglot's default).

    Args:
        name: a dialect, engine or connection type as found in query logs, any case.

    Returns:
        sqlglot's dialect name, or None for ANSI / unknown names.

    Examples:
        >>> to_sqlglot_dialect("SQLServer"), to_sqlglot_dialect("sparksql")
        ('tsql', 'spark')
        >>> to_sqlglot_dialect("postgresql"), to_sqlglot_dialect("ansi"), to_sqlglot_dialect(None)
        ('postgres', None, None)
    """
    if not name:
        return None
    key = name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    if key in _ALIASES:
        return _ALIASES[key]
    from sqlglot.dialects.dialect import Dialect

    return key if key in Dialect.classes else None


def normalize_identifier(name: str, *, quoted: bool, dialect: str | None) -> str:
    """Canonical spelling of one identifier part.

    Args:
        name: the identifier without quotes.
        quoted: whether the SQL quoted it.
        dialect: sqlglot dialect name.

    Returns:
        The name lower-cased, unless quoted in a case-sensitive dialect.

    Examples:
        >>> normalize_identifier("Orders", quoted=False, dialect="snowflake")
        'orders'
        >>> normalize_identifier("Orders", quoted=True, dialect="snowflake")
        'Orders'
        >>> normalize_identifier("Orders", quoted=True, dialect="spark")
        'orders'
    """
    if quoted and dialect in CASE_SENSITIVE_QUOTED and name != name.upper():
        return name
    return name.lower()


def qualify_parts(
    parts: list[str],
    *,
    default_catalog: str | None = None,
    default_schema: str | None = None,
) -> str:
    """Join name parts, filling missing leading parts from the session defaults.

    Args:
        parts: the name's parts as written, already normalized (``[db, table]`` …).
        default_catalog: session catalog / database / project.
        default_schema: session schema / dataset.

    Returns:
        The dotted canonical name.

    Examples:
        >>> qualify_parts(["t"], default_catalog="db", default_schema="sch")
        'db.sch.t'
        >>> qualify_parts(["s", "t"], default_catalog="db")
        'db.s.t'
        >>> qualify_parts(["t"], default_catalog="db")
        'db.t'
        >>> qualify_parts(["a", "b", "t"], default_catalog="db", default_schema="x")
        'a.b.t'
    """
    parts = [p for p in parts if p]
    if len(parts) == 1 and default_schema:
        parts = [default_schema, *parts]
    if (len(parts) == 2 and default_catalog) or (len(parts) == 1 and default_catalog):
        parts = [default_catalog, *parts]
    return ".".join(parts)
