"""Publish the Delta lineage tables as OpenLineage events (or only replay the spool).

python jobs/emit_openlineage.py --config conf/base.yaml --config conf/local.yaml
python jobs/emit_openlineage.py --config conf/base.yaml --config conf/local.yaml --all
python jobs/emit_openlineage.py --config conf/base.yaml --replay

Without --all, only what changed since the last successful emission is emitted
(``openlineage.scope``, default incremental).
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.core.errors import ConfigError, LineageError
from lineage_udfs.emit.config import openlineage_secrets
from lineage_udfs.settings import JobSettings, load_settings

logger = logging.getLogger("jobs.emit_openlineage")


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        action="append",
        type=Path,
        required=True,
        help="YAML config; repeat to overlay (base first)",
    )
    parser.add_argument(
        "--replay", action="store_true", help="only replay the spool; do not read Delta tables"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="re-emit every row (openlineage.scope: all), not only changes since the last emission",
    )
    return parser.parse_args(argv)


def run(settings: JobSettings, *, replay_only: bool = False, emit_all: bool = False) -> object:
    """Emit (or replay); returns the summary. Secrets are read here, from the environment."""
    if settings.openlineage.transport is None:
        raise ConfigError("openlineage.transport is not configured")
    if emit_all:
        settings = settings.model_copy(
            update={"openlineage": settings.openlineage.model_copy(update={"scope": "all"})}
        )
    secrets = openlineage_secrets(settings.openlineage, os.environ)
    if replay_only:
        from lineage_udfs.spark.openlineage import replay_spool

        return replay_spool(settings, secrets)
    from lineage_udfs.spark.openlineage import emit_openlineage
    from lineage_udfs.spark.session import build_spark_session

    spark = build_spark_session(settings.spark)
    return emit_openlineage(spark, settings, secrets)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        settings = load_settings(args.config)
        from lineage_udfs.logging_setup import configure_logging

        configure_logging(settings.logging)
        summary = run(settings, replay_only=args.replay, emit_all=args.all)
    except LineageError:
        logger.exception("emit_openlineage failed")
        return 1
    logger.info("emit_openlineage done: %s", summary)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
