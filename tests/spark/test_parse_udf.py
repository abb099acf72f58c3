"""The parse UDF's two forms (Arrow, pandas) and the column-wise Arrow results behind the first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from lineage_udfs.core.models import ParseResult
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.records import to_record
from lineage_udfs.spark.extract.transforms import FINGERPRINT, MASKED_SQL, PARSE_RESULT, PARSE_TEXT
from lineage_udfs.spark.parse.arrow_results import results_to_arrow
from lineage_udfs.spark.parse.pandas_udf import make_parse_pandas_udf
from lineage_udfs.spark.parse.udf_worker import mask_error
from lineage_udfs.spark.parse.udfs import UDF_ARROW_TYPE, make_parse_arrow_udf, make_parse_udf

CASES = Path(__file__).resolve().parents[1] / "unit" / "core" / "cases"

EXTRA: list[tuple[str | None, str | None]] = [
    ("SELEC a FROM WHERE b = 'secret-1'", "spark"),  # failed; the literal never in the output
    (
        "INSERT INTO db.t SELECT a FROM db.s; INSERT INTO db.u SELEC 'secret-2' FROM;",
        "spark",
    ),  # a script: one statement ok, one failed (partial)
    ("", "spark"),
    ("   ", None),
    (None, None),
]


def _texts() -> list[tuple[str | None, str | None]]:
    out: list[tuple[str | None, str | None]] = []
    for path in sorted(CASES.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")):
            out.append((case["sql"], case.get("dialect")))
            # a broken variant of each: failures and partial results with messages
            out.append((case["sql"].replace("SELECT", "SELECT FROM FROM", 1), case.get("dialect")))
    return out + EXTRA


def _parse_all(parser: LineageParser) -> list[ParseResult]:
    return [parser.parse(sql, dialect=dialect, mask=False) for sql, dialect in _texts()]


def _by_records(results: list[ParseResult]) -> pa.StructArray:
    """The reference: each result as the pandas UDF's records hold it (``to_record``, errors
    masked), converted by pyarrow from the dicts."""
    return pa.array([to_record(r, mask_error) for r in results], type=UDF_ARROW_TYPE)


@pytest.fixture(scope="module")
def results() -> list[ParseResult]:
    return _parse_all(LineageParser(ParserOptions()))


def test_the_results_cover_every_shape(results: list[ParseResult]) -> None:
    statuses = {str(r.status) for r in results}
    assert {"ok", "partial", "failed", "skipped"} <= statuses
    assert any(r.column_edges for r in results) and any(len(r.statements) > 1 for r in results)
    assert any(r.failure for r in results) and any(r.intermediates for r in results)


def test_column_wise_arrow_equals_the_records_converted(results: list[ParseResult]) -> None:
    built = results_to_arrow(results, UDF_ARROW_TYPE, mask_error)
    expected = _by_records(results)
    assert built.type == expected.type
    assert built.to_pylist() == expected.to_pylist()
    assert built.equals(expected)


def test_each_result_lands_in_its_own_row(results: list[ParseResult]) -> None:
    # batch boundaries: any slice of the results builds the same rows as the whole
    whole = results_to_arrow(results, UDF_ARROW_TYPE, mask_error).to_pylist()
    for start in (0, 1, 7, len(results) - 3):
        part = results_to_arrow(results[start : start + 5], UDF_ARROW_TYPE, mask_error)
        assert part.to_pylist() == whole[start : start + 5]
    assert results_to_arrow([], UDF_ARROW_TYPE, mask_error).to_pylist() == []


def test_every_failure_message_goes_through_the_mask(results: list[ParseResult]) -> None:
    rows = results_to_arrow(results, UDF_ARROW_TYPE, lambda m: f"<masked {len(m)}>").to_pylist()
    errors = [row["error"] for row in rows if row["error"] is not None]
    errors += [s["error"] for row in rows for s in row["statements"] if s["error"] is not None]
    failures = [r.failure for r in results if r.failure]
    failures += [s.failure for r in results for s in r.statements if s.failure]
    assert len(errors) == len(failures) > 0
    assert all(e.startswith("<masked ") for e in errors)


def test_an_unknown_field_is_an_error() -> None:
    with pytest.raises(ValueError, match="no parse-result field named"):
        results_to_arrow([], pa.struct([("nope", pa.string())]), mask_error)


def _rows(spark: SparkSession, factory: Any) -> dict[str, dict[str, Any]]:
    texts = _texts()
    frame = spark.createDataFrame(
        [(f"f{i}", sql, sql, dialect) for i, (sql, dialect) in enumerate(texts)],
        f"{FINGERPRINT} string, {PARSE_TEXT} string, {MASKED_SQL} string, dialect string",
    )
    udf = factory(ParserOptions())
    parsed = frame.repartition(2).select(
        FINGERPRINT,
        udf(
            F.col(PARSE_TEXT),
            F.col("dialect"),
            F.lit(None).cast("string"),
            F.lit(None).cast("string"),
        ).alias(PARSE_RESULT),
    )
    out = {}
    for row in parsed.collect():
        result = row[PARSE_RESULT].asDict(recursive=True)
        assert result.pop("parse_ms") >= 0.0  # a timing: differs run to run
        out[row[FINGERPRINT]] = result
    assert len(out) == len(texts)
    return out


def test_the_arrow_and_the_pandas_udf_return_the_same_rows(spark: SparkSession) -> None:
    arrow = _rows(spark, make_parse_arrow_udf)
    pandas = _rows(spark, make_parse_pandas_udf)
    assert arrow == pandas
    assert {r["status"] for r in arrow.values()} >= {"ok", "partial", "failed", "skipped"}
    assert "secret" not in str(arrow)


def test_the_job_uses_the_arrow_udf_on_this_spark() -> None:
    assert (
        make_parse_udf(ParserOptions()).evalType == make_parse_arrow_udf(ParserOptions()).evalType
    )
    assert (
        make_parse_udf(ParserOptions()).evalType != make_parse_pandas_udf(ParserOptions()).evalType
    )


def test_the_arrow_udf_module_does_not_load_pandas() -> None:
    # what a worker running the Arrow UDF imports: the UDF's module and PySpark's worker
    code = (
        "import sys, pyspark.worker, lineage_udfs.spark.parse.udfs as u;"
        "from lineage_udfs.core.options import ParserOptions;"
        "u.make_parse_arrow_udf(ParserOptions());"
        "print('pandas' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
