"""Data-driven: OpenLineage RunEvents → edges (``ol_cases/events.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lineage_udfs.core.ol_events import EventError, event_lineage

CASES = Path(__file__).parent / "ol_cases" / "events.yaml"
BASE: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-28T04:00:00Z",
    "producer": "https://example.com/producer",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    "run": {"runId": "0193a2f0-0000-7000-8000-000000000001"},
    "job": {"namespace": "etl", "name": "nightly"},
    "inputs": [],
    "outputs": [],
}


def _cases() -> list[Any]:
    cases = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    return [pytest.param(c, id=c["id"]) for c in cases]


@pytest.mark.parametrize("case", _cases())
def test_event_case(case: dict[str, Any]) -> None:
    event = {**BASE, **case["event"]}
    if "error" in case:
        with pytest.raises(EventError) as info:
            event_lineage(event)
        assert str(info.value) == case["error"]
        return
    lineage = event_lineage(event)
    assert [list(e) for e in lineage.table_edges] == case["table_edges"]
    assert [
        [
            e.source_table,
            e.source_column,
            e.target_table,
            e.target_column,
            e.transformation_type,
            e.transformation_subtype,
        ]
        for e in lineage.column_edges
    ] == case["column_edges"]
    if "symlinks" in case:
        assert [[s.node, s.alias, s.type] for s in lineage.symlinks] == case["symlinks"]
    if "producer" in case:
        assert lineage.producer == case["producer"]
    assert lineage.job == "etl/nightly"
    assert lineage.run_id == BASE["run"]["runId"]


def test_masking_flag_is_kept() -> None:
    event = {
        **BASE,
        "inputs": [{"namespace": "file", "name": "/a"}],
        "outputs": [
            {
                "namespace": "file",
                "name": "/b",
                "facets": {
                    "columnLineage": {
                        "fields": {
                            "h": {
                                "inputFields": [
                                    {
                                        "namespace": "file",
                                        "name": "/a",
                                        "field": "ssn",
                                        "transformations": [
                                            {
                                                "type": "DIRECT",
                                                "subtype": "TRANSFORMATION",
                                                "masking": True,
                                            }
                                        ],
                                    }
                                ]
                            }
                        }
                    }
                },
            }
        ],
    }
    (edge,) = event_lineage(event).column_edges
    assert edge.masking and edge.source_column == "ssn" and edge.target_column == "h"
