"""Dataset identity end to end: a Spark job's events (paths, a symlinks facet) and a SQL log
(catalog names) in one warehouse; ``dataset_aliases`` links them with evidence, the graph
merges the nodes of the links that hold, and a link that arrives late (a DESCRIBE DETAIL
export) re-stitches the stored history at the next run without any statement parsed again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from typer.testing import CliRunner

from lineage_udfs.cli.app import app as cli_app
from lineage_udfs.emit.config import FileTransportSettings, OpenLineageSettings, SpoolSettings
from lineage_udfs.settings import (
    GraphSettings,
    IdentitySettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
    TagSettings,
)
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.graph.stage import run_graph_stage
from lineage_udfs.spark.openlineage.emission import emit_openlineage
from lineage_udfs.spark.pipeline import run_extract
from lineage_udfs.spark.storage.tables import LineageTables
from tests.support.ol_events import dataset, run_event, write_lines


def _components(tables: LineageTables) -> int:
    return tables.read("lineage_nodes").select("component_id").distinct().count()


def _warehouse(tmp_path: Path, **row: str) -> tuple[Path, Path]:
    """The listener's events and a SQL log (``row``: more fields of each log row)."""
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
            json.dumps({"query_text": q, "default_database": "main", **row}) + "\n"
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


def _emitting(settings: JobSettings, out: Path, min_confidence: float = 0.9) -> JobSettings:
    """``settings`` emitting OpenLineage events to the file ``out`` (appended)."""
    return settings.model_copy(
        update={
            "openlineage": OpenLineageSettings(
                enabled=True,
                transport=FileTransportSettings(log_file_path=str(out)),
                spool=SpoolSettings(path=str(out.parent / "spool")),
            ),
            "graph": GraphSettings(incremental_min_edges=0, alias_min_confidence=min_confidence),
        }
    )


def _emitted(out: Path, seen: int) -> tuple[dict[str, set[tuple[str, str, str]]], int]:
    """The datasets of the events written after the first ``seen`` lines (namespace/name ->
    its symlinks facet's identifiers: namespace, name, type) and the number of lines now."""
    lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
    found: dict[str, set[tuple[str, str, str]]] = {}
    for line in lines[seen:]:
        event = json.loads(line)
        for named in event["inputs"] + event["outputs"]:
            facet = named["facets"].get("symlinks")
            links = (
                {(i["namespace"], i["name"], i["type"]) for i in facet["identifiers"]}
                if facet
                else set()
            )
            key = f"{named['namespace']}/{named['name']}"
            assert found.get(key, links) == links  # every event names it alike
            found[key] = links
    return found, len(lines)


def test_emitted_datasets_carry_the_aliases_that_hold_and_a_late_alias_is_re_emitted(
    spark: SparkSession, tmp_path: Path
) -> None:
    events, log = _warehouse(tmp_path)
    out = tmp_path / "emitted.jsonl"
    base = tmp_path / "wh"
    ns = "lineage-warehouse"  # openlineage.namespace: the log rows have no source_system

    settings = _emitting(_settings(events, log, base), out)
    extract(spark, settings)
    emit_openlineage(spark, settings)
    runs, seen = _emitted(out, 0)
    assert runs == {
        f"{ns}/main.landing.orders": set(),
        f"{ns}/main.raw.orders": {
            ("file", "/wh/raw.db/orders", "LOCATION"),  # the listener's name (symlink)
            (ns, "raw.orders", "TABLE"),  # the name before the session default
        },
        f"{ns}/main.clean.orders": set(),
        f"{ns}/main.mart.daily": set(),
    }
    assert seen == 4  # START and COMPLETE of each statement's run

    # the late evidence: where the catalog stores clean.orders; only the statement reading it
    # is emitted again, its input now with the names the export gave
    detail = tmp_path / "detail.jsonl"
    detail.write_text(
        json.dumps({"name": "spark_catalog.clean.orders", "location": "file:/wh/clean/orders/"})
        + "\n",
        encoding="utf-8",
    )
    late = _emitting(_settings(events, log, base, table_locations=str(detail)), out)
    assert extract(spark, late).parsed_statements == 0
    summary = emit_openlineage(spark, late)
    assert (summary.scope, summary.changed_queries, summary.realiased_statements) == (
        "incremental",
        0,
        1,
    )
    runs, seen = _emitted(out, seen)
    assert seen == 6
    assert runs == {
        f"{ns}/main.clean.orders": {
            ("file", "/wh/clean/orders", "LOCATION"),
            (ns, "clean.orders", "TABLE"),
        },
        f"{ns}/main.mart.daily": set(),
    }

    # the steward rejects the listener's symlink: the statement writing raw.orders is emitted
    # again without it
    steward = tmp_path / "steward.yaml"
    steward.write_text("- {alias: 'file:/wh/raw.db/orders', decision: reject}\n", encoding="utf-8")
    rejected = _emitting(
        _settings(events, log, base, table_locations=str(detail), steward_file=str(steward)), out
    )
    extract(spark, rejected)
    emit_openlineage(spark, rejected)
    runs, seen = _emitted(out, seen)
    assert seen == 8
    assert runs == {
        f"{ns}/main.landing.orders": set(),
        f"{ns}/main.raw.orders": {(ns, "raw.orders", "TABLE")},
    }

    # nothing changed: nothing emitted
    assert emit_openlineage(spark, rejected).counts.emitted == 0
    assert _emitted(out, seen)[1] == seen

    # above the session-default links' confidence (0.9) only the catalog location (0.95)
    # holds, and it links the path to clean.orders, not to main.clean.orders: no emitted
    # dataset has another name, and both statements are emitted again without them
    strict = _emitting(
        _settings(events, log, base, table_locations=str(detail), steward_file=str(steward)),
        out,
        min_confidence=0.95,
    )
    assert emit_openlineage(spark, strict).realiased_statements == 2
    runs, seen = _emitted(out, seen)
    assert seen == 12
    assert len(runs) == 4 and all(links == set() for links in runs.values())
    aliases = {
        (r.dataset, tuple(r.symlinks))
        for r in LineageTables(spark, strict.sink).read("openlineage_symlinks").collect()
    }
    assert aliases == {
        ("clean.orders", ("file:/wh/clean/orders",)),
        ("file:/wh/clean/orders", ("clean.orders",)),
    }


def _cli(base: Path, *args: str) -> tuple[dict[str, Any], str]:
    """``lineage ARGS --warehouse BASE --json``: the JSON answer and the stderr lines."""
    result = CliRunner().invoke(cli_app, [*args, "--warehouse", str(base), "--json"])
    assert result.exit_code in (0, 1), result.stderr  # 1: an impact that breaks
    return json.loads(result.stdout), result.stderr


def test_every_command_follows_an_alias_to_its_node(spark: SparkSession, tmp_path: Path) -> None:
    events, log = _warehouse(tmp_path, start_time="2026-11-01T06:00:00Z", user_name="etl")
    tags = tmp_path / "tags.yaml"
    tags.write_text("tags:\n  - column: main.raw.orders.id\n    tags: [pii]\n", encoding="utf-8")
    settings = _settings(events, log, tmp_path / "wh").model_copy(
        update={"tags": TagSettings(enabled=True, file=str(tags))}
    )
    run_extract(spark, settings, environ={})
    base = str(tmp_path / "wh")
    path, node = "file:/wh/raw.db/orders", "main.raw.orders"

    # the listener's path and the name before the session default are main.raw.orders
    for name in (path, "raw.orders", "RAW.Orders"):
        answer, err = _cli(Path(base), "upstream", name)
        assert answer["title"] == f"upstream of {node}"
        assert [r["table"] for r in answer["rows"]] == ["main.landing.orders"]
        alias = name if name != "RAW.Orders" else "raw.orders"
        assert answer["aliases_followed"] == [{"name": alias, "node": node}]
        assert err.splitlines() == [
            f"note: {alias} is an alias of {node} (dataset_aliases): answering for {node}"
        ]
    down, _ = _cli(Path(base), "downstream", path)
    assert [r["table"] for r in down["rows"]] == ["file:/wh/clean/orders"]
    # a column of an alias is the column of the node
    column, err = _cli(Path(base), "upstream", "raw.orders.id")
    assert column["title"] == f"upstream of {node}.id"
    assert {(r["table"], r["column"]) for r in column["rows"]} == {("main.landing.orders", "id")}
    assert column["aliases_followed"] == [{"name": "raw.orders.id", "node": f"{node}.id"}]
    impact, _ = _cli(Path(base), "impact", "--drop-column", f"{path}.id")
    assert impact["aliases_followed"] == [{"name": path, "node": node}]
    # the listener's edge from the path is an edge of the node: its target breaks
    assert [(r["column"], r["impact"]) for r in impact["rows"]] == [
        (f"{node}.id", "changed"),
        ("file:/wh/clean/orders.id", "breaking"),
    ]
    # a tag declared on the node flows over the edge stored under its path
    tagged, _ = _cli(Path(base), "tags", "raw.orders.id")
    assert {(r["column"], r["status"]) for r in tagged["rows"]} == {
        (f"{node}.id", "declared"),
        ("file:/wh/clean/orders.id", "propagated"),
    }
    # the activity commands answer for the node too
    for command in ("owner", "usage", "freshness"):
        answer, err = _cli(Path(base), command, path)
        assert node in answer["title"] and answer["aliases_followed"], command
        assert err.startswith(f"note: {path} is an alias of {node}"), command
    usage, _ = _cli(Path(base), "usage", "raw.orders")
    assert [(r["user_name"], r["kind"]) for r in usage["rows"]] == [("etl", "write")]
    # the node's own name, and a name no link holds, are answered as they are, without a note
    own, err = _cli(Path(base), "upstream", node)
    assert "aliases_followed" not in own and err == ""
    result = CliRunner().invoke(cli_app, ["upstream", "clean.orders", "--warehouse", base])
    assert result.exit_code == 2 and "unknown table 'clean.orders'" in result.stderr
    assert "alias" not in result.stderr
