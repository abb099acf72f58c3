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

from .sample import (
    EVENTS,
    SampleRun,
    driver_only,
    event_log,
    generate_log,
    log_overlay,
    run_sample,
)
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
def sample_local(tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    """The reference: the sample's extract (graph stage and emission included) submitted with
    ``--master local[2]``, as ``make run`` submits it. Every test that compares with a local run
    of the sample compares with this one."""
    return run_sample("local[2]", tmp_path_factory.mktemp("sample-local"))


@pytest.fixture(scope="session")
def sample_runs(
    cluster: StandaloneCluster, sample_local: SampleRun, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, SampleRun]:
    """:func:`sample_local`, then the same extract on the cluster, with Spark's event log on and
    the OpenLineage folder (events file and spool) the driver's only (one after the other: the
    machine has two cores)."""
    on_cluster = tmp_path_factory.mktemp("sample-cluster")
    confs = {**event_log(on_cluster), **driver_only(on_cluster, on_cluster / EVENTS.parent)}
    runs = {
        "local": sample_local,
        "cluster": run_sample(cluster.master_url, on_cluster, confs=confs),
    }
    # the session's own line: conf/local.yaml's local[*] gave way to --master
    assert f"master {cluster.master_url})" in runs["cluster"].submitted.output
    return runs


GENERATED_ROWS = 6000
"""Rows of the generated log (about 1,000 distinct statements): the parse stage lasts seconds
on the cluster, long enough to lose an executor inside it, and a run stays near 2.5 minutes."""


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/generate_log.py's log of :data:`GENERATED_ROWS` Spark SQL rows."""
    return generate_log(tmp_path_factory.mktemp("generated") / "log.parquet", GENERATED_ROWS)


@pytest.fixture(scope="session")
def generated_clean(generated: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleRun:
    """The clean reference: the generated log's extract (graph stage and emission included) on
    ``local[2]``, nothing killed."""
    cwd = tmp_path_factory.mktemp("generated-clean")
    return run_sample("local[2]", cwd, overlay=log_overlay(cwd, generated))
