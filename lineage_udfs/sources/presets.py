"""Vendor query-history presets: each is a column mapping plus the few transforms its export needs.

A preset turns the rows the generic reader loaded (every field a string; nested JSON objects as
their JSON text) into columns named after the canonical log schema, so the generic reader maps
them like any source. It knows the vendor's column names, its status values (→ ``success`` /
``failed`` / ``cancelled``), its timestamp formats and zones, where the default database and
schema are recorded, and which rows are not user SQL (those are left out, see docs/sources.md).
A preset whose export also records the engine's own lineage returns it from
:func:`native_lineage` for the reconciliation.

Timestamps leave a preset as ISO-8601 text in the session time zone (the generic reader parses
them); a value no vendor format matches is passed on unchanged, so the reader quarantines the row
with its "unparsable start_time" reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import SourceSettings

CORRUPT_COLUMN = "_corrupt_record"
_ISO = "yyyy-MM-dd HH:mm:ss.SSSSSS"
NATIVE_COLUMNS: tuple[str, ...] = (
    "query_id",
    "source_table",
    "source_column",
    "target_table",
    "target_column",
)
"""Columns of a preset's native lineage (column names null for a table edge)."""


def _c(name: str) -> Column:
    return F.col(f"`{name}`")


def _blank_null(col: Column) -> Column:
    return F.nullif(F.trim(col.cast(StringType())), F.lit(""))


def _timestamp(raw: Column, *formats: str) -> Column:
    """The first vendor format that parses ``raw`` (ISO-8601 last), as ISO text; else raw."""
    value = _blank_null(raw)
    parsed = F.coalesce(
        *[F.try_to_timestamp(value, F.lit(f)) for f in formats], F.try_to_timestamp(value)
    )
    return F.coalesce(F.date_format(parsed, _ISO), value)


def _has(frame: DataFrame, *columns: str) -> bool:
    return all(c in frame.columns for c in columns)


INPUT_FILE = "_input_file"
"""The row's file, taken before a preset joins (a join makes ``_metadata`` ambiguous)."""


def _keep_corrupt(frame: DataFrame) -> list[Column]:
    """The bookkeeping columns a preset passes through: the corrupt record, the input file."""
    return [F.col(c) for c in (CORRUPT_COLUMN, INPUT_FILE) if c in frame.columns]


def _not_corrupt(frame: DataFrame) -> Column:
    """True for loaded rows: a corrupt record always passes a preset's row filter, so the reader
    quarantines it instead of the preset dropping it."""
    if CORRUPT_COLUMN in frame.columns:
        return F.col(CORRUPT_COLUMN).isNotNull()
    return F.lit(False)


def _status(raw: Column, failed: tuple[str, ...], cancelled: tuple[str, ...] = ()) -> Column:
    value = F.lower(_blank_null(raw))
    return (
        F.when(value.isin(*failed), F.lit("failed"))
        .when(value.isin(*cancelled), F.lit("cancelled"))
        .when(value.isNotNull(), F.lit("success"))
    )


def _require(frame: DataFrame, source: SourceSettings, *columns: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        available = [c for c in frame.columns if c != CORRUPT_COLUMN]
        raise InputError(
            f"source {source.name!r} ({source.path}) is not a {source.preset} export: missing"
            f" column(s) {missing}; available columns: {available}"
        )


# ------------------------------------------------------------------------------- Snowflake


def _snowflake(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """ACCOUNT_USAGE.QUERY_HISTORY: EXECUTION_STATUS success / fail / incident; TIMESTAMP_LTZ
    exported with its offset (``2026-03-01 22:00:00.000 -0800``) or without (session zone)."""
    _require(raw, source, "QUERY_ID", "QUERY_TEXT")
    ts = ("yyyy-MM-dd HH:mm:ss.SSS Z", "yyyy-MM-dd HH:mm:ss.SSS XXX", "yyyy-MM-dd HH:mm:ss.SSS")
    optional = {
        c: _c(c) if c in raw.columns else F.lit(None) for c in ("OBJECT_KIND", "OBJECT_NAME")
    }
    return raw.select(
        _c("QUERY_ID").alias("query_id"),
        _c("QUERY_TEXT").alias("query_text"),
        F.lit("snowflake").alias("dialect"),
        _c("DATABASE_NAME").alias("default_database"),
        _c("SCHEMA_NAME").alias("default_schema"),
        _c("USER_NAME").alias("user_name"),
        _timestamp(_c("START_TIME"), *ts).alias("start_time"),
        _timestamp(_c("END_TIME"), *ts).alias("end_time"),
        _status(_c("EXECUTION_STATUS"), ("fail", "incident")).alias("status"),
        optional["OBJECT_KIND"].alias("object_kind"),
        optional["OBJECT_NAME"].alias("object_name"),
        *_keep_corrupt(raw),
    )


_SF_OBJECTS = "array<struct<objectName:string,objectDomain:string>>"
_SF_MODIFIED = (
    "array<struct<objectName:string,objectDomain:string,columns:array<struct<columnName:string,"
    "directSources:array<struct<columnName:string,objectName:string,objectDomain:string>>>>>>"
)
_SF_TABLE_DOMAINS = ("TABLE", "VIEW", "MATERIALIZED VIEW", "EXTERNAL TABLE", "DYNAMIC TABLE")


def _snowflake_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame] | None:
    """ACCOUNT_USAGE.ACCESS_HISTORY joined to the export by QUERY_ID (its
    ``DIRECT_OBJECTS_ACCESSED`` and ``OBJECTS_MODIFIED`` columns), when the export has them:
    every table read x every table written, and ``columns[].directSources`` for column edges.
    A written table read by the same query (MERGE, UPDATE) is not its own source, as in the
    parser's default (``update_target_as_source=false``). Queries that modified nothing are
    outside the comparison."""
    if "OBJECTS_MODIFIED" not in raw.columns or "DIRECT_OBJECTS_ACCESSED" not in raw.columns:
        return None
    ok = F.lower(F.coalesce(_c("EXECUTION_STATUS"), F.lit("success"))) == "success"
    access = (
        raw.where(ok)
        .select(
            _c("QUERY_ID").alias("query_id"),
            F.from_json(_c("DIRECT_OBJECTS_ACCESSED"), _SF_OBJECTS).alias("read"),
            F.from_json(_c("OBJECTS_MODIFIED"), _SF_MODIFIED).alias("modified"),
        )
        .where(F.size("modified") > 0)
    )

    def table_like(domain: Column) -> Column:
        return F.upper(domain).isin(*_SF_TABLE_DOMAINS)

    written = access.select("query_id", "read", F.explode("modified").alias("m")).where(
        table_like(F.col("m.objectDomain"))
    )
    tables = (
        written.select("query_id", "m", F.explode("read").alias("r"))
        .where(table_like(F.col("r.objectDomain")))
        .select(
            "query_id",
            F.lower(F.col("r.objectName")).alias("source_table"),
            F.lower(F.col("m.objectName")).alias("target_table"),
        )
        .where(F.col("source_table") != F.col("target_table"))
    )
    columns = (
        written.select("query_id", "m", F.explode("m.columns").alias("c"))
        .select("query_id", "m", "c", F.explode("c.directSources").alias("s"))
        .where(table_like(F.col("s.objectDomain")))
        .select(
            "query_id",
            F.lower(F.col("s.objectName")).alias("source_table"),
            F.lower(F.col("s.columnName")).alias("source_column"),
            F.lower(F.col("m.objectName")).alias("target_table"),
            F.lower(F.col("c.columnName")).alias("target_column"),
        )
        .where(F.col("source_table") != F.col("target_table"))
    )
    return _native(tables).unionByName(columns), access.select("query_id").distinct()


# ------------------------------------------------------------------------------- BigQuery

_BQ_TS = ("yyyy-MM-dd HH:mm:ss.SSSSSS 'UTC'", "yyyy-MM-dd HH:mm:ss 'UTC'")
_BQ_TABLE = "struct<project_id:string,dataset_id:string,table_id:string>"


def _bigquery(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """INFORMATION_SCHEMA.JOBS: a DONE job with an error_result failed; PENDING/RUNNING jobs are
    left for a later export; LOAD/COPY/EXTRACT jobs and the child jobs of a script (the parent
    SCRIPT job carries the whole script) are not user SQL. The project is the default database;
    the JOBS view does not record the default dataset."""
    _require(raw, source, "job_id", "query", "state")
    job_type = _c("job_type") if "job_type" in raw.columns else F.lit("QUERY")
    parent = _c("parent_job_id") if "parent_job_id" in raw.columns else F.lit(None)
    user_sql = (
        (F.upper(_c("state")) == "DONE")
        & (F.upper(F.coalesce(job_type, F.lit("QUERY"))) == "QUERY")
        & _blank_null(parent).isNull()
    )
    error = (
        F.get_json_object(_c("error_result"), "$.reason")
        if "error_result" in raw.columns
        else F.lit(None)
    )
    return raw.where(user_sql | _not_corrupt(raw)).select(
        _c("job_id").alias("query_id"),
        _c("query").alias("query_text"),
        F.lit("bigquery").alias("dialect"),
        _c("project_id").alias("default_database"),
        F.lit(None).cast(StringType()).alias("default_schema"),
        _c("user_email").alias("user_name"),
        _timestamp(F.coalesce(_c("start_time"), _c("creation_time")), *_BQ_TS).alias("start_time"),
        _timestamp(_c("end_time"), *_BQ_TS).alias("end_time"),
        F.when(_blank_null(error).isNotNull(), F.lit("failed"))
        .otherwise(F.lit("success"))
        .alias("status"),
        *_keep_corrupt(raw),
    )


def _bq_name(col: Column) -> Column:
    return F.lower(F.concat_ws(".", col.project_id, col.dataset_id, col.table_id))


def _bigquery_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame]:
    """referenced_tables x destination_table of each finished, error-free job, child jobs under
    their script; anonymous results and script temporaries (datasets named ``_…``) left out."""
    done = raw.where(
        (F.upper(_c("state")) == "DONE")
        & _blank_null(F.get_json_object(_c("error_result"), "$.reason")).isNull()
    )
    parent = F.coalesce(_blank_null(_c("parent_job_id")), _c("job_id"))
    jobs = done.select(
        parent.alias("query_id"),
        F.from_json(_c("referenced_tables"), f"array<{_BQ_TABLE}>").alias("refs"),
        F.from_json(_c("destination_table"), _BQ_TABLE).alias("dest"),
    )
    edges = jobs.select("query_id", F.explode_outer("refs").alias("ref"), "dest").where(
        F.col("ref").isNotNull()
        & F.col("dest").isNotNull()
        & ~F.col("ref.dataset_id").startswith("_")
        & ~F.col("dest.dataset_id").startswith("_")
    )
    return _native(
        edges.select(
            "query_id",
            _bq_name(F.col("ref")).alias("source_table"),
            _bq_name(F.col("dest")).alias("target_table"),
        )
    ), jobs.select("query_id").distinct()


# ------------------------------------------------------------------------------- Databricks


def _databricks(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """system.query.history: execution_status FINISHED / FAILED / CANCELED (RUNNING and QUEUED
    rows are left for a later export); it does not record the default catalog or schema."""
    _require(raw, source, "statement_id", "statement_text", "execution_status")
    state = F.upper(_c("execution_status"))
    return raw.where(state.isin("FINISHED", "FAILED", "CANCELED") | _not_corrupt(raw)).select(
        _c("statement_id").alias("query_id"),
        _c("statement_text").alias("query_text"),
        F.lit("databricks").alias("dialect"),
        _c("executed_by").alias("user_name"),
        _timestamp(_c("start_time")).alias("start_time"),
        _timestamp(_c("end_time")).alias("end_time"),
        _status(_c("execution_status"), ("failed",), ("canceled",)).alias("status"),
        *_keep_corrupt(raw),
    )


def _databricks_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame] | None:
    """system.access.table_lineage / column_lineage exports (``extra_paths``, read in the
    source's own format), matched to the history by ``statement_id``. Every FINISHED statement
    of the history is compared, so a statement the lineage tables left out shows its parser
    edges as parser_only. Rows without a source or a target table (a path, a notebook) are left
    out."""
    table_path = source.extra_paths.get("table_lineage")
    if table_path is None:
        return None

    def read(path: str) -> DataFrame:
        reader = spark.read.format("json" if source.format == "jsonl" else source.format)
        if source.format == "csv":
            reader = reader.option("header", "true")
        return reader.load(path)

    def named(frame: DataFrame, *columns: tuple[str, str]) -> DataFrame:
        return frame.where(
            F.col("statement_id").isNotNull()
            & F.col("source_table_full_name").isNotNull()
            & F.col("target_table_full_name").isNotNull()
        ).select(
            F.col("statement_id").alias("query_id"),
            F.lower(F.col("source_table_full_name")).alias("source_table"),
            *[F.lower(F.col(c)).alias(a) for c, a in columns],
            F.lower(F.col("target_table_full_name")).alias("target_table"),
        )

    edges = _native(named(read(table_path)).distinct())
    column_path = source.extra_paths.get("column_lineage")
    if column_path is not None:
        columns = named(
            read(column_path),
            ("source_column_name", "source_column"),
            ("target_column_name", "target_column"),
        )
        edges = edges.unionByName(columns.distinct(), allowMissingColumns=False)
    finished = raw.where(F.upper(_c("execution_status")) == "FINISHED")
    return edges, finished.select(_c("statement_id").alias("query_id")).distinct()


# ------------------------------------------------------------------------------- Redshift

_RS_TS = ("yyyy-MM-dd HH:mm:ss.SSSSSS", "yyyy-MM-dd HH:mm:ss")
SYS_QUERY_TEXT_CHUNK = 4000
STL_QUERYTEXT_CHUNK = 200
REDSHIFT_SYSTEM_USER_ID = "1"
"""rdsdb, the user Redshift runs its own housekeeping queries as."""


def reassemble_chunks(
    chunks: DataFrame, key: str, chunk_size: int, *, escaped_newlines: bool
) -> DataFrame:
    """One text per ``key`` from its ``sequence``-numbered chunks.

    Chunks are joined in sequence order (the export's row order means nothing). Every chunk but
    the last is exactly ``chunk_size`` characters in the system table, blank-padded: an export
    that trimmed a chunk's trailing blanks lost real blanks when the cut fell after one, so each
    non-last chunk is padded back to ``chunk_size`` and only the whole text is right-trimmed.
    STL_QUERYTEXT writes a newline as the two characters ``\\n``; they are turned back into a
    newline after joining, since a chunk edge may fall between them.
    """
    ordered = chunks.groupBy(key).agg(
        F.sort_array(
            F.collect_list(
                F.struct(_c("sequence").cast("int").alias("seq"), _c("text").alias("text"))
            )
        ).alias("chunks")
    )
    last = F.size("chunks") - 1
    pieces = F.transform(
        "chunks",
        lambda c, i: F.when(
            i < last, F.rpad(F.coalesce(c.text, F.lit("")), chunk_size, " ")
        ).otherwise(F.coalesce(c.text, F.lit(""))),
    )
    text = F.rtrim(F.array_join(pieces, ""))
    if escaped_newlines:
        text = F.replace(text, F.lit("\\n"), F.lit("\n"))
    return ordered.select(F.col(key), text.alias("_full_text"))


def _redshift(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """SYS_QUERY_HISTORY (status success / failed / canceled; query_text holds the first 4,000
    characters) or STL_QUERY (aborted 0/1), with the full text from SYS_QUERY_TEXT (4,000-char
    chunks) or STL_QUERYTEXT (200-char chunks) when ``extra_paths.query_text`` is given. Rows of
    the system user rdsdb are not user SQL. The search path is not recorded: default schema
    ``public`` unless ``defaults.default_schema`` says otherwise."""
    sys_view = "query_id" in raw.columns
    if sys_view:
        _require(raw, source, "query_id", "query_text", "user_id", "status")
        key, user, text = "query_id", "user_id", "query_text"
        status = _status(_c("status"), ("failed",), ("canceled",))
        start, end = _c("start_time"), _c("end_time")
        database = _c("database_name")
    else:
        _require(raw, source, "query", "querytxt", "userid", "aborted")
        key, user, text = "query", "userid", "querytxt"
        status = F.when(_c("aborted") == "1", F.lit("failed")).otherwise(F.lit("success"))
        start, end = _c("starttime"), _c("endtime")
        database = _c("database")
    frame = raw.where((F.trim(_c(user)) != REDSHIFT_SYSTEM_USER_ID) | _not_corrupt(raw))
    full_text = _c(text)
    text_path = source.extra_paths.get("query_text")
    if text_path:
        chunks = _read_csv(spark, source, text_path)
        if "query_id" in chunks.columns:
            texts = reassemble_chunks(
                chunks, "query_id", SYS_QUERY_TEXT_CHUNK, escaped_newlines=False
            )
        else:
            _require(chunks, source, "query", "sequence", "text")
            texts = reassemble_chunks(chunks, "query", STL_QUERYTEXT_CHUNK, escaped_newlines=True)
        texts = texts.withColumnRenamed(texts.columns[0], "_text_key")
        frame = frame.join(texts, _c(key) == F.col("_text_key"), "left")
        full_text = F.coalesce(F.col("_full_text"), _c(text))
    return frame.select(
        _c(key).alias("query_id"),
        full_text.alias("query_text"),
        F.lit("redshift").alias("dialect"),
        database.alias("default_database"),
        F.lit("public").alias("default_schema"),
        _timestamp(start, *_RS_TS).alias("start_time"),
        _timestamp(end, *_RS_TS).alias("end_time"),
        status.alias("status"),
        *_keep_corrupt(raw),
    )


def _read_csv(spark: SparkSession, source: SourceSettings, path: str) -> DataFrame:
    try:
        return spark.read.options(header="true", multiLine="true", quote='"', escape='"').csv(path)
    except Exception as exc:
        raise InputError(
            f"cannot read the companion export of source {source.name!r} at {path}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc


# ------------------------------------------------------------------------------- PostgreSQL


def _pg_stat_statements(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """pg_stat_statements (optionally joined with pg_database.datname and pg_roles.rolname): one
    row per (dbid, userid, queryid, toplevel), constants as $n; it keeps completed statements only
    and no timestamps. ``<insufficient privilege>`` rows hide another user's text."""
    _require(raw, source, "queryid", "query", "userid", "dbid")
    toplevel = _c("toplevel") if "toplevel" in raw.columns else F.lit("t")
    database = _c("datname") if "datname" in raw.columns else F.lit(None)
    user = _c("rolname") if "rolname" in raw.columns else _c("userid")
    return raw.where((_c("query") != "<insufficient privilege>") | _not_corrupt(raw)).select(
        F.concat_ws(":", _c("dbid"), _c("userid"), _c("queryid"), toplevel).alias("query_id"),
        _c("query").alias("query_text"),
        F.lit("postgres").alias("dialect"),
        database.alias("default_database"),
        F.lit("public").alias("default_schema"),
        user.cast(StringType()).alias("user_name"),
        F.lit("success").alias("status"),
        *_keep_corrupt(raw),
    )


CSVLOG_COLUMNS: tuple[str, ...] = (
    "log_time", "user_name", "database_name", "process_id", "connection_from", "session_id",
    "session_line_num", "command_tag", "session_start_time", "virtual_transaction_id",
    "transaction_id", "error_severity", "sql_state_code", "message", "detail", "hint",
    "internal_query", "internal_query_pos", "context", "query", "query_pos", "location",
    "application_name", "backend_type", "leader_pid", "query_id",
)  # fmt: skip
"""PostgreSQL csvlog columns in file order (13: the first 24; 14+: 26)."""
_STATEMENT = r"^(?:duration: [0-9.]+ ms\s+)?(?:statement|execute [^:]*): "


def _csvlog(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """csvlog with ``log_statement`` (or ``log_min_duration_statement``): a statement is a LOG
    row ``statement: …``; it failed when the session's next line is an ERROR/FATAL row whose
    ``query`` is that statement. Every other row (connections, checkpoints, the error rows
    themselves) is not user SQL. ``log_time`` carries the log_timezone abbreviation: UTC/GMT and
    numeric offsets are read; set ``log_timezone = 'UTC'``."""
    names = [c for c in raw.columns if c not in (CORRUPT_COLUMN, INPUT_FILE)]
    if len(names) < 22:
        raise InputError(
            f"source {source.name!r} ({source.path}) is not a csvlog file: {len(names)} columns"
        )
    log = raw.select(
        *[_c(c).alias(CSVLOG_COLUMNS[i]) for i, c in enumerate(names[: len(CSVLOG_COLUMNS)])],
        *_keep_corrupt(raw),
    )
    # the session's next line, read before the statement filter
    after = Window.partitionBy("session_id").orderBy(F.col("session_line_num").cast("long"))
    is_error = F.col("error_severity").isin("ERROR", "FATAL", "PANIC")
    log = log.withColumn("_err_query", F.lead(F.when(is_error, F.col("query"))).over(after))
    message = F.coalesce(F.col("message"), F.lit(""))
    text = F.regexp_replace(message, _STATEMENT, "")
    joined = log.where(
        ((F.col("error_severity") == "LOG") & message.rlike(_STATEMENT)) | _not_corrupt(log)
    )
    stamp = F.regexp_replace(F.col("log_time"), " (UTC|GMT)$", " +0000")
    return joined.select(
        F.concat_ws(":", F.col("session_id"), F.col("session_line_num")).alias("query_id"),
        text.alias("query_text"),
        F.lit("postgres").alias("dialect"),
        F.col("database_name").alias("default_database"),
        F.lit("public").alias("default_schema"),
        F.col("user_name"),
        _timestamp(stamp, "yyyy-MM-dd HH:mm:ss.SSS Z", "yyyy-MM-dd HH:mm:ss Z").alias("start_time"),
        F.when(F.col("_err_query") == text, F.lit("failed"))
        .otherwise(F.lit("success"))
        .alias("status"),
        *_keep_corrupt(log),
    )


# ------------------------------------------------------------------------------- Trino


def _trino(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """QueryCompletedEvent JSON (event listener): metadata.queryState FINISHED / FAILED, a
    failureInfo means failed; context.catalog / context.schema are the session defaults."""
    _require(raw, source, "metadata", "context")

    def meta(path: str) -> Column:
        return F.get_json_object(_c("metadata"), path)

    def context(path: str) -> Column:
        return F.get_json_object(_c("context"), path)

    failure = (
        F.get_json_object(_c("failureInfo"), "$.failureMessage")
        if "failureInfo" in raw.columns
        else F.lit(None)
    )
    failed = (F.upper(meta("$.queryState")) == "FAILED") | failure.isNotNull()
    return raw.select(
        meta("$.queryId").alias("query_id"),
        meta("$.query").alias("query_text"),
        F.lit("trino").alias("dialect"),
        context("$.catalog").alias("default_database"),
        context("$.schema").alias("default_schema"),
        context("$.user").alias("user_name"),
        _timestamp(F.coalesce(_c("executionStartTime"), _c("createTime"))).alias("start_time"),
        _timestamp(_c("endTime")).alias("end_time"),
        F.when(failed, F.lit("failed")).otherwise(F.lit("success")).alias("status"),
        *_keep_corrupt(raw),
    )


_TRINO_IO = (
    "struct<inputs:array<struct<catalogName:string,schema:string,table:string>>,"
    "output:struct<catalogName:string,schema:string,table:string,"
    "columns:array<struct<column:string,sourceColumns:array<struct<catalog:string,"
    "schema:string,table:string,columnName:string>>>>>>"
)


def _trino_native(
    spark: SparkSession, raw: DataFrame, source: SourceSettings
) -> tuple[DataFrame, DataFrame]:
    """ioMetadata: every input x the output table; output.columns[].sourceColumns per column."""
    finished = raw.where(F.upper(F.get_json_object(_c("metadata"), "$.queryState")) == "FINISHED")
    io = finished.select(
        F.get_json_object(_c("metadata"), "$.queryId").alias("query_id"),
        F.from_json(_c("ioMetadata"), _TRINO_IO).alias("io"),
    )
    out = F.col("io.output")
    out_name = F.lower(F.concat_ws(".", out.catalogName, out.schema, out.table))
    tables = io.where(out.isNotNull()).select(
        "query_id", F.explode("io.inputs").alias("i"), out_name.alias("target_table")
    )
    tables = tables.select(
        "query_id",
        F.lower(
            F.concat_ws(".", F.col("i.catalogName"), F.col("i.schema"), F.col("i.table"))
        ).alias("source_table"),
        "target_table",
    )
    columns = (
        io.where(out.isNotNull())
        .select("query_id", out_name.alias("target_table"), F.explode(out.columns).alias("c"))
        .select(
            "query_id",
            "target_table",
            F.col("c.column").alias("target_column"),
            F.explode("c.sourceColumns").alias("s"),
        )
        .select(
            "query_id",
            F.lower(
                F.concat_ws(".", F.col("s.catalog"), F.col("s.schema"), F.col("s.table"))
            ).alias("source_table"),
            F.lower(F.col("s.columnName")).alias("source_column"),
            "target_table",
            F.lower(F.col("target_column")).alias("target_column"),
        )
    )
    return _native(tables).unionByName(columns), io.select("query_id").distinct()


def _native(tables: DataFrame) -> DataFrame:
    """Table edges in the NATIVE_COLUMNS shape."""
    return tables.select(
        "query_id",
        "source_table",
        F.lit(None).cast(StringType()).alias("source_column"),
        "target_table",
        F.lit(None).cast(StringType()).alias("target_column"),
    )


# ------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Preset:
    """A vendor export: reader options, the row transform, and optionally its native lineage."""

    name: str
    transform: Callable[[SparkSession, DataFrame, SourceSettings], DataFrame]
    options: tuple[tuple[str, str], ...] = ()
    native: (
        Callable[[SparkSession, DataFrame, SourceSettings], tuple[DataFrame, DataFrame] | None]
        | None
    ) = None
    """(edges, query ids covered) from the raw export; None when this export lacks them."""


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("snowflake_query_history", _snowflake, native=_snowflake_native),
        Preset("bigquery_jobs", _bigquery, native=_bigquery_native),
        Preset("databricks_query_history", _databricks, native=_databricks_native),
        Preset("redshift_query_history", _redshift),
        Preset("postgres_pg_stat_statements", _pg_stat_statements),
        Preset("postgres_csvlog", _csvlog, options=(("header", "false"),)),
        Preset("trino_query_completed", _trino, native=_trino_native),
    )
}


def with_preset_options(source: SourceSettings) -> SourceSettings:
    """The source with its preset's reader options under the configured ones."""
    if source.preset is None:
        return source
    preset = PRESETS[source.preset]
    return source.model_copy(update={"options": {**dict(preset.options), **source.options}})


def apply_preset(spark: SparkSession, source: SourceSettings, raw: DataFrame) -> DataFrame:
    """The raw export's rows as canonical-named columns (the reader maps and checks them)."""
    if source.preset is None:
        return raw
    if source.format not in ("delta", "jdbc"):
        raw = raw.withColumn(INPUT_FILE, F.col("_metadata.file_path"))
    return PRESETS[source.preset].transform(spark, raw, source)


def has_native_lineage(source: SourceSettings) -> bool:
    """Whether the source's export records the engine's own lineage (file exports only)."""
    return (
        source.preset is not None
        and PRESETS[source.preset].native is not None
        and source.format != "jdbc"
    )


def native_lineage(
    spark: SparkSession, source: SourceSettings, raw: DataFrame
) -> tuple[DataFrame, DataFrame] | None:
    """(edges in NATIVE_COLUMNS, query ids the export covers), or None if the export has none."""
    if source.preset is None:
        return None
    native = PRESETS[source.preset].native
    return None if native is None else native(spark, raw, source)
