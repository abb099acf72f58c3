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

import re

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from lineage_udfs.core.enums import StatementType
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.tokens import CONTROL_WORDS, STATEMENT_STARTERS, tokenize

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


_DECLARES_RE = re.compile(r"\b(?:DECLARE|LET|PROCEDURE|FUNCTION)\b", re.IGNORECASE)


_DECLARE_WORDS = ("declare", "let", "procedure", "function")


_STRING_TOKENS = frozenset(
    t
    for t in (getattr(TokenType, n, None) for n in ("STRING", "RAW_STRING", "HEREDOC_STRING"))
    if t is not None
)


_PARAMETER_MODES = frozenset({"IN", "OUT", "INOUT", "VARIADIC", "NOCOPY"})


_NOT_A_DECLARATION = frozenset(
    {
        "BEGIN",
        "END",
        "TYPE",
        "SUBTYPE",
        "PRAGMA",
        "PROCEDURE",
        "FUNCTION",
        "EXCEPTION",
        "ASSERT",
        "CALL",
        "EXPORT",
        "LOAD",
        "HANDLER",
    }
    | STATEMENT_STARTERS
    | CONTROL_WORDS
)


def declared_variables(sql: str, dialect: str | None) -> frozenset[str]:
    """Names a procedural text declares as variables or parameters (lower-cased).

    Procedure and function parameters (``CREATE PROCEDURE p(x DATE)``, ``IN``/``OUT`` modes
    skipped), ``DECLARE`` sections and statements (PL/pgSQL, PL/SQL, Snowflake Scripting,
    BigQuery ``DECLARE a, b INT64``, MySQL), the PL/SQL section after ``IS``/``AS`` of a
    procedure header, and Snowflake ``LET``. Bodies quoted as strings (``$$ … $$``, ``'…'``)
    are read too. ``@names`` (T-SQL, MySQL) are left out: they never look like a column or a
    table. Such names are values, not tables or columns: ``SELECT … INTO v`` assigns ``v``,
    and a bare ``v`` in a query is the variable, not a column of the FROM table.

    Examples:
        >>> sorted(declared_variables("CREATE PROCEDURE p(x DATE, OUT y INT64) BEGIN "
        ...     "DECLARE a, b INT64 DEFAULT 0; SELECT 1; END", "bigquery"))
        ['a', 'b', 'x', 'y']
        >>> sorted(declared_variables("DECLARE n integer; c CURSOR FOR SELECT 1; BEGIN NULL; "
        ...     "END;", "oracle"))
        ['c', 'n']
    """
    lowered = sql.lower()  # the words as substrings first: cheaper than the regex alone
    if not any(word in lowered for word in _DECLARE_WORDS) or not _DECLARES_RE.search(sql):
        return frozenset()
    return frozenset(_declared(sql, dialect, 0))


def _declared(sql: str, dialect: str | None, depth: int) -> set[str]:
    tokens = tokenize(sql, dialect) or []
    found: set[str] = set()
    n = len(tokens)
    for i, tok in enumerate(tokens):
        word = tok.text.upper()
        if tok.token_type in _STRING_TOKENS:
            if depth < 3 and _DECLARES_RE.search(tok.text):
                found.update(_declared(tok.text, dialect, depth + 1))
        elif word in ("DECLARE", "LET"):
            section = word == "DECLARE"
            if tok.token_type == TokenType.COMMAND:  # the tokenizer kept the rest as one string
                rest = tokenize(sql[tok.end + 1 :], dialect) or []
                found.update(_declaration_section(rest, 0, section=section))
            else:
                found.update(_declaration_section(tokens, i + 1, section=section))
        elif word in ("PROCEDURE", "FUNCTION") and any(
            t.text.upper() in ("CREATE", "ALTER") for t in tokens[max(0, i - 4) : i]
        ):
            j = i + 1
            while (
                j < n
                and tokens[j].token_type not in (TokenType.L_PAREN,)
                and (tokens[j].text.upper() not in ("AS", "IS", "BEGIN", "RETURNS", "LANGUAGE"))
            ):
                j += 1
            if j < n and tokens[j].token_type == TokenType.L_PAREN:
                j = _parameters(tokens, j, found)
            if j < n and tokens[j].text.upper() in ("IS", "AS") and dialect == "oracle":
                found.update(_declaration_section(tokens, j + 1, section=True))
    return found


def _name_of(tok: Token) -> str | None:
    text = tok.text
    if tok.token_type == TokenType.IDENTIFIER:
        return text.lower()
    if not re.fullmatch(r"[A-Za-z_][\w$]*", text) or text.upper() in _NOT_A_DECLARATION:
        return None
    return text.lower()


def _parameters(tokens: list[Token], start: int, found: set[str]) -> int:
    """Collect the parameter names of the list opening at ``tokens[start]``; the index after
    its closing parenthesis."""
    depth = 0
    expect_name = True
    i = start
    while i < len(tokens):
        tok = tokens[i]
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return i + 1
        elif depth == 1 and tok.token_type == TokenType.COMMA:
            expect_name = True
        elif depth == 1 and expect_name and tok.text.upper() not in _PARAMETER_MODES:
            name = _name_of(tok)
            if name:
                found.add(name)
            expect_name = False
        i += 1
    return i


def _declaration_section(tokens: list[Token], start: int, *, section: bool) -> set[str]:
    """Names declared from ``tokens[start]``: ``name type …;`` items (``a, b type`` declares
    both), up to ``BEGIN`` or a statement keyword; one item only when ``section`` is False."""
    found: set[str] = set()
    i = start
    n = len(tokens)
    while i < n:
        if tokens[i].text.upper() == "CURSOR" and i + 1 < n:
            i += 1  # PL/SQL: CURSOR c IS SELECT …
        name = _name_of(tokens[i])
        if (
            name is None
            or i + 1 >= n
            or tokens[i + 1].token_type in (TokenType.DOT, TokenType.EQ, TokenType.L_PAREN)
            or tokens[i + 1].text.upper() == "HANDLER"
        ):
            break
        found.add(name)
        i += 1
        while i + 1 < n and tokens[i].token_type == TokenType.COMMA:
            more = _name_of(tokens[i + 1])
            if more is None:
                break
            found.add(more)
            i += 2
        depth = 0
        while i < n and not (depth == 0 and tokens[i].token_type == TokenType.SEMICOLON):
            if tokens[i].token_type == TokenType.L_PAREN:
                depth += 1
            elif tokens[i].token_type == TokenType.R_PAREN:
                depth = max(0, depth - 1)
            i += 1
        i += 1
        if not section:
            break
    return found
