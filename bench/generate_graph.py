"""A synthetic warehouse lineage graph for the graph benchmark (deterministic for a seed).

Layers raw -> staging -> marts -> views (over marts and earlier views) -> reports; each
non-raw table reads a power-law number of sources (most read one to three, a few read dozens),
and sources are picked with power-law popularity (a few tables are read by many). Two hub
dimensions in staging (a calendar and a customer dimension) are read by half of the marts,
views and reports. Cycles: some marts are rebuilt from themselves (self-loops) and some MERGE
back into a staging table they read (two-node and longer loops). Every table has 12..48
columns; each table edge carries ~10 column edges (80 % DIRECT, 20 % INDIRECT).

    python bench/generate_graph.py --edges 100000 --out bench/data/graph-100k

writes ``table_lineage.parquet`` (source_table, target_table, edge_kind) and
``column_lineage.parquet`` (source_table, source_column, target_table, target_column,
transformation_type) into ``--out``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

LAYERS: tuple[tuple[str, float], ...] = (
    ("raw", 0.20),
    ("stg", 0.25),
    ("mart", 0.25),
    ("vw", 0.10),
    ("rpt", 0.20),
)
"""Layer prefix and share of the tables."""
READS: dict[str, tuple[str, ...]] = {
    "stg": ("raw",),
    "mart": ("stg", "raw"),
    "vw": ("mart", "vw"),
    "rpt": ("mart", "vw"),
}
"""Which layers a layer's tables read (``vw`` reads earlier views: views over views)."""
MEAN_FAN_IN = 3.0
"""Sources per non-raw table the sizing assumes: the fan-in distribution below averages 3.45
before duplicates are removed; a little low, so that the graph comes out larger and is trimmed."""
COLUMN_EDGES_PER_TABLE_EDGE = 10
HUB_SHARE = 0.5
SELF_LOOP_SHARE = 0.005
MERGE_LOOP_SHARE = 0.002


@dataclass(frozen=True)
class Graph:
    """Table and column edges as Arrow tables."""

    tables: pa.Table
    columns: pa.Table


def _fan_in(rng: np.random.Generator, n: int) -> np.ndarray:
    """Sources per table: 1 + Zipf(2.0), capped at 60 (most 1-3, a long tail)."""
    return np.minimum(rng.zipf(2.0, n), 60)  # zipf >= 1


def _pick(rng: np.random.Generator, pool: np.ndarray, k: int, popularity: np.ndarray) -> np.ndarray:
    """``k`` draws from ``pool`` with power-law popularity."""
    return pool[rng.choice(len(pool), size=k, p=popularity)]


def generate(table_edges: int, seed: int = 7) -> Graph:
    """About ``table_edges`` distinct table edges and ~10x as many column edges."""
    rng = np.random.default_rng(seed)
    non_raw = 1.0 - LAYERS[0][1]
    hub_reads_per_table = 2 * HUB_SHARE * (0.25 + 0.10 + 0.20) / non_raw
    n_tables = max(50, int(table_edges / (non_raw * (MEAN_FAN_IN + hub_reads_per_table))))
    names: list[str] = []
    layer_of: list[int] = []
    bounds: dict[str, tuple[int, int]] = {}
    for index, (prefix, share) in enumerate(LAYERS):
        count = max(5, int(n_tables * share))
        start = len(names)
        names.extend(f"{prefix}.t{i:07d}" for i in range(count))
        layer_of.extend([index] * count)
        bounds[prefix] = (start, len(names))
    n = len(names)
    # per-node popularity: a random permutation of Zipf-like weights
    popularity_rank = rng.permutation(n)
    weight = 1.0 / (popularity_rank + 1.0) ** 0.8

    src_parts: list[np.ndarray] = []
    dst_parts: list[np.ndarray] = []
    for prefix, reads in READS.items():
        lo, hi = bounds[prefix]
        fan = _fan_in(rng, hi - lo)
        dst = np.repeat(np.arange(lo, hi), fan)
        pool = np.concatenate([np.arange(*bounds[r]) for r in reads])
        p = weight[pool] / weight[pool].sum()
        src = _pick(rng, pool, len(dst), p)
        if prefix == "vw":  # a view reads marts or *earlier* views only (no cycle by views)
            ok = (src < bounds["vw"][0]) | (src < dst)
            src, dst = src[ok], dst[ok]
        src_parts.append(src)
        dst_parts.append(dst)
    # hubs: a calendar and a customer dimension in staging, read by half the warehouse above
    stg_lo = bounds["stg"][0]
    for hub in (stg_lo, stg_lo + 1):
        readers = np.arange(bounds["mart"][0], n)
        readers = readers[rng.random(len(readers)) < HUB_SHARE]
        src_parts.append(np.full(len(readers), hub))
        dst_parts.append(readers)
    # cycles: marts rebuilt from themselves; marts MERGEd back into a staging table they read
    mart_lo, mart_hi = bounds["mart"]
    marts = np.arange(mart_lo, mart_hi)
    loops = marts[rng.random(len(marts)) < SELF_LOOP_SHARE]
    src_parts.append(loops)
    dst_parts.append(loops)
    src = np.concatenate(src_parts)
    dst = np.concatenate(dst_parts)
    edges = np.unique(np.stack([src, dst], axis=1), axis=0)
    # a MERGE loop: mart m reads staging s -> an edge m -> s closes the loop
    mart_reads_stg = edges[
        (edges[:, 1] >= mart_lo)
        & (edges[:, 1] < mart_hi)
        & (edges[:, 0] >= stg_lo + 2)
        & (edges[:, 0] < bounds["stg"][1])
    ]
    merges = mart_reads_stg[rng.random(len(mart_reads_stg)) < MERGE_LOOP_SHARE * 5][:, ::-1]
    edges = np.unique(np.concatenate([edges, merges]), axis=0)
    if len(edges) > table_edges:  # trim to the size asked for (a uniform sample of the edges)
        keep = rng.permutation(len(edges))[:table_edges]
        edges = edges[np.sort(keep)]
    name_array = np.array(names, dtype=object)
    kinds = np.where(
        np.array(layer_of)[edges[:, 1]] == [p for p, _ in LAYERS].index("vw"), "view", "query"
    )
    tables = pa.table(
        {
            "source_table": name_array[edges[:, 0]],
            "target_table": name_array[edges[:, 1]],
            "edge_kind": kinds,
        }
    )
    # columns: 12..48 per table; ~10 column edges per table edge
    n_cols = rng.integers(12, 49, n)
    reps = COLUMN_EDGES_PER_TABLE_EDGE
    e_src = np.repeat(edges[:, 0], reps)
    e_dst = np.repeat(edges[:, 1], reps)
    # target columns: consecutive columns from a random start; source: a random column
    start = np.repeat(rng.integers(0, 48, len(edges)), reps)
    step = np.tile(np.arange(reps), len(edges))
    c_dst = (start + step) % n_cols[e_dst]
    c_src = rng.integers(0, 1 << 30, len(e_src)) % n_cols[e_src]
    direct = rng.random(len(e_src)) < 0.8
    col = np.unique(np.stack([e_src, c_src, e_dst, c_dst, direct], axis=1), axis=0)
    # one kind per (source column, target column): DIRECT wins
    col = col[np.lexsort((-col[:, 4], col[:, 3], col[:, 2], col[:, 1], col[:, 0]))]
    first = np.ones(len(col), dtype=bool)
    first[1:] = np.any(col[1:, :4] != col[:-1, :4], axis=1)
    col = col[first]
    col_names = np.array([f"c{i:02d}" for i in range(48)], dtype=object)
    columns = pa.table(
        {
            "source_table": name_array[col[:, 0]],
            "source_column": col_names[col[:, 1]],
            "target_table": name_array[col[:, 2]],
            "target_column": col_names[col[:, 3]],
            "transformation_type": np.where(col[:, 4] == 1, "DIRECT", "INDIRECT"),
        }
    )
    return Graph(tables=tables, columns=columns)


def write(graph: Graph, out: Path) -> None:
    """``table_lineage.parquet`` and ``column_lineage.parquet`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(graph.tables, out / "table_lineage.parquet")
    pq.write_table(graph.columns, out / "column_lineage.parquet")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edges", type=int, required=True, help="table edges (about)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    graph = generate(args.edges, args.seed)
    write(graph, args.out)
    print(f"{args.out}: {graph.tables.num_rows} table edges, {graph.columns.num_rows} column edges")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
