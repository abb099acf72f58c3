"""The answers of the ``lineage`` command, each read from the lineage tables with pushed-down
predicates (:meth:`LineageStore.scan`): only the rows of the asked node are read.

The closures (``table_closure``, ``column_closure``) answer reachability; ``table_lineage`` and
``column_lineage`` give the edges drawn between the tables of the page shown; ``lineage_nodes``
knows every table (its kind and degrees). Each function returns an :class:`Answer`.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections import defaultdict
from typing import Any

from lineage_udfs.cli.model import ALL, Answer, Graph, GraphEdge, GraphNode, Page
from lineage_udfs.cli.store import (
    CliError,
    LineageStore,
    Row,
    all_of,
    any_of,
    eq,
    isin,
    literal,
    plain_name,
)

__all__ = ["Answer", "Graph", "GraphEdge", "GraphNode", "Page", "canonical"]

MAX_PATHS = 50
"""Paths listed by ``lineage path`` (the graph holds every edge on any of them)."""


def canonical(name: str) -> str:
    """Lower-case, unquoted: the tables store canonical lower-case qualified names."""
    return plain_name(name)


# --- names -------------------------------------------------------------------------------------


def kinds_of(store: LineageStore, names: set[str]) -> dict[str, str]:
    """The ``lineage_nodes`` kind of each of ``names`` (``table`` when unknown)."""
    kinds = dict.fromkeys(names, "table")
    if names and store.exists("lineage_nodes"):
        for row in store.rows("lineage_nodes", isin("node", names), ["node", "kind"]):
            kinds[row["node"]] = row["kind"] or "table"
    return kinds


def is_table(store: LineageStore, name: str) -> bool:
    """Whether table ``name`` is known: a node of ``lineage_nodes`` (every table of the edge
    tables, as of the last graph run), or, before any graph run, a table of an edge."""
    if store.exists("lineage_nodes"):
        return store.first("lineage_nodes", eq("node", name), ["node"]) is not None
    for table in ("table_lineage", "column_lineage"):
        where = any_of(eq("source_table", name), eq("target_table", name))
        if store.first(table, where, ["source_table"]):
            return True
    return False


def columns_of(store: LineageStore, table: str) -> set[str]:
    """The columns of ``table`` that column edges mention."""
    found: set[str] = set()
    for side in ("source", "target"):
        where = all_of(eq(f"{side}_table", table), f"{side}_column IS NOT NULL")
        column = store.scan("column_lineage", where, [f"{side}_column"]).column(0)
        found.update(v for v in column.unique().to_pylist() if v)
    return found


def resolve(store: LineageStore, name: str) -> tuple[str, str | None]:
    """``TABLE`` or ``TABLE.COLUMN`` -> (table, column or None).

    Raises:
        CliError: neither a known table nor a known table's column; names the closest.
    """
    wanted = store.follow(name)
    if not wanted:
        raise CliError("give a table name (TABLE or TABLE.COLUMN)")
    if is_table(store, wanted):
        return wanted, None
    table, _, column = wanted.rpartition(".")
    if table and is_table(store, table):
        known = columns_of(store, table)
        if column in known:
            return table, column
        hint = difflib.get_close_matches(column, sorted(known), n=3, cutoff=0.5)
        hint = hint or sorted(known)[:5]
        raise CliError(
            f"unknown column {column!r} of {table}"
            + (f"; did you mean {', '.join(table + '.' + c for c in hint)}?" if hint else "")
        )
    raise CliError(f"unknown table {name!r}" + _suggest(store, wanted))


def _suggest(store: LineageStore, wanted: str) -> str:
    names = sorted(_all_tables(store))
    leaf = wanted.rsplit(".", 1)[-1]
    close = [n for n in names if n.rsplit(".", 1)[-1] == leaf]
    near = [n for n in names if leaf[:3] in n] if len(names) > 20000 else names
    close += [n for n in difflib.get_close_matches(wanted, near, n=3, cutoff=0.6) if n not in close]
    if not close:
        return f" (no lineage table mentions it; {len(names)} tables known)"
    return f"; did you mean {', '.join(close[:3])}?"


def _all_tables(store: LineageStore, where: str | None = None) -> set[str]:
    """Every table name (matching ``where`` over a column ``name``)."""
    parts = [
        "SELECT source_table AS name FROM table_lineage",
        "SELECT target_table AS name FROM table_lineage",
    ]
    if store.exists("lineage_nodes"):
        parts.append("SELECT node AS name FROM lineage_nodes")
    query = " UNION ".join(
        f"SELECT name FROM ({p}) AS t WHERE name IS NOT NULL" + (f" AND ({where})" if where else "")
        for p in parts
    )
    return {v for v in store.sql(query).column("name").to_pylist() if v}


# --- upstream / downstream ---------------------------------------------------------------------


def lineage_of(
    store: LineageStore,
    name: str,
    *,
    direction: str,
    depth: int | None = None,
    page: Page = ALL,
) -> Answer:
    """Upstream (``direction="upstream"``) or downstream tables / columns of ``name``, nearest
    first; ``page`` of them listed and drawn."""
    if direction not in ("upstream", "downstream"):
        raise ValueError(direction)
    if depth is not None and depth < 1:
        raise CliError("--depth must be at least 1")
    wanted = store.follow(name)
    up = direction == "upstream"
    mine, other = ("descendant", "ancestor") if up else ("ancestor", "descendant")
    deeper = f"min_distance <= {int(depth)}" if depth is not None else None
    title_depth = f" (depth <= {depth})" if depth is not None else ""
    # a table first (one pushed-down scan); a column when no table has that name
    found = store.scan(
        "table_closure",
        all_of(eq(mine, wanted), f"{other} <> {literal(wanted)}", deeper),
        [other, "min_distance", "truncated"],
    )
    if found.num_rows:
        return _tables(store, wanted, found, up, page, f"{direction} of {wanted}{title_depth}")
    # then a column; only an empty answer pays for checking the name (and suggesting others)
    table, _, column = wanted.rpartition(".")
    columns = None
    if table and column:
        columns = _column_closure(store, table, column, up, deeper)
    if columns is None or not columns.num_rows:
        resolved, resolved_column = resolve(store, name)
        if resolved_column is None:
            title = f"{direction} of {resolved}{title_depth}"
            return _tables(store, resolved, found, up, page, title)
        if columns is None:
            columns = _column_closure(store, resolved, resolved_column, up, deeper)
        table, column = resolved, resolved_column
    title = f"{direction} of {table}.{column}{title_depth}"
    return _columns(store, table, column, columns, up, page, title)


def _column_closure(
    store: LineageStore, table: str, column: str, up: bool, deeper: str | None
) -> Any:
    mine, other = ("descendant", "ancestor") if up else ("ancestor", "descendant")
    cols = [f"{other}_table", f"{other}_column", "min_distance", "direct_min_distance"]
    return store.scan(
        "column_closure",
        all_of(
            eq(f"{mine}_table", table),
            eq(f"{mine}_column", column),
            f"NOT ({other}_table = {literal(table)} AND {other}_column = {literal(column)})",
            deeper,
        ),
        [*cols, "truncated"],
    )


def _sorted(found: Any, keys: list[str]) -> list[Row]:
    ordered = found.sort_by([(k, "ascending") for k in keys], null_placement="at_end")
    return list(ordered.to_pylist())


def _cap_note(store: LineageStore, found: Any, up: bool, what: str, name: str) -> str | None:
    """Say so when the closure cap cut the answer (``truncated`` rows in it)."""
    if not found.num_rows or not any(found.column("truncated").to_pylist()):
        return None
    cap = f"graph.max_closure_per_node = {store.closure_cap:,}" if store.closure_cap else "the cap"
    how = "raise it and rerun the graph stage with --full-refresh for the whole answer"
    if not up:
        return (
            f"incomplete: {name} reaches more {what} than the closure cap ({cap}); only the "
            f"nearest are listed: {how}"
        )
    cut = sum(1 for t in found.column("truncated").to_pylist() if t)
    return (
        f"may be incomplete: {cut} of these upstream {what} reach more than the closure cap "
        f"({cap}), and one whose nearest stop short of {name} is not listed: {how}"
    )


def _tables(
    store: LineageStore, table: str, found: Any, up: bool, page: Page, title: str
) -> Answer:
    other = "ancestor" if up else "descendant"
    everything = _sorted(found, ["min_distance", other])
    shown = page.cut(everything)
    graph = Graph(focus=table)
    kinds = kinds_of(store, {table, *(r[other] for r in shown)})
    graph.node(table, kinds).distance = 0
    for row in shown:
        graph.node(row[other], kinds).distance = row["min_distance"]
    known = add_table_edges(store, graph, kinds, set(graph.nodes))
    rows = [
        {
            "table": r[other],
            "kind": kinds.get(r[other], "table"),
            "distance": r["min_distance"],
            "columns": known.get(r[other], 0),
        }
        for r in shown
    ]
    direction = "upstream" if up else "downstream"
    message = page.note(len(everything)) if everything else f"{table} has no {direction} tables"
    cap = _cap_note(store, found, up, "tables", table)
    columns = ["table", "kind", "distance", "columns"]
    return Answer(title, columns, rows, graph, message, total=len(everything), cap=cap)


def add_table_edges(
    store: LineageStore, graph: Graph, kinds: dict[str, str], members: set[str]
) -> dict[str, int]:
    """Draw every table and column edge between ``members`` (pushed-down scans); returns how
    many columns column lineage mentions of each member (on any edge)."""
    names = store.names_of(members)  # the members and their aliases: edges stitched
    inside = all_of(isin("source_table", names), isin("target_table", names))
    ends = ("source_table", "target_table")
    table_edges = store.rows("table_lineage", inside, [*ends, "edge_kind"])
    for row in store.stitched(table_edges, *ends):
        graph.edge(row["source_table"], row["target_table"]).add_kind(row["edge_kind"])
    for row in store.stitched(store.rows("column_lineage", inside, COLUMN_EDGE), *ends):
        src, dst = row["source_table"], row["target_table"]
        edge = graph.edge(src, dst)
        edge.add_kind(row["edge_kind"])
        edge.column_edges.add(_column_edge(row))
        graph.node(src, kinds).add_column(row["source_column"])
        graph.node(dst, kinds).add_column(row["target_column"])
    for node in graph.nodes.values():
        node.columns.sort()
    return column_counts(store, members)


def column_counts(store: LineageStore, tables: set[str]) -> dict[str, int]:
    """How many distinct columns column lineage mentions of each of ``tables`` (counted by
    DataFusion: a hub's column edges are not read into Python)."""
    if not tables:
        return {}
    names = store.names_of(tables)
    sides = " UNION ALL ".join(
        f"SELECT {side}_table AS t, {side}_column AS c FROM column_lineage "
        f"WHERE {isin(f'{side}_table', names)} AND {side}_column IS NOT NULL"
        for side in ("source", "target")
    )
    if names == set(tables):
        found = store.sql(f"SELECT t, count(DISTINCT c) AS n FROM ({sides}) AS s GROUP BY t")
        return dict(zip(found.column("t").to_pylist(), found.column("n").to_pylist(), strict=True))
    # aliases among them: a node's columns are those of all its names
    pairs = store.sql(f"SELECT DISTINCT t, c FROM ({sides}) AS s")
    columns: dict[str, set[str]] = defaultdict(set)
    for t, c in zip(pairs.column("t").to_pylist(), pairs.column("c").to_pylist(), strict=True):
        columns[store.node_of(t)].add(c)
    return {t: len(c) for t, c in columns.items()}


COLUMN_EDGE = [
    "source_table",
    "source_column",
    "target_table",
    "target_column",
    "transformation_type",
    "transformation_subtype",
    "edge_kind",
]


def _column_edge(row: Row) -> tuple[str, str, str, str]:
    return (
        row["source_column"] or "",
        row["target_column"] or "",
        row["transformation_type"] or "",
        row["transformation_subtype"] or "",
    )


def _columns(
    store: LineageStore, table: str, column: str, found: Any, up: bool, page: Page, title: str
) -> Answer:
    other = "ancestor" if up else "descendant"
    everything = _sorted(found, ["min_distance", f"{other}_table", f"{other}_column"])
    shown = page.cut(everything)
    members = {(table, column), *((r[f"{other}_table"], r[f"{other}_column"]) for r in shown)}
    kinds = kinds_of(store, {t for t, _ in members})
    graph = Graph(focus=table, focus_column=column)
    graph.node(table, kinds).distance = 0
    graph.nodes[table].add_column(column)
    for row in shown:
        node = graph.node(row[f"{other}_table"], kinds)
        node.add_column(row[f"{other}_column"])
        distance = row["min_distance"]
        node.distance = distance if node.distance is None else min(node.distance, distance)
    names = store.names_of({t for t, _ in members})  # and their aliases: edges stitched
    inside = all_of(isin("source_table", names), isin("target_table", names))
    edges = store.rows("column_lineage", inside, COLUMN_EDGE)
    for row in store.stitched(edges, "source_table", "target_table"):
        src = (row["source_table"], row["source_column"])
        dst = (row["target_table"], row["target_column"])
        if src in members and dst in members:
            edge = graph.edge(src[0], dst[0])
            edge.add_kind(row["edge_kind"])
            edge.column_edges.add(_column_edge(row))
    for node in graph.nodes.values():
        node.columns.sort()
    rows = [
        {
            "table": r[f"{other}_table"],
            "column": r[f"{other}_column"],
            "distance": r["min_distance"],
            "direct_distance": r["direct_min_distance"],
        }
        for r in shown
    ]
    direction = "upstream" if up else "downstream"
    message = (
        page.note(len(everything)) if everything else f"{table}.{column} has no {direction} columns"
    )
    cap = _cap_note(store, found, up, "columns", f"{table}.{column}")
    columns = ["table", "column", "distance", "direct_distance"]
    return Answer(title, columns, rows, graph, message, total=len(everything), cap=cap)


# --- path --------------------------------------------------------------------------------------


def path_between(store: LineageStore, source: str, target: str, *, page: Page = ALL) -> Answer:
    """Lineage paths from table ``source`` to table ``target`` (the shortest first, at most
    ``min(MAX_PATHS, page.limit)``); the graph holds every edge between tables on a path."""
    a, a_col = resolve(store, source)
    b, b_col = resolve(store, target)
    if a_col or b_col:
        raise CliError("lineage path takes two tables (TABLE TABLE); use upstream TABLE.COLUMN")
    title = f"paths from {a} to {b}"
    columns = ["hops", "path"]
    down = store.scan("table_closure", eq("ancestor", a), ["descendant", "truncated"])
    descendants = set(down.column("descendant").to_pylist())
    if b not in descendants:
        back = store.first("table_closure", all_of(eq("ancestor", b), eq("descendant", a)))
        hint = " (the other way round there is one)" if back else ""
        cap = _cap_note(store, down, False, "tables", a)
        return Answer(title, columns, [], None, f"no lineage path from {a} to {b}{hint}", False,
                      total=0, cap=cap)  # fmt: skip
    up = store.scan("table_closure", eq("descendant", b), ["ancestor"])
    ancestors = set(up.column("ancestor").to_pylist())
    members = ({a, b} | (descendants & ancestors)) if a != b else {a}
    kinds = kinds_of(store, members)
    graph = Graph(focus=b)
    for name in members:
        graph.node(name, kinds)
    add_table_edges(store, graph, kinds, members)
    wanted = min(MAX_PATHS, page.limit + page.offset)
    paths = _simple_paths(graph, a, b, wanted)
    rows = page.cut([{"hops": len(p) - 1, "path": " -> ".join(p)} for p in paths])
    message = f"first {len(paths)} paths found" if len(paths) >= wanted else None
    return Answer(title, columns, rows, graph, message, total=len(paths))


def _simple_paths(graph: Graph, start: str, end: str, most: int) -> list[list[str]]:
    out_edges: dict[str, list[str]] = {}
    for src, dst in sorted(graph.edges):
        if src != dst:
            out_edges.setdefault(src, []).append(dst)
    paths: list[list[str]] = []
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    while stack and len(paths) < most:
        node, path = stack.pop()
        if node == end and len(path) > 1:
            paths.append(path)
            continue
        for nxt in reversed(out_edges.get(node, [])):
            if nxt not in path:
                stack.append((nxt, [*path, nxt]))
    return sorted(paths, key=lambda p: (len(p), p))


# --- search ------------------------------------------------------------------------------------


def name_filter(pattern: str, column: str) -> str:
    """DataFusion predicate: ``column`` matches ``pattern`` (a glob when it has ``*?[``, else a
    substring)."""
    if any(ch in pattern for ch in "*?["):
        regex = fnmatch.translate(pattern)  # '(?s:...)\\Z'
        regex = "^" + regex.removesuffix("\\Z") + "$"
        return f"regexp_like({column}, {literal(regex)})"
    return f"strpos({column}, {literal(pattern)}) > 0"


def search(store: LineageStore, pattern: str, *, page: Page = ALL) -> Answer:
    """Tables and columns whose name matches ``pattern`` (a glob when it has ``*?[``, else a
    substring of the lower-case name); tables first, by name."""
    wanted = canonical(pattern)
    if not wanted:
        raise CliError("search needs a non-empty pattern")
    tables = sorted(_all_tables(store, name_filter(wanted, "name")))
    pairs: set[tuple[str, str]] = set()
    for side in ("source", "target"):
        t, c = f"{side}_table", f"{side}_column"
        where = all_of(
            f"{c} IS NOT NULL",
            any_of(name_filter(wanted, c), name_filter(wanted, f"concat({t}, '.', {c})")),
        )
        query = f"SELECT DISTINCT {t} AS t, {c} AS c FROM column_lineage WHERE {where}"
        found = store.sql(query)
        pairs.update(zip(found.column("t").to_pylist(), found.column("c").to_pylist(), strict=True))
    hits: list[Row] = [{"name": t, "kind": "table"} for t in tables]
    hits += [{"name": f"{t}.{c}", "kind": "column", "table": t} for t, c in sorted(pairs)]
    shown = page.cut(hits)
    shown_tables = {r["name"] for r in shown if r["kind"] != "column"}
    info = {}
    if shown_tables and store.exists("lineage_nodes"):
        cols = ["node", "kind", "in_degree", "out_degree"]
        info = {r["node"]: r for r in store.rows("lineage_nodes", isin("node", shown_tables), cols)}
    in_graph = shown_tables | {r["table"] for r in shown if r["kind"] == "column"}
    kinds = kinds_of(store, in_graph)
    graph = Graph(focus=None)
    rows: list[Row] = []
    for hit in shown:
        if hit["kind"] == "column":
            graph.node(hit["table"], kinds).add_column(hit["name"][len(hit["table"]) + 1 :])
            rows.append({"name": hit["name"], "kind": "column"})
        else:
            node = info.get(hit["name"], {})
            graph.node(hit["name"], kinds)
            rows.append(
                {
                    "name": hit["name"],
                    "kind": kinds.get(hit["name"], "table"),
                    "upstream": node.get("in_degree"),
                    "downstream": node.get("out_degree"),
                }
            )
    add_table_edges(store, graph, kinds, set(graph.nodes))
    message = page.note(len(hits)) if hits else f"nothing matches {pattern!r}"
    columns = ["name", "kind", "upstream", "downstream"]
    return Answer(f"search {pattern!r}", columns, rows, graph, message, bool(hits), len(hits))
