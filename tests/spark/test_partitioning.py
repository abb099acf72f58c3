"""Partitioning and storage of the job's intermediate data do not change its results.

The job derives ``spark.sql.shuffle.partitions`` from the input's size and keeps intermediate
results at ``execution.storage_level``; the lineage tables must be the same whatever they are.
"""

from __future__ import annotations

import json
from datetime import datetime
from math import ceil
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from lineage_udfs.settings import (
    ROW_OVERHEAD_BYTES,
    ExecutionSettings,
    IdentitySettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
    load_settings,
)
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.merges import merge_queries
from lineage_udfs.spark.extract.sizing import (
    MIN_STATEMENTS_PER_TASK,
    PARSE_TASKS_PER_CORE,
    READ_TASKS_PER_CORE,
    min_read_partitions,
    parse_partitions,
)
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.extract.transforms import DEDUPE_RANK, IS_RELEVANT, narrow_relevant_rows
from lineage_udfs.spark.storage.schemas import QUERIES
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]
LINEAGE = ("parsed_statements", "queries", "table_lineage", "column_lineage", "quarantine")
VOLATILE = {"parse_ms", "run_id"}

ETL_A = "INSERT INTO mart.a SELECT x, y FROM raw.s WHERE d = '{day}'"
ETL_B = "INSERT INTO mart.b SELECT k FROM raw.t WHERE n > {n}"
VIEW = "CREATE VIEW rep.v AS SELECT x FROM mart.a WHERE x > {n}"


def _crafted_log(path: Path) -> Path:
    """Rows whose outcome depends on which row wins: duplicate query ids, ties, null times."""
    rows: list[dict[str, Any]] = [
        # q1 twice: the earlier row (ETL_A) counts; its later ETL_B text is a duplicate
        {"query_id": "q1", "query_text": ETL_A.format(day="2024-01-02"), "t": "01-02T01"},
        {"query_id": "q1", "query_text": ETL_B.format(n=5), "t": "01-03T01"},
        # ETL_B still runs under q3: its representative is q3, not the dropped q1 row
        {"query_id": "q3", "query_text": ETL_B.format(n=7), "t": "01-04T01"},
        # same fingerprint as q1's ETL_A, earlier: q0 becomes ETL_A's representative
        {"query_id": "q0", "query_text": ETL_A.format(day="2024-01-01"), "t": "01-01T01"},
        # a byte-identical row logged twice
        {"query_id": "q4", "query_text": ETL_B.format(n=9), "t": "01-05T01"},
        {"query_id": "q4", "query_text": ETL_B.format(n=9), "t": "01-05T01"},
        # no start time
        {"query_id": "q5", "query_text": ETL_A.format(day="2024-02-01"), "t": None},
        # a view defined twice: the newer definition wins
        {"query_id": "v1", "query_text": VIEW.format(n=1), "t": "01-01T02", "kind": "view"},
        {"query_id": "v2", "query_text": VIEW.format(n=2) + " AND y < 3", "t": "01-06T02"},
        {"query_id": "n1", "query_text": "SELECT 1", "t": "01-01T03"},  # not relevant
        {"query_id": "e1", "query_text": "", "t": "01-01T04"},  # load failure
        {"query_id": "m1", "query_text": "INSERT INTO mart.c SELECT FROM WHERE", "t": "01-01T05"},
    ]
    lines = []
    for r in rows:
        lines.append(
            json.dumps(
                {
                    "query_id": r["query_id"],
                    "query_text": r["query_text"],
                    "start_time": f"2024-{r['t']}:00:00Z" if r["t"] else None,
                    "object_kind": r.get("kind", "query"),
                    "object_name": "rep.v" if "VIEW" in r["query_text"] else None,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _settings(base: Path, crafted: Path, execution: ExecutionSettings) -> JobSettings:
    shipped = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    sources = [s.model_copy(update={"path": str(ROOT / s.path)}) for s in shipped.sources]
    sources.append(
        SourceSettings(
            name="crafted", format="jsonl", path=str(crafted), defaults={"dialect": "spark"}
        )
    )
    return shipped.model_copy(
        update={
            "sources": sources,
            "sink": SinkSettings(base_path=str(base)),
            "execution": execution,
            # the runs are compared by the extraction's tables and summary: no identity step
            "identity": IdentitySettings(enabled=False),
        }
    )


def _snapshot(tables: LineageTables) -> dict[str, list[str]]:
    snapshot = {}
    for table in LINEAGE:
        frame = tables.read(table)
        frame = frame.drop(*[c for c in frame.columns if c in VOLATILE])
        snapshot[table] = sorted(repr(r) for r in frame.collect())
    return snapshot


@pytest.fixture(scope="module")
def runs(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[RunSummary, dict[str, list[str]], str]]:
    crafted = _crafted_log(tmp_path_factory.mktemp("crafted") / "crafted.jsonl")
    variants = {
        "one": ExecutionSettings(shuffle_partitions=1, storage_level="MEMORY_AND_DISK"),
        # auto: the sample is far below 1 MiB, so the floor (7) applies; tiny cache batches
        "many": ExecutionSettings(
            target_partition_bytes=1024 * 1024,
            min_shuffle_partitions=7,
            max_shuffle_partitions=9,
            storage_level="DISK_ONLY",
            cache_batch_rows=3,
            min_read_partitions=5,
        ),
    }
    out = {}
    for name, execution in variants.items():
        base = tmp_path_factory.mktemp(f"lineage-{name}")
        summary = extract(spark, _settings(base, crafted, execution))
        after = (
            spark.conf.get("spark.sql.shuffle.partitions"),
            spark.conf.get("spark.sql.inMemoryColumnarStorage.batchSize", None),
            spark.conf.get("spark.sql.files.minPartitionNum", None),
        )
        out[name] = (
            summary,
            _snapshot(LineageTables(spark, SinkSettings(base_path=str(base)))),
            after,
        )
    return out


def test_results_are_identical_with_one_or_many_shuffle_partitions(runs: dict) -> None:
    one, many = runs["one"], runs["many"]
    assert one[0].shuffle_partitions == 1
    assert many[0].shuffle_partitions == 7
    for table in LINEAGE:
        assert one[1][table] == many[1][table], table
    assert one[1]["table_lineage"]  # not vacuous


def test_summary_counts_do_not_depend_on_partitioning(runs: dict) -> None:
    fields = (
        "rows_read",
        "load_quarantined",
        "rows_not_relevant",
        "rows_relevant",
        "duplicate_query_ids",
        "distinct_statements",
        "parsed_statements",
        "by_status",
        "table_edges_in_scope",
        "column_edges_in_scope",
        "input_bytes",
        "input_fingerprint",
    )
    values = {name: tuple(getattr(s, f) for f in fields) for name, (s, _, _) in runs.items()}
    assert values["one"] == values["many"]


def test_duplicate_query_ids_keep_the_earliest_row_and_its_statement(runs: dict) -> None:
    summary, snapshot, _ = runs["many"]
    assert summary.duplicate_query_ids == 2  # q1's later row and q4's second row
    queries = [r for r in snapshot["queries"] if "query_id='q1'" in r]
    assert len(queries) == 1 and "2024, 1, 2, 1, 0" in queries[0]
    # mart.b is still written: by q3 and q4 (not by the dropped q1 row)
    edges = [r for r in snapshot["table_lineage"] if "target_table='mart.b'" in r]
    assert len(edges) == 1 and "occurrences=2" in edges[0]
    edges = [r for r in snapshot["table_lineage"] if "target_table='mart.a'" in r]
    assert edges and all("occurrences=3" in e for e in edges)  # q0, q1, q5


def test_auto_partitions_follow_the_input_size_within_bounds(runs: dict) -> None:
    summary = runs["many"][0]
    assert summary.input_bytes > 10_000  # the SQL text of the sample logs
    wanted = ceil((summary.input_bytes + ROW_OVERHEAD_BYTES * summary.rows_read) / 1024**2)
    assert wanted < 7
    assert summary.shuffle_partitions == min(9, max(7, wanted))


def test_the_session_confs_are_restored_after_the_run(runs: dict) -> None:
    # the test session's values, though each run set its own while it ran
    assert {after for _, _, after in runs.values()} == {("2", None, None)}


@pytest.mark.parametrize(
    ("statements", "expected"),
    [
        # (distinct statements, parse tasks on local[2]: 8 per core at most, >= 32 statements a
        # task, at least one task per core while there are statements for it)
        (0, 1),
        (1, 1),
        (2, 2),
        (40, 2),
        (100, 4),
        (32 * 16, 16),
        (32 * 16 + 1, 16),
        (1_000_000, 16),
    ],
)
def test_parse_partitions_follow_the_statement_count_within_the_cores_bounds(
    spark: SparkSession, statements: int, expected: int
) -> None:
    assert spark.sparkContext.defaultParallelism == 2
    assert PARSE_TASKS_PER_CORE == 8 and MIN_STATEMENTS_PER_TASK == 32
    assert parse_partitions(spark, statements) == expected


def test_read_partitions_default_to_four_per_core_unless_set(spark: SparkSession) -> None:
    key = "spark.sql.files.minPartitionNum"
    assert spark.conf.get(key, None) is None
    assert READ_TASKS_PER_CORE == 4
    assert min_read_partitions(spark, ExecutionSettings()) == "8"  # local[2]
    assert min_read_partitions(spark, ExecutionSettings(min_read_partitions=3)) == "3"
    spark.conf.set(key, "6")
    try:  # the session's own value is left alone
        assert min_read_partitions(spark, ExecutionSettings()) is None
    finally:
        spark.conf.unset(key)


# Rows of one query id that tie on (start_time, fingerprint) and differ elsewhere; the row
# marked True is the one ``facts.query_row_order`` keeps.
_T0, _T1, _T2 = (datetime(2024, 3, 1, 10, m) for m in (0, 5, 7))
TIED_ROWS: list[tuple[tuple[Any, ...], bool]] = [
    # the same end time: a failed status comes first, whatever the user
    (("q1", "fp", "alice", _T0, _T1, "SUCCESS"), False),
    (("q1", "fp", "bob", _T0, _T1, "FAILED"), True),
    (("q1", "fp", "carol", _T0, _T1, "SUCCESS"), False),
    # the same end time and status: user names ascending, a null last
    (("q2", "fp", "zed", _T0, _T1, "SUCCESS"), False),
    (("q2", "fp", None, _T0, _T1, "SUCCESS"), False),
    (("q2", "fp", "amy", _T0, _T1, "SUCCESS"), True),
    # the finished execution's record over the one logged while it ran
    (("q3", "fp", "alice", _T0, None, "RUNNING"), False),
    (("q3", "fp", "alice", _T0, _T2, "SUCCESS"), True),
    (("q3", "fp", "alice", _T0, _T1, "SUCCESS"), False),
]
_TIED_SCHEMA = (
    "query_id string, fingerprint string, user_name string, start_time timestamp,"
    " end_time timestamp, status string"
)


_TIED_COLUMNS = tuple(c.split()[0] for c in _TIED_SCHEMA.split(","))


def _tied_frame(spark: SparkSession, rows: list[tuple[Any, ...]], partitions: int) -> DataFrame:
    """``rows`` as relevant log rows (the other ``queries`` columns null), in ``partitions``."""
    given = spark.createDataFrame(rows, _TIED_SCHEMA)
    return given.select(
        *[
            F.col(c) if c in given.columns else F.lit(None).cast("string").alias(c)
            for c in QUERIES.columns
        ],
        F.lit(True).alias(IS_RELEVANT),
    ).repartition(partitions)


def _as_tied(rows: list[Row]) -> set[tuple[Any, ...]]:
    return {tuple(r[c] for c in _TIED_COLUMNS) for r in rows}


@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize("reverse", [False, True], ids=["in_order", "reversed"])
def test_duplicate_query_ids_keep_the_same_row_whatever_the_order_or_partitioning(
    spark: SparkSession, reverse: bool, partitions: int
) -> None:
    rows = [row for row, _ in TIED_ROWS]
    ranked = narrow_relevant_rows(_tied_frame(spark, rows[::-1] if reverse else rows, partitions))
    kept = ranked.where(F.col(DEDUPE_RANK) == 1).collect()
    assert _as_tied(kept) == {row for row, wins in TIED_ROWS if wins}
    assert ranked.count() == len(TIED_ROWS)


def test_a_stored_query_row_is_replaced_only_by_a_row_that_comes_first(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Rows of one query id read by different runs, in either order, leave the row that
    one run over all of them keeps."""
    by_id: dict[str, list[tuple[Any, ...]]] = {}
    for row, _ in TIED_ROWS:
        by_id.setdefault(row[0], []).append(row)
    runs = [list(batch) for batch in zip(*by_id.values(), strict=True)]  # a row per query id
    for name, order in (("in_order", runs), ("reversed", runs[::-1])):
        tables = LineageTables(spark, SinkSettings(base_path=str(tmp_path / name)))
        tables.ensure("queries")
        for batch in order:
            merge_queries(tables, _tied_frame(spark, batch, 1))
        stored = _as_tied(tables.read("queries").collect())
        assert stored == {row for row, wins in TIED_ROWS if wins}, name
