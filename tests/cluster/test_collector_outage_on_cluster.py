"""The collector down for one run on the cluster, up for the next: every event reaches it
exactly once, the events of a clean run, and the undelivered ones were spooled by the driver.

The collector is the test's own (:class:`support.collector.Collector`, an HTTP server in this
process on 127.0.0.1), stopped and started on the same port. The spool folder is the driver's
only: the executors' Python processes may not write under it (:func:`sample.driver_only`), as
they could not reach the driver's disk on a cluster of several machines; an executor that
spooled would fail its task and record the attempt.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.collector import Collector

from .sample import SampleRun, driver_only, run_sample, sample_overlay
from .spark_submit import ROOT
from .standalone import StandaloneCluster

SUMMARY = re.compile(
    r"openlineage (?P<status>\w+) \((?P<scope>\w+)\): (?P<rows>\d+) runs, (?P<emitted>\d+) events"
    r" emitted, (?P<spooled>\d+) spooled, (?P<lost>\d+) lost, (?P<replayed>\d+) replayed,"
    r" (?P<pending>\d+) pending"
)


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector().start()
    try:
        yield server
    finally:
        server.stop()


def _summary(run: SampleRun) -> dict[str, Any]:
    found = SUMMARY.findall(run.submitted.output)
    assert found, run.submitted.output[-3000:]
    status, scope, *numbers = found[-1]
    keys = ("rows", "emitted", "spooled", "lost", "replayed", "pending")
    return {"status": status, "scope": scope, **dict(zip(keys, map(int, numbers), strict=True))}


def _canonical(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=True)


def test_collector_down_for_one_run_then_the_next_run_delivers_every_event_once(
    cluster: StandaloneCluster,
    sample_local: SampleRun,
    collector: Collector,
    tmp_path: Path,
) -> None:
    clean = sample_local.events()
    assert clean, "the clean local run wrote the sample's events"
    cwd = tmp_path / "outage"
    cwd.mkdir()
    spool = cwd / "driver-disk" / "spool"
    overlay = sample_overlay(
        cwd,
        # the emission is what this test is about: it reads no table of the graph or the
        # activity stage (it runs beside them), so both are off
        graph={"enabled": False},
        activity={"enabled": False},
        openlineage={
            "enabled": True,
            "transport": {"type": "http", "url": collector.url, "retries": 0, "timeout": 2},
            "spool": {"path": str(spool)},
        },
    )
    confs = driver_only(cwd, spool.parent)
    base = ROOT / "conf" / "base.yaml"  # conf/local.yaml's file transport would merge into http
    collector.stop()  # down: nothing listens on its port

    down = run_sample(cluster.master_url, cwd, overlay=overlay, base=base, confs=confs)

    assert _summary(down) == {
        "status": "succeeded",
        "scope": "full",
        "rows": _summary(sample_local)["rows"],
        "emitted": 0,
        "spooled": len(clean),
        "lost": 0,
        "replayed": 0,
        "pending": len(clean),
    }
    spooled = [
        json.loads(line)
        for segment in sorted(spool.glob("*.jsonl"))
        for line in segment.read_text("utf-8").splitlines()
    ]
    assert sorted(map(_canonical, spooled)) == sorted(map(_canonical, clean))
    assert down.executor_writes() == []  # every spooled event was written by the driver
    assert collector.events == []

    collector.start()  # up again, on the same port
    up = run_sample(cluster.master_url, cwd, overlay=overlay, base=base, confs=confs)

    assert _summary(up) == {
        "status": "succeeded",
        "scope": "incremental",
        "rows": 0,
        "emitted": 0,
        "spooled": 0,
        "lost": 0,
        "replayed": len(clean),
        "pending": 0,
    }
    received = collector.events
    assert collector.rejected == []
    keys = Counter((e["run"]["runId"], e["eventType"]) for e in received)
    assert set(keys.values()) == {1}  # nothing twice
    assert sorted(map(_canonical, received)) == sorted(map(_canonical, clean))  # nothing missing
    first: dict[str, str] = {}
    for event in received:  # in order: each run's START before its terminal event
        first.setdefault(event["run"]["runId"], event["eventType"])
    assert set(first.values()) == {"START"}
    assert up.executor_writes() == []
    assert not list(spool.glob("*.jsonl"))
