"""Durable delivery the OpenLineage client lacks: a bounded on-disk spool plus ordered replay.

openlineage-python's http transport raises when the collector is down and keeps nothing. Here:

- :class:`SpoolingEmitter` sends each event through the client. When the collector is
  unreachable (connection error, timeout) or answers 5xx, the event and every *later* event of
  the same writer go to the spool (or, on an executor, to ``hold``: back to the driver, which
  spools them), so per-run order (START before COMPLETE) survives. Other errors (4xx: the
  collector rejected the event) are counted as ``failed`` and never retried.
- :class:`Spool` is a directory of JSON-lines segments, written and read by the driver only.
  Each writer (one Spark partition's events) writes its own segment
  ``<ns-timestamp>-<writer>.jsonl.part`` sequentially, through one handle, and renames it to
  ``.jsonl`` when it closes, so writers never share a file and a writer that dies half-way
  leaves only a ``.part`` file, which replay ignores.
- The size cap (``max_bytes``) is enforced under an ``fcntl`` lock on ``<spool>/.lock`` across
  the writers of the host (two jobs may share a spool); an event that does not fit is dropped
  and counted as ``overflowed``, never silently.
- :func:`replay` sends committed segments oldest first, line by line; it stops at the first
  delivery failure of the retryable kind and rewrites that segment with only the undelivered
  lines. An event the collector rejects (4xx) is moved to ``<spool>/rejected/`` with the reason
  (counted, logged, never retried, never dropped) and the replay goes on. Nothing that was not
  delivered is removed.

The spool directory is the driver's: a local disk, or durable storage the driver mounts (NFS,
a Databricks volume) so that a spool outlives the machine; executors never write it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from openlineage.client.serde import Serde

logger = logging.getLogger(__name__)

_LOCK = ".lock"
_REPLAY_LOCK = ".replay.lock"
_SEGMENT = ".jsonl"
_PART = ".jsonl.part"
_REJECTED = "rejected"
MAX_REASONS = 50
"""Rejection reasons kept per writer / replay (all are counted; the first ones are reported)."""


class SpoolFullError(Exception):
    """Internal: the event does not fit under ``max_bytes``."""


@dataclass
class EmitCounts:
    """Outcome counts of one writer (partition) or of a whole emission.

    Attributes:
        rows: log rows (or statement-days) looked at.
        skipped: rows that produce no event (SELECT / SESSION unless configured).
        emitted: events the transport accepted.
        spooled: events written to the spool for a later replay.
        overflowed: events dropped because the spool was full (reported, never silent).
        failed: events the collector rejected (4xx) or a non-http transport failed on.
    """

    rows: int = 0
    skipped: int = 0
    emitted: int = 0
    spooled: int = 0
    overflowed: int = 0
    failed: int = 0

    def __add__(self, other: EmitCounts) -> EmitCounts:
        return EmitCounts(**{k: getattr(self, k) + getattr(other, k) for k in _COUNT_FIELDS})

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(getattr(self, k) for k in _COUNT_FIELDS)

    @classmethod
    def from_tuple(cls, values: tuple[int, ...]) -> EmitCounts:
        return cls(**dict(zip(_COUNT_FIELDS, values, strict=True)))


_COUNT_FIELDS = ("rows", "skipped", "emitted", "spooled", "overflowed", "failed")


@dataclass(frozen=True)
class ReplaySummary:
    """What a replay did: delivered events, events still pending, segments fully drained."""

    delivered: int = 0
    pending: int = 0
    segments_done: int = 0
    failed: bool = False
    """True when the replay stopped at an undeliverable event (collector still down)."""
    rejected: int = 0
    """Events the collector rejected (4xx), moved to ``<spool>/rejected/``."""
    rejections: tuple[str, ...] = ()
    """Why, per rejected event (the first :data:`MAX_REASONS`)."""


def rejection_reason(exc: BaseException) -> str:
    """One line saying why an event was not accepted: the HTTP status and the collector's
    answer (Marquez names the invalid field), or the transport's error."""
    import requests

    response = getattr(exc, "response", None)
    if isinstance(exc, requests.HTTPError) and response is not None:
        body = " ".join((response.text or "").split())[:300]
        status = f"HTTP {response.status_code} {response.reason or ''}".strip()
        return f"{status}: {body}"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def describe_event(event: Any) -> str:
    """``<eventType> <job namespace>/<job name> run <runId>`` of an event object or dict."""
    data = event if isinstance(event, dict) else json.loads(Serde.to_json(event))
    job = data.get("job") or {}
    run = data.get("run") or {}
    return (
        f"{data.get('eventType')} {job.get('namespace')}/{job.get('name')} run {run.get('runId')}"
    )


def is_retryable(exc: BaseException) -> bool:
    """Collector unreachable, timed out or answering 5xx: worth spooling and replaying."""
    import requests

    retryable = getattr(exc, "retryable", None)  # KafkaDeliveryError says so itself
    if isinstance(retryable, bool):
        return retryable
    if isinstance(exc, requests.HTTPError):
        response = exc.response
        return response is None or response.status_code >= 500
    if isinstance(exc, requests.RequestException):  # ConnectionError, Timeout, RetryError, ...
        return True
    return isinstance(exc, ConnectionError | TimeoutError)


@dataclass
class Spool:
    """A bounded directory of JSON-lines event segments (see the module docstring)."""

    path: Path
    max_bytes: int

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    # -- writing ---------------------------------------------------------------------------------

    def writer(self, writer_id: str) -> SpoolWriter:
        """A writer owning one new segment; call ``close()`` to commit it."""
        self.path.mkdir(parents=True, exist_ok=True)
        stem = f"{time.time_ns():020d}-{_safe(writer_id)}-{uuid.uuid4().hex[:8]}"
        return SpoolWriter(self, self.path / f"{stem}{_PART}")

    @contextmanager
    def _locked(self, name: str = _LOCK, *, blocking: bool = True) -> Iterator[bool]:
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / name, "a+b") as handle:
            flags = fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB)
            try:
                fcntl.flock(handle, flags)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def size_bytes(self) -> int:
        """Bytes held by segments (committed and in progress)."""
        if not self.path.exists():
            return 0
        return sum(
            p.stat().st_size for p in self.path.iterdir() if p.name.endswith((_SEGMENT, _PART))
        )

    def segments(self) -> list[Path]:
        """Committed segments, oldest first."""
        if not self.path.exists():
            return []
        return sorted(p for p in self.path.iterdir() if p.name.endswith(_SEGMENT))

    def pending(self) -> int:
        """Events waiting in committed segments."""
        return sum(_count_lines(p) for p in self.segments())


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:40] or "w"


def _count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


@dataclass
class SpoolWriter:
    """Writes events to one new segment, sequentially through one handle (no appends to an
    existing file: storage such as a Databricks volume takes only sequential writes), under the
    spool-wide size cap."""

    spool: Spool
    part_path: Path
    written: int = 0
    _handle: BinaryIO | None = None

    def append(self, line: str) -> None:
        """Write one JSON line. Raises :class:`SpoolFullError` when it does not fit."""
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        with self.spool._locked():
            if self.spool.size_bytes() + len(data) > self.spool.max_bytes:
                raise SpoolFullError
            if self._handle is None:
                self._handle = open(self.part_path, "xb")  # noqa: SIM115 (closed in close())
            self._handle.write(data)
            self._handle.flush()
            os.fsync(self._handle.fileno())
        self.written += 1

    def close(self) -> None:
        """Commit the segment (rename ``.part`` -> ``.jsonl``); nothing when it is empty."""
        if self._handle is None:
            return
        self._handle.close()
        self._handle = None
        final = self.part_path.with_name(self.part_path.name[: -len(_PART)] + _SEGMENT)
        with self.spool._locked():
            os.replace(self.part_path, final)


@dataclass
class SpoolingEmitter:
    """Send events through ``send``; spool what the collector cannot take now.

    Args:
        send: delivers one event or raises (``OpenLineageClient.emit``).
        spool: where undeliverable events go; None disables spooling (they count as failed,
            unless ``hold`` takes them).
        writer_id: names this writer's segment (e.g. ``p00003``).
        spool_only: skip delivery and spool everything (the spool still holds older events,
            so sending new ones first would break ordering).
        hold: on an executor, instead of a spool: receives each undeliverable event as its
            JSON line (prepared), in order, for the driver to spool or deliver; such events are
            not counted here (the driver counts them when it has spooled or delivered them).
        prepare: turns an event into the form that is sent (and spooled), e.g.
            :func:`~lineage_udfs.emit.client.prepare_event` with ``send`` the client's transport,
            so a replayed event equals one delivered at once.
    """

    send: Callable[[Any], object]
    spool: Spool | None
    writer_id: str = "driver"
    spool_only: bool = False
    prepare: Callable[[Any], Any] | None = None
    hold: Callable[[str], None] | None = None
    counts: EmitCounts = field(default_factory=EmitCounts)
    rejections: list[str] = field(default_factory=list)
    """Why events were rejected (the first :data:`MAX_REASONS`; ``counts.failed`` has them all)."""
    _writer: SpoolWriter | None = None
    _down: bool = False

    def emit(self, event: Any) -> None:
        """Deliver or spool one event, updating :attr:`counts`."""
        if self.prepare is not None:
            event = self.prepare(event)
        if not (self.spool_only or self._down):
            try:
                self.send(event)
            except Exception as exc:  # transport errors are many types; classified below
                if (self.spool is None and self.hold is None) or not is_retryable(exc):
                    self.counts.failed += 1
                    reason = f"{describe_event(event)}: {rejection_reason(exc)}"
                    if len(self.rejections) < MAX_REASONS:
                        self.rejections.append(reason)
                    logger.error("OpenLineage event not delivered: %s", reason)
                    return
                self._down = True  # keep order: everything after this goes to the spool too
            else:
                self.counts.emitted += 1
                return
        self._to_spool(event)

    @property
    def is_down(self) -> bool:
        """True once a delivery failed for a retryable reason (everything after is spooled)."""
        return self._down

    def _to_spool(self, event: Any) -> None:
        if self.hold is not None:
            self.hold(Serde.to_json(event))
            return
        if self.spool is None:
            self.counts.failed += 1
            return
        if self._writer is None:
            self._writer = self.spool.writer(self.writer_id)
        try:
            self._writer.append(Serde.to_json(event))
        except SpoolFullError:
            self.counts.overflowed += 1
        else:
            self.counts.spooled += 1

    def close(self) -> EmitCounts:
        """Commit this writer's segment and return the counts."""
        if self._writer is not None:
            self._writer.close()
        return self.counts


def replay(spool: Spool, send: Callable[[dict[str, Any]], object]) -> ReplaySummary:
    """Deliver spooled events oldest first; remove exactly what was delivered.

    ``send`` receives each event as a dict (``Transport.emit`` accepts it: the client's
    ``Serde`` serialises dicts as they are). Stops at the first failure; the segment being
    replayed is rewritten with the undelivered remainder, later segments are untouched. An event
    the collector rejects (not retryable: 4xx) is moved to ``<spool>/rejected/`` with its reason
    and the replay continues. Only one replay runs at a time per spool (a second one returns
    immediately).
    """
    delivered = done = 0
    rejections: list[str] = []
    rejected = 0
    with spool._locked(_REPLAY_LOCK, blocking=False) as acquired:
        if not acquired:
            logger.warning("another replay of %s is running; skipped", spool.path)
            return ReplaySummary(pending=spool.pending())
        for segment in spool.segments():
            lines = [line for line in segment.read_text("utf-8").splitlines() if line.strip()]
            sent = 0
            failure: Exception | None = None
            kept_back = 0
            for line in lines:
                event = json.loads(line)
                try:
                    send(event)
                except Exception as exc:  # classified: rejected events are set aside
                    if is_retryable(exc):
                        failure = exc
                        break
                    reason = f"{describe_event(event)}: {rejection_reason(exc)}"
                    _set_aside(spool, line, reason)
                    logger.error("OpenLineage replay: event rejected, moved aside: %s", reason)
                    rejected += 1
                    kept_back += 1
                    if len(rejections) < MAX_REASONS:
                        rejections.append(reason)
                sent += 1
            delivered += sent - kept_back
            if failure is None:
                segment.unlink()
                done += 1
                continue
            if sent:
                _rewrite(spool, segment, lines[sent:])
            logger.warning("OpenLineage replay stopped after %d events: %s", delivered, failure)
            return ReplaySummary(
                delivered, spool.pending(), done, True, rejected, tuple(rejections)
            )
    return ReplaySummary(delivered, spool.pending(), done, False, rejected, tuple(rejections))


def _set_aside(spool: Spool, line: str, reason: str) -> None:
    """Append a rejected event with its reason to ``<spool>/rejected/rejected.jsonl``."""
    folder = spool.path / _REJECTED
    folder.mkdir(parents=True, exist_ok=True)
    record = json.dumps({"reason": reason, "event": json.loads(line)}, sort_keys=True)
    with spool._locked(), open(folder / f"rejected{_SEGMENT}", "a", encoding="utf-8") as handle:
        handle.write(record + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _rewrite(spool: Spool, segment: Path, remaining: list[str]) -> None:
    tmp = segment.with_name(segment.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in remaining), "utf-8")
    with spool._locked():
        os.replace(tmp, segment)
