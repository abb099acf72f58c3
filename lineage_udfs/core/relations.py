"""Relations visible in a SELECT, as the column tier sees them.

Owns :class:`Source` (a base table with its known columns, a derived relation with its
outputs, a table function, or a ``*`` that could not be expanded), the dependency records
(:data:`Dep`, :data:`Output`) and lookups over a scope's relations (:func:`qualified_source`,
:func:`star_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from lineage_udfs.core.enums import TransformationSubtype as Sub

Dep = tuple[str, str, Sub]
"""(source table, source column, subtype)."""


Output = tuple[str, frozenset[Dep]]
"""(output column name, the dependencies of its value)."""


@dataclass(slots=True)
class Source:
    """One relation visible in a SELECT: a base table, a derived relation or a UDTF."""

    table: str | None = None
    outputs: list[Output] | None = None
    udtf: frozenset[Dep] | None = None
    star: list[Source] = field(default_factory=list)
    """Sources whose unknown columns pass through an unexpanded ``*``."""
    known: tuple[str, ...] | None = None
    is_union: bool = False
    """The ``star`` sources are branches of a set operation: a column comes from all of them
    (else from the first that may have it, as for a join)."""

    lowered: dict[str, int] | None = field(default=None, repr=False, compare=False)
    """Lower-cased column name → position of its first column (built on first use; a source
    is not changed once built)."""

    def columns(self) -> tuple[str, ...] | None:
        if self.table is not None:
            return self.known
        if self.outputs is not None and not self.star:
            return tuple(n for n, _ in self.outputs)
        return None

    def _lowered(self) -> dict[str, int]:
        index = self.lowered
        if index is None:
            names = self.known if self.table is not None else [n for n, _ in self.outputs or ()]
            index = {}
            for i, n in enumerate(names or ()):
                index.setdefault(n.lower(), i)
            self.lowered = index
        return index

    def has(self, name: str) -> bool | None:
        """Whether the relation has column ``name`` (None: unknown)."""
        if self.table is not None:
            if self.known is None:
                return None
        elif self.outputs is None or self.star:
            return None
        return name.lower() in self._lowered()

    def lookup(self, name: str) -> frozenset[Dep] | None:
        if self.table is not None:
            if self.known is not None and name not in self.known:
                i = self._lowered().get(name.lower())
                if i is not None:
                    name = self.known[i]
            return frozenset({(self.table, name, Sub.IDENTITY)})
        if self.udtf is not None:
            return self.udtf
        if self.outputs:
            i = self._lowered().get(name.lower())
            if i is not None:
                return self.outputs[i][1]
        merged: set[Dep] = set()
        for src in self.star:
            found = src.lookup(name)
            if found is not None and src.has(name) is not False:
                if not self.is_union:
                    return found
                merged.update(found)
        return frozenset(merged) if merged else None


def innermost(node: exp.Expr) -> exp.Expr:
    """Strip parentheses: ``((t JOIN u ON …))`` is a Subquery of a Subquery of a Table."""
    while isinstance(node, exp.Subquery | exp.Paren) and isinstance(node.this, exp.Expr):
        node = node.this
    return node


def qualified_source(level: dict[str, Source], qualifier: list[str]) -> Source | None:
    # relation keys are lower case (an alias is matched case-insensitively, whatever the
    # dialect's rule for quoted identifiers: ``"Custom SQL Query".x`` finds its subquery)
    key = qualifier[-1].lower()
    src = level.get(key)
    if src is not None:
        return src
    dotted = ".".join(qualifier)
    for k, s in level.items():
        if s.table is not None and (s.table == dotted or s.table.endswith("." + dotted)):
            return s
        if "\x00" in k and k.split("\x00")[0] == key:
            return s
    return None


def star_tables(src: Source, depth: int = 0) -> list[str]:
    """Base tables whose unknown columns pass through ``src``'s unexpanded ``*``."""
    out: list[str] = []
    for inner in src.star:
        if inner.table is not None:
            if inner.known is None and inner.table not in out:
                out.append(inner.table)
        elif inner.udtf is None and depth < 20:
            out.extend(t for t in star_tables(inner, depth + 1) if t not in out)
    return out
