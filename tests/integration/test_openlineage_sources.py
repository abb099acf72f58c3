"""OpenLineage RunEvents as a source from real services: a Kafka topic (Spark's batch Kafka
source, offsets per partition in ``source_state``) and Marquez's events API (paged by event
time). For each: the events become edges, a bad one is quarantined with its reason, a rerun
changes nothing, and a second run reads only the events that arrived since."""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
from services import Kafka, Marquez, free_port
from support.ol_events import dataset, run_event

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import IdentitySettings, JobSettings, SinkSettings, SourceSettings
from lineage_udfs.sources.ol_kafka import topic_offsets
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.tables import LineageTables

COMPARED = ("openlineage_events", "table_lineage", "column_lineage", "quarantine", "source_state")
VOLATILE = {"openlineage_events": "run_id_read", "source_state": "committed_at"}

RAW = dataset("file", "/wh/raw.db/orders", table="raw.orders")
CLEAN = dataset(
    "file",
    "/wh/clean/orders",
    columns={"id": [("file", "/wh/raw.db/orders", "id", "DIRECT", "IDENTITY")]},
)
MART = dataset("warehouse", "mart.daily")


def _snapshot(tables: LineageTables) -> dict[str, list[str]]:
    out = {}
    for table in COMPARED:
        frame = tables.read(table)
        if table in VOLATILE:
            frame = frame.drop(VOLATILE[table])
        out[table] = sorted(repr(r) for r in frame.collect())
    return out


def _edges(tables: LineageTables) -> dict[tuple[str, str, str], int]:
    return {
        (r.source_table, r.target_table, r.object_name): r.occurrences
        for r in tables.read("table_lineage").collect()
    }


def _settings(source: SourceSettings, base: Path) -> JobSettings:
    # identity off: no test here reads dataset_aliases (symlinks: tests/spark/test_dataset_aliases)
    return JobSettings(
        sources=[source],
        sink=SinkSettings(base_path=str(base)),
        identity=IdentitySettings(enabled=False),
    )


def _produce(bootstrap: str, topic: str, messages: list[tuple[int, str | None]]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, value in messages:
        producer.produce(topic, value=value, partition=partition)
    assert producer.flush(30) == 0


def _create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.create_topics([NewTopic(topic, num_partitions=partitions)]).values()
    future.result(30)
    deadline = time.monotonic() + 30
    while len(admin.list_topics(topic, timeout=10).topics[topic].partitions) < partitions:
        assert time.monotonic() < deadline, f"topic {topic} not ready"
        time.sleep(0.2)


def _message(job: str, at: str, inputs: list[Any], outputs: list[Any], **kw: Any) -> str:
    return json.dumps(run_event(job, at, inputs, outputs, **kw))


def test_kafka_topic_as_source_incremental_by_offsets_with_sasl(
    spark: Any, kafka: Kafka, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Read through the broker's SASL listener, the password from the environment only."""
    topic = "openlineage.source"
    _create_topic(kafka.bootstrap, topic, partitions=2)
    _produce(
        kafka.bootstrap,
        topic,
        [
            (0, _message("etl.clean", "2026-11-01T01:00:00Z", [RAW], [CLEAN], event_type="START")),
            (0, _message("etl.clean", "2026-11-01T01:05:00Z", [RAW], [CLEAN])),
            (1, "{broken"),
            (1, None),  # a tombstone: no event, not read
            (1, _message("etl.daily", "2026-11-01T02:00:00Z", [CLEAN], [MART])),
        ],
    )
    source = SourceSettings(
        name="ol_topic",
        format="openlineage",
        kafka={
            "bootstrap_servers": kafka.sasl_bootstrap,
            "topic": topic,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl": {"mechanism": "PLAIN", "username": "lineage", "password_env": "LW_KAFKA_PW"},
            "timeout_seconds": 30,
        },
    )
    settings = _settings(source, tmp_path / "wh")
    environ = {"LW_KAFKA_PW": kafka.sasl_password}
    wrong = f"not-{kafka.sasl_password}"
    # every logger at DEBUG but py4j's, which the job quiets (logging_setup): its DEBUG lines
    # echo the arguments of every call into the JVM
    caplog.set_level(logging.WARNING, logger="py4j")
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(InputError) as refused:  # what a run with the wrong password stops on
            topic_offsets(spark, source, wrong)
        first = extract(spark, settings, environ=environ)
    message = str(refused.value)
    assert message.startswith("kafka source 'ol_topic' (kafka://127.0.0.1:")
    assert "SaslAuthenticationException" in message and "\n" not in message
    assert first.openlineage is not None
    assert (first.openlineage.lines_read, first.openlineage.events) == (4, 3)
    assert first.openlineage.quarantined == 1
    tables = LineageTables(spark, settings.sink)
    assert _edges(tables) == {
        ("file:/wh/raw.db/orders", "file:/wh/clean/orders", "spark/etl.clean"): 1,
        ("file:/wh/clean/orders", "mart.daily", "spark/etl.daily"): 1,
    }
    assert {
        (r.source_column, r.target_column) for r in tables.read("column_lineage").collect()
    } == {("id", "id")}
    (bad,) = tables.read("quarantine").collect()
    assert bad.reason.startswith("openlineage event: not JSON: ")
    assert bad.source_file == f"ol_topic: {topic}-1@0"
    offsets = {r.state_key: r.state_value for r in tables.read("source_state").collect()}
    assert offsets == {f"{topic}:0": "2", f"{topic}:1": "3"}
    # the password is in no log line, error or table (lineage_runs keeps the run's settings)
    kept = [caplog.text, message]
    for table in ("lineage_runs", "source_state", "openlineage_events", "quarantine"):
        kept.extend(repr(r) for r in tables.read(table).collect())
    assert len(tables.read("lineage_runs").collect()) == 1
    assert not [text for text in kept if kafka.sasl_password in text or wrong in text]

    before = _snapshot(tables)
    again = extract(spark, settings, environ=environ)  # nothing new on the topic
    assert again.openlineage is None or again.openlineage.lines_read == 0
    assert _snapshot(tables) == before

    _produce(
        kafka.bootstrap, topic, [(0, _message("etl.clean", "2026-11-02T01:05:00Z", [RAW], [CLEAN]))]
    )
    third = extract(spark, settings, environ=environ)
    assert third.openlineage is not None
    assert (third.openlineage.lines_read, third.openlineage.events) == (1, 1)
    assert third.openlineage.quarantined == 0
    clean = ("file:/wh/raw.db/orders", "file:/wh/clean/orders", "spark/etl.clean")
    assert _edges(tables)[clean] == 2
    offsets = {r.state_key: r.state_value for r in tables.read("source_state").collect()}
    assert offsets == {f"{topic}:0": "3", f"{topic}:1": "3"}


def test_kafka_source_errors_are_one_line(spark: Any, kafka: Kafka) -> None:
    def offsets(servers: str, topic: str) -> str:
        source = SourceSettings(
            name="t",
            format="openlineage",
            kafka={"bootstrap_servers": servers, "topic": topic, "timeout_seconds": 3},
        )
        with pytest.raises(InputError) as error:
            topic_offsets(spark, source, None)
        return str(error.value)

    missing = offsets(kafka.bootstrap, "no.such.topic")
    assert missing == (
        f"kafka source 't' (kafka://{kafka.bootstrap}/no.such.topic): org.apache.kafka.common."
        "errors.UnknownTopicOrPartitionException: This server does not host this topic-partition."
    )
    closed = f"127.0.0.1:{free_port()}"
    unreachable = offsets(closed, "t")
    assert unreachable.startswith(
        f"kafka source 't' (kafka://{closed}/t): no answer from the brokers within 3 s ("
    )
    assert "TimeoutException" in unreachable and "\n" not in unreachable


def _post(marquez: Marquez, event: dict[str, Any]) -> None:
    response = requests.post(f"{marquez.url}/api/v1/lineage", json=event, timeout=30)
    assert response.status_code == 201, (response.status_code, response.text[:300])


def test_marquez_events_api_as_source_incremental_by_event_time(
    spark: Any, marquez: Marquez, tmp_path: Path
) -> None:
    namespace = "ol-source-it"

    def event(
        job: str, at: str, inputs: list[Any], outputs: list[Any], **kw: Any
    ) -> dict[str, Any]:
        found = run_event(job, at, inputs, outputs, **kw)
        found["job"]["namespace"] = namespace
        return found

    # a run reads the events stamped before it started: these lie in the past hour
    base = datetime.now(UTC) - timedelta(hours=1)

    def at(minutes: int) -> str:
        return (base + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    # Marquez keeps any eventType; the OpenLineage schema allows six
    typo = {**event("etl.typo", at(1), [RAW], [CLEAN]), "eventType": "FINISHED"}
    for posted in (
        event("etl.clean", at(2), [RAW], [CLEAN], event_type="START"),
        event("etl.clean", at(3), [RAW], [CLEAN]),
        event("etl.daily", at(4), [CLEAN], [MART]),
        typo,
    ):
        _post(marquez, posted)
    source = SourceSettings(
        name="marquez",
        format="openlineage",
        # small pages: the four events take several requests
        marquez={"url": marquez.url, "page_size": 2},
    )
    settings = _settings(source, tmp_path / "wh")
    first = extract(spark, settings)
    tables = LineageTables(spark, settings.sink)
    ours = {
        (r.job, r.event_type)
        for r in tables.read("openlineage_events").collect()
        if r.job.startswith(f"{namespace}/")
    }
    assert ours == {
        (f"{namespace}/etl.clean", "START"),
        (f"{namespace}/etl.clean", "COMPLETE"),
        (f"{namespace}/etl.daily", "COMPLETE"),
    }
    assert first.openlineage is not None and first.openlineage.quarantined >= 1
    edges = {k: v for k, v in _edges(tables).items() if k[2].startswith(f"{namespace}/")}
    assert edges == {
        ("file:/wh/raw.db/orders", "file:/wh/clean/orders", f"{namespace}/etl.clean"): 1,
        ("file:/wh/clean/orders", "mart.daily", f"{namespace}/etl.daily"): 1,
    }
    reasons = [
        r.reason for r in tables.read("quarantine").collect() if "FINISHED" in (r.reason or "")
    ]
    assert reasons == [
        "openlineage event: not an OpenLineage RunEvent: eventType: 'FINISHED' is not one of"
        " ['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER']"
    ]

    before = _snapshot(tables)
    again = extract(spark, settings)  # nothing new in Marquez
    assert _snapshot(tables) == before
    assert again.openlineage is None or again.openlineage.events == 0

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    _post(marquez, event("etl.clean", now, [RAW], [CLEAN]))
    third = extract(spark, settings)
    assert third.openlineage is not None
    assert (third.openlineage.lines_read, third.openlineage.events) == (1, 1)
    edges = {k: v for k, v in _edges(tables).items() if k[2].startswith(f"{namespace}/")}
    assert edges[("file:/wh/raw.db/orders", "file:/wh/clean/orders", f"{namespace}/etl.clean")] == 2
