"""Root conftest: everything under tests/spark gets the ``spark`` marker.

``pytest -m "not spark"`` is the fast loop; CI (``make test``) runs everything. A ``pytestmark``
in a conftest would not propagate to the test modules, hence the collection hook.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineage_udfs.core.timeout import ParseTimeoutError

SPARK_TESTS = Path(__file__).parent / "spark"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:  # also sees doctest items from lineage_udfs/core
        if SPARK_TESTS in item.path.parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture
def lost_ticks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Exceptions Python could not raise during the test, kept instead of reported.

    A tick handled in a finalizer loses its exception, by design (``time_limit`` fires again).
    pytest's own hook formats each such loss, reading source files, and on a slow machine the
    next tick (every ``RETRY_SECONDS``) can land inside that formatting: the hook then fails,
    and the test with it, although the limit held (seen in a full test run, the unit tests
    running after the Spark ones in one process). Here they are only kept; after the test each
    one must come from a tick. For tests that parse under a tiny time limit."""
    lost: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lost.append)
    yield lost
    assert all(_from_a_tick(u.exc_value) for u in lost), lost


def _from_a_tick(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a ParseTimeoutError or was raised while handling one (a finalizer
    that wraps what interrupted it, as py4j's may in the same test process as Spark's)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ParseTimeoutError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
