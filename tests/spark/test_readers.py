"""Query-log readers: each format → canonical schema; missing columns; corrupt rows kept with
a reason."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import SourceSettings
from lineage_udfs.spark.extract.readers import LOAD_ERROR, RAW_RECORD, read_query_log
from lineage_udfs.spark.storage.schemas import QUERY_LOG_SCHEMA

CANONICAL = QUERY_LOG_SCHEMA.fieldNames()


def _rows(frame: Any, *columns: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r[c] for c in columns) for r in frame.collect())


def test_read_csv_maps_columns_defaults_and_multiline_text(
    spark: SparkSession, tmp_path: Path, assert_frames_equal: Any
) -> None:
    path = tmp_path / "history.csv"
    path.write_text(
        '"QID","TEXT","DB","WHEN","WHO"\n'
        '"q1","INSERT INTO a\nSELECT * FROM b","ANALYTICS","2024-03-01 05:00:00.250","ann"\n'
        '"q2","SELECT 1","","2024-03-02 06:00:00.000",""\n',
        encoding="utf-8",
    )
    source = SourceSettings(
        name="sf",
        format="csv",
        path=str(path),
        columns={
            "query_id": "QID",
            "query_text": "TEXT",
            "default_database": "DB",
            "start_time": "WHEN",
            "user_name": "WHO",
        },
        defaults={"dialect": "snowflake", "source_system": "snowflake://acme"},
        timestamp_format="yyyy-MM-dd HH:mm:ss.SSS",
    )
    log = read_query_log(spark, source)
    assert log.columns[: len(CANONICAL)] == CANONICAL
    expected = spark.createDataFrame(
        [
            (
                "q1",
                "INSERT INTO a\nSELECT * FROM b",
                "snowflake",
                "ANALYTICS",
                None,
                "ann",
                datetime(2024, 3, 1, 5, 0, 0, 250000),
                None,
                None,
                "snowflake://acme",
                "query",
                None,
            ),
            (
                "q2",
                "SELECT 1",
                "snowflake",
                None,
                None,
                None,
                datetime(2024, 3, 2, 6, 0, 0),
                None,
                None,
                "snowflake://acme",
                "query",
                None,
            ),
        ],
        QUERY_LOG_SCHEMA,
    )
    assert_frames_equal(log.select(*CANONICAL), expected)
    assert _rows(log, LOAD_ERROR) == [(None,), (None,)]


def test_read_jsonl_quarantines_corrupt_and_bad_rows_and_hashes_ids(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "log.jsonl"
    lines = [
        json.dumps(
            {"query_text": "INSERT INTO a SELECT * FROM b", "start_time": "2024-03-01T02:00:00Z"}
        ),
        json.dumps({"query_text": "INSERT INTO a SELECT * FROM c", "start_time": "yesterday"}),
        json.dumps({"query_text": "  ", "start_time": "2024-03-01T02:00:00Z"}),
        json.dumps({"start_time": "2024-03-01T02:00:00Z"}),
        '{"query_text": "INSERT INTO a SEL',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    source = SourceSettings(
        name="spark", format="jsonl", path=str(path), defaults={"dialect": "spark"}
    )
    log = read_query_log(spark, source)
    errors = sorted((r[LOAD_ERROR] or "") for r in log.collect())
    assert errors == [
        "",
        "corrupt record",
        "null or empty query_text",
        "null or empty query_text",
        "unparsable start_time (expected format ISO-8601)",
    ]
    corrupt = log.where(f"{LOAD_ERROR} = 'corrupt record'").first()
    assert corrupt is not None and corrupt[RAW_RECORD].startswith('{"query_text"')
    # query_id absent: a deterministic sha256 of the row, distinct per row
    ids = [r["query_id"] for r in log.orderBy("query_id").collect()]
    again = [r["query_id"] for r in read_query_log(spark, source).orderBy("query_id").collect()]
    assert ids == again
    assert len(set(ids)) == 5 and all(len(i) == 64 for i in ids)


def test_read_parquet_keeps_typed_timestamps(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "log.parquet")
    spark.createDataFrame(
        [("p1", "CREATE TABLE x AS SELECT * FROM y", datetime(2024, 3, 1, 1, 2, 3), "bigquery")],
        "id string, sql string, ts timestamp, dialect string",
    ).write.parquet(path)
    source = SourceSettings(
        name="pq",
        format="parquet",
        path=path,
        columns={"query_id": "id", "query_text": "sql", "start_time": "ts"},
    )
    row = read_query_log(spark, source).first()
    assert row is not None
    assert (row["query_id"], row["dialect"], row["start_time"], row[LOAD_ERROR]) == (
        "p1",
        "bigquery",
        datetime(2024, 3, 1, 1, 2, 3),
        None,
    )


def test_read_delta_log(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "log_delta")
    spark.createDataFrame(
        [("d1", "INSERT INTO a SELECT * FROM b", "2024-03-01T02:00:00Z", "view", "V1")],
        "query_id string, query_text string, start_time string, object_kind string, "
        "object_name string",
    ).write.format("delta").save(path)
    source = SourceSettings(name="dl", format="delta", path=path, defaults={"dialect": "spark"})
    row = read_query_log(spark, source).first()
    assert row is not None
    assert (row["query_id"], row["object_kind"], row["object_name"], row["start_time"]) == (
        "d1",
        "view",
        "V1",
        datetime(2024, 3, 1, 2, 0, 0),
    )


def test_read_missing_query_text_column_names_it_and_lists_available(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "nope.csv"
    path.write_text('"ID","SQL_TEXT"\n"1","SELECT 1"\n', encoding="utf-8")
    source = SourceSettings(name="sf", format="csv", path=str(path))
    with pytest.raises(InputError, match=r"query_text.*available columns: \['ID', 'SQL_TEXT'\]"):
        read_query_log(spark, source)


def test_read_mapped_column_missing_is_an_input_error(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text('"QUERY_TEXT"\n"SELECT 1"\n', encoding="utf-8")
    source = SourceSettings(
        name="sf", format="csv", path=str(path), columns={"start_time": "START_TIME"}
    )
    with pytest.raises(InputError, match=r"'START_TIME' mapped to start_time is missing"):
        read_query_log(spark, source)
