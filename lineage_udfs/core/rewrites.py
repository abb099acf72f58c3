"""DML rewrites: one parsed statement that writes several tables becomes several statements.

Owns :func:`flatten` (the statements inside procedure bodies and control-flow blocks),
Postgres data-modifying CTEs (:func:`split_writable_ctes`), the rows a DML statement returns
(:func:`returned_rows`, for ``RETURNING`` / ``OUTPUT``) and multi-table inserts (Hive ``FROM …
INSERT … INSERT …``, Snowflake ``INSERT ALL|FIRST``).
"""

from __future__ import annotations

from sqlglot import exp

from lineage_udfs.core.compat import expression_classes
from lineage_udfs.core.embedded import string_body

_BLOCK_TYPES = expression_classes(
    "Block",
    "IfBlock",
    "WhileBlock",
    "LoopBlock",
    "RepeatBlock",
    "Try",
    "StoredProcedure",
)


_STATEMENT_TYPES: tuple[type[exp.Expr], ...] = (
    exp.Query,
    exp.DML,
    exp.Create,
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Copy,
    exp.Command,
    exp.Use,
    exp.Set,
    exp.Cache,
    exp.Merge,
    *_BLOCK_TYPES,
)


def flatten(expression: exp.Expr) -> list[exp.Expr]:
    """Statements inside procedure bodies and control-flow blocks, in order."""
    if isinstance(expression, exp.Create) and (expression.args.get("kind") or "").upper() in (
        "PROCEDURE",
        "FUNCTION",
        "PROC",
        "TRIGGER",
    ):
        body = expression.expression
        if string_body(expression) is not None:
            return [expression]  # expanded by the splitter (statements.py)
        if (
            isinstance(body, exp.Expr)
            and isinstance(body, _STATEMENT_TYPES)
            and not (
                isinstance(body, exp.Query)
                and (expression.args.get("kind") or "").upper() == "FUNCTION"
            )
        ):
            return flatten(body)
        return [expression]
    if _BLOCK_TYPES and isinstance(expression, _BLOCK_TYPES):
        out: list[exp.Expr] = []
        for child in expression.iter_expressions():
            if isinstance(child, _STATEMENT_TYPES):
                out.extend(flatten(child))
        return out
    if type(expression).__name__ == "EndStatement":
        return []
    if type(expression).__name__ == "MultitableInserts":
        return _split_multitable_insert(expression)
    with_ = expression.args.get("with_")
    if isinstance(with_, exp.With) and any(
        isinstance(cte.this, DML_TYPES) for cte in with_.expressions
    ):
        return split_writable_ctes(expression)
    return [expression]


DML_TYPES = (exp.Delete, exp.Update, exp.Insert)


_OLD_ROW = frozenset({"deleted", "old"})


_NEW_ROW = frozenset({"inserted", "new"})


def split_writable_ctes(statement: exp.Expr) -> list[exp.Expr]:
    """Postgres data-modifying CTEs: ``WITH d AS (DELETE FROM q … RETURNING …) INSERT … FROM d``.

    Each CTE's DML becomes a statement of its own (it writes its table), and the CTE is
    replaced by the query of the rows it returns (:func:`returned_rows`), which the main
    statement reads. A CTE whose rows cannot be rebuilt returns none.

    Examples:
        >>> import sqlglot
        >>> sql = "WITH d AS (DELETE FROM q WHERE c < 1 RETURNING id) INSERT INTO a TABLE d"
        >>> for e in flatten(sqlglot.parse_one(sql, read="postgres")):
        ...     print(e.sql())
        WITH d AS (SELECT id FROM q WHERE c < 1) INSERT INTO a SELECT * FROM d
        DELETE FROM q WHERE c < 1
    """
    main = statement.copy()
    writes: list[exp.Expr] = []
    for cte in main.args["with_"].expressions:
        dml = cte.this
        if not isinstance(dml, DML_TYPES):
            continue
        returning = dml.args.get("returning")
        projections = returning.expressions if isinstance(returning, exp.Returning) else []
        rows = returned_rows(dml, projections) if projections else None
        written = dml.copy()
        written.set("returning", None)
        writes.append(written)
        cte.set("this", rows if rows is not None else exp.select(exp.Null()).where(exp.false()))
    return [main, *writes]


def returned_rows(dml: exp.Expr, projections: list[exp.Expr]) -> exp.Select | None:
    """A SELECT of the rows a DML statement sends on (``RETURNING`` / ``OUTPUT``).

    DELETE returns the deleted rows of its table (``deleted.x``, ``old.x`` or ``x``); UPDATE
    returns the new values (a SET expression) unless the column is qualified ``deleted`` or
    ``old``; INSERT returns the inserted rows, named by the target column list.
    """
    select = exp.Select(expressions=[p.copy() for p in projections])
    target = dml.this
    if isinstance(dml, exp.Insert):
        query = dml.expression
        table = target.this if isinstance(target, exp.Schema) else target
        if not isinstance(query, exp.Query) or not isinstance(table, exp.Table):
            return None
        columns = [c.copy() for c in target.expressions] if isinstance(target, exp.Schema) else []
        derived = exp.Subquery(
            this=query.copy(),
            alias=exp.TableAlias(this=exp.to_identifier(table.alias_or_name), columns=columns),
        )
        for col in select.find_all(exp.Column):
            if col.table.lower() in _NEW_ROW:
                col.set("table", exp.to_identifier(table.alias_or_name))
        return select.from_(derived)
    if not isinstance(target, exp.Table):
        return None
    ref = target.alias_or_name
    select.set("from_", exp.From(this=target.copy()))
    joins = [j.copy() for j in dml.args.get("joins") or []]
    for key in ("from_", "using"):
        extra = dml.args.get(key)
        relation = extra.this if isinstance(extra, exp.From) else extra
        if isinstance(relation, exp.Expr):
            joins.append(exp.Join(this=relation.copy()))
            joins.extend(j.copy() for j in relation.args.get("joins") or [])
    if joins:
        select.set("joins", joins)
    where = dml.args.get("where")
    if isinstance(where, exp.Where):
        select.set("where", where.copy())
    assigned: dict[str, exp.Expr] = {}
    if isinstance(dml, exp.Update):
        for eq in dml.expressions:
            if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column):
                assigned[eq.this.name.lower()] = eq.expression
    for col in list(select.find_all(exp.Column)):
        qualifier = col.table.lower()
        if qualifier in _OLD_ROW or qualifier in _NEW_ROW:
            col.set("table", exp.to_identifier(ref))
        if (
            qualifier not in _OLD_ROW
            and col.name.lower() in assigned
            and (not qualifier or qualifier in _NEW_ROW or qualifier == ref.lower())
        ):
            value = assigned[col.name.lower()].copy()
            if col.parent is select:  # a returned column keeps its name
                value = exp.alias_(value, col.name)
            col.replace(value)
    return select


def _split_multitable_insert(expression: exp.Expr) -> list[exp.Expr]:
    """One INSERT … SELECT per branch of a multi-table insert.

    Hive ``FROM src INSERT … SELECT a INSERT … SELECT b`` gives each branch's SELECT the shared
    FROM; Snowflake ``INSERT ALL|FIRST [WHEN c THEN] INTO t (cols) VALUES (exprs) … SELECT …``
    becomes ``INSERT INTO t (cols) SELECT exprs FROM (SELECT …) WHERE c``.
    """
    source = expression.args.get("source")
    out: list[exp.Expr] = []
    for branch in expression.expressions:
        condition = (
            branch.args.get("expression")
            if type(branch).__name__ == ("ConditionalInsert")
            else None
        )
        insert = branch.this if type(branch).__name__ == "ConditionalInsert" else branch
        if not isinstance(insert, exp.Insert) or source is None:
            continue
        insert = insert.copy()
        query = insert.expression
        select: exp.Select | None
        if isinstance(source, exp.Query):
            derived = exp.Subquery(
                this=source.copy(), alias=exp.TableAlias(this=exp.to_identifier("_src"))
            )
            if isinstance(query, exp.Values) and query.expressions:
                row = query.expressions[0]
                values = row.expressions if isinstance(row, exp.Tuple) else [row]
                select = exp.Select(expressions=[v.copy() for v in values])
            elif query is None:
                select = exp.Select(expressions=[exp.Star()])
            else:
                select = query.copy() if isinstance(query, exp.Select) else None
            if select is None:
                continue
            select.set("from_", exp.From(this=derived))
        elif isinstance(query, exp.Select):
            select = query.copy()
            if select.args.get("from_") is None:
                select.set("from_", exp.From(this=source.copy()))
        else:
            continue
        if isinstance(condition, exp.Expr):
            select = select.where(condition.copy())
        insert.set("expression", select)
        out.append(insert)
    return out
