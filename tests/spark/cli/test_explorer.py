"""``lineage serve``, the explorer page, on the sample warehouse: the server started and stopped
by PID, the page driven in headless Chromium (Selenium, Debian's chromium-driver) as a user
drives it, every drawn answer checked against the Delta tables read by Spark; the token rule
off loopback; the JSON API's answers, errors and ``--as-of``.

One server (module scope) answers the browser test and the API test; the tables the answers
are checked against are read by Spark once.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from pyspark.sql import SparkSession
from support.explorer_browser import (
    LINEAGE,
    Server,
    chromium,
    drawn_tables,
    lineage_server,
    tap_node,
    timings,
    wait_idle,
)
from support.sample_warehouse import ROOT, SampleWarehouse, screenshots

SEP = "\u0001"
TABLES = (
    "table_closure",
    "table_lineage",
    "column_lineage",
    "column_closure",
    "lineage_nodes",
    "parsed_statements",
    "dataset_activity",
    "dataset_owners",
    "dataset_expectations",
    "upstream_staleness",
)
Rows = dict[str, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def tables(spark: SparkSession, sample_warehouse: SampleWarehouse) -> Rows:
    """The rows of the sample's tables, read by Spark (the explorer reads them with delta-rs)."""
    return {
        name: [
            r.asDict(recursive=True)
            for r in spark.read.format("delta")
            .load(str(sample_warehouse.base_path / name))
            .collect()
        ]
        for name in TABLES
    }


@pytest.fixture(scope="module")
def server(
    sample_warehouse: SampleWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("explorer") / "serve.log"
    with lineage_server(["--config", str(sample_warehouse.overlay)], cwd=ROOT, log=log) as srv:
        yield srv


def _upstream(tables: Rows, table: str, depth: int | None = None) -> set[str]:
    return {
        r["ancestor"]
        for r in tables["table_closure"]
        if r["descendant"] == table
        and r["ancestor"] != table
        and (depth is None or r["min_distance"] <= depth)
    }


def _downstream(tables: Rows, table: str) -> set[str]:
    return {
        r["descendant"]
        for r in tables["table_closure"]
        if r["ancestor"] == table and r["descendant"] != table
    }


def _fragment(driver: Any) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(driver.current_url).fragment))


def _late(tables: Rows) -> dict[str, str]:
    """Table -> late / stopped, as the table-level expectations say."""
    return {
        r["dataset"]: r["status"]
        for r in tables["dataset_expectations"]
        if r["fingerprint"] == "" and r["status"] in ("late", "stopped")
    }


def _check_badges(driver: Any, tables: Rows, table: str) -> int:
    """The side panel's badges of ``table`` say what the activity tables hold; returns how
    many late upstream rows it checked."""
    expectation = next(
        (
            r
            for r in tables["dataset_expectations"]
            if r["dataset"] == table and r["fingerprint"] == ""
        ),
        None,
    )
    known = {r["dataset"] for r in tables["dataset_owners"]} | {
        r["dataset"] for r in tables["dataset_activity"]
    }
    badges = {
        b.get_attribute("data-badge"): b.get_attribute("textContent")
        for b in driver.find_elements("css selector", "#badges .badge")
    }
    if table not in known:
        assert badges == {}, (table, badges)
        return 0
    assert badges["status"] == (expectation["status"] if expectation else "unknown")
    activity = next(
        (r for r in tables["dataset_activity"] if r["dataset"] == table and r["column_name"] == ""),
        {},
    )
    written = activity.get("last_write_at")
    if written is None:
        assert badges["last-write"] == "last write never"
    else:
        assert badges["last-write"].startswith(f"last write {written:%Y-%m-%d %H:%M} UTC"), badges
        user = activity["last_write_user"]
        assert badges["last-write"].endswith(f" by {user}" if user else "UTC")
    owner = next((r for r in tables["dataset_owners"] if r["dataset"] == table), None)
    assert badges["owner"] == (
        f"owner {owner['owner']} ({owner['rule']})" if owner and owner["owner"] else "no owner"
    )
    late = {
        r["upstream"]: r["upstream_status"]
        for r in tables["upstream_staleness"]
        if r["dataset"] == table
    }
    assert badges["late-upstream"] == (f"{len(late)} late upstream" if late else "upstream on time")
    listed = {
        tr.get_attribute("data-table"): tr.find_element("css selector", ".badge").text
        for tr in driver.find_elements("css selector", "#late-upstream tr[data-table]")
    }
    assert listed == late
    return len(late)


def test_explorer_in_chromium(server: Server, tables: Rows, tmp_path: Path) -> None:
    from selenium.webdriver.support.ui import Select

    late_status = _late(tables)
    with chromium(tmp_path / "profile") as driver:
        driver.get(server.url + "/")
        step = wait_idle(driver, 0)
        assert drawn_tables(driver) == []

        # search, as `lineage search`: a table and its columns; pick the table
        driver.find_element("id", "search").send_keys("daily_rev")
        found = []
        deadline = time.monotonic() + 60
        while not found and time.monotonic() < deadline:
            found = driver.find_elements("css selector", "#results[data-q=daily_rev] li[data-name]")
            time.sleep(0.05)
        names = {li.get_attribute("data-name") for li in found}
        columns = {
            f"{r['target_table']}.{r['target_column']}"
            for r in tables["column_lineage"]
            if r["target_table"] == "reports.daily_revenue" and r["target_column"]
        }
        assert names == {"reports.daily_revenue", *columns}, names
        next(li for li in found if li.get_attribute("data-name") == "reports.daily_revenue").click()
        step = wait_idle(driver, step)
        drawn = {"reports.daily_revenue", *_upstream(tables, "reports.daily_revenue", 2)}
        assert set(drawn_tables(driver)) == drawn
        assert (
            driver.find_element("css selector", "#labels li[data-focus]").get_attribute(
                "textContent"
            )
            == "reports.daily_revenue"
        )
        assert driver.find_element("id", "panel-title").text == "reports.daily_revenue"
        late_checked = _check_badges(driver, tables, "reports.daily_revenue")

        # depth 1, then three hops upstream, each click drawing the clicked table's feeders
        Select(driver.find_element("id", "depth")).select_by_value("1")
        step = wait_idle(driver, step)
        drawn = {"reports.daily_revenue", *_upstream(tables, "reports.daily_revenue", 1)}
        assert set(drawn_tables(driver)) == drawn
        for hop in ("marts.fct_sales", "staging.stg_orders", "raw.orders"):
            assert hop in drawn, f"{hop} is not drawn: {sorted(drawn)}"
            tap_node(driver, "t:" + hop)
            step = wait_idle(driver, step)
            drawn |= _upstream(tables, hop, 1)
            assert set(drawn_tables(driver)) == drawn
            assert driver.find_element("id", "panel-title").text == hop
            assert hop in _fragment(driver)["x"].split(",")
            late_checked += _check_badges(driver, tables, hop)
        assert late_checked, "no late upstream dataset was checked: the sample has them"
        # late and stopped tables are marked on the graph
        marked = driver.execute_script(
            "return Object.fromEntries(Array.from(document.querySelectorAll("
            "'#labels li[data-status]')).map(li => [li.textContent, li.dataset.status]))"
        )
        assert marked == {t: s for t, s in late_status.items() if t in drawn}
        xs = {
            li.get_attribute("textContent"): int(li.get_attribute("data-x"))
            for li in driver.find_elements("css selector", "#labels li")
        }
        assert xs["raw.orders"] < xs["staging.stg_orders"] < xs["marts.fct_sales"]

        # column mode: every column mapping between the drawn tables is a drawn edge
        driver.find_element("id", "mode-columns").click()
        step = wait_idle(driver, step)
        mappings = {
            (r["source_table"], r["source_column"], r["target_table"], r["target_column"],
             r["transformation_type"], r["transformation_subtype"])
            for r in tables["column_lineage"]
            if r["source_table"] in drawn and r["target_table"] in drawn
            and r["source_column"] and r["target_column"]
        }  # fmt: skip
        drawn_edges = driver.execute_script(
            "return cy.edges().filter(e => e.id().startsWith('ce:')).map(e => e.id().slice(3))"
        )
        assert {tuple(e.split(SEP)) for e in drawn_edges} == mappings
        assert int(driver.execute_script("return document.body.dataset.columnEdges")) == len(
            mappings
        )

        # one column's path: the panel lists its closure both ways, the graph highlights it
        tap_node(driver, f"c:marts.fct_sales{SEP}amount")
        step = wait_idle(driver, step)
        me = ("marts.fct_sales", "amount")
        expected = set()
        for r in tables["column_closure"]:
            if r["min_distance"] > 1:
                continue
            if (r["descendant_table"], r["descendant_column"]) == me:
                expected.add((r["ancestor_table"], r["ancestor_column"]))
            if (r["ancestor_table"], r["ancestor_column"]) == me:
                expected.add((r["descendant_table"], r["descendant_column"]))
        expected.discard(me)
        rows = driver.find_elements("css selector", "#panel table tr")[1:]
        listed = {tuple(td.text for td in r.find_elements("tag name", "td")) for r in rows}
        assert listed == expected and expected
        highlighted = set(
            driver.execute_script(
                "return cy.nodes('.column.onpath').map(n => n.data('table') + '.' + "
                "n.data('column'))"
            )
        )
        assert "marts.fct_sales.amount" in highlighted
        assert highlighted - {"marts.fct_sales.amount"} <= {f"{t}.{c}" for t, c in expected}
        assert _fragment(driver)["col"] == "marts.fct_sales.amount"

        # a statement of the table: masked SQL as parsed_statements holds it
        driver.find_element("css selector", "#panel button.centre").click()
        step = wait_idle(driver, step)
        assert driver.find_element("id", "panel-title").text == "marts.fct_sales"
        writer = min(
            (r for r in tables["parsed_statements"] if "marts.fct_sales" in (r["targets"] or [])),
            key=lambda r: r["fingerprint"],
        )
        driver.find_element(
            "css selector", f"#panel a.stmt[data-fp='{writer['fingerprint']}']"
        ).click()
        step = wait_idle(driver, step)
        assert driver.find_element("id", "panel-title").text == (
            f"statement {writer['fingerprint']}"
        )
        assert driver.find_element("id", "sql").text == writer["masked_sql"].strip()
        assert _fragment(driver)["stmt"] == writer["fingerprint"]

        png = tmp_path / "explorer-statement.png"
        driver.save_screenshot(str(png))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
        screenshots.append(png)
        print(f"screenshot: {png}")

        clicks = timings(driver)
        (tmp_path / "explorer-timings.json").write_text(json.dumps(clicks, indent=1))
        print("explorer timings (ms):", clicks)
        assert any(t["action"] == "search" for t in clicks)
        assert [t["action"] for t in clicks if t["action"] != "search"] == [
            "empty", "load", "load", "expand", "expand", "expand", "load", "column", "load",
            "statement",
        ]  # fmt: skip
        # (how long a click takes is measured by bench/explorer_bench.py, not asserted here)

        # the URL is the view: a fresh page at it draws the same graph and statement
        shown = set(drawn_tables(driver))
        url = driver.current_url
        driver.get("about:blank")
        driver.get(url)
        wait_idle(driver, 0)
        assert set(drawn_tables(driver)) == shown
        assert driver.find_element("id", "sql").text == writer["masked_sql"].strip()
        assert driver.execute_script("return document.body.dataset.mode") == "columns"


def test_api_answers(
    server: Server, tables: Rows, sample_warehouse: SampleWarehouse, tmp_path: Path
) -> None:
    status, both, _ = server.get("/api/graph?name=marts.fct_sales&direction=both&depth=all")
    assert status == 200
    expected = {
        "marts.fct_sales",
        *_upstream(tables, "marts.fct_sales"),
        *_downstream(tables, "marts.fct_sales"),
    }
    assert {n["id"] for n in both["nodes"]} == expected
    edges = {
        (r["source_table"], r["target_table"])
        for r in tables["table_lineage"]
        if r["source_table"] in expected and r["target_table"] in expected
    }
    assert edges <= {(e["source"], e["target"]) for e in both["edges"]}
    assert both["truncated"] == 0 and both["as_of"] is None
    late = _late(tables)
    assert {n["id"]: n["status"] for n in both["nodes"] if n["status"]} == {
        t: s for t, s in late.items() if t in expected
    }

    status, found, _ = server.get("/api/search?q=FCT_")
    assert status == 200
    known = {r["node"] for r in tables["lineage_nodes"]}
    for name in ("table_lineage", "column_lineage"):
        for r in tables[name]:
            known |= {r["source_table"], r["target_table"]}
    assert {r["name"] for r in found["rows"] if r["kind"] != "column"} == {
        n for n in known if "fct_" in n
    }

    status, node, _ = server.get("/api/node?name=MARTS.FCT_SALES")
    assert status == 200 and node["name"] == "marts.fct_sales"
    statements = {
        r["fingerprint"]
        for r in tables["parsed_statements"]
        if "marts.fct_sales" in (r["sources"] or []) + (r["targets"] or [])
    }
    assert {s["fingerprint"] for s in node["statements"]} == statements
    assert node["statements_total"] == len(statements)
    assert node["runs"] and node["runs"][0]["status"] == "succeeded"
    owner = next(r for r in tables["dataset_owners"] if r["dataset"] == "marts.fct_sales")
    activity = next(
        r
        for r in tables["dataset_activity"]
        if r["dataset"] == "marts.fct_sales" and r["column_name"] == ""
    )
    fresh = node["freshness"]
    assert (fresh["owner"], fresh["owner_rule"], fresh["last_write_user"]) == (
        owner["owner"],
        owner["rule"],
        activity["last_write_user"],
    )
    assert {u["table"] for u in fresh["late_upstream"]} == {
        r["upstream"] for r in tables["upstream_staleness"] if r["dataset"] == "marts.fct_sales"
    }

    # errors are one line of JSON with a status
    status, body, _ = server.get("/api/graph?name=marts.fct_sale")
    assert status == 404 and list(body) == ["error"] and "\n" not in body["error"]
    assert body["error"].startswith("unknown table 'marts.fct_sale'; did you mean marts.fct_sales")
    status, body, _ = server.get("/api/graph?name=marts.fct_sales&direction=sideways")
    assert status == 400 and body["error"].startswith("direction must be one of")
    status, body, _ = server.get("/api/graph?name=marts.fct_sales&depth=two")
    assert status == 400 and "depth must be a whole number" in body["error"]
    assert server.get("/api/graph")[0] == 400
    assert server.get("/static/../store.py")[0] == 404

    # --as-of: every answer from the tables as they were; at version 0 (each table's CREATE)
    # nothing was known yet
    with lineage_server(
        ["--config", str(sample_warehouse.overlay), "--as-of", "0"],
        cwd=ROOT, log=tmp_path / "as-of.log",
    ) as then:  # fmt: skip
        status, info, _ = then.get("/api/info")
        assert status == 200 and info["as_of"] == "0"
        assert then.get("/api/search?q=fct_")[1]["total"] == 0
        status, body, _ = then.get("/api/graph?name=marts.fct_sales")
        assert status == 404 and body["error"].startswith("unknown table 'marts.fct_sales'")


def test_token_required_off_loopback(sample_warehouse: SampleWarehouse, tmp_path: Path) -> None:
    overlay = str(sample_warehouse.overlay)

    def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LINEAGE), "serve", "--config", overlay, *args],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
            env={**os.environ, **(env or {})},
        )  # fmt: skip

    refused = serve("--host", "0.0.0.0", "--port", "1")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: binding 0.0.0.0 (not loopback) needs a token: --token-env NAME, the name of a "
        "variable holding it"
    ]

    token = "t0ken-for-the-explorer-test"
    with lineage_server(
        ["--config", overlay, "--token-env", "EXPLORER_TOKEN"],
        cwd=ROOT, log=tmp_path / "serve.log", host="0.0.0.0", env={"EXPLORER_TOKEN": token},
    ) as srv:  # fmt: skip
        for path in ("/", "/static/explorer.js", "/api/info", "/api/graph?name=marts.fct_sales"):
            status, body, _ = srv.get(path)
            assert status == 401, (path, status)
            assert status == srv.get(path, {"Authorization": "Bearer wrong"})[0]
            assert srv.get(path + ("&" if "?" in path else "?") + "token=nope")[0] == 401
            assert srv.get(path, {"Authorization": f"Bearer {token}"})[0] == 200
            assert srv.get(path, {"Cookie": f"lineage_token={token}"})[0] == 200
        status, body, headers = srv.get(f"/api/info?token={token}")
        assert status == 200 and body["read_only"] is True
        assert headers["set-cookie"].startswith(f"lineage_token={token}; HttpOnly; SameSite=Strict")
        # no write path: anything but GET/HEAD is refused, with the token too
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            assert srv.get("/api/info", {"Authorization": f"Bearer {token}"}, method)[0] == 405
    # a token too short to be one is refused before anything is read
    short = serve("--host", "0.0.0.0", "--token-env", "EXPLORER_TOKEN", env={"EXPLORER_TOKEN": "x"})
    assert short.returncode == 2
    assert short.stderr.strip() == (
        "error: --token-env EXPLORER_TOKEN: the variable is unset or shorter than 16 characters"
    )
