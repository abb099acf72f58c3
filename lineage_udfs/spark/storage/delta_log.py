"""Versions and commit infos of a path table read from its ``_delta_log`` commit files: a
listing and a few small reads instead of a Spark job for the table's history.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pyspark.sql import SparkSession

from lineage_udfs.spark.runtime.preflight import fs_and_path

_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


def _commit_files(spark: SparkSession, path: str) -> tuple[Any, dict[int, Any]] | None:
    """The file system and ``{version: path}`` of the commit files in ``path/_delta_log``
    (``<version>.json``, 20 digits, as Delta lists them); None where nothing can be listed
    (no JVM, as on Spark Connect; no log)."""
    try:
        fs, log = fs_and_path(spark, f"{path.rstrip('/')}/_delta_log")
        if not fs.exists(log):
            return None
        files = {
            int(match.group(1)): status.getPath()
            for status in fs.listStatus(log)
            if (match := _COMMIT_FILE.match(status.getPath().getName()))
        }
    except Exception:  # no file system to list: the history says it
        return None
    return fs, files


def newest_commit(spark: SparkSession, path: str) -> int | None:
    """The newest commit version of the Delta table at ``path`` (None: not listed)."""
    found = _commit_files(spark, path)
    return max(found[1]) if found is not None and found[1] else None


def read_commits(spark: SparkSession, path: str, count: int) -> list[dict[str, Any]] | None:
    """The commit infos of the newest ``count`` commit files, newest first (None: not read,
    or a commit without its commit info)."""
    found = _commit_files(spark, path)
    if found is None or not found[1]:
        return None
    fs, files = found
    commits = []
    try:
        for version in sorted(files, reverse=True)[:count]:
            stream = fs.open(files[version])
            try:
                text = bytes(stream.readAllBytes()).decode("utf-8")
            finally:
                stream.close()
            info = next(
                (
                    json.loads(line)["commitInfo"]
                    for line in text.splitlines()
                    if line.startswith('{"commitInfo"')
                ),
                None,
            )
            if info is None:
                return None
            commits.append(
                {
                    "version": version,
                    "operation": info.get("operation"),
                    "userMetadata": info.get("userMetadata"),
                    "operationMetrics": info.get("operationMetrics") or {},
                }
            )
    except Exception:  # removed by log cleanup meanwhile, unreadable: the history says it
        return None
    return commits
