"""Test folders that run only when their marker is asked for (``-m integration``, ``-m cluster``).

A ``pytestmark`` in a conftest would not reach the test modules, and a marker alone would let
``make test`` (``-m "not engine"``) collect them; hence one collection hook, shared.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def select_only_by_marker(
    config: pytest.Config, items: list[pytest.Item], folder: Path, marker: str
) -> None:
    """Mark every item under ``folder`` with ``marker``; unless the run's ``-m`` expression
    names the marker, deselect them (reported as deselected, not skipped)."""
    chosen = marker in (config.getoption("markexpr") or "")
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if folder in item.path.parents:
            item.add_marker(getattr(pytest.mark, marker))
            (kept if chosen else dropped).append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
