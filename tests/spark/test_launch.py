"""The jobs check the session's JVM libraries right after it starts: a launch without the Delta
jar ends with one clear line (the coordinates and both fixes), not a Py4J error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pyspark.sql import SparkSession

from lineage_udfs.settings import SparkSettings
from lineage_udfs.spark.runtime.session import (
    DELTA,
    JvmLibrary,
    LaunchError,
    missing_libraries,
    require_libraries,
)

ROOT = Path(__file__).resolve().parents[2]
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"
DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"
NOWHERE = JvmLibrary("Nowhere", "org.example.nowhere.Missing", ("org.example:",))


def test_a_loadable_class_is_found_and_a_missing_one_named(spark: SparkSession) -> None:
    assert missing_libraries(spark, [DELTA]) == []
    assert missing_libraries(spark, [DELTA, NOWHERE]) == [NOWHERE]


def test_the_launch_error_names_the_classes_the_coordinates_and_both_fixes(
    spark: SparkSession,
) -> None:
    settings = SparkSettings(packages=[DELTA_PACKAGE, "org.example:nowhere_2.13:1.0"])
    require_libraries(spark, settings, [DELTA])  # present: no error
    with pytest.raises(LaunchError) as info:
        require_libraries(spark, settings, [DELTA, NOWHERE])
    assert str(info.value) == (
        "Nowhere (org.example.nowhere.Missing) not on the Spark classpath: start with "
        "SPARK_CONF_DIR=conf (conf/spark-defaults.conf), or pass --packages "
        "org.example:nowhere_2.13:1.0 (and --repositories, spark.repositories or "
        "LINEAGE_MAVEN_REPOSITORIES for a repository serving them)"
    )


@pytest.mark.slow
def test_spark_submit_without_the_conf_dir_ends_with_one_clear_line(tmp_path: Path) -> None:
    """``spark-submit jobs/extract.py`` as a user would type it, without SPARK_CONF_DIR: the
    Delta jar is not resolved, and the job says so before touching any table."""
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        yaml.safe_dump(
            {
                "sink": {"base_path": str(tmp_path / "lineage")},
                "graph": {"enabled": False},
                "spark": {"confs": {"spark.ui.enabled": "false"}},
            }
        ),
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONF_DIR"}
    env |= {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(SPARK_SUBMIT), "jobs/extract.py", "--config", str(overlay)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    errors = [line for line in output.splitlines() if " ERROR " in line]
    assert len(errors) == 1, output
    assert errors[0].endswith(
        "extract failed: Delta Lake (io.delta.tables.DeltaTable) not on the Spark classpath: "
        "start with SPARK_CONF_DIR=conf (conf/spark-defaults.conf), or pass --packages "
        f"{DELTA_PACKAGE} (and --repositories, spark.repositories or LINEAGE_MAVEN_REPOSITORIES "
        "for a repository serving them) (details: logging.level DEBUG)"
    )
    assert "JavaPackage" not in output and "Traceback" not in output
    assert not (tmp_path / "lineage").exists()  # no table was touched


@pytest.mark.slow
def test_the_graph_job_without_the_graphframes_jar_ends_with_one_clear_line(
    tmp_path: Path,
) -> None:
    """``spark-submit jobs/analyze_graph.py`` launched with Delta but not GraphFrames: one line
    naming GraphFrames' pinned coordinates and the settings that provide them."""
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    defaults = (ROOT / "conf" / "spark-defaults.conf").read_text(encoding="utf-8").splitlines()
    conf_dir.joinpath("spark-defaults.conf").write_text(
        "\n".join(
            f"spark.jars.packages {DELTA_PACKAGE}"
            if line.startswith("spark.jars.packages")
            else line
            for line in defaults
        ),
        encoding="utf-8",
    )
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        yaml.safe_dump(
            {
                "sink": {"base_path": str(tmp_path / "lineage")},
                "spark": {"confs": {"spark.ui.enabled": "false"}},
            }
        ),
        encoding="utf-8",
    )
    env = os.environ | {
        "SPARK_CONF_DIR": str(conf_dir),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [str(SPARK_SUBMIT), "jobs/analyze_graph.py", "--config", str(overlay)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    errors = [line for line in output.splitlines() if " ERROR " in line]
    assert len(errors) == 1, output
    assert errors[0].endswith(
        "analyze_graph failed: GraphFrames (org.graphframes.GraphFrame) not on the Spark "
        "classpath: start with SPARK_CONF_DIR=conf (conf/spark-defaults.conf), or pass --packages "
        "io.graphframes:graphframes-spark4_2.13:0.11.0 (and --repositories, spark.repositories or "
        "LINEAGE_MAVEN_REPOSITORIES for a repository serving them) (details: logging.level DEBUG)"
    ), errors[0]
    assert "JavaPackage" not in output and "Traceback" not in output
    assert not (tmp_path / "lineage").exists()


TWO_STARTS = """
import sys
from lineage_udfs.settings import SparkSettings
from lineage_udfs.spark.runtime.session import build_spark_session
settings = SparkSettings(
    app_name="two-starts", master="local[1]", packages=[sys.argv[2]],
    confs={"spark.jars.ivy": sys.argv[1], "spark.ui.enabled": "false"},
)
spark = build_spark_session(settings)
print("rows", spark.range(3).count())
spark.stop()
"""


@pytest.mark.slow
def test_two_jobs_starting_at_once_on_an_empty_ivy_cache_both_start(tmp_path: Path) -> None:
    """Two processes that start a session resolving the same package into one empty Ivy cache
    (two test processes, or two jobs started together, on a fresh machine): both start. Without
    the resolve lock one of them failed in most tries (Ivy's files written by both at once:
    ``io problem while parsing ivy file ... .xml.original``, then an unresolved dependency)."""
    env = os.environ | {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYSPARK_PYTHON": sys.executable}
    ivy = str(tmp_path / "ivy")
    starts = [
        subprocess.Popen(
            [sys.executable, "-c", TWO_STARTS, ivy, DELTA_PACKAGE],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [start.communicate(timeout=600)[0] for start in starts]
    assert [start.returncode for start in starts] == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    assert all("rows 3" in output for output in outputs)
    assert (tmp_path / "cache" / "lineage-warehouse" / "spark-packages.lock").exists()
