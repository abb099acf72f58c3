"""Independent Spark actions run at once from driver threads.

A small run is many small Spark jobs, each mostly driver latency (planning, scheduling, a
Delta commit) with the cores idle in between; independent ones (writes to different tables,
derivations that share only their inputs) finish sooner side by side. Spark schedules jobs
from several threads of one application; a large job still gets the cores it can use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

MAX_THREADS = 4
"""Actions run at once at most: a few hide the latency of small jobs; more only queue."""


def run_concurrently(actions: Sequence[Callable[[], T]], threads: int = MAX_THREADS) -> list[T]:
    """Run ``actions`` at once (at most ``threads`` at a time); their results in order.

    Every action runs to its end, even when another fails (a write is not cut off in the
    middle of a commit); then the first failure, in the order of ``actions``, is raised.
    """
    if len(actions) <= 1 or threads <= 1:
        return [action() for action in actions]
    with ThreadPoolExecutor(max_workers=min(threads, len(actions))) as pool:
        futures = [pool.submit(action) for action in actions]
        errors = [f.exception() for f in futures]  # waits for every action
    for error in errors:
        if error is not None:
            raise error
    return [f.result() for f in futures]


@contextmanager
def in_background(action: Callable[[], T]) -> Iterator[Future[T]]:
    """Run ``action`` in a thread while the block runs; leaving the block waits for it (also
    when the block raises: a background write is not cut off in the middle of a commit)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(action)
