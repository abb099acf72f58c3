"""Commits that lose a race with another writer: Delta's concurrent-modification errors and the
retry every writer goes through (``commit_with_retry``).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from delta.exceptions import (
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentTransactionException,
    ConcurrentWriteException,
    DeltaConcurrentModificationException,
    MetadataChangedException,
)

logger = logging.getLogger(__name__)


T = TypeVar("T")

CONCURRENT_MODIFICATION: tuple[type[BaseException], ...] = (
    DeltaConcurrentModificationException,
    ConcurrentWriteException,
    ConcurrentAppendException,
    ConcurrentDeleteReadException,
    ConcurrentDeleteDeleteException,
    ConcurrentTransactionException,
    MetadataChangedException,
)
"""Delta's answers to a commit that lost a race with another writer's commit: the same command
run again on the new snapshot can succeed (``ProtocolChangedException`` cannot: not here)."""
_CONCURRENT_NAMES = tuple(c.__name__ for c in CONCURRENT_MODIFICATION)

COMMIT_ATTEMPTS = 6
"""How many times a MERGE is tried when another writer commits to its table meanwhile."""
COMMIT_BACKOFF_SECONDS = 0.5
"""The first wait before a retry; each later wait doubles (plus up to 50% random jitter, so
two writers that collided do not retry in lockstep)."""


def is_concurrent_modification(exc: BaseException) -> bool:
    """True for Delta's concurrent-modification errors (also when Py4J did not convert them)."""
    if isinstance(exc, CONCURRENT_MODIFICATION):
        return True
    head = str(exc)[:500]
    return any(f"io.delta.exceptions.{name}" in head for name in _CONCURRENT_NAMES)


def commit_with_retry(
    commit: Callable[[], T],
    what: str,
    *,
    attempts: int = COMMIT_ATTEMPTS,
    backoff: float = COMMIT_BACKOFF_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``commit`` (one Delta command that reads the table and commits to it); when another
    writer committed conflicting files meanwhile, wait and run it again on the new snapshot
    (exponential backoff, ``attempts`` tries in all). Other errors are raised at once.

    The lineage MERGEs are idempotent and computed from the facts, so a command run again after
    the other writer's commit gives what the two runs give one after the other.
    """
    for attempt in range(1, attempts + 1):
        try:
            return commit()
        except Exception as exc:
            if attempt == attempts or not is_concurrent_modification(exc):
                raise
            delay = backoff * 2 ** (attempt - 1) * (1 + random.random() / 2)
            logger.warning(
                "%s: another writer committed to the table meanwhile (%s); retry %d of %d"
                " in %.1f s",
                what,
                type(exc).__name__,
                attempt,
                attempts - 1,
                delay,
            )
            sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover
