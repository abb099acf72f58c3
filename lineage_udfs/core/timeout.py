"""Per-statement time limits.

On the main thread (where Spark runs Arrow and pandas UDFs in the Python worker, and where the
evaluation command runs) the limit is enforced with ``signal.setitimer(ITIMER_REAL)`` and
``SIGALRM``: the handler raises :class:`ParseTimeoutError` inside the parser, wherever it is.
Signals can only be handled on the main thread, so elsewhere (a thread pool, some notebook
kernels) the limit is NOT enforced: the parse simply runs to completion. This is the documented
no-timeout fallback; the ``max_sql_chars`` limit still bounds the work.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

RETRY_SECONDS = 0.05
"""After the limit, the timer fires again this often until the limited block has ended."""


class ParseTimeoutError(Exception):
    """A parser tier ran longer than ``ParserOptions.timeout_seconds``."""


def can_enforce_timeout() -> bool:
    """Whether :func:`time_limit` can interrupt work on the current thread.

    Examples:
        >>> isinstance(can_enforce_timeout(), bool)
        True
    """
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`ParseTimeoutError` in the block if it runs longer than ``seconds``.

    A nested or non-positive limit, or a call off the main thread, runs without a limit. The
    previous SIGALRM handler and timer are restored on exit.

    An exception raised by a signal handler is lost when the signal lands in code that swallows
    exceptions (an object finalizer, a ``__del__`` of a compiled regex): after expiry the timer
    therefore repeats every :data:`RETRY_SECONDS` until the block ends, and a block that still
    completes after its limit expired raises on exit. Either way the block ends in
    :class:`ParseTimeoutError`.

    Args:
        seconds: the limit; None or <= 0 for none.

    Examples:
        >>> with time_limit(5):
        ...     1 + 1
        2
    """
    if not seconds or seconds <= 0 or not can_enforce_timeout():
        yield
        return
    previous_timer = signal.getitimer(signal.ITIMER_REAL)
    if previous_timer[0] > 0:  # an outer limit is running: keep it
        yield
        return

    expired = False

    def _expire(signum: int, frame: FrameType | None) -> None:
        nonlocal expired
        expired = True
        raise ParseTimeoutError(f"parse exceeded {seconds:g} s")

    previous_handler = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, RETRY_SECONDS)
    try:
        yield
    finally:
        _disarm(previous_handler)
    if expired:  # the handler's exception was swallowed, yet the limit passed
        raise ParseTimeoutError(f"parse exceeded {seconds:g} s")


def _disarm(previous_handler: Any) -> None:
    """Stop the timer and restore the handler, even if a last tick lands while doing so."""
    while True:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_handler)
            return
        except ParseTimeoutError:
            continue
