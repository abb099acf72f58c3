"""What a small extract costs in the Spark tests' session (tests/support/spark_session.py).

Nearly all of `make test`'s time is Spark tests running the job on a few rows, where each Spark
query's fixed cost (planning, Delta's log, scheduling) is the whole cost. This starts one JVM
with the tests' session confs (``--conf KEY=VALUE`` overrides them, e.g. to compare a conf on and
off), then runs ``--runs`` extracts of a three-statement log, each into a new warehouse, and
prints per run the wall seconds, the JVM's CPU seconds and the run's stage seconds. The first
run pays for the cold JVM; compare the later ones.

    .venv/bin/python bench/test_session.py                       # the tests' confs
    .venv/bin/python bench/test_session.py --conf spark.sql.adaptive.enabled=true \\
        --conf spark.databricks.delta.snapshotPartitions=2       # as before they changed

``--report FILE --label NAME`` also writes the runs as section NAME of FILE (a section of that
name is replaced, the others kept): bench/results/test_session.md. Linux only (the JVM's CPU
time is read from /proc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import run_bench  # noqa: E402

from lineage_udfs.settings import JobSettings, SinkSettings, SourceSettings  # noqa: E402
from lineage_udfs.spark.extract.stage import extract  # noqa: E402
from lineage_udfs.spark.runtime.session import build_spark_session  # noqa: E402
from tests.support.spark_session import session_settings  # noqa: E402

LOG = [
    ("g1", "INSERT INTO s.b SELECT x FROM s.a", 1),
    ("g2", "INSERT INTO s.c SELECT x FROM s.b", 2),
    ("v1", "CREATE OR REPLACE VIEW rep.v AS SELECT a FROM raw.a", 3),
]


def _jvm_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine() -> str:
    return f"{run_bench._cpu_model()}, {os.cpu_count()} cores, {run_bench._mem_total_gb():.1f} GiB"


def _section(label: str, extra: dict[str, str], runs: list[dict[str, Any]]) -> str:
    confs = " ".join(f"--conf {k}={v}" for k, v in extra.items())
    lines = [
        f"## {label}",
        "",
        f"Command: `.venv/bin/python bench/test_session.py --runs {len(runs)}"
        f"{' ' + confs if confs else ''}`  ",
        f"Machine: {_machine()}; load average {os.getloadavg()[0]:.1f} at the end  ",
        f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "",
        "| run | wall s | JVM CPU s | stages (s) |",
        "|---:|---:|---:|---|",
    ]
    for r in runs:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["stages_s"].items() if k != "total")
        lines.append(f"| {r['run']} | {r['wall_s']} | {r['jvm_cpu_s']} | {stages} |")
    return "\n".join(lines) + "\n"


def _write_report(path: Path, label: str, section: str) -> None:
    """``section`` as the section ``label`` of ``path``, replacing one of that name."""
    head = (
        "# A small extract in the tests' session\n\nWritten by `bench/test_session.py --report`.\n"
    )
    text = path.read_text("utf-8") if path.exists() else head
    parts = re.split(r"(?m)^(?=## )", text)
    kept = [p for p in parts[1:] if not p.startswith(f"## {label}\n")]
    path.write_text(
        "\n".join([parts[0].rstrip("\n") + "\n", *[p.rstrip("\n") + "\n" for p in kept], section]),
        "utf-8",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--report", type=Path, help="write the runs as a section of this file")
    parser.add_argument("--label", default="runs", help="the section's name (with --report)")
    args = parser.parse_args()
    extra = dict(c.split("=", 1) for c in args.conf)
    folder = Path(tempfile.mkdtemp(prefix="test-session-bench-"))
    spark = build_spark_session(session_settings(str(folder / "spark-warehouse"), extra))
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    log = folder / "log.jsonl"
    lines = [
        json.dumps({"query_id": q, "query_text": sql, "start_time": f"2026-03-0{day}T01:00:00Z"})
        for q, sql, day in LOG
    ]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(json.dumps({"confs": extra}))
    runs = []
    for run in range(args.runs):
        settings = JobSettings(
            sources=[SourceSettings(name="log", format="jsonl", path=str(log))],
            sink=SinkSettings(base_path=str(folder / f"warehouse-{run}")),
        )
        started, cpu = time.perf_counter(), _jvm_cpu(pid)
        summary = extract(spark, settings)
        runs.append(
            {
                "run": run,
                "wall_s": round(time.perf_counter() - started, 1),
                "jvm_cpu_s": round(_jvm_cpu(pid) - cpu, 1),
                "stages_s": dict(summary.stage_seconds),
            }
        )
        print(json.dumps(runs[-1]), flush=True)
        jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # as the tests do after each test
        spark.catalog.clearCache()
    spark.stop()
    if args.report:
        _write_report(args.report, args.label, _section(args.label, extra, runs))


if __name__ == "__main__":
    main()
