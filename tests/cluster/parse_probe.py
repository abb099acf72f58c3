"""A PySpark application the cluster tests submit: the parse UDF's body, run in the executors,
reporting from inside each task where it ran and where its Python comes from.

    spark-submit --master spark://127.0.0.1:PORT tests/cluster/parse_probe.py LOG.jsonl OUT.json

Each statement of ``LOG.jsonl`` (a Spark query log: ``query_text`` per line) goes through
``parse_batches(options, ..., parse_arrow_batch)``, what the job's iterator Arrow UDF
(``lineage_udfs.spark.parse.udfs.make_parse_arrow_udf``) runs per Python worker, inside
``mapInArrow``. With each result the task records its process id, its parent's, its working
directory (an executor's is ``<worker work dir>/<app id>/<executor id>``), its partition, its
interpreter (``sys.executable``, ``sys.prefix``) and the files ``lineage_udfs``, ``sqlglot``
and ``pyspark`` were imported from (a packed environment shipped with ``--archives`` shows
there). ``OUT.json`` holds those rows and the same facts of the driver, with its master and
application id.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import SparkSession

PARTITIONS = 8
"""More tasks than the cluster's two cores: each executor gets some."""

OUT_SCHEMA = (
    "row long, status string, statement_type string, targets array<string>, pid long, "
    "ppid long, cwd string, partition int, executable string, prefix string, "
    "lineage_udfs string, sqlglot string, pyspark string"
)
ORIGINS = ("executable", "prefix", "lineage_udfs", "sqlglot", "pyspark")


def where_am_i() -> dict[str, str]:
    """This process's interpreter and the files of the modules the job imports."""
    import pyspark
    import sqlglot

    import lineage_udfs

    return {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "lineage_udfs": str(lineage_udfs.__file__),
        "sqlglot": str(sqlglot.__file__),
        "pyspark": str(pyspark.__file__),
    }


def _parse_where(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from lineage_udfs.core.options import ParserOptions
    from lineage_udfs.spark.parse.udf_worker import parse_batches
    from lineage_udfs.spark.parse.udfs import parse_arrow_batch

    pending: list[pa.RecordBatch] = []

    def columns() -> Iterator[tuple[pa.Array, ...]]:
        for batch in batches:
            pending.append(batch)
            nulls = pa.nulls(batch.num_rows, pa.string())
            yield batch.column("sql"), batch.column("dialect"), nulls, nulls

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else -1
    origins = where_am_i()
    for parsed in parse_batches(ParserOptions(), columns(), parse_arrow_batch):
        batch = pending.pop(0)
        n = batch.num_rows
        yield pa.RecordBatch.from_arrays(
            [
                batch.column("row"),
                parsed.field("status"),
                parsed.field("statement_type"),
                parsed.field("targets"),
                pa.array([os.getpid()] * n, pa.int64()),
                pa.array([os.getppid()] * n, pa.int64()),
                pa.array([os.getcwd()] * n, pa.string()),
                pa.array([partition] * n, pa.int32()),
                *(pa.array([origins[k]] * n, pa.string()) for k in ORIGINS),
            ],
            names=[
                "row",
                "status",
                "statement_type",
                "targets",
                "pid",
                "ppid",
                "cwd",
                "partition",
                *ORIGINS,
            ],
        )


def statements_of(log: Path) -> list[str]:
    """The ``query_text`` of every line of ``log`` that is a JSON object with one (the sample
    holds broken lines on purpose: the job quarantines them, the probe skips them)."""
    texts = []
    for line in log.read_text("utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("query_text"), str):
            texts.append(record["query_text"])
    return texts


def main(argv: list[str]) -> int:
    log, out = Path(argv[0]), Path(argv[1])
    texts = statements_of(log)
    spark = SparkSession.builder.appName("lineage-cluster-parse-probe").getOrCreate()
    try:
        statements = spark.createDataFrame(
            [(i, text, "spark") for i, text in enumerate(texts)],
            "row long, sql string, dialect string",
        ).repartition(PARTITIONS)
        rows = [r.asDict() for r in statements.mapInArrow(_parse_where, OUT_SCHEMA).collect()]
        report = {
            "driver": {
                **where_am_i(),
                "pid": os.getpid(),
                "cwd": os.getcwd(),
                "app_id": spark.sparkContext.applicationId,
                "master": spark.sparkContext.master,
            },
            "statements": len(texts),
            "rows": rows,
        }
    finally:
        spark.stop()
    out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
