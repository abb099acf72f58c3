"""OpenLineage RunEvents as a source (``format: openlineage``): JSON lines, one event a line,
as the OpenLineage file transport writes them (the Spark listener's
``spark.openlineage.transport.type=file``, ``openlineage-dbt``, an exported Marquez log).

Each line is parsed and validated on the executors (a pandas UDF): against the OpenLineage
``RunEvent`` schema (``openlineage_spec/OpenLineage.json``), the ``columnLineage`` facet against
its published schema and the ``symlinks`` facet against the shape its spec requires (both are
read for lineage); then ``core.ol_events.event_lineage`` maps it to edges. A line that is not
JSON, not a valid RunEvent or not usable for lineage gives a row with its one-line reason (the
job quarantines it); nothing of the line's text is kept in that case (an event may carry SQL
with literals in its ``sql`` facet).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError, best_match
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    StringType,
    StructField,
    StructType,
)
from referencing import Registry, Resource

from lineage_udfs.core.errors import InputError, one_line
from lineage_udfs.core.ol_events import EventError, EventLineage, event_lineage
from lineage_udfs.settings import IncrementalSettings, SourceSettings
from lineage_udfs.sources.openlineage_fields import EVENT_FIELDS

SPEC_DIR = Path(__file__).resolve().parent / "openlineage_spec"
_CORE_URIS = (
    "https://openlineage.io/spec/2-0-2/OpenLineage.json",
    "https://openlineage.io/spec/2-0-3/OpenLineage.json",
    "https://openlineage.io/spec/1-0-2/OpenLineage.json",
)
"""The core document (2-0-7, backward compatible within 2-0-x) is also served under the core
URIs the facet schemas reference, so validation resolves offline."""

_SYMLINKS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "identifiers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "namespace": {"type": "string"},
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                },
                "required": ["namespace", "name", "type"],
            },
        }
    },
    "required": ["identifiers"],
}
"""The ``SymlinksDatasetFacet`` members its spec requires (the facet's schema document is not
stored with the package)."""

EVENT_TIME = "event_time"
"""The watermark column of an ``openlineage`` source: the event's ``eventTime``."""
DEFAULT_INCREMENTAL = IncrementalSettings(column=EVENT_TIME, type="timestamp")
"""An ``openlineage`` source without ``incremental:`` reads the events newer than the last
committed ``eventTime``."""


_UDF_SCHEMA = StructType(
    [StructField(n, t if n != "event_time" else StringType()) for n, t in EVENT_FIELDS]
    + [StructField("line_id", StringType()), StructField("reason", StringType())]
)


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _format_checker() -> FormatChecker:
    """The draft's format checks, with ``date-time`` checked as RFC 3339 (jsonschema checks
    it only when an optional package is installed)."""
    checker = FormatChecker()
    for name, (func, raises) in Draft202012Validator.FORMAT_CHECKER.checkers.items():
        checker.checkers[name] = (func, raises)

    @checker.checks("date-time")
    def _date_time(value: object) -> bool:
        return not isinstance(value, str) or _RFC3339.fullmatch(value) is not None

    return checker


@cache
def _validators() -> tuple[Draft202012Validator, Draft202012Validator, Draft202012Validator]:
    core = json.loads((SPEC_DIR / "OpenLineage.json").read_text(encoding="utf-8"))
    column = json.loads((SPEC_DIR / "ColumnLineageDatasetFacet.json").read_text(encoding="utf-8"))
    core_resource = Resource.from_contents(core)
    registry = Registry().with_resources(
        [(core["$id"], core_resource), (column["$id"], Resource.from_contents(column))]
        + [(uri, core_resource) for uri in _CORE_URIS]
    )

    def validator(ref: str) -> Draft202012Validator:
        return Draft202012Validator(
            {"$ref": ref}, registry=registry, format_checker=_format_checker()
        )

    return (
        validator(f"{core['$id']}#/$defs/RunEvent"),
        validator(f"{column['$id']}#/$defs/ColumnLineageDatasetFacet"),
        Draft202012Validator(_SYMLINKS_SCHEMA),
    )


def _where(error: ValidationError) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return path.lstrip(".") or "the event"


def _first_error(validator: Draft202012Validator, value: Any) -> ValidationError | None:
    return best_match(validator.iter_errors(value))


def validation_error(event: Any) -> str | None:
    """Why ``event`` is not a valid OpenLineage RunEvent (one line), or None.

    The event is checked against the ``RunEvent`` schema, and each dataset's ``columnLineage``
    and ``symlinks`` facets against theirs (the facets this source reads).
    """
    run_event, column_lineage, symlinks = _validators()
    error = _first_error(run_event, event)
    if error is not None:
        return f"not an OpenLineage RunEvent: {_where(error)}: {one_line(error.message)}"
    for side in ("inputs", "outputs"):
        for i, dataset in enumerate(event.get(side) or []):
            facets = dataset.get("facets") or {}
            for key, validator in (("columnLineage", column_lineage), ("symlinks", symlinks)):
                if key in facets:
                    error = _first_error(validator, facets[key])
                    if error is not None:
                        where = f"{side}[{i}].facets.{key}"
                        sub = _where(error)
                        where += "" if sub == "the event" else f".{sub}"
                        return f"invalid {key} facet: {where}: {one_line(error.message)}"
    return None


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def event_id(lineage: EventLineage) -> str:
    """The event's identity: its run, type, time and job (a rerun reads the same id)."""
    return _digest(lineage.run_id, lineage.event_type, lineage.event_time, lineage.job)


def event_row(line: str) -> dict[str, Any]:
    """One line → a row of ``_UDF_SCHEMA``: the event's lineage, or its ``reason``."""
    row: dict[str, Any] = {n: None for n in _UDF_SCHEMA.fieldNames()}
    row["line_id"] = _digest(line)
    try:
        event = json.loads(line)
    except ValueError as exc:
        row["reason"] = f"not JSON: {one_line(exc)}"
        return row
    reason = validation_error(event)
    if reason is None:
        try:
            lineage = event_lineage(event)
        except EventError as exc:
            reason = f"no lineage in the event: {one_line(exc)}"
    if reason is not None:
        row["reason"] = reason
        return row
    row.update(
        event_id=event_id(lineage),
        run_id=lineage.run_id,
        job=lineage.job,
        job_namespace=lineage.job_namespace,
        job_name=lineage.job_name,
        event_type=lineage.event_type,
        event_time=lineage.event_time,
        producer=lineage.producer,
        table_edges=[{"source_table": s, "target_table": t} for s, t in lineage.table_edges],
        column_edges=[
            {
                "source_table": e.source_table,
                "source_column": e.source_column,
                "target_table": e.target_table,
                "target_column": e.target_column,
                "transformation_type": e.transformation_type,
                "transformation_subtype": e.transformation_subtype,
                "masking": e.masking,
            }
            for e in lineage.column_edges
        ],
        symlinks=[
            {"node": s.node, "alias": s.alias, "namespace": s.namespace, "type": s.type}
            for s in lineage.symlinks
        ],
        datasets=list(lineage.datasets),
    )
    return row


def _rows(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    columns = _UDF_SCHEMA.fieldNames()
    for batch in batches:
        rows = [event_row(line) for line in batch["value"]]
        yield pd.DataFrame(rows, columns=columns)


SOURCE_FILE = "source_file"
REASON = "reason"
LINE_ID = "line_id"


def read_openlineage_events(spark: SparkSession, source: SourceSettings) -> DataFrame:
    """The source's lines with their eventTime (``EVENT_TIME``, null where absent) and file,
    blank lines left out: what the incremental read filters before the events are parsed."""
    try:
        lines = spark.read.options(**source.options).text(source.path)
    except Exception as exc:  # a missing path, an unreadable file
        raise InputError(
            f"cannot read openlineage source {source.name!r} at {source.path}: "
            f"{one_line(exc, with_type=True)}"
        ) from exc
    return lines.where(F.length(F.trim("value")) > 0).select(
        "value",
        F.col("_metadata.file_path").alias(SOURCE_FILE),
        F.try_to_timestamp(F.get_json_object("value", "$.eventTime")).alias(EVENT_TIME),
    )


LINES_SCHEMA = f"value string, {SOURCE_FILE} string, {EVENT_TIME} timestamp"
"""What every reader of an ``openlineage`` source gives (files, a Kafka topic, Marquez)."""


def empty_lines(spark: SparkSession) -> DataFrame:
    """No lines (a source with nothing new), in the readers' schema."""
    return spark.createDataFrame([], LINES_SCHEMA)


def parse_openlineage_events(lines: DataFrame) -> DataFrame:
    """Lines (``read_openlineage_events``) → one row per line: ``EVENT_FIELDS``, ``line_id``,
    ``source_file`` and ``reason`` (null for a usable event)."""
    schema = StructType([*_UDF_SCHEMA.fields, StructField(SOURCE_FILE, StringType())])
    parsed = lines.select("value", SOURCE_FILE).mapInPandas(_with_file, schema)  # type: ignore[arg-type]
    return parsed.withColumn(EVENT_TIME, F.try_to_timestamp(F.col(EVENT_TIME)))


def _with_file(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    for batch in batches:
        (rows,) = list(_rows(iter([batch])))
        rows[SOURCE_FILE] = batch[SOURCE_FILE].to_numpy()
        yield rows


def incremental_settings(source: SourceSettings) -> SourceSettings:
    """The source with its ``incremental:`` (``DEFAULT_INCREMENTAL`` when it has none)."""
    if source.incremental is not None:
        return source
    return source.model_copy(update={"incremental": DEFAULT_INCREMENTAL})
