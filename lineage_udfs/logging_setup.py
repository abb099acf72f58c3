"""Driver-side logging configuration. Library modules only call ``logging.getLogger(__name__)``."""

from __future__ import annotations

import logging

from lineage_udfs.core.errors import one_line
from lineage_udfs.redaction import RedactingFormatter
from lineage_udfs.settings import LoggingSettings


def configure_logging(settings: LoggingSettings | None = None) -> None:
    """Configure the root logger once, from settings; quiet py4j. Every line is redacted
    (``lineage_udfs.redaction``): no credential from config or a URL reaches the log.

    Args:
        settings: level and format; defaults when None.
    """
    settings = settings or LoggingSettings()
    logging.basicConfig(level=settings.level, format=settings.format, force=True)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(RedactingFormatter(settings.format))
    logging.getLogger("py4j").setLevel(logging.WARNING)


def log_failure(logger: logging.Logger, what: str, exc: BaseException) -> None:
    """One ERROR line (what failed, why, where to look), the traceback only at DEBUG."""
    logger.error("%s: %s (details: logging.level DEBUG)", what, one_line(exc))
    logger.debug("%s: details", what, exc_info=exc)
