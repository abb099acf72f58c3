"""The parse UDF's return path alone: parse results → the Arrow struct Spark receives.

Parses a seeded sample of a log's distinct statements once, then times, interleaved and in
process (CPU) time, the two ways the parse UDF hands its results to Spark:

- pandas: what the iterator pandas UDF does (``to_record`` per result, a DataFrame, then
  PySpark's own conversion of the frame to an Arrow struct, the worker's
  ``ArrowStreamPandasUDFSerializer._create_struct_array``);
- arrow: what the iterator Arrow UDF does (``results_to_arrow``, column by column).

Both must give equal arrays (checked on every batch). Prints µs per statement for each and the
parse itself for scale.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python bench/udf_results.py --log bench/data/log_1000000.parquet

``--json FILE`` keeps the run's figures for ``bench/stage_report.py``, which writes
bench/results/udf_results.md from them.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import pandas as pd
from pyspark.sql.pandas.serializers import ArrowStreamPandasUDFSerializer

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_bench import distinct_statements
from stage_report import run_facts

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.records import to_record
from lineage_udfs.spark.parse.arrow_results import results_to_arrow
from lineage_udfs.spark.parse.udf_worker import get_parser, mask_error
from lineage_udfs.spark.parse.udfs import UDF_ARROW_TYPE
from lineage_udfs.spark.storage.schemas import UDF_RESULT_SCHEMA


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--sample", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=500, help="rows per Arrow batch (the job's)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--json",
        type=Path,
        help="write the run's figures here (bench/stage_report.py records them into"
        " bench/results/udf_results.json)",
    )
    ns = ap.parse_args(argv)
    facts = run_facts(
        "bench/udf_results.py",
        sys.argv[1:] if argv is None else argv,
        "PYTHONPATH=. .venv/bin/python",
    )

    statements = distinct_statements(Path(ns.log))
    rows = random.Random(7).sample(statements, min(ns.sample, len(statements)))
    parser = get_parser(ParserOptions())
    started = time.process_time()
    results = [
        parser.parse(
            r["sql"],
            dialect=r["dialect"],
            default_catalog=r["database"],
            default_schema=r["schema"],
            mask=False,
        )
        for r in rows
    ]
    parse_us = (time.process_time() - started) / len(results) * 1e6
    batches = [results[i : i + ns.batch] for i in range(0, len(results), ns.batch)]
    serializer = ArrowStreamPandasUDFSerializer(
        "UTC", True, True, df_for_struct=True, arrow_cast=True
    )
    names = UDF_RESULT_SCHEMA.fieldNames()

    def pandas_path(batch: list) -> object:
        frame = pd.DataFrame.from_records([to_record(r, mask_error) for r in batch], columns=names)
        return serializer._create_struct_array(frame, UDF_ARROW_TYPE, spark_type=UDF_RESULT_SCHEMA)

    def arrow_path(batch: list) -> object:
        return results_to_arrow(batch, UDF_ARROW_TYPE, mask_error)

    for batch in batches:
        if not pandas_path(batch).equals(arrow_path(batch)):  # type: ignore[attr-defined]
            raise SystemExit("the two paths disagree")
    times: dict[str, list[float]] = {"pandas": [], "arrow": []}
    for _ in range(ns.repeats):
        for name, path in (("pandas", pandas_path), ("arrow", arrow_path)):
            started = time.process_time()
            for batch in batches:
                path(batch)
            times[name].append((time.process_time() - started) / len(results) * 1e6)
    print(
        f"{Path(ns.log).name}: {len(results):,} of {len(statements):,} distinct statements,"
        f" batches of {ns.batch}; parse {parse_us:,.0f} µs per statement (CPU)"
    )
    for name, values in times.items():
        print(
            f"{name:>6}: median {statistics.median(values):,.1f} µs per statement"
            f" (runs: {', '.join(f'{v:.1f}' for v in values)})"
        )
    if ns.json:
        run = {
            **facts,
            "log": Path(ns.log).name,
            "statements": len(statements),
            "sample": len(results),
            "batch": ns.batch,
            "parse_us": parse_us,
            "times": times,
        }
        ns.json.write_text(json.dumps(run, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
