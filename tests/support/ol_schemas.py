"""Validate OpenLineage events against the spec documents stored in tests/schemas/openlineage.

The registry serves every document under its own ``$id``; the stored core document (2-0-7, see
the README there) is additionally served under the core URIs the facet schemas ``$ref``
(2-0-2, 2-0-3 and 1-0-2), explicitly listed in ``_CORE_ALIASES``. Everything resolves offline.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas" / "openlineage"
_CORE_ALIASES = (
    "https://openlineage.io/spec/2-0-2/OpenLineage.json",
    "https://openlineage.io/spec/2-0-3/OpenLineage.json",
    "https://openlineage.io/spec/1-0-2/OpenLineage.json",
)
# facet key in an event -> (schema file, $defs entry)
RUN_FACETS = {
    "parent": ("ParentRunFacet", "ParentRunFacet"),
    "extractionError": ("ExtractionErrorRunFacet", "ExtractionErrorRunFacet"),
    "tags": ("TagsRunFacet", "TagsRunFacet"),  # added by OpenLineageClient.emit itself
}
JOB_FACETS = {
    "sql": ("SQLJobFacet", "SQLJobFacet"),
    "jobType": ("JobTypeJobFacet", "JobTypeJobFacet"),
    "tags": ("TagsJobFacet", "TagsJobFacet"),  # added by OpenLineageClient.emit itself
}
DATASET_FACETS = {
    "columnLineage": ("ColumnLineageDatasetFacet", "ColumnLineageDatasetFacet"),
    "schema": ("SchemaDatasetFacet", "SchemaDatasetFacet"),
}


@cache
def _documents() -> dict[str, dict[str, Any]]:
    docs = {"OpenLineage": json.loads((SCHEMA_DIR / "OpenLineage.json").read_text())}
    for path in sorted((SCHEMA_DIR / "facets").glob("*.json")):
        docs[path.stem] = json.loads(path.read_text())
    return docs


@cache
def _registry() -> Registry:
    docs = _documents()
    resources = [(doc["$id"], Resource.from_contents(doc)) for doc in docs.values()]
    core = Resource.from_contents(docs["OpenLineage"])
    resources += [(alias, core) for alias in _CORE_ALIASES]
    return Registry().with_resources(resources)


@cache
def _validator(doc: str, definition: str) -> Draft202012Validator:
    schema_id = _documents()[doc]["$id"]
    return Draft202012Validator(
        {"$ref": f"{schema_id}#/$defs/{definition}"},
        registry=_registry(),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def _check_facets(facets: dict[str, Any] | None, known: dict[str, tuple[str, str]]) -> list[str]:
    checked = []
    for key, facet in (facets or {}).items():
        if key == "symlinks" and known is DATASET_FACETS:
            # the facet's schema document is not stored; the members its spec requires are
            # what the openlineage source validates incoming facets against
            from lineage_udfs.sources.openlineage import _SYMLINKS_SCHEMA

            Draft202012Validator(_SYMLINKS_SCHEMA).validate(facet)
            checked.append(key)
            continue
        if key not in known:
            raise AssertionError(f"facet {key!r} has no stored schema to validate against")
        _validator(*known[key]).validate(facet)
        checked.append(key)
    return checked


def validate_event(event: dict[str, Any]) -> list[str]:
    """Validate a serialised RunEvent and each of its facets; return the facet keys checked.

    Raises:
        jsonschema.ValidationError: the event or a facet does not conform.
        AssertionError: a facet we have no schema for.
    """
    _validator("OpenLineage", "RunEvent").validate(event)
    checked = _check_facets(event["run"].get("facets"), RUN_FACETS)
    checked += _check_facets(event["job"].get("facets"), JOB_FACETS)
    for dataset in [*event.get("inputs", []), *event.get("outputs", [])]:
        checked += _check_facets(dataset.get("facets"), DATASET_FACETS)
    return checked
