"""Graph analytics on hand-made graphs, each output compared with a brute-force reference.

The references are plain Python (BFS / DFS / union-find) computed in the test from the same
edge list, so every assertion compares the Spark result with an independent computation.
"""

from __future__ import annotations

from collections import defaultdict, deque

import pytest
from pyspark.sql import DataFrame, SparkSession

from lineage_udfs.spark.graph.analyze import analyze
from lineage_udfs.spark.graph.frames import reach_paths
from lineage_udfs.spark.graph.options import GraphOptions
from lineage_udfs.spark.graph.scope import PreviousRun, changed_rows

Edge = tuple[str, str]

# --- brute-force references ------------------------------------------------------------------


def _succ(edges: list[Edge]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for s, d in edges:
        out[s].add(d)
    return out


def ref_components(edges: list[Edge]) -> dict[str, str]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            x = parent[x]
        return x

    for s, d in edges:
        a, b = find(s), find(d)
        if a != b:
            parent[max(a, b)] = min(a, b)
    members: dict[str, list[str]] = defaultdict(list)
    for x in list(parent):
        members[find(x)].append(x)
    return {x: min(group) for group in members.values() for x in group}


def ref_closure(edges: list[Edge], max_depth: int) -> dict[Edge, int]:
    """(ancestor, descendant) -> min distance within max_depth; includes (x, x) on cycles."""
    succ = _succ(edges)
    out: dict[Edge, int] = {}
    for start in {s for s, _ in edges}:
        seen: dict[str, int] = {}
        queue = deque([(start, 0)])
        while queue:
            node, dist = queue.popleft()
            if dist == max_depth:
                continue
            for nxt in succ[node]:
                if nxt not in seen:
                    seen[nxt] = dist + 1
                    queue.append((nxt, dist + 1))
        for node, dist in seen.items():
            out[(start, node)] = dist
    return out


def ref_on_cycle(edges: list[Edge]) -> set[str]:
    """Nodes that reach themselves (any number of hops)."""
    succ = _succ(edges)
    out = set()
    for start in {s for s, _ in edges}:
        seen: set[str] = set()
        queue = deque([start])
        while queue:
            for nxt in succ[queue.popleft()]:
                if nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        if start in seen:
            out.add(start)
    return out


def ref_paths(edges: list[Edge], max_depth: int) -> set[tuple[tuple[str, ...], bool]]:
    """Simple root-to-leaf paths (path, truncated) with the module's documented rules."""
    succ = _succ([(s, d) for s, d in edges if s != d])
    nodes = {x for e in edges for x in e}
    has_in = {d for s, d in edges if s != d}
    out: set[tuple[tuple[str, ...], bool]] = set()

    def walk(path: tuple[str, ...]) -> None:
        last = path[-1]
        if not succ[last]:
            out.add((path, False))
            return
        nexts = [n for n in succ[last] if n not in path]
        if not nexts:
            out.add((path, False))  # every successor is on the path: a cycle ends it
            return
        if len(path) - 1 == max_depth:
            out.add((path, True))
            return
        for n in nexts:
            walk((*path, n))

    for root in sorted(nodes - has_in):
        if succ[root]:
            walk((root,))
    return out


# --- helpers ---------------------------------------------------------------------------------


def _tables(spark: SparkSession, edges: list[Edge], kind: str = "query") -> DataFrame:
    return spark.createDataFrame(
        [(s, d, kind) for s, d in edges],
        "source_table string, target_table string, edge_kind string",
    )


def _no_columns(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame(
        [],
        "source_table string, source_column string, target_table string, target_column string,"
        " transformation_type string",
    )


def _check_all(spark: SparkSession, edges: list[Edge], options: GraphOptions) -> None:
    result, _ = analyze(_tables(spark, edges), _no_columns(spark), options)
    comps = ref_components(edges)
    closure = ref_closure(edges, options.max_depth)

    nodes = {r["node"]: r for r in result.nodes.collect()}
    assert set(nodes) == set(comps)
    for name, row in nodes.items():
        assert row["component_id"] == comps[name], name
        assert row["component_size"] == sum(1 for c in comps.values() if c == comps[name])
        assert row["on_cycle"] == (name in ref_on_cycle(edges)), name
        proper = [(s, d) for s, d in edges if s != d]
        assert row["in_degree"] == len({s for s, d in proper if d == name}), name
        assert row["out_degree"] == len({d for s, d in proper if s == name}), name
        assert row["is_root"] == (row["in_degree"] == 0)
        assert row["is_leaf"] == (row["out_degree"] == 0)

    got_closure = {
        (r["ancestor"], r["descendant"]): r["min_distance"] for r in result.table_closure.collect()
    }
    assert got_closure == {k: v for k, v in closure.items() if k[0] != k[1]}
    assert not any(r["truncated"] for r in result.table_closure.collect())

    got_paths = {(tuple(r["path"]), r["truncated"]) for r in result.paths.collect()}
    assert got_paths == ref_paths(edges, options.max_depth)
    for r in result.paths.collect():
        assert r["depth"] == len(r["path"]) - 1
        assert r["root"] == r["path"][0] and r["leaf"] == r["path"][-1]


# --- cases -----------------------------------------------------------------------------------

DIAMOND = [("raw.a", "stg.b"), ("raw.a", "stg.c"), ("stg.b", "mart.d"), ("stg.c", "mart.d")]
CYCLE = [("raw.x", "hub.h"), ("hub.h", "stg.y"), ("stg.y", "hub.h"), ("stg.y", "rpt.z")]
SELF_LOOP = [("raw.s", "stg.t"), ("stg.t", "stg.t"), ("stg.t", "mart.u")]
ISLANDS = [("a.one", "a.two"), ("b.one", "b.two"), ("b.two", "b.three"), ("c.solo", "c.solo")]
LONG_CYCLE = [(f"loop.n{i:02d}", f"loop.n{(i + 1) % 25:02d}") for i in range(25)]
CHAIN_21 = [(f"chain.n{i:02d}", f"chain.n{i + 1:02d}") for i in range(21)]


@pytest.mark.parametrize(
    "edges",
    [DIAMOND, CYCLE, SELF_LOOP, ISLANDS + DIAMOND, CHAIN_21],
    ids=["diamond", "cycle", "self_loop", "islands", "chain_21"],
)
def test_analyze_matches_brute_force(spark: SparkSession, edges: list[Edge]) -> None:
    _check_all(spark, edges, GraphOptions(max_depth=20, max_paths_per_root=100))


def test_chain_of_21_hops_is_cut_at_20(spark: SparkSession) -> None:
    result, _ = analyze(_tables(spark, CHAIN_21), _no_columns(spark), GraphOptions(max_depth=20))
    paths = result.paths.collect()
    assert [(r["depth"], r["truncated"]) for r in paths] == [(20, True)]
    far = result.table_closure.where("ancestor = 'chain.n00'").agg({"min_distance": "max"})
    assert far.first()[0] == 20
    assert result.table_closure.where(
        "descendant = 'chain.n21' AND ancestor = 'chain.n00'"
    ).isEmpty()


def test_paths_per_root_are_capped_and_flagged(spark: SparkSession) -> None:
    fan = [("raw.r", f"stg.m{i}") for i in range(5)] + [(f"stg.m{i}", "mart.l") for i in range(5)]
    result, _ = analyze(_tables(spark, fan), _no_columns(spark), GraphOptions(max_paths_per_root=3))
    rows = result.paths.collect()
    valid = {p for p, _ in ref_paths(fan, 20)}
    assert len(rows) == 3
    assert all(tuple(r["path"]) in valid and r["truncated"] for r in rows)


def test_column_closure_tells_direct_from_indirect(spark: SparkSession) -> None:
    tables = _tables(spark, [("raw.o", "stg.o"), ("stg.o", "mart.m")])
    columns = spark.createDataFrame(
        [
            ("raw.o", "amount", "stg.o", "amount", "DIRECT"),
            ("raw.o", "status", "stg.o", "amount", "INDIRECT"),
            ("stg.o", "amount", "mart.m", "total", "DIRECT"),
        ],
        "source_table string, source_column string, target_table string, target_column string,"
        " transformation_type string",
    )
    result, _ = analyze(tables, columns, GraphOptions())
    got = {
        (
            r["ancestor_table"],
            r["ancestor_column"],
            r["descendant_table"],
            r["descendant_column"],
        ): (
            r["min_distance"],
            r["direct_min_distance"],
        )
        for r in result.column_closure.collect()
    }
    assert got == {
        ("raw.o", "amount", "stg.o", "amount"): (1, 1),
        ("raw.o", "status", "stg.o", "amount"): (1, None),
        ("stg.o", "amount", "mart.m", "total"): (1, 1),
        ("raw.o", "amount", "mart.m", "total"): (2, 2),
        ("raw.o", "status", "mart.m", "total"): (2, None),
    }


def test_incremental_scope_is_the_bounded_upstream_of_the_change(spark: SparkSession) -> None:
    before = DIAMOND + ISLANDS
    after = [*DIAMOND, *ISLANDS, ("b.three", "b.zz")]  # "b.one" stays the smallest name
    options = GraphOptions(max_depth=2)
    first, _ = analyze(_tables(spark, before), _no_columns(spark), options)
    previous = PreviousRun(
        table_changes=changed_rows(_tables(spark, before), _tables(spark, after)),
        column_changes=_no_columns(spark),
        components=first.components,
        nodes=first.nodes,
    )
    second, scope = analyze(_tables(spark, after), _no_columns(spark), options, previous=previous)
    assert scope is not None
    assert {r["component_id"] for r in scope.components.collect()} == {"b.one"}
    assert {r["component_id"] for r in second.nodes.collect()} == {"b.one"}
    # closures: the changed edge's source and what reaches it within max_depth - 1 = 1 hop
    assert {r["ancestor"] for r in scope.closure_sources.collect()} == {"b.three", "b.two"}
    assert {r["ancestor"] for r in second.table_closure.collect()} == {"b.three", "b.two"}
    # paths: what reaches an end of the changed edge within max_depth = 2 hops
    assert {r["root"] for r in scope.path_roots.collect()} == {"b.zz", "b.three", "b.two", "b.one"}
    assert {r["root"] for r in second.paths.collect()} == {"b.one"}
    assert scope.column_sources.isEmpty()
    # the new node's component id is not its own name: rows keyed by it move (none stored)
    assert [tuple(r) for r in scope.relabelled.collect()] == [("b.zz", "b.one")]
    assert second.recomputed == {"table_closure": 2, "column_closure": 0, "lineage_paths": 4}


def test_cycle_longer_than_max_depth_is_found(spark: SparkSession) -> None:
    """on_cycle comes from strongly connected components, not from the depth-bounded closure."""
    result, _ = analyze(_tables(spark, LONG_CYCLE), _no_columns(spark), GraphOptions(max_depth=5))
    assert {r["node"] for r in result.nodes.where("on_cycle").collect()} == {
        s for s, _ in LONG_CYCLE
    }


def test_closure_cap_keeps_the_nearest_and_flags_the_ancestor(spark: SparkSession) -> None:
    # hub -> m0..m4 (1 hop) -> leaf (2 hops); raw.x -> hub; cap 3
    hub = [("stg.hub", f"mart.m{i}") for i in range(5)] + [("mart.m0", "rpt.leaf")]
    edges = [("raw.x", "stg.hub"), *hub]
    result, _ = analyze(
        _tables(spark, edges), _no_columns(spark), GraphOptions(max_closure_per_node=3)
    )
    got = {
        (r["ancestor"], r["descendant"]): (r["min_distance"], r["truncated"])
        for r in result.table_closure.collect()
    }
    assert got == {
        # raw.x: stg.hub at 1, then 3 of the 5 marts at 2 hops fill the cap of 3... in name order
        ("raw.x", "stg.hub"): (1, True),
        ("raw.x", "mart.m0"): (2, True),
        ("raw.x", "mart.m1"): (2, True),
        ("stg.hub", "mart.m0"): (1, True),
        ("stg.hub", "mart.m1"): (1, True),
        ("stg.hub", "mart.m2"): (1, True),
        ("mart.m0", "rpt.leaf"): (1, False),
    }


def test_column_closure_cap_flags_the_ancestor_column(spark: SparkSession) -> None:
    tables = _tables(spark, [("raw.o", "stg.o")])
    columns = spark.createDataFrame(
        [("raw.o", "id", "stg.o", f"c{i}", "DIRECT") for i in range(4)]
        + [("raw.o", "ts", "stg.o", "c0", "INDIRECT")],
        "source_table string, source_column string, target_table string, target_column string,"
        " transformation_type string",
    )
    result, _ = analyze(tables, columns, GraphOptions(max_closure_per_node=2))
    got = {
        (r["ancestor_column"], r["descendant_column"]): (r["direct_min_distance"], r["truncated"])
        for r in result.column_closure.collect()
    }
    assert got == {("id", "c0"): (1, True), ("id", "c1"): (1, True), ("ts", "c0"): (None, False)}


def test_reach_paths_gives_every_shortest_path(spark: SparkSession) -> None:
    edges = [*DIAMOND, ("mart.d", "rpt.e"), ("raw.a", "rpt.z")]
    paths = reach_paths(_tables(spark, edges), "raw.a", "rpt.e")
    got = sorted((tuple(r["path"]), r["depth"]) for r in paths.collect())
    assert got == [
        (("raw.a", "stg.b", "mart.d", "rpt.e"), 3),
        (("raw.a", "stg.c", "mart.d", "rpt.e"), 3),
    ]
    assert reach_paths(_tables(spark, edges), "rpt.e", "raw.a").isEmpty()
    assert reach_paths(_tables(spark, edges), "raw.a", "rpt.e", max_depth=2).isEmpty()


def test_closures_of_a_graph_over_64_kib_run_in_tasks(spark: SparkSession) -> None:
    """The graph's arrays reach the tasks (a broadcast over 64 KiB, the size at which pickle
    writes numpy buffers out of band, under the session's I/O encryption) and every task's
    rows are the kernel's rows."""
    import functools

    import numpy as np
    import pyarrow as pa

    from lineage_udfs.spark.graph import arrays
    from lineage_udfs.spark.graph.kernels import Csr, closure

    n = 30_000
    rng = np.random.default_rng(3)
    src = rng.integers(0, n, 60_000)
    dst = (src + rng.integers(1, 50, src.size)) % n
    csr = Csr.of(src, dst, n)
    assert csr.indices.nbytes > 64 * 1024
    tables = arrays.TableGraph(
        edges=csr,
        proper=csr,
        names=pa.array([f"t{i:05d}" for i in range(n)]),
        component=np.zeros(n, dtype=np.int64),
    )
    options = GraphOptions(max_depth=3, max_closure_per_node=40)
    sources = np.arange(0, n, 97, dtype=np.int64)
    rows = arrays.in_tasks(
        spark,
        functools.partial(arrays.table_closure_rows, options),
        tables,
        sources,
        64,
        arrays.TABLE_CLOSURE_SCHEMA,
    ).collect()
    want = closure(csr, sources, 3, 40)
    assert sorted((r["ancestor"], r["descendant"], r["min_distance"]) for r in rows) == sorted(
        (f"t{sources[r]:05d}", f"t{t:05d}", d)
        for r, t, d in zip(want.row, want.target, want.distance, strict=True)
    )
    assert {r["truncated"] for r in rows} == {True, False}
