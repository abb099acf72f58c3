"""The results files in bench/results that are rendered from a committed JSON are exactly what
their script renders from it, so the two cannot drift apart (no Spark)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import engine_diff
import hostile_bench

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def _json(name: str) -> dict[str, Any]:
    return dict(json.loads((RESULTS / name).read_text(encoding="utf-8")))


def _md(name: str) -> str:
    return (RESULTS / name).read_text(encoding="utf-8")


def test_hostile_md_is_rendered_from_hostile_json() -> None:
    assert hostile_bench.render(_json("hostile.json")) == _md("hostile.md")


def test_engine_diff_md_is_rendered_from_engine_diff_json(tmp_path: Path) -> None:
    out = tmp_path / "engine_diff.md"
    engine_diff.main(["--from-json", str(RESULTS / "engine_diff.json"), "--report", str(out)])
    assert out.read_text(encoding="utf-8") == _md("engine_diff.md")


def test_the_recorded_hostile_run_passed() -> None:
    assert hostile_bench.problems(_json("hostile.json")) == []


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            {"unreadable_tables": {"quarantine": "FileNotFoundException: part-0.parquet"}},
            "table quarantine was not checked: FileNotFoundException: part-0.parquet",
        ),
        (
            {"check_error": "the check's Spark application failed (exit 1): boom"},
            "the Delta tables were not checked: the check's Spark application failed (exit 1):"
            " boom",
        ),
        ({"events": None}, "the OpenLineage events were not checked: no events file"),
        ({"failed_tasks": 2}, "2 failed Spark tasks"),
        ({"canary_lines_in_log": 1}, "planted secrets found in the job log: 1"),
        ({"exit_code": 1}, "the job exited with 1"),
    ],
)
def test_a_hostile_run_fails_with_one_line_per_reason(change: dict[str, Any], line: str) -> None:
    report = {**_json("hostile.json"), **change}
    assert hostile_bench.problems(report) == [line]


def test_a_required_table_without_rows_fails_the_hostile_run() -> None:
    report = _json("hostile.json")
    report["tables"]["queries"] = {"rows": 0, "canaries": 0}
    assert hostile_bench.problems(report) == [
        "table queries holds no rows: nothing in it was checked"
    ]


def test_a_hostile_run_without_notes_states_its_verdict() -> None:
    report = _json("hostile.json")
    del report["notes"]
    assert hostile_bench.render(report).endswith(
        "\nEvery row is accounted for, no Spark task failed and no planted secret was found in"
        " any table,\nevent, spool file, log line or spark.local.dir.\n"
    )
    report["tables"] = {"queries": {"rows": 74773, "canaries": 0}}
    report["tables"]["quarantine"] = {"rows": 1200, "canaries": 3}
    text = hostile_bench.render(report)
    assert (
        "| canaries in Delta tables | queries: 0 of 74,773 rows, quarantine: 3 of 1,200 rows |"
        in text
    )
    assert text.endswith("\nThe run fails: planted secrets found in table quarantine: 3.\n")
