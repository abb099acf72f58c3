"""Vendor presets end to end: the real job (SparkSession + Delta) over each preset's fixture.

The fixtures (tests/data/sources, written by its generate.py) hold one workload in each vendor's
export shape; every preset must give the workload's table edges, no edge from a failed
statement, and leave out the rows that are not user SQL.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession

from lineage_udfs.settings import JobSettings, SourceSettings, load_settings
from lineage_udfs.sources.presets import (
    STL_QUERYTEXT_CHUNK,
    SYS_QUERY_TEXT_CHUNK,
    reassemble_chunks,
)
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.reconcile import RECONCILIATION_TABLE
from lineage_udfs.spark.extract.stage import extract as run
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "sources"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fixture_generator", DATA / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _workload_edges(prefix: str, default: str, *, merge: bool = True, script: bool = True) -> set:
    edges = {
        ("raw.adressen_ü", "marts.kundenübersicht"),
        ("raw.customers", "marts.customer_orders"),
        ("raw.orders", "marts.customer_orders"),
        ("raw.orders", "marts.daily_revenue"),
        ("raw.orders", "marts.売上_日次"),
    }
    if merge:
        edges.add(("raw.customers", "marts.customer_dim"))
    if script:
        edges.add(("raw.orders", "marts.big_spenders"))
    out = {(f"{prefix}.{s}", f"{prefix}.{t}") for s, t in edges}
    out.add((f"{default}.events", f"{default}.event_summary"))
    return out


CHUNKED = ("dev.raw.order_lines", "dev.marts.chunked_report")

CASES: dict[str, dict[str, Any]] = {
    "snowflake_query_history": {
        "source": {"path": "snowflake_query_history/query_history.csv"},
        "edges": _workload_edges("analytics", "analytics.raw"),
        "rows": 28,
        "failed": 2,
    },
    "bigquery_jobs": {
        "source": {"path": "bigquery_jobs/jobs.jsonl"},
        "edges": _workload_edges("acme-prod", "acme-prod.raw")
        | {("acme-prod.raw.v_active_customers", "acme-prod.marts.customer_dim")},
        "rows": 25,  # the LOAD job, the RUNNING job and the script's two child jobs left out
        "failed": 2,
    },
    "databricks_query_history": {
        "source": {
            "path": "databricks_query_history/query_history.jsonl",
            "defaults": {"default_database": "main"},
            "extra_paths": {
                "table_lineage": "databricks_query_history/table_lineage.jsonl",
                "column_lineage": "databricks_query_history/column_lineage.jsonl",
            },
        },
        "edges": _workload_edges("main", "main.raw"),
        "rows": 27,
        "failed": 2,
    },
    "redshift_query_history": {
        "source": {
            "path": "redshift_query_history/sys_query_history.csv",
            "extra_paths": {"query_text": "redshift_query_history/sys_query_text.csv"},
        },
        "edges": _workload_edges("dev", "dev.public") | {CHUNKED},
        "rows": 26,  # rdsdb's two rows left out
        "failed": 2,
    },
    "redshift_stl": {
        "preset": "redshift_query_history",
        "source": {
            "path": "redshift_stl/stl_query.csv",
            "extra_paths": {"query_text": "redshift_stl/stl_querytext.csv"},
        },
        "edges": {CHUNKED},
        "rows": 2,
        "failed": 1,
    },
    "postgres_pg_stat_statements": {
        "source": {"path": "postgres_pg_stat_statements/pg_stat_statements.csv"},
        "edges": _workload_edges("shop", "shop.public"),
        "rows": 11,  # <insufficient privilege> left out
        "failed": 0,  # pg_stat_statements keeps completed statements only
    },
    "postgres_csvlog": {
        "source": {"path": "postgres_csvlog/postgresql.csv"},
        "edges": _workload_edges("shop", "shop.public"),
        "rows": 25,  # connection, checkpoint and ERROR lines are not statements
        "failed": 2,
    },
    "trino_query_completed": {
        "source": {"path": "trino_query_completed/query_completed.jsonl"},
        "edges": _workload_edges("hive", "hive.raw", merge=False, script=False),
        "rows": 22,
        "failed": 2,
    },
}


@dataclass
class Outcome:
    summary: RunSummary
    tables: LineageTables
    edges: set[tuple[str, str]]
    statuses: dict[str, int]


def _settings(name: str, base_path: Path) -> JobSettings:
    case = CASES[name]
    base = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    raw = dict(case["source"])
    raw["path"] = str(DATA / raw["path"])
    raw["extra_paths"] = {k: str(DATA / v) for k, v in raw.get("extra_paths", {}).items()}
    source = SourceSettings.model_validate(
        {"name": name, "format": case.get("preset", name), **raw}
    )
    sink = base.sink.model_copy(update={"base_path": str(base_path)})
    return base.model_copy(update={"sources": [source], "sink": sink})


@pytest.fixture(scope="module", params=sorted(CASES))
def outcome(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Outcome]]:
    name = request.param
    settings = _settings(name, tmp_path_factory.mktemp(name))
    summary = run(spark, settings)
    tables = LineageTables(spark, settings.sink)
    edges = {(r.source_table, r.target_table) for r in tables.read("table_lineage").collect()}
    statuses = {
        r["status"]: int(r["count"])
        for r in tables.read("queries").groupBy("status").count().collect()
    }
    yield name, Outcome(summary, tables, edges, statuses)


def test_preset_gives_the_workload_edges(outcome: tuple[str, Outcome]) -> None:
    name, result = outcome
    assert result.edges == CASES[name]["edges"]
    assert not any("refund" in target for _, target in result.edges)  # failed statements only


def test_preset_rows_and_statuses(outcome: tuple[str, Outcome]) -> None:
    name, result = outcome
    assert result.summary.rows_read == CASES[name]["rows"]
    assert result.summary.load_quarantined == 0
    assert result.statuses.get("failed", 0) == CASES[name]["failed"]
    assert set(result.statuses) <= {"success", "failed"}


def test_reconciliation_lists_every_kind(outcome: tuple[str, Outcome]) -> None:
    name, result = outcome
    if name not in (
        "bigquery_jobs",
        "databricks_query_history",
        "snowflake_query_history",
        "trino_query_completed",
    ):
        assert result.summary.reconciliation == {}
        return
    rows = result.tables.spark.read.format("delta").load(
        result.tables.location(RECONCILIATION_TABLE)[1]
    )
    found = {
        (r.level, r.source_table, r.source_column, r.target_table, r.target_column, r.status)
        for r in rows.collect()
    }
    if name == "bigquery_jobs":
        p = "acme-prod"
        expected = {
            ("table", f"{p}.raw.orders", None, f"{p}.marts.daily_revenue", None, "agree"),
            ("table", f"{p}.raw.events", None, f"{p}.raw.event_summary", None, "agree"),
            # the SQL names a view; BigQuery records the view's base table
            ("table", f"{p}.raw.v_active_customers", None, f"{p}.marts.customer_dim", None,
             "parser_only"),
            ("table", f"{p}.raw.customers", None, f"{p}.marts.customer_dim", None,
             "warehouse_only"),
            # the script's temporary table hides the edge from BigQuery's per-job record
            ("table", f"{p}.raw.orders", None, f"{p}.marts.big_spenders", None, "parser_only"),
        }  # fmt: skip
    elif name == "databricks_query_history":
        m = "main"
        expected = {
            ("table", f"{m}.raw.orders", None, f"{m}.marts.daily_revenue", None, "agree"),
            ("column", f"{m}.raw.orders", "amount", f"{m}.marts.daily_revenue", "revenue",
             "agree"),
            ("table", f"{m}.raw.customers", None, f"{m}.marts.customer_dim", None, "agree"),
            # the lineage tables left the script's statement out
            ("table", f"{m}.raw.orders", None, f"{m}.marts.big_spenders", None, "parser_only"),
        }  # fmt: skip
        assert not any(r[1] is None or "s3://" in str(r[1]) for r in found)  # a path read
    elif name == "snowflake_query_history":
        a = "analytics"
        expected = {
            ("table", f"{a}.raw.orders", None, f"{a}.marts.daily_revenue", None, "agree"),
            ("column", f"{a}.raw.orders", "amount", f"{a}.marts.daily_revenue", "revenue",
             "agree"),
            ("column", f"{a}.raw.customers", "name", f"{a}.marts.customer_orders", "name",
             "agree"),
            ("table", f"{a}.raw.customers", None, f"{a}.marts.customer_dim", None, "agree"),
            ("table", f"{a}.raw.adressen_ü", None, f"{a}.marts.kundenübersicht", None, "agree"),
            ("table", f"{a}.raw.events", None, f"{a}.raw.event_summary", None, "agree"),
        }  # fmt: skip
        # the MERGE target ACCESS_HISTORY lists as read is not its own source (parser default)
        assert not any(r[1] == r[3] for r in found)
        # the script's parent query has no ACCESS_HISTORY row: outside the comparison
        assert not any(r[3] == f"{a}.marts.big_spenders" for r in found)
    else:
        expected = {
            ("table", "hive.raw.orders", None, "hive.marts.daily_revenue", None, "agree"),
            ("column", "hive.raw.orders", "amount", "hive.marts.daily_revenue", "revenue",
             "agree"),
        }  # fmt: skip
    assert expected <= found
    assert not any("refund" in str(r) for r in found)
    total = sum(sum(v.values()) for v in result.summary.reconciliation.values())
    assert total == rows.count()


def test_redshift_chunks_are_reassembled_in_sequence_order(spark: SparkSession) -> None:
    generate = _generator()
    sys_text = spark.read.options(header="true", multiLine="true", escape='"').csv(
        str(DATA / "redshift_query_history" / "sys_query_text.csv")
    )
    texts = reassemble_chunks(sys_text, "query_id", SYS_QUERY_TEXT_CHUNK, escaped_newlines=False)
    got: list[Row] = texts.where("query_id = '5900'").collect()
    assert got[0]["_full_text"] == generate._long_select(SYS_QUERY_TEXT_CHUNK)
    stl = spark.read.options(header="true", multiLine="true", escape='"').csv(
        str(DATA / "redshift_stl" / "stl_querytext.csv")
    )
    texts = reassemble_chunks(stl, "query", STL_QUERYTEXT_CHUNK, escaped_newlines=True)
    got = texts.where("query = '6950'").collect()
    expected = generate._long_select(STL_QUERYTEXT_CHUNK, "\\n").replace("\\n", "\n")
    assert got[0]["_full_text"] == expected
    assert "order_lines" in expected and "'x" in expected  # the cuts the fixture is made of
