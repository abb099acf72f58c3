"""Parse attempts: one text read by sqlglot, with its repairs, remembered.

Owns :func:`try_parse` (the dialect's parser, then the rewrites of
:mod:`~lineage_udfs.core.repairs`; T-SQL ``OUTPUT … INTO`` read as an INSERT of the touched
rows), the memo of texts that failed and of sqlglot's error for each (splitting a failing
statement tries the same text several times), and the reason a failed statement is given
(:func:`parse_error`).
"""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from lineage_udfs.core.repairs import mutation_as_update, repairs, replace_as_insert
from lineage_udfs.core.rewrites import DML_TYPES, flatten, returned_rows
from lineage_udfs.core.timeout import reraise_timeout
from lineage_udfs.core.tokens import tokenize


def try_parse(text: str, dialect: str | None) -> list[exp.Expr] | None:
    """The statements of ``text``, or None when sqlglot cannot read it.

    When the dialect's parser fails, a few general repairs are retried before giving up (and
    before the table-only fallback tiers): see :func:`repairs`.
    """
    key = (text, dialect)
    if key in _UNPARSABLE:
        return None
    if dialect in ("tsql", "fabric") and "OUTPUT" in text.upper():
        sent_on = _output_into(text, dialect)
        if sent_on is not None:
            return sent_on
    parsed = parse_once(text, dialect)
    if parsed is not None:
        if (
            len(parsed) == 1
            and isinstance(parsed[0], exp.Command)
            and str(parsed[0].this or "").upper() == "REPLACE"
        ):
            # MySQL/SQLite REPLACE INTO t …: an INSERT for lineage (sqlglot reads a Command)
            as_insert = replace_as_insert(text)
            insert = parse_once(as_insert, dialect) if as_insert is not None else None
            if insert is not None and len(insert) == 1 and isinstance(insert[0], exp.Insert):
                return insert
        as_update = (
            mutation_as_update(text)
            if len(parsed) == 1 and isinstance(parsed[0], exp.Command)
            else None
        )
        if as_update is not None:
            # ClickHouse ALTER TABLE t UPDATE c = x WHERE …: an UPDATE of t (a mutation)
            update = parse_once(as_update, dialect)
            if update is not None and len(update) == 1 and isinstance(update[0], exp.Update):
                return update
        if len(parsed) == 1 and isinstance(parsed[0], exp.Command):
            # sqlglot fell back to a Command for syntax it does not read (Oracle NOLOGGING,
            # REFRESH FAST …, Postgres ON COMMIT DROP): a repaired text may parse to the real
            # statement (a CREATE / TRUNCATE also in the generic dialect)
            keyword = str(parsed[0].this or "").upper()
            for candidate, read in repairs(text, dialect):
                if candidate == text or (read != dialect and keyword not in ("CREATE", "TRUNCATE")):
                    continue
                better = parse_once(candidate, read)
                if better and not any(isinstance(e, exp.Command) for e in better):
                    return better
        return parsed
    if not _brackets_unbalanced(text, dialect):
        for candidate, read in repairs(text, dialect):
            parsed = parse_once(candidate, read)
            if parsed is not None:
                return parsed
    _remember(_UNPARSABLE, key, None)
    return None


def _brackets_unbalanced(text: str, dialect: str | None) -> bool:
    """Whether ``text`` opens more round brackets than it closes, or the reverse, outside its
    strings and comments (by the dialect's tokens; False when it does not tokenize). No repair
    in :func:`repairs` balances brackets (each drops or rewrites whole bracketed groups or
    words), so such a text is not retried: a statement cut short by the log, or a malformed one,
    goes straight to the fallback tiers (the repairs' parses, each bound to fail, are saved).

    Examples:
        >>> _brackets_unbalanced("INSERT INTO t SELECT a FROM s WHERE b IN (1, 2", "spark")
        True
        >>> _brackets_unbalanced("INSERT INTO t SELECT ')' FROM s -- (", "spark")
        False
    """
    if text.count("(") == text.count(")"):
        return False  # (a bracket in a string or comment may hide an imbalance: kept to retry)
    tokens = tokenize(text, dialect)
    if tokens is None:
        return False
    depth = 0
    for tok in tokens:
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
    return depth != 0


_UNPARSABLE: dict[tuple[str, str | None], None] = {}
"""Texts sqlglot (and every repair) rejected, oldest first: splitting a failing statement
tries the same text several times (whole, as its only piece, while growing pieces); the
verdict is kept (trees never are: they are changed downstream)."""


_ERRORS: dict[tuple[str, str | None], Exception] = {}
"""sqlglot's error for texts it rejected in a dialect, oldest first (without traceback): the
reason a failed statement is given is the error of the splitter's own attempt, not of a
parse run again to get it."""


_MEMO_MAX = 64


def _remember(
    memo: dict[tuple[str, str | None], Any], key: tuple[str, str | None], value: Any
) -> None:
    memo[key] = value
    while len(memo) > _MEMO_MAX:
        del memo[next(iter(memo))]


def parse_once(text: str, dialect: str | None) -> list[exp.Expr] | None:
    try:
        parsed = sqlglot.parse(text, read=dialect)
    except Exception as exc:
        reraise_timeout(exc)
        _remember(_ERRORS, (text, dialect), exc.with_traceback(None))
        return None
    out: list[exp.Expr] = []
    for e in parsed:
        if e is not None:
            out.extend(flatten(e))
    if any(isinstance(e, exp.Insert) and e.expression is None for e in out):
        return None  # "INSERT INTO t" alone: a split point fell inside the statement
    return out


_NAME_TOKENS = frozenset(
    {TokenType.VAR, TokenType.IDENTIFIER, TokenType.DOT, TokenType.HASH, TokenType.PARAMETER}
)


_OUTPUT_ENDS = frozenset(
    {"FROM", "WHERE", "SELECT", "VALUES", "DEFAULT", "WHEN", "OPTION", "EXEC", "EXECUTE", ";"}
)


def _output_into(text: str, dialect: str | None) -> list[exp.Expr] | None:
    """T-SQL ``OUTPUT … INTO t [(cols)]`` on a DELETE / UPDATE / INSERT: the rows the
    statement touched are inserted into ``t``.

    Gives ``INSERT INTO t (cols) SELECT <output> FROM <the DML's rows>`` followed by the DML
    without its OUTPUT clause (sqlglot does not read ``OUTPUT … INTO`` on DELETE). ``OUTPUT``
    without ``INTO`` returns rows to the client and is dropped. None when ``text`` is not one
    such statement.

    Examples:
        >>> sql = "DELETE FROM q OUTPUT deleted.id INTO arc (id) WHERE c < 1"
        >>> [e.sql("tsql") for e in _output_into(sql, "tsql")]
        ['INSERT INTO arc (id) SELECT q.id FROM q WHERE c < 1', 'DELETE FROM q WHERE c < 1']
    """
    tokens = tokenize(text, dialect)
    if not tokens:
        return None
    depth = 0
    start = None
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and tok.text.upper() == "OUTPUT" and tok.token_type != TokenType.STRING:
            start = i
            break
    if start is None or start + 1 >= len(tokens):
        return None
    j = start + 1
    depth = 0
    into = None
    while j < len(tokens):
        word = tokens[j].text.upper()
        if tokens[j].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[j].token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and word == "INTO":
            into = j
            break
        elif depth == 0 and word in _OUTPUT_ENDS:
            break
        j += 1
    outputs = text[tokens[start].end + 1 : tokens[j - 1].end + 1]
    end = j  # first token after the clause
    target = columns = ""
    if into is not None:
        k = into + 1
        while k < len(tokens) and (
            tokens[k].token_type in _NAME_TOKENS or tokens[k - 1].token_type == TokenType.DOT
        ):
            k += 1
        if k == into + 1:
            return None
        target = text[tokens[into + 1].start : tokens[k - 1].end + 1]
        end = k
        if k < len(tokens) and tokens[k].token_type == TokenType.L_PAREN:
            close = k
            level = 0
            while close < len(tokens):
                if tokens[close].token_type == TokenType.L_PAREN:
                    level += 1
                elif tokens[close].token_type == TokenType.R_PAREN:
                    level -= 1
                    if level == 0:
                        break
                close += 1
            columns = text[tokens[k].start : tokens[min(close, len(tokens) - 1)].end + 1]
            end = close + 1
    rest = (
        text[: tokens[start].start] + " " + (text[tokens[end].start :] if end < len(tokens) else "")
    )
    parsed = parse_once(rest, dialect)
    if not parsed or len(parsed) != 1 or not isinstance(parsed[0], DML_TYPES):
        return None
    dml = parsed[0]
    dml.set("returning", None)
    if not target:
        return [dml]
    insert = parse_once(f"INSERT INTO {target} {columns} SELECT {outputs}", dialect)
    if (
        not insert
        or not isinstance(insert[0], exp.Insert)
        or not isinstance(insert[0].expression, exp.Select)
    ):
        return [dml]
    rows = returned_rows(dml, insert[0].expression.expressions)
    if rows is None:
        return [dml]
    insert[0].set("expression", rows)
    return [insert[0], dml]


class IncompleteStatementError(ValueError):
    """sqlglot reads the text, but a statement in it stops short (``INSERT INTO t`` and no
    query): a statement cut off, typically by a log's length limit."""


def parse_error(text: str, dialect: str | None) -> Exception:
    known = _ERRORS.get((text, dialect))
    if known is not None:  # the splitter's own attempt failed with it moments ago
        return known
    try:
        sqlglot.parse(text, read=dialect)
    except Exception as exc:
        reraise_timeout(exc)
        return exc
    return IncompleteStatementError("statement stops short")
