"""Wall time and peak RSS of the ``lineage`` command's answers on a graph-benchmark warehouse.

    python bench/graph_bench.py --sizes 100k --no-reference  # bench/data/warehouse-100k
    python bench/serve_bench.py --warehouse bench/data/warehouse-100k --label after
    python bench/serve_bench.py --warehouse ... --label before --lineage OTHER/.venv/bin/lineage

Each question runs as its own process, as a user runs it (``--json``, output discarded); wall
time and the process's peak RSS (``wait4`` rusage) are recorded. The hub is the table with the
most downstream tables (``lineage_nodes.out_degree``), the leaf the leaf table with the most
direct sources; the path runs from the leaf's farthest ancestor to it. Results are merged into
``--json`` (per warehouse and label) and rendered as ``--report``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _pick(warehouse: Path) -> dict[str, str]:
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    def sql(query: str, *tables: str) -> list[dict[str, Any]]:
        builder = QueryBuilder()
        for t in tables:
            builder.register(t, DeltaTable(str(warehouse / t)))
        return list(pa.RecordBatchReader.from_stream(builder.execute(query)).read_all().to_pylist())

    hub = sql(
        "SELECT node FROM lineage_nodes ORDER BY out_degree DESC, node LIMIT 1", "lineage_nodes"
    )[0]["node"]
    leaf = sql(
        "SELECT node FROM lineage_nodes WHERE is_leaf ORDER BY in_degree DESC, node LIMIT 1",
        "lineage_nodes",
    )[0]["node"]
    far = sql(
        f"SELECT ancestor FROM table_closure WHERE descendant = '{leaf}' "
        "ORDER BY min_distance DESC, ancestor LIMIT 1",
        "table_closure",
    )[0]["ancestor"]
    return {"hub": hub, "leaf": leaf, "far": far}


def _questions(n: dict[str, str], with_sql: bool) -> list[tuple[str, list[str]]]:
    out = [
        ("upstream leaf", ["upstream", n["leaf"]]),
        ("upstream hub", ["upstream", n["hub"]]),
        ("downstream hub", ["downstream", n["hub"]]),
        ("downstream leaf", ["downstream", n["leaf"]]),
        ("path far -> leaf", ["path", n["far"], n["leaf"]]),
        ("search leaf name", ["search", n["leaf"].split(".")[-1]]),
    ]
    if with_sql:
        for what in ("hub", "leaf"):
            column = "ancestor" if what == "hub" else "descendant"
            query = (
                f"SELECT min_distance, count(*) AS tables FROM table_closure "
                f"WHERE {column} = '{n[what]}' GROUP BY min_distance ORDER BY min_distance"
            )
            out.append((f"sql on {what}", ["sql", query]))
    return out


def _run(argv: list[str], timeout: float) -> dict[str, Any]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    return {
        "seconds": round(wall, 2),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "exit": code,
        "error": stderr.strip().splitlines()[-1][:200] if code not in (0, 1) and stderr else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--label", required=True, help="e.g. before / after")
    parser.add_argument("--lineage", default=str(Path(sys.executable).parent / "lineage"))
    parser.add_argument("--no-sql", dest="sql", action="store_false", help="the CLI has no sql")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "serve.json")
    parser.add_argument("--report", type=Path, default=ROOT / "bench" / "results" / "serve.md")
    args = parser.parse_args()
    nodes = _pick(args.warehouse)
    load = os.getloadavg()
    results = {}
    for name, question in _questions(nodes, args.sql):
        argv = [args.lineage, *question, "--warehouse", str(args.warehouse), "--json"]
        results[name] = _run(argv, args.timeout)
        print(name, results[name], flush=True)
    stored = json.loads(args.json.read_text()) if args.json.exists() else {}
    stored.setdefault(args.warehouse.name, {})[args.label] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python bench/serve_bench.py " + " ".join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average": [round(x, 1) for x in (*load, *os.getloadavg())],
        "nodes": nodes,
        "results": results,
    }
    args.json.write_text(json.dumps(stored, indent=1) + "\n")
    args.report.write_text(_report(stored))
    return 0


def _report(stored: dict[str, Any]) -> str:
    lines = [
        "# `lineage` answers on graph-benchmark warehouses",
        "",
        "`bench/serve_bench.py`: each question is one `lineage ... --json` process on a "
        "warehouse of `bench/graph_bench.py`; wall time and peak RSS of the process. Figures "
        "are from a shared 2-core machine under load (load averages: at the start, then at the "
        "end, 1/5/15 min).",
        "",
    ]
    for warehouse, labels in stored.items():
        lines.append(f"## {warehouse}")
        lines.append("")
        for label, run in labels.items():
            lines.append(
                f"- **{label}**: {run['date']}, `{run['command']}`, {run['machine']}, load "
                f"{' '.join(map(str, run['load_average']))}; hub `{run['nodes']['hub']}`, leaf "
                f"`{run['nodes']['leaf']}`"
            )
        names = list(dict.fromkeys(q for run in labels.values() for q in run["results"]))
        header = "| question | " + " | ".join(f"{label} s | {label} MB" for label in labels)
        lines += ["", header + " |", "|---|" + "---:|---:|" * len(labels)]
        for q in names:
            cells = []
            for run in labels.values():
                r = run["results"].get(q)
                if r is None:
                    cells += ["-", "-"]
                elif r["exit"] not in (0, 1):
                    cells += [f"failed ({r['seconds']})", str(r["peak_rss_mb"])]
                else:
                    cells += [f"{r['seconds']:.2f}", str(r["peak_rss_mb"])]
            lines.append(f"| {q} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
