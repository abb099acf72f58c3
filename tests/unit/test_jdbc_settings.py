"""JDBC, incremental and catalog settings: credentials stay out of the settings and errors."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.settings import (
    CatalogSourceSettings,
    IncrementalSettings,
    JobSettings,
    SourceSettings,
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


def test_passwords_come_from_the_named_variable_only() -> None:
    sources = [_jdbc_source(table="t", password_env="PG_PW"), _jdbc_source(table="u")]
    assert jdbc_passwords(sources[:1], {"PG_PW": "s3cret"}) == {"pg": "s3cret"}
    assert jdbc_passwords(sources[1:], {}) == {}
    with pytest.raises(ConfigError, match="PG_PW") as info:
        jdbc_passwords(sources, {"OTHER": "s3cret"})
    assert "s3cret" not in str(info.value)
    dumped = JobSettings(sources=sources[:1]).model_dump_json()
    assert "PG_PW" in dumped and "s3cret" not in dumped
