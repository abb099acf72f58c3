"""Kafka round trip: the sample's events through openlineage-python's KafkaTransport to a real
broker, consumed back with confluent-kafka and compared event for event with what the file
transport writes for the same lineage; then the broker is stopped: events spool, and the replay
delivers them with the same messages and keys."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from expected import with_openlineage
from services import Kafka

from lineage_udfs.spark.openlineage.emission import emit_openlineage, replay_spool


def _canonical(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=True)


def _expected_key(event: dict[str, Any]) -> str:
    """openlineage-python's rule: the root parent's job, else the parent's job, else the job."""
    parent = (event["run"].get("facets") or {}).get("parent")
    job = event["job"]
    if parent:
        job = (parent.get("root") or {}).get("job") or parent["job"]
    return f"run:{job['namespace']}/{job['name']}"


def _consume(bootstrap: str, topic: str, count: int, seconds: float = 120) -> list[tuple[str, str]]:
    """The first ``count`` messages of ``topic`` as (key, value), in log order."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"lw-it-{time.time_ns()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    messages: list[tuple[str, str]] = []
    deadline = time.monotonic() + seconds
    try:
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            messages.append((message.key().decode(), message.value().decode()))
        extra = consumer.poll(3.0)  # nothing beyond what was sent
        assert extra is None, extra.value()
    finally:
        consumer.close()
    return messages


def _check(messages: list[tuple[str, str]], file_events: list[dict[str, Any]]) -> None:
    received = [json.loads(value) for _, value in messages]
    assert sorted(map(_canonical, received)) == sorted(map(_canonical, file_events))
    for (key, _), event in zip(messages, received, strict=True):
        assert key == _expected_key(event)
    position = {(_e["run"]["runId"], _e["eventType"]): i for i, _e in enumerate(received)}
    for (run_id, kind), index in position.items():
        if kind != "START":
            assert position[(run_id, "START")] < index  # one partition: log order = send order


def test_kafka_round_trip_equals_file_events_then_spool_and_replay(
    spark: Any, sample_settings: Any, kafka: Kafka, tmp_path: Path
) -> None:
    events_file = tmp_path / "events.jsonl"
    as_file = with_openlineage(
        sample_settings,
        transport={"type": "file", "log_file_path": str(events_file), "append": True},
        scope="all",
        spool={"path": str(tmp_path / "file-spool")},
    )
    written = emit_openlineage(spark, as_file)
    file_events = [json.loads(line) for line in events_file.read_text("utf-8").splitlines()]
    assert written.counts.emitted == len(file_events) > 0

    topic = "openlineage.sample"
    as_kafka = with_openlineage(
        sample_settings,
        transport={
            "type": "kafka",
            "topic": topic,
            "config": {
                "bootstrap.servers": kafka.bootstrap,
                "acks": "all",
                "message.timeout.ms": "5000",
                "log_level": "2",  # librdkafka logs each refused connection while it is down
            },
        },
        scope="all",
        spool={"path": str(tmp_path / "kafka-spool")},
    )
    sent = emit_openlineage(spark, as_kafka)
    assert (sent.counts.emitted, sent.counts.failed, sent.counts.spooled) == (
        len(file_events),
        0,
        0,
    )
    first = _consume(kafka.bootstrap, topic, len(file_events))
    _check(first, file_events)

    # broker down: every event is spooled (none lost, none half-sent), then replayed
    pid = kafka.kill()
    down = emit_openlineage(spark, as_kafka)
    assert (down.counts.emitted, down.counts.failed) == (0, 0)
    assert down.counts.spooled == len(file_events) == down.spool_pending
    kafka.restart()
    replayed = replay_spool(as_kafka)
    assert (replayed.delivered, replayed.pending, replayed.rejected) == (len(file_events), 0, 0)
    everything = _consume(kafka.bootstrap, topic, 2 * len(file_events))
    _check(everything[len(first) :], file_events)

    keys = {key for key, _ in first}
    print(
        f"\nKafka round trip (sample): messages={len(first)} = file events={len(file_events)} "
        f"keys={len(keys)}; broker pid {pid} stopped: spooled={down.counts.spooled} "
        f"replayed={replayed.delivered} pending after replay={replayed.pending}"
    )
