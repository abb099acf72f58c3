"""The cascade's tiers: one protocol, one result.

Owns :class:`TableTier`, the protocol of the three tiers (sqlglot:
:class:`~lineage_udfs.core.tables.SqlglotTier`; sqlfluff and sqlparse:
:mod:`~lineage_udfs.core.fallback`), and :class:`StatementTables`, the record each of them
fills for one statement. The parser runs the tiers in turn and assembles their results without
asking which tier read a statement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

from sqlglot import exp

from lineage_udfs.core.enums import ParserName, StatementType
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.statements import Chunk


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


@runtime_checkable
class TableTier(Protocol):
    """One tier of the cascade: the table lineage of one statement.

    Attributes:
        parser: the tier's name in results.
    """

    parser: ClassVar[ParserName]

    def read(self, chunk: Chunk, ctx: NameContext) -> StatementTables | None:
        """The statement's table lineage, or None when the tier cannot read it.

        Args:
            chunk: one statement of the logged text (its text, and sqlglot's tree if any).
            ctx: the naming context.
        """
        ...
