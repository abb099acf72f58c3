"""The parse UDF. Thin: get the worker's parser, loop, convert, yield.

An iterator Arrow UDF where PySpark has one (4.1+): the results are built into Arrow arrays
column by column (``arrow_results``), with no pandas and no per-row converter. On Spark 4.0
(``arrow_udf`` missing) the same loop runs as an iterator pandas UDF (``pandas_udf``). Both
return the same struct, ``UDF_RESULT_SCHEMA``; the per-worker state is ``udf_worker``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib.metadata import PackageNotFoundError, version

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql.pandas.types import to_arrow_type

from lineage_udfs import __version__
from lineage_udfs.core.options import PARSER_REVISION, ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.spark.parse.arrow_results import results_to_arrow
from lineage_udfs.spark.parse.udf_worker import (
    decode_catalog,
    mask_error,
    parse_batches,
    redact_names,
)
from lineage_udfs.spark.storage.schemas import UDF_RESULT_SCHEMA

try:  # PySpark 4.1+
    from pyspark.sql.functions import arrow_udf
except ImportError:  # pragma: no cover - Spark 4.0 (e.g. Databricks Runtime 17.3)
    arrow_udf = None  # type: ignore[assignment]  # the pandas UDF stands in


def parser_version(options: ParserOptions | None = None) -> str:
    """Package version, rule revision, sqlglot version and options digest, e.g.
    ``1.2.0+r5+sqlglot30.30.0+o1a2b3c4d``.

    Stored with every parsed statement; an incremental run parses a fingerprint again when it
    was parsed under another version: a new release, a rule change (``PARSER_REVISION``), another
    sqlglot or other parser options. Read from package metadata so this module never imports
    sqlglot.
    """

    def _v(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:
            return "unknown"

    base = f"{__version__}+r{PARSER_REVISION}+sqlglot{_v('sqlglot')}"
    return f"{base}+o{options.digest()}" if options is not None else base


UDF_ARROW_TYPE: pa.StructType = to_arrow_type(UDF_RESULT_SCHEMA)
"""``UDF_RESULT_SCHEMA`` as the Arrow type the Arrow UDF returns."""


def parse_arrow_batch(
    parser: LineageParser,
    sql_texts: pa.Array,
    dialects: pa.Array,
    databases: pa.Array,
    schemas: pa.Array,
    catalogs: pa.Array | None = None,
) -> pa.StructArray:
    """Parse one batch into a ``UDF_RESULT_SCHEMA`` struct array (the Arrow UDF's batch); the
    same contract as the pandas UDF's ``parse_batch``. ``catalogs``: each statement's catalog
    (``udf_worker.decode_catalog``), when the job has one."""
    texts = sql_texts.to_pylist()
    catalog_texts = catalogs.to_pylist() if catalogs is not None else [None] * len(texts)
    results = [
        parser.parse(
            sql,
            dialect=dialect,
            default_catalog=database,
            default_schema=schema,
            mask=False,
            catalog=decode_catalog(catalog),
        )
        for sql, dialect, database, schema, catalog in zip(
            texts,
            dialects.to_pylist(),
            databases.to_pylist(),
            schemas.to_pylist(),
            catalog_texts,
            strict=True,
        )
    ]
    return results_to_arrow([redact_names(r) for r in results], UDF_ARROW_TYPE, mask_error)


def make_parse_udf(options: ParserOptions) -> Callable[..., Column]:
    """Return the iterator UDF ``(sql, dialect, database, schema[, catalog]) → struct``: the
    Arrow UDF where PySpark has one, else the pandas UDF.

    The struct is ``UDF_RESULT_SCHEMA``. The UDF never raises for bad SQL (the parser returns
    failures as data) and runs on the worker's main thread, where the parser's SIGPROF time limit
    works (Arrow UDF concurrency must stay off).
    """
    if arrow_udf is None:  # pragma: no cover - Spark 4.0
        # its module imports pandas, which the Arrow UDF's workers never load
        from lineage_udfs.spark.parse.pandas_udf import make_parse_pandas_udf

        return make_parse_pandas_udf(options)
    return make_parse_arrow_udf(options)


def make_parse_arrow_udf(options: ParserOptions) -> Callable[..., Column]:
    """The iterator Arrow UDF (PySpark 4.1+); see :func:`make_parse_udf`."""

    # pyspark's overloads type a struct-returning iterator Arrow UDF only as a scalar one
    @arrow_udf(UDF_RESULT_SCHEMA)  # type: ignore[call-overload, misc]
    def parse_sql(
        batches: Iterator[tuple[pa.Array, ...]],
    ) -> Iterator[pa.Array]:
        yield from parse_batches(options, batches, parse_arrow_batch)

    return parse_sql  # type: ignore[no-any-return]
