"""Expressions: which source columns an expression reads, and how.

Owns :class:`ExpressionReader`: :meth:`~ExpressionReader.expr_deps` walks an expression and
gives each (table, column) it reads with the subtype of the read; a column name is resolved
against the relations in scope (:meth:`~ExpressionReader.resolve_column`: qualified names,
USING columns, lateral aliases, declared variables and pseudo-columns that are no column).
Subqueries are read by :meth:`~ExpressionReader.query`, which
:class:`~lineage_udfs.core.queries.Resolver` implements.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from sqlglot import exp
from sqlglot.errors import ParseError

from lineage_udfs.core.catalog import CatalogIndex
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.naming import NameContext
from lineage_udfs.core.relations import Dep, Source, qualified_source
from lineage_udfs.core.subtypes import (
    INDIRECT_SUBTYPES,
    LEAF,
    PLAIN_KINDS,
    UNKNOWN,
    SubFn,
    as_direct,
    carries_value,
    compose,
    cond_ctx,
    filter_ctx,
    is_masking,
    is_ordered_set,
    plain_kind,
    selector_args,
    sort_ctx,
    step,
    window_ctx,
)

_CASTS = (exp.Cast, exp.TryCast)


class ExpressionReader(ABC):
    """Reads the columns of expressions in one statement; collects its INDIRECT uses.

    Attributes:
        ctx: the naming context.
        catalog: known table columns.
        indirect: the statement's INDIRECT dependencies (filters, joins, grouping …), which
            apply to every output column.
    """

    def __init__(
        self,
        ctx: NameContext,
        catalog: CatalogIndex,
        conditions_as_direct: bool = False,
        masking_functions: Iterable[str] = (),
    ) -> None:
        self.ctx = ctx
        self._masking = frozenset(masking_functions)
        self._cond = as_direct if conditions_as_direct else cond_ctx
        self._window = as_direct if conditions_as_direct else window_ctx
        self._sort = as_direct if conditions_as_direct else sort_ctx
        self.catalog = catalog
        self.indirect: set[Dep] = set()

    def _configured_mask(self, node: exp.Expr) -> bool:
        """``node`` is a (non-aggregate) function ``ParserOptions.masking_functions`` names."""
        return (
            isinstance(node, exp.Func)
            and not isinstance(node, exp.AggFunc)
            and is_masking(node, self._masking)
        )

    def _test_fn(self, results: Iterable[exp.Expr | None]) -> SubFn:
        """How the tests of a conditional (CASE/IF/DECODE/NVL2 conditions, ``count_if``'s
        predicate) reach the output, given the conditional's possible results.

        A conditional whose results are all constants (``CASE WHEN x > 0 THEN 'pos' ELSE 'neg'
        END``, ``IF(a IS NULL, 1, 0)``, ``count_if(c)``) maps the tested values onto constants:
        the output is derived from the tested columns and from nothing else, which is DIRECT
        (TRANSFORMATION, or AGGREGATION under an aggregate) by OpenLineage's definition. Where
        a result carries a column or a subquery, the tests only choose which value flows:
        INDIRECT CONDITIONAL (unless ``conditions_as_direct``).
        """
        if any(carries_value(r) for r in results):
            return self._cond
        return as_direct

    # ---------------------------------------------------------------- naming
    def col_name(self, node: exp.Expr | None) -> str:
        return self.ctx.ident(node) if node is not None else ""

    def output_name(self, projection: exp.Expr, index: int) -> str:
        if isinstance(projection, exp.Alias):
            return self.col_name(projection.args.get("alias")) or f"_col_{index}"
        if isinstance(projection, exp.Column):
            return self.col_name(projection.this) or f"_col_{index}"
        if isinstance(projection, exp.Dot):
            return self.col_name(projection.expression) or f"_col_{index}"
        if isinstance(projection, exp.Cast | exp.TryCast) and isinstance(
            projection.this, exp.Column
        ):
            return self.col_name(projection.this.this) or f"_col_{index}"
        return f"_col_{index}"

    @abstractmethod
    def query(self, node: exp.Expr, outer: list[dict[str, Source]]) -> Source:
        """Outputs of a query, ``outer`` being the scopes it may read (correlated columns)."""

    def add_indirect(
        self,
        node: exp.Expr,
        env: list[dict[str, Source]],
        subtype: Sub,
        aliases: dict[str, frozenset[Dep]] | None = None,
    ) -> None:
        for t, c, s in self.expr_deps(node, env, subtype, aliases=aliases, prefer_alias=True):
            self.indirect.add((t, c, compose(subtype, s)))

    def add_indirect_name(self, name: str, sources: dict[str, Source], subtype: Sub) -> None:
        for src in sources.values():
            cols = src.columns()
            if cols is None or name in cols:
                for t, c, _ in src.lookup(name) or ():
                    self.indirect.add((t, c, subtype))

    def expr_deps(
        self,
        node: exp.Expr,
        env: list[dict[str, Source]],
        ctx: Sub,
        *,
        aliases: dict[str, frozenset[Dep]] | None = None,
        using: set[str] | None = None,
        prefer_alias: bool = False,
    ) -> set[Dep]:
        """The source columns ``node`` reads, each with the subtype of the read.

        A depth-first walk over the expression (an explicit stack, not recursion: generated
        SQL nests deeply). Each node is visited with the subtype its position gives, starting
        from ``ctx``; a node's children get that subtype composed (:func:`compose`) with what
        the node does to them. Most classes decide alone (:func:`plain_kind`, memoized per
        class): an aggregate gives AGGREGATION, a masking function MASKED, any other function
        or operator TRANSFORMATION, an alias or parentheses pass the subtype on, a literal
        ends the walk. The rest are read node by node:

        * a column is resolved against ``env`` (:meth:`resolve_column`) and each of its
          dependencies composed with the current subtype;
        * a subquery gives its first output column's dependencies; under EXISTS / IN they are
          CONDITIONAL (the subquery decides which rows, not their values);
        * CASE / IF / DECODE: the results are TRANSFORMATION, the tests CONDITIONAL when a
          result carries a column or a subquery, else DIRECT (the output is a value mapping of
          the tested columns; see :meth:`_test_fn`);
        * a window's function is AGGREGATION, its PARTITION BY / ORDER BY WINDOW;
        * ORDER BY inside an aggregate and ``LISTAGG(…) WITHIN GROUP (ORDER BY z)`` make z
          SORT, but an ordered-set aggregate (``PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY
          x)``) aggregates x;
        * selector arguments (:func:`selector_args`): the key of ``max_by`` / ``argMax`` is
          SORT; the condition of ``count_if`` / ``sumIf`` and the test of ``NVL2`` are
          CONDITIONAL (DIRECT when only constants are chosen);
        * an aggregate's ``FILTER (WHERE …)`` is FILTER.

        An INDIRECT subtype, once reached, is kept by everything below it. With
        ``conditions_as_direct`` the CONDITIONAL, WINDOW and SORT reads above are DIRECT
        TRANSFORMATION instead (the peers' convention).

        Args:
            node: the expression.
            env: the scopes visible from it, innermost first (each maps a relation's key to
                the relation; keys starting ``"\\x01col:"`` name a column of a table function).
            ctx: the subtype of the position ``node`` stands in (IDENTITY for a projection,
                FILTER for a WHERE condition …).
            aliases: the SELECT's earlier output names with their dependencies (lateral
                column aliases; HAVING / ORDER BY may name an output).
            using: the names of USING / NATURAL join columns (read from every side).
            prefer_alias: an output alias wins over a column of the same name (GROUP BY,
                ORDER BY, HAVING).

        Returns:
            ``(table, column, subtype)`` for each source column read (unordered, no repeats).

        Examples:
            >>> import sqlglot
            >>> from lineage_udfs.core.queries import Resolver
            >>> reader = Resolver(NameContext(), CatalogIndex())
            >>> env = [{"s": Source(table="s")}]
            >>> sql = "CASE WHEN k = 'r' THEN -amount ELSE amount END"
            >>> sorted((t, c, s.value) for t, c, s in reader.expr_deps(
            ...     sqlglot.parse_one(sql), env, Sub.IDENTITY))
            [('s', 'amount', 'TRANSFORMATION'), ('s', 'k', 'CONDITIONAL')]
            >>> sorted((t, c, s.value) for t, c, s in reader.expr_deps(
            ...     sqlglot.parse_one("sum(md5(v))"), env, Sub.IDENTITY))
            [('s', 'v', 'MASKED')]
        """
        out: set[Dep] = set()
        stack: list[tuple[exp.Expr, Sub]] = [(node, ctx)]
        while stack:
            item, sub = stack.pop()
            if type(item) in _CASTS and self._keeps_type(item, env, aliases, using, prefer_alias):
                stack.append((item.this, sub))
                continue
            if self._masking and self._configured_mask(item):
                # a configured masking function, which its class alone does not tell
                stack.extend(
                    (arg, step(sub, Sub.MASKED))
                    for arg in item.iter_expressions()
                    if not isinstance(arg, exp.DataType | exp.Identifier | exp.Var)
                )
                continue
            plain = PLAIN_KINDS.get(type(item), UNKNOWN)
            if plain is UNKNOWN:
                plain = plain_kind(type(item))
            if plain is not None:  # the common case: a node whose class alone says what to do
                if plain is LEAF:
                    continue
                child_sub = step(sub, plain) if isinstance(plain, Sub) else sub
                for child in item.iter_expressions():
                    if not isinstance(child, exp.DataType | exp.Identifier | exp.Var):
                        stack.append((child, child_sub))
                continue
            if isinstance(item, exp.Column):
                if isinstance(item.this, exp.Star):
                    continue
                for t, c, s in self.resolve_column(item, env, aliases, using, prefer_alias):
                    out.add((t, c, compose(sub, s)))
                continue
            if isinstance(item, exp.Query):
                src = self.query(item, env)
                first = (src.outputs or [("", frozenset())])[0][1]
                inner = (
                    sub
                    if not isinstance(item.parent, exp.Exists | exp.In)
                    else (Sub.CONDITIONAL if sub not in INDIRECT_SUBTYPES else sub)
                )
                for t, c, s in first:
                    out.add((t, c, compose(inner, s)))
                continue
            if isinstance(item, exp.Case):
                ifs = item.args.get("ifs") or []
                cond = self._test_fn([*(b.args.get("true") for b in ifs), item.args.get("default")])
                if item.this is not None:
                    stack.append((item.this, cond(sub, Sub.CONDITIONAL)))
                for branch in ifs:
                    stack.append((branch.this, cond(sub, Sub.CONDITIONAL)))
                    if branch.args.get("true") is not None:
                        stack.append((branch.args["true"], step(sub, Sub.TRANSFORMATION)))
                if item.args.get("default") is not None:
                    stack.append((item.args["default"], step(sub, Sub.TRANSFORMATION)))
                continue
            if type(item).__name__ == "DecodeCase" and len(item.expressions) >= 3:
                # DECODE(x, k1, r1, …, default): x and the keys are compared (a CASE x WHEN k1
                # THEN r1 …); only the results and the default are values of the output
                operand, *rest = item.expressions
                is_key = [i % 2 == 0 and i + 1 < len(rest) for i in range(len(rest))]
                cond = self._test_fn([a for a, k in zip(rest, is_key, strict=True) if not k])
                stack.append((operand, cond(sub, Sub.CONDITIONAL)))
                for arg, key in zip(rest, is_key, strict=True):
                    stack.append(
                        (
                            arg,
                            cond(sub, Sub.CONDITIONAL) if key else (step(sub, Sub.TRANSFORMATION)),
                        )
                    )
                continue
            if isinstance(item, exp.If):
                cond = self._test_fn([item.args.get("true"), item.args.get("false")])
                stack.append((item.this, cond(sub, Sub.CONDITIONAL)))
                for branch in ("true", "false"):
                    if item.args.get(branch) is not None:
                        stack.append((item.args[branch], step(sub, Sub.TRANSFORMATION)))
                continue
            if isinstance(item, exp.Window):
                stack.append((item.this, step(sub, Sub.AGGREGATION)))
                for p in item.args.get("partition_by") or []:
                    stack.append((p, self._window(sub, Sub.WINDOW)))
                order = item.args.get("order")
                if order is not None:
                    stack.append((order, self._window(sub, Sub.WINDOW)))
                continue
            if isinstance(item, exp.Order):
                # ORDER BY inside an aggregate (ARRAY_AGG(y ORDER BY z), STRING_AGG, LISTAGG …
                # WITHIN GROUP): z orders the values, it is not one of them
                if item.this is not None:
                    stack.append((item.this, sub))
                for ordered in item.expressions:
                    stack.append((ordered, self._sort(sub, Sub.SORT)))
                continue
            if isinstance(item, exp.WithinGroup):
                stack.append((item.this, sub))
                order = item.expression
                if isinstance(order, exp.Order):
                    # an ordered-set aggregate (PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x))
                    # aggregates its ORDER BY column; LISTAGG(y) WITHIN GROUP only sorts by it
                    key_sub = (
                        step(sub, Sub.AGGREGATION)
                        if is_ordered_set(item.this)
                        else (self._sort(sub, Sub.SORT))
                    )
                    for ordered in order.expressions:
                        stack.append((ordered, key_sub))
                continue
            selector = selector_args(item)
            if selector is not None:
                # max_by(v, key) / argMax: key picks the row; count_if(cond), sumIf(v, cond):
                # cond picks the rows; NVL2(test, a, b): test picks the branch
                values, keys, key_kind = selector
                value_sub = step(
                    sub, Sub.TRANSFORMATION if isinstance(item, exp.Nvl2) else (Sub.AGGREGATION)
                )
                key_fn = self._sort if key_kind is Sub.SORT else self._test_fn(values)
                for arg in values:
                    stack.append((arg, value_sub))
                for arg in keys:
                    stack.append((arg, key_fn(value_sub, key_kind)))
                continue
            if isinstance(item, exp.Filter):
                stack.append((item.this, sub))
                if item.expression is not None:
                    stack.append((item.expression, filter_ctx(sub)))
                continue
            if isinstance(item, exp.Alias | exp.Paren | exp.Distinct | exp.Ordered):
                child_sub = sub
            elif isinstance(item, exp.AggFunc):
                child_sub = step(sub, Sub.AGGREGATION)
            elif is_masking(item, self._masking):
                child_sub = step(sub, Sub.MASKED)
            elif isinstance(item, exp.Literal | exp.Null | exp.Boolean | exp.Placeholder):
                continue
            else:
                child_sub = step(sub, Sub.TRANSFORMATION)
            for child in item.iter_expressions():
                if isinstance(child, exp.DataType | exp.Identifier | exp.Var):
                    continue
                stack.append((child, child_sub))
        return out

    def _keeps_type(
        self,
        cast: exp.Expr,
        env: list[dict[str, Source]],
        aliases: dict[str, frozenset[Dep]] | None,
        using: set[str] | None,
        prefer_alias: bool,
    ) -> bool:
        """Whether ``cast`` converts one column to the type the catalog declares for it.

        Such a cast changes nothing (Spark's analyser removes it), so its column passes on
        with the subtype it has. Only a single catalog column read as is (IDENTITY) qualifies;
        with no catalog, no declared type, or a type that does not parse, a cast stays a
        TRANSFORMATION."""
        operand, to = cast.this, cast.args.get("to")
        if not self.catalog or not isinstance(operand, exp.Column) or to is None:
            return False
        deps = self.resolve_column(operand, env, aliases, using, prefer_alias)
        if len(deps) != 1:
            return False
        table, column, sub = next(iter(deps))
        declared = self.catalog.column_type(table, column)
        if sub is not Sub.IDENTITY or not declared:
            return False
        try:
            return bool(exp.DataType.build(declared, dialect=self.ctx.dialect) == to)
        except (ParseError, ValueError):
            return False

    def resolve_column(
        self,
        column: exp.Column,
        env: list[dict[str, Source]],
        aliases: dict[str, frozenset[Dep]] | None,
        using: set[str] | None,
        prefer_alias: bool,
    ) -> frozenset[Dep]:
        name = self.col_name(column.this)
        parts = [self.col_name(p) for p in column.parts]
        qualifier_parts = parts[:-1]
        if qualifier_parts:
            for level in env:
                src = qualified_source(level, qualifier_parts)
                if src is not None:
                    deps = src.lookup(name)
                    return deps if deps is not None else frozenset()
            # a struct field: the first part names a column (BigQuery a.b.c, Spark s.f)
            root = parts[0]
            for level in env:
                if len(qualifier_parts) >= 2:
                    src = qualified_source(level, [qualifier_parts[0]])
                    if src is not None:
                        deps = src.lookup(qualifier_parts[1])
                        return deps if deps is not None else frozenset()
                found = self._unqualified(root, level, using)
                if found is not None:
                    return found
            return frozenset()
        if _is_pseudo_column(column, self.ctx.dialect):
            return frozenset()
        if prefer_alias and aliases and name in aliases:
            return aliases[name]
        if (
            aliases
            and name in aliases
            and self.ctx.dialect in _LATERAL_ALIAS_DIALECTS
            and not (
                f"\x01col:{name}" in env[0]
                or any(s.has(name) for k, s in env[0].items() if not k.startswith("\x01"))
            )
        ):
            # a lateral column alias (SELECT a * b AS x, x + 1 AS y): the earlier output,
            # unless a relation of this SELECT is known to have a column of that name
            return aliases[name]
        if (
            name in self.ctx.variables
            and self.ctx.dialect not in _VARIABLES_NEED_PREFIX
            and not (
                any(
                    s.has(name)
                    for level in env
                    for k, s in level.items()
                    if not k.startswith("\x01")
                )
            )
        ):
            return frozenset()  # a procedure parameter or variable, not a column
        for level in env:
            found = self._unqualified(name, level, using)
            if found is not None:
                return found
            if aliases is not None and name in aliases and level is env[0]:
                return aliases[name]
        if aliases and name in aliases:
            return aliases[name]
        return frozenset()

    def _unqualified(
        self, name: str, level: dict[str, Source], using: set[str] | None
    ) -> frozenset[Dep] | None:
        udtf_col = level.get(f"\x01col:{name}")
        if udtf_col is not None:
            return udtf_col.udtf
        rels = [s for k, s in level.items() if not k.startswith("\x01")]
        if not rels:
            return None
        if len(rels) == 1:
            src = rels[0]
            if src.udtf is not None:
                return src.udtf
            if src.has(name) is False:
                return None
            return src.lookup(name)
        if using and name in using:
            # USING / NATURAL join column: the value comes from every side that has it
            merged: set[Dep] = set()
            for s in rels:
                if s.udtf is None and s.has(name) is not False:
                    merged.update(s.lookup(name) or ())
            return frozenset(merged)
        having = [s for s in rels if s.has(name)]
        if len(having) == 1:
            return having[0].lookup(name)
        if having:
            return None  # ambiguous
        unknown = [s for s in rels if s.has(name) is None and s.udtf is None]
        if len(unknown) == 1:
            return unknown[0].lookup(name)
        return None


_PSEUDO_COLUMNS: dict[str | None, frozenset[str]] = {
    "oracle": frozenset(
        {
            "level",
            "rownum",
            "rowid",
            "connect_by_isleaf",
            "connect_by_iscycle",
            "ora_rowscn",
            "sysdate",
            "systimestamp",
            "user",
            "uid",
            "sessiontimezone",
            "dbtimezone",
        }
    ),
    "postgres": frozenset({"user", "current_role", "current_user", "session_user"}),
    "redshift": frozenset({"user", "current_user", "session_user", "sysdate"}),
    "mysql": frozenset({"utc_date", "utc_time", "utc_timestamp"}),
}
"""Bare keywords that sqlglot reads as columns but that name a value of the session or of the
row's position (Oracle LEVEL / ROWNUM / ROWID, Postgres ``user``, MySQL UTC_DATE): never a
table column. A quoted identifier is a column."""


_HIERARCHY_PSEUDO_COLUMNS = frozenset({"level", "connect_by_isleaf", "connect_by_iscycle"})
"""Pseudo-columns of a CONNECT BY query in any dialect that has one (Snowflake, Oracle)."""


def _is_pseudo_column(column: exp.Column, dialect: str | None) -> bool:
    ident = column.this
    if column.table or not isinstance(ident, exp.Identifier) or ident.args.get("quoted"):
        return False
    name = ident.name.lower()
    if name in _PSEUDO_COLUMNS.get(dialect, frozenset()):
        return True
    if name in _HIERARCHY_PSEUDO_COLUMNS:
        select = column.find_ancestor(exp.Select)
        return select is not None and select.args.get("connect") is not None
    return False


_LATERAL_ALIAS_DIALECTS = frozenset(
    {"snowflake", "databricks", "spark", "redshift", "duckdb", "clickhouse", "teradata"}
)
"""Dialects where a projection may name an earlier projection's alias (Snowflake, Spark 3.4+ /
Databricks, Redshift, DuckDB, ClickHouse, Teradata; not BigQuery, Postgres, MySQL, T-SQL,
Oracle, Trino or Hive). The engine resolves the name as a column first, so the alias wins only
when no relation is known to have that column."""


_VARIABLES_NEED_PREFIX = frozenset({"snowflake", "tsql", "fabric"})
"""Dialects whose SQL statements name a variable only with a prefix (Snowflake Scripting
``:v``, T-SQL ``@v``): there a bare name is always a column. Elsewhere (PL/pgSQL, PL/SQL,
BigQuery scripting) a bare name that the procedure declares is the variable, unless a
relation with known columns has a column of that name (PL/SQL and BigQuery resolve the
column first)."""
