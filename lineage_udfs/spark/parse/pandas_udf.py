"""The parse UDF as an iterator pandas UDF: the job's fallback where PySpark has no
``arrow_udf`` (Spark 4.0). Same per-worker parser and results as the Arrow UDF in ``udfs``; the
records go through pandas and PySpark's per-row struct converter. A module of its own so that
the Arrow UDF's workers never import pandas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pandas as pd
from pyspark.sql import Column
from pyspark.sql.functions import pandas_udf

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.records import to_record
from lineage_udfs.spark.parse.udf_worker import (
    decode_catalog,
    mask_error,
    parse_batches,
    redact_names,
)
from lineage_udfs.spark.storage.schemas import UDF_RESULT_SCHEMA


def _none(value: object) -> str | None:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def parse_batch(
    parser: LineageParser,
    sql_texts: pd.Series,
    dialects: pd.Series,
    databases: pd.Series,
    schemas: pd.Series,
    catalogs: pd.Series | None = None,
) -> pd.DataFrame:
    """Parse one batch into a frame with one column per ``UDF_RESULT_SCHEMA`` field.

    The parser sees the original text; the output carries none of it: no text (the masked text
    is the caller's column) and masked error messages.
    """
    records = []
    catalog_texts = catalogs if catalogs is not None else [None] * len(sql_texts)
    for sql, dialect, database, schema, catalog in zip(
        sql_texts, dialects, databases, schemas, catalog_texts, strict=True
    ):
        result = parser.parse(
            _none(sql),
            dialect=_none(dialect),
            default_catalog=_none(database),
            default_schema=_none(schema),
            mask=False,
            catalog=decode_catalog(_none(catalog)),
        )
        records.append(to_record(redact_names(result), mask_error))
    return pd.DataFrame.from_records(records, columns=UDF_RESULT_SCHEMA.fieldNames())


def make_parse_pandas_udf(options: ParserOptions) -> Callable[..., Column]:
    """The iterator pandas UDF ``(sql, dialect, database, schema) → struct``; see
    ``udfs.make_parse_udf``."""

    @pandas_udf(UDF_RESULT_SCHEMA)  # type: ignore[call-overload]
    def parse_sql(
        batches: Iterator[tuple[pd.Series, ...]],
    ) -> Iterator[pd.DataFrame]:
        yield from parse_batches(options, batches, parse_batch)

    return parse_sql
