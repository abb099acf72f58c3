"""Entry point: the graph stage alone, over the Delta lineage tables the extract job wrote.

    spark-submit jobs/analyze_graph.py                        # conf/base.yaml + conf/local.yaml
    spark-submit jobs/analyze_graph.py --config conf/databricks.yaml --full-refresh
    spark-submit jobs/analyze_graph.py --path raw.orders reports.daily_revenue

Writes lineage_nodes, lineage_paths, table_closure, column_closure and graph_components;
only the rows a changed edge can affect since the last run are recomputed unless --full-refresh
(docs/graph.md, "Incremental runs"). With ``tags.enabled`` it then carries the column tags
into column_tags (docs/tags.md).
``--path FROM TO`` writes nothing: it prints every shortest path from table FROM to table TO
(GraphFrames BFS over table_lineage).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.settings import JobSettings
from lineage_udfs.spark.pipeline import graph_job, job_arguments, path_job, run_job

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def main(argv: Sequence[str] | None = None) -> int:
    parser = job_arguments("Graph analytics over the lineage Delta tables.")
    parser.add_argument("--full-refresh", action="store_true", help="recompute every component")
    parser.add_argument(
        "--path",
        nargs=2,
        metavar=("FROM", "TO"),
        help="print every shortest path from table FROM to table TO (nothing is written)",
    )
    args = parser.parse_args(argv)

    def job(settings: JobSettings) -> str:
        if args.path:
            return path_job(settings, args.path[0], args.path[1])
        return graph_job(settings, full_refresh=args.full_refresh)

    return run_job("analyze_graph", CONF_DIR, args.config, job)


if __name__ == "__main__":
    raise SystemExit(main())
