"""Lineage as of a date: the table edges of a node that appeared and went since then, from the
Delta history (time travel) of ``table_lineage`` and ``column_lineage``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lineage_udfs.cli.model import ALL, Answer, Graph, Page
from lineage_udfs.cli.store import CliError, LineageStore, any_of, eq, parse_as_of

EDGE = ("source_table", "target_table", "edge_kind")


def _read(table: Any, columns: list[str], where: str | None) -> list[dict[str, Any]]:
    import pyarrow as pa

    reader = pa.RecordBatchReader.from_stream(table.scan(columns=columns, predicate=where))
    return list(reader.read_all().to_pylist())


def _edges(table: Any, node: str) -> set[tuple[str, str, str]]:
    """Distinct (source, target, edge kind) of ``node``'s edges in a ``DeltaTable``."""
    if table is None:
        return set()
    where = any_of(eq("source_table", node), eq("target_table", node))
    found = _read(table, list(EDGE), where)
    return {(r["source_table"], r["target_table"], r["edge_kind"] or "") for r in found}


def _columns(table: Any, node: str) -> set[tuple[str, ...]]:
    if table is None:
        return set()
    cols = ["source_table", "source_column", "target_table", "target_column", "edge_kind"]
    where = any_of(eq("source_table", node), eq("target_table", node))
    found = _read(table, cols, where)
    return {tuple(r[c] or "" for c in cols) for r in found}


def _moment(store: LineageStore, then: int | datetime) -> datetime:
    """``then`` as a time: a ``table_lineage`` version as the last moment it was the newest
    (just before the next version's commit), so that ``column_lineage`` is read as it stood
    beside it."""
    if isinstance(then, datetime):
        return then
    commits = {int(c["version"]): int(c["timestamp"]) for c in store.history("table_lineage")}
    if then not in commits:
        raise CliError(f"table_lineage has no version {then}")
    following = commits.get(then + 1)
    if following is None:
        return datetime.now(UTC)
    return datetime.fromtimestamp((following - 1) / 1000, UTC)


def _when(version: int | datetime, store: LineageStore, table: str) -> str:
    if isinstance(version, datetime):
        return version.isoformat()
    for commit in store.history(table):
        if int(commit["version"]) == version:
            stamp = datetime.fromtimestamp(int(commit["timestamp"]) / 1000, UTC)
            return f"version {version} ({stamp:%Y-%m-%d %H:%M} UTC)"
    return f"version {version}"


def diff(store: LineageStore, name: str, since: str, *, page: Page = ALL) -> Answer:
    """The table edges into or out of ``name`` that appeared or went between ``since`` (a date,
    a timestamp or a ``table_lineage`` version) and the state read (the newest, or
    ``--as-of``); with the count of column edges that changed on each."""
    from lineage_udfs.cli.queries import kinds_of

    then = parse_as_of(since)
    if then is None:
        raise CliError("--since needs a date, a timestamp or a Delta version")
    node = store.follow(name)
    before = _edges(store.at("table_lineage", then), node)
    now = _edges(store.table("table_lineage"), node)
    moment = _moment(store, then)  # column_lineage has versions of its own
    columns_before = _columns(store.at("column_lineage", moment), node)
    columns_now = _columns(store.table("column_lineage"), node)
    if not before and not now and not columns_before and not columns_now:
        from lineage_udfs.cli.queries import resolve

        resolve(store, name)  # an unknown name: one line with the closest known names
    changed: list[dict[str, Any]] = []
    for change, edges in (("appeared", now - before), ("went", before - now)):
        for src, dst, kind in edges:
            changed.append(
                {"change": change, "source": src, "target": dst, "edge_kind": kind or None}
            )
    for change, cols in (("appeared", columns_now - columns_before),
                         ("went", columns_before - columns_now)):  # fmt: skip
        counted: dict[tuple[str, str], int] = {}
        for col in cols:
            counted[(col[0], col[2])] = counted.get((col[0], col[2]), 0) + 1
        for row in changed:
            if row["change"] == change:
                row[f"columns_{change}"] = counted.pop((row["source"], row["target"]), 0)
        for (src, dst), n in counted.items():  # column edges changed on an edge that stayed
            changed.append({"change": f"columns {change}", "source": src, "target": dst,
                            "edge_kind": None, f"columns_{change}": n})  # fmt: skip
    changed.sort(key=lambda r: (r["change"], r["source"], r["target"], r["edge_kind"] or ""))
    total = len(changed)
    rows = [
        {
            "change": r["change"],
            "source": r["source"],
            "target": r["target"],
            "edge_kind": r["edge_kind"],
            "column_edges": r.get("columns_appeared", 0) + r.get("columns_went", 0),
        }
        for r in page.cut(changed)
    ]
    kinds = kinds_of(store, {node, *(r["source"] for r in rows), *(r["target"] for r in rows)})
    graph = Graph(focus=node)
    graph.node(node, kinds)
    for row in rows:
        graph.node(row["source"], kinds)
        graph.node(row["target"], kinds)
        graph.edge(row["source"], row["target"]).add_kind(f"{row['change']}")
    since_text = _when(then, store, "table_lineage")
    title = f"lineage of {node} changed since {since_text}"
    message = page.note(total) if changed else f"no edge of {node} changed since {since_text}"
    columns = ["change", "source", "target", "edge_kind", "column_edges"]
    return Answer(title, columns, rows, graph, message, total=total)
