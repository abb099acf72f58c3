"""The flat shapes that leave the parser: the parse-result record and the canonical query log.

Each is described once, here, as a typed dataclass; everything else is derived from it:

- :class:`ParseRecord` is one parse result as stored and emitted: scalars, lists of strings and
  lists of flat records (:class:`~lineage_udfs.core.models.TableEdge`,
  :class:`~lineage_udfs.core.models.ColumnEdge`, :class:`StatementRecord`). The Spark struct of
  the parse UDF and of ``parsed_statements`` (``spark.schemas``), the Arrow arrays the UDF
  returns (``spark.arrow_results``) and the input of event building (``emit.events``) all come
  from its fields.
- :class:`QueryLogRow` is a row of the canonical query log, the columns every reader produces
  (``spark.schemas.QUERY_LOG_SCHEMA``, the ``columns`` mapping of ``conf/*.yaml``).

:func:`fields_of` reads a record's typed field list from its annotations.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

from lineage_udfs.core.models import ColumnEdge, ParseFailure, ParseResult, TableEdge


class Kind(StrEnum):
    """The value kinds a record field can have."""

    STRING = "string"
    DOUBLE = "double"
    INT = "int"
    BOOLEAN = "boolean"
    TIMESTAMP = "timestamp"
    STRINGS = "list<string>"
    RECORDS = "list<record>"


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a record: its name, kind and, for ``RECORDS``, the element's record type."""

    name: str
    kind: Kind
    element: type | None = None


_SCALARS: dict[type, Kind] = {
    str: Kind.STRING,
    float: Kind.DOUBLE,
    int: Kind.INT,
    bool: Kind.BOOLEAN,
    datetime: Kind.TIMESTAMP,
}


def _field_spec(name: str, hint: Any) -> FieldSpec:
    if get_origin(hint) in (Union, types.UnionType):
        (hint,) = (a for a in get_args(hint) if a is not type(None))
    if get_origin(hint) is tuple:
        element = get_args(hint)[0]
        if element is str:
            return FieldSpec(name, Kind.STRINGS)
        if dataclasses.is_dataclass(element):
            return FieldSpec(name, Kind.RECORDS, element)  # type: ignore[arg-type]
    for base, kind in _SCALARS.items():
        if isinstance(hint, type) and issubclass(hint, base):
            return FieldSpec(name, kind)
    raise TypeError(f"field {name}: no record kind for {hint!r}")


_FIELDS: dict[type, tuple[FieldSpec, ...]] = {}


def fields_of(record: type) -> tuple[FieldSpec, ...]:
    """The typed field list of a record dataclass, in declaration order.

    Examples:
        >>> [(f.name, str(f.kind)) for f in fields_of(TableEdge)]
        [('source_table', 'string'), ('target_table', 'string')]
        >>> spec = fields_of(ParseRecord)[-1]
        >>> spec.name, str(spec.kind), spec.element is StatementRecord
        ('statements', 'list<record>', True)
    """
    specs = _FIELDS.get(record)
    if specs is None:
        hints = get_type_hints(record)
        fields = dataclasses.fields(record)
        specs = _FIELDS[record] = tuple(_field_spec(f.name, hints[f.name]) for f in fields)
    return specs


def field_names(record: type) -> tuple[str, ...]:
    """The names of :func:`fields_of` ``record``."""
    return tuple(f.name for f in fields_of(record))


@dataclasses.dataclass(frozen=True, slots=True)
class QueryLogRow:
    """A row of the canonical query log: what every reader maps its source to, in this order."""

    query_id: str | None = None
    query_text: str | None = None
    dialect: str | None = None
    default_database: str | None = None
    default_schema: str | None = None
    user_name: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    status: str | None = None
    source_system: str | None = None
    object_kind: str | None = None
    object_name: str | None = None


QUERY_LOG_COLUMNS: tuple[str, ...] = field_names(QueryLogRow)
"""Columns of the canonical query log, in order."""


@dataclasses.dataclass(frozen=True, slots=True)
class StatementRecord:
    """One statement of a script, flat: its failure as ``error_kind`` and ``error``."""

    index: int = 0
    statement_type: str = "UNKNOWN"
    status: str = "ok"
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    error_kind: str | None = None
    error: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ParseRecord:
    """One parse result, flat: what the parse UDF returns and ``parsed_statements`` stores.

    Failure messages in a record are masked by whoever builds it (:func:`parse_record`'s
    ``mask``): a syntax error may quote the statement.
    """

    statement_type: str = "UNKNOWN"
    parser: str = "none"
    status: str = "ok"
    error_kind: str | None = None
    error: str | None = None
    parse_ms: float = 0.0
    masked_sql: str | None = None
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    intermediates: tuple[str, ...] = ()
    table_edges: tuple[TableEdge, ...] = ()
    column_edges: tuple[ColumnEdge, ...] = ()
    statements: tuple[StatementRecord, ...] = ()


PARSE_RESULT_FIELDS: tuple[str, ...] = field_names(ParseRecord)
"""Fields of the parse-result record, in order."""


def _keep(message: str) -> str:
    return message


def parse_record(result: ParseResult, mask: Callable[[str], str] = _keep) -> ParseRecord:
    """The record of ``result``; ``mask`` is applied to every failure message.

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, ParseStatus, StatementType
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("db.a",), targets=("db.b",))
        >>> rec = parse_record(r)
        >>> rec.status, rec.sources, rec.error_kind
        ('ok', ('db.a',), None)
    """

    def kind(failure: ParseFailure | None) -> str | None:
        return str(failure.kind) if failure else None

    def error(failure: ParseFailure | None) -> str | None:
        return mask(failure.message) if failure else None

    return ParseRecord(
        statement_type=str(result.statement_type),
        parser=str(result.parser),
        status=str(result.status),
        error_kind=kind(result.failure),
        error=error(result.failure),
        parse_ms=float(result.parse_ms),
        masked_sql=result.masked_sql,
        sources=result.sources,
        targets=result.targets,
        intermediates=result.intermediates,
        table_edges=result.table_edges,
        column_edges=result.column_edges,
        statements=tuple(
            StatementRecord(
                index=s.index,
                statement_type=str(s.statement_type),
                status=str(s.status),
                sources=s.sources,
                targets=s.targets,
                error_kind=kind(s.failure),
                error=error(s.failure),
            )
            for s in result.statements
        ),
    )


def as_dict(record: Any) -> dict[str, Any]:
    """A record as plain data: scalars as they are (enums as their string), lists as lists."""
    out: dict[str, Any] = {}
    for spec in fields_of(type(record)):
        value = getattr(record, spec.name)
        if spec.kind is Kind.STRINGS:
            value = list(value)
        elif spec.kind is Kind.RECORDS:
            value = [as_dict(v) for v in value]
        elif isinstance(value, StrEnum):
            value = str(value)
        out[spec.name] = value
    return out


def to_record(result: ParseResult, mask: Callable[[str], str] = _keep) -> dict[str, Any]:
    """``parse_record(result, mask)`` as plain data (JSON-ready; the pandas UDF's rows).

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, ParseStatus, StatementType
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("db.a",), targets=("db.b",))
        >>> rec = to_record(r)
        >>> rec["status"], rec["sources"], rec["error_kind"]
        ('ok', ['db.a'], None)
    """
    return as_dict(parse_record(result, mask))


R = TypeVar("R")


def _defaulted(record: type) -> frozenset[str]:
    missing = dataclasses.MISSING
    return frozenset(
        f.name
        for f in dataclasses.fields(record)
        if f.default is not missing or f.default_factory is not missing
    )


def from_dict(record: type[R], row: Mapping[str, Any]) -> R:
    """A record from a mapping shaped like it (a Spark row's ``asDict(recursive=True)``).

    Missing or null fields take the record's default (None where it has none); empty strings
    are dropped from string lists; extra keys are ignored.

    Examples:
        >>> from_dict(StatementRecord, {"index": 2, "sources": ["a", None, ""], "x": 1})
        StatementRecord(index=2, statement_type='UNKNOWN', status='ok', sources=('a',), \
targets=(), error_kind=None, error=None)
    """
    values: dict[str, Any] = {}
    for spec in fields_of(record):
        value = row.get(spec.name)
        if value is None:
            if spec.name not in _defaulted(record):
                values[spec.name] = None
            continue
        if spec.kind is Kind.STRINGS:
            value = tuple(v for v in value if v)
        elif spec.kind is Kind.RECORDS:
            assert spec.element is not None
            value = tuple(from_dict(spec.element, v) for v in value)
        values[spec.name] = value
    return record(**values)
