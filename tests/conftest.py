"""Root conftest: everything under tests/spark gets the ``spark`` marker.

``pytest -m "not spark"`` is the fast loop; CI (``make test``) runs everything. A ``pytestmark``
in a conftest would not propagate to the test modules, hence the collection hook.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SPARK_TESTS = Path(__file__).parent / "spark"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:  # also sees doctest items from lineage_udfs/core
        if SPARK_TESTS in item.path.parents:
            item.add_marker(pytest.mark.spark)
