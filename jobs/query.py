"""Run SQL against the lineage tables by their plain names (``table_closure``, ``queries``…).

    make sql Q="SELECT * FROM table_closure WHERE descendant = 'reports.daily_revenue'"
    python jobs/query.py --config conf/local.yaml "SELECT count(*) FROM table_lineage"

Every lineage table that exists under the configured sink is registered as a temporary view of
the same name, so the README's queries run as written, wherever the tables live.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from delta.tables import DeltaTable
from pyspark.sql import SparkSession

from lineage_udfs.core.errors import LineageError
from lineage_udfs.logging_setup import configure_logging
from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.schemas import TABLES
from lineage_udfs.spark.session import build_spark_session

logger = logging.getLogger("jobs.query")

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="SQL over the lineage tables by plain name.")
    parser.add_argument("sql", help="the query; lineage tables are views of the same name")
    parser.add_argument("--config", action="append", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=100, help="rows to show")
    return parser.parse_args(argv)


def run(spark: SparkSession, settings: JobSettings, sql: str, limit: int) -> None:
    """Register the existing lineage tables as views and show the query's result."""
    tables = LineageTables(spark, settings.sink)
    for name in TABLES:
        catalog_name, path = tables.location(name)
        exists = (
            spark.catalog.tableExists(catalog_name)
            if catalog_name
            else DeltaTable.isDeltaTable(spark, path)
        )
        if exists:  # a table not written yet is simply not registered
            tables.read(name).createOrReplaceTempView(name)
    spark.sql(sql).show(limit, truncate=False)


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
    run(build_spark_session(settings.spark), settings, args.sql, args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
