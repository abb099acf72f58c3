"""Transformation subtypes: how a column's value reaches an output, and how uses compose.

Owns the OpenLineage subtype algebra (:func:`compose`, :func:`transformation_type`: DIRECT
subtypes IDENTITY < TRANSFORMATION < AGGREGATION < MASKED compose by taking the strongest along
the path; INDIRECT subtypes (FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL) win over any
DIRECT one), which functions mask their input, which arguments select rather than feed a value
(:func:`selector_args`), and what an expression class alone says about its children
(:func:`plain_kind`), which :meth:`~lineage_udfs.core.expressions.ExpressionReader.expr_deps`
reads before it looks at a node.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lineage_udfs.core.compat import expression_classes
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.enums import TransformationType

INDIRECT_SUBTYPES = frozenset(
    {Sub.FILTER, Sub.JOIN, Sub.GROUP_BY, Sub.SORT, Sub.WINDOW, Sub.CONDITIONAL}
)


_RANK = {Sub.IDENTITY: 0, Sub.TRANSFORMATION: 1, Sub.AGGREGATION: 2, Sub.MASKED: 3}


MASKING_FUNCTIONS = frozenset(
    {
        "md5",
        "sha",
        "sha1",
        "sha2",
        "sha256",
        "sha512",
        "sha224",
        "sha384",
        "hash",
        "mask",
        "mask_hash",
        "mask_first_n",
        "mask_last_n",
        "mask_show_first_n",
        "mask_show_last_n",
        "md5_hex",
        "md5_binary",
        "sha1_hex",
        "sha2_hex",
        "sha1_binary",
        "sha2_binary",
        "hash_agg",
        "farm_fingerprint",
        "fingerprint",
        "crc32",
        "hashbytes",
        "standard_hash",
        "ora_hash",
        "xxhash64",
        "murmur3",
        "md5_number_lower64",
        "md5_number_upper64",
        "sha256_hex",
        "to_hex_sha256",
        "encrypt",
        "aes_encrypt",
        "redact",
        "anonymize",
    }
)
"""Function names whose output masks their input (DIRECT/MASKED)."""


_MASK_TYPES = expression_classes(
    "MD5",
    "MD5Digest",
    "SHA",
    "SHA2",
    "SHA1Digest",
    "SHA2Digest",
    "FarmFingerprint",
    "StandardHash",
)


def compose(outer: Sub, inner: Sub) -> Sub:
    """Subtype of an inner dependency seen through an outer use.

    Examples:
        >>> compose(Sub.AGGREGATION, Sub.IDENTITY).value, compose(Sub.FILTER, Sub.MASKED).value
        ('AGGREGATION', 'FILTER')
        >>> compose(Sub.IDENTITY, Sub.CONDITIONAL)
        <TransformationSubtype.CONDITIONAL: 'CONDITIONAL'>
    """
    if outer in INDIRECT_SUBTYPES:
        return outer
    if inner in INDIRECT_SUBTYPES:
        return inner
    return outer if _RANK[outer] >= _RANK[inner] else inner


def transformation_type(subtype: Sub) -> TransformationType:
    """DIRECT or INDIRECT for a subtype."""
    return (
        TransformationType.INDIRECT if subtype in INDIRECT_SUBTYPES else (TransformationType.DIRECT)
    )


def step(ctx: Sub, sub: Sub) -> Sub:
    return compose(ctx, sub)


def as_direct(ctx: Sub, _: Sub) -> Sub:
    return compose(ctx, Sub.TRANSFORMATION)


SubFn = Callable[[Sub, Sub], Sub]


def carries_value(node: exp.Expr | None) -> bool:
    """True when an expression reads a column or a subquery (not only constants)."""
    return node is not None and node.find(exp.Column, exp.Query) is not None


def cond_ctx(ctx: Sub, _: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.CONDITIONAL


def window_ctx(ctx: Sub, _: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.WINDOW


def sort_ctx(ctx: Sub, _: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.SORT


_ORDERED_SET_AGGREGATES = frozenset(
    {
        "percentile_cont",
        "percentile_disc",
        "mode",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "median",
    }
)
"""Aggregates whose ``WITHIN GROUP (ORDER BY x)`` names the aggregated value x."""


_ARG_BY_FUNCTIONS = frozenset({"max_by", "min_by", "arg_max", "arg_min", "argmax", "argmin"})
"""``f(value, key)``: the value of the row with the largest/smallest key (key is a selector)."""


def _func_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return node.name.lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else ""


def is_ordered_set(node: exp.Expr) -> bool:
    return isinstance(node, exp.Func) and _func_name(node) in _ORDERED_SET_AGGREGATES


def selector_args(
    node: exp.Expr,
) -> tuple[list[exp.Expr], list[exp.Expr], Sub] | None:
    """Split a call into value arguments and selector arguments (None: not such a call).

    ``max_by(v, k)`` / ``argMax(v, k)`` → ([v], [k], SORT); ``count_if(c)`` → ([], [c],
    CONDITIONAL); ``sum_if(v, c)`` / ClickHouse ``sumIf(v, c)`` (the ``-If`` combinator: the
    last argument is the condition) → ([v], [c], CONDITIONAL); ``NVL2(t, a, b)`` → ([a, b], [t],
    CONDITIONAL).
    """
    if isinstance(node, exp.ArgMax | exp.ArgMin):
        return [node.this], [node.expression] if node.expression is not None else [], Sub.SORT
    if isinstance(node, exp.CountIf):
        return [], [node.this], Sub.CONDITIONAL
    if isinstance(node, exp.Nvl2):
        values = [v for v in (node.args.get("true"), node.args.get("false")) if v is not None]
        return values, [node.this], Sub.CONDITIONAL
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        name = _func_name(node)
        args = list(node.expressions)
        if name in _ARG_BY_FUNCTIONS and len(args) >= 2:
            return [args[0]], args[1:2], Sub.SORT
        combinator = isinstance(node, exp.CombinedAggFunc) and name.endswith("if")
        if (combinator or name.endswith("_if")) and len(args) >= 1:
            return args[:-1], args[-1:], Sub.CONDITIONAL
    return None


def filter_ctx(ctx: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.FILTER


SAME = "same"


LEAF = "leaf"


UNKNOWN = "unknown"


PlainKind = Sub | str | None


PLAIN_KINDS: dict[type, PlainKind] = {}
"""Per expression class, what ``expr_deps`` does with a node of it when the class alone
decides: None for the classes it handles case by case (columns, queries, CASE, windows,
selector and anonymous functions …), ``LEAF`` to skip (literals), ``SAME`` to pass the
subtype on (aliases, parentheses), else the subtype its children get."""


def plain_kind(cls: type) -> PlainKind:
    """``PLAIN_KINDS[cls]``, computed on first sight of the class: the same tests, in the same
    order, as ``expr_deps`` makes on a node."""
    kind: PlainKind
    if issubclass(cls, _CASE_BY_CASE) or cls.__name__ == "DecodeCase":
        kind = None
    elif issubclass(cls, exp.Alias | exp.Paren | exp.Distinct | exp.Ordered):
        kind = SAME
    elif issubclass(cls, exp.AggFunc):
        kind = Sub.AGGREGATION
    elif _MASK_TYPES and issubclass(cls, _MASK_TYPES):
        kind = Sub.MASKED
    elif issubclass(cls, exp.Func) and _sql_name(cls) is None:
        kind = None  # (a function's SQL name is its class's; if not, the node decides)
    elif issubclass(cls, exp.Func) and _sql_name(cls) in MASKING_FUNCTIONS:
        kind = Sub.MASKED
    elif issubclass(cls, exp.Literal | exp.Null | exp.Boolean | exp.Placeholder):
        kind = LEAF
    else:
        kind = Sub.TRANSFORMATION
    PLAIN_KINDS[cls] = kind
    return kind


def _sql_name(cls: type) -> str | None:
    try:
        return str(cls.sql_name()).lower()  # type: ignore[attr-defined]
    except Exception:
        return None


_CASE_BY_CASE = (
    exp.Column,
    exp.Query,
    exp.Case,
    exp.If,
    exp.Window,
    exp.Order,
    exp.WithinGroup,
    exp.Filter,
    exp.ArgMax,
    exp.ArgMin,
    exp.CountIf,
    exp.Nvl2,
    exp.Anonymous,
    exp.AnonymousAggFunc,
)
"""Classes ``expr_deps`` handles by the node, not by its class (see ``selector_args``)."""


def is_masking(node: exp.Expr, extra: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` is a masking function: a built-in one, or one named in ``extra``
    (lower-case names, ``ParserOptions.masking_functions``)."""
    if _MASK_TYPES and isinstance(node, _MASK_TYPES):
        return True
    if isinstance(node, exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        return name in MASKING_FUNCTIONS or name in extra
    return False
