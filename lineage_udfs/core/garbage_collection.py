"""Python's cyclic garbage collector while a statement is parsed.

A sqlglot tree is a cycle (each node points at its parent and its children), so it is freed by
the cyclic collector, not by reference counting, and a parse allocates thousands of such nodes.
At CPython's default first threshold (a young collection every 700 net allocations) a large
tree is collected many times while it is still being built: its nodes survive into the older
generations, which are then collected again, all of it garbage a moment later. A higher first
threshold while each statement is parsed spares those collections at the same peak memory (the
statement's garbage goes in the first young collection after it).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 10_000
"""Net allocations between young collections while a statement is parsed (CPython: 700)."""


@contextmanager
def fewer_young_collections(threshold: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Raise the collector's first threshold to ``threshold`` for the block, then restore the
    process's thresholds. A process that already collects less often, or not at all, is left
    as it is.

    The setting is process-wide: another thread that allocates meanwhile sees it too (it only
    changes how often the collector runs, never what it frees).

    Examples:
        >>> import gc
        >>> before = gc.get_threshold()
        >>> with fewer_young_collections(50_000):
        ...     gc.get_threshold()[0]
        50000
        >>> gc.get_threshold() == before
        True
    """
    before = gc.get_threshold()
    if not gc.isenabled() or before[0] >= threshold:
        yield
        return
    gc.set_threshold(threshold, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
