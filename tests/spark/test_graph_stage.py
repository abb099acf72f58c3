"""The graph stage on real Delta tables: full run, incremental run, and their equality."""

from __future__ import annotations

import logging
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import GraphSettings, JobSettings, SinkSettings
from lineage_udfs.spark.graph.analyze import analyze
from lineage_udfs.spark.graph.options import GraphResult, graph_options
from lineage_udfs.spark.graph.stage import (
    DEFAULT_DRIVER_MEMORY,
    EDGES_PER_DRIVER_GIB,
    GraphSummary,
    GraphTooLargeError,
    edge_bound,
    run_graph_stage,
)
from lineage_udfs.spark.graph.state import (
    COMPONENTS_TABLE,
    GRAPH_TABLES,
    input_digest,
    stored_state,
)
from lineage_udfs.spark.pipeline import graph_line, run_graph, run_loaded_job
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

FIRST = [
    ("raw.orders", "stg.orders", "query"),
    ("stg.orders", "mart.sales", "query"),
    ("raw.customers", "stg.customers", "query"),
    ("stg.customers", "mart.sales", "query"),
    ("mart.sales", "rpt.daily", "view"),
    ("s3://landing/events", "raw.events", "query"),
    ("raw.events", "stg.events", "query"),
]
SECOND = [
    *FIRST,
    ("stg.events", "mart.sessions", "query"),  # grows the events island only
    ("hub.h", "hub.k", "query"),  # a new island with a cycle
    ("hub.k", "hub.h", "query"),
]
COLUMNS = [
    ("raw.orders", "amount", "stg.orders", "amount", "DIRECT"),
    ("stg.orders", "amount", "mart.sales", "revenue", "DIRECT"),
    ("raw.orders", "status", "mart.sales", "revenue", "INDIRECT"),
    ("raw.events", "ts", "stg.events", "ts", "DIRECT"),
    ("stg.events", "ts", "mart.sessions", "started_at", "DIRECT"),
]


def _write_edges(
    spark: SparkSession,
    tables: LineageTables,
    edges: list[tuple[str, str, str]],
    occurrences: int = 1,
    columns: list[tuple[str, str, str, str, str]] | None = None,
) -> None:
    table_rows = spark.createDataFrame(
        [(s, t, k, "fp", None, "sys", None, None, occurrences) for s, t, k in edges],
        TABLES["table_lineage"].schema,
    )
    nodes = {n for s, t, _ in edges for n in (s, t)}
    column_rows = spark.createDataFrame(
        [
            (st, sc, tt, tc, ty, "IDENTITY", "query", "fp", None, "sys", None, None, occurrences)
            for st, sc, tt, tc, ty in (COLUMNS if columns is None else columns)
            if st in nodes and tt in nodes
        ],
        TABLES["column_lineage"].schema,
    )
    for name, rows in (("table_lineage", table_rows), ("column_lineage", column_rows)):
        tables.ensure(name)
        _, path = tables.location(name)
        rows.write.format("delta").mode("overwrite").save(path)


def _tables(spark: SparkSession, base: Path) -> LineageTables:
    return LineageTables(spark, SinkSettings(base_path=str(base)))


def _read(tables: LineageTables, name: str) -> DataFrame:
    return tables.read(name)


def _assert_stored_equal_full_recompute(
    tables: LineageTables, settings: GraphSettings, assert_frames_equal: Callable[..., None]
) -> GraphResult:
    """Every analytics table as stored equals a full recompute of the stored edges
    (``analyze``, as the full refresh runs it); returns that recompute."""
    full, _ = analyze(
        tables.read("table_lineage"), tables.read("column_lineage"), graph_options(settings)
    )
    expected = {
        "lineage_nodes": full.nodes,
        "lineage_paths": full.paths,
        "table_closure": full.table_closure,
        "column_closure": full.column_closure,
        COMPONENTS_TABLE: full.components,
    }
    for name, rows in expected.items():
        stored = _read(tables, name)
        assert_frames_equal(stored, _like(stored, rows))
    return full


SETTINGS = GraphSettings(incremental_min_edges=0)
"""Incremental runs after the first (at the default ``incremental_min_edges``, graphs this small
are recomputed in full)."""


def _versions(tables: LineageTables) -> dict[str, int]:
    return {name: tables.latest_version(name) for name in (*GRAPH_TABLES, COMPONENTS_TABLE)}


@dataclass(frozen=True)
class Run:
    """A warehouse folder and the summary of the graph run that left it as it is."""

    base: Path
    summary: GraphSummary
    versions: dict[str, int]
    """The analytics tables' versions after the run."""


def _copy(spark: SparkSession, run: Run, target: Path) -> LineageTables:
    """A copy of ``run``'s warehouse at ``target`` (Delta tables are relocatable, and the
    recorded graph state names versions and table ids, no path), for a test to edit."""
    shutil.copytree(run.base, target)
    return _tables(spark, target)


@pytest.fixture(scope="module")
def first_run(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """FIRST's edges and the first graph run over them (a full refresh: nothing is stored
    yet): the state the tests below start from, each in a copy of its own."""
    base = tmp_path_factory.mktemp("first_run")
    tables = _tables(spark, base)
    _write_edges(spark, tables, FIRST)
    summary = run_graph_stage(tables, SETTINGS)
    return Run(base, summary, _versions(tables))


@dataclass(frozen=True)
class Reruns:
    """The runs that followed the first one in one warehouse (``base``), in order."""

    base: Path
    again: GraphSummary
    """The edge tables untouched."""
    again_versions: dict[str, int]
    stats_only: GraphSummary
    """New edge table versions holding the same edges (only their usage stats differ)."""
    stats_only_versions: dict[str, int]
    second: GraphSummary
    """SECOND's edges: the events island grew and the hub island is new (incremental)."""
    second_versions: dict[str, int]


@pytest.fixture(scope="module")
def reruns(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, first_run: Run) -> Reruns:
    """A copy of the first run's warehouse through three more runs: the edge tables untouched,
    new versions of them with the same edges, then SECOND's edges. One scenario for the tests
    of runs that must write nothing and of the incremental run against a full refresh (the
    runs that write nothing leave the stored state as it was, so the incremental run of
    SECOND reads the change data feed over both new edge table versions)."""
    base = tmp_path_factory.mktemp("reruns") / "wh"
    tables = _copy(spark, first_run, base)
    again = run_graph_stage(tables, SETTINGS)
    again_versions = _versions(tables)
    _write_edges(spark, tables, FIRST, occurrences=5)
    stats_only = run_graph_stage(tables, SETTINGS)
    stats_only_versions = _versions(tables)
    _write_edges(spark, tables, SECOND)
    second = run_graph_stage(tables, SETTINGS)
    return Reruns(
        base, again, again_versions, stats_only, stats_only_versions, second, _versions(tables)
    )


@pytest.fixture(scope="module")
def second_full(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """SECOND's edges in a new warehouse and a graph run with ``full_refresh``: the reference
    the incremental runs over the same edges are compared with."""
    base = tmp_path_factory.mktemp("second_full")
    tables = _tables(spark, base)
    _write_edges(spark, tables, SECOND)
    summary = run_graph_stage(tables, SETTINGS, full_refresh=True)
    return Run(base, summary, _versions(tables))


def test_graph_stage_incremental_equals_full_refresh(
    spark: SparkSession,
    first_run: Run,
    reruns: Reruns,
    second_full: Run,
    assert_frames_equal: Callable[..., None],
) -> None:
    assert first_run.summary.components == 2  # orders+customers, and the events island
    # raw.events' island grew and hub.h is new; the orders/customers component is untouched
    assert not reruns.second.full_refresh
    assert reruns.second.components == 3
    assert reruns.second.components_recomputed == 2

    incremental = _tables(spark, reruns.base)
    full = _tables(spark, second_full.base)
    assert second_full.summary.full_refresh
    for name in (*GRAPH_TABLES, COMPONENTS_TABLE):
        assert_frames_equal(_read(incremental, name), _read(full, name))

    nodes = {r["node"]: r for r in _read(full, "lineage_nodes").collect()}
    assert nodes["s3://landing/events"]["kind"] == "external"
    assert nodes["rpt.daily"]["kind"] == "view"
    assert nodes["hub.h"]["on_cycle"] and nodes["hub.k"]["on_cycle"]
    assert not nodes["mart.sales"]["on_cycle"]
    downstream = {
        r["descendant"]
        for r in _read(full, "table_closure").where(F.col("ancestor") == "raw.orders").collect()
    }
    assert downstream == {"stg.orders", "mart.sales", "rpt.daily"}
    direct = _read(full, "column_closure").where(
        "ancestor_table = 'raw.orders' AND descendant_table = 'mart.sales'"
    )
    assert {(r["ancestor_column"], r["direct_min_distance"]) for r in direct.collect()} == {
        ("amount", 2),
        ("status", None),
    }


def test_graph_stage_rerun_without_changes_recomputes_nothing(
    spark: SparkSession,
    tmp_path: Path,
    first_run: Run,
    assert_frames_equal: Callable[..., None],
) -> None:
    tables = _copy(spark, first_run, tmp_path / "wh")
    before = {name: _read(tables, name).localCheckpoint() for name in GRAPH_TABLES}
    again = run_graph_stage(tables, SETTINGS)
    assert again.components_recomputed == 0
    for name, rows in before.items():
        assert_frames_equal(_read(tables, name), rows)


def test_graph_stage_with_no_changed_component_writes_nothing(
    first_run: Run, reruns: Reruns
) -> None:
    first, written = first_run.summary, first_run.versions

    # the edge tables untouched: nothing is read or written
    again = reruns.again
    assert (again.components, again.components_recomputed) == (first.components, 0)
    assert again.rows_written == {}
    assert reruns.again_versions == written

    # new edge table versions with the same edges (usage stats only): still nothing written
    stats_only = reruns.stats_only
    assert (stats_only.components, stats_only.components_recomputed) == (first.components, 0)
    assert reruns.stats_only_versions == written

    # a changed component: one commit per table at most
    assert reruns.second.components_recomputed == 2
    after = reruns.second_versions
    assert {name: after[name] - written[name] for name in after} == dict.fromkeys(after, 1)


# --- incremental runs against full refreshes ------------------------------------------------

Table = tuple[str, str, str]
Column = tuple[str, str, str, str, str]

BASE: list[Table] = [
    ("a.r1", "a.s1", "query"),
    ("a.r2", "a.s1", "query"),
    ("a.s1", "a.m1", "query"),
    ("a.s1", "a.m2", "query"),
    ("a.m1", "a.v1", "view"),
    ("a.m2", "a.v1", "view"),
    ("a.v1", "a.p1", "query"),
    ("a.p1", "a.q1", "query"),  # a.r1 -> a.q1 is 5 hops: beyond max_depth
    ("b.r1", "b.s1", "query"),
    ("b.s1", "b.m1", "query"),
    ("b.m1", "b.p1", "query"),
]


def _columns_of(edges: list[Table], rng: random.Random) -> list[Column]:
    """Two or three column edges per table edge, DIRECT or INDIRECT at random."""
    out = []
    for s, t, _ in edges:
        for i in rng.sample(range(4), rng.randint(2, 3)):
            kind = rng.choice(("DIRECT", "DIRECT", "INDIRECT"))
            out.append((s, f"c{i}", t, f"c{rng.randrange(4)}", kind))
    return sorted(set(out))


def _random_edge(edges: list[Table], rng: random.Random) -> Table:
    nodes = sorted({n for s, t, _ in edges for n in (s, t)})
    return (rng.choice(nodes), rng.choice(nodes), "query")


def _edit_sequence(seed: int) -> list[tuple[str, list[Table], list[Column]]]:
    """Table and column edges after each edit; every step mixes scripted and random edits."""
    rng = random.Random(seed)
    edges = list(BASE)
    columns = _columns_of(edges, rng)
    steps = [("start", list(edges), list(columns))]
    # merge the two components (b.r1's component gets a.r1's id), close a cycle, add at random
    added = [("a.m2", "b.s1", "query"), ("a.q1", "a.s1", "query"), _random_edge(edges, rng)]
    edges += [e for e in added if e not in edges]
    columns += _columns_of(added, rng)
    steps.append(("merge, cycle, add", list(edges), sorted(set(columns))))
    # column edges only: flip one edge's kind, add one, drop one
    s, sc, t, tc, kind = columns.pop(rng.randrange(len(columns)))
    columns.append((s, sc, t, tc, "INDIRECT" if kind == "DIRECT" else "DIRECT"))
    columns.append(("a.r2", "c9", "a.s1", "c9", "DIRECT"))
    columns.pop(rng.randrange(len(columns) - 1))
    steps.append(("columns only", list(edges), sorted(set(columns))))
    # split again, break the cycle, redefine the view, remove an edge at random
    dropped = {("a.m2", "b.s1", "query"), ("a.q1", "a.s1", "query"), ("a.m1", "a.v1", "view")}
    dropped.add(rng.choice([e for e in edges if e not in dropped]))
    edges = [e for e in edges if e not in dropped] + [("a.s1", "a.v1", "view")]
    kept = {(s, t) for s, t, _ in edges}
    columns = [c for c in columns if (c[0], c[2]) in kept] + _columns_of(edges[-1:], rng)
    steps.append(("split, break cycle, redefine view, remove", edges, sorted(set(columns))))
    return steps


def _like(stored: DataFrame, rows: DataFrame) -> DataFrame:
    """``rows`` (a few, computed) with the stored table's schema (column comments included)."""
    return stored.sparkSession.createDataFrame(
        rows.select(*stored.columns).collect(), stored.schema
    )


@pytest.mark.parametrize("seed", [7])
def test_incremental_runs_equal_full_refreshes_over_random_edits(
    spark: SparkSession, tmp_path: Path, assert_frames_equal: Callable[..., None], seed: int
) -> None:
    # a small cap and depth, so truncated closures and depth-cut paths occur
    settings = GraphSettings(
        max_depth=3, max_paths_per_root=3, max_closure_per_node=3, incremental_min_edges=0
    )
    tables = _tables(spark, tmp_path)
    truncated = 0
    for step, edges, columns in _edit_sequence(seed):
        _write_edges(spark, tables, edges, columns=columns)
        summary = run_graph_stage(tables, settings)
        assert summary.full_refresh == (step == "start"), step
        if step == "start":
            continue  # a full refresh itself
        full = _assert_stored_equal_full_recompute(tables, settings, assert_frames_equal)
        truncated += full.table_closure.where("truncated").count()
        # the digest the run recorded (updated from the changed edges) is the edges' digest
        state = stored_state(tables)
        assert state is not None
        assert state["digest"] == input_digest(tables, state["lineage_graph_inputs"]), step
        if step == "columns only":
            assert summary.closure_sources_recomputed == 0
            assert summary.components_recomputed == 0
            assert summary.column_sources_recomputed > 0
    assert truncated > 0


def test_a_leaf_change_recomputes_its_ancestors_and_columns_alone_update_column_closure(
    spark: SparkSession, tmp_path: Path, first_run: Run
) -> None:
    first = first_run.summary
    assert first.full_refresh and first.closure_sources_recomputed == 7  # every source
    tables = _copy(spark, first_run, tmp_path / "wh")

    # a new edge under the leaf rpt.daily: its ancestors (and itself) alone, not the events
    _write_edges(spark, tables, [*FIRST, ("rpt.daily", "rpt.monthly", "query")])
    leaf = run_graph_stage(tables, SETTINGS)
    assert not leaf.full_refresh
    ancestors = {"rpt.daily", "mart.sales", "stg.orders", "stg.customers"}
    assert leaf.closure_sources_recomputed == len(ancestors | {"raw.orders", "raw.customers"})
    assert leaf.components_recomputed == 1
    downstream = _read(tables, "table_closure").where("descendant = 'rpt.monthly'")
    assert {r["ancestor"] for r in downstream.collect()} == ancestors | {
        "raw.orders",
        "raw.customers",
    }

    # column edges only: one commit to column_closure, none to the other tables
    written = _versions(tables)
    extra = ("raw.customers", "id", "stg.customers", "customer_id", "DIRECT")
    _write_edges(
        spark, tables, [*FIRST, ("rpt.daily", "rpt.monthly", "query")], columns=[*COLUMNS, extra]
    )
    columns_only = run_graph_stage(tables, SETTINGS)
    assert (columns_only.closure_sources_recomputed, columns_only.column_sources_recomputed) == (
        0,
        1,
    )
    after = _versions(tables)
    assert {n for n in after if after[n] != written[n]} == {"column_closure", COMPONENTS_TABLE}
    new = _read(tables, "column_closure").where("ancestor_column = 'id'").collect()
    assert [
        (r["ancestor_table"], r["descendant_column"], r["direct_min_distance"]) for r in new
    ] == [("raw.customers", "customer_id", 1)]


def test_unreadable_previous_edges_fall_back_to_a_full_refresh(
    spark: SparkSession,
    tmp_path: Path,
    first_run: Run,
    second_full: Run,
    assert_frames_equal: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    tables = _copy(spark, first_run, tmp_path / "wh")
    _write_edges(spark, tables, SECOND)
    # the files of the version the last run read are vacuumed away
    check = "spark.databricks.delta.retentionDurationCheck.enabled"
    spark.conf.set(check, "false")
    try:
        tables.delta_table("table_lineage").vacuum(0)
    finally:
        spark.conf.unset(check)
    with caplog.at_level(logging.INFO, logger="lineage_udfs.spark.graph"):
        summary = run_graph_stage(tables, SETTINGS)
    assert summary.full_refresh
    lines = [r.getMessage() for r in caplog.records if "graph: full refresh" in r.getMessage()]
    assert len(lines) == 1 and "cannot be read back" in lines[0], lines
    # the full refresh of the same edges in a new warehouse is the reference
    full = _tables(spark, second_full.base)
    assert_frames_equal(_read(tables, "table_closure"), _read(full, "table_closure"))


def test_without_a_change_data_feed_the_edges_of_both_versions_are_compared(
    spark: SparkSession,
    tmp_path: Path,
    first_run: Run,
    second_full: Run,
    assert_frames_equal: Callable[..., None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    tables = _copy(spark, first_run, tmp_path / "wh")
    # the feed off for one version of each edge table (as in a warehouse from before the
    # feed): _write_edges' ensure() turns it on again before writing, so the range since the
    # stored run has a version without change data
    for name in ("table_lineage", "column_lineage"):
        _, path = tables.location(name)
        spark.sql(
            f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES (delta.enableChangeDataFeed = false)"
        )
    _write_edges(spark, tables, SECOND)
    with caplog.at_level(logging.INFO, logger="lineage_udfs.spark.graph"):
        summary = run_graph_stage(tables, SETTINGS)
    assert not summary.full_refresh and summary.components_recomputed == 2
    lines = [r.getMessage() for r in caplog.records if "change data feed" in r.getMessage()]
    assert len(lines) == 1 and lines[0].endswith("comparing the edges instead"), lines
    # the full refresh of the same edges in a new warehouse is the reference
    full = _tables(spark, second_full.base)
    for name in ("table_closure", "lineage_paths"):
        assert_frames_equal(_read(tables, name), _read(full, name))


def test_a_change_of_column_edges_alone_recomputes_column_closures_only(
    spark: SparkSession,
    tmp_path: Path,
    first_run: Run,
    caplog: pytest.LogCaptureFixture,
    assert_frames_equal: Callable[..., None],
) -> None:
    tables = _copy(spark, first_run, tmp_path / "wh")
    table_version = tables.latest_version("table_lineage")
    standing = ("lineage_nodes", "lineage_paths", "table_closure")
    versions = {name: tables.latest_version(name) for name in standing}
    extra = ("raw.customers", "id", "stg.customers", "customer_id", "DIRECT")
    rows = spark.createDataFrame(
        [(*extra, "IDENTITY", "query", "fp", None, "sys", None, None, 1)],
        TABLES["column_lineage"].schema,
    )
    _, path = tables.location("column_lineage")
    rows.write.format("delta").mode("append").save(path)  # table_lineage has no new version
    with caplog.at_level(logging.INFO, logger="lineage_udfs.spark.graph"):
        summary = run_graph_stage(tables, SETTINGS)
    assert tables.latest_version("table_lineage") == table_version
    assert not summary.full_refresh
    assert (summary.closure_sources_recomputed, summary.column_sources_recomputed) == (0, 1)
    assert not [r for r in caplog.records if "change data feed" in r.getMessage()]
    state = stored_state(tables)
    assert state is not None
    assert state["digest"] == input_digest(tables, state["lineage_graph_inputs"])
    # the table edges did not change: the column closures alone are recomputed, and the other
    # analytics tables get no commit
    assert [r for r in caplog.records if "the table edges unchanged" in r.getMessage()]
    assert {name: tables.latest_version(name) for name in standing} == versions
    assert summary.components_recomputed == 0

    # a full recompute of the same edges (analyze, as the full refresh runs it) is the reference
    _assert_stored_equal_full_recompute(tables, SETTINGS, assert_frames_equal)
    added = _read(tables, "column_closure").where(
        "ancestor_table = 'raw.customers' AND ancestor_column = 'id'"
    )
    assert "stg.customers" in {r["descendant_table"] for r in added.collect()}


def test_a_small_graph_whose_table_edges_changed_is_recomputed_in_full(
    spark: SparkSession,
    tmp_path: Path,
    first_run: Run,
    reruns: Reruns,
    caplog: pytest.LogCaptureFixture,
    assert_frames_equal: Callable[..., None],
) -> None:
    # the first run is a full refresh whatever graph.incremental_min_edges says (nothing is
    # stored), and the stage records no setting: the module's first run stands for it
    assert first_run.summary.full_refresh
    settings = GraphSettings(incremental_min_edges=1000)
    tables = _copy(spark, first_run, tmp_path / "small")
    _write_edges(spark, tables, SECOND)
    with caplog.at_level(logging.INFO, logger="lineage_udfs.spark.graph"):
        second = run_graph_stage(tables, settings)
    assert second.full_refresh and second.components_recomputed == second.components
    assert [r for r in caplog.records if "graph.incremental_min_edges" in r.getMessage()]

    # the same edit with graph.incremental_min_edges 0: an incremental run, the same tables
    incremental = _tables(spark, reruns.base)
    assert not reruns.second.full_refresh
    for name in (*GRAPH_TABLES, COMPONENTS_TABLE):
        assert_frames_equal(_read(tables, name), _read(incremental, name))
    # nothing new: still no recompute, no commit
    versions = _versions(tables)
    assert run_graph_stage(tables, settings).components_recomputed == 0
    assert _versions(tables) == versions


def _graph_job_versions(tables: LineageTables) -> dict[str, int | None]:
    return {
        name: tables.latest_version(name) if tables.exists(name) else None
        for name in (*GRAPH_TABLES, COMPONENTS_TABLE)
    }


def test_a_graph_over_max_edges_stops_with_one_line_before_writing_anything(
    spark: SparkSession, tmp_path: Path, first_run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    # FIRST: 7 table edges; COLUMNS within FIRST's tables: 4 column edges: 11 in all
    tables = _tables(spark, tmp_path)
    _write_edges(spark, tables, FIRST)
    settings = JobSettings(
        sink=SinkSettings(base_path=str(tmp_path)), graph=GraphSettings(max_edges=10)
    )
    with pytest.raises(GraphTooLargeError) as raised:
        run_graph_stage(tables, settings.graph)
    message = str(raised.value)
    assert "\n" not in message and "graph.max_edges = 10" in message
    assert message.startswith("graph: 11 edges ")
    # stopped before any work: not one analytics table created
    assert set(_graph_job_versions(tables).values()) == {None}

    # through the job's entry: one ERROR line naming the setting, exit code 1
    code = run_loaded_job(
        "analyze_graph",
        lambda: settings,
        lambda s: graph_line(run_graph(spark, s, full_refresh=False)),
    )
    errors = [line for line in capsys.readouterr().err.splitlines() if "ERROR" in line]
    assert code == 1
    assert len(errors) == 1 and "graph.max_edges = 10" in errors[0], errors
    assert set(_graph_job_versions(tables).values()) == {None}

    # at the bound it runs (over a copy of the module's first run of the same edges: the
    # bound is checked before anything else, then the stored analytics stand); lowered below
    # a grown graph, the stored analytics stay as they were
    tables = _copy(spark, first_run, tmp_path / "analyzed")
    assert run_graph_stage(tables, GraphSettings(max_edges=11)).components == 2
    before = _graph_job_versions(tables)
    _write_edges(spark, tables, SECOND)
    with pytest.raises(GraphTooLargeError, match=r"graph: 15 edges .*graph\.max_edges = 11"):
        run_graph_stage(tables, GraphSettings(max_edges=11))
    assert _graph_job_versions(tables) == before


def test_the_default_edge_bound_scales_with_spark_driver_memory(spark: SparkSession) -> None:
    memory = spark.sparkContext.getConf().get("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
    gib = {"g": 1.0, "m": 1 / 1024}[memory[-1].lower()] * float(memory[:-1])
    bound, source = edge_bound(spark, GraphSettings())
    assert bound == int(gib * EDGES_PER_DRIVER_GIB)
    assert "spark.driver.memory" in source and "graph.max_edges = 0" in source
    assert edge_bound(spark, GraphSettings(max_edges=5)) == (5, "graph.max_edges = 5")
