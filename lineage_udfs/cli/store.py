"""Read the lineage Delta tables without a JVM (delta-rs), located from the job's config files.

The reader API (used by the ``lineage`` command, the explore notebook and any other reader):

- :func:`open_store` locates the tables from ``--config`` / ``--warehouse`` and returns a
  :class:`LineageStore`, optionally pinned to a past state (``as_of``).
- :meth:`LineageStore.scan` reads the rows of one table that match a predicate, only the asked
  columns: the predicate is evaluated by delta-rs' DataFusion engine (``DeltaTable.scan``), which
  skips files by their Delta statistics and row groups by their Parquet statistics, applies
  deletion vectors and streams record batches. Memory follows the answer, not the table.
- :meth:`LineageStore.rows` is the same as Python dicts, at most ``limit`` of them.
- :meth:`LineageStore.sql` runs DataFusion SQL over the tables by plain name.
- :meth:`LineageStore.history` is a table's Delta history (newest first).
- :meth:`LineageStore.follow` turns the name a user gave into the name the graph uses: an alias
  of a merged dataset (``dataset_aliases``) becomes its node, and the store remembers it
  (:attr:`LineageStore.followed`) so the answer can say so.

Predicates are DataFusion SQL; build them from values with :func:`eq`, :func:`isin`,
:func:`all_of` and :func:`any_of` (they quote literals), never by pasting user text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_udfs.core.errors import LineageError, one_line
from lineage_udfs.core.identity import AliasLink, resolve
from lineage_udfs.paths import resolve_path

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    from deltalake import DeltaTable

TABLES: tuple[str, ...] = (
    "parsed_statements",
    "queries",
    "table_lineage",
    "column_lineage",
    "quarantine",
    "lineage_runs",
    "lineage_nodes",
    "lineage_paths",
    "table_closure",
    "column_closure",
    "column_tags",
    "graph_components",
    "openlineage_emissions",
    "source_state",
    "catalog_columns",
    "lineage_reconciliation",
    "dataset_activity",
    "dataset_usage",
    "dataset_owners",
    "dataset_expectations",
    "upstream_staleness",
    "openlineage_events",
    "dataset_aliases",
    "openlineage_symlinks",
    "openlineage_claim",
)
"""Every table the job writes (the names of ``lineage_udfs.spark.storage.schemas.TABLES``, without
Spark), in the same order."""

Row = dict[str, Any]


class CliError(LineageError):
    """An error the command reports as one line (exit code 2)."""


@dataclass(frozen=True)
class Followed:
    """A name given as an alias of the graph node ``node``: the answer is for ``node``."""

    name: str
    node: str

    @property
    def note(self) -> str:
        return (
            f"{self.name} is an alias of {self.node} (dataset_aliases): answering for {self.node}"
        )

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "node": self.node}


def plain_name(name: str) -> str:
    """Lower-case, unquoted: the tables store canonical lower-case qualified names."""
    return "".join(ch for ch in name.strip() if ch not in '`"[]').lower()


# --- predicates ----------------------------------------------------------------------------------


def literal(value: Any) -> str:
    """``value`` as a DataFusion SQL literal (strings quoted, quotes doubled)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def eq(column: str, value: Any) -> str:
    """``column = value`` (``IS NULL`` for None)."""
    return f"{column} IS NULL" if value is None else f"{column} = {literal(value)}"


def isin(column: str, values: Iterable[Any]) -> str:
    """``column IN (values)``; FALSE for no value."""
    items = sorted({literal(v) for v in values if v is not None})
    return f"{column} IN ({', '.join(items)})" if items else "FALSE"


def all_of(*predicates: str | None) -> str | None:
    """The conjunction of the predicates that are not None (None when none is)."""
    parts = [p for p in predicates if p]
    return " AND ".join(f"({p})" for p in parts) if parts else None


def any_of(*predicates: str | None) -> str | None:
    """The disjunction of the predicates that are not None (None when none is)."""
    parts = [p for p in predicates if p]
    return " OR ".join(f"({p})" for p in parts) if parts else None


# --- as of ---------------------------------------------------------------------------------------


def parse_as_of(text: str | None) -> int | datetime | None:
    """``--as-of``: a Delta version (digits) or an ISO date / timestamp (UTC when no zone).

    Raises:
        CliError: neither.
    """
    if text is None or not text.strip():
        return None
    value = text.strip()
    if value.isdigit():
        return int(value)
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(
            f"--as-of takes a Delta version (e.g. 12) or an ISO date or timestamp "
            f"(e.g. 2026-11-01 or 2026-11-01T08:00:00Z), not {text!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


# --- locations -----------------------------------------------------------------------------------


def default_config_paths(overlays: Sequence[Path] | None, cwd: Path | None = None) -> list[Path]:
    """``conf/base.yaml`` (when the working directory has one) then the overlays; with no
    overlay, ``conf/local.yaml`` when present: the same default as the job's entry points."""
    root = cwd or Path.cwd()
    paths: list[Path] = []
    base = root / "conf" / "base.yaml"
    if base.is_file():
        paths.append(base)
    if overlays:
        paths.extend(overlays)
    elif (root / "conf" / "local.yaml").is_file():
        paths.append(root / "conf" / "local.yaml")
    return paths


def table_locations(sink: Any, warehouse: str | None = None) -> dict[str, str]:
    """Path of every lineage table, as ``LineageTables.location`` resolves it (relative paths
    as ``lineage_udfs.paths`` resolves them). ``warehouse`` replaces ``sink.base_path``.

    Raises:
        CliError: a table is a catalog table (``sink.database`` or a per-table ``name``): delta-rs
            reads tables by path, so the command needs a ``path`` for it.
    """
    base = (warehouse or sink.base_path).rstrip("/")
    locations: dict[str, str] = {}
    for table in TABLES:
        override = sink.tables.get(table)
        path = override.path if override and override.path else None
        name = override.name if override and override.name else None
        if path is None and (name or sink.database):
            if warehouse:
                path = f"{base}/{table}"
            else:
                raise CliError(
                    f"table {table} is a catalog table ({name or sink.database + '.' + table}); "
                    "the lineage command reads Delta tables by path: pass --warehouse PATH or set "
                    f"sink.tables.{table}.path"
                )
        if path is None:
            path = f"{base}/{table}"
        locations[table] = resolve_path(path)
    return locations


# --- the store -----------------------------------------------------------------------------------


@dataclass
class LineageStore:
    """The lineage tables, opened on first use (each table's Delta log read once).

    Attributes:
        locations: table name -> Delta table path or URI.
        on_read: called with a table's name before it is read (progress display).
        storage_options: passed to delta-rs (object-store options; delta-rs also reads the
            usual cloud credentials from the environment itself).
        as_of: read every table as of this Delta version (int) or time (aware datetime)
            instead of its newest version.
        closure_cap: ``graph.max_closure_per_node`` of the configuration (for messages).
        path_cap: ``graph.max_paths_per_root`` of the configuration (for messages).
        alias_min_confidence: ``graph.alias_min_confidence``: the ``dataset_aliases`` links
            :meth:`follow` follows, as the graph stage merges them.
        followed: the names :meth:`follow` turned into another node, in order.
    """

    locations: dict[str, str]
    on_read: Callable[[str], None] | None = None
    storage_options: dict[str, str] | None = None
    as_of: int | datetime | None = None
    closure_cap: int | None = None
    path_cap: int | None = None
    alias_min_confidence: float = 0.9
    followed: list[Followed] = field(default_factory=list)
    _tables: dict[str, Any] = field(default_factory=dict, repr=False)
    _nodes: dict[str, str] | None = field(default=None, repr=False)

    # names

    def follow(self, name: str) -> str:
        """``name`` (a table, ``TABLE.COLUMN`` or a location; as given, else lower-cased and
        unquoted) as the graph names it. When it, or the table of ``TABLE.COLUMN``, is an alias
        the graph merged into another node (a ``dataset_aliases`` link that holds at
        :attr:`alias_min_confidence`, as the graph stage merges them), the node's name, and the
        store records it in :attr:`followed`; else the name lower-cased and unquoted."""
        given = name.strip()
        plain = plain_name(given)
        nodes = self._alias_nodes()
        for candidate in dict.fromkeys((given, plain)):
            if candidate in nodes:
                return self._followed(candidate, nodes[candidate])
        for candidate in dict.fromkeys((given, plain)):
            table, _, column = candidate.rpartition(".")
            if table and column and table in nodes:
                return self._followed(candidate, f"{nodes[table]}.{column}")
        return plain

    def _followed(self, name: str, answer: str) -> str:
        if name != answer:
            found = Followed(name, answer)
            if found not in self.followed:
                self.followed.append(found)
        return answer

    def node_of(self, name: str) -> str:
        """The graph node of a name as the edge tables store it: itself, unless a
        ``dataset_aliases`` link that holds merges it into another node (as the graph stage
        stitches the edges)."""
        return self._alias_nodes().get(name, name)

    def names_of(self, nodes: Iterable[str]) -> set[str]:
        """Every name the edge tables may store ``nodes`` under: the nodes and their aliases."""
        wanted = set(nodes)
        return wanted | {a for a, n in self._alias_nodes().items() if n in wanted}

    def stitched(self, rows: list[Row], *columns: str) -> list[Row]:
        """``rows`` with the table names in ``columns`` replaced by their graph node
        (:meth:`node_of`); the rows themselves when no alias link holds."""
        nodes = self._alias_nodes()
        if not nodes:
            return rows
        return [{**r, **{c: nodes.get(r[c], r[c]) for c in columns}} for r in rows]

    def _alias_nodes(self) -> dict[str, str]:
        """Name → its graph node, for every name of a ``dataset_aliases`` link that holds."""
        if self._nodes is None:
            self._nodes = {}
            if "dataset_aliases" in self.locations and self.exists("dataset_aliases"):
                self._nodes = resolve(self.alias_links(), self.alias_min_confidence)
        return self._nodes

    def alias_links(self) -> list[AliasLink]:
        """Every row of ``dataset_aliases`` as a link."""
        return [
            AliasLink(
                str(r["alias"]),
                str(r["canonical"]),
                str(r["evidence"]),
                str(r.get("detail") or ""),
                float(r["confidence"] or 0.0),
                str(r["status"]),
            )
            for r in self.rows("dataset_aliases")
        ]

    # reading

    def scan(
        self, table: str, where: str | None = None, columns: Sequence[str] | None = None
    ) -> pa.Table:
        """The rows of ``table`` matching ``where`` (DataFusion SQL), only ``columns``."""
        return plain_types(self._scanner(table, where, columns).read_all())

    def batches(
        self, table: str, where: str | None = None, columns: Sequence[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The same as :meth:`scan`, streamed batch by batch."""
        yield from self._scanner(table, where, columns)

    def rows(
        self,
        table: str,
        where: str | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Row]:
        """Matching rows as dicts (at most ``limit``; the scan stops once it has them)."""
        out: list[Row] = []
        for batch in self._scanner(table, where, columns):
            out.extend(batch.to_pylist())
            if limit is not None and len(out) >= limit:
                return out[:limit]
        return out

    def first(
        self, table: str, where: str | None = None, columns: Sequence[str] | None = None
    ) -> Row | None:
        """One matching row, or None."""
        found = self.rows(table, where, columns, limit=1)
        return found[0] if found else None

    def count(self, table: str, where: str | None = None) -> int:
        """How many rows match ``where``."""
        result = self.sql(
            f"SELECT count(*) AS n FROM {table}" + (f" WHERE {where}" if where else "")
        )
        return int(result.column("n")[0].as_py())

    def sql(self, query: str) -> pa.Table:
        """One DataFusion SQL statement over the tables by plain name (those it names are
        registered, as of :attr:`as_of`)."""
        return plain_types(self.sql_batches(query).read_all())

    def sql_batches(self, query: str) -> Any:
        """The same as :meth:`sql`, as a ``pyarrow.RecordBatchReader``."""
        import pyarrow as pa
        from deltalake import QueryBuilder

        builder = QueryBuilder()
        for name in tables_named_in(query):
            if self.exists(name):
                builder.register(name, self.table(name))
        return pa.RecordBatchReader.from_stream(builder.execute(query))

    # tables

    def exists(self, table: str) -> bool:
        """Whether ``table`` has a Delta log at its location."""
        from deltalake import DeltaTable

        if table in self._tables:
            return True
        return bool(DeltaTable.is_deltatable(self.locations[table], self.storage_options))

    def version(self, table: str) -> int:
        """The version of ``table`` that is read (the newest, or the one as of :attr:`as_of`)."""
        return int(self.table(table).version())

    def history(self, table: str, limit: int | None = None) -> list[Row]:
        """The table's commits, newest first (``version``, ``timestamp`` in ms, ``operation``,
        ...), from its newest version whatever :attr:`as_of`."""
        return list(self._open(table, None).history(limit))

    def table(self, table: str) -> DeltaTable:
        """The ``deltalake.DeltaTable`` of ``table`` at the version read."""
        if table not in self._tables:
            if self.on_read is not None:
                self.on_read(table)
            self._tables[table] = self._open(table, self.as_of)
        return self._tables[table]

    def at(self, table: str, as_of: int | datetime | None) -> DeltaTable | None:
        """``table`` as of another version or time; None when it did not exist yet then."""
        if as_of is not None and isinstance(as_of, datetime):
            created = self.history(table)[-1]
            if as_of.timestamp() * 1000 < int(created["timestamp"]):
                return None
        return self._open(table, as_of)

    def _open(self, table: str, as_of: int | datetime | None) -> DeltaTable:
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError

        location = self.locations[table]
        try:
            dt = DeltaTable(location, storage_options=self.storage_options)
        except TableNotFoundError:
            raise CliError(
                f"no Delta table {table} at {location}: run the extraction job first "
                "(make run), or point --config/--warehouse at its sink"
            ) from None
        if as_of is None:
            return dt
        try:
            dt.load_as_version(as_of)
        except (DeltaError, ValueError, OSError) as exc:
            when = as_of.isoformat() if isinstance(as_of, datetime) else f"version {as_of}"
            raise CliError(
                f"{table} cannot be read as of {when} (versions 0..{dt.version()}; files "
                f"removed by VACUUM cannot be read back): {one_line(exc)}"
            ) from None
        return dt

    def _scanner(self, table: str, where: str | None, columns: Sequence[str] | None) -> Any:
        import pyarrow as pa

        reader = self.table(table).scan(
            columns=list(columns) if columns is not None else None, predicate=where
        )
        return pa.RecordBatchReader.from_stream(reader)  # arro3 -> pyarrow (Arrow C stream)


def plain_types(table: pa.Table) -> pa.Table:
    """``table`` with DataFusion's view types (``string_view``, ``binary_view``) cast to the
    plain ones, which every pyarrow compute function (sorting among them) takes."""
    import pyarrow as pa

    fields = []
    for f in table.schema:
        if f.type == pa.string_view():
            fields.append(f.with_type(pa.string()))
        elif f.type == pa.binary_view():
            fields.append(f.with_type(pa.binary()))
        else:
            fields.append(f)
    schema = pa.schema(fields)
    return table if schema == table.schema else table.cast(schema)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tables_named_in(query: str) -> list[str]:
    """The lineage tables whose plain name appears as a word in ``query``."""
    words = {w.lower() for w in _NAME.findall(query)}
    return [t for t in TABLES if t in words]


def open_store(
    config: Sequence[Path] | None = None,
    warehouse: str | None = None,
    on_read: Callable[[str], None] | None = None,
    as_of: str | int | datetime | None = None,
) -> LineageStore:
    """The store for ``--config`` overlays (see :func:`default_config_paths`) and ``--warehouse``,
    as of ``as_of`` (a version, a datetime, or ``--as-of`` text; None: the newest).

    Raises:
        CliError: the configuration is invalid, names catalog tables only, or ``as_of`` is
            neither a version nor a time.
    """
    from lineage_udfs.settings import load_settings

    for path in config or ():
        if not Path(path).is_file():
            raise CliError(f"config file {path} does not exist")
    paths = default_config_paths(config)
    try:
        settings = load_settings(paths)
    except LineageError as exc:
        raise CliError(one_line(exc)) from None
    when = parse_as_of(as_of) if isinstance(as_of, str) else as_of
    return LineageStore(
        table_locations(settings.sink, warehouse),
        on_read=on_read,
        as_of=when,
        closure_cap=settings.graph.max_closure_per_node,
        path_cap=settings.graph.max_paths_per_root,
        alias_min_confidence=settings.graph.alias_min_confidence,
    )
