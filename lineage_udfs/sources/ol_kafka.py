"""OpenLineage RunEvents from a Kafka topic (``format: openlineage`` with ``kafka:``), one event
a message value, as openlineage-python's ``KafkaTransport`` and the Spark listener's ``kafka``
transport write them.

A run reads a fixed range of each partition with Spark's batch Kafka source, on the executors:
from the offsets committed in ``source_state`` (state key ``<topic>:<partition>``, value the next
offset to read) up to the end offsets the driver looked up when the run started. The range is
planned on the driver (:func:`plan_offsets`, pure): a partition without a committed offset (new,
or the first run) is read from its earliest offset; a committed offset below the earliest one
left (the topic's retention deleted messages before they were read) starts at the earliest, and
the lost offsets are counted and logged; a committed offset beyond the end (the topic was deleted
and created again) reads the partition from its start. The end offsets are committed with the
run's other watermarks, last (``extract.watermark``), so a run that fails reads the same range
again and the events are upserted onto the same identities.

The brokers' partitions and offsets come from Kafka's own Java ``Admin`` client in the driver's
JVM (the ``kafka-clients`` jar that Spark's Kafka source brings), with the same consumer
settings as the read. A SASL password is read from the environment variable
``kafka.sasl.password_env`` names and goes only into the ``sasl.jaas.config`` option, which Spark
redacts (``spark.redaction.regex`` matches its value) and Kafka's configuration logging hides;
error lines have it replaced by ``***``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import KafkaSettings, SaslSettings, SourceSettings
from lineage_udfs.sources.jdbc import PASSWORD_MASK, java_root_cause

if TYPE_CHECKING:  # the planning here runs without Spark (unit tests)
    from pyspark.sql import DataFrame, SparkSession

logger = logging.getLogger(__name__)

SPARK_KAFKA_PACKAGE = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"
"""Spark's Kafka source for ``spark.packages``. Maven Central as reached here serves no 4.1.4
build (the Spark of pyspark 4.1.4) and no 4.1.3 ``spark-token-provider-kafka``, so 4.1.1, the
newest 4.1 release whose dependencies all resolve (checked with pyspark 4.1.4 against a Kafka
4.1.1 broker: tests/integration/test_openlineage_sources.py)."""


_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


def state_key(topic: str, partition: int) -> str:
    """The ``source_state.state_key`` of a partition's offset.

    Examples:
        >>> state_key("openlineage.events", 3)
        'openlineage.events:3'
    """
    return f"{topic}:{partition}"


def committed_offsets(topic: str, state: Mapping[str, str]) -> dict[int, int]:
    """The committed next offsets of ``topic``'s partitions, from a source's ``source_state``
    rows (``state_key`` → ``state_value``); rows of another topic (the source was pointed at a
    new topic) are ignored.

    Examples:
        >>> committed_offsets("t", {"t:0": "12", "t:1": "0", "old:0": "99"})
        {0: 12, 1: 0}
    """
    found: dict[int, int] = {}
    for key, value in state.items():
        name, _, partition = key.rpartition(":")
        if name == topic and partition.isdigit():
            found[int(partition)] = int(value)
    return found


@dataclass(frozen=True)
class OffsetPlan:
    """The offsets one run reads of a topic, per partition: ``start`` inclusive, ``end``
    exclusive (the offset the next message will get when the run started).

    Attributes:
        topic: the topic.
        start: the first offset to read, per partition.
        end: the offset after the last one to read, per partition (committed after the run).
        lost: per partition, the offsets between the committed one and the earliest left
            (deleted by retention before any run read them).
        restarted: partitions whose committed offset lay beyond the end (read from the start).
    """

    topic: str
    start: dict[int, int]
    end: dict[int, int]
    lost: dict[int, int] = field(default_factory=dict)
    restarted: tuple[int, ...] = ()

    @property
    def to_read(self) -> int:
        """Offsets in the range (messages, less compacted ones and transaction markers)."""
        return sum(self.end[p] - self.start[p] for p in self.end)

    @property
    def partitions(self) -> list[int]:
        return sorted(self.end)

    def options(self) -> dict[str, str]:
        """``assign``, ``startingOffsets`` and ``endingOffsets`` of Spark's Kafka source: every
        partition the plan knows, so that one created meanwhile waits for the next run."""
        parts = self.partitions
        return {
            "assign": json.dumps({self.topic: parts}),
            "startingOffsets": json.dumps({self.topic: {str(p): self.start[p] for p in parts}}),
            "endingOffsets": json.dumps({self.topic: {str(p): self.end[p] for p in parts}}),
        }

    def state(self, committed: Mapping[int, int]) -> dict[str, str]:
        """The ``source_state`` rows to commit after the run: the end offset of each partition
        whose committed offset differs from it (a run with nothing new commits nothing)."""
        return {
            state_key(self.topic, p): str(self.end[p])
            for p in self.partitions
            if committed.get(p) != self.end[p]
        }


def plan_offsets(
    topic: str,
    committed: Mapping[int, int],
    earliest: Mapping[int, int],
    latest: Mapping[int, int],
) -> OffsetPlan:
    """What to read of each partition of ``topic`` (those in ``latest``).

    Args:
        topic: the topic.
        committed: the next offset to read per partition, as committed (may lack partitions).
        earliest: the earliest offset still in each partition.
        latest: the end offset of each partition (the next offset to be written).

    Examples:
        >>> plan = plan_offsets("t", {0: 5, 1: 2}, {0: 0, 1: 4, 2: 0}, {0: 9, 1: 6, 2: 3})
        >>> plan.start, plan.end, plan.lost, plan.to_read
        ({0: 5, 1: 4, 2: 0}, {0: 9, 1: 6, 2: 3}, {1: 2}, 9)
    """
    start: dict[int, int] = {}
    lost: dict[int, int] = {}
    restarted: list[int] = []
    for partition, end in sorted(latest.items()):
        first = earliest.get(partition, 0)
        offset = committed.get(partition)
        if offset is None:
            offset = first
        elif offset > end:
            restarted.append(partition)
            offset = first
        elif offset < first:
            lost[partition] = first - offset
            offset = first
        start[partition] = offset
    return OffsetPlan(topic, start, dict(sorted(latest.items())), lost, tuple(restarted))


def jaas_config(sasl: SaslSettings, password: str) -> str:
    """The ``sasl.jaas.config`` value of the Java client for ``sasl`` (quotes and backslashes
    in the username and password escaped).

    Examples:
        >>> from lineage_udfs.settings import SaslSettings
        >>> sasl = SaslSettings(mechanism="SCRAM-SHA-512", username="svc", password_env="P")
        >>> print(jaas_config(sasl, 'p"w').removeprefix("org.apache.kafka.common.security."))
        scram.ScramLoginModule required username="svc" password="p\\"w";
    """

    def quoted(value: str) -> str:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    module = _LOGIN_MODULES[sasl.mechanism]
    return f"{module} required username={quoted(sasl.username)} password={quoted(password)};"


def client_properties(kafka: KafkaSettings, password: str | None) -> dict[str, str]:
    """The Kafka consumer settings of a source, without Spark's ``kafka.`` prefix: the
    servers, the security protocol, SASL and the ``kafka.*`` entries of ``kafka.options``."""
    props = {
        key.removeprefix("kafka."): value
        for key, value in kafka.options.items()
        if key.startswith("kafka.")
    }
    props["bootstrap.servers"] = kafka.bootstrap_servers
    props["security.protocol"] = kafka.protocol
    if kafka.sasl is not None:
        if password is None:
            raise InputError(f"kafka SASL needs the password ({kafka.sasl.password_env})")
        props["sasl.mechanism"] = kafka.sasl.mechanism
        props["sasl.jaas.config"] = jaas_config(kafka.sasl, password)
    return props


def reader_options(kafka: KafkaSettings, password: str | None, plan: OffsetPlan) -> dict[str, str]:
    """Every option of Spark's batch Kafka read of ``plan``. ``failOnDataLoss`` is off: offsets
    that hold no message (compaction, transaction markers, messages deleted by retention
    between the planning and the read) are not an error; retention losses before the planning
    are counted in ``plan.lost``."""
    options = {k: v for k, v in kafka.options.items() if not k.startswith("kafka.")}
    options.update({f"kafka.{k}": v for k, v in client_properties(kafka, password).items()})
    options.update(plan.options())
    options["failOnDataLoss"] = "false"
    return options


def _error_line(exc: BaseException, password: str | None) -> str:
    line = java_root_cause(exc)
    return line.replace(password, PASSWORD_MASK) if password else line


def topic_offsets(
    spark: SparkSession, source: SourceSettings, password: str | None
) -> tuple[dict[int, int], dict[int, int]]:
    """The earliest and end offsets of every partition of the source's topic, from the
    brokers (Kafka's Java ``Admin`` client in the driver's JVM).

    Raises:
        InputError: the brokers cannot be reached in ``kafka.timeout_seconds``, the topic does
            not exist, or the client is not on the classpath (one line, no password).
    """
    kafka = source.kafka
    assert kafka is not None
    jvm: Any = spark.sparkContext._jvm
    where = f"kafka source {source.name!r} ({kafka.display})"
    props = client_properties(kafka, password)
    timeout_ms = str(int(kafka.timeout_seconds * 1000))
    props.setdefault("default.api.timeout.ms", timeout_ms)
    props.setdefault("request.timeout.ms", timeout_ms)
    try:
        admin_class = jvm.org.apache.kafka.clients.admin.Admin
        java_props = jvm.java.util.Properties()
        for key, value in props.items():
            java_props.setProperty(key, value)
        admin = admin_class.create(java_props)
    except Exception as exc:
        line = _error_line(exc, password)
        if "ClassNotFound" in line or "is not callable" in line or "JavaPackage" in line:
            line = (
                f"the Kafka client is not on the Spark classpath (add {SPARK_KAFKA_PACKAGE}"
                " to spark.packages)"
            )
        raise InputError(f"{where}: {line}") from None
    millis = jvm.java.util.concurrent.TimeUnit.MILLISECONDS
    try:
        topics = jvm.java.util.Collections.singletonList(kafka.topic)
        described = admin.describeTopics(topics).allTopicNames().get(int(timeout_ms), millis)
        partitions = [int(p.partition()) for p in described.get(kafka.topic).partitions()]
        found = []
        for spec in ("earliest", "latest"):
            request = jvm.java.util.HashMap()
            for partition in partitions:
                topic_partition = jvm.org.apache.kafka.common.TopicPartition(kafka.topic, partition)
                request.put(
                    topic_partition, getattr(jvm.org.apache.kafka.clients.admin.OffsetSpec, spec)()
                )
            level = kafka.options.get("kafka.isolation.level", "read_uncommitted").upper()
            options = jvm.org.apache.kafka.clients.admin.ListOffsetsOptions(
                jvm.org.apache.kafka.common.IsolationLevel.valueOf(level)
            )
            listed = admin.listOffsets(request, options).all().get(int(timeout_ms), millis)
            found.append(
                {
                    int(tp.partition()): int(info.offset())
                    for tp, info in ((tp, listed.get(tp)) for tp in listed.keySet())
                }
            )
    except Exception as exc:
        line = _error_line(exc, password)
        if "TimeoutException" in line:  # the client's own words may not name the wait
            line = f"no answer from the brokers within {kafka.timeout_seconds:g} s ({line})"
        raise InputError(f"{where}: {line}") from None
    finally:
        admin.close(jvm.java.time.Duration.ofSeconds(5))
    return found[0], found[1]


def read_kafka_events(
    spark: SparkSession, source: SourceSettings, plan: OffsetPlan, password: str | None
) -> DataFrame:
    """The messages of ``plan`` as the openlineage stage's lines: ``value`` (the message as
    UTF-8 text; empty and null values left out), ``source_file`` (``<topic>-<partition>@
    <offset>``) and ``event_time`` (the event's ``eventTime``, null where absent). Lazy: the
    executors read the range when the frame is computed."""
    from pyspark.sql import functions as F

    from lineage_udfs.sources.openlineage import EVENT_TIME, SOURCE_FILE, empty_lines

    kafka = source.kafka
    assert kafka is not None
    if plan.to_read == 0:
        return empty_lines(spark)
    try:
        messages = (
            spark.read.format("kafka").options(**reader_options(kafka, password, plan)).load()
        )
    except Exception as exc:
        raise InputError(
            f"cannot read kafka source {source.name!r} ({kafka.display}): "
            f"{_error_line(exc, password)}"
        ) from None
    value = F.col("value").cast("string")
    return messages.where(value.isNotNull() & (F.length(F.trim(value)) > 0)).select(
        value.alias("value"),
        F.concat_ws("", "topic", F.lit("-"), "partition", F.lit("@"), "offset").alias(SOURCE_FILE),
        F.try_to_timestamp(F.get_json_object(value, "$.eventTime")).alias(EVENT_TIME),
    )
