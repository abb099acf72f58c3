"""Reading a database over JDBC: Spark's JDBC source with the password from the environment.

The settings hold no password: ``jdbc.password_env`` names the environment variable, read once
when the job starts (:func:`jdbc_passwords`) and handed to Spark's reader as an option. Spark
redacts options whose name matches ``spark.redaction.regex`` (``password`` by default) in plans
and the UI; a failure is reported as one line naming the source, the URL without its query
string and the driver's own message, with the password (should a driver ever echo it)
replaced by ``***``.

The driver jar comes from Maven Central through ``spark.packages`` (``spark.jars.packages``), e.g.
``org.postgresql:postgresql:42.7.14``; a missing driver class is reported with that hint.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from lineage_udfs.core.errors import ConfigError, InputError, one_line
from lineage_udfs.settings import (
    CATALOG_JDBC_QUERY,
    PRESET_JDBC_QUERIES,
    CatalogSourceSettings,
    JdbcSettings,
    SourceSettings,
)

if TYPE_CHECKING:  # the settings helpers here run without Spark (unit tests, the CLI)
    from pyspark.sql import DataFrame, SparkSession

PASSWORD_MASK = "***"

DRIVER_PACKAGES: dict[str, str] = {"org.postgresql.Driver": "org.postgresql:postgresql:42.7.14"}
"""Maven coordinates to suggest when a driver class is missing."""


def jdbc_passwords(
    sources: Iterable[SourceSettings | CatalogSourceSettings], environ: Mapping[str, str]
) -> dict[str, str]:
    """The password of every enabled JDBC source that names a ``password_env``, by source name.

    Raises:
        ConfigError: a named environment variable is not set (the message names the variable,
            never a value).
    """
    passwords: dict[str, str] = {}
    for source in sources:
        jdbc = source.jdbc
        if not source.enabled or jdbc is None or jdbc.password_env is None:
            continue
        value = environ.get(jdbc.password_env)
        if value is None:
            raise ConfigError(
                f"source {source.name!r}: environment variable {jdbc.password_env} "
                "(jdbc.password_env) is not set"
            )
        passwords[source.name] = value
    return passwords


def source_query(source: SourceSettings | CatalogSourceSettings) -> tuple[str, str]:
    """``("dbtable", table)`` or ``("query", sql)``: what the source reads (a preset's or the
    catalog's default query when it names neither)."""
    jdbc = source.jdbc
    assert jdbc is not None
    if jdbc.table:
        return "dbtable", jdbc.table
    if jdbc.query:
        return "query", jdbc.query
    if isinstance(source, CatalogSourceSettings):
        return "query", CATALOG_JDBC_QUERY
    assert source.preset is not None  # the settings require a table, a query or such a preset
    return "query", PRESET_JDBC_QUERIES[source.preset]


def read_jdbc(
    spark: SparkSession,
    source: SourceSettings | CatalogSourceSettings,
    password: str | None,
) -> DataFrame:
    """The rows of a JDBC source (lazy: the database is queried when the frame is computed;
    the schema is read here).

    Raises:
        InputError: the driver is missing, or the database cannot be reached or queried.
    """
    jdbc = source.jdbc
    assert jdbc is not None
    kind, what = source_query(source)
    options = {
        **jdbc.options,
        "url": jdbc.url,
        kind: what,
        "fetchsize": str(jdbc.fetch_size),
    }
    if jdbc.user is not None:
        options["user"] = jdbc.user
    if jdbc.driver_class is not None:
        options["driver"] = jdbc.driver_class
    if password is not None:
        options["password"] = password
    try:
        return spark.read.format("jdbc").options(**options).load()
    except Exception as exc:
        raise InputError(
            f"cannot read jdbc source {source.name!r} at {jdbc.display_url}: "
            f"{error_line(exc, jdbc, password)}"
        ) from None  # the JVM's trace holds the options; the line says what failed


def error_line(exc: BaseException, jdbc: JdbcSettings, password: str | None) -> str:
    """One line for a JDBC failure: the innermost JVM cause (``PSQLException: …``), or the
    Python exception; a driver hint for a missing driver class; never the password."""
    line = java_root_cause(exc)
    driver = jdbc.driver_class
    if driver and ("ClassNotFoundException" in line or "No suitable driver" in line):
        package = DRIVER_PACKAGES.get(driver, "<the driver's Maven coordinates>")
        line = f"JDBC driver {driver} not on the Spark classpath (add {package} to spark.packages)"
    if password:
        line = line.replace(password, PASSWORD_MASK)
    return line


def java_root_cause(exc: BaseException) -> str:
    """One line for an error from the JVM (py4j): its innermost cause (``PSQLException: ...``,
    ``UnknownTopicOrPartitionException: ...``); for a Python error, its type and message."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is not None:
        try:
            cause = java
            while cause.getCause() is not None and cause.getCause() is not cause:
                cause = cause.getCause()
            text = str(cause.toString())
        except Exception:  # a half-torn gateway: fall back to the Python text
            text = str(exc)
    else:
        text = str(exc)
    return one_line(text) if java is not None else one_line(exc, with_type=True)
