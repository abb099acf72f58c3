"""Job settings: pydantic models for ``conf/*.yaml`` and ``load_settings()``.

Precedence: ``conf/base.yaml`` (every key with its default, documented), then overlay files in
command-line order, deep-merged left to right. There is no environment-to-config mapping. The
models are frozen and reject unknown keys, so a typo in YAML fails at start-up.
"""

from __future__ import annotations

import dataclasses
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

PRESET_EXTRA_PATHS: dict[str, tuple[str, ...]] = {
    "snowflake_query_history": (),
    "bigquery_jobs": (),
    "databricks_query_history": (),
    "redshift_query_history": ("query_text",),
    "postgres_pg_stat_statements": (),
    "postgres_csvlog": (),
    "trino_query_completed": (),
}
"""Optional companion exports a preset reads (e.g. Redshift's query text chunks)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceSettings(_Strict):
    """One query log to read and map to the canonical log schema.

    ``columns`` maps canonical name → source column; a canonical column that is not mapped is
    taken from a source column of the same name if there is one, else from ``defaults``, else
    null. ``defaults`` holds constants (``dialect``, ``source_system``, ``object_kind`` …) that
    fill nulls.
    """

    name: str
    format: Literal["csv", "jsonl", "parquet", "delta"]
    path: str
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

    @field_validator("columns", "defaults")
    @classmethod
    def _known_columns(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(QUERY_LOG_COLUMNS))
        if unknown:
            raise ValueError(f"unknown canonical column(s) {unknown}; known: {QUERY_LOG_COLUMNS}")
        return value


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


class SinkSettings(_Strict):
    """The Delta tables. ``database`` set → catalog tables ``<database>.<table>`` (Unity Catalog:
    ``catalog.schema``); otherwise path-based tables under ``base_path``."""

    base_path: str = "warehouse/lineage"
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
        ],
        TableSettings,
    ] = Field(default_factory=dict)


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
    checkpoint_dir: str | None = None
    """Reliable checkpoint directory (durable storage on a cluster). None: local checkpoints."""

    @property
    def reliable_checkpoints(self) -> bool:
        """Whether plans are cut with ``checkpoint()`` (needs ``checkpoint_dir``)."""
        return self.checkpoint_dir is not None


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
    cache_batch_rows: int = Field(500, ge=1)
    """Rows per columnar batch of persisted results (``spark.sql.inMemoryColumnarStorage.
    batchSize`` during the run; Spark's default is 10,000). A batch is on the heap while it is
    written to the block store; Spark's Java serializer keeps the last
    ``spark.serializer.objectStreamReset`` objects it wrote referenced (100 by default; conf/
    base.yaml sets 1), so a task can hold that many batches."""

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
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
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
        raise ConfigError(f"invalid settings from [{names}]:\n{exc}") from exc
