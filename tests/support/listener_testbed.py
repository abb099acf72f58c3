"""The test bed of two producers: what the OpenLineage Spark listener said about the job of
``tests/engine/listener_job.py`` (recorded under ``tests/data/openlineage/spark_listener``, or
fresh from an engine test) and what the parser says about the same MERGE text.

A column edge here is ``(source table, source column, target table, target column, type,
subtype)``, tables by their catalog names (the listener's storage paths mapped through its
``symlinks`` facets)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lineage_udfs.core.identity import table_name
from lineage_udfs.core.ol_events import event_lineage
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "openlineage" / "spark_listener"
"""events.jsonl (the listener's file transport), table_locations.jsonl (DESCRIBE DETAIL),
query_log.jsonl (the SQL log); README.md has the command that produced them."""

sys.path.insert(0, str(ROOT / "tests" / "engine"))
from listener_job import MERGE_SQL  # noqa: E402

MERGE_TARGET = "shop.customers"
MERGE_SOURCE = "staging.customer_updates"

Edge = tuple[str, str, str, str, str, str]


def read_events(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _table_of(lineage_symlinks: Iterable[Any]) -> dict[str, str]:
    return {s.node: table_name(s.alias) for s in lineage_symlinks if s.type.upper() == "TABLE"}


def _tables(node: str, names: dict[str, str]) -> str:
    return names.get(node, table_name(node))


def listener_merge_edges(events: Iterable[dict[str, Any]]) -> set[Edge]:
    """Column edges of the listener's COMPLETE events for the MERGE into ``shop.customers``
    (the events that read ``staging.customer_updates`` and write the target)."""
    edges: set[Edge] = set()
    for event in events:
        lin = event_lineage(event)
        if lin.event_type != "COMPLETE" or not lin.column_edges:
            continue
        names = _table_of(lin.symlinks)
        tables = {_tables(n, names) for n in lin.datasets}
        if not {MERGE_TARGET, MERGE_SOURCE} <= tables:
            continue
        for e in lin.column_edges:
            target = _tables(e.target_table, names)
            if target != MERGE_TARGET:
                continue
            edges.add(
                (
                    _tables(e.source_table, names),
                    e.source_column,
                    target,
                    e.target_column,
                    e.transformation_type,
                    e.transformation_subtype,
                )
            )
    return edges


def parser_merge_edges(options: ParserOptions) -> set[Edge]:
    """The parser's column edges for the same MERGE text (no catalog: what a SQL log gives)."""
    result = LineageParser(options).parse(MERGE_SQL, dialect="spark")
    assert result.failure is None, result.failure
    return {
        (
            e.source_table,
            e.source_column.lower(),
            e.target_table,
            e.target_column.lower(),
            str(e.transformation_type),
            str(e.transformation_subtype),
        )
        for e in result.column_edges
    }


def direct(edges: set[Edge]) -> set[Edge]:
    return {e for e in edges if e[4] == "DIRECT"}
