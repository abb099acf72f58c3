"""The engine slice: real Spark, real Delta, the real OpenLineage Spark listener jar.

Runs the hand-written statements of every kind and the sample log's statements once per test
session through ``bench/engine_diff.py`` and shares the outcomes with the tests.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import engine_diff  # noqa: E402


@pytest.fixture(scope="session")
def engine_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    stmts = engine_diff.collect(["handwritten", "sample"], per_group=0, tpc=0)
    outcomes, versions = engine_diff.run_all(stmts, workdir=tmp_path_factory.mktemp("engine"))
    return {
        "outcomes": outcomes,
        "summary": engine_diff.summarise(outcomes),
        "versions": versions,
    }
