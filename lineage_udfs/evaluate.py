"""Evaluation command: corpus-format cases in, scorer-format predictions out.

Usage::

    python -m lineage_udfs.evaluate CASES.jsonl > PREDICTIONS.jsonl

Each input line is ``{"id", "dialect", "sql", "default_db"?, "default_schema"?, "schemas"?}``;
a case's ``schemas`` is the parser's catalog (``--no-catalog``: none).
Each output line is ``{"id", "sources", "targets", "columns", "result_columns", "error"}`` where
``columns`` holds the DIRECT column edges as ``[source_table.column, target_table.column]``.
The parse is exactly ``LineageParser.parse``: the same code the Spark UDF runs. A tally of the
parser tier used per case is printed to stderr. Pure: stdlib and ``lineage_udfs.core`` only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

from lineage_udfs.core.enums import ParseStatus, TransformationType
from lineage_udfs.core.models import ParseResult
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser

_FAILED = {ParseStatus.FAILED, ParseStatus.TIMEOUT}


def to_prediction(case_id: str, result: ParseResult) -> dict[str, Any]:
    """Convert one ``ParseResult`` into the scorer's prediction format.

    Args:
        case_id: the corpus case id.
        result: the parser output.

    Returns:
        A JSON-ready dict.

    Examples:
        >>> from lineage_udfs.core.enums import ParserName, StatementType
        >>> r = ParseResult(StatementType.INSERT, ParserName.SQLGLOT, ParseStatus.OK,
        ...                 sources=("a",), targets=("b",))
        >>> to_prediction("x", r)["targets"]
        ['b']
    """
    columns = sorted(
        {
            (f"{e.source_table}.{e.source_column}", f"{e.target_table}.{e.target_column}")
            for e in result.column_edges
            if e.transformation_type == TransformationType.DIRECT
        }
    )
    prediction: dict[str, Any] = {
        "id": case_id,
        "sources": list(result.sources),
        "targets": list(result.targets),
        "columns": [list(c) for c in columns],
        "error": None,
    }
    if result.result_columns:
        prediction["result_columns"] = sorted(
            {
                (f"{r.source_table}.{r.source_column}", r.output_column)
                for r in result.result_columns
                if r.transformation_type == TransformationType.DIRECT
            }
        )
        prediction["result_columns"] = [list(r) for r in prediction["result_columns"]]
    if result.status in _FAILED and result.failure is not None:
        prediction["error"] = f"{result.failure.kind}: {result.failure.message}"
    return prediction


def _catalog(schemas: Mapping[str, Mapping[str, object]] | None) -> dict[str, dict[str, object]]:
    return {str(t): dict(cols or {}) for t, cols in (schemas or {}).items()}


def evaluate(
    lines: Iterable[str],
    out: TextIO,
    options: ParserOptions | None = None,
    *,
    use_schemas: bool = True,
) -> Counter[str]:
    """Parse every case of ``lines`` and write one prediction line per case to ``out``.

    Args:
        lines: JSON lines in the corpus format.
        out: where predictions are written.
        options: parser options (default: ``ParserOptions()``, what the pipeline runs).
        use_schemas: hand a case's ``schemas`` to the parser as its catalog (as the job hands
            each statement its part of ``catalog_columns``); False parses without a catalog.

    Returns:
        How many cases each parser tier handled (plus ``status:<status>`` counts).
    """
    tally: Counter[str] = Counter()
    plain = LineageParser(options)
    for case in _cases(lines):
        schemas = case.get("schemas") if use_schemas else None
        parser = LineageParser(options, catalog=_catalog(schemas)) if schemas else plain
        result = parser.parse(
            case.get("sql"),
            dialect=case.get("dialect"),
            default_catalog=case.get("default_db"),
            default_schema=case.get("default_schema"),
        )
        tally[f"parser:{result.parser}"] += 1
        tally[f"status:{result.status}"] += 1
        out.write(json.dumps(to_prediction(str(case.get("id")), result)) + "\n")
    return tally


def _cases(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.strip():
            yield json.loads(line)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("cases", help="corpus-format JSON lines")
    args.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a ParserOptions boolean, e.g. --option conditions_as_direct=true",
    )
    args.add_argument(
        "--no-catalog",
        action="store_true",
        help="ignore the cases' schemas (parse without a catalog)",
    )
    ns = args.parse_args(argv)
    overrides: dict[str, Any] = {}
    for item in ns.option:
        name, _, value = item.partition("=")
        overrides[name.strip()] = value.strip().lower() in ("1", "true", "yes", "on")
    options = ParserOptions(**overrides)
    with open(ns.cases, encoding="utf-8") as handle:
        tally = evaluate(handle, sys.stdout, options, use_schemas=not ns.no_catalog)
    total = sum(v for k, v in tally.items() if k.startswith("parser:"))
    print(f"cases: {total}", file=sys.stderr)
    for key, count in sorted(tally.items()):
        print(f"  {key:<24} {count:>5}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
