"""The engine's floor: what a run that only writes its result pays on this machine.

A run of the job reads logs, parses, derives the edges, MERGEs them, analyses the graph and
emits events. This benchmark keeps only the part no implementation on Spark + Delta +
GraphFrames can skip: one application (``spark-submit``, the job's settings and packages, JVM
start included) that

1. creates the warehouse's tables where they do not exist (``LineageTables.ensure_all``, as the
   job does),
2. writes every table's *final* rows (what a finished run of the job left, computed beforehand
   and read from Parquet) with one MERGE per table, two tables at a time,
3. runs GraphFrames ``connectedComponents`` and ``stronglyConnectedComponents`` on the table
   graph,

and nothing else: no log, no parse, no derivation, no closure, no emission. Its wall time is a
lower bound for the scenario's target.

    .venv/bin/python bench/floor.py default      # the embedded default onto an empty warehouse
    .venv/bin/python bench/floor.py inc-10k      # 10k rows onto the 1M warehouse

``default`` takes its final rows from the ``default-warm`` warehouse of a ``small_runs.py
scenarios --label L`` run (``--label``); ``inc-10k`` takes the rows the ``inc-10k`` run changed
(its warehouse against the 1M warehouse it started from: upserts and deletes) and MERGEs them
into a fresh copy of the 1M warehouse.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.small_runs import (  # noqa: E402
    SMALL,
    WAREHOUSE_1M,
    command_line,
    git_commit,
    load_average,
    spark_submit,
    utc_now,
)

DELETE = "_floor_delete"


def _session(warehouse: Path):  # type: ignore[no-untyped-def]
    from lineage_udfs.settings import load_settings
    from lineage_udfs.spark.pipeline import GRAPH_LIBRARIES, start_session

    overlay = warehouse.parent / "floor-overlay.yaml"
    overlay.write_text(json.dumps({"sink": {"base_path": str(warehouse)}}))
    settings = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml", overlay])
    return start_session(settings, GRAPH_LIBRARIES), settings


def prepare(reference: Path, base: Path | None, rows: Path) -> None:
    """Each table's rows to write: the reference's rows not in ``base`` (all of them without a
    base), and the keys of ``base`` the reference no longer holds (to delete)."""
    from pyspark.sql import functions as F

    from lineage_udfs.spark.storage.schemas import TABLES

    spark, _ = _session(rows.parent / "unused")
    shutil.rmtree(rows, ignore_errors=True)
    counts = {}
    for name, spec in TABLES.items():
        if not (reference / name / "_delta_log").exists():
            continue
        ref = spark.read.format("delta").load(str(reference / name))
        upserts = ref
        deletes = None
        if base is not None and (base / name / "_delta_log").exists():
            old = spark.read.format("delta").load(str(base / name))

            def digest(df, columns=tuple(ref.columns)):  # type: ignore[no-untyped-def]
                return df.withColumn("_h", F.sha2(F.to_json(F.struct(*columns)), 256))

            upserts = digest(ref).join(digest(old).select("_h"), "_h", "left_anti").drop("_h")
            if spec.keys:
                keys = list(spec.keys)
                deletes = old.join(ref.select(*keys), keys, "left_anti")
        upserts.withColumn(DELETE, F.lit(False)).unionByName(
            (deletes if deletes is not None else ref.limit(0)).withColumn(DELETE, F.lit(True))
        ).write.parquet(str(rows / name))
        counts[name] = spark.read.parquet(str(rows / name)).count()
        print(f"{name}: {counts[name]} rows", flush=True)
    (rows / "counts.json").write_text(json.dumps(counts))
    spark.stop()


def write(warehouse: Path, rows: Path, mode: str) -> None:
    """The timed application: create, MERGE, components and cycles (``mode`` ``append``: no
    CREATE and no MERGE, each table's rows appended by one write that creates it)."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from lineage_udfs.spark.graph.frames import (
        connected_components,
        cycle_nodes,
        dense_ids,
        table_edges_of,
    )
    from lineage_udfs.spark.graph.options import graph_options
    from lineage_udfs.spark.storage.schemas import TABLES
    from lineage_udfs.spark.storage.tables import LineageTables

    clock = time.perf_counter()
    laps: dict[str, float] = {}

    def lap(step: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        laps[step] = round(now - clock, 2)
        clock = now

    spark, settings = _session(warehouse)
    lap("session")
    tables = LineageTables(spark, settings.sink)
    if mode != "append":
        tables.ensure_all()
    lap("create")

    def merge(name: str) -> None:
        source = spark.read.parquet(str(rows / name))
        keys = list(TABLES[name].keys)
        columns = TABLES[name].columns
        if not keys or mode == "append":
            source.drop(DELETE).select(*columns).write.format("delta").mode("append").save(
                str(warehouse / name)
            )
            return
        on = " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in keys)
        builder = (
            DeltaTable.forPath(spark, str(warehouse / name)).alias("t").merge(source.alias("s"), on)
        )
        if mode == "merge":  # an insert-only MERGE neither updates nor deletes
            builder = builder.whenMatchedDelete(condition=f"s.{DELETE}").whenMatchedUpdate(
                condition=f"NOT s.{DELETE}", set={c: f"s.`{c}`" for c in columns}
            )
        builder.whenNotMatchedInsert(
            condition=f"NOT s.{DELETE}", values={c: f"s.`{c}`" for c in columns}
        ).execute()

    # a table with nothing to write is not written (the job skips it too)
    counts = json.loads((rows / "counts.json").read_text())
    names = [n for n in TABLES if counts.get(n)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(merge, names))
    lap("merge")
    options = graph_options(settings.graph)
    edges = table_edges_of(tables.read("table_lineage")).localCheckpoint()
    ids, _ = dense_ids(edges.select(F.col("src").alias("name")).union(edges.select("dst")))
    components = connected_components(edges, ids, options).count()
    lap("components")
    cycles = cycle_nodes(edges, ids, options).count()
    lap("cycles")
    print(
        "FLOOR "
        + json.dumps(
            {
                "mode": mode,
                "laps": laps,
                "tables": len(names),
                "components": components,
                "cycle_nodes": cycles,
            }
        ),
        flush=True,
    )
    spark.stop()


def run(args: argparse.Namespace) -> None:
    work = SMALL / f"floor-{args.scenario}"
    if args.scenario == "default":
        reference = SMALL / f"runs-{args.label}" / "default" / "lineage"
        base = None
    else:
        reference = SMALL / f"runs-{args.label}" / "1m" / "lineage"
        base = WAREHOUSE_1M / "lineage"
    if not (reference / "table_lineage").exists():
        raise SystemExit(f"{reference}: no finished warehouse (run small_runs.py scenarios)")
    if base is not None and args.mode == "append":
        raise SystemExit("--mode append is for an empty warehouse (the default scenario)")
    rows = work / "rows"
    if not rows.exists() or args.prepare:
        work.mkdir(parents=True, exist_ok=True)
        prepare(reference, base, rows)
    results = []
    for attempt in range(args.repeats):
        warehouse = work / "lineage"
        shutil.rmtree(warehouse, ignore_errors=True)
        if base is not None:
            shutil.copytree(base, warehouse)
        cmd, env = spark_submit(ROOT)
        cmd += [str(Path(__file__)), "write", str(warehouse), str(rows), "--mode", args.mode]
        load = load_average()
        started_at = utc_now()
        started = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = round(time.perf_counter() - started, 1)
        if proc.returncode != 0:
            sys.stderr.write((proc.stdout + proc.stderr)[-4000:])
            raise SystemExit(f"floor {args.scenario}: the application failed")
        line = next(x for x in proc.stdout.splitlines() if x.startswith("FLOOR "))
        result = {
            "wall": wall,
            "load_before": load,
            "started": started_at,
            "ended": utc_now(),
            **json.loads(line[6:]),
        }
        print(f"floor {args.scenario} #{attempt + 1}: {json.dumps(result)}", flush=True)
        results.append(result)
    doc = {"command": args.command_line, "commit": git_commit(ROOT), "runs": results}
    (work / f"result-{args.mode}.json").write_text(json.dumps(doc, indent=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for scenario in ("default", "inc-10k"):
        p = sub.add_parser(scenario)
        p.add_argument("--label", default="now", help="the small_runs.py scenarios label")
        p.add_argument("--repeats", type=int, default=2)
        p.add_argument("--prepare", action="store_true", help="recompute the rows to write")
        p.add_argument(
            "--mode",
            choices=("merge", "insert", "append"),
            default="merge",
            help="merge: CREATE then one MERGE per table (what the job does); append: one"
            " append per table that creates it (no MERGE: the least a write can cost)",
        )
        p.set_defaults(scenario=scenario, func=run)
    p = sub.add_parser("write")  # the timed application (spark-submit runs it)
    p.add_argument("warehouse", type=Path)
    p.add_argument("rows", type=Path)
    p.add_argument("--mode", choices=("merge", "insert", "append"), default="merge")
    args = parser.parse_args(argv)
    args.command_line = command_line("bench/floor.py", sys.argv[1:] if argv is None else argv)
    if args.command == "write":
        write(args.warehouse, args.rows, args.mode)
    else:
        args.func(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
