"""The evaluation command on a few corpus-format lines."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from lineage_udfs.evaluate import evaluate

LINES = [
    {"id": "c1", "dialect": "hive", "sql": "INSERT OVERWRITE TABLE tab1 SELECT col1 FROM tab2"},
    {
        "id": "c2",
        "dialect": "snowflake",
        "sql": "SELECT a FROM t",
        "default_db": "db",
        "default_schema": "s",
    },
    {"id": "c3", "dialect": "ansi", "sql": "SELECT * FROM t1", "schemas": {"t1": {"x": None}}},
    {"id": "c4", "dialect": "ansi", "sql": "SELECT FROM WHERE ((("},
]


def test_evaluate_writes_scorer_predictions() -> None:
    out = io.StringIO()
    tally = evaluate([json.dumps(line) for line in LINES], out)
    preds = {p["id"]: p for p in map(json.loads, out.getvalue().splitlines())}
    assert preds["c1"] == {
        "id": "c1",
        "sources": ["tab2"],
        "targets": ["tab1"],
        "columns": [["tab2.col1", "tab1.col1"]],
        "error": None,
    }
    assert preds["c2"]["sources"] == ["db.s.t"]
    assert preds["c2"]["result_columns"] == [["db.s.t.a", "a"]]
    assert preds["c3"]["result_columns"] == [["t1.x", "x"]]
    assert preds["c4"]["error"] is not None
    assert sum(v for k, v in tally.items() if k.startswith("parser:")) == 4


def test_evaluate_command_line(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(line) for line in LINES) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "lineage_udfs.evaluate", str(cases)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert len(proc.stdout.splitlines()) == 4
    assert "parser:sqlglot" in proc.stderr
