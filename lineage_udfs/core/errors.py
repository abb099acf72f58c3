"""One error family for the whole package. The parser returns failures as data; these are
raised only for misuse (bad configuration, bad input files)."""

from __future__ import annotations


class LineageError(Exception):
    """Base class of every error raised by lineage_udfs."""


class ConfigError(LineageError):
    """Invalid or missing configuration."""


class InputError(LineageError):
    """A query log cannot be read or lacks a required column."""
