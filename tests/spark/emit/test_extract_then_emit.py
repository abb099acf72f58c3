"""End to end: the extract job, then OpenLineage emission to a file, over successive log batches.

What ``jobs/extract.py`` does with ``openlineage.enabled`` (extraction, then emission), on a
small log folder: new log files are emitted alone, a re-parse re-emits the affected rows, and
a run over unchanged input emits nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pyspark.sql import SparkSession

from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.extract import run as run_extraction
from lineage_udfs.spark.openlineage import EmitSummary, emit_openlineage

BASE = Path(__file__).resolve().parents[3] / "conf" / "base.yaml"

DAY1 = [
    {
        "query_id": "a1",
        "query_text": "INSERT INTO mart.daily SELECT id, amount FROM raw.orders "
        "WHERE d = '2024-03-01'",
        "start_time": "2024-03-01T02:00:00Z",
        "end_time": "2024-03-01T02:00:09Z",
        "status": "success",
    },
    {
        "query_id": "a2",
        "query_text": "CREATE TABLE tmp.x AS SELECT id FROM raw.customers",
        "start_time": "2024-03-01T03:00:00Z",
        "end_time": "2024-03-01T03:00:02Z",
        "status": "success",
    },
    {  # no column lineage: its parse does not change when column lineage is switched off
        "query_id": "a3",
        "query_text": "TRUNCATE TABLE tmp.x",
        "start_time": "2024-03-01T03:30:00Z",
        "end_time": "2024-03-01T03:30:01Z",
        "status": "success",
    },
]
DAY2 = [  # the same ETL statement the next day, and a new one
    {
        **DAY1[0],
        "query_id": "b1",
        "query_text": DAY1[0]["query_text"].replace("03-01", "03-02"),
        "start_time": "2024-03-02T02:00:00Z",
        "end_time": "2024-03-02T02:00:08Z",
    },
    {
        "query_id": "b2",
        "query_text": "INSERT INTO mart.refunds SELECT id, amount FROM raw.refunds",
        "start_time": "2024-03-02T04:00:00Z",
        "end_time": "2024-03-02T04:00:01Z",
        "status": "failed",
    },
]


def _write_log(folder: Path, name: str, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _settings(tmp_path: Path, *, column_lineage: bool = True) -> JobSettings:
    overlay = {
        "sources": [
            {
                "name": "log",
                "format": "jsonl",
                "path": str(tmp_path / "logs"),
                "timestamp_format": "yyyy-MM-dd'T'HH:mm:ss'Z'",
                "defaults": {"dialect": "spark", "source_system": "spark://lake"},
            }
        ],
        "parser": {"column_lineage": column_lineage, "use_sqlfluff": False},
        "sink": {"base_path": str(tmp_path / "lineage")},
        "graph": {"enabled": False},
        "openlineage": {
            "enabled": True,
            "transport": {
                "type": "file",
                "log_file_path": str(tmp_path / "events.jsonl"),
                "append": True,
            },
            "spool": {"path": str(tmp_path / "spool")},
        },
    }
    path = tmp_path / f"overlay-{column_lineage}.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return load_settings([BASE, path])


def _extract_and_emit(
    spark: SparkSession, settings: JobSettings, events_file: Path
) -> tuple[EmitSummary, list[dict]]:
    before = events_file.read_text("utf-8").splitlines() if events_file.exists() else []
    assert run_extraction(spark, settings).status == "succeeded"
    summary = emit_openlineage(spark, settings)
    after = events_file.read_text("utf-8").splitlines()
    assert after[: len(before)] == before  # appended only
    return summary, [json.loads(line) for line in after[len(before) :]]


def _runs(events: list[dict]) -> dict[str, list[str]]:
    runs: dict[str, list[str]] = {}
    for event in events:
        runs.setdefault(event["job"]["name"], []).append(event["eventType"])
    return runs


@pytest.mark.slow
def test_extract_then_emit_incremental_batches_reparse_and_no_op(
    spark: SparkSession, tmp_path: Path
) -> None:
    events_file = tmp_path / "events.jsonl"
    settings = _settings(tmp_path)
    _write_log(tmp_path / "logs", "day1.jsonl", DAY1)

    first, first_events = _extract_and_emit(spark, settings, events_file)
    assert (first.scope, first.counts.emitted, len(first_events)) == ("full", 6, 6)

    again, events = _extract_and_emit(spark, settings, events_file)
    assert (again.scope, again.counts.rows, events) == ("incremental", 0, [])

    _write_log(tmp_path / "logs", "day2.jsonl", DAY2)
    second, events = _extract_and_emit(spark, settings, events_file)
    assert (second.scope, second.changed_queries, second.counts.emitted) == ("incremental", 2, 4)
    runs = _runs(events)
    assert sorted(map(sorted, runs.values())) == [["COMPLETE", "START"], ["FAIL", "START"]]
    # b1 is the daily INSERT a1 ran the day before (same job), b2 a new statement
    assert len(runs.keys() & set(_runs(first_events))) == 1

    # a parser option change re-parses every statement (new parser_version); only statements
    # whose outcome changed are re-emitted: every one with column lineage, now without it
    no_columns = _settings(tmp_path, column_lineage=False)
    reparsed, events = _extract_and_emit(spark, no_columns, events_file)
    assert reparsed.scope == "incremental"
    assert (reparsed.changed_queries, reparsed.reparsed_statements) == (0, 3)
    assert reparsed.counts.rows == 4 and len(events) == 8  # a1, a2, b1, b2; not a3
    assert "truncate" not in " ".join(_runs(events))
    assert all("columnLineage" not in o.get("facets", {}) for e in events for o in e["outputs"])

    _, events = _extract_and_emit(spark, no_columns, events_file)
    assert events == []
