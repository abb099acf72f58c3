"""The result every tier of the cascade gives for one statement: :class:`StatementTables`.

sqlglot's tier (:func:`~lineage_udfs.core.tables.extract_tables`) and the fallback tiers
(:mod:`~lineage_udfs.core.fallback`: sqlfluff, sqlparse) fill the same record; the parser
assembles results without asking which tier read a statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from lineage_udfs.core.enums import StatementType


@dataclass(slots=True)
class StatementTables:
    """The table tier's view of one statement (mutable while built, read-only after)."""

    statement_type: StatementType
    sources: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    query: exp.Expr | None = None
    """The query whose output feeds the (first) target, if any."""
    target_columns: list[str] = field(default_factory=list)
    """Explicit target column list (INSERT (a, b), CREATE VIEW v (a, b))."""
    temporary: list[str] = field(default_factory=list)
    """Targets created as temporary objects (temp tables and views, ``#tables``)."""
    dropped: list[str] = field(default_factory=list)
    use_database: str | None = None
    renamed: list[tuple[str, str]] = field(default_factory=list)
