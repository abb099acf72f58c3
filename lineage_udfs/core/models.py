"""Immutable result models of the lineage core.

Frozen, slotted dataclasses with tuples: they pickle cheaply to executors, hash for free and
cannot be mutated halfway through a batch. Table and column names inside results are canonical
strings (``catalog.schema.table`` as far as the statement and its context qualify them,
lower-cased unless the dialect keeps a quoted identifier's case).
"""

from __future__ import annotations

from dataclasses import dataclass

from lineage_udfs.core.enums import (
    ErrorKind,
    ParserName,
    ParseStatus,
    StatementType,
    TransformationSubtype,
    TransformationType,
)


@dataclass(frozen=True, slots=True)
class TableRef:
    """A table, view or external dataset (file, stage) named by a statement.

    Attributes:
        name: the table's own name.
        db: schema / database / dataset part, if known.
        catalog: catalog / database / project part, if known.
        is_file: True for a path, stage or URI (COPY INTO, LOAD DATA, INSERT … DIRECTORY).
    """

    name: str
    db: str | None = None
    catalog: str | None = None
    is_file: bool = False

    @property
    def qualified_name(self) -> str:
        """Dotted name with the parts that are known, e.g. ``main.sales.orders``."""
        return ".".join(p for p in (self.catalog, self.db, self.name) if p)


@dataclass(frozen=True, slots=True)
class TableEdge:
    """Data flows from ``source_table`` into ``target_table``."""

    source_table: str
    target_table: str


@dataclass(frozen=True, slots=True)
class ColumnEdge:
    """One column-level dependency, typed as in OpenLineage's column-lineage facet."""

    source_table: str
    source_column: str
    target_table: str
    target_column: str
    transformation_type: TransformationType = TransformationType.DIRECT
    transformation_subtype: TransformationSubtype = TransformationSubtype.IDENTITY


@dataclass(frozen=True, slots=True)
class ResultColumn:
    """Lineage of one output column of a plain SELECT (no target table)."""

    source_table: str
    source_column: str
    output_column: str
    transformation_type: TransformationType = TransformationType.DIRECT
    transformation_subtype: TransformationSubtype = TransformationSubtype.IDENTITY


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """A failure as data. ``message`` never contains a literal from the SQL."""

    kind: ErrorKind
    message: str
    line: int | None = None
    col: int | None = None


@dataclass(frozen=True, slots=True)
class StatementLineage:
    """Lineage of one statement of a script, before temporary objects are collapsed."""

    index: int
    statement_type: StatementType
    status: ParseStatus
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    column_edges: tuple[ColumnEdge, ...] = ()
    failure: ParseFailure | None = None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Lineage of one logged statement or script: what the parse UDF returns per row.

    For a single statement ``table_edges`` is sources x targets. For a script, the tables that
    the script creates and drops (or that are temporary) are listed in ``intermediates`` and
    traced through: ``sources``, ``targets``, ``table_edges`` and ``column_edges`` are the
    collapsed, end-to-end view; ``statements`` keeps the per-statement view.
    """

    statement_type: StatementType
    parser: ParserName
    status: ParseStatus
    masked_sql: str = ""
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    intermediates: tuple[str, ...] = ()
    table_edges: tuple[TableEdge, ...] = ()
    column_edges: tuple[ColumnEdge, ...] = ()
    result_columns: tuple[ResultColumn, ...] = ()
    statements: tuple[StatementLineage, ...] = ()
    failure: ParseFailure | None = None
    parse_ms: float = 0.0
