"""The Databricks Asset Bundle, validated offline: databricks.yml with its includes merged,
against the pinned JSON schema of the Databricks CLI (tests/data/databricks/)."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import regex
import yaml
from jsonschema import validators

from lineage_udfs.settings import deep_merge

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "tests" / "data" / "databricks" / "bundle_jsonschema.json"


def load_bundle(root: Path = ROOT) -> dict[str, Any]:
    """databricks.yml with every file its ``include`` globs name merged in (as the CLI does:
    mappings merge, the included files add resources)."""
    bundle = yaml.safe_load((root / "databricks.yml").read_text(encoding="utf-8"))
    for pattern in bundle.get("include", []):
        files = sorted(glob.glob(str(root / pattern)))
        assert files, f"include {pattern!r} matches no file"
        for name in files:
            bundle = deep_merge(bundle, yaml.safe_load(Path(name).read_text(encoding="utf-8")))
    return bundle


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    """``pattern`` with the ``regex`` module: the schema's interpolation patterns use Unicode
    classes (``\\p{L}``) that Python's ``re`` lacks (ECMA-262 has them)."""
    if isinstance(instance, str) and not regex.search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


BundleValidator = validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


def _errors(document: dict[str, Any]) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = BundleValidator(schema)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in validator.iter_errors(document)
    ]


def test_bundle_matches_the_cli_schema() -> None:
    assert _errors(load_bundle()) == []


def test_schema_rejects_a_broken_bundle() -> None:
    """The check can fail: a misspelt task key and a wrong type are reported."""
    broken = load_bundle()
    job = broken["resources"]["jobs"]["lineage_warehouse"]
    job["tasks"][0]["python_wheel_tasks"] = job["tasks"][0].pop("python_wheel_task")
    job["max_concurrent_runs"] = {"not": "a number"}
    errors = _errors(broken)
    assert any("python_wheel_tasks" in e for e in errors), errors
    assert any("max_concurrent_runs" in e for e in errors), errors


def test_job_is_extract_then_graph_then_openlineage() -> None:
    job = load_bundle()["resources"]["jobs"]["lineage_warehouse"]
    tasks = {t["task_key"]: t for t in job["tasks"]}
    assert list(tasks) == ["extract", "analyze_graph", "emit_openlineage"]
    assert tasks["analyze_graph"]["depends_on"] == [{"task_key": "extract"}]
    assert tasks["emit_openlineage"]["depends_on"] == [{"task_key": "analyze_graph"}]
    maven = [lib["maven"]["coordinates"] for lib in tasks["analyze_graph"]["libraries"]
             if "maven" in lib]  # fmt: skip
    assert maven == ["io.graphframes:graphframes-spark4_2.13:0.11.0"]
    assert job["schedule"]["quartz_cron_expression"]
    assert job["email_notifications"]["on_failure"]
    # every job parameter reaches a task as a config override
    used = " ".join(" ".join(t["python_wheel_task"]["parameters"]) for t in tasks.values())
    for parameter in job["parameters"]:
        assert "{{job.parameters." + parameter["name"] + "}}" in used, parameter["name"]


@pytest.mark.parametrize("overlay", ["base.yaml", "databricks.yaml"])
def test_tasks_name_config_files_that_exist(overlay: str) -> None:
    job = load_bundle()["resources"]["jobs"]["lineage_warehouse"]
    for task in job["tasks"]:
        assert f"${{workspace.file_path}}/conf/{overlay}" in task["python_wheel_task"]["parameters"]
    assert (ROOT / "conf" / overlay).is_file()
