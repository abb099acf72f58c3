"""Entry point: the graph stage alone, over the Delta lineage tables the extract job wrote.

    spark-submit jobs/analyze_graph.py                        # conf/base.yaml + conf/local.yaml
    spark-submit jobs/analyze_graph.py --config conf/databricks.yaml --full-refresh

Writes lineage_nodes, lineage_paths, table_closure, column_closure and graph_components;
only components whose edges changed since the last run are recomputed unless --full-refresh.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.core.errors import LineageError
from lineage_udfs.logging_setup import configure_logging
from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.graph_stage import GraphSummary, run_graph_stage
from lineage_udfs.spark.session import build_spark_session

logger = logging.getLogger("jobs.analyze_graph")

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Graph analytics over the lineage Delta tables.")
    parser.add_argument(
        "--config",
        action="append",
        type=Path,
        default=None,
        help="overlay YAML on conf/base.yaml (repeatable; default: conf/local.yaml)",
    )
    parser.add_argument("--full-refresh", action="store_true", help="recompute every component")
    return parser.parse_args(argv)


def run(spark: SparkSession, settings: JobSettings, *, full_refresh: bool) -> GraphSummary:
    """Recompute the analytics tables (all logic in lineage_udfs.spark.graph_stage)."""
    return run_graph_stage(
        LineageTables(spark, settings.sink),
        settings.graph,
        full_refresh=full_refresh or settings.graph.full_refresh,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        settings = load_settings(
            [CONF_DIR / "base.yaml", *(args.config or [CONF_DIR / "local.yaml"])]
        )
    except LineageError:
        configure_logging()
        logger.exception("invalid configuration")
        return 2
    configure_logging(settings.logging)
    spark = build_spark_session(settings.spark)
    summary = run(spark, settings, full_refresh=args.full_refresh)
    logger.info("graph stage done: %s", summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
