"""TODO docstring."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import SourceSettings
from lineage_udfs.sources.columns import (
    CORRUPT_COLUMN,
    INPUT_FILE,
    blank_null,
    execution_status,
    keep_corrupt,
    not_corrupt,
    parse_timestamp,
    quoted,
    read_csv,
    require_columns,
)
from lineage_udfs.sources.native import (
    bigquery_native,
    databricks_native,
    snowflake_native,
    trino_native,
)

# ------------------------------------------------------------------------------- Snowflake


def _snowflake(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """ACCOUNT_USAGE.QUERY_HISTORY: EXECUTION_STATUS success / fail / incident; TIMESTAMP_LTZ
    exported with its offset (``2026-03-01 22:00:00.000 -0800``) or without (session zone)."""
    require_columns(raw, source, "QUERY_ID", "QUERY_TEXT")
    ts = ("yyyy-MM-dd HH:mm:ss.SSS Z", "yyyy-MM-dd HH:mm:ss.SSS XXX", "yyyy-MM-dd HH:mm:ss.SSS")
    optional = {
        c: quoted(c) if c in raw.columns else F.lit(None) for c in ("OBJECT_KIND", "OBJECT_NAME")
    }
    return raw.select(
        quoted("QUERY_ID").alias("query_id"),
        quoted("QUERY_TEXT").alias("query_text"),
        F.lit("snowflake").alias("dialect"),
        quoted("DATABASE_NAME").alias("default_database"),
        quoted("SCHEMA_NAME").alias("default_schema"),
        quoted("USER_NAME").alias("user_name"),
        parse_timestamp(quoted("START_TIME"), *ts).alias("start_time"),
        parse_timestamp(quoted("END_TIME"), *ts).alias("end_time"),
        execution_status(quoted("EXECUTION_STATUS"), ("fail", "incident")).alias("status"),
        optional["OBJECT_KIND"].alias("object_kind"),
        optional["OBJECT_NAME"].alias("object_name"),
        *keep_corrupt(raw),
    )


# ------------------------------------------------------------------------------- BigQuery

_BQ_TS = ("yyyy-MM-dd HH:mm:ss.SSSSSS 'UTC'", "yyyy-MM-dd HH:mm:ss 'UTC'")


def _bigquery(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """INFORMATION_SCHEMA.JOBS: a DONE job with an error_result failed; PENDING/RUNNING jobs are
    left for a later export; LOAD/COPY/EXTRACT jobs and the child jobs of a script (the parent
    SCRIPT job carries the whole script) are not user SQL. The project is the default database;
    the JOBS view does not record the default dataset."""
    require_columns(raw, source, "job_id", "query", "state")
    job_type = quoted("job_type") if "job_type" in raw.columns else F.lit("QUERY")
    parent = quoted("parent_job_id") if "parent_job_id" in raw.columns else F.lit(None)
    user_sql = (
        (F.upper(quoted("state")) == "DONE")
        & (F.upper(F.coalesce(job_type, F.lit("QUERY"))) == "QUERY")
        & blank_null(parent).isNull()
    )
    error = (
        F.get_json_object(quoted("error_result"), "$.reason")
        if "error_result" in raw.columns
        else F.lit(None)
    )
    return raw.where(user_sql | not_corrupt(raw)).select(
        quoted("job_id").alias("query_id"),
        quoted("query").alias("query_text"),
        F.lit("bigquery").alias("dialect"),
        quoted("project_id").alias("default_database"),
        F.lit(None).cast(StringType()).alias("default_schema"),
        quoted("user_email").alias("user_name"),
        parse_timestamp(F.coalesce(quoted("start_time"), quoted("creation_time")), *_BQ_TS).alias(
            "start_time"
        ),
        parse_timestamp(quoted("end_time"), *_BQ_TS).alias("end_time"),
        F.when(blank_null(error).isNotNull(), F.lit("failed"))
        .otherwise(F.lit("success"))
        .alias("status"),
        *keep_corrupt(raw),
    )


# ------------------------------------------------------------------------------- Databricks


def _databricks(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """system.query.history: execution_status FINISHED / FAILED / CANCELED (RUNNING and QUEUED
    rows are left for a later export); it does not record the default catalog or schema."""
    require_columns(raw, source, "statement_id", "statement_text", "execution_status")
    state = F.upper(quoted("execution_status"))
    return raw.where(state.isin("FINISHED", "FAILED", "CANCELED") | not_corrupt(raw)).select(
        quoted("statement_id").alias("query_id"),
        quoted("statement_text").alias("query_text"),
        F.lit("databricks").alias("dialect"),
        quoted("executed_by").alias("user_name"),
        parse_timestamp(quoted("start_time")).alias("start_time"),
        parse_timestamp(quoted("end_time")).alias("end_time"),
        execution_status(quoted("execution_status"), ("failed",), ("canceled",)).alias("status"),
        *keep_corrupt(raw),
    )


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
                F.struct(quoted("sequence").cast("int").alias("seq"), quoted("text").alias("text"))
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
        require_columns(raw, source, "query_id", "query_text", "user_id", "status")
        key, user, text = "query_id", "user_id", "query_text"
        status = execution_status(quoted("status"), ("failed",), ("canceled",))
        start, end = quoted("start_time"), quoted("end_time")
        database = quoted("database_name")
    else:
        require_columns(raw, source, "query", "querytxt", "userid", "aborted")
        key, user, text = "query", "userid", "querytxt"
        status = F.when(quoted("aborted") == "1", F.lit("failed")).otherwise(F.lit("success"))
        start, end = quoted("starttime"), quoted("endtime")
        database = quoted("database")
    frame = raw.where((F.trim(quoted(user)) != REDSHIFT_SYSTEM_USER_ID) | not_corrupt(raw))
    full_text = quoted(text)
    text_path = source.extra_paths.get("query_text")
    if text_path:
        chunks = read_csv(spark, source, text_path)
        if "query_id" in chunks.columns:
            texts = reassemble_chunks(
                chunks, "query_id", SYS_QUERY_TEXT_CHUNK, escaped_newlines=False
            )
        else:
            require_columns(chunks, source, "query", "sequence", "text")
            texts = reassemble_chunks(chunks, "query", STL_QUERYTEXT_CHUNK, escaped_newlines=True)
        texts = texts.withColumnRenamed(texts.columns[0], "_text_key")
        frame = frame.join(texts, quoted(key) == F.col("_text_key"), "left")
        full_text = F.coalesce(F.col("_full_text"), quoted(text))
    return frame.select(
        quoted(key).alias("query_id"),
        full_text.alias("query_text"),
        F.lit("redshift").alias("dialect"),
        database.alias("default_database"),
        F.lit("public").alias("default_schema"),
        parse_timestamp(start, *_RS_TS).alias("start_time"),
        parse_timestamp(end, *_RS_TS).alias("end_time"),
        status.alias("status"),
        *keep_corrupt(raw),
    )


# ------------------------------------------------------------------------------- PostgreSQL


def _pg_stat_statements(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """pg_stat_statements (optionally joined with pg_database.datname and pg_roles.rolname): one
    row per (dbid, userid, queryid, toplevel), constants as $n; it keeps completed statements only
    and no timestamps. ``<insufficient privilege>`` rows hide another user's text."""
    require_columns(raw, source, "queryid", "query", "userid", "dbid")
    toplevel = quoted("toplevel") if "toplevel" in raw.columns else F.lit("t")
    database = quoted("datname") if "datname" in raw.columns else F.lit(None)
    user = quoted("rolname") if "rolname" in raw.columns else quoted("userid")
    return raw.where((quoted("query") != "<insufficient privilege>") | not_corrupt(raw)).select(
        F.concat_ws(":", quoted("dbid"), quoted("userid"), quoted("queryid"), toplevel).alias(
            "query_id"
        ),
        quoted("query").alias("query_text"),
        F.lit("postgres").alias("dialect"),
        database.alias("default_database"),
        F.lit("public").alias("default_schema"),
        user.cast(StringType()).alias("user_name"),
        F.lit("success").alias("status"),
        *keep_corrupt(raw),
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
        *[quoted(c).alias(CSVLOG_COLUMNS[i]) for i, c in enumerate(names[: len(CSVLOG_COLUMNS)])],
        *keep_corrupt(raw),
    )
    # the session's next line, read before the statement filter
    after = Window.partitionBy("session_id").orderBy(F.col("session_line_num").cast("long"))
    is_error = F.col("error_severity").isin("ERROR", "FATAL", "PANIC")
    log = log.withColumn("_err_query", F.lead(F.when(is_error, F.col("query"))).over(after))
    message = F.coalesce(F.col("message"), F.lit(""))
    text = F.regexp_replace(message, _STATEMENT, "")
    joined = log.where(
        ((F.col("error_severity") == "LOG") & message.rlike(_STATEMENT)) | not_corrupt(log)
    )
    stamp = F.regexp_replace(F.col("log_time"), " (UTC|GMT)$", " +0000")
    return joined.select(
        F.concat_ws(":", F.col("session_id"), F.col("session_line_num")).alias("query_id"),
        text.alias("query_text"),
        F.lit("postgres").alias("dialect"),
        F.col("database_name").alias("default_database"),
        F.lit("public").alias("default_schema"),
        F.col("user_name"),
        parse_timestamp(stamp, "yyyy-MM-dd HH:mm:ss.SSS Z", "yyyy-MM-dd HH:mm:ss Z").alias(
            "start_time"
        ),
        F.when(F.col("_err_query") == text, F.lit("failed"))
        .otherwise(F.lit("success"))
        .alias("status"),
        *keep_corrupt(log),
    )


# ------------------------------------------------------------------------------- Trino


def _trino(spark: SparkSession, raw: DataFrame, source: SourceSettings) -> DataFrame:
    """QueryCompletedEvent JSON (event listener): metadata.queryState FINISHED / FAILED, a
    failureInfo means failed; context.catalog / context.schema are the session defaults."""
    require_columns(raw, source, "metadata", "context")

    def meta(path: str) -> Column:
        return F.get_json_object(quoted("metadata"), path)

    def context(path: str) -> Column:
        return F.get_json_object(quoted("context"), path)

    failure = (
        F.get_json_object(quoted("failureInfo"), "$.failureMessage")
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
        parse_timestamp(F.coalesce(quoted("executionStartTime"), quoted("createTime"))).alias(
            "start_time"
        ),
        parse_timestamp(quoted("endTime")).alias("end_time"),
        F.when(failed, F.lit("failed")).otherwise(F.lit("success")).alias("status"),
        *keep_corrupt(raw),
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
        Preset("snowflake_query_history", _snowflake, native=snowflake_native),
        Preset("bigquery_jobs", _bigquery, native=bigquery_native),
        Preset("databricks_query_history", _databricks, native=databricks_native),
        Preset("redshift_query_history", _redshift),
        Preset("postgres_pg_stat_statements", _pg_stat_statements),
        Preset("postgres_csvlog", _csvlog, options=(("header", "false"),)),
        Preset("trino_query_completed", _trino, native=trino_native),
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
