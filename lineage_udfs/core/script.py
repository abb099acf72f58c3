"""Scripts: per-statement lineage collapsed into one end-to-end view.

Temporary objects (temp tables and views, ``#tables``, cached tables) and tables that the
script both creates and drops are *intermediates*: they are listed in
``ParseResult.intermediates`` and traced through, so ``a → #t → b`` becomes ``a → b`` at table
and column level.

A persistent table that the script writes and a later statement reads stays a node of the
lineage: it is a target (of the statement writing it) and a source (of the statement reading
it), with table and column edges on both sides (``a → stage → b``), whether the script created
it or appended to it. Sources, targets, table edges and column edges always describe the same
graph. With ``collapse_persistent=True`` (option ``collapse_persistent_intermediates``,
sqllineage's convention) such a table is an intermediate instead, and ``a → b`` is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lineage_udfs.core.enums import StatementType
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.models import ColumnEdge, TableEdge
from lineage_udfs.core.subtypes import compose, transformation_type

_CREATING = frozenset(
    {StatementType.CTAS, StatementType.CREATE_VIEW, StatementType.SELECT_INTO, StatementType.DDL}
)


@dataclass(slots=True)
class ScriptStep:
    """What the collapse needs to know about one statement."""

    statement_type: StatementType
    sources: list[str]
    targets: list[str]
    column_edges: list[ColumnEdge]
    temporary: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    renamed_from: list[str] = field(default_factory=list)
    """Tables this statement renamed away (ALTER … RENAME / RENAME TABLE)."""
    star_sources: list[str] = field(default_factory=list)
    """Tables whose columns pass by name into the (first) target through an unexpanded ``*``."""
    star_indirect: list[tuple[str, str, Sub]] = field(default_factory=list)
    """INDIRECT dependencies of every column that passes through ``star_sources``."""


@dataclass(frozen=True, slots=True)
class CollapsedScript:
    """The end-to-end view of a script."""

    sources: tuple[str, ...]
    targets: tuple[str, ...]
    intermediates: tuple[str, ...]
    table_edges: tuple[TableEdge, ...]
    column_edges: tuple[ColumnEdge, ...]


def find_intermediates(steps: list[ScriptStep], *, collapse_persistent: bool = False) -> set[str]:
    """Tables that only carry data between statements of the script.

    Examples:
        >>> s = [ScriptStep(StatementType.CTAS, ["a"], ["t"], [], temporary=["t"]),
        ...      ScriptStep(StatementType.INSERT, ["t"], ["b"], [])]
        >>> find_intermediates(s)
        {'t'}
    """
    created: set[str] = set()
    written: set[str] = set()
    out: set[str] = set()
    for i, step in enumerate(steps):
        out.update(step.temporary)
        if step.statement_type in _CREATING:
            created.update(step.targets)
        for name in step.dropped:
            if name in created:
                out.add(name)
        for name in step.renamed_from:
            if name in written:
                out.add(name)  # written, then moved under another name: a staging table
        if collapse_persistent:
            for name in step.sources:
                if name in written and name not in steps[i].targets:
                    out.add(name)
        if step.statement_type != StatementType.DROP:
            written.update(step.targets)
    return out


def collapse_script(
    steps: list[ScriptStep], *, collapse_persistent: bool = False
) -> CollapsedScript:
    """Collapse per-statement lineage through the script's intermediates.

    Args:
        steps: the statements in execution order.
        collapse_persistent: also collapse persistent tables written then read (sqllineage).

    Returns:
        The end-to-end sources, targets, edges and the intermediates traced through.

    Examples:
        >>> s = [ScriptStep(StatementType.CTAS, ["a"], ["#t"], [], temporary=["#t"]),
        ...      ScriptStep(StatementType.INSERT, ["#t"], ["b"], []),
        ...      ScriptStep(StatementType.DROP, [], ["#t"], [], dropped=["#t"])]
        >>> c = collapse_script(s)
        >>> c.sources, c.targets, c.intermediates, c.table_edges
        (('a',), ('b',), ('#t',), (TableEdge(source_table='a', target_table='b'),))
        >>> p = [ScriptStep(StatementType.CTAS, ["a"], ["stage"], []),
        ...      ScriptStep(StatementType.INSERT, ["stage"], ["b"], [])]
        >>> c = collapse_script(p)
        >>> c.sources, c.targets, [(e.source_table, e.target_table) for e in c.table_edges]
        (('a', 'stage'), ('stage', 'b'), [('a', 'stage'), ('stage', 'b')])
        >>> c = collapse_script(p, collapse_persistent=True)
        >>> c.sources, c.targets, c.intermediates
        (('a',), ('b',), ('stage',))
    """
    inter = find_intermediates(steps, collapse_persistent=collapse_persistent)
    # table level: upstream[x] = non-intermediate sources that flowed into intermediate x
    upstream: dict[str, set[str]] = {}
    sources: dict[str, None] = {}
    targets: dict[str, None] = {}
    edges: dict[tuple[str, str], None] = {}
    col_up: dict[tuple[str, str], set[tuple[str, str, Sub]]] = {}
    # intermediate -> tables its `*` passes columns from, and the filters/joins applied
    star_up: dict[str, tuple[set[str], set[tuple[str, str, Sub]]]] = {}
    col_edges: dict[tuple[str, str, str, str, Sub], None] = {}
    for step in steps:
        resolved: set[str] = set()
        for src in step.sources:
            if src in inter:
                resolved.update(upstream.get(src, ()))
            else:
                resolved.add(src)
                sources[src] = None
        for tgt in step.targets:
            if tgt in inter:
                if step.statement_type in (StatementType.DROP,):
                    continue
                upstream.setdefault(tgt, set()).update(resolved)
                continue
            targets[tgt] = None
            for src in resolved:
                edges[(src, tgt)] = None
        # column level
        if step.star_sources and step.targets and step.targets[0] in inter:
            tables, indirect = star_up.setdefault(step.targets[0], (set(), set()))
            tables.update(step.star_sources)
            indirect.update(step.star_indirect)
        new_up: dict[tuple[str, str], set[tuple[str, str, Sub]]] = {}
        for e in step.column_edges:
            deps = _column_deps(e, inter, col_up, star_up)
            if e.target_table in inter:
                new_up.setdefault((e.target_table, e.target_column), set()).update(deps)
            else:
                for t, c, s in deps:
                    col_edges[(t, c, e.target_table, e.target_column, s)] = None
        for key, deps in new_up.items():
            col_up.setdefault(key, set()).update(deps)
    final_targets = tuple(t for t in targets if t not in inter)
    final_sources = tuple(s for s in sources if s not in inter)
    return CollapsedScript(
        sources=final_sources,
        targets=final_targets,
        intermediates=tuple(sorted(inter)),
        # sorted: an edge's place must not follow the iteration order of a set of names,
        # which changes with the process's hash seed (the same script, another order)
        table_edges=tuple(TableEdge(s, t) for s, t in sorted(edges)),
        column_edges=tuple(
            ColumnEdge(t, c, tt, tc, transformation_type(s), s)
            for t, c, tt, tc, s in sorted(
                col_edges, key=lambda k: (k[2], k[3], k[0], k[1], k[4].value)
            )
        ),
    )


def _column_deps(
    edge: ColumnEdge,
    inter: set[str],
    col_up: dict[tuple[str, str], set[tuple[str, str, Sub]]],
    star_up: dict[str, tuple[set[str], set[tuple[str, str, Sub]]]],
) -> set[tuple[str, str, Sub]]:
    sub = edge.transformation_subtype
    if edge.source_table not in inter:
        return {(edge.source_table, edge.source_column, sub)}
    out = set()
    for t, c, s in _upstream(edge.source_table, edge.source_column, inter, col_up, star_up):
        out.add((t, c, compose(sub, s)))
    return out


def _upstream(
    table: str,
    column: str,
    inter: set[str],
    col_up: dict[tuple[str, str], set[tuple[str, str, Sub]]],
    star_up: dict[str, tuple[set[str], set[tuple[str, str, Sub]]]],
    depth: int = 0,
) -> set[tuple[str, str, Sub]]:
    """Where column ``column`` of intermediate ``table`` came from: its recorded edges, else
    the same-named column of the tables its unexpanded ``*`` read (with that statement's
    filters and joins)."""
    found = col_up.get((table, column))
    if found or depth > 20 or table not in star_up:
        return set(found or ())
    tables, indirect = star_up[table]
    out = {d for d in indirect if d[0] not in inter}
    for src in sorted(tables):
        if src in inter:
            out.update(_upstream(src, column, inter, col_up, star_up, depth + 1))
        else:
            out.add((src, column, Sub.IDENTITY))
    return out
