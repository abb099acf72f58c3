"""Small runs: a rerun with nothing new adds no Delta version to any table, and each stage of
a run commits at most once per table (extract → graph → emit in one session, real Delta).

The extraction-only tests start from copies of two warehouses built once per module (one run
over three statements, one over five) instead of each making its own first run."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from lineage_udfs.settings import (
    IdentitySettings,
    JobSettings,
    SinkSettings,
    SourceSettings,
    load_settings,
)
from lineage_udfs.spark.extract import merges
from lineage_udfs.spark.extract.context import RunSummary
from lineage_udfs.spark.extract.stage import extract
from lineage_udfs.spark.pipeline import run_extract
from lineage_udfs.spark.runtime.preflight import input_listing
from lineage_udfs.spark.storage.claim import CLAIM_TABLE
from lineage_udfs.spark.storage.schemas import TABLES
from lineage_udfs.spark.storage.tables import LineageTables

ROOT = Path(__file__).resolve().parents[2]


def _settings(tmp_path: Path) -> JobSettings:
    settings = load_settings([ROOT / "conf" / "base.yaml", ROOT / "conf" / "local.yaml"])
    sources = [s.model_copy(update={"path": str(ROOT / s.path)}) for s in settings.sources]
    sink = settings.sink.model_copy(update={"base_path": str(tmp_path / "lineage")})
    ol = settings.openlineage
    openlineage = ol.model_copy(
        update={
            "transport": ol.transport.model_copy(  # type: ignore[union-attr]
                update={"log_file_path": str(tmp_path / "events.jsonl")}
            ),
            "spool": ol.spool.model_copy(update={"path": str(tmp_path / "spool")}),
        }
    )
    return settings.model_copy(
        update={"sources": sources, "sink": sink, "openlineage": openlineage}
    )


def _versions(tables: LineageTables) -> dict[str, int]:
    return {name: tables.latest_version(name) for name in TABLES}


def test_rerun_with_nothing_new_adds_no_delta_version(spark: SparkSession, tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert settings.graph.enabled and settings.openlineage.enabled
    tables = LineageTables(spark, settings.sink)
    before_first = dict.fromkeys(TABLES, -1)

    first = run_extract(spark, settings)
    assert first.run.changed and first.emit is not None and first.emit.counts.emitted > 0
    after_first = _versions(tables)
    events = (tmp_path / "events.jsonl").read_text()
    # every table exists; setup (creation, properties) aside, one commit per table at most
    assert all(v >= 0 for v in after_first.values())
    history = {
        name: [
            r["operation"]
            for r in tables.delta_table(name).history().collect()
            if r["operation"] not in ("CREATE TABLE", "SET TBLPROPERTIES", "OPTIMIZE")
        ]
        for name in TABLES
        if after_first[name] > before_first[name]
    }
    # the warehouse claim: taken and released by the write stage and by the emission (renewed
    # each minute they work)
    claim = history.pop(CLAIM_TABLE)
    assert len(claim) >= 2 and set(claim) == {"MERGE"}, claim
    assert all(len(ops) <= 1 for ops in history.values()), history

    second = run_extract(spark, settings)
    assert second.run.status == "succeeded" and not second.run.changed
    assert second.run.parsed_statements == 0 and second.run.stored_already
    assert second.graph is not None and second.graph.components_recomputed == 0
    assert second.emit is not None and second.emit.counts.rows == 0
    assert _versions(tables) == after_first
    assert (tmp_path / "events.jsonl").read_text() == events


def _log(path: Path, days: range) -> None:
    rows = [
        {
            "query_id": f"q{n}",
            "query_text": f"INSERT INTO mart.daily_{n} SELECT o.id, o.amount FROM raw.orders o"
            f" WHERE o.day = '2026-03-{n:02d}'",
            "dialect": "spark",
            "start_time": f"2026-03-{n:02d}T01:00:00Z",
        }
        for n in days
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _snapshot(tables: LineageTables) -> dict[str, list[str]]:
    out = {}
    for table in ("queries", "parsed_statements", "table_lineage", "column_lineage"):
        frame = tables.read(table).drop("parse_ms", "run_id")
        out[table] = sorted(repr(r) for r in frame.collect())
    return out


def _job(log: Path, base: Path) -> JobSettings:
    """One JSON lines source ``etl`` and the warehouse at ``base``. The identity step is off:
    these tests are about which MERGEs the extraction skips, and the identity step's own
    commits on a rerun are checked with every stage on by
    test_rerun_with_nothing_new_adds_no_delta_version."""
    return JobSettings(
        sources=[SourceSettings(name="etl", format="jsonl", path=str(log))],
        sink=SinkSettings(base_path=str(base)),
        identity=IdentitySettings(enabled=False),
    )


@dataclass(frozen=True)
class FirstRun:
    """A warehouse after one run on an empty one, the log it read and the run's summary."""

    log: Path
    warehouse: Path
    run: RunSummary

    def copy(self, to: Path) -> Path:
        """A copy of the warehouse at ``to`` (Delta tables are relocatable; the recorded run
        names its sink, which a rerun does not compare, and the log, which stays where it
        is)."""
        shutil.copytree(self.warehouse, to)
        return to


def _first_run(spark: SparkSession, folder: Path, days: range) -> FirstRun:
    log, warehouse = folder / "log.jsonl", folder / "w"
    _log(log, days)
    run = extract(spark, _job(log, warehouse))
    assert run.status == "succeeded" and run.changed
    return FirstRun(log, warehouse, run)


@pytest.fixture(scope="module")
def three_statements(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """One run over q1-q3. Tests copy the warehouse; the log is read as it is (a test that
    changes it puts it back, modification time included)."""
    return _first_run(spark, tmp_path_factory.mktemp("three"), range(1, 4))


@pytest.fixture(scope="module")
def five_statements(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """One run over q1-q5: what a clean run over them leaves. Tests copy the warehouse or only
    read it."""
    return _first_run(spark, tmp_path_factory.mktemp("five"), range(1, 6))


def test_a_rerun_after_a_crash_between_merges_writes_again(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    three_statements: FirstRun,
    five_statements: FirstRun,
) -> None:
    """A rerun with nothing new skips the MERGEs only when the tables are as a finished run
    left them: after a run that died between two MERGEs, the same input is written again."""
    logs = tmp_path / "log.jsonl"
    settings = _job(logs, three_statements.copy(tmp_path / "w"))  # q1-q3 stored by a run
    tables = LineageTables(spark, settings.sink)

    _log(logs, range(1, 6))  # two new statements; the run dies after parsed_statements
    with monkeypatch.context() as patch:

        def crash(*args: object) -> None:
            raise RuntimeError("crash before the lineage MERGEs")

        patch.setattr(merges, "_merge_lineage", crash)
        with pytest.raises(RuntimeError, match="crash before"):
            extract(spark, settings)

    again = extract(spark, settings)  # nothing to parse, every query row stored
    assert again.parsed_statements == 0 and not again.stored_already
    assert again.table_edges_written > 0

    # one run over the same statements on an empty warehouse (only read here)
    clean = LineageTables(spark, SinkSettings(base_path=str(five_statements.warehouse)))
    assert _snapshot(tables) == _snapshot(clean)

    last = extract(spark, settings)  # now nothing is new: the MERGEs are skipped
    assert last.stored_already and not last.changed
    assert _snapshot(tables) == _snapshot(clean)


def test_stored_rows_delivered_again_through_another_source_are_not_written(
    spark: SparkSession, tmp_path: Path, five_statements: FirstRun
) -> None:
    """An export delivered twice (part of a stored log, under another path) skips the MERGEs;
    one whose rows differ from the stored ones does not."""
    again_log = tmp_path / "again.jsonl"
    base = five_statements.copy(tmp_path / "w")  # q1-q5 stored by a run
    tables = LineageTables(spark, SinkSettings(base_path=str(base)))

    def run(path: Path) -> RunSummary:
        return extract(spark, _job(path, base))

    stored = _versions(tables)

    _log(again_log, range(2, 4))  # rows 2 and 3 again, in another file
    again = run(again_log)
    assert again.stored_already and not again.changed
    assert _versions(tables) == stored

    rows = [json.loads(line) for line in again_log.read_text().splitlines()]
    # a stored query id with another value: the end time its stored row lacks, which makes
    # this row the one ``queries`` keeps (docs/tables.md#queries)
    rows[0]["end_time"] = "2026-03-02T01:05:00Z"
    again_log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    changed = run(again_log)
    assert not changed.stored_already and changed.changed
    first_seen = tables.read("queries").where("query_id = 'q2'").first()
    assert first_seen is not None and str(first_seen["end_time"]).startswith("2026-03-02 01:05")


@contextmanager
def _rewritten(path: Path, days: range) -> Iterator[None]:
    """``path`` holds the log of ``days`` in the block; then its own content and modification
    time again (a module fixture's log: as the other tests find it)."""
    content, status = path.read_bytes(), path.stat()
    try:
        _log(path, days)
        yield
    finally:
        path.write_bytes(content)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))


def test_a_rerun_on_unchanged_files_reads_nothing(
    spark: SparkSession, tmp_path: Path, three_statements: FirstRun
) -> None:
    """Unchanged files and settings, no table written since: the run reads nothing and adds
    no version. A changed file, a changed source setting or the option off: the run reads."""
    logs = three_statements.log  # the file the first run listed: the same path, size and time
    settings = _job(logs, three_statements.copy(tmp_path / "w"))
    source = settings.sources[0]
    tables = LineageTables(spark, settings.sink)
    first = three_statements.run
    assert first.changed and first.input_listing and first.unchanged_since is None
    stored = _versions(tables)

    again = extract(spark, settings)
    assert again.unchanged_since == first.run_id and not again.changed
    assert again.rows_read == 0 and again.stored_already
    assert "read" not in again.stage_seconds and _versions(tables) == stored
    assert again.input_listing == first.input_listing

    off = settings.model_copy(
        update={"execution": settings.execution.model_copy(update={"skip_unchanged_input": False})}
    )
    compared = extract(spark, off)  # reads and compares: stored already, nothing written
    assert compared.unchanged_since is None and compared.rows_read == 3
    assert compared.input_fingerprint == first.input_fingerprint  # the same rows, read again
    assert compared.stored_already and not compared.changed

    renamed = source.model_copy(update={"defaults": {"source_system": "spark://other"}})
    other = extract(spark, settings.model_copy(update={"sources": [renamed]}))
    assert other.unchanged_since is None and other.rows_read == 3 and other.changed

    with _rewritten(logs, range(1, 5)):  # one more row: the file's size changes
        grown = extract(spark, settings.model_copy(update={"sources": [renamed]}))
    assert grown.unchanged_since is None and grown.rows_read == 4 and grown.changed
    assert grown.parsed_statements == 1


def test_input_listing_tells_files_apart_and_gives_up_where_it_cannot_list(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tmp_path / "logs"
    (folder / "day=1").mkdir(parents=True)
    _log(folder / "day=1" / "a.jsonl", range(1, 3))

    def listing(path: Path | str, fmt: str = "jsonl") -> str | None:
        return input_listing(spark, [SourceSettings(name="s", format=fmt, path=str(path))])

    whole = listing(folder)
    assert whole is not None and whole == listing(folder)  # folders are listed recursively
    assert listing(folder / "*" / "*.jsonl") not in (None, whole)  # another path: another digest
    _log(folder / "day=1" / "b.jsonl", range(3, 4))
    assert listing(folder) not in (None, whole)  # a new file in a subfolder
    assert listing(tmp_path / "missing") is None
    jdbc = SourceSettings(
        name="pg", format="jdbc", jdbc={"url": "jdbc:postgresql://127.0.0.1/x", "table": "q"}
    )
    assert input_listing(spark, [jdbc]) is None
    assert listing("some_catalog.query_history", "delta") is None
