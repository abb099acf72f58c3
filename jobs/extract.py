"""Entry point: query logs → lineage Delta tables.

    spark-submit jobs/extract.py       # embedded default: conf/base.yaml + conf/local.yaml
    spark-submit jobs/extract.py --config conf/databricks.yaml --config my.yaml
    python jobs/extract.py ...                         # same; pyspark starts the JVM itself

``--config`` files are overlays on conf/base.yaml, applied in order. With spark-submit, export
SPARK_CONF_DIR=conf (the Makefile does) so the Delta package is resolved before the JVM starts.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.core.errors import LineageError
from lineage_udfs.emit.config import openlineage_secrets
from lineage_udfs.logging_setup import configure_logging
from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.extract import RunSummary
from lineage_udfs.spark.extract import run as run_extraction
from lineage_udfs.spark.graph_stage import run_graph_stage
from lineage_udfs.spark.openlineage import emit_openlineage
from lineage_udfs.spark.session import build_spark_session

logger = logging.getLogger("jobs.extract")

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
BASE_CONFIG = CONF_DIR / "base.yaml"
DEFAULT_OVERLAY = CONF_DIR / "local.yaml"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Extract SQL lineage from query logs into Delta.")
    parser.add_argument(
        "--config",
        action="append",
        type=Path,
        default=None,
        help="overlay YAML on conf/base.yaml (repeatable; default: conf/local.yaml)",
    )
    return parser.parse_args(argv)


def run(spark: SparkSession, settings: JobSettings) -> RunSummary:
    """read → prepare → parse → write → summarize, then the graph stage and OpenLineage
    emission when enabled (each stage reads what the previous one committed to Delta)."""
    summary = run_extraction(spark, settings)
    if settings.graph.enabled:
        run_graph_stage(
            LineageTables(spark, settings.sink),
            settings.graph,
            full_refresh=settings.graph.full_refresh,
        )
    if settings.openlineage.enabled:
        emitted = emit_openlineage(
            spark, settings, openlineage_secrets(settings.openlineage, os.environ)
        )
        logger.info("openlineage: %s", emitted)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    overlays = args.config or [DEFAULT_OVERLAY]
    try:
        settings = load_settings([BASE_CONFIG, *overlays])
    except LineageError:
        configure_logging()
        logger.exception("invalid configuration")
        return 2
    configure_logging(settings.logging)
    spark = build_spark_session(settings.spark)
    try:
        summary = run(spark, settings)
    except LineageError:
        logger.exception("extraction failed")
        return 1
    logger.info("extraction %s: run_id=%s", summary.status, summary.run_id)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
