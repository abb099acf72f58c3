"""Per-statement time limits, in CPU time.

A limit counts the CPU time the process spends (user and system, ``ITIMER_PROF``), not the
wall clock: a statement gets the same answer on an idle machine and on a busy one, where other
processes take the CPU and a wall-clock limit would cut the same work short. The parser does
no blocking work (no I/O but reading a library's modules on first use, no locks, no sleeps),
so it cannot wait without spending CPU time and no wall-clock ceiling is kept. The process's
CPU time counts every thread: where the parser runs (the Spark worker's Python process, the
evaluation command) it is the only busy one.

On the main thread (where Spark runs Arrow and pandas UDFs in the Python worker, and where the
evaluation command runs) the limit is enforced with ``signal.setitimer(ITIMER_PROF)`` and
``SIGPROF``: the handler raises :class:`ParseTimeoutError` inside the parser, wherever it is.
Signals can only be handled on the main thread, so elsewhere (a thread pool, some notebook
kernels) the limit is NOT enforced: the parse simply runs to completion. This is the documented
no-timeout fallback; the ``max_sql_chars`` limit still bounds the work. Nor is it enforced while
another ``ITIMER_PROF`` timer runs (an outer limit, or a sampling profiler that uses the same
timer): that timer is kept.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C functions (see time_limit)
import signal
import threading
from types import FrameType, TracebackType
from typing import Any

RETRY_SECONDS = 0.05
"""After the limit, the timer fires again this often (in CPU time) until the limited block has
ended."""

_TIMER = _signal.ITIMER_PROF
"""The process's CPU time, user and system: the system time a parse causes (memory for large
trees, a library's modules read on first use) is its work too."""

_SIGNAL = _signal.SIGPROF


class ParseTimeoutError(Exception):
    """A parser tier spent more CPU time than its limit (``ParserOptions.timeout_seconds``)."""


def can_enforce_timeout() -> bool:
    """Whether :func:`time_limit` can interrupt work on the current thread.

    Examples:
        >>> isinstance(can_enforce_timeout(), bool)
        True
    """
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class time_limit:  # noqa: N801 - used as a function: ``with time_limit(seconds):``
    """Raise :class:`ParseTimeoutError` in the block if the process spends more than
    ``seconds`` of CPU time in it.

    A nested or non-positive limit, or a call off the main thread, runs without a limit. The
    previous SIGPROF handler and timer are restored on exit.

    An exception raised by a signal handler is lost when the signal lands in code that swallows
    exceptions (an object finalizer, a ``__del__`` of a compiled regex): after expiry the timer
    therefore repeats every :data:`RETRY_SECONDS` until the block ends, and a block that still
    completes after its limit expired raises on exit. Either way the block ends in
    :class:`ParseTimeoutError`.

    A parse enters a limit a few times per statement, so this calls the C functions of
    ``_signal`` (``signal.signal`` wraps them with enum conversions, several times their cost)
    and is a class rather than a generator-based context manager.

    Args:
        seconds: the limit; None or <= 0 for none.

    Examples:
        >>> with time_limit(5):
        ...     1 + 1
        2
    """

    __slots__ = ("_armed", "_expired", "_previous", "_seconds")

    def __init__(self, seconds: float | None) -> None:
        self._seconds = seconds
        self._armed = False
        self._expired = False
        self._previous: Any = None

    def __enter__(self) -> None:
        seconds = self._seconds
        if not seconds or seconds <= 0 or not can_enforce_timeout():
            return
        if _signal.getitimer(_TIMER)[0] > 0:  # an outer limit is running: keep it
            return
        self._previous = _signal.signal(_SIGNAL, self._expire)
        self._armed = True
        _signal.setitimer(_TIMER, seconds, RETRY_SECONDS)

    def _expire(self, signum: int, frame: FrameType | None) -> None:
        self._expired = True
        if frame is not None and frame.f_code in _EXIT_CODE:
            return  # the block has ended and the timer is being stopped: __exit__ raises
        if _importing(frame):
            return  # the timer fires again after RETRY_SECONDS, or __exit__ raises
        raise ParseTimeoutError(f"parse exceeded {self._seconds:g} s of CPU time")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._armed:
            return
        _disarm(self._previous)
        self._armed = False
        if not self._expired or isinstance(exc, ParseTimeoutError):
            return
        if exc_type is None or issubclass(exc_type, Exception):
            # the handler's exception was swallowed, or turned into another one by code that
            # wraps what it catches: the block ran out of time either way
            raise ParseTimeoutError(f"parse exceeded {self._seconds:g} s of CPU time") from exc


def _disarm(previous_handler: Any) -> None:
    """Stop the timer and restore the handler, even if a last tick lands while doing so."""
    while True:
        try:
            _signal.setitimer(_TIMER, 0)
            _signal.signal(_SIGNAL, previous_handler)
            return
        except ParseTimeoutError:
            continue


def _importing(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an import (importlib's bootstrap is on the stack).

    An exception raised into a module's top-level code leaves whatever that module had
    imported so far half-initialised in ``sys.modules``: a later import of the library then
    fails (``module 'jinja2' has no attribute 'nodes'``) for the rest of the process. A tick
    during an import therefore waits for the next one."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


_EXIT_CODE = frozenset({time_limit.__exit__.__code__, _disarm.__code__})
"""Where a tick must not raise: a signal handled there would leave the timer running."""


def reraise_timeout(exc: BaseException) -> None:
    """Re-raise the time limit's error, also when sqlglot wrapped it (its tokenizer re-raises
    any error as ``TokenError(...) from e``): the limit ends the split, not one attempt, or each
    repair attempt would run on without a limit."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return
        if isinstance(seen, ParseTimeoutError):
            raise seen
        seen = seen.__cause__ or seen.__context__
