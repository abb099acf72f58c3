"""One line of an ``openlineage`` source → its event row or its one-line quarantine reason
(``lineage_udfs.sources.openlineage.event_row``), validated against the OpenLineage schema."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lineage_udfs.sources.openlineage import event_row

SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark"
FACET = {
    "_producer": SPARK,
    "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json"
    "#/$defs/ColumnLineageDatasetFacet",
}


def _event(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-28T04:00:00.123Z",
        "producer": SPARK,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": "0193a2f0-0000-7000-8000-000000000001"},
        "job": {"namespace": "spark", "name": "etl.write_orders"},
        "inputs": [{"namespace": "file", "name": "/wh/raw"}],
        "outputs": [
            {
                "namespace": "file",
                "name": "/wh/out",
                "facets": {
                    "columnLineage": {
                        **FACET,
                        "fields": {
                            "id": {
                                "inputFields": [
                                    {
                                        "namespace": "file",
                                        "name": "/wh/raw",
                                        "field": "id",
                                        "transformations": [
                                            {"type": "DIRECT", "subtype": "IDENTITY"}
                                        ],
                                    }
                                ]
                            }
                        },
                    },
                    "symlinks": {
                        "_producer": SPARK,
                        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/"
                        "SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
                        "identifiers": [
                            {"namespace": "file:/wh", "name": "default.out", "type": "TABLE"}
                        ],
                    },
                },
            }
        ],
    }
    event.update(changes)
    return event


def test_valid_event_gives_its_lineage() -> None:
    row = event_row(json.dumps(_event()))
    assert row["reason"] is None
    assert row["producer"] == "openlineage:spark"
    assert row["job"] == "spark/etl.write_orders"
    assert row["table_edges"] == [{"source_table": "file:/wh/raw", "target_table": "file:/wh/out"}]
    assert [e["target_column"] for e in row["column_edges"]] == ["id"]
    assert row["symlinks"][0]["alias"] == "default.out"
    # the same event read again has the same identity
    assert event_row(json.dumps(_event()))["event_id"] == row["event_id"]


BAD: list[tuple[str, str]] = [
    ("{not json", "not JSON: "),
    (json.dumps(_event(run={})), "not an OpenLineage RunEvent: run: 'runId' is a required"),
    (
        json.dumps(_event(run={"runId": "not-a-uuid"})),
        "not an OpenLineage RunEvent: run.runId: 'not-a-uuid' is not a 'uuid'",
    ),
    (
        json.dumps(_event(eventTime="yesterday")),
        "not an OpenLineage RunEvent: eventTime: 'yesterday' is not a 'date-time'",
    ),
    (json.dumps([1, 2]), "not an OpenLineage RunEvent: the event: [1, 2] is not of type"),
    (
        json.dumps(
            _event(
                outputs=[
                    {
                        "namespace": "file",
                        "name": "/x",
                        "facets": {
                            "columnLineage": {
                                **FACET,
                                "fields": {
                                    "a": {"inputFields": [{"namespace": "file", "name": "/y"}]}
                                },
                            }
                        },
                    }
                ]
            )
        ),
        "invalid columnLineage facet: outputs[0].facets.columnLineage.fields.a.inputFields[0]:"
        " 'field' is a required property",
    ),
    (
        json.dumps(
            _event(
                inputs=[
                    {
                        "namespace": "file",
                        "name": "/x",
                        "facets": {"symlinks": {**FACET, "identifiers": [{"name": "t"}]}},
                    }
                ]
            )
        ),
        "invalid symlinks facet: inputs[0].facets.symlinks.identifiers[0]: 'namespace' is a"
        " required property",
    ),
    (
        json.dumps(_event(job={"namespace": "spark", "name": " "})),
        "no lineage in the event: job.name is missing or empty",
    ),
]


@pytest.mark.parametrize(("line", "reason"), BAD, ids=[r.split(":")[0] for _, r in BAD])
def test_bad_line_gives_one_line_reason(line: str, reason: str) -> None:
    row = event_row(line)
    assert row["reason"] is not None and row["reason"].startswith(reason), row["reason"]
    assert "\n" not in row["reason"]
    assert row["event_id"] is None and row["line_id"]
