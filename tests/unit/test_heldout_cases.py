"""The held-out sets' YAML sources validate and build exactly the committed JSONL."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

EVAL = Path(__file__).resolve().parents[2] / "eval"
_spec = importlib.util.spec_from_file_location("eval_cases", EVAL / "cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

COMMITTED = sorted(EVAL.glob("*_cases.jsonl"))


def test_committed_sets_each_jsonl_has_a_yaml_source() -> None:
    assert [p.name for p in COMMITTED] == ["heldout2_cases.jsonl", "heldout_cases.jsonl"]
    assert [p.with_suffix(".yaml").exists() for p in COMMITTED] == [True, True]


@pytest.mark.parametrize("jsonl", COMMITTED, ids=lambda p: p.stem)
def test_load_cases_builds_the_committed_jsonl(jsonl: Path) -> None:
    records = cases.load_cases(jsonl.with_suffix(".yaml"))
    committed = jsonl.read_text(encoding="utf-8")
    assert records == [json.loads(line) for line in committed.splitlines()]
    assert cases.to_jsonl(records) == committed, "rebuild it: .venv/bin/python eval/cases.py"


VALID = """\
origin: heldout
cases:
- id: ok_case
  dialect: snowflake
  sql: |-
    INSERT INTO db.dst SELECT a FROM db.src
  expected:
    sources: [db.src]
    targets: [db.dst]
    columns:
      - [db.src.a, db.dst.a]
  note: identity column
"""


def test_load_cases_valid_case_gives_the_corpus_record(tmp_path: Path) -> None:
    path = tmp_path / "x_cases.yaml"
    path.write_text(VALID.replace("  note: identity column\n", "  note: n\n  default_db: P\n"))
    assert cases.load_cases(path) == [
        {
            "id": "heldout:ok_case",
            "origin": "heldout",
            "dialect": "snowflake",
            "sql": "INSERT INTO db.dst SELECT a FROM db.src",
            "expected": {
                "sources": ["db.src"],
                "targets": ["db.dst"],
                "columns": [["db.src.a", "db.dst.a"]],
            },
            "note": "n",
            "default_db": "P",
        }
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("  note: identity column\n", "", "missing ['note']"),
        ("  note: identity column\n", "  note: a\n  notes: b\n", "unknown keys ['notes']"),
        ("  note: identity column\n", "  note: a\n  note: b\n", "keys given twice: ['note']"),
        ("dialect: snowflake", "dialect: snowflak", "'snowflak' is no sqlglot dialect"),
        ("targets: [db.dst]", "targets: [db.DST]", "'db.DST'"),
        ("- [db.src.a, db.dst.a]", "- [db.src.a]", "['db.src.a']"),
        ("- [db.src.a, db.dst.a]", "- [a, db.dst.a]", "the source is not table.column"),
        ("    columns:\n      - [db.src.a, db.dst.a]\n", "", "expected ('sources'"),
        ("id: ok_case", "id: ok case", "ok case: id"),
    ],
)
def test_load_cases_invalid_case_raises(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in VALID
    path = tmp_path / "x_cases.yaml"
    path.write_text(VALID.replace(old, new))
    with pytest.raises(cases.CaseFormatError) as caught:
        cases.load_cases(path)
    assert message in str(caught.value)


def test_load_cases_same_id_twice_raises(tmp_path: Path) -> None:
    path = tmp_path / "x_cases.yaml"
    path.write_text(VALID + VALID.split("cases:\n")[1])
    with pytest.raises(cases.CaseFormatError, match="ids given twice: \\['heldout:ok_case'\\]"):
        cases.load_cases(path)
