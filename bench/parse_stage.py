"""The parse UDF in isolation: a log's distinct statements → the parser UDF → a sink.

``run_bench.py`` times the job's whole parse stage (incremental anti-join, hash repartition, the
UDF, a local checkpoint of the results on disk). This script keeps only the repartition and the
UDF, over the same distinct statements, for each ``--partitions`` value and each ``--sink``
(Spark's noop sink, or the results stored on disk as the job stores them), and the
single-process parser loop over the same statements, so that the share of the stage that is
Spark's own work (JVM-side Arrow and checkpoint writing on the same cores as the Python workers)
can be told from the UDF's.

Usage (from the repository root, the job's Python on the workers)::

    PYSPARK_PYTHON=$PWD/.venv/bin/python PYTHONPATH=. .venv/bin/python bench/parse_stage.py \\
        --log bench/data/log_1000000.parquet --partitions 6 16 --loop-sample 2000 \\
        --sink noop checkpoint --udf arrow pandas --repeats 2

``--json FILE`` keeps the run's figures (every round's seconds, the loop's rate, the command,
date and machine) for ``bench/stage_report.py``, which writes bench/results/parse_stage.md and
udf_results.md from them.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_bench import distinct_statements, run_loop
from stage_report import run_facts

from lineage_udfs.core.fingerprint import normalized_masked_sql
from lineage_udfs.core.options import ParserOptions


def _loop_rate(statements: list[dict], sample: int) -> float:
    """Statements/s of run_bench's loop (a) (a child process parsing as the UDF's worker does)
    over a seeded sample."""
    rows = random.Random(7).sample(statements, min(sample, len(statements)))
    out = run_loop("parser", rows, argparse.Namespace(parser_settings={}, sqllineage_timeout=60.0))
    return len(out["times"]) / sum(out["times"])


def _run_sink(parsed: DataFrame, sink: str) -> float | None:
    """Run the stage into ``sink``; for "sum", the parser's own seconds (the sum of every
    result's ``parse_ms``), else None."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    if sink == "noop":
        parsed.write.format("noop").mode("overwrite").save()
        return None
    if sink == "sum":
        ms = parsed.agg(F.sum(F.col("parse_result.parse_ms"))).first()
        return float(ms[0]) / 1000 if ms and ms[0] is not None else 0.0
    stored = (  # "checkpoint": as the job's parse stage stores them (RunContext.keep)
        parsed.localCheckpoint(eager=True, storageLevel=StorageLevel.DISK_ONLY)
        if sink == "checkpoint"
        else parsed.persist(StorageLevel.DISK_ONLY)
    )
    stored.count()
    stored.unpersist()
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, nargs="+", default=[6])
    ap.add_argument("--loop-sample", type=int, default=2000)
    ap.add_argument(
        "--sink",
        nargs="+",
        choices=("noop", "checkpoint", "persist", "sum"),
        default=["noop"],
        help="where the parse results go: Spark's noop sink, or stored on disk as the job stores"
        " them (a local checkpoint, DISK_ONLY) or a DISK_ONLY persist, or summed (the parser's own"
        " seconds per core over the stage's: the share of the workers' time spent parsing);"
        " each sink is timed with"
        " each --partitions value",
    )
    ap.add_argument(
        "--udf",
        nargs="+",
        choices=("arrow", "pandas"),
        default=["arrow"],
        help="the parse UDF's form: the iterator Arrow UDF the job uses on PySpark 4.1+, or the"
        " iterator pandas UDF it falls back to on 4.0; several are timed interleaved",
    )
    ap.add_argument("--repeats", type=int, default=1, help="rounds over every combination")
    ap.add_argument(
        "--json",
        type=Path,
        help="write the run's figures here (bench/stage_report.py records them into"
        " bench/results/parse_stage.json or udf_results.json)",
    )
    ns = ap.parse_args(argv)
    facts = run_facts(
        "bench/parse_stage.py",
        sys.argv[1:] if argv is None else argv,
        "SPARK_CONF_DIR=$PWD/conf PYSPARK_PYTHON=$PWD/.venv/bin/python PYTHONPATH=."
        " .venv/bin/python",
    )

    from pyspark.sql import SparkSession

    from lineage_udfs.spark.extract.transforms import parse_statements
    from lineage_udfs.spark.parse.pandas_udf import make_parse_pandas_udf
    from lineage_udfs.spark.parse.udfs import make_parse_arrow_udf

    factories = {"arrow": make_parse_arrow_udf, "pandas": make_parse_pandas_udf}

    statements = distinct_statements(Path(ns.log))
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "statements.parquet")
        pq.write_table(
            pa.table(
                {
                    "fingerprint": [str(i) for i in range(len(statements))],
                    "parse_text": [s["sql"] for s in statements],
                    "masked_sql": [
                        normalized_masked_sql(s["sql"], s["dialect"]) for s in statements
                    ],
                    "dialect": [s["dialect"] for s in statements],
                    "default_database": [s["database"] for s in statements],
                    "default_schema": [s["schema"] for s in statements],
                }
            ),
            path,
        )
        cores = int(ns.master[len("local[") : -1]) if ns.master.startswith("local[") else 1
        loop = _loop_rate(statements, ns.loop_sample)
        print(
            f"{Path(ns.log).name}: {len(statements):,} distinct statements; parser loop, one "
            f"process, {min(ns.loop_sample, len(statements)):,} of them: {loop:.1f}/s"
        )
        spark = (
            SparkSession.builder.master(ns.master)
            .config("spark.driver.memory", "1g")
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "500")
            .getOrCreate()
        )
        frame = spark.read.parquet(path).cache()
        frame.count()
        combinations = [(s, n, u) for s in ns.sink for n in ns.partitions for u in ns.udf]
        rounds = []
        for number in range(1, ns.repeats + 1):
            for sink, n, udf in combinations:
                started = time.perf_counter()
                parsed = parse_statements(frame, ParserOptions(), n, udf_factory=factories[udf])
                parse_seconds = _run_sink(parsed, sink)
                took = time.perf_counter() - started
                rate = len(statements) / took
                share = (
                    f"; parsing {parse_seconds:.1f} s of the workers' time, per core"
                    f" {parse_seconds / cores / took:.2f} of the stage"
                    if parse_seconds is not None
                    else ""
                )
                rounds.append(
                    {
                        "round": number,
                        "sink": sink,
                        "partitions": n,
                        "udf": udf,
                        "seconds": took,
                        "parse_seconds": parse_seconds,
                    }
                )
                print(
                    f"{udf} UDF on {ns.master}, {n} partitions, {sink}: {took:.1f} s,"
                    f" {rate:.1f} statements/s = {rate / (cores * loop):.2f} x {cores} x the loop"
                    f"{share}",
                    flush=True,
                )
        spark.stop()
    if ns.json:
        run = {
            **facts,
            "log": Path(ns.log).name,
            "statements": len(statements),
            "loop_sample": ns.loop_sample,
            "loop_rate": loop,
            "cores": cores,
            "partitions": ns.partitions,
            "rounds": rounds,
        }
        ns.json.write_text(json.dumps(run, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
