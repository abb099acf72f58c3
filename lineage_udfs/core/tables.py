"""The reliable tier: source and target tables of one parsed statement.

Owns :func:`extract_tables`: one handler per statement kind, chosen by the statement's class
from a dispatch table, names the targets; the statement's other tables are its sources. It
never needs a catalog. It also finds the query that feeds the target and the target's explicit
column list, which the column tier (:mod:`~lineage_udfs.core.columns`) builds on. The
statement type comes from :mod:`~lineage_udfs.core.classify`, names from
:mod:`~lineage_udfs.core.naming`, Commands' tables from :mod:`~lineage_udfs.core.commands`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlglot import exp

from lineage_udfs.core.classify import (
    classify_statement,
    like_or_clone,
    partition_source,
    refreshes_rows,
    select_into,
)
from lineage_udfs.core.commands import command_tables
from lineage_udfs.core.dialects import qualify_parts
from lineage_udfs.core.dml_targets import is_alias_reference, relation_tables, resolve_alias_target
from lineage_udfs.core.enums import ParserName, StatementType
from lineage_udfs.core.naming import (
    NameContext,
    cte_chain_used,
    cte_reference,
    file_function_path,
    location_dataset,
    stage_name,
    used_ctes,
)
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.statements import Chunk
from lineage_udfs.core.tiers import StatementTables
from lineage_udfs.core.variables import assigned_queries, assigns_variables

_GLOBAL_TEMP_DIALECTS = frozenset({"spark", "spark2", "databricks"})


def _unwrap_schema(node: exp.Expr | None) -> tuple[exp.Expr | None, list[str]]:
    if isinstance(node, exp.Schema):
        cols = [
            (c.name if not isinstance(c, exp.ColumnDef) else c.this.name).lower()
            for c in node.expressions
            if isinstance(c, exp.Identifier | exp.Column | exp.ColumnDef)
        ]
        return node.this, cols
    return node, []


@dataclass(slots=True)
class _Build:
    """One statement's table lineage while its handler fills it.

    Attributes:
        target_nodes: table nodes written to (never also sources).
        skip_nodes: ids of nodes that name no source (a path, an alias, a variable …).
    """

    ctx: NameContext
    opts: ParserOptions
    kind: StatementType
    result: StatementTables
    target_nodes: list[exp.Expr] = field(default_factory=list)
    skip_nodes: set[int] = field(default_factory=set)

    def add_target(self, node: exp.Expr | None, *, temporary: bool = False) -> str | None:
        result = self.result
        name = self.ctx.table_name(node) if node is not None else None
        if node is not None:
            self.target_nodes.append(node)
        if name and name not in result.targets:
            result.targets.append(name)
        if name and (temporary or name.startswith("#")) and name not in result.temporary:
            result.temporary.append(name)
        return name


_Handler = Callable[[Any, _Build], bool]
"""Fills the targets of one statement kind (and what its other table nodes are not); True when
the statement is done, False when its remaining tables are then collected as sources."""


def extract_tables(
    statement: exp.Expr,
    ctx: NameContext,
    options: ParserOptions | None = None,
) -> StatementTables:
    """Statement type, sources and targets of one parsed statement.

    The statement's class picks one handler from a dispatch table (one per statement kind:
    query, INSERT, CREATE, MERGE, UPDATE, DELETE, COPY, LOAD DATA, EXPORT DATA, ALTER, DROP,
    TRUNCATE, CACHE, USE, Command, REFRESH, SET / DECLARE); the handler names the targets, and
    unless it says the statement is done, every other table of the statement is a source
    (CTE names, unused CTEs, hints and DML aliases excepted).

    Args:
        statement: a statement parsed by sqlglot.
        ctx: the naming context.
        options: conventions (see :class:`ParserOptions`).

    Returns:
        The table tier's result.

    Examples:
        >>> import sqlglot
        >>> sql = "WITH c AS (SELECT * FROM a) INSERT INTO t SELECT * FROM c JOIN b USING (id)"
        >>> r = extract_tables(sqlglot.parse_one(sql), NameContext())
        >>> r.statement_type, sorted(r.sources), r.targets
        (<StatementType.INSERT: 'INSERT'>, ['a', 'b'], ['t'])
    """
    opts = options or ParserOptions()
    kind = classify_statement(statement)
    build = _Build(ctx, opts, kind, StatementTables(kind))
    handler = _handler(type(statement))
    done = handler(statement, build) if handler is not None else _no_tables(statement, build)
    if not done:
        _collect_sources(statement, build)
    return build.result


class SqlglotTier:
    """The first tier (a :class:`~lineage_udfs.core.tiers.TableTier`): :func:`extract_tables`
    of the tree sqlglot read; None for a statement it did not read.

    Args:
        options: conventions (see :class:`ParserOptions`).
    """

    parser: ClassVar[ParserName] = ParserName.SQLGLOT

    def __init__(self, options: ParserOptions | None = None) -> None:
        self.options = options or ParserOptions()

    def read(self, chunk: Chunk, ctx: NameContext) -> StatementTables | None:
        """The statement's tables (see :func:`extract_tables`)."""
        if chunk.expression is None:
            return None
        return extract_tables(chunk.expression, ctx, self.options)


def _collect_sources(statement: exp.Expr, build: _Build) -> None:
    """Every table of the statement that is not a target, a skipped node, a CTE name, a table
    read only by unused CTEs, a DML alias or a hint's alias; then ClickHouse dictionaries and
    Vertica partition moves."""
    ctx, opts, result = build.ctx, build.opts, build.result
    target_ids = {id(n) for n in build.target_nodes}
    skip_nodes = build.skip_nodes
    # one walk: each table with the CTE it names (None: a table of the catalog)
    tables = [(table, cte_reference(table)) for table in statement.find_all(exp.Table)]
    used = None if opts.include_unused_cte_sources else used_ctes(tables)
    for table, cte in tables:
        if id(table) in target_ids or id(table) in skip_nodes:
            continue
        if cte is not None:
            continue
        if used is not None:
            holder = table.find_ancestor(exp.CTE)
            if holder is not None and not cte_chain_used(holder, used):
                continue
        if is_alias_reference(table, statement):
            continue
        if table.find_ancestor(exp.Hint) is not None:
            continue  # /*+ BROADCAST(b) */ names an alias of the query, not a table
        name = ctx.table_name(table)
        if not name:
            continue
        if name not in result.sources:
            result.sources.append(name)
    for name in _dictionary_sources(statement, ctx):
        if name not in result.sources:
            result.sources.append(name)
    for moved_from, moved_to in _partition_functions(statement, ctx):
        if moved_from not in result.sources:
            result.sources.append(moved_from)
        if moved_to not in result.targets:
            result.targets.append(moved_to)


# ------------------------------------------------------------------ one handler per kind
def _query(statement: exp.Query, b: _Build) -> bool:
    into = select_into(statement)
    b.result.query = statement
    if into is not None and assigns_variables(into, b.ctx):
        b.result.statement_type = StatementType.SELECT
        if into.this is not None:
            b.skip_nodes.add(id(into.this))
    elif into is not None:
        b.add_target(into.this, temporary=bool(into.args.get("temporary")))
    return False


def _insert(statement: exp.Insert, b: _Build) -> bool:
    ctx, result = b.ctx, b.result
    node, cols = _unwrap_schema(statement.this)
    if isinstance(node, exp.Directory):  # INSERT OVERWRITE DIRECTORY 'path'
        path = node.this
        name = (
            location_dataset(str(path.this))
            if ctx.file_datasets and isinstance(path, exp.Literal)
            else None
        )
        if name:
            result.targets.append(name)
    elif isinstance(node, exp.Func):  # ClickHouse INSERT INTO FUNCTION s3('…'): a location
        path = file_function_path(node, ctx.dialect) if ctx.file_datasets else None
        name = location_dataset(path) if path else None
        if name:
            result.targets.append(name)
    else:
        b.add_target(node)
    result.target_columns = cols
    query = statement.expression
    result.query = query if isinstance(query, exp.Query) else None
    return False


def _create(statement: exp.Create, b: _Build) -> bool:
    ctx, result = b.ctx, b.result
    kind_word = (statement.args.get("kind") or "").upper()
    if not (kind_word in ("TABLE", "VIEW") or kind_word.endswith("VIEW")):
        return True  # CREATE FUNCTION / SCHEMA / INDEX …: no lineage
    node, cols = _unwrap_schema(statement.this)
    props = statement.args.get("properties")
    temporary = bool(props and props.find(exp.TemporaryProperty, exp.VolatileProperty))
    to_table = props.find(exp.ToTableProperty) if props is not None else None
    if to_table is not None and isinstance(to_table.this, exp.Table):
        b.add_target(to_table.this)  # ClickHouse MV … TO t: rows land in t
    if (
        temporary
        and props is not None
        and props.find(exp.GlobalProperty)
        and isinstance(node, exp.Table)
        and not node.args.get("db")
        and ctx.dialect in _GLOBAL_TEMP_DIALECTS
    ):
        # Spark GLOBAL TEMPORARY VIEW v: registered (and read) as global_temp.v
        b.skip_nodes.add(id(node))
        node = node.copy()
        node.set("db", exp.to_identifier("global_temp"))
    b.add_target(node, temporary=temporary)
    if (
        b.kind == StatementType.CREATE_VIEW
        or kind_word.endswith("VIEW")
        or (statement.expression is not None)
    ):
        result.target_columns = cols
    query = statement.expression
    result.query = query if isinstance(query, exp.Query) else None
    like = like_or_clone(statement)
    if like is not None:
        name = ctx.table_name(like)
        if name:
            result.sources.append(name)
        b.skip_nodes.add(id(like))
    return False


def _merge(statement: exp.Merge, b: _Build) -> bool:
    name = b.add_target(statement.this)
    if b.opts.update_target_as_source and name and name not in b.result.sources:
        b.result.sources.append(name)
    return False


def _update(statement: exp.Update, b: _Build) -> bool:
    target = resolve_alias_target(statement, statement.this, b.ctx)
    b.add_target(target)
    if target is not statement.this:
        b.skip_nodes.add(id(statement.this))
    if b.opts.update_target_as_source and b.result.targets:
        b.result.sources.append(b.result.targets[0])
    return False


def _delete(statement: exp.Delete, b: _Build) -> bool:
    ctx = b.ctx
    if not b.opts.destructive_statements_as_targets:
        return True
    tables = statement.args.get("tables") or []
    if tables:
        for t in tables:
            b.skip_nodes.add(id(t))
            resolved = resolve_alias_target(statement, t, ctx)
            b.add_target(resolved)
            if resolved is not None:
                b.skip_nodes.add(id(resolved))
        deleted = set(b.result.targets)
        for t in relation_tables(statement):
            if ctx.table_name(t) in deleted:
                b.skip_nodes.add(id(t))
    else:
        resolved = resolve_alias_target(statement, statement.this, ctx)
        b.add_target(resolved)
        if resolved is not statement.this:
            b.skip_nodes.add(id(statement.this))
    return False


def _copy(statement: exp.Copy, b: _Build) -> bool:
    ctx, result = b.ctx, b.result
    node, cols = _unwrap_schema(statement.this)  # COPY t (a, b) …: t and its columns
    if statement.args.get("kind"):  # COPY INTO table FROM files
        b.add_target(node)
        b.target_nodes.append(statement.this)
        result.target_columns = cols
        for f in statement.args.get("files") or []:
            name = _file_name(f, ctx)
            if name:
                result.sources.append(name)
                b.skip_nodes.add(id(f))
    else:  # COPY table TO location, COPY (query) TO location
        name = ctx.table_name(node) if node is not None else None
        if name:
            result.sources.append(name)
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            result.query = node.this
        elif node is not None:
            b.target_nodes.append(node)
        b.target_nodes.append(statement.this)
        for f in statement.args.get("files") or []:
            fname = _file_name(f, ctx)
            if fname:
                result.targets.append(fname)
                b.skip_nodes.add(id(f))
    return False


def _load_data(statement: exp.Expr, b: _Build) -> bool:
    """``LOAD DATA INPATH 'path' INTO TABLE t``, BigQuery ``LOAD DATA … FROM FILES (…)``."""
    ctx, result = b.ctx, b.result
    node, _ = _unwrap_schema(statement.this)
    b.add_target(node)
    b.target_nodes.append(statement.this)
    path = statement.args.get("inpath")
    if isinstance(path, exp.Expr):
        b.skip_nodes.add(id(path))
        if ctx.file_datasets and isinstance(path, exp.Literal) and path.is_string:
            name = location_dataset(str(path.this))
            if name:
                result.sources.append(name)
    for name in _option_uris(statement.args.get("files"), ctx):  # BigQuery FROM FILES(…)
        if name not in result.sources:
            result.sources.append(name)
    return False


def _export(statement: exp.Expr, b: _Build) -> bool:
    """BigQuery ``EXPORT DATA OPTIONS (uri = '…') AS SELECT …``."""
    connection = statement.args.get("connection")
    if isinstance(connection, exp.Expr):
        b.skip_nodes.update(id(t) for t in connection.find_all(exp.Table))
    b.result.targets.extend(_option_uris(statement.args.get("options"), b.ctx))
    query = statement.this
    b.result.query = query if isinstance(query, exp.Query) else None
    return False


def _alter(statement: exp.Alter, b: _Build) -> bool:
    ctx, opts, result, kind = b.ctx, b.opts, b.result, b.kind
    actions = statement.args.get("actions") or []
    old = ctx.table_name(statement.this)
    if kind == StatementType.RENAME:
        new_node = next(a for a in actions if isinstance(a, exp.AlterRename)).this
        new = ctx.table_name(new_node)
        if (
            new
            and old
            and "." not in new.split(".")[-1]
            and not (new_node.args.get("db") or new_node.args.get("catalog"))
        ):
            # an unqualified new name stays in the old name's schema
            prefix = old.rsplit(".", 1)[0] if "." in old else ""
            new = f"{prefix}.{new_node.name.lower()}" if prefix else new
        if opts.rename_as_lineage and old and new:
            result.sources.append(old)
            result.targets.append(new)
        if old and new:
            result.renamed.append((old, new))
        return True
    if kind == StatementType.SWAP:
        other = ctx.table_name(next(a for a in actions if isinstance(a, exp.SwapTable)).this)
        both = [n for n in (old, other) if n]
        result.sources.extend(both)
        result.targets.extend(both)
        return True
    if kind == StatementType.INSERT:  # ALTER TABLE t REPLACE PARTITION p FROM s
        partition = partition_source(statement)
        source = ctx.table_name(partition) if partition is not None else None
        if source and old:
            result.sources.append(source)
            result.targets.append(old)
        return True
    if (
        opts.ddl_as_target
        and old
        and (statement.args.get("kind") or "").upper() in ("TABLE", "VIEW", "")
    ):
        result.targets.append(old)
    return True


def _drop(statement: exp.Drop, b: _Build) -> bool:
    if (statement.args.get("kind") or "").upper() not in ("TABLE", "VIEW", "MATERIALIZED VIEW"):
        return True
    names = [b.ctx.table_name(t) for t in statement.find_all(exp.Table)]
    b.result.dropped = [n for n in names if n]
    if b.opts.destructive_statements_as_targets:
        b.result.targets = list(dict.fromkeys(b.result.dropped))
    return True


def _truncate(statement: exp.TruncateTable, b: _Build) -> bool:
    if b.opts.destructive_statements_as_targets:
        for t in statement.expressions:
            b.add_target(t)
    return True


def _cache(statement: exp.Cache, b: _Build) -> bool:
    b.add_target(statement.this, temporary=True)
    query = statement.expression
    b.result.query = query if isinstance(query, exp.Query) else None
    return False


def _use(statement: exp.Use, b: _Build) -> bool:
    this = statement.this
    if isinstance(this, exp.Table):
        parts = [b.ctx.ident(this.args.get(k)) for k in ("catalog", "db", "this")]
        b.result.use_database = ".".join(p for p in parts if p) or None
    elif this is not None:
        b.result.use_database = b.ctx.ident(this) or None
    return True


def _command(statement: exp.Command, b: _Build) -> bool:
    command_tables(statement, b.kind, b.ctx, b.opts, b.result)
    return True


def _refresh(statement: exp.Expr, b: _Build) -> bool:
    if not refreshes_rows(statement):
        return _no_tables(statement, b)
    if b.opts.ddl_as_target:
        b.add_target(statement.this)
    return True


def _assignment(statement: exp.Set | exp.Declare, b: _Build) -> bool:
    if b.kind != StatementType.SELECT:
        return _no_tables(statement, b)
    # a variable set from a query reads the query's tables (see :mod:`variables`)
    b.result.query = assigned_queries(statement)[0][1]
    return False


def _no_tables(statement: exp.Expr, b: _Build) -> bool:
    """Any other statement: a session statement names no table; else its tables are sources."""
    return b.kind in (StatementType.SESSION, StatementType.UNKNOWN)


_HANDLERS: dict[type[exp.Expr], _Handler] = {
    exp.Query: _query,
    exp.Insert: _insert,
    exp.Create: _create,
    exp.Merge: _merge,
    exp.Update: _update,
    exp.Delete: _delete,
    exp.Copy: _copy,
    exp.Alter: _alter,
    exp.Drop: _drop,
    exp.TruncateTable: _truncate,
    exp.Cache: _cache,
    exp.Use: _use,
    exp.Command: _command,
    exp.Set: _assignment,
    exp.Declare: _assignment,
    **{
        cls: handler
        for cls, handler in (
            (getattr(exp, "LoadData", None), _load_data),
            (getattr(exp, "Export", None), _export),
            (getattr(exp, "Refresh", None), _refresh),
        )
        if isinstance(cls, type)
    },
}
"""The handler of each statement class (the classes are disjoint: no statement has two)."""
_BY_CLASS: dict[type, _Handler | None] = {}


def _handler(cls: type) -> _Handler | None:
    """The handler of a statement class: its own or its nearest base class's (memoized)."""
    if cls not in _BY_CLASS:
        _BY_CLASS[cls] = next((_HANDLERS[c] for c in cls.__mro__ if c in _HANDLERS), None)
    return _BY_CLASS[cls]


_PARTITION_FUNCTIONS = frozenset(
    {"SWAP_PARTITIONS_BETWEEN_TABLES", "COPY_PARTITIONS_TO_TABLE", "MOVE_PARTITIONS_TO_TABLE"}
)


def _partition_functions(statement: exp.Expr, ctx: NameContext) -> list[tuple[str, str]]:
    """Vertica ``SELECT swap_partitions_between_tables('src', min, max, 'dst')`` and friends:
    partitions move from the first table to the last."""
    if not isinstance(statement, exp.Select):
        return []
    out = []
    for func in statement.find_all(exp.Anonymous):
        args = func.expressions
        if func.name.upper() not in _PARTITION_FUNCTIONS or len(args) < 4:
            continue
        names = []
        for arg in (args[0], args[3]):
            if isinstance(arg, exp.Literal) and arg.is_string:
                names.append(
                    qualify_parts(
                        [p.strip('"').lower() for p in arg.this.split(".")],
                        default_catalog=ctx.default_catalog,
                        default_schema=ctx.default_schema,
                    )
                )
        if len(names) == 2:
            out.append((names[0], names[1]))
    return out


_DICT_FUNCTIONS = (
    "DICTGET",
    "DICTHAS",
    "DICTGETHIERARCHY",
    "DICTISIN",
    "DICTGETCHILDREN",
    "DICTGETDESCENDANTS",
    "DICTGETALL",
)


def _dictionary_sources(statement: exp.Expr, ctx: NameContext) -> list[str]:
    """ClickHouse ``dictGet*(dict, …)``: the dictionary is read like a table."""
    if ctx.dialect != "clickhouse":
        return []
    out = []
    for func in statement.find_all(exp.Anonymous):
        fname = func.name.upper()
        if not fname.startswith(_DICT_FUNCTIONS) or not func.expressions:
            continue
        arg = func.expressions[0]
        if isinstance(arg, exp.Literal) and arg.is_string:
            parts = [p.lower() for p in arg.this.split(".")]
        elif isinstance(arg, exp.Column):
            parts = [ctx.ident(p) for p in arg.parts]
        else:
            continue
        out.append(".".join(p for p in parts if p))
    return out


def _option_uris(options: object, ctx: NameContext) -> list[str]:
    """The locations named by ``uri = '…'`` / ``uris = ['…', …]`` options (BigQuery LOAD DATA
    FROM FILES, EXPORT DATA), as datasets."""
    if not isinstance(options, exp.Properties) or not ctx.file_datasets:
        return []
    out: list[str] = []
    for prop in options.expressions:
        if not isinstance(prop, exp.Property) or prop.name.lower() not in ("uri", "uris"):
            continue
        value = prop.args.get("value")
        for item in value.expressions if isinstance(value, exp.Array) else [value]:
            if isinstance(item, exp.Literal) and item.is_string:
                name = location_dataset(str(item.this))
                if name and name not in out:
                    out.append(name)
    return out


def _file_name(node: exp.Expr, ctx: NameContext) -> str | None:
    """A file location as a dataset: a stage ``@s/p``, a table, or a path literal."""
    if isinstance(node, exp.Literal):
        return location_dataset(str(node.this)) if ctx.file_datasets and node.is_string else None
    if isinstance(node, exp.Table):
        if isinstance(node.this, exp.Var):
            return stage_name(node.this.name)
        if isinstance(node.this, exp.Literal):  # Snowflake COPY INTO t FROM 'azure://…'
            return _file_name(node.this, ctx)
        return ctx.table_name(node)
    return None
