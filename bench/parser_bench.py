"""Benchmark: LineageParser.parse against sqlglot's parse and parse + qualify.

Runs over ../shared/bench/workload.jsonl beside the repository (Spark SQL; catalog in
workload_schema.json) and, for
each statement in turn, times (a) ``sqlglot.parse`` only, (b) ``sqlglot.parse`` +
``optimizer.qualify`` with the catalog, (c) ``LineageParser.parse`` with the same catalog. The
three are interleaved statement by statement (rotating order) so that machine noise hits all
three alike. Then (d) sqllineage 1.5.9 (table and column lineage, the tool OpenMetadata falls
back to) and (c) again on a seeded sample of the same statements (all of them by default): the
ratio of statements per second on identical input. (c) and (d) run in two child processes of
their own (one tool's long-lived objects never slow the other's garbage collector), taking
turns chunk by chunk so that machine noise hits both alike. Finally the per-tier time limit is
checked on pathological statements (a wide arithmetic expression of growing size). Writes a Markdown
report (default ``bench/results/parser.md``) that says whether sqlglot ran compiled
(``sqlglotc``) or as pure Python.

Usage::

    .venv/bin/python bench/parser_bench.py [--workload PATH] [--schema PATH] [--limit N]
        [--repeat R] [--sqllineage-sample N] [--out bench/results/parser.md]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import sqlglot
from sqlglot.optimizer.qualify import qualify

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.timeout import ParseTimeoutError, time_limit

_SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
DEFAULT_WORKLOAD = str(_SHARED_BENCH / "workload.jsonl")
DEFAULT_SCHEMA = str(_SHARED_BENCH / "workload_schema.json")


def _parse_only(sql: str) -> None:
    sqlglot.parse(sql, read="spark")


def _make_parse_qualify(schema: dict) -> object:
    def run(sql: str) -> None:
        for tree in sqlglot.parse(sql, read="spark"):
            if tree is None:
                continue
            with contextlib.suppress(Exception):  # timing only: a failed qualify still counts
                qualify(tree, schema=schema, dialect="spark", validate_qualify_columns=False)

    return run


def sqllineage_as_installed(rust: bool = False) -> None:
    """sqllineage as ``pip install sqllineage==1.5.9`` gives it: sqlfluff with its Python parser
    (sqlfluffrs, sqlfluff's Rust parser, is not a dependency of sqllineage; this project
    installs it for its own sqlfluff tier). Call in the child process before sqlfluff is
    imported; ``rust=True`` lets sqlfluff use sqlfluffrs ("auto")."""
    if not rust:
        sys.modules["sqlfluffrs"] = None  # type: ignore[assignment]  # import fails: Python parser


def sqllineage_status(sql: str, dialect: str = "sparksql", timeout: float = 60.0) -> str:
    """sqllineage's table and column lineage of one statement: ``ok``, ``timeout`` or ``failed``
    (``dialect`` is sqllineage's name; also used by run_bench.py)."""
    from sqllineage.runner import LineageRunner

    try:
        with time_limit(timeout):
            runner = LineageRunner(sql, dialect=dialect, silent_mode=True)
            runner.source_tables  # noqa: B018 - forces the analysis
            runner.target_tables  # noqa: B018
            runner.get_column_lineage()
        return "ok"
    except ParseTimeoutError:
        return "timeout"
    except Exception:
        return "failed"


def _serve(kind: str, rows: list[dict], schema: dict, sqllineage_rust: bool = False) -> int:
    """Child process: read JSON lists of statement indexes from stdin, parse each statement
    with one tool, answer one JSON line per list: ``{"times": [...], "statuses": [...]}``."""
    if kind == "ours":
        parser = LineageParser(catalog=schema)

        def one(sql: str) -> str:
            return parser.parse(sql, dialect="spark").status.value
    else:
        sqllineage_as_installed(sqllineage_rust)

        def one(sql: str) -> str:
            return sqllineage_status(sql)

    for row in rows[:20]:  # warm-up: build state, import lazily loaded modules
        one(row["sql"])
    gc.collect()
    gc.freeze()
    for line in sys.stdin:
        times, statuses = [], []
        for i in json.loads(line):
            started = time.perf_counter()
            statuses.append(one(rows[i]["sql"]))
            times.append(time.perf_counter() - started)
        sys.stdout.write(json.dumps({"times": times, "statuses": statuses}) + "\n")
        sys.stdout.flush()
    return 0


def _compare(
    ns: argparse.Namespace, indexes: list[int]
) -> tuple[list[float], list[float], dict[str, int]]:
    """(c) and (d) in a child process each, taking turns ``ns.chunk`` statements at a time
    (the order of the two alternates per turn)."""
    base = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--workload",
        ns.workload,
        "--schema",
        ns.schema,
    ]
    if ns.limit:
        base += ["--limit", str(ns.limit)]
    if ns.sqllineage_rust:
        base += ["--sqllineage-rust"]
    children = {
        kind: subprocess.Popen(
            [*base, "--serve", kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for kind in ("ours", "sqllineage")
    }
    times: dict[str, list[float]] = {"ours": [], "sqllineage": []}
    statuses: dict[str, int] = {}
    try:
        for turn, start in enumerate(range(0, len(indexes), ns.chunk)):
            chunk = json.dumps(indexes[start : start + ns.chunk]) + "\n"
            order = ["ours", "sqllineage"] if turn % 2 == 0 else ["sqllineage", "ours"]
            for kind in order:
                child = children[kind]
                assert child.stdin is not None and child.stdout is not None
                child.stdin.write(chunk)
                child.stdin.flush()
                answer = json.loads(child.stdout.readline())
                times[kind] += answer["times"]
                if kind == "sqllineage":
                    for status in answer["statuses"]:
                        statuses[status] = statuses.get(status, 0) + 1
    finally:
        for child in children.values():
            if child.stdin is not None:
                child.stdin.close()
            child.wait(timeout=60)
    return times["ours"], times["sqllineage"], statuses


def _time_limit_rows() -> list[str]:
    """Wall time of LineageParser.parse on wide statements under several limits (sqlfluff off)."""
    rows = []
    for terms in (10_000, 40_000, 50_000):
        wide = (
            "INSERT INTO bench.wide SELECT "
            + " + ".join(f"(a{i} * {i})" for i in range(terms))
            + " AS total FROM bench.src"
        )
        for limit in (0.2, 1.0, 5.0):
            options = ParserOptions(timeout_seconds=limit, use_sqlfluff=False)
            started = time.perf_counter()
            result = LineageParser(options).parse(wide, dialect="spark")
            took = time.perf_counter() - started
            rows.append(
                f"| {len(wide) / 1e6:.2f} MB | {limit:g} s | {result.status.value} | {took:.2f} s |"
            )
    return rows


def _compiled() -> bool:
    return str(getattr(sqlglot.parser, "__file__", "")).endswith(".so")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _nproc() -> str:
    try:
        return subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return str(os.cpu_count())


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write the report; returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default=DEFAULT_WORKLOAD)
    ap.add_argument("--schema", default=DEFAULT_SCHEMA)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--sqllineage-sample", type=int, default=2000)
    ap.add_argument("--chunk", type=int, default=20, help="statements per turn in (c) vs (d)")
    ap.add_argument(
        "--sqllineage-rust",
        action="store_true",
        help="let sqllineage's sqlfluff use sqlfluffrs (default: its Python parser, as"
        " `pip install sqllineage` alone gives it)",
    )
    ap.add_argument("--serve", choices=("ours", "sqllineage"), help=argparse.SUPPRESS)
    ap.add_argument("--no-time-limit-check", action="store_true")
    ap.add_argument("--out", default="bench/results/parser.md")
    ns = ap.parse_args(argv)

    rows = [json.loads(line) for line in Path(ns.workload).read_text().splitlines() if line]
    if ns.limit:
        rows = rows[: ns.limit]
    schema = json.loads(Path(ns.schema).read_text())
    if ns.serve:
        return _serve(ns.serve, rows, schema, ns.sqllineage_rust)
    parser = LineageParser(catalog=schema)
    runners = {
        "a": ("sqlglot parse only", _parse_only),
        "b": ("sqlglot parse + qualify (catalog)", _make_parse_qualify(schema)),
        "c": ("LineageParser.parse (catalog)", lambda sql: parser.parse(sql, dialect="spark")),
    }
    timings: dict[str, list[float]] = {k: [] for k in runners}
    order = list(runners)
    # warm-up (imports, dialect objects, caches)
    for row in rows[:20]:
        for _, fn in runners.values():
            fn(row["sql"])
    gc.collect()
    gc.freeze()  # as the job's Python worker does once its parser is built
    for _ in range(ns.repeat):
        for i, row in enumerate(rows):
            rotation = order[i % 3 :] + order[: i % 3]
            for key in rotation:
                started = time.perf_counter()
                runners[key][1](row["sql"])
                timings[key].append(time.perf_counter() - started)

    total = {k: sum(v) for k, v in timings.items()}
    lines = [
        "# Parser benchmark",
        "",
        "Command (from the repository root): `PYTHONPATH=. .venv/bin/python"
        f" {' '.join(['bench/parser_bench.py', *(sys.argv[1:] if argv is None else argv)])}`",
        "",
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- machine: `nproc`={_nproc()}, CPU: {_cpu_model()}, single process, one core",
        f"- python {platform.python_version()}, sqlglot {sqlglot.__version__}"
        f" ({'compiled: sqlglotc' if _compiled() else 'pure Python'})",
        f"- workload: {Path(ns.workload).name} ({len(rows)} statements x {ns.repeat} repeat(s)),"
        " interleaved per statement with rotating order",
        "",
        "| pipeline | statements/s | p50 ms | p99 ms | total s | time / (b) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, (label, _) in runners.items():
        values = timings[key]
        lines.append(
            f"| ({key}) {label} | {len(values) / total[key]:,.0f} | "
            f"{statistics.median(values) * 1000:.2f} | {_pct(values, 0.99) * 1000:.2f} | "
            f"{total[key]:.2f} | {total[key] / total['b']:.2f} |"
        )
    # (d) sqllineage vs (c) on the same sampled statements: two child processes taking turns
    indexes = sorted(
        random.Random(42).sample(range(len(rows)), min(ns.sqllineage_sample, len(rows)))
    )
    ours, theirs, statuses = _compare(ns, indexes)
    ours_rate, theirs_rate = len(ours) / sum(ours), len(theirs) / sum(theirs)
    lines += [
        "",
        f"Same {len(indexes)} statements (seeded sample), two processes taking turns every"
        f" {ns.chunk} statements:",
        "",
        "| pipeline | statements/s | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
        f"| (c) LineageParser.parse (catalog), own process | {ours_rate:,.1f} | "
        f"{statistics.median(ours) * 1000:.2f} | {_pct(ours, 0.99) * 1000:.2f} |",
        f"| (d) sqllineage 1.5.9 (sparksql, tables + columns; sqlfluff's"
        f" {'Rust' if ns.sqllineage_rust else 'Python'} parser), own process {statuses} | "
        f"{theirs_rate:,.2f} | "
        f"{statistics.median(theirs) * 1000:.2f} | {_pct(theirs, 0.99) * 1000:.2f} |",
        "",
        f"Per core, our parser is **{ours_rate / theirs_rate:,.0f}x** sqllineage on the same"
        " statements (target: 100x).",
    ]
    if not ns.no_time_limit_check:
        lines += [
            "",
            "Time limit (`timeout_seconds`, applied per tier: split/parse, tables, columns) on a"
            " wide `(a0 * 0) + (a1 * 1) + …` statement, sqlfluff off:",
            "",
            "| statement | limit | status | wall |",
            "|---|---:|---|---:|",
            *_time_limit_rows(),
        ]
    lines += [
        "",
        f"Ratio of our per-statement cost to sqlglot parse + qualify: "
        f"**{total['c'] / total['b']:.2f}x** (budget: 1.5x).",
        "",
        "(c) includes everything the UDF does per row: statement splitting, table and column"
        " lineage (scope walk, no `sqlglot.lineage()`), literal masking, and the per-tier"
        " CPU-time (SIGPROF) timer.",
    ]
    out = Path(ns.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
