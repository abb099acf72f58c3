"""run_concurrently: results in order, every action finishes, the first failure is raised."""

from __future__ import annotations

import threading
import time

import pytest

from lineage_udfs.spark.runtime.concurrency import run_concurrently


def test_results_come_back_in_the_order_of_the_actions() -> None:
    def later(value: int, delay: float) -> int:
        time.sleep(delay)
        return value

    assert run_concurrently([lambda: later(1, 0.05), lambda: later(2, 0.0), lambda: 3]) == [1, 2, 3]


def test_actions_run_at_once() -> None:
    barrier = threading.Barrier(3, timeout=5)  # BrokenBarrierError unless three wait together
    assert sorted(run_concurrently([barrier.wait] * 3)) == [0, 1, 2]


def test_every_action_finishes_before_the_first_failure_is_raised() -> None:
    finished: list[str] = []

    def fail(name: str) -> None:
        raise ValueError(name)

    def slow() -> None:
        time.sleep(0.1)
        finished.append("slow")

    with pytest.raises(ValueError, match="first"):
        run_concurrently([lambda: fail("first"), slow, lambda: fail("second")])
    assert finished == ["slow"]


def test_one_thread_runs_them_in_turn() -> None:
    seen: list[int] = []
    run_concurrently([lambda: seen.append(1), lambda: seen.append(2)], threads=1)
    assert seen == [1, 2]
