"""OpenLineage RunEvents as the Spark listener writes them, for the openlineage source tests."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
DBT = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"


def _facet(name: str) -> dict[str, str]:
    return {
        "_producer": SPARK,
        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-1/{name}.json#/$defs/{name}",
    }


def dataset(
    namespace: str, name: str, *, table: str | None = None, columns: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A dataset; ``table``: its symlink; ``columns``: output column → [(ns, name, field, type,
    subtype)] of its columnLineage facet."""
    facets: dict[str, Any] = {}
    if table is not None:
        facets["symlinks"] = {
            **_facet("SymlinksDatasetFacet"),
            "identifiers": [{"namespace": "file:/wh", "name": table, "type": "TABLE"}],
        }
    if columns is not None:
        facets["columnLineage"] = {
            **_facet("ColumnLineageDatasetFacet"),
            "fields": {
                out: {
                    "inputFields": [
                        {
                            "namespace": ns,
                            "name": n,
                            "field": f,
                            "transformations": [{"type": t, "subtype": s}],
                        }
                        for ns, n, f, t, s in inputs
                    ]
                }
                for out, inputs in columns.items()
            },
        }
    return {"namespace": namespace, "name": name, "facets": facets}


def run_event(
    job: str,
    time: str,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    *,
    event_type: str = "COMPLETE",
    run_id: str | None = None,
    producer: str = SPARK,
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": time,
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id or str(uuid.uuid5(uuid.NAMESPACE_URL, job + time))},
        "job": {"namespace": "spark", "name": job},
        "inputs": inputs,
        "outputs": outputs,
    }


def write_lines(path: Path, lines: list[Any], *, append: bool = False) -> None:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    with path.open("a" if append else "w", encoding="utf-8") as out:
        out.write(text)
