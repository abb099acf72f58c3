"""The sample warehouse: the job's own entry point run on the shipped sample logs.

``pipeline.run_extract`` (what ``make run`` executes: extraction, graph stage, OpenLineage to a
file) writes the shipped sample logs into a temporary sink; the overlay YAML naming that
sink is what a user would pass as ``--config``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml
from pyspark.sql import SparkSession

from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.pipeline import run_extract

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SampleWarehouse:
    """Where the sample's lineage tables are and the overlay that names them."""

    root: Path
    base_path: Path
    overlay: Path
    settings: JobSettings

    @classmethod
    def at(cls, root: Path) -> SampleWarehouse:
        """The warehouse ``build_sample_warehouse`` built under ``root`` (by another process)."""
        overlay = root / "overlay.yaml"
        settings = load_settings([ROOT / "conf" / "base.yaml", overlay])
        return cls(root, root / "lineage", overlay, settings)


def _overlay(root: Path) -> dict[str, object]:
    local = yaml.safe_load((ROOT / "conf" / "local.yaml").read_text(encoding="utf-8"))
    for source in local["sources"]:
        source["path"] = str(ROOT / source["path"])
    local["tags"]["file"] = str(ROOT / local["tags"]["file"])
    local["sink"] = {"base_path": str(root / "lineage")}
    local["openlineage"]["transport"]["log_file_path"] = str(root / "openlineage" / "events.jsonl")
    local["openlineage"]["spool"]["path"] = str(root / "openlineage" / "spool")
    return local


def build_sample_warehouse(spark: SparkSession, root: Path) -> SampleWarehouse:
    """Run what ``jobs/extract.py`` runs (``pipeline.run_extract``) into ``root``."""
    overlay = root / "overlay.yaml"
    overlay.write_text(yaml.safe_dump(_overlay(root)), encoding="utf-8")
    settings = load_settings([ROOT / "conf" / "base.yaml", overlay])
    outcome = run_extract(spark, settings)
    assert outcome.run.status == "succeeded", outcome.line()
    return SampleWarehouse(root, root / "lineage", overlay, settings)


def copy_sample_warehouse(sample: SampleWarehouse, root: Path) -> SampleWarehouse:
    """A copy of ``sample`` under ``root`` (its tables and events), for a test that changes the
    tables: the same state without running the job again (Delta paths are relative)."""
    shutil.copytree(sample.base_path, root / "lineage")
    if (sample.root / "openlineage").exists():
        shutil.copytree(sample.root / "openlineage", root / "openlineage")
    overlay = root / "overlay.yaml"
    overlay.write_text(yaml.safe_dump(_overlay(root)), encoding="utf-8")
    settings = load_settings([ROOT / "conf" / "base.yaml", overlay])
    return SampleWarehouse(root, root / "lineage", overlay, settings)


screenshots: list[Path] = []
"""Screenshots taken by the tests, listed at the end of the run (CI keeps the tmp dir)."""
