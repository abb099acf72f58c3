"""Queries: the output columns of a query and what each is made of.

Owns :class:`Resolver`: a SELECT's relations (base tables, CTEs (memoized, so each is read
once), derived tables, LATERAL / APPLY, UNNEST and table functions, PIVOT / UNPIVOT, ClickHouse
ARRAY JOIN), its projections (``*`` expanded where the columns are known), set operations
merged by position, and the statement-wide INDIRECT uses of WHERE / JOIN / GROUP BY / HAVING /
QUALIFY / ORDER BY / CONNECT BY. Expressions are read by the
:class:`~lineage_udfs.core.expressions.ExpressionReader` it extends.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from lineage_udfs.core.catalog import CatalogIndex
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.expressions import ExpressionReader
from lineage_udfs.core.naming import NameContext, cte_reference, is_file_path
from lineage_udfs.core.relations import Dep, Output, Source, innermost
from lineage_udfs.core.subtypes import compose


class Resolver(ExpressionReader):
    """Column lineage of the queries of one statement (see the module docstring).

    Args:
        ctx: the naming context.
        catalog: known table columns (``*`` expansion, unqualified columns in joins).
        conditions_as_direct: count conditions, window keys and sort keys as DIRECT.
        masking_functions: more masking function names (lower case) besides the built-in ones.
    """

    def __init__(
        self,
        ctx: NameContext,
        catalog: CatalogIndex,
        conditions_as_direct: bool = False,
        masking_functions: Iterable[str] = (),
    ) -> None:
        super().__init__(ctx, catalog, conditions_as_direct, masking_functions)
        self._cte_memo: dict[int, Source] = {}

    def query(self, node: exp.Expr, outer: list[dict[str, Source]]) -> Source:
        """Outputs of a query (SELECT, set operation, VALUES, parenthesized query)."""
        while isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            node = node.this
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, outer)
        if isinstance(node, exp.Select):
            return self._select(node, outer)
        return Source(outputs=[])

    def _set_operation(self, node: exp.SetOperation, outer: list[dict[str, Source]]) -> Source:
        """Outputs of UNION / EXCEPT / INTERSECT: branch outputs merged by position.

        The right branch of a filtering operation (EXCEPT / MINUS, see ``_FILTERING_SET_OPS``)
        only decides which left rows remain: its columns are INDIRECT FILTER, not values.
        """
        leaves: list[exp.Expr] = []
        stack: list[exp.Expr] = [node]
        while stack:
            item = stack.pop()
            while (
                isinstance(item, exp.Subquery)
                and isinstance(item.this, exp.Query)
                and not (item.args.get("with_"))
            ):
                item = item.this
            if (isinstance(item, exp.SetOperation) and not item.args.get("with_")) or (
                item is node
            ):
                if isinstance(item, _FILTERING_SET_OPS):
                    for _, deps in self.query(item.expression, outer).outputs or ():
                        for t, c, s in deps:
                            self.indirect.add((t, c, compose(Sub.FILTER, s)))
                else:
                    stack.append(item.expression)
                stack.append(item.this)
            else:
                leaves.append(item)
        scope_outer = outer
        merged: list[tuple[str, set[Dep]]] = []
        stars: list[Source] = []
        for i, leaf in enumerate(leaves):
            src = self.query(leaf, scope_outer)
            stars.extend(src.star)
            outputs = src.outputs or []
            if i == 0:
                merged = [(name, set(deps)) for name, deps in outputs]
            elif len(outputs) == len(merged) or stars:
                for j, (_, deps) in enumerate(outputs[: len(merged)]):
                    merged[j][1].update(deps)
            else:
                # branches of different widths (invalid SQL, or a later branch that adds
                # columns): positions do not line up, so match by name and append new names
                by_name = {n.lower(): k for k, (n, _) in enumerate(merged)}
                for name, deps in outputs:
                    k = by_name.get(name.lower())
                    if k is None:
                        by_name[name.lower()] = len(merged)
                        merged.append((name, set(deps)))
                    else:
                        merged[k][1].update(deps)
        return Source(outputs=[(n, frozenset(d)) for n, d in merged], star=stars, is_union=True)

    def cte_source(self, cte: exp.CTE, outer: list[dict[str, Source]]) -> Source:
        key = id(cte)
        if key not in self._cte_memo:
            self._cte_memo[key] = Source(outputs=[])  # recursion guard
            src = self.query(cte.this, outer)
            self._cte_memo[key] = _rename(src, cte.args.get("alias"), self)
        return self._cte_memo[key]

    def relation(
        self,
        node: exp.Expr,
        outer: list[dict[str, Source]],
        current: dict[str, Source],
    ) -> tuple[str, Source] | None:
        found = self._plain_relation(node, outer, current)
        pivots = node.args.get("pivots")
        if found is None or not pivots:
            return found
        key, src = found
        for pivot in pivots:
            if isinstance(pivot, exp.Pivot):
                src = self._pivot(pivot, key, src, outer)
                if pivot.alias:
                    key = pivot.alias.lower()
        return key, src

    def _pivot(
        self, pivot: exp.Pivot, key: str, src: Source, outer: list[dict[str, Source]]
    ) -> Source:
        """The relation a PIVOT / UNPIVOT makes of ``src``.

        PIVOT (agg(v) FOR k IN (x, y)): the columns not named in the clause pass through, then
        one column per value (sqlglot's names, else the alias list) is agg(v) (AGGREGATION)
        selected by k (CONDITIONAL). UNPIVOT (v FOR k IN (a, b)): the columns not named pass
        through, then k (made of column names: no source column), then v from a and b. An
        alias list ``AS p (c1, …)`` renames the result by position. Without the source's
        columns, the unnamed columns pass through as an unexpanded ``*``.
        """
        env = [{key: src}, *outer]
        used: set[str] = set()
        fields = [f for f in pivot.args.get("fields") or [] if isinstance(f, exp.In)]
        new: list[Output] = []
        if pivot.args.get("unpivot"):
            values = pivot.expressions[0] if pivot.expressions else None
            value_names = [
                self.col_name(v)
                for v in (
                    values.expressions if isinstance(values, exp.Tuple) else pivot.expressions
                )
            ]
            value_deps: list[set[Dep]] = [set() for _ in value_names]
            name_cols: list[str] = []
            for field_ in fields:
                name_cols.append(
                    self.col_name(
                        field_.this if not isinstance(field_.this, exp.Column) else field_.this.this
                    )
                )
                for item in field_.expressions:
                    if isinstance(item, exp.PivotAlias | exp.Alias):
                        item = item.this
                    parts = item.expressions if isinstance(item, exp.Tuple) else [item]
                    for i, part in enumerate(parts[: len(value_deps)]):
                        value_deps[i].update(self.expr_deps(part, env, Sub.IDENTITY))
                        used.update(self.col_name(c.this) for c in part.find_all(exp.Column))
            new.extend((n, frozenset()) for n in name_cols)
            new.extend((n, frozenset(d)) for n, d in zip(value_names, value_deps, strict=True))
        else:
            selector: set[Dep] = set()
            for field_ in fields:
                for t, c, s in self.expr_deps(field_.this, env, Sub.CONDITIONAL):
                    selector.add((t, c, compose(Sub.CONDITIONAL, s)))
                used.update(self.col_name(c.this) for c in field_.this.find_all(exp.Column))
            per_agg: list[frozenset[Dep]] = []
            for agg in pivot.expressions:
                per_agg.append(frozenset(self.expr_deps(agg, env, Sub.IDENTITY) | selector))
                used.update(self.col_name(c.this) for c in agg.find_all(exp.Column))
            names = [self.col_name(c) for c in pivot.args.get("columns") or []]
            if not names and len(fields) == 1 and len(per_agg) == 1:
                for item in fields[0].expressions:
                    if isinstance(item, exp.PivotAlias | exp.Alias):
                        names.append(self.col_name(item.args.get("alias")))
                    elif isinstance(item, exp.Literal | exp.Column):
                        names.append(item.name)
            every = frozenset().union(*per_agg) if per_agg else frozenset(selector)
            # sqlglot names one column per (value, aggregate), aggregates varying fastest
            by_position = bool(per_agg) and len(names) % len(per_agg) == 0
            for i, name in enumerate(names):
                new.append((name, per_agg[i % len(per_agg)] if by_position else every))
        used_lower = {u.lower() for u in used}
        cols = src.columns()
        alias = pivot.args.get("alias")
        renames = (
            [self.col_name(c) for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
        )
        if cols is None and len(renames) > len(new):
            # the alias list names the pass-through columns too: assume they keep their names
            cols = tuple(renames[: len(renames) - len(new)])
        if cols is None:
            return Source(outputs=new, star=[src])
        outputs = [(c, src.lookup(c) or frozenset()) for c in cols if c.lower() not in used_lower]
        outputs.extend(new)
        if renames:
            outputs = [
                (renames[i] if i < len(renames) else n, d) for i, (n, d) in enumerate(outputs)
            ]
        return Source(outputs=outputs)

    def _plain_relation(
        self,
        node: exp.Expr,
        outer: list[dict[str, Source]],
        current: dict[str, Source],
    ) -> tuple[str, Source] | None:
        if type(node).__name__ in ("Final", "Stream") and isinstance(node.this, exp.Expr):
            # ClickHouse FROM t FINAL, Databricks FROM STREAM(t) / STREAM t: the table's rows
            inner = innermost(node.this)
            if isinstance(inner, exp.Table):
                node = inner
        alias = node.alias.lower() if node.alias else ""
        if isinstance(node, exp.Table):
            cte = cte_reference(node)
            if cte is not None:
                return alias or node.name.lower(), self.cte_source(cte, [])
            name = self.ctx.table_name(node)
            wrapped = node.this
            if (
                name is None
                and isinstance(wrapped, exp.Expr)
                and isinstance(wrapped.this, exp.Table)
                and type(wrapped).__name__ == "SemanticView"
            ):
                # Snowflake SEMANTIC_VIEW(v METRICS m DIMENSIONS d): columns come from v
                inner_name = self.ctx.table_name(wrapped.this)
                if inner_name is not None:
                    src = Source(table=inner_name, known=self.catalog.columns(inner_name))
                    return alias or wrapped.this.name.lower(), src
            if name is None:
                if is_file_path(node):  # a file location: columns unknown, never resolved
                    return alias or "_file", Source()
                if isinstance(node.this, exp.Func):  # table function: TABLE(f(x)), read_csv(...)
                    return alias or "_udtf", Source(udtf=frozenset())
                return None
            src = Source(table=name, known=self.catalog.columns(name))
            return alias or node.name.lower(), src
        if isinstance(node, exp.Subquery) and isinstance(innermost(node), exp.Table):
            inner = innermost(node)
            for rel in [inner, *(j.this for j in inner.args.get("joins") or [])]:
                found = self.relation(rel, outer, current)
                if found is not None and found[0] not in current:
                    current[found[0]] = found[1]
            for j in inner.args.get("joins") or []:
                if j.args.get("on") is not None:
                    self.add_indirect(j.args["on"], [current, *outer], Sub.JOIN)
            return None
        if isinstance(node, exp.Subquery):
            src = _rename(self.query(node.this, outer), node.args.get("alias"), self)
            return alias, src
        if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery | exp.Query):
            # LATERAL (SELECT …) / CROSS APPLY / OUTER APPLY: a derived table (columns by
            # name) whose query may also read the columns of the relations before it
            src = _rename(self.query(node.this, [current, *outer]), node.args.get("alias"), self)
            return alias, src
        if isinstance(node, exp.Unnest | exp.Lateral | exp.UDTF):
            deps = self.expr_deps(
                node.this if isinstance(node, exp.Lateral) else node,
                [current, *outer],
                Sub.TRANSFORMATION,
            )
            src = Source(udtf=frozenset(deps))
            names = []
            table_alias = node.args.get("alias")
            if isinstance(table_alias, exp.TableAlias):
                names = [self.col_name(c) for c in table_alias.columns]
                alias = self.col_name(table_alias.this).lower() if table_alias.this else ""
            key = alias or (names[0] if names else f"_udtf{len(current)}")
            for n in names:
                current.setdefault(f"\x01col:{n}", src)
            return key, src
        return None

    def _select(self, select: exp.Select, outer: list[dict[str, Source]]) -> Source:
        sources: dict[str, Source] = {}
        relations: list[exp.Expr] = []
        from_ = select.args.get("from_")
        if from_ is not None:
            relations.append(from_.this)
        joins = select.args.get("joins") or []
        relations.extend(j.this for j in joins)
        relations.extend(select.args.get("laterals") or [])
        for rel in relations:
            found = self.relation(rel, outer, sources)
            if found is not None:
                key, src = found
                sources[key if key not in sources else f"{key}\x00{len(sources)}"] = src
        env = [sources, *outer]
        for join in joins:
            if str(join.args.get("kind") or "").upper() == "ARRAY":
                # ClickHouse ARRAY JOIN arr AS x: x is one element of arr (like UNNEST); a bare
                # ARRAY JOIN arr keeps the column's name, so arr already resolves to it
                for item in [join.this, *(join.expressions or [])]:
                    if isinstance(item, exp.Alias) and item.alias:
                        deps = frozenset(self.expr_deps(item.this, env, Sub.TRANSFORMATION))
                        sources[f"\x01col:{self.col_name(item.args.get('alias'))}"] = Source(
                            udtf=deps
                        )
        # statement-wide INDIRECT uses
        using_cols: set[str] = set()
        for join in joins:
            on = join.args.get("on")
            if on is not None:
                self.add_indirect(on, env, Sub.JOIN)
            for u in join.args.get("using") or []:
                using_cols.add(self.col_name(u if isinstance(u, exp.Identifier) else u.this))
                self.add_indirect_name(
                    self.col_name(u if isinstance(u, exp.Identifier) else u.this), sources, Sub.JOIN
                )
        outputs: list[Output] = []
        stars: list[Source] = []
        aliases: dict[str, frozenset[Dep]] = {}
        for index, projection in enumerate(select.expressions):
            if isinstance(projection, exp.Star) or (
                isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
            ):
                self._expand_star(projection, sources, outputs, stars)
                continue
            name = self.output_name(projection, index)
            expr = projection.this if isinstance(projection, exp.Alias) else projection
            deps = frozenset(
                self.expr_deps(expr, env, Sub.IDENTITY, aliases=aliases, using=using_cols)
            )
            outputs.append((name, deps))
            aliases.setdefault(name, deps)
        for key, subtype in (
            ("where", Sub.FILTER),
            ("having", Sub.FILTER),
            ("qualify", Sub.FILTER),
            ("group", Sub.GROUP_BY),
            ("order", Sub.SORT),
        ):
            part = select.args.get(key)
            if part is not None:  # WHERE cannot see SELECT aliases; the others can
                self.add_indirect(part, env, subtype, aliases=None if key == "where" else aliases)
        connect = select.args.get("connect")
        if isinstance(connect, exp.Connect):
            # hierarchical query: START WITH picks the root rows, CONNECT BY joins a row to
            # its parent
            for key, subtype in (("start", Sub.FILTER), ("connect", Sub.JOIN)):
                if connect.args.get(key) is not None:
                    self.add_indirect(connect.args[key], env, subtype)
        return Source(outputs=outputs, star=stars)

    def _expand_star(
        self,
        projection: exp.Expr,
        sources: dict[str, Source],
        outputs: list[Output],
        stars: list[Source],
    ) -> None:
        star = projection if isinstance(projection, exp.Star) else projection.this
        qualifier = projection.table.lower() if isinstance(projection, exp.Column) else ""
        except_ = {
            self.col_name(e if isinstance(e, exp.Identifier) else e.this)
            for e in (star.args.get("except_") or star.args.get("except") or [])
        }
        replace = {}
        for r in star.args.get("replace") or []:
            if isinstance(r, exp.Alias):
                replace[self.col_name(r.args.get("alias"))] = r.this
        rename = {}  # Snowflake * RENAME (a AS b)
        for r in star.args.get("rename") or []:
            if isinstance(r, exp.Alias) and isinstance(r.this, exp.Column):
                rename[self.col_name(r.this.this)] = self.col_name(r.args.get("alias"))
        chosen = [s for k, s in sources.items() if not qualifier or k.split("\x00")[0] == qualifier]
        for src in chosen:
            if src.udtf is not None:
                continue
            cols = src.columns()
            if cols is None:
                # unknown columns pass through by name; the ones the star names are known
                stars.append(src)
                named = [n for n, _ in src.outputs or ()]
                named.extend(n for n in [*replace, *rename] if n not in named)
                cols = tuple(named)
            for col in cols:
                if col in except_ or any(rename.get(col, col) == n for n, _ in outputs):
                    continue  # a name already in the result: the first relation's wins
                if col in replace:
                    deps = frozenset(self.expr_deps(replace[col], [sources], Sub.IDENTITY))
                else:
                    deps = src.lookup(col) or frozenset()
                outputs.append((rename.get(col, col), deps))


_FILTERING_SET_OPS: tuple[type[exp.SetOperation], ...] = (exp.Except,)
"""Set operations whose right branch only filters the left one's rows (EXCEPT / MINUS)."""


def _rename(src: Source, alias: exp.Expr | None, resolver: Resolver) -> Source:
    if not isinstance(alias, exp.TableAlias) or not alias.columns or src.outputs is None:
        return src
    names = [resolver.col_name(c) for c in alias.columns]
    outputs = [(names[i] if i < len(names) else n, deps) for i, (n, deps) in enumerate(src.outputs)]
    return Source(outputs=outputs, star=src.star, is_union=src.is_union)
