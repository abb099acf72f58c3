"""The ``impact``, ``tags`` and ``pii`` commands of ``lineage`` (registered by ``cli.app``).

lineage impact --drop-column raw.orders.amount --markdown impact.md
lineage impact change.sql --days 7 --json
lineage tags raw.customers.email --html email.html
lineage pii --json
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from lineage_udfs.cli.options import AsOfOpt, ConfigOpt, HtmlOpt, JsonOpt, SvgOpt, WarehouseOpt
from lineage_udfs.cli.queries import Answer
from lineage_udfs.cli.store import CliError, LineageStore

DaysOpt = Annotated[
    int,
    typer.Option("--days", help="consumers: the log's last N days (before its newest query)"),
]


def impact_command(
    sql_file: Annotated[
        Path | None,
        typer.Argument(help="SQL file: ALTER TABLE, or a new CREATE VIEW / CTAS definition"),
    ] = None,
    drop_column: Annotated[
        list[str] | None, typer.Option("--drop-column", help="TABLE.COLUMN (repeatable)")
    ] = None,
    rename_column: Annotated[
        tuple[str, str] | None,
        typer.Option("--rename-column", help="TABLE.COLUMN NEW_NAME", show_default=False),
    ] = None,
    change_type: Annotated[
        tuple[str, str] | None,
        typer.Option("--change-type", help="TABLE.COLUMN NEW_TYPE", show_default=False),
    ] = None,
    add_column: Annotated[
        list[str] | None, typer.Option("--add-column", help="TABLE.COLUMN (repeatable)")
    ] = None,
    dialect: Annotated[str, typer.Option("--dialect", help="dialect of SQL_FILE")] = "spark",
    days: DaysOpt = 30,
    markdown: Annotated[
        Path | None,
        typer.Option("--markdown", help="also write the answer as Markdown (PR comment)"),
    ] = None,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """What a column change breaks downstream: breaking / partial / not affected, with the
    path, the owner and the log's consumers. Exit code 1 when anything breaks."""
    from lineage_udfs.cli import impact as im

    def compute(store: LineageStore) -> Answer:
        changes: list[im.Change] = []
        if sql_file is not None:
            try:
                text = sql_file.read_text(encoding="utf-8")
            except OSError as exc:
                raise CliError(f"cannot read {sql_file}: {exc.strerror or exc}") from None
            changes += im.changes_from_sql(store, text, dialect)
        for name in drop_column or ():
            changes.append(im.Change("drop", *im.parse_column(name, "--drop-column")))
        if rename_column is not None:
            col = im.parse_column(rename_column[0], "--rename-column")
            changes.append(im.Change("rename", *col, rename_column[1]))
        if change_type is not None:
            col = im.parse_column(change_type[0], "--change-type")
            changes.append(im.Change("type", *col, change_type[1]))
        for name in add_column or ():
            changes.append(im.Change("add", *im.parse_column(name, "--add-column")))
        answer, breaking = im.impact(store, changes, days)
        if markdown is not None:
            markdown.write_text(im.markdown(answer, breaking), encoding="utf-8")
        answer.found = not breaking  # exit code 1 when something breaks
        answer.message = ("BREAKING: " if breaking else "not breaking: ") + (answer.message or "")
        return answer

    _run(compute, config, warehouse, as_json, html, svg, as_of)


def tags_command(
    name: Annotated[str, typer.Argument(help="TABLE or TABLE.COLUMN")],
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """The tags of NAME, where they flow from it and where they stopped, and why."""
    from lineage_udfs.cli.tagging import tags_of

    _run(lambda s: tags_of(s, name), config, warehouse, as_json, html, svg, as_of)


def pii_command(
    tag: Annotated[str, typer.Option("--tag", help="the tag of personal data")] = "pii",
    days: DaysOpt = 30,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    warehouse: WarehouseOpt = None,
    as_json: JsonOpt = False,
    html: HtmlOpt = None,
    svg: SvgOpt = None,
) -> None:
    """Every table holding personal data (declared or propagated), and who read it
    (exit code 1 when none does)."""
    from lineage_udfs.cli.tagging import pii

    _run(lambda s: pii(s, tag, days), config, warehouse, as_json, html, svg, as_of)


def _run(
    compute: Callable[[LineageStore], Answer],
    config: list[Path] | None,
    warehouse: str | None,
    as_json: bool,
    html: Path | None,
    svg: Path | None,
    as_of: str | None,
) -> None:
    from lineage_udfs.cli.app import _answer

    _answer(
        compute, config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg,
        as_of=as_of,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    app.command("impact")(impact_command)
    app.command("tags")(tags_command)
    app.command("pii")(pii_command)
