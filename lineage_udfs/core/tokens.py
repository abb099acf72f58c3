"""sqlglot's tokens of a text, and the keywords that start statements and control flow.

Owns :func:`tokenize` (the last text's tokens are kept: splitting, repairing and reading
declarations tokenize the same text again) and the keyword sets the splitter and the reader of
declarations share (:data:`STATEMENT_STARTERS`, :data:`CONTROL_WORDS`).
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot.tokens import Token, TokenType

from lineage_udfs.core.timeout import reraise_timeout

STATEMENT_STARTERS = frozenset(
    {
        "INSERT",
        "UPDATE",
        "DELETE",
        "MERGE",
        "CREATE",
        "DROP",
        "ALTER",
        "TRUNCATE",
        "WITH",
        "SELECT",
        "USE",
        "COPY",
        "REPLACE",
        "RENAME",
        "CACHE",
        "UNCACHE",
        "REFRESH",
    }
)


CONTROL_WORDS = frozenset(
    {
        "BEGIN",
        "END",
        "IF",
        "ELSE",
        "ELSEIF",
        "ELSIF",
        "WHILE",
        "LOOP",
        "DECLARE",
        "RETURN",
        "PRINT",
        "RAISERROR",
        "THROW",
        "LEAVE",
        "ITERATE",
        "CONTINUE",
        "BREAK",
        "EXCEPTION",
        "WHEN",
        "FOR",
        "REPEAT",
        "UNTIL",
        "OPEN",
        "FETCH",
        "CLOSE",
        "DEALLOCATE",
        "GOTO",
        "TRY",
        "CATCH",
        "COMMIT",
        "ROLLBACK",
        "RAISE",
        "SET",
        "EXEC",
        "EXECUTE",
        "CALL",
        "LET",
        "THEN",
        "DO",
        "LANGUAGE",
        "AS",
        "IS",
        "RETURNS",
        "TRAN",
        "TRANSACTION",
        "PERFORM",
        "GET",
        "SIGNAL",
        "CASE",
        "ON",
    }
)


@lru_cache(maxsize=1)
def tokenize(text: str, dialect: str | None) -> list[Token] | None:
    """sqlglot's tokens of ``text`` (None if it cannot tokenize it). The last text's tokens are
    kept: splitting a statement that does not parse tokenizes the same text again (to split it
    on semicolons, then to find statement starts in its only piece). Callers only read them."""
    try:
        return list(sqlglot.tokenize(text, read=dialect))
    except Exception as exc:
        reraise_timeout(exc)
        return None


def split_on_semicolons(text: str, dialect: str | None) -> list[str] | None:
    """The pieces of ``text`` between ``;`` tokens (a ``;`` inside a string, quoted name or
    comment is not one), stripped, empty ones dropped; None if sqlglot cannot tokenize it.

        >>> split_on_semicolons("select ';' ; ; select 2 -- a;b", None)
        ["select ';'", 'select 2 -- a;b']
    """
    tokens = tokenize(text, dialect)
    if tokens is None:
        return None
    pieces: list[str] = []
    start = 0
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            pieces.append(text[start : tok.start])
            start = tok.end + 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]
