"""JDBC, incremental and catalog settings: credentials stay out of the settings and errors;
the incremental lookback's forms."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.settings import (
    LOOKBACK_FORMS,
    CatalogSourceSettings,
    IncrementalSettings,
    JobSettings,
    SourceSettings,
    load_settings,
)
from lineage_udfs.sources.jdbc import jdbc_passwords, source_query

URL = "jdbc:postgresql://db.example:5432/shop"


def _jdbc_source(**jdbc: object) -> SourceSettings:
    return SourceSettings(name="pg", format="jdbc", jdbc={"url": URL, **jdbc})


def test_jdbc_source_path_is_the_url_without_its_query_string() -> None:
    source = _jdbc_source(table="audit.log", user="reader")
    assert source.path == URL
    assert _jdbc_source(table="t", options={"ssl": "true"}).path == URL
    assert (
        SourceSettings(name="pg", format="jdbc", jdbc={"url": URL + "?ssl=true", "table": "t"}).path
        == URL
    )


@pytest.mark.parametrize(
    "url",
    [
        URL + "?user=u&password=hunter2-secret",
        "jdbc:postgresql://u:hunter2-secret@db.example:5432/shop",
    ],
)
def test_url_with_password_is_rejected_without_echoing_it(url: str) -> None:
    with pytest.raises(ValidationError) as info:
        JobSettings.model_validate(
            {"sources": [{"name": "pg", "format": "jdbc", "jdbc": {"url": url, "table": "t"}}]}
        )
    assert "password_env" in str(info.value)
    assert "hunter2-secret" not in str(info.value)


def test_password_option_is_rejected() -> None:
    with pytest.raises(ValidationError, match="may not set"):
        _jdbc_source(table="t", options={"password": "hunter2-secret"})


def test_jdbc_needs_table_or_query_unless_the_preset_has_one() -> None:
    with pytest.raises(ValidationError, match="table or a query"):
        _jdbc_source()
    with pytest.raises(ValidationError, match="not both"):
        _jdbc_source(table="t", query="SELECT 1")
    preset = SourceSettings(
        name="pg", format="jdbc", preset="postgres_pg_stat_statements", jdbc={"url": URL}
    )
    kind, sql = source_query(preset)
    assert kind == "query" and "FROM pg_stat_statements" in sql and "current_user" in sql
    catalog = CatalogSourceSettings(name="c", format="jdbc", jdbc={"url": URL})
    assert "information_schema.columns" in source_query(catalog)[1]


def test_file_source_still_needs_a_path() -> None:
    with pytest.raises(ValidationError, match="needs a path"):
        SourceSettings(name="x", format="csv")
    with pytest.raises(ValidationError, match="needs format jdbc"):
        SourceSettings(name="x", format="csv", path="a.csv", jdbc={"url": URL, "table": "t"})


def test_incremental_is_a_column_or_a_key_set() -> None:
    assert IncrementalSettings(column="id", type="long").column == "id"
    assert IncrementalSettings(keys=["queryid"], version="calls").version == "calls"
    for bad in ({}, {"column": "id", "keys": ["k"]}, {"column": "id", "version": "v"}):
        with pytest.raises(ValidationError, match="incremental"):
            IncrementalSettings.model_validate(bad)


@pytest.mark.parametrize(
    ("lookback", "amount"),
    [(0, 0.0), ("90s", 90.0), ("30m", 1800.0), ("2h", 7200.0), ("1d", 86400.0), ("1h30m", 5400.0)],
)
def test_incremental_lookback_duration_is_read_in_seconds(lookback: object, amount: float) -> None:
    spec = IncrementalSettings(column="logged_at", type="timestamp", lookback=lookback)
    assert spec.lookback_amount == amount
    assert IncrementalSettings(column="logged_at").lookback == 0  # the default: none


@pytest.mark.parametrize(("lookback", "amount"), [(5000, 5000.0), (2.5, 2.5), ("0s", 0.0)])
def test_incremental_lookback_number_is_in_the_column_units(
    lookback: object, amount: float
) -> None:
    assert (
        IncrementalSettings(column="id", type="long", lookback=lookback).lookback_amount == amount
    )


@pytest.mark.parametrize("lookback", ["2x", "2 hours", "-1h", "h", "", -5, True, float("inf")])
def test_incremental_lookback_in_another_form_is_one_config_error_line(
    tmp_path: Path, lookback: object
) -> None:
    source = {"name": "x", "format": "csv", "path": "x.csv"}
    config = {"sources": [{**source, "incremental": {"column": "t", "lookback": lookback}}]}
    path = tmp_path / "lookback.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings([path])
    message = str(info.value)
    assert "\n" not in message
    assert "sources.0.incremental.lookback" in message and LOOKBACK_FORMS in message


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"column": "id", "type": "long", "lookback": "2h"}, "is a duration, but 'id' is long"),
        ({"column": "t", "type": "timestamp", "lookback": 60}, "is a number, but 't' is timestamp"),
        ({"column": "t", "type": "string", "lookback": 5}, "'t' is compared as string"),
        ({"keys": ["queryid"], "lookback": 5}, "incremental.lookback goes with column"),
    ],
)
def test_incremental_lookback_must_fit_the_column_type(
    spec: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(problem)):
        IncrementalSettings.model_validate(spec)


def test_incremental_lookback_fit_to_a_type_read_from_the_source() -> None:
    spec = IncrementalSettings(column="t", lookback="2h")
    assert spec.lookback_mismatch("timestamp") is None
    assert spec.lookback_mismatch("timestamp_ntz") is None
    assert spec.lookback_mismatch("date") is None
    assert "give a number" in str(spec.lookback_mismatch("decimal(12,0)"))
    numeric = IncrementalSettings(column="id", lookback=100)
    assert numeric.lookback_mismatch("bigint") is None
    assert numeric.lookback_mismatch("decimal(12,0)") is None
    assert "give a duration" in str(numeric.lookback_mismatch("timestamp"))
    assert IncrementalSettings(column="s").lookback_mismatch("string") is None  # 0 fits all


def test_passwords_come_from_the_named_variable_only() -> None:
    sources = [_jdbc_source(table="t", password_env="PG_PW"), _jdbc_source(table="u")]
    assert jdbc_passwords(sources[:1], {"PG_PW": "s3cret"}) == {"pg": "s3cret"}
    assert jdbc_passwords(sources[1:], {}) == {}
    with pytest.raises(ConfigError, match="PG_PW") as info:
        jdbc_passwords(sources, {"OTHER": "s3cret"})
    assert "s3cret" not in str(info.value)
    dumped = JobSettings(sources=sources[:1]).model_dump_json()
    assert "PG_PW" in dumped and "s3cret" not in dumped
