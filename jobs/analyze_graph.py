"""Entry point: the graph stage alone, over the Delta lineage tables the extract job wrote.

    spark-submit jobs/analyze_graph.py                        # conf/base.yaml + conf/local.yaml
    spark-submit jobs/analyze_graph.py --config conf/databricks.yaml --full-refresh

Writes lineage_nodes, lineage_paths, table_closure, column_closure and graph_components;
only components whose edges changed since the last run are recomputed unless --full-refresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.spark.pipeline import graph_job, job_arguments, run_job

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def main(argv: Sequence[str] | None = None) -> int:
    parser = job_arguments("Graph analytics over the lineage Delta tables.")
    parser.add_argument("--full-refresh", action="store_true", help="recompute every component")
    args = parser.parse_args(argv)
    return run_job(
        "analyze_graph",
        CONF_DIR,
        args.config,
        lambda settings: graph_job(settings, full_refresh=args.full_refresh),
    )


if __name__ == "__main__":
    raise SystemExit(main())
