"""Entry point: maintenance of the lineage Delta tables (safe beside the other jobs).

    spark-submit jobs/maintain.py                          # conf/base.yaml + conf/local.yaml
    spark-submit jobs/maintain.py --config conf/databricks.yaml --retain-hours 1440
    spark-submit jobs/maintain.py --table table_closure --no-vacuum

Z-orders the closure, path, edge and node tables on the columns the ``lineage`` questions
filter by, compacts the others, then VACUUMs every table keeping ``--retain-hours`` (default 720:
30 days of time travel for ``lineage ... --as-of`` and ``lineage diff``). Each step is an
OPTIMIZE commit without data change or a VACUUM: answers are the same before and after.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.settings import JobSettings
from lineage_udfs.spark.pipeline import job_arguments, maintain_job, run_job
from lineage_udfs.spark.storage.maintain import RETAIN_HOURS

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def main(argv: Sequence[str] | None = None) -> int:
    parser = job_arguments("Maintenance of the lineage Delta tables.")
    parser.add_argument(
        "--table", action="append", default=None, help="only this table (repeatable)"
    )
    parser.add_argument("--no-zorder", dest="zorder", action="store_false", help="compact only")
    parser.add_argument("--no-vacuum", dest="vacuum", action="store_false", help="keep old files")
    parser.add_argument(
        "--retain-hours",
        type=int,
        default=RETAIN_HOURS,
        help=f"hours of removed files VACUUM keeps (default {RETAIN_HOURS}; at least 168)",
    )
    args = parser.parse_args(argv)

    def job(settings: JobSettings) -> str:
        return maintain_job(
            settings,
            only=args.table,
            zorder=args.zorder,
            vacuum=args.vacuum,
            retain_hours=args.retain_hours,
        )

    return run_job("maintain", CONF_DIR, args.config, job)


if __name__ == "__main__":
    raise SystemExit(main())
