"""OpenLineage RunEvents as a lineage source: one event → its table and column edges.

Pure (standard library only): the Spark layer validates an event against the OpenLineage
schema, then hands the parsed JSON to :func:`event_lineage`. A COMPLETE event gives a table
edge from every input to every output and a column edge per input field of each output's
``columnLineage`` facet (with the facet's transformation type and subtype); other event types
give no edges (a START or RUNNING event describes a run still going, FAIL and ABORT a run whose
writes did not happen).

A dataset's node name (:func:`dataset_node`) keeps what the event says: a path-like dataset
(a storage namespace: ``file``, ``s3://bucket``, ``dbfs`` ...) is the URI of its location, a
table-like one is its name as the producer spelt it. Telling that two such names are one
dataset is the business of ``core.identity``; the ``symlinks`` facets the event carries are
returned with its edges as evidence for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lineage_udfs.core.enums import TransformationSubtype, TransformationType

EDGE_EVENT_TYPES = frozenset({"COMPLETE"})
"""Event types whose datasets give edges."""

STORAGE_SCHEMES = frozenset(
    {"file", "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "hdfs", "dbfs"}
)
"""Namespaces (or namespace schemes) whose datasets are locations, not tables."""

_PRODUCER_TAIL = re.compile(r"[^a-z0-9]+")


class EventError(ValueError):
    """An event that passed the schema but cannot give lineage (its one-line reason)."""


@dataclass(frozen=True, slots=True)
class EventColumnEdge:
    source_table: str
    source_column: str
    target_table: str
    target_column: str
    transformation_type: str
    transformation_subtype: str
    masking: bool = False


@dataclass(frozen=True, slots=True)
class Symlink:
    """A ``symlinks`` facet identifier: ``node`` is also known as ``alias`` (a table name)."""

    node: str
    alias: str
    namespace: str
    type: str


@dataclass(frozen=True, slots=True)
class EventLineage:
    """What one RunEvent contributes."""

    run_id: str
    event_type: str
    event_time: str
    producer: str
    """``edge_kind`` of its edges: the producer (``openlineage:spark``, ``openlineage:dbt`` ...)."""
    job_namespace: str
    job_name: str
    table_edges: tuple[tuple[str, str], ...] = ()
    column_edges: tuple[EventColumnEdge, ...] = ()
    symlinks: tuple[Symlink, ...] = ()
    datasets: tuple[str, ...] = field(default=())
    """Every dataset the event names (inputs and outputs), as nodes."""

    @property
    def job(self) -> str:
        """The job's identity: ``namespace/name``."""
        return f"{self.job_namespace}/{self.job_name}"


def is_storage_namespace(namespace: str) -> bool:
    """True when datasets of ``namespace`` are locations (``file``, ``s3://bucket``, ``dbfs``).

    Examples:
        >>> is_storage_namespace("s3a://bucket"), is_storage_namespace("file")
        (True, True)
        >>> is_storage_namespace("snowflake://acme"), is_storage_namespace("spark_catalog")
        (False, False)
    """
    scheme = namespace.split("://", 1)[0] if "://" in namespace else namespace.rstrip(":")
    return scheme.lower() in STORAGE_SCHEMES


def dataset_node(namespace: str, name: str) -> str:
    """The graph node of an OpenLineage dataset.

    A location is written as a URI (``s3://bucket/key``, ``file:/lake/t``, ``dbfs:/mnt/x``); a
    table keeps its name as the producer spelt it (its case too: letter case is evidence for
    ``core.identity``, not something to fold here).

    Examples:
        >>> dataset_node("s3a://bucket", "warehouse/orders")
        's3a://bucket/warehouse/orders'
        >>> dataset_node("file", "/lake/wh/orders")
        'file:/lake/wh/orders'
        >>> dataset_node("snowflake://acme", "ANALYTICS.PUBLIC.ORDERS")
        'ANALYTICS.PUBLIC.ORDERS'
    """
    if not is_storage_namespace(namespace):
        return name
    if "://" in namespace:
        return f"{namespace.rstrip('/')}/{name.lstrip('/')}"
    scheme = namespace.rstrip(":").lower()
    return f"{scheme}:{name if name.startswith('/') else '/' + name}"


def producer_kind(producer: str) -> str:
    """The ``edge_kind`` of a producer URI: ``openlineage:`` and the integration's name.

    Examples:
        >>> producer_kind("https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark")
        'openlineage:spark'
        >>> producer_kind("https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt")
        'openlineage:dbt'
        >>> producer_kind("https://example.com/my-etl/")
        'openlineage:my-etl'
        >>> producer_kind("")
        'openlineage:unknown'
    """
    path = re.sub(r"^[a-z][a-z0-9+.-]*://[^/]*", "", producer.strip().lower())
    parts = [p for p in path.split("/") if p and not re.fullmatch(r"v?\d+(\.\d+)*", p)]
    tail = _PRODUCER_TAIL.sub("-", parts[-1]).strip("-") if parts else ""
    return f"openlineage:{tail or 'unknown'}"


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise EventError(f"{what} is missing or empty")
    return value


def _datasets(event: dict[str, Any], side: str) -> list[dict[str, Any]]:
    value = event.get(side) or []
    if not isinstance(value, list):
        raise EventError(f"{side} is not a list")
    return [d for d in value if isinstance(d, dict)]


def _node(dataset: dict[str, Any], what: str) -> str:
    return dataset_node(
        _text(dataset.get("namespace"), f"{what} namespace"), _text(dataset.get("name"), what)
    )


def _symlinks(dataset: dict[str, Any], node: str) -> list[Symlink]:
    facet = (dataset.get("facets") or {}).get("symlinks") or {}
    links = []
    for ident in facet.get("identifiers") or []:
        if not isinstance(ident, dict):
            continue
        name, namespace = ident.get("name"), ident.get("namespace") or ""
        if isinstance(name, str) and name.strip():
            alias = dataset_node(str(namespace), name)
            if alias != node:
                links.append(Symlink(node, alias, str(namespace), str(ident.get("type") or "")))
    return links


def _subtype(value: Any, kind: str) -> str:
    """The subtype as given (upper case); a DIRECT one without a subtype is IDENTITY."""
    text = str(value or "").strip().upper()
    if not text and kind == TransformationType.DIRECT:
        return str(TransformationSubtype.IDENTITY)
    return text


def _field_edges(
    target: str, column: str, inputs: list[Any], node_of: dict[tuple[str, str], str]
) -> list[EventColumnEdge]:
    edges = []
    for item in inputs:
        if not isinstance(item, dict):
            continue
        ns, name, src_col = item.get("namespace"), item.get("name"), item.get("field")
        if not (isinstance(ns, str) and isinstance(name, str) and isinstance(src_col, str)):
            raise EventError(f"columnLineage of {target}.{column}: an input field lacks a name")
        source = node_of.get((ns, name)) or dataset_node(ns, name)
        transformations = item.get("transformations") or []
        if not transformations:  # facet 1-0-x: no per-field transformation, DIRECT by spec
            transformations = [{"type": "DIRECT", "subtype": "IDENTITY"}]
        for t in transformations:
            if not isinstance(t, dict):
                continue
            kind = str(t.get("type") or "DIRECT").upper()
            if kind not in {k.value for k in TransformationType}:
                raise EventError(f"columnLineage of {target}.{column}: unknown type {kind!r}")
            edges.append(
                EventColumnEdge(
                    source,
                    src_col.lower(),
                    target,
                    column.lower(),
                    kind,
                    _subtype(t.get("subtype"), kind),
                    bool(t.get("masking")),
                )
            )
    return edges


def _column_edges(
    output: dict[str, Any], target: str, node_of: dict[tuple[str, str], str]
) -> list[EventColumnEdge]:
    facet = (output.get("facets") or {}).get("columnLineage") or {}
    edges: list[EventColumnEdge] = []
    for column, spec in (facet.get("fields") or {}).items():
        if isinstance(spec, dict):
            edges += _field_edges(target, column, spec.get("inputFields") or [], node_of)
    # facet 1-2-0: dataset-wide INDIRECT dependencies (a filter or join key) apply to every
    # output column
    columns = [c.lower() for c in facet.get("fields") or {}]
    for column in columns:
        edges += [
            e
            for e in _field_edges(target, column, facet.get("dataset") or [], node_of)
            if e.transformation_type == TransformationType.INDIRECT
        ]
    return edges


def event_lineage(event: dict[str, Any]) -> EventLineage:
    """The lineage of one schema-valid RunEvent (edges only for a COMPLETE event).

    Raises:
        EventError: the event lacks what lineage needs (a run id, a job name, a dataset name).
    """
    run = event.get("run") or {}
    job = event.get("job") or {}
    event_type = str(event.get("eventType") or "").upper()
    base: dict[str, Any] = {
        "run_id": _text(run.get("runId"), "run.runId"),
        "event_type": event_type or "UNKNOWN",
        "event_time": _text(event.get("eventTime"), "eventTime"),
        "producer": producer_kind(str(event.get("producer") or "")),
        "job_namespace": _text(job.get("namespace"), "job.namespace"),
        "job_name": _text(job.get("name"), "job.name"),
    }
    inputs, outputs = _datasets(event, "inputs"), _datasets(event, "outputs")
    node_of: dict[tuple[str, str], str] = {}
    symlinks: list[Symlink] = []
    for side, datasets in (("input", inputs), ("output", outputs)):
        for d in datasets:
            node = _node(d, f"{side} dataset name")
            node_of[(str(d["namespace"]), str(d["name"]))] = node
            symlinks += _symlinks(d, node)
    nodes = tuple(dict.fromkeys(node_of.values()))
    if event_type not in EDGE_EVENT_TYPES:
        return EventLineage(**base, symlinks=tuple(dict.fromkeys(symlinks)), datasets=nodes)
    sources = list(dict.fromkeys(node_of[(d["namespace"], d["name"])] for d in inputs))
    table_edges: list[tuple[str, str]] = []
    column_edges: list[EventColumnEdge] = []
    for d in outputs:
        target = node_of[(d["namespace"], d["name"])]
        table_edges += [(s, target) for s in sources]
        for e in _column_edges(d, target, node_of):
            column_edges.append(e)
            if (e.source_table, target) not in table_edges and e.source_table != target:
                table_edges.append((e.source_table, target))
    return EventLineage(
        **base,
        table_edges=tuple(dict.fromkeys(table_edges)),
        column_edges=tuple(dict.fromkeys(column_edges)),
        symlinks=tuple(dict.fromkeys(symlinks)),
        datasets=nodes,
    )
