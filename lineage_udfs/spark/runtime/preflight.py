"""Checks made before any work: the output location is writable, an input file is what its
source declares. Each failure is one ``LineageError`` line saying what, where and what to do.

Files are reached through Hadoop's FileSystem of the session (local paths, ``s3a://``,
``abfss://``, ``dbfs:/`` alike), never through Python's ``open``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from lineage_udfs.core.errors import InputError, LineageError, one_line
from lineage_udfs.paths import resolve_path
from lineage_udfs.settings import SinkSettings, SourceSettings


class OutputError(LineageError):
    """The output location cannot be written."""


TEXT_FORMATS: tuple[str, ...] = ("csv", "jsonl")
SNIFF_BYTES = 512
"""Bytes read from the head of each input file to recognise compressed or binary content."""
BINARY_CONTROL_SHARE = 10
"""A head with at least 1/10 control bytes (NUL and the like, not tabs or newlines) is binary;
fewer, and the rows holding them are quarantined one by one."""
SNIFF_FILES = 50
"""Input files of a source sniffed at most (the first ones by name)."""
COMPRESSED_SUFFIXES: tuple[str, ...] = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst")
"""Suffixes Spark decompresses by itself: such a file is compressed on purpose."""

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"PK\x03\x04", "zip"),
    (b"BZh", "bzip2"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"PAR1", "parquet"),
    (b"ORC", "orc"),
    (b"Obj\x01", "avro"),
    (b"SQLite format 3", "sqlite"),
)


@dataclass(frozen=True)
class SourceFiles:
    """What the preflight found at a file source's path."""

    files: int
    empty: int

    @property
    def all_empty(self) -> bool:
        """Every file is 0 bytes (or there is none): the source has no rows."""
        return self.files == self.empty


def _jvm(spark: SparkSession) -> Any:
    """The driver's JVM (Hadoop's FileSystem has no Python API), or None (Spark Connect)."""
    try:
        return spark.sparkContext._jvm
    except Exception:  # Connect sessions have no SparkContext
        return None


def fs_and_path(spark: SparkSession, location: str) -> tuple[Any, Any]:
    """Hadoop's FileSystem for ``location`` and its Path (raises where there is no JVM). A
    relative ``location`` is resolved as every configured path is (``lineage_udfs.paths``),
    not against the FileSystem's own working directory."""
    jvm = _jvm(spark)
    if jvm is None:
        raise RuntimeError("no JVM: Hadoop's FileSystem is not reachable (Spark Connect)")
    path = jvm.org.apache.hadoop.fs.Path(resolve_path(location))
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return path.getFileSystem(conf), path


def check_sink_writable(spark: SparkSession, sink: SinkSettings) -> None:
    """Create ``sink.base_path`` if needed and write and delete a probe file in it.

    Catalog tables (``sink.database``) are checked by the catalog on the first write.

    Raises:
        OutputError: the location cannot be created or written.
    """
    if sink.database is not None or _jvm(spark) is None:
        return
    location = sink.base_path
    try:
        fs, path = fs_and_path(spark, location)
        fs.mkdirs(path)
        probe = _jvm(spark).org.apache.hadoop.fs.Path(path, f"._write_probe_{uuid.uuid4().hex}")
        fs.create(probe, True).close()
        fs.delete(probe, False)
    except Exception as exc:
        raise OutputError(
            f"output location {location} is not writable ({one_line(exc)}): set "
            "sink.base_path to a writable folder or fix its permissions"
        ) from exc


def inspect_source(spark: SparkSession, source: SourceSettings) -> SourceFiles:
    """Count a text source's files and empty files; reject compressed or binary content.

    Raises:
        InputError: a file holds compressed or binary data where text was declared, or the
            path matches nothing.
    """
    if _jvm(spark) is None:
        return SourceFiles(files=1, empty=0)  # no file system to look at: Spark reads as usual
    try:
        fs, path = fs_and_path(spark, source.path)
        statuses = fs.globStatus(path)
    except Exception as exc:
        raise InputError(
            f"cannot list {source.format} source {source.name!r} at {source.path}: {one_line(exc)}"
        ) from exc
    if statuses is None or len(statuses) == 0:
        raise InputError(
            f"{source.format} source {source.name!r}: nothing at {source.path}; check "
            "sources[].path"
        )
    files: list[Any] = []
    for status in statuses:
        if status.isDirectory():
            files.extend(s for s in fs.listStatus(status.getPath()) if s.isFile() and _is_data(s))
        else:
            files.append(status)
    files.sort(key=lambda s: s.getPath().toString())
    empty = sum(1 for s in files if s.getLen() == 0)
    for status in files[:SNIFF_FILES]:
        name = status.getPath().toString()
        if status.getLen() == 0 or name.lower().endswith(COMPRESSED_SUFFIXES):
            continue
        kind = binary_kind(_head(fs, status.getPath(), SNIFF_BYTES))
        if kind is not None:
            raise InputError(
                f"{source.format} source {source.name!r}: {name} is compressed/binary input "
                f"({kind}), not {source.format} text; decompress it, or give it its "
                f"compression suffix (.gz …), or declare its format"
            )
    return SourceFiles(files=len(files), empty=empty)


def names_catalog_table(source: SourceSettings) -> bool:
    """A Delta source whose path is a table name in the catalog (no ``/``, no scheme)."""
    return source.format == "delta" and "/" not in source.path and ":" not in source.path


LISTED_FILES_MAX = 10_000
"""Files listed at most for :func:`input_listing`; a larger input is read to be compared."""


def input_listing(spark: SparkSession, sources: Sequence[SourceSettings]) -> str | None:
    """A digest of what the enabled sources would read, told without reading a row: their
    settings and the path, size and modification time of every file under their paths (of a
    Delta source: its transaction log's files), as Spark's own file source and ``make`` tell
    a changed file.

    None where that cannot be told: a JDBC, Kafka or Marquez source or a Delta table named in
    the catalog, no file system to list (Spark Connect), a path that matches nothing or fails
    to list, more than LISTED_FILES_MAX files.
    """
    enabled = [s for s in sources if s.enabled]
    if not enabled or _jvm(spark) is None:
        return None
    listing: list[Any] = []
    for source in enabled:
        if source.format == "jdbc" or source.event_service or names_catalog_table(source):
            return None
        if source.format == "delta":
            paths = [f"{source.path.rstrip('/')}/_delta_log"]
        else:
            paths = [source.path, *source.extra_paths.values()]
        for location in paths:
            files = _list_files(spark, location, LISTED_FILES_MAX - len(listing))
            if files is None:
                return None
            listing.extend(files)
    document = {"sources": [s.model_dump(mode="json") for s in sources], "files": listing}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _list_files(spark: SparkSession, location: str, most: int) -> list[list[Any]] | None:
    """``[path, size, modified]`` of every file at ``location`` (a file, folder or glob;
    folders recursively), sorted; None when nothing matches, listing fails or there are more
    than ``most``."""
    try:
        fs, path = fs_and_path(spark, location)
        statuses = fs.globStatus(path)
        if statuses is None or len(statuses) == 0:
            return None
        files: list[list[Any]] = []
        for status in statuses:
            found = fs.listFiles(status.getPath(), True)  # a file lists itself
            while found.hasNext():
                if len(files) >= most:
                    return None
                entry = found.next()
                files.append(
                    [entry.getPath().toString(), entry.getLen(), entry.getModificationTime()]
                )
    except Exception:  # an unreadable path: the read stage says what is wrong with it
        return None
    return sorted(files)


def binary_kind(head: bytes) -> str | None:
    """The kind of compressed or binary content ``head`` starts with, or None for text.

    Examples:
        >>> binary_kind(b"\\x1f\\x8b\\x08"), binary_kind(b'{"a": 1}'), binary_kind(b"\\x00\\x01ab")
        ('gzip', None, 'binary')
        >>> binary_kind(b"INSERT INTO a\\x00 SELECT 1")  # one NUL: the row is quarantined
    """
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    control = sum(1 for b in head if b < 0x09 or 0x0E <= b < 0x20)
    if head and control * BINARY_CONTROL_SHARE >= len(head):
        return "binary"
    return None


def _is_data(status: Any) -> bool:
    name = status.getPath().getName()
    return not name.startswith(("_", "."))


def _head(fs: Any, path: Any, size: int) -> bytes:
    stream = fs.open(path)
    try:
        return bytes(stream.readNBytes(size))
    finally:
        stream.close()
