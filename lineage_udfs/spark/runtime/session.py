"""The only place that builds or obtains a SparkSession, for the three launch modes.

* Databricks (``DATABRICKS_RUNTIME_VERSION`` is set): the session exists and Delta is built in;
  ``getOrCreate()`` returns it, and only runtime SQL confs from settings are applied.
* ``python jobs/extract.py``: pyspark starts the JVM here, so ``spark.jars.packages`` from
  settings is honoured.
* ``spark-submit jobs/extract.py``: the JVM is already up and ``spark.jars.packages`` set here is
  silently ignored; the packages must come from ``conf/spark-defaults.conf`` (``SPARK_CONF_DIR``)
  or ``--packages``. Runtime confs (Delta extension and catalog, Arrow) still apply.
  :func:`require_libraries` checks right after the session starts that the JVM classes a job
  needs are there, and says how to get them when they are not.

The master is never assumed: it comes from settings (only ``conf/local.yaml`` sets ``local[*]``),
spark-submit or the cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.core.errors import LineageError
from lineage_udfs.settings import SparkSettings

logger = logging.getLogger(__name__)

DATABRICKS_ENV_VAR = "DATABRICKS_RUNTIME_VERSION"
REPOSITORIES_ENV_VAR = "LINEAGE_MAVEN_REPOSITORIES"
"""Extra Maven repositories (comma-separated URLs) added to ``spark.repositories`` from settings."""
SUBMIT_ENV_VAR = "PYSPARK_GATEWAY_PORT"
"""Set by spark-submit (and by an already running pyspark driver): the JVM exists."""
RESOLVE_LOCK = "lineage-warehouse/spark-packages.lock"
"""Under the user's cache folder (``XDG_CACHE_HOME``, default ``~/.cache``): held while a
process starts its JVM and Ivy resolves ``spark.jars.packages`` into the user's Ivy cache."""


def launch_mode() -> str:
    """``databricks``, ``spark-submit`` or ``python`` (who starts the JVM)."""
    if DATABRICKS_ENV_VAR in os.environ:
        return "databricks"
    if SUBMIT_ENV_VAR in os.environ:
        return "spark-submit"
    return "python"


def maven_repositories(settings: SparkSettings) -> list[str]:
    """The extra Maven repositories: settings first, then ``LINEAGE_MAVEN_REPOSITORIES``."""
    extra = [r.strip() for r in os.environ.get(REPOSITORIES_ENV_VAR, "").split(",") if r.strip()]
    return list(dict.fromkeys([*settings.repositories, *extra]))


def build_spark_session(settings: SparkSettings) -> SparkSession:
    """Build or reuse the SparkSession described by ``settings``.

    Args:
        settings: app name, optional master, confs and Maven packages.

    Returns:
        The session (``getOrCreate``: an existing session is reused).
    """
    mode = launch_mode()
    if mode == "databricks":
        spark = SparkSession.builder.getOrCreate()
        for key, value in settings.confs.items():
            # Only runtime SQL confs; the cluster owns extensions, catalogs and launch confs.
            if key.startswith("spark.sql.") and not key.startswith(
                ("spark.sql.extensions", "spark.sql.catalog.")
            ):
                spark.conf.set(key, value)
        logger.info("using the Databricks session (Spark %s)", spark.version)
        return spark

    builder = SparkSession.builder.appName(settings.app_name)
    if settings.master and mode == "python":
        # under spark-submit the launcher's --master (default local[*]) is the one to honour
        builder = builder.master(settings.master)
    for key, value in settings.confs.items():
        builder = builder.config(key, value)
    if mode == "python" and (settings.master or "").startswith("local"):
        # Local workers must run the driver's interpreter (the venv with lineage_udfs), not
        # whatever `python3` is first on PATH; pyspark reads only the environment variable here.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if settings.packages and mode == "python":
        builder = builder.config("spark.jars.packages", ",".join(settings.packages))
        repositories = maven_repositories(settings)
        if repositories:
            builder = builder.config("spark.jars.repositories", ",".join(repositories))
    try:
        with _resolving(bool(settings.packages) and mode == "python"):
            spark = builder.getOrCreate()
    except Exception as exc:
        if mode == "python" and settings.packages and "JAVA_GATEWAY_EXITED" in str(exc):
            # Ivy's resolution report went to stderr; say what was asked for and from where.
            raise LaunchError(
                f"Spark did not start: cannot resolve {','.join(settings.packages)} from Maven "
                f"Central or {','.join(maven_repositories(settings)) or 'no extra repository'}; "
                f"add a repository serving them to spark.repositories or {REPOSITORIES_ENV_VAR}"
            ) from exc
        raise
    logger.info(
        "Spark %s session (%s launch, master %s)", spark.version, mode, spark.sparkContext.master
    )
    return spark


@contextlib.contextmanager
def _resolving(packages: bool) -> Iterator[None]:
    """Hold :data:`RESOLVE_LOCK` while a JVM that resolves packages starts (``packages``), so
    that one process at a time resolves into the user's Ivy cache.

    Two JVMs resolving at once into an empty cache corrupt each other's files: on a fresh
    machine the second fails with ``io problem while parsing ivy file ... .xml.original (No
    such file or directory)`` and an unresolved dependency (two test processes, or two jobs
    started together). Once the cache holds the packages the lock is held for the JVM's
    start only. Where the lock file cannot be made (no writable home), nothing is locked."""
    if not packages or SparkSession.getActiveSession() is not None:
        yield
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    try:
        import fcntl

        path = cache / RESOLVE_LOCK
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a")
    except (ImportError, OSError):
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class LaunchError(LineageError):
    """The session lacks what a job needs (JVM classes of a library)."""


@dataclass(frozen=True)
class JvmLibrary:
    """A JVM library a job calls: a class of it, and how its Maven coordinates start."""

    name: str
    java_class: str
    coordinates_prefixes: tuple[str, ...]
    coordinates: str = ""
    """The Maven coordinates the project pins (named when ``spark.packages`` lacks them)."""


DELTA = JvmLibrary(
    "Delta Lake",
    "io.delta.tables.DeltaTable",
    ("io.delta:",),
    "io.delta:delta-spark_4.1_2.13:4.4.0",
)
GRAPHFRAMES = JvmLibrary(
    "GraphFrames",
    "org.graphframes.GraphFrame",
    ("io.graphframes:", "graphframes:"),
    "io.graphframes:graphframes-spark4_2.13:0.11.0",  # the same version as graphframes-py
)


def missing_libraries(spark: SparkSession, libraries: Sequence[JvmLibrary]) -> list[JvmLibrary]:
    """The libraries whose class the session's JVM cannot load (none without a local JVM, as
    on Spark Connect)."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return []
    from py4j.java_gateway import JavaClass

    missing = []
    for library in libraries:
        found = jvm
        for part in library.java_class.split("."):
            found = getattr(found, part)  # a JavaPackage where no such class exists
        if not isinstance(found, JavaClass):
            missing.append(library)
    return missing


def require_libraries(
    spark: SparkSession, settings: SparkSettings, libraries: Sequence[JvmLibrary]
) -> None:
    """Check that the session can load each library's classes.

    Raises:
        LaunchError: one line naming the missing classes, their Maven coordinates (from
            ``spark.packages``) and the two ways to put them on the classpath.
    """
    if launch_mode() == "databricks":
        return  # the cluster owns its libraries
    missing = missing_libraries(spark, libraries)
    if not missing:
        return
    coordinates = [
        p for p in settings.packages if any(p.startswith(m.coordinates_prefixes) for m in missing)
    ]
    classes = ", ".join(f"{m.name} ({m.java_class})" for m in missing)
    packages = ",".join(coordinates) or ",".join(m.coordinates for m in missing)
    raise LaunchError(
        f"{classes} not on the Spark classpath: start with SPARK_CONF_DIR=conf "
        f"(conf/spark-defaults.conf), or pass --packages {packages} (and --repositories, "
        f"spark.repositories or {REPOSITORIES_ENV_VAR} for a repository serving them)"
    )
