"""Validated settings of the ``openlineage:`` config section (pydantic v2, frozen, extra="forbid").

These models are what ``lineage_udfs.settings.JobSettings.openlineage`` holds. Secrets are never
part of them: a transport names the *environment variable* that holds its API key
(``api_key_env``), and the caller (``jobs/``) reads it and passes the value in through
:func:`openlineage_secrets`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lineage_udfs import __version__
from lineage_udfs.core.errors import ConfigError
from lineage_udfs.paths import resolve_path

DEFAULT_PRODUCER = f"https://github.com/lineage-warehouse/lineage-warehouse/tree/{__version__}"
"""``producer`` of the events: the source tree of this version."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HttpTransportSettings(_Strict):
    """POST events to an OpenLineage HTTP collector (Marquez: ``http://host:5000``)."""

    type: Literal["http"] = "http"
    url: str
    endpoint: str = "api/v1/lineage"
    timeout: float = Field(default=5.0, gt=0)
    """Seconds per request."""
    api_key_env: str | None = None
    """NAME of the environment variable holding the bearer token; the value never enters config."""
    compression: Literal["gzip"] | None = None
    retries: int = Field(default=3, ge=0)
    """Retries per event (connect/read/5xx) inside the client, before the event is spooled."""
    backoff_factor: float = Field(default=0.3, ge=0)
    custom_headers: dict[str, str] = Field(default_factory=dict)


class FileTransportSettings(_Strict):
    """Append events as JSON lines to a file (one file; ``append: true`` keeps earlier runs)."""

    type: Literal["file"] = "file"
    log_file_path: str
    """Relative: to the working directory of the process that loads the settings (the driver),
    never an executor's (``lineage_udfs.paths``)."""
    append: bool = True

    @field_validator("log_file_path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        return resolve_path(value)


class KafkaTransportSettings(_Strict):
    """Produce events to a Kafka topic (needs ``openlineage-python[kafka]``)."""

    type: Literal["kafka"] = "kafka"
    topic: str
    config: dict[str, str]
    """librdkafka producer config, e.g. ``{"bootstrap.servers": "broker:9092"}``."""
    message_key: str | None = None
    flush: bool = True


class ConsoleTransportSettings(_Strict):
    """Log events through the ``openlineage.client`` logger (debugging only)."""

    type: Literal["console"] = "console"


class NoopTransportSettings(_Strict):
    """Build events but send nothing (dry run)."""

    type: Literal["noop"] = "noop"


class CompositeTransportSettings(_Strict):
    """Send every event to several transports, e.g. http + file as an audit copy."""

    type: Literal["composite"] = "composite"
    transports: tuple[LeafTransportSettings, ...] = Field(min_length=1)
    continue_on_failure: bool = False
    """False (our default, unlike the client's): a failure of any member raises, so the event
    is spooled and replayed instead of being silently half-delivered."""


LeafTransportSettings = Annotated[
    HttpTransportSettings
    | FileTransportSettings
    | KafkaTransportSettings
    | ConsoleTransportSettings
    | NoopTransportSettings,
    Field(discriminator="type"),
]
TransportSettings = Annotated[
    HttpTransportSettings
    | FileTransportSettings
    | KafkaTransportSettings
    | ConsoleTransportSettings
    | NoopTransportSettings
    | CompositeTransportSettings,
    Field(discriminator="type"),
]
CompositeTransportSettings.model_rebuild()


class SpoolSettings(_Strict):
    """On-disk buffer for events the collector did not accept (unreachable or 5xx).

    The driver alone writes and replays it (executors hand undelivered events back): a local
    directory, or durable storage the driver mounts (a Databricks volume, NFS) so that the
    spool outlives the driver's machine.
    """

    enabled: bool = True
    path: str = Field(default=".lineage/openlineage-spool", validate_default=True)
    """Relative: to the working directory of the process that loads the settings (the driver),
    never an executor's (``lineage_udfs.paths``)."""
    max_bytes: int = Field(default=256 * 1024 * 1024, gt=0)
    """Cap on the spool directory; events beyond it are counted as overflowed and dropped."""

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: str) -> str:
        return resolve_path(value)


class OpenLineageSettings(_Strict):
    """The ``openlineage:`` section.

    Attributes:
        enabled: emit at the end of the extract job (``jobs/emit_openlineage.py`` ignores it).
        transport: where events go; required when enabled.
        namespace: dataset namespace for rows whose ``source_system`` is empty.
        job_namespace: namespace of the emitted jobs.
        producer: URI stamped as ``producer`` on events and facets (null: DEFAULT_PRODUCER).
        emit_mode: ``per_run`` (one OpenLineage run per log row) or ``per_statement_day`` (one
            run per distinct statement, source system and UTC day).
        include_selects: also emit plain SELECTs (no output dataset).
        emit_statement_runs: for scripts/procedures, also emit one child run per statement,
            linked to the script's run with the ``parent`` facet.
        scope: ``incremental`` (default): emit only what changed since the last successful
            emission (new or updated ``queries`` rows, statements whose parse changed; in
            ``per_statement_day`` mode every statement-day such a row touches); ``all``: emit
            every row (``jobs/emit_openlineage.py --all``).
        indirect_lineage: where the dataset-wide INDIRECT column edges (FILTER, JOIN, GROUP_BY,
            SORT, WINDOW) go in the ``columnLineage`` facet: ``dataset`` (the facet's dataset-wide
            list, compact) or ``fields`` (under each target column, as ``column_lineage`` stores
            them; Marquez 0.51 reads only ``fields``).
        symlinks: list each dataset's other names (the ``dataset_aliases`` links that hold at
            ``graph.alias_min_confidence``) in its ``symlinks`` facet; the statements of a
            dataset whose names changed since the last emission are emitted again.
        claim_wait_seconds: how long an emission, or an extraction's write stage, waits for
            another job holding the warehouse claim (``openlineage_claim``: an emission sending
            or a write stage writing) before it stops with one line.
        spool: reliability buffer for events the transport could not deliver (http, kafka).
    """

    enabled: bool = False
    transport: TransportSettings | None = None
    namespace: str = "lineage-warehouse"
    job_namespace: str = "lineage-warehouse"
    producer: str = DEFAULT_PRODUCER
    emit_mode: Literal["per_run", "per_statement_day"] = "per_run"
    include_selects: bool = False
    emit_statement_runs: bool = True
    scope: Literal["incremental", "all"] = "incremental"
    indirect_lineage: Literal["dataset", "fields"] = "dataset"
    symlinks: bool = True
    claim_wait_seconds: float = Field(default=1800.0, gt=0)
    spool: SpoolSettings = Field(default_factory=SpoolSettings)

    @field_validator("producer", mode="before")
    @classmethod
    def _default_producer(cls, value: object) -> object:
        return DEFAULT_PRODUCER if value is None else value

    @model_validator(mode="after")
    def _transport_required_when_enabled(self) -> OpenLineageSettings:
        if self.enabled and self.transport is None:
            raise ValueError("openlineage.enabled is true but openlineage.transport is not set")
        return self

    def writes_files(self) -> bool:
        """True when the transport writes a file (``file``, or a ``composite`` with a ``file``
        member): its events are built on the executors and written by the driver, where the
        path is the driver's."""
        return any(isinstance(t, FileTransportSettings) for t in _leaves(self.transport))

    def secret_env_names(self) -> tuple[str, ...]:
        """Names of the environment variables the configured transports read (API keys)."""
        transports = _leaves(self.transport)
        return tuple(
            t.api_key_env
            for t in transports
            if isinstance(t, HttpTransportSettings) and t.api_key_env
        )


def _leaves(transport: object) -> tuple[object, ...]:
    if transport is None:
        return ()
    if isinstance(transport, CompositeTransportSettings):
        return tuple(transport.transports)
    return (transport,)


def openlineage_secrets(
    settings: OpenLineageSettings, environ: Mapping[str, str]
) -> dict[str, str]:
    """Pick the API keys the transports name out of ``environ`` (pass ``os.environ`` from jobs/).

    Raises:
        ConfigError: a named environment variable is missing or empty.
    """
    secrets: dict[str, str] = {}
    for name in settings.secret_env_names():
        value = environ.get(name)
        if not value:
            raise ConfigError(
                f"openlineage transport api_key_env={name!r}, but that environment variable "
                "is not set"
            )
        secrets[name] = value
    return secrets
