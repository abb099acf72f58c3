"""The live PostgreSQL test starts its own server; Marquez and Kafka are not needed here."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest


@pytest.fixture(scope="session", autouse=True)
def services() -> Iterator[dict[str, Future[Any]]]:
    """No OpenLineage consumers for these tests (overrides the integration suite's fixture)."""
    yield {}
