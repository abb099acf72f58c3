"""``expr_deps`` decides most nodes by their class alone (cached per class): each class gets
the decision the node-by-node tests give, and classes decided node by node stay so."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import expressions as exp

from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.subtypes import LEAF, SAME, plain_kind

CLASSES = [  # (class, decision)
    (exp.Upper, Sub.TRANSFORMATION),
    (exp.Add, Sub.TRANSFORMATION),
    (exp.Cast, Sub.TRANSFORMATION),
    (exp.Coalesce, Sub.TRANSFORMATION),
    (exp.Sum, Sub.AGGREGATION),
    (exp.Count, Sub.AGGREGATION),
    (exp.MD5, Sub.MASKED),
    (exp.SHA2, Sub.MASKED),
    (exp.Alias, SAME),
    (exp.Paren, SAME),
    (exp.Distinct, SAME),
    (exp.Literal, LEAF),
    (exp.Null, LEAF),
    (exp.Boolean, LEAF),
    # decided node by node: columns, queries, conditionals, windows, selectors, anonymous calls
    (exp.Column, None),
    (exp.Select, None),
    (exp.Union, None),
    (exp.Case, None),
    (exp.If, None),
    (exp.Window, None),
    (exp.Order, None),
    (exp.WithinGroup, None),
    (exp.Filter, None),
    (exp.ArgMax, None),
    (exp.CountIf, None),
    (exp.Nvl2, None),
    (exp.Anonymous, None),
    (exp.AnonymousAggFunc, None),
    (exp.CombinedAggFunc, None),
]


@pytest.mark.parametrize(("cls", "decision"), CLASSES, ids=[c.__name__ for c, _ in CLASSES])
def test_class_decision(cls: type, decision: object) -> None:
    assert plain_kind(cls) == decision


def test_decode_case_is_decided_node_by_node() -> None:
    node = sqlglot.parse_one("SELECT DECODE(x, 1, a, b) FROM t", read="oracle").find(exp.Func)
    assert node is not None
    assert plain_kind(type(node)) is None


def test_a_function_class_without_a_class_level_name_is_decided_node_by_node() -> None:
    class NamedPerNode(exp.Func):
        @classmethod
        def sql_name(cls) -> str:
            raise TypeError("named per node")

    assert plain_kind(NamedPerNode) is None
