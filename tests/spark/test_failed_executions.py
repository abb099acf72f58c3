"""Failed and aborted executions give no lineage edge unless `lineage.include_failed_executions`.

A crafted log, run twice into fresh warehouses (once with each setting): its rows are stored in
``queries`` and their statements parsed either way; only the edges differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import (
    IdentitySettings,
    JobSettings,
    LineageSettings,
    SinkSettings,
    SourceSettings,
    load_settings,
)
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.facts import failed_execution
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]

ROWS: list[dict[str, Any]] = [
    # succeeded: an edge either way
    {"id": "ok1", "sql": "INSERT INTO mart.a SELECT x FROM raw.s", "status": "SUCCESS", "t": 1},
    # every execution failed (Snowflake's FAIL, Databricks' FAILED): no edge by default
    {"id": "f1", "sql": "INSERT INTO mart.b SELECT y FROM raw.t", "status": "FAIL", "t": 2},
    {"id": "f2", "sql": "INSERT INTO mart.b SELECT y FROM raw.t", "status": "FAILED", "t": 3},
    # one cancelled run and one that succeeded: the edge counts the successful run only
    {
        "id": "c1",
        "sql": "INSERT INTO mart.c SELECT z FROM raw.u WHERE d = 1",
        "status": " Canceled",
        "t": 4,
    },
    {
        "id": "c2",
        "sql": "INSERT INTO mart.c SELECT z FROM raw.u WHERE d = 2",
        "status": "success",
        "t": 5,
    },
    # no status at all: counts as succeeded
    {"id": "n1", "sql": "INSERT INTO mart.d SELECT w FROM raw.w", "status": None, "t": 6},
    # a view redefined by a later statement that failed: the older definition stays current
    {
        "id": "v1",
        "sql": "CREATE OR REPLACE VIEW rep.v AS SELECT x FROM mart.a",
        "status": "SUCCESS",
        "t": 7,
    },
    {
        "id": "v2",
        "sql": "CREATE OR REPLACE VIEW rep.v AS SELECT y FROM mart.b",
        "status": "error",
        "t": 8,
    },
]


def _log(path: Path) -> Path:
    lines = [
        json.dumps(
            {
                "query_id": r["id"],
                "query_text": r["sql"],
                "status": r["status"],
                "start_time": f"2024-03-01T0{r['t']}:00:00Z",
            }
        )
        for r in ROWS
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _settings(base: Path, log: Path, include_failed: bool) -> JobSettings:
    shipped = load_settings([ROOT / "conf" / "base.yaml"])
    source = SourceSettings(
        name="log", format="jsonl", path=str(log), defaults={"dialect": "spark"}
    )
    return shipped.model_copy(
        update={
            "sources": [source],
            "sink": SinkSettings(base_path=str(base)),
            "lineage": LineageSettings(include_failed_executions=include_failed),
            # the tests read the extraction's own tables: no identity step (dataset_aliases)
            "identity": IdentitySettings(enabled=False),
        }
    )


@pytest.fixture(scope="module")
def warehouses(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> dict[bool, LineageTables]:
    log = _log(tmp_path_factory.mktemp("failed-log") / "log.jsonl")
    out = {}
    for include in (False, True):
        settings = _settings(tmp_path_factory.mktemp(f"wh-{include}"), log, include)
        summary = extract(spark, settings)
        assert summary.status == "succeeded"
        out[include] = LineageTables(spark, settings.sink)
    return out


def _edges(tables: LineageTables) -> dict[tuple[str, str], int]:
    return {
        (r["source_table"], r["target_table"]): r["occurrences"]
        for r in tables.read("table_lineage").collect()
    }


def test_failed_and_aborted_executions_give_no_edge_by_default(warehouses: dict) -> None:
    assert _edges(warehouses[False]) == {
        ("raw.s", "mart.a"): 1,
        ("raw.u", "mart.c"): 1,  # the cancelled run is not counted
        ("raw.w", "mart.d"): 1,
        ("mart.a", "rep.v"): 1,  # the failed redefinition did not replace it
    }


def test_included_failed_executions_give_edges_and_replace_definitions(
    warehouses: dict,
) -> None:
    assert _edges(warehouses[True]) == {
        ("raw.s", "mart.a"): 1,
        ("raw.t", "mart.b"): 2,
        ("raw.u", "mart.c"): 2,
        ("raw.w", "mart.d"): 1,
        ("mart.b", "rep.v"): 1,
    }


def test_failed_rows_are_still_stored_and_parsed(warehouses: dict) -> None:
    tables = warehouses[False]
    queries = {r["query_id"]: r["status"] for r in tables.read("queries").collect()}
    # stored as logged (the reader trims surrounding blanks)
    assert queries == {r["id"]: r["status"] and r["status"].strip() for r in ROWS}
    parsed = tables.read("parsed_statements").join(
        tables.read("queries").where(F.col("query_id") == "f1"), "fingerprint", "left_semi"
    )
    assert [(r["status"], r["targets"]) for r in parsed.collect()] == [("ok", ["mart.b"])]
    columns = {r["target_table"] for r in tables.read("column_lineage").collect()}
    assert "mart.b" not in columns and "mart.d" in columns


@pytest.mark.parametrize(
    ("status", "failed"),
    [
        ("FAIL", True),
        ("failed", True),
        (" Error ", True),
        ("INCIDENT", True),
        ("CANCELED", True),
        ("cancelled", True),
        ("aborted", True),
        ("SUCCESS", False),
        ("FINISHED", False),
        ("running", False),
        (None, False),
    ],
)
def test_failed_execution_reads_vendor_statuses(
    spark: SparkSession, status: str | None, failed: bool
) -> None:
    frame = spark.createDataFrame([(status,)], "status string")
    assert frame.select(failed_execution(F.col("status")).alias("f")).first()["f"] is failed
