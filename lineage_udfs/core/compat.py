"""What the installed sqlglot has: expression classes looked up by name.

Some node classes exist only in some sqlglot releases (procedural blocks, hash functions,
session statements): the core names them as strings and uses those that exist.
"""

from __future__ import annotations

from sqlglot import exp


def expression_classes(*names: str) -> tuple[type[exp.Expr], ...]:
    """The classes of ``sqlglot.exp`` with these names, in order; absent ones left out.

    Examples:
        >>> [c.__name__ for c in expression_classes("Set", "NoSuchNode", "Use")]
        ['Set', 'Use']
    """
    found = (getattr(exp, name, None) for name in names)
    return tuple(cls for cls in found if isinstance(cls, type))
