"""Preset names in source settings: ``format: <preset>`` and ``preset:`` (no Spark)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lineage_udfs.settings import PRESET_FILE_FORMATS, SourceSettings


def test_format_naming_a_preset_sets_preset_and_file_format() -> None:
    source = SourceSettings.model_validate(
        {"name": "bq", "format": "bigquery_jobs", "path": "jobs.jsonl"}
    )
    assert (source.preset, source.format) == ("bigquery_jobs", "jsonl")


def test_preset_key_implies_the_file_format() -> None:
    source = SourceSettings.model_validate(
        {"name": "pg", "preset": "postgres_csvlog", "path": "pg.csv"}
    )
    assert (source.preset, source.format) == ("postgres_csvlog", "csv")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"format": "oracle_history"}, "Input should be"),
        ({"format": "csv", "preset": "oracle_history"}, "unknown preset 'oracle_history'"),
        ({"format": "trino_query_completed", "preset": "bigquery_jobs"}, "disagree"),
        (
            {"format": "snowflake_query_history", "extra_paths": {"query_text": "x.csv"}},
            "has no extra_paths ['query_text']",
        ),
        ({"format": "csv", "extra_paths": {"query_text": "x.csv"}}, "extra_paths needs a preset"),
    ],
)
def test_bad_preset_configs_fail_with_one_clear_message(
    config: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        SourceSettings.model_validate({"name": "s", "path": "p", **config})


def test_every_preset_has_a_transform() -> None:
    from lineage_udfs.sources.presets import PRESETS

    assert set(PRESETS) == set(PRESET_FILE_FORMATS)
