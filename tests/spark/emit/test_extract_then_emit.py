"""End to end: the extract job's composition (extraction, graph stage, OpenLineage emission to a
file) over successive log batches.

``pipeline.run_extract`` is what ``jobs/extract.py`` runs: new log files are emitted alone, a
re-parse re-emits the affected rows, and a run over unchanged input emits nothing. The last test
runs ``jobs/extract.py`` itself, with the graph stage on.
"""

from __future__ import annotations

import json
import logging
import runpy
from pathlib import Path

import pytest
import yaml
from pyspark.sql import SparkSession

from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.openlineage.emission import EmitSummary
from lineage_udfs.spark.pipeline import run_extract
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[3]
BASE = ROOT / "conf" / "base.yaml"

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


def _overlay(tmp_path: Path, *, column_lineage: bool = True, graph: bool = False) -> Path:
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
        "graph": {"enabled": graph},
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
    path = tmp_path / f"overlay-{column_lineage}-{graph}.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return path


def _settings(tmp_path: Path, *, column_lineage: bool = True) -> JobSettings:
    return load_settings([BASE, _overlay(tmp_path, column_lineage=column_lineage)])


def _extract_and_emit(
    spark: SparkSession, settings: JobSettings, events_file: Path
) -> tuple[EmitSummary, list[dict]]:
    before = events_file.read_text("utf-8").splitlines() if events_file.exists() else []
    outcome = run_extract(spark, settings)
    assert outcome.run.status == "succeeded" and outcome.graph is None
    summary = outcome.emit
    assert summary is not None
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


@pytest.mark.slow
def test_the_extract_job_runs_extraction_graph_and_emission(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``jobs/extract.py`` as spark-submit runs it (in this session): conf/base.yaml plus the
    overlay, extraction, the graph stage, emission to a file, one summary line at the end."""
    _write_log(tmp_path / "logs", "day1.jsonl", DAY1)
    overlay = _overlay(tmp_path, graph=True)
    main = runpy.run_path(str(ROOT / "jobs" / "extract.py"))["main"]
    # getOrCreate hands the job this session and sets the job's runtime confs on it: put the
    # ones it changed back as they were
    session_conf = spark._jsparkSession.sessionState().conf()
    confs = load_settings([BASE, overlay]).spark.confs
    saved = {key: spark.conf.get(key, None) for key in confs}
    try:
        assert main(["--config", str(overlay)]) == 0
    finally:
        logging.getLogger().handlers.clear()  # the job configured the root logger
        for key, value in saved.items():
            if spark.conf.get(key, None) == value:
                continue
            if value is None:
                session_conf.unsetConf(key)
            else:
                session_conf.setConfString(key, value)

    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert len(events) == 6 and {e["eventType"] for e in events} >= {"START", "COMPLETE"}
    tables = LineageTables(spark, load_settings([BASE, overlay]).sink)
    edges = {(r.source_table, r.target_table) for r in tables.read("table_lineage").collect()}
    assert edges == {("raw.orders", "mart.daily"), ("raw.customers", "tmp.x")}
    nodes = {r.node for r in tables.read("lineage_nodes").collect()}
    assert nodes == {n for edge in edges for n in edge}  # the graph stage ran over the edges
    runs = tables.read("lineage_runs").collect()
    assert [r.status for r in runs] == ["succeeded"]

    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f" INFO lineage_udfs.spark.pipeline: extract succeeded (run {runs[0].run_id}): " in last
    assert (
        "; graph: " in last and "; openlineage succeeded (full): 3 runs, 6 events emitted" in last
    )
    assert "\n" not in last and "Summary(" not in last
