"""Two real producers, one graph.

A PySpark job runs with the OpenLineage Spark listener (``listener_job.py``: a path-based Delta
write, catalog-table writes, a MERGE) and writes its events to a file; a SQL query log reads
the same tables by catalog name. The extraction job reads both sources and the graph stage
runs: with dataset identity on, the graph is one connected component, without it several
(``testbed_graph.py``, a process of its own). The MERGE both producers see gives the same
column edges when the parser runs under the engine's conventions.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_udfs.core.ol_events import producer_kind
from lineage_udfs.core.options import ENGINE_CONVENTIONS, ParserOptions
from tests.support.listener_testbed import (
    FIXTURE,
    ROOT,
    direct,
    listener_merge_edges,
    parser_merge_edges,
    read_events,
)

pytestmark = [pytest.mark.engine, pytest.mark.spark, pytest.mark.delta]

HERE = Path(__file__).resolve().parent


def _run(args: list[str], what: str) -> str:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        tail = [line for line in done.stderr.splitlines() if line.strip()][-5:]
        pytest.fail(f"{what} failed (exit {done.returncode}): {' | '.join(tail)}")
    print(f"{what}: {time.perf_counter() - t0:.0f} s")
    return done.stdout


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The listener job's events and DESCRIBE DETAIL export, fresh from this run."""
    work = tmp_path_factory.mktemp("listener")
    out = {"events": work / "events.jsonl", "locations": work / "table_locations.jsonl"}
    _run(
        [
            str(HERE / "listener_job.py"),
            "--workdir",
            str(work / "job"),
            "--events",
            str(out["events"]),
            "--table-locations",
            str(out["locations"]),
        ],
        "the listener job",
    )
    return out


def test_the_listener_wrote_a_path_write_and_catalog_writes(produced: dict[str, Path]) -> None:
    events = read_events(produced["events"])
    complete = [e for e in events if e["eventType"] == "COMPLETE"]
    assert complete
    assert {producer_kind(e["producer"]) for e in events} == {"openlineage:spark"}
    outputs = [o for e in complete for o in e.get("outputs") or []]
    path_only = [
        o
        for o in outputs
        if o["name"].endswith("lake/country_stats") and "symlinks" not in o["facets"]
    ]
    assert path_only, "no path-based Delta write among the outputs"
    linked = {
        i["name"].removeprefix("spark_catalog.")
        for o in outputs
        for i in (o["facets"].get("symlinks") or {}).get("identifiers", [])
    }
    assert {"shop.customers", "mart.top_countries"} <= linked


def test_one_component_with_identity_several_without(produced: dict[str, Path]) -> None:
    line = (
        _run(
            [
                str(HERE / "testbed_graph.py"),
                "--events",
                str(produced["events"]),
                "--table-locations",
                str(produced["locations"]),
                "--log",
                str(FIXTURE / "query_log.jsonl"),
            ],
            "the extraction and graph stage",
        )
        .strip()
        .splitlines()[-1]
    )
    result: dict[str, dict[str, list[str]]] = json.loads(line)
    off, on = len(result["off"]), len(result["on"])
    print(f"components: identity off {off}, identity on {on}")
    for mode in ("off", "on"):
        for nodes in result[mode].values():
            print(f"  {mode}: {nodes}")
    assert on == 1, result["on"]
    # the listener's paths; the log's mart.country_stats, mart.top_countries and
    # shop.customers with what they feed
    assert off == 4, result["off"]
    nodes_on = next(iter(result["on"].values()))
    # the catalog names the SQL log uses are the merged nodes' names
    assert {"mart.country_stats", "shop.customers", "reports.country_report"} <= set(nodes_on)
    # without identity, the listener's storage paths and the log's names are apart
    assert any(n.startswith("file:") for nodes in result["off"].values() for n in nodes)


def test_merge_seen_by_both_producers_gives_the_same_column_edges(
    produced: dict[str, Path],
) -> None:
    engine = listener_merge_edges(read_events(produced["events"]))
    assert engine, "the listener gave no column lineage for the MERGE"
    conventions = ParserOptions(**ENGINE_CONVENTIONS["openlineage_spark"])
    assert direct(parser_merge_edges(conventions)) == direct(engine)
    # by default the parser leaves out the target's own unchanged columns (t.id <- t.id)
    missing = direct(engine) - direct(parser_merge_edges(ParserOptions()))
    assert {(e[0], e[1], e[3]) for e in missing} == {
        ("shop.customers", "id", "id"),
        ("shop.customers", "segment", "segment"),
    }


def test_the_recorded_fixture_is_this_jobs_output(produced: dict[str, Path]) -> None:
    """The events recorded under tests/data come from the same job: the same jobs, datasets
    and MERGE edges (run ids, times and the work directory differ)."""

    def shape(events: list[dict[str, Any]]) -> set[tuple[str, str]]:
        return {(e["eventType"], e["job"]["name"]) for e in events if e["eventType"] == "COMPLETE"}

    fresh, recorded = read_events(produced["events"]), read_events(FIXTURE / "events.jsonl")
    assert shape(fresh) == shape(recorded)
    assert listener_merge_edges(fresh) == listener_merge_edges(recorded)
