"""The extraction job on a 2-worker standalone cluster and on ``local[2]``, one after the other
on the same machine: seconds per stage and the cluster's ratio to the local run.

    PYTHONPATH=. .venv/bin/python bench/cluster_bench.py --log bench/data/log_1000000.parquet

Each run is ``bench/run_bench.py``'s job run (``jobs/extract.py`` with a generated config over
the whole log into a fresh Delta warehouse, graph stage included, driver memory sampled), with
``--master`` the cluster's URL or ``local[2]``. The cluster is ``tests/cluster/standalone.py``'s:
a master and two workers of one core each on 127.0.0.1, one executor per worker. On a machine
of two cores the cluster cannot be faster than ``local[2]``: the ratio is its overhead
(separate executor JVMs, each with its own Python workers, shuffles and broadcasts between
processes), not its scaling. Which executors ran the tasks is read from the job's event log.
Writes ``bench/results/cluster.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

import run_bench  # noqa: E402

from tests.cluster.standalone import StandaloneCluster  # noqa: E402

EXECUTOR_MEMORY = "1g"


def _tasks_per_executor(events: Path) -> dict[str, int]:
    """Tasks per executor id in a job's event log."""
    counts: Counter[str] = Counter()
    for path in sorted(events.glob("**/events_*")):
        for line in path.read_text(errors="replace").splitlines():
            if '"SparkListenerTaskEnd"' in line[:60]:
                counts[json.loads(line)["Task Info"]["Executor ID"]] += 1
    return dict(sorted(counts.items()))


def _run(log: Path, master: str, args: argparse.Namespace) -> dict:
    options = argparse.Namespace(
        conf=[("spark.executor.memory", EXECUTOR_MEMORY)],
        master=master,
        parser_settings={},
        shuffle_partitions=args.shuffle_partitions,
        driver_memory=args.driver_memory,
        keep_warehouse=True,
    )
    before = set(Path(tempfile.gettempdir()).glob("lineage-bench-*"))
    load = os.getloadavg()
    run = run_bench.run_job(log, options, [])
    (work,) = set(Path(tempfile.gettempdir()).glob("lineage-bench-*")) - before
    tasks = _tasks_per_executor(work / "events")
    shutil.rmtree(work, ignore_errors=True)
    return {
        "master": master,
        "wall": run.seconds,
        "stages": run.stage_seconds,
        "summary": run.summary,
        "memory": run.memory,
        "tasks": tasks,
        "load_before": load,
        "load_after": os.getloadavg(),
    }


def _report(runs: list[dict], args: argparse.Namespace, command: str, started: str) -> str:
    local = next(r for r in runs if r["master"].startswith("local"))
    cluster = next(r for r in runs if r["master"].startswith("spark://"))
    stages = [s for s in ("read", "prepare", "parse", "write", "total") if s in local["stages"]]

    def load(x: tuple[float, ...]) -> str:
        return " / ".join(f"{v:.2f}" for v in x)

    lines = [
        "# The job on a 2-worker standalone cluster and on local[2]",
        "",
        "`bench/cluster_bench.py`: the extraction job (`jobs/extract.py`, fresh Delta warehouse,"
        " graph stage included) over the same log, on a Spark standalone cluster of two workers"
        " of one core each on 127.0.0.1 (`tests/cluster/standalone.py`: one executor JVM per"
        f" worker, `spark.executor.memory` {EXECUTOR_MEMORY}) and on `local[2]`, one after the"
        " other. The machine has two cores: the cluster cannot be faster; the ratio shows its"
        " overhead (two executor JVMs with their own Python workers, data between processes),"
        " not its scaling.",
        "",
        f"Command: `{command}`  ",
        f"Log: `{args.log.name}` ({local['summary']['rows_read']:,} rows,"
        f" {local['summary']['input_bytes'] / 1e6:,.0f} MB of SQL text)  ",
        f"Machine: {run_bench._cpu_model()}, {os.cpu_count()} cores, shared with other work"
        f" (load average below)  ",
        f"Date: {started}; `spark.driver.memory` {args.driver_memory}, shuffle partitions"
        f" {local['summary']['shuffle_partitions']}",
        "",
        "| run | order | wall s | " + " | ".join(f"{s} s" for s in stages) + " | rows/s (total)"
        " | distinct parsed | tasks per executor | load before (1/5/15 min) | load after |",
        "|---|---:|---:|" + "---:|" * len(stages) + "---:|---:|---|---|---|",
    ]
    for i, r in enumerate(runs, 1):
        total = r["stages"].get("total") or r["wall"]
        lines.append(
            f"| {'cluster' if r is cluster else 'local[2]'} | {i} | {r['wall']:.0f} | "
            + " | ".join(f"{r['stages'].get(s, 0):.1f}" for s in stages)
            + f" | {r['summary']['rows_read'] / total:,.0f} | {r['summary']['parsed']:,} |"
            f" {r['tasks']} | {load(r['load_before'])} | {load(r['load_after'])} |"
        )
    lines += [
        "",
        "Cluster over local[2] (seconds; above 1 = the cluster slower):",
        "",
        "| figure | ratio |",
        "|---|---:|",
        f"| wall (JVM start, job, graph stage) | {cluster['wall'] / local['wall']:.2f} |",
        *(
            f"| {s} | {cluster['stages'][s] / local['stages'][s]:.2f} |"
            for s in stages
            if local["stages"].get(s) and s in cluster["stages"]
        ),
        "",
        f"Both runs read {local['summary']['rows_read']:,} rows and parsed"
        f" {local['summary']['parsed']:,} / {cluster['summary']['parsed']:,} distinct statements"
        f" (local / cluster); by status: local {local['summary']['by_status']}, cluster"
        f" {cluster['summary']['by_status']}. On `local[2]` every task runs in the driver"
        " (executor `driver`); on the cluster in the two executors (ids `0` and `1`).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", type=Path, default=ROOT / "bench" / "data" / "log_1000000.parquet")
    ap.add_argument("--driver-memory", default="1g")
    ap.add_argument("--shuffle-partitions", type=int, default=4)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "cluster.md")
    args = ap.parse_args(argv)
    command = "PYTHONPATH=. .venv/bin/python bench/cluster_bench.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    cluster = StandaloneCluster(Path(tempfile.mkdtemp(prefix="cluster-bench-")), workers=2)
    cluster.start()
    try:
        print(f"[cluster-bench] job on {cluster.master_url} ...", file=sys.stderr)
        runs = [_run(args.log.resolve(), cluster.master_url, args)]
    finally:
        cluster.stop()
    print("[cluster-bench] job on local[2] ...", file=sys.stderr)
    runs.append(_run(args.log.resolve(), "local[2]", args))
    print(json.dumps(runs, indent=1, default=str), file=sys.stderr)
    args.out.write_text(_report(runs, args, command, started))
    print(f"[cluster-bench] wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
