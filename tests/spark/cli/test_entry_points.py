"""The wheel the bundle deploys: built with pip, its console-script entry points are the ones
resources/lineage_job.yml names, and each runs (in this process, on the sample warehouse)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import zipfile
from configparser import ConfigParser
from pathlib import Path

import pytest
import yaml
from pyspark.sql import SparkSession
from support.sample_warehouse import ROOT, SampleWarehouse


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out),
         str(ROOT)],
        check=True, timeout=900,
    )  # fmt: skip
    (built,) = out.glob("lineage_warehouse-*.whl")
    return built


def _entry_points(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt"))
        parser = ConfigParser()
        parser.read_string(archive.read(name).decode("utf-8"))
    return dict(parser["console_scripts"])


def _bundle_tasks() -> list[dict[str, object]]:
    job = yaml.safe_load((ROOT / "resources" / "lineage_job.yml").read_text(encoding="utf-8"))
    return job["resources"]["jobs"]["lineage_warehouse"]["tasks"]


def _call(target: str, argv: list[str]) -> int:
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)(argv)


def test_the_wheel_has_the_bundles_entry_points_and_the_graph_page_assets(wheel: Path) -> None:
    points = _entry_points(wheel)
    for task in _bundle_tasks():
        spec = task["python_wheel_task"]
        assert isinstance(spec, dict)
        assert wheel.name.startswith(f"{spec['package_name']}-")
        assert spec["entry_point"] in points, (spec["entry_point"], points)
    assert points["lineage"] == "lineage_udfs.cli.app:main"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {
        "lineage_udfs/workflow.py",
        "lineage_udfs/cli/static/cytoscape.min.js",
        "lineage_udfs/cli/static/cytoscape-dagre.min.js",
    } <= names


@pytest.mark.usefixtures("session_confs_restored")
def test_each_task_entry_point_runs(
    wheel: Path, sample_warehouse: SampleWarehouse, spark: SparkSession
) -> None:
    """The tasks' own parameters, with the bundle's paths and job parameters filled in for the
    sample (job parameter values as a run with defaults would pass them)."""
    points = _entry_points(wheel)
    base = sample_warehouse.base_path
    job_parameters = {
        "warehouse_path": str(base),
        "full_refresh": "true",
        "max_depth": "",
        "include_failed_executions": "false",
        "openlineage_transport": json.dumps(
            {"type": "file", "log_file_path": str(sample_warehouse.root / "ol-task.jsonl")}
        ),
    }

    def count(table: str) -> int:  # read anew: a Delta DataFrame keeps the version it was read at
        return spark.read.format("delta").load(str(base / table)).count()

    before = count("lineage_runs"), count("openlineage_emissions")
    for task in _bundle_tasks():
        spec = task["python_wheel_task"]
        assert isinstance(spec, dict)
        argv = []
        for item in spec["parameters"]:
            text = str(item).replace("${workspace.file_path}/conf/base.yaml",
                                     str(ROOT / "conf" / "base.yaml"))  # fmt: skip
            text = text.replace("${workspace.file_path}/conf/databricks.yaml",
                                str(sample_warehouse.overlay))  # fmt: skip
            for key, value in job_parameters.items():
                text = text.replace("{{job.parameters." + key + "}}", value)
            argv.append(text)
        assert _call(points[spec["entry_point"]], argv) == 0, task["task_key"]
    # the fixture's run already loaded the sample: the extraction finds nothing new and the
    # incremental emission nothing to emit, so neither appends a row (no table changes)
    assert (count("lineage_runs"), count("openlineage_emissions")) == before
    emissions = spark.read.format("delta").load(str(base / "openlineage_emissions"))
    newest = emissions.orderBy("started_at", ascending=False).first()
    assert newest is not None and newest.status == "succeeded"


def test_a_bad_override_is_a_config_error(wheel: Path) -> None:
    points = _entry_points(wheel)
    argv = ["--config", str(ROOT / "conf" / "base.yaml"), "--set", "graph.max_depth=99"]
    assert _call(points["lineage-analyze-graph"], argv) == 2
    assert _call(points["lineage-extract"], [*argv[:2], "--set", "no_equals_sign"]) == 2
