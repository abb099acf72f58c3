"""``lineage impact``: what a proposed column change breaks downstream, and who reads it.

A change is a dropped, renamed or retyped column (``--drop-column`` …), an added one, or a SQL
file: ``ALTER TABLE`` statements, or a new ``CREATE VIEW`` / ``CREATE TABLE … AS`` definition
compared with the column edges stored for that table (an output column that disappears is
dropped, one whose inputs differ is redefined, a new one is added).

Every column downstream of a changed one (over ``column_lineage``, breadth first) is

* ``breaking``: it reads the changed column's value, through DIRECT edges only (a copy, a
  transformation, an aggregation or a mask of it);
* ``partial``: it depends on it only through a filter, join, group-by, sort or condition
  (a path with an INDIRECT edge): its rows change, its query still runs;

and every other column of a downstream table is ``not affected``. An added column breaks
nothing. Each row has the shortest path, the table's owner where one is known, and the
**observed consumers**: the users and statements that read the column in the last ``days`` of
the log (``queries`` rows of the fingerprints whose column edges read it; the window ends at the
newest logged query, so an old log still answers).

Statements that read an affected table (a changed column's, or one with a breaking or partial
column) but whose column edges read none of its columns are its **table-level readers**: kept
plain queries (``activity.keep_reads``: a ``SELECT`` has no target, so no column edge), or
statements whose column reads the parser could not follow. They come from the statement's
parse (``parsed_statements.sources``, temporary tables of a script left out) and the same
window of ``queries`` rows, one row per table with impact ``table read``: which of its columns
they use is unknown, so they may break; they do not change the exit code.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from lineage_udfs.cli.catalog import Catalog, draw_column_edges
from lineage_udfs.cli.queries import Answer, Graph, canonical
from lineage_udfs.cli.store import CliError, LineageStore, Row

Col = tuple[str, str]
BREAKING, PARTIAL, NOT_AFFECTED = "breaking", "partial", "not affected"
TABLE_READ = "table read"
"""The impact of a table-level readers row: statements read the table, which columns is
unknown."""
MAX_CONSUMERS = 10
"""Users and statements listed per column (the counts cover all)."""


@dataclass(frozen=True)
class Change:
    """One proposed change: ``kind`` drop / rename / type / redefine / add of ``table.column``
    (``detail``: the new name or type)."""

    kind: str
    table: str
    column: str
    detail: str | None = None

    @property
    def breaks(self) -> bool:
        return self.kind != "add"

    def label(self) -> str:
        name = f"{self.table}.{self.column}"
        return {
            "drop": f"drop {name}",
            "rename": f"rename {name} to {self.detail}",
            "type": f"change the type of {name} to {self.detail}",
            "redefine": f"new definition of {name}",
            "add": f"add {name}",
        }[self.kind]


# --- changes from a SQL file -------------------------------------------------------------------


def changes_from_sql(store: LineageStore, text: str, dialect: str) -> list[Change]:
    """The column changes of ``ALTER TABLE`` statements and new ``CREATE VIEW`` / CTAS
    definitions in ``text``.

    Raises:
        CliError: the file does not parse, or holds a statement that changes no column.
    """
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError

    try:
        statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    except ParseError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise CliError(f"the SQL file does not parse as {dialect}: {first}") from None
    if not statements:
        raise CliError("the SQL file holds no statement")
    changes: list[Change] = []
    for number, statement in enumerate(statements, start=1):
        if isinstance(statement, exp.Alter) and str(statement.args.get("kind")).upper() == "TABLE":
            changes += _alter_changes(statement, number)
        elif isinstance(statement, exp.Create) and statement.expression is not None:
            changes += _definition_changes(store, statement.sql(dialect=dialect), dialect, number)
        else:
            raise CliError(
                f"statement {number} of the SQL file is a {statement.key.upper()}: give"
                " ALTER TABLE, CREATE VIEW or CREATE TABLE ... AS SELECT"
            )
    return changes


def _alter_changes(statement: Any, number: int) -> list[Change]:
    from sqlglot import exp

    table = canonical(statement.this.sql())
    out: list[Change] = []
    for action in statement.args.get("actions") or []:
        if isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() in (
            "COLUMN",
            "COLUMNS",
        ):
            for item in action.args.get("tables") or []:
                names = item.expressions if isinstance(item, exp.Schema) else [item]
                out += [Change("drop", table, canonical(n.name)) for n in names]
        elif isinstance(action, exp.RenameColumn):
            out.append(Change("rename", table, canonical(action.this.name), action.args["to"].name))
        elif isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
            out.append(
                Change("type", table, canonical(action.this.name), action.args["dtype"].sql())
            )
        elif isinstance(action, exp.ColumnDef):
            out.append(Change("add", table, canonical(action.name)))
        elif isinstance(action, exp.Schema):
            out += [Change("add", table, canonical(c.name)) for c in action.expressions]
        else:
            raise CliError(
                f"statement {number} of the SQL file: ALTER TABLE {table} {action.sql()!s:.60}"
                " changes no column this command can follow"
            )
    return out


def _definition_changes(store: LineageStore, sql: str, dialect: str, number: int) -> list[Change]:
    """A new view / CTAS definition against the stored column edges into its target."""
    from lineage_udfs.core.parser import LineageParser

    result = LineageParser().parse(sql, dialect=dialect, catalog=_catalog(store))
    if result.failure is not None or not result.targets:
        why = result.failure.message if result.failure is not None else "no target"
        raise CliError(f"statement {number} of the SQL file: {why}")
    target = result.targets[0]
    new: dict[str, set[tuple[str, str, str, str]]] = defaultdict(set)
    for e in result.column_edges:
        new[e.target_column].add((e.source_table, e.source_column, str(e.transformation_type), ""))
    old: dict[str, set[tuple[str, str, str, str]]] = defaultdict(set)
    for row in store.rows("column_lineage"):
        if row["target_table"] == target and row["target_column"]:
            old[row["target_column"]].add(
                (row["source_table"], row["source_column"], row["transformation_type"], "")
            )
    if not old:
        raise CliError(
            f"statement {number} of the SQL file defines {target}, which the lineage tables do"
            " not know: nothing to compare it with"
        )
    out = [Change("drop", target, c) for c in sorted(set(old) - set(new))]
    out += [Change("redefine", target, c) for c in sorted(set(old) & set(new)) if old[c] != new[c]]
    out += [Change("add", target, c) for c in sorted(set(new) - set(old))]
    return out


def _catalog(store: LineageStore) -> dict[str, dict[str, str]] | None:
    if "catalog_columns" not in store.locations or not store.exists("catalog_columns"):
        return None
    found: dict[str, dict[str, str]] = defaultdict(dict)
    rows = sorted(store.rows("catalog_columns"), key=lambda r: r["ordinal_position"] or 0)
    for row in rows:
        found[row["table_id"]][row["column_name"]] = row["data_type"] or ""
    return dict(found)


# --- owners (optional) -------------------------------------------------------------------------


def owners(store: LineageStore) -> dict[str, str]:
    """OPTIONAL: dataset -> owner, from the ``dataset_owners`` table where the job writes one
    (the activity stage's ownership: owners file, catalog owner, dominant writer). Empty when
    that table is not part of this build or not written yet: the rows then say no owner."""
    if "dataset_owners" not in store.locations or not store.exists("dataset_owners"):
        return {}
    return {r["dataset"]: r["owner"] for r in store.rows("dataset_owners") if r.get("owner")}


# --- the closure, the paths and the readers ---------------------------------------------------


@dataclass
class _Reach:
    """Downstream columns of the changed ones: fewest hops over DIRECT edges only, and over
    any edge, with a shortest path of each kind."""

    direct: dict[Col, list[Col]] = field(default_factory=dict)
    any: dict[Col, list[Col]] = field(default_factory=dict)


def _bfs(succ: dict[Col, set[Col]], starts: Iterable[Col]) -> dict[Col, list[Col]]:
    """Each reached column -> a shortest path to it from one of ``starts`` (smallest names
    first among equals)."""
    paths: dict[Col, list[Col]] = {s: [s] for s in sorted(starts)}
    queue = deque(sorted(paths))
    while queue:
        node = queue.popleft()
        for nxt in sorted(succ.get(node, ())):
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    return paths


def _reach(rows: list[Row], starts: list[Col]) -> _Reach:
    direct: dict[Col, set[Col]] = defaultdict(set)
    every: dict[Col, set[Col]] = defaultdict(set)
    for row in rows:
        if not row["source_column"] or not row["target_column"]:
            continue
        src = (row["source_table"], row["source_column"])
        dst = (row["target_table"], row["target_column"])
        every[src].add(dst)
        if row["transformation_type"] == "DIRECT":
            direct[src].add(dst)
    return _Reach(_bfs(direct, starts), _bfs(every, starts))


def _fingerprints_reading(rows: list[Row]) -> dict[Col, set[str]]:
    reading: dict[Col, set[str]] = defaultdict(set)
    for row in rows:
        if row["source_column"] and row["fingerprint"]:
            reading[(row["source_table"], row["source_column"])].add(row["fingerprint"])
    return reading


@dataclass
class Consumers:
    """Who read a column in the window: users, statements (fingerprints), log rows."""

    users: set[str] = field(default_factory=set)
    statements: set[str] = field(default_factory=set)
    runs: int = 0
    last_read: datetime | None = None

    def as_row(self) -> dict[str, Any]:
        return {
            "users": sorted(self.users)[:MAX_CONSUMERS],
            "user_count": len(self.users),
            "statements": sorted(s[:12] for s in self.statements)[:MAX_CONSUMERS],
            "statement_count": len(self.statements),
            "reads": self.runs,
            "last_read": self.last_read.isoformat(sep=" ") if self.last_read else None,
        }


def _consumers(store: LineageStore, fingerprints: set[str], days: int) -> dict[str, Consumers]:
    """Per fingerprint: the ``queries`` rows of the last ``days`` before the newest one."""
    queries = store.rows("queries")
    times = [q["start_time"] for q in queries if q["start_time"] is not None]
    since = max(times) - timedelta(days=days) if times else None
    out: dict[str, Consumers] = defaultdict(Consumers)
    for q in queries:
        fp = q["fingerprint"]
        if fp not in fingerprints:
            continue
        when = q["start_time"]
        if since is not None and (when is None or when < since):
            continue
        c = out[fp]
        c.statements.add(fp)
        c.runs += 1
        if q["user_name"]:
            c.users.add(q["user_name"])
        if when is not None and (c.last_read is None or when > c.last_read):
            c.last_read = when
    return out


def _table_reading(
    store: LineageStore, tables: set[str], reading: dict[Col, set[str]]
) -> dict[str, set[str]]:
    """Per fingerprint: which of ``tables`` its statement reads (its parse's sources, temporary
    tables of a script left out) without a column edge from any column of that table (column
    reads ``reading``, per column): its table-level reads."""
    if not tables or "parsed_statements" not in store.locations:
        return {}
    if not store.exists("parsed_statements"):  # pragma: no cover - the job writes it first
        return {}
    known: dict[str, set[str]] = defaultdict(set)  # table -> fingerprints reading its columns
    for (table, _), fingerprints in reading.items():
        if table in tables:
            known[table] |= fingerprints
    out: dict[str, set[str]] = {}
    for row in store.rows("parsed_statements", columns=["fingerprint", "sources", "intermediates"]):
        fp = row["fingerprint"]
        sources = set(row["sources"] or ()) - set(row["intermediates"] or ())
        read = {store.node_of(t) for t in sources} & tables
        read = {t for t in read if fp not in known[t]}
        if read:
            out[fp] = read
    return out


def _merged(parts: Iterable[Consumers]) -> Consumers:
    total = Consumers()
    for p in parts:
        total.users |= p.users
        total.statements |= p.statements
        total.runs += p.runs
        if p.last_read is not None and (total.last_read is None or p.last_read > total.last_read):
            total.last_read = p.last_read
    return total


# --- the answer --------------------------------------------------------------------------------

COLUMNS = ["column", "impact", "distance", "path", "owner", "users", "statements", "reads"]


def impact(store: LineageStore, changes: list[Change], days: int = 30) -> tuple[Answer, bool]:
    """The impact of ``changes``: the answer and whether anything breaks."""
    if days < 1:
        raise CliError("--days must be at least 1")
    if not changes:
        raise CliError("no change given: --drop-column, --rename-column, --change-type,"
                       " --add-column or a SQL file")  # fmt: skip
    catalog = Catalog.read(store)
    # over graph nodes: an edge stored under an alias (a path) is an edge of its node
    edges = store.stitched(store.rows("column_lineage"), "source_table", "target_table")
    changed: list[Col] = []
    changes = [replace(c, table=store.follow(c.table)) for c in changes]  # aliases: their node
    for change in changes:
        if change.kind == "add":
            continue
        if change.table not in catalog.kinds:
            catalog.resolve(change.table)  # raises with suggestions
        if change.column not in catalog.columns.get(change.table, set()):
            catalog.resolve(f"{change.table}.{change.column}")
        changed.append((change.table, change.column))
    reach = _reach(edges, changed)
    reading = _fingerprints_reading(edges)
    fingerprints = {fp for col in reach.any for fp in reading.get(col, ())}
    table_reads = _table_reading(store, {t for t, _ in reach.any}, reading)
    wanted = fingerprints | set(table_reads)
    consumers = _consumers(store, wanted, days) if wanted else {}
    owner_of = owners(store)
    downstream_tables = {t for t, _ in reach.any} - {t for t, _ in changed}
    rows: list[Row] = []
    impacts: dict[Col, str] = {}
    for col in sorted(reach.any, key=lambda c: (len(reach.any[c]), c)):
        if col in changed:
            kind, path = "changed", [col]
        elif col in reach.direct:
            kind, path = BREAKING, reach.direct[col]
        else:
            kind, path = PARTIAL, reach.any[col]
        impacts[col] = kind
        who = _merged(consumers[fp] for fp in reading.get(col, ()) if fp in consumers)
        rows.append(_row(col, kind, path, owner_of, who))
    for table in sorted({t for t, _ in reach.any}):
        who = _merged(
            consumers[fp] for fp, read in table_reads.items() if table in read and fp in consumers
        )
        if who.statements:
            rows.append(_table_row(table, owner_of, who))
    for table in sorted(downstream_tables):
        for column in sorted(catalog.columns.get(table, set())):
            if (table, column) not in reach.any:
                impacts[(table, column)] = NOT_AFFECTED
                rows.append(_row((table, column), NOT_AFFECTED, [], owner_of, Consumers()))
    # a dropped, renamed or retyped column that statements read breaks them, even with no
    # column downstream; a redefined one breaks what reads its value downstream
    read_directly = {(c.table, c.column) for c in changes if c.kind in ("drop", "rename", "type")}
    breaking = any(
        r["impact"] == BREAKING
        or (r["impact"] == "changed" and r["statement_count"] and (r["_col"] in read_directly))
        for r in rows
    )
    for r in rows:
        del r["_col"]
    graph = _graph(catalog, edges, reach, impacts, changed)
    counts = {k: sum(1 for r in rows if r["impact"] == k) for k in (BREAKING, PARTIAL)}
    tables = sorted({r["table"] for r in rows if r["impact"] == BREAKING})
    readers = sorted({r["table"] for r in rows if r["impact"] == TABLE_READ})
    title = "impact of " + "; ".join(c.label() for c in changes)
    message = (
        f"{counts[BREAKING]} breaking and {counts[PARTIAL]} partial downstream columns"
        + (f"; breaks tables {', '.join(tables)}" if tables else "")
        + (f"; table-level readers (columns unknown) of {', '.join(readers)}" if readers else "")
        + f" (consumers: the last {days} days of the log)"
    )
    if not changed:
        message = "only added columns: nothing downstream reads them yet, nothing breaks"
    return Answer(title, COLUMNS, rows, graph, message), breaking


def _row(col: Col, kind: str, path: list[Col], owner_of: dict[str, str], who: Consumers) -> Row:
    return {
        "_col": col,
        "column": f"{col[0]}.{col[1]}",
        "table": col[0],
        "impact": kind,
        "level": "column",
        "distance": len(path) - 1 if path else None,
        "path": [f"{t}.{c}" for t, c in path],
        "owner": owner_of.get(col[0]),
        **{k: v for k, v in who.as_row().items()},
    }


def _table_row(table: str, owner_of: dict[str, str], who: Consumers) -> Row:
    """The table-level readers of ``table``: statements that read it, columns unknown."""
    return {
        "_col": (table, None),
        "column": f"{table} (table)",
        "table": table,
        "impact": TABLE_READ,
        "level": "table",
        "distance": None,
        "path": [],
        "owner": owner_of.get(table),
        **who.as_row(),
    }


def _graph(
    catalog: Catalog,
    edges: list[Row],
    reach: _Reach,
    impacts: dict[Col, str],
    changed: list[Col],
) -> Graph:
    focus = changed[0] if changed else (None, None)
    graph = Graph(focus=focus[0], focus_column=focus[1])
    members = set(reach.any)
    for (table, column), kind in impacts.items():
        node = graph.node(table, catalog.kinds)
        node.add_column(column)
        if kind != NOT_AFFECTED:
            graph.marks[(table, column)] = kind
    return draw_column_edges(graph, edges, members)


def markdown(answer: Answer, breaking: bool) -> str:
    """The answer as a Markdown comment for a pull request."""
    verdict = "**Breaking change**" if breaking else "**No breaking change**"
    lines = [f"### {answer.title}", "", f"{verdict}: {answer.message}", ""]
    shown = [r for r in answer.rows if r["impact"] not in (NOT_AFFECTED, TABLE_READ)]
    if shown:
        lines += [
            "| column | impact | path | owner | readers (last window) |",
            "|---|---|---|---|---|",
        ]
        for r in shown:
            path = " → ".join(f"`{p}`" for p in r["path"])
            owner = r["owner"] or "-"
            lines.append(f"| `{r['column']}` | {r['impact']} | {path} | {owner} | {_readers(r)} |")
    by_table = [r for r in answer.rows if r["impact"] == TABLE_READ]
    if by_table:
        lines += [
            "",
            "Table-level readers: statements that read the table, which of its columns unknown"
            " (they may break):",
            "",
            "| table | owner | readers (last window) |",
            "|---|---|---|",
        ]
        for r in by_table:
            lines.append(f"| `{r['table']}` | {r['owner'] or '-'} | {_readers(r)} |")
    unaffected = [r["column"] for r in answer.rows if r["impact"] == NOT_AFFECTED]
    if unaffected:
        lines += ["", f"Not affected: {', '.join(f'`{c}`' for c in unaffected)}"]
    return "\n".join(lines) + "\n"


def _readers(r: Row) -> str:
    readers = ", ".join(r["users"]) or "-"
    if r["user_count"] > len(r["users"]):
        readers += f" and {r['user_count'] - len(r['users'])} more"
    n, reads = r["statement_count"], r["reads"]
    return readers + (
        f"; {n} statement{'' if n == 1 else 's'}, {reads} read{'' if reads == 1 else 's'}"
    )


def parse_column(name: str, option: str) -> Col:
    """``TABLE.COLUMN`` of an option, canonical."""
    table, _, column = canonical(name).rpartition(".")
    if not table or not column:
        raise CliError(f"{option} takes TABLE.COLUMN, not {name!r}")
    return table, column
