"""Two extracts over overlapping input, run at once on the cluster into one warehouse, leave
the rows that the two run one after the other leave.

The input is two slices of bench/generate_log.py's log that share a third of their rows (the
same source name, so the shared rows have the same query ids). Each application gets one core
(``spark.cores.max``), so both run on the two-worker cluster at the same time; their event logs
show that they did. The reference runs the same two extracts one after the other on
``local[2]``. The graph stage is off (it reads every edge of the warehouse: run after both, it
is one run's work).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from .faults import EventLog
from .sample import (
    EXTRACT,
    RUN_LOGS,
    SampleRun,
    event_log,
    generate_log,
    log_overlay,
    run_sample,
    table_rows,
)
from .spark_submit import ROOT, start
from .standalone import StandaloneCluster

SLICES = {"a": (0, 2000), "b": (1000, 3000)}
"""Rows of the generated log each extract reads: 1,000 of them in both."""
ROWS = 3000


@pytest.fixture(scope="module")
def slices(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("slices")
    return {
        name: generate_log(root / f"{name}.parquet", ROWS, start=first, stop=last)
        for name, (first, last) in SLICES.items()
    }


def _overlays(cwd: Path, slices: dict[str, Path]) -> dict[str, Path]:
    """One overlay per extract: its slice, the graph stage off, its own OpenLineage file."""
    return {
        name: log_overlay(
            cwd,
            log,
            f"overlay-{name}.yaml",
            graph={"enabled": False},
            openlineage={
                "transport": {"log_file_path": str(cwd / f"events-{name}.jsonl")},
                "spool": {"path": str(cwd / f"spool-{name}")},
            },
        )
        for name, log in slices.items()
    }


def _arguments(overlay: Path) -> list[str]:
    return ["--config", str(ROOT / "conf" / "local.yaml"), "--config", str(overlay)]


def _events(cwd: Path) -> list[str]:
    return sorted(
        json.dumps(json.loads(line), sort_keys=True)
        for path in cwd.glob("events-*.jsonl")
        for line in path.read_text("utf-8").splitlines()
        if line
    )


def test_two_extracts_at_once_equal_the_two_one_after_the_other(
    cluster: StandaloneCluster, slices: dict[str, Path], tmp_path: Path
) -> None:
    one_by_one = tmp_path / "one-by-one"
    one_by_one.mkdir()
    for overlay in _overlays(one_by_one, slices).values():
        sequential = run_sample("local[2]", one_by_one, overlay=overlay)

    at_once = tmp_path / "at-once"
    at_once.mkdir()
    confs = {**event_log(at_once), "spark.cores.max": "1"}
    running = [
        start(cluster.master_url, EXTRACT, _arguments(overlay), cwd=at_once, confs=confs)
        for overlay in _overlays(at_once, slices).values()
    ]
    try:
        finished = [r.wait() for r in running]
    finally:
        for r in running:
            r.kill()
    for submitted in finished:
        submitted.check()

    # at once: each application's parse jobs began before the other application ended
    logs = [
        EventLog([json.loads(line) for line in path.read_text("utf-8").splitlines()])
        for path in sorted((at_once / "spark-events").iterdir())
    ]
    assert len(logs) == 2
    spans = [_span(log) for log in logs]
    parse_began = [log.parse_jobs()[0] for log in logs]
    assert parse_began[0] < spans[1][1] and parse_began[1] < spans[0][1], (spans, parse_began)

    concurrent = SampleRun(at_once, finished[-1])
    tables = sorted(p.name for p in sequential.lineage.iterdir())
    assert sorted(p.name for p in concurrent.lineage.iterdir()) == tables
    for table in tables:
        if table not in RUN_LOGS:  # what each run did differs (one parsed what the other had)
            assert table_rows(concurrent, table) == table_rows(sequential, table), table
    assert table_rows(sequential, "queries"), "the slices give lineage"
    # every run's events once; the same events, but for runs of a view the other extract
    # redefined: emitted after the new definition replaced the view's column edges, they carry
    # none (one after the other, the first emission ran before; docs/openlineage.md)
    at_once_events, one_by_one_events = _events(at_once), _events(one_by_one)
    assert Counter(map(_key, at_once_events)) == Counter(map(_key, one_by_one_events))
    assert set(Counter(map(_key, at_once_events)).values()) == {1}
    differ = sorted(set(at_once_events) ^ set(one_by_one_events), key=_key)
    redefined = _redefined_views(concurrent)
    for event in map(json.loads, differ):
        for output in event["outputs"]:
            assert output["name"] in redefined, (output["name"], redefined)
    stripped = {json.dumps(_without_column_facets(json.loads(e), redefined), sort_keys=True)
                for e in differ}  # fmt: skip
    assert len(stripped) == len(differ) // 2, "the events differ in more than those facets"


def _key(event: str) -> tuple[str, str]:
    parsed = json.loads(event)
    return parsed["run"]["runId"], parsed["eventType"]


def _redefined_views(run: SampleRun) -> set[str]:
    """The views with more than one stored definition (CREATE VIEW statements)."""
    definitions: Counter[str] = Counter()
    for row in map(json.loads, table_rows(run, "parsed_statements")):
        if "VIEW" in (row["statement_type"] or ""):
            definitions.update(set(row["targets"] or ()))
    return {view for view, n in definitions.items() if n > 1}


def _without_column_facets(event: dict[str, Any], views: set[str]) -> dict[str, Any]:
    """``event`` without what the column edges of its view give: the output's column lineage
    and schema, the inputs' schemas (the columns read)."""
    if any(output["name"] in views for output in event["outputs"]):
        for dataset in (*event["outputs"], *event["inputs"]):
            dataset["facets"] = {
                k: v for k, v in dataset["facets"].items() if k not in ("columnLineage", "schema")
            }
    return event


def _span(log: EventLog) -> tuple[int, int]:
    (began,) = [e["Timestamp"] for e in log.events if e["Event"] == "SparkListenerApplicationStart"]
    (ended,) = [e["Timestamp"] for e in log.events if e["Event"] == "SparkListenerApplicationEnd"]
    return int(began), int(ended)
