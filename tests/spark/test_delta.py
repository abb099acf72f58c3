"""MERGE semantics across runs: view redefinition, recomputed counters, idempotency."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import IdentitySettings, JobSettings, SinkSettings, SourceSettings
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Append

V1 = "CREATE VIEW rep.v AS SELECT a FROM src.one"
V2 = "CREATE OR REPLACE VIEW rep.v AS SELECT a FROM src.two"
ETL = "INSERT INTO mart.t SELECT k FROM raw.s WHERE d = '{day}'"
LINEAGE = ("parsed_statements", "queries", "table_lineage", "column_lineage", "quarantine")


def _log(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _settings(log: Path, base: Path, *, incremental: bool = True) -> JobSettings:
    settings = JobSettings(
        sources=[
            SourceSettings(name="log", format="jsonl", path=str(log), defaults={"dialect": "spark"})
        ],
        sink=SinkSettings(base_path=str(base)),
        # the tests read the extraction's own tables: no identity step (dataset_aliases)
        identity=IdentitySettings(enabled=False),
    )
    parser = settings.parser.model_copy(update={"incremental": incremental})
    return settings.model_copy(update={"parser": parser})


def _snapshot(tables: LineageTables) -> dict[str, list[str]]:
    """Every row of every lineage table, as sorted reprs (rows hold lists, so not hashable)."""
    return {t: sorted(repr(r) for r in tables.read(t).collect()) for t in LINEAGE}


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    day1 = {"start_time": "2024-03-01T01:00:00Z"}
    day2 = {"start_time": "2024-03-05T01:00:00Z"}
    return {
        "a": _log(
            tmp_path / "a.jsonl",
            [
                {"query_text": V1, "object_kind": "view", "object_name": "rep.v", **day1},
                {"query_text": ETL.format(day="2024-03-01"), **day1},
            ],
        ),
        "b": _log(
            tmp_path / "b.jsonl",
            [
                {"query_text": V2, "object_kind": "view", "object_name": "rep.v", **day2},
                {"query_text": ETL.format(day="2024-03-05"), **day2},
            ],
        ),
    }


def test_redefined_view_replaces_lineage_and_query_lineage_accumulates(
    spark: SparkSession, tmp_path: Path, logs: dict[str, Path]
) -> None:
    base = tmp_path / "lineage"
    tables = LineageTables(spark, SinkSettings(base_path=str(base)))

    extract(spark, _settings(logs["a"], base))
    views = {
        (r.source_table, r.target_table, r.object_name)
        for r in tables.read("table_lineage").where("edge_kind = 'view'").collect()
    }
    assert views == {("src.one", "rep.v", "rep.v")}

    extract(spark, _settings(logs["b"], base))
    views = {
        (r.source_table, r.target_table)
        for r in tables.read("table_lineage").where("edge_kind = 'view'").collect()
    }
    assert views == {("src.two", "rep.v")}  # the old definition's edges are gone
    view_columns = {
        (r.source_table, r.source_column, r.target_column)
        for r in tables.read("column_lineage").where("edge_kind = 'view'").collect()
        if r.transformation_type == "DIRECT"
    }
    assert view_columns == {("src.two", "a", "a")}
    [etl] = tables.read("table_lineage").where("edge_kind = 'query'").collect()
    assert (etl.source_table, etl.target_table) == ("raw.s", "mart.t")
    assert (etl.occurrences, etl.first_seen, etl.last_seen) == (
        2,
        datetime(2024, 3, 1, 1, 0),
        datetime(2024, 3, 5, 1, 0),
    )
    settled = _snapshot(tables)

    # replaying either batch (the old definition arriving again, the same ETL rows again)
    # changes nothing: the newest definition wins and counters are recounted, not added
    extract(spark, _settings(logs["a"], base))
    assert _snapshot(tables) == settled
    extract(spark, _settings(logs["b"], base, incremental=False))  # re-parse: same result
    assert _snapshot(tables) == settled
    # neither replay changed a table, so neither left a lineage_runs row
    assert tables.read("lineage_runs").count() == 2


def test_tables_are_created_with_declared_schemas_and_comments(
    spark: SparkSession, tmp_path: Path
) -> None:
    tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "empty")))
    tables.ensure_all()
    tables.ensure_all()  # idempotent
    for table, schema in ((t.name, t.schema) for t in TABLES.values()):
        read = tables.read(table)
        assert [(f.name, f.dataType) for f in read.schema] == [(f.name, f.dataType) for f in schema]
        detail = tables.delta_table(table).detail().first()
        assert detail is not None and detail["description"]
        comments = {f.name: f.metadata.get("comment") for f in read.schema}
        assert all(comments.values()), (table, comments)


def test_catalog_table_names_instead_of_paths(
    spark: SparkSession, tmp_path: Path, logs: dict[str, Path]
) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS lineage_it")
    settings = _settings(logs["a"], tmp_path / "unused")
    settings = settings.model_copy(
        update={
            "sink": SinkSettings(base_path=str(tmp_path / "unused"), database="lineage_it"),
            # the identity step on: the only extraction on catalog tables, dataset_aliases too
            "identity": IdentitySettings(),
        }
    )
    summary = extract(spark, settings)
    assert summary.status == "succeeded"
    edges = {
        (r.source_table, r.target_table, r.edge_kind)
        for r in spark.table("lineage_it.table_lineage").collect()
    }
    assert ("raw.s", "mart.t", "query") in edges
    assert spark.table("lineage_it.lineage_runs").count() == 1
    assert not (tmp_path / "unused").exists()


def test_latest_version_from_the_log_listing_is_the_history_version(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Past a checkpoint and with old commit files removed, the newest commit file is still the
    version the table's history gives."""
    tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "w")))
    tables.ensure("lineage_runs")
    row = spark.range(1).select(
        *[F.lit(None).cast(f.dataType).alias(f.name) for f in TABLES["lineage_runs"].schema]
    )
    log = tmp_path / "w" / "lineage_runs" / "_delta_log"
    for n in range(1, 13):  # Delta writes a checkpoint at version 10
        tables.write("lineage_runs", Append(row), metadata=json.dumps({"n": n}))
        history = tables.delta_table("lineage_runs").history(1).first()
        assert history is not None and tables.latest_version("lineage_runs") == history["version"]
        assert tables.latest_version("lineage_runs") == n
    assert any(p.name.endswith(".checkpoint.parquet") for p in log.iterdir())
    (log / f"{1:020d}.json").unlink()  # cleaned up by log retention
    assert tables.latest_version("lineage_runs") == 12

    fields = ("version", "operation", "userMetadata", "operationMetrics")
    history = tables.delta_table("lineage_runs").history(3).select(*fields).collect()
    assert tables.recent_commits("lineage_runs", 3) == [r.asDict() for r in history]
    assert [
        json.loads(c["userMetadata"])["n"] for c in tables.recent_commits("lineage_runs", 3)
    ] == [
        12,
        11,
        10,
    ]
