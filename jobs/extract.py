"""Entry point: query logs → lineage Delta tables (then the graph stage and the OpenLineage
emission when the settings enable them).

    spark-submit jobs/extract.py       # conf/base.yaml + conf/local.yaml
    spark-submit jobs/extract.py --config conf/databricks.yaml --config my.yaml
    python jobs/extract.py ...         # the same; pyspark starts the JVM itself

``--config`` files are overlays on conf/base.yaml, applied in order. With spark-submit, export
SPARK_CONF_DIR=conf (the Makefile does) so the Delta package is resolved before the JVM starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.spark.pipeline import extract_job, job_arguments, run_job

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def main(argv: Sequence[str] | None = None) -> int:
    args = job_arguments("Extract SQL lineage from query logs into Delta.").parse_args(argv)
    return run_job("extract", CONF_DIR, args.config, extract_job)


if __name__ == "__main__":
    raise SystemExit(main())
