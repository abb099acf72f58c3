"""Closed vocabularies of the lineage core, as ``StrEnum`` so they read well in Delta and JSON."""

from __future__ import annotations

from enum import StrEnum


class StatementType(StrEnum):
    """What a statement does, as far as lineage is concerned."""

    SELECT = "SELECT"
    INSERT = "INSERT"
    INSERT_OVERWRITE = "INSERT_OVERWRITE"
    CTAS = "CTAS"
    CREATE_VIEW = "CREATE_VIEW"
    MERGE = "MERGE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    SELECT_INTO = "SELECT_INTO"
    COPY = "COPY"
    RENAME = "RENAME"
    SWAP = "SWAP"
    DROP = "DROP"
    TRUNCATE = "TRUNCATE"
    DDL = "DDL"
    """Schema changes without data flow (CREATE TABLE without AS, ALTER … ADD COLUMN, …)."""
    SESSION = "SESSION"
    """SET / USE / SHOW / DESCRIBE / EXPLAIN / CACHE …: no lineage and no error."""
    SCRIPT = "SCRIPT"
    """Several statements, a stored procedure body or a scripting block."""
    UNKNOWN = "UNKNOWN"


class ParseStatus(StrEnum):
    """Outcome of parsing one statement or script."""

    OK = "ok"
    PARTIAL = "partial"
    """Table lineage found, but part of it (column lineage, one statement of a script) failed."""
    FAILED = "failed"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"
    """Not attempted: too large, empty, or not lineage-relevant."""


class ParserName(StrEnum):
    """The tier of the cascade that produced the result."""

    SQLGLOT = "sqlglot"
    SQLFLUFF = "sqlfluff"
    SQLPARSE = "sqlparse"
    NONE = "none"


class ErrorKind(StrEnum):
    """Why a statement (or part of it) could not be parsed."""

    SYNTAX = "SYNTAX"
    UNSUPPORTED = "UNSUPPORTED"
    TIMEOUT = "TIMEOUT"
    TOO_LARGE = "TOO_LARGE"
    EMPTY = "EMPTY"
    COLUMN_LINEAGE = "COLUMN_LINEAGE"
    """Table lineage succeeded, column lineage did not."""
    INTERNAL = "INTERNAL"


class TransformationType(StrEnum):
    """OpenLineage column-lineage transformation type."""

    DIRECT = "DIRECT"
    INDIRECT = "INDIRECT"


class TransformationSubtype(StrEnum):
    """OpenLineage column-lineage transformation subtype (plus MASKED, see below)."""

    IDENTITY = "IDENTITY"
    TRANSFORMATION = "TRANSFORMATION"
    AGGREGATION = "AGGREGATION"
    MASKED = "MASKED"
    """A DIRECT edge through a hashing/masking function; emitted to OpenLineage as
    TRANSFORMATION (or AGGREGATION) with ``masking=true``."""
    FILTER = "FILTER"
    JOIN = "JOIN"
    GROUP_BY = "GROUP_BY"
    SORT = "SORT"
    WINDOW = "WINDOW"
    CONDITIONAL = "CONDITIONAL"


FAILED_EXECUTION_STATUSES: frozenset[str] = frozenset(
    {"failed", "failure", "fail", "error", "errored", "incident"}
)
"""Logged execution statuses (lower-cased) of a statement that failed: Snowflake ``FAIL`` /
``INCIDENT``, Databricks ``FAILED``, generic ``error``."""

ABORTED_EXECUTION_STATUSES: frozenset[str] = frozenset(
    {"cancelled", "canceled", "aborted", "killed", "timeout"}
)
"""Logged execution statuses (lower-cased) of a statement stopped before it finished."""
