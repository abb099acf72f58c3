"""The ``lineage freshness | owner | usage | alerts`` commands (answers: ``cli.activity``).

No ``from __future__ import annotations`` here: typer reads the commands' annotations, which
name options defined inside :func:`register`.

    lineage freshness reports.rpt_monthly_revenue --html freshness.html
    lineage owner raw.exchange_rates --json
    lineage usage marts.fct_payments
    lineage alerts            # exit code 1 when a dataset is late or stopped
"""

from typing import Annotated

import typer

from lineage_udfs.cli import activity
from lineage_udfs.cli.options import AsOfOpt, ConfigOpt, HtmlOpt, JsonOpt, SvgOpt, WarehouseOpt

TableArg = Annotated[str, typer.Argument(help="TABLE")]


def register(app: typer.Typer) -> None:
    """Add the commands to ``app`` (the ``lineage`` command of ``cli.app``)."""
    from lineage_udfs.cli.app import _answer

    @app.command()
    def freshness(
        name: TableArg,
        as_of: AsOfOpt = None,
        config: ConfigOpt = None,
        warehouse: WarehouseOpt = None,
        as_json: JsonOpt = False,
        html: HtmlOpt = None,
        svg: SvgOpt = None,
    ) -> None:
        """When TABLE was last written, by whom, its cadence and status, and every late or
        stopped dataset upstream with its path and owners (--html marks them on the graph)."""
        _answer(
            lambda s: activity.freshness(s, name),
            config=config, warehouse=warehouse, as_json=as_json, html=html, svg=svg, as_of=as_of,
        )  # fmt: skip

    @app.command()
    def owner(
        name: TableArg,
        as_of: AsOfOpt = None,
        config: ConfigOpt = None,
        warehouse: WarehouseOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Who owns TABLE, and which rule says so (explicit / catalog / inferred)."""
        _answer(
            lambda s: activity.owner(s, name),
            config=config, warehouse=warehouse, as_json=as_json, as_of=as_of,
        )  # fmt: skip

    @app.command()
    def usage(
        name: TableArg,
        as_of: AsOfOpt = None,
        config: ConfigOpt = None,
        warehouse: WarehouseOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Who writes and reads TABLE: counts over the window, last write, last read."""
        _answer(
            lambda s: activity.usage(s, name),
            config=config, warehouse=warehouse, as_json=as_json, as_of=as_of,
        )  # fmt: skip

    @app.command()
    def alerts(
        as_of: AsOfOpt = None,
        config: ConfigOpt = None,
        warehouse: WarehouseOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Every late or stopped dataset with its downstream blast radius; exit code 1 when
        there is one (for cron and CI)."""
        _answer(activity.alerts, config=config, warehouse=warehouse, as_json=as_json, as_of=as_of)
