"""Hostile and broken input: every row accounted for, nothing silently wrong, one-line errors,
no unmasked text readable in spark.local.dir."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from pyspark import StorageLevel
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import SinkSettings, SourceSettings
from lineage_udfs.spark.extract.readers import (
    CSV_QUOTING_ERROR,
    LOAD_ERROR,
    NUL_ERROR,
    TRUNCATION_MARKER,
    UTF8_ERROR,
    read_query_log,
    read_query_logs,
)
from lineage_udfs.spark.extract.transforms import prepare_rows, with_default_dialect
from lineage_udfs.spark.runtime.preflight import OutputError, check_sink_writable


def _csv(tmp_path: Path, body: bytes) -> SourceSettings:
    path = tmp_path / "log.csv"
    path.write_bytes(b"query_id,query_text,user_name\n" + body)
    return SourceSettings(name="csv", format="csv", path=str(path))


def _by_id(spark: SparkSession, source: SourceSettings) -> dict[str, tuple[str | None, ...]]:
    rows = read_query_log(spark, source).collect()
    return {r["query_id"]: (r["query_text"], r["status"], r[LOAD_ERROR]) for r in rows}


def test_csv_unterminated_quote_is_quarantined_not_merged_into_wrong_edges(
    spark: SparkSession, tmp_path: Path
) -> None:
    source = _csv(
        tmp_path,
        b'1,"INSERT INTO a SELECT * FROM b,u1\n'
        b'2,"INSERT INTO c SELECT * FROM d",u2\n'
        b'3,"INSERT INTO e SELECT * FROM f",u3\n'
        b'4,"INSERT INTO g\nSELECT 1 AS ""q""",u4\n'
        b'5,INSERT INTO h SELECT 1,"u5\n'
        b'6,"INSERT INTO i SELECT 1",u6\n'
        b'7,"INSERT INTO j SELECT 1",u7\n',
    )
    rows = _by_id(spark, source)
    # record 1 absorbed record 2: it is quarantined with the reason, never loaded
    assert rows["1"][2] == CSV_QUOTING_ERROR + (
        " (the record spans 2 lines: the records after its first line may be inside it)"
    )
    assert "2" not in rows
    # a quote opened in another column absorbs the next record: quarantined too
    assert rows["5"][2].startswith((CSV_QUOTING_ERROR, "corrupt record (the record spans 2"))
    assert "6" not in rows
    # well-formed records, multi-line and doubled quotes included, load
    for good in ("3", "4", "7"):
        assert rows[good][2] is None, rows[good]
    assert rows["4"][0] == 'INSERT INTO g\nSELECT 1 AS "q"'


def test_nul_bytes_and_invalid_utf8_are_quarantined(spark: SparkSession, tmp_path: Path) -> None:
    source = _csv(
        tmp_path,
        b'1,"INSERT\x00 INTO a SELECT * FROM b",u\n'
        b'2,"INSERT INTO a\xff\xfeb SELECT * FROM c",u\n'
        b'3,"INSERT INTO ok SELECT * FROM c",u\xff\n'
        b'4,"INSERT INTO ok SELECT * FROM c",u\n',
    )
    rows = _by_id(spark, source)
    assert rows["1"][2] == NUL_ERROR
    assert rows["2"][2] == UTF8_ERROR
    assert rows["3"][2] == UTF8_ERROR
    assert rows["4"][2] is None


def test_vendor_failure_fields_make_the_status_failed(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "bq.jsonl"
    lines = [
        {"job_id": "ok", "query": "INSERT INTO a SELECT 1", "state": "DONE", "error_result": None},
        {
            "job_id": "bad",
            "query": "INSERT INTO a SELECT 1",
            "state": "DONE",
            "error_result": {"reason": "invalidQuery", "message": "Syntax error"},
        },
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    source = SourceSettings(
        name="bq",
        format="jsonl",
        path=str(path),
        columns={"query_id": "job_id", "query_text": "query", "status": "state"},
    )
    rows = _by_id(spark, source)
    assert rows["ok"][1] == "DONE"
    assert rows["bad"][1] == "failed"


def test_empty_file_is_a_source_with_no_rows(spark: SparkSession, tmp_path: Path) -> None:
    for fmt in ("csv", "jsonl"):
        path = tmp_path / f"empty.{fmt}"
        path.write_bytes(b"")
        frame = read_query_log(spark, SourceSettings(name="e", format=fmt, path=str(path)))
        assert frame.count() == 0


def test_gzip_named_jsonl_says_compressed_input(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(gzip.compress(b'{"query_text": "INSERT INTO a SELECT 1"}\n'))
    with pytest.raises(InputError) as raised:
        read_query_log(spark, SourceSettings(name="gz", format="jsonl", path=str(path)))
    message = str(raised.value)
    assert "compressed/binary input (gzip)" in message and str(path) in message
    assert "\n" not in message


def test_wrong_format_is_one_line(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    path.write_text("query_id,query_text\n1,INSERT INTO a SELECT 1\n")
    with pytest.raises(InputError) as raised:
        read_query_log(spark, SourceSettings(name="pq", format="parquet", path=str(path)))
    message = str(raised.value)
    assert "\n" not in message and "pq" in message and str(path) in message


def test_unwritable_output_is_found_before_any_work(tmp_path: Path, spark: SparkSession) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("x")
    with pytest.raises(OutputError) as raised:
        check_sink_writable(spark, SinkSettings(base_path=str(blocker / "lineage")))
    message = str(raised.value)
    assert "\n" not in message and "not writable" in message and "sink.base_path" in message
    check_sink_writable(spark, SinkSettings(base_path=str(tmp_path / "ok")))  # writable: fine


def _local_dirs(spark: SparkSession) -> list[str]:
    env = spark.sparkContext._jsc.sc().env()
    return [str(d) for d in env.blockManager().diskBlockManager().localDirsString()]


def test_no_unmasked_text_readable_in_spark_local_dir(spark: SparkSession) -> None:
    canary = "CANARYlocaldisk7Q"
    log = spark.createDataFrame(
        [
            (
                f"q{i}",
                f"INSERT INTO t{i % 7} SELECT * FROM s WHERE pw = '{canary}{i}'",
                "spark",
                None,
                None,
                "query",
                None,
                None,
            )
            for i in range(3000)
        ],
        "query_id string, query_text string, dialect string, default_database string,"
        " default_schema string, object_kind string, _load_error string, _raw_record string",
    ).withColumn("start_time", F.lit(None).cast("timestamp"))
    rows = prepare_rows(with_default_dialect(log, "spark")).persist(StorageLevel.DISK_ONLY)
    try:
        assert rows.where(F.col("parse_text").contains(canary)).count() == 3000
        shuffled = rows.repartition(3, "query_id").localCheckpoint(eager=True)
        assert shuffled.count() == 3000
        scanned = 0
        for root in _local_dirs(spark):
            for folder, _, names in os.walk(root):
                for name in names:
                    data = Path(folder, name).read_bytes()
                    scanned += 1
                    assert canary.encode() not in data, Path(folder, name)
        assert scanned > 0
    finally:
        rows.unpersist()


def test_stored_fields_and_masked_sql_are_capped(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    huge_user = "u" * 3_000_000
    long_id = "q" * 5_000
    statement = "INSERT INTO t SELECT " + ", ".join(f"c{i}" for i in range(40_000)) + " FROM s"
    path.write_text(
        json.dumps({"query_id": long_id, "query_text": statement, "user_name": huge_user})
        + "\n"
        + json.dumps(
            {"query_id": "small", "query_text": "INSERT INTO a SELECT 1", "user_name": "x"}
        )
        + "\n"
    )
    source = SourceSettings(name="big", format="jsonl", path=str(path))
    log = read_query_logs(spark, [source], max_field_chars=1024)
    rows = {r["query_id"][:7]: r for r in log.collect()}
    big = rows["sha256:"]
    assert len(big["query_id"]) == len("sha256:") + 64
    assert len(big["user_name"]) == 1024 and big["user_name"].endswith(TRUNCATION_MARKER)
    assert rows["small"]["user_name"] == "x"
    prepared = prepare_rows(with_default_dialect(log, "spark"), max_masked_sql_chars=2048)
    masked = {r["query_id"][:7]: r["masked_sql"] for r in prepared.collect()}
    assert len(masked["sha256:"]) == 2048 and masked["sha256:"].endswith(TRUNCATION_MARKER)
    assert masked["small"] == "INSERT INTO a SELECT ?"


BROKEN_QUOTING_CASES = [
    # (format, file body); every record whose quoting fails holds a secret in a SQL string
    (
        "csv",
        b"query_id,query_text,user_name\n"
        b'"1","INSERT INTO a SELECT * FROM b,u1\n'  # never closes: absorbs record 2
        b'"2","INSERT INTO t SELECT ""Cn4ryA01"", a FROM s WHERE p = \'Cn4ryA02\'","u2"\n'
        b'"3","INSERT INTO c SELECT 1","u3"\n'
        b'"4",INSERT INTO h SELECT 1,"u4\n'  # a quote opened in another column
        b'"5","ALTER USER x SET PASSWORD = ""Cn4ryA03""","u5"\n'
        b'"6","INSERT INTO d SELECT 1","u6"\n',
    ),
    (
        "jsonl",
        b'{"query_id": "1", "query_text": "INSERT INTO t SELECT \\"Cn4ryB01\\", a FROM s"}\n'
        b'{"query_id": "2", "query_text": "INSERT INTO t SELECT \\"Cn4ryB02\\", \'Cn4\n'
        b'{"query_id": "3", "query_text": "SELECT 1 AS x\\" , \\"Cn4ryB03\\" FROM s",\n'
        b'{"query_id": "4", "query_text": "INSERT INTO d SELECT 1"}\n',
    ),
]


@pytest.mark.parametrize(("fmt", "body"), BROKEN_QUOTING_CASES, ids=["csv", "jsonl"])
def test_quarantined_record_with_broken_quoting_holds_no_secret(
    spark: SparkSession, tmp_path: Path, fmt: str, body: bytes
) -> None:
    path = tmp_path / f"log.{fmt}"
    path.write_bytes(body)
    log = read_query_log(spark, SourceSettings(name="q", format=fmt, path=str(path)))
    rows = prepare_rows(with_default_dialect(log, "spark")).collect()
    failures = [r for r in rows if r[LOAD_ERROR] is not None]
    assert len(failures) >= 2, rows
    for row in failures:
        assert row["masked_record"], row
        assert "Cn4ry" not in row["masked_record"], row
    if fmt == "csv":  # the record's shape stays readable: its keywords are kept
        assert any("INSERT INTO" in r["masked_record"] for r in failures)
    # records whose quoting holds still load
    assert {r["query_id"] for r in rows if r[LOAD_ERROR] is None} >= {"3" if fmt == "csv" else "4"}
