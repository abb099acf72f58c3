"""Data-driven lineage cases: one YAML file per feature under ``cases/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

CASES_DIR = Path(__file__).parent / "cases"


def _load() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")):
            params.append(pytest.param(case, id=f"{path.stem}:{case['id']}"))
    return params


@pytest.mark.parametrize("case", _load())
def test_lineage_case(case: dict[str, Any]) -> None:
    parser = LineageParser(ParserOptions(**case.get("options", {})), catalog=case.get("catalog"))
    result = parser.parse(
        case["sql"],
        dialect=case.get("dialect") or "ansi",
        default_catalog=case.get("default_catalog"),
        default_schema=case.get("default_schema"),
    )
    if "failure_kind" in case:  # a partial result names why it is partial
        assert result.failure is not None and str(result.failure.kind) == case["failure_kind"]
    else:
        assert result.failure is None, result.failure
    if "parser" in case:
        assert str(result.parser) == case["parser"]
    if "status" in case:
        assert str(result.status) == case["status"]
    if "statement_type" in case:
        assert result.statement_type == case["statement_type"]
    assert sorted(result.sources) == sorted(case["sources"])
    assert sorted(result.targets) == sorted(case["targets"])
    if "intermediates" in case:
        assert sorted(result.intermediates) == sorted(case["intermediates"])
    if "column_edges" in case:
        got = sorted(
            [
                f"{e.source_table}.{e.source_column}",
                f"{e.target_table}.{e.target_column}",
                str(e.transformation_type),
                str(e.transformation_subtype),
            ]
            for e in result.column_edges
        )
        assert got == sorted(case["column_edges"])
    if "result_columns" in case:
        got = sorted(
            [
                f"{r.source_table}.{r.source_column}",
                r.output_column,
                str(r.transformation_type),
                str(r.transformation_subtype),
            ]
            for r in result.result_columns
        )
        assert got == sorted(case["result_columns"])
