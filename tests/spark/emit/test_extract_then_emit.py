"""End to end: the extract job's composition (extraction, graph stage, OpenLineage emission to a
file) over successive log batches.

``jobs/extract.py`` itself runs first, over the first day's log, with the graph stage on
(``job_run``, once per module). ``pipeline.run_extract``, what the job runs, then goes on over
the same warehouse and log folder: new log files are emitted alone, a re-parse re-emits the
affected rows, and a run over unchanged input emits nothing.

The activity stage is off: no test here reads its tables (tests/spark/test_freshness.py runs the
whole job with it), and it would add a stage to every one of the runs. So is the identity step:
no test reads ``dataset_aliases``, and the logs' names give no link (no session default, one
letter case, no storage path), so the emitted events, which list a dataset's links in a
``symlinks`` facet, are the same without it.
"""

from __future__ import annotations

import io
import json
import logging
import runpy
from contextlib import redirect_stderr
from dataclasses import dataclass
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


def _overlay(root: Path, *, column_lineage: bool = True, graph: bool = False) -> Path:
    overlay = {
        "sources": [
            {
                "name": "log",
                "format": "jsonl",
                "path": str(root / "logs"),
                "timestamp_format": "yyyy-MM-dd'T'HH:mm:ss'Z'",
                "defaults": {"dialect": "spark", "source_system": "spark://lake"},
            }
        ],
        "parser": {"column_lineage": column_lineage, "use_sqlfluff": False},
        "sink": {"base_path": str(root / "lineage")},
        "graph": {"enabled": graph},
        "activity": {"enabled": False},
        # no test reads dataset_aliases; these names give no link, so no event has symlinks
        "identity": {"enabled": False},
        "openlineage": {
            "enabled": True,
            "transport": {
                "type": "file",
                "log_file_path": str(root / "events.jsonl"),
                "append": True,
            },
            "spool": {"path": str(root / "spool")},
        },
    }
    path = root / f"overlay-{column_lineage}-{graph}.yaml"
    path.write_text(yaml.safe_dump(overlay), encoding="utf-8")
    return path


def _settings(root: Path, *, column_lineage: bool = True) -> JobSettings:
    return load_settings([BASE, _overlay(root, column_lineage=column_lineage)])


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


@dataclass(frozen=True)
class JobRun:
    """What ``jobs/extract.py`` left after its run over DAY1, read right after it."""

    root: Path
    """Its log folder, warehouse and events file (``_overlay(root)``)."""
    exit_code: int
    events: list[dict]
    table_edges: set[tuple[str, str]]
    nodes: set[str]
    runs: list[tuple[str, str]]
    """(run_id, status) of every ``lineage_runs`` row."""
    emissions: list[tuple[str, int]]
    """(scope, emitted) of every ``openlineage_emissions`` row."""
    last_line: str
    """The job's last line on stderr."""


@pytest.fixture(scope="module")
def job_run(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> JobRun:
    """``jobs/extract.py`` as spark-submit runs it (in this session): conf/base.yaml plus the
    overlay with the graph stage on, over DAY1. Everything the tests check of this run is read
    here, before ``test_extract_then_emit_incremental_batches_reparse_and_no_op`` goes on in
    the same folder (a rerun over the same files, at the same paths, is what it checks)."""
    root = tmp_path_factory.mktemp("extract-then-emit")
    _write_log(root / "logs", "day1.jsonl", DAY1)
    overlay = _overlay(root, graph=True)
    main = runpy.run_path(str(ROOT / "jobs" / "extract.py"))["main"]
    # getOrCreate hands the job this session and sets the job's runtime confs on it: put the
    # ones it changed back as they were
    session_conf = spark._jsparkSession.sessionState().conf()
    confs = load_settings([BASE, overlay]).spark.confs
    saved = {key: spark.conf.get(key, None) for key in confs}
    stderr = io.StringIO()  # the job's log handler writes to the stderr it finds
    try:
        with redirect_stderr(stderr):
            exit_code = main(["--config", str(overlay)])
    finally:
        logging.getLogger().handlers.clear()  # the job configured the root logger
        for key, value in saved.items():
            if spark.conf.get(key, None) == value:
                continue
            if value is None:
                session_conf.unsetConf(key)
            else:
                session_conf.setConfString(key, value)

    tables = LineageTables(spark, load_settings([BASE, overlay]).sink)
    lines = stderr.getvalue().strip().splitlines()
    return JobRun(
        root=root,
        exit_code=exit_code,
        events=[json.loads(line) for line in (root / "events.jsonl").read_text().splitlines()],
        table_edges={
            (r.source_table, r.target_table) for r in tables.read("table_lineage").collect()
        },
        nodes={r.node for r in tables.read("lineage_nodes").collect()},
        runs=[(r.run_id, r.status) for r in tables.read("lineage_runs").collect()],
        emissions=[(r.scope, r.emitted) for r in tables.read("openlineage_emissions").collect()],
        last_line=lines[-1] if lines else "",
    )


@pytest.mark.slow
def test_the_extract_job_runs_extraction_graph_and_emission(job_run: JobRun) -> None:
    """``jobs/extract.py``: extraction, the graph stage, emission to a file, one summary line
    at the end."""
    assert job_run.exit_code == 0
    events = job_run.events
    assert len(events) == 6 and {e["eventType"] for e in events} >= {"START", "COMPLETE"}
    edges = job_run.table_edges
    assert edges == {("raw.orders", "mart.daily"), ("raw.customers", "tmp.x")}
    assert job_run.nodes == {n for edge in edges for n in edge}  # the graph stage ran
    assert [status for _, status in job_run.runs] == ["succeeded"]

    last = job_run.last_line
    run_id = job_run.runs[0][0]
    assert f" INFO lineage_udfs.spark.pipeline: extract succeeded (run {run_id}): " in last
    assert (
        "; graph: " in last and "; openlineage succeeded (full): 3 runs, 6 events emitted" in last
    )
    assert "\n" not in last and "Summary(" not in last


@pytest.mark.slow
def test_extract_then_emit_incremental_batches_reparse_and_no_op(
    spark: SparkSession, job_run: JobRun
) -> None:
    """After the job's first, full emission of DAY1: a rerun over the same log emits nothing,
    DAY2's file emits only its rows, a re-parse re-emits the rows whose parse changed, and a
    rerun after it emits nothing."""
    root = job_run.root
    events_file = root / "events.jsonl"
    settings = _settings(root)
    first_events = job_run.events
    assert job_run.emissions == [("full", 6)] and len(first_events) == 6

    again, events = _extract_and_emit(spark, settings, events_file)
    assert (again.scope, again.counts.rows, events) == ("incremental", 0, [])

    _write_log(root / "logs", "day2.jsonl", DAY2)
    second, events = _extract_and_emit(spark, settings, events_file)
    assert (second.scope, second.changed_queries, second.counts.emitted) == ("incremental", 2, 4)
    runs = _runs(events)
    assert sorted(map(sorted, runs.values())) == [["COMPLETE", "START"], ["FAIL", "START"]]
    # b1 is the daily INSERT a1 ran the day before (same job), b2 a new statement
    assert len(runs.keys() & set(_runs(first_events))) == 1

    # a parser option change re-parses every statement (new parser_version); only statements
    # whose outcome changed are re-emitted: every one with column lineage, now without it
    no_columns = _settings(root, column_lineage=False)
    reparsed, events = _extract_and_emit(spark, no_columns, events_file)
    assert reparsed.scope == "incremental"
    assert (reparsed.changed_queries, reparsed.reparsed_statements) == (0, 3)
    assert reparsed.counts.rows == 4 and len(events) == 8  # a1, a2, b1, b2; not a3
    assert "truncate" not in " ".join(_runs(events))
    assert all("columnLineage" not in o.get("facets", {}) for e in events for o in e["outputs"])

    _, events = _extract_and_emit(spark, no_columns, events_file)
    assert events == []
