"""Run the ``Examples:`` blocks of the core's public functions."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "lineage_udfs.core.dialects",
    "lineage_udfs.core.catalog",
    "lineage_udfs.core.tables",
    "lineage_udfs.core.columns",
    "lineage_udfs.core.statements",
    "lineage_udfs.core.script",
    "lineage_udfs.core.fallback",
    "lineage_udfs.core.timeout",
    "lineage_udfs.core.parser",
    "lineage_udfs.core.records",
    "lineage_udfs.core.collector",
    "lineage_udfs.evaluate",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
