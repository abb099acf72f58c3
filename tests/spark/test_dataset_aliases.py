"""Dataset identity end to end: a Spark job's events (paths, a symlinks facet) and a SQL log
(catalog names) in one warehouse; ``dataset_aliases`` links them with evidence, the graph
merges the nodes of the links that hold, and a link that arrives late (a DESCRIBE DETAIL
export) re-stitches the stored history at the next run without any statement parsed again."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from lineage_udfs.settings import (
    GraphSettings,
    IdentitySettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
)
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.graph.stage import run_graph_stage
from lineage_udfs.spark.storage.tables import LineageTables
from tests.support.ol_events import dataset, run_event, write_lines


def _components(tables: LineageTables) -> int:
    return tables.read("lineage_nodes").select("component_id").distinct().count()


def _warehouse(tmp_path: Path) -> tuple[Path, Path]:
    events = tmp_path / "events.jsonl"
    raw = dataset("file", "/wh/raw.db/orders", table="spark_catalog.raw.orders")
    out = dataset(
        "file",
        "/wh/clean/orders",
        columns={"id": [("file", "/wh/raw.db/orders", "id", "DIRECT", "IDENTITY")]},
    )
    write_lines(events, [run_event("etl.clean", "2026-11-01T01:00:00Z", [raw], [out])])
    log = tmp_path / "log.jsonl"
    log.write_text(
        "".join(
            json.dumps({"query_text": q, "default_database": "main"}) + "\n"
            for q in [
                "INSERT INTO raw.orders SELECT id FROM landing.orders",
                "INSERT INTO mart.daily SELECT id FROM clean.orders",
            ]
        ),
        encoding="utf-8",
    )
    return events, log


def _settings(events: Path, log: Path, base: Path, **identity: object) -> JobSettings:
    return JobSettings(
        sources=[
            SourceSettings(
                name="sql", format="jsonl", path=str(log), defaults={"dialect": "spark"}
            ),
            SourceSettings(name="listener", format="openlineage", path=str(events)),
        ],
        sink=SinkSettings(base_path=str(base)),
        identity=IdentitySettings(**identity),  # type: ignore[arg-type]
        graph=GraphSettings(incremental_min_edges=0),
    )


def test_aliases_stitch_the_producers_and_a_late_alias_restitches(
    spark: SparkSession, tmp_path: Path
) -> None:
    events, log = _warehouse(tmp_path)

    off = _settings(events, log, tmp_path / "off", enabled=False)
    extract(spark, off)
    tables_off = LineageTables(spark, off.sink)
    run_graph_stage(tables_off, off.graph)
    without = _components(tables_off)

    on = _settings(events, log, tmp_path / "on")
    first = extract(spark, on)
    tables = LineageTables(spark, on.sink)
    links = {
        (r.alias, r.canonical, r.evidence, r.status)
        for r in tables.read("dataset_aliases").collect()
    }
    assert links == {
        ("file:/wh/raw.db/orders", "raw.orders", "symlink", "proposed"),
        ("raw.orders", "main.raw.orders", "default_schema", "proposed"),
    }
    run_graph_stage(tables, on.graph)
    with_symlinks = _components(tables)
    assert (without, with_symlinks) == (3, 2)

    # the late evidence: where the catalog stores clean.orders (a trailing slash on the path)
    detail = tmp_path / "detail.jsonl"
    detail.write_text(
        json.dumps({"name": "spark_catalog.clean.orders", "location": "file:/wh/clean/orders/"})
        + "\n",
        encoding="utf-8",
    )
    late = _settings(events, log, tmp_path / "on", table_locations=str(detail))
    again = extract(spark, late)
    assert again.parsed_statements == 0  # nothing parsed again
    run_graph_stage(tables, late.graph)
    assert _components(tables) == 1
    nodes = {r.node for r in tables.read("lineage_nodes").collect()}
    assert nodes == {
        "main.landing.orders",
        "main.raw.orders",
        "main.clean.orders",
        "main.mart.daily",
    }
    assert (
        first.aliases is not None and again.aliases == first.aliases + 2
    )  # location, then session default

    # the steward rejects the symlink: the Spark job's input is its own node again
    steward = tmp_path / "steward.yaml"
    steward.write_text("- {alias: 'file:/wh/raw.db/orders', decision: reject}\n", encoding="utf-8")
    rejected = _settings(
        events, log, tmp_path / "on", table_locations=str(detail), steward_file=str(steward)
    )
    extract(spark, rejected)
    run_graph_stage(tables, rejected.graph)
    assert _components(tables) == 2
    status = {(r.alias, r.evidence): r.status for r in tables.read("dataset_aliases").collect()}
    assert status[("file:/wh/raw.db/orders", "symlink")] == "rejected"
