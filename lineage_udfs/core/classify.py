"""Statement classification: the :class:`StatementType` of one parsed statement.

Owns :func:`classify_statement` and the tests it makes on a tree (SELECT … INTO, CREATE …
LIKE / CLONE, a partition copied by ALTER, a materialized view's REFRESH); Commands are
classified by :mod:`~lineage_udfs.core.commands`.
"""

from __future__ import annotations

from sqlglot import exp

from lineage_udfs.core.commands import classify_command
from lineage_udfs.core.compat import expression_classes
from lineage_udfs.core.enums import StatementType
from lineage_udfs.core.variables import assigned_queries

_SESSION_TYPES = expression_classes(
    "Set",
    "Use",
    "Show",
    "Describe",
    "Uncache",
    "Refresh",
    "Analyze",
    "Pragma",
    "Transaction",
    "Commit",
    "Rollback",
    "Grant",
    "Revoke",
    "Execute",
    "Declare",
    "Comment",
    "Kill",
    "Summarize",
    "Detach",
    "Attach",
    "Install",
    "Export",
)


_ONE_KIND: tuple[tuple[type[exp.Expr], StatementType], ...] = (
    (exp.Merge, StatementType.MERGE),
    (exp.Update, StatementType.UPDATE),
    (exp.Delete, StatementType.DELETE),
    (exp.Drop, StatementType.DROP),
    (exp.TruncateTable, StatementType.TRUNCATE),
)
"""Statement classes of one statement type whatever they hold."""


def select_into(query: exp.Expr) -> exp.Into | None:
    """The INTO clause of a SELECT … INTO, also on the first branch of a set operation."""
    node = query
    while isinstance(node, exp.SetOperation):
        node = node.this
    into = node.args.get("into") if isinstance(node, exp.Select) else None
    return into if isinstance(into, exp.Into) else None


def classify_statement(statement: exp.Expr) -> StatementType:
    """The statement type of a parsed statement (see :class:`StatementType`).

    Examples:
        >>> import sqlglot
        >>> classify_statement(sqlglot.parse_one("INSERT OVERWRITE TABLE t SELECT 1", read="hive"))
        <StatementType.INSERT_OVERWRITE: 'INSERT_OVERWRITE'>
        >>> classify_statement(sqlglot.parse_one("SET x = 1"))
        <StatementType.SESSION: 'SESSION'>
    """
    if isinstance(statement, exp.Query):
        if select_into(statement) is not None:
            return StatementType.SELECT_INTO
        return StatementType.SELECT
    if isinstance(statement, exp.Insert):
        return (
            StatementType.INSERT_OVERWRITE
            if statement.args.get("overwrite")
            else (StatementType.INSERT)
        )
    if isinstance(statement, exp.Create):
        kind = (statement.args.get("kind") or "").upper()
        if kind in ("TABLE", "VIEW") and (
            statement.expression is not None or like_or_clone(statement) is not None
        ):
            return StatementType.CREATE_VIEW if kind == "VIEW" else StatementType.CTAS
        return StatementType.DDL
    for cls, kind_of_class in _ONE_KIND:
        if isinstance(statement, cls):
            return kind_of_class
    if isinstance(statement, exp.Copy) or type(statement).__name__ == "LoadData":
        return StatementType.COPY
    if type(statement).__name__ == "Export" and isinstance(statement.this, exp.Query):
        return StatementType.COPY  # BigQuery EXPORT DATA OPTIONS (uri = '…') AS SELECT …
    if isinstance(statement, exp.Alter):
        actions = statement.args.get("actions") or []
        if any(isinstance(a, exp.SwapTable) for a in actions):
            return StatementType.SWAP
        if any(isinstance(a, exp.AlterRename) for a in actions):
            return StatementType.RENAME
        if partition_source(statement) is not None:
            return StatementType.INSERT
        return StatementType.DDL
    if isinstance(statement, exp.Cache):
        return StatementType.CTAS if statement.expression is not None else StatementType.SESSION
    if isinstance(statement, exp.Command):
        return classify_command(statement)
    if assigned_queries(statement):
        return StatementType.SELECT  # SET v = (SELECT …): a query, like SELECT … INTO v
    if refreshes_rows(statement):
        return StatementType.INSERT_OVERWRITE
    if isinstance(statement, _SESSION_TYPES):
        return StatementType.SESSION
    return StatementType.UNKNOWN


def refreshes_rows(statement: exp.Expr) -> bool:
    """Whether a statement recomputes a materialized view's (or streaming table's) rows.

    ``REFRESH MATERIALIZED VIEW mv`` rewrites mv from its stored query: mv is the target and
    there is no source, because the inputs are named only by the view's definition (its
    CREATE MATERIALIZED VIEW carries the lineage). The reasoning is ``ddl_as_target``'s: a
    statement that names only the table it changes names it as a target, and with
    ``ddl_as_target=False`` it names nothing. Spark ``REFRESH TABLE t`` (cached metadata
    reloaded, rows unchanged) is not one. sqlglot reads some dialects' REFRESH as a
    ``Refresh`` node and others' as a Command (see :mod:`~lineage_udfs.core.commands`).

    Examples:
        >>> import sqlglot
        >>> [refreshes_rows(sqlglot.parse_one(s, read="databricks")) for s in (
        ...     "REFRESH MATERIALIZED VIEW m.s.mv", "REFRESH TABLE t")]
        [True, False]
    """
    if type(statement).__name__ != "Refresh" or not isinstance(statement.this, exp.Table):
        return False
    kind = str(statement.args.get("kind") or "").upper()
    return kind in ("MATERIALIZED VIEW", "STREAMING TABLE")


def partition_source(alter: exp.Alter) -> exp.Table | None:
    """The table an ALTER copies a partition from (ClickHouse ``REPLACE PARTITION p FROM s``)."""
    for action in alter.args.get("actions") or []:
        source = action.args.get("source") if type(action).__name__ == "ReplacePartition" else None
        if isinstance(source, exp.Table):
            return source
    return None


def like_or_clone(create: exp.Create) -> exp.Table | None:
    clone = create.args.get("clone")
    if clone is not None and isinstance(clone.this, exp.Table):
        return clone.this
    props = create.args.get("properties")
    if props is not None:
        for prop in props.expressions:
            if isinstance(prop, exp.LikeProperty) and isinstance(prop.this, exp.Table):
                return prop.this
    this = create.this
    if isinstance(this, exp.Schema):
        for col in this.expressions:
            if isinstance(col, exp.LikeProperty) and isinstance(col.this, exp.Table):
                return col.this
    return None
