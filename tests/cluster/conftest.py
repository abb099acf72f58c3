"""Tests on a real Spark standalone cluster (``make test-cluster``): a master and two workers of
one core each on 127.0.0.1 (:mod:`standalone`), applications submitted with ``spark-submit
--master spark://127.0.0.1:PORT`` as a user submits them.

They are selected only by ``-m cluster``; any other run (``make test``, ``make test-fast``)
deselects them. The cluster starts once per session and is stopped by process group when the
session ends, also when a test or the start itself fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.selection import select_only_by_marker

from .sample import EVENTS, SampleRun, driver_only, event_log, run_sample
from .standalone import StandaloneCluster

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    select_only_by_marker(config, items, HERE, "cluster")


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """The running cluster: a master and two workers (1 core, 2 GiB each)."""
    started = StandaloneCluster(tmp_path_factory.mktemp("standalone"), workers=2, memory="2g")
    started.start()  # stops what it started if it fails
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def sample_runs(
    cluster: StandaloneCluster, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, SampleRun]:
    """The sample's extract (graph stage and emission included) on ``local[2]``, then on the
    cluster, with Spark's event log on and the OpenLineage folder (events file and spool) the
    driver's only (one after the other: the machine has two cores)."""
    root = tmp_path_factory.mktemp("sample-runs")
    on_cluster = root / "cluster"
    on_cluster.mkdir()
    confs = {**event_log(on_cluster), **driver_only(on_cluster, on_cluster / EVENTS.parent)}
    runs = {
        "local": run_sample("local[2]", root / "local"),
        "cluster": run_sample(cluster.master_url, on_cluster, confs=confs),
    }
    # the session's own line: conf/local.yaml's local[*] gave way to --master
    assert f"master {cluster.master_url})" in runs["cluster"].submitted.output
    return runs
