"""A PySpark application the cluster tests submit with a packed environment: where the Python
that runs each task comes from, reported from inside the task.

    spark-submit --archives ENV.tar.gz#environment \\
        --conf spark.pyspark.python=./environment/bin/python tests/cluster/env_probe.py OUT.json

Each task parses one statement with the job's parser (so the project's modules are imported
where the task runs) and returns its interpreter (``sys.executable``, ``sys.prefix``), the files
``lineage_udfs``, ``sqlglot`` and ``pyspark`` were imported from, its working directory and its
process id. ``OUT.json`` holds those rows and the same facts of the driver.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

PARTITIONS = 8
"""More tasks than the cluster's two cores: each executor gets some."""


def where_am_i() -> dict[str, Any]:
    """This process's interpreter and the files of the modules the job imports."""
    import pyspark
    import sqlglot

    import lineage_udfs

    return {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "lineage_udfs": lineage_udfs.__file__,
        "sqlglot": sqlglot.__file__,
        "pyspark": pyspark.__file__,
        "cwd": os.getcwd(),
        "pid": os.getpid(),
    }


def _task(rows: Iterator[Any]) -> Iterator[dict[str, Any]]:
    from lineage_udfs.core.options import ParserOptions
    from lineage_udfs.core.parser import LineageParser

    parser = LineageParser(ParserOptions())
    for (row,) in rows:
        parsed = parser.parse(f"INSERT INTO t{row} SELECT a FROM s{row}", dialect="spark")
        yield {"row": row, "targets": list(parsed.targets), **where_am_i()}


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    spark = SparkSession.builder.appName("lineage-cluster-env-probe").getOrCreate()
    try:
        rows = (
            spark.sparkContext.parallelize([(i,) for i in range(PARTITIONS)], PARTITIONS)
            .mapPartitions(_task)
            .collect()
        )
        report = {
            "driver": {
                **where_am_i(),
                "app_id": spark.sparkContext.applicationId,
                "master": spark.sparkContext.master,
            },
            "rows": rows,
        }
    finally:
        spark.stop()
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
