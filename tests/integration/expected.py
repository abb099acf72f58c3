"""What the Delta lineage tables say Marquez / Kafka must show, as sets in OpenLineage names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lineage_udfs.emit.events import (
    EventOptions,
    is_emitted,
    job_name_for,
    parsed_statement_from_dict,
    query_run_from_dict,
    run_id_for,
    terminal_state,
)
from lineage_udfs.emit.naming import NamingContext, dataset_identity

_LITERAL = re.compile(r"'((?:[^']|'')+)'")


@dataclass(frozen=True)
class Sample:
    """The sample's Delta tables, collected (small)."""

    queries: list[dict[str, Any]]
    parsed: dict[str, dict[str, Any]]
    table_lineage: list[dict[str, Any]]
    column_lineage: list[dict[str, Any]]

    @classmethod
    def read(cls, spark: Any, settings: Any) -> Sample:
        from lineage_udfs.spark.storage.tables import LineageTables

        tables = LineageTables(spark, settings.sink)

        def rows(name: str) -> list[dict[str, Any]]:
            return [r.asDict(recursive=True) for r in tables.read(name).collect()]

        return cls(
            queries=rows("queries"),
            parsed={p["fingerprint"]: p for p in rows("parsed_statements")},
            table_lineage=rows("table_lineage"),
            column_lineage=rows("column_lineage"),
        )

    def emitted_queries(self, options: EventOptions) -> list[tuple[Any, Any]]:
        """(QueryRun, ParsedStatement) of every log row that produces events."""
        pairs = []
        for row in self.queries:
            parsed = self.parsed.get(row["fingerprint"])
            if parsed is None:
                continue
            statement = parsed_statement_from_dict(parsed)
            if is_emitted(statement, options):
                pairs.append((query_run_from_dict(row), statement))
        return pairs

    def jobs_by_fingerprint(self, options: EventOptions) -> dict[str, set[str]]:
        jobs: dict[str, set[str]] = {}
        for query, parsed in self.emitted_queries(options):
            jobs.setdefault(query.fingerprint, set()).add(job_name_for(query, parsed))
        return jobs

    def run_states(self, options: EventOptions) -> dict[str, str]:
        """Run id -> the terminal event type the log row calls for (COMPLETE / FAIL / ABORT)."""
        return {
            run_id_for(query, options.mode): terminal_state(query.status).value
            for query, _ in self.emitted_queries(options)
        }

    def literals(self) -> set[str]:
        """String literals of the raw logged SQL (none may reach an event)."""
        from pathlib import Path

        found: set[str] = set()
        sample = Path(__file__).resolve().parents[2] / "data" / "sample"
        for path in sample.iterdir():
            found.update(m for m in _LITERAL.findall(path.read_text("utf-8")) if len(m) >= 3)
        return found


def identity(table: str, source_system: str | None, options: EventOptions) -> tuple[str, str]:
    return dataset_identity(
        table,
        NamingContext(source_system=source_system, default_namespace=options.default_namespace),
    )


def transformation_text(kind: str, subtype: str | None) -> str:
    """How an edge's transformation reads in the field-level ``transformationDescription``."""
    if subtype == "MASKED":
        return f"{kind}/TRANSFORMATION (masking)"
    return f"{kind}/{subtype}" if subtype else kind


def with_openlineage(settings: Any, **openlineage: Any) -> Any:
    """``settings`` with its ``openlineage`` section replaced by these keys (validated)."""
    from lineage_udfs.settings import JobSettings

    data = settings.model_dump()
    data["openlineage"] = {**data["openlineage"], "enabled": True, **openlineage}
    return JobSettings.model_validate(data)


def options_of(settings: Any) -> EventOptions:
    from lineage_udfs.spark.openlineage.emission import _options

    return _options(settings.openlineage)
