"""Without the GraphFrames jar the graph stage stops with one line naming the coordinates and
the settings (checked in a fresh JVM started without any package)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from lineage_udfs.spark.graph.frames import GRAPHFRAMES_PACKAGE

SCRIPT = """
from pyspark.sql import SparkSession
from lineage_udfs.spark.graph.frames import require_graphframes
from lineage_udfs.spark.runtime.session import LaunchError
spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.jars.packages", "")
    .getOrCreate()
)
try:
    require_graphframes(spark)
except LaunchError as exc:
    print("ERROR " + str(exc))
finally:
    spark.stop()
"""


def test_missing_graphframes_jar_is_one_clear_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env["SPARK_CONF_DIR"] = str(tmp_path)  # no spark-defaults.conf: no package at all
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1, done.stdout + done.stderr
    message = errors[0]
    assert GRAPHFRAMES_PACKAGE in message
    assert "spark.jars.packages" in message and "LINEAGE_MAVEN_REPOSITORIES" in message
    assert "\n" not in message and "Py4J" not in message
