"""The explorer page's speed in a real browser: first paint and each click, on a warehouse.

    python bench/explorer_bench.py --warehouse warehouse/lineage --label sample
    python bench/explorer_bench.py \
        --warehouse bench/data/warehouse-100k --label 100k     # bench/graph_bench.py builds it

``lineage serve --warehouse PATH`` is started by PID; headless Chromium (Selenium, Debian's
chromium-driver) opens the page centred on ``--node`` (default: the table with the most upstream
and downstream tables of ``lineage_nodes``) in both directions at depth 2, searches for the
node's name, expands three drawn tables, switches to column mode, lights a column's path and
opens a statement when the sink has one. Each action is timed in the page from the click to the
drawn graph (``explorerTimings``); first paint is from navigation start, on a server that has
not read a table yet. The section of ``--label`` in ``--report`` is replaced.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.explorer_browser import (  # noqa: E402
    chromium,
    drawn_tables,
    lineage_server,
    seq,
    tap_node,
    timings,
    wait_idle,
)

SEP = "\u0001"


def busiest_node(warehouse: Path) -> str:
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(str(warehouse / "lineage_nodes"))
    batches = (
        QueryBuilder()
        .register("n", table)
        .execute(
            "SELECT node FROM n WHERE in_degree > 0 AND out_degree > 0 "
            "ORDER BY least(in_degree, out_degree) DESC, node LIMIT 1"
        )
        .read_all()
    )
    rows = pa.table(batches).to_pylist()
    return str(rows[0]["node"])


def drive(url: str, node: str, profile: Path, shot: Path) -> dict[str, Any]:
    with chromium(profile) as driver:
        t0 = time.monotonic()
        driver.get(f"{url}/#node={node}&dir=both&depth=2")
        step = wait_idle(driver, 0, timeout=900)
        wall_first = time.monotonic() - t0
        first_paint = float(driver.execute_script("return document.body.dataset.firstPaint"))
        drawn = drawn_tables(driver)
        truncated = int(driver.execute_script("return model.truncated"))
        browser = driver.capabilities.get("browserVersion", "?")
        query = node.rsplit(".", 1)[-1]
        driver.find_element("id", "search").send_keys(query)
        deadline = time.monotonic() + 900
        while not driver.find_elements("css selector", f"#results[data-q='{query}'] li"):
            if time.monotonic() > deadline:
                raise AssertionError(f"no search results for {query!r}")
            time.sleep(0.02)
        # close the result list (it lies over the graph) as a user does, with Escape
        from selenium.webdriver.common.keys import Keys

        driver.find_element("id", "search").send_keys(Keys.ESCAPE)
        assert not driver.find_element("id", "results").is_displayed()
        for name in [n for n in drawn if n != node][:3]:
            tap_node(driver, "t:" + name)
            step = wait_idle(driver, step, timeout=900)
        driver.find_element("id", "mode-columns").click()
        step = wait_idle(driver, step, timeout=900)
        columns_drawn = int(driver.execute_script("return cy.nodes('.column').length"))
        column_edges = int(driver.execute_script("return document.body.dataset.columnEdges"))
        tables_now = len(drawn_tables(driver))
        column = driver.execute_script(
            "const c = cy.nodes('.column').filter(n => n.data('table') === arguments[0]);"
            "return c.length ? c[0].id() : null",
            node,
        )
        if column:
            tap_node(driver, column)
            step = wait_idle(driver, step, timeout=900)
        links = driver.find_elements("css selector", "#panel a.stmt")
        if not links:
            driver.execute_script("showNode(arguments[0])", node)
            time.sleep(1)
            links = driver.find_elements("css selector", "#panel a.stmt")
        if links:
            before = seq(driver)
            links[0].click()
            wait_idle(driver, before, timeout=900)
        driver.save_screenshot(str(shot))
        return {
            "first_paint_ms": round(first_paint),
            "first_view_wall_s": round(wall_first, 2),
            "tables_drawn": len(drawn),
            "truncated": truncated,
            "browser": browser,
            "tables_in_column_mode": tables_now,
            "columns_drawn": columns_drawn,
            "column_edges_drawn": column_edges,
            "actions": timings(driver),
        }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> str:
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        return f"{kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        return "?"


def versions() -> str:
    from importlib.metadata import version

    names = ("starlette", "uvicorn", "deltalake", "selenium")
    return f"Python {platform.python_version()}, " + ", ".join(f"{n} {version(n)}" for n in names)


def has_table(warehouse: Path, name: str) -> bool:
    return (warehouse / name / "_delta_log").is_dir()


def edge_count(warehouse: Path) -> int:
    from deltalake import DeltaTable, QueryBuilder

    table = DeltaTable(str(warehouse / "table_lineage"))
    found = QueryBuilder().register("t", table).execute("SELECT count(*) AS n FROM t").read_all()
    import pyarrow as pa

    return int(pa.table(found).column("n")[0].as_py())


def section(
    label: str,
    command: str,
    node: str,
    r: dict[str, Any],
    load: tuple[str, str],
    warehouse: Path,
) -> str:
    missing = [
        t
        for t in ("parsed_statements", "lineage_runs", "dataset_activity")
        if not has_table(warehouse, t)
    ]
    absent = (
        f" It has no {', '.join(missing)} table: no statement is opened and the side panel "
        "has no statements, runs or badges."
        if missing
        else ""
    )
    clicks = [a for a in r["actions"] if a["action"] not in ("empty",)]
    slowest = max((a["ms"] for a in clicks[1:]), default=0)
    lines = [
        f"## {label}",
        "",
        f"Command: `{command}`  ",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, {memory_gib()}, shared with other "
        f"work; load average {load[0]} before and {load[1]} after the run (1/5/15 min)  ",
        f"Browser: headless Chromium {r['browser']} (Selenium, 1500x900); {versions()}  ",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        f"Warehouse: {edge_count(warehouse):,} table edges.{absent} "
        f"Centre `{node}`, both directions, depth 2: "
        f"{r['tables_drawn']} tables drawn ({r['truncated']} more not drawn, the nearest are). "
        f"First paint {r['first_paint_ms']} ms after navigation start, on a server that had "
        f"read no table yet ({r['first_view_wall_s']} s until the page was idle). Column mode: "
        f"{r['tables_in_column_mode']} tables, {r['columns_drawn']} columns and "
        f"{r['column_edges_drawn']} column edges drawn. Slowest click after the first view: "
        f"{slowest} ms.",
        "",
        "Each action from the click (or keystroke) to the drawn page, as the page times it; "
        "`draw` is the part spent laying out and drawing, the rest is the server's answer.",
        "",
        "| action | ms | draw ms |",
        "|---|---:|---:|",
        *(f"| {a['action']} | {a['ms']} | {a.get('draw_ms', '')} |" for a in clicks),
        "",
    ]
    return "\n".join(lines)


def write_report(path: Path, label: str, text: str) -> None:
    head = (
        "# Explorer page speed\n\n"
        "`lineage serve` in headless Chromium (bench/explorer_bench.py): each action from the "
        "click to the drawn graph, as the page times it. Target: under 1 s per click.\n\n"
    )
    sections: dict[str, str] = {}
    if path.exists():
        for part in path.read_text().split("\n## ")[1:]:
            sections[part.split("\n", 1)[0]] = "## " + part.rstrip() + "\n"
    sections[label] = text
    path.write_text(head + "\n".join(sections[k] for k in sorted(sections)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--node")
    parser.add_argument("--report", type=Path, default=ROOT / "bench/results/explorer.md")
    parser.add_argument("--screenshot", type=Path)
    parser.add_argument(
        "--launcher",
        default="",
        help="what the run was wrapped in, recorded before the command (e.g. a lock and a cap)",
    )
    args = parser.parse_args()
    before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    node = args.node or busiest_node(args.warehouse)
    with (
        TemporaryDirectory() as tmp,
        lineage_server(
            ["--warehouse", str(args.warehouse.resolve())], cwd=ROOT, log=Path(tmp) / "serve.log"
        ) as srv,
    ):
        shot = args.screenshot or Path(tmp) / "explorer.png"
        result = drive(srv.url, node, Path(tmp) / "profile", shot)
    after = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(result)
    command = f"python bench/explorer_bench.py --warehouse {args.warehouse} --label {args.label}"
    if args.launcher:
        command = f"{args.launcher} {command}"
    text = section(args.label, command, node, result, (before, after), args.warehouse)
    write_report(args.report, args.label, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
