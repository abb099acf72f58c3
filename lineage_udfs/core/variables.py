"""Variables assigned from queries, and the statements of a script that read them.

``SET m = (SELECT max(ts) FROM a.t)`` (Snowflake session variables, BigQuery and T-SQL
scripting, MySQL), ``DECLARE m … DEFAULT (SELECT …)`` / ``DECLARE @m … = (SELECT …)`` and
``SELECT … INTO v`` (a variable, see :func:`assigns_variables`) read
tables: the statement is a query without a target, so those tables are sources of the script.
A later statement that reads the variable (``$m``, ``@m``, ``:m``, or a declared bare ``m``)
depends on them too: its rows are chosen (or computed) with the value. That dependency is
INDIRECT, like a filter's, and its subtype says where the variable is read (WHERE: FILTER,
JOIN … ON: JOIN, elsewhere: CONDITIONAL).
"""

from __future__ import annotations

from sqlglot import exp

from lineage_udfs.core.enums import StatementType
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.naming import NameContext

_BARE_NAMES_ARE_COLUMNS = frozenset({"snowflake", "tsql", "fabric"})
"""Dialects whose statements name a variable only with a prefix (``$m``, ``:m``, ``@m``): a
bare name is a column there."""
_CLAUSE_SUBTYPES: tuple[tuple[type[exp.Expr], Sub], ...] = (
    (exp.Where, Sub.FILTER),
    (exp.Having, Sub.FILTER),
    (exp.Qualify, Sub.FILTER),
    (exp.Join, Sub.JOIN),
    (exp.Group, Sub.GROUP_BY),
    (exp.Order, Sub.SORT),
    (exp.Window, Sub.WINDOW),
)


def assigned_queries(statement: exp.Expr) -> list[tuple[list[str], exp.Query]]:
    """The variables a SET / DECLARE statement assigns from a query, with the query.

    Examples:
        >>> import sqlglot
        >>> [(names, q.sql()) for names, q in assigned_queries(sqlglot.parse_one(
        ...     "SET m = (SELECT MAX(ts) FROM a.t)", read="snowflake"))]
        [(['m'], 'SELECT MAX(ts) FROM a.t')]
        >>> [(names, q.sql()) for names, q in assigned_queries(sqlglot.parse_one(
        ...     "DECLARE @m DATE = (SELECT MAX(ts) FROM a.t)", read="tsql"))]
        [(['m'], 'SELECT MAX(ts) FROM a.t')]
    """
    if not isinstance(statement, exp.Set | exp.Declare):
        return []
    out: list[tuple[list[str], exp.Query]] = []
    for item in statement.expressions:
        if isinstance(item, exp.SetItem) and isinstance(item.this, exp.EQ):
            names, value = _names(item.this.this), item.this.expression
        elif type(item).__name__ == "DeclareItem":
            held = item.this if isinstance(item.this, list) else [item.this]
            names = [n for node in held for n in _names(node)]
            value = item.args.get("default")
        else:
            continue
        while isinstance(value, exp.Subquery | exp.Paren):
            value = value.this
        if names and isinstance(value, exp.Query):
            out.append((names, value))
    return out


def assigned_variables(statement: exp.Expr, statement_type: StatementType) -> list[str]:
    """Names of the variables a statement sets from a query (lower-cased, no prefix):
    ``SET``/``DECLARE`` with a query value and ``SELECT … INTO`` variables (a SELECT whose
    INTO the table tier did not read as a created table: ``statement_type`` is SELECT)."""
    names = [n for found, _ in assigned_queries(statement) for n in found]
    if isinstance(statement, exp.Select) and statement_type == StatementType.SELECT:
        into = statement.args.get("into")
        if isinstance(into, exp.Into):
            for node in [into.this, *into.expressions]:
                names.extend(_names(node))
    return list(dict.fromkeys(names))


def variable_uses(
    statement: exp.Expr, names: frozenset[str], ctx: NameContext
) -> list[tuple[str, Sub]]:
    """Where a statement reads the variables ``names``: each name with the INDIRECT subtype of
    its use (in order, without repeats). A name the statement assigns is not a use, nor is a
    variable that names a table (``IDENTIFIER($t)``).

    Examples:
        >>> import sqlglot
        >>> from lineage_udfs.core.naming import NameContext
        >>> stmt = sqlglot.parse_one("INSERT INTO u SELECT id FROM s WHERE ts > $m",
        ...                          read="snowflake")
        >>> variable_uses(stmt, frozenset({"m"}), NameContext("snowflake"))
        [('m', <TransformationSubtype.FILTER: 'FILTER'>)]
    """
    if not names:
        return []
    assigned = {id(n) for n in _assignment_nodes(statement)}
    bare = ctx.dialect not in _BARE_NAMES_ARE_COLUMNS
    found: dict[tuple[str, Sub], None] = {}
    for node in statement.find_all(exp.Parameter, exp.Placeholder, exp.Column):
        if isinstance(node, exp.Column):
            if not bare or node.table or isinstance(node.parent, exp.Parameter):
                continue
            name = ctx.ident(node.this)
            if name not in ctx.variables:
                continue
        else:
            name = _prefixed_name(node)
        if name not in names or node.find_ancestor(exp.Table) is not None:
            continue
        if any(id(a) in assigned for a in _ancestors(node)):
            continue
        found[(name, _use_subtype(node))] = None
    return list(found)


def _names(node: object) -> list[str]:
    if isinstance(node, exp.Tuple):
        return [n for e in node.expressions for n in _names(e)]
    if isinstance(node, exp.Table):
        return _names(node.this)
    if isinstance(node, exp.Parameter | exp.Placeholder):
        name = _prefixed_name(node)
        return [name] if name else []
    if isinstance(node, exp.Column) and not node.table:
        return [node.name.lower()] if node.name else []
    if isinstance(node, exp.Identifier | exp.Var):
        return [node.name.lower().lstrip("@$:")] if node.name else []
    return []


def _prefixed_name(node: exp.Expr) -> str:
    inner = node.this
    text = inner.name if isinstance(inner, exp.Expr) else str(inner or "")
    return text.lower().lstrip("@$:")


def _assignment_nodes(statement: exp.Expr) -> list[exp.Expr]:
    """The nodes that name assigned variables (the left side of SET, DECLARE's names, INTO)."""
    out: list[exp.Expr] = []
    for item in statement.expressions if isinstance(statement, exp.Set | exp.Declare) else []:
        if isinstance(item, exp.SetItem) and isinstance(item.this, exp.EQ):
            out.append(item.this.this)
        elif type(item).__name__ == "DeclareItem":
            held = item.this if isinstance(item.this, list) else [item.this]
            out.extend(n for n in held if isinstance(n, exp.Expr))
    into = statement.args.get("into") if isinstance(statement, exp.Select) else None
    if isinstance(into, exp.Into):
        out.append(into)
    return out


def _ancestors(node: exp.Expr) -> list[exp.Expr]:
    out = [node]
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _use_subtype(node: exp.Expr) -> Sub:
    parent = node.parent
    while parent is not None:
        for clause, subtype in _CLAUSE_SUBTYPES:
            if isinstance(parent, clause):
                return subtype
        parent = parent.parent
    return Sub.CONDITIONAL


_NO_SELECT_INTO_TABLE = frozenset({"oracle", "snowflake", "bigquery"})
"""Dialects where ``SELECT … INTO x`` can only assign variables (no such table syntax)."""


def assigns_variables(into: exp.Into, ctx: NameContext) -> bool:
    """Whether a SELECT's INTO clause assigns variables instead of creating a table.

    It does for a list of names (``INTO v, w``), bind variables (``:v``, ``@v``), a name the
    enclosing procedure declares (``ctx.variables``), and in dialects without SELECT … INTO
    a table (Oracle, Snowflake, BigQuery).

    Examples:
        >>> import sqlglot
        >>> into = sqlglot.parse_one("SELECT count(*) INTO n FROM s", read="postgres").args["into"]
        >>> assigns_variables(into, NameContext("postgres")), assigns_variables(
        ...     into, NameContext("postgres", variables=frozenset({"n"})))
        (False, True)
    """
    if into.expressions or ctx.dialect in _NO_SELECT_INTO_TABLE:
        return True
    target = into.this
    if not isinstance(target, exp.Table):
        return False
    if isinstance(target.this, exp.Placeholder | exp.Parameter):
        return True
    if target.args.get("db") or target.args.get("catalog"):
        return False
    return bool(ctx.variables) and ctx.ident(target.this) in ctx.variables
