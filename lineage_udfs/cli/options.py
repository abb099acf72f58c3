"""The options the ``lineage`` commands share (typer annotations)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
AsOfOpt = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        help="answer from the tables as of a date/timestamp (UTC) or a Delta version",
    ),
]
LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=1, help="list at most N rows")]
OffsetOpt = Annotated[int, typer.Option("--offset", min=0, help="skip the first N rows")]
