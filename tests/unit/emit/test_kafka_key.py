"""Kafka message keys: events replayed from the spool (dicts) get openlineage-python's key."""

from __future__ import annotations

import json

import pytest
from cases import CASES_FOR_KEYS
from openlineage.client.serde import Serde
from openlineage.client.transport.kafka import KafkaTransport

from lineage_udfs.emit.kafka import message_key


@pytest.mark.parametrize("name", sorted(CASES_FOR_KEYS))
def test_message_key_of_a_replayed_dict_equals_openlineage_python_key(name: str) -> None:
    stock = object.__new__(KafkaTransport)  # only its key rule; no producer is built
    for event in CASES_FOR_KEYS[name]():
        as_dict = json.loads(Serde.to_json(event))
        assert message_key(as_dict) == stock._get_message_key(event)
        assert message_key(as_dict).startswith("run:")
