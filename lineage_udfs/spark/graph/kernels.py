"""Bounded breadth-first kernels over a graph held as CSR arrays (numpy, vectorized).

The graph stage runs these inside Spark tasks (``mapInArrow``): the driver builds the graph's
arrays once, broadcasts them, and each task computes the closures or paths of its share of the
sources. Node ids are ``0..n-1`` in the order of the node names (Spark's string order), so
ordering ids orders names: "nearest first, then by name" and "in path order" are integer sorts.

Every kernel takes a batch of sources and returns parallel arrays; memory is bounded by the
batch, the per-node caps and ``EXPANSION_LIMIT``, never by the size of the graph.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Ids = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

EXPANSION_LIMIT = 2_000_000
"""Successor rows one expansion step materializes at most (a hop of a batch is split into
row groups below it; one row is never split)."""


@dataclass(frozen=True, slots=True)
class Csr:
    """A directed graph as compressed sparse rows: the successors of node ``i`` are
    ``indices[indptr[i]:indptr[i + 1]]``, ascending and distinct."""

    indptr: Ids
    indices: Ids

    @classmethod
    def of(cls, src: npt.ArrayLike, dst: npt.ArrayLike, n: int) -> Csr:
        """The graph of the edges ``src[i] -> dst[i]`` over nodes ``0..n-1`` (duplicates
        dropped)."""
        s = np.asarray(src, dtype=np.int64)
        d = np.asarray(dst, dtype=np.int64)
        keys = np.unique(s * n + d)
        counts = np.bincount(keys // n, minlength=n)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr, keys % n)

    @property
    def n(self) -> int:
        return len(self.indptr) - 1

    def degree(self) -> Ids:
        return np.diff(self.indptr)

    def expand(self, rows: Ids, nodes: Ids, limit: Ids | None = None) -> tuple[Ids, Ids]:
        """``(row, successor)`` for every successor of every ``nodes[i]`` (tagged ``rows[i]``),
        in input order, each node's successors ascending; ``limit[i]``: at most that many
        (the first ones) of ``nodes[i]``'s successors."""
        starts = self.indptr[nodes]
        counts = self.indptr[nodes + 1] - starts
        if limit is not None:
            counts = np.minimum(counts, limit)
        total = int(counts.sum())
        out_rows = np.repeat(rows, counts)
        shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
        return out_rows, self.indices[np.arange(total, dtype=np.int64) + shift]


def _contains(sorted_keys: Ids, keys: Ids) -> Flags:
    """``keys[i] in sorted_keys`` for each i."""
    if sorted_keys.size == 0:
        return np.zeros(keys.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return sorted_keys[at] == keys


def _group_rank(sorted_groups: Ids) -> Ids:
    """Each element's position within its run of equal values (the input is sorted)."""
    return np.arange(sorted_groups.size, dtype=np.int64) - np.searchsorted(
        sorted_groups, sorted_groups
    )


def _row_slices(rows: Ids, work: Ids) -> list[slice]:
    """Consecutive slices of ``rows`` (non-decreasing) of about ``EXPANSION_LIMIT`` ``work``
    each, never splitting one row's elements."""
    if int(work.sum()) <= EXPANSION_LIMIT:
        return [slice(0, rows.size)]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    bucket = (np.cumsum(work) - work)[starts] // EXPANSION_LIMIT
    cuts = starts[np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])]
    bounds = [*cuts.tolist(), rows.size]
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


@dataclass(frozen=True, slots=True)
class Reach:
    """Closure rows of a batch of sources (parallel arrays) and which sources were capped.

    Attributes:
        row: the source's position in the batch.
        target: the reached node.
        distance: fewest hops from the source.
        capped: per batch position: the source reached more than the cap.
    """

    row: Ids
    target: Ids
    distance: Ids
    capped: Flags


def closure(csr: Csr, sources: Ids, max_depth: int, cap: int) -> Reach:
    """The nodes each source reaches within ``max_depth`` hops (itself excluded), at their
    fewest hops, at most ``cap`` per source: the nearest first, then by id. A source stops
    expanding at the hop that fills its cap; ``capped`` marks the sources that had more."""
    n = csr.n
    batch = len(sources)
    rows = np.arange(batch, dtype=np.int64)
    sources = np.asarray(sources, dtype=np.int64)
    visited = np.sort(rows * n + sources)
    reached = np.zeros(batch, dtype=np.int64)
    capped = np.zeros(batch, dtype=bool)
    degree = csr.degree()
    frontier_rows, frontier_nodes = rows, sources
    found: list[tuple[Ids, int]] = []
    for depth in range(1, max_depth + 1):
        if frontier_rows.size == 0:
            break
        pieces = []
        for part in _row_slices(frontier_rows, degree[frontier_nodes]):
            r, d = csr.expand(frontier_rows[part], frontier_nodes[part])
            keys = np.unique(r * n + d)
            pieces.append(keys[~_contains(visited, keys)])
        keys = np.concatenate(pieces)
        if keys.size == 0:
            break
        r = keys // n
        keep = _group_rank(r) < cap - reached[r]
        capped[r[~keep]] = True
        keys, r = keys[keep], r[keep]
        found.append((keys, depth))
        reached += np.bincount(r, minlength=batch)
        visited = np.sort(np.concatenate([visited, keys]), kind="stable")
        live = ~capped[r]
        frontier_rows, frontier_nodes = r[live], keys[live] % n
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return Reach(empty, empty, empty, capped)
    keys = np.concatenate([k for k, _ in found])
    distance = np.concatenate([np.full(k.size, depth, dtype=np.int64) for k, depth in found])
    return Reach(keys // n, keys % n, distance, capped)


@dataclass(frozen=True, slots=True)
class ColumnReach:
    """Column-closure rows of a batch of sources (parallel arrays).

    Attributes:
        row: the source's position in the batch.
        target: the reached column node.
        distance: fewest hops over any edges.
        direct_distance: fewest hops over DIRECT edges only; -1 when there is none (or the
            DIRECT-only closure was cut before it).
        truncated: either closure of the row's source was capped.
    """

    row: Ids
    target: Ids
    distance: Ids
    direct_distance: Ids
    truncated: Flags


def column_closure(
    any_edges: Csr, direct_edges: Csr, sources: Ids, max_depth: int, cap: int
) -> ColumnReach:
    """The closure over every edge, each row with its distance over DIRECT edges only."""
    n = any_edges.n
    every = closure(any_edges, sources, max_depth, cap)
    direct = closure(direct_edges, sources, max_depth, cap)
    direct_keys = direct.row * n + direct.target
    order = np.argsort(direct_keys, kind="stable")
    direct_keys = direct_keys[order]
    keys = every.row * n + every.target
    hit = _contains(direct_keys, keys)
    at = np.minimum(np.searchsorted(direct_keys, keys), max(direct_keys.size - 1, 0))
    direct_distance = np.where(hit, direct.distance[order][at] if direct_keys.size else -1, -1)
    truncated = every.capped[every.row] | direct.capped[every.row]
    return ColumnReach(every.row, every.target, every.distance, direct_distance, truncated)


@dataclass(frozen=True, slots=True)
class Paths:
    """Root-to-leaf paths of a batch of roots (parallel arrays over paths).

    Attributes:
        row: the root's position in the batch.
        offsets: path ``i`` is ``nodes[offsets[i]:offsets[i + 1]]``.
        nodes: the paths' node ids, concatenated.
        truncated: the path was cut at ``max_depth`` or its root's paths were capped.
    """

    row: Ids
    offsets: Ids
    nodes: Ids
    truncated: Flags


def _lex_order(paths: npt.NDArray[np.int64]) -> Ids:
    """Row order of ``paths`` (equal-length rows) in lexicographic order."""
    return np.lexsort(paths.T[::-1])


def root_paths(csr: Csr, roots: Ids, max_depth: int, cap: int) -> Paths:
    """Simple paths from each root to a leaf, at most ``max_depth`` edges and ``cap`` per root.

    ``csr`` has no self-loops. A path whose every successor is already on it ends where it
    stands (a cycle); one still able to go on at ``max_depth`` is kept with ``truncated``.
    At each hop a root keeps its first ``cap`` live paths in path order and is flagged
    ``capped`` when it had more; at the end it keeps ``cap`` paths, the shortest first, then
    in path order. Live paths are kept in path order, so their extensions come out in path
    order too and a root's expansion stops once it holds more than ``cap`` of them.
    """
    degree = csr.degree()
    batch = len(roots)
    capped = np.zeros(batch, dtype=bool)
    live = np.asarray(roots, dtype=np.int64).reshape(-1, 1)
    order = np.argsort(live[:, 0], kind="stable")
    live, live_row = live[order], np.arange(batch, dtype=np.int64)[order]
    done: dict[int, list[tuple[npt.NDArray[np.int64], Ids, bool]]] = defaultdict(list)
    for depth in range(1, max_depth + 1):
        count, width = live.shape
        last = live[:, -1]
        # successors not on the path number at least degree - width: enough paths of a root
        # are expanded to give it more than `cap` extensions for sure, and no more
        at_least = np.maximum(degree[last] - width, 0)
        before = np.cumsum(at_least) - at_least
        before = before - before[np.searchsorted(live[:, 0], live[:, 0])]
        needed = before <= cap
        # a path not needed for its root's first `cap` + 1 extensions is still checked for
        # being stuck (all successors on the path), which only a low-degree one can be
        checked = needed | (degree[last] <= width)
        limit = np.where(needed, cap + 1 + width, width)
        idx = np.flatnonzero(checked)
        rep, succ = _bounded_expand(csr, idx, last[idx], limit[idx], degree)
        on_path = (live[rep] == succ[:, None]).any(axis=1)
        rep, succ = rep[~on_path], succ[~on_path]
        if width > 1:
            stuck = checked & (np.bincount(rep, minlength=count) == 0)
            if stuck.any():
                done[width].append((live[stuck], live_row[stuck], False))
        if not needed.all():
            capped[live_row[~needed]] = True
        keep_ext = needed[rep]
        rep, succ = rep[keep_ext], succ[keep_ext]
        extended = np.hstack([live[rep], succ[:, None]])
        row = live_row[rep]
        over = _group_rank(extended[:, 0]) >= cap
        capped[row[over]] = True
        extended, row = extended[~over], row[~over]
        leaf = degree[extended[:, -1]] == 0
        done[width + 1].append((extended[leaf], row[leaf], False))
        live, live_row = extended[~leaf], row[~leaf]
        if depth == max_depth and live.size:
            done[width + 1].append((live, live_row, True))
        if live.shape[0] == 0:
            break
    return _first_paths(done, capped, cap)


def _bounded_expand(csr: Csr, idx: Ids, nodes: Ids, limit: Ids, degree: Ids) -> tuple[Ids, Ids]:
    work = np.minimum(degree[nodes], limit)
    pieces = [csr.expand(idx[part], nodes[part], limit[part]) for part in _row_slices(idx, work)]
    return np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])


def _first_paths(
    done: dict[int, list[tuple[npt.NDArray[np.int64], Ids, bool]]], capped: Flags, cap: int
) -> Paths:
    """At most ``cap`` paths per root: the shortest first, then in path order."""
    kept_so_far = np.zeros(capped.size, dtype=np.int64)
    out_rows, out_paths, out_cut = [], [], []
    for size in sorted(done):
        paths = np.concatenate([p for p, _, _ in done[size]])
        if paths.shape[0] == 0:
            continue
        rows = np.concatenate([r for _, r, _ in done[size]])
        cut = np.concatenate([np.full(r.size, c, dtype=bool) for _, r, c in done[size]])
        order = _lex_order(paths)
        paths, rows, cut = paths[order], rows[order], cut[order]
        rank = _group_rank(paths[:, 0]) + kept_so_far[rows]
        keep = rank < cap
        capped[rows[~keep]] = True
        paths, rows, cut = paths[keep], rows[keep], cut[keep]
        kept_so_far += np.bincount(rows, minlength=capped.size)
        out_rows.append(rows)
        out_paths.append(paths)
        out_cut.append(cut)
    if not out_rows:
        empty = np.zeros(0, dtype=np.int64)
        return Paths(empty, np.zeros(1, dtype=np.int64), empty, np.zeros(0, dtype=bool))
    rows = np.concatenate(out_rows)
    lengths = np.concatenate([np.full(p.shape[0], p.shape[1], dtype=np.int64) for p in out_paths])
    offsets = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    nodes = np.concatenate([p.ravel() for p in out_paths])
    truncated = np.concatenate(out_cut) | capped[rows]
    return Paths(rows, offsets, nodes, truncated)


@dataclass(frozen=True, slots=True)
class TagSpread:
    """Where one tag is, from its declared columns over the lineage (parallel arrays).

    Attributes:
        node: a column holding the tag (declared, carried or masked).
        depth: hops from its origin (0: declared).
        origin: the declared column it came from (itself when declared).
        via: the column of the edge it came through (-1 when declared).
        masked: it reached the node only through a masking edge, where it stops.
    """

    node: Ids
    depth: Ids
    origin: Ids
    via: Ids
    masked: Flags


def _first_per(keys: Ids, *order: Ids) -> Ids:
    """Indexes of the first element per distinct ``keys`` value, ordered by ``order``
    (lexicographic, the first array most significant)."""
    at = np.lexsort((*reversed(order), keys))
    k = keys[at]
    return at[np.r_[True, k[1:] != k[:-1]]] if k.size else at


def spread_tag(carry: Csr, mask: Csr, seeds: Ids, max_depth: int) -> TagSpread:
    """The columns a tag declared on ``seeds`` reaches: breadth first over the ``carry``
    edges, at most ``max_depth`` hops; a ``mask`` edge out of a reached column marks its
    target ``masked`` (when no carry path reaches it within the limit) and goes no further.

    Each reached column keeps its fewest hops, then the smallest origin id among the origins
    at that distance, then the smallest ``via`` id among its predecessors at one hop less from
    that origin (ids order names, so ties resolve by name). Cycles end: a column is expanded
    once, at its first level.
    """
    n = carry.n
    seeds = np.unique(np.asarray(seeds, dtype=np.int64))
    origin = np.full(n, -1, dtype=np.int64)
    depth = np.full(n, -1, dtype=np.int64)
    via = np.full(n, -1, dtype=np.int64)
    origin[seeds], depth[seeds] = seeds, 0
    frontier = seeds
    degree = carry.degree()
    for level in range(1, max_depth + 1):
        if frontier.size == 0:
            break
        pieces = [
            carry.expand(frontier[part], frontier[part])
            for part in _row_slices(frontier, degree[frontier])
        ]
        src = np.concatenate([p[0] for p in pieces])
        dst = np.concatenate([p[1] for p in pieces])
        new = depth[dst] < 0
        src, dst = src[new], dst[new]
        first = _first_per(dst, origin[src], src)
        src, dst = src[first], dst[first]
        origin[dst], depth[dst], via[dst] = origin[src], level, src
        frontier = dst
    carried = np.flatnonzero(depth >= 0)
    # masking edges out of carried columns that can still take one hop
    live = carried[depth[carried] < max_depth]
    src, dst = mask.expand(live, live) if live.size else (live, live)
    new = depth[dst] < 0
    src, dst = src[new], dst[new]
    first = _first_per(dst, depth[src], origin[src], src)
    src, dst = src[first], dst[first]
    node = np.concatenate([carried, dst])
    return TagSpread(
        node=node,
        depth=np.concatenate([depth[carried], depth[src] + 1]),
        origin=np.concatenate([origin[carried], origin[src]]),
        via=np.concatenate([via[carried], src]),
        masked=np.concatenate([np.zeros(carried.size, bool), np.ones(dst.size, bool)]),
    )


def weak_reach(both: Csr, seeds: Ids) -> Flags:
    """Per node: whether it lies in the weakly connected component of a seed; ``both`` holds
    every edge in both directions. Breadth first from all seeds at once, each node expanded
    once."""
    seen = np.zeros(both.n, dtype=bool)
    frontier = np.unique(np.asarray(seeds, dtype=np.int64))
    seen[frontier] = True
    degree = both.degree()
    while frontier.size:
        found = [
            both.expand(frontier[part], frontier[part])[1]
            for part in _row_slices(frontier, degree[frontier])
        ]
        frontier = np.unique(np.concatenate(found))
        frontier = frontier[~seen[frontier]]
        seen[frontier] = True
    return seen
