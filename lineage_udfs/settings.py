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
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.core.options import ENGINE_CONVENTIONS, ParserOptions
from lineage_udfs.emit.config import OpenLineageSettings
from lineage_udfs.paths import resolve_path
from lineage_udfs.source_settings import (
    CATALOG_COLUMNS,
    CATALOG_JDBC_QUERY,
    JDBC_DRIVERS,
    LOOKBACK_FORMS,
    PRESET_EXTRA_PATHS,
    PRESET_FILE_FORMATS,
    PRESET_JDBC_QUERIES,
    CatalogSettings,
    CatalogSourceSettings,
    IncrementalSettings,
    JdbcSettings,
    KafkaSettings,
    MarquezSettings,
    SaslSettings,
    SourceSettings,
    StrictModel,
)

__all__ = [  # the sources: and catalog: sections live in lineage_udfs.source_settings
    "CATALOG_COLUMNS",
    "CATALOG_JDBC_QUERY",
    "JDBC_DRIVERS",
    "LOOKBACK_FORMS",
    "PRESET_EXTRA_PATHS",
    "PRESET_FILE_FORMATS",
    "PRESET_JDBC_QUERIES",
    "CatalogSettings",
    "CatalogSourceSettings",
    "IncrementalSettings",
    "JdbcSettings",
    "KafkaSettings",
    "MarquezSettings",
    "SaslSettings",
    "SourceSettings",
]


class ParserSettings(StrictModel):
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
        """The YAML section is flat: every key but the job's goes to ``options``.

        ``conventions: openlineage_spark`` (a preset of ``ENGINE_CONVENTIONS``) sets the
        options under which the parser's conventions are that engine's; an option given
        beside it wins."""
        if not isinstance(value, Mapping) or "options" in value:
            return value
        job_keys = set(cls.model_fields) - {"options"}
        options = {k: v for k, v in value.items() if k not in job_keys | {"conventions"}}
        preset = value.get("conventions")
        if preset is not None:
            if preset not in ENGINE_CONVENTIONS:
                raise ValueError(
                    f"unknown parser conventions {preset!r}; known: {sorted(ENGINE_CONVENTIONS)}"
                )
            options = {**ENGINE_CONVENTIONS[preset], **options}
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(ParserOptions)})
        if unknown:
            raise ValueError(f"unknown parser option(s) {unknown}")
        return {**{k: v for k, v in value.items() if k in job_keys}, "options": options}

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Dumped flat, as the YAML section is written."""
        data: dict[str, Any] = handler(self)
        return {**data.pop("options"), **data}


class TableSettings(StrictModel):
    """Where one Delta table lives: a path (default ``<base_path>/<table>``) or a catalog name."""

    path: str | None = None
    name: str | None = None

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str | None) -> str | None:
        return None if value is None else resolve_path(value)


class SinkSettings(StrictModel):
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


class SparkSettings(StrictModel):
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


class LoggingSettings(StrictModel):
    """Driver logging."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: str = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class GraphSettings(StrictModel):
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
    alias_min_confidence: float = Field(0.9, ge=0.0, le=1.0)
    """The graph merges the nodes of a ``dataset_aliases`` link the steward accepted, or of a
    proposed one with at least this confidence (rejected links never)."""
    incremental_min_edges: int = Field(2_000_000, ge=0)
    """A graph of fewer edges (``table_lineage`` plus ``column_lineage`` rows) is recomputed in
    full when its table edges change, not incrementally: on a small graph overwriting the
    analytics tables costs less than finding and MERGEing what changed (the figures are in
    bench/results/small_runs.md). 0: always incremental."""
    max_edges: int = Field(0, ge=0)
    """The largest graph the stage takes, in edges (``table_lineage`` plus ``column_lineage``
    rows); a larger one stops the stage with one line naming this setting before any work.
    0: derived from ``spark.driver.memory``, ``EDGES_PER_DRIVER_GIB`` edges per GiB (the
    bound and its figures: docs/graph.md, "How large a graph")."""

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


TAG_PRESETS = ("snowflake_tag_references", "unity_column_tags", "column_tags")
"""Tag exports the ``tags.sources`` entries read (``lineage_udfs.spark.graph.tags``)."""


class TagSourceSettings(StrictModel):
    """One export of a source's column tags, read as declarations of kind ``source``.

    Presets: ``snowflake_tag_references`` (``SNOWFLAKE.ACCOUNT_USAGE.TAG_REFERENCES``: the
    ``DOMAIN = 'COLUMN'`` rows not deleted; ``OBJECT_DATABASE``, ``OBJECT_SCHEMA``,
    ``OBJECT_NAME``, ``COLUMN_NAME``, ``TAG_NAME``, ``TAG_VALUE``), ``unity_column_tags``
    (Unity Catalog ``information_schema.column_tags``: ``catalog_name``, ``schema_name``,
    ``table_name``, ``column_name``, ``tag_name``, ``tag_value``) and ``column_tags`` (any
    export with ``table_name``, ``column_name``, ``tag`` and optionally ``tag_value``)."""

    preset: Literal["snowflake_tag_references", "unity_column_tags", "column_tags"]
    path: str
    """File, folder, glob or Delta table of the export."""
    format: Literal["csv", "jsonl", "parquet", "delta"] = "csv"
    name_parts: int = Field(3, ge=1, le=3)
    """How many trailing parts of ``database.schema.table`` name a table in the lineage tables
    (2 when the logs name tables ``schema.table``, as the parser does without a default
    catalog)."""

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        return resolve_path(value)


class TagSettings(StrictModel):
    """Column tags and their propagation over the column lineage (the ``column_tags`` table;
    docs/tags.md)."""

    enabled: bool = False
    """Run the tag propagation after the graph stage (and in ``jobs/analyze_graph.py``)."""
    file: str | None = None
    """The tags file (YAML or JSON: explicit columns and name patterns; docs/tags.md)."""
    sources: list[TagSourceSettings] = Field(default_factory=list)
    name_rules: bool | list[str] = False
    """Built-in column-name rules (``core.tags.NAME_RULES``): true for all, or their names."""
    carry_aggregation: bool = True
    """A DIRECT/AGGREGATION edge carries a tag (``sum(amount)`` of a tagged ``amount``)."""
    max_depth: int = Field(10, ge=1, le=20)
    """Hops a tag travels from the column it was declared on."""

    @field_validator("file")
    @classmethod
    def _absolute_file(cls, value: str | None) -> str | None:
        return None if value is None else resolve_path(value)


StorageLevelName = Literal["DISK_ONLY", "MEMORY_AND_DISK", "MEMORY_AND_DISK_DESER", "MEMORY_ONLY"]
"""Names of ``pyspark.StorageLevel`` constants the job accepts for its intermediate results."""

ROW_OVERHEAD_BYTES = 256
"""Bytes counted per log row besides its SQL text (ids, times, names) when sizing partitions."""


class ExecutionSettings(StrictModel):
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


class LineageSettings(StrictModel):
    """Which logged executions give lineage edges."""

    include_failed_executions: bool = False
    """Take edges from log rows whose ``status`` says the execution failed or was aborted
    (``core.enums.FAILED_EXECUTION_STATUSES`` / ``ABORTED_EXECUTION_STATUSES``, any case).
    Off: such a statement moved no data, so it adds no edge and does not replace a view's or
    procedure's current definition; its row is still stored in ``queries`` (with its status)
    and its statement still parsed. Rows without a status count as succeeded."""


class IdentitySettings(StrictModel):
    """Dataset identity (``dataset_aliases``, ``lineage_udfs.core.identity``): which names of
    the graph are one dataset, derived at the end of each extraction from the evidence at hand
    (OpenLineage symlinks facets, table locations, letter case, the query rows' session
    defaults, storage scheme spellings)."""

    enabled: bool = True
    table_locations: str | None = None
    """A ``DESCRIBE DETAIL`` export (JSON lines, CSV with a header, Parquet or Delta, by the
    file's suffix; Delta for a folder): its ``name`` and ``location`` columns link a table's
    storage path to its name."""
    steward_file: str | None = None
    """A YAML list of ``{alias, canonical, decision: accept | reject}``; a line without
    ``canonical`` decides every link of the alias. An accepted link is merged whatever its
    confidence, a rejected one never; an accepted line no rule derived adds the link."""

    @field_validator("table_locations", "steward_file")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        return None if value is None else resolve_path(value)


class LimitsSettings(StrictModel):
    """Caps on what a log row can make the job store (a hostile log can hold megabytes in any
    field)."""

    max_field_chars: int = Field(1024, ge=64)
    """Longest stored log field other than the query text (user_name, status, object_name …);
    a longer value is cut with a marker, a longer query_id is replaced by its sha256."""
    max_masked_sql_chars: int = Field(100_000, ge=1024)
    """Longest stored masked SQL (parsed_statements.masked_sql, quarantine.masked_record, the
    OpenLineage sql facet); cut with a marker. Fingerprints are computed on the whole text."""


class ActivitySettings(StrictModel):
    """Freshness, ownership, usage and expectations from the query history (docs/freshness.md):
    the activity stage that runs after the graph stage."""

    enabled: bool = True
    """Write dataset_activity, dataset_owners, dataset_expectations and upstream_staleness after
    the graph stage (needs ``graph.enabled``)."""
    keep_reads: bool = True
    """Keep plain SELECT / WITH queries as lineage-relevant rows: they are stored in
    ``queries`` and parsed once per fingerprint like every other statement, and give the
    table-level reads (last read, readers) of ``dataset_activity``; they add no edge. Off: they
    are counted as not relevant, as before, and usage has no reads."""
    window_days: int = Field(28, ge=1)
    """Writers, readers and their counts, and the cadence, over this many days up to
    ``as_of``."""
    min_occurrences: int = Field(5, ge=2)
    """N: successful writes in the window below which a dataset's cadence is not inferred
    (status ``new``)."""
    late_factor: float = Field(1.5, gt=0)
    """Late: no successful write for longer than late_factor x the p90 interval."""
    stopped_factor: float = Field(3.0, gt=0)
    """k: stopped when no successful write for longer than k x the p90 interval."""
    irregular_ratio: float = Field(4.0, gt=1)
    """Irregular: the p90 interval is more than this many times the median."""
    as_of: str = "now"
    """The instant statuses are computed at: ``now``, ``log_end`` (the latest logged start time
    in ``queries``: for replayed or sample logs) or an ISO-8601 UTC timestamp."""
    owners_file: str | None = None
    """YAML file of explicit owners: ``owners: [{pattern, team, contact}]`` (shell-style
    globs on canonical table names; the first match wins)."""
    catalog_owners: str | None = None
    """CSV export of the catalog's tables with their owner (Snowflake
    ``information_schema.tables``: TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_OWNER; the
    first two may be missing)."""
    max_upstream_per_dataset: int = Field(1000, ge=1)
    """Late or stopped upstream datasets listed per dataset at most (nearest first)."""

    @field_validator("owners_file", "catalog_owners")
    @classmethod
    def _resolve(cls, value: str | None) -> str | None:
        return resolve_path(value) if value else value

    @field_validator("as_of")
    @classmethod
    def _as_of(cls, value: str) -> str:
        if value not in ("now", "log_end"):
            from datetime import datetime

            try:
                datetime.fromisoformat(value)
            except ValueError:
                raise ValueError(
                    f"as_of must be now, log_end or an ISO-8601 timestamp, not {value!r}"
                ) from None
        return value


class JobSettings(StrictModel):
    """Everything the extraction job needs."""

    sources: list[SourceSettings] = Field(default_factory=list)
    parser: ParserSettings = ParserSettings()
    sink: SinkSettings = SinkSettings()
    spark: SparkSettings = SparkSettings()
    logging: LoggingSettings = LoggingSettings()
    graph: GraphSettings = GraphSettings()
    tags: TagSettings = TagSettings()
    openlineage: OpenLineageSettings = OpenLineageSettings()
    execution: ExecutionSettings = ExecutionSettings()
    lineage: LineageSettings = LineageSettings()
    limits: LimitsSettings = LimitsSettings()
    catalog: CatalogSettings = CatalogSettings()
    activity: ActivitySettings = ActivitySettings()
    identity: IdentitySettings = IdentitySettings()


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
