"""The ``lineage`` command over a warehouse written by the benchmark generator
(bench/generate_graph.py, then the graph stage): rows with null edge kinds, subtypes and
fingerprints, a hub whose closure the cap cuts, and a history of two graph runs.

Every command answers (exit 0 or 1, never a traceback), ``--json`` included; answers agree with
the Delta tables read by Spark; the cap is shown where it bites; ``--as-of`` and ``lineage diff``
answer from the earlier run; the maintenance job leaves every answer unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from support.sample_warehouse import ROOT

from lineage_udfs.settings import GraphSettings, SinkSettings
from lineage_udfs.spark.graph.stage import run_graph_stage
from lineage_udfs.spark.storage.maintain import maintain
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

sys.path.insert(0, str(ROOT / "bench"))
from generate_graph import generate

LINEAGE = Path(sys.executable).parent / "lineage"
CAP = 40
NEW_SOURCE = "raw.added_later"


@dataclass
class Generated:
    base: Path
    tables: LineageTables
    hub: str
    leaf: str
    before: datetime  # between the two graph runs
    lineage_version: int  # table_lineage version of the first run


def _load(spark: SparkSession, tables: LineageTables, name: str, rows: Any) -> None:
    """Generator rows into the Delta table, the job's missing columns as nulls (as the graph
    benchmark loads them)."""
    frame = spark.createDataFrame(rows.to_pandas())
    for f in TABLES[name].schema:
        if f.name not in frame.columns:
            frame = frame.withColumn(f.name, F.lit(None).cast(f.dataType))
    tables.ensure(name)
    _, path = tables.location(name)
    frame.select(*TABLES[name].columns).write.format("delta").mode("append").save(path)


@pytest.fixture(scope="module")
def generated(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Generated:
    base = tmp_path_factory.mktemp("generated") / "lineage"
    tables = LineageTables(spark, SinkSettings(base_path=str(base)))
    graph = generate(600, 11)
    _load(spark, tables, "table_lineage", graph.tables)
    _load(spark, tables, "column_lineage", graph.columns)
    settings = GraphSettings(max_closure_per_node=CAP)
    run_graph_stage(tables, settings, full_refresh=True)
    closure = tables.read("table_closure")
    hub = closure.where("truncated").groupBy("ancestor").count().orderBy("ancestor").first()
    assert hub is not None, "the cap bites on no table: the test needs one it cuts"
    nodes = tables.read("lineage_nodes")
    leaf = nodes.where("is_leaf AND in_degree > 1").orderBy("node").first()
    assert leaf is not None
    lineage_version = int(tables.delta_table("table_lineage").history(1).first()["version"])
    time.sleep(1.5)
    before = datetime.now(UTC)
    time.sleep(1.5)
    # a second run: one new source of the leaf
    extra = spark.createDataFrame(
        [(NEW_SOURCE, leaf.node, "query")], "source_table string, target_table string, "
        "edge_kind string"
    )  # fmt: skip
    for f in TABLES["table_lineage"].schema:
        if f.name not in extra.columns:
            extra = extra.withColumn(f.name, F.lit(None).cast(f.dataType))
    _, path = tables.location("table_lineage")
    extra.select(*TABLES["table_lineage"].columns).write.format("delta").mode("append").save(path)
    run_graph_stage(tables, settings, full_refresh=True)
    return Generated(base, tables, hub.ancestor, leaf.node, before, lineage_version)


def _run(
    g: Generated, *args: str, ok: tuple[int, ...] = (0, 1)
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(LINEAGE), *args, "--warehouse", str(g.base)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in ok, (args, done.stderr)
    return done


def _json(g: Generated, *args: str) -> dict[str, Any]:
    done = _run(g, *args, "--json")
    return json.loads(done.stdout)


def _closure(g: Generated, where: str, column: str) -> dict[str, int]:
    rows = g.tables.read("table_closure").where(where).collect()
    return {r[column]: r.min_distance for r in rows}


def test_every_command_answers_over_nulls(generated: Generated) -> None:
    g = generated
    assert g.tables.read("column_lineage").where("edge_kind IS NULL").count() > 0
    leaf_up = _json(g, "upstream", g.leaf, "--limit", "100000")
    expected = _closure(g, f"descendant = '{g.leaf}' AND ancestor <> '{g.leaf}'", "ancestor")
    assert {r["table"]: r["distance"] for r in leaf_up["rows"]} == expected
    assert leaf_up["total"] == len(expected) and NEW_SOURCE in expected
    for edge in leaf_up["graph"]["edges"]:
        assert None not in edge["edge_kinds"]
    hub_down = _json(g, "downstream", g.hub, "--limit", "100000")
    expected = _closure(g, f"ancestor = '{g.hub}' AND descendant <> '{g.hub}'", "descendant")
    assert {r["table"]: r["distance"] for r in hub_down["rows"]} == expected
    column = g.tables.read("column_closure").where(f"descendant_table = '{g.leaf}'").first()
    assert column is not None
    col_up = _json(g, "upstream", f"{g.leaf}.{column.descendant_column}")
    assert col_up["rows"] and all(r["distance"] >= 1 for r in col_up["rows"])
    found = _json(g, "search", g.leaf.split(".")[-1])
    assert g.leaf in {r["name"] for r in found["rows"]}
    path = _json(g, "path", NEW_SOURCE, g.leaf)
    assert path["rows"][0]["path"] == f"{NEW_SOURCE} -> {g.leaf}"
    for args in (["upstream", g.leaf], ["downstream", g.hub], ["search", "rpt"]):
        assert _run(g, *args).returncode == 0


def test_the_cap_is_shown_where_it_bites(generated: Generated) -> None:
    g = generated
    answer = _json(g, "downstream", g.hub)
    assert answer["complete"] is False
    assert "max_closure_per_node" in answer["cap"] and "full-refresh" in answer["cap"]
    human = _run(g, "downstream", g.hub)
    assert "incomplete" in human.stdout and "max_closure_per_node" in human.stdout
    whole = _json(g, "upstream", NEW_SOURCE)  # a new root: nothing upstream, nothing cut
    assert whole["complete"] is True and whole["total"] == 0


def test_limit_and_offset_page_through_an_answer(generated: Generated) -> None:
    g = generated
    every = _json(g, "downstream", g.hub, "--limit", "100000")["rows"]
    assert len(every) > 10
    first = _json(g, "downstream", g.hub, "--limit", "5")
    second = _json(g, "downstream", g.hub, "--limit", "5", "--offset", "5")
    assert first["rows"] + second["rows"] == every[:10]
    assert first["total"] == len(every) and f"of {len(every)}" in first["message"]
    assert {n["id"] for n in first["graph"]["nodes"]} == {g.hub, *(r["table"] for r in every[:5])}


def test_as_of_answers_from_the_earlier_run(generated: Generated) -> None:
    g = generated
    then = _json(g, "upstream", g.leaf, "--as-of", g.before.isoformat(), "--limit", "100000")
    assert NEW_SOURCE not in {r["table"] for r in then["rows"]}
    assert then["as_of"] == g.before.isoformat()
    now = _json(g, "upstream", g.leaf, "--limit", "100000")
    assert {r["table"] for r in now["rows"]} - {r["table"] for r in then["rows"]} == {NEW_SOURCE}
    bad = subprocess.run(
        [str(LINEAGE), "upstream", g.leaf, "--as-of", "last tuesday", "--warehouse", str(g.base)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "--as-of takes a Delta version" in bad.stderr


def test_diff_lists_the_edge_that_appeared(generated: Generated) -> None:
    g = generated
    for since in (g.before.isoformat(), str(g.lineage_version)):
        answer = _json(g, "diff", g.leaf, "--since", since)
        assert [(r["change"], r["source"], r["target"]) for r in answer["rows"]] == [
            ("appeared", NEW_SOURCE, g.leaf)
        ]
    nothing = _json(g, "diff", g.hub, "--since", g.before.isoformat())
    assert nothing["rows"] == [] and "no edge" in nothing["message"]


def test_sql_runs_several_statements_without_a_jvm(generated: Generated) -> None:
    g = generated
    answer = _json(
        g, "sql",
        f"SELECT count(*) AS n FROM table_closure WHERE ancestor = '{g.hub}';"
        f" SELECT ancestor, min_distance FROM table_closure WHERE descendant = '{g.leaf}'"
        " ORDER BY min_distance, ancestor",
    )  # fmt: skip
    first, second = answer["statements"]
    expected = _closure(g, f"descendant = '{g.leaf}'", "ancestor")
    assert first["rows"] == [{"n": len(_closure(g, f"ancestor = '{g.hub}'", "descendant"))}]
    assert {r["ancestor"]: r["min_distance"] for r in second["rows"]} == expected
    wrong = _run(g, "sql", "SELECT 1 AS one; SELECT nope FROM table_closure", ok=(2,))
    assert wrong.stderr.startswith("error: statement 2:"), wrong.stderr
    assert wrong.stderr.strip().count("\n") == 0


def test_maintenance_keeps_every_answer(generated: Generated) -> None:
    g = generated
    questions = [
        ("upstream", g.leaf, "--limit", "100000"),
        ("downstream", g.hub, "--limit", "100000"),
        ("path", NEW_SOURCE, g.leaf),
        ("search", "mart"),
    ]
    before = [_json(g, *q) for q in questions]
    summary = maintain(g.tables)
    assert summary.optimized["table_closure"].startswith("zorder")
    assert set(summary.vacuumed) >= {"table_closure", "column_closure", "table_lineage"}
    after = [_json(g, *q) for q in questions]
    assert after == before
    # the earlier run still answers: VACUUM kept its files (30 days)
    then = _json(g, "upstream", g.leaf, "--as-of", g.before.isoformat(), "--limit", "100000")
    assert NEW_SOURCE not in {r["table"] for r in then["rows"]} and then["rows"]
