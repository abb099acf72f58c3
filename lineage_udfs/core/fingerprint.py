"""Statement cleaning, literal masking, normalization and fingerprinting (pure stdlib).

The same algorithm runs in two places: here in Python (unit tests, the parser's callers, notebooks)
and as Spark SQL expressions in ``lineage_udfs.spark.extract.transforms`` (on every log row,
without a Python UDF). Both are built from the regex constants below, which are written in the
common subset of Python ``re`` and ``java.util.regex``: explicit ASCII classes instead of
``\\w``/``\\d``/``\\s`` (whose meaning differs between the two engines), no named groups, no
possessive quantifiers, and "unrolled" string loops (``'[^'\\\\]*(?:(?:\\\\.|'')[^'\\\\]*)*'``)
so Java does not recurse once per character on long strings. A Spark test asserts both
implementations agree on the sample log.

Algorithm:

1. ``clean_statement``: drop Snowflake's ``COPY GRANTS`` clause and trailing semicolons and
   whitespace. The cleaned, *unmasked* text is what the parser receives.
2. ``mask_literals``: scan the text left to right with :data:`TOKEN_PATTERN`, one token at a time
   (comments, strings, dollar-quoted strings, quoted identifiers, numbers, words, whitespace, any
   other character). Each token is classified by the first class pattern that matches it whole:
   comments become a space, literals (and backtick-quoted file locations) become ``?``,
   everything else is kept. A single left-to-right
   scan is what makes ``'--not a comment'`` a string and ``-- it's`` a comment; sequential
   ``regexp_replace`` passes cannot get both right.
3. ``normalize_masked``: collapse whitespace runs to one space and trim.
4. ``fingerprint``: sha256 over dialect, default database, default schema, the normalized masked
   text and, for view/procedure definitions only, the cleaned text (joined with ``\\x1f``); first
   :data:`FINGERPRINT_HEX_CHARS` hex characters. The session context is part of the key because
   the same text means different tables under another default schema; one fingerprint is
   therefore exactly one parse.

Examples:
    >>> mask_literals("SELECT * FROM t1 WHERE d = DATE '2024-01-01' AND n > 10 -- note")
    'SELECT * FROM t1 WHERE d = DATE ? AND n > ?  '
    >>> normalized_masked_sql("INSERT INTO tab_2024 SELECT 'it''s', 0x1F, 1.5e3 FROM s;")
    'INSERT INTO tab_2024 SELECT ?, ?, ? FROM s'
    >>> mask_literals('SELECT "a" FROM t', dialect="snowflake")
    'SELECT "a" FROM t'
    >>> mask_literals('SELECT "a" FROM t', dialect="spark")
    'SELECT ? FROM t'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

# --- token classes (order matters: the first class that matches a token wins) ----------------
COMMENT_PATTERN = r"--[^\n]*|/\*[\s\S]*?\*/"
"""Line and block comments. An unterminated block comment is not a comment (``/`` and ``*``)."""

DOLLAR_STRING_PATTERN = r"\$([A-Za-z_][A-Za-z0-9_]*|)\$[\s\S]*?\$\1\$"
"""Postgres/Snowflake dollar-quoted strings, ``$$…$$`` or ``$tag$…$tag$``. The tag group is the
only capturing group in every pattern of this module, so ``\\1`` refers to it everywhere. It has an
empty alternative instead of ``?``: a backreference to a group that did not participate fails in
both engines."""

SINGLE_QUOTED_PATTERN = r"(?:[xXbBnNeErR]|[uU]&)?'[^'\\]*(?:(?:\\[\s\S]|'')[^'\\]*)*(?:'|$)"
"""Single-quoted strings with ``''`` and backslash escapes, optionally prefixed (X'…', N'…', E'…',
B'…', R'…', U&'…'). Typed literals such as ``DATE '…'`` keep their keyword: ``DATE ?``. An
unterminated string (a truncated log row) runs to the end of the text and is masked too."""

DOUBLE_QUOTED_PATTERN = r'"[^"\\]*(?:(?:\\[\s\S]|"")[^"\\]*)*(?:"|$)'
"""``"…"``: a string in :data:`DOUBLE_QUOTE_STRING_DIALECTS`, a quoted identifier elsewhere."""

BACKTICK_PATTERN = r"`[^`]*(?:``[^`]*)*`"
"""Backtick-quoted identifiers (Spark, Databricks, Hive, MySQL, BigQuery): kept, unless a path."""

PATH_IDENTIFIER_PATTERN = r"`[^`/]*/[\s\S]*`"
"""A backtick-quoted identifier holding a ``/`` is a file location (``parquet.`s3://b/k```,
``delta.`/mnt/x```): a literal, masked like a string. Tested on backtick tokens only."""

NUMBER_PATTERN = (
    r"(?:0[xX][0-9a-fA-F]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"(?:[bB][dD]|[lLsSyYdDfF])?)(?![A-Za-z0-9_$\u0080-\uffff])"
)
"""Numeric literals, hex ``0x1F`` and Spark's typed suffixes (``10L``, ``1.5BD``). A number must
not run into an identifier character, so ``1abc`` is a word; digits inside identifiers (``t1``,
``tab_2024``) never start a token because the word class consumes them first."""

WORD_PATTERN = r"[A-Za-z0-9_$@#\u0080-\uffff]+"
"""Identifiers and keywords (also ``$1`` parameters and ``@vars``)."""

WHITESPACE_PATTERN = r"[ \t\n\r\f\x0b]+"
OTHER_PATTERN = r"[\s\S]"


def _ci(word: str) -> str:
    """``word`` as a case-insensitive regex of explicit ASCII classes (``PWD`` -> ``[Pp][Ww][Dd]``).

    Not ``(?i)``: Python folds some non-ASCII letters into ASCII ones (``\u017f`` ~ ``s``) and
    Java does not, so the two engines would disagree."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


_WS = r"[ \t\n\r\f\x0b]"
CREDENTIAL_NAMES: tuple[str, ...] = (
    "PASSWORD",
    "PASSWD",
    "PWD",
    "PASSPHRASE",
    "SECRET",
    "SECRET_KEY",
    "TOKEN",
    "CREDENTIAL",
    "CREDENTIALS",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "ACCESS_KEY_ID",
    "KEY_ID",
    "PRIVATE_KEY",
    "ACCOUNT_KEY",
    "MASTER_KEY",
    "CONNECTION",
    "CONNECTION_STRING",
)
"""Names whose value is a credential: any of them, alone or as the last part of a name joined
by ``_`` (``AWS_SECRET_KEY``, ``AZURE_SAS_TOKEN``, ``client_secret``, ``db_password``), any case.
A name that only starts with one (``password_hash``, ``token_count``) is not one."""

NOT_A_SECRET_WORDS: tuple[str, ...] = (
    "AND", "AS", "ASC", "BETWEEN", "BIGINT", "BINARY", "BLOB", "BOOLEAN", "BY", "BYTES", "CHAR",
    "CLOB", "COLLATE", "COMMENT", "CROSS", "DATE", "DECIMAL", "DEFAULT", "DESC", "ELSE", "END",
    "EXCEPT", "FROM", "FULL", "GROUP", "HAVING", "ILIKE", "IN", "INNER", "INT", "INTEGER",
    "INTERSECT", "INTO", "IS", "JOIN", "LEFT", "LIKE", "LIMIT", "MINUS", "NOT", "NULL", "NULLS",
    "NUMBER", "NUMERIC", "NVARCHAR", "ON", "OR", "ORDER", "OUTER", "OVER", "PRIMARY",
    "REFERENCES", "RIGHT", "RLIKE", "SELECT", "SET", "STRING", "TEXT", "THEN", "TIMESTAMP",
    "UNION", "UNIQUE", "USING", "UUID", "VALUES", "VARBINARY", "VARCHAR", "VARIANT", "WHEN",
    "WHERE", "WINDOW", "WITH",
)  # fmt: skip
"""Words that follow a *column* named like a credential in ordinary SQL (``SELECT password
FROM``, ``token VARCHAR(64)``): never taken for the bare-word value of a credential clause."""

_WORD_END = r"(?![A-Za-z0-9_$@#\u0080-\uffff])"
CREDENTIAL_KEYWORD_PATTERN = (
    _ci("IDENTIFIED")
    + f"(?:{_WS}+{_ci('WITH')}{_WS}+[A-Za-z0-9_]+)?{_WS}+{_ci('BY')}"
    + f"(?:{_WS}+{_ci('PASSWORD')})?"
    + "|(?:[A-Za-z0-9]+_)*(?:"
    + "|".join(_ci(n) for n in sorted(CREDENTIAL_NAMES, key=len, reverse=True))
    + ")"
)
"""``IDENTIFIED [WITH plugin] BY [PASSWORD]`` (Oracle, MySQL, Postgres) or a credential name."""

_SEPARATOR = f"(?:{_WS}|{COMMENT_PATTERN})*"
CREDENTIAL_VALUE_PATTERN = (
    r"(?:'[^'\\]*(?:(?:\\[\s\S]|'')[^'\\]*)*(?:'|$)"
    r'|"[^"\\]*(?:(?:\\[\s\S]|"")[^"\\]*)*(?:"|$)'
    r"|`[^`]*(?:``[^`]*)*(?:`|$)"
    r"|\$[A-Za-z0-9_]*\$[\s\S]*?\$[A-Za-z0-9_]*\$"
    f"|(?!(?:{'|'.join(_ci(w) for w in NOT_A_SECRET_WORDS)}){_WORD_END})"
    r"[^ \t\n\r\f\x0b,;()'\"`=:>](?:(?!\*/|--)[^ \t\n\r\f\x0b,;()'\"`])*)"
)
"""The value of a credential clause, whatever its token type: a string, a quoted identifier,
a dollar-quoted string or a bare run of characters up to a space, ``,``, ``;`` or a bracket."""

CREDENTIAL_PATTERN = (
    f"(?:{CREDENTIAL_KEYWORD_PATTERN}){_WORD_END}{_SEPARATOR}"
    f"(?:(?:=>|=|:){_SEPARATOR})?{CREDENTIAL_VALUE_PATTERN}"
)
"""One token: a credential clause, keyword to value (``PASSWORD = hunter2``, ``IDENTIFIED BY
tiger``, ``aws_key_id=AKIA…``). It is the first alternative of :data:`TOKEN_PATTERN`, so it is
only found where a token starts: never inside a string, comment or quoted identifier."""

CREDENTIAL_CAPTURE_PATTERN = (
    f"^({CREDENTIAL_KEYWORD_PATTERN}){_SEPARATOR}((?:=>|=|:)?){_SEPARATOR}"
    f"{CREDENTIAL_VALUE_PATTERN}$"
)
"""A credential token with the keyword as group 1 and the operator (maybe empty) as group 2."""
CREDENTIAL_REPLACEMENT_JAVA = "$1 $2 ?"
"""What a credential token becomes (``java.util.regex`` replacement syntax; Python: the same
through :func:`_mask_credential`): ``PASSWORD = ?``, ``IDENTIFIED BY  ?``."""

TOKEN_PATTERN = "|".join(
    f"(?:{p})"
    for p in (
        CREDENTIAL_PATTERN,
        COMMENT_PATTERN,
        DOLLAR_STRING_PATTERN,
        SINGLE_QUOTED_PATTERN,
        DOUBLE_QUOTED_PATTERN,
        BACKTICK_PATTERN,
        NUMBER_PATTERN,
        WORD_PATTERN,
        WHITESPACE_PATTERN,
        OTHER_PATTERN,
    )
)
"""Matches every character of any text exactly once, as a sequence of tokens."""

DOUBLE_QUOTE_STRING_DIALECTS: tuple[str, ...] = ("bigquery", "databricks", "hive", "mysql", "spark")
"""Dialects where ``"…"`` is a string literal rather than a quoted identifier."""

# --- cleaning and normalization ----------------------------------------------------------------
COPY_GRANTS_PATTERN = r"(?i)[ \t\n\r\f\x0b]+COPY[ \t\n\r\f\x0b]+GRANTS(?![A-Za-z0-9_$])"
"""Snowflake's ``CREATE … COPY GRANTS``: privileges, not data flow, and many parsers reject it."""

TRAILING_PATTERN = r"[; \t\n\r\f\x0b]+$"
"""Trailing semicolons and whitespace."""

FINGERPRINT_HEX_CHARS = 32
"""128 bits of the sha256: collision-free for any realistic number of distinct statements."""

FINGERPRINT_SEPARATOR = "\x1f"

COMMENT_REPLACEMENT = " "
LITERAL_REPLACEMENT = "?"

# --- lineage relevance prefilter (applied to the normalized masked text) -----------------------
NOT_RELEVANT_PATTERN = (
    r"(?i)^[( ]*(?:SELECT|WITH|SHOW|SET|UNSET|USE|DESCRIBE|DESC|EXPLAIN|GRANT|REVOKE|COMMIT"
    r"|ROLLBACK|START|ABORT|ALTER SESSION|ALTER USER|ALTER WAREHOUSE|CACHE|UNCACHE|CLEAR|LIST"
    r"|LS|GET|PUT"
    r"|REMOVE|RM|ANALYZE|VACUUM|OPTIMIZE|REFRESH|MSCK|FETCH|VALUES|KILL|CANCEL)(?![A-Za-z0-9_$])"
)
"""Statements that plainly carry no lineage: queries, session and admin commands."""

LINEAGE_KEYWORD_PATTERN = (
    r"(?i)(?<![A-Za-z0-9_$])(?:INSERT|INTO|MERGE|CREATE|REPLACE|UPDATE|COPY|LOAD|CLONE|EXEC"
    r"|EXECUTE|CALL|DECLARE|BEGIN)(?![A-Za-z0-9_$])|;"
)
"""Any of these (or a statement separator ``;``) keeps a row that looks like a plain query:
``SELECT … INTO``, a CTE feeding an INSERT, a multi-statement script. When unsure, keep."""

ACCOUNT_STATEMENT_PATTERN = (
    r"(?i)^[( ]*(?:GRANT|REVOKE|DENY|SET PASSWORD|SET ROLE"
    r"|(?:CREATE|ALTER|DROP)(?: OR REPLACE)?(?: IF (?:NOT )?EXISTS)?"
    r" (?:USER|ROLE|LOGIN|GROUP|DATABASE ROLE|APPLICATION ROLE|SECRET|CREDENTIAL|CONNECTION"
    r"|(?:SECURITY|STORAGE|API|NOTIFICATION|EXTERNAL ACCESS) INTEGRATION|NETWORK POLICY"
    r"|PASSWORD POLICY|AUTHENTICATION POLICY|SERVER|USER MAPPING))(?![A-Za-z0-9_$])"
)
"""Statements that only manage users, roles, grants and stored credentials: never lineage,
whatever keywords they hold (``GRANT INSERT ON t``, ``CREATE USER … PASSWORD …``), so they are
not stored at all (only counted as not relevant)."""

READ_PATTERN = r"(?i)^[( ]*(?:SELECT|WITH)(?![A-Za-z0-9_$])"
"""A plain query (SELECT or WITH … SELECT): not lineage, but it reads tables. With
``activity.keep_reads`` such statements are kept (and parsed) for their reads."""

_TOKEN_RE = re.compile(TOKEN_PATTERN)
_READ_RE = re.compile(READ_PATTERN)
_CREDENTIAL_CAPTURE_RE = re.compile(CREDENTIAL_CAPTURE_PATTERN)
_CLASS_RES = {
    name: re.compile(pattern)
    for name, pattern in (
        ("credential", CREDENTIAL_PATTERN),
        ("comment", COMMENT_PATTERN),
        ("dollar", DOLLAR_STRING_PATTERN),
        ("single", SINGLE_QUOTED_PATTERN),
        ("double", DOUBLE_QUOTED_PATTERN),
        ("path", PATH_IDENTIFIER_PATTERN),
        ("number", NUMBER_PATTERN),
    )
}
_COPY_GRANTS_RE = re.compile(COPY_GRANTS_PATTERN)
_TRAILING_RE = re.compile(TRAILING_PATTERN)
_WHITESPACE_RE = re.compile(WHITESPACE_PATTERN)
_NOT_RELEVANT_RE = re.compile(NOT_RELEVANT_PATTERN)
_ACCOUNT_STATEMENT_RE = re.compile(ACCOUNT_STATEMENT_PATTERN)
_LINEAGE_KEYWORD_RE = re.compile(LINEAGE_KEYWORD_PATTERN)


def clean_statement(sql: str) -> str:
    """Remove ``COPY GRANTS`` and trailing semicolons/whitespace; the parser gets this text.

    Examples:
        >>> clean_statement("CREATE OR REPLACE TABLE a COPY GRANTS AS SELECT 1 ;\\n")
        'CREATE OR REPLACE TABLE a AS SELECT 1'
    """
    return _TRAILING_RE.sub("", _COPY_GRANTS_RE.sub("", sql))


def is_double_quote_string_dialect(dialect: str | None) -> bool:
    """True when ``"…"`` is a string literal in ``dialect`` (case-insensitive)."""
    return (dialect or "").lower() in DOUBLE_QUOTE_STRING_DIALECTS


def _mask_credential(token: str) -> str:
    """A credential token as :data:`CREDENTIAL_REPLACEMENT_JAVA` makes it: keyword, operator,
    ``?``."""
    match = _CREDENTIAL_CAPTURE_RE.match(token)
    if match is None:  # unreachable for a token the credential class matched whole
        return LITERAL_REPLACEMENT
    return f"{match.group(1)} {match.group(2)} {LITERAL_REPLACEMENT}"


def _mask_token(token: str, double_quote_is_string: bool) -> str:
    """Classify one token as the Spark CASE expression does (the reference for the fast path
    in :func:`mask_literals`; a unit test checks both agree)."""
    if _CLASS_RES["credential"].fullmatch(token):
        return _mask_credential(token)
    if _CLASS_RES["comment"].fullmatch(token):
        return COMMENT_REPLACEMENT
    if _CLASS_RES["dollar"].fullmatch(token) or _CLASS_RES["single"].fullmatch(token):
        return LITERAL_REPLACEMENT
    if double_quote_is_string and _CLASS_RES["double"].fullmatch(token):
        return LITERAL_REPLACEMENT
    if _CLASS_RES["path"].fullmatch(token) or _CLASS_RES["number"].fullmatch(token):
        return LITERAL_REPLACEMENT
    return token


# The token alternatives as named groups: which one matched *is* the token's class (a token
# matched by a later alternative never matches an earlier class whole, or the earlier
# alternative would have matched), so one scan replaces the per-token class tests.
_DOLLAR_NAMED_PATTERN = DOLLAR_STRING_PATTERN.replace("(", "(?P<tag>", 1).replace("\\1", "(?P=tag)")
_KINDED_TOKEN_RE = re.compile(
    "|".join(
        f"(?P<{kind}>{pattern})"
        for kind, pattern in (
            ("credential", CREDENTIAL_PATTERN),
            ("comment", COMMENT_PATTERN),
            ("dollar", _DOLLAR_NAMED_PATTERN),
            ("single", SINGLE_QUOTED_PATTERN),
            ("double", DOUBLE_QUOTED_PATTERN),
            ("backtick", BACKTICK_PATTERN),
            ("number", NUMBER_PATTERN),
            ("keep", f"{WORD_PATTERN}|{WHITESPACE_PATTERN}|{OTHER_PATTERN}"),
        )
    )
)
_PATH_RE = re.compile(PATH_IDENTIFIER_PATTERN)


def _masker(double_quote_is_string: bool) -> Callable[[re.Match[str]], str]:
    def mask(match: re.Match[str]) -> str:
        kind = match.lastgroup
        if kind == "keep":
            return match.group(0)
        if kind == "comment":
            return COMMENT_REPLACEMENT
        if kind == "credential":
            return _mask_credential(match.group(0))
        if kind == "backtick":
            token = match.group(0)
            return LITERAL_REPLACEMENT if _PATH_RE.fullmatch(token) else token
        if kind == "double" and not double_quote_is_string:
            return match.group(0)
        return LITERAL_REPLACEMENT

    return mask


_MASKERS = {dq: _masker(dq) for dq in (False, True)}


def mask_literals(sql: str, dialect: str | None = None) -> str:
    """Replace every literal with ``?`` and every comment with a space.

    Args:
        sql: statement text (any dialect).
        dialect: sqlglot dialect name; decides whether ``"…"`` is a string.

    Returns:
        The masked text; identifiers, keywords and punctuation are unchanged.
    """
    return _KINDED_TOKEN_RE.sub(_MASKERS[is_double_quote_string_dialect(dialect)], sql)


def mask_literals_reference(sql: str, dialect: str | None = None) -> str:
    """:func:`mask_literals` token by token with the anchored class tests (slower; for tests)."""
    dq = is_double_quote_string_dialect(dialect)
    return "".join(_mask_token(m.group(0), dq) for m in _TOKEN_RE.finditer(sql))


def normalize_masked(masked_sql: str) -> str:
    """Collapse whitespace runs to one space and trim (input: output of ``mask_literals``)."""
    return _WHITESPACE_RE.sub(" ", masked_sql).strip(" ")


def normalized_masked_sql(sql: str, dialect: str | None = None) -> str:
    """``clean_statement`` → ``mask_literals`` → ``normalize_masked``: what is stored and hashed."""
    return normalize_masked(mask_literals(clean_statement(sql), dialect))


SKELETON_KEYWORDS: tuple[str, ...] = (
    "all", "alter", "and", "as", "by", "call", "case", "copy", "create", "cross", "delete",
    "distinct", "drop", "else", "end", "exists", "from", "full", "grant", "group", "having",
    "identified", "if", "in", "inner", "insert", "into", "is", "join", "left", "limit", "matched",
    "merge", "not", "null", "on", "or", "order", "outer", "overwrite", "partition", "password",
    "replace", "right", "role", "select", "set", "table", "temp", "temporary", "then", "to",
    "truncate", "union", "update", "user", "using", "values", "view", "when", "where", "with",
)  # fmt: skip
"""The words :func:`skeleton` keeps: SQL keywords, never a name or a value."""

SKELETON_WORD_PATTERN = (
    r"(?<![A-Za-z0-9_$@#\u0080-\uffff])"
    rf"(?!(?i:{'|'.join(SKELETON_KEYWORDS)}){_WORD_END})"
    r"[A-Za-z0-9_$@#\u0080-\uffff]+"
)
"""A word that is not one of :data:`SKELETON_KEYWORDS` (Python ``re`` and ``java.util.regex``
alike)."""
_SKELETON_WORD_RE = re.compile(SKELETON_WORD_PATTERN)


def skeleton(masked: str) -> str:
    """Only the keywords and punctuation of an already masked text: every other word becomes
    ``?``.

    For a record whose quoting cannot be trusted (a CSV value whose quote never closes, a
    truncated JSON line): its quotes pair up wrongly, so a string literal of the SQL inside it
    (``""secret""`` in CSV, ``\\"secret\\"`` in JSON) reads as a bare word that masking keeps.
    Masking first, then this, stores the record's shape and none of its names or values.

    Examples:
        >>> skeleton('?,??INSERT INTO t SELECT ?Cn4ry?, a FROM s?spark')
        '?,??INSERT INTO ? SELECT ???, ? FROM ???'
    """
    return _SKELETON_WORD_RE.sub(LITERAL_REPLACEMENT, masked)


DEFINITION_KINDS: tuple[str, ...] = ("view", "procedure")
"""Log rows that define an object. Their fingerprint also covers the unmasked cleaned text: a
procedure body is often one dollar-quoted string, which masks to ``?``, and two versions of the
same procedure must not share a fingerprint. Definitions do not vary by literal from run to run,
so this costs no deduplication. Only the hash is stored, never the text."""


def fingerprint(
    sql: str,
    dialect: str | None = None,
    default_database: str | None = None,
    default_schema: str | None = None,
    object_kind: str | None = None,
) -> str:
    """Fingerprint of a statement in its session context (hex prefix of a sha256).

    Examples:
        >>> a = fingerprint("INSERT INTO t SELECT * FROM s WHERE d = '2024-01-01'", "spark")
        >>> b = fingerprint("INSERT INTO t SELECT * FROM s WHERE d = '2024-01-02';", "spark")
        >>> a == b, len(a)
        (True, 32)
    """
    payload = FINGERPRINT_SEPARATOR.join(
        (
            dialect or "",
            default_database or "",
            default_schema or "",
            normalized_masked_sql(sql, dialect),
            clean_statement(sql) if (object_kind or "").lower() in DEFINITION_KINDS else "",
        )
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:FINGERPRINT_HEX_CHARS]


def is_lineage_relevant(
    normalized_masked: str, object_kind: str | None = None, *, keep_reads: bool = False
) -> bool:
    """Cheap prefilter on the normalized masked text; conservative (when unsure, True).

    View and procedure definitions are always relevant; statements that manage users, roles,
    grants or stored credentials (:data:`ACCOUNT_STATEMENT_PATTERN`) never are. Otherwise a
    statement is dropped only when it starts with a plainly lineage-free keyword (SELECT, WITH,
    SHOW, SET, USE, …) and contains none of the keywords that could make it write data (INTO,
    INSERT, CREATE, MERGE, ``;`` …).

    Examples:
        >>> is_lineage_relevant("SELECT a FROM t WHERE x = ?")
        False
        >>> is_lineage_relevant("SELECT a INTO new_t FROM t")
        True
        >>> is_lineage_relevant("WITH s AS (SELECT ?) INSERT INTO t SELECT * FROM s")
        True
        >>> is_lineage_relevant("SELECT * FROM v", object_kind="view")
        True
        >>> is_lineage_relevant("CREATE USER u PASSWORD = ?")
        False
        >>> is_lineage_relevant("SELECT a FROM t WHERE x = ?", keep_reads=True)
        True
        >>> is_lineage_relevant("SHOW TABLES", keep_reads=True)
        False

    With ``keep_reads`` a plain query (:data:`READ_PATTERN`) is kept too: its reads are usage.
    """
    if (object_kind or "").lower() in DEFINITION_KINDS:
        return True
    if _ACCOUNT_STATEMENT_RE.search(normalized_masked) is not None:
        return False
    if _NOT_RELEVANT_RE.search(normalized_masked) is None:
        return True
    if keep_reads and _READ_RE.search(normalized_masked) is not None:
        return True
    return _LINEAGE_KEYWORD_RE.search(normalized_masked) is not None


_FIGURE_BEFORE_RE = re.compile(
    r"(?i)(?:line|col|column|position|offset|longer than|more than|limit of|after|max)[: ]*$"
)
_FIGURE_AFTER_RE = re.compile(r"(?i)^ ?(?:characters|chars|bytes|seconds|s|ms|statements)\b")


def mask_message(message: str) -> str:
    """Mask the SQL quoted in one of our failure messages, keeping the message's own figures.

    Strings, quoted text, comments and credential clauses are masked as in SQL (as MySQL, which
    treats both quote kinds as strings); a number is kept only where it is one of our figures:
    after ``line``, ``col``, ``longer than`` … or before ``characters``, ``seconds`` ….

    Examples:
        >>> mask_message("statement longer than 1000000 characters")
        'statement longer than 1000000 characters'
        >>> mask_message("Expecting ) at line 3, col 14: WHERE id = 4111 AND pw = 'x'")
        'Expecting ) at line 3, col 14: WHERE id = ? AND pw = ?'
    """
    mask = _MASKERS[True]
    parts: list[str] = []
    for match in _KINDED_TOKEN_RE.finditer(message):
        if match.lastgroup == "number" and (
            _FIGURE_BEFORE_RE.search(message[max(0, match.start() - 16) : match.start()])
            or _FIGURE_AFTER_RE.match(message[match.end() : match.end() + 12])
        ):
            parts.append(match.group(0))
        else:
            parts.append(mask(match))
    return "".join(parts)
