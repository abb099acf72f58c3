"""Build OpenLineage ``RunEvent``s from one log row, its parse result and its column edges (pure).

No transport and no Spark here: plain frozen dataclasses in, ``openlineage.client.event_v2``
objects out, built with the client's own facet classes. The Spark adapter turns Delta rows into
these dataclasses (:func:`query_run_from_dict` & co.) on the executors.

Event shape for one log row (``emit_mode: per_run``):

- one OpenLineage run: ``START`` at the row's ``start_time`` and ``COMPLETE`` / ``FAIL`` /
  ``ABORT`` at its ``end_time`` according to the logged status;
- job: the view or procedure name when the row defines one, else
  ``<statement_type>.<first target>.<fingerprint>`` (readable and unique per statement);
- job facets ``sql`` (the MASKED statement; raw text never leaves the extract job) and ``jobType``;
- inputs / outputs named by :mod:`lineage_udfs.emit.naming`; a dataset with other names (the
  ``dataset_aliases`` links that hold, given as :data:`Symlinks`) lists them in its ``symlinks``
  facet (a path as type ``LOCATION``, a table name as ``TABLE``); outputs carry ``columnLineage``
  (dataset-wide INDIRECT edges in the facet's ``dataset`` list, or per target column with
  ``indirect_lineage="fields"``; each field also gets the deprecated ``transformationDescription``
  / ``transformationType`` summary that Marquez 0.51 reads); inputs and outputs carry ``schema``
  with the columns a catalog gives, else the columns the statement's edges name (no types);
- run facet ``extractionError`` when (part of) the statement could not be parsed;
- for a script / procedure with several statements (``emit_statement_runs``), one child run per
  statement, between the parent's START and its terminal event, linked by the ``parent`` facet.

Run ids are deterministic, so a re-run of the emitter re-sends the *same* runs (consumers such as
Marquez upsert them) instead of duplicating them: ``openlineage.client.uuid.generate_static_uuid``
(a UUIDv7 whose time part is the row's start time and whose random part is a SHA-1 of
``source_system|query_id``; children add ``#<statement index>``). In ``per_statement_day`` mode
the instant is the UTC midnight of the day and the data ``source_system|fingerprint@day``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from openlineage.client.event_v2 import (
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
)
from openlineage.client.facet_v2 import (
    extraction_error_run,
    job_type_job,
    parent_run,
    sql_job,
)
from openlineage.client.uuid import generate_static_uuid

from lineage_udfs.core.enums import ABORTED_EXECUTION_STATUSES, FAILED_EXECUTION_STATUSES
from lineage_udfs.core.models import ColumnEdge
from lineage_udfs.core.records import ParseRecord, StatementRecord, from_dict
from lineage_udfs.emit.facets import (
    Catalog,
    IndirectLineage,
    Symlinks,
    _column_lineage_facet,
    _schema_facet,
    _symlinks_facet,
    columns_from_edges,
)
from lineage_udfs.emit.naming import NamingContext, dataset_identity

EmitMode = Literal["per_run", "per_statement_day"]
"""Where INDIRECT edges of the dataset-wide kinds (FILTER, JOIN, GROUP_BY, SORT, WINDOW) go:
the facet's ``dataset`` list (compact, spec 1-2-0), or each target column's ``inputFields`` as
``column_lineage`` stores them (what consumers that read only ``fields`` see, e.g. Marquez)."""

_PARSE_FAILED = frozenset({"failed", "timeout"})
_NOT_EMITTED_TYPES = frozenset({"SESSION"})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# --- inputs -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryRun:
    """One execution (a ``queries`` row), or one statement-day in ``per_statement_day`` mode."""

    query_id: str
    fingerprint: str
    start_time: datetime | None
    end_time: datetime | None
    status: str | None = None
    user_name: str | None = None
    source_system: str | None = None
    object_kind: str | None = None
    object_name: str | None = None
    default_database: str | None = None
    default_schema: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedStatement(ParseRecord):
    """The parse result of one fingerprint (a ``parsed_statements`` row): the parse record with
    the statement's fingerprint and dialect."""

    fingerprint: str
    dialect: str | None = None


@dataclass(frozen=True, slots=True)
class EventOptions:
    """Everything event building needs from the settings (a plain dataclass for executors)."""

    job_namespace: str
    default_namespace: str
    producer: str
    include_selects: bool = False
    emit_statement_runs: bool = True
    mode: EmitMode = "per_run"
    indirect_lineage: IndirectLineage = "dataset"


# --- dict adapters (rows from Spark's Row.asDict(recursive=True)) -----------------------------


def query_run_from_dict(row: Mapping[str, Any]) -> QueryRun:
    """Build a :class:`QueryRun` from a ``queries``-shaped mapping (extra keys ignored)."""
    return from_dict(QueryRun, row)


def parsed_statement_from_dict(row: Mapping[str, Any]) -> ParsedStatement:
    """Build a :class:`ParsedStatement` from a ``parsed_statements``-shaped mapping."""
    parsed = from_dict(ParsedStatement, row)
    return replace(parsed, statements=tuple(sorted(parsed.statements, key=lambda p: p.index)))


def column_edges_from_dicts(
    rows: Iterable[Mapping[str, Any]] | None,
) -> tuple[ColumnEdge, ...]:
    """Build edges from ``column_lineage``-shaped mappings, deduplicated and sorted."""
    edges = {
        from_dict(ColumnEdge, r)
        for r in (rows or ())
        if r.get("source_table") and r.get("source_column") and r.get("target_table")
    }
    return tuple(sorted(edges, key=_edge_key))


def _edge_key(e: ColumnEdge) -> tuple[str, ...]:
    return (
        e.target_table,
        e.target_column or "",
        e.source_table,
        e.source_column,
        e.transformation_type,
        e.transformation_subtype or "",
    )


# --- identities ---------------------------------------------------------------------------------


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run_id_for(query: QueryRun, mode: EmitMode = "per_run", *, part: int | None = None) -> str:
    """Deterministic run id of a log row (or statement-day), optionally of one of its statements.

    The same inputs always give the same UUID (see the module docstring), so re-emitting after
    a failure or a re-run updates runs instead of creating new ones.
    """
    start = _utc(query.start_time) or _utc(query.end_time) or _EPOCH
    if mode == "per_statement_day":
        start = start.replace(hour=0, minute=0, second=0, microsecond=0)
    data = f"{query.source_system or ''}|{query.query_id}"
    if part is not None:
        data += f"#{part}"
    return str(generate_static_uuid(start, data.encode("utf-8")))


def job_name_for(query: QueryRun, parsed: ParsedStatement) -> str:
    """Procedure or view name when the row defines one, else ``type.first_target.fingerprint``."""
    if query.object_kind in ("procedure", "view") and query.object_name:
        return query.object_name
    target = parsed.targets[0] if parsed.targets else (parsed.sources[0] if parsed.sources else "")
    pieces = [parsed.statement_type.lower(), target, parsed.fingerprint]
    return ".".join(p for p in pieces if p)


def terminal_state(status: str | None) -> RunState:
    """Map a logged status to COMPLETE / FAIL / ABORT (unknown or empty -> COMPLETE)."""
    value = (status or "").strip().lower()
    if value in FAILED_EXECUTION_STATUSES:
        return RunState.FAIL
    if value in ABORTED_EXECUTION_STATUSES:
        return RunState.ABORT
    return RunState.COMPLETE


def is_emitted(parsed: ParsedStatement, options: EventOptions) -> bool:
    """Whether a statement produces events: SELECTs only when configured, SESSION never."""
    if parsed.statement_type in _NOT_EMITTED_TYPES:
        return False
    if parsed.statement_type == "SELECT" and not parsed.targets:
        return options.include_selects
    return True


# --- facets -------------------------------------------------------------------------------------


def _extraction_error(
    parsed: ParsedStatement, producer: str
) -> extraction_error_run.ExtractionErrorRunFacet | None:
    failed_parts = [s for s in parsed.statements if s.status in _PARSE_FAILED or s.error_kind]
    top_failed = parsed.status in _PARSE_FAILED
    if not (top_failed or parsed.error_kind or failed_parts):
        return None
    errors = [
        extraction_error_run.Error(
            errorMessage=_error_message(s.error_kind, s.error), taskNumber=s.index
        )
        for s in failed_parts
    ]
    if not errors:
        errors = [
            extraction_error_run.Error(errorMessage=_error_message(parsed.error_kind, parsed.error))
        ]
    total = max(1, len(parsed.statements))
    failed = len([s for s in parsed.statements if s.status in _PARSE_FAILED])
    if top_failed and not parsed.statements:
        failed = 1
    return extraction_error_run.ExtractionErrorRunFacet(
        totalTasks=total, failedTasks=failed, errors=errors, producer=producer
    )


def _error_message(kind: str | None, message: str | None) -> str:
    return f"{kind or 'UNKNOWN'}: {message or 'no detail'}"


def _job_type(kind: str, query: QueryRun, producer: str) -> job_type_job.JobTypeJobFacet:
    scheme = (query.source_system or "").partition("://")[0].upper()
    return job_type_job.JobTypeJobFacet(
        processingType="BATCH", integration=scheme or "SQL", jobType=kind, producer=producer
    )


def _kind_of(query: QueryRun, parsed: ParsedStatement) -> str:
    if query.object_kind == "procedure":
        return "PROCEDURE"
    if query.object_kind == "view":
        return "VIEW"
    return "SCRIPT" if parsed.statement_type == "SCRIPT" else "QUERY"


# --- datasets -----------------------------------------------------------------------------------


def _identities(tables: Iterable[str], ctx: NamingContext) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for table in tables:
        found.setdefault(dataset_identity(table, ctx), table)
    return dict(sorted(found.items()))


NOT_DATASET_NAMES: frozenset[str] = frozenset(
    {"when", "then", "else", "end", "set", "on", "using", "select", "from", "where", "values",
     "matched", "not", "and", "or", "as", "by", "into", "table", "with", "update", "delete",
     "insert", "merge", "null", "case", "join"}
)  # fmt: skip
"""A one-part name that is an SQL keyword is a fallback parser's misreading of a broken
statement (``MERGE … WHEN`` giving a dataset ``when``), never a dataset."""


def _named(tables: Iterable[str], temporary: Iterable[str] = ()) -> list[str]:
    """The names that are datasets: not a misread keyword, not a temporary object (a temp
    view or table lives only in its session or script; ``ParseRecord.intermediates``)."""
    temp = {t.lower() for t in temporary}
    return [t for t in tables if t.lower() not in NOT_DATASET_NAMES and t.lower() not in temp]


def _dataset_facets(
    table: str,
    identity: tuple[str, str],
    ctx: NamingContext,
    catalog: Catalog | None,
    symlinks: Symlinks | None,
    producer: str,
) -> dict[str, Any]:
    """The ``schema`` and ``symlinks`` facets of one dataset (those it has)."""
    facets: dict[str, Any] = {}
    schema = _schema_facet(table, catalog, producer)
    if schema:
        facets["schema"] = schema
    links = _symlinks_facet(table, identity, symlinks, ctx, producer)
    if links:
        facets["symlinks"] = links
    return facets


def _inputs(
    tables: Iterable[str],
    ctx: NamingContext,
    catalog: Catalog | None,
    producer: str,
    symlinks: Symlinks | None = None,
) -> list[InputDataset]:
    return [
        InputDataset(
            namespace=namespace,
            name=name,
            facets=_dataset_facets(table, (namespace, name), ctx, catalog, symlinks, producer),
        )
        for (namespace, name), table in _identities(tables, ctx).items()
    ]


def _outputs(
    tables: Iterable[str],
    edges: Sequence[ColumnEdge],
    ctx: NamingContext,
    catalog: Catalog | None,
    producer: str,
    indirect: IndirectLineage = "dataset",
    symlinks: Symlinks | None = None,
) -> list[OutputDataset]:
    all_tables = list(tables) + [e.target_table for e in edges]
    datasets = []
    for (namespace, name), table in _identities(all_tables, ctx).items():
        mine = [e for e in edges if dataset_identity(e.target_table, ctx) == (namespace, name)]
        facets: dict[str, Any] = {}
        if mine:
            facets["columnLineage"] = _column_lineage_facet(mine, ctx, producer, indirect)
        facets.update(_dataset_facets(table, (namespace, name), ctx, catalog, symlinks, producer))
        datasets.append(OutputDataset(namespace=namespace, name=name, facets=facets))
    return datasets


# --- events -------------------------------------------------------------------------------------


def build_run_events(
    query: QueryRun,
    parsed: ParsedStatement,
    edges: Sequence[ColumnEdge] = (),
    *,
    options: EventOptions,
    catalog: Catalog | None = None,
    symlinks: Symlinks | None = None,
) -> list[RunEvent]:
    """All events of one log row (or statement-day), in the order they must be delivered.

    Returns an empty list for statements that are not emitted (see :func:`is_emitted`).
    Never includes the raw query text: only ``parsed.masked_sql``. ``symlinks``: the other
    names of the datasets (their ``symlinks`` facets).
    """
    if not is_emitted(parsed, options):
        return []
    ctx = NamingContext(
        source_system=query.source_system,
        default_namespace=options.default_namespace,
        default_database=query.default_database,
        default_schema=query.default_schema,
    )
    producer = options.producer
    # a row without times is dated when its events are built, never 1970-01-01
    start = _utc(query.start_time) or _utc(query.end_time) or datetime.now(UTC)
    end = _utc(query.end_time) or start
    state = terminal_state(query.status)
    run_id = run_id_for(query, options.mode)
    job_name = job_name_for(query, parsed)

    job_facets: dict[str, Any] = {
        "jobType": _job_type(_kind_of(query, parsed), query, producer),
    }
    if parsed.masked_sql:
        job_facets["sql"] = sql_job.SQLJobFacet(
            query=parsed.masked_sql, dialect=parsed.dialect, producer=producer
        )
    run_facets: dict[str, Any] = {}
    error = _extraction_error(parsed, producer)
    if error is not None:
        run_facets["extractionError"] = error

    if catalog is None:
        catalog = columns_from_edges(edges)
    if parsed.status in _PARSE_FAILED:  # no dataset from a failed parse
        inputs, outputs = [], []
    else:
        # a column edge's source is read by the statement even when the parse does not list it
        # as a source (a MERGE's target in its ON clause): an input, so consumers can link the
        # edge
        read = list(parsed.sources) + [e.source_table for e in edges]
        inputs = _inputs(_named(read, parsed.intermediates), ctx, catalog, producer, symlinks)
        outputs = _outputs(
            _named(parsed.targets, parsed.intermediates),
            edges,
            ctx,
            catalog,
            producer,
            options.indirect_lineage,
            symlinks,
        )
    job = Job(namespace=options.job_namespace, name=job_name, facets=job_facets)

    def event(event_type: RunState, at: datetime, facets: dict[str, Any]) -> RunEvent:
        return RunEvent(
            eventType=event_type,
            eventTime=_iso(at),
            run=Run(runId=run_id, facets=facets),
            job=job,
            inputs=inputs,
            outputs=outputs,
            producer=producer,
        )

    events = [event(RunState.START, start, {})]
    if options.emit_statement_runs and len(parsed.statements) > 1:
        parent = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=run_id),
            job=parent_run.Job(namespace=options.job_namespace, name=job_name),
            producer=producer,
        )
        for part in parsed.statements:
            events.extend(
                _child_events(
                    query,
                    part,
                    parent,
                    job_name,
                    start,
                    end,
                    state,
                    ctx,
                    options,
                    parsed.intermediates,
                    symlinks,
                )
            )
    events.append(event(state, end, run_facets))
    return events


def _child_events(
    query: QueryRun,
    part: StatementRecord,
    parent: parent_run.ParentRunFacet,
    parent_name: str,
    start: datetime,
    end: datetime,
    state: RunState,
    ctx: NamingContext,
    options: EventOptions,
    temporary: Iterable[str] = (),
    symlinks: Symlinks | None = None,
) -> list[RunEvent]:
    producer = options.producer
    run_id = run_id_for(query, options.mode, part=part.index)
    name = f"{parent_name}.{part.index:03d}_{part.statement_type.lower()}"
    job = Job(
        namespace=options.job_namespace,
        name=name,
        facets={"jobType": _job_type("STATEMENT", query, producer)},
    )
    start_facets: dict[str, Any] = {"parent": parent}
    facets: dict[str, Any] = {"parent": parent}
    if part.status in _PARSE_FAILED or part.error_kind:
        facets["extractionError"] = extraction_error_run.ExtractionErrorRunFacet(
            totalTasks=1,
            failedTasks=1 if part.status in _PARSE_FAILED else 0,
            errors=[
                extraction_error_run.Error(
                    errorMessage=_error_message(part.error_kind, part.error), taskNumber=part.index
                )
            ],
            producer=producer,
        )
    failed = part.status in _PARSE_FAILED
    inputs = (
        [] if failed else _inputs(_named(part.sources, temporary), ctx, None, producer, symlinks)
    )
    outputs = (
        []
        if failed
        else _outputs(_named(part.targets, temporary), (), ctx, None, producer, symlinks=symlinks)
    )
    return [
        RunEvent(
            eventType=event_type,
            eventTime=_iso(at),
            run=Run(runId=run_id, facets=run_facets),
            job=job,
            inputs=inputs,
            outputs=outputs,
            producer=producer,
        )
        for event_type, at, run_facets in (
            (RunState.START, start, start_facets),
            (state, end, facets),
        )
    ]
