"""Entry point: SQL against the lineage tables by their plain names (``table_closure``,
``queries``…).

    make sql Q="SELECT * FROM table_closure WHERE descendant = 'reports.daily_revenue'"
    make sql ARGS="--config conf/my.yaml" Q="SELECT ...
      FROM ..."                      # Q may span lines; several statements separated by ;
    python jobs/query.py --config conf/local.yaml "SELECT count(*) FROM table_lineage"
    python jobs/query.py --file queries.sql

``make sql`` hands Q over in the environment (``--sql-env Q``): a multi-line value expanded into
a recipe line would be split by make into several shell commands.

Every lineage table that exists under the configured sink is registered as a temporary view of
the same name, so the README's queries run as written, wherever the tables live.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.spark.pipeline import job_arguments, query_job, run_job

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"


def statements_of(sql: str) -> list[str]:
    """The statements of ``sql`` (split on ``;``), without comment-only ones.

    Examples:
        >>> statements_of("-- parents\nSELECT 1;\n\n-- children\nSELECT 'a;b' AS x;\n-- end")
        ['-- parents\nSELECT 1', "-- children\nSELECT 'a;b' AS x"]
    """
    import sqlparse

    out = []
    for statement in sqlparse.split(sql):
        if sqlparse.format(statement, strip_comments=True).strip():
            out.append(statement.rstrip().rstrip(";").rstrip())
    return out


def query_text(args: argparse.Namespace) -> str:
    """The SQL from the argument, ``--file`` or ``--sql-env`` (exactly one).

    Raises:
        ConfigError: none or several given, or the source is empty / unreadable.
    """
    given = [x for x in (args.sql, args.file, args.sql_env) if x]
    if len(given) != 1:
        raise ConfigError("give the SQL once: as the argument, --file PATH or --sql-env NAME")
    if args.file:
        try:
            text = args.file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {args.file}: {exc.strerror}") from None
    elif args.sql_env:
        text = os.environ.get(args.sql_env, "")
        if not text.strip():
            raise ConfigError(f'no SQL in ${args.sql_env}: make sql Q="SELECT ..."')
    else:
        text = args.sql
    if not statements_of(text):
        raise ConfigError("the SQL holds no statement")
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = job_arguments("SQL over the lineage tables by plain name.")
    parser.add_argument(
        "sql", nargs="?", help="the query (or queries, ; separated); lineage tables are views"
    )
    parser.add_argument("--file", type=Path, help="read the query from this file")
    parser.add_argument("--sql-env", metavar="NAME", help="read the query from this env variable")
    parser.add_argument("--limit", type=int, default=100, help="rows to show")
    args = parser.parse_args(argv)
    try:
        statements = statements_of(query_text(args))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return run_job(
        "query", CONF_DIR, args.config, lambda s: query_job(s, statements, limit=args.limit)
    )


if __name__ == "__main__":
    sys.exit(main())
