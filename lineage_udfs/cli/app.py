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

from lineage_udfs.cli import queries
from lineage_udfs.cli.queries import Answer
from lineage_udfs.cli.store import CliError, LineageStore, open_store
from lineage_udfs.core.errors import one_line

app = typer.Typer(
    name="lineage",
    help="Table and column lineage from the lineage Delta tables (no Spark needed).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--config",
        "-c",
        help="overlay YAML on conf/base.yaml (repeatable; default conf/local.yaml)",
    ),
]
WarehouseOpt = Annotated[
    str | None, typer.Option("--warehouse", "-w", help="the sink's base path (overrides config)")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print the answer as JSON")]
HtmlOpt = Annotated[
    Path | None, typer.Option("--html", help="write the answer's graph as one HTML page")
]
SvgOpt = Annotated[
    Path | None, typer.Option("--svg", help="write the answer's graph as SVG (Graphviz dot)")
]
DepthOpt = Annotated[
    int | None, typer.Option("--depth", "-d", help="at most this many hops (default: all)")
]


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
) -> None:
    """Open the store, compute, print and draw; every failure is one line on stderr."""
    err = _console()
    try:
        with err.status("opening the lineage tables ...", spinner="dots") as status:

            def on_read(table: str) -> None:
                status.update(f"reading {table} ...")

            store = open_store(config, warehouse, on_read=on_read)
            answer = compute(store)
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
    if (html or svg) and answer.graph is None:
        err.print(f"[yellow]note:[/yellow] {answer.title} has no graph to draw")
    _print(answer, as_json)
    for path in (html, svg):
        if path is not None and answer.graph is not None:
            err.print(f"wrote {path}")
    if not answer.found:
        raise typer.Exit(1)


def _print(answer: Answer, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(answer.to_dict(), default=str, indent=2) + "\n")
        return
    out = Console(highlight=False, soft_wrap=False)
    if answer.title.startswith("statement "):
        _print_statement(out, answer.rows[0])
    elif answer.rows:
        table = Table(title=answer.title, title_justify="left", show_lines=False)
        for column in answer.columns:
            table.add_column(column, overflow="fold")
        for row in answer.rows:
            table.add_row(*(_cell(row.get(c)) for c in answer.columns))
        out.print(table)
    if answer.message:
        out.print(answer.message)


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
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """What feeds NAME: its upstream tables (or columns, for TABLE.COLUMN)."""
    _answer(
        lambda s: queries.lineage_of(s, name, direction="upstream", depth=depth),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg,
    )  # fmt: skip


@app.command()
def downstream(
    name: Annotated[str, typer.Argument(help="TABLE or TABLE.COLUMN")],
    depth: DepthOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """What NAME feeds: the tables (or columns) a change to it can break."""
    _answer(
        lambda s: queries.lineage_of(s, name, direction="downstream", depth=depth),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg,
    )  # fmt: skip


@app.command()
def path(
    source: Annotated[str, typer.Argument(help="upstream TABLE")],
    target: Annotated[str, typer.Argument(help="downstream TABLE")],
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """The lineage paths from SOURCE to TARGET (exit code 1 when there is none)."""
    _answer(
        lambda s: queries.path_between(s, source, target),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg,
    )  # fmt: skip


@app.command()
def search(
    pattern: Annotated[str, typer.Argument(help="substring, or a glob with * ? [")],
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """Tables and columns whose name matches PATTERN (exit code 1 when none does)."""
    _answer(
        lambda s: queries.search(s, pattern),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg,
    )  # fmt: skip


@app.command()
def statement(
    fingerprint: Annotated[str, typer.Argument(help="fingerprint or a unique prefix of it")],
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """One parsed statement: masked SQL, parser, status, error, edges."""
    _answer(
        lambda s: queries.statement(s, fingerprint),
        config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg,
    )  # fmt: skip


@app.command()
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", help="newest N runs")] = 20,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Extraction runs, newest first: counts, statuses."""
    _answer(lambda s: queries.runs(s, limit), config=config, warehouse=warehouse, as_json=as_json)


@app.command()
def quarantine(
    stage: Annotated[
        str | None, typer.Option("--stage", help="load or parse (default: both)")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="newest N rows")] = 50,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Rows the job could not load or parse, with the reason."""
    if stage not in (None, "load", "parse"):
        _console().print(f"[red]error:[/red] --stage must be load or parse, not {stage!r}")
        raise typer.Exit(2)
    _answer(
        lambda s: queries.quarantine(s, stage, limit),
        config=config, warehouse=warehouse, as_json=as_json,
    )  # fmt: skip


def _register_commands() -> None:
    from lineage_udfs.cli.activity_commands import register as register_activity
    from lineage_udfs.cli.governance import register as register_governance

    register_activity(app)  # freshness, owner, usage, alerts
    register_governance(app)  # impact, tags, pii


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
