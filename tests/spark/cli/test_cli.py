"""The ``lineage`` console script, run as a user runs it, against the sample warehouse.

Every answer is checked against the Delta tables read by Spark (the CLI reads them with
delta-rs); the HTML page is opened in headless Chromium, its node labels read from the DOM and a
screenshot kept under the test's tmp dir.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from support.sample_warehouse import ROOT, SampleWarehouse, screenshots

LINEAGE = Path(sys.executable).parent / "lineage"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _run(wh: SampleWarehouse, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINEAGE), *args, "--config", str(wh.overlay)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )


def _json(wh: SampleWarehouse, *args: str) -> dict[str, Any]:
    done = _run(wh, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _table(spark: SparkSession, wh: SampleWarehouse, name: str) -> DataFrame:
    return spark.read.format("delta").load(str(wh.base_path / name))


def test_upstream_of_a_table_is_its_closure(spark: SparkSession, sample_warehouse) -> None:
    wh = sample_warehouse
    answer = _json(wh, "upstream", "reports.daily_revenue")
    expected = {
        r.ancestor: r.min_distance
        for r in _table(spark, wh, "table_closure")
        .where(F.col("descendant") == "reports.daily_revenue")
        .collect()
    }
    assert {r["table"]: r["distance"] for r in answer["rows"]} == expected
    assert {"raw.orders", "marts.fct_sales"} <= set(expected)  # the sample's known chain
    graph = answer["graph"]
    assert graph["focus"] == "reports.daily_revenue"
    assert {n["id"] for n in graph["nodes"]} == {*expected, "reports.daily_revenue"}
    # every drawn edge is a table or column lineage edge, and every such edge inside the set
    # is drawn (column_lineage also has a table's columns feeding the same table's)
    members = {*expected, "reports.daily_revenue"}
    edges = {
        (r.source_table, r.target_table)
        for name in ("table_lineage", "column_lineage")
        for r in _table(spark, wh, name).select("source_table", "target_table").collect()
        if r.source_table in members and r.target_table in members
    }
    assert {(e["source"], e["target"]) for e in graph["edges"]} == edges
    # edge labels carry the column edges' transformation types
    fct = next(e for e in graph["edges"] if e["target"] == "reports.daily_revenue"
               and e["source"] == "marts.fct_sales")  # fmt: skip
    types = {
        (r.transformation_type, r.transformation_subtype)
        for r in _table(spark, wh, "column_lineage")
        .where(
            (F.col("source_table") == "marts.fct_sales")
            & (F.col("target_table") == "reports.daily_revenue")
        )
        .collect()
    }
    assert {
        (c["transformation_type"], c["transformation_subtype"]) for c in fct["columns"]
    } == types
    for kind, subtype in types:
        assert kind in fct["label"] and subtype in fct["label"]


def test_upstream_depth_limits_the_answer(spark: SparkSession, sample_warehouse) -> None:
    answer = _json(sample_warehouse, "upstream", "reports.daily_revenue", "--depth", "1")
    direct = {
        r.source_table
        for r in _table(spark, sample_warehouse, "table_lineage")
        .where(F.col("target_table") == "reports.daily_revenue")
        .collect()
    }
    assert {r["table"] for r in answer["rows"]} == direct - {"reports.daily_revenue"}
    assert {r["distance"] for r in answer["rows"]} == {1}


def test_column_upstream_and_downstream_are_the_column_closure(
    spark: SparkSession, sample_warehouse
) -> None:
    wh = sample_warehouse
    closure = _table(spark, wh, "column_closure")
    up = _json(wh, "upstream", "reports.daily_revenue.revenue")
    expected_up = {
        (r.ancestor_table, r.ancestor_column, r.min_distance, r.direct_min_distance)
        for r in closure.where(
            (F.col("descendant_table") == "reports.daily_revenue")
            & (F.col("descendant_column") == "revenue")
        ).collect()
    }
    got_up = {(r["table"], r["column"], r["distance"], r["direct_distance"]) for r in up["rows"]}
    assert got_up == expected_up and ("raw.orders", "amount") in {x[:2] for x in got_up}
    assert up["graph"]["focus_column"] == "revenue"

    down = _json(wh, "downstream", "raw.orders.amount")
    expected_down = {
        (r.descendant_table, r.descendant_column)
        for r in closure.where(
            (F.col("ancestor_table") == "raw.orders") & (F.col("ancestor_column") == "amount")
        ).collect()
    }
    assert {(r["table"], r["column"]) for r in down["rows"]} == expected_down
    assert ("reports.daily_revenue", "revenue") in expected_down


def test_downstream_of_a_table_is_its_impact(spark: SparkSession, sample_warehouse) -> None:
    answer = _json(sample_warehouse, "downstream", "raw.orders")
    expected = {
        r.descendant
        for r in _table(spark, sample_warehouse, "table_closure")
        .where(F.col("ancestor") == "raw.orders")
        .collect()
    }
    assert {r["table"] for r in answer["rows"]} == expected
    assert "reports.daily_revenue" in expected


def test_path_lists_paths_made_of_real_edges(spark: SparkSession, sample_warehouse) -> None:
    wh = sample_warehouse
    answer = _json(wh, "path", "raw.orders", "reports.daily_revenue")
    edges = {(r.source_table, r.target_table) for r in _table(spark, wh, "table_lineage").collect()}
    assert answer["rows"], answer
    for row in answer["rows"]:
        hops = row["path"].split(" -> ")
        assert hops[0] == "raw.orders" and hops[-1] == "reports.daily_revenue"
        assert row["hops"] == len(hops) - 1
        assert all((a, b) in edges for a, b in itertools.pairwise(hops))
    assert ["raw.orders", "staging.stg_orders", "marts.fct_sales", "reports.daily_revenue"] in [
        r["path"].split(" -> ") for r in answer["rows"]
    ]

    none = _run(wh, "path", "reports.daily_revenue", "raw.orders")
    assert none.returncode == 1
    assert "no lineage path from reports.daily_revenue to raw.orders" in none.stdout
    assert "the other way round there is one" in none.stdout


def test_search_finds_tables_and_columns(spark: SparkSession, sample_warehouse) -> None:
    wh = sample_warehouse
    answer = _json(wh, "search", "revenue")
    nodes = {r.node for r in _table(spark, wh, "lineage_nodes").collect()}
    names = {r["name"] for r in answer["rows"]}
    assert {n for n in nodes if "revenue" in n} <= names
    assert "reports.daily_revenue.revenue" in names
    glob = _json(wh, "search", "raw.*")
    assert {r["name"] for r in glob["rows"] if r["kind"] != "column"} == {
        n for n in nodes if n.startswith("raw.")
    }
    missing = _run(wh, "search", "no_such_thing_anywhere")
    assert missing.returncode == 1 and "nothing matches" in missing.stdout


def test_statement_shows_the_failed_parse(spark: SparkSession, sample_warehouse) -> None:
    wh = sample_warehouse
    failed = (
        _table(spark, wh, "parsed_statements")
        .where(F.col("status") == "failed")
        .orderBy("fingerprint")
        .first()
    )
    assert failed is not None
    answer = _json(wh, "statement", failed.fingerprint[:10])
    row = answer["rows"][0]
    assert row["fingerprint"] == failed.fingerprint
    assert (row["status"], row["parser"], row["error_kind"], row["error"], row["masked_sql"]) == (
        failed.status,
        failed.parser,
        failed.error_kind,
        failed.error,
        failed.masked_sql,
    )
    queries = _table(spark, wh, "queries").where(F.col("fingerprint") == failed.fingerprint)
    assert row["log_rows"] == queries.count()
    human = _run(wh, "statement", failed.fingerprint[:10])
    assert human.returncode == 0 and failed.error_kind in human.stdout


def test_runs_and_quarantine(spark: SparkSession, sample_warehouse) -> None:
    wh = sample_warehouse
    runs = _json(wh, "runs")
    expected = {r.run_id: r for r in _table(spark, wh, "lineage_runs").collect()}
    assert {r["run_id"] for r in runs["rows"]} == set(expected)
    for row in runs["rows"]:
        assert row["rows_read"] == expected[row["run_id"]].rows_read
        assert row["by_status"] == dict(expected[row["run_id"]].by_status)

    quarantine = _table(spark, wh, "quarantine")
    every = _json(wh, "quarantine", "--limit", "1000")
    assert len(every["rows"]) == quarantine.count() > 0
    parse_only = _json(wh, "quarantine", "--stage", "parse", "--limit", "1000")
    assert len(parse_only["rows"]) == quarantine.where(F.col("stage") == "parse").count()
    assert {r["stage"] for r in parse_only["rows"]} <= {"parse"}
    table = _run(wh, "quarantine")
    assert table.returncode == 0 and "reason" in table.stdout


def test_errors_are_one_line_with_suggestions(sample_warehouse, tmp_path: Path) -> None:
    wh = sample_warehouse
    unknown = _run(wh, "upstream", "daily_revenu")
    assert unknown.returncode == 2
    assert unknown.stderr.strip().count("\n") == 0, unknown.stderr
    assert "unknown table 'daily_revenu'; did you mean reports.daily_revenue" in unknown.stderr

    column = _run(wh, "downstream", "raw.orders.amont")
    assert column.returncode == 2 and "did you mean raw.orders.amount" in column.stderr

    fingerprint = _run(wh, "statement", "zzzzzzzz")
    assert fingerprint.returncode == 2 and "unknown statement fingerprint" in fingerprint.stderr

    empty = tmp_path / "empty.yaml"
    empty.write_text(f"sink: {{base_path: {tmp_path / 'nothing'}}}\n", encoding="utf-8")
    missing = subprocess.run(
        [str(LINEAGE), "upstream", "x", "--config", str(empty)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0, missing.stderr
    assert "no Delta table" in missing.stderr and "make run" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_human_output_is_a_table(sample_warehouse) -> None:
    done = _run(sample_warehouse, "upstream", "reports.daily_revenue")
    assert done.returncode == 0, done.stderr
    assert "upstream of reports.daily_revenue" in done.stdout
    assert "raw.orders" in done.stdout and "distance" in done.stdout


def test_svg_draws_every_table_of_the_answer(sample_warehouse, tmp_path: Path) -> None:
    assert shutil.which("dot"), "Graphviz dot is needed for --svg (apt-get install graphviz)"
    svg = tmp_path / "upstream.svg"
    answer = _run(
        sample_warehouse, "upstream", "reports.daily_revenue", "--svg", str(svg), "--json"
    )
    assert answer.returncode == 0, answer.stderr
    tables = {n["id"] for n in json.loads(answer.stdout)["graph"]["nodes"]}
    root = ET.parse(svg).getroot()
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.text}
    assert tables <= texts
    assert any("DIRECT" in t for t in texts)  # edge labels


def test_html_page_renders_in_chromium(sample_warehouse, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "headless Chromium is needed (apt-get install chromium)"
    page = tmp_path / "upstream.html"
    done = _run(
        sample_warehouse, "upstream", "reports.daily_revenue", "--html", str(page), "--json"
    )
    assert done.returncode == 0, done.stderr
    expected = {n["id"] for n in json.loads(done.stdout)["graph"]["nodes"]}
    text = page.read_text(encoding="utf-8")
    assert "http://" not in text.split("<script>", 1)[0]  # nothing fetched at view time
    assert "<script src" not in text

    def chrome(*args: str) -> str:
        profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
        out = subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1400,800",
             "--virtual-time-budget=10000", *args, page.as_uri()],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    dom = chrome("--dump-dom")
    labels_html = dom.split('<ol id="labels">', 1)[1].split("</ol>", 1)[0]
    items = [li.split(">", 1)[1] for li in labels_html.split("</li>") if ">" in li]
    assert set(items) == expected
    assert 'data-focus="true">reports.daily_revenue<' in labels_html
    assert f'data-rendered="{len(expected)}"' in dom
    # left to right: the asked table is right of everything that feeds it
    xs = {
        li.split(">", 1)[1]: int(li.split('data-x="', 1)[1].split('"', 1)[0])
        for li in labels_html.split("</li>")
        if ">" in li
    }
    assert xs["reports.daily_revenue"] == max(xs.values())
    assert xs["raw.orders"] < xs["staging.stg_orders"] < xs["marts.fct_sales"]

    png = tmp_path / "upstream-reports.daily_revenue.png"
    chrome(f"--screenshot={png}")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    screenshots.append(png)
    print(f"screenshot: {png}")


def test_the_command_does_not_import_spark() -> None:
    code = (
        "import sys, lineage_udfs.cli.app, lineage_udfs.cli.render, lineage_udfs.cli.queries;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'delta')"
        " or m.startswith('lineage_udfs.spark')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
