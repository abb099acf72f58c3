"""Spark emission end to end: Delta tables -> executors -> http collector, or back to the
driver -> its spool / a file -> replay."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.transport.file import FileTransport
from pyspark.sql import SparkSession
from support.collector import Collector
from support.emit_rows import EDGES, EXPECTED_EVENTS, PARSED, QUERIES, SNOW

from lineage_udfs.emit.spool import EmitCounts, Spool, SpoolWriter
from lineage_udfs.settings import JobSettings, SinkSettings
from lineage_udfs.spark.openlineage.emission import (
    _emit_partition,
    emission_rows,
    emit_openlineage,
    replay_spool,
)
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables


def _write(spark: SparkSession, tables: LineageTables, name: str, rows: list[dict]) -> None:
    schema = TABLES[name].schema
    data = [tuple(r.get(f) for f in schema.fieldNames()) for r in rows]
    _, path = tables.location(name)
    spark.createDataFrame(data, schema).write.format("delta").mode("overwrite").save(path)


@pytest.fixture(scope="module")
def sink(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> SinkSettings:
    settings = SinkSettings(base_path=str(tmp_path_factory.mktemp("lineage")))
    tables = LineageTables(spark, settings)
    _write(spark, tables, "queries", QUERIES)
    _write(spark, tables, "parsed_statements", PARSED)
    _write(spark, tables, "column_lineage", EDGES)
    return settings


@pytest.fixture
def collector() -> Collector:
    server = Collector().start()
    yield server
    server.stop()


def _settings(
    sink: SinkSettings, url: str, spool: Path, max_bytes: int = 10_000_000
) -> JobSettings:
    # scope all: these tests share one sink and each expects every event (delivery, not scope)
    return JobSettings.model_validate(
        {
            "sink": sink.model_dump(),
            "openlineage": {
                "enabled": True,
                "scope": "all",
                "job_namespace": "lw-test",
                "transport": {
                    "type": "http",
                    "url": url,
                    "retries": 0,
                    "timeout": 2,
                    "api_key_env": "OL_TEST_KEY",
                },
                "spool": {"path": str(spool), "max_bytes": max_bytes},
            },
        }
    )


SECRETS = {"OL_TEST_KEY": "s3cr3t"}


def _assert_run_order(events: list[dict]) -> None:
    seen: dict[str, list[str]] = {}
    for event in events:
        seen.setdefault(event["run"]["runId"], []).append(event["eventType"])
    for states in seen.values():
        assert states[0] == "START" and len(states) == 2, states


def test_emit_openlineage_http_delivers_expected_events(
    spark: SparkSession, sink: SinkSettings, collector: Collector, tmp_path: Path
) -> None:
    summary = emit_openlineage(spark, _settings(sink, collector.url, tmp_path / "spool"), SECRETS)

    # q4 (a plain SELECT) is filtered out in Spark before the executors see it
    assert (summary.counts.rows, summary.counts.skipped) == (4, 0)
    assert summary.counts.emitted == EXPECTED_EVENTS == len(collector.events)
    assert (summary.counts.spooled, summary.counts.failed, summary.spool_pending) == (0, 0, 0)
    assert collector.rejected == []
    assert set(collector.auth_headers) == {"Bearer s3cr3t"}
    _assert_run_order(collector.events)
    jobs = Counter(e["job"]["name"] for e in collector.events)
    assert jobs == {
        "ctas.an.mart.d.fp_ctas": 4,
        "an.etl.load": 2,
        "an.etl.load.000_insert": 2,
        "an.etl.load.001_insert": 2,
        "unknown.fp_bad": 2,
    }
    ctas_complete = [
        e
        for e in collector.events
        if e["job"]["name"].startswith("ctas") and e["eventType"] != "START"
    ]
    assert sorted(e["eventType"] for e in ctas_complete) == ["COMPLETE", "FAIL"]
    output = ctas_complete[0]["outputs"][0]
    assert (output["namespace"], output["name"]) == (SNOW, "AN.MART.D")
    assert ctas_complete[0]["inputs"][0]["name"] == "AN.RAW.O"
    # the column edges in the events are exactly the Delta column_lineage rows of fp_ctas
    facet = output["facets"]["columnLineage"]
    emitted = {
        (f["name"], f["field"], column, t["type"], t["subtype"])
        for column, spec in facet["fields"].items()
        for f in spec["inputFields"]
        for t in f["transformations"]
    } | {
        (f["name"], f["field"], None, t["type"], t["subtype"])
        for f in facet["dataset"]
        for t in f["transformations"]
    }
    assert emitted == {
        ("AN.RAW.O", "a", "a", "DIRECT", "IDENTITY"),
        ("AN.RAW.O", "b", "b", "DIRECT", "TRANSFORMATION"),  # MASKED -> masking=true
        ("AN.RAW.O", "c", None, "INDIRECT", "FILTER"),
    }
    assert facet["fields"]["b"]["inputFields"][0]["transformations"][0]["masking"] is True
    bad = [e for e in collector.events if e["job"]["name"] == "unknown.fp_bad"]
    assert "extractionError" in bad[-1]["run"]["facets"]
    # the sql facet carries exactly the masked statement from parsed_statements
    sql = {
        e["job"]["facets"]["sql"]["query"] for e in collector.events if "sql" in e["job"]["facets"]
    }
    assert sql == {p["masked_sql"] for p in PARSED if p["fingerprint"] != "fp_sel"}


def test_emit_openlineage_collector_down_spools_then_replay_delivers_once_in_order(
    spark: SparkSession, sink: SinkSettings, collector: Collector, tmp_path: Path
) -> None:
    settings = _settings(sink, collector.url, tmp_path / "spool")
    collector.stop()

    down = emit_openlineage(spark, settings, SECRETS)
    assert (down.counts.emitted, down.counts.spooled) == (0, EXPECTED_EVENTS)
    assert (down.counts.overflowed, down.counts.failed) == (0, 0)
    assert down.spool_pending == EXPECTED_EVENTS

    collector.fail_with = 503  # back, but unhealthy: replay keeps everything
    collector.start()
    assert replay_spool(settings, SECRETS).delivered == 0
    collector.fail_with = None

    replayed = replay_spool(settings, SECRETS)
    assert (replayed.delivered, replayed.pending, replayed.failed) == (EXPECTED_EVENTS, 0, False)
    assert len(collector.events) == EXPECTED_EVENTS
    assert len({(e["run"]["runId"], e["eventType"]) for e in collector.events}) == EXPECTED_EVENTS
    _assert_run_order(collector.events)
    assert replay_spool(settings, SECRETS).delivered == 0  # nothing delivered twice


def test_emit_openlineage_spool_overflow_is_counted(
    spark: SparkSession,
    sink: SinkSettings,
    collector: Collector,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    collector.stop()
    with caplog.at_level(logging.WARNING, logger="lineage_udfs"):
        summary = emit_openlineage(
            spark, _settings(sink, collector.url, tmp_path / "spool", max_bytes=6000), SECRETS
        )
    assert summary.counts.spooled + summary.counts.overflowed == EXPECTED_EVENTS
    assert summary.counts.overflowed > 0
    # a full spool is one WARNING with the count (the events are re-emitted next time)
    full = [r for r in caplog.records if "spool full" in r.getMessage()]
    assert [r.levelname for r in full] == ["WARNING"], full
    assert f"{summary.counts.overflowed} events not spooled" in full[0].getMessage()
    assert summary.spool_pending == summary.counts.spooled
    assert sum(p.stat().st_size for p in (tmp_path / "spool").glob("*.jsonl")) <= 6000


def _recorded_writers(monkeypatch: pytest.MonkeyPatch) -> list[SpoolWriter]:
    """Every spool writer opened in this process (the driver); a Python worker of an executor
    is another process, where the patch does not apply."""
    opened: list[SpoolWriter] = []
    original = Spool.writer

    def writer(self: Spool, writer_id: str) -> SpoolWriter:
        opened.append(original(self, writer_id))
        return opened[-1]

    monkeypatch.setattr(Spool, "writer", writer)
    return opened


def test_emit_partition_hands_undelivered_events_back_instead_of_spooling(
    spark: SparkSession, sink: SinkSettings, collector: Collector, tmp_path: Path
) -> None:
    """What one executor task does with the collector down: nothing on its own disk; the
    prepared events, in order, in its results."""
    settings = _settings(sink, collector.url, tmp_path / "spool")
    rows = emission_rows(LineageTables(spark, sink), settings.openlineage).collect()
    collector.stop()

    records = list(_emit_partition(settings.openlineage, SECRETS, False)(3, iter(rows)))

    assert not (tmp_path / "spool").exists() or not list((tmp_path / "spool").iterdir())
    events = [json.loads(r[2]) for r in records if r[0] == "event"]
    assert {r[1] for r in records} == {3}
    assert len(events) == EXPECTED_EVENTS
    _assert_run_order(events)
    (done,) = [r for r in records if r[0] == "done"]
    counts = EmitCounts.from_tuple(done[2])
    assert (counts.rows, counts.emitted, counts.spooled, counts.failed) == (4, 0, 0, 0)


def test_emit_openlineage_collector_down_spools_on_the_driver(
    spark: SparkSession,
    sink: SinkSettings,
    collector: Collector,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened = _recorded_writers(monkeypatch)
    settings = _settings(sink, collector.url, tmp_path / "spool")
    collector.stop()

    down = emit_openlineage(spark, settings, SECRETS)

    assert down.counts.spooled == EXPECTED_EVENTS == down.spool_pending
    assert sum(w.written for w in opened) == EXPECTED_EVENTS  # every one from the driver
    spooled = [
        json.loads(line)
        for segment in Spool(tmp_path / "spool", 10_000_000).segments()
        for line in segment.read_text("utf-8").splitlines()
    ]
    assert len(spooled) == EXPECTED_EVENTS
    _assert_run_order(spooled)


@pytest.mark.parametrize("transport", ["file", "composite"])
def test_emit_openlineage_file_transport_writes_from_the_driver(
    spark: SparkSession,
    sink: SinkSettings,
    collector: Collector,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    transport: str,
) -> None:
    written: list[Any] = []
    original = FileTransport.emit

    def emit(self: FileTransport, event: Any) -> None:
        written.append(event)
        original(self, event)

    monkeypatch.setattr(FileTransport, "emit", emit)  # in this process (the driver) only
    events_file = tmp_path / "events.jsonl"
    as_file = {"type": "file", "log_file_path": str(events_file), "append": True}
    http = {"type": "http", "url": collector.url, "retries": 0, "timeout": 2}
    settings = JobSettings.model_validate(
        {
            "sink": sink.model_dump(),
            "openlineage": {
                "enabled": True,
                "scope": "all",
                "job_namespace": "lw-test",
                "transport": as_file
                if transport == "file"
                else {"type": "composite", "transports": [http, as_file]},
                "spool": {"path": str(tmp_path / "spool")},
            },
        }
    )

    summary = emit_openlineage(spark, settings)

    assert summary.counts.emitted == EXPECTED_EVENTS == len(written)
    events = [json.loads(line) for line in events_file.read_text("utf-8").splitlines()]
    assert len(events) == EXPECTED_EVENTS
    _assert_run_order(events)
    if transport == "composite":
        assert sorted(map(_canonical, collector.events)) == sorted(map(_canonical, events))


def _canonical(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=True)
