"""The graph stage's numpy kernels against plain-Python references, on random graphs with hubs,
cycles and self-loops, with caps small enough to bite."""

from __future__ import annotations

import random

import numpy as np
import pytest

from lineage_udfs.spark.graph import kernels as graph_kernels
from lineage_udfs.spark.graph.kernels import Csr, closure, column_closure, root_paths

Succ = dict[int, list[int]]


def _random_graph(seed: int, n: int, m: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    hubs = rng.sample(range(n), 2)
    edges = set()
    for _ in range(m):
        s, d = rng.randrange(n), rng.randrange(n)
        if rng.random() < 0.7 and s > d:  # mostly layered, some back edges (cycles)
            s, d = d, s
        edges.add((s, d))
    for hub in hubs:  # a hub reads a few, is read by many
        edges.update((hub, d) for d in rng.sample(range(n), n // 3))
    edges.add((hubs[0], hubs[0]))
    return sorted(edges)


def _succ(edges: list[tuple[int, int]]) -> Succ:
    out: Succ = {}
    for s, d in edges:
        out.setdefault(s, []).append(d)
    return {k: sorted(set(v)) for k, v in out.items()}


def ref_closure(succ: Succ, src: int, max_depth: int, cap: int) -> tuple[dict[int, int], bool]:
    """BFS levels, each in id order, at most ``cap`` nodes; capped when more were reachable."""
    seen: dict[int, int] = {}
    level, capped = [src], False
    for depth in range(1, max_depth + 1):
        nxt = sorted({d for x in level for d in succ.get(x, ()) if d != src and d not in seen})
        if not nxt:
            break
        room = cap - len(seen)
        if len(nxt) > room:
            capped, nxt = True, nxt[:room]
        seen.update((d, depth) for d in nxt)
        if capped:
            break
        level = nxt
    return seen, capped


def ref_paths(
    succ: Succ, root: int, max_depth: int, cap: int
) -> list[tuple[tuple[int, ...], bool]]:
    live: list[tuple[int, ...]] = [(root,)]
    done: list[tuple[tuple[int, ...], bool]] = []
    capped = False
    for depth in range(1, max_depth + 1):
        extended = []
        for p in live:
            ext = [(*p, d) for d in succ.get(p[-1], ()) if d not in p]
            if not ext and len(p) > 1:
                done.append((p, False))
            extended.extend(ext)
        extended.sort()
        if len(extended) > cap:
            capped, extended = True, extended[:cap]
        live = []
        for p in extended:
            if succ.get(p[-1]):
                live.append(p)
            else:
                done.append((p, False))
        if depth == max_depth:
            done.extend((p, True) for p in live)
        if not live:
            break
    done.sort(key=lambda pc: (len(pc[0]), pc[0]))
    if len(done) > cap:
        capped, done = True, done[:cap]
    return [(p, cut or capped) for p, cut in done]


CASES = [(seed, n, m, depth, cap) for seed in range(6) for n, m, depth, cap in [
    (30, 60, 20, 1000),
    (40, 90, 4, 7),
    (25, 70, 20, 3),
    (60, 100, 6, 12),
]]  # fmt: skip


@pytest.mark.parametrize(("seed", "n", "m", "max_depth", "cap"), CASES)
def test_closure_matches_reference(seed: int, n: int, m: int, max_depth: int, cap: int) -> None:
    edges = _random_graph(seed, n, m)
    succ = _succ(edges)
    csr = Csr.of([s for s, _ in edges], [d for _, d in edges], n)
    sources = np.array(sorted(succ), dtype=np.int64)
    got = closure(csr, sources, max_depth, cap)
    rows: dict[int, dict[int, int]] = {}
    for r, t, dist in zip(got.row, got.target, got.distance, strict=True):
        rows.setdefault(int(sources[r]), {})[int(t)] = int(dist)
    for i, src in enumerate(sources.tolist()):
        want, capped = ref_closure(succ, src, max_depth, cap)
        assert rows.get(src, {}) == want, src
        assert bool(got.capped[i]) == capped, src


@pytest.mark.parametrize(("seed", "n", "m", "max_depth", "cap"), CASES)
def test_paths_match_reference(seed: int, n: int, m: int, max_depth: int, cap: int) -> None:
    edges = [(s, d) for s, d in _random_graph(seed, n, m) if s != d]
    succ = _succ(edges)
    csr = Csr.of([s for s, _ in edges], [d for _, d in edges], n)
    has_in = {d for _, d in edges}
    roots = np.array([x for x in range(n) if x not in has_in and x in succ][::-1], dtype=np.int64)
    got = root_paths(csr, roots, max_depth, cap)
    paths: dict[int, list[tuple[tuple[int, ...], bool]]] = {}
    for i, r in enumerate(got.row.tolist()):
        nodes = tuple(got.nodes[got.offsets[i] : got.offsets[i + 1]].tolist())
        assert nodes[0] == roots[r]
        paths.setdefault(int(roots[r]), []).append((nodes, bool(got.truncated[i])))
    for root in roots.tolist():
        assert sorted(paths.get(root, [])) == sorted(ref_paths(succ, root, max_depth, cap)), root


@pytest.mark.parametrize("seed", range(4))
def test_column_closure_tells_direct_distance(seed: int) -> None:
    rng = random.Random(seed)
    n = 40
    edges = _random_graph(seed, n, 90)
    direct = [e for e in edges if rng.random() < 0.6]
    every, only_direct = Csr.of(*zip(*edges, strict=True), n), Csr.of(*zip(*direct, strict=True), n)
    sources = np.arange(n, dtype=np.int64)
    got = column_closure(every, only_direct, sources, 5, 9)
    succ, dsucc = _succ(edges), _succ(direct)
    for i in range(got.row.size):
        src, t = int(sources[got.row[i]]), int(got.target[i])
        want, capped = ref_closure(succ, src, 5, 9)
        dwant, dcapped = ref_closure(dsucc, src, 5, 9)
        assert want[t] == got.distance[i]
        assert dwant.get(t, -1) == got.direct_distance[i]
        assert bool(got.truncated[i]) == (capped or dcapped)
    assert got.row.size == sum(len(ref_closure(succ, s, 5, 9)[0]) for s in range(n))


def test_expansion_is_split_below_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hop larger than the expansion limit is computed in row groups, with the same rows."""
    edges = _random_graph(11, 80, 300)
    csr = Csr.of([s for s, _ in edges], [d for _, d in edges], 80)
    sources = np.arange(80, dtype=np.int64)
    whole = closure(csr, sources, 20, 50)
    roots = np.arange(0, 80, 3, dtype=np.int64)
    a = root_paths(csr, roots, 6, 5)
    monkeypatch.setattr(graph_kernels, "EXPANSION_LIMIT", 7)
    split = closure(csr, sources, 20, 50)
    assert sorted(zip(whole.row, whole.target, whole.distance, strict=True)) == sorted(
        zip(split.row, split.target, split.distance, strict=True)
    )
    assert (whole.capped == split.capped).all()
    b = root_paths(csr, roots, 6, 5)
    assert a.nodes.tolist() == b.nodes.tolist() and a.truncated.tolist() == b.truncated.tolist()


def ref_spread(
    carry: list[tuple[int, int]], mask: list[tuple[int, int]], seeds: list[int], max_depth: int
) -> set[tuple[int, int, int, int, bool]]:
    """(node, depth, origin, via, masked): one BFS per seed, then the documented tie order."""
    succ: dict[int, set[int]] = {}
    for s, d in carry:
        succ.setdefault(s, set()).add(d)
    dist: dict[int, dict[int, int]] = {}
    for seed in seeds:
        seen, frontier = {seed: 0}, [seed]
        for depth in range(1, max_depth + 1):
            frontier = [d for s in frontier for d in succ.get(s, ()) if d not in seen]
            for d in frontier:
                seen.setdefault(d, depth)
            frontier = sorted({d for d in frontier if seen[d] == depth})
        dist[seed] = seen
    out: set[tuple[int, int, int, int, bool]] = set()
    reached: dict[int, tuple[int, int]] = {}
    for node in {n for d in dist.values() for n in d}:
        depth = min(d[node] for d in dist.values() if node in d)
        origin = min(o for o in dist if dist[o].get(node) == depth)
        reached[node] = (depth, origin)
        via = -1
        if depth:
            via = min(u for u, d in carry if d == node and dist[origin].get(u) == depth - 1)
        out.add((node, depth, origin, via, False))
    masked: dict[int, tuple[int, int, int]] = {}
    for u, d in mask:
        if u in reached and d not in reached and reached[u][0] < max_depth:
            candidate = (reached[u][0] + 1, reached[u][1], u)
            masked[d] = min(masked.get(d, candidate), candidate)
    out |= {(d, depth, origin, via, True) for d, (depth, origin, via) in masked.items()}
    return out


@pytest.mark.parametrize(("seed", "max_depth"), [(1, 3), (2, 20), (3, 6), (4, 1)])
def test_spread_tag_matches_reference(seed: int, max_depth: int) -> None:
    n = 90
    edges = _random_graph(seed, n, 260)
    rng = random.Random(seed)
    mask = [e for e in edges if rng.random() < 0.1]
    carry = [e for e in edges if e not in set(mask) and rng.random() < 0.85]
    seeds = sorted(rng.sample(range(n), 4))
    got = graph_kernels.spread_tag(
        Csr.of([s for s, _ in carry], [d for _, d in carry], n),
        Csr.of([s for s, _ in mask], [d for _, d in mask], n),
        np.array(seeds, dtype=np.int64),
        max_depth,
    )
    rows = set(
        zip(
            got.node.tolist(),
            got.depth.tolist(),
            got.origin.tolist(),
            got.via.tolist(),
            got.masked.tolist(),
            strict=True,
        )
    )
    assert len(rows) == got.node.size == len(set(got.node.tolist()))  # one row per column
    assert rows == ref_spread(carry, mask, seeds, max_depth)
    assert any(r[4] for r in rows)  # the graphs exercise masking
    if max_depth <= 3:  # and the depth limit, where it is short
        assert max(r[1] for r in rows) == max_depth


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_weak_reach_matches_union_find(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nodes in the weakly connected components of the seeds: a sparse random graph (many
    components, some isolated nodes) against a plain union-find, with expansion split."""
    n = 120
    rng = random.Random(seed)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(70)]
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for s, d in edges:
        parent[root(s)] = root(d)
    seeds = rng.sample(range(n), 5)
    expected = {x for x in range(n) if root(x) in {root(s) for s in seeds}}
    both = Csr.of(
        [s for s, _ in edges] + [d for _, d in edges],
        [d for _, d in edges] + [s for s, _ in edges],
        n,
    )
    monkeypatch.setattr(graph_kernels, "EXPANSION_LIMIT", 3)
    got = graph_kernels.weak_reach(both, np.array(seeds, dtype=np.int64))
    assert set(np.flatnonzero(got).tolist()) == expected
    assert 5 <= len(expected) < n  # some components reached, others not
    assert not graph_kernels.weak_reach(both, np.zeros(0, dtype=np.int64)).any()
