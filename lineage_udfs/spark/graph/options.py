"""The graph stage's knobs and result type, and how it cuts the plans of intermediate frames."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from lineage_udfs.settings import GraphSettings
from lineage_udfs.spark.runtime.checkpoints import checkpointed

CC_ALGORITHMS = ("graphx", "two_phase")
"""GraphFrames connectedComponents algorithms that work on the stage's long vertex ids."""


@dataclass(frozen=True, slots=True)
class GraphOptions:
    """Knobs of the graph stage, passed explicitly (never library defaults).

    Attributes:
        max_depth: longest path / closure distance in hops (1..20).
        max_paths_per_root: live partial paths kept per root at each hop.
        max_cc_iterations: bound on connected-component rounds and on the strongly connected
            components algorithm's outer rounds.
        max_closure_per_node: descendants kept per ancestor in a closure (nearest first, then
            by name); an ancestor with more has its rows flagged ``truncated``.
        cc_algorithm: GraphFrames connectedComponents algorithm (one of ``CC_ALGORITHMS``).
    """

    max_depth: int = 20
    max_paths_per_root: int = 1000
    max_cc_iterations: int = 100
    max_closure_per_node: int = 10000
    cc_algorithm: str = "graphx"

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= 20:
            raise ValueError(f"max_depth must be within 1..20, got {self.max_depth}")
        if self.max_paths_per_root < 1:
            raise ValueError("max_paths_per_root must be >= 1")
        if self.max_closure_per_node < 1:
            raise ValueError("max_closure_per_node must be >= 1")
        if self.cc_algorithm not in CC_ALGORITHMS:
            raise ValueError(f"cc_algorithm must be one of {CC_ALGORITHMS}: {self.cc_algorithm}")


@dataclass(frozen=True, slots=True)
class GraphResult:
    """The analytics tables of one run (DataFrames, not yet written)."""

    components: DataFrame
    nodes: DataFrame
    paths: DataFrame
    table_closure: DataFrame
    column_closure: DataFrame
    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds of the steps computed inside ``analyze``: components, cycles, lineage_nodes,
    table_graph and column_graph (the arrays); the closures and paths are computed by their
    tasks when their tables are written."""
    recomputed: dict[str, int] = field(default_factory=dict)
    """How many keys were recomputed: ``table_closure`` and ``column_closure`` sources
    (ancestors), ``lineage_paths`` roots."""


def cut(df: DataFrame) -> DataFrame:
    """Materialize and truncate the plan so iterative loops do not grow it without bound
    (``runtime.checkpoints.checkpointed``: reliable in a run with a checkpoint dir, else local).

    A checkpoint keeps the size estimate of the plan it replaces, and Spark estimates a join as
    the product of its inputs' sizes: over the hops of a closure the estimate's digits double
    each hop, until estimating a plan takes hours. The checkpointed rows are therefore wrapped
    in a fresh DataFrame that carries no estimate (the default size), so each hop starts anew.
    """
    saved = checkpointed(df)
    spark = saved.sparkSession
    fresh = spark._jsparkSession.createDataFrame(saved._jdf.rdd(), saved._jdf.schema())
    return DataFrame(fresh, spark)


def graph_options(settings: GraphSettings) -> GraphOptions:
    """The algorithm knobs from settings, explicitly."""
    return GraphOptions(
        max_depth=settings.max_depth,
        max_paths_per_root=settings.max_paths_per_root,
        max_cc_iterations=settings.max_cc_iterations,
        max_closure_per_node=settings.max_closure_per_node,
    )
