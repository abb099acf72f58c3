"""Dialect repairs: rewrites of a statement sqlglot rejected (or kept as a Command), each
read again before the fallback tiers are tried.

Owns :func:`repairs` (the ordered rewrites and the dialect to read each in), the file
statements' standard spelling (:func:`file_statement`), Oracle's ``MERGE … DELETE WHERE``,
MySQL ``REPLACE INTO`` (:func:`replace_as_insert`), ClickHouse mutations
(:func:`mutation_as_update`) and T-SQL compound assignments (:func:`compound_assignments`).
None of them changes where rows come from or go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlglot.tokens import TokenType

from lineage_udfs.core.tokens import tokenize

_COMPOUND_RE = re.compile(r"([\w.\[\]@\"]+)\s*([-+*/%&|^])=(?!=)")
"""T-SQL compound assignment ``SET x += 1``, which sqlglot does not read: becomes ``x = x + 1``."""


_COMPOUND_OPERATORS = tuple(f"{op}=" for op in "-+*/%&|^")


_MUTATION_RE = re.compile(
    r"^\s*ALTER\s+TABLE\s+([\w.`\"]+)(?:\s+ON\s+CLUSTER\s+\S+)?\s+UPDATE\s+", re.IGNORECASE
)


_NAME = r"(?:[\w$#]+|\"[^\"]+\"|`[^`]+`|\[[^\]]+\])(?:\.(?:[\w$#]+|\"[^\"]+\"|`[^`]+`|\[[^\]]+\]))*"


_STORAGE_CLAUSES_RE = re.compile(
    r"^(\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:\w+\s+){0,3}?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    + _NAME
    + r"(?:\s*\((?:[^()']|'(?:[^']|'')*'|\((?:[^()']|'(?:[^']|'')*')*\))*\))?)"
    r"\s+(?!AS\b)[A-Za-z_](?:[^'(;]|\([^()';]*\))*?\s+(AS\s*\(?\s*(?:SELECT|WITH)\b)",
    re.IGNORECASE | re.DOTALL,
)
"""Physical and refresh clauses between a created table's name (and column list) and its AS
query: Oracle ``NOLOGGING PARALLEL 8``, ``TABLESPACE x``, ``BUILD IMMEDIATE REFRESH FAST ON
COMMIT`` …. They say how the rows are stored or refreshed, not where they come from."""


_TRUNCATE_OPTIONS_RE = re.compile(
    r"^(\s*TRUNCATE\s+TABLE\s+" + _NAME + r")\s+[A-Za-z][\w\s]*;?\s*$", re.IGNORECASE
)
"""``TRUNCATE TABLE t REUSE STORAGE`` / ``DROP ALL STORAGE`` / ``PRESERVE MATERIALIZED VIEW LOG``
(Oracle), ``… CASCADE`` / ``RESTART IDENTITY``: options of the truncation."""


_TERADATA_PHRASE_RE = re.compile(
    r"'(?:[^']|'')*'|(?<=[\w)\]\"])(\s*\(\s*(?:(?:TITLE|FORMAT)\s+'(?:[^']|'')*'|"
    r"NAMED\s+(\"[^\"]*\"|\w+))\s*\))",
    re.IGNORECASE,
)


_PARTITION_IF_NOT_EXISTS_RE = re.compile(
    r"(\bPARTITION\s*\((?:[^()']|'(?:[^']|'')*')*\))\s*IF\s+NOT\s+EXISTS\b", re.IGNORECASE
)
"""Hive ``INSERT OVERWRITE TABLE t PARTITION (…) IF NOT EXISTS``: a write condition only."""


_DLT_LIVE_RE = re.compile(
    r"^(\s*CREATE\s+(?:OR\s+REFRESH\s+)?(?:TEMPORARY\s+)?(?:STREAMING\s+)?)LIVE\s+(?=TABLE|VIEW)",
    re.IGNORECASE,
)
"""Databricks Delta Live Tables ``CREATE [OR REFRESH] [TEMPORARY] [STREAMING] LIVE TABLE|VIEW``
(the older spelling of ``CREATE OR REFRESH [STREAMING] TABLE`` / ``MATERIALIZED VIEW``)."""


_DLT_ON_VIOLATION_RE = re.compile(
    r"'(?:[^']|'')*'|(\s+ON\s+VIOLATION\s+(?:DROP\s+ROW|FAIL\s+UPDATE))", re.IGNORECASE
)
"""DLT expectation actions ``CONSTRAINT c EXPECT (…) ON VIOLATION DROP ROW | FAIL UPDATE``:
what the pipeline does with a bad row (a filter or an error), no lineage of its own."""


_SCHEMA_EVOLUTION_RE = re.compile(
    r"^(\s*MERGE\s+)WITH\s+SCHEMA\s+EVOLUTION\s+(?=INTO\b)", re.IGNORECASE
)
"""Databricks ``MERGE WITH SCHEMA EVOLUTION INTO …``: the target may gain the source's new
columns; the rows flow as in any MERGE."""


_TSQL_TABLE_HINT_RE = re.compile(
    r"'(?:[^']|'')*'|(\bWITH\s*\(\s*(?:NOLOCK|TABLOCKX?|ROWLOCK|PAGLOCK|UPDLOCK|HOLDLOCK|XLOCK|"
    r"READPAST|READUNCOMMITTED|READCOMMITTED|REPEATABLEREAD|SERIALIZABLE|NOWAIT|SNAPSHOT|"
    r"KEEPIDENTITY|KEEPDEFAULTS|IGNORE_CONSTRAINTS|IGNORE_TRIGGERS|FORCESEEK|FORCESCAN|INDEX)\b"
    r"[^()']*(?:\([^()']*\)[^()']*)*\))",
    re.IGNORECASE,
)


_STRING = r"'(?:[^'\\]|\\.|'')*'"


_INTO_OUTFILE_RE = re.compile(
    _STRING + r"|\bINTO\s+(?:OUTFILE|DUMPFILE)\s+(" + _STRING + r")(?:\s+(?:CHARACTER\s+SET\s+\w+|"
    r"FIELDS|COLUMNS|LINES|TERMINATED|OPTIONALLY|ENCLOSED|ESCAPED|STARTING|BY|" + _STRING + "))*",
    re.IGNORECASE,
)
"""MySQL ``SELECT … INTO OUTFILE 'file' [FIELDS …] [FROM …]``: the query writes a file."""


_LOAD_INFILE_RE = re.compile(
    r"^\s*LOAD\s+DATA\s+(?:LOW_PRIORITY\s+|CONCURRENT\s+)?(LOCAL\s+)?INFILE\s+("
    + _STRING
    + r")\s+(?:REPLACE\s+|IGNORE\s+)?INTO\s+TABLE\s+([\w.`\"$]+)",
    re.IGNORECASE,
)
"""MySQL ``LOAD DATA [LOCAL] INFILE 'file' INTO TABLE t [FIELDS …] [(cols)] [SET …]``."""


_DIRECTORY_USING_RE = re.compile(
    r"\bDIRECTORY\s*("
    + _STRING
    + r")?\s*USING\s+\w+(?:\s+OPTIONS\s*(\((?:[^()']|"
    + _STRING
    + r")*\)))?",
    re.IGNORECASE,
)
"""Spark ``INSERT OVERWRITE [LOCAL] DIRECTORY ['path'] USING fmt [OPTIONS (…)]``."""


_OPTION_PATH_RE = re.compile(r"(?:\bpath\b|'path')\s*=?\s*(" + _STRING + ")", re.IGNORECASE)


_ON_COMMIT_DROP_RE = re.compile(r"\s+ON\s+COMMIT\s+DROP\b", re.IGNORECASE)
"""Postgres ``CREATE TEMP TABLE … ON COMMIT DROP``: a temp table's lifetime, no lineage."""


_INTO_VARIABLES_RE = re.compile(
    r"'(?:[^']|'')*'|(\bINTO\s+(?:STRICT\s+[\w$:@]+(?:\s*,\s*[\w$:@]+)*|"
    r"[\w$:@]+(?:\s*,\s*[\w$:@]+)+)(?=\s*(?:FROM|WHERE|;|$)))",
    re.IGNORECASE,
)
"""PL/pgSQL ``SELECT … INTO STRICT v`` and ``INTO v, w`` (variable assignments)."""


_BACKTICK_RE = re.compile(r"'(?:[^']|'')*'|`([^`\n]+)`")


_BRACKET_RE = re.compile(r"'(?:[^']|'')*'|(?<![\w)\]])\[([A-Za-z_#@][\w $#@-]*)\]")


def repairs(text: str, dialect: str | None) -> Iterator[tuple[str, str | None]]:
    """Rewrites of a statement the dialect's parser rejected, each with the dialect to read it.

    * Teradata column phrases ``expr (TITLE 'x')`` / ``(FORMAT 'x')`` are display attributes
      sqlglot does not read: they are dropped (no lineage in them); ``expr (NAMED n)`` is an
      alias and becomes ``expr AS n``.
    * Storage and refresh clauses between a created table's name and its AS query
      (``NOLOGGING PARALLEL 8``, ``BUILD IMMEDIATE REFRESH FAST ON COMMIT``) and TRUNCATE
      options (``REUSE STORAGE``) are dropped: they carry no lineage. Also tried when sqlglot
      kept such a CREATE / TRUNCATE as an unparsed Command.
    * A file read or written in a dialect's own spelling is respelled (see
      :func:`file_statement`).
    * Hive ``PARTITION (…) IF NOT EXISTS`` on INSERT OVERWRITE (a write condition) is dropped.
    * Databricks: Delta Live Tables ``CREATE [OR REFRESH] [STREAMING] LIVE TABLE|VIEW`` is read
      without ``LIVE`` (a CTAS or view of the pipeline), expectation actions ``ON VIOLATION
      DROP ROW | FAIL UPDATE`` are dropped, and ``MERGE WITH SCHEMA EVOLUTION INTO`` is read
      as ``MERGE INTO`` (none of them changes where rows come from or go).
    * Postgres ``ON COMMIT DROP`` (a temp table's lifetime, read as a Command) is read as
      ``ON COMMIT DELETE ROWS``. Repairs in the row's own dialect are also tried when sqlglot
      fell back to a Command.
    * Oracle ``MERGE … UPDATE SET … DELETE WHERE (c)`` gets a ``WHEN MATCHED AND (c) THEN
      DELETE`` branch instead (:func:`_merge_delete_where`).
    * PL/pgSQL ``SELECT … INTO STRICT v`` / ``INTO v, w`` assign variables: the INTO
      clause is dropped (the statement still reads its tables; it writes no table).
    * T-SQL table hints after a DML target (``INSERT INTO t WITH (TABLOCK)``), which sqlglot
      reads only after a FROM table, are dropped.
    * Identifiers quoted in a foreign style (`` `x` `` or ``[x]`` where the dialect quotes with
      ``"``, e.g. Hive-style DDL names in Athena, T-SQL brackets in logs tagged Redshift) are
      requoted in the dialect's own style.
    * Finally the text is read with sqlglot's generic dialect, which accepts identifiers that
      are reserved words in a stricter dialect (``SELECT key, value`` in MySQL).
    """
    repaired = file_statement(text)
    repaired = _STORAGE_CLAUSES_RE.sub(r"\1 \2", repaired, count=1)
    repaired = _TRUNCATE_OPTIONS_RE.sub(r"\1", repaired, count=1)
    if dialect == "teradata":
        repaired = _TERADATA_PHRASE_RE.sub(_teradata_phrase, repaired)
    if dialect in ("hive", "spark", "spark2", "databricks"):
        repaired = _PARTITION_IF_NOT_EXISTS_RE.sub(r"\1", repaired)
        repaired = _DLT_LIVE_RE.sub(r"\1", repaired, count=1)
        repaired = _DLT_ON_VIOLATION_RE.sub(lambda m: "" if m.group(1) else m.group(0), repaired)
        repaired = _SCHEMA_EVOLUTION_RE.sub(r"\1", repaired, count=1)
    if "COMMIT" in repaired.upper():
        repaired = _ON_COMMIT_DROP_RE.sub(" ON COMMIT DELETE ROWS", repaired)
    repaired = _merge_delete_where(repaired, dialect)
    if "INTO" in repaired.upper():
        repaired = _INTO_VARIABLES_RE.sub(lambda m: " " if m.group(1) else m.group(0), repaired)
    if dialect in ("tsql", "fabric"):
        repaired = _TSQL_TABLE_HINT_RE.sub(lambda m: "" if m.group(1) else m.group(0), repaired)
    quote = _identifier_quote(dialect)
    if quote == '"':
        if "`" in repaired:
            repaired = _BACKTICK_RE.sub(
                lambda m: f'"{m.group(1)}"' if m.group(1) is not None else m.group(0), repaired
            )
        if "[" in repaired:
            repaired = _BRACKET_RE.sub(
                lambda m: f'"{m.group(1)}"' if m.group(1) is not None else m.group(0), repaired
            )
    if repaired != text:
        yield repaired, dialect
    if dialect is not None:
        yield repaired, None


def _merge_delete_where(text: str, dialect: str | None) -> str:
    """Oracle ``MERGE … WHEN MATCHED THEN UPDATE SET … DELETE WHERE (c)``, which sqlglot does
    not read: the DELETE (of updated rows meeting ``c``) becomes its own branch, ``WHEN
    MATCHED AND (c) THEN DELETE``. It reads the same columns (a filter) and writes no value.

    Examples:
        >>> _merge_delete_where("MERGE INTO t USING s ON (t.k = s.k) WHEN MATCHED THEN UPDATE "
        ...     "SET t.v = s.v DELETE WHERE (s.v > 1) WHEN NOT MATCHED THEN INSERT (k) "
        ...     "VALUES (s.k)", "oracle")
        'MERGE INTO t USING s ON (t.k = s.k) WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN \
MATCHED AND ((s.v > 1)) THEN DELETE WHEN NOT MATCHED THEN INSERT (k) VALUES (s.k)'
    """
    if not _MERGE_HEAD_RE.match(text) or "DELETE" not in text.upper():
        return text
    tokens = tokenize(text, dialect) or []
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif (
            depth == 0
            and tok.text.upper() == "DELETE"
            and 0 < i < len(tokens) - 2
            and (tokens[i + 1].text.upper() == "WHERE" and tokens[i - 1].text.upper() != "THEN")
        ):
            end = i + 2
            level = 0
            while end < len(tokens):
                t = tokens[end]
                if t.token_type == TokenType.L_PAREN:
                    level += 1
                elif t.token_type == TokenType.R_PAREN:
                    level -= 1
                elif level == 0 and (
                    t.text.upper() == "WHEN" or t.token_type == (TokenType.SEMICOLON)
                ):
                    break
                end += 1
            if end == i + 2:
                return text
            condition = text[tokens[i + 2].start : tokens[end - 1].end + 1]
            rest = text[tokens[end].start :] if end < len(tokens) else ""
            head = text[: tok.start].rstrip()
            return f"{head} WHEN MATCHED AND ({condition}) THEN DELETE {rest}".rstrip()
    return text


_MERGE_HEAD_RE = re.compile(r"^\s*MERGE\b", re.IGNORECASE)


def file_statement(text: str) -> str:
    """The standard spelling of a statement that reads or writes a file, where sqlglot reads
    only the standard one: MySQL ``SELECT … INTO OUTFILE 'f'`` becomes ``COPY (SELECT …) TO
    'f'``, ``LOAD DATA INFILE 'f' INTO TABLE t …`` becomes ``LOAD DATA INPATH 'f' INTO TABLE
    t`` (its format, column and SET clauses carry no lineage), and Spark ``DIRECTORY 'p' USING
    fmt OPTIONS (…)`` (or ``OPTIONS ('path' 'p')``) becomes ``DIRECTORY 'p'``.

    Examples:
        >>> file_statement("SELECT a INTO OUTFILE '/x.csv' FIELDS TERMINATED BY ',' FROM t")
        "COPY (SELECT a  FROM t) TO '/x.csv'"
        >>> file_statement("LOAD DATA LOCAL INFILE '/x.csv' IGNORE INTO TABLE t (a, b)")
        "LOAD DATA LOCAL INPATH '/x.csv' INTO TABLE t"
        >>> file_statement("INSERT OVERWRITE DIRECTORY USING csv OPTIONS ('path' '/o') SELECT 1")
        "INSERT OVERWRITE DIRECTORY '/o' SELECT 1"
    """
    load = _LOAD_INFILE_RE.match(text)
    if load is not None:
        return f"LOAD DATA {load.group(1) or ''}INPATH {load.group(2)} INTO TABLE {load.group(3)}"
    paths: list[str] = []

    def outfile(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group(0)
        paths.append(match.group(1))
        return ""

    rest = _INTO_OUTFILE_RE.sub(outfile, text)
    if len(paths) == 1:
        return f"COPY ({rest.strip().rstrip(';').strip()}) TO {paths[0]}"

    def directory(match: re.Match[str]) -> str:
        path = match.group(1)
        if path is None and match.group(2):
            found = _OPTION_PATH_RE.search(match.group(2))
            path = found.group(1) if found else None
        return f"DIRECTORY {path}" if path else match.group(0)

    return _DIRECTORY_USING_RE.sub(directory, text)


def _teradata_phrase(match: re.Match[str]) -> str:
    if not match.group(1):
        return match.group(0)  # a string literal: unchanged
    return f" AS {match.group(2)}" if match.group(2) else ""  # (NAMED n) names the column


def _identifier_quote(dialect: str | None) -> str | None:
    try:
        from sqlglot.dialects.dialect import Dialect

        quotes = Dialect.get_or_raise(dialect).tokenizer_class.IDENTIFIERS
    except Exception:
        return None
    return '"' if '"' in quotes else None


def compound_assignments(text: str) -> str | None:
    """``text`` with T-SQL compound assignments spelled out (``SET x += 1`` becomes ``SET x =
    x + 1``, which sqlglot reads), or None when it holds none.

    Examples:
        >>> compound_assignments("SET @n += 1"), compound_assignments("SELECT a >= 1")
        ('SET @n = @n +  1', None)
    """
    if not _has_compound_operator(text) or not _COMPOUND_RE.search(text):
        return None
    return _COMPOUND_RE.sub(r"\1 = \1 \2 ", text)


def replace_as_insert(text: str) -> str | None:
    """MySQL/SQLite ``REPLACE INTO t …`` spelled as ``INSERT INTO t …`` (None: not one).

    Examples:
        >>> replace_as_insert("REPLACE INTO t SELECT a FROM s")
        'INSERT INTO t SELECT a FROM s'
    """
    head = re.match(r"\s*REPLACE\b(?=\s+INTO\b)", text, re.IGNORECASE)
    return "INSERT" + text[head.end() :] if head else None


def mutation_as_update(text: str) -> str | None:
    """ClickHouse ``ALTER TABLE t [ON CLUSTER c] UPDATE c = x WHERE …`` (a mutation) spelled as
    ``UPDATE t SET c = x WHERE …`` (None: not one).

    Examples:
        >>> mutation_as_update("ALTER TABLE db.t ON CLUSTER c UPDATE v = 1 WHERE k = 2")
        'UPDATE db.t SET v = 1 WHERE k = 2'
    """
    mutation = _MUTATION_RE.match(text)
    if mutation is None:
        return None
    return f"UPDATE {mutation.group(1)} SET {text[mutation.end() :]}"


def _has_compound_operator(text: str) -> bool:
    """Whether ``text`` holds ``+=``, ``-=`` … at all: what :data:`_COMPOUND_RE` needs, found by
    substring search (the regex tries a name at every position of the text).

    Examples:
        >>> _has_compound_operator("SET @n += 1"), _has_compound_operator("SELECT a >= 1")
        (True, False)
    """
    return any(op in text for op in _COMPOUND_OPERATORS)
