"""Driver-side logging configuration. Library modules only call ``logging.getLogger(__name__)``."""

from __future__ import annotations

import logging
import re

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


MAX_ERROR_LINE_CHARS = 400
_CALL_NOISE = re.compile(r"^(?:An error occurred while calling [^\n]*|\s*)$")


def one_line(exc: BaseException) -> str:
    """The first meaningful line of an error (a Py4J call's preamble and a Java stack skipped).

    Examples:
        >>> one_line(RuntimeError("An error occurred while calling o56.count.\\n: java.io.IOEx"
        ...                       "ception: disk full\\n\\tat org.apache.X"))
        'java.io.IOException: disk full'
    """
    for line in str(exc).splitlines():
        if not _CALL_NOISE.match(line):
            return line.strip().lstrip(": ").strip()[:MAX_ERROR_LINE_CHARS]
    return type(exc).__name__


def log_failure(logger: logging.Logger, what: str, exc: BaseException) -> None:
    """One ERROR line (what failed, why, where to look), the traceback only at DEBUG."""
    logger.error("%s: %s (details: logging.level DEBUG)", what, one_line(exc))
    logger.debug("%s: details", what, exc_info=exc)
