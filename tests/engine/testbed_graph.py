"""The extraction job and the graph stage on the test bed: the listener's events
(``format: openlineage``) and the SQL log that reads the same tables by catalog name.

Runs twice into two warehouses, identity off and on, and prints one JSON line: the connected
components of ``lineage_nodes`` each time, with their nodes. A process of its own: its Spark
needs GraphFrames, which a JVM started for the listener job does not have.

Usage::

    .venv/bin/python tests/engine/testbed_graph.py --events E --table-locations L \\
        --log Q --warehouse DIR
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"


def _session(warehouse: Path) -> Any:
    from lineage_udfs.settings import SparkSettings
    from lineage_udfs.spark.graph.frames import GRAPHFRAMES_PACKAGE
    from lineage_udfs.spark.runtime.session import build_spark_session

    settings = SparkSettings(
        app_name="lineage-testbed",
        master="local[2]",
        packages=[DELTA_PACKAGE, GRAPHFRAMES_PACKAGE],
        confs={
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.sql.session.timeZone": "UTC",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            "spark.databricks.delta.snapshotPartitions": "2",
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.io.encryption.enabled": "true",
            # interpreted evaluation as in tests/spark: few rows, compiling costs more than running
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.warehouse.dir": str(warehouse / "spark-warehouse"),
        },
    )
    spark = build_spark_session(settings)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def components(
    spark: Any, events: Path, locations: Path, log: Path, base: Path, *, identity: bool
) -> dict[str, list[str]]:
    """Extract both sources into ``base``, run the graph stage; component id → its nodes."""
    from lineage_udfs.settings import (
        GraphSettings,
        IdentitySettings,
        JobSettings,
        SinkSettings,
        SourceSettings,
    )
    from lineage_udfs.spark.extract.stage import extract
    from lineage_udfs.spark.graph.stage import run_graph_stage
    from lineage_udfs.spark.storage.tables import LineageTables

    settings = JobSettings(
        sources=[
            SourceSettings(
                name="sql_log", format="jsonl", path=str(log), defaults={"dialect": "spark"}
            ),
            SourceSettings(name="spark_listener", format="openlineage", path=str(events)),
        ],
        sink=SinkSettings(base_path=str(base)),
        identity=IdentitySettings(enabled=identity, table_locations=str(locations)),
        graph=GraphSettings(incremental_min_edges=0),
    )
    extract(spark, settings)
    tables = LineageTables(spark, settings.sink)
    run_graph_stage(tables, settings.graph)
    out: dict[str, list[str]] = {}
    for row in tables.read("lineage_nodes").select("component_id", "node").collect():
        out.setdefault(str(row.component_id), []).append(row.node)
    return {k: sorted(v) for k, v in sorted(out.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=Path, required=True)
    ap.add_argument("--table-locations", type=Path, required=True)
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--warehouse", type=Path, default=None)
    args = ap.parse_args(argv)
    base = args.warehouse or Path(tempfile.mkdtemp(prefix="testbed_"))
    spark = _session(base)
    try:
        result = {
            mode: components(
                spark,
                args.events,
                args.table_locations,
                args.log,
                base / mode,
                identity=(mode == "on"),
            )
            for mode in ("off", "on")
        }
    finally:
        spark.stop()
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
