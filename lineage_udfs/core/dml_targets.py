"""The table a DML statement writes when its target names an alias, a CTE or a derived table.

``UPDATE d … FROM t d``, ``DELETE d FROM t d``, T-SQL updatable CTEs and derived tables: the
name after UPDATE / DELETE is not a table of the catalog, and the table it stands for is the
target (:func:`resolve_alias_target`); the aliasing node is not a source
(:func:`is_alias_reference`).
"""

from __future__ import annotations

from sqlglot import exp

from lineage_udfs.core.naming import NameContext, cte_reference


def relation_tables(statement: exp.Expr) -> list[exp.Table]:
    """Tables in the statement's own FROM/JOIN position (not inside subqueries)."""
    out: list[exp.Table] = []
    this = statement.this
    if isinstance(this, exp.Table):
        out.append(this)
        out.extend(j.this for j in this.args.get("joins") or [] if isinstance(j.this, exp.Table))
    for j in statement.args.get("joins") or []:
        if isinstance(j.this, exp.Table):
            out.append(j.this)
    return out


def is_alias_reference(table: exp.Table, statement: exp.Expr) -> bool:
    """``UPDATE alias …`` / ``DELETE alias FROM t alias``: the table node names an alias."""
    if table.args.get("db") or table.args.get("alias"):
        return False
    parent = table.parent
    if not (isinstance(parent, exp.Update | exp.Delete) and table is parent.this) and not (
        isinstance(parent, exp.Delete) and table in (parent.args.get("tables") or [])
    ):
        return False
    name = table.name.lower()
    return any(
        t is not table and t.alias and t.alias.lower() == name
        for t in statement.find_all(exp.Table)
    )


def resolve_alias_target(
    statement: exp.Expr, node: exp.Expr | None, ctx: NameContext
) -> exp.Expr | None:
    """The table a DML statement writes when its target names an alias, a CTE or a derived table.

    ``UPDATE d SET … FROM t d``: the table aliased ``d``. ``WITH d AS (SELECT … FROM t)
    DELETE FROM d`` and ``UPDATE d SET … FROM (SELECT … FROM t) d`` (T-SQL updatable CTEs
    and derived tables): rows are deleted or updated in the one base table the CTE or derived
    table selects from, ``t`` (through CTE chains). That table is the target; as for any DML
    target it is not also a source (option ``update_target_as_source``), although the CTE
    reads it: the CTE is a view of the target's own rows, not a second input. Other tables
    the CTE reads (subqueries, joins) stay sources.
    """
    if not isinstance(node, exp.Table) or node.args.get("db") or node.args.get("alias"):
        return node
    name = node.name.lower()
    for t in statement.find_all(exp.Table):
        if t is not node and t.alias and t.alias.lower() == name:
            return t
    cte = cte_reference(node)
    if cte is not None:
        return _single_base_table(cte.this, 0) or node
    for derived in statement.find_all(exp.Subquery):
        if derived.alias and derived.alias.lower() == name:
            return _single_base_table(derived.this, 0) or node
    return node


def _single_base_table(query: exp.Expr | None, depth: int) -> exp.Table | None:
    """The base table of a SELECT over one relation (no join, no set operation), through CTEs
    and derived tables: the table a DML statement writes through such a query."""
    while isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select) or query.args.get("joins") or depth > 10:
        return None
    from_ = query.args.get("from_")
    relation = from_.this if isinstance(from_, exp.From) else None
    if isinstance(relation, exp.Subquery):
        return _single_base_table(relation.this, depth + 1)
    if not isinstance(relation, exp.Table) or not isinstance(relation.this, exp.Identifier):
        return None
    cte = cte_reference(relation)
    return _single_base_table(cte.this, depth + 1) if cte is not None else relation
