"""One job at a time sends from or writes a batch into a warehouse (``openlineage_claim``): two
emissions at once send each event once, after the extraction writing meanwhile; a lapsed claim
is taken over; a claim held too long stops the waiter with one line.

Real Delta tables, real threads sharing one SparkSession (as two jobs share a warehouse), the
real http transport against the test collector.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from support.collector import Collector
from support.emit_rows import EXPECTED_EVENTS
from support.emit_tables import http_settings

from lineage_udfs.spark.openlineage.emission import EmitSummary, emit_openlineage
from lineage_udfs.spark.storage import claim as claims
from lineage_udfs.spark.storage.claim import (
    CLAIM_TABLE,
    EMISSION,
    WRITE,
    ClaimTimeoutError,
    current_holder,
    warehouse_claim,
)
from lineage_udfs.spark.storage.tables import LineageTables

WAITING = "holds the warehouse claim; waiting for it"


def _waiting(caplog: pytest.LogCaptureFixture) -> int:
    return sum(WAITING in r.getMessage() for r in caplog.records)


def _until(condition: Callable[[], bool], what: str, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_two_emissions_at_once_send_every_event_once(
    spark: SparkSession,
    tables: LineageTables,
    collector: Collector,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="lineage_udfs")
    settings = http_settings(tables, collector, tmp_path / "spool")
    with ThreadPoolExecutor(max_workers=2) as pool:
        # both plan from the same (empty) watermark while another emission holds the claim,
        # then race for it when it is released: the race two jobs at once run
        with warehouse_claim(tables, WRITE, wait_seconds=60):  # an extraction writing
            running: list[Future[EmitSummary]] = [
                pool.submit(emit_openlineage, spark, settings) for _ in range(2)
            ]
            _until(lambda: _waiting(caplog) >= 2, "both emissions to wait for the claim")
            assert not collector.events
        summaries = [f.result(timeout=300) for f in running]

    per_run = Counter(e["run"]["runId"] + e["eventType"] for e in collector.events)
    assert len(collector.events) == EXPECTED_EVENTS, per_run
    assert set(per_run.values()) == {1}, "an event was sent twice"
    emitted = sorted(s.counts.emitted for s in summaries)
    assert emitted == [0, EXPECTED_EVENTS], summaries
    assert any("planning again" in r.getMessage() for r in caplog.records)
    rows = tables.read("openlineage_emissions").collect()
    assert [r.status for r in rows] == ["succeeded"]
    holder = current_holder(tables)
    assert holder is not None and holder.released and holder.free

    # nothing new: no claim is taken, no table gets a version
    versions = {t: tables.latest_version(t) for t in (CLAIM_TABLE, "openlineage_emissions")}
    again = emit_openlineage(spark, settings)
    assert again.counts.emitted == 0 and len(collector.events) == EXPECTED_EVENTS
    assert {t: tables.latest_version(t) for t in versions} == versions


def test_two_claims_at_once_give_it_to_one(tables: LineageTables) -> None:
    barrier = threading.Barrier(2)
    order: list[str] = []

    def claim(name: str) -> bool:
        barrier.wait()
        with warehouse_claim(tables, EMISSION, wait_seconds=120, poll_seconds=0.5) as held:
            order.append(f"{name} in")
            time.sleep(3)  # longer than a claim takes: the other one must still be waiting
            order.append(f"{name} out")
            return held.waited

    with ThreadPoolExecutor(max_workers=2) as pool:
        waited = list(pool.map(claim, ["a", "b"]))
    assert sorted(waited) == [False, True]
    first = order[0].split()[0]
    second = "b" if first == "a" else "a"
    assert order == [f"{first} in", f"{first} out", f"{second} in", f"{second} out"]


def test_a_lapsed_claim_is_taken_over(
    tables: LineageTables, caplog: pytest.LogCaptureFixture
) -> None:
    # a holder whose driver died: claimed with a short lease, never renewed or released
    dead = claims._acquire(tables, EMISSION, wait_seconds=5, lease_seconds=15, poll_seconds=0.5)
    holder = current_holder(tables)
    assert holder is not None and holder.holder == dead.holder and not holder.free
    caplog.set_level(logging.INFO, logger="lineage_udfs")
    started = time.monotonic()
    with warehouse_claim(tables, EMISSION, wait_seconds=60, poll_seconds=0.5) as taken:
        assert taken.waited and time.monotonic() - started >= 1
        assert current_holder(tables).holder == taken.holder  # type: ignore[union-attr]
    assert any("lapsed without release" in r.getMessage() for r in caplog.records)


def test_a_claim_held_too_long_stops_the_waiter_with_one_line(tables: LineageTables) -> None:
    with warehouse_claim(tables, EMISSION, wait_seconds=5) as held:
        with (
            pytest.raises(ClaimTimeoutError) as stopped,
            warehouse_claim(tables, EMISSION, wait_seconds=2, poll_seconds=0.5),
        ):
            raise AssertionError("the claim was given twice")
        message = str(stopped.value)
        assert "\n" not in message
        assert "openlineage.claim_wait_seconds=2" in message and held.holder[:12] in message
        assert current_holder(tables).holder == held.holder  # type: ignore[union-attr]


def test_the_holder_renews_its_lease_while_it_sends(tables: LineageTables) -> None:
    expiries: set[Any] = set()
    deadline = time.monotonic() + 180
    with warehouse_claim(
        tables, EMISSION, wait_seconds=5, lease_seconds=60, renew_seconds=0.5
    ) as held:
        while len(expiries) < 3:  # two renewals seen
            assert time.monotonic() < deadline, expiries
            row = tables.read(CLAIM_TABLE).first()
            assert row["holder"] == held.holder and row["released_at"] is None
            expiries.add(row["expires_at"])
        assert not current_holder(tables).free  # type: ignore[union-attr]
    holder = current_holder(tables)
    assert holder is not None and holder.released and holder.free
