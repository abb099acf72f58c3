"""The OpenLineage Spark listener's recorded output (tests/data/openlineage/spark_listener, made
by tests/engine/listener_job.py; its README has the command): real events through the
``openlineage`` source's line reader, the identity rules and the parser's engine conventions,
without Spark. ``tests/engine/test_listener_testbed.py`` runs the same on fresh events."""

from __future__ import annotations

import json

from lineage_udfs.core.identity import location_links, resolve, storage_links, symlink_links
from lineage_udfs.core.ol_events import event_lineage
from lineage_udfs.core.options import ENGINE_CONVENTIONS, ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.sources.openlineage import event_row
from tests.support.listener_testbed import (
    FIXTURE,
    direct,
    listener_merge_edges,
    parser_merge_edges,
    read_events,
)

EVENTS = read_events(FIXTURE / "events.jsonl")


def test_every_recorded_event_passes_the_source_validation() -> None:
    lines = (FIXTURE / "events.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [event_row(line) for line in lines if line.strip()]
    assert len(rows) == len(EVENTS) > 0
    assert [r["reason"] for r in rows if r["reason"]] == []
    assert {r["producer"] for r in rows} == {"openlineage:spark"}


def test_the_merge_both_producers_see_has_one_set_of_column_edges() -> None:
    engine = listener_merge_edges(EVENTS)
    assert direct(engine)
    conventions = ParserOptions(**ENGINE_CONVENTIONS["openlineage_spark"])
    assert direct(parser_merge_edges(conventions)) == direct(engine)
    own = {(e[0], e[1], e[3], e[5]) for e in direct(engine) if e[0] == e[2]}
    assert own == {
        ("shop.customers", "id", "id", "IDENTITY"),  # the ON key: t.id <- t.id
        ("shop.customers", "segment", "segment", "IDENTITY"),  # not set by the UPDATE
    }
    # the listener gives no INDIRECT (JOIN) edge for the ON condition, the parser does
    assert engine == direct(engine)
    assert {e[5] for e in parser_merge_edges(conventions) - engine} == {"JOIN"}
    default = direct(parser_merge_edges(ParserOptions()))
    assert direct(engine) - default == {e for e in direct(engine) if e[0] == e[2]}


def _graph(identity: bool) -> int:
    """Connected components of the table edges of both producers, listener nodes merged by
    the symlink, location and storage-spelling rules when ``identity``."""
    edges: list[tuple[str, str]] = []
    symlinks: list[tuple[str, str, str]] = []
    for event in EVENTS:
        lin = event_lineage(event)
        edges += lin.table_edges
        symlinks += [(s.node, s.alias, s.type) for s in lin.symlinks]
    parser = LineageParser()
    for line in (FIXTURE / "query_log.jsonl").read_text(encoding="utf-8").splitlines():
        result = parser.parse(json.loads(line)["query_text"], dialect="spark")
        edges += [(s, t) for s in result.sources for t in result.targets]
    locations = [
        (row["name"], row["location"])
        for row in map(json.loads, (FIXTURE / "table_locations.jsonl").read_text().splitlines())
    ]
    nodes = {n for edge in edges for n in edge}
    links = (
        symlink_links(symlinks) + location_links(locations) + storage_links(nodes)
        if identity
        else []
    )
    canonical = resolve(links, 0.9)
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        node = canonical.get(node, node)
        parent.setdefault(node, node)
        while parent[node] != node:
            node = parent[node]
        return node

    for s, t in edges:
        parent[find(s)] = find(t)
    return len({find(n) for n in nodes})


def test_identity_joins_the_listener_and_the_log_into_one_graph() -> None:
    assert _graph(identity=True) == 1
    assert _graph(identity=False) == 4
