"""openlineage-python's ``KafkaTransport`` with delivery reported to the caller.

The stock transport produces, flushes, and only *logs* a failed delivery from its delivery
callback: ``emit`` returns normally when the broker is down and the event is lost. Here ``emit``
waits for the delivery report of its message (``flush: true``) and raises
:class:`KafkaDeliveryError` when the broker did not take it, so
:class:`~lineage_udfs.emit.spool.SpoolingEmitter` spools it (broker unreachable, timed out,
retriable errors) or counts it as failed (the broker refused it: too large, not authorised ...).

Events replayed from the spool are plain dicts; their message key is derived by the same rule
openlineage-python applies to event objects (``run:<namespace>/<job>``, with the parent's or the
root parent's job for child runs), so a replayed event lands on the partition of its job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport


class KafkaDeliveryError(Exception):
    """The broker did not acknowledge an event. ``retryable``: worth spooling and replaying."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


_RETRYABLE_CODES = (
    "_MSG_TIMED_OUT",
    "_TIMED_OUT",
    "_TRANSPORT",
    "_ALL_BROKERS_DOWN",
    "_QUEUE_FULL",
)


def _is_retryable(error: Any) -> bool:
    return bool(error.retriable()) or error.name() in _RETRYABLE_CODES


def message_key(event: Any) -> str | None:
    """The message key openlineage-python's KafkaTransport gives ``event``, for objects and for
    the dicts of replayed events alike."""
    if not isinstance(event, Mapping):
        return None
    if "run" not in event:
        if "dataset" in event:
            dataset = event["dataset"]
            return f"dataset:{dataset['namespace']}/{dataset['name']}"
        job = event.get("job") or {}
        return f"job:{job.get('namespace')}/{job.get('name')}" if job else None
    job = event["job"]
    parent = ((event["run"] or {}).get("facets") or {}).get("parent") or {}
    owner = (parent.get("root") or {}).get("job") or parent.get("job") or {}
    if owner.get("namespace") and owner.get("name"):
        return f"run:{owner['namespace']}/{owner['name']}"
    return f"run:{job['namespace']}/{job['name']}"


class CheckedKafkaTransport(KafkaTransport):
    """KafkaTransport whose ``emit`` raises :class:`KafkaDeliveryError` on a failed delivery."""

    def _get_message_key(self, event: Any) -> str | None:
        if isinstance(event, Mapping):
            return message_key(event)
        return super()._get_message_key(event)

    def emit(self, event: Any) -> None:
        if not self.flush:  # fire and forget, as configured: the client's own behaviour
            super().emit(event)
            return
        if self.producer is None:
            self._setup_producer(self.kafka_config.config)
        assert self.producer is not None
        outcome: list[Any] = []
        from openlineage.client.serde import Serde

        self.producer.produce(
            topic=self.topic,
            key=self.message_key or self._get_message_key(event),
            value=Serde.to_json(event).encode("utf-8"),
            on_delivery=lambda err, _msg: outcome.append(err),
        )
        self.producer.flush()
        if not outcome:  # flush returns once the message is delivered or has expired
            raise KafkaDeliveryError("no delivery report from Kafka", retryable=True)
        error = outcome[0]
        if error is not None:
            raise KafkaDeliveryError(
                f"Kafka did not take the event on topic {self.topic}: {error.name()}: "
                f"{error.str()}",
                retryable=_is_retryable(error),
            )


def make_kafka_transport(config: dict[str, Any]) -> CheckedKafkaTransport:
    """Build the checked transport from an openlineage-python kafka config dict."""
    return CheckedKafkaTransport(KafkaConfig.from_dict(dict(config)))
