"""Read the lineage Delta tables without a JVM (delta-rs), located from the job's config files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage_udfs.core.errors import LineageError, one_line
from lineage_udfs.paths import resolve_path

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
)
"""Every table the job writes (the names of ``lineage_udfs.spark.storage.schemas.TABLES``, without
Spark), in the same order."""

Row = dict[str, Any]


class CliError(LineageError):
    """An error the command reports as one line (exit code 2)."""


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


@dataclass
class LineageStore:
    """The lineage tables, each read once on first use (as pyarrow, then Python rows).

    Attributes:
        locations: table name -> Delta table path or URI.
        on_read: called with a table's name before it is read (progress display).
        storage_options: passed to delta-rs (object-store options; delta-rs also reads the
            usual cloud credentials from the environment itself).
    """

    locations: dict[str, str]
    on_read: Callable[[str], None] | None = None
    storage_options: dict[str, str] | None = None
    _rows: dict[str, list[Row]] = field(default_factory=dict, repr=False)

    def rows(self, table: str) -> list[Row]:
        """Every row of ``table`` as a dict.

        Raises:
            CliError: the table does not exist (the job has not written it yet).
        """
        if table not in self._rows:
            self._rows[table] = self._read(table)
        return self._rows[table]

    def exists(self, table: str) -> bool:
        """Whether ``table`` has a Delta log at its location."""
        from deltalake import DeltaTable

        return bool(DeltaTable.is_deltatable(self.locations[table], self.storage_options))

    def version(self, table: str) -> int:
        """The table's current Delta version."""
        return int(self._table(table).version())

    def _table(self, table: str) -> Any:
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        location = self.locations[table]
        try:
            return DeltaTable(location, storage_options=self.storage_options)
        except TableNotFoundError:
            raise CliError(
                f"no Delta table {table} at {location}: run the extraction job first "
                "(make run), or point --config/--warehouse at its sink"
            ) from None

    def _read(self, table: str) -> list[Row]:
        if self.on_read is not None:
            self.on_read(table)
        return _rows_of(self._table(table))


def _rows_of(table: Any) -> list[Row]:
    """Every row of a ``deltalake.DeltaTable``, through delta-rs' query engine: it applies
    deletion vectors (the job's tables have them on), which ``to_pyarrow_table`` refuses."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    batches = QueryBuilder().register("t", table).execute("SELECT * FROM t")
    return list(pa.table(batches.read_all()).to_pylist())


def open_store(
    config: Sequence[Path] | None = None,
    warehouse: str | None = None,
    on_read: Callable[[str], None] | None = None,
) -> LineageStore:
    """The store for ``--config`` overlays (see :func:`default_config_paths`) and ``--warehouse``.

    Raises:
        CliError: the configuration is invalid or names catalog tables only.
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
    return LineageStore(table_locations(settings.sink, warehouse), on_read=on_read)
