"""Where a configured path points: one rule for every place that reads a path from the settings.

A relative path in the settings (``sink.base_path``, ``sink.tables.<t>.path``, a source's
``path`` and ``extra_paths``, a catalog source's ``path``, ``execution.checkpoint_dir``, the
OpenLineage ``file`` transport's ``log_file_path`` and ``spool.path``) is relative to the
working directory of the process that loads the settings: the driver. :func:`resolve_path`
turns it into an absolute path when the settings are validated, so what the settings hold,
and everything they are handed to (Delta and Hadoop on the driver, the executors' Spark tasks
and Python workers, the ``lineage`` command), reads the same location: no process resolves it
against a working directory of its own (a Hadoop FileSystem's, an executor's work folder).

A path with a scheme (``s3a://``, ``abfss://``, ``hdfs://``, ``dbfs:/``, ``file:/``,
``jdbc:``) or an absolute path is kept as written: it already means the same in every process.
An absolute path without a scheme is on the cluster's default filesystem for Spark and on the
local disk for Python (the spool, the ``file`` transport), as before.
"""

from __future__ import annotations

import os


def has_scheme(path: str) -> bool:
    """Whether ``path`` names its filesystem (``s3a://bucket/x``, ``dbfs:/x``, ``file:/x``):
    a colon before the first slash, as Hadoop's ``Path`` reads it.

    Examples:
        >>> has_scheme("s3a://bucket/lineage"), has_scheme("dbfs:/lineage")
        (True, True)
        >>> has_scheme("warehouse/lineage"), has_scheme("/data/logs:2026/x.csv")
        (False, False)
    """
    colon, slash = path.find(":"), path.find("/")
    return colon > 0 and (slash == -1 or colon < slash)


def resolve_path(path: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """``path`` as every process must read it: a relative path joined to ``cwd`` (default:
    this process's working directory) and normalized (``..`` and ``.`` removed, symbolic
    links kept); an absolute path, a path with a scheme and the empty string unchanged.
    Resolving a resolved path changes nothing.

    Examples:
        >>> resolve_path("warehouse/lineage", "/srv/job")
        '/srv/job/warehouse/lineage'
        >>> resolve_path("../logs/*.jsonl", "/srv/job")
        '/srv/logs/*.jsonl'
        >>> resolve_path("./warehouse/lineage/", "/srv/job")
        '/srv/job/warehouse/lineage'
        >>> resolve_path("/Volumes/main/lineage/delta", "/srv/job")
        '/Volumes/main/lineage/delta'
        >>> resolve_path("s3a://bucket/lineage", "/srv/job")
        's3a://bucket/lineage'
        >>> resolve_path("", "/srv/job")
        ''
    """
    if not path or has_scheme(path) or os.path.isabs(path):
        return path
    base = os.fspath(cwd) if cwd is not None else os.getcwd()
    return os.path.normpath(os.path.join(base, path))
