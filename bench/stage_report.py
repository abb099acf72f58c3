"""The results pages of the parse stage alone: ``bench/results/parse_stage.md`` (from
``bench/parse_stage.py`` runs) and ``bench/results/udf_results.md`` (``bench/udf_results.py`` and
``bench/parse_stage.py`` runs), each rendered from its JSON beside it.

``parse_stage.py --json FILE`` and ``udf_results.py --json FILE`` write a run's raw figures
(under bench/data, not tracked); ``record`` turns runs into a page's JSON (replacing it, notes
included: they were written about the figures they replace); ``report`` renders the Markdown
from that JSON alone::

    .venv/bin/python bench/stage_report.py record parse-stage RUN.json [RUN.json ...]
    .venv/bin/python bench/stage_report.py record udf-results --udf U.json --stage S.json \\
        --sum SUM.json
    .venv/bin/python bench/stage_report.py report               # both pages

Standard library only: the unit tests render the committed pages without Spark.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import textwrap
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PAGES = ("parse-stage", "udf-results")
SINKS = {"checkpoint": "checkpoint (as the job)"}
UDFS = {"arrow": "Arrow", "pandas": "pandas"}
EN_DASH = "\u2013"
"""Between the ends of a range of seconds, as the pages write it."""
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, width=96, break_long_words=False, break_on_hyphens=False)


def _row(cells: list[str]) -> str:
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


def _log(name: str) -> str:
    """``log_1000000.parquet`` → ``the 1M log``."""
    digits = "".join(c for c in name.split(".")[0] if c.isdigit())
    if not digits:
        return f"`{name}`"
    rows = int(digits)
    size = f"{rows / 1e6:g}M" if rows >= 1_000_000 else f"{rows / 1e3:g}k"
    return f"the {size} log"


def _notes(paragraphs: list[list[str]]) -> list[str]:
    lines: list[str] = []
    for paragraph in paragraphs:
        lines += ["", *paragraph]
    return lines


def _machine(doc: dict[str, Any]) -> list[str]:
    text = f"Machine: {doc['machine']}"
    if doc.get("conditions"):
        text += f"; {doc['conditions']}"
    text += f". {doc['date']}"
    if doc.get("context"):
        text += f", {doc['context']}"
    return _wrap(text + ".")


def _x(statements: int, seconds: float, cores: int, loop_rate: float) -> float:
    """The stage's statements per second against the cores x the loop's."""
    return round(statements / seconds / (cores * loop_rate), 2)


def machine() -> str:
    """Cores, CPU, memory and the versions that matter to the parse stage."""
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    memory = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    versions = []
    for package in ("pyspark", "pyarrow", "sqlglot"):
        with contextlib.suppress(PackageNotFoundError):
            versions.append(f"{package} {version(package)}")
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    first = (java.stderr.splitlines() or [""])[0]
    openjdk = f", openjdk {first.split(chr(34))[1]}" if chr(34) in first else ""
    return (
        f"{os.cpu_count()}-core {cpu}, {memory:.1f} GiB, python {platform.python_version()}, "
        + ", ".join(versions)
        + openjdk
    )


def run_facts(script: str, argv: list[str], prefix: str) -> dict[str, str]:
    """The command (as run from the repository root, behind ``prefix``), the UTC date and the
    machine of a run, for its ``--json`` file."""
    shown = []
    for arg in argv:
        path = Path(arg)
        if path.is_absolute():
            arg = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else "<dir>"
        shown.append(arg)
    return {
        "command": " ".join([prefix, script, *shown]).strip(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
    }


# --- parse_stage.md ------------------------------------------------------------------------------


def record_parse_stage(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The page's JSON from ``parse_stage.py --json`` runs (one application each): per run and
    sink, round 1 (cold for the application's first sink) and the later, warm rounds."""
    first = runs[0]
    rows = []
    for number, run in enumerate(runs, 1):
        order = list(dict.fromkeys(r["sink"] for r in run["rounds"]))
        for sink in order:
            rounds = [r for r in run["rounds"] if r["sink"] == sink and r["udf"] == "arrow"]
            if not rounds:
                continue
            xs = [
                _x(run["statements"], r["seconds"], run["cores"], run["loop_rate"]) for r in rounds
            ]
            note = (
                "the application's first stage: cold"
                if sink == order[0]
                else f"ran right after the cold {order[0]} round"
            )
            later = [r["seconds"] for r in rounds[1:]]
            rows.append(
                {
                    "run": number,
                    "sink": sink,
                    "first": {"x": xs[0], "seconds": round(rounds[0]["seconds"], 1), "note": note},
                    "later": {
                        "x": xs[1:],
                        "seconds": [round(min(later), 1), round(max(later), 1)] if later else [],
                    },
                    "loop_rate": round(run["loop_rate"], 1),
                }
            )
    return {
        "machine": first["machine"],
        "conditions": None,
        "date": first["date"],
        "context": None,
        "log": first["log"],
        "statements": first["statements"],
        "partitions": first["partitions"][0],
        "cores": first["cores"],
        "loop_sample": first["loop_sample"],
        "commands": [run["command"] for run in runs],
        "rows": rows,
        "notes": [],
    }


def render_parse_stage(doc: dict[str, Any]) -> str:
    """``bench/results/parse_stage.md`` from its JSON."""
    statements, cores = doc["statements"], doc["cores"]
    loop = (
        f"over all {statements:,} statements"
        if doc["loop_sample"] >= statements
        else f"over a seeded sample of {doc['loop_sample']:,} statements"
    )
    scope = (
        "`bench/parse_stage.py` keeps only what the parse stage cannot do without:"
        f" {_log(doc['log'])}'s {statements:,} distinct statements (cached in the JVM), the hash"
        " repartition into"
        f" {doc['partitions']} partitions, the job's Arrow UDF and a sink. No query-log read, no"
        " incremental check against Delta, no other stage. Every round after the first runs with"
        " the Python workers started, their imports done and the JVM's code paths compiled: it is"
        f" the best the stage can do on these {NUMBERS.get(cores, str(cores))} cores."
    )
    lines = [
        f"# The parse UDF's stage in isolation: how close Spark gets to {cores} x the loop",
        "",
        *_machine(doc),
        "",
        *_wrap(scope),
        "",
        *_wrap(
            "Commands (from the repository root; the loop is the same child-process loop as"
            f" `run_bench.py`'s (a), {loop}, run once before the rounds):"
        ),
        "",
        *(f"    {command}" for command in doc["commands"]),
        "",
        *_wrap(
            "Sinks: *checkpoint* stores the results on disk as the job does (a local checkpoint,"
            " DISK_ONLY); *noop* turns them into rows and drops them (Spark's noop sink); *sum*"
            " reads one number per result (`parse_ms`), so the JVM never turns the nested results"
            " into rows."
        ),
        "",
        f"| run | sink | round 1 | later rounds (warm), x {cores} x the loop | loop/s |",
        "|---|---|---:|---|---:|",
    ]
    for row in doc["rows"]:
        first, later = row["first"], row["later"]
        warm = ", ".join(f"{x:.2f}" for x in later["x"])
        if later["seconds"]:
            low, high = later["seconds"]
            warm += f" ({low:.1f} s)" if low == high else f" ({low:.1f}{EN_DASH}{high:.1f} s)"
        lines.append(
            _row(
                [
                    str(row["run"]),
                    SINKS.get(row["sink"], row["sink"]),
                    f"{first['x']:.2f} ({first['seconds']:.1f} s; {first['note']})",
                    warm or "-",
                    f"{row['loop_rate']:,.1f}",
                ]
            )
        )
    lines += _notes(doc["notes"])
    return "\n".join(lines) + "\n"


# --- udf_results.md ------------------------------------------------------------------------------


def record_udf_results(
    udf: dict[str, Any], stage: dict[str, Any], sums: dict[str, Any]
) -> dict[str, Any]:
    """The page's JSON from a ``udf_results.py --json`` run, a ``parse_stage.py --json`` run with
    ``--sink checkpoint --udf pandas arrow`` and one with ``--sink sum --udf arrow pandas``."""
    medians = {name: round(statistics.median(v), 1) for name, v in udf["times"].items()}
    rounds: dict[int, dict[str, float]] = {}
    for r in stage["rounds"]:
        rounds.setdefault(r["round"], {})[r["udf"]] = round(r["seconds"], 1)
    loop_seconds = sums["statements"] / sums["loop_rate"]
    cores = sums["cores"]
    return {
        "machine": udf["machine"],
        "conditions": None,
        "date": udf["date"],
        "per_statement": {
            "command": udf["command"],
            "log": udf["log"],
            "sample": udf["sample"],
            "statements": udf["statements"],
            "batch": udf["batch"],
            "parse_us": round(udf["parse_us"]),
            "paths": {
                name: {"median": medians[name], "runs": [round(v, 1) for v in values]}
                for name, values in udf["times"].items()
            },
            "notes": [
                _wrap(
                    f"The pandas path is {_share(medians['pandas'], udf['parse_us'])} of a"
                    f" statement's parse; the Arrow path is"
                    f" {_share(medians['arrow'], udf['parse_us'])}."
                )
            ],
        },
        "stage": {
            "command": stage["command"],
            "statements": stage["statements"],
            "partitions": stage["partitions"][0],
            "rounds": [
                {"round": n, "pandas": r.get("pandas"), "arrow": r.get("arrow")}
                for n, r in sorted(rounds.items())
            ],
            "median": {
                u: round(statistics.median(r[u] for r in rounds.values() if u in r), 1)
                for u in ("pandas", "arrow")
            },
            "notes": [],
        },
        "sum": {
            "command": sums["command"],
            "loop_rate": round(sums["loop_rate"], 1),
            "loop_seconds": round(loop_seconds, 1),
            "statements": sums["statements"],
            "cores": cores,
            "rounds": [
                {
                    "round": r["round"],
                    "udf": r["udf"],
                    "seconds": round(r["seconds"], 1),
                    "x": _x(sums["statements"], r["seconds"], cores, sums["loop_rate"]),
                    "parse_seconds": round(r["parse_seconds"], 1),
                    "vs_loop": round(r["parse_seconds"] / loop_seconds, 2),
                    "share": round(r["parse_seconds"] / cores / r["seconds"], 2),
                }
                for r in sums["rounds"]
            ],
            "notes": [],
        },
        "notes": [],
    }


def _share(part: float, whole: float) -> str:
    share = 100 * part / whole
    return f"~{share:.0f} %" if share >= 10 else f"~{share:.1f} %"


def render_udf_results(doc: dict[str, Any]) -> str:
    """``bench/results/udf_results.md`` from its JSON."""
    ps, stage, sums = doc["per_statement"], doc["stage"], doc["sum"]
    paths, parse_us = ps["paths"], ps["parse_us"]
    runs = len(paths["arrow"]["runs"])
    lines = [
        "# The parse UDF's return path: pandas UDF vs Arrow UDF",
        "",
        *_machine(doc),
        "",
        "## Per statement, one process (`bench/udf_results.py`)",
        "",
        f"Command: `{ps['command']}`",
        *_wrap(
            f"({ps['sample']:,} of {_log(ps['log'])}'s"
            f" {ps['statements']:,} distinct statements, seeded; batches of {ps['batch']} as the"
            f" job's Arrow batches; {NUMBERS.get(runs, str(runs))} interleaved rounds, CPU time;"
            " the two paths' arrays compared equal on every batch)."
        ),
        "",
        f"| path | µs per statement (median of {runs}) | runs |",
        "|---|---:|---|",
        f"| parse itself (for scale) | {parse_us:,} | |",
        _row(
            [
                "pandas UDF: records, DataFrame, PySpark's struct conversion",
                f"{paths['pandas']['median']:.1f}",
                ", ".join(f"{v:.1f}" for v in paths["pandas"]["runs"]),
            ]
        ),
        _row(
            [
                "Arrow UDF: `results_to_arrow`, column by column",
                f"**{paths['arrow']['median']:.1f}**",
                ", ".join(f"{v:.1f}" for v in paths["arrow"]["runs"]),
            ]
        ),
        *_notes(ps["notes"]),
        "",
        "## The UDF in the stage (`bench/parse_stage.py`)",
        "",
        f"Command: `{stage['command']}`",
        *_wrap(
            f"(all {stage['statements']:,} statements,"
            f" {stage['partitions']} partitions, results stored as the job's local checkpoint;"
            " the two UDFs alternate)."
        ),
        "",
        "| round | pandas UDF s | Arrow UDF s |",
        "|---:|---:|---:|",
        *(
            _row(
                [
                    str(r["round"]),
                    "-" if r["pandas"] is None else f"{r['pandas']:.1f}",
                    "-" if r["arrow"] is None else f"{r['arrow']:.1f}",
                ]
            )
            for r in stage["rounds"]
        ),
        _row(
            [
                "median",
                f"{stage['median']['pandas']:.1f}",
                f"**{stage['median']['arrow']:.1f}**",
            ]
        ),
        *_notes(stage["notes"]),
        "",
        "## How much of the stage is parsing (`bench/parse_stage.py --sink sum`)",
        "",
        f"Command: `{sums['command']}`",
        "",
        *_wrap(
            "The `sum` sink adds up every result's `parse_ms` (the parser's own time, measured"
            " inside `LineageParser.parse` in the worker): *parse s* is the workers' parsing time,"
            " *share* is that per core over the stage's wall time (the rest: Spark, Arrow, the"
            " UDF's loop, the worker's start, waiting). The loop (one process, all"
            f" {sums['statements']:,} statements, the same minutes): {sums['loop_rate']:,.1f}/s,"
            f" i.e. {sums['loop_seconds']:.1f} s of parsing."
        ),
        "",
        f"| round | UDF | stage s | x {sums['cores']} x the loop | parse s (workers)"
        f" | parse s vs the loop's {sums['loop_seconds']:.1f} | share |",
        "|---:|---|---:|---:|---:|---:|---:|",
        *(
            _row(
                [
                    str(r["round"]),
                    UDFS.get(r["udf"], r["udf"]),
                    f"{r['seconds']:.1f}",
                    f"{r['x']:.2f}",
                    f"{r['parse_seconds']:.1f}",
                    f"{r['vs_loop']:.2f}",
                    f"{r['share']:.2f}",
                ]
            )
            for r in sums["rounds"]
        ),
        *_notes(sums["notes"]),
    ]
    lines += _notes(doc["notes"])
    return "\n".join(lines) + "\n"


RENDER = {"parse-stage": render_parse_stage, "udf-results": render_udf_results}


def _paths(page: str, folder: Path) -> tuple[Path, Path]:
    name = page.replace("-", "_")
    return folder / f"{name}.json", folder / f"{name}.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="write a page's JSON from raw runs")
    rec_sub = rec.add_subparsers(dest="page", required=True)
    p = rec_sub.add_parser("parse-stage")
    p.add_argument("runs", type=Path, nargs="+", help="parse_stage.py --json files, in order")
    p = rec_sub.add_parser("udf-results")
    p.add_argument("--udf", type=Path, required=True, help="a udf_results.py --json file")
    p.add_argument("--stage", type=Path, required=True, help="parse_stage.py, checkpoint sink")
    p.add_argument("--sum", type=Path, required=True, help="parse_stage.py, sum sink")
    p = sub.add_parser("report", help="render the pages' Markdown from their JSON")
    p.add_argument("--page", choices=PAGES, action="append", help="one page (default: both)")
    for p in (*rec_sub.choices.values(), sub.choices["report"]):
        p.add_argument("--results", type=Path, default=RESULTS, help="the pages' folder")
    args = ap.parse_args(argv)

    def load(path: Path) -> dict[str, Any]:
        return dict(json.loads(path.read_text(encoding="utf-8")))

    if args.command == "record":
        if args.page == "parse-stage":
            doc = record_parse_stage([load(p) for p in args.runs])
        else:
            doc = record_udf_results(load(args.udf), load(args.stage), load(args.sum))
        out = _paths(args.page, args.results)[0]
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{out}: recorded")
        return 0
    for page in args.page or PAGES:
        source, out = _paths(page, args.results)
        out.write_text(RENDER[page](load(source)), encoding="utf-8")
        print(f"{out}: rendered from {source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
