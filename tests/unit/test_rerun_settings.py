"""Which settings make a rerun read its unchanged input again (``extract.rerun``): only those
that change what the write stage stores. Pure Python: the digest of recorded settings."""

from __future__ import annotations

import json

import pytest

from lineage_udfs.redaction import settings_json
from lineage_udfs.settings import JobSettings
from lineage_udfs.spark.extract.rerun import _settings_digest

BASE = json.loads(settings_json(JobSettings()))


def _digest(section: str, key: str, value: object) -> str | None:
    changed = json.loads(json.dumps(BASE))
    changed[section][key] = value
    return _settings_digest(json.dumps(changed))


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("activity", "enabled", False),  # the activity stage runs after the write
        ("activity", "window_days", 7),
        ("graph", "enabled", False),
        ("openlineage", "enabled", True),
        ("tags", "file", "tags.yaml"),
        ("execution", "skip_unchanged_input", False),
    ],
)
def test_settings_of_later_stages_leave_the_digest_alone(
    section: str, key: str, value: object
) -> None:
    assert key in BASE[section]
    assert _digest(section, key, value) == _settings_digest(json.dumps(BASE))


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("activity", "keep_reads", False),  # which reads the prepared log keeps
        ("parser", "column_lineage", False),
        ("identity", "enabled", False),
    ],
)
def test_settings_of_the_write_stage_change_the_digest(
    section: str, key: str, value: object
) -> None:
    assert BASE[section][key] != value
    assert _digest(section, key, value) != _settings_digest(json.dumps(BASE))


def test_no_recorded_settings_has_no_digest() -> None:
    assert _settings_digest(None) is None
