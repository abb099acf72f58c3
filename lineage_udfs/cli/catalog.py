"""Every table and column the lineage tables mention, read once, for the questions that look at
the whole graph (change impact, tag flow) rather than at one node's rows.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass

from lineage_udfs.cli.model import Graph
from lineage_udfs.cli.queries import _column_edge, canonical
from lineage_udfs.cli.store import CliError, LineageStore, Row


@dataclass
class Catalog:
    """Every table name and (table, column) pair the lineage tables mention."""

    kinds: dict[str, str]
    columns: dict[str, set[str]]

    @classmethod
    def read(cls, store: LineageStore) -> Catalog:
        kinds: dict[str, str] = {}
        ends = ["source_table", "target_table"]  # graph nodes: aliases stitched
        for row in store.stitched(store.rows("table_lineage", columns=ends), *ends):
            kinds.setdefault(row["source_table"], "table")
            kinds.setdefault(row["target_table"], "table")
        columns: dict[str, set[str]] = defaultdict(set)
        wanted = ["source_table", "source_column", "target_table", "target_column"]
        for row in store.stitched(store.rows("column_lineage", columns=wanted), *ends):
            kinds.setdefault(row["source_table"], "table")
            kinds.setdefault(row["target_table"], "table")
            if row["source_column"]:
                columns[row["source_table"]].add(row["source_column"])
            if row["target_column"]:
                columns[row["target_table"]].add(row["target_column"])
        if store.exists("lineage_nodes"):
            for row in store.rows("lineage_nodes", columns=["node", "kind"]):
                kinds[row["node"]] = row["kind"] or "table"
        return cls(kinds, dict(columns))

    def resolve(self, name: str) -> tuple[str, str | None]:
        """``TABLE`` or ``TABLE.COLUMN`` -> (table, column or None).

        Raises:
            CliError: neither a known table nor a known table's column; names the closest.
        """
        wanted = canonical(name)
        if wanted in self.kinds:
            return wanted, None
        table, _, column = wanted.rpartition(".")
        if table in self.kinds:
            if column in self.columns.get(table, set()):
                return table, column
            known = sorted(self.columns.get(table, set()))
            hint = difflib.get_close_matches(column, known, n=3, cutoff=0.5) or known[:5]
            raise CliError(
                f"unknown column {column!r} of {table}"
                + (f"; did you mean {', '.join(table + '.' + c for c in hint)}?" if hint else "")
            )
        raise CliError(f"unknown table {name!r}" + self._suggest(wanted))

    def _suggest(self, wanted: str) -> str:
        names = sorted(self.kinds)
        close = [n for n in names if n.rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]]
        close += [
            n for n in difflib.get_close_matches(wanted, names, n=3, cutoff=0.6) if n not in close
        ]
        if not close:
            return f" (no lineage table mentions it; {len(names)} tables known)"
        return f"; did you mean {', '.join(close[:3])}?"


def draw_column_edges(graph: Graph, edges: list[Row], members: set[tuple[str, str]]) -> Graph:
    """Add the column edges (rows of ``column_lineage``) whose both ends are ``members`` to
    ``graph``, grouped by table edge; sort every node's columns."""
    for row in edges:
        src = (row["source_table"], row["source_column"])
        dst = (row["target_table"], row["target_column"])
        if src in members and dst in members:
            edge = graph.edge(src[0], dst[0])
            edge.add_kind(row["edge_kind"])
            edge.column_edges.add(_column_edge(row))
    for node in graph.nodes.values():
        node.columns.sort()
    return graph
