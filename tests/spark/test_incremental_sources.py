"""Incremental sources: a run reads only rows newer than the committed watermark, and a run that
crashes before committing its watermark is completed by the next run with nothing skipped or
counted twice (the tables end as one clean run over the same rows leaves them).

The identity step is off in every run here (``_settings``): it derives ``dataset_aliases``
from what is stored, not from what a run read, and no test here reads that table."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from lineage_udfs.core.errors import InputError
from lineage_udfs.settings import (
    ExecutionSettings,
    IdentitySettings,
    IncrementalSettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
)
from lineage_udfs.spark.extract import stage
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

COMPARED = ("queries", "parsed_statements", "table_lineage", "column_lineage", "quarantine")
VOLATILE = ("parse_ms", "run_id")


def _rows(first: int, last: int) -> list[dict[str, Any]]:
    """Log rows with a growing ``seq`` (2 x the day, then 2 x the last day + 1): an ETL
    statement per day, then a view redefinition."""
    rows = []
    for n in range(first, last + 1):
        day = f"2026-03-{n:02d}"
        text = (
            f"INSERT INTO mart.daily SELECT o.id, o.amount FROM raw.orders_{n % 3} o"
            f" WHERE o.day = '{day}'"
        )
        rows.append({"seq": 2 * n, "query_text": text, "start_time": f"{day}T01:00:00Z"})
    rows.append(
        {
            "seq": 2 * last + 1,
            "query_text": f"CREATE OR REPLACE VIEW rep.v AS SELECT id FROM raw.orders_{last % 3}",
            "object_kind": "view",
            "object_name": "rep.v",
            "start_time": f"2026-03-{last:02d}T02:00:00Z",
        }
    )
    return rows


NO_IDENTITY = IdentitySettings(enabled=False)


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _settings(logs: Path, base: Path, *, incremental: bool) -> JobSettings:
    source = SourceSettings(
        name="etl",
        format="jsonl",
        path=str(logs),
        defaults={"dialect": "spark"},
        incremental=IncrementalSettings(column="seq", type="long") if incremental else None,
    )
    return JobSettings(
        sources=[source], sink=SinkSettings(base_path=str(base)), identity=NO_IDENTITY
    )


def _snapshot(tables: LineageTables) -> dict[str, list[str]]:
    out = {}
    for table in COMPARED:
        frame = tables.read(table)
        frame = frame.drop(*[c for c in VOLATILE if c in frame.columns])
        out[table] = sorted(repr(r) for r in frame.collect())
    return out


def _watermark(tables: LineageTables) -> list[tuple[str, str, str]]:
    return sorted(
        (r.source_name, r.state_key, r.state_value) for r in tables.read("source_state").collect()
    )


def _crash_after_parse(original: Callable[..., None]) -> Callable[..., None]:
    def write(*args: Any) -> None:
        raise RuntimeError("crash after the parse, before any lineage write")

    return write


def _crash_after_lineage(original: Callable[..., None]) -> Callable[..., None]:
    def write(*args: Any) -> None:
        original(*args)
        raise RuntimeError("crash after the lineage MERGEs, before the watermark commit")

    return write


@pytest.fixture(scope="module")
def first_run(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, RunSummary]:
    """The warehouse folder after one incremental run over ``a.jsonl`` (days 1-4 and a view
    definition) on an empty one, and the run. Tests copy the folder (Delta tables are
    relocatable; ``source_state`` names the source, not its files)."""
    folder = tmp_path_factory.mktemp("first")
    (folder / "logs").mkdir()
    _write(folder / "logs" / "a.jsonl", _rows(1, 4))
    settings = _settings(folder / "logs", folder / "lineage", incremental=True)
    return folder / "lineage", extract(spark, settings)


@pytest.fixture(scope="module")
def one_clean_run(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> LineageTables:
    """One run without a watermark over ``a.jsonl`` and ``b.jsonl`` (days 1-7 and two view
    definitions) on an empty warehouse: what the crashed and resumed runs must leave. Only
    read."""
    folder = tmp_path_factory.mktemp("clean")
    (folder / "logs").mkdir()
    _write(folder / "logs" / "a.jsonl", _rows(1, 4))
    _write(folder / "logs" / "b.jsonl", _rows(5, 7))
    settings = _settings(folder / "logs", folder / "lineage", incremental=False)
    assert extract(spark, settings).status == "succeeded"
    return LineageTables(spark, settings.sink)


@pytest.mark.parametrize("crash", [_crash_after_parse, _crash_after_lineage])
def test_crash_before_watermark_commit_is_completed_by_next_run(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    crash: Callable[[Callable[..., None]], Callable[..., None]],
    first_run: tuple[Path, RunSummary],
    one_clean_run: LineageTables,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    _write(logs / "a.jsonl", _rows(1, 4))  # the rows the first run read, stored under "9"
    base = tmp_path / "lineage"
    first_base, first = first_run
    shutil.copytree(first_base, base)
    settings = _settings(logs, base, incremental=True)
    tables = LineageTables(spark, settings.sink)

    assert first.rows_read == 5
    assert _watermark(tables) == [("etl", "", "9")]

    _write(logs / "b.jsonl", _rows(5, 7))
    with monkeypatch.context() as patch:
        patch.setattr(stage, "write_batch", crash(stage.write_batch))
        with pytest.raises(RuntimeError, match="crash after"):
            extract(spark, settings)
    assert _watermark(tables) == [("etl", "", "9")]  # not advanced by the failed run
    runs = {r.status for r in tables.read("lineage_runs").collect()}
    assert runs == {"succeeded", "failed"}

    resumed = extract(spark, settings)
    assert resumed.rows_read == 4  # b.jsonl only: a.jsonl's rows are under the watermark
    assert _watermark(tables) == [("etl", "", "15")]

    idle = extract(spark, settings)
    assert idle.rows_read == 0 and idle.status == "succeeded"
    assert _watermark(tables) == [("etl", "", "15")]

    assert _snapshot(tables) == _snapshot(one_clean_run)
    occurrences = {r.fingerprint: r.occurrences for r in tables.read("parsed_statements").collect()}
    assert sum(occurrences.values()) == 9  # 7 ETL rows + 2 view definitions, none twice


def test_key_set_source_reads_new_and_changed_keys(spark: SparkSession, tmp_path: Path) -> None:
    """A pg_stat_statements-like snapshot (cumulative calls, no time): new keys and keys whose
    calls changed are read; keys gone from the snapshot leave the committed state."""
    source_path = tmp_path / "stats"
    schema = "queryid long, calls long, query_text string"

    def snapshot(rows: list[tuple[int, int, str]]) -> None:
        spark.createDataFrame(rows, schema).write.format("delta").mode("overwrite").save(
            str(source_path)
        )

    a = "INSERT INTO mart.a SELECT x FROM raw.a"
    b = "INSERT INTO mart.b SELECT y FROM raw.b"
    c = "INSERT INTO mart.c SELECT z FROM raw.c"
    snapshot([(1, 3, a), (2, 1, b)])
    settings = JobSettings(
        sources=[
            SourceSettings(
                name="stats",
                format="delta",
                path=str(source_path),
                columns={"query_id": "queryid"},
                defaults={"dialect": "postgres"},
                incremental=IncrementalSettings(keys=["queryid"], version="calls"),
            )
        ],
        sink=SinkSettings(base_path=str(tmp_path / "lineage")),
        identity=NO_IDENTITY,
    )
    tables = LineageTables(spark, settings.sink)
    assert extract(spark, settings).rows_read == 2
    assert extract(spark, settings).rows_read == 0  # nothing changed

    snapshot([(2, 5, b), (3, 1, c)])  # 1 evicted, 2 ran again, 3 is new
    assert extract(spark, settings).rows_read == 2
    state = sorted((r.state_key, r.state_value) for r in tables.read("source_state").collect())
    assert state == [('{"queryid":2}', "5"), ('{"queryid":3}', "1")]
    targets = {r.target_table for r in tables.read("table_lineage").collect()}
    assert targets == {"mart.a", "mart.b", "mart.c"}


def test_watermark_column_must_exist(spark: SparkSession, tmp_path: Path) -> None:
    logs = tmp_path / "logs.jsonl"
    _write(logs, _rows(1, 1))
    settings = _settings(logs, tmp_path / "lineage", incremental=False)
    source = settings.sources[0].model_copy(
        update={"incremental": IncrementalSettings(column="event_time")}
    )
    settings = settings.model_copy(update={"sources": [source]})
    with pytest.raises(Exception, match=r"incremental column\(s\) \['event_time'\]"):
        extract(spark, settings)


def _logged(query_id: str, hour: str, target: str, user: str = "etl") -> dict[str, Any]:
    return {
        "query_id": query_id,
        "query_text": f"INSERT INTO mart.{target} SELECT x FROM raw.{target}_src",
        "start_time": f"2026-03-01T{hour}:00Z",
        "user_name": user,
    }


def _stored_queries(tables: LineageTables) -> dict[str, Any]:
    return {r.query_id: r for r in tables.read("queries").collect()}


def _versions(tables: LineageTables) -> dict[str, int]:
    return {t: tables.latest_version(t) for t in TABLES if tables.exists(t)}


def test_lookback_reads_late_rows_within_the_window_and_changes_nothing_stored(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A timestamp watermark with a 2 h lookback: a row arriving late within the window is
    read by the next run, one below it is not; the rows read again change no stored row and
    add no duplicate, and a run with nothing new adds no Delta version to any table."""
    logs = tmp_path / "logs"
    logs.mkdir()
    _write(
        logs / "a.jsonl",
        [
            _logged("q1", "07:00", "a"),
            _logged("q2", "09:00", "a"),
            _logged("q3", "10:00", "b"),
            # one query id logged twice: the earlier row is its queries row; the later one
            # is inside the next run's window, the earlier one below it
            _logged("q9", "06:00", "c", user="alice"),
            _logged("q9", "09:30", "c", user="bob"),
        ],
    )
    source = SourceSettings(
        name="etl",
        format="jsonl",
        path=str(logs),
        defaults={"dialect": "spark"},
        incremental=IncrementalSettings(column="start_time", type="timestamp", lookback="2h"),
    )
    settings = JobSettings(
        sources=[source],
        sink=SinkSettings(base_path=str(tmp_path / "lineage")),
        execution=ExecutionSettings(skip_unchanged_input=False),  # every run reads its input
        identity=NO_IDENTITY,
    )
    tables = LineageTables(spark, settings.sink)
    assert extract(spark, settings).rows_read == 5
    assert _watermark(tables) == [("etl", "", "2026-03-01 10:00:00")]
    before = _stored_queries(tables)
    assert before["q9"].user_name == "alice"

    _write(
        logs / "b.jsonl",
        [
            _logged("q4", "08:30", "d"),  # late, within (08:00, 10:00]: read
            _logged("q5", "07:30", "e"),  # late, below the window: never read
            _logged("q6", "11:00", "f"),  # new
        ],
    )
    second = extract(spark, settings)
    # q2, q9 (09:30), q3 read again; q4 and q6 new
    assert second.rows_read == 5
    assert _watermark(tables) == [("etl", "", "2026-03-01 11:00:00")]
    after = _stored_queries(tables)
    assert sorted(after) == ["q1", "q2", "q3", "q4", "q6", "q9"]
    assert tables.read("queries").count() == 6  # no query id twice
    assert {q: after[q] for q in before} == before  # rows read again changed nothing
    targets = {r.target_table for r in tables.read("table_lineage").collect()}
    assert targets == {"mart.a", "mart.b", "mart.c", "mart.d", "mart.f"}

    versions = _versions(tables)
    idle = extract(spark, settings)  # nothing new: the window's rows only
    assert idle.rows_read == 3 and idle.status == "succeeded"
    assert _versions(tables) == versions
    assert _stored_queries(tables) == after


def test_lookback_must_fit_the_watermark_column(spark: SparkSession, tmp_path: Path) -> None:
    logs = tmp_path / "logs.jsonl"
    _write(logs, _rows(1, 1))
    settings = _settings(logs, tmp_path / "lineage", incremental=False)
    # without incremental.type, a JSON lines field is compared as read: as text
    spec = IncrementalSettings(column="seq", lookback="2h")
    source = settings.sources[0].model_copy(update={"incremental": spec})
    settings = settings.model_copy(update={"sources": [source]})
    with pytest.raises(InputError, match=r"'seq' is compared as string: set incremental.type"):
        extract(spark, settings)
