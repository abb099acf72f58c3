"""Entry point: publish the Delta lineage tables as OpenLineage events (or only replay the spool).

    spark-submit jobs/emit_openlineage.py                     # conf/base.yaml + conf/local.yaml
    spark-submit jobs/emit_openlineage.py --config conf/local.yaml --all
    python jobs/emit_openlineage.py --replay                  # no Spark: the spool only

Without --all, only what changed since the last successful emission is emitted
(``openlineage.scope``, default incremental).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.spark.pipeline import emit_job, job_arguments, run_job

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def main(argv: Sequence[str] | None = None) -> int:
    parser = job_arguments("Publish the lineage tables as OpenLineage events.")
    parser.add_argument(
        "--replay", action="store_true", help="only replay the spool; do not read Delta tables"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="re-emit every row (openlineage.scope: all), not only changes since the last emission",
    )
    args = parser.parse_args(argv)
    return run_job(
        "emit_openlineage",
        CONF_DIR,
        args.config,
        lambda settings: emit_job(settings, replay_only=args.replay, emit_all=args.all),
    )


if __name__ == "__main__":
    raise SystemExit(main())
