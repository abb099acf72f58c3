"""The job's three stages as console scripts: the tasks of the Databricks workflow
(``python_wheel_task`` entry points, ``resources/lineage_job.yml``) and of the job notebook.

    lineage-extract          --config conf/base.yaml --config conf/databricks.yaml [--set k=v ...]
    lineage-analyze-graph    --config ... [--full-refresh]
    lineage-emit-openlineage --config ... [--all]
    lineage-maintain         --config ... [--retain-hours 720]

``--config`` files are deep-merged in order (name ``conf/base.yaml`` first, as the job
parameters of the bundle do); ``--set dotted.key=value`` overrides one key after them (the value
is read as YAML: ``--set graph.max_depth=5``); an empty value leaves the key as configured, so an
empty job parameter means "as in the config files". Each stage reads what the previous one
committed to Delta, so a failed task can be repaired (re-run) alone.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.settings import JobSettings, deep_merge

logger = logging.getLogger("lineage_udfs.workflow")


def overrides(assignments: Sequence[str]) -> dict[str, Any]:
    """``["a.b=1", "c=x", "d="]`` -> ``{"a": {"b": 1}, "c": "x"}`` (empty values dropped).

    Examples:
        >>> overrides(["graph.max_depth=5", "sink.base_path=/Volumes/x", "openlineage.transport="])
        {'graph': {'max_depth': 5}, 'sink': {'base_path': '/Volumes/x'}}

    Raises:
        ConfigError: an assignment is not ``key=value``.
    """
    merged: dict[str, Any] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set takes dotted.key=value, got {item!r}")
        if not raw.strip():
            continue
        value = yaml.safe_load(raw)
        for part in reversed(key.strip().split(".")):
            value = {part: value}
        merged = deep_merge(merged, value)
    return merged


def settings_from(configs: Sequence[Path], assignments: Sequence[str] = ()) -> JobSettings:
    """Deep-merge the config files, then the ``--set`` overrides, and validate.

    Raises:
        ConfigError: a file cannot be read, or the result is invalid.
    """
    merged: dict[str, Any] = {}
    for path in configs:
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
        if loaded is None:
            continue
        if not isinstance(loaded, Mapping):
            raise ConfigError(f"config file {path} must hold a mapping")
        merged = deep_merge(merged, loaded)
    merged = deep_merge(merged, overrides(assignments))
    try:
        return JobSettings.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings:\n{exc}") from exc


def _parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--config",
        action="append",
        type=Path,
        required=True,
        help="YAML config, repeatable: conf/base.yaml first, then overlays",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one dotted key after the files (repeatable; empty value: keep)",
    )
    return parser


def _stage_job(stage: str, args: argparse.Namespace) -> Callable[[JobSettings], str]:
    """The pipeline job of ``stage``; the extract task runs the extraction alone (the graph
    stage and the emission are the workflow's next tasks)."""
    from lineage_udfs.spark import pipeline

    if stage == "extract":

        def extract_only(settings: JobSettings) -> str:
            alone = settings.model_copy(
                update={
                    "graph": settings.graph.model_copy(update={"enabled": False}),
                    "openlineage": settings.openlineage.model_copy(update={"enabled": False}),
                }
            )
            return pipeline.extract_job(alone)

        return extract_only
    if stage == "analyze-graph":
        return lambda settings: pipeline.graph_job(settings, full_refresh=args.full_refresh)
    if stage == "maintain":
        return lambda settings: pipeline.maintain_job(settings, retain_hours=args.retain_hours)

    def emit(settings: JobSettings) -> str:
        # openlineage.enabled asks the extraction to emit at its end; the workflow emits in
        # this task instead, and a workflow without a transport has nothing to emit
        if settings.openlineage.transport is None:
            return "openlineage: no transport configured, nothing emitted"
        return pipeline.emit_job(settings, emit_all=args.all)

    return emit


def _main(stage: str, argv: Sequence[str] | None) -> int:
    from lineage_udfs.spark.pipeline import run_loaded_job

    parser = _parser(f"lineage-warehouse job stage: {stage}")
    if stage == "analyze-graph":
        parser.add_argument("--full-refresh", action="store_true", help="recompute everything")
    if stage == "emit-openlineage":
        parser.add_argument("--all", action="store_true", help="re-emit every row")
    if stage == "maintain":
        parser.add_argument(
            "--retain-hours", type=int, default=720, help="removed files VACUUM keeps (hours)"
        )
    args = parser.parse_args(argv)
    return run_loaded_job(
        stage, lambda: settings_from(args.config, args.set), _stage_job(stage, args)
    )


def extract_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-extract``: query logs -> the lineage Delta tables."""
    return _main("extract", argv)


def analyze_graph_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-analyze-graph``: the graph stage over the Delta tables."""
    return _main("analyze-graph", argv)


def emit_openlineage_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-emit-openlineage``: OpenLineage events for what changed."""
    return _main("emit-openlineage", argv)


def maintain_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-maintain``: Z-order / compact and vacuum the lineage tables."""
    return _main("maintain", argv)
