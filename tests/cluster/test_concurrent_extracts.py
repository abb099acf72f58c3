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

SLICES = {"a": (0, 400), "b": (200, 600)}
"""Rows of the generated log each extract reads: 200 of them in both (about 350 distinct query
texts each, ten views redefined by both among them). The test runs four extracts of them; the
overlap of the two applications is asserted from their event logs, whatever the size."""
ROWS = 600


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
    # every run's events once; the same events, but for the facets an emission derives from
    # the column edges stored when it ran (an output's column lineage and schema, the columns
    # read from each input): at once, an emission can run before the other extract stored the
    # edges of a view it redefined or that name an input's columns; one after the other, the
    # first emission ran before the second extract (docs/openlineage.md)
    at_once_events, one_by_one_events = _events(at_once), _events(one_by_one)
    assert Counter(map(_key, at_once_events)) == Counter(map(_key, one_by_one_events))
    assert set(Counter(map(_key, at_once_events)).values()) == {1}
    differ = sorted(set(at_once_events) ^ set(one_by_one_events), key=_key)
    stripped = {json.dumps(_without_column_facets(json.loads(e)), sort_keys=True)
                for e in differ}  # fmt: skip
    assert len(stripped) == len(differ) // 2, "the events differ in more than those facets"


def _key(event: str) -> tuple[str, str]:
    parsed = json.loads(event)
    return parsed["run"]["runId"], parsed["eventType"]


def _without_column_facets(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` without what the stored column edges give: the datasets' column lineage and
    schema facets."""
    for dataset in (*event["outputs"], *event["inputs"]):
        dataset["facets"] = {
            k: v for k, v in dataset["facets"].items() if k not in ("columnLineage", "schema")
        }
    return event


def _span(log: EventLog) -> tuple[int, int]:
    (began,) = [e["Timestamp"] for e in log.events if e["Event"] == "SparkListenerApplicationStart"]
    (ended,) = [e["Timestamp"] for e in log.events if e["Event"] == "SparkListenerApplicationEnd"]
    return int(began), int(ended)
