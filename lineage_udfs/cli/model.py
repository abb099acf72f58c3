"""What the ``lineage`` command answers with: an :class:`Answer` (rows, a message, the page shown
of a longer answer) and, where the question has one, the lineage :class:`Graph` of the answer
(tables as nodes with their columns, edges with their transformation types) for ``--html`` /
``--svg`` / ``--json``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from lineage_udfs.cli.store import Row


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

    def add_kind(self, kind: str | None) -> None:
        """Record an edge kind (a null kind, as benchmark-made or foreign rows have, is none)."""
        if kind:
            self.edge_kinds.add(kind)

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
                    "edge_kinds": sorted(k for k in e.edge_kinds if k),
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


@dataclass(frozen=True)
class Page:
    """Which rows of a longer answer are shown: ``limit`` rows from ``offset`` (0-based)."""

    limit: int = 200
    offset: int = 0

    def cut(self, rows: list[Row]) -> list[Row]:
        return rows[self.offset : self.offset + self.limit]

    def note(self, total: int, what: str = "rows") -> str | None:
        """``rows 1-200 of 9,812 shown (--limit / --offset for others)``, or None when all are."""
        shown = max(0, min(self.limit, total - self.offset))
        if self.offset == 0 and shown >= total:
            return None
        first = self.offset + 1 if shown else self.offset
        return (
            f"{what} {first:,}-{self.offset + shown:,} of {total:,} shown "
            f"(--limit N / --offset N for others)"
        )


ALL = Page(limit=1 << 62)
"""Every row (the notebook's and tests' default)."""


@dataclass
class Answer:
    """What a command prints: a title, rows with ``columns``, an optional graph and message.

    Attributes:
        total: rows of the whole answer (``rows`` is the page shown of them).
        cap: why the answer may be incomplete (a cap of the graph stage that cut it, with how
            to raise it); None when it is whole.
        as_of: the state of the tables the answer is from (``--as-of``), or None: the newest.
        followed: the names given that are aliases of another graph node, and that node
            (``{"name", "node"}``): the answer is for the node.
    """

    title: str
    columns: list[str]
    rows: list[Row]
    graph: Graph | None = None
    message: str | None = None
    found: bool = True
    total: int | None = None
    cap: str | None = None
    as_of: str | None = None
    followed: list[dict[str, str]] = field(default_factory=list)

    def notes(self) -> list[str]:
        """The lines printed under the rows: message, cap."""
        return [n for n in (self.message, self.cap) if n]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "rows": self.rows}
        out["total"] = len(self.rows) if self.total is None else self.total
        if self.message:
            out["message"] = self.message
        out["complete"] = self.cap is None
        if self.cap:
            out["cap"] = self.cap
        if self.as_of:
            out["as_of"] = self.as_of
        if self.followed:
            out["aliases_followed"] = self.followed
        if self.graph is not None:
            out["graph"] = self.graph.to_dict()
        return out
