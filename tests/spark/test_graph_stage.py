"""The graph stage on real Delta tables: full run, incremental run, and their equality."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import GraphSettings, SinkSettings
from lineage_udfs.spark.delta import LineageTables
from lineage_udfs.spark.graph_stage import COMPONENTS_TABLE, GRAPH_TABLES, run_graph_stage
from lineage_udfs.spark.schemas import TABLES

FIRST = [
    ("raw.orders", "stg.orders", "query"),
    ("stg.orders", "mart.sales", "query"),
    ("raw.customers", "stg.customers", "query"),
    ("stg.customers", "mart.sales", "query"),
    ("mart.sales", "rpt.daily", "view"),
    ("s3://landing/events", "raw.events", "query"),
    ("raw.events", "stg.events", "query"),
]
SECOND = [
    *FIRST,
    ("stg.events", "mart.sessions", "query"),  # grows the events island only
    ("hub.h", "hub.k", "query"),  # a new island with a cycle
    ("hub.k", "hub.h", "query"),
]
COLUMNS = [
    ("raw.orders", "amount", "stg.orders", "amount", "DIRECT"),
    ("stg.orders", "amount", "mart.sales", "revenue", "DIRECT"),
    ("raw.orders", "status", "mart.sales", "revenue", "INDIRECT"),
    ("raw.events", "ts", "stg.events", "ts", "DIRECT"),
    ("stg.events", "ts", "mart.sessions", "started_at", "DIRECT"),
]


def _write_edges(
    spark: SparkSession,
    tables: LineageTables,
    edges: list[tuple[str, str, str]],
    occurrences: int = 1,
) -> None:
    table_rows = spark.createDataFrame(
        [(s, t, k, "fp", None, "sys", None, None, occurrences) for s, t, k in edges],
        TABLES["table_lineage"].schema,
    )
    nodes = {n for s, t, _ in edges for n in (s, t)}
    column_rows = spark.createDataFrame(
        [
            (st, sc, tt, tc, ty, "IDENTITY", "query", "fp", None, "sys", None, None, occurrences)
            for st, sc, tt, tc, ty in COLUMNS
            if st in nodes and tt in nodes
        ],
        TABLES["column_lineage"].schema,
    )
    for name, rows in (("table_lineage", table_rows), ("column_lineage", column_rows)):
        tables.ensure(name)
        _, path = tables.location(name)
        rows.write.format("delta").mode("overwrite").save(path)


def _tables(spark: SparkSession, base: Path) -> LineageTables:
    return LineageTables(spark, SinkSettings(base_path=str(base)))


def _read(tables: LineageTables, name: str) -> DataFrame:
    return tables.read(name)


def test_graph_stage_incremental_equals_full_refresh(
    spark: SparkSession, tmp_path: Path, assert_frames_equal: Callable[..., None]
) -> None:
    settings = GraphSettings(max_depth=20, max_paths_per_root=50)
    incremental = _tables(spark, tmp_path / "incremental")
    _write_edges(spark, incremental, FIRST)
    first = run_graph_stage(incremental, settings)
    assert first.components == 2  # orders+customers, and the events island
    _write_edges(spark, incremental, SECOND)
    second = run_graph_stage(incremental, settings)
    # raw.events' island grew and hub.h is new; the orders/customers component is untouched
    assert second.components == 3
    assert second.components_recomputed == 2

    full = _tables(spark, tmp_path / "full")
    _write_edges(spark, full, SECOND)
    run_graph_stage(full, settings, full_refresh=True)
    for name in (*GRAPH_TABLES, COMPONENTS_TABLE):
        assert_frames_equal(_read(incremental, name), _read(full, name))

    nodes = {r["node"]: r for r in _read(full, "lineage_nodes").collect()}
    assert nodes["s3://landing/events"]["kind"] == "external"
    assert nodes["rpt.daily"]["kind"] == "view"
    assert nodes["hub.h"]["on_cycle"] and nodes["hub.k"]["on_cycle"]
    assert not nodes["mart.sales"]["on_cycle"]
    downstream = {
        r["descendant"]
        for r in _read(full, "table_closure").where(F.col("ancestor") == "raw.orders").collect()
    }
    assert downstream == {"stg.orders", "mart.sales", "rpt.daily"}
    direct = _read(full, "column_closure").where(
        "ancestor_table = 'raw.orders' AND descendant_table = 'mart.sales'"
    )
    assert {(r["ancestor_column"], r["direct_min_distance"]) for r in direct.collect()} == {
        ("amount", 2),
        ("status", None),
    }


def test_graph_stage_rerun_without_changes_recomputes_nothing(
    spark: SparkSession, tmp_path: Path, assert_frames_equal: Callable[..., None]
) -> None:
    tables = _tables(spark, tmp_path)
    _write_edges(spark, tables, FIRST)
    settings = GraphSettings()
    run_graph_stage(tables, settings)
    before = {name: _read(tables, name).localCheckpoint() for name in GRAPH_TABLES}
    again = run_graph_stage(tables, settings)
    assert again.components_recomputed == 0
    for name, rows in before.items():
        assert_frames_equal(_read(tables, name), rows)


def _versions(tables: LineageTables) -> dict[str, int]:
    return {name: tables.latest_version(name) for name in (*GRAPH_TABLES, COMPONENTS_TABLE)}


def test_graph_stage_with_no_changed_component_writes_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    tables = _tables(spark, tmp_path)
    _write_edges(spark, tables, FIRST)
    settings = GraphSettings()
    first = run_graph_stage(tables, settings)
    written = _versions(tables)

    # the edge tables untouched: nothing is read or written
    again = run_graph_stage(tables, settings)
    assert (again.components, again.components_recomputed) == (first.components, 0)
    assert again.rows_written == {}
    assert _versions(tables) == written

    # new edge table versions with the same edges (usage stats only): still nothing written
    _write_edges(spark, tables, FIRST, occurrences=5)
    stats_only = run_graph_stage(tables, settings)
    assert (stats_only.components, stats_only.components_recomputed) == (first.components, 0)
    assert _versions(tables) == written

    # a changed component: one commit per table at most
    _write_edges(spark, tables, SECOND)
    changed = run_graph_stage(tables, settings)
    assert changed.components_recomputed == 2
    after = _versions(tables)
    assert {name: after[name] - written[name] for name in after} == dict.fromkeys(after, 1)
