"""The job's three stages as console scripts: the tasks of the Databricks workflow
(``python_wheel_task`` entry points, ``resources/lineage_job.yml``) and of the job notebook.

    lineage-extract          --config conf/base.yaml --config conf/databricks.yaml [--set k=v ...]
    lineage-analyze-graph    --config ... [--full-refresh]
    lineage-emit-openlineage --config ... [--all]

``--config`` files are deep-merged in order (name ``conf/base.yaml`` first, as the job
parameters of the bundle do); ``--set dotted.key=value`` overrides one key after them (the value
is read as YAML: ``--set graph.max_depth=5``); an empty value leaves the key as configured, so an
empty job parameter means "as in the config files". Each stage reads what the previous one
committed to Delta, so a failed task can be repaired (re-run) alone.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from lineage_udfs.core.errors import ConfigError, LineageError
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


def _session(settings: JobSettings) -> Any:
    from lineage_udfs.spark.session import build_spark_session

    return build_spark_session(settings.spark)


def run_extract(spark: Any, settings: JobSettings) -> Any:
    """The extraction stage alone (no graph stage, no emission): returns its RunSummary."""
    from lineage_udfs.spark.extract import run

    return run(spark, settings)


def run_analyze_graph(spark: Any, settings: JobSettings, *, full_refresh: bool = False) -> Any:
    """The graph stage: lineage_nodes, lineage_paths, closures, components."""
    from lineage_udfs.spark.delta import LineageTables
    from lineage_udfs.spark.graph_stage import run_graph_stage

    return run_graph_stage(
        LineageTables(spark, settings.sink),
        settings.graph,
        full_refresh=full_refresh or settings.graph.full_refresh,
    )


def run_emit_openlineage(spark: Any, settings: JobSettings, *, emit_all: bool = False) -> Any:
    """OpenLineage emission; None when no ``openlineage.transport`` is configured.

    ``openlineage.enabled`` is not consulted: it asks the extraction to emit at its end, which
    the workflow does as this separate task instead."""
    if settings.openlineage.transport is None:
        logger.info("openlineage.transport is not set: nothing to emit")
        return None
    from lineage_udfs.emit.config import openlineage_secrets
    from lineage_udfs.spark.openlineage import emit_openlineage

    if emit_all:
        settings = settings.model_copy(
            update={"openlineage": settings.openlineage.model_copy(update={"scope": "all"})}
        )
    return emit_openlineage(spark, settings, openlineage_secrets(settings.openlineage, os.environ))


def _main(stage: str, argv: Sequence[str] | None) -> int:
    from lineage_udfs.logging_setup import configure_logging

    parser = _parser(f"lineage-warehouse job stage: {stage}")
    if stage == "analyze-graph":
        parser.add_argument("--full-refresh", action="store_true", help="recompute everything")
    if stage == "emit-openlineage":
        parser.add_argument("--all", action="store_true", help="re-emit every row")
    args = parser.parse_args(argv)
    try:
        settings = settings_from(args.config, args.set)
    except ConfigError as exc:
        configure_logging()
        logger.error("invalid configuration: %s", exc)
        return 2
    configure_logging(settings.logging)
    spark = _session(settings)
    try:
        if stage == "extract":
            result = run_extract(spark, settings)
            logger.info("extraction %s: run_id=%s", result.status, result.run_id)
            return 0 if result.status == "succeeded" else 1
        if stage == "analyze-graph":
            result = run_analyze_graph(spark, settings, full_refresh=args.full_refresh)
        else:
            result = run_emit_openlineage(spark, settings, emit_all=args.all)
    except LineageError:
        logger.exception("%s failed", stage)
        return 1
    logger.info("%s done: %s", stage, result)
    return 0


def extract_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-extract``: query logs -> the lineage Delta tables."""
    return _main("extract", argv)


def analyze_graph_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-analyze-graph``: the graph stage over the Delta tables."""
    return _main("analyze-graph", argv)


def emit_openlineage_main(argv: Sequence[str] | None = None) -> int:
    """``lineage-emit-openlineage``: OpenLineage events for what changed."""
    return _main("emit-openlineage", argv)
