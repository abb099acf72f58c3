"""Naming: how a table reference is spelled, and what a name refers to.

Owns :class:`NameContext` (the dialect and the session's default catalog and schema, with the
declared variables of the enclosing script), the names of file locations and stages used as
datasets (:func:`location_dataset`, :func:`file_function_path`, :func:`stage_name`), the CTE a
table name refers to where it stands (:func:`cte_reference`) and which CTEs a statement really
reads (:func:`used_ctes`), and how ``USE`` changes the defaults (:func:`after_use`). Every tier
that names a table goes through here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from sqlglot import exp

from lineage_udfs.core.dialects import normalize_identifier, qualify_parts


@dataclass(frozen=True, slots=True)
class NameContext:
    """How to spell table names: the dialect and the session's default catalog and schema.

    Examples:
        >>> import sqlglot
        >>> ctx = NameContext("snowflake", "db", "sch")
        >>> ctx.table_name(sqlglot.parse_one('SELECT * FROM "Mixed".t', read="snowflake")
        ...                .find(exp.Table))
        'db.Mixed.t'
    """

    dialect: str | None = None
    default_catalog: str | None = None
    default_schema: str | None = None
    file_datasets: bool = True
    variables: frozenset[str] = frozenset()
    """Names the enclosing procedure or script declares as variables or parameters
    (lower-cased): never a table (``SELECT … INTO v``) nor a column (a bare ``v``)."""

    def ident(self, node: exp.Expr | None) -> str:
        """Canonical spelling of an identifier node ('' for None)."""
        if node is None:
            return ""
        if isinstance(node, exp.Identifier):
            name = normalize_identifier(
                node.this, quoted=bool(node.args.get("quoted")), dialect=self.dialect
            )
            if node.args.get("temporary") and not name.startswith("#"):
                name = ("##" if node.args.get("global_") else "#") + name
            return name
        return node.name.lower() if node.name else ""

    def table_name(self, table: exp.Expr) -> str | None:
        """Canonical qualified name of a table reference, or None if it is not a named table."""
        if not isinstance(table, exp.Table):
            return None
        this = table.this
        if (
            isinstance(this, exp.Anonymous)
            and this.name.upper() == "IDENTIFIER"
            and len(this.expressions) == 1
        ):
            this = exp.DynamicIdentifier(this=this.expressions[0])
        if isinstance(this, exp.DynamicIdentifier):
            inner = this.this
            if isinstance(inner, exp.Literal) and inner.is_string:
                parts = [p.strip('"`').lower() for p in inner.this.split(".")]
            elif (
                isinstance(inner, exp.Column)
                and not inner.find(exp.Parameter)
                and inner.name[:1] not in ("$", "@", ":", "?")
            ):
                parts = [self.ident(p) for p in inner.parts]
            else:
                return None
            return (
                qualify_parts(
                    parts,
                    default_catalog=self.default_catalog,
                    default_schema=self.default_schema,
                )
                or None
            )
        if isinstance(this, exp.Var) and this.name.startswith("@"):
            return stage_name(this.name)  # a stage (Snowflake) used as a dataset
        if isinstance(this, exp.Func) and self.file_datasets:  # read_parquet('s3://…')
            path = file_function_path(this, self.dialect)
            if path is not None:
                return location_dataset(path)
        if isinstance(this, exp.Func):  # remote('h', db.t), table_changes('db.t', 1)
            named = self._function_table(this)
            if named:
                return (
                    qualify_parts(
                        named,
                        default_catalog=self.default_catalog,
                        default_schema=self.default_schema,
                    )
                    or None
                )
        if not isinstance(this, exp.Identifier):
            if isinstance(this, exp.Dot):  # a name of four or more parts (linked servers)
                parts = [self.ident(table.args.get("catalog")), self.ident(table.args.get("db"))]
                parts += [self.ident(p) for p in this.flatten() if isinstance(p, exp.Identifier)]
                return ".".join(p for p in parts if p) or None
            return None
        if is_file_path(table):  # parquet.`/path`, FROM 's3://…/x.csv': an external dataset
            return location_dataset(str(this.this)) if self.file_datasets else None
        parts = [self.ident(table.args.get("catalog")), self.ident(table.args.get("db"))]
        if parts[1] == "live" and not parts[0] and self.dialect in _DLT_DIALECTS:
            parts[1] = ""  # Delta Live Tables LIVE.x: table x of the pipeline's own schema
        name = self.ident(this)
        alias = table.args.get("alias")
        if (
            name == "table"
            and not this.args.get("quoted")
            and not any(parts)
            and (isinstance(alias, exp.TableAlias) and alias.this is not None)
        ):
            name = self.ident(alias.this)  # DELETE FROM TABLE t: the keyword, then the name
        if self.dialect == "bigquery" and "$" in name:
            name = name.split("$", 1)[0]  # partition decorator: my_table$20240101
        if not name:
            return None
        if name.startswith("#") or name.startswith("@"):
            return name  # session-local temp tables and table variables are never qualified
        return qualify_parts(
            [*parts, name],
            default_catalog=self.default_catalog,
            default_schema=self.default_schema,
        )

    def _function_table(self, func: exp.Func) -> list[str] | None:
        """The name parts of the table a table function reads, if it reads one named table.

        ClickHouse ``remote|remoteSecure('addr', db.t | db, t [, 'user', …])`` and
        ``cluster|clusterAllReplicas('name', db.t | db, t [, key])`` read table ``db.t`` on
        other servers (the same table name on every shard: the table, not a location);
        ``currentDatabase()`` as the database leaves the name to be qualified as a bare one.
        Databricks ``table_changes('db.t', from [, to])`` reads the change data feed of ``db.t``.

        Examples:
            >>> import sqlglot
            >>> def name(sql, dialect):
            ...     table = sqlglot.parse_one(sql, read=dialect).find(exp.Table)
            ...     return NameContext(dialect, default_schema="d").table_name(table)
            >>> name("SELECT * FROM remote('h:9000', db, t, 'u', 'p')", "clickhouse")
            'db.t'
            >>> name("SELECT * FROM cluster('c', currentDatabase(), t)", "clickhouse")
            'd.t'
            >>> name("SELECT * FROM table_changes('main.sales.orders', 2)", "databricks")
            'main.sales.orders'
        """
        fname = func.name.lower() if isinstance(func, exp.Anonymous) else ""
        args = func.expressions
        if fname == "table_changes" and self.dialect in _DLT_DIALECTS:
            first = args[0] if args else None
            if isinstance(first, exp.Literal) and first.is_string and first.this.strip():
                return [p.strip('`"').lower() for p in split_name(first.this.strip())]
            return None
        if fname not in _REMOTE_TABLE_FUNCTIONS or self.dialect != "clickhouse" or len(args) < 2:
            return None
        first = args[1]
        if isinstance(first, exp.Column) and first.table:
            return [self.ident(p) for p in first.parts]
        if isinstance(first, exp.Literal) and first.is_string and "." in first.this:
            return [p.strip('`"') for p in split_name(first.this)]
        table = args[2] if len(args) > 2 else None
        if isinstance(table, exp.Column) and not table.table:
            name = self.ident(table.this)
        elif isinstance(table, exp.Literal) and table.is_string and table.this:
            name = table.this
        else:
            return None
        if isinstance(first, exp.Column) and not first.table:
            return [self.ident(first.this), name]
        if isinstance(first, exp.Literal) and first.is_string:
            return [first.this, name]
        return [name]  # currentDatabase() or another expression: the session's database


_REMOTE_TABLE_FUNCTIONS = frozenset({"remote", "remotesecure", "cluster", "clusterallreplicas"})


_DLT_DIALECTS = frozenset({"spark", "spark2", "databricks"})
"""Dialects whose logs hold Delta Live Tables pipelines, where ``LIVE.x`` (also inside
``STREAM(LIVE.x)``) names the pipeline's table ``x``: ``live`` is a virtual schema that the
pipeline resolves to its target schema, so the name is qualified like a bare ``x``."""


_FILE_EXTENSION_RE = re.compile(
    r"\.(?:parquet|csv|tsv|json|jsonl|ndjson|orc|avro|txt|xml|xlsx?|gz|zst|snappy|arrow|feather)$",
    re.IGNORECASE,
)


def is_file_path(table: exp.Expr) -> bool:
    """Whether a table reference names a file location (a path literal), not a dataset.

    Spark/Databricks ``parquet.`/data/x```, ``delta.`s3://b/p```, DuckDB ``FROM 'x.csv'``: the
    name is a quoted identifier holding a path or URI. Such names are never reported (they are
    literals of the query, and a path is not a table).

    Examples:
        >>> import sqlglot
        >>> is_file_path(sqlglot.parse_one("SELECT * FROM delta.`/mnt/p`", read="spark")
        ...              .find(exp.Table))
        True
        >>> is_file_path(sqlglot.parse_one("SELECT * FROM db.t").find(exp.Table))
        False
    """
    if not isinstance(table, exp.Table):
        return False
    this = table.this
    if not isinstance(this, exp.Identifier) or not this.args.get("quoted"):
        return False
    name = str(this.this)
    return "/" in name or "\\" in name or bool(_FILE_EXTENSION_RE.search(name))


_FILE_READERS = frozenset(
    {
        "read_parquet", "parquet_scan", "read_csv", "read_csv_auto", "read_json",
        "read_json_auto", "read_ndjson", "read_ndjson_auto", "read_text", "read_blob",
        "read_files", "read_delta", "delta_scan", "iceberg_scan", "openrowset",
    }
)  # fmt: skip


_DIALECT_FILE_READERS: dict[str, dict[str, int]] = {
    "clickhouse": {
        "s3": 0, "s3cluster": 1, "gcs": 0, "url": 0, "urlcluster": 1, "file": 0, "hdfs": 0,
        "hdfscluster": 1, "deltalake": 0, "deltalakes3": 0, "hudi": 0, "iceberg": 0,
        "icebergs3": 0, "cosn": 0, "oss": 0,
    },
}  # fmt: skip
"""Table functions of one dialect that read (or, after INSERT INTO FUNCTION, write) a location,
with the position of the location argument (``s3Cluster(cluster, 'url', …)``: 1)."""


_PARTITION_SEGMENT_RE = re.compile(r"/[^/=]+=[^/]*(?:/.*)?$")


def file_function_path(func: exp.Expr, dialect: str | None) -> str | None:
    """The location read or written by a file table function, if it is a constant.

    DuckDB/Spark readers (``read_parquet('…')``, ``read_files('…')``) in any dialect, and a
    dialect's own ones: ClickHouse ``s3('…')``, ``url('…')``, ``file('…')``, ``hdfs('…')``.

    Examples:
        >>> import sqlglot
        >>> f = sqlglot.parse_one("SELECT * FROM s3('https://h/b/*.csv', 'CSV')",
        ...                       read="clickhouse").find(exp.Table).this
        >>> file_function_path(f, "clickhouse"), file_function_path(f, "duckdb")
        ('https://h/b/*.csv', None)
    """
    if not isinstance(func, exp.Func):
        return None
    name = (func.sql_name() if not isinstance(func, exp.Anonymous) else func.name).lower()
    position = (
        0 if name in _FILE_READERS else _DIALECT_FILE_READERS.get(dialect or "", {}).get(name)
    )
    if position is None:
        return None
    head = None if isinstance(func, exp.Anonymous) else func.this  # Anonymous.this is its name
    args = [head, *func.expressions] if isinstance(head, exp.Expr) else func.expressions
    first = args[position] if len(args) > position else None
    if isinstance(first, exp.Array) and first.expressions:
        first = first.expressions[0]
    if isinstance(first, exp.Literal) and first.is_string:
        return str(first.this)
    return None


def location_dataset(location: str) -> str | None:
    """The dataset name of a file location: where the data lives, nothing that varies per run.

    Keeps the scheme, host and path; drops user credentials (``user:password@``), query
    strings (signatures, tokens) and fragments; cuts the path at the first Hive-style
    ``key=value`` partition segment and at the first glob character, so daily partitions of
    one dataset share a name. A name before ``@`` without a password is kept: it is part of
    the location (the container of ``abfss://container@account.dfs.core.windows.net/p``).

    Examples:
        >>> location_dataset("s3://AKIA:pw@bucket/events/dt=2024-01-01/part-0.parquet?sig=x")
        's3://bucket/events'
        >>> location_dataset("abfss://raw@acct.dfs.core.windows.net/iot/")
        'abfss://raw@acct.dfs.core.windows.net/iot'
        >>> location_dataset("/mnt/raw/orders/*.csv")
        '/mnt/raw/orders'
        >>> location_dataset("@my_stage/path")
        '@my_stage/path'
    """
    text = location.strip()
    if not text:
        return None
    if "://" in text:
        parts = urlsplit(text)
        host = parts.hostname or ""
        if parts.port:
            host = f"{host}:{parts.port}"
        if parts.username and parts.password is None:
            host = f"{parts.username}@{host}"
        text = f"{parts.scheme.lower()}://{host}{parts.path}"
    else:
        text = text.split("?", 1)[0]
    text = _PARTITION_SEGMENT_RE.sub("", text)
    glob = re.search(r"[*\\[{]", text)
    if glob:  # cut at the glob and drop the partial segment before it
        text = text[: glob.start()]
        text = text[: text.rfind("/") + 1] if "/" in text else ""
    text = text.rstrip("/")
    return text or None


def stage_name(reference: str) -> str:
    """The dataset name of a stage reference (Snowflake ``@stage/path``): the stage and its path
    as written, without a trailing ``/`` (``@s/p/`` and ``@s/p`` are one dataset).

    Examples:
        >>> stage_name("@raw.landing/orders/2024/"), stage_name("@~/")
        ('@raw.landing/orders/2024', '@~')
    """
    return reference.rstrip("/") or reference


def cte_reference(table: exp.Table) -> exp.CTE | None:
    """The CTE a table reference names, if it names one visible where it stands.

    CTEs of an enclosing WITH are visible from its body and from later CTEs of the same WITH;
    a CTE is visible inside itself only under WITH RECURSIVE.
    """
    if (
        table.args.get("db")
        or table.args.get("catalog")
        or not isinstance(table.this, exp.Identifier)
    ):
        return None
    name = table.name.lower()
    child: exp.Expr = table
    parent = table.parent
    while parent is not None:
        with_ = parent.args.get("with_") if isinstance(parent, exp.Expr) else None
        if isinstance(with_, exp.With) and child is not with_:
            for cte in with_.expressions:
                if isinstance(cte, exp.CTE) and cte.alias_or_name.lower() == name:
                    return cte
        if isinstance(parent, exp.With):
            recursive = bool(parent.args.get("recursive"))
            for cte in parent.expressions:
                if cte is child:
                    if recursive and isinstance(cte, exp.CTE) and cte.alias_or_name.lower() == name:
                        return cte
                    break
                if isinstance(cte, exp.CTE) and cte.alias_or_name.lower() == name:
                    return cte
            # skip the With's owner: its body is not visible from inside the CTE list
            owner = parent.parent
            child = owner if owner is not None else parent
            parent = owner.parent if owner is not None else None
            continue
        child = parent
        parent = parent.parent
    return None


def split_name(raw: str) -> list[str]:
    """The parts of a dotted name, each possibly quoted (`` `p.d.t` `` is one quoted part)."""
    parts: list[str] = []
    for part in re.findall(r"`[^`]+`|\"[^\"]+\"|\[[^\]]+\]|[^.]+", raw):
        if part.startswith("`") and "." in part:  # BigQuery `project.dataset.table`
            parts.extend(part.strip("`").split("."))
        else:
            parts.append(part)
    return parts


def after_use(ctx: NameContext, statement: exp.Expr, name: str) -> NameContext:
    """The naming context after ``USE [kind] name``: the defaults it sets, by the dialect's
    reading of a one-part name (a database in T-SQL and Snowflake, a schema in Spark and MySQL);
    ``USE WAREHOUSE|ROLE`` changes no name.

    Examples:
        >>> import sqlglot
        >>> use = sqlglot.parse_one("USE sales", read="spark")
        >>> after_use(NameContext("spark", "main", "default"), use, "sales").default_schema
        'sales'
    """
    kind = str(statement.args.get("kind") or "").upper()
    if kind in ("WAREHOUSE", "ROLE", "SECONDARY ROLES"):
        return ctx
    parts = name.split(".")
    if kind in ("DATABASE", "CATALOG"):
        return replace(ctx, default_catalog=parts[-1], default_schema=None)
    if len(parts) >= 2:
        return replace(ctx, default_catalog=parts[-2], default_schema=parts[-1])
    if kind == "SCHEMA":  # USE SCHEMA s: a new schema in the current database
        return replace(ctx, default_schema=parts[0])
    if ctx.dialect in _USE_SETS_CATALOG:
        return replace(ctx, default_catalog=parts[0], default_schema=ctx.default_schema)
    if ctx.dialect in _USE_SETS_SCHEMA:
        return replace(ctx, default_catalog=ctx.default_catalog, default_schema=parts[0])
    if ctx.default_schema is not None:  # USE db: a new database, same schema name
        return replace(ctx, default_catalog=parts[0], default_schema=ctx.default_schema)
    return replace(ctx, default_catalog=None, default_schema=parts[0])


_USE_SETS_CATALOG = frozenset({"tsql", "fabric", "snowflake"})


_USE_SETS_SCHEMA = frozenset(
    {
        "spark",
        "spark2",
        "databricks",
        "hive",
        "mysql",
        "clickhouse",
        "doris",
        "starrocks",
        "trino",
        "presto",
        "athena",
        "duckdb",
    }
)
"""Dialects whose ``USE x`` names a schema/database under the current catalog (elsewhere —
Snowflake, T-SQL, ANSI — a single-part ``USE x`` names the database/catalog)."""


def used_ctes(tables: list[tuple[exp.Table, exp.CTE | None]]) -> set[int]:
    """ids of CTEs reachable from the statement body (not only from unused CTEs), given the
    statement's tables with the CTE each names."""
    refs: dict[int, list[exp.CTE]] = {}  # id(cte or 0 for body) -> referenced CTEs
    for table, cte in tables:
        if cte is None:
            continue
        holder = table.find_ancestor(exp.CTE)
        # a CTE nested in a CTE: attribute to the outermost defining CTE chain step
        refs.setdefault(id(holder) if holder is not None else 0, []).append(cte)
    used: set[int] = set()
    stack = list(refs.get(0, []))
    while stack:
        cte = stack.pop()
        if id(cte) in used:
            continue
        used.add(id(cte))
        stack.extend(refs.get(id(cte), []))
        # CTEs referenced from CTEs nested inside this one
        for inner in cte.find_all(exp.CTE):
            if inner is not cte:
                stack.extend(refs.get(id(inner), []))
    return used


def cte_chain_used(cte: exp.CTE, used: set[int]) -> bool:
    node: exp.Expr | None = cte
    while node is not None:
        if isinstance(node, exp.CTE) and id(node) not in used:
            return False
        node = node.parent
    return True
