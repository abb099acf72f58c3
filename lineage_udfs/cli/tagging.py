"""``lineage tags`` and ``lineage pii``: where tags are, where they flow and where they stopped.

Both read ``column_tags`` (written by the graph stage with ``tags.enabled``; docs/tags.md) and
``column_lineage``. A tag *stopped* at a column when an edge leaves a column holding it (declared
or propagated) for a column that does not hold it; the reason is the edge's: an INDIRECT edge
never carries a tag, a masking edge masks it, an aggregation is not carried with
``tags.carry_aggregation`` off, and a carrying edge not followed is past ``tags.max_depth``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from lineage_udfs.cli.catalog import Catalog, draw_column_edges
from lineage_udfs.cli.impact import _consumers, _fingerprints_reading, _merged, owners
from lineage_udfs.cli.queries import Answer, Graph
from lineage_udfs.cli.store import CliError, LineageStore, Row

Col = tuple[str, str]
HOLDS = ("declared", "propagated")
TAG_COLUMNS = ["column", "tag", "status", "depth", "origin", "via", "why"]


def _tag_rows(store: LineageStore) -> list[Row]:
    if not store.exists("column_tags"):
        raise CliError(
            "no column_tags table: set tags.enabled (and a tags file or source) and run the"
            " graph stage (docs/tags.md)"
        )
    return store.rows("column_tags")


def _why(row: Row) -> str:
    if row["status"] == "declared":
        return row["rule"]
    if row["status"] == "masked":
        return "masking function: stops here"
    return f"DIRECT {row['via_subtype']} edge carries it"


def _out(row: Row) -> Row:
    return {
        "column": f"{row['table_name']}.{row['column_name']}",
        "tag": row["tag"] + (f"={row['tag_value']}" if row["tag_value"] else ""),
        "status": row["status"],
        "depth": row["depth"],
        "origin": f"{row['origin_table']}.{row['origin_column']}",
        "via": f"{row['via_table']}.{row['via_column']}" if row["via_table"] else None,
        "why": _why(row),
    }


def _stops(tags: list[Row], edges: list[Row], tagged_with: dict[str, set[Col]]) -> list[Row]:
    """Edges that leave a column holding a tag for one that does not hold it at all."""
    holders: dict[Col, list[Row]] = defaultdict(list)
    for row in tags:
        if row["status"] in HOLDS:
            holders[(row["table_name"], row["column_name"])].append(row)
    found: dict[tuple[Col, str], Row] = {}
    for e in edges:
        src = (e["source_table"], e["source_column"])
        dst = (e["target_table"], e["target_column"])
        if src not in holders or not dst[1]:
            continue
        for held in holders[src]:
            if dst in tagged_with[held["tag"]] and not _masked_only(tags, dst, held["tag"]):
                continue
            if e["transformation_type"] == "INDIRECT":
                why = f"INDIRECT {e['transformation_subtype']} edge: never carries a tag"
            elif e["transformation_subtype"] == "MASKED":
                why = "masking function: stops here"
            elif e["transformation_subtype"] == "AGGREGATION":
                why = "DIRECT AGGREGATION edge: not carried (tags.carry_aggregation off)"
            else:
                why = "past tags.max_depth"
            key = (dst, held["tag"])
            status = "masked" if e["transformation_subtype"] == "MASKED" else "stopped"
            if key in found and found[key]["status"] == "masked":
                continue
            found[key] = {
                "column": f"{dst[0]}.{dst[1]}",
                "tag": held["tag"],
                "status": status,
                "depth": (held["depth"] or 0) + 1,
                "origin": f"{held['origin_table']}.{held['origin_column']}",
                "via": f"{src[0]}.{src[1]}",
                "why": why,
            }
    return [found[k] for k in sorted(found)]


def _masked_only(tags: list[Row], col: Col, tag: str) -> bool:
    return any(
        (r["table_name"], r["column_name"]) == col and r["tag"] == tag and r["status"] == "masked"
        for r in tags
    )


def tags_of(store: LineageStore, name: str) -> Answer:
    """The tags of a column or of a table's columns; for each tag whose origin is there, every
    column it reached and where it stopped, and why."""
    catalog = Catalog.read(store)
    rows = _tag_rows(store)
    wanted = store.follow(name)
    table, column = (wanted, None) if wanted in catalog.kinds else _resolve(catalog, rows, wanted)

    def here(t: str, c: str) -> bool:
        return t == table and (column is None or c == column)

    own = [r for r in rows if here(r["table_name"], r["column_name"])]
    origins = {
        (r["tag"], r["table_name"], r["column_name"]) for r in own if r["status"] == "declared"
    }
    # what flowed from here (also what arrived here flowed on: its rows have the same origin)
    sources = {(r["tag"], r["origin_table"], r["origin_column"]) for r in own} | origins
    flow = [
        r
        for r in rows
        if (r["tag"], r["origin_table"], r["origin_column"]) in sources
        and not here(r["table_name"], r["column_name"])
    ]
    tagged_with: dict[str, set[Col]] = defaultdict(set)
    for r in rows:
        tagged_with[r["tag"]].add((r["table_name"], r["column_name"]))
    members = [*own, *flow]
    edges = store.stitched(store.rows("column_lineage"), "source_table", "target_table")
    stops = _stops(members, edges, tagged_with)
    stops = [s for s in stops if not any(_out(m)["column"] == s["column"] and
                                          m["tag"] == s["tag"] for m in members)]  # fmt: skip
    out = [_out(r) for r in sorted(own, key=_order)]
    out += [_out(r) for r in sorted(flow, key=_order)]
    out += stops
    graph = _graph(catalog, edges, out)
    what = f"{table}.{column}" if column else table
    message = None
    if not own and not flow:
        message = f"{what} holds no tag and no tag flows from it"
    return Answer(f"tags of {what}", TAG_COLUMNS, out, graph, message)


def _order(r: Row) -> tuple[Any, ...]:
    return (r["tag"], r["depth"], r["table_name"], r["column_name"])


def _resolve(catalog: Catalog, rows: list[Row], wanted: str) -> tuple[str, str | None]:
    table, _, column = wanted.rpartition(".")
    if any((r["table_name"], r["column_name"]) == (table, column) for r in rows):
        return table, column  # a declared column the lineage does not mention
    return catalog.resolve(wanted)


def _graph(catalog: Catalog, edges: list[Row], out: list[Row]) -> Graph:
    graph = Graph(focus=None)
    members: set[Col] = set()
    for r in out:
        table, _, column = r["column"].rpartition(".")
        members.add((table, column))
        graph.node(table, catalog.kinds).add_column(column)
        mark = r["tag"] if r["status"] in HOLDS else f"{r['tag']} {r['status']}"
        previous = graph.marks.get((table, column))
        graph.marks[(table, column)] = f"{previous}, {mark}" if previous else mark
        if graph.focus is None:
            graph.focus, graph.focus_column = table, column
    return draw_column_edges(graph, edges, members)


PII_COLUMNS = ["table", "columns", "masked", "origins", "owner", "users", "statements", "reads"]


def pii(store: LineageStore, tag: str = "pii", days: int = 30) -> Answer:
    """Every table holding ``tag`` (declared or propagated), its masked columns, where the tag
    came from, and who read those columns in the last ``days`` of the log."""
    if days < 1:
        raise CliError("--days must be at least 1")
    tag = tag.strip().lower()
    rows = [r for r in _tag_rows(store) if r["tag"] == tag]
    by_table: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_table[r["table_name"]].append(r)
    edges = store.stitched(store.rows("column_lineage"), "source_table", "target_table")
    reading = _fingerprints_reading(edges)
    held = {(r["table_name"], r["column_name"]) for r in rows if r["status"] in HOLDS}
    fps = {fp for col in held for fp in reading.get(col, ())}
    consumers = _consumers(store, fps, days) if fps else {}
    owner_of = owners(store)
    out = []
    for table in sorted(by_table):
        mine = by_table[table]
        holding = sorted(r["column_name"] for r in mine if r["status"] in HOLDS)
        if not holding:
            continue
        cols = [(table, c) for c in holding]
        who = _merged(
            consumers[fp] for col in cols for fp in reading.get(col, ()) if fp in consumers
        )
        out.append(
            {
                "table": table,
                "columns": holding,
                "masked": sorted(r["column_name"] for r in mine if r["status"] == "masked"),
                "origins": sorted({f"{r['origin_table']}.{r['origin_column']}" for r in mine}),
                "owner": owner_of.get(table),
                **who.as_row(),
            }
        )
    graph = _graph(Catalog.read(store), edges, [_out(r) for r in rows])
    masked_only = sorted(
        t for t, mine in by_table.items() if all(r["status"] == "masked" for r in mine)
    )
    message = None if out else f"no table holds tag {tag!r}"
    if masked_only:
        message = (message + "; " if message else "") + (
            f"{tag} only masked in: {', '.join(masked_only)}"
        )
    return Answer(f"tables holding {tag} (readers: last {days} days)", PII_COLUMNS, out, graph,
                  message, found=bool(out))  # fmt: skip
