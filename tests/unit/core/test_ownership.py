"""Explicit owners: the owners file's rules and the glob match (pure Python, and the regular
expression the Spark stage hands to ``rlike``)."""

from __future__ import annotations

import re

import pytest

from lineage_udfs.core.errors import ConfigError
from lineage_udfs.core.ownership import explicit_owner, glob_regex, owner_rules

RULES = owner_rules(
    {
        "owners": [
            {"pattern": "raw.stripe_*", "team": "payments", "contact": "pay@example.com"},
            {"pattern": "RAW.Exchange_Rates", "team": "treasury"},
            {"pattern": "stg_[!x]?", "team": "short"},
            {"pattern": "reports.*", "team": "finance"},
            {"pattern": "*", "team": "platform"},
        ]
    }
)

CASES = [
    ("raw.stripe_payments", "payments"),
    ("raw.stripe_", "payments"),
    ("raw.exchange_rates", "treasury"),  # patterns are lower-cased like the names
    ("raw.exchange_ratesx", "platform"),
    ("rawxstripe_payments", "platform"),  # the dot is literal
    ("stg_ab", "short"),
    ("stg_xb", "platform"),  # [!x] excludes x
    ("stg_abc", "platform"),  # ? is exactly one character
    ("reports.rpt_monthly_revenue", "finance"),
    ("marts.fct_payments", "platform"),
]


@pytest.mark.parametrize(("table", "team"), CASES)
def test_first_matching_rule_wins(table: str, team: str) -> None:
    rule = explicit_owner(table, RULES)
    assert rule is not None and rule.team == team


@pytest.mark.parametrize(("table", "team"), CASES)
def test_the_regex_the_spark_stage_uses_matches_alike(table: str, team: str) -> None:
    first = next(r for r in RULES if re.search(glob_regex(r.pattern), table.lower()))
    assert first.team == team


def test_no_rule_no_owner() -> None:
    assert explicit_owner("raw.x", owner_rules({"owners": []})) is None
    assert owner_rules(None) == ()


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([1, 2], "expected a mapping with a list under 'owners'"),
        ({"owners": "raw.*"}, "expected a mapping with a list under 'owners'"),
        ({"owners": ["raw.*"]}, "entry 1 is not a mapping"),
        ({"owners": [{"pattern": "a", "team": ""}]}, "entry 1 needs a pattern and a team"),
        ({"owners": [{"pattern": "a", "team": "t", "email": "x"}]}, "unknown keys"),
    ],
)
def test_a_malformed_file_is_one_clear_error(document: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        owner_rules(document, "owners.yaml")
