"""``lineage sql``: DataFusion SQL over the lineage tables by plain name, in-process (delta-rs'
``QueryBuilder``), no JVM. Several ``;``-separated statements run one after the other; each
result streams, and only the first ``limit`` rows of each are kept (the rest are counted)."""

from __future__ import annotations

from lineage_udfs.cli.model import Answer
from lineage_udfs.cli.store import CliError, LineageStore, tables_named_in


def split_statements(text: str) -> list[str]:
    """The statements of ``text``, split at ``;`` outside strings, quoted names and comments;
    empty statements are dropped.

    Raises:
        CliError: sqlglot cannot tokenize the text (an unclosed string or comment).
    """
    from lineage_udfs.core.tokens import split_on_semicolons

    pieces = split_on_semicolons(text, None)
    if pieces is None:
        raise CliError("cannot split the SQL into statements: an unclosed string or comment")
    return pieces


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
