"""lineage-warehouse: table- and column-level lineage from SQL logs, on Spark."""

from importlib.metadata import PackageNotFoundError, version

from lineage_udfs.core.enums import (
    ErrorKind,
    ParserName,
    ParseStatus,
    StatementType,
    TransformationSubtype,
    TransformationType,
)
from lineage_udfs.core.errors import ConfigError, InputError, LineageError
from lineage_udfs.core.models import (
    ColumnEdge,
    ParseFailure,
    ParseResult,
    ResultColumn,
    StatementLineage,
    TableEdge,
    TableRef,
)
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

try:
    __version__ = version("lineage-warehouse")
    """The package version, from the installed distribution's metadata (pyproject.toml)."""
except PackageNotFoundError:  # the source tree on a path, not installed
    __version__ = "0+unknown"

__all__ = [
    "ColumnEdge",
    "ConfigError",
    "ErrorKind",
    "InputError",
    "LineageError",
    "LineageParser",
    "ParseFailure",
    "ParseResult",
    "ParseStatus",
    "ParserName",
    "ParserOptions",
    "ResultColumn",
    "StatementLineage",
    "StatementType",
    "TableEdge",
    "TableRef",
    "TransformationSubtype",
    "TransformationType",
    "__version__",
]
