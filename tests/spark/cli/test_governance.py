"""Tags and change impact on the sample: ``column_tags`` as the job wrote it, and ``lineage
impact`` / ``tags`` / ``pii`` run as a user runs them, each checked against the lineage tables
read by Spark.

The sample tags ``raw.customers.email`` as ``pii`` (data/sample/tags.yaml); its lowered copy
reaches ``staging.stg_customers`` and ``marts.dim_customer``; ``marts.customer_contacts`` keeps it
only as ``sha2(email, 256)`` and filters on it (an INDIRECT edge into every column).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict, deque
from datetime import timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from support.sample_warehouse import ROOT, SampleWarehouse

LINEAGE = Path(sys.executable).parent / "lineage"
EMAIL = ("raw.customers", "email")


def _run(wh: SampleWarehouse, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINEAGE), *args, "--config", str(wh.overlay)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )


def _json(wh: SampleWarehouse, *args: str, code: int = 0) -> dict[str, Any]:
    done = _run(wh, *args, "--json")
    assert done.returncode == code, done.stderr
    return json.loads(done.stdout)


def _edges(spark: SparkSession, wh: SampleWarehouse) -> list[Any]:
    return spark.read.format("delta").load(str(wh.base_path / "column_lineage")).collect()


def _reach(edges: list[Any], start: tuple[str, str], keep: Any) -> dict[tuple[str, str], int]:
    succ: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for e in edges:
        if keep(e):
            succ[(e.source_table, e.source_column)].add((e.target_table, e.target_column))
    seen = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in succ[node]:
            if nxt not in seen:
                seen[nxt] = seen[node] + 1
                queue.append(nxt)
    return seen


def test_email_propagates_to_its_direct_reach_and_stops_at_the_mask(
    spark: SparkSession, sample_warehouse: SampleWarehouse
) -> None:
    wh = sample_warehouse
    edges = _edges(spark, wh)
    carried = _reach(
        edges,
        EMAIL,
        lambda e: e.transformation_type == "DIRECT" and e.transformation_subtype != "MASKED",
    )
    masked = {
        (e.target_table, e.target_column)
        for e in edges
        if (e.source_table, e.source_column) in carried
        and e.transformation_subtype == "MASKED"
        and (e.target_table, e.target_column) not in carried
    }
    indirect = (
        {
            (e.target_table, e.target_column)
            for e in edges
            if (e.source_table, e.source_column) in carried and e.transformation_type == "INDIRECT"
        }
        - set(carried)
        - masked
    )  # reached only through INDIRECT edges
    rows = spark.read.format("delta").load(str(wh.base_path / "column_tags")).collect()
    got = {(r.table_name, r.column_name): r for r in rows if r.tag == "pii"}
    assert {k for k, r in got.items() if r.status != "masked"} == set(carried)
    assert {k for k, r in got.items() if r.status == "masked"} == masked
    # the sample's own facts, so the reference cannot be empty or trivially equal
    assert set(carried) == {
        EMAIL,
        ("staging.stg_customers", "email"),
        ("marts.dim_customer", "email"),
    }
    assert masked == {("marts.customer_contacts", "email_hash")}
    assert {("marts.customer_contacts", "customer_id"), ("marts.customer_contacts", "country")} <= (
        indirect
    )
    assert not indirect & set(got)  # never across an INDIRECT edge
    for key, row in got.items():
        assert (row.depth, row.origin_table, row.origin_column) == (
            carried.get(key, 2),
            *EMAIL,
        )
        assert row.tag_value == "email" and row.rule == "column raw.customers.email"
    assert got[("marts.dim_customer", "email")].via_table == "staging.stg_customers"
    assert got[("marts.customer_contacts", "email_hash")].via_subtype == "MASKED"


def test_lineage_tags_tells_where_it_flowed_and_stopped(sample_warehouse: SampleWarehouse) -> None:
    answer = _json(sample_warehouse, "tags", "raw.customers.email")
    by_column = {(r["column"], r["status"]): r for r in answer["rows"]}
    assert set(by_column) == {
        ("raw.customers.email", "declared"),
        ("staging.stg_customers.email", "propagated"),
        ("marts.dim_customer.email", "propagated"),
        ("marts.customer_contacts.email_hash", "masked"),
        ("marts.customer_contacts.customer_id", "stopped"),
        ("marts.customer_contacts.country", "stopped"),
    }
    assert by_column[("marts.customer_contacts.country", "stopped")]["why"] == (
        "INDIRECT FILTER edge: never carries a tag"
    )
    marks = {(n["id"], c): m for n in answer["graph"]["nodes"] for c, m in n["marks"].items()}
    assert marks[("marts.customer_contacts", "email_hash")] == "pii=email masked"
    assert marks[("marts.dim_customer", "email")] == "pii=email"


def test_lineage_pii_lists_the_tables_and_their_readers(
    spark: SparkSession, sample_warehouse: SampleWarehouse
) -> None:
    answer = _json(sample_warehouse, "pii")
    tables = {r["table"]: r for r in answer["rows"]}
    assert set(tables) == {"raw.customers", "staging.stg_customers", "marts.dim_customer"}
    assert "marts.customer_contacts" in answer["message"]  # held only masked
    queries = spark.read.format("delta").load(str(sample_warehouse.base_path / "queries"))
    readers = {
        r.user_name
        for r in queries.join(
            spark.read.format("delta")
            .load(str(sample_warehouse.base_path / "column_lineage"))
            .where("source_table = 'raw.customers' AND source_column = 'email'")
            .select("fingerprint")
            .distinct(),
            "fingerprint",
        ).collect()
    }
    assert readers and set(tables["raw.customers"]["users"]) == readers


def test_dropping_orders_amount_breaks_down_to_daily_revenue(
    spark: SparkSession, sample_warehouse: SampleWarehouse, tmp_path: Path
) -> None:
    wh = sample_warehouse
    markdown = tmp_path / "impact.md"
    answer = _json(
        wh, "impact", "--drop-column", "raw.orders.amount", "--markdown", str(markdown), code=1
    )
    rows = {r["column"]: r for r in answer["rows"]}
    edges = _edges(spark, wh)
    start = ("raw.orders", "amount")
    direct = _reach(edges, start, lambda e: e.transformation_type == "DIRECT")
    every = _reach(edges, start, lambda e: True)
    breaking = {f"{t}.{c}" for t, c in direct} - {"raw.orders.amount"}
    partial = {f"{t}.{c}" for t, c in every if (t, c) not in direct}
    assert {c for c, r in rows.items() if r["impact"] == "breaking"} == breaking
    assert {c for c, r in rows.items() if r["impact"] == "partial"} == partial
    revenue = rows["reports.daily_revenue.revenue"]
    assert revenue["impact"] == "breaking"
    assert revenue["path"][0] == "raw.orders.amount" and revenue["path"][-1] == revenue["column"]
    assert len(revenue["path"]) == direct[("reports.daily_revenue", "revenue")] + 1
    # consumers: the statements whose column edges read the column, and their users
    fct = rows["marts.fct_sales.amount"]
    readers = [
        e.fingerprint
        for e in edges
        if (e.source_table, e.source_column) == ("marts.fct_sales", "amount")
    ]
    assert fct["statement_count"] == len(set(readers)) > 0
    assert rows["raw.orders.amount"]["users"] == ["etl_bot"]
    assert any(r["impact"] == "not affected" for r in rows.values())
    text = markdown.read_text(encoding="utf-8")
    assert "**Breaking change**" in text and "`reports.daily_revenue.revenue` | breaking" in text
    human = _run(wh, "impact", "--drop-column", "raw.orders.amount")
    assert human.returncode == 1 and "BREAKING" in human.stdout
    # table-level readers: the statements that read an affected table (their parse's sources)
    # with no column edge from it, e.g. the kept SELECTs, in the last 30 days of the log
    affected = {t for t, _ in every}
    from_columns: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e.source_column and e.fingerprint:
            from_columns[e.source_table].add(e.fingerprint)
    parsed = spark.read.format("delta").load(str(wh.base_path / "parsed_statements")).collect()
    reads = {
        (p.fingerprint, t)
        for p in parsed
        for t in set(p.sources or ()) - set(p.intermediates or ())
        if t in affected and p.fingerprint not in from_columns[t]
    }
    log = spark.read.format("delta").load(str(wh.base_path / "queries")).collect()
    since = max(q.start_time for q in log if q.start_time) - timedelta(days=30)
    expected: dict[str, tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    for q in log:
        for fp, table in reads:
            if q.fingerprint == fp and q.start_time and q.start_time >= since:
                expected[table][0].add(q.user_name)
                expected[table][1].add(fp[:12])
    tables = {r["table"]: r for r in answer["rows"] if r["impact"] == "table read"}
    assert {t: (set(r["users"]), set(r["statements"])) for t, r in tables.items()} == dict(expected)
    assert all(r["level"] == "table" and r["column"] == f"{t} (table)" for t, r in tables.items())
    assert {r["level"] for r in answer["rows"] if r["impact"] != "table read"} == {"column"}
    # a consumer the column edges do not show: a reader of staging.stg_orders' kept SELECTs
    column_users = {u for r in answer["rows"] if r["level"] == "column" for u in r["users"]}
    only_tables = {u for r in tables.values() for u in r["users"]} - column_users
    assert "dara" in only_tables and "dara" in tables["staging.stg_orders"]["users"]
    assert "staging.stg_orders" in answer["message"] and "(table)" in human.stdout
    assert "Table-level readers" in text and "| `staging.stg_orders` |" in text


def test_adding_a_column_breaks_nothing(sample_warehouse: SampleWarehouse, tmp_path: Path) -> None:
    assert _run(sample_warehouse, "impact", "--add-column", "raw.orders.note").returncode == 0
    alter = tmp_path / "add.sql"
    alter.write_text("ALTER TABLE raw.orders ADD COLUMN note STRING;\n", encoding="utf-8")
    done = _run(sample_warehouse, "impact", str(alter))
    assert done.returncode == 0, done.stderr


def test_sql_files_alter_and_new_definitions(
    sample_warehouse: SampleWarehouse, tmp_path: Path
) -> None:
    rename = tmp_path / "rename.sql"
    rename.write_text("ALTER TABLE raw.orders RENAME COLUMN amount TO total", encoding="utf-8")
    answer = _json(sample_warehouse, "impact", str(rename), code=1)
    assert answer["title"] == "impact of rename raw.orders.amount to total"
    view = tmp_path / "view.sql"
    view.write_text(
        "CREATE OR REPLACE VIEW reports.top_customers AS\n"
        "SELECT customer_id FROM marts.fct_sales GROUP BY customer_id",
        encoding="utf-8",
    )
    answer = _json(sample_warehouse, "impact", str(view))  # nothing reads total_amount
    changed = {r["column"]: r["impact"] for r in answer["rows"]}
    assert changed["reports.top_customers.total_amount"] == "changed"
    assert "drop reports.top_customers.total_amount" in answer["title"]
    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT 1", encoding="utf-8")
    done = _run(sample_warehouse, "impact", str(bad))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: statement 1 of the SQL file is a SELECT: give ALTER TABLE, CREATE VIEW or CREATE"
        " TABLE ... AS SELECT"
    ]


def test_html_marks_the_tagged_columns(sample_warehouse: SampleWarehouse, tmp_path: Path) -> None:
    page = tmp_path / "email.html"
    done = _run(sample_warehouse, "tags", "raw.customers.email", "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_text(encoding="utf-8")
    start = text.index("id='graph-data'>") + len("id='graph-data'>")
    data = json.loads(text[start : text.index("</script>", start)])
    nodes = {n["id"]: n for n in data["nodes"]}
    contacts = nodes["marts.customer_contacts"]
    assert "marked" in contacts["classes"].split()
    assert "  email_hash  [pii=email masked]" in contacts["label"].splitlines()
    assert "  email  [pii=email]" in nodes["marts.dim_customer"]["label"].splitlines()
