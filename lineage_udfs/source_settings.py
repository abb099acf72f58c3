"""The ``sources:`` and ``catalog:`` sections of the job settings: query-log sources (files,
vendor presets, JDBC), their incremental watermarks and lookback, and catalog imports.
``lineage_udfs.settings`` re-exports every name here."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from lineage_udfs.core.records import QUERY_LOG_COLUMNS
from lineage_udfs.paths import resolve_path
from lineage_udfs.redaction import is_secret_key

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


class StrictModel(BaseModel):
    # validation errors never echo the input: a misplaced secret must not reach a log line
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


JDBC_DRIVERS: dict[str, str] = {
    "jdbc:postgresql:": "org.postgresql.Driver",
}
"""Driver class by URL prefix, for URLs whose driver is not named in ``jdbc.driver``."""

_URL_SECRET = re.compile(r"(?i)(password|passwd|pwd|secret|token)\s*=|//[^/@:]+:[^/@]*@")


class JdbcSettings(StrictModel):
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


_KAFKA_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
KAFKA_RESERVED_OPTIONS = frozenset(
    {
        "subscribe",
        "subscribepattern",
        "assign",
        "startingoffsets",
        "endingoffsets",
        "startingtimestamp",
        "endingtimestamp",
        "startingoffsetsbytimestamp",
        "endingoffsetsbytimestamp",
        "startingoffsetsbytimestampstrategy",
        "failondataloss",
        "kafka.bootstrap.servers",
        "kafka.security.protocol",
        "kafka.sasl.mechanism",
        "kafka.sasl.jaas.config",
    }
)
"""Options of Spark's Kafka source the ``kafka:`` section sets itself (lower case)."""


class SaslSettings(StrictModel):
    """SASL authentication to the brokers (``kafka.sasl``): the password is never part of the
    settings; ``password_env`` names the environment variable holding it, read when the job
    starts."""

    mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    username: str
    password_env: str
    """Name of the environment variable holding the password."""


class KafkaSettings(StrictModel):
    """A Kafka topic of OpenLineage RunEvents, one event a message value (``format:
    openlineage`` with ``kafka:``; what openlineage-python's ``KafkaTransport`` and the Spark
    listener's ``kafka`` transport write). Read with Spark's batch Kafka source
    (``org.apache.spark:spark-sql-kafka-0-10_2.13`` in ``spark.packages``) from the offsets
    committed in ``source_state`` up to the end offsets seen when the run starts."""

    bootstrap_servers: str
    """``host:port[,host:port...]``."""
    topic: str
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] | None = None
    """None: ``SASL_SSL`` with ``sasl``, else ``PLAINTEXT``."""
    sasl: SaslSettings | None = None
    timeout_seconds: float = Field(60.0, gt=0)
    """How long the driver waits for the topic's partitions and offsets."""
    options: dict[str, str] = Field(default_factory=dict)
    """More options of Spark's Kafka source: consumer settings with the ``kafka.`` prefix
    (``kafka.ssl.truststore.location``, ``kafka.isolation.level``) or the source's own
    (``minPartitions``); none may carry a secret or set what this section sets."""

    @field_validator("topic")
    @classmethod
    def _topic_name(cls, value: str) -> str:
        if not _KAFKA_TOPIC.fullmatch(value):
            raise ValueError("a Kafka topic name is 1-249 of [A-Za-z0-9._-]")
        return value

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers(cls, value: str) -> str:
        servers = [s.strip() for s in value.split(",")]
        if not all(servers) or any("@" in s or "/" in s for s in servers):
            raise ValueError("bootstrap_servers is host:port[,host:port...] (no credentials)")
        return ",".join(servers)

    @field_validator("options")
    @classmethod
    def _no_secret_option(cls, value: dict[str, str]) -> dict[str, str]:
        reserved = sorted(k for k in value if k.lower() in KAFKA_RESERVED_OPTIONS)
        if reserved:
            raise ValueError(f"kafka.options may not set {reserved}: the kafka section sets them")
        secret = sorted(k for k in value if is_secret_key(k))
        if secret:
            raise ValueError(
                f"kafka.options may not carry credentials {secret}: use kafka.sasl.password_env"
            )
        return value

    @property
    def protocol(self) -> str:
        """The security protocol in force."""
        if self.security_protocol is not None:
            return self.security_protocol
        return "SASL_SSL" if self.sasl is not None else "PLAINTEXT"

    @model_validator(mode="after")
    def _sasl_protocol(self) -> KafkaSettings:
        if self.sasl is not None and not self.protocol.startswith("SASL_"):
            raise ValueError("kafka.sasl needs security_protocol SASL_SSL or SASL_PLAINTEXT")
        if self.sasl is None and self.protocol.startswith("SASL_"):
            raise ValueError(f"security_protocol {self.protocol} needs a kafka.sasl section")
        return self

    @property
    def display(self) -> str:
        """``kafka://servers/topic``: the source's path in messages and quarantine rows."""
        return f"kafka://{self.bootstrap_servers}/{self.topic}"


MARQUEZ_EVENTS_PATH = "/api/v1/events/lineage"
"""Marquez's stored lineage events (``GET``; ``after``/``before``/``sortDirection``/``limit``/
``offset``), served by Marquez 0.51.1's ``OpenLineageResource``."""


class MarquezSettings(StrictModel):
    """The lineage events stored in a Marquez server (``format: openlineage`` with
    ``marquez:``), read through its HTTP API on the driver, page by page in event-time order,
    from the committed ``eventTime`` watermark minus ``incremental.lookback``."""

    url: str
    """``http(s)://host:port`` of the API (no credentials in it)."""
    api_key_env: str | None = None
    """Name of the environment variable holding a bearer token (a Marquez behind an
    authenticating proxy); None: no ``Authorization`` header."""
    page_size: int = Field(500, ge=1, le=10_000)
    """Events per API request."""
    max_events: int = Field(50_000, ge=1)
    """Events read in one run at most (they pass through the driver's memory); a larger
    backlog is read over several runs."""
    timeout_seconds: float = Field(30.0, gt=0)
    """Per request."""

    @field_validator("url")
    @classmethod
    def _plain_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("marquez.url starts with http:// or https://")
        if "?" in value or "#" in value or _URL_SECRET.search(value):
            raise ValueError(
                "marquez.url is the server's address only (no query string, no credentials:"
                " give a token through api_key_env)"
            )
        return value

    @property
    def events_url(self) -> str:
        """The events endpoint: the source's path in messages and quarantine rows."""
        return f"{self.url}{MARQUEZ_EVENTS_PATH}"


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


class IncrementalSettings(StrictModel):
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


class SourceSettings(StrictModel):
    """One query log to read and map to the canonical log schema.

    ``columns`` maps canonical name → source column; a canonical column that is not mapped is
    taken from a source column of the same name if there is one, else from ``defaults``, else
    null. ``defaults`` holds constants (``dialect``, ``source_system``, ``object_kind`` …) that
    fill nulls.
    """

    name: str
    format: Literal["csv", "jsonl", "parquet", "delta", "jdbc", "openlineage"]
    path: str = ""
    """File, folder, glob or Delta table; for ``jdbc`` the URL without its query string; for
    ``openlineage`` JSON-lines files of OpenLineage RunEvents (``lineage_udfs.sources.
    openlineage``), read incrementally by their ``eventTime`` unless ``incremental`` says
    otherwise; for an ``openlineage`` source with ``kafka:`` or ``marquez:`` the topic or the
    API endpoint (set from that section)."""
    jdbc: JdbcSettings | None = None
    kafka: KafkaSettings | None = None
    """``format: openlineage`` only: a Kafka topic of events instead of files."""
    marquez: MarquezSettings | None = None
    """``format: openlineage`` only: a Marquez server's stored events instead of files."""
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
        service = self.event_service
        if service is None:
            _check_location(self, self.preset in PRESET_JDBC_QUERIES)
            return self
        if self.format != "openlineage":
            raise ValueError("a kafka: or marquez: section needs format openlineage")
        if self.kafka is not None and self.marquez is not None:
            raise ValueError("a source reads a kafka: topic or a marquez: server, not both")
        if self.path not in ("", service):
            raise ValueError("a kafka: or marquez: source takes no path")
        if self.kafka is not None and self.incremental is not None:
            raise ValueError(
                "a kafka: source is read by its offsets (source_state): incremental does not apply"
            )
        if self.incremental is not None and self.incremental.column != "event_time":
            raise ValueError(
                "a marquez: source is read by event_time: incremental.column event_time"
            )
        object.__setattr__(self, "path", service)  # frozen model
        return self

    @property
    def event_service(self) -> str | None:
        """The Kafka topic or Marquez endpoint an ``openlineage`` source reads (its path);
        None for files."""
        if self.kafka is not None:
            return self.kafka.display
        if self.marquez is not None:
            return self.marquez.events_url
        return None

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


class CatalogSourceSettings(StrictModel):
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


class CatalogSettings(StrictModel):
    """The catalog: column definitions the parser resolves ``SELECT *``, unqualified columns
    and ``INSERT`` without a column list against (docs/sources.md#catalog)."""

    sources: list[CatalogSourceSettings] = Field(default_factory=list)
    """Imported into ``catalog_columns`` at the start of each run (a source's rows replaced)."""
    max_tables_per_statement: int = Field(200, ge=1)
    """Catalog tables handed to the parser with one statement at most (those whose name the
    statement's text mentions); a statement naming more gets none."""
