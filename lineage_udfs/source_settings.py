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
    otherwise."""
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
