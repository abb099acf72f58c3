"""Dataset identity: each evidence rule (data-driven, ``ol_cases/identity.yaml``), the
steward's decisions and the merge into classes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lineage_udfs.core import identity
from lineage_udfs.core.identity import AliasLink, Decision, apply_decisions, resolve

CASES = Path(__file__).parent / "ol_cases" / "identity.yaml"


def _run(rule: str, given: Any) -> list[AliasLink]:
    if rule == "symlink":
        return identity.symlink_links([tuple(x) for x in given])
    if rule == "location":
        return identity.location_links([tuple(x) for x in given])
    if rule == "storage":
        return identity.storage_links(given)
    if rule == "case":
        return identity.case_links(given)
    if rule == "default_schema":
        return identity.default_schema_links(given["names"], [tuple(x) for x in given["sessions"]])
    raise AssertionError(rule)


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c["id"]) for c in yaml.safe_load(CASES.read_text())]
)
def test_rule(case: dict[str, Any]) -> None:
    links = _run(case["rule"], case["input"])
    assert [[x.alias, x.canonical, x.evidence, x.confidence] for x in links] == case["links"]
    assert all(x.detail and x.status == identity.PROPOSED for x in links)


LINKS = [
    AliasLink("s3a://lake/t1/", "s3://lake/t1", "storage_scheme", "", 1.0),
    AliasLink("s3://lake/t1", "db.t1", "catalog_location", "", 0.95),
    AliasLink("DB.T1", "db.t1", "case", "", 0.9),
    AliasLink("t1", "db.t1", "default_schema", "", 0.5),
]


def test_resolve_merges_chains_into_the_table_name() -> None:
    names = resolve(LINKS, min_confidence=0.9)
    assert names == {
        "s3a://lake/t1/": "db.t1",
        "s3://lake/t1": "db.t1",
        "db.t1": "db.t1",
        "DB.T1": "db.t1",
    }  # t1 (0.5) stays its own node


def test_threshold_and_steward() -> None:
    assert resolve(LINKS, min_confidence=0.99) == {
        "s3a://lake/t1/": "s3://lake/t1",
        "s3://lake/t1": "s3://lake/t1",
    }
    decided = apply_decisions(
        LINKS,
        [
            Decision("t1", "db.t1", accept=True),
            Decision("DB.T1", None, accept=False),
            Decision("x.legacy", "db.t1", accept=True),
        ],
    )
    status = {(x.alias, x.evidence): x.status for x in decided}
    assert status[("t1", "default_schema")] == identity.ACCEPTED
    assert status[("DB.T1", "case")] == identity.REJECTED
    assert status[("x.legacy", "steward")] == identity.ACCEPTED
    names = resolve(decided, min_confidence=0.9)
    assert names["t1"] == "db.t1" and names["x.legacy"] == "db.t1"
    assert "DB.T1" not in names


def test_decisions_from_rows() -> None:
    rows = [
        {"alias": "a", "canonical": "b", "decision": "Accept"},
        {"alias": "c", "decision": "reject"},
    ]
    assert identity.decisions_from(rows) == [Decision("a", "b", True), Decision("c", None, False)]
    with pytest.raises(ValueError, match="steward line 1: decision is accept or reject"):
        identity.decisions_from([{"alias": "a", "decision": "maybe"}])
