"""The best-effort tier: column lineage of one parsed statement.

A single pass over the statement's query tree: every SELECT resolves its projections against
its FROM/JOIN sources (base tables, CTEs, derived tables, UNNEST/LATERAL/explode), CTE outputs
are memoized, so the cost is linear in the size of the tree (no per-column ``sqlglot.lineage``).

Owns :func:`extract_column_edges` and :class:`ColumnLineage`: which query feeds which target
column (INSERT column lists and positions, Hive partition columns, ``BY NAME``), UPDATE SET and
MERGE branches, and the edges built from them. Queries are read by
:class:`~lineage_udfs.core.queries.Resolver`, expressions by
:class:`~lineage_udfs.core.expressions.ExpressionReader`, and subtypes compose by the rules of
:mod:`~lineage_udfs.core.subtypes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot import exp

from lineage_udfs.core.catalog import CatalogIndex
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.models import ColumnEdge, ResultColumn
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.queries import Resolver
from lineage_udfs.core.relations import Dep, Output, Source, star_tables
from lineage_udfs.core.subtypes import compose, transformation_type
from lineage_udfs.core.tiers import StatementTables


# ------------------------------------------------------------------------------------ statements
@dataclass(frozen=True, slots=True)
class ColumnLineage:
    """Column tier output for one statement."""

    edges: tuple[ColumnEdge, ...] = ()
    result_columns: tuple[ResultColumn, ...] = ()
    target_columns: tuple[str, ...] = ()
    """The target's columns in output order (lets later statements of a script expand ``*``)."""
    star_sources: tuple[str, ...] = ()
    """Tables whose columns reach the target through a ``*`` that could not be expanded (no
    schema): the target's column ``c`` is their column ``c``. A later statement of the script
    that reads ``c`` by name makes it known (:func:`lineage_udfs.core.script.collapse_script`)."""
    star_indirect: tuple[Dep, ...] = ()
    """The statement's INDIRECT dependencies (filters, joins), which also apply to the columns
    that pass through ``star_sources``."""


def extract_column_edges(
    statement: exp.Expr,
    tables: StatementTables,
    ctx: NameContext,
    catalog: CatalogIndex | None = None,
    *,
    conditions_as_direct: bool = False,
    masking_functions: Iterable[str] = (),
    merge_unchanged_columns_as_identity: bool = False,
) -> ColumnLineage:
    """Column lineage of one statement, given its table tier result.

    Args:
        statement: the parsed statement.
        tables: what :func:`extract_tables` found for it.
        ctx: the naming context.
        catalog: known table columns (``*`` expansion, unqualified columns in joins).
        conditions_as_direct: count CASE/IF conditions, window PARTITION/ORDER BY columns
            and selector arguments (aggregate ORDER BY, ``max_by`` keys, ``count_if``
            conditions) as DIRECT (the peers' convention) instead of INDIRECT.
        masking_functions: more function names (lower case) whose output masks their input
            (DIRECT/MASKED), besides the built-in ones.
        merge_unchanged_columns_as_identity: a MERGE's target columns that a ``WHEN MATCHED
            THEN UPDATE`` clause leaves unchanged are their own sources (the engine's view,
            see :class:`~lineage_udfs.core.options.ParserOptions`).

    Returns:
        Column edges into the target (DIRECT and INDIRECT), or result columns for a SELECT.

    Examples:
        >>> import sqlglot
        >>> from lineage_udfs.core.tables import extract_tables
        >>> stmt = sqlglot.parse_one("INSERT INTO t (a) SELECT upper(x) FROM s WHERE y > 0")
        >>> lin = extract_column_edges(stmt, extract_tables(stmt, NameContext()), NameContext())
        >>> sorted((e.source_column, e.target_column, e.transformation_subtype.value)
        ...        for e in lin.edges)
        [('x', 'a', 'TRANSFORMATION'), ('y', 'a', 'FILTER')]
    """
    resolver = Resolver(ctx, catalog or CatalogIndex(), conditions_as_direct, masking_functions)
    target = tables.targets[0] if tables.targets else None
    pairs: list[tuple[str, frozenset[Dep]]] = []
    star_sources: tuple[str, ...] = ()
    if isinstance(statement, exp.Update):
        pairs = _update_pairs(statement, resolver)
    elif isinstance(statement, exp.Merge):
        pairs = _merge_pairs(statement, resolver, target)
        if merge_unchanged_columns_as_identity and target is not None:
            pairs.extend(_merge_unchanged_pairs(statement, resolver, target))
    elif tables.query is not None:
        src = resolver.query(tables.query, [])
        outputs = src.outputs or []
        if target is None:
            return ColumnLineage(result_columns=_result_columns(outputs, resolver.indirect))
        known = (
            resolver.catalog.columns(target)
            if statement.find_ancestor(exp.Insert) is not None or isinstance(statement, exp.Insert)
            else None
        )
        if isinstance(statement, exp.Insert) and statement.args.get("by_name"):
            # INSERT … BY NAME (Databricks, DuckDB): each query column fills the target column
            # of its name, whatever the order
            spelled = {c.lower(): c for c in known or ()}
            outputs = [(spelled.get(n.lower(), n), deps) for n, deps in outputs]
            known = None
        elif not tables.target_columns:
            static, dynamic = _partition_spec(statement, resolver)
            if known and (static or dynamic):
                known = _insert_column_order(known, static, dynamic)
            elif dynamic and len(outputs) > len(dynamic) and not src.star:
                # no schema: the last columns of the query fill the dynamic partitions
                outputs = outputs[: -len(dynamic)] + [
                    (name, deps)
                    for name, (_, deps) in zip(dynamic, outputs[-len(dynamic) :], strict=True)
                ]
        pairs = _map_to_target(outputs, tables.target_columns, known)
        if not tables.target_columns and not known:
            star_sources = tuple(star_tables(src))
    else:
        return ColumnLineage()
    if target is None:
        return ColumnLineage()
    edges: dict[tuple[str, str, str, Sub], None] = {}
    target_cols = list(dict.fromkeys(name for name, _ in pairs))
    for name, deps in pairs:
        for t, c, s in deps:
            edges[(t, c, name, s)] = None
    for t, c, s in resolver.indirect:
        for name in target_cols:
            edges[(t, c, name, s)] = None
    return ColumnLineage(
        edges=tuple(
            ColumnEdge(t, c, target, name, transformation_type(s), s)
            for t, c, name, s in sorted(edges, key=lambda k: (k[2], k[0], k[1], k[3].value))
        ),
        target_columns=tuple(target_cols),
        star_sources=star_sources,
        star_indirect=tuple(sorted(resolver.indirect)) if star_sources else (),
    )


def _result_columns(outputs: list[Output], indirect: Iterable[Dep]) -> tuple[ResultColumn, ...]:
    rows: dict[tuple[str, str, str, Sub], None] = {}
    for name, deps in outputs:
        for t, c, s in deps:
            rows[(t, c, name, s)] = None
    names = list(dict.fromkeys(n for n, _ in outputs))
    for t, c, s in indirect:
        for name in names:
            rows[(t, c, name, s)] = None
    return tuple(
        ResultColumn(t, c, name, transformation_type(s), s)
        for t, c, name, s in sorted(rows, key=lambda k: (k[2], k[0], k[1], k[3].value))
    )


def _partition_spec(statement: exp.Expr, resolver: Resolver) -> tuple[set[str], list[str]]:
    """An INSERT's ``PARTITION (…)`` clause: its static and dynamic column names (lower case).

    ``PARTITION (dt='x', h)`` → ({'dt'}, ['h']); no clause → (set(), []).
    """
    table = statement.this if isinstance(statement, exp.Insert) else None
    if isinstance(table, exp.Schema):
        table = table.this
    partition = table.args.get("partition") if isinstance(table, exp.Table) else None
    static: set[str] = set()
    dynamic: list[str] = []
    for item in partition.expressions if isinstance(partition, exp.Partition) else []:
        if isinstance(item, exp.EQ) and isinstance(item.this, exp.Column):
            static.add(resolver.col_name(item.this.this).lower())
        elif isinstance(item, exp.Column):
            dynamic.append(resolver.col_name(item.this).lower())
    return static, dynamic


def _insert_column_order(
    known: tuple[str, ...], static: set[str], dynamic: list[str]
) -> tuple[str, ...]:
    """The target columns a positional INSERT … PARTITION (…) SELECT fills, in order.

    Hive / Spark: the query gives the columns outside the PARTITION clause in table order,
    then the dynamic partition columns (``PARTITION (dt)``) in the clause's order; a static
    one (``PARTITION (dt='x')``) gets its value from the clause.

    Examples:
        >>> _insert_column_order(("dt", "a", "b"), {"dt"}, [])
        ('a', 'b')
        >>> _insert_column_order(("a", "dt", "b"), set(), ["dt"])
        ('a', 'b', 'dt')
    """
    by_lower = {c.lower(): c for c in known}
    named = static | set(dynamic)
    return tuple(c for c in known if c.lower() not in named) + tuple(
        by_lower.get(d, d) for d in dynamic
    )


def _map_to_target(
    outputs: list[Output], explicit: list[str], known: tuple[str, ...] | None
) -> list[tuple[str, frozenset[Dep]]]:
    if explicit:
        return [(explicit[i], deps) for i, (_, deps) in enumerate(outputs[: len(explicit)])]
    if known and len(known) == len(outputs):
        return [(known[i], deps) for i, (_, deps) in enumerate(outputs)]
    return list(outputs)


def _dml_sources(
    statement: exp.Expr, resolver: Resolver, target_node: exp.Expr | None
) -> dict[str, Source]:
    sources: dict[str, Source] = {}
    relations: list[exp.Expr] = []
    if target_node is not None:
        relations.append(target_node)
    from_ = statement.args.get("from_")
    if isinstance(from_, exp.From):
        relations.append(from_.this)
        relations.extend(j.this for j in from_.this.args.get("joins") or [])
    relations.extend(j.this for j in statement.args.get("joins") or [])
    if isinstance(target_node, exp.Expr):
        relations.extend(j.this for j in target_node.args.get("joins") or [])
    using = statement.args.get("using")
    if isinstance(using, exp.Expr):
        relations.append(using)
    outer: list[dict[str, Source]] = []
    for rel in relations:
        found = resolver.relation(rel, outer, sources)
        if found is not None:
            key, src = found
            if key in sources and sources[key].table == src.table:
                continue
            sources[key] = src
    # T-SQL: UPDATE alias … FROM t alias — the target node names the alias
    return sources


def _update_pairs(statement: exp.Update, resolver: Resolver) -> list[tuple[str, frozenset[Dep]]]:
    target_node = statement.this
    sources = _dml_sources(statement, resolver, target_node)
    env = [sources]
    pairs = []
    for eq in statement.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            continue
        name = resolver.col_name(eq.this.this)
        deps = resolver.expr_deps(eq.expression, env, Sub.IDENTITY)
        if type(eq).__name__ != "EQ":
            deps = {(t, c, compose(Sub.TRANSFORMATION, s)) for t, c, s in deps}
        pairs.append((name, frozenset(deps)))
    where = statement.args.get("where")
    if where is not None:
        resolver.add_indirect(where, env, Sub.FILTER)
    for join in _dml_joins(statement):
        if join.args.get("on") is not None:
            resolver.add_indirect(join.args["on"], env, Sub.JOIN)
    return pairs


def _dml_joins(statement: exp.Expr) -> list[exp.Join]:
    joins = list(statement.args.get("joins") or [])
    from_ = statement.args.get("from_")
    if isinstance(from_, exp.From):
        joins.extend(from_.this.args.get("joins") or [])
    if isinstance(statement.this, exp.Expr):
        joins.extend(statement.this.args.get("joins") or [])
    return joins


def _merge_pairs(
    statement: exp.Merge, resolver: Resolver, target: str | None = None
) -> list[tuple[str, frozenset[Dep]]]:
    """Target columns of a MERGE and what feeds them, branch by branch.

    ``UPDATE SET *`` / ``INSERT *`` (Databricks) set every target column from the source
    column of the same name: the target's columns come from the catalog (else the source's).
    ``INSERT VALUES (…)`` without a column list fills the target's columns in order when the
    catalog knows them, else the columns named like the values (``s.id`` → ``id``). The
    values of ``WHEN NOT MATCHED THEN INSERT`` are read from the USING source only (there is
    no target row), so an unqualified ``"A"`` is the source's column (dbt snapshots).
    BigQuery ``INSERT ROW`` inserts every source column, like ``INSERT *``.
    """
    sources = _dml_sources(statement, resolver, statement.this)
    env = [sources]
    on = statement.args.get("on")
    if on is not None:
        resolver.add_indirect(on, env, Sub.JOIN)
    known = resolver.catalog.columns(target) if target else None
    using = _merge_source(statement, sources)
    # WHEN NOT MATCHED … INSERT has no target row: its values read the source only, so an
    # unqualified name there is the source's column even when both sides might have it
    insert_env = [{k: s for k, s in sources.items() if s is using}] if using is not None else env
    pairs: list[tuple[str, frozenset[Dep]]] = []
    whens = statement.args.get("whens")
    for when in whens.expressions if whens is not None else []:
        cond = when.args.get("condition")
        if cond is not None:
            resolver.add_indirect(cond, env, Sub.FILTER)
        then = when.args.get("then")
        where = then.args.get("where") if isinstance(then, exp.Update | exp.Insert) else None
        if isinstance(where, exp.Where):  # Oracle UPDATE SET … WHERE c / INSERT … WHERE c
            resolver.add_indirect(where.this, env, Sub.FILTER)
        if isinstance(then, exp.Update):
            if any(isinstance(e, exp.Star) for e in then.expressions):
                pairs.extend(_star_pairs(using, known))
            for eq in then.expressions:
                if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column):
                    name = resolver.col_name(eq.this.this)
                    pairs.append(
                        (name, frozenset(resolver.expr_deps(eq.expression, env, Sub.IDENTITY)))
                    )
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star) or (
                isinstance(then.this, exp.Var) and then.this.name.upper() == "ROW"
            ):  # INSERT * (Databricks) / INSERT ROW (BigQuery): every source column
                pairs.extend(_star_pairs(using, known))
                continue
            cols = then.this.expressions if isinstance(then.this, exp.Tuple) else []
            vals = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
            if (
                len(cols) == 1
                and isinstance(cols[0], exp.Anonymous)
                and (cols[0].name.upper() == "VALUES")
                and not vals
            ):
                # INSERT VALUES (…) without a column list (sqlglot reads the values as a call)
                vals = cols[0].expressions
                names = (
                    list(known)
                    if known and len(known) == len(vals)
                    else [resolver.output_name(v, i) for i, v in enumerate(vals)]
                )
                for name, val in zip(names, vals, strict=True):
                    if not name.startswith("_col_"):
                        pairs.append(
                            (name, frozenset(resolver.expr_deps(val, insert_env, Sub.IDENTITY)))
                        )
                continue
            for col, val in zip(cols, vals, strict=False):
                name = resolver.col_name(col.this if isinstance(col, exp.Column) else col)
                deps = resolver.expr_deps(val, insert_env, Sub.IDENTITY)
                pairs.append((name, frozenset(deps)))
    return pairs


def _merge_unchanged_pairs(
    statement: exp.Merge, resolver: Resolver, target: str
) -> list[tuple[str, frozenset[Dep]]]:
    """``t.c → t.c`` IDENTITY for each target column a ``WHEN MATCHED THEN UPDATE`` clause
    leaves unchanged: the columns the ON condition names on the target side and the
    ``INSERT (…)`` list names, or every column of the target's schema when the catalog has it.
    ``UPDATE SET *`` sets every column; a MERGE without an UPDATE clause gives nothing."""
    whens = statement.args.get("whens")
    updates = [
        w.args["then"]
        for w in (whens.expressions if whens is not None else [])
        if w.args.get("matched") and isinstance(w.args.get("then"), exp.Update)
    ]
    assigned: list[set[str]] = []
    for upd in updates:
        if any(isinstance(e, exp.Star) for e in upd.expressions):
            continue
        assigned.append(
            {
                resolver.col_name(eq.this.this).lower()
                for eq in upd.expressions
                if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column)
            }
        )
    if not assigned:
        return []
    known = resolver.catalog.columns(target)
    if known:
        candidates = list(known)
    else:
        node = statement.this
        names = (
            {node.alias_or_name.lower(), node.name.lower()}
            if isinstance(node, exp.Table)
            else set()
        )
        candidates = []
        on = statement.args.get("on")
        for col in on.find_all(exp.Column) if isinstance(on, exp.Expr) else []:
            if col.table and col.table.lower() in names:
                candidates.append(resolver.col_name(col.this))
        for w in whens.expressions if whens is not None else []:
            then = w.args.get("then")
            if isinstance(then, exp.Insert) and isinstance(then.this, exp.Tuple):
                candidates.extend(
                    resolver.col_name(c.this if isinstance(c, exp.Column) else c)
                    for c in then.this.expressions
                    if isinstance(c, exp.Column | exp.Identifier)
                )
    pairs: list[tuple[str, frozenset[Dep]]] = []
    for name in dict.fromkeys(candidates):
        if any(name.lower() not in cols for cols in assigned):
            pairs.append((name, frozenset({(target, name, Sub.IDENTITY)})))
    return pairs


def _merge_source(statement: exp.Merge, sources: dict[str, Source]) -> Source | None:
    """The relation a MERGE reads (its USING clause), as resolved in ``sources``."""
    using = statement.args.get("using")
    if not isinstance(using, exp.Expr):
        return None
    key = (
        using.alias.lower()
        if using.alias
        else (using.name.lower() if isinstance(using, exp.Table) else "")
    )
    return sources.get(key)


def _star_pairs(
    using: Source | None, known: tuple[str, ...] | None
) -> list[tuple[str, frozenset[Dep]]]:
    """``SET *`` / ``INSERT *``: each target column from the source column of its name."""
    if using is None:
        return []
    names = known if known is not None else using.columns()
    pairs = []
    for name in names or ():
        if using.has(name) is False:
            continue
        deps = using.lookup(name)
        if deps:
            pairs.append((name, deps))
    return pairs
