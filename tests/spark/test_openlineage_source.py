"""``format: openlineage`` sources: RunEvents → openlineage_events → table_lineage and
column_lineage (edge_kind = the producer, fingerprint = the job), bad lines quarantined with
their reason, incremental by eventTime and idempotent on rerun."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.settings import IdentitySettings, JobSettings, SinkSettings, SourceSettings
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.tables import LineageTables
from tests.support.ol_events import DBT, dataset, run_event, write_lines

COMPARED = ("openlineage_events", "table_lineage", "column_lineage", "quarantine")


# the tests read the extraction's own tables; the identity step (the events' symlinks and
# paths -> dataset_aliases) is tests/spark/test_dataset_aliases.py's subject
NO_IDENTITY = IdentitySettings(enabled=False)


def _settings(events: Path, base: Path) -> JobSettings:
    source = SourceSettings(name="listener", format="openlineage", path=str(events))
    return JobSettings(
        sources=[source], sink=SinkSettings(base_path=str(base)), identity=NO_IDENTITY
    )


def _snapshot(tables: LineageTables) -> dict[str, list[str]]:
    out = {}
    for table in COMPARED:
        frame = tables.read(table)
        frame = frame.drop("run_id_read") if table == "openlineage_events" else frame
        out[table] = sorted(repr(r) for r in frame.collect())
    return out


RAW = dataset("file", "/wh/raw.db/orders", table="raw.orders")
OUT = dataset(
    "file",
    "/wh/clean/orders",
    columns={
        "id": [("file", "/wh/raw.db/orders", "id", "DIRECT", "IDENTITY")],
        "total": [("file", "/wh/raw.db/orders", "amount", "DIRECT", "AGGREGATION")],
    },
)


def test_events_give_edges_quarantine_and_rerun_changes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    events = tmp_path / "events.jsonl"
    write_lines(
        events,
        [
            run_event("etl.clean", "2026-11-01T01:00:00Z", [RAW], [OUT], event_type="START"),
            run_event("etl.clean", "2026-11-01T01:05:00.5Z", [RAW], [OUT]),
            "{broken",
            {**run_event("etl.clean", "2026-11-01T01:06:00Z", [RAW], [OUT]), "run": {}},
            run_event(
                "dbt.model",
                "2026-11-01T02:00:00Z",
                [dataset("snowflake://acme", "DB.S.SRC")],
                [dataset("snowflake://acme", "DB.S.MODEL")],
                producer=DBT,
            ),
        ],
    )
    settings = _settings(events, tmp_path / "wh")
    summary = extract(spark, settings)
    assert summary.openlineage is not None
    assert summary.openlineage.lines_read == 5
    assert summary.openlineage.events == 3
    assert summary.openlineage.by_producer == {"openlineage:spark": 2, "openlineage:dbt": 1}
    tables = LineageTables(spark, settings.sink)
    edges = {
        (r.source_table, r.target_table, r.edge_kind, r.object_name, r.occurrences)
        for r in tables.read("table_lineage").collect()
    }
    assert edges == {
        (
            "file:/wh/raw.db/orders",
            "file:/wh/clean/orders",
            "openlineage:spark",
            "spark/etl.clean",
            1,
        ),
        ("DB.S.SRC", "DB.S.MODEL", "openlineage:dbt", "spark/dbt.model", 1),
    }
    assert all(r.fingerprint.startswith("ol:") for r in tables.read("table_lineage").collect())
    columns = {
        (r.source_column, r.target_column, r.transformation_type, r.transformation_subtype)
        for r in tables.read("column_lineage").collect()
    }
    assert columns == {
        ("id", "id", "DIRECT", "IDENTITY"),
        ("amount", "total", "DIRECT", "AGGREGATION"),
    }
    reasons = sorted(r.reason for r in tables.read("quarantine").collect())
    assert reasons[0].startswith("openlineage event: not JSON")
    assert reasons[1].startswith("openlineage event: not an OpenLineage RunEvent: run: 'runId'")
    assert all(r.masked_record is None for r in tables.read("quarantine").collect())

    before = _snapshot(tables)
    again = extract(spark, settings)  # the same file: nothing new is read
    assert _snapshot(tables) == before
    assert again.openlineage is None or again.openlineage.lines_read == 0

    # a later run of the same job: read with the line that has no eventTime (such a line cannot
    # be ordered, so every run reads it; it is quarantined already), counted as a second run
    write_lines(events, [run_event("etl.clean", "2026-11-02T01:05:00Z", [RAW], [OUT])], append=True)
    third = extract(spark, settings)
    assert third.openlineage is not None
    assert (third.openlineage.lines_read, third.openlineage.events) == (2, 1)
    assert third.openlineage.quarantined == 0
    (row,) = [
        r for r in tables.read("table_lineage").collect() if r.edge_kind == "openlineage:spark"
    ]
    assert row.occurrences == 2 and str(row.last_seen).startswith("2026-11-02 01:05")


def test_events_beside_a_query_log(spark: SparkSession, tmp_path: Path) -> None:
    """Events and SQL lineage land in the same tables, each under its own edge_kind."""
    events = tmp_path / "events.jsonl"
    write_lines(events, [run_event("etl.clean", "2026-11-01T01:05:00Z", [RAW], [OUT])])
    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps({"query_text": "INSERT INTO mart.daily SELECT id FROM clean.orders"}) + "\n",
        encoding="utf-8",
    )
    sql = SourceSettings(name="sql", format="jsonl", path=str(log), defaults={"dialect": "spark"})
    settings = _settings(events, tmp_path / "wh")
    settings = settings.model_copy(update={"sources": [sql, *settings.sources]})
    extract(spark, settings)
    kinds = {
        (r.edge_kind, r.target_table)
        for r in LineageTables(spark, settings.sink).read("table_lineage").collect()
    }
    assert kinds == {("query", "mart.daily"), ("openlineage:spark", "file:/wh/clean/orders")}


DBT_EVENTS = Path(__file__).resolve().parents[1] / "data" / "openlineage" / "dbt" / "events.jsonl"


def test_dbt_ol_events_give_the_models_table_and_column_edges(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The events ``dbt-ol run`` wrote for a source and three models in a ref chain
    (tests/data/openlineage/dbt/README.md)."""
    source = SourceSettings(name="dbt", format="openlineage", path=str(DBT_EVENTS))
    settings = JobSettings(
        sources=[source], sink=SinkSettings(base_path=str(tmp_path / "wh")), identity=NO_IDENTITY
    )
    summary = extract(spark, settings)
    assert summary.openlineage is not None
    assert (summary.openlineage.lines_read, summary.openlineage.quarantined) == (8, 0)
    assert summary.openlineage.by_producer == {"openlineage:dbt": 8}
    tables = LineageTables(spark, settings.sink)
    job = "dbt-bed/shop.analytics.shop."
    assert {
        (r.source_table, r.target_table, r.edge_kind, r.object_name)
        for r in tables.read("table_lineage").collect()
    } == {
        ("shop.raw.orders", "shop.analytics.stg_orders", "openlineage:dbt", job + "stg_orders"),
        (
            "shop.analytics.stg_orders",
            "shop.analytics.orders_daily",
            "openlineage:dbt",
            job + "orders_daily",
        ),
        (
            "shop.analytics.orders_daily",
            "shop.analytics.customer_revenue",
            "openlineage:dbt",
            job + "customer_revenue",
        ),
    }
    raw, stg = "shop.raw.orders", "shop.analytics.stg_orders"
    daily, revenue = "shop.analytics.orders_daily", "shop.analytics.customer_revenue"
    assert {
        (r.source_table, r.source_column, r.target_table, r.target_column, r.transformation_type)
        for r in tables.read("column_lineage").collect()
    } == {
        (raw, "order_id", stg, "order_id", "DIRECT"),
        (raw, "customer_id", stg, "customer_id", "DIRECT"),
        (raw, "amount", stg, "amount", "DIRECT"),
        (raw, "ordered_at", stg, "order_date", "DIRECT"),
        (stg, "customer_id", daily, "customer_id", "DIRECT"),
        (stg, "order_date", daily, "order_date", "DIRECT"),
        (stg, "amount", daily, "revenue", "DIRECT"),
        (daily, "customer_id", revenue, "customer_id", "DIRECT"),
        (daily, "revenue", revenue, "total_revenue", "DIRECT"),
    }
