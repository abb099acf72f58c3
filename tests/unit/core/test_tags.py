"""Tag declarations: the tags file, the name rules, the precedence of declarations (data-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_udfs.core.errors import InputError
from lineage_udfs.core.tags import declared, name_rule_declarations, parse_tags_file

REFS = ["raw.customers.email", "raw.customers.ssn_hash", "crm.people.e_mail", "crm.people.id"]

CASES: list[tuple[str, dict[str, Any], Any, list[tuple[str, str, str, str | None]]]] = [
    (
        "explicit column beats a pattern on the same column",
        {"tags": [{"pattern": "*.email", "tags": ["pii"]},
                  {"column": "raw.customers.email", "tags": ["pii"], "value": "v"}]},
        False,
        [("raw.customers.email", "pii", "column raw.customers.email", "v")],
    ),
    (
        "a pattern matches table.column, case-folded",
        {"tags": [{"pattern": "*SSN*", "tags": ["PII", "secret"]}]},
        False,
        [("raw.customers.ssn_hash", "pii", "pattern *ssn*", None),
         ("raw.customers.ssn_hash", "secret", "pattern *ssn*", None)],
    ),
    (
        "name rules match the column name only, and lose to the file",
        {"tags": [{"pattern": "raw.*", "tags": ["pii"]}]},
        ["email"],
        [("crm.people.e_mail", "pii", "name rule email", None),
         ("raw.customers.email", "pii", "pattern raw.*", None),
         ("raw.customers.ssn_hash", "pii", "pattern raw.*", None)],
    ),
    (
        "an explicit column the lineage does not name is still declared",
        {"tags": [{"column": "x.y.z", "tags": "pii"}]},
        False,
        [("x.y.z", "pii", "column x.y.z", None)],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("why", "data", "rules", "expected"), CASES, ids=[c[0] for c in CASES])
def test_declared(why: str, data: dict[str, Any], rules: Any, expected: list[Any]) -> None:
    found = declared(REFS, parse_tags_file(data) + name_rule_declarations(rules))
    assert [(r.ref, r.tag, r.rule, r.value) for r in found] == expected


BAD: list[tuple[Any, str]] = [
    ([1, 2], "tags file: expected a mapping with a list under 'tags'"),
    ({"tag": []}, "tags file: unknown key(s) ['tag']"),
    ({"tags": [], "extra": 1}, "tags file: unknown key(s) ['extra']"),
    ({"tags": ["raw.x.y"]},
     "tags file entry 1: expected a mapping with column or pattern, and tags"),
    ({"tags": [{"column": "a.b", "pattern": "*", "tags": ["t"]}]},
     "tags file entry 1: give exactly one of column or pattern"),
    ({"tags": [{"column": "a.b"}]}, "tags file entry 1: tags must be a tag name or a list of them"),
    ({"tags": [{"column": "a.b", "tags": ["has space"]}]},
     "tags file entry 1: tag 'has space' is not a tag name (letters, digits, _ . : -)"),
    ({"tags": [{"column": "a.b", "tags": ["t"], "colour": 1}]},
     "tags file entry 1: unknown key(s) ['colour']"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), BAD)
def test_a_bad_tags_file_is_one_line(data: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_tags_file(data)
    assert str(caught.value) == message
