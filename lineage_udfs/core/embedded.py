"""Embedded SQL: statements held in a string or run by another statement.

Owns finding the query of ``UNLOAD ('…')``, ``EXECUTE IMMEDIATE '…'``, ``EXEC('…')`` /
``sp_executesql N'…'`` and PL/pgSQL ``EXECUTE '…'`` (:func:`embedded_query`), the body of a
procedure or function written as a string (:func:`string_body`), the location an UNLOAD writes
(:func:`unload_location`), and the statement a Snowflake task or pipe runs (:data:`TASK_RE`).
The splitter (:mod:`~lineage_udfs.core.statements`) parses what is found like any statement.
"""

from __future__ import annotations

import re

from sqlglot import exp

DOLLAR_BODY_RE = re.compile(r"\$(\w*)\$(.*?)\$\1\$", re.DOTALL)


TASK_RE = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TASK|PIPE)\b(?:[^']|'(?:[^']|'')*')*?\bAS\s+"
    r"(?=(?:INSERT|MERGE|UPDATE|DELETE|CREATE|COPY|WITH|SELECT|TRUNCATE|EXECUTE|BEGIN)\b)",
    re.IGNORECASE,
)
"""Snowflake ``CREATE TASK … AS <statement>`` (the task runs the statement on a schedule) and
``CREATE PIPE … AS COPY INTO …`` (the pipe runs its COPY as files arrive)."""


_EMBEDDED_HEAD_RE = re.compile(
    r"^\s*(?:UNLOAD\s*\(|EXEC(?:UTE)?\s+IMMEDIATE\s+|EXEC(?:UTE)?\s*\(|"
    r"EXEC(?:UTE)?\s+(?:[\w\[\]]+\.)*\[?sp_executesql\]?\s+|EXECUTE\s+(?=['$]))\s*N?",
    re.IGNORECASE,
)


_EMBEDDED_TAIL_RE = re.compile(r"^\s*(?:$|;|\)|,|USING\b|INTO\b|TO\b)", re.IGNORECASE)


_SQL_START_RE = re.compile(
    r"^\s*\(?\s*(?:INSERT|UPDATE|DELETE|MERGE|CREATE|DROP|ALTER|TRUNCATE|WITH|SELECT|COPY|"
    r"REPLACE|RENAME)\b",
    re.IGNORECASE,
)


def embedded_query(text: str, expression: exp.Expr | None = None) -> str | None:
    """The SQL held in a string by ``UNLOAD ('…')`` (Redshift), ``EXECUTE IMMEDIATE '…'``
    (Snowflake, BigQuery, Oracle, Db2), ``EXEC('…')`` / ``sp_executesql N'…'`` (T-SQL) or
    PL/pgSQL ``EXECUTE '…'``, given the statement's text and what sqlglot read it as (a
    statement read as anything but a Command or an EXECUTE holds none).

    Only a single constant string counts (a string built by concatenation is dynamic and is
    skipped). The embedded statement is parsed for lineage like any other; the string itself
    is never output (its literals are masked like the outer statement's).

    Examples:
        >>> embedded_query("EXECUTE IMMEDIATE 'INSERT INTO t SELECT ''x'' FROM s'")
        "INSERT INTO t SELECT 'x' FROM s"
        >>> embedded_query("EXECUTE IMMEDIATE 'INSERT INTO ' || t || ' SELECT 1'") is None
        True
    """
    if expression is not None and not isinstance(
        expression, exp.Command | exp.Execute | exp.ExecuteSql
    ):
        return None
    head = _EMBEDDED_HEAD_RE.match(text)
    if head is None:
        return None
    found = _string_literal(text, head.end())
    if found is None:
        return None
    body, end = found
    if not _EMBEDDED_TAIL_RE.match(text[end:]) or not _SQL_START_RE.match(body):
        return None
    return body


_UNLOAD_HEAD_RE = re.compile(r"^\s*UNLOAD\s*\(\s*", re.IGNORECASE)


_UNLOAD_TO_RE = re.compile(r"\s*\)\s*TO\s+", re.IGNORECASE)


def unload_location(text: str) -> str | None:
    """The location Redshift ``UNLOAD ('query') TO 'location'`` writes (None: not one).

    Examples:
        >>> unload_location("UNLOAD ('select a from s') TO 's3://b/p_' IAM_ROLE 'r'")
        's3://b/p_'
    """
    head = _UNLOAD_HEAD_RE.match(text)
    found = _string_literal(text, head.end()) if head is not None else None
    to = _UNLOAD_TO_RE.match(text, found[1]) if found is not None else None
    location = _string_literal(text, to.end()) if to is not None else None
    return location[0] if location is not None else None


def _string_literal(text: str, start: int) -> tuple[str, int] | None:
    """The unescaped content of the string literal at ``text[start]`` and the index after it."""
    if start >= len(text):
        return None
    quote = text[start]
    if quote == "$":
        m = re.match(r"\$(\w*)\$(.*?)\$\1\$", text[start:], re.DOTALL)
        return (m.group(2), start + m.end()) if m else None
    if quote not in ("'", '"'):
        return None
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == quote:
            if i + 1 < len(text) and text[i + 1] == quote:
                out.append(quote)
                i += 2
                continue
            return "".join(out), i + 1
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return None


def string_body(expression: exp.Expr | None) -> str | None:
    if not isinstance(expression, exp.Create) or (
        expression.args.get("kind") or ""
    ).upper() not in ("PROCEDURE", "FUNCTION", "PROC"):
        return None
    body = expression.expression
    if isinstance(body, exp.Block) and len(body.expressions) == 1:
        body = body.expressions[0]
    if isinstance(body, exp.Literal | exp.RawString) or type(body).__name__ == "Heredoc":
        text = body.this if isinstance(body.this, str) else body.name
        return (
            text
            if re.search(r"\b(insert|update|delete|merge|create|select)\b", text, re.IGNORECASE)
            else None
        )
    return None
