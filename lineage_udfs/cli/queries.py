"""The answers of the ``lineage`` command, computed from the lineage tables' rows.

Each function returns an :class:`Answer`: rows for the table / JSON output and, where the
question has one, the lineage :class:`Graph` of the answer (tables as nodes with their columns,
edges with their transformation types) for ``--html`` / ``--svg``. The closures
(``table_closure``, ``column_closure``) answer reachability; ``table_lineage`` and
``column_lineage`` give the edges drawn between the tables of the answer.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from lineage_udfs.cli.store import CliError, LineageStore, Row

MAX_PATHS = 50
"""Paths listed by ``lineage path`` (the graph holds every edge on any of them)."""


@dataclass
class GraphNode:
    """A table of the answer's graph."""

    name: str
    kind: str = "table"
    columns: list[str] = field(default_factory=list)
    distance: int | None = None
    status: str | None = None
    """Freshness status (late, stopped, ...) where the answer marks it."""

    def add_column(self, column: str | None) -> None:
        if column and column not in self.columns:
            self.columns.append(column)


@dataclass
class GraphEdge:
    """Table-level edge; ``column_edges`` are its column mappings (source col, target col,
    type, subtype)."""

    source: str
    target: str
    edge_kinds: set[str] = field(default_factory=set)
    column_edges: set[tuple[str, str, str, str]] = field(default_factory=set)

    @property
    def transformations(self) -> dict[str, list[str]]:
        """Transformation type -> sorted subtypes, e.g. ``{"DIRECT": ["IDENTITY"]}``."""
        found: dict[str, set[str]] = defaultdict(set)
        for _, _, kind, subtype in self.column_edges:
            found[kind or "UNKNOWN"].add(subtype or "")
        return {k: sorted(s for s in v if s) for k, v in sorted(found.items())}

    @property
    def label(self) -> str:
        """``DIRECT: IDENTITY, AGGREGATION / INDIRECT: JOIN`` (or the edge kind alone)."""
        parts = [
            f"{kind}: {', '.join(subs)}" if subs else kind
            for kind, subs in self.transformations.items()
        ]
        return " / ".join(parts) if parts else ", ".join(sorted(self.edge_kinds)) or "lineage"


@dataclass
class Graph:
    """The graph of an answer; ``focus`` is the asked table (and ``focus_column`` its column)."""

    focus: str | None
    focus_column: str | None = None
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: dict[tuple[str, str], GraphEdge] = field(default_factory=dict)
    marks: dict[tuple[str, str], str] = field(default_factory=dict)
    """(table, column) -> what to highlight it with (a tag, an impact); drawn on the column."""

    def node(self, name: str, kinds: dict[str, str]) -> GraphNode:
        if name not in self.nodes:
            self.nodes[name] = GraphNode(name, kinds.get(name, "table"))
        return self.nodes[name]

    def edge(self, source: str, target: str) -> GraphEdge:
        key = (source, target)
        if key not in self.edges:
            self.edges[key] = GraphEdge(source, target)
        return self.edges[key]

    def layers(self) -> dict[str, int]:
        """Left-to-right layer of every node: longest chain of edges leading to it (cycles
        broken at the first revisit)."""
        incoming: dict[str, list[str]] = defaultdict(list)
        for src, dst in self.edges:
            if src != dst:
                incoming[dst].append(src)
        layer: dict[str, int] = {}
        visiting: set[str] = set()

        def depth(name: str) -> int:
            if name in layer:
                return layer[name]
            if name in visiting:
                return 0
            visiting.add(name)
            value = max((depth(p) + 1 for p in incoming.get(name, ())), default=0)
            visiting.discard(name)
            layer[name] = value
            return value

        for name in sorted(self.nodes):
            depth(name)
        return layer

    def to_dict(self) -> dict[str, Any]:
        layers = self.layers()
        return {
            "focus": self.focus,
            "focus_column": self.focus_column,
            "nodes": [
                {
                    "id": n.name,
                    "kind": n.kind,
                    "columns": n.columns,
                    "distance": n.distance,
                    "status": n.status,
                    "layer": layers.get(n.name, 0),
                    "marks": {c: m for (t, c), m in sorted(self.marks.items()) if t == n.name},
                }
                for n in sorted(self.nodes.values(), key=lambda n: (layers.get(n.name, 0), n.name))
            ],
            "edges": [
                {
                    "source": e.source,
                    "target": e.target,
                    "label": e.label,
                    "edge_kinds": sorted(e.edge_kinds),
                    "transformations": e.transformations,
                    "columns": [
                        {
                            "source_column": sc,
                            "target_column": tc,
                            "transformation_type": t,
                            "transformation_subtype": s,
                        }
                        for sc, tc, t, s in sorted(e.column_edges)
                    ],
                }
                for _, e in sorted(self.edges.items())
            ],
        }


@dataclass
class Answer:
    """What a command prints: a title, rows with ``columns``, an optional graph and message."""

    title: str
    columns: list[str]
    rows: list[Row]
    graph: Graph | None = None
    message: str | None = None
    found: bool = True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "rows": self.rows}
        if self.message:
            out["message"] = self.message
        if self.graph is not None:
            out["graph"] = self.graph.to_dict()
        return out


# --- names -------------------------------------------------------------------------------------


def canonical(name: str) -> str:
    """Lower-case, unquoted: the tables store canonical lower-case qualified names."""
    return "".join(ch for ch in name.strip() if ch not in '`"[]').lower()


@dataclass(frozen=True)
class Catalog:
    """Every table name and (table, column) pair the lineage tables mention."""

    kinds: dict[str, str]
    columns: dict[str, set[str]]

    @classmethod
    def read(cls, store: LineageStore) -> Catalog:
        kinds: dict[str, str] = {}
        for row in store.rows("table_lineage"):
            kinds.setdefault(row["source_table"], "table")
            kinds.setdefault(row["target_table"], "table")
        columns: dict[str, set[str]] = defaultdict(set)
        for row in store.rows("column_lineage"):
            kinds.setdefault(row["source_table"], "table")
            kinds.setdefault(row["target_table"], "table")
            if row["source_column"]:
                columns[row["source_table"]].add(row["source_column"])
            if row["target_column"]:
                columns[row["target_table"]].add(row["target_column"])
        if store.exists("lineage_nodes"):
            for row in store.rows("lineage_nodes"):
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


# --- upstream / downstream ---------------------------------------------------------------------


def lineage_of(
    store: LineageStore, name: str, *, direction: str, depth: int | None = None
) -> Answer:
    """Upstream (``direction="upstream"``) or downstream tables / columns of ``name``."""
    if direction not in ("upstream", "downstream"):
        raise ValueError(direction)
    if depth is not None and depth < 1:
        raise CliError("--depth must be at least 1")
    catalog = Catalog.read(store)
    table, column = catalog.resolve(name)
    up = direction == "upstream"
    limit = depth if depth is not None else 1 << 30
    if column is None:
        return _table_lineage_of(store, catalog, table, up=up, limit=limit, direction=direction)
    return _column_lineage_of(
        store, catalog, table, column, up=up, limit=limit, direction=direction
    )


def _table_lineage_of(
    store: LineageStore, catalog: Catalog, table: str, *, up: bool, limit: int, direction: str
) -> Answer:
    mine, other = ("descendant", "ancestor") if up else ("ancestor", "descendant")
    found: dict[str, int] = {}
    for row in store.rows("table_closure"):
        if row[mine] == table and row[other] != table and row["min_distance"] <= limit:
            found[row[other]] = row["min_distance"]
    graph = Graph(focus=table)
    graph.node(table, catalog.kinds).distance = 0
    for name, distance in found.items():
        graph.node(name, catalog.kinds).distance = distance
    members = set(graph.nodes)
    _add_table_edges(store, graph, catalog, members)
    rows = [
        {
            "table": name,
            "kind": catalog.kinds.get(name, "table"),
            "distance": distance,
            "columns": len(graph.nodes[name].columns),
        }
        for name, distance in sorted(found.items(), key=lambda kv: (kv[1], kv[0]))
    ]
    title = f"{direction} of {table}" + (f" (depth <= {limit})" if limit < 1 << 30 else "")
    message = None if rows else f"{table} has no {direction} tables"
    return Answer(title, ["table", "kind", "distance", "columns"], rows, graph, message)


def _add_table_edges(
    store: LineageStore, graph: Graph, catalog: Catalog, members: set[str]
) -> None:
    for row in store.rows("table_lineage"):
        if row["source_table"] in members and row["target_table"] in members:
            graph.edge(row["source_table"], row["target_table"]).edge_kinds.add(row["edge_kind"])
    for row in store.rows("column_lineage"):
        src, dst = row["source_table"], row["target_table"]
        if src in members and dst in members:
            edge = graph.edge(src, dst)
            edge.edge_kinds.add(row["edge_kind"])
            edge.column_edges.add(_column_edge(row))
            graph.node(src, catalog.kinds).add_column(row["source_column"])
            graph.node(dst, catalog.kinds).add_column(row["target_column"])
    for node in graph.nodes.values():
        node.columns.sort()


def _column_edge(row: Row) -> tuple[str, str, str, str]:
    return (
        row["source_column"] or "",
        row["target_column"] or "",
        row["transformation_type"] or "",
        row["transformation_subtype"] or "",
    )


def _column_lineage_of(
    store: LineageStore,
    catalog: Catalog,
    table: str,
    column: str,
    *,
    up: bool,
    limit: int,
    direction: str,
) -> Answer:
    mine, other = ("descendant", "ancestor") if up else ("ancestor", "descendant")
    found: dict[tuple[str, str], Row] = {}
    for row in store.rows("column_closure"):
        if (
            row[f"{mine}_table"] == table
            and row[f"{mine}_column"] == column
            and row["min_distance"] <= limit
        ):
            key = (row[f"{other}_table"], row[f"{other}_column"])
            if key != (table, column):
                found[key] = row
    members = {(table, column), *found}
    graph = Graph(focus=table, focus_column=column)
    graph.node(table, catalog.kinds).distance = 0
    graph.nodes[table].add_column(column)
    for (t, c), row in found.items():
        node = graph.node(t, catalog.kinds)
        node.add_column(c)
        node.distance = (
            row["min_distance"]
            if node.distance is None
            else min(node.distance, row["min_distance"])
        )
    for row in store.rows("column_lineage"):
        src = (row["source_table"], row["source_column"])
        dst = (row["target_table"], row["target_column"])
        if src in members and dst in members:
            edge = graph.edge(src[0], dst[0])
            edge.edge_kinds.add(row["edge_kind"])
            edge.column_edges.add(_column_edge(row))
    for node in graph.nodes.values():
        node.columns.sort()
    rows = [
        {
            "table": t,
            "column": c,
            "distance": row["min_distance"],
            "direct_distance": row["direct_min_distance"],
        }
        for (t, c), row in sorted(found.items(), key=lambda kv: (kv[1]["min_distance"], kv[0]))
    ]
    title = f"{direction} of {table}.{column}" + (f" (depth <= {limit})" if limit < 1 << 30 else "")
    message = None if rows else f"{table}.{column} has no {direction} columns"
    return Answer(title, ["table", "column", "distance", "direct_distance"], rows, graph, message)


# --- path --------------------------------------------------------------------------------------


def path_between(store: LineageStore, source: str, target: str) -> Answer:
    """Every lineage path from table ``source`` to table ``target`` (first MAX_PATHS listed)."""
    catalog = Catalog.read(store)
    a, a_col = catalog.resolve(source)
    b, b_col = catalog.resolve(target)
    if a_col or b_col:
        raise CliError("lineage path takes two tables (TABLE TABLE); use upstream TABLE.COLUMN")
    descendants = {r["descendant"] for r in store.rows("table_closure") if r["ancestor"] == a}
    ancestors = {r["ancestor"] for r in store.rows("table_closure") if r["descendant"] == b}
    graph = Graph(focus=b)
    columns = ["hops", "path"]
    title = f"paths from {a} to {b}"
    if b not in descendants:
        hint = (
            " (the other way round there is one)"
            if a in {r["descendant"] for r in store.rows("table_closure") if r["ancestor"] == b}
            else ""
        )
        return Answer(title, columns, [], None, f"no lineage path from {a} to {b}{hint}", False)
    members = ({a, b} | (descendants & ancestors)) if a != b else {a}
    for name in members:
        graph.node(name, catalog.kinds)
    _add_table_edges(store, graph, catalog, members)
    paths = _simple_paths(graph, a, b)
    rows = [{"hops": len(p) - 1, "path": " -> ".join(p)} for p in paths]
    message = f"first {MAX_PATHS} paths shown" if len(paths) >= MAX_PATHS else None
    return Answer(title, columns, rows, graph, message)


def _simple_paths(graph: Graph, start: str, end: str) -> list[list[str]]:
    out_edges: dict[str, list[str]] = defaultdict(list)
    for src, dst in sorted(graph.edges):
        if src != dst:
            out_edges[src].append(dst)
    paths: list[list[str]] = []
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    while stack and len(paths) < MAX_PATHS:
        node, path = stack.pop()
        if node == end and len(path) > 1:
            paths.append(path)
            continue
        for nxt in reversed(out_edges.get(node, [])):
            if nxt not in path:
                stack.append((nxt, [*path, nxt]))
    return sorted(paths, key=lambda p: (len(p), p))


# --- search ------------------------------------------------------------------------------------


def search(store: LineageStore, pattern: str) -> Answer:
    """Tables and columns whose name matches ``pattern`` (a glob when it has ``*?[``, else a
    case-insensitive substring)."""
    catalog = Catalog.read(store)
    wanted = canonical(pattern)
    if not wanted:
        raise CliError("search needs a non-empty pattern")
    glob = any(ch in wanted for ch in "*?[")

    def matches(text: str) -> bool:
        return fnmatch.fnmatchcase(text, wanted) if glob else wanted in text

    nodes = (
        {r["node"]: r for r in store.rows("lineage_nodes")} if store.exists("lineage_nodes") else {}
    )
    rows: list[Row] = []
    graph = Graph(focus=None)
    for table in sorted(catalog.kinds):
        info = nodes.get(table, {})
        hit_columns = sorted(
            c for c in catalog.columns.get(table, set()) if matches(f"{table}.{c}") or matches(c)
        )
        if matches(table):
            rows.append(
                {
                    "name": table,
                    "kind": catalog.kinds[table],
                    "upstream": info.get("in_degree"),
                    "downstream": info.get("out_degree"),
                }
            )
        for column in hit_columns:
            rows.append({"name": f"{table}.{column}", "kind": "column"})
        if matches(table) or hit_columns:
            node = graph.node(table, catalog.kinds)
            for column in hit_columns or sorted(catalog.columns.get(table, set())):
                node.add_column(column)
    _add_table_edges(store, graph, catalog, set(graph.nodes))
    message = None if rows else f"nothing matches {pattern!r}"
    return Answer(
        f"search {pattern!r}",
        ["name", "kind", "upstream", "downstream"],
        rows,
        graph,
        message,
        bool(rows),
    )


# --- statement ---------------------------------------------------------------------------------


def statement(store: LineageStore, fingerprint: str) -> Answer:
    """One parsed statement by fingerprint (or a unique prefix): masked SQL, parser, status,
    error, its edges and how often the log ran it."""
    wanted = fingerprint.strip().lower()
    if len(wanted) < 4:
        raise CliError("give at least 4 characters of the fingerprint")
    hits = [r for r in store.rows("parsed_statements") if r["fingerprint"].startswith(wanted)]
    if not hits:
        known = [r["fingerprint"] for r in store.rows("parsed_statements")]
        close = difflib.get_close_matches(wanted, [k[: len(wanted)] for k in known], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CliError(f"unknown statement fingerprint {fingerprint!r}{hint}")
    if len(hits) > 1:
        names = ", ".join(sorted(r["fingerprint"] for r in hits)[:5])
        raise CliError(f"fingerprint prefix {fingerprint!r} is ambiguous: {names}")
    row = hits[0]
    detail = {
        key: row[key]
        for key in (
            "fingerprint",
            "dialect",
            "statement_type",
            "parser",
            "parser_version",
            "status",
            "error_kind",
            "error",
            "parse_ms",
            "sources",
            "targets",
            "first_seen",
            "last_seen",
            "occurrences",
            "masked_sql",
        )
    }
    detail["log_rows"] = sum(
        1 for q in store.rows("queries") if q["fingerprint"] == row["fingerprint"]
    )
    kinds = {t: "table" for t in (row["sources"] or []) + (row["targets"] or [])}
    graph = Graph(focus=(row["targets"] or [None])[0])
    for name in kinds:
        graph.node(name, kinds)
    for edge in row["table_edges"] or []:
        graph.node(edge["source_table"], kinds)
        graph.node(edge["target_table"], kinds)
        graph.edge(edge["source_table"], edge["target_table"]).edge_kinds.add(
            (row["statement_type"] or "statement").lower()
        )
    for edge in row["column_edges"] or []:
        graph.node(edge["source_table"], kinds).add_column(edge["source_column"])
        graph.node(edge["target_table"], kinds).add_column(edge["target_column"])
        graph.edge(edge["source_table"], edge["target_table"]).column_edges.add(_column_edge(edge))
    return Answer(f"statement {row['fingerprint']}", list(detail), [detail], graph)


# --- runs and quarantine -----------------------------------------------------------------------

RUN_COLUMNS = [
    "run_id",
    "started_at",
    "ended_at",
    "status",
    "rows_read",
    "rows_relevant",
    "distinct_statements",
    "parsed_statements",
    "table_edges",
    "column_edges",
    "quarantined",
    "by_status",
]


def runs(store: LineageStore, limit: int = 20) -> Answer:
    """The newest extraction runs first."""
    rows = sorted(
        store.rows("lineage_runs"), key=lambda r: str(r["started_at"] or ""), reverse=True
    )[:limit]
    out = [{k: _plain(r.get(k)) for k in RUN_COLUMNS} for r in rows]
    return Answer("extraction runs", RUN_COLUMNS, out, message=None if out else "no runs yet")


QUARANTINE_COLUMNS = [
    "stage",
    "reason",
    "error_kind",
    "query_id",
    "fingerprint",
    "source_file",
    "masked_record",
    "last_seen",
]


def quarantine(store: LineageStore, stage: str | None = None, limit: int = 50) -> Answer:
    """Quarantined rows (load or parse stage), newest first."""
    rows = [r for r in store.rows("quarantine") if stage is None or r["stage"] == stage]
    rows.sort(key=lambda r: (str(r["last_seen"] or ""), r["quarantine_id"]), reverse=True)
    total = len(rows)
    out = [{k: _plain(r.get(k)) for k in QUARANTINE_COLUMNS} for r in rows[:limit]]
    message = f"{total} rows, first {limit} shown" if total > limit else None
    if not out:
        message = "nothing quarantined" + (f" at stage {stage}" if stage else "")
    return Answer("quarantine", QUARANTINE_COLUMNS, out, message=message)


def _plain(value: Any) -> Any:
    """Delta map columns arrive as lists of (key, value) pairs."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return dict(value)
    return value


def names(rows: Iterable[Row], key: str) -> list[str]:
    """The ``key`` values of ``rows`` (for tests and notebooks)."""
    return [r[key] for r in rows]
