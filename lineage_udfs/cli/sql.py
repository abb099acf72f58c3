"""``lineage sql``: DataFusion SQL over the lineage tables by plain name, in-process (delta-rs'
``QueryBuilder``), no JVM. Several ``;``-separated statements run one after the other; each
result streams, and only the first ``limit`` rows of each are kept (the rest are counted)."""

from __future__ import annotations

from lineage_udfs.cli.model import Answer
from lineage_udfs.cli.store import CliError, LineageStore, tables_named_in


def split_statements(text: str) -> list[str]:
    """The statements of ``text``, split at ``;`` outside strings, quoted names and comments
    (sqlglot's tokenizer finds them); empty statements are dropped."""
    from sqlglot.tokens import Tokenizer, TokenType

    try:
        tokens = Tokenizer().tokenize(text)
    except Exception as exc:  # sqlglot's TokenError: an unclosed string or comment
        from lineage_udfs.core.errors import one_line

        raise CliError(f"cannot split the SQL into statements: {one_line(exc)}") from None
    out: list[str] = []
    start = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            out.append(text[start : token.start])
            start = token.end + 1
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


def run(store: LineageStore, text: str, limit: int = 100) -> list[Answer]:
    """Each statement's answer: its columns, at most ``limit`` rows, the total row count.

    Raises:
        CliError: no statement, or a statement names no lineage table it can read.
    """
    statements = split_statements(text)
    if not statements:
        raise CliError("no SQL statement given")
    answers = []
    for number, query in enumerate(statements, 1):
        missing = [t for t in tables_named_in(query) if not store.exists(t)]
        if missing:
            raise CliError(f"statement {number}: no Delta table {', '.join(missing)} yet")
        rows: list[dict[str, object]] = []
        total = 0
        try:
            reader = store.sql_batches(query)
            for batch in reader:
                if len(rows) < limit:
                    rows.extend(batch.slice(0, limit - len(rows)).to_pylist())
                total += batch.num_rows
        except CliError:
            raise
        except Exception as exc:  # DataFusion's planning / execution errors: one line
            from lineage_udfs.core.errors import one_line

            raise CliError(f"statement {number}: {one_line(exc)}") from None
        columns = list(reader.schema.names)
        message = f"{total:,} rows, first {limit:,} shown (--limit N)" if total > limit else None
        title = query if len(query) <= 80 else query[:77] + "..."
        answers.append(Answer(title, columns, rows, message=message, total=total))
    return answers
