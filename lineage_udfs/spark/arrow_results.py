"""Parse results → one Arrow struct array, built column by column.

The parse UDF returns ``UDF_RESULT_SCHEMA``: scalars, lists of strings and lists of structs (table
edges, column edges, statements). Going through a dict per result and pandas costs PySpark a
Python converter per row and per nested struct (``_create_converter_from_pandas``), then pyarrow
reads the dicts again: ~160 µs per statement, about a tenth of a statement's parse on the 1M-row
log. Here each leaf field is one Python list, appended to while walking the results, and each
nested list one offsets list; pyarrow turns each list into an array in one call (~22 µs per
statement; ``bench/udf_results.py``). The result equals what pyarrow builds from the pandas
UDF's records (a test compares the two).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pyarrow as pa

from lineage_udfs.core.models import ParseFailure, ParseResult

_STRING = pa.string()


def _list(offsets: list[int], values: pa.Array) -> pa.ListArray:
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)


class _StringLists:
    """One ``list<string>`` column: every row's strings in one list, and where each row ends."""

    __slots__ = ("offsets", "values")

    def __init__(self) -> None:
        self.offsets: list[int] = [0]
        self.values: list[str] = []

    def add(self, row: Iterable[str]) -> None:
        self.values.extend(row)
        self.offsets.append(len(self.values))

    def array(self) -> pa.ListArray:
        return _list(self.offsets, pa.array(self.values, _STRING))


def _struct(fields: dict[str, pa.Array], struct_type: pa.StructType) -> pa.StructArray:
    """The struct of ``struct_type`` from arrays by field name (the declared field order)."""
    return pa.StructArray.from_arrays(
        [fields[f.name] for f in struct_type], fields=list(struct_type)
    )


def _element_type(arrow_type: pa.StructType, name: str) -> pa.StructType:
    element = arrow_type.field(name).type.value_type
    if not isinstance(element, pa.StructType):
        raise TypeError(f"{name}: expected a list of structs, got {arrow_type.field(name).type}")
    return element


def results_to_arrow(
    results: Sequence[ParseResult],
    arrow_type: pa.StructType,
    mask_error: Callable[[str], str],
) -> pa.StructArray:
    """One struct of ``arrow_type`` (``UDF_RESULT_SCHEMA`` as Arrow) per result, in order.

    Args:
        results: the parser's results for one batch.
        arrow_type: the UDF's return type; its fields are read by name.
        mask_error: applied to every failure message (a syntax error may quote the statement).

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, ParseStatus, StatementType
        >>> t = pa.struct([("status", pa.string()), ("sources", pa.list_(pa.string()))])
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("db.a",))
        >>> results_to_arrow([r], t, str.upper).to_pylist()
        [{'status': 'ok', 'sources': ['db.a']}]
    """

    def error(failure: ParseFailure | None) -> str | None:
        return mask_error(failure.message) if failure else None

    statement_type, parser, status, error_kind, errors, parse_ms = [], [], [], [], [], []
    sources, targets, intermediates = _StringLists(), _StringLists(), _StringLists()
    table_edge_offsets, te_source, te_target = [0], [], []
    column_edge_offsets: list[int] = [0]
    ce_source_table, ce_source_column, ce_target_table, ce_target_column = [], [], [], []
    ce_type, ce_subtype = [], []
    statement_offsets, st_index, st_type, st_status = [0], [], [], []
    st_sources, st_targets = _StringLists(), _StringLists()
    st_error_kind, st_error = [], []

    # enum members are str subclasses: pyarrow takes them as they are
    for result in results:
        statement_type.append(result.statement_type)
        parser.append(result.parser)
        status.append(result.status)
        failure = result.failure
        error_kind.append(failure.kind if failure else None)
        errors.append(error(failure))
        parse_ms.append(float(result.parse_ms))
        sources.add(result.sources)
        targets.add(result.targets)
        intermediates.add(result.intermediates)
        for t in result.table_edges:
            te_source.append(t.source_table)
            te_target.append(t.target_table)
        table_edge_offsets.append(len(te_source))
        for c in result.column_edges:
            ce_source_table.append(c.source_table)
            ce_source_column.append(c.source_column)
            ce_target_table.append(c.target_table)
            ce_target_column.append(c.target_column)
            ce_type.append(c.transformation_type)
            ce_subtype.append(c.transformation_subtype)
        column_edge_offsets.append(len(ce_source_table))
        for s in result.statements:
            st_index.append(s.index)
            st_type.append(s.statement_type)
            st_status.append(s.status)
            st_sources.add(s.sources)
            st_targets.add(s.targets)
            st_error_kind.append(s.failure.kind if s.failure else None)
            st_error.append(error(s.failure))
        statement_offsets.append(len(st_index))

    def strings(values: list) -> pa.Array:
        return pa.array(values, _STRING)

    def table_edges() -> pa.Array:
        element = _element_type(arrow_type, "table_edges")
        edges = {"source_table": strings(te_source), "target_table": strings(te_target)}
        return _list(table_edge_offsets, _struct(edges, element))

    def column_edges() -> pa.Array:
        element = _element_type(arrow_type, "column_edges")
        edges = {
            "source_table": strings(ce_source_table),
            "source_column": strings(ce_source_column),
            "target_table": strings(ce_target_table),
            "target_column": strings(ce_target_column),
            "transformation_type": strings(ce_type),
            "transformation_subtype": strings(ce_subtype),
        }
        return _list(column_edge_offsets, _struct(edges, element))

    def statements() -> pa.Array:
        element = _element_type(arrow_type, "statements")
        fields = {
            "index": pa.array(st_index, pa.int32()),
            "statement_type": strings(st_type),
            "status": strings(st_status),
            "sources": st_sources.array(),
            "targets": st_targets.array(),
            "error_kind": strings(st_error_kind),
            "error": strings(st_error),
        }
        return _list(statement_offsets, _struct(fields, element))

    columns: dict[str, Callable[[], pa.Array]] = {
        "statement_type": lambda: strings(statement_type),
        "parser": lambda: strings(parser),
        "status": lambda: strings(status),
        "error_kind": lambda: strings(error_kind),
        "error": lambda: strings(errors),
        "parse_ms": lambda: pa.array(parse_ms, pa.float64()),
        "sources": sources.array,
        "targets": targets.array,
        "intermediates": intermediates.array,
        "table_edges": table_edges,
        "column_edges": column_edges,
        "statements": statements,
    }
    unknown = set(arrow_type.names) - set(columns)
    if unknown:
        raise ValueError(f"no parse-result field named {sorted(unknown)}")
    return _struct({f.name: columns[f.name]() for f in arrow_type}, arrow_type)
