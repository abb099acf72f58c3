"""The only place that builds or obtains a SparkSession, for the three launch modes.

* Databricks (``DATABRICKS_RUNTIME_VERSION`` is set): the session exists and Delta is built in;
  ``getOrCreate()`` returns it, and only runtime SQL confs from settings are applied.
* ``python jobs/extract.py``: pyspark starts the JVM here, so ``spark.jars.packages`` from
  settings is honoured.
* ``spark-submit jobs/extract.py``: the JVM is already up and ``spark.jars.packages`` set here is
  silently ignored; the packages must come from ``conf/spark-defaults.conf`` (``SPARK_CONF_DIR``)
  or ``--packages``. Runtime confs (Delta extension and catalog, Arrow) still apply.

The master is never assumed: it comes from settings (only ``conf/local.yaml`` sets ``local[*]``),
spark-submit or the cluster.
"""

from __future__ import annotations

import logging
import os
import sys

from pyspark.sql import SparkSession

from lineage_udfs.settings import SparkSettings

logger = logging.getLogger(__name__)

DATABRICKS_ENV_VAR = "DATABRICKS_RUNTIME_VERSION"
SUBMIT_ENV_VAR = "PYSPARK_GATEWAY_PORT"
"""Set by spark-submit (and by an already running pyspark driver): the JVM exists."""


def launch_mode() -> str:
    """``databricks``, ``spark-submit`` or ``python`` (who starts the JVM)."""
    if DATABRICKS_ENV_VAR in os.environ:
        return "databricks"
    if SUBMIT_ENV_VAR in os.environ:
        return "spark-submit"
    return "python"


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
    spark = builder.getOrCreate()
    if mode == "spark-submit" and settings.packages:
        # Too late to resolve packages now: check what the launcher resolved.
        launched = spark.sparkContext.getConf().get("spark.jars.packages", "") or ""
        missing = [p for p in settings.packages if p not in launched]
        if missing:
            logger.warning(
                "spark-submit was launched without %s: export SPARK_CONF_DIR=conf "
                "(conf/spark-defaults.conf) or pass --packages, or Delta reads/writes will fail",
                ",".join(missing),
            )
    logger.info(
        "Spark %s session (%s launch, master %s)", spark.version, mode, spark.sparkContext.master
    )
    return spark
