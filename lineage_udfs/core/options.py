"""Parser options: a frozen dataclass handed from settings to every executor."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ParserOptions:
    """Knobs of the cascade parser.

    Attributes:
        default_dialect: sqlglot dialect used when a log row names none.
        default_catalog: catalog/database that qualifies names when the row gives none.
        default_schema: schema/db that qualifies names when the row gives none.
        column_lineage: compute column lineage (table lineage is always computed).
        timeout_seconds: time limit per statement and parser tier.
        max_sql_chars: statements longer than this are skipped with status ``skipped``.
        use_sqlfluff: try sqlfluff when sqlglot fails.
        use_sqlparse: try sqlparse (table lineage only) when the others fail.
    """

    default_dialect: str = "spark"
    default_catalog: str | None = None
    default_schema: str | None = None
    column_lineage: bool = True
    timeout_seconds: float = 30.0
    max_sql_chars: int = 1_000_000
    use_sqlfluff: bool = True
    use_sqlparse: bool = True
