"""The ``lineage serve`` command: the explorer page (``cli.explorer.server``) over the tables.

No ``from __future__ import annotations`` here: typer reads the command's annotations.

    lineage serve                                   # http://127.0.0.1:8765/
    lineage serve --as-of 2026-11-01 --port 8800    # the tables as they were then
    EXPLORER_TOKEN=... lineage serve --host 0.0.0.0 --token-env EXPLORER_TOKEN
"""

import os
from typing import Annotated

import typer

from lineage_udfs.cli.options import AsOfOpt, ConfigOpt, WarehouseOpt
from lineage_udfs.cli.store import CliError, open_store
from lineage_udfs.core.errors import one_line

MIN_TOKEN = 16
"""Shortest token accepted off loopback."""

HostOpt = Annotated[
    str, typer.Option("--host", help="address to bind (off loopback: needs --token-env)")
]
PortOpt = Annotated[int, typer.Option("--port", "-p", min=0, max=65535, help="TCP port")]
TokenEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--token-env",
        help="name of an environment variable holding the token every request must carry",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app`` (the ``lineage`` command of ``cli.app``)."""

    @app.command()
    def serve(
        host: HostOpt = "127.0.0.1",
        port: PortOpt = 8765,
        token_env: TokenEnvOpt = None,
        as_of: AsOfOpt = None,
        config: ConfigOpt = None,
        warehouse: WarehouseOpt = None,
    ) -> None:
        """The lineage explorer: a read-only web page over the tables (search, graph, columns,
        statements, freshness), on 127.0.0.1 unless a token is given."""
        from lineage_udfs.cli.app import _console
        from lineage_udfs.cli.explorer.server import is_loopback

        err = _console()
        token = None
        if token_env is not None:
            token = os.environ.get(token_env, "")
            if len(token) < MIN_TOKEN:
                err.print(
                    f"[red]error:[/red] --token-env {token_env}: the variable is unset or shorter "
                    f"than {MIN_TOKEN} characters",
                    soft_wrap=True,
                )
                raise typer.Exit(2)
        elif not is_loopback(host):
            err.print(
                f"[red]error:[/red] binding {host} (not loopback) needs a token: "
                "--token-env NAME, the name of a variable holding it",
                soft_wrap=True,
            )
            raise typer.Exit(2)
        try:
            from lineage_udfs.cli.explorer.data import ExplorerData
            from lineage_udfs.cli.explorer.server import serve as run_server

            data = ExplorerData(lambda: open_store(config, warehouse, as_of=as_of), as_of=as_of)
        except CliError as exc:
            err.print(f"[red]error:[/red] {exc}", soft_wrap=True)
            raise typer.Exit(2) from None
        except Exception as exc:  # delta-rs / arrow errors: one line, not a trace
            err.print(f"[red]error:[/red] {one_line(exc, with_type=True)}", soft_wrap=True)
            raise typer.Exit(2) from None
        shown = f"[{host}]" if ":" in host else host
        err.print(
            f"lineage explorer on http://{shown}:{port}/ (read-only"
            + (f"; as of {as_of}" if as_of else "")
            + (f"; token from ${token_env}" if token else "")
            + "); Ctrl-C stops it",
            soft_wrap=True,
        )
        try:
            run_server(data, host, port, token)
        except Exception as exc:
            err.print(f"[red]error:[/red] {one_line(exc, with_type=True)}", soft_wrap=True)
            raise typer.Exit(2) from None
