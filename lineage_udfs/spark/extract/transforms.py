"""DataFrame → DataFrame steps of the extraction: clean, mask, fingerprint, filter, dedupe, parse.

Cleaning, masking, normalizing and fingerprinting run as Spark SQL expressions built from the
regex constants of ``lineage_udfs.core.fingerprint`` (the same algorithm as its pure-Python
functions; a Spark test checks they agree). Only parsing needs Python, once per distinct
fingerprint.

Memory: the SQL text is the bulk of a log. The per-row steps that shuffle (dedupe by query id,
choice of one representative per fingerprint) work on narrow rows without it
(:func:`narrow_relevant_rows`); the text joins back only for the one representative row of
each fingerprint (:func:`representative_rows`, then :func:`with_statement_texts`).
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from lineage_udfs.core import fingerprint as fp
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.spark.extract.readers import (
    CSV_QUOTING_ERROR,
    LOAD_ERROR,
    RAW_RECORD,
    SOURCE_FILE,
    SOURCE_NAME,
    capped,
)
from lineage_udfs.spark.parse.udfs import make_parse_udf
from lineage_udfs.spark.storage.facts import query_row_order
from lineage_udfs.spark.storage.schemas import QUERIES

PARSE_TEXT = "parse_text"
"""Cleaned, unmasked statement: only ever given to the parser, never stored."""
MASKED_SQL = "masked_sql"
FINGERPRINT = "fingerprint"
IS_RELEVANT = "is_relevant"
PARSE_RESULT = "parse_result"
MASKED_RECORD = "masked_record"
"""A load failure's record (raw record or query text) with its literals masked."""
QUERY_BYTES = "query_bytes"
"""UTF-8 length of a row's query text: sizes the run's shuffles (the text itself is dropped)."""
DEDUPE_RANK = "_query_rank"
"""1 for the row kept among rows sharing a query id (``facts.query_row_order``)."""


def _whole(pattern: str) -> str:
    return f"^(?:{pattern})$"


def mask_literals_col(text: Column, dialect: Column) -> Column:
    """Spark twin of ``fingerprint.mask_literals``: tokenize, classify each token, re-join.

    ``regexp_extract_all(text, TOKEN_PATTERN, 0)`` yields every token (the pattern covers every
    character); the CASE tests the same anchored class patterns in the same order as Python.
    """
    tokens = F.regexp_extract_all(text, F.lit(fp.TOKEN_PATTERN), F.lit(0))
    dq_is_string = F.coalesce(F.lower(dialect).isin(*fp.DOUBLE_QUOTE_STRING_DIALECTS), F.lit(False))

    def classify(token: Column) -> Column:
        return (
            F.when(
                token.rlike(_whole(fp.CREDENTIAL_PATTERN)),
                F.regexp_replace(
                    token,
                    F.lit(fp.CREDENTIAL_CAPTURE_PATTERN),
                    F.lit(fp.CREDENTIAL_REPLACEMENT_JAVA),
                ),
            )
            .when(token.rlike(_whole(fp.COMMENT_PATTERN)), F.lit(fp.COMMENT_REPLACEMENT))
            .when(
                token.rlike(_whole(fp.DOLLAR_STRING_PATTERN))
                | token.rlike(_whole(fp.SINGLE_QUOTED_PATTERN)),
                F.lit(fp.LITERAL_REPLACEMENT),
            )
            .when(
                dq_is_string & token.rlike(_whole(fp.DOUBLE_QUOTED_PATTERN)),
                F.lit(fp.LITERAL_REPLACEMENT),
            )
            .when(
                token.rlike(_whole(fp.PATH_IDENTIFIER_PATTERN))
                | token.rlike(_whole(fp.NUMBER_PATTERN)),
                F.lit(fp.LITERAL_REPLACEMENT),
            )
            .otherwise(token)
        )

    return F.array_join(F.transform(tokens, classify), "")


def clean_statement_col(text: Column) -> Column:
    """Spark twin of ``fingerprint.clean_statement``."""
    no_grants = F.regexp_replace(text, F.lit(fp.COPY_GRANTS_PATTERN), F.lit(""))
    return F.regexp_replace(no_grants, F.lit(fp.TRAILING_PATTERN), F.lit(""))


def normalize_masked_col(masked: Column) -> Column:
    """Spark twin of ``fingerprint.normalize_masked`` (collapse whitespace, trim spaces)."""
    collapsed = F.regexp_replace(masked, F.lit(fp.WHITESPACE_PATTERN), F.lit(" "))
    return F.regexp_replace(collapsed, F.lit("^ +| +$"), F.lit(""))


def fingerprint_col(
    normalized: Column,
    parse_text: Column,
    dialect: Column,
    default_database: Column,
    default_schema: Column,
    object_kind: Column,
) -> Column:
    """Spark twin of ``fingerprint.fingerprint`` (``parse_text`` is the cleaned text)."""
    is_definition = F.coalesce(F.lower(object_kind).isin(*fp.DEFINITION_KINDS), F.lit(False))
    payload = F.concat_ws(
        fp.FINGERPRINT_SEPARATOR,
        F.coalesce(dialect, F.lit("")),
        F.coalesce(default_database, F.lit("")),
        F.coalesce(default_schema, F.lit("")),
        normalized,
        F.when(is_definition, parse_text).otherwise(F.lit("")),
    )
    return F.substring(F.sha2(payload, 256), 1, fp.FINGERPRINT_HEX_CHARS)


def is_relevant_col(normalized: Column, object_kind: Column, *, keep_reads: bool = False) -> Column:
    """Spark twin of ``fingerprint.is_lineage_relevant``."""
    is_definition = F.coalesce(F.lower(object_kind).isin(*fp.DEFINITION_KINDS), F.lit(False))
    plainly_not = normalized.rlike(fp.NOT_RELEVANT_PATTERN) & ~normalized.rlike(
        fp.LINEAGE_KEYWORD_PATTERN
    )
    if keep_reads:
        plainly_not = plainly_not & ~normalized.rlike(fp.READ_PATTERN)
    account = normalized.rlike(fp.ACCOUNT_STATEMENT_PATTERN)
    return is_definition | ~(plainly_not | account)


def with_default_dialect(log: DataFrame, default_dialect: str) -> DataFrame:
    """Fill null dialects with the parser default (sources usually set one per source)."""
    return log.withColumn("dialect", F.coalesce(F.col("dialect"), F.lit(default_dialect.lower())))


def prepare_statements(log: DataFrame, *, keep_reads: bool = False) -> DataFrame:
    """Add ``parse_text``, ``masked_sql``, ``fingerprint`` and ``is_relevant`` to loadable rows
    (``keep_reads``: plain queries are relevant too, ``fingerprint.is_lineage_relevant``).

    Input rows must have a non-empty ``query_text``; ``query_text`` is dropped from the output
    (only the cleaned text for the parser and the masked text travel on).
    """
    parse_text = clean_statement_col(F.col("query_text"))
    masked = normalize_masked_col(mask_literals_col(parse_text, F.col("dialect")))
    prepared = log.withColumn(PARSE_TEXT, parse_text).withColumn(MASKED_SQL, masked)
    return prepared.withColumn(
        FINGERPRINT,
        fingerprint_col(
            F.col(MASKED_SQL),
            F.col(PARSE_TEXT),
            F.col("dialect"),
            F.col("default_database"),
            F.col("default_schema"),
            F.col("object_kind"),
        ),
    ).withColumn(
        IS_RELEVANT,
        is_relevant_col(F.col(MASKED_SQL), F.col("object_kind"), keep_reads=keep_reads),
    )


def _masked_record_col() -> Column:
    """A load failure's record, masked as MySQL (both quote kinds are strings): the raw text of
    a corrupt record, else the query text. Not in the row's dialect: a broken record's quotes
    cannot be trusted (a CSV value that absorbed the next record starts with ``"``, which
    would be a kept identifier in Snowflake).

    A record whose quoting is broken (a corrupt CSV or JSON record, a CSV value whose quote
    does not close) is stored as its skeleton (``fingerprint.skeleton``): its quotes pair up
    wrongly, so a string of the SQL inside it (``""secret""`` in CSV, ``\\"secret\\"`` in JSON)
    would read as a bare word. A record the reader decoded keeps its masked text."""
    record = F.coalesce(F.col(RAW_RECORD), F.col("query_text"))
    masked = mask_literals_col(record, F.lit("mysql"))
    broken = F.col(RAW_RECORD).isNotNull() | F.coalesce(
        F.col(LOAD_ERROR).startswith(CSV_QUOTING_ERROR), F.lit(False)
    )
    shaped = F.when(
        broken,
        F.regexp_replace(masked, F.lit(fp.SKELETON_WORD_PATTERN), F.lit(fp.LITERAL_REPLACEMENT)),
    ).otherwise(masked)
    return normalize_masked_col(shaped)


def prepare_rows(
    log: DataFrame, max_masked_sql_chars: int | None = None, *, keep_reads: bool = False
) -> DataFrame:
    """Every log row, prepared once, keeping its text only where a later step reads it.

    Loadable rows get ``fingerprint`` and ``is_relevant``; relevant rows also keep ``parse_text``
    and ``masked_sql`` (null on other rows); rows with a load error keep ``masked_record`` for
    the quarantine. ``query_text`` and the raw record are dropped; ``query_bytes`` (the text's
    UTF-8 length) stays for sizing. ``max_masked_sql_chars`` caps the stored masked texts
    (after fingerprinting: the fingerprint covers the whole text).

    Returns:
        The log's columns without ``query_text`` and ``_raw_record``, plus fingerprint,
        is_relevant, parse_text, masked_sql, masked_record and query_bytes.
    """
    loadable = F.col(LOAD_ERROR).isNull()
    prepared = prepare_statements(log, keep_reads=keep_reads)
    relevant = loadable & F.coalesce(F.col(IS_RELEVANT), F.lit(False))
    kept = [c for c in log.columns if c not in ("query_text", RAW_RECORD)]
    return prepared.select(
        *kept,
        F.when(loadable, F.col(FINGERPRINT)).alias(FINGERPRINT),
        relevant.alias(IS_RELEVANT),
        F.when(relevant, F.col(PARSE_TEXT)).alias(PARSE_TEXT),
        F.when(relevant, _cap(F.col(MASKED_SQL), max_masked_sql_chars)).alias(MASKED_SQL),
        F.when(~loadable, _cap(_masked_record_col(), max_masked_sql_chars)).alias(MASKED_RECORD),
        F.coalesce(F.octet_length("query_text"), F.lit(0)).cast("long").alias(QUERY_BYTES),
    )


def _cap(value: Column, limit: int | None) -> Column:
    return value if limit is None else capped(value, limit)


def narrow_relevant_rows(rows: DataFrame) -> DataFrame:
    """Relevant rows without their text, ranked among rows that share a query id.

    ``_query_rank`` is 1 for the row that counts, the first in ``facts.query_row_order``
    (earliest start_time, then the latest end_time, a failed status, then every other column:
    a total order, so the same row wins whatever the input's order or partitioning); the
    others are duplicates of a query id. The shuffle by query id carries no SQL text.

    Returns:
        The ``queries`` columns plus ``_query_rank``.
    """
    dedupe = Window.partitionBy("query_id").orderBy(*query_row_order())
    return (
        rows.where(F.col(IS_RELEVANT))
        .select(*QUERIES.columns)
        .withColumn(DEDUPE_RANK, F.row_number().over(dedupe))
    )


STATEMENT_COLUMNS: tuple[str, ...] = (
    FINGERPRINT,
    "dialect",
    "default_database",
    "default_schema",
    "object_kind",
    PARSE_TEXT,
    MASKED_SQL,
)
"""Columns of a distinct statement, as the parse step takes them."""
_REPRESENTATIVE_KEYS: tuple[str, ...] = (FINGERPRINT, "query_id", "start_time")


def representative_rows(relevant: DataFrame) -> DataFrame:
    """One row per fingerprint: the earliest (start_time, query_id) of ``relevant``.

    ``relevant`` holds one row per query id (duplicates of a query id already dropped); it may
    be narrow (no SQL text), which keeps the shuffle by fingerprint small.
    """
    order = Window.partitionBy(FINGERPRINT).orderBy(
        F.col("start_time").asc_nulls_last(), F.col("query_id")
    )
    return (
        relevant.withColumn("_rank", F.row_number().over(order))
        .where(F.col("_rank") == 1)
        .drop("_rank")
    )


def with_statement_texts(representatives: DataFrame, rows: DataFrame) -> DataFrame:
    """Join the texts of ``rows`` (``prepare_rows``) to narrow representative rows.

    Matched on (fingerprint, query_id, start_time), null-safe. Materialize
    ``representatives`` first: with its true (small) size known, Spark broadcasts it and the
    texts of every other row stay where they are instead of being shuffled.

    Returns:
        STATEMENT_COLUMNS, one row per fingerprint.
    """
    texts = rows.where(F.col(PARSE_TEXT).isNotNull()).select(
        *[F.col(k).alias(f"_t_{k}") for k in _REPRESENTATIVE_KEYS], PARSE_TEXT, MASKED_SQL
    )
    on = [representatives[k].eqNullSafe(texts[f"_t_{k}"]) for k in _REPRESENTATIVE_KEYS]
    narrow = representatives.select(
        *[c for c in representatives.columns if c not in (PARSE_TEXT, MASKED_SQL)]
    )
    return (
        narrow.join(texts, on, "inner")
        # a query id logged twice with the same time and fingerprint is one statement
        .dropDuplicates([FINGERPRINT])
        .select(*STATEMENT_COLUMNS)
    )


STATEMENT_CATALOG = "statement_catalog"
"""The part of the catalog a statement's text names, as JSON (``udf_worker.decode_catalog``)."""


def parse_statements(
    statements: DataFrame,
    options: ParserOptions,
    partitions: int,
    *,
    udf_factory: Callable[[ParserOptions], Callable[..., Column]] = make_parse_udf,
) -> DataFrame:
    """Run the parser UDF over distinct statements, spread by a hash of the fingerprint.

    Returns:
        The input columns without ``parse_text`` (``masked_sql`` stays: the masked text, never
        the original), plus ``parse_result`` (UDF_RESULT_SCHEMA: PARSE_RESULT_SCHEMA without
        masked_sql). A ``statement_catalog`` column (``spark.catalog.with_statement_catalogs``)
        is handed to the parser with each statement and dropped.
    """
    parse_udf = udf_factory(options)
    inputs = [F.col(PARSE_TEXT), F.col("dialect"), F.col("default_database")]
    inputs.append(F.col("default_schema"))
    if STATEMENT_CATALOG in statements.columns:
        inputs.append(F.col(STATEMENT_CATALOG))
    return (
        statements.repartition(partitions, FINGERPRINT)
        .withColumn(PARSE_RESULT, parse_udf(*inputs))
        .drop(PARSE_TEXT, STATEMENT_CATALOG)
    )


def load_failures(rows: DataFrame) -> DataFrame:
    """Rows with a load error, as quarantine candidates (stage ``load``); literals masked.

    Args:
        rows: the log as read (``query_text`` and the raw record) or as ``prepare_rows``
            returns it (``masked_record``).
    """
    masked = F.col(MASKED_RECORD) if MASKED_RECORD in rows.columns else _masked_record_col()
    return rows.where(F.col(LOAD_ERROR).isNotNull()).select(
        F.lit("load").alias("stage"),
        F.col(LOAD_ERROR).alias("reason"),
        F.lit(None).cast("string").alias("error_kind"),
        "query_id",
        F.lit(None).cast("string").alias(FINGERPRINT),
        F.concat_ws(":", F.col(SOURCE_NAME), F.col(SOURCE_FILE)).alias("source_file"),
        masked.alias("masked_record"),
        F.col("start_time").alias("first_seen"),
        F.col("start_time").alias("last_seen"),
    )
