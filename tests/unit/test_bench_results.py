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
import small_runs
import stage_report

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


# --- small_runs: the committed results, and each section recorded from raw results -------------


def test_small_runs_md_is_rendered_from_small_runs_json() -> None:
    assert small_runs.render(_json("small_runs.json")) == _md("small_runs.md")


def _run(scenario: str, wall: float, started: str, ended: str) -> dict[str, Any]:
    return {
        "scenario": scenario,
        "wall": wall,
        "start": 9.0,
        "extract": 20.0,
        "graph": 10.0,
        "emit": 5.0,
        "spark_jobs": 0 if scenario == "default-noop" else 400,
        "commits_total": 0 if scenario == "default-noop" else 26,
        "load_before": "0.10 / 0.20 / 0.30",
        "started": f"2026-12-01 {started}:00",
        "ended": f"2026-12-01 {ended}:00",
    }


def _raw_results(small: Path) -> None:
    """What ``scenarios``, ``build``, ``bench/floor.py``, ``graph-sizes`` and ``loop`` leave."""
    small.mkdir()
    for label, commit, other, walls, at in (
        ("before", "aaa1111", True, (50.0, 12.0), ("10:00", "10:01", "10:02")),
        ("now", "bbb2222", False, (40.0, 10.5), ("10:10", "10:15", "10:20")),
    ):
        runs = [
            _run("default-warm", walls[0], at[0], at[1]),
            _run("default-noop", walls[1], at[1], at[2]),
        ]
        doc = {
            "label": label,
            "runs": runs,
            "commit": commit,
            "other_checkout": other,
            "machine": "2 cores (a CPU), 8.0 GiB, Linux 6; pyspark 4.1.4",
            "command": f"bench/small_runs.py scenarios --label {label}",
        }
        (small / f"{label}.json").write_text(json.dumps(doc))
    (small / "build.json").write_text(
        json.dumps({"statements": 42096, "table_edges": 87014, "column_edges": 1372362})
    )
    laps = {"session": 3.0, "create": 6.0, "merge": 15.0, "components": 3.0, "cycles": 1.5}
    floor = small / "floor-default"
    floor.mkdir()
    (floor / "result-merge.json").write_text(
        json.dumps(
            {
                "command": "bench/floor.py default",
                "commit": "bbb2222",
                "runs": [
                    {
                        "wall": w,
                        "laps": laps,
                        "tables": 12,
                        "started": "2026-12-01 11:00:00",
                        "ended": "2026-12-01 11:01:00",
                    }
                    for w in (30.0, 31.0)
                ],
            }
        )
    )
    (small / "graph-sizes.json").write_text(
        json.dumps(
            {
                "command": "bench/small_runs.py graph-sizes --rows 75000",
                "commit": "bbb2222",
                "machine": "m",
                "started": "2026-12-01 12:00:00",
                "ended": "2026-12-01 12:30:00",
                "results": [
                    {
                        "rows": 75000,
                        "edges": {"table_lineage": 6341, "column_lineage": 103003},
                        "incremental": 25.0,
                        "full": [13.0, 14.0],
                    }
                ],
            }
        )
    )
    per_run = [
        {"run": i, "update": 30.0 + i, "query": 0.5, "graph": 15.0, "graph_recomputed": None}
        for i in range(1, 26)
    ]
    (small / "loop-long.json").write_text(
        json.dumps(
            {
                "label": "long",
                "runs": 1000,
                "rows": 100,
                "per_run": per_run,
                "parts": [
                    {
                        "runs": [1, 25],
                        "started": "2026-12-01 13:00:00",
                        "code": "bbb2222",
                        "command": "bench/small_runs.py loop --runs 1000 --label long",
                    }
                ],
                "ended": "2026-12-01 13:20:00",
            }
        )
    )


def test_small_runs_sections_are_recorded_from_raw_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(small_runs, "SMALL", tmp_path / "small")
    _raw_results(tmp_path / "small")
    results = tmp_path / "small_runs.json"
    results.write_text((RESULTS / "small_runs.json").read_text(encoding="utf-8"))
    for argv in (
        ["scenarios", "--labels", "before", "now"],
        ["floor"],
        ["graph-sizes"],
        ["loop", "--label", "long"],
    ):
        small_runs.main(["record", *argv, "--json", str(results)])
    out = tmp_path / "small_runs.md"
    small_runs.main(["report", "--json", str(results), "--out", str(out)])
    text = out.read_text(encoding="utf-8")
    assert text == small_runs.render(json.loads(results.read_text()))
    lines = text.splitlines()
    fence = lines.index("```bash")
    assert lines[fence + 1 : fence + 8] == [
        ".venv/bin/python bench/small_runs.py build                                  # once: the"
        " 1M warehouse",
        ".venv/bin/python bench/small_runs.py scenarios --label before",
        ".venv/bin/python bench/small_runs.py scenarios --label now",
        ".venv/bin/python bench/floor.py default",
        ".venv/bin/python bench/small_runs.py graph-sizes --rows 75000",
        ".venv/bin/python bench/small_runs.py loop --runs 1000 --label long",
        "```",
    ]
    assert (
        "*now* is `bbb2222`, *before* is `aaa1111` (another checkout, as `--code`), measured one"
        " after the other on 2026-12-01 between 10:00 and 10:20 UTC, load average 0.10 / 0.20 /"
        " 0.30 before the first run."
    ) in " ".join(text.split())
    assert "2 cores (a CPU), 8.0 GiB, Linux 6; pyspark 4.1.4." in text
    assert (
        "| embedded default, warm: extract + graph + emit ≤ 45 s wall | 50.0 s | **40.0 s**"
        " | 30.0 / 31.0 s | yes |"
    ) in lines
    assert (
        "| a rerun with nothing new ≤ 20 s, no new Delta version | | **10.5 s, 0 commits, 0 Spark"
        " jobs** (`bbb2222`, 10:15-10:20 UTC) | | yes |"
    ) in lines
    assert "| default-warm (empty warehouse, caches warm) | wall s | 50.0 | **40.0** |" in lines
    assert (
        "| embedded default (12 tables with rows) | CREATE + MERGE (what the job does) | 30.0 /"
        " 31.0 | 3.0 / 3.0 | 6.0 / 6.0 | 15.0 / 15.0 | 3.0 / 3.0 | 1.5 / 1.5 |"
    ) in lines
    assert "| 75,000 | 6,341 + 103,003 | 25.0 | 13.0 / 14.0 |" in lines
    assert "| 2-11 | 36.5 | 15.0 | 0.5 |" in lines and "| 16-25 | 50.5 | 15.0 | 0.5 |" in lines
    assert "stopped after 25 runs (`--max-runs`; `--resume` continues it at run 26)" in (
        " ".join(text.split())
    )
    # the notes went with the figures they were about; the throughput section has no record step
    assert "## Where the time goes" not in text and "So the targets sit" not in text
    assert "Every 10th run takes" not in text and "Hence `graph.incremental_min_edges" not in text
    assert "| now (`7f7f350`) | 305 | 158.7 | 8.0 | 22.2 | 64.0 | 253.2 | 1,737 |" in lines
    # no inc-10k measured: its rows say so instead of showing old figures
    assert "| 10k new rows onto the 1M warehouse ≤ 60 s | | - | | - |" in lines


# --- parse_stage.md and udf_results.md (bench/stage_report.py) ---------------------------------


@pytest.mark.parametrize("page", ["parse_stage", "udf_results"])
def test_stage_pages_are_rendered_from_their_json(page: str) -> None:
    render = getattr(stage_report, f"render_{page}")
    assert render(_json(f"{page}.json")) == _md(f"{page}.md")


def _stage_run(sinks: list[str], udfs: list[str], seconds: list[float]) -> dict[str, Any]:
    rounds, it = [], iter(seconds)
    for number in (1, 2, 3):
        for sink in sinks:
            for udf in udfs:
                took = next(it)
                parse = took * 1.6 if sink == "sum" else None
                rounds.append(
                    {
                        "round": number,
                        "sink": sink,
                        "partitions": 16,
                        "udf": udf,
                        "seconds": took,
                        "parse_seconds": parse,
                    }
                )
    return {
        "command": "bench/parse_stage.py --log bench/data/log_1000000.parquet",
        "date": "2026-12-01 10:00 UTC",
        "machine": "2-core CPU, 8.0 GiB",
        "log": "log_1000000.parquet",
        "statements": 42096,
        "loop_sample": 50000,
        "loop_rate": 1000.0,
        "cores": 2,
        "partitions": [16],
        "rounds": rounds,
    }


def test_stage_pages_are_recorded_from_runs(tmp_path: Path) -> None:
    first = _stage_run(["noop", "checkpoint"], ["arrow"], [30.0, 25.0, 21.0, 22.0, 20.0, 23.0])
    stage = _stage_run(["checkpoint"], ["pandas", "arrow"], [40.0, 35.0, 38.0, 33.0, 36.0, 30.0])
    sums = _stage_run(["sum"], ["arrow"], [21.048, 20.0, 19.0])
    udf = {
        "command": "bench/udf_results.py --log bench/data/log_1000000.parquet",
        "date": "2026-12-01 09:00 UTC",
        "machine": "2-core CPU, 8.0 GiB",
        "log": "log_1000000.parquet",
        "statements": 42096,
        "sample": 4000,
        "batch": 500,
        "parse_us": 1500.4,
        "times": {"pandas": [160.0, 150.0, 170.0], "arrow": [20.0, 22.0, 21.0]},
    }
    runs = []
    for name, run in (("first", first), ("sum", sums), ("stage", stage), ("udf", udf)):
        runs.append(tmp_path / f"{name}.json")
        runs[-1].write_text(json.dumps(run))
    folder = str(tmp_path)
    stage_report.main(["record", "parse-stage", str(runs[0]), str(runs[1]), "--results", folder])
    udf_args = ["--udf", str(runs[3]), "--stage", str(runs[2]), "--sum", str(runs[1])]
    stage_report.main(["record", "udf-results", *udf_args, "--results", folder])
    stage_report.main(["report", "--results", folder])
    page = (tmp_path / "parse_stage.md").read_text(encoding="utf-8").splitlines()
    dash = stage_report.EN_DASH
    # 42,096 statements / 30 s / (2 x 1,000/s) = 0.70
    assert page[-3:] == [
        "| 1 | noop | 0.70 (30.0 s; the application's first stage: cold) | 1.00, 1.05"
        f" (20.0{dash}21.0 s) | 1,000.0 |",
        "| 1 | checkpoint (as the job) | 0.84 (25.0 s; ran right after the cold noop round) | 0.96,"
        f" 0.92 (22.0{dash}23.0 s) | 1,000.0 |",
        "| 2 | sum | 1.00 (21.0 s; the application's first stage: cold) | 1.05, 1.11"
        f" (19.0{dash}20.0 s) | 1,000.0 |",
    ]
    text = (tmp_path / "udf_results.md").read_text(encoding="utf-8")
    assert "| parse itself (for scale) | 1,500 | |" in text
    assert (
        "| Arrow UDF: `results_to_arrow`, column by column | **21.0** | 20.0, 22.0, 21.0 |" in text
    )
    assert "The pandas path is ~11 % of a statement's parse; the Arrow path is ~1.4 %." in text
    assert (
        "| 1 | 40.0 | 35.0 |\n| 2 | 38.0 | 33.0 |\n| 3 | 36.0 | 30.0 |\n"
        "| median | 38.0 | **33.0** |"
    ) in text
    # sum: parse s = 1.6 x the stage; the loop's 42,096 / 1,000 = 42.1 s
    assert "| 1 | Arrow | 21.0 | 1.00 | 33.7 | 0.80 | 0.80 |" in text
