"""The graph stage on synthetic warehouse graphs: seconds per output, peak memory, row counts,
and every output compared row by row with a single-process networkx computation.

    python bench/graph_bench.py --sizes 10k 100k           # generate, run, compare, report
    python bench/graph_bench.py --sizes 1m --no-reference  # the stage alone
    python bench/graph_bench.py --sizes 100k --no-reference --cluster  # driver, executors apart

Memory: the driver JVM's and each executor JVM's peak RSS (``VmHWM``), the driver's Python
process, and per JVM that runs tasks its own Python workers (sampled from /proc, only this
benchmark's processes): summed RSS, summed anonymous RSS, the largest one; and the size of
each broadcast graph (from the stage's log). ``--cluster`` runs the stage on a standalone
cluster of two one-core workers (``tests/cluster/standalone.py``), so that the executors'
memory is apart from the driver's.

Each size runs in its own process (one JVM per size, so peak memory is per size) with
``--master local[2]`` and the job's default JVM memory (spark.driver.memory unset: 1g). The
stage is the job's (``run_graph_stage``, full refresh, Delta tables under ``--work``). The
reference (``networkx_outputs``) implements the stage's documented rules: components keyed by
the smallest name, cycles by strongly connected components, the per-ancestor closure cap
(nearest first, then by name), the per-root path cap; its rows are written to Parquet and
compared with the Delta tables in Spark (``exceptAll`` both ways, over two hashes per row;
``--compare-only`` redoes the comparison of stored outputs). Results go to
``bench/results/graph.md`` (one section per size, replaced on a re-run).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from generate_graph import generate, write  # noqa: E402

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
OUTPUTS = ("lineage_nodes", "lineage_paths", "table_closure", "column_closure", "graph_components")
SEP = "\u0001"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"

# --- the networkx reference ---------------------------------------------------------------------


def _component_rows(graph: object) -> dict[str, str]:
    import networkx as nx

    assert isinstance(graph, nx.DiGraph)
    out: dict[str, str] = {}
    for members in nx.weakly_connected_components(graph):
        smallest = min(members)
        for m in members:
            out[m] = smallest
    return out


def _capped_closure(
    succ: dict[str, list[str]], sources: Iterator[str], max_depth: int, cap: int
) -> Iterator[tuple[str, str, int, bool]]:
    """Per source: BFS levels (fewest hops), each level in name order, at most ``cap`` nodes;
    ``truncated`` when more were reachable within ``max_depth``."""
    for src in sources:
        seen: dict[str, int] = {}
        level = [src]
        truncated = False
        for depth in range(1, max_depth + 1):
            nxt = sorted({d for n in level for d in succ.get(n, ()) if d != src and d not in seen})
            if not nxt:
                break
            room = cap - len(seen)
            if len(nxt) > room:
                truncated = True
                nxt = nxt[:room]
            for d in nxt:
                seen[d] = depth
            if truncated:
                break
            level = nxt
        for d, dist in seen.items():
            yield src, d, dist, truncated


def _paths(
    succ: dict[str, list[str]], roots: list[str], leaves: set[str], max_depth: int, cap: int
) -> Iterator[tuple[str, tuple[str, ...], bool]]:
    """The stage's hop-by-hop path expansion, per root (see graph.root_to_leaf_paths)."""
    for root in roots:
        live: list[tuple[str, ...]] = [(root,)]
        done: list[tuple[tuple[str, ...], bool]] = []
        capped = False
        for depth in range(1, max_depth + 1):
            extended = []
            for p in live:
                ext = [(*p, d) for d in succ.get(p[-1], ()) if d not in p]
                if not ext and len(p) > 1:
                    done.append((p, False))
                extended.extend(ext)
            extended.sort()
            if len(extended) > cap:
                capped = True
                extended = extended[:cap]
            live = []
            for p in extended:
                (done.append((p, False)) if p[-1] in leaves else live.append(p))
            if depth == max_depth:
                done.extend((p, True) for p in live)
            if not live:
                break
        done.sort(key=lambda pc: (len(pc[0]), pc[0]))
        if len(done) > cap:
            capped = True
            done = done[:cap]
        for p, cut in done:
            yield root, p, cut or capped


def networkx_outputs(data: Path, out: Path, max_depth: int, path_cap: int, cap: int) -> dict:
    """Every output of the stage computed with networkx, written as Parquet under ``out``."""
    import networkx as nx

    started = time.perf_counter()
    tl = pq.read_table(data / "table_lineage.parquet").to_pylist()
    graph = nx.DiGraph()
    graph.add_edges_from((r["source_table"], r["target_table"]) for r in tl)
    comp = _component_rows(graph)
    sizes: dict[str, int] = defaultdict(int)
    for c in comp.values():
        sizes[c] += 1
    on_cycle = {n for scc in nx.strongly_connected_components(graph) if len(scc) > 1 for n in scc}
    on_cycle |= {n for n in nx.nodes_with_selfloops(graph)}
    views = {r["target_table"] for r in tl if r["edge_kind"] == "view"}
    succ = {n: [d for d in graph.successors(n) if d != n] for n in graph}
    pred_count = defaultdict(int)
    for ds in succ.values():
        for d in ds:
            pred_count[d] += 1
    nodes = []
    for n in graph:
        kind = (
            "view"
            if n in views
            else ("external" if n.startswith("@") or "://" in n or n.startswith("/") else "table")
        )
        nodes.append(
            {
                "node": n,
                "kind": kind,
                "in_degree": pred_count[n],
                "out_degree": len(succ[n]),
                "is_root": pred_count[n] == 0,
                "is_leaf": not succ[n],
                "on_cycle": n in on_cycle,
                "component_id": comp[n],
                "component_size": sizes[comp[n]],
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(nodes), out / "lineage_nodes.parquet")
    seconds = {"lineage_nodes": time.perf_counter() - started}

    clock = time.perf_counter()
    rows = [
        {"component_id": comp[s], "ancestor": s, "descendant": d, "min_distance": k, "truncated": t}
        for s, d, k, t in _capped_closure(succ, iter(sorted(succ)), max_depth, cap)
    ]
    pq.write_table(pa.Table.from_pylist(rows), out / "table_closure.parquet")
    seconds["table_closure"] = time.perf_counter() - clock
    counts = {"lineage_nodes": len(nodes), "table_closure": len(rows)}
    del rows

    clock = time.perf_counter()
    roots = sorted(n for n in graph if pred_count[n] == 0 and succ[n])
    leaves = {n for n in graph if not succ[n]}
    writer = None
    count = 0
    batch: list[dict] = []
    for root, p, t in _paths(succ, roots, leaves, max_depth, path_cap):
        batch.append(
            {
                "component_id": comp[root],
                "root": root,
                "leaf": p[-1],
                "path": list(p),
                "depth": len(p) - 1,
                "truncated": t,
            }
        )
        if len(batch) >= 200_000:
            table = pa.Table.from_pylist(batch)
            writer = writer or pq.ParquetWriter(out / "lineage_paths.parquet", table.schema)
            writer.write_table(table)
            count += len(batch)
            batch = []
    if batch or writer is None:
        table = pa.Table.from_pylist(
            batch,
            schema=pa.schema(
                [
                    ("component_id", pa.string()),
                    ("root", pa.string()),
                    ("leaf", pa.string()),
                    ("path", pa.list_(pa.string())),
                    ("depth", pa.int64()),
                    ("truncated", pa.bool_()),
                ]
            ),
        )
        writer = writer or pq.ParquetWriter(out / "lineage_paths.parquet", table.schema)
        writer.write_table(table)
        count += len(batch)
    writer.close()
    seconds["lineage_paths"] = time.perf_counter() - clock
    counts["lineage_paths"] = count

    clock = time.perf_counter()
    cl = pq.read_table(data / "column_lineage.parquet").to_pylist()
    any_succ: dict[str, set[str]] = defaultdict(set)
    direct_succ: dict[str, set[str]] = defaultdict(set)
    for r in cl:
        s = r["source_table"] + SEP + r["source_column"]
        d = r["target_table"] + SEP + r["target_column"]
        any_succ[s].add(d)
        if r["transformation_type"] == "DIRECT":
            direct_succ[s].add(d)
    anys = {k: sorted(v) for k, v in any_succ.items()}
    directs = {k: sorted(v) for k, v in direct_succ.items()}
    del any_succ, direct_succ, cl
    schema = pa.schema(
        [
            ("component_id", pa.string()),
            ("ancestor_table", pa.string()),
            ("ancestor_column", pa.string()),
            ("descendant_table", pa.string()),
            ("descendant_column", pa.string()),
            ("min_distance", pa.int64()),
            ("direct_min_distance", pa.int64()),
            ("truncated", pa.bool_()),
        ]
    )
    # row groups of ~100k rows: one per ancestor column would be hundreds of thousands of
    # row groups, whose footer alone exhausts a Spark task's heap when the file is read back
    writer = pq.ParquetWriter(out / "column_closure.parquet", schema)
    count = 0
    batch: list[dict] = []
    for src in sorted(anys):
        direct = {d: (k, t) for _, d, k, t in _capped_closure(directs, iter([src]), max_depth, cap)}
        direct_cut = any(t for _, t in direct.values())
        table_of = src.split(SEP)[0]
        for _, d, k, t in _capped_closure(anys, iter([src]), max_depth, cap):
            dt, dc = d.split(SEP)
            batch.append(
                {
                    "component_id": comp.get(dt, dt),
                    "ancestor_table": table_of,
                    "ancestor_column": src.split(SEP)[1],
                    "descendant_table": dt,
                    "descendant_column": dc,
                    "min_distance": k,
                    "direct_min_distance": direct[d][0] if d in direct else None,
                    "truncated": t or direct_cut,
                }
            )
        if len(batch) >= 100_000:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
            batch = []
    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    count += len(batch)
    writer.close()
    seconds["column_closure"] = time.perf_counter() - clock
    counts["column_closure"] = count
    comp_rows = [{"component_id": c, "node_count": n} for c, n in sizes.items()]
    pq.write_table(pa.Table.from_pylist(comp_rows), out / "graph_components.parquet")
    counts["graph_components"] = len(comp_rows)
    seconds["total"] = time.perf_counter() - started
    return {"seconds": seconds, "rows": counts}


# --- one size in one process ---------------------------------------------------------------------


def _jvm_peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


PAGE = os.sysconf("SC_PAGE_SIZE")
EXECUTOR_CLASS = "CoarseGrainedExecutorBackend"


def _status_kb(pid: int, key: str) -> int:
    """A ``/proc/<pid>/status`` figure in kB (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class _ProcessMemory:
    """Samples the process trees under ``roots`` every half second and keeps, per JVM that
    runs tasks (an executor JVM; in ``local[N]`` the driver's JVM), its Python workers' peak:
    the summed RSS, the summed anonymous RSS (memory of their own, not file pages they could
    share), the largest worker, and how many ran at once. Only this benchmark's processes are
    counted (the machine is shared). Each JVM's own peak is its ``VmHWM``, read at the end
    (``jvm_peaks``) while the application still runs."""

    def __init__(self, roots: list[int]) -> None:
        import threading

        self.roots = roots
        self.workers: dict[int, dict[str, int]] = {}
        self.jvms: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _procs() -> dict[int, tuple[int, str]]:
        procs = {}
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                continue
            procs[int(proc.name)] = (ppid, cmd)
        return procs

    def sample(self) -> None:
        procs = self._procs()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        totals: dict[int, dict[str, int]] = {}
        # (pid, the JVM running tasks above it)
        stack: list[tuple[int, int | None]] = [(r, None) for r in self.roots]
        while stack:
            pid, jvm = stack.pop()
            cmd = procs.get(pid, (0, ""))[1]
            if cmd.split(" ")[0].endswith("java") and (
                EXECUTOR_CLASS in cmd or "SparkSubmit" in cmd
            ):
                jvm = pid
                self.jvms.add(pid)
            elif jvm is not None and "pyspark" in cmd and ("daemon" in cmd or "worker" in cmd):
                rss = _status_kb(pid, "VmRSS") * 1024
                anon = _status_kb(pid, "RssAnon") * 1024
                t = totals.setdefault(jvm, {"rss": 0, "anon": 0, "max_one": 0, "count": 0})
                t["rss"] += rss
                t["anon"] += anon
                t["max_one"] = max(t["max_one"], rss)
                t["count"] += 1
            stack += [(c, jvm) for c in children.get(pid, [])]
        for jvm, t in totals.items():
            peak = self.workers.setdefault(jvm, dict.fromkeys(t, 0))
            for key, value in t.items():
                peak[key] = max(peak[key], value)

    def jvm_peaks(self) -> dict[int, int]:
        """Each task-running JVM's peak RSS (``VmHWM``) in bytes."""
        self.sample()
        return {pid: _status_kb(pid, "VmHWM") * 1024 for pid in self.jvms}

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.sample()

    def __enter__(self) -> _ProcessMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class _Broadcasts(logging.Handler):
    """The graph stage's broadcast sizes, from its log (``graph.arrays.in_tasks``)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.bytes: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if " broadcast: " in message:
            what = message.split(":")[1].split()[0]
            self.bytes[what] = int(message.split(" broadcast: ")[1].split()[0])


def run_one(size: str, args: argparse.Namespace) -> dict:
    """Generate (once), run the stage, compute the reference, compare; a JSON-able summary.

    The stage's figures are saved (``result-<size>.json`` beside the data) before the reference
    runs, and the reference's after it: ``--compare-only`` redoes just the comparison of the
    stored outputs."""
    from pyspark.sql import functions as F

    from lineage_udfs.settings import GraphSettings, SinkSettings, SparkSettings
    from lineage_udfs.spark.runtime.session import build_spark_session
    from lineage_udfs.spark.storage.tables import LineageTables

    data = args.work / f"graph-{size}"
    saved = args.work / f"result-{size}.json"
    if not (data / "table_lineage.parquet").exists():
        write(generate(SIZES[size], args.seed), data)
    spark = build_spark_session(
        SparkSettings(
            app_name=f"graph-bench-{size}",
            master=args.master,
            packages=[
                "io.delta:delta-spark_4.1_2.13:4.4.0",
                "io.graphframes:graphframes-spark4_2.13:0.11.0",
            ],
            confs={
                "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
                "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
                "spark.sql.session.timeZone": "UTC",
                "spark.sql.autoBroadcastJoinThreshold": "-1",
                "spark.sql.adaptive.enabled": "true",
                "spark.ui.enabled": "false",
                # as the job runs (conf/base.yaml): with these, each Python worker receives a
                # broadcast over a socket from its JVM and holds its own copy
                "spark.io.encryption.enabled": "true",
                "spark.python.worker.reuse": "true",
                **(
                    {
                        "spark.executor.memory": "1g",
                        "spark.executor.cores": "1",
                        "spark.cores.max": "2",
                        "spark.local.dir": str((args.work / "spark-local").resolve()),
                    }
                    if args.cluster_roots
                    else {}
                ),
                # the stage runs with the job's default heap; a comparison alone gets more
                **({"spark.driver.memory": "3g"} if args.compare_only else {}),
            },
        )
    )
    spark.sparkContext.setLogLevel("ERROR")
    tables = LineageTables(spark, SinkSettings(base_path=str(args.work / f"warehouse-{size}")))
    settings = GraphSettings(
        max_closure_per_node=args.closure_cap, max_paths_per_root=args.path_cap
    )
    if args.compare_only:
        result = json.loads(saved.read_text())
    else:
        result = _stage(spark, tables, settings, size, data, args)
        saved.write_text(json.dumps(result, indent=1))
    if args.reference:
        ref_dir = args.work / f"networkx-{size}"
        if "networkx_seconds" not in result or not args.compare_only:
            ref = networkx_outputs(
                data, ref_dir, settings.max_depth, args.path_cap, args.closure_cap
            )
            result["networkx_seconds"] = {k: round(v, 1) for k, v in ref["seconds"].items()}
            result["networkx_rows"] = ref["rows"]
            result["python_peak_rss_mb"] = round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0
            )
            saved.write_text(json.dumps(result, indent=1))
        diff = {}
        for t in OUTPUTS:
            ours = tables.read(t)
            theirs = spark.read.parquet(str(ref_dir / f"{t}.parquet"))
            cols = theirs.columns
            ours = ours.select(*cols)
            theirs = theirs.select(*[F.col(c).cast(ours.schema[c].dataType) for c in cols])
            ours, theirs = _row_hashes(ours), _row_hashes(theirs)
            diff[t] = {
                "only_stage": ours.exceptAll(theirs).count(),
                "only_networkx": theirs.exceptAll(ours).count(),
            }
        result["diff"] = diff
    spark.stop()
    return result


def _row_hashes(rows: Any) -> Any:
    """Each row as two independent 64-bit hashes of all its columns: ``exceptAll`` over these
    tells the same rows apart as over the rows themselves (a collision of both is ~2^-128),
    with a fraction of the memory (a path or closure row is wide; the comparison runs in the
    same 1 GiB heap)."""
    from pyspark.sql import functions as F

    cols = [F.col(c) for c in rows.columns]
    return rows.select(
        F.xxhash64(*cols).alias("h1"), F.xxhash64(F.lit("\u0001"), *cols).alias("h2")
    )


def _stage(
    spark: Any, tables: Any, settings: Any, size: str, data: Path, args: argparse.Namespace
) -> dict:
    """Load the generated edges into Delta, run the graph stage (full refresh); its figures."""
    from pyspark.sql import functions as F

    from lineage_udfs.spark.graph.stage import run_graph_stage
    from lineage_udfs.spark.storage.schemas import TABLES

    jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    heap_mb = int(spark.sparkContext._jvm.Runtime.getRuntime().maxMemory()) / 2**20
    # the closures' tasks log their broadcasts at INFO
    logging.getLogger("lineage_udfs.spark.graph.arrays").setLevel(logging.INFO)
    tl = spark.read.parquet(str(data / "table_lineage.parquet"))
    cl = spark.read.parquet(str(data / "column_lineage.parquet"))
    n_table_edges, n_column_edges = tl.count(), cl.count()
    for name, rows in (("table_lineage", tl), ("column_lineage", cl)):
        full = rows
        for f in TABLES[name].schema:
            if f.name not in rows.columns:
                full = full.withColumn(f.name, F.lit(None).cast(f.dataType))
        tables.ensure(name)
        _, path = tables.location(name)
        full.select(*TABLES[name].columns).write.format("delta").mode("overwrite").save(path)
    roots = [jvm_pid, *args.cluster_roots]
    broadcasts = _Broadcasts()
    logging.getLogger("lineage_udfs.spark.graph.arrays").addHandler(broadcasts)
    with _ProcessMemory(roots) as memory:
        summary = run_graph_stage(tables, settings, full_refresh=True)
        jvm_peaks = memory.jvm_peaks()
    executors = [
        {
            "jvm": pid,
            "jvm_peak_rss_mb": round(peak / 2**20),
            **{f"workers_{k}": v for k, v in memory.workers.get(pid, {}).items()},
        }
        for pid, peak in sorted(jvm_peaks.items())
        if pid != jvm_pid or not args.cluster_roots
    ]
    result: dict = {
        "size": size,
        "table_edges": n_table_edges,
        "column_edges": n_column_edges,
        "stage_seconds": round(summary.seconds, 1),
        "step_seconds": {k: round(v, 1) for k, v in summary.step_seconds.items()},
        "rows": {t: tables.read(t).count() for t in OUTPUTS},
        "truncated_ancestors": {
            t: tables.read(t).where("truncated").select(*a).distinct().count()
            for t, a in (
                ("table_closure", ("ancestor",)),
                ("column_closure", ("ancestor_table", "ancestor_column")),
            )
        },
        "truncated_paths": tables.read("lineage_paths").where("truncated").count(),
        "jvm_peak_rss_mb": round(_jvm_peak_rss_mb(jvm_pid), 0),  # the driver's
        "jvm_max_heap_mb": round(heap_mb, 0),
        # the driver's Python process so far: the stage (the reference runs after this)
        "driver_python_peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0
        ),
        "executors": executors,
        "broadcast_bytes": broadcasts.bytes,
        "master": args.master,
    }
    result["load_average_after_stage"] = [round(x, 1) for x in os.getloadavg()]
    return result


# --- report --------------------------------------------------------------------------------------


def _machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(x.split(":", 1)[1].strip() for x in out.splitlines() if "Model name" in x)
    except (OSError, subprocess.CalledProcessError, StopIteration):
        model = platform.processor() or "unknown CPU"
    try:
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        total = int(next(x.split()[1] for x in meminfo if x.startswith("MemTotal:"))) / 2**20
        memory = f", {total:.0f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        memory = ""
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{model}, {os.cpu_count()} cores{memory}, load average {load} (1/5/15 min) at the start"


def _where(r: dict) -> str:
    master = r.get("master", "local[2]")
    if master.startswith("spark://"):
        return "a standalone cluster of 2 workers, one 1-core executor each (1 GiB heap)"
    return master


def _key(r: dict) -> str:
    """The report section of a run: its size, and the cluster when it ran on one."""
    return r["size"] + (" on a cluster" if r.get("master", "").startswith("spark://") else "")


def _memory_lines(r: dict) -> list[str]:
    """Peak memory of the driver and of each executor, and per edge."""
    if "executors" not in r:  # a result of before these figures
        return []
    edges = r["table_edges"] + r["column_edges"]
    mb = 2**20

    def per_edge(megabytes: float) -> str:
        return f"{megabytes * mb / edges:,.0f}"

    local = not r.get("master", "local").startswith("spark://")
    lines = [
        f"Peak memory (RSS) of the stage over {edges:,} edges ({r['table_edges']:,} table and"
        f" {r['column_edges']:,} column edges); bytes per edge = bytes / (table + column edges):",
        "",
        "| process | peak MB | bytes per edge |",
        "|---|---:|---:|",
        f"| driver JVM{' (also the executor: local mode)' if local else ''} |"
        f" {r['jvm_peak_rss_mb']:,.0f} | {per_edge(r['jvm_peak_rss_mb'])} |",
        f"| driver Python | {r['driver_python_peak_rss_mb']:,.0f} |"
        f" {per_edge(r['driver_python_peak_rss_mb'])} |",
    ]
    for i, e in enumerate(r["executors"]):
        name = "the driver JVM's" if local else f"executor {i + 1}'s"
        if not local:
            lines.append(
                f"| executor {i + 1} JVM | {e['jvm_peak_rss_mb']:,} |"
                f" {per_edge(e['jvm_peak_rss_mb'])} |"
            )
        if "workers_rss" in e:
            lines += [
                f"| {name} Python workers, summed ({e['workers_count']} at most at once) |"
                f" {e['workers_rss'] / mb:,.0f} | {per_edge(e['workers_rss'] / mb)} |",
                f"| {name} Python workers, summed anonymous (not file pages) |"
                f" {e['workers_anon'] / mb:,.0f} | {per_edge(e['workers_anon'] / mb)} |",
                f"| {name} largest Python worker | {e['workers_max_one'] / mb:,.0f} |"
                f" {per_edge(e['workers_max_one'] / mb)} |",
            ]
    sizes = r.get("broadcast_bytes", {})
    if sizes:
        parts = []
        for what, edges_of in (
            ("table_closure_rows", "table_edges"),
            ("path_rows", "table_edges"),
            ("column_closure_rows", "column_edges"),
        ):
            if what in sizes:
                parts.append(
                    f"{what} {sizes[what] / mb:,.1f} MB ({sizes[what] / r[edges_of]:,.1f} bytes"
                    f" per {edges_of.split('_')[0]} edge)"
                )
        lines += [
            "",
            "Broadcast graphs (pickled arrays and keys; each Python worker that runs a task of"
            " the table closure, the paths or the column closure receives and unpickles its own"
            " copy): " + "; ".join(parts) + ".",
        ]
    return [*lines, ""]


def _section(r: dict, command: str, machine: str) -> str:
    lines = [
        f"## {_key(r)}: {r['table_edges']:,} table edges, {r['column_edges']:,} column edges",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine}  ",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"Graph stage (GraphFrames, {_where(r)}, driver JVM max heap"
        f" {r['jvm_max_heap_mb']:.0f} MB): **{r['stage_seconds']} s** in all; load average "
        + " ".join(str(x) for x in r["load_average_after_stage"])
        + " (1/5/15 min) when the stage ended.",
        "",
        *_memory_lines(r),
        "| step | seconds |",
        "|---|---:|",
        *(f"| {k} | {v} |" for k, v in r["step_seconds"].items()),
        "",
        "| output | rows | networkx rows | rows only in the stage | rows only in networkx |",
        "|---|---:|---:|---:|---:|",
    ]
    for t in OUTPUTS:
        nx_rows = r.get("networkx_rows", {}).get(t, "-")
        d = r.get("diff", {}).get(t, {})
        lines.append(
            f"| {t} | {r['rows'][t]:,} | {nx_rows if nx_rows == '-' else f'{nx_rows:,}'} | "
            f"{d.get('only_stage', '-')} | {d.get('only_networkx', '-')} |"
        )
    lines += [
        "",
        f"Truncated by the closure cap: {r['truncated_ancestors']['table_closure']:,} ancestor "
        f"tables, {r['truncated_ancestors']['column_closure']:,} ancestor columns; "
        f"truncated paths: {r['truncated_paths']:,}.",
        "Truncated ancestor columns count (table, column) pairs.",
    ]
    if "networkx_seconds" in r:
        s = r["networkx_seconds"]
        lines += [
            "",
            f"networkx (one Python process): {s['total']} s in all (nodes with components and "
            f"cycles {s['lineage_nodes']}, table closure {s['table_closure']}, paths "
            f"{s['lineage_paths']}, column closure {s['column_closure']}); Python peak RSS "
            f"{r['python_peak_rss_mb']:.0f} MB.",
        ]
    return "\n".join(lines) + "\n"


def _write_report(path: Path, sections: dict[str, str]) -> None:
    header = (
        "# Graph stage benchmark\n\n"
        "`bench/graph_bench.py`: synthetic warehouse graphs (`bench/generate_graph.py`), the "
        "graph stage on GraphFrames 0.11.0 (full refresh, Delta), and a single-process networkx "
        "computation of the same outputs compared row by row (`exceptAll` both ways over two "
        "64-bit hashes of each row; 0 and 0 = every row equal).\n\n"
    )
    old: dict[str, str] = {}
    if path.exists():
        for chunk in path.read_text().split("\n## ")[1:]:
            old[chunk.split(":", 1)[0]] = "## " + chunk.rstrip("\n") + "\n"
    old.update(sections)
    order = sorted(old, key=lambda k: (list(SIZES).index(k.split()[0]), k))
    path.write_text(header + "\n".join(old[s] for s in order))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=["10k", "100k"])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--closure-cap", type=int, default=10000)
    parser.add_argument("--path-cap", type=int, default=1000)
    parser.add_argument("--no-reference", dest="reference", action="store_false")
    parser.add_argument(
        "--compare-only",
        action="store_true",
        help="compare the stored outputs of an earlier run (its figures from result-<size>.json)",
    )
    parser.add_argument("--report", type=Path, default=ROOT / "bench" / "results" / "graph.md")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="run the stage on a standalone cluster of 2 one-core workers on 127.0.0.1"
        " (tests/cluster/standalone.py): the driver's and each executor's memory apart",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument(
        "--cluster-roots",
        type=lambda v: [int(x) for x in v.split(",") if x],
        default=[],
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()
    args.work = args.work.resolve()  # executors run elsewhere than this working directory
    if args.one:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
        print("RESULT " + json.dumps(run_one(args.one, args)), flush=True)
        return 0
    machine = _machine()
    if not args.cluster:
        return _run_sizes(args, machine, [])
    from tests.cluster.standalone import StandaloneCluster

    cluster = StandaloneCluster(Path(tempfile.mkdtemp(prefix="graph-bench-cluster-")), 2)
    cluster.start()
    try:
        args.master = cluster.master_url
        # the workers run on this machine: the executors' Python is this one (with this
        # checkout installed), not whatever python3 is on PATH; pyspark reads it from the
        # environment when it builds the UDFs' commands
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        workers = [pid for name, pid in cluster.pids().items() if name.startswith("worker")]
        return _run_sizes(args, machine, workers)
    finally:
        cluster.stop()


def _run_sizes(args: argparse.Namespace, machine: str, cluster_roots: list[int]) -> int:
    sections = {}
    for size in args.sizes:
        argv = [
            sys.executable,
            __file__,
            "--one",
            size,
            "--master",
            args.master,
            "--work",
            str(args.work),
        ]
        argv += ["--seed", str(args.seed), "--closure-cap", str(args.closure_cap)]
        argv += ["--path-cap", str(args.path_cap)]
        argv += ["--report", str(args.report)]
        if cluster_roots:
            argv += ["--cluster-roots", ",".join(map(str, cluster_roots))]
        if not args.reference:
            argv.append("--no-reference")
        if args.compare_only:
            argv.append("--compare-only")
        # the step log goes to stderr as it happens (a long run shows where it is)
        done = subprocess.run(argv, stdout=subprocess.PIPE, text=True, check=False)
        line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            sys.stderr.write(done.stdout[-3000:])
            return 1
        result = json.loads(line[len("RESULT ") :])
        print(json.dumps(result, indent=1))
        command = "python bench/graph_bench.py " + " ".join(sys.argv[1:])
        sections[_key(result)] = _section(result, command, machine)
        _write_report(args.report, sections)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
