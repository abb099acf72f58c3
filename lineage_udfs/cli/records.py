"""The job's own records: one parsed statement, the extraction runs, the quarantine; each read
with pushed-down predicates and sorted / limited by DataFusion."""

from __future__ import annotations

import difflib
from typing import Any

from lineage_udfs.cli.model import Answer, Graph, Page
from lineage_udfs.cli.store import CliError, LineageStore, eq, literal


def statement(store: LineageStore, fingerprint: str) -> Answer:
    """One parsed statement by fingerprint (or a unique prefix): masked SQL, parser, status,
    error, its edges and how often the log ran it."""
    from lineage_udfs.cli.queries import _column_edge

    wanted = fingerprint.strip().lower()
    if len(wanted) < 4:
        raise CliError("give at least 4 characters of the fingerprint")
    hits = store.rows("parsed_statements", f"starts_with(fingerprint, {literal(wanted)})", limit=6)
    if not hits:
        prefix = f"starts_with(fingerprint, {literal(wanted[:2])})"
        known = [r["fingerprint"] for r in store.rows("parsed_statements", prefix, ["fingerprint"])]
        close = difflib.get_close_matches(wanted, [k[: len(wanted)] for k in known], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CliError(f"unknown statement fingerprint {fingerprint!r}{hint}")
    if len(hits) > 1:
        names = ", ".join(sorted(r["fingerprint"] for r in hits)[:5])
        raise CliError(f"fingerprint prefix {fingerprint!r} is ambiguous: {names}")
    row = hits[0]
    detail = {
        key: row.get(key)
        for key in (
            "fingerprint",
            "dialect",
            "statement_type",
            "parser",
            "parser_version",
            "status",
            "error_kind",
            "error",
            "parse_ms",
            "sources",
            "targets",
            "first_seen",
            "last_seen",
            "occurrences",
            "masked_sql",
        )
    }
    detail["log_rows"] = store.count("queries", eq("fingerprint", row["fingerprint"]))
    sources, targets = row.get("sources") or [], row.get("targets") or []
    kinds = {t: "table" for t in (*sources, *targets) if t}
    graph = Graph(focus=targets[0] if targets else None)
    for name in kinds:
        graph.node(name, kinds)
    for edge in row.get("table_edges") or []:
        graph.node(edge["source_table"], kinds)
        graph.node(edge["target_table"], kinds)
        graph.edge(edge["source_table"], edge["target_table"]).add_kind(
            (row.get("statement_type") or "statement").lower()
        )
    for edge in row.get("column_edges") or []:
        graph.node(edge["source_table"], kinds).add_column(edge["source_column"])
        graph.node(edge["target_table"], kinds).add_column(edge["target_column"])
        graph.edge(edge["source_table"], edge["target_table"]).column_edges.add(_column_edge(edge))
    return Answer(f"statement {row['fingerprint']}", list(detail), [detail], graph)


RUN_COLUMNS = [
    "run_id",
    "started_at",
    "ended_at",
    "status",
    "rows_read",
    "rows_relevant",
    "distinct_statements",
    "parsed_statements",
    "table_edges",
    "column_edges",
    "quarantined",
    "by_status",
]


def runs(store: LineageStore, limit: int = 20, offset: int = 0) -> Answer:
    """The newest extraction runs first."""
    total = store.count("lineage_runs")
    found = store.sql(
        f"SELECT * FROM lineage_runs ORDER BY started_at DESC NULLS LAST, run_id "
        f"LIMIT {int(limit)} OFFSET {int(offset)}"
    )
    out = [{k: _plain(r.get(k)) for k in RUN_COLUMNS} for r in found.to_pylist()]
    note = Page(limit, offset).note(total, "runs") if total else "no runs yet"
    return Answer("extraction runs", RUN_COLUMNS, out, message=note, total=total)


QUARANTINE_COLUMNS = [
    "stage",
    "reason",
    "error_kind",
    "query_id",
    "fingerprint",
    "source_file",
    "masked_record",
    "last_seen",
]


def quarantine(
    store: LineageStore, stage: str | None = None, limit: int = 50, offset: int = 0
) -> Answer:
    """Quarantined rows (load or parse stage), newest first."""
    where = eq("stage", stage) if stage else None
    total = store.count("quarantine", where)
    found = store.sql(
        "SELECT * FROM quarantine"
        + (f" WHERE {where}" if where else "")
        + f" ORDER BY last_seen DESC NULLS LAST, quarantine_id DESC"
        f" LIMIT {int(limit)} OFFSET {int(offset)}"
    )
    out = [{k: _plain(r.get(k)) for k in QUARANTINE_COLUMNS} for r in found.to_pylist()]
    message = Page(limit, offset).note(total)
    if not total:
        message = "nothing quarantined" + (f" at stage {stage}" if stage else "")
    return Answer("quarantine", QUARANTINE_COLUMNS, out, message=message, total=total)


def _plain(value: Any) -> Any:
    """Delta map columns arrive as lists of (key, value) pairs."""
    if isinstance(value, list) and value and all(isinstance(v, tuple) for v in value):
        return dict(value)
    return value
