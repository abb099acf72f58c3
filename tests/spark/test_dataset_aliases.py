"""Dataset identity end to end: a Spark job's events (paths, a symlinks facet) and a SQL log
(catalog names) in one warehouse; ``dataset_aliases`` links them with evidence, the graph
merges the nodes of the links that hold, and a link that arrives late (a DESCRIBE DETAIL
export) re-stitches the stored history at the next run without any statement parsed again.

One warehouse goes through the whole story, each step run once by a module fixture on a copy
of the previous step's warehouse (Delta tables are relocatable; the sources stay where the
first step wrote them): the first run of the whole job, the late evidence, the steward's
rejection. The tests only read what a step left, so each passes alone and in any order."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
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
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.graph.stage import run_graph_stage
from lineage_udfs.spark.openlineage.emission import EmitSummary, emit_openlineage
from lineage_udfs.spark.pipeline import ExtractOutcome, run_extract
from lineage_udfs.spark.storage.tables import LineageTables
from tests.support.ol_events import dataset, run_event, write_lines

NS = "lineage-warehouse"  # openlineage.namespace: the log rows have no source_system
ROW = {"start_time": "2026-11-01T06:00:00Z", "user_name": "etl"}
"""More fields of each log row (the activity commands' writer and time)."""


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


def _lines(out: Path) -> list[str]:
    """The events emitted to ``out`` so far."""
    return out.read_text(encoding="utf-8").splitlines() if out.exists() else []


def _emitted(lines: list[str]) -> dict[str, set[tuple[str, str, str]]]:
    """The datasets of the events ``lines`` (namespace/name -> its symlinks facet's
    identifiers: namespace, name, type)."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    for line in lines:
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
    return found


@dataclass(frozen=True)
class Warehouse:
    """A warehouse folder (``wh``: the tables; ``emitted.jsonl``: the events emitted to it so
    far) fed by the sources ``events`` and ``log``."""

    root: Path
    events: Path
    log: Path

    @property
    def base(self) -> Path:
        return self.root / "wh"

    @property
    def out(self) -> Path:
        return self.root / "emitted.jsonl"

    def settings(self, min_confidence: float = 0.9, **identity: object) -> JobSettings:
        """The job's settings for this warehouse, emitting to ``out``."""
        base = _settings(self.events, self.log, self.base, **identity)
        return _emitting(base, self.out, min_confidence)

    def tables(self, spark: SparkSession) -> LineageTables:
        return LineageTables(spark, SinkSettings(base_path=str(self.base)))

    def copy(self, root: Path) -> Warehouse:
        """This warehouse's tables, emitted events and spool in ``root``; the sources stay
        where they are (their paths are in source_state, and the next run reads them)."""
        shutil.copytree(self.base, root / "wh")
        if self.out.exists():
            shutil.copy2(self.out, root / "emitted.jsonl")
        if (self.root / "spool").exists():
            shutil.copytree(self.root / "spool", root / "spool")
        return Warehouse(root, self.events, self.log)


@dataclass(frozen=True)
class First:
    warehouse: Warehouse
    outcome: ExtractOutcome
    lines: list[str]


@dataclass(frozen=True)
class Late:
    warehouse: Warehouse
    detail: Path
    run: RunSummary
    emission: EmitSummary
    lines: list[str]


@dataclass(frozen=True)
class Rejected:
    warehouse: Warehouse
    lines: list[str]
    """After the emission of the run with the steward's decision."""
    unchanged: EmitSummary
    """The next emission, nothing changed."""
    lines_unchanged: list[str]
    strict: EmitSummary
    """Then an emission with ``alias_min_confidence`` 0.95."""
    lines_strict: list[str]


@pytest.fixture(scope="module")
def first(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> First:
    """The first run of the whole job (extract, graph with a tag on main.raw.orders.id,
    emission, activity) over the listener's events and the SQL log."""
    root = tmp_path_factory.mktemp("first")
    events, log = _warehouse(root, **ROW)
    tags = root / "tags.yaml"
    tags.write_text("tags:\n  - column: main.raw.orders.id\n    tags: [pii]\n", encoding="utf-8")
    warehouse = Warehouse(root, events, log)
    settings = warehouse.settings().model_copy(
        update={"tags": TagSettings(enabled=True, file=str(tags))}
    )
    outcome = run_extract(spark, settings, environ={})
    return First(warehouse, outcome, _lines(warehouse.out))


@pytest.fixture(scope="module")
def late(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, first: First) -> Late:
    """The next run (extract, graph, emission) on a copy of the first run's warehouse, with
    the late evidence: where the catalog stores clean.orders (a trailing slash on the path)."""
    root = tmp_path_factory.mktemp("late")
    warehouse = first.warehouse.copy(root)
    detail = root / "detail.jsonl"
    detail.write_text(
        json.dumps({"name": "spark_catalog.clean.orders", "location": "file:/wh/clean/orders/"})
        + "\n",
        encoding="utf-8",
    )
    settings = warehouse.settings(table_locations=str(detail))
    run = extract(spark, settings)
    run_graph_stage(warehouse.tables(spark), settings.graph)
    emission = emit_openlineage(spark, settings)
    return Late(warehouse, detail, run, emission, _lines(warehouse.out))


@pytest.fixture(scope="module")
def rejected(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, late: Late) -> Rejected:
    """On a copy of the late run's warehouse: a run (extract, graph, emission) where the steward
    rejects the listener's symlink, an emission with nothing changed, then one at
    ``alias_min_confidence`` 0.95."""
    root = tmp_path_factory.mktemp("rejected")
    warehouse = late.warehouse.copy(root)
    steward = root / "steward.yaml"
    steward.write_text("- {alias: 'file:/wh/raw.db/orders', decision: reject}\n", encoding="utf-8")
    identity: dict[str, object] = {
        "table_locations": str(late.detail),
        "steward_file": str(steward),
    }
    settings = warehouse.settings(**identity)
    extract(spark, settings)
    run_graph_stage(warehouse.tables(spark), settings.graph)
    emit_openlineage(spark, settings)
    lines = _lines(warehouse.out)
    unchanged = emit_openlineage(spark, settings)
    lines_unchanged = _lines(warehouse.out)
    strict = emit_openlineage(spark, warehouse.settings(0.95, **identity))
    return Rejected(warehouse, lines, unchanged, lines_unchanged, strict, _lines(warehouse.out))


def test_without_identity_the_producers_stay_apart(spark: SparkSession, tmp_path: Path) -> None:
    """The baseline of the stitching: with ``identity.enabled`` false the listener's paths and
    the log's names are three components (the first run below has two)."""
    events, log = _warehouse(tmp_path, **ROW)
    off = _settings(events, log, tmp_path / "off", enabled=False)
    extract(spark, off)
    tables = LineageTables(spark, off.sink)
    run_graph_stage(tables, off.graph)
    assert _components(tables) == 3


def test_aliases_stitch_the_producers(spark: SparkSession, first: First) -> None:
    """The first run proposes the listener's symlink and the session default; the graph merges
    the Spark job's input with the log's raw.orders: two components, not three."""
    tables = first.warehouse.tables(spark)
    links = {
        (r.alias, r.canonical, r.evidence, r.status)
        for r in tables.read("dataset_aliases").collect()
    }
    assert links == {
        ("file:/wh/raw.db/orders", "raw.orders", "symlink", "proposed"),
        ("raw.orders", "main.raw.orders", "default_schema", "proposed"),
    }
    assert _components(tables) == 2


def test_emitted_datasets_carry_the_aliases_that_hold(first: First) -> None:
    """Each emitted dataset lists its other names (the links that hold) in its symlinks
    facet."""
    assert _emitted(first.lines) == {
        f"{NS}/main.landing.orders": set(),
        f"{NS}/main.raw.orders": {
            ("file", "/wh/raw.db/orders", "LOCATION"),  # the listener's name (symlink)
            (NS, "raw.orders", "TABLE"),  # the name before the session default
        },
        f"{NS}/main.clean.orders": set(),
        f"{NS}/main.mart.daily": set(),
    }
    assert len(first.lines) == 4  # START and COMPLETE of each statement's run


def test_a_late_alias_restitches_without_parsing_again(
    spark: SparkSession, first: First, late: Late
) -> None:
    """The catalog location links the listener's output path to clean.orders: one component
    of the log's four nodes, nothing parsed again."""
    assert late.run.parsed_statements == 0  # nothing parsed again
    tables = late.warehouse.tables(spark)
    assert _components(tables) == 1
    nodes = {r.node for r in tables.read("lineage_nodes").collect()}
    assert nodes == {
        "main.landing.orders",
        "main.raw.orders",
        "main.clean.orders",
        "main.mart.daily",
    }
    first_aliases = first.outcome.run.aliases
    assert (
        first_aliases is not None and late.run.aliases == first_aliases + 2
    )  # location, then session default


def test_a_late_alias_is_re_emitted(first: First, late: Late) -> None:
    """Only the statement reading clean.orders is emitted again, its input now with the names
    the export gave."""
    summary = late.emission
    assert (summary.scope, summary.changed_queries, summary.realiased_statements) == (
        "incremental",
        0,
        1,
    )
    assert late.lines[:4] == first.lines
    assert len(late.lines) == 6
    assert _emitted(late.lines[4:]) == {
        f"{NS}/main.clean.orders": {
            ("file", "/wh/clean/orders", "LOCATION"),
            (NS, "clean.orders", "TABLE"),
        },
        f"{NS}/main.mart.daily": set(),
    }


def test_a_rejected_alias_splits_the_node_again(spark: SparkSession, rejected: Rejected) -> None:
    """The steward rejects the symlink: the Spark job's input is its own node again."""
    tables = rejected.warehouse.tables(spark)
    assert _components(tables) == 2
    status = {(r.alias, r.evidence): r.status for r in tables.read("dataset_aliases").collect()}
    assert status[("file:/wh/raw.db/orders", "symlink")] == "rejected"


def test_a_rejected_alias_is_re_emitted_without_it_and_then_nothing(rejected: Rejected) -> None:
    """The statement writing raw.orders is emitted again without the rejected symlink; the next
    emission, nothing changed, emits nothing."""
    assert len(rejected.lines) == 8
    assert _emitted(rejected.lines[6:]) == {
        f"{NS}/main.landing.orders": set(),
        f"{NS}/main.raw.orders": {(NS, "raw.orders", "TABLE")},
    }
    assert rejected.unchanged.counts.emitted == 0
    assert rejected.lines_unchanged == rejected.lines


def test_above_the_session_default_confidence_only_the_location_holds(
    spark: SparkSession, rejected: Rejected
) -> None:
    """Above the session-default links' confidence (0.9) only the catalog location (0.95)
    holds, and it links the path to clean.orders, not to main.clean.orders: no emitted dataset
    has another name, and both statements are emitted again without them."""
    assert rejected.strict.realiased_statements == 2
    assert len(rejected.lines_strict) == 12
    runs = _emitted(rejected.lines_strict[8:])
    assert len(runs) == 4 and all(links == set() for links in runs.values())
    aliases = {
        (r.dataset, tuple(r.symlinks))
        for r in rejected.warehouse.tables(spark).read("openlineage_symlinks").collect()
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


def test_every_command_follows_an_alias_to_its_node(first: First) -> None:
    """The ``lineage`` commands (read-only) answer a name a link holds for its node, with a
    note, on the first run's warehouse."""
    base = str(first.warehouse.base)
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
