"""Every read the explorer makes, in one place: the answers of the ``lineage`` command
(``cli.queries``) over a ``LineageStore``, shaped as the page's JSON.

The server calls only :class:`ExplorerData`; nothing else in the explorer touches a table, so a
different reader (pushdown reads, an as-of version) is a change of this module alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from lineage_udfs.cli import queries
from lineage_udfs.cli.queries import Catalog, Graph
from lineage_udfs.cli.store import CliError, LineageStore, Row

DIRECTIONS = ("upstream", "downstream", "both")
MAX_NODES = 300
"""Tables drawn in one view; the nearest are kept (by distance, then name) and the rest
counted in ``truncated``."""
MAX_SEARCH_ROWS = 50
MAX_PANEL_ROWS = 25
OPTIONAL_TABLES = ("dataset_activity", "dataset_expectations")
"""Freshness and ownership tables: read when the sink has them, shown as badges."""
_NAME_KEYS = ("dataset", "table", "table_name", "node", "name")
_VERSION_TABLES = ("table_lineage", "lineage_runs")
_STATEMENT_KEYS = (
    "fingerprint",
    "statement_type",
    "status",
    "parser",
    "error_kind",
    "occurrences",
    "last_seen",
)


class ExplorerData:
    """The explorer's reads over the store ``open_store()`` returns.

    The store keeps each table's rows once read; when a watched table's Delta version moved
    (a job run committed) the store is reopened, checked at most every ``refresh_seconds``.
    Calls are serialized (the server answers from a thread pool; the store is not
    thread-safe).
    """

    def __init__(self, open_store: Callable[[], LineageStore], refresh_seconds: float = 15.0):
        self._open = open_store
        self._refresh_seconds = refresh_seconds
        self._lock = threading.Lock()
        self._store = open_store()
        self._versions = self._read_versions(self._store)
        self._checked = time.monotonic()
        self._catalog: Catalog | None = None

    # --- the store ---------------------------------------------------------------------------

    @staticmethod
    def _read_versions(store: LineageStore) -> dict[str, int]:
        return {t: store.version(t) for t in _VERSION_TABLES if store.exists(t)}

    def _fresh_store(self) -> LineageStore:
        now = time.monotonic()
        if now - self._checked >= self._refresh_seconds:
            self._checked = now
            versions = self._read_versions(self._store)
            if versions != self._versions:
                self._store, self._versions, self._catalog = self._open(), versions, None
        return self._store

    def _call(self, fn: Callable[[LineageStore], Any]) -> Any:
        with self._lock:
            return fn(self._fresh_store())

    def _catalog_of(self, store: LineageStore) -> Catalog:
        if self._catalog is None:
            self._catalog = Catalog.read(store)
        return self._catalog

    def _optional(self, store: LineageStore, table: str) -> LineageStore | None:
        """A store for an optional table beside the lineage tables, when it exists."""
        base = store.locations["lineage_runs"].rstrip("/").rsplit("/", 1)[0]
        extra = LineageStore({table: f"{base}/{table}"}, storage_options=store.storage_options)
        return extra if extra.exists(table) else None

    # --- answers -----------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """What the sink has: the watched versions and which optional tables exist."""

        def answer(store: LineageStore) -> dict[str, Any]:
            return {
                "read_only": True,
                "versions": dict(self._versions),
                "optional_tables": [t for t in OPTIONAL_TABLES if self._optional(store, t)],
                "max_nodes": MAX_NODES,
            }

        return dict(self._call(answer))

    def search(self, pattern: str) -> dict[str, Any]:
        """Tables and columns matching ``pattern``, as ``lineage search`` finds them."""
        if not pattern.strip():
            return {"rows": [], "total": 0}
        rows = self._call(lambda s: queries.search(s, pattern).rows)
        return {"rows": rows[:MAX_SEARCH_ROWS], "total": len(rows)}

    def graph(self, name: str, direction: str, depth: int | None) -> dict[str, Any]:
        """The graph centred on ``name`` (a table or ``TABLE.COLUMN``): nodes with their
        columns and distance, edges with their column mappings and transformation types."""
        if direction not in DIRECTIONS:
            raise CliError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
        if depth is not None and depth < 1:
            raise CliError("depth must be at least 1")

        def answer(store: LineageStore) -> dict[str, Any]:
            if direction != "both":
                graph = queries.lineage_of(store, name, direction=direction, depth=depth).graph
                assert graph is not None
                return _capped(graph.to_dict())
            up = queries.lineage_of(store, name, direction="upstream", depth=depth).graph
            down = queries.lineage_of(store, name, direction="downstream", depth=depth).graph
            assert up is not None and down is not None
            return _capped(_both(store, self._catalog_of(store), up, down).to_dict())

        out: dict[str, Any] = self._call(answer)
        out.update(name=queries.canonical(name), direction=direction, depth=depth)
        return out

    def node(self, name: str) -> dict[str, Any]:
        """The side panel of a table: columns, degrees, statements (masked SQL), the newest
        runs, quarantine entries and, where the sink has them, freshness/owner rows."""

        def answer(store: LineageStore) -> dict[str, Any]:
            catalog = self._catalog_of(store)
            table, _ = catalog.resolve(name)
            out: dict[str, Any] = {
                "name": table,
                "kind": catalog.kinds.get(table, "table"),
                "columns": sorted(catalog.columns.get(table, set())),
            }
            if store.exists("lineage_nodes"):
                for row in store.rows("lineage_nodes"):
                    if row["node"] == table:
                        out["upstream"], out["downstream"] = row["in_degree"], row["out_degree"]
                        out["on_cycle"] = row["on_cycle"]
            statements = _statements_of(store, table)
            out["statements"] = [
                {**{k: s.get(k) for k in _STATEMENT_KEYS}, "role": _role(s, table)}
                for s in statements[:MAX_PANEL_ROWS]
            ]
            out["statements_total"] = len(statements)
            fingerprints = {s["fingerprint"] for s in statements}
            out["quarantine"] = _quarantine_of(store, table, fingerprints)
            out["runs"] = queries.runs(store, 5).rows if store.exists("lineage_runs") else []
            out["badges"] = {
                t: rows
                for t in OPTIONAL_TABLES
                if (extra := self._optional(store, t)) is not None
                and (rows := _rows_naming(extra.rows(t), table))
            }
            return out

        return dict(self._call(answer))

    def statement(self, fingerprint: str) -> dict[str, Any]:
        """One statement: masked SQL, parser, status, error, and its edges."""
        answer = self._call(lambda s: queries.statement(s, fingerprint))
        detail = dict(answer.rows[0])
        detail["graph"] = answer.graph.to_dict() if answer.graph is not None else None
        return detail

    def runs(self, limit: int) -> dict[str, Any]:
        return {"rows": self._call(lambda s: queries.runs(s, limit).rows)}

    def quarantine(self, stage: str | None, limit: int) -> dict[str, Any]:
        if stage not in (None, "load", "parse"):
            raise CliError(f"stage must be load or parse, not {stage!r}")
        answer = self._call(lambda s: queries.quarantine(s, stage, limit))
        return {"rows": answer.rows, "message": answer.message}


# --- shaping -----------------------------------------------------------------------------------


def _both(store: LineageStore, catalog: Catalog, up: Graph, down: Graph) -> Graph:
    """Upstream and downstream in one graph, with every edge between its tables (an upstream
    table can feed a downstream one directly)."""
    if up.focus_column is not None:  # a column: the two paths, joined at the column
        graph = Graph(focus=up.focus, focus_column=up.focus_column)
        for part in (up, down):
            for node in part.nodes.values():
                mine = graph.node(node.name, catalog.kinds)
                mine.distance = node.distance
                for column in node.columns:
                    mine.add_column(column)
            for key, edge in part.edges.items():
                merged = graph.edge(*key)
                merged.edge_kinds |= edge.edge_kinds
                merged.column_edges |= edge.column_edges
        return graph
    graph = Graph(focus=up.focus)
    for part in (up, down):
        for node in part.nodes.values():
            graph.node(node.name, catalog.kinds).distance = node.distance
    queries._add_table_edges(store, graph, catalog, set(graph.nodes))
    return graph


def _capped(data: dict[str, Any]) -> dict[str, Any]:
    """At most MAX_NODES nodes, the nearest kept; ``truncated`` counts the others."""
    nodes = data["nodes"]
    data["truncated"] = max(0, len(nodes) - MAX_NODES)
    if data["truncated"]:
        keep = sorted(nodes, key=lambda n: (n["distance"] is None, n["distance"] or 0, n["id"]))
        kept = {n["id"] for n in keep[:MAX_NODES]}
        data["nodes"] = [n for n in nodes if n["id"] in kept]
        data["edges"] = [e for e in data["edges"] if e["source"] in kept and e["target"] in kept]
    return data


def _statements_of(store: LineageStore, table: str) -> list[Row]:
    if not store.exists("parsed_statements"):
        return []
    found = [
        r
        for r in store.rows("parsed_statements")
        if table in (r["sources"] or []) or table in (r["targets"] or [])
    ]
    found.sort(key=lambda r: (str(r["last_seen"] or ""), r["fingerprint"]), reverse=True)
    return found


def _role(statement: Row, table: str) -> str:
    reads = table in (statement["sources"] or [])
    writes = table in (statement["targets"] or [])
    return "reads and writes" if reads and writes else "writes" if writes else "reads"


def _quarantine_of(store: LineageStore, table: str, fingerprints: set[str]) -> list[Row]:
    """Quarantined rows of the table's statements, or whose masked text names the table."""
    if not store.exists("quarantine"):
        return []
    rows = [
        r
        for r in store.rows("quarantine")
        if r["fingerprint"] in fingerprints or table in (r["masked_record"] or "").lower()
    ]
    rows.sort(key=lambda r: (str(r["last_seen"] or ""), r["quarantine_id"]), reverse=True)
    keys = queries.QUARANTINE_COLUMNS
    return [{k: r.get(k) for k in keys} for r in rows[:MAX_PANEL_ROWS]]


def _rows_naming(rows: list[Row], table: str) -> list[Row]:
    """The rows of an optional table about ``table`` (its name column is the first of
    ``_NAME_KEYS`` it has), with scalar values only."""
    if not rows:
        return []
    key = next((k for k in _NAME_KEYS if k in rows[0]), None)
    if key is None:
        return []
    return [
        {k: v for k, v in r.items() if not isinstance(v, list | dict)}
        for r in rows
        if r.get(key) == table
    ][:MAX_PANEL_ROWS]
