"""``lineage``: ask the lineage tables what feeds a table, what a change breaks, and why.

    lineage upstream reports.daily_revenue --html upstream.html
    lineage downstream raw.orders.amount --depth 2
    lineage path raw.orders reports.daily_revenue
    lineage search 'revenue' --json
    lineage statement 744846f0
    lineage runs
    lineage quarantine --stage parse
    lineage freshness reports.daily_revenue   (and owner, usage, alerts: cli.activity_commands)
    lineage impact --drop-column raw.orders.amount --markdown impact.md
    lineage tags raw.customers.email
    lineage pii
    lineage upstream reports.daily_revenue --as-of 2026-11-01
    lineage diff reports.daily_revenue --since 2026-11-01
    lineage sql "SELECT ancestor FROM table_closure WHERE descendant = 'reports.daily_revenue'"
    lineage serve      # the explorer page on http://127.0.0.1:8765/ (cli.explorer)

Tables are read in-process with delta-rs from where the job wrote them: ``conf/base.yaml`` and
the overlays (``--config``, default ``conf/local.yaml``) of the working directory, or
``--warehouse`` (the sink's base path).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from lineage_udfs.cli import queries, records
from lineage_udfs.cli.model import Answer, Page
from lineage_udfs.cli.options import (
    AsOfOpt,
    ConfigOpt,
    DepthOpt,
    HtmlOpt,
    JsonOpt,
    LimitOpt,
    OffsetOpt,
    SvgOpt,
    WarehouseOpt,
)
from lineage_udfs.cli.store import CliError, LineageStore, open_store
from lineage_udfs.core.errors import one_line

app = typer.Typer(
    name="lineage",
    help="Table and column lineage from the lineage Delta tables (no Spark needed).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _console() -> Console:
    return Console(stderr=True, highlight=False)


def _answer(
    compute: Callable[[LineageStore], Answer],
    *,
    config: list[Path] | None,
    warehouse: str | None,
    as_json: bool,
    html: Path | None = None,
    svg: Path | None = None,
    as_of: str | None = None,
    quiet: bool = False,
) -> None:
    """Open the store, compute, print and draw; every failure is one line on stderr."""
    err = _console()
    try:
        with err.status("opening the lineage tables ...", spinner="dots") as status:

            def on_read(table: str) -> None:
                status.update(f"reading {table} ...")

            store = open_store(config, warehouse, on_read=on_read, as_of=as_of)
            answer = compute(store)
            answer.as_of = as_of
            answer.followed = [f.as_dict() for f in store.followed]
            if answer.graph is not None:
                for fmt, path in (("html", html), ("svg", svg)):
                    if path is not None:
                        status.update(f"drawing {path} ...")
                        from lineage_udfs.cli.render import write

                        write(answer.graph, answer.title, path, fmt)
    except CliError as exc:
        err.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    except Exception as exc:  # delta-rs / arrow errors: one line, not a trace
        err.print(f"[red]error:[/red] {one_line(exc, with_type=True)}", soft_wrap=True)
        raise typer.Exit(2) from None
    for followed in store.followed:  # one line each, also with --json (stdout stays JSON)
        err.print(f"note: {followed.note}", soft_wrap=True, markup=False)
    if (html or svg) and answer.graph is None:
        err.print(f"[yellow]note:[/yellow] {answer.title} has no graph to draw")
    if not quiet:
        _print(answer, as_json)
    for path in (html, svg):
        if path is not None and answer.graph is not None:
            err.print(f"wrote {path}")
    if not answer.found:
        raise typer.Exit(1)


def _print(answer: Answer, as_json: bool, heading: bool = False) -> None:
    if as_json:
        sys.stdout.write(json.dumps(answer.to_dict(), default=str, indent=2) + "\n")
        return
    out = Console(highlight=False, soft_wrap=False)
    if answer.title.startswith("statement "):
        _print_statement(out, answer.rows[0])
    elif answer.rows:
        if heading:  # a long title (a SQL statement) above the table, not wrapped to its width
            out.print(answer.title, style="bold")
        title = None if heading else answer.title
        table = Table(title=title, title_justify="left", show_lines=False)
        for column in answer.columns:
            table.add_column(column, overflow="fold")
        for row in answer.rows:
            table.add_row(*(_cell(row.get(c)) for c in answer.columns))
        out.print(table)
    for note in answer.notes():
        out.print(note)
    if answer.as_of:
        out.print(f"as of {answer.as_of}")


def _print_statement(out: Console, row: dict[str, Any]) -> None:
    from rich.syntax import Syntax

    table = Table(show_header=False, box=None, title=f"statement {row['fingerprint']}")
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in row.items():
        if key not in ("masked_sql", "fingerprint"):
            table.add_row(key, _cell(value))
    out.print(table)
    out.print(Syntax(row["masked_sql"] or "", "sql", word_wrap=True, theme="ansi_light"))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


@app.command()
def upstream(
    name: Annotated[str, typer.Argument(help="TABLE or TABLE.COLUMN")],
    depth: DepthOpt = None,
    limit: LimitOpt = 200,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """What feeds NAME: its upstream tables (or columns, for TABLE.COLUMN)."""
    _answer(
        lambda s: queries.lineage_of(
            s, name, direction="upstream", depth=depth, page=Page(limit, offset)
        ),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
    )  # fmt: skip


@app.command()
def downstream(
    name: Annotated[str, typer.Argument(help="TABLE or TABLE.COLUMN")],
    depth: DepthOpt = None,
    limit: LimitOpt = 200,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """What NAME feeds: the tables (or columns) a change to it can break."""
    _answer(
        lambda s: queries.lineage_of(
            s, name, direction="downstream", depth=depth, page=Page(limit, offset)
        ),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
    )  # fmt: skip


@app.command()
def path(
    source: Annotated[str, typer.Argument(help="upstream TABLE")],
    target: Annotated[str, typer.Argument(help="downstream TABLE")],
    limit: LimitOpt = 50,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """The lineage paths from SOURCE to TARGET (exit code 1 when there is none)."""
    _answer(
        lambda s: queries.path_between(s, source, target, page=Page(limit, offset)),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
    )  # fmt: skip


@app.command()
def search(
    pattern: Annotated[str, typer.Argument(help="substring, or a glob with * ? [")],
    limit: LimitOpt = 200,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """Tables and columns whose name matches PATTERN (exit code 1 when none does)."""
    _answer(
        lambda s: queries.search(s, pattern, page=Page(limit, offset)),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
    )  # fmt: skip


@app.command()
def statement(
    fingerprint: Annotated[str, typer.Argument(help="fingerprint or a unique prefix of it")],
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """One parsed statement: masked SQL, parser, status, error, edges."""
    _answer(
        lambda s: records.statement(s, fingerprint),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
    )  # fmt: skip


@app.command()
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="newest N runs")] = 20,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Extraction runs, newest first: counts, statuses."""
    _answer(
        lambda s: records.runs(s, limit, offset),
        config=config, warehouse=warehouse, as_json=as_json, as_of=as_of,
    )  # fmt: skip


@app.command()
def quarantine(
    stage: Annotated[
        str | None, typer.Option("--stage", help="load or parse (default: both)")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="newest N rows")] = 50,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rows the job could not load or parse, with the reason."""
    if stage not in (None, "load", "parse"):
        _console().print(f"[red]error:[/red] --stage must be load or parse, not {stage!r}")
        raise typer.Exit(2)
    _answer(
        lambda s: records.quarantine(s, stage, limit, offset),
        config=config, warehouse=warehouse, as_json=as_json, as_of=as_of,
    )  # fmt: skip


@app.command()
def diff(
    name: Annotated[str, typer.Argument(help="TABLE")],
    since: Annotated[
        str, typer.Option("--since", help="a date/timestamp (UTC) or a table_lineage version")
    ],
    limit: LimitOpt = 200,
    offset: OffsetOpt = 0,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """The edges into or out of NAME that appeared or went since a date (Delta history)."""
    from lineage_udfs.cli import history

    _answer(
        lambda s: history.diff(s, name, since, page=Page(limit, offset)),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
    )  # fmt: skip


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="SQL over the tables by plain name; ';' separates")],
    limit: LimitOpt = 100,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """DataFusion SQL over the lineage tables, in-process (no JVM; make sql is the Spark path)."""
    from lineage_udfs.cli import sql as sql_path

    answers: list[Answer] = []

    def compute(store: LineageStore) -> Answer:
        answers.extend(sql_path.run(store, query, limit))
        return Answer("sql", [], [], found=True)

    _answer(compute, config=config, warehouse=warehouse, as_json=False, as_of=as_of, quiet=True)
    if as_json:
        body = {"statements": [a.to_dict() for a in answers]}
        sys.stdout.write(json.dumps(body, default=str, indent=2) + "\n")
    else:
        for answer in answers:
            _print(answer, False, heading=True)


@app.command()
def aliases(
    name: Annotated[str, typer.Argument(help="a dataset name: table name, path or URI")],
    min_confidence: Annotated[
        float, typer.Option("--min-confidence", help="as graph.alias_min_confidence")
    ] = 0.9,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What a dataset name is linked to (dataset_aliases), why, and the node it merges into."""
    from lineage_udfs.cli.aliases import aliases as answer

    _answer(
        lambda s: answer(s, name, min_confidence),
        config=config, warehouse=warehouse, as_json=as_json, as_of=as_of,
    )  # fmt: skip


def _register_commands() -> None:
    from lineage_udfs.cli.activity_commands import register as register_activity
    from lineage_udfs.cli.explorer.command import register as register_explorer
    from lineage_udfs.cli.governance import register as register_governance

    register_activity(app)  # freshness, owner, usage, alerts
    register_governance(app)  # impact, tags, pii
    register_explorer(app)  # serve


_register_commands()


def main() -> None:
    """Console-script entry point.

    Ends the process with ``os._exit`` once the output is flushed: the native thread pools of
    delta-rs and Arrow can still be winding down when the interpreter finalizes, and a race
    there aborted the process now and then ("terminate called without an active exception",
    SIGABRT) after the answer was printed.
    """
    code: int = 0
    try:
        app()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
