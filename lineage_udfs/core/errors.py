"""One error family for the whole package. The parser returns failures as data; these are
raised only for misuse (bad configuration, bad input files)."""

from __future__ import annotations

import re

MAX_ERROR_LINE_CHARS = 400
"""The longest error line the package prints, logs or stores."""
_CALL_NOISE = re.compile(r"^(?:An error occurred while calling [^\n]*|\s*)$")


def one_line(exc: BaseException | str, *, with_type: bool = False) -> str:
    """The first meaningful line of an error or of an error's text (a Py4J call's preamble
    and a Java stack skipped), at most ``MAX_ERROR_LINE_CHARS``; the error's type first when
    ``with_type``. The one helper for every error the package turns into a line.

    Examples:
        >>> one_line(RuntimeError("An error occurred while calling o56.count.\\n: java.io.IOEx"
        ...                       "ception: disk full\\n\\tat org.apache.X"))
        'java.io.IOException: disk full'
        >>> one_line(ValueError("bad value\\nmore"), with_type=True)
        'ValueError: bad value'
        >>> one_line(KeyError())
        'KeyError'
    """
    for line in str(exc).splitlines():
        if not _CALL_NOISE.match(line):
            text = line.strip().lstrip(": ").strip()[:MAX_ERROR_LINE_CHARS]
            return f"{type(exc).__name__}: {text}" if with_type else text
    return type(exc).__name__ if isinstance(exc, BaseException) else ""


class LineageError(Exception):
    """Base class of every error raised by lineage_udfs."""


class ConfigError(LineageError):
    """Invalid or missing configuration."""


class InputError(LineageError):
    """A query log cannot be read or lacks a required column."""
