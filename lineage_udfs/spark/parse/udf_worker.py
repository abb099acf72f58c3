"""State a Python worker keeps across the parse tasks it runs: its parsers and its imports.

Python workers are reused across tasks (``spark.python.worker.reuse``) and this module is
imported once per worker, so :data:`_PARSERS` builds one ``LineageParser`` per worker and options
(not per task or batch). The cache must live here, in an importable module: anything defined in a
job script is pickled by value and rebuilt for every task.

:func:`setup_worker` is called by the parse UDF before its first batch: it makes PySpark's
per-task ``importlib.invalidate_caches()`` re-read a zip archive on the worker's path only when
the archive changed.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import sys
import zipimport
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, TypeVar

from lineage_udfs.core.fingerprint import mask_message
from lineage_udfs.core.models import ParseResult
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.redaction import redact_text

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

_PARSERS: dict[ParserOptions, LineageParser] = {}
_FROZEN_AT: dict[ParserOptions, int] = {}
"""Per parser, its ``lazy_state()`` when the worker last froze the collector's view."""
_WARM_UP = "INSERT INTO w SELECT a FROM s"
_reread_zip_directory = zipimport.zipimporter.invalidate_caches


def _invalidate_if_changed(self: zipimport.zipimporter) -> None:
    """``zipimporter.invalidate_caches`` that re-reads the archive's directory only when the
    archive changed (size or modification time).

    PySpark's worker calls ``importlib.invalidate_caches()`` before every task, and Python
    3.11's zipimporter answers by re-reading its archive's whole directory, once per package
    path inside it: pyspark.zip and py4j's zip on the worker's path make that a fixed cost of
    every task, whatever the task does. An archive that changed is still re-read.
    """
    stamp = _archive_stamp(self)
    if stamp is None or getattr(self, "_lineage_stamp", None) != stamp:
        _reread_zip_directory(self)
        self._lineage_stamp = stamp  # type: ignore[attr-defined]


def _archive_stamp(importer: zipimport.zipimporter) -> tuple[int, int] | None:
    """The size and modification time (ns) of ``importer``'s archive; None if it is gone."""
    try:
        stat = os.stat(importer.archive)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def _parent_started_at() -> float | None:
    """When this process's parent started (seconds since the epoch, from Linux's /proc), or
    None where that cannot be read."""
    try:
        with open(f"/proc/{os.getppid()}/stat") as fh:
            # field 22, starttime, in clock ticks since boot; fields from the 3rd follow ")"
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def stamp_read_archives(older_than: float | None) -> int:
    """Mark the zipimporters this process already holds as read where their archive is older
    than ``older_than`` (the parent process's start).

    A zipimporter reads its archive's directory when it is made, and every zipimporter of this
    process was made after its parent started (in the process, or in the daemon it was forked
    from): an archive last modified before that is unchanged since it was read. Without the
    mark, the task after :func:`setup_worker` re-reads each of them once (pyspark.zip, py4j and
    the jars of ``--packages`` on the worker's path). An archive modified later is re-read as
    before.

    Args:
        older_than: seconds since the epoch; None marks nothing (where the parent's start
            cannot be read, every archive is re-read once, as without this function).

    Returns:
        How many zipimporters were marked.
    """
    if older_than is None:
        return 0
    marked = 0
    for importer in list(sys.path_importer_cache.values()):
        if not isinstance(importer, zipimport.zipimporter) or hasattr(importer, "_lineage_stamp"):
            continue
        stamp = _archive_stamp(importer)
        if stamp is not None and stamp[1] < (older_than - 1.0) * 1e9:  # btime: whole seconds
            importer._lineage_stamp = stamp  # type: ignore[attr-defined]
            marked += 1
    return marked


def setup_worker() -> bool:
    """Install the archive check on ``zipimport.zipimporter`` and mark the archives this process
    has read already (once per process; later calls do nothing). True when it installed."""
    if zipimport.zipimporter.invalidate_caches is _invalidate_if_changed:
        return False
    zipimport.zipimporter.invalidate_caches = _invalidate_if_changed  # type: ignore[method-assign]
    stamp_read_archives(_parent_started_at())
    return True


def get_parser(options: ParserOptions) -> LineageParser:
    """The worker's parser for ``options`` (built on first use)."""
    parser = _PARSERS.get(options)
    if parser is None:
        parser = _PARSERS[options] = LineageParser(options)
        # the parser, sqlglot's dialect tables and sqlfluff's grammar live as long as the
        # worker: out of the collector's sight, each collection scans only what a statement
        # allocated (a parse allocates many small objects; full collections that walk the
        # long-lived ones would cost a good part of a short statement's time). One parse first
        # builds what sqlglot builds lazily (tokenizer and dialect tables), so that it is
        # frozen too.
        parser.parse(_WARM_UP, dialect="spark", mask=False)
        freeze_new_state(options)
    return parser


def freeze_new_state(options: ParserOptions) -> bool:
    """Freeze the collector's view again if the worker's parser for ``options`` has built
    long-lived state since the last freeze (a dialect's sqlglot tables, sqlfluff's tools for a
    dialect: tens of thousands of objects, built on first use). Left unfrozen, they are walked
    by every full collection, and PySpark's daemon runs one after every task of a reused
    worker. Called between batches; True when it froze."""
    parser = _PARSERS.get(options)
    if parser is None:
        return False
    state = parser.lazy_state()
    if _FROZEN_AT.get(options) == state:
        return False
    gc.collect()
    gc.freeze()
    _FROZEN_AT[options] = state
    return True


def mask_error(message: str) -> str:
    """A failure message with the SQL it may quote masked, its own figures kept."""
    return mask_message(message)


def _has_credential(name: str) -> bool:
    return ("://" in name or "=" in name) and redact_text(name) != name


def _clean(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(redact_text(n) for n in names)


def redact_names(result: ParseResult) -> ParseResult:
    """``result`` with credentials removed from its dataset names: a path or URI the SQL reads
    or writes (``delta.`s3://key:secret@bucket/p```, ``…?sig=…``) keeps its location, never its
    userinfo or credential parameters. The same object when no name holds one (the usual case).

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, ParseStatus, StatementType
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("s3://AKIA1:pw@b/p",), targets=("db.t",))
        >>> redact_names(r).sources
        ('s3://***@b/p',)
    """
    names = [*result.sources, *result.targets, *result.intermediates]
    names += [t.source_table for t in result.table_edges]
    names += [c.source_table for c in result.column_edges]
    names += [c.source_table for c in result.result_columns]
    for statement in result.statements:
        names += [*statement.sources, *statement.targets]
        names += [c.source_table for c in statement.column_edges]
    if not any(_has_credential(n) for n in names):
        return result

    def edge(e: Any) -> Any:
        fields = {"source_table": redact_text(e.source_table)}
        if hasattr(e, "target_table"):
            fields["target_table"] = redact_text(e.target_table)
        return replace(e, **fields)

    return replace(
        result,
        sources=_clean(result.sources),
        targets=_clean(result.targets),
        intermediates=_clean(result.intermediates),
        table_edges=tuple(edge(e) for e in result.table_edges),
        column_edges=tuple(edge(e) for e in result.column_edges),
        result_columns=tuple(edge(e) for e in result.result_columns),
        statements=tuple(
            replace(
                s,
                sources=_clean(s.sources),
                targets=_clean(s.targets),
                column_edges=tuple(edge(e) for e in s.column_edges),
            )
            for s in result.statements
        ),
    )


def parse_batches(
    options: ParserOptions,
    batches: Iterator[tuple[T, ...]],
    parse_batch: Callable[..., R],
) -> Iterator[R]:
    """The body of a parse UDF: set the worker up, then ``parse_batch`` each batch of (SQL
    texts, dialects, databases, schemas[, catalogs]) with the worker's parser for ``options``,
    freezing what the parser built at each batch boundary."""
    setup_worker()
    parser = get_parser(options)
    for columns in batches:
        yield parse_batch(parser, *columns)
        freeze_new_state(options)


def decode_catalog(text: str | None) -> dict[str, dict[str, object]] | None:
    """A statement's catalog as the job hands it to the UDF (JSON
    ``[{"table": "db.s.t", "columns": ["a", "b"], "types": ["int", null]}, …]``, columns in
    declared order, ``types`` optional) as the parser's ``{table: {column: type}}``; None when
    there is none.

    Examples:
        >>> decode_catalog('[{"table": "s.t", "columns": ["a", "b"], "types": ["int", null]}]')
        {'s.t': {'a': 'int', 'b': None}}
        >>> decode_catalog('[{"table": "s.t", "columns": ["a"]}]'), decode_catalog(None)
        ({'s.t': {'a': None}}, None)
    """
    if not text:
        return None
    catalog: dict[str, dict[str, object]] = {}
    for entry in json.loads(text):
        columns = [str(c) for c in entry["columns"]]
        types = entry.get("types") or [None] * len(columns)
        catalog[str(entry["table"])] = dict(zip(columns, types, strict=False))
    return catalog
