"""The dataset facets of an emitted event: ``columnLineage`` from the column edges (its
transformation types, and the legacy description and type OpenLineage still reads), ``schema``
from the columns the edges name, ``symlinks`` from the aliases that hold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset, symlinks_dataset

from lineage_udfs.core.identity import is_path as is_location
from lineage_udfs.core.models import ColumnEdge
from lineage_udfs.emit.naming import NamingContext, dataset_identity, location_identity

IndirectLineage = Literal["dataset", "fields"]

Catalog = Mapping[str, Sequence[tuple[str, str | None]]]
"""Canonical table name -> ((column, type), ...), for ``schema`` facets (optional)."""

Symlinks = Mapping[str, Sequence[str]]
"""Canonical table name -> the other names of the same dataset (paths, other spellings), for
``symlinks`` facets (``lineage_udfs.core.identity.alias_sets``; optional)."""

_DATASET_WIDE_SUBTYPES = frozenset({"FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW"})


def _transformation(edge: ColumnEdge) -> column_lineage_dataset.Transformation:
    subtype: str | None = edge.transformation_subtype or None
    masking = subtype == "MASKED"
    if masking:
        subtype = "TRANSFORMATION"
    return column_lineage_dataset.Transformation(
        type=edge.transformation_type, subtype=subtype, masking=masking
    )


def _tkey(t: column_lineage_dataset.Transformation) -> tuple[str, str, bool]:
    return (t.type, t.subtype or "", bool(t.masking))


def _input_fields(
    grouped: Mapping[tuple[str, str, str], list[column_lineage_dataset.Transformation]],
) -> list[column_lineage_dataset.InputField]:
    fields = []
    for (namespace, name, field), transformations in sorted(grouped.items()):
        unique = {_tkey(t): t for t in transformations}
        fields.append(
            column_lineage_dataset.InputField(
                namespace=namespace,
                name=name,
                field=field,
                transformations=[unique[k] for k in sorted(unique)],
            )
        )
    return fields


def _column_lineage_facet(
    edges: Sequence[ColumnEdge],
    ctx: NamingContext,
    producer: str,
    indirect: IndirectLineage = "dataset",
) -> column_lineage_dataset.ColumnLineageDatasetFacet:
    per_field: dict[str, dict[tuple[str, str, str], list[Any]]] = {}
    dataset_wide: dict[tuple[str, str, str], list[Any]] = {}
    for edge in edges:
        namespace, name = dataset_identity(edge.source_table, ctx)
        key = (namespace, name, edge.source_column)
        wide = (
            indirect == "dataset"
            and edge.transformation_type == "INDIRECT"
            and edge.transformation_subtype in _DATASET_WIDE_SUBTYPES
        )
        if wide or not edge.target_column:
            dataset_wide.setdefault(key, []).append(_transformation(edge))
        else:
            per_field.setdefault(edge.target_column, {}).setdefault(key, []).append(
                _transformation(edge)
            )
    fields = {}
    for column, grouped in sorted(per_field.items()):
        inputs = _input_fields(grouped)
        fields[column] = column_lineage_dataset.Fields(
            inputFields=inputs,
            transformationDescription=_legacy_description(inputs),
            transformationType=_legacy_type(inputs),
        )
    return column_lineage_dataset.ColumnLineageDatasetFacet(
        fields=fields, dataset=_input_fields(dataset_wide), producer=producer
    )


def _transformation_text(t: column_lineage_dataset.Transformation) -> str:
    text = f"{t.type}/{t.subtype}" if t.subtype else t.type
    return text + (" (masking)" if t.masking else "")


def _legacy_description(inputs: Sequence[column_lineage_dataset.InputField]) -> str:
    """The field-level ``transformationDescription`` (deprecated in the spec, the only
    transformation Marquez 0.51 reads): each input with its transformations, e.g.
    ``RAW.ORDERS.amount: DIRECT/IDENTITY; RAW.ORDERS.status: INDIRECT/FILTER``."""
    return "; ".join(
        f"{f.name}.{f.field}: {', '.join(_transformation_text(t) for t in f.transformations or ())}"
        for f in inputs
    )


def _legacy_type(inputs: Sequence[column_lineage_dataset.InputField]) -> str | None:
    """The deprecated field-level ``transformationType``: ``MASKED`` when any input is masked,
    ``IDENTITY`` when every input is a DIRECT/IDENTITY copy, else None (its only two values)."""
    transformations = [t for f in inputs for t in f.transformations or ()]
    if any(t.masking for t in transformations):
        return "MASKED"
    if transformations and all(_tkey(t) == ("DIRECT", "IDENTITY", False) for t in transformations):
        return "IDENTITY"
    return None


def columns_from_edges(edges: Iterable[ColumnEdge]) -> dict[str, list[tuple[str, None]]]:
    """A :data:`Catalog` of the columns the edges name: the source columns of each source table
    and the target columns of each target table (types unknown). What ``schema`` facets hold when
    no catalog is given: OpenLineage consumers such as Marquez link column lineage only to fields
    that a ``schema`` facet declared."""
    columns: dict[str, set[str]] = {}
    for edge in edges:
        columns.setdefault(edge.source_table, set()).add(edge.source_column)
        if edge.target_column:
            columns.setdefault(edge.target_table, set()).add(edge.target_column)
    return {table: [(c, None) for c in sorted(names)] for table, names in columns.items()}


def _schema_facet(
    table: str, catalog: Catalog | None, producer: str
) -> schema_dataset.SchemaDatasetFacet | None:
    columns = (catalog or {}).get(table)
    if not columns:
        return None
    return schema_dataset.SchemaDatasetFacet(
        fields=[
            schema_dataset.SchemaDatasetFacetFields(name=name, type=dtype)
            for name, dtype in columns
        ],
        producer=producer,
    )


def _symlinks_facet(
    table: str,
    identity: tuple[str, str],
    symlinks: Symlinks | None,
    ctx: NamingContext,
    producer: str,
) -> symlinks_dataset.SymlinksDatasetFacet | None:
    """The other names of ``table``'s dataset, each named as the dataset itself would be (a path
    as a ``LOCATION`` in its storage namespace, a table name as a ``TABLE``); a name that comes
    out as the dataset's own identity is left out."""
    found: set[tuple[str, str, str]] = set()
    for alias in (symlinks or {}).get(table, ()):
        location = is_location(alias)
        namespace, name = (location_identity if location else dataset_identity)(alias, ctx)
        if (namespace, name) != identity:
            found.add((namespace, name, "LOCATION" if location else "TABLE"))
    if not found:
        return None
    return symlinks_dataset.SymlinksDatasetFacet(
        identifiers=[
            symlinks_dataset.Identifier(namespace=ns, name=name, type=kind)
            for ns, name, kind in sorted(found)
        ],
        producer=producer,
    )
