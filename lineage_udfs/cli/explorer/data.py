"""Every read the explorer makes, in one place: the answers of the ``lineage`` command
(``cli.queries``, ``cli.records``, ``cli.activity``) over one :class:`LineageStore`, shaped as
the page's JSON.

Nothing here reads a table another way: each read is an answer of those modules or a
pushed-down :meth:`LineageStore.rows` / :meth:`LineageStore.count` with a predicate built by
``eq`` / ``isin`` / ``all_of`` / ``any_of``, so a page answers at warehouse size and
``lineage serve --as-of`` pins every answer to the same past state of the tables.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from lineage_udfs.cli import activity, queries, records
from lineage_udfs.cli.model import Graph, Page
from lineage_udfs.cli.store import (
    CliError,
    LineageStore,
    Row,
    all_of,
    any_of,
    eq,
    isin,
    literal,
)

DIRECTIONS = ("upstream", "downstream", "both")
MAX_NODES = 300
"""Tables drawn per answer (per direction); the nearest are kept (``lineage_of``'s page) and
the others counted in ``truncated``."""
MAX_SEARCH_ROWS = 50
MAX_PANEL_ROWS = 25
RUNS_SHOWN = 5
ACTIVITY_TABLES = ("dataset_activity", "dataset_owners", "dataset_expectations")
"""The activity stage's tables the side panel's badges come from (absent: no badges)."""
WATCHED = ("table_lineage", "lineage_runs")
"""A new Delta version of one of these (a job run) makes the explorer reopen the tables."""
STATEMENT_COLUMNS = [
    "fingerprint",
    "statement_type",
    "status",
    "parser",
    "error_kind",
    "occurrences",
    "last_seen",
    "sources",
    "targets",
]


class ExplorerData:
    """The explorer's reads over the store ``open_store()`` returns.

    Without ``as_of`` the tables follow the job: when a watched table has a newer Delta version
    (checked at most every ``refresh_seconds``) the store is reopened. With ``as_of`` every
    answer is from that past state, never refreshed. Calls are serialized (the server answers
    from a thread pool; a store opens its tables lazily and is not thread-safe).
    """

    def __init__(
        self,
        open_store: Callable[[], LineageStore],
        *,
        as_of: str | None = None,
        refresh_seconds: float = 15.0,
    ):
        self._open = open_store
        self.as_of = as_of
        self._refresh_seconds = refresh_seconds
        self._lock = threading.Lock()
        self._store = open_store()
        self._checked = time.monotonic()

    # --- the store ---------------------------------------------------------------------------

    def _versions(self, store: LineageStore) -> dict[str, int]:
        """The version read of each watched table."""
        return {t: store.version(t) for t in WATCHED if store.exists(t)}

    def _newest_versions(self, store: LineageStore) -> dict[str, int]:
        """The newest committed version of each watched table (its Delta history)."""
        out = {}
        for table in WATCHED:
            if store.exists(table):
                newest = store.history(table, limit=1)
                if newest:
                    out[table] = int(newest[0]["version"])
        return out

    def _fresh_store(self) -> LineageStore:
        if self.as_of is not None:
            return self._store
        now = time.monotonic()
        if now - self._checked >= self._refresh_seconds:
            self._checked = now
            if self._newest_versions(self._store) != self._versions(self._store):
                self._store = self._open()
        return self._store

    def _call(self, fn: Callable[[LineageStore], Any]) -> Any:
        with self._lock:
            store = self._fresh_store()
            store.followed.clear()  # the aliases one answer followed, not every answer's
            return fn(store)

    # --- answers -----------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """What the page needs first: read-only, the state read (``as_of``, the watched tables'
        versions) and which activity tables exist (badges)."""

        def answer(store: LineageStore) -> dict[str, Any]:
            return {
                "read_only": True,
                "as_of": self.as_of,
                "versions": self._versions(store),
                "activity_tables": [t for t in ACTIVITY_TABLES if store.exists(t)],
                "max_nodes": MAX_NODES,
            }

        return dict(self._call(answer))

    def search(self, pattern: str) -> dict[str, Any]:
        """Tables and columns matching ``pattern``: ``queries.search`` (``lineage search``)."""
        if not pattern.strip():
            return {"rows": [], "total": 0}
        found = self._call(lambda s: queries.search(s, pattern, page=Page(MAX_SEARCH_ROWS)))
        return {"rows": found.rows, "total": found.total, "as_of": self.as_of}

    def graph(self, name: str, direction: str, depth: int | None) -> dict[str, Any]:
        """The graph centred on ``name`` (a table or ``TABLE.COLUMN``): ``queries.lineage_of``
        (``lineage upstream | downstream``), both directions merged for ``both``; nodes with
        their columns, distance and freshness status (late / stopped), edges with their column
        mappings and transformation types."""
        if direction not in DIRECTIONS:
            raise CliError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}")
        if depth is not None and depth < 1:
            raise CliError("depth must be at least 1")
        page = Page(MAX_NODES)

        def answer(store: LineageStore) -> dict[str, Any]:
            ways = ("upstream", "downstream") if direction == "both" else (direction,)
            answers = [
                queries.lineage_of(store, name, direction=way, depth=depth, page=page)
                for way in ways
            ]
            graphs = [a.graph for a in answers if a.graph is not None]
            graph = graphs[0] if len(graphs) == 1 else _both(store, graphs)
            _mark_late(store, graph)
            out = graph.to_dict()
            out["truncated"] = sum((a.total or 0) - len(a.rows) for a in answers)
            out["caps"] = [a.cap for a in answers if a.cap]
            out["name"] = store.follow(name)  # an alias: the node answered for
            out["aliases_followed"] = [f.as_dict() for f in store.followed]
            return out

        out: dict[str, Any] = self._call(answer)
        out.update(direction=direction, depth=depth)
        out["as_of"] = self.as_of
        return out

    def node(self, name: str) -> dict[str, Any]:
        """The side panel of a table: its columns and degrees, the statements that read or
        write it (masked SQL on click), quarantine entries, the newest runs, and badges from
        the activity tables: last write, owner, status and every late upstream dataset."""

        def answer(store: LineageStore) -> dict[str, Any]:
            table, _ = queries.resolve(store, name)
            out: dict[str, Any] = {
                "name": table,
                "kind": queries.kinds_of(store, {table})[table],
                "columns": sorted(queries.columns_of(store, table)),
                "as_of": self.as_of,
            }
            if store.exists("lineage_nodes"):
                wanted = ["in_degree", "out_degree", "on_cycle"]
                degrees = store.first("lineage_nodes", eq("node", table), wanted) or {}
                out["upstream"] = degrees.get("in_degree")
                out["downstream"] = degrees.get("out_degree")
                out["on_cycle"] = degrees.get("on_cycle")
            statements, total = _statements_of(store, table)
            out["statements"] = [
                {**{k: s.get(k) for k in STATEMENT_COLUMNS[:-2]}, "role": _role(s, table)}
                for s in statements[:MAX_PANEL_ROWS]
            ]
            out["statements_total"] = total
            out["quarantine"] = _quarantine_of(store, table, {s["fingerprint"] for s in statements})
            out["runs"] = (
                records.runs(store, RUNS_SHOWN).rows if store.exists("lineage_runs") else []
            )
            out["freshness"] = _freshness(store, table)
            return out

        return dict(self._call(answer))

    def statement(self, fingerprint: str) -> dict[str, Any]:
        """One statement (``lineage statement``): masked SQL, parser, status, error, edges."""

        def answer_of(store: LineageStore) -> Any:
            if not store.exists("parsed_statements"):
                raise CliError("unknown statement: the sink has no parsed_statements table")
            return records.statement(store, fingerprint)

        answer = self._call(answer_of)
        detail = dict(answer.rows[0])
        detail["graph"] = answer.graph.to_dict() if answer.graph is not None else None
        detail["as_of"] = self.as_of
        return detail

    def runs(self, limit: int) -> dict[str, Any]:
        """The newest extraction runs (``lineage runs``)."""
        return {"rows": self._call(lambda s: records.runs(s, limit).rows), "as_of": self.as_of}

    def quarantine(self, stage: str | None, limit: int) -> dict[str, Any]:
        """Quarantined rows, newest first (``lineage quarantine``)."""
        if stage not in (None, "load", "parse"):
            raise CliError(f"stage must be load or parse, not {stage!r}")
        found = self._call(lambda s: records.quarantine(s, stage, limit))
        return {"rows": found.rows, "message": found.message, "as_of": self.as_of}


# --- shaping -----------------------------------------------------------------------------------


def _both(store: LineageStore, graphs: list[Graph]) -> Graph:
    """Upstream and downstream in one graph. For a table, every table edge between its nodes
    is drawn (an upstream table can feed a downstream one directly); for a column, the two
    column paths joined at the column."""
    up = graphs[0]
    graph = Graph(focus=up.focus, focus_column=up.focus_column)
    names = {n for g in graphs for n in g.nodes}
    kinds = queries.kinds_of(store, names)
    for part in graphs:
        for node in part.nodes.values():
            mine = graph.node(node.name, kinds)
            if node.distance is not None:
                mine.distance = (
                    node.distance if mine.distance is None else min(mine.distance, node.distance)
                )
            for column in node.columns:
                mine.add_column(column)
        if up.focus_column is not None:
            for key, edge in part.edges.items():
                merged = graph.edge(*key)
                merged.edge_kinds |= edge.edge_kinds
                merged.column_edges |= edge.column_edges
    if up.focus_column is None:
        queries.add_table_edges(store, graph, kinds, set(graph.nodes))
    for node in graph.nodes.values():
        node.columns.sort()
    return graph


def _mark_late(store: LineageStore, graph: Graph) -> None:
    """Set the status of the graph's late and stopped tables (``dataset_expectations``, the
    table-level rows), as ``lineage freshness --html`` marks them."""
    if not graph.nodes or not store.exists("dataset_expectations"):
        return
    where = all_of(
        isin("dataset", graph.nodes),
        eq("fingerprint", ""),
        isin("status", activity.LATE_STATUSES),
    )
    for row in store.rows("dataset_expectations", where, ["dataset", "status"]):
        graph.nodes[row["dataset"]].status = row["status"]


def _statements_of(store: LineageStore, table: str) -> tuple[list[Row], int]:
    """The statements that read or write ``table`` (``parsed_statements`` rows whose
    ``sources`` or ``targets`` hold it), newest first, and how many there are."""
    if not store.exists("parsed_statements"):
        return [], 0
    where = any_of(f"array_has(sources, {literal(table)})", f"array_has(targets, {literal(table)})")
    found = store.rows("parsed_statements", where, STATEMENT_COLUMNS)
    found.sort(key=lambda r: (str(r["last_seen"] or ""), r["fingerprint"]), reverse=True)
    return found, len(found)


def _role(statement: Row, table: str) -> str:
    reads = table in (statement["sources"] or [])
    writes = table in (statement["targets"] or [])
    return "reads and writes" if reads and writes else "writes" if writes else "reads"


def _quarantine_of(store: LineageStore, table: str, fingerprints: set[str]) -> list[Row]:
    """Quarantined rows of the table's statements, or whose masked text names the table,
    newest first."""
    if not store.exists("quarantine"):
        return []
    where = any_of(
        isin("fingerprint", fingerprints) if fingerprints else None,
        f"strpos(lower(masked_record), {literal(table)}) > 0",
    )
    rows = store.rows("quarantine", where, [*records.QUARANTINE_COLUMNS, "quarantine_id"])
    rows.sort(key=lambda r: (str(r["last_seen"] or ""), r["quarantine_id"]), reverse=True)
    return [{k: r.get(k) for k in records.QUARANTINE_COLUMNS} for r in rows[:MAX_PANEL_ROWS]]


def _freshness(store: LineageStore, table: str) -> dict[str, Any] | None:
    """The badges: ``activity.freshness`` (``lineage freshness``) and ``activity.owner_of``
    (``lineage owner``) of ``table``; None when the sink has no activity tables or they do
    not know the table."""
    if not all(store.exists(t) for t in ACTIVITY_TABLES) or not store.exists("upstream_staleness"):
        return None
    try:
        answer = activity.freshness(store, table)
    except CliError:  # a table the activity stage has not seen
        return None
    asked, *late = answer.rows
    owner = activity.owner_of(store, table)
    return {
        "status": asked["status"],
        "last_write_at": asked["last_write_at"],
        "last_write_user": asked["last_write_user"],
        "last_failed_write_at": asked["last_failed_write_at"],
        "expected_next_at": asked["expected_next_at"],
        "reason": asked["reason"],
        "owner": owner["owner"] if owner else None,
        "owner_rule": owner["rule"] if owner else None,
        "owner_contact": owner["contact"] if owner else None,
        "late_upstream": [
            {
                "table": r["table"],
                "status": r["status"],
                "hops": max(0, len(r.get("hops") or []) - 1),
                "last_write_at": r["last_write_at"],
                "owner": r["owner"],
                "path": r["path"],
            }
            for r in late
        ],
    }
