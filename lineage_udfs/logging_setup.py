"""Driver-side logging configuration. Library modules only call ``logging.getLogger(__name__)``."""

from __future__ import annotations

import logging

from lineage_udfs.settings import LoggingSettings


def configure_logging(settings: LoggingSettings | None = None) -> None:
    """Configure the root logger once, from settings; quiet py4j.

    Args:
        settings: level and format; defaults when None.
    """
    settings = settings or LoggingSettings()
    logging.basicConfig(level=settings.level, format=settings.format, force=True)
    logging.getLogger("py4j").setLevel(logging.WARNING)
