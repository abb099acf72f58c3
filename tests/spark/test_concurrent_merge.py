"""Two writers MERGE into the same Delta table at once: the one that loses the commit race is
retried on the new snapshot, and the table ends as the two MERGEs run one after the other leave
it. Deterministic: writer A's MERGE is held inside its source scan (after it took its snapshot)
until writer B has committed, so A's first commit always conflicts.

The same for whole runs: an extraction whose edge MERGE loses the race to another extraction,
and a graph stage whose MERGE into an analytics table loses it to another graph stage, end as
the runs one after the other (or without the race) leave the tables. Both start from one
warehouse, built once per module (one extraction and a graph stage) and copied per test."""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType

from lineage_udfs.settings import (
    GraphSettings,
    IdentitySettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
)
from lineage_udfs.spark.extract import stage as extract_stage
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.graph.stage import run_graph_stage
from lineage_udfs.spark.storage import writes
from lineage_udfs.spark.storage.schemas import QUERIES
from lineage_udfs.spark.storage.tables import LineageTables
from lineage_udfs.spark.storage.writes import Upsert

WAIT_SECONDS = 600


def _rows(spark: SparkSession, pairs: list[tuple[str, str]]) -> DataFrame:
    frame = spark.createDataFrame(pairs, "query_id string, fingerprint string")
    return frame.select(
        *[
            F.col(f.name) if f.name in frame.columns else F.lit(None).cast(f.dataType).alias(f.name)
            for f in QUERIES.schema
        ]
    )


def _held(rows: DataFrame, started: Path, release: Path, column: str = "fingerprint") -> DataFrame:
    """``rows`` whose scan signals ``started`` and then waits for ``release`` (a file: the scan
    runs in a Python worker process); ``column`` (a string) passes through a UDF that waits."""

    def hold(value: str) -> str:
        started.touch()
        deadline = time.monotonic() + WAIT_SECONDS
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return value

    return rows.coalesce(1).withColumn(column, F.udf(hold, StringType())(column))


def _table(tables: LineageTables) -> list[tuple[str, str]]:
    rows = tables.read("queries").select("query_id", "fingerprint").collect()
    return sorted((r["query_id"], r["fingerprint"]) for r in rows)


SEED = [("q0", "f0"), ("q2", "f2-old")]
WRITER_A = [("q1", "a1"), ("q2", "a2")]
WRITER_B = [("q2", "b2"), ("q3", "b3")]


def test_concurrent_merges_are_retried_and_equal_the_serial_result(
    spark: SparkSession, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    serial = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "serial")))
    serial.ensure("queries")
    serial.write("queries", Upsert(_rows(spark, SEED)))
    serial.write("queries", Upsert(_rows(spark, WRITER_B)))
    serial.write("queries", Upsert(_rows(spark, WRITER_A)))

    tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "concurrent")))
    tables.ensure("queries")
    tables.write("queries", Upsert(_rows(spark, SEED)))
    started, release = tmp_path / "a-started", tmp_path / "a-release"
    outcome: dict[str, object] = {}

    def writer_a() -> None:
        try:
            outcome["a"] = tables.write(
                "queries", Upsert(_held(_rows(spark, WRITER_A), started, release))
            )
        except Exception as exc:  # surfaced by the assertion below
            outcome["a"] = exc

    with caplog.at_level(logging.WARNING, logger="lineage_udfs.spark.storage"):
        thread = threading.Thread(target=writer_a)
        thread.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "writer A never reached its source scan"
        tables.write("queries", Upsert(_rows(spark, WRITER_B)))  # B commits while A is held
        release.touch()
        thread.join(WAIT_SECONDS)
    assert not thread.is_alive()
    assert not isinstance(outcome["a"], Exception), outcome["a"]
    retries = [r for r in caplog.records if "another writer committed" in r.getMessage()]
    assert retries, "writer A's first commit did not conflict"
    assert retries[0].getMessage().startswith("MERGE into queries:")
    assert _table(tables) == _table(serial) == sorted([*SEED[:1], *WRITER_A, WRITER_B[1]])


@contextmanager
def _first_merge_held(
    monkeypatch: pytest.MonkeyPatch, table: str, column: str, tmp_path: Path
) -> Iterator[Callable[[], None]]:
    """The first MERGE into ``table`` (from any thread) is held in its source scan (its
    ``column``, a string, passes through a UDF that waits); the block gets a function that
    waits until the MERGE is held. Leaving the block releases it."""
    started, release = tmp_path / f"{table}-started", tmp_path / f"{table}-release"
    original = writes._merge
    held = threading.Event()

    def merge(tables: LineageTables, name: str, source: DataFrame, on: str) -> object:
        if name == table and not held.is_set():
            held.set()
            source = _held(source, started, release, column)
        return original(tables, name, source, on)

    def wait() -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), f"the MERGE into {table} never reached its source scan"

    with monkeypatch.context() as patch:
        patch.setattr(writes, "_merge", merge)
        try:
            yield wait
        finally:
            release.touch()


def _in_thread(action: Callable[[], object]) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = action()
        except Exception as exc:  # surfaced by the caller's assertion
            outcome["result"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def _rows_of(tables: LineageTables, names: tuple[str, ...]) -> dict[str, list[str]]:
    out = {}
    for name in names:
        frame = tables.read(name)
        frame = frame.drop(*[c for c in ("run_id", "parse_ms") if c in frame.columns])
        out[name] = sorted(repr(r) for r in frame.collect())
    return out


def _retried(caplog: pytest.LogCaptureFixture, tables: LineageTables, table: str) -> bool:
    """Whether a MERGE into ``table`` lost a commit race and was retried."""
    head = f"MERGE into {table}: another writer committed"
    return any(r.getMessage().startswith(head) for r in caplog.records)


# --- an extraction's edge MERGE retried ---------------------------------------------------------

SEED_LOG = [("v1", "CREATE OR REPLACE VIEW rep.v AS SELECT a FROM raw.a", 1)]
RUN_A = [*SEED_LOG, ("v2", "CREATE OR REPLACE VIEW rep.v AS SELECT b FROM raw.b", 2)]
RUN_B = [*SEED_LOG, ("v3", "CREATE OR REPLACE VIEW rep.v AS SELECT c FROM raw.c", 3)]
"""Each run redefines the view; B's definition is the newest."""
EXTRACT_TABLES = ("queries", "parsed_statements", "table_lineage", "column_lineage", "quarantine")
GRAPH_TABLES = ("lineage_nodes", "lineage_paths", "table_closure", "column_closure")
FIRST_EDGES = [
    ("g1", "INSERT INTO s.b SELECT x FROM s.a", 1),
    ("g2", "INSERT INTO s.c SELECT x FROM s.b", 2),
]
MORE_EDGES = [
    *FIRST_EDGES,
    ("g3", "INSERT INTO s.d SELECT x FROM s.c", 3),
    ("g4", "INSERT INTO s.a2 SELECT y FROM s.z", 4),
]
GRAPH = GraphSettings(incremental_min_edges=0)  # the incremental path: MERGEs


def _extract_settings(base: Path, log: Path) -> JobSettings:
    source = SourceSettings(name="log", format="jsonl", path=str(log))
    # the races here are those of the edge and closure MERGEs: the identity step (it derives
    # dataset_aliases again on every run, and no test here reads that table) is off, which
    # saves its share of every extraction
    return JobSettings(
        sources=[source],
        sink=SinkSettings(base_path=str(base)),
        identity=IdentitySettings(enabled=False),
    )


def _log_file(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    lines = [
        json.dumps({"query_id": q, "query_text": sql, "start_time": f"2026-03-0{t}T01:00:00Z"})
        for q, sql, t in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def seeded(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a warehouse after one extraction of SEED_LOG and FIRST_EDGES (the view's
    first definition; the edges s.a -> s.b -> s.c) and one graph stage over it (a full
    refresh). Each test copies it (Delta tables are relocatable; the graph's recorded state
    names versions and table ids, no folder) and leaves it as it is."""
    folder = tmp_path_factory.mktemp("seeded")
    base = folder / "warehouse"
    log = _log_file(folder / "seed.jsonl", [*SEED_LOG, *FIRST_EDGES])
    assert extract(spark, _extract_settings(base, log)).status == "succeeded"
    run_graph_stage(LineageTables(spark, SinkSettings(base_path=str(base))), GRAPH)
    return base


def test_a_retried_edge_merge_derives_its_rows_again(
    spark: SparkSession,
    seeded: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run A's MERGE into table_lineage computed its rows (the view defined by A's statement,
    A's predecessor's edge stale), then run B redefined the view and committed: the retried
    MERGE must find B's definition current, not write A's edge back next to B's."""
    a_log, b_log = (
        _log_file(tmp_path / f"{name}.jsonl", rows) for name, rows in (("a", RUN_A), ("b", RUN_B))
    )
    serial_base, racing_base = tmp_path / "serial", tmp_path / "racing"
    shutil.copytree(seeded, serial_base)
    shutil.copytree(seeded, racing_base)
    for log in (b_log, a_log):  # B's commit comes first in the race: the same order
        assert extract(spark, _extract_settings(serial_base, log)).status == "succeeded"

    # write stages take turns through the warehouse claim; the MERGE's own retry still guards
    # writers the claim does not order (one whose claim lapsed): race them without it
    monkeypatch.setattr(extract_stage, "warehouse_claim", _no_claim)
    with (
        caplog.at_level(logging.WARNING, logger="lineage_udfs.spark.storage"),
        _first_merge_held(monkeypatch, "table_lineage", "fingerprint", tmp_path) as wait,
    ):
        thread, outcome = _in_thread(lambda: extract(spark, _extract_settings(racing_base, a_log)))
        wait()
        assert extract(spark, _extract_settings(racing_base, b_log)).status == "succeeded"
    thread.join(WAIT_SECONDS)
    assert not thread.is_alive()
    assert not isinstance(outcome["result"], Exception), outcome["result"]
    racing = LineageTables(spark, SinkSettings(base_path=str(racing_base)))
    assert _retried(caplog, racing, "table_lineage"), "run A's MERGE did not lose the race"
    edges = racing.read("table_lineage").where("target_table = 'rep.v'").collect()
    assert sorted(r["source_table"] for r in edges) == ["raw.c"]  # B's definition only
    serial = LineageTables(spark, SinkSettings(base_path=str(serial_base)))
    assert _rows_of(racing, EXTRACT_TABLES) == _rows_of(serial, EXTRACT_TABLES)


@contextmanager
def _no_claim(*args: object, **kwargs: object) -> Iterator[None]:
    yield


# --- a graph-stage MERGE retried -----------------------------------------------------------------


def test_a_graph_write_that_loses_a_race_is_retried(
    spark: SparkSession,
    seeded: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two graph stages at once on the same edges: A's incremental MERGE into table_closure is
    held until B has written the table; A's retry ends with the tables a graph stage without
    the race gives."""
    reference_base, racing_base = tmp_path / "reference", tmp_path / "racing"
    shutil.copytree(seeded, reference_base)  # FIRST_EDGES extracted, their graph stored
    reference = LineageTables(spark, SinkSettings(base_path=str(reference_base)))
    more = _extract_settings(reference_base, _log_file(tmp_path / "2.jsonl", MORE_EDGES))
    assert extract(spark, more).status == "succeeded"
    shutil.copytree(reference_base, racing_base)
    assert not run_graph_stage(reference, GRAPH).full_refresh

    racing = LineageTables(spark, SinkSettings(base_path=str(racing_base)))
    with (
        caplog.at_level(logging.WARNING, logger="lineage_udfs.spark.storage"),
        _first_merge_held(monkeypatch, "table_closure", "ancestor", tmp_path) as wait,
    ):
        thread, outcome = _in_thread(lambda: run_graph_stage(racing, GRAPH))
        wait()
        run_graph_stage(racing, GRAPH)  # B commits to table_closure while A is held
    thread.join(WAIT_SECONDS)
    assert not thread.is_alive()
    assert not isinstance(outcome["result"], Exception), outcome["result"]
    assert _retried(caplog, racing, "table_closure"), "A's MERGE did not lose the race"
    compared = (*GRAPH_TABLES, "graph_components")
    assert _rows_of(racing, compared) == _rows_of(reference, compared)


def test_a_create_that_loses_the_race_uses_the_other_writer_s_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Writer B finds the folder of ``queries`` that writer A is creating (its ``_delta_log``
    there with the temporary file of its first commit, not the commit yet): B's CREATE fails,
    then B waits for A's first commit and uses A's table. A's commit is played by copying the
    log of a table made elsewhere, a second after B started."""
    made = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "elsewhere")))
    made.ensure("queries")
    made.write("queries", Upsert(_rows(spark, SEED)))
    tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / "racing")))
    _, racing = tables.location("queries")
    assert racing is not None
    (Path(racing) / "_delta_log").mkdir(parents=True)
    (Path(racing) / "_delta_log" / f".{0:020d}.json.0f1e.tmp").write_text("{}")

    def writer_a_commits() -> None:
        time.sleep(1.0)
        _, source = made.location("queries")
        for commit in sorted((Path(str(source)) / "_delta_log").glob("*.json")):
            shutil.copy(commit, Path(racing) / "_delta_log" / commit.name)
        for data in Path(str(source)).glob("*.parquet"):
            shutil.copy(data, Path(racing) / data.name)

    thread = threading.Thread(target=writer_a_commits)
    thread.start()
    try:
        tables.ensure("queries")  # writer B
    finally:
        thread.join()
    assert _table(tables) == sorted(SEED)
