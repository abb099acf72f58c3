"""Job settings: pydantic models for ``conf/*.yaml`` and ``load_settings()``.

Precedence: ``conf/base.yaml`` (every key with its default, documented), then overlay files in
command-line order, deep-merged left to right. There is no environment-to-config mapping. The
models are frozen and reject unknown keys, so a typo in YAML fails at start-up.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from math import ceil
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.records import QUERY_LOG_COLUMNS
from lineage_udfs.emit.config import OpenLineageSettings
from lineage_udfs.paths import resolve_path

PRESET_FILE_FORMATS: dict[str, Literal["csv", "jsonl", "parquet", "delta"]] = {
    "snowflake_query_history": "csv",
    "bigquery_jobs": "jsonl",
    "databricks_query_history": "jsonl",
    "redshift_query_history": "csv",
    "postgres_pg_stat_statements": "csv",
    "postgres_csvlog": "csv",
    "trino_query_completed": "jsonl",
}
"""Vendor query-history presets (``lineage_udfs.sources.presets``) → the file format they read."""

PRESET_JDBC_QUERIES: dict[str, str] = {
    "postgres_pg_stat_statements": (
        "SELECT d.datname, r.rolname, s.* FROM pg_stat_statements s"
        " JOIN pg_database d ON d.oid = s.dbid JOIN pg_roles r ON r.oid = s.userid"
        " WHERE r.rolname <> current_user"
    ),
}
"""The query a preset reads over JDBC when the source names no table or query. For
pg_stat_statements: the database and role names joined in; the reading role's own statements
(the job's) are left out, so run the job as a role of its own (``pg_read_all_stats``)."""

PRESET_EXTRA_PATHS: dict[str, tuple[str, ...]] = {
    "snowflake_query_history": (),
    "bigquery_jobs": (),
    "databricks_query_history": ("table_lineage", "column_lineage"),
    "redshift_query_history": ("query_text",),
    "postgres_pg_stat_statements": (),
    "postgres_csvlog": (),
    "trino_query_completed": (),
}
"""Optional companion exports a preset reads (e.g. Redshift's query text chunks)."""


class _Strict(BaseModel):
    # validation errors never echo the input: a misplaced secret must not reach a log line
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


JDBC_DRIVERS: dict[str, str] = {
    "jdbc:postgresql:": "org.postgresql.Driver",
}
"""Driver class by URL prefix, for URLs whose driver is not named in ``jdbc.driver``."""

_URL_SECRET = re.compile(r"(?i)(password|passwd|pwd|secret|token)\s*=|//[^/@:]+:[^/@]*@")


class JdbcSettings(_Strict):
    """A database read over JDBC (``format: jdbc``). The driver jar comes from Maven Central
    through ``spark.packages`` (e.g. ``org.postgresql:postgresql:42.7.14``).

    The password is never part of the settings: ``password_env`` names the environment variable
    that holds it, read when the job starts; a URL carrying a password is rejected, so that
    ``lineage_runs.config_json`` and the logs never see one (nor do validation errors, which
    leave the input out).
    """

    url: str
    """``jdbc:postgresql://host:5432/db``; no credentials in it."""
    table: str | None = None
    """A table or view (``dbtable``); or give ``query``. A preset may supply the query."""
    query: str | None = None
    """A SELECT whose rows are the source's rows."""
    user: str | None = None
    password_env: str | None = None
    """Name of the environment variable holding the password (None: no password)."""
    driver: str | None = None
    """Driver class; default from the URL (JDBC_DRIVERS)."""
    fetch_size: int = Field(1000, ge=1)
    options: dict[str, str] = Field(default_factory=dict)
    """More options of Spark's JDBC source (e.g. ``queryTimeout``); none may carry a secret."""

    @field_validator("url")
    @classmethod
    def _no_secret_in_url(cls, value: str) -> str:
        if not value.startswith("jdbc:"):
            raise ValueError("a JDBC URL starts with jdbc:")
        if _URL_SECRET.search(value):
            raise ValueError(
                "the JDBC URL carries a password: give it through password_env instead"
            )
        return value

    @field_validator("options")
    @classmethod
    def _no_secret_option(cls, value: dict[str, str]) -> dict[str, str]:
        reserved = {"url", "user", "password", "dbtable", "query", "driver", "fetchsize"}
        bad = sorted(k for k in value if k.lower() in reserved or _URL_SECRET.search(f"{k}="))
        if bad:
            raise ValueError(f"jdbc.options may not set {bad}: use the jdbc keys")
        return value

    @property
    def driver_class(self) -> str | None:
        """The driver class to load: ``driver``, else the one for the URL's prefix."""
        if self.driver:
            return self.driver
        return next((d for p, d in JDBC_DRIVERS.items() if self.url.startswith(p)), None)

    @property
    def display_url(self) -> str:
        """The URL without its query string (shown in messages and as the source's path)."""
        return self.url.split("?", 1)[0]


_DURATION_UNITS: dict[str, int] = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}
_DURATION = re.compile(r"(?:\d+[dhms])+")
_DURATION_PART = re.compile(r"(\d+)([dhms])")
_TIME_TYPES = frozenset({"timestamp", "timestamp_ntz", "date"})
_NUMERIC_TYPES = frozenset(
    {"tinyint", "smallint", "int", "bigint", "long", "float", "double", "decimal"}
)
LOOKBACK_FORMS = (
    "incremental.lookback takes a duration for a timestamp column (90s, 30m, 2h, 1d, 1h30m)"
    " or a number of at least 0 for a numeric one (5000); 0: no lookback"
)


class IncrementalSettings(_Strict):
    """Read only the rows a source gained since the last committed run (a per-source watermark
    in the ``source_state`` Delta table, committed after the run's lineage; docs/sources.md).

    Exactly one of:

    - ``column``: a column that only grows (an id, an insertion time): the run reads the rows
      above the committed maximum minus ``lookback``, and commits the maximum it read;
    - ``keys`` (and optionally ``version``): a snapshot source such as ``pg_stat_statements``
      that has no time column: the run reads the rows whose key is new, or whose ``version``
      (e.g. the cumulative ``calls``) differs from the committed one, and commits the key set
      it read.
    """

    column: str | None = None
    type: Literal["long", "double", "timestamp", "string"] | None = None
    """The watermark column's type for comparing; None: as read. CSV and JSON lines fields
    are read as text, so a numeric or time column there needs ``long`` / ``timestamp``."""
    keys: list[str] = Field(default_factory=list)
    version: str | None = None
    lookback: int | float | str = 0
    """How far below the committed watermark each run reads again, so that a row that arrives
    late (its column at or below the watermark, but within the window) is still read: a
    duration for a timestamp or date column (``90s``, ``30m``, ``2h``, ``1d``, ``1h30m``), a
    number in the column's units for a numeric one. 0: none. Rows read again are stored
    already: their MERGE changes nothing."""

    @field_validator("lookback", mode="before")
    @classmethod
    def _lookback_form(cls, value: Any) -> Any:
        if isinstance(value, str) and _DURATION.fullmatch(value.strip()):
            return value.strip()
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        if not is_number or not math.isfinite(value) or value < 0:
            raise ValueError(LOOKBACK_FORMS)
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> IncrementalSettings:
        if (self.column is None) == (not self.keys):
            raise ValueError("incremental needs exactly one of column or keys")
        if self.version is not None and not self.keys:
            raise ValueError("incremental.version goes with keys")
        if self.type is not None and self.column is None:
            raise ValueError("incremental.type goes with column")
        if self.lookback_amount and self.column is None:
            raise ValueError("incremental.lookback goes with column")
        mismatch = None if self.type is None else self.lookback_mismatch(self.type)
        if mismatch is not None:
            raise ValueError(mismatch)
        return self

    @property
    def lookback_is_duration(self) -> bool:
        """Whether ``lookback`` is a duration (else a number)."""
        return isinstance(self.lookback, str)

    @property
    def lookback_amount(self) -> float:
        """``lookback`` in seconds (a duration: ``1h30m`` is 5400) or in the column's units (a
        number)."""
        if isinstance(self.lookback, str):
            parts = _DURATION_PART.findall(self.lookback)
            return float(sum(int(n) * _DURATION_UNITS[unit] for n, unit in parts))
        return float(self.lookback)

    def lookback_mismatch(self, column_type: str) -> str | None:
        """Why ``lookback`` does not fit a watermark column of Spark type ``column_type``
        (``long``, ``bigint``, ``decimal(12,0)``, ``timestamp`` ...); None when it fits. A
        lookback of 0 fits every column."""
        if not self.lookback_amount:
            return None
        kind = column_type.split("(", 1)[0].strip().lower()
        if kind not in _TIME_TYPES | _NUMERIC_TYPES:
            return (
                f"incremental.lookback needs a numeric or timestamp column, but {self.column!r}"
                f" is compared as {column_type}: set incremental.type to long, double or"
                " timestamp"
            )
        if self.lookback_is_duration and kind in _NUMERIC_TYPES:
            return (
                f"incremental.lookback {self.lookback!r} is a duration, but {self.column!r} is"
                f" {column_type}: give a number in the column's units"
            )
        if not self.lookback_is_duration and kind in _TIME_TYPES:
            return (
                f"incremental.lookback {self.lookback!r} is a number, but {self.column!r} is"
                f" {column_type}: give a duration such as 30m, 2h or 1d"
            )
        return None


def _check_location(source: SourceSettings | CatalogSourceSettings, default_query: bool) -> None:
    """A file source needs a path; a JDBC source a ``jdbc:`` section with a table or a query
    (unless ``default_query``), and shows its URL without credentials as its path."""
    if source.format == "jdbc":
        if source.jdbc is None:
            raise ValueError("format jdbc needs a jdbc: section (url, table or query)")
        if source.jdbc.table and source.jdbc.query:
            raise ValueError("jdbc takes table or query, not both")
        if not (source.jdbc.table or source.jdbc.query or default_query):
            raise ValueError("jdbc needs a table or a query")
        if not source.path:
            object.__setattr__(source, "path", source.jdbc.display_url)  # frozen model
    elif source.jdbc is not None:
        raise ValueError("a jdbc: section needs format jdbc")
    elif not source.path:
        raise ValueError(f"format {source.format} needs a path")


class SourceSettings(_Strict):
    """One query log to read and map to the canonical log schema.

    ``columns`` maps canonical name → source column; a canonical column that is not mapped is
    taken from a source column of the same name if there is one, else from ``defaults``, else
    null. ``defaults`` holds constants (``dialect``, ``source_system``, ``object_kind`` …) that
    fill nulls.
    """

    name: str
    format: Literal["csv", "jsonl", "parquet", "delta", "jdbc"]
    path: str = ""
    """File, folder, glob or Delta table; for ``jdbc`` the URL without its query string."""
    jdbc: JdbcSettings | None = None
    incremental: IncrementalSettings | None = None
    enabled: bool = True
    preset: str | None = None
    extra_paths: dict[str, str] = Field(default_factory=dict)
    columns: dict[str, str] = Field(default_factory=dict)
    defaults: dict[str, str] = Field(default_factory=dict)
    timestamp_format: str | None = None
    options: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _preset_as_format(cls, data: Any) -> Any:
        """``format: <preset>`` is ``preset: <preset>`` with the preset's file format."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        fmt = data.get("format")
        if fmt in PRESET_FILE_FORMATS:
            if data.get("preset") not in (None, fmt):
                raise ValueError(f"format {fmt!r} and preset {data['preset']!r} disagree")
            data["preset"] = fmt
            data["format"] = PRESET_FILE_FORMATS[fmt]
        preset = data.get("preset")
        if preset is not None:
            if preset not in PRESET_FILE_FORMATS:
                raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESET_FILE_FORMATS)}")
            data.setdefault("format", PRESET_FILE_FORMATS[preset])
            unknown = sorted(set(data.get("extra_paths") or {}) - set(PRESET_EXTRA_PATHS[preset]))
            if unknown:
                raise ValueError(
                    f"preset {preset!r} has no extra_paths {unknown}; "
                    f"known: {list(PRESET_EXTRA_PATHS[preset])}"
                )
        elif data.get("extra_paths"):
            raise ValueError("extra_paths needs a preset")
        return data

    @model_validator(mode="after")
    def _location(self) -> SourceSettings:
        _check_location(self, self.preset in PRESET_JDBC_QUERIES)
        return self

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        return resolve_path(value)

    @field_validator("extra_paths")
    @classmethod
    def _absolute_extra_paths(cls, value: dict[str, str]) -> dict[str, str]:
        return {name: resolve_path(path) for name, path in value.items()}

    @field_validator("columns", "defaults")
    @classmethod
    def _known_columns(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(QUERY_LOG_COLUMNS))
        if unknown:
            raise ValueError(f"unknown canonical column(s) {unknown}; known: {QUERY_LOG_COLUMNS}")
        return value


CATALOG_COLUMNS: tuple[str, ...] = (
    "table_catalog",
    "table_schema",
    "table_name",
    "column_name",
    "ordinal_position",
    "data_type",
)
"""What a catalog source provides, named as in ``information_schema.columns``."""

CATALOG_JDBC_QUERY = (
    "SELECT table_catalog, table_schema, table_name, column_name, ordinal_position, data_type"
    " FROM information_schema.columns"
    " WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
)
"""What a JDBC catalog source reads when it names no table or query."""


class CatalogSourceSettings(_Strict):
    """Table and column definitions to import into ``catalog_columns``: a database's
    ``information_schema.columns`` over JDBC, or an exported file with the same columns
    (``columns`` maps a differently named one; ``defaults`` fills e.g. ``table_catalog``)."""

    name: str
    format: Literal["csv", "jsonl", "parquet", "delta", "jdbc"]
    path: str = ""
    jdbc: JdbcSettings | None = None
    columns: dict[str, str] = Field(default_factory=dict)
    defaults: dict[str, str] = Field(default_factory=dict)
    options: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        return resolve_path(value)

    @field_validator("columns", "defaults")
    @classmethod
    def _known_columns(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(CATALOG_COLUMNS))
        if unknown:
            raise ValueError(f"unknown catalog column(s) {unknown}; known: {CATALOG_COLUMNS}")
        return value

    @model_validator(mode="after")
    def _location(self) -> CatalogSourceSettings:
        _check_location(self, default_query=True)  # information_schema.columns by default
        return self


class CatalogSettings(_Strict):
    """The catalog: column definitions the parser resolves ``SELECT *``, unqualified columns
    and ``INSERT`` without a column list against (docs/sources.md#catalog)."""

    sources: list[CatalogSourceSettings] = Field(default_factory=list)
    """Imported into ``catalog_columns`` at the start of each run (a source's rows replaced)."""
    max_tables_per_statement: int = Field(200, ge=1)
    """Catalog tables handed to the parser with one statement at most (those whose name the
    statement's text mentions); a statement naming more gets none."""


class ParserSettings(_Strict):
    """The ``parser:`` section: the parser's options (``ParserOptions``, validated into it; see
    its docstring) next to the two keys that say how the job drives the parser."""

    options: ParserOptions = ParserOptions()
    incremental: bool = True
    """Parse only fingerprints not yet parsed under the current ``parser_version``."""
    partitions: int = 0
    """Parse tasks; 0 derives the count from the cores and the statements."""

    @model_validator(mode="before")
    @classmethod
    def _nest_options(cls, value: Any) -> Any:
        """The YAML section is flat: every key but the job's goes to ``options``."""
        if not isinstance(value, Mapping) or "options" in value:
            return value
        job_keys = set(cls.model_fields) - {"options"}
        options = {k: v for k, v in value.items() if k not in job_keys}
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(ParserOptions)})
        if unknown:
            raise ValueError(f"unknown parser option(s) {unknown}")
        return {**{k: v for k, v in value.items() if k in job_keys}, "options": options}

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dumped flat, as the YAML section is written."""
        data: dict[str, Any] = handler(self)
        return {**data.pop("options"), **data}


class TableSettings(_Strict):
    """Where one Delta table lives: a path (default ``<base_path>/<table>``) or a catalog name."""

    path: str | None = None
    name: str | None = None

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str | None) -> str | None:
        return None if value is None else resolve_path(value)


class SinkSettings(_Strict):
    """The Delta tables. ``database`` set → catalog tables ``<database>.<table>`` (Unity Catalog:
    ``catalog.schema``); otherwise path-based tables under ``base_path``."""

    base_path: str = Field("warehouse/lineage", validate_default=True)
    """Relative: to the working directory of the process that loads the settings
    (``lineage_udfs.paths``), as every other path of the settings."""
    database: str | None = None
    tables: dict[
        Literal[
            "parsed_statements",
            "queries",
            "table_lineage",
            "column_lineage",
            "quarantine",
            "lineage_runs",
            "openlineage_emissions",
            "source_state",
            "catalog_columns",
        ],
        TableSettings,
    ] = Field(default_factory=dict)

    @field_validator("base_path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        return resolve_path(value)


class SparkSettings(_Strict):
    """Session settings; ``master`` None means "from spark-submit / the cluster"."""

    app_name: str = "lineage-extract"
    master: str | None = None
    packages: list[str] = Field(default_factory=list)
    repositories: list[str] = Field(default_factory=list)
    """Extra Maven repositories for ``packages`` (``spark.jars.repositories``): an artifact
    mirror. The environment variable ``LINEAGE_MAVEN_REPOSITORIES`` (comma-separated) adds more."""
    confs: dict[str, str] = Field(default_factory=dict)

    @field_validator("confs", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                str(k): (str(v).lower() if isinstance(v, bool) else str(v))
                for k, v in value.items()
            }
        return value


class LoggingSettings(_Strict):
    """Driver logging."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: str = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class GraphSettings(_Strict):
    """The graph-analytics stage (lineage_nodes, lineage_paths, table/column closures)."""

    enabled: bool = True
    """Run the stage at the end of the extract job (``jobs/analyze_graph.py`` runs it alone)."""
    max_depth: int = Field(20, ge=1, le=20)
    """Longest root-to-leaf path and closure distance, in hops."""
    max_paths_per_root: int = Field(1000, ge=1)
    """Paths kept per root; a root with more has its paths flagged ``truncated``."""
    max_cc_iterations: int = Field(100, ge=1)
    """Bound on GraphFrames' connected-component and strongly-connected-component rounds."""
    max_closure_per_node: int = Field(10000, ge=1)
    """Descendants kept per ancestor in table_closure/column_closure (nearest first, then by
    name); an ancestor with more has its rows flagged ``truncated``."""
    full_refresh: bool = False
    """Recompute every component, not only those whose edges changed since the last run."""
    incremental_min_edges: int = Field(2_000_000, ge=0)
    """A graph of fewer edges (``table_lineage`` plus ``column_lineage`` rows) is recomputed in
    full when its table edges change, not incrementally: on a small graph overwriting the
    analytics tables costs less than finding and MERGEing what changed (the figures are in
    bench/results/small_runs.md). 0: always incremental."""

    @model_validator(mode="before")
    @classmethod
    def _moved_checkpoint_dir(cls, data: Any) -> Any:
        """``graph.checkpoint_dir`` (the graph stage's checkpoints only, never removed) became
        ``execution.checkpoint_dir``: every checkpoint of the job, in a folder per run that is
        removed when the run ends. A value there stops the job rather than widening or
        ignoring it silently; ``null`` is accepted and dropped."""
        if not isinstance(data, Mapping) or "checkpoint_dir" not in data:
            return data
        data = dict(data)
        if data.pop("checkpoint_dir") is not None:
            raise ValueError(
                "graph.checkpoint_dir is replaced by execution.checkpoint_dir (every checkpoint"
                " of the job, in a folder per run removed when the run ends): move the value"
                " there"
            )
        return data


StorageLevelName = Literal["DISK_ONLY", "MEMORY_AND_DISK", "MEMORY_AND_DISK_DESER", "MEMORY_ONLY"]
"""Names of ``pyspark.StorageLevel`` constants the job accepts for its intermediate results."""

ROW_OVERHEAD_BYTES = 256
"""Bytes counted per log row besides its SQL text (ids, times, names) when sizing partitions."""


class ExecutionSettings(_Strict):
    """How the extraction job sizes and keeps its intermediate data.

    The job's memory must not grow with the log: per-row data never carries the SQL text
    through a shuffle, intermediate results are kept at ``storage_level`` (off the heap by
    default), and the shuffles of a run get a partition count derived from the input's size,
    so that one task's share stays near ``target_partition_bytes`` however long the log is.
    """

    storage_level: StorageLevelName = "DISK_ONLY"
    """Where persisted and locally checkpointed intermediate results live. DISK_ONLY keeps
    them out of the executors' heap (the job reads each a few times); MEMORY_AND_DISK is
    faster when executors have memory to spare."""
    shuffle_partitions: Literal["auto", "session"] | Annotated[int, Field(ge=1)] = "auto"
    """``spark.sql.shuffle.partitions`` while the job runs: ``auto`` derives it from the input
    (see :meth:`shuffle_partitions_for`), ``session`` keeps the session's value, a number
    fixes it. AQE still coalesces small partitions."""
    target_partition_bytes: int = Field(64 * 1024 * 1024, ge=1024 * 1024)
    """``auto``: input bytes (SQL text + ROW_OVERHEAD_BYTES per row) per shuffle partition."""
    min_shuffle_partitions: int = Field(0, ge=0)
    """``auto``: lower bound; 0 means the cluster's default parallelism (all cores busy)."""
    max_shuffle_partitions: int = Field(10_000, ge=1)
    """``auto``: upper bound (task scheduling overhead grows with the count)."""
    min_read_partitions: int = Field(0, ge=0)
    """``spark.sql.files.minPartitionNum`` while the job runs: the fewest splits a file source
    is read in (Spark's default: the cores, so that a log of a few large files can leave cores
    idle in the read stage). 0: the session's value if set, else 4 x the cores."""
    skip_unchanged_input: bool = True
    """Read nothing when every source's files (path, size and modification time) and the
    settings are those of the last finished run and no lineage table was written since (a
    rerun with nothing new). Off: every run reads its input and compares its rows with the
    stored ones (a file rewritten in place with the same size and modification time is then
    still seen)."""
    cache_batch_rows: int = Field(500, ge=1)
    """Rows per columnar batch of persisted results (``spark.sql.inMemoryColumnarStorage.
    batchSize`` during the run; Spark's default is 10,000). A batch is on the heap while it is
    written to the block store; Spark's Java serializer keeps the last
    ``spark.serializer.objectStreamReset`` objects it wrote referenced (100 by default; conf/
    base.yaml sets 1), so a task can hold that many batches."""
    checkpoint_dir: str | None = None
    """Durable storage (HDFS, s3a://, abfss://, dbfs:/, a Unity Catalog volume) for the run's
    checkpoints: every intermediate result the job checkpoints (parse results, edges, the
    emission's and the watermarks' reads, the graph stage's frames and writes) is a reliable
    ``checkpoint()`` into ``<checkpoint_dir>/<run id>/``, which the run removes when it ends,
    also when it fails. A run then survives the loss of an executor. None: local checkpoints
    on the executors' disks (faster; a lost executor fails the run)."""

    @field_validator("checkpoint_dir")
    @classmethod
    def _absolute_checkpoint_dir(cls, value: str | None) -> str | None:
        return None if value is None else resolve_path(value)

    def shuffle_partitions_for(self, input_bytes: int, parallelism: int) -> int | None:
        """The shuffle partition count for an input of ``input_bytes``; None keeps the session's.

        Examples:
            >>> ExecutionSettings().shuffle_partitions_for(10 * 1024**3, parallelism=8)
            160
            >>> ExecutionSettings().shuffle_partitions_for(1000, parallelism=8)
            8
            >>> ExecutionSettings(shuffle_partitions=12).shuffle_partitions_for(1, parallelism=8)
            12
        """
        if self.shuffle_partitions == "session":
            return None
        if isinstance(self.shuffle_partitions, int):
            return self.shuffle_partitions
        low = self.min_shuffle_partitions or max(1, parallelism)
        high = max(low, self.max_shuffle_partitions)
        return min(high, max(low, ceil(max(0, input_bytes) / self.target_partition_bytes)))


class LineageSettings(_Strict):
    """Which logged executions give lineage edges."""

    include_failed_executions: bool = False
    """Take edges from log rows whose ``status`` says the execution failed or was aborted
    (``core.enums.FAILED_EXECUTION_STATUSES`` / ``ABORTED_EXECUTION_STATUSES``, any case).
    Off: such a statement moved no data, so it adds no edge and does not replace a view's or
    procedure's current definition; its row is still stored in ``queries`` (with its status)
    and its statement still parsed. Rows without a status count as succeeded."""


class LimitsSettings(_Strict):
    """Caps on what a log row can make the job store (a hostile log can hold megabytes in any
    field)."""

    max_field_chars: int = Field(1024, ge=64)
    """Longest stored log field other than the query text (user_name, status, object_name …);
    a longer value is cut with a marker, a longer query_id is replaced by its sha256."""
    max_masked_sql_chars: int = Field(100_000, ge=1024)
    """Longest stored masked SQL (parsed_statements.masked_sql, quarantine.masked_record, the
    OpenLineage sql facet); cut with a marker. Fingerprints are computed on the whole text."""


class JobSettings(_Strict):
    """Everything the extraction job needs."""

    sources: list[SourceSettings] = Field(default_factory=list)
    parser: ParserSettings = ParserSettings()
    sink: SinkSettings = SinkSettings()
    spark: SparkSettings = SparkSettings()
    logging: LoggingSettings = LoggingSettings()
    graph: GraphSettings = GraphSettings()
    openlineage: OpenLineageSettings = OpenLineageSettings()
    execution: ExecutionSettings = ExecutionSettings()
    lineage: LineageSettings = LineageSettings()
    limits: LimitsSettings = LimitsSettings()
    catalog: CatalogSettings = CatalogSettings()


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``overlay`` into ``base`` recursively; mappings merge, anything else replaces.

    Examples:
        >>> deep_merge({"a": {"x": 1, "y": 2}, "b": [1]}, {"a": {"y": 3}, "b": [2]})
        {'a': {'x': 1, 'y': 3}, 'b': [2]}
    """
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_settings(paths: Sequence[str | Path]) -> JobSettings:
    """Deep-merge YAML files left to right (base, then overlays) and validate.

    Raises:
        ConfigError: a file is missing, is not YAML or not a mapping, or the merged result is
            invalid (the message names the files).
    """
    merged: dict[str, Any] = {}
    for raw in paths:
        path = Path(raw)
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
        except yaml.YAMLError as exc:
            detail = " ".join(str(exc).split())
            raise ConfigError(f"config file {path} is not valid YAML: {detail}") from exc
        if loaded is None:
            continue
        if not isinstance(loaded, Mapping):
            raise ConfigError(
                f"config file {path} must hold a mapping, got {type(loaded).__name__}"
            )
        merged = deep_merge(merged, loaded)
    try:
        return JobSettings.model_validate(merged)
    except ValidationError as exc:
        names = ", ".join(str(p) for p in paths)
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(top level)'}: {error['msg']}"
            for error in exc.errors()
        )
        raise ConfigError(
            f"invalid settings from [{names}]: {problems} (every key and its meaning:"
            " conf/base.yaml)"
        ) from exc
