"""Incremental OpenLineage emission: only what changed since the last successful emission.

Real Delta tables written with the extract job's own MERGE (change data feed on), the real
http transport against the test collector, and the ``openlineage_emissions`` watermark table.

Most tests start where the first emission of the stored rows left the warehouse: that emission
runs once per module (``first_emission``) and each test gets its own copy of the warehouse
(Delta tables name their files by relative path, and no table records where it lives), so a
test's writes stay its own.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from support.collector import Collector
from support.emit_rows import EDGES, EXPECTED_EVENTS, PARSED, QUERIES, SNOW, T0
from support.emit_tables import http_settings as _settings
from support.emit_tables import stored_tables
from support.emit_tables import upsert as _upsert

from lineage_udfs.emit.events import query_run_from_dict, run_id_for
from lineage_udfs.settings import JobSettings, SinkSettings
from lineage_udfs.spark.openlineage.emission import EmitSummary, emit_openlineage
from lineage_udfs.spark.openlineage.scope import EMISSIONS_TABLE, Watermark, last_watermark
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

T2, T3 = datetime(2026, 3, 2, 9, 0, 0), datetime(2026, 3, 2, 9, 30, 0)
DAY_EVENTS = 2 + 6 + 2  # fp_ctas day (q1+q2: one run), fp_proc day (parent + 2 children), fp_bad

Q6 = {**QUERIES[0], "query_id": "q6", "start_time": T2, "end_time": T3}  # fp_ctas again, later
Q7 = {**QUERIES[0], "query_id": "q7", "fingerprint": "fp_new", "start_time": T2, "end_time": T3}
FP_NEW = {
    "fingerprint": "fp_new",
    "dialect": "snowflake",
    "statement_type": "INSERT",
    "status": "ok",
    "masked_sql": "INSERT INTO mart.f SELECT a FROM raw.o",
    "sources": ["an.raw.o"],
    "targets": ["an.mart.f"],
    "statements": [],
    "parser_version": "v1",
}


def _emit(spark: SparkSession, settings: JobSettings, collector: Collector) -> list[dict]:
    """Run one emission; return the events the collector received during it."""
    before = len(collector.events)
    emit_openlineage(spark, settings)
    return collector.events[before:]


def _emit_summary(
    spark: SparkSession, settings: JobSettings, collector: Collector
) -> tuple[EmitSummary, list[dict]]:
    before = len(collector.events)
    summary = emit_openlineage(spark, settings)
    return summary, collector.events[before:]


def _run_ids(events: list[dict]) -> set[str]:
    """Run ids of the top-level runs (child runs of procedure statements carry a parent)."""
    return {e["run"]["runId"] for e in events if "parent" not in e["run"].get("facets", {})}


def _run_id(row: dict[str, Any]) -> str:
    return run_id_for(query_run_from_dict(row))


def _watermarks(tables: LineageTables) -> list[tuple[Any, ...]]:
    rows = tables.read("openlineage_emissions").orderBy("ended_at").collect()
    return [(r.scope, r.status, r.queries_version, r.parsed_statements_version) for r in rows]


@dataclass(frozen=True)
class FirstEmission:
    """The warehouse after the first emission of the stored rows, and what that emission did."""

    base: Path
    summary: EmitSummary
    events: list[dict]


def _copy(spark: SparkSession, base: Path, tmp_path: Path) -> LineageTables:
    """A copy of the warehouse at ``base`` under ``tmp_path``: a test's own tables."""
    shutil.copytree(base, tmp_path / "lineage")
    return LineageTables(spark, SinkSettings(base_path=str(tmp_path / "lineage")))


@pytest.fixture(scope="module")
def first_emission(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> FirstEmission:
    """The emission rows stored (as the ``tables`` fixture stores them) and emitted once with
    the default settings (``per_run``, scope incremental: full, nothing was emitted before).

    The collector's address and the spool folder are not event options: a copy's next
    emission with another collector and spool reads this one as its watermark."""
    root = tmp_path_factory.mktemp("first-emission")
    tables = stored_tables(spark, root / "lineage")
    collector = Collector().start()
    try:
        summary, events = _emit_summary(
            spark, _settings(tables, collector, root / "spool"), collector
        )
    finally:
        collector.stop()
    return FirstEmission(root / "lineage", summary, events)


@pytest.fixture(scope="module")
def q6_logged(
    spark: SparkSession, first_emission: FirstEmission, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The first emission's warehouse with one log row more MERGEd into ``queries`` after it:
    q6, the CTAS statement run again later."""
    root = tmp_path_factory.mktemp("q6-logged")
    _upsert(spark, _copy(spark, first_emission.base, root), "queries", [Q6])
    return root / "lineage"


@pytest.fixture
def emitted(spark: SparkSession, first_emission: FirstEmission, tmp_path: Path) -> LineageTables:
    """This test's copy of the warehouse after the first emission."""
    return _copy(spark, first_emission.base, tmp_path)


@pytest.fixture
def emitted_then_q6(spark: SparkSession, q6_logged: Path, tmp_path: Path) -> LineageTables:
    """This test's copy of the warehouse after the first emission and q6's MERGE."""
    return _copy(spark, q6_logged, tmp_path)


def test_emit_incremental_no_new_input_emits_nothing(
    spark: SparkSession,
    first_emission: FirstEmission,
    emitted: LineageTables,
    collector: Collector,
    tmp_path: Path,
) -> None:
    tables = emitted
    settings = _settings(tables, collector, tmp_path / "spool")
    first = first_emission.summary
    assert (first.scope, first.reason) == ("full", "no previous successful emission")
    assert len(first_emission.events) == EXPECTED_EVENTS

    # what an extract run over the same log does: the same rows again (no change) and
    # refreshed usage stats on every statement (not a change of its parse)
    _upsert(spark, tables, "queries", QUERIES)
    _upsert(
        spark,
        tables,
        "parsed_statements",
        [{**p, "parser_version": "v1", "occurrences": 9, "last_seen": T3} for p in PARSED],
    )
    second, second_events = _emit_summary(spark, settings, collector)

    assert second.scope == "incremental"
    assert (second.changed_queries, second.reparsed_statements) == (0, 0)
    assert (second.counts.rows, second.counts.emitted) == (0, 0)
    assert second_events == []
    marks = _watermarks(tables)
    assert [m[:2] for m in marks] == [("full", "succeeded"), ("incremental", "succeeded")]
    assert marks[1][2:] == (
        tables.latest_version("queries"),
        tables.latest_version("parsed_statements"),
    )


def test_emit_incremental_new_log_rows_emit_only_their_events(
    spark: SparkSession,
    first_emission: FirstEmission,
    emitted: LineageTables,
    collector: Collector,
    tmp_path: Path,
) -> None:
    tables = emitted
    settings = _settings(tables, collector, tmp_path / "spool")
    first_events = first_emission.events

    _upsert(spark, tables, "queries", [Q6, Q7])  # q6: a known statement; q7: a new one
    _upsert(spark, tables, "parsed_statements", [FP_NEW])
    summary, events = _emit_summary(spark, settings, collector)

    assert (summary.scope, summary.changed_queries, summary.counts.rows) == ("incremental", 2, 2)
    assert len(events) == summary.counts.emitted == 4
    assert _run_ids(events) == {_run_id(Q6), _run_id(Q7)}
    assert not _run_ids(events) & _run_ids(first_events)
    assert {e["job"]["name"] for e in events} == {
        "ctas.an.mart.d.fp_ctas",
        "insert.an.mart.f.fp_new",
    }
    # the new events still carry the statement's column lineage
    q6_complete = next(
        e for e in events if e["run"]["runId"] == _run_id(Q6) and e["eventType"] == "COMPLETE"
    )
    assert set(q6_complete["outputs"][0]["facets"]["columnLineage"]["fields"]) == {"a", "b"}
    assert _emit(spark, settings, collector) == []


def test_emit_incremental_reparse_reemits_rows_of_changed_statements(
    spark: SparkSession, emitted: LineageTables, collector: Collector, tmp_path: Path
) -> None:
    tables = emitted
    settings = _settings(tables, collector, tmp_path / "spool")

    parsed = {p["fingerprint"]: p for p in PARSED}
    new_sql = "CREATE TABLE mart.d AS SELECT a, b FROM raw.o JOIN raw.p ON o.k = p.k"
    reparsed_ctas = {
        **parsed["fp_ctas"],
        "parser_version": "v2",
        "masked_sql": new_sql,
        "sources": ["an.raw.o", "an.raw.p"],
    }
    same_outcome = {**parsed["fp_proc"], "parser_version": "v2", "parse_ms": 3.5}
    _upsert(spark, tables, "parsed_statements", [reparsed_ctas, same_outcome])
    summary, events = _emit_summary(spark, settings, collector)

    q1, q2 = QUERIES[0], QUERIES[1]  # the log rows of fp_ctas
    assert (summary.changed_queries, summary.reparsed_statements) == (0, 1)
    assert _run_ids(events) == {_run_id(q1), _run_id(q2)}
    assert len(events) == 4
    assert {e["job"]["facets"]["sql"]["query"] for e in events} == {new_sql}
    complete = next(e for e in events if e["eventType"] != "START")
    assert {i["name"] for i in complete["inputs"]} == {"AN.RAW.O", "AN.RAW.P"}
    assert _emit(spark, settings, collector) == []


@pytest.mark.parametrize("failure", ["collector_down_without_spool", "collector_rejects"])
def test_emit_incremental_failed_emission_keeps_watermark(
    spark: SparkSession,
    emitted_then_q6: LineageTables,
    collector: Collector,
    tmp_path: Path,
    failure: str,
) -> None:
    tables = emitted_then_q6
    settings = _settings(tables, collector, tmp_path / "spool")
    watermark = _watermarks(tables)[-1]  # the first emission's: q6 came after it
    assert watermark[:2] == ("full", "succeeded")

    if failure == "collector_down_without_spool":
        collector.stop()
        failing = _settings(tables, collector, tmp_path / "spool", spool_enabled=False)
    else:
        collector.fail_with = 400  # the transport raises for every event; nothing to spool
        failing = settings
    failed, _ = _emit_summary(spark, failing, collector)
    assert (failed.status, failed.counts.failed, failed.counts.emitted) == ("failed", 2, 0)
    assert [m for m in _watermarks(tables) if m[1] == "succeeded"][-1] == watermark

    if failure == "collector_down_without_spool":
        collector.start()
    collector.fail_with = None
    retried, events = _emit_summary(spark, settings, collector)
    assert (retried.status, retried.scope, retried.changed_queries) == (
        "succeeded",
        "incremental",
        1,
    )
    assert _run_ids(events) == {_run_id(Q6)} and len(events) == 2
    assert [m[1] for m in _watermarks(tables)] == ["succeeded", "failed", "succeeded"]
    assert _emit(spark, settings, collector) == []


def test_emit_scope_all_reemits_everything(
    spark: SparkSession,
    first_emission: FirstEmission,
    emitted: LineageTables,
    collector: Collector,
    tmp_path: Path,
) -> None:
    tables = emitted
    settings = _settings(tables, collector, tmp_path / "spool")
    first_events = first_emission.events
    assert _emit(spark, settings, collector) == []

    everything = _settings(tables, collector, tmp_path / "spool", scope="all")
    summary, events = _emit_summary(spark, everything, collector)

    assert (summary.scope, summary.reason) == ("full", "scope all requested")
    assert len(events) == EXPECTED_EVENTS
    assert sorted((e["run"]["runId"], e["eventType"]) for e in events) == sorted(
        (e["run"]["runId"], e["eventType"]) for e in first_events
    )
    assert _emit(spark, settings, collector) == []  # a full emission is a watermark too


def test_emit_incremental_vacuumed_history_falls_back_to_full(
    spark: SparkSession, emitted_then_q6: LineageTables, collector: Collector, tmp_path: Path
) -> None:
    tables = emitted_then_q6
    settings = _settings(tables, collector, tmp_path / "spool")
    # compaction drops the file the new row was written to, VACUUM deletes it (and the change
    # data files): the change feed since the watermark cannot be read any more
    _, path = tables.location("queries")
    spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    try:
        spark.sql(f"OPTIMIZE delta.`{path}`").collect()
        spark.sql(f"VACUUM delta.`{path}` RETAIN 0 HOURS").collect()
    finally:
        spark.conf.unset("spark.databricks.delta.retentionDurationCheck.enabled")

    summary, events = _emit_summary(spark, settings, collector)

    assert summary.scope == "full"
    assert summary.reason is not None and summary.reason.startswith("change data unavailable")
    assert len(events) == EXPECTED_EVENTS + 2
    assert _run_id(Q6) in _run_ids(events)
    assert _emit(spark, settings, collector) == []  # the fallback's watermark works


def test_emit_incremental_per_statement_day_reemits_touched_day_whole(
    spark: SparkSession, emitted: LineageTables, collector: Collector, tmp_path: Path
) -> None:
    tables = emitted  # emitted per_run
    daily = _settings(tables, collector, tmp_path / "spool", emit_mode="per_statement_day")
    switched, day_events = _emit_summary(spark, daily, collector)
    assert (switched.scope, switched.reason) == (
        "full",
        "event options changed since the last emission",
    )
    assert len(day_events) == DAY_EVENTS

    _upsert(spark, tables, "queries", [Q6])  # fp_ctas again, the same day as q1 and q2
    summary, events = _emit_summary(spark, daily, collector)

    assert (summary.scope, summary.changed_queries) == ("incremental", 1)
    day_run = run_id_for(
        query_run_from_dict({**Q6, "query_id": "fp_ctas@2026-03-02"}), "per_statement_day"
    )
    assert _run_ids(events) == {day_run} and len(events) == 2
    start, end = sorted(events, key=lambda e: e["eventType"] != "START")
    # the whole day, re-aggregated: q1's start, q6's end, success because one run succeeded
    assert start["eventTime"].startswith(T0.strftime("%Y-%m-%dT%H:%M:%S"))
    assert end["eventTime"].startswith(T3.strftime("%Y-%m-%dT%H:%M:%S"))
    assert end["eventType"] == "COMPLETE"
    assert _emit(spark, daily, collector) == []


def test_emit_incremental_rows_without_parse_yet_are_emitted_later(
    spark: SparkSession, emitted: LineageTables, collector: Collector, tmp_path: Path
) -> None:
    tables = emitted
    settings = _settings(tables, collector, tmp_path / "spool")
    # the extract job committed the log row; its parse is not committed yet
    _upsert(spark, tables, "queries", [Q7])
    early, early_events = _emit_summary(spark, settings, collector)
    assert early_events == [] and early.status == "succeeded"
    assert early.reason is not None and "without a parse" in early.reason

    _upsert(spark, tables, "parsed_statements", [FP_NEW])
    late, events = _emit_summary(spark, settings, collector)

    assert late.reason is None
    assert _run_ids(events) == {_run_id(Q7)} and len(events) == 2
    assert _emit(spark, settings, collector) == []


def test_ensure_enables_change_data_feed_on_an_existing_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "old")))
    schema = TABLES["queries"].schema
    _, path = tables.location("queries")
    rows = [tuple(r.get(f) for f in schema.fieldNames()) for r in QUERIES]
    spark.createDataFrame(rows, schema).write.format("delta").save(path)  # created before CDF

    def cdf() -> str | None:
        detail = tables.delta_table("queries").detail().first()
        return detail["properties"].get("delta.enableChangeDataFeed") if detail else None

    assert cdf() is None
    tables.ensure("queries")
    assert cdf() == "true"
    enabled_at = tables.latest_version("queries")
    _upsert(spark, tables, "queries", [Q6])
    changes = tables.changes("queries", enabled_at + 1, tables.latest_version("queries"))
    assert [(r.query_id, r._change_type) for r in changes.collect()] == [("q6", "insert")]
    assert {r.source_system for r in tables.read("queries", version=0).collect()} == {SNOW}
    tables.ensure("queries")  # idempotent: no second ALTER
    assert tables.latest_version("queries") == enabled_at + 1


def test_emit_incremental_on_catalog_tables(
    spark: SparkSession, collector: Collector, tmp_path: Path
) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS lineage_ol_it")
    sink = SinkSettings(base_path=str(tmp_path / "unused"), database="lineage_ol_it")
    tables = LineageTables(spark, sink)
    for name in ("queries", "parsed_statements", "column_lineage"):
        tables.ensure(name)
    _upsert(spark, tables, "queries", QUERIES)
    _upsert(spark, tables, "parsed_statements", [{**p, "parser_version": "v1"} for p in PARSED])
    _upsert(spark, tables, "column_lineage", EDGES)
    settings = _settings(tables, collector, tmp_path / "spool")

    assert len(_emit(spark, settings, collector)) == EXPECTED_EVENTS
    _upsert(spark, tables, "queries", [Q6])
    summary, events = _emit_summary(spark, settings, collector)

    assert (summary.scope, summary.changed_queries) == ("incremental", 1)
    assert _run_ids(events) == {_run_id(Q6)}
    assert spark.table("lineage_ol_it.openlineage_emissions").count() == 2
    assert not (tmp_path / "unused").exists()


def test_the_watermark_read_from_the_newest_commit_is_the_table_s(
    spark: SparkSession, emitted_then_q6: LineageTables, collector: Collector, tmp_path: Path
) -> None:
    tables = emitted_then_q6
    settings = _settings(tables, collector, tmp_path / "spool")
    assert _run_ids(_emit(spark, settings, collector)) == {_run_id(Q6)}
    newest = tables.read(EMISSIONS_TABLE).orderBy(F.col("ended_at").desc()).first()
    assert newest is not None and newest.status == "succeeded"
    marker = json.loads(tables.recent_commits(EMISSIONS_TABLE, 1)[0]["userMetadata"])
    assert marker["openlineage_emission"]["emission_id"] == newest.emission_id
    watermark, _ = last_watermark(tables, newest.options_digest)
    assert watermark == Watermark(
        newest.emission_id, newest.queries_version, newest.parsed_statements_version
    )
    assert last_watermark(tables, "other options") == (
        None,
        "event options changed since the last emission",
    )
