"""The parser collects young garbage less often while it parses, and leaves the process's
collector settings as it found them, whatever the parse's outcome."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import nullcontext

import pytest

from lineage_udfs.core.enums import ParseStatus
from lineage_udfs.core.garbage_collection import YOUNG_THRESHOLD, fewer_young_collections
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

WIDE = "INSERT INTO t SELECT " + ", ".join(f"upper(c{i}) AS d{i}" for i in range(400)) + " FROM s"
HEAVY = "INSERT INTO t " + " UNION ALL ".join(f"SELECT a{i} FROM s{i}" for i in range(1500))

CASES = [  # (text, options, status the parse ends with)
    (WIDE, ParserOptions(), ParseStatus.OK),
    ("INSERT INTO t SELEC a FROM s", ParserOptions(), ParseStatus.PARTIAL),  # fallback tiers
    ("", ParserOptions(), ParseStatus.SKIPPED),
]


@pytest.fixture
def thresholds_seen() -> Iterator[list[int]]:
    """The first threshold at the start of every young collection while the test runs."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 0:
            seen.append(gc.get_threshold()[0])

    before = gc.get_threshold()
    gc.set_threshold(700, *before[1:])  # CPython's default, whatever the runner set
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*before)


@pytest.fixture
def thresholds_in_calls() -> Iterator[list[int]]:
    """The first threshold at every Python function call while the test runs (a profile hook:
    unlike a collector callback it does not depend on how much the parse allocates)."""
    seen: list[int] = []

    def record(frame: object, event: str, arg: object) -> None:
        if event == "call":
            seen.append(gc.get_threshold()[0])

    before = gc.get_threshold()
    gc.set_threshold(700, *before[1:])  # CPython's default, whatever the runner set
    sys.setprofile(record)
    try:
        yield seen
    finally:
        sys.setprofile(None)
        gc.set_threshold(*before)


@pytest.mark.parametrize(("sql", "options", "status"), CASES)
def test_parse_raises_the_threshold_then_restores_it(
    thresholds_in_calls: list[int], sql: str, options: ParserOptions, status: ParseStatus
) -> None:
    parser = LineageParser(options)
    parser.parse(sql, dialect="spark")  # caches warm: the second parse is the one observed
    thresholds_in_calls.clear()
    result = parser.parse(sql, dialect="spark")
    during = list(thresholds_in_calls)
    assert gc.get_threshold()[0] == 700
    assert result.status == status
    if sql:
        # raised once the parse starts, kept while it runs, restored before it returns
        raised = [i for i, t in enumerate(during) if t == YOUNG_THRESHOLD]
        assert raised and len(raised) > len(during) / 2
        assert set(during[raised[0] : raised[-1] + 1]) == {YOUNG_THRESHOLD}


def test_a_wide_statement_sees_fewer_young_collections(thresholds_seen: list[int]) -> None:
    parser = LineageParser()
    parser.parse(WIDE, dialect="spark")  # built state
    counts = []
    for block in (fewer_young_collections, nullcontext):
        gc.collect()
        thresholds_seen.clear()
        with block():
            parser._parse(WIDE, "spark", None, None)
        counts.append(len(thresholds_seen))
    assert counts[0] * 5 < counts[1]


@pytest.mark.usefixtures("lost_ticks")
def test_restored_after_a_timed_out_parse() -> None:
    # (no collector callback here: the time limit's signal would be raised inside it)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, *before[1:])
        result = LineageParser(ParserOptions(timeout_seconds=0.01)).parse(HEAVY, dialect="spark")
        assert result.status in (ParseStatus.TIMEOUT, ParseStatus.PARTIAL)
        assert gc.get_threshold()[0] == 700
    finally:
        gc.set_threshold(*before)


def test_a_higher_or_disabled_setting_is_left_alone() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(YOUNG_THRESHOLD * 2, *before[1:])
        with fewer_young_collections():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD * 2
        gc.set_threshold(*before)
        gc.disable()
        with fewer_young_collections():
            assert gc.get_threshold() == before and not gc.isenabled()
    finally:
        gc.enable()
        gc.set_threshold(*before)


def test_restored_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(KeyError), fewer_young_collections(before[0] + 1):
        raise KeyError("x")
    assert gc.get_threshold() == before
