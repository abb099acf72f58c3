"""``execution.checkpoint_dir``: every checkpoint of a run is a reliable one in a folder of its
own, removed when the run ends (also when it fails), and the run's results are those of a run
with local checkpoints. Extract → graph → emit in one session, real Delta."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame

from lineage_udfs.settings import JobSettings, load_settings
from lineage_udfs.spark.extract import stage
from lineage_udfs.spark.pipeline import ExtractOutcome, run_extract
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]

COMPARED = (
    "parsed_statements",
    "queries",
    "table_lineage",
    "column_lineage",
    "quarantine",
    "lineage_nodes",
    "lineage_paths",
    "table_closure",
    "column_closure",
    "graph_components",
)
"""The tables compared between the runs (``lineage_runs`` records the settings themselves,
``openlineage_emissions`` its times)."""
VOLATILE = ("run_id", "parse_ms", "parsed_at")

FIRST_LOG = [
    ("q1", "INSERT INTO staging.orders SELECT id, amount FROM raw.orders", 1),
    ("q2", "INSERT INTO marts.sales SELECT o.id, o.amount * 2 AS amount FROM staging.orders o", 2),
    ("q3", "CREATE OR REPLACE VIEW reports.v AS SELECT id FROM marts.sales", 3),
    ("q4", "INSERT INTO marts.sales SELECT id, amount FROM staging.orders", 4),
]
SECOND_LOG = [
    ("q5", "INSERT INTO reports.extra SELECT id, amount FROM marts.sales", 5),
    ("q6", "INSERT INTO staging.orders SELECT id, amount FROM raw.refunds", 6),
]


def _log(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    lines = [
        json.dumps({"query_id": q, "query_text": sql, "start_time": f"2026-03-0{t}T01:00:00Z"})
        for q, sql, t in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _settings(root: Path, logs: list[Path], checkpoint_dir: Path | None) -> JobSettings:
    overlay = {
        "sources": [
            {"name": p.stem, "format": "jsonl", "path": str(p), "defaults": {"dialect": "spark"}}
            for p in logs
        ],
        "sink": {"base_path": str(root / "lineage")},
        "graph": {"incremental_min_edges": 0},  # the second run takes the incremental path
        # Neither the activity stage (it persists its frames and overwrites its tables) nor the
        # identity step (driver-side reads, one MERGE; no link here: the log rows name no
        # default database) checkpoints anything, and none of their tables is compared: on, they
        # only cost each of the four runs their time.
        "activity": {"enabled": False},
        "identity": {"enabled": False},
        "openlineage": {
            "enabled": True,
            "transport": {"type": "file", "log_file_path": str(root / "events.jsonl")},
            "spool": {"path": str(root / "spool")},
        },
    }
    path = root / "overlay.json"  # JSON is YAML
    path.write_text(json.dumps(overlay), encoding="utf-8")
    settings = load_settings([ROOT / "conf" / "base.yaml", path])
    if checkpoint_dir is None:
        return settings
    execution = settings.execution.model_copy(update={"checkpoint_dir": str(checkpoint_dir)})
    return settings.model_copy(update={"execution": execution})


def _tables(settings: JobSettings, spark: SparkSession) -> dict[str, list[str]]:
    tables = LineageTables(spark, settings.sink)
    out = {}
    for table in COMPARED:
        frame = tables.read(table)
        frame = frame.drop(*[c for c in VOLATILE if c in frame.columns])
        out[table] = sorted(repr(r) for r in frame.collect())
    return out


@contextmanager
def _local_checkpoints(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every ``DataFrame.localCheckpoint`` call of the block (from any thread), by caller."""
    calls: list[str] = []
    original = ClassicDataFrame.localCheckpoint

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        return original(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(ClassicDataFrame, "localCheckpoint", counted)
        yield calls


@contextmanager
def _watched(folder: Path) -> Iterator[set[str]]:
    """The files found under ``folder`` while the block runs (listed every 50 ms)."""
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            for parent, _, files in os.walk(folder):
                seen.update(str(Path(parent, f).relative_to(folder)) for f in files)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join()


def _two_runs(
    spark: SparkSession, root: Path, checkpoint_dir: Path | None
) -> tuple[list[ExtractOutcome], JobSettings]:
    root.mkdir()
    first, second = _log(root / "first.jsonl", FIRST_LOG), _log(root / "second.jsonl", SECOND_LOG)
    outcomes = [run_extract(spark, _settings(root, [first], checkpoint_dir))]
    settings = _settings(root, [first, second], checkpoint_dir)
    outcomes.append(run_extract(spark, settings))
    return outcomes, settings


def test_runs_with_a_checkpoint_dir_checkpoint_there_only_and_remove_it(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = spark.sparkContext.getCheckpointDir()
    with _local_checkpoints(monkeypatch) as local_calls:
        local, local_settings = _two_runs(spark, tmp_path / "local", None)
    assert local_calls, "the hook saw no local checkpoint of a run without checkpoint_dir"

    checkpoints = tmp_path / "checkpoints"
    with _local_checkpoints(monkeypatch) as calls, _watched(checkpoints) as seen:
        durable, settings = _two_runs(spark, tmp_path / "durable", checkpoints)
    assert calls == [], f"{len(calls)} local checkpoints with execution.checkpoint_dir set"
    run_ids = [outcome.run.run_id for outcome in durable]
    folders = {name.split(os.sep)[0] for name in seen}
    assert folders == set(run_ids), folders  # a folder per run, named by its id
    assert sum("rdd-" in name for name in seen) > 10, sorted(seen)  # the checkpoints' files
    assert checkpoints.is_dir() and list(checkpoints.iterdir()) == []  # removed after each run
    assert spark.sparkContext.getCheckpointDir() == before

    for outcome in (*local, *durable):
        assert outcome.run.status == "succeeded"
        assert outcome.graph is not None and outcome.emit is not None
    assert not durable[1].graph.full_refresh  # type: ignore[union-attr]
    assert _tables(settings, spark) == _tables(local_settings, spark)
    events = [(tmp_path / d / "events.jsonl").read_text().count("\n") for d in ("local", "durable")]
    assert events[0] == events[1] > 0
    assert [o.emit.counts.emitted for o in durable] == [o.emit.counts.emitted for o in local]  # type: ignore[union-attr]


def test_a_failed_run_removes_its_checkpoint_folder(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints = tmp_path / "checkpoints"
    settings = _settings(tmp_path, [_log(tmp_path / "log.jsonl", FIRST_LOG)], checkpoints)
    seen: list[Path] = []

    def fail(*args: object) -> Callable[..., None]:
        seen.extend(p for p in checkpoints.rglob("*") if p.is_file())  # the parse results
        raise RuntimeError("the write stage fails")

    monkeypatch.setattr(stage, "write_batch", fail)
    with pytest.raises(RuntimeError, match="the write stage fails"):
        run_extract(spark, settings)
    assert any("rdd-" in str(p) for p in seen), seen
    assert checkpoints.is_dir() and list(checkpoints.iterdir()) == []
    runs = LineageTables(spark, settings.sink).read("lineage_runs").collect()
    assert [r["status"] for r in runs] == ["failed"]
