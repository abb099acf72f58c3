"""Splitting a logged text into statements, as sqlglot reads them.

Handles ``;``-separated scripts, T-SQL batches (``GO`` lines, statements without semicolons),
and procedural wrappers (``CREATE PROCEDURE … BEGIN … END``, ``BEGIN … END`` blocks, Snowflake
Scripting, PL/pgSQL and BigQuery scripting bodies, ``IF … THEN`` / ``LOOP`` / ``DECLARE``
control flow): the SQL statements inside are found and parsed one by one, control flow is
dropped (it carries no lineage).

Owns :func:`split_statements` and :class:`Chunk`: where one statement ends and the next
begins, when sqlglot swallowed a statement (an alias named like a keyword, a SET that ran on),
and which leftovers are control flow. Reading one piece is :mod:`~lineage_udfs.core.attempts`'
job; SQL held in strings is found by :mod:`~lineage_udfs.core.embedded`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from lineage_udfs.core.attempts import parse_error, try_parse
from lineage_udfs.core.embedded import (
    DOLLAR_BODY_RE,
    TASK_RE,
    embedded_query,
    string_body,
    unload_location,
)
from lineage_udfs.core.repairs import compound_assignments
from lineage_udfs.core.tokens import (
    CONTROL_WORDS,
    STATEMENT_STARTERS,
    split_on_semicolons,
    tokenize,
)

_GO_RE = re.compile(r"^[ \t]*GO[ \t]*(?:\d+)?[ \t]*;?[ \t]*$", re.IGNORECASE | re.MULTILINE)

_NOT_AFTER = frozenset(
    {
        "THEN",
        "DO",
        "KEY",
        "FOR",
        "UNION",
        "ALL",
        "INTERSECT",
        "EXCEPT",
        "MINUS",
        "DISTINCT",
        "(",
        "AS",
        "IGNORE",
        "OR",
        "INTO",
        "TABLE",
        "CASCADE",
        "NOT",
        "BY",
        ",",
        "=",
        "SHALLOW",
        "DEEP",
    }
)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One statement of a script: its text and, when sqlglot parsed it, the expression."""

    text: str
    expression: exp.Expr | None = None
    error: Exception | None = None
    control: bool = False
    """Procedural control flow (no lineage, not an error)."""


def split_statements(sql: str, dialect: str | None) -> list[Chunk]:
    """Split ``sql`` into statements and parse each with sqlglot.

    Args:
        sql: the logged text (one statement, a script or a procedure).
        dialect: sqlglot dialect name.

    Returns:
        The statements in order; an unparsable one has ``expression`` None and ``error`` set.

    Examples:
        >>> [type(c.expression).__name__ for c in split_statements(
        ...     "INSERT INTO a SELECT * FROM b INSERT INTO c SELECT * FROM d", "tsql")]
        ['Insert', 'Insert']
        >>> [type(c.expression).__name__ for c in split_statements("CREATE PROCEDURE p() BEGIN "
        ...     "INSERT INTO t SELECT 1; END", "mysql") if c.expression]
        ['Insert']
    """
    return [_mark_control(c) for c in _expand_bodies(_split(sql, dialect), dialect, 0)]


def _mark_control(chunk: Chunk) -> Chunk:
    """Procedural leftovers are control flow, not failed statements: a bare expression read
    from ``END IF`` / ``RAISE`` / ``x := 1`` (no statement parses to one), PL/SQL ``EXIT``, and
    the SQL*Plus ``/`` line that ends a block."""
    if chunk.control:
        return chunk
    expression = chunk.expression
    if expression is None:
        words = chunk.text.split(None, 1)
        head = words[0].upper() if words else ""
        if head in ("/", "EXIT") or not head.strip("/"):
            return Chunk(chunk.text, control=True)
        return chunk
    if isinstance(expression, exp.Condition | exp.Alias | exp.Identifier | exp.Var) and not (
        isinstance(expression, exp.Query)
    ):
        return Chunk(chunk.text, control=True)
    return chunk


def _expand_bodies(chunks: list[Chunk], dialect: str | None, depth: int) -> list[Chunk]:
    """Replace a procedure/function whose body is a string ($$ … $$, '…') by its statements."""
    out: list[Chunk] = []
    for chunk in chunks:
        embedded = embedded_query(chunk.text, chunk.expression) if depth < 3 else None
        if embedded is not None:
            inner = _expand_bodies(_split(embedded, dialect), dialect, depth + 1)
            if any(c.expression is not None for c in inner):
                out.extend(_unload_to(chunk.text, inner))
                continue
        body = string_body(chunk.expression) if depth < 3 else None
        if body is None:
            out.append(chunk)
            continue
        inner = _expand_bodies(_split(body, dialect), dialect, depth + 1)
        out.extend(inner or [Chunk(chunk.text, control=True)])
    return out


def _unload_to(text: str, inner: list[Chunk]) -> list[Chunk]:
    """Redshift ``UNLOAD ('query') TO 'location'``: the query's rows are written to the
    location, so its one query becomes ``COPY (query) TO 'location'`` (other chunks: as is).

    Examples:
        >>> [c] = _unload_to("UNLOAD ('select a from s') TO 's3://b/p_' IAM_ROLE 'r'",
        ...                  split_statements("select a from s", "redshift"))
        >>> c.expression.sql("redshift")
        "COPY (SELECT a FROM s) TO 's3://b/p_'"
    """
    location = unload_location(text)
    queries = [c for c in inner if isinstance(c.expression, exp.Query)]
    if location is None or len(queries) != 1 or len(inner) != 1:
        return inner
    copy = exp.Copy(
        this=exp.Subquery(this=queries[0].expression),
        kind=False,
        files=[exp.Literal.string(location)],
    )
    return [Chunk(queries[0].text, copy)]


def _split(sql: str, dialect: str | None) -> list[Chunk]:
    text = _GO_RE.sub(";", sql)
    whole = try_parse(text, dialect)
    if (
        whole is not None
        and not any(_hides_statements(e) or _misread_output_into(e) for e in whole)
        and not _swallows_statement(text, whole, dialect)
    ):
        if len(whole) == 1:
            return [Chunk(text.strip(), whole[0])]
        pieces = split_on_semicolons(text, dialect)
        if pieces is not None and len(pieces) == len(whole):
            return [Chunk(p, e) for p, e in zip(pieces, whole, strict=True)]
        return [Chunk(e.sql(dialect=dialect), e) for e in whole]
    pieces = split_on_semicolons(text, dialect)
    if pieces is None:
        return [Chunk(text.strip(), None, parse_error(text, dialect))]
    chunks: list[Chunk] = []
    for piece in pieces:
        chunks.extend(_parse_piece(piece, dialect, depth=0))
    return chunks


def _misread_output_into(expression: exp.Expr) -> bool:
    """A T-SQL ``OUTPUT … INTO t`` that sqlglot read (into a function call or a bare name) as
    part of a several-statement text: each statement is read again alone
    (:func:`~lineage_udfs.core.attempts.try_parse` reads ``OUTPUT … INTO`` itself)."""
    returning = expression.args.get("returning")
    return isinstance(returning, exp.Returning) and bool(returning.args.get("into"))


def _hides_statements(expression: exp.Expr) -> bool:
    """A Command (unparsed text) whose body holds SQL statements: a procedure, a block, or a
    T-SQL ``SET NOCOUNT ON`` that ran on into the next statement (no semicolon between)."""
    if not isinstance(expression, exp.Command):
        return False
    body = expression.expression
    text = body if isinstance(body, str) else body.this if isinstance(body, exp.Literal) else ""
    keyword = str(expression.this or "").upper()
    if keyword == "CREATE" and TASK_RE.match(f"CREATE {text}"):
        return True
    if keyword == "SET":
        return _SET_RUN_ON_RE.search(_top_level(text)) is not None
    if keyword in (
        "SHOW",
        "ADD",
        "RENAME",
        "DESC",
        "DESCRIBE",
        "EXPLAIN",
        "GRANT",
        "REVOKE",
        "ANALYZE",
        "UNLOAD",
        "VACUUM",
    ):
        return False
    return bool(
        re.search(
            r"\b(insert|update|delete|merge|select|create|truncate|drop)\b", text, re.IGNORECASE
        )
    )


_SET_RUN_ON_RE = re.compile(
    r"(?<![\w.@$#])(?:INSERT|UPDATE|DELETE|MERGE|SELECT|CREATE|TRUNCATE|DROP|ALTER)(?![\w.])",
    re.IGNORECASE,
)
"""A statement keyword at the top level of a SET command's text: the SET had no semicolon
and sqlglot's Command swallowed the statements after it (``SET @v = (SELECT …)`` has its
query in parentheses, ``SET IDENTITY_INSERT t ON`` and ``SET a.delete.b = 1`` name no
statement)."""
_QUOTED_OR_PAREN_RE = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|`[^`]*`|\[[^\]]*\]|\([^()]*\)")


def _top_level(text: str) -> str:
    """``text`` without quoted strings, quoted identifiers and parenthesized groups."""
    for _ in range(50):
        stripped = _QUOTED_OR_PAREN_RE.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    return text


_SWALLOWED_WORDS = frozenset(
    {
        "TRUNCATE",
        "COMMIT",
        "ROLLBACK",
        "RETURN",
        "DELETE",
        "INSERT",
        "UPDATE",
        "MERGE",
        "RAISERROR",
        "THROW",
        "PRINT",
        "EXEC",
        "EXECUTE",
        "DECLARE",
        "WHILE",
        "SET",
        "SELECT",
        "DROP",
        "CREATE",
        "ALTER",
        "GO",
    }
)
"""Statement keywords that sqlglot accepts as unquoted aliases in some dialects."""


def _swallows_statement(text: str, parsed: list[exp.Expr], dialect: str | None) -> bool:
    """Whether sqlglot read the start of a next statement as an alias of this one.

    Without a semicolon between them (T-SQL batches and procedure bodies),
    ``INSERT … FROM s`` ⏎ ``TRUNCATE TABLE u`` parses as ``FROM s AS truncate`` and
    ``SELECT a, b`` ⏎ ``DELETE FROM u`` as ``b AS delete``: an unquoted alias named after a
    statement keyword, written without ``AS``, ends the statement instead.

    Examples:
        >>> import sqlglot
        >>> sql = "INSERT INTO t SELECT a FROM s TRUNCATE TABLE u"
        >>> _swallows_statement(sql, sqlglot.parse(sql, read="tsql"), "tsql")
        True
        >>> sql = "SELECT a AS commit FROM s"
        >>> _swallows_statement(sql, sqlglot.parse(sql, read="tsql"), "tsql")
        False
    """
    names: set[str] = set()
    for expression in parsed:
        for node in expression.find_all(exp.TableAlias, exp.Alias):
            ident = node.this if isinstance(node, exp.TableAlias) else node.args.get("alias")
            if isinstance(ident, exp.Identifier) and not ident.args.get("quoted"):
                word = str(ident.this).upper()
                if word in _SWALLOWED_WORDS:
                    names.add(word)
    if not names:
        return False
    tokens = tokenize(text, dialect) or []
    return any(
        tok.text.upper() in names
        and tok.token_type != TokenType.STRING
        and (i == 0 or tokens[i - 1].text.upper() != "AS")
        for i, tok in enumerate(tokens)
    )


def _parse_piece(text: str, dialect: str | None, depth: int) -> list[Chunk]:
    task = TASK_RE.match(text) if depth < 5 else None
    if task is not None:  # the statement a task runs (its schedule and warehouse: no lineage)
        return _parse_piece(text[task.end() :], dialect, depth + 1)
    # bodies in dollar quotes ($$ … $$): Snowflake Scripting, PL/pgSQL
    if depth < 3:
        bodies = DOLLAR_BODY_RE.findall(text)
        if bodies and re.match(r"\s*(create|do|execute)\b", text, re.IGNORECASE):
            chunks: list[Chunk] = []
            for _, body in bodies:
                for inner in split_on_semicolons(body, dialect) or []:
                    chunks.extend(_parse_piece(inner, dialect, depth + 1))
            return chunks or [Chunk(text, control=True)]
    parsed = try_parse(text, dialect)
    repaired = compound_assignments(text) if parsed is None else None
    if repaired is not None:
        parsed = try_parse(repaired, dialect)
        text = repaired if parsed is not None else text
    if (
        parsed is not None
        and not any(_hides_statements(e) for e in parsed)
        and not (_swallows_statement(text, parsed, dialect))
    ):
        if len(parsed) == 1:
            return [Chunk(text, parsed[0])]
        return [Chunk(e.sql(dialect=dialect), e) for e in parsed]
    tokens = tokenize(text, dialect)
    if not tokens:
        return [Chunk(text, None, parse_error(text, dialect))]
    if (
        depth < 5
        and len(tokens) == 2
        and tokens[0].token_type == TokenType.COMMAND
        and tokens[1].token_type == TokenType.STRING
    ):
        # the tokenizer read "BEGIN <rest>" as a command and its text: parse the rest
        rest = text[tokens[0].end + 1 :].strip()
        return [Chunk(tokens[0].text, control=True), *_parse_piece(rest, dialect, depth + 1)]
    starts = _statement_starts(tokens)
    if not starts or (starts == [0] and parsed is None and depth > 0):
        if _is_control(tokens[0]):
            return [Chunk(text, control=True)]
        return [Chunk(text, None, parse_error(text, dialect))]
    chunks = []
    if starts[0] != 0:
        chunks.append(Chunk(text[: tokens[starts[0]].start].strip(), control=True))
    bounds = [*starts, len(tokens)]
    i = 0
    while i < len(starts):
        begin = tokens[bounds[i]].start
        # grow the statement until it parses (a split point may sit inside a statement)
        j = i + 1
        best: tuple[int, list[exp.Expr]] | None = None
        while j <= len(starts):
            end_tok = bounds[j] - 1 if j < len(bounds) - 1 else len(tokens) - 1
            piece = _strip_trailing_control(text, tokens, bounds[i], end_tok)
            got = try_parse(piece, dialect) if piece else None
            if (
                got
                and not any(_hides_statements(e) for e in got)
                and not any(isinstance(e, exp.Command) for e in got)
            ):
                best = (j, got)
                break
            j += 1
        if best is None:
            first = tokens[bounds[i]]
            end_tok = bounds[i + 1] - 1 if i + 1 < len(bounds) - 1 else len(tokens) - 1
            piece = text[begin : tokens[end_tok].end + 1].strip()
            if _is_control(first) or (
                first.text.upper() in ("CREATE", "ALTER") and (_hides_statements_text(piece))
            ):
                chunks.append(Chunk(piece, control=True))
            else:
                chunks.append(Chunk(piece, None, parse_error(piece, dialect)))
            i += 1
            continue
        j, got = best
        end_tok = bounds[j] - 1 if j < len(bounds) - 1 else len(tokens) - 1
        piece = _strip_trailing_control(text, tokens, bounds[i], end_tok)
        if len(got) == 1:
            chunks.append(Chunk(piece, got[0]))
        else:
            chunks.extend(Chunk(e.sql(dialect=dialect), e) for e in got)
        i = j
    return chunks


def _hides_statements_text(text: str) -> bool:
    return bool(re.search(r"\b(procedure|proc|function|begin)\b", text, re.IGNORECASE))


def _is_control(token: Token) -> bool:
    return token.text.upper() in CONTROL_WORDS


def _strip_trailing_control(text: str, tokens: list[Token], first: int, last: int) -> str:
    """The text of tokens[first..last] without trailing END / END IF / END LOOP … words."""
    while last > first and tokens[last].text.upper() in (
        "END",
        "IF",
        "LOOP",
        "WHILE",
        "TRY",
        "CATCH",
        "ELSE",
        "BEGIN",
        "$$",
        "THEN",
    ):
        if tokens[last].text.upper() in ("IF", "LOOP", "WHILE", "TRY", "CATCH") and not (
            last - 1 > first and tokens[last - 1].text.upper() == "END"
        ):
            break
        last -= 1
    return text[tokens[first].start : tokens[last].end + 1].strip()


def _statement_starts(tokens: list[Token]) -> list[int]:
    """Indexes of tokens that may begin a statement (depth 0, not inside CASE or MERGE arms)."""
    starts: list[int] = []
    depth = 0
    case_depth = 0
    prev = ""
    before_prev = ""
    in_merge = False
    insert_head = False  # after INSERT, before its query: `INSERT INTO t (a, b) SELECT …`
    for i, tok in enumerate(tokens):
        word = tok.text.upper() if tok.token_type != TokenType.STRING else "'"
        if tok.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif tok.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth = max(0, depth - 1)
        elif word == "CASE":
            case_depth += 1
        elif word == "END" and case_depth:
            case_depth -= 1
            prev = "END_CASE"
            continue
        if depth == 0 and not case_depth:
            is_start = False
            if (
                word in STATEMENT_STARTERS
                and tok.token_type not in (TokenType.STRING, TokenType.VAR)
            ) or (
                word in STATEMENT_STARTERS
                and word in ("USE", "RENAME", "CACHE", "UNCACHE", "REFRESH", "COPY", "REPLACE")
                and prev in ("", ";", "END")
            ):
                is_start = prev not in _NOT_AFTER or (prev == "THEN" and not in_merge)
                if prev == "COMMIT" and before_prev == "ON":
                    is_start = False  # CREATE TEMP TABLE … ON COMMIT DROP | DELETE ROWS
                if word in ("SELECT", "WITH") and prev in (")",):
                    is_start = True  # T-SQL batches without semicolons: `… VALUES (1) SELECT`
                if word in ("SELECT", "WITH") and insert_head:
                    is_start = False  # the INSERT's own query: `INSERT INTO t [(a, b)] SELECT`
                if word == "REPLACE" and prev in ("OR",):
                    is_start = False
            elif (
                word in CONTROL_WORDS
                and prev not in ("END",)
                and word
                not in (
                    "AS",
                    "IS",
                    "ON",
                    "SET",
                    "FOR",
                    "CASE",
                    "WHEN",
                    "THEN",
                    "DO",
                    "GET",
                    "ELSE",
                    "EXCEPTION",
                    "LANGUAGE",
                    "RETURNS",
                    "IF",
                )
            ):
                is_start = prev not in _NOT_AFTER
            elif (word == "SET" and i + 1 < len(tokens) and tokens[i + 1].text.startswith("@")) or (
                word == "IF" and prev in ("", ";", "END", "BEGIN", "THEN", "ELSE", "LOOP")
            ):
                is_start = True
            if is_start and i > 0:
                starts.append(i)
            elif is_start and i == 0:
                starts.append(0)
            if word == "MERGE" and is_start:
                in_merge = True
            elif is_start:
                in_merge = False
            if word == "INSERT" and is_start:
                insert_head = True
            elif word in ("SELECT", "WITH", "VALUES", "VALUE", "DEFAULT", "EXEC", "EXECUTE"):
                insert_head = False
        before_prev, prev = prev, word
    return starts
