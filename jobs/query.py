"""Entry point: SQL against the lineage tables by their plain names (``table_closure``,
``queries``…).

    make sql Q="SELECT * FROM table_closure WHERE descendant = 'reports.daily_revenue'"
    python jobs/query.py --config conf/local.yaml "SELECT count(*) FROM table_lineage"

Every lineage table that exists under the configured sink is registered as a temporary view of
the same name, so the README's queries run as written, wherever the tables live.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.spark.pipeline import job_arguments, query_job, run_job

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def main(argv: Sequence[str] | None = None) -> int:
    parser = job_arguments("SQL over the lineage tables by plain name.")
    parser.add_argument("sql", help="the query; lineage tables are views of the same name")
    parser.add_argument("--limit", type=int, default=100, help="rows to show")
    args = parser.parse_args(argv)
    return run_job(
        "query", CONF_DIR, args.config, lambda s: query_job(s, args.sql, limit=args.limit)
    )


if __name__ == "__main__":
    raise SystemExit(main())
