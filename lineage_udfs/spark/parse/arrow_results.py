"""Parse results → one Arrow struct array, built column by column from the record's fields.

The parse UDF returns ``UDF_RESULT_SCHEMA``: the fields of ``core.records.ParseRecord`` but
``masked_sql``. Going through a dict per result and pandas costs PySpark a Python converter per
row and per nested struct; here each leaf field is one Python list, gathered across the batch,
and each nested list one offsets list; pyarrow turns each list into an array in one call
(``bench/udf_results.py`` compares the two). The walk follows the Arrow type, so any record
field the type names is built, nested records included. The result equals what pyarrow builds
from the pandas UDF's records (a test compares the two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import pyarrow as pa

from lineage_udfs.core.models import ParseResult
from lineage_udfs.core.records import PARSE_RESULT_FIELDS, parse_record


def _array(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """``values`` (one per row) as an array of ``arrow_type``: lists through one offsets list
    and their flattened elements, structs field by field, scalars in one call."""
    if pa.types.is_list(arrow_type):
        offsets = [0]
        flat: list[Any] = []
        for value in values:
            flat.extend(value)
            offsets.append(len(flat))
        return pa.ListArray.from_arrays(
            pa.array(offsets, pa.int32()), _array(flat, arrow_type.value_type)
        )
    if pa.types.is_struct(arrow_type):
        return _struct(values, arrow_type)
    return pa.array(values, arrow_type)


def _struct(records: Sequence[Any], struct_type: pa.StructType) -> pa.StructArray:
    """Records (objects with an attribute per field of ``struct_type``) as a struct array."""
    fields = list(struct_type)
    children = []
    for field in fields:
        get = attrgetter(field.name)
        children.append(_array([get(r) for r in records], field.type))
    return pa.StructArray.from_arrays(children, fields=fields)


def results_to_arrow(
    results: Sequence[ParseResult],
    arrow_type: pa.StructType,
    mask_error: Callable[[str], str],
) -> pa.StructArray:
    """One struct of ``arrow_type`` (``UDF_RESULT_SCHEMA`` as Arrow) per result, in order.

    Args:
        results: the parser's results for one batch.
        arrow_type: the UDF's return type; its fields are read by name from the record.
        mask_error: applied to every failure message (a syntax error may quote the statement).

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, ParseStatus, StatementType
        >>> t = pa.struct([("status", pa.string()), ("sources", pa.list_(pa.string()))])
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("db.a",))
        >>> results_to_arrow([r], t, str.upper).to_pylist()
        [{'status': 'ok', 'sources': ['db.a']}]
    """
    unknown = set(arrow_type.names) - set(PARSE_RESULT_FIELDS)
    if unknown:
        raise ValueError(f"no parse-result field named {sorted(unknown)}")
    return _struct([parse_record(r, mask_error) for r in results], arrow_type)
