"""The best-effort tier: column lineage of one parsed statement.

A single pass over the statement's query tree: every SELECT resolves its projections against
its FROM/JOIN sources (base tables, CTEs, derived tables, UNNEST/LATERAL/explode), CTE outputs
are memoized, so the cost is linear in the size of the tree (no per-column ``sqlglot.lineage``).

Each dependency carries an OpenLineage transformation subtype. DIRECT subtypes (IDENTITY <
TRANSFORMATION < AGGREGATION < MASKED) compose by taking the strongest along the path; a column
read in WHERE/JOIN/GROUP BY/ORDER BY/PARTITION BY is INDIRECT and never DIRECT. A CASE/IF/DECODE/
NVL2 condition is INDIRECT (CONDITIONAL) when it chooses among values that carry columns
(``CASE WHEN k = 'refund' THEN -amount ELSE amount END``: k). When every result is a constant
(``CASE WHEN age < 18 THEN 'minor' ELSE 'adult' END``, ``IF(x IS NULL, 1, 0)``) the conditional
is a value mapping of its tested columns, so they are DIRECT: the output is derived from them and
from nothing else (OpenLineage: DIRECT means the output value is derived from the input value).
So is an argument that selects or orders rather than feeds the value: ``ARRAY_AGG(y ORDER BY
z)`` / ``LISTAGG(y) WITHIN GROUP (ORDER BY z)`` (z SORT, but an ordered-set aggregate such as
``PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY x)`` aggregates x), the key of ``max_by`` /
``argMax`` (SORT), the condition of ``sumIf(v, c)`` and the test of ``NVL2(t, a, b)`` over
column values (CONDITIONAL; ``count_if(c)`` aggregates a value mapping of c: DIRECT), an
aggregate's ``FILTER (WHERE …)`` (FILTER).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlglot import exp

from lineage_udfs.core.catalog import CatalogIndex
from lineage_udfs.core.enums import TransformationSubtype as Sub
from lineage_udfs.core.enums import TransformationType
from lineage_udfs.core.models import ColumnEdge, ResultColumn
from lineage_udfs.core.naming import NameContext, cte_reference, is_file_path
from lineage_udfs.core.tiers import StatementTables

Dep = tuple[str, str, Sub]
"""(source table, source column, subtype)."""

INDIRECT_SUBTYPES = frozenset(
    {Sub.FILTER, Sub.JOIN, Sub.GROUP_BY, Sub.SORT, Sub.WINDOW, Sub.CONDITIONAL}
)
_RANK = {Sub.IDENTITY: 0, Sub.TRANSFORMATION: 1, Sub.AGGREGATION: 2, Sub.MASKED: 3}

MASKING_FUNCTIONS = frozenset(
    {
        "md5",
        "sha",
        "sha1",
        "sha2",
        "sha256",
        "sha512",
        "sha224",
        "sha384",
        "hash",
        "mask",
        "mask_hash",
        "mask_first_n",
        "mask_last_n",
        "mask_show_first_n",
        "mask_show_last_n",
        "md5_hex",
        "md5_binary",
        "sha1_hex",
        "sha2_hex",
        "sha1_binary",
        "sha2_binary",
        "hash_agg",
        "farm_fingerprint",
        "fingerprint",
        "crc32",
        "hashbytes",
        "standard_hash",
        "ora_hash",
        "xxhash64",
        "murmur3",
        "md5_number_lower64",
        "md5_number_upper64",
        "sha256_hex",
        "to_hex_sha256",
        "encrypt",
        "aes_encrypt",
        "redact",
        "anonymize",
    }
)
"""Function names whose output masks their input (DIRECT/MASKED)."""

_MASK_TYPES = tuple(
    t
    for t in (
        getattr(exp, n, None)
        for n in (
            "MD5",
            "MD5Digest",
            "SHA",
            "SHA2",
            "SHA1Digest",
            "SHA2Digest",
            "FarmFingerprint",
            "StandardHash",
        )
    )
    if isinstance(t, type)
)


def compose(outer: Sub, inner: Sub) -> Sub:
    """Subtype of an inner dependency seen through an outer use.

    Examples:
        >>> compose(Sub.AGGREGATION, Sub.IDENTITY).value, compose(Sub.FILTER, Sub.MASKED).value
        ('AGGREGATION', 'FILTER')
        >>> compose(Sub.IDENTITY, Sub.CONDITIONAL)
        <TransformationSubtype.CONDITIONAL: 'CONDITIONAL'>
    """
    if outer in INDIRECT_SUBTYPES:
        return outer
    if inner in INDIRECT_SUBTYPES:
        return inner
    return outer if _RANK[outer] >= _RANK[inner] else inner


def transformation_type(subtype: Sub) -> TransformationType:
    """DIRECT or INDIRECT for a subtype."""
    return (
        TransformationType.INDIRECT if subtype in INDIRECT_SUBTYPES else (TransformationType.DIRECT)
    )


Output = tuple[str, frozenset[Dep]]


@dataclass(slots=True)
class _Source:
    """One relation visible in a SELECT: a base table, a derived relation or a UDTF."""

    table: str | None = None
    outputs: list[Output] | None = None
    udtf: frozenset[Dep] | None = None
    star: list[_Source] = field(default_factory=list)
    """Sources whose unknown columns pass through an unexpanded ``*``."""
    known: tuple[str, ...] | None = None
    is_union: bool = False
    """The ``star`` sources are branches of a set operation: a column comes from all of them
    (else from the first that may have it, as for a join)."""

    lowered: dict[str, int] | None = field(default=None, repr=False, compare=False)
    """Lower-cased column name → position of its first column (built on first use; a source
    is not changed once built)."""

    def columns(self) -> tuple[str, ...] | None:
        if self.table is not None:
            return self.known
        if self.outputs is not None and not self.star:
            return tuple(n for n, _ in self.outputs)
        return None

    def _lowered(self) -> dict[str, int]:
        index = self.lowered
        if index is None:
            names = self.known if self.table is not None else [n for n, _ in self.outputs or ()]
            index = {}
            for i, n in enumerate(names or ()):
                index.setdefault(n.lower(), i)
            self.lowered = index
        return index

    def has(self, name: str) -> bool | None:
        """Whether the relation has column ``name`` (None: unknown)."""
        if self.table is not None:
            if self.known is None:
                return None
        elif self.outputs is None or self.star:
            return None
        return name.lower() in self._lowered()

    def lookup(self, name: str) -> frozenset[Dep] | None:
        if self.table is not None:
            if self.known is not None and name not in self.known:
                i = self._lowered().get(name.lower())
                if i is not None:
                    name = self.known[i]
            return frozenset({(self.table, name, Sub.IDENTITY)})
        if self.udtf is not None:
            return self.udtf
        if self.outputs:
            i = self._lowered().get(name.lower())
            if i is not None:
                return self.outputs[i][1]
        merged: set[Dep] = set()
        for src in self.star:
            found = src.lookup(name)
            if found is not None and src.has(name) is not False:
                if not self.is_union:
                    return found
                merged.update(found)
        return frozenset(merged) if merged else None


class ColumnLineageError(Exception):
    """Column lineage could not be computed for a statement (table lineage is unaffected)."""


class _Resolver:
    def __init__(
        self, ctx: NameContext, catalog: CatalogIndex, conditions_as_direct: bool = False
    ) -> None:
        self.ctx = ctx
        self._cond = _as_direct if conditions_as_direct else _cond_ctx
        self._window = _as_direct if conditions_as_direct else _window_ctx
        self._sort = _as_direct if conditions_as_direct else _sort_ctx
        self.catalog = catalog
        self.indirect: set[Dep] = set()
        self._cte_memo: dict[int, _Source] = {}

    def _test_fn(self, results: Iterable[exp.Expr | None]) -> _SubFn:
        """How the tests of a conditional (CASE/IF/DECODE/NVL2 conditions, ``count_if``'s
        predicate) reach the output, given the conditional's possible results.

        A conditional whose results are all constants (``CASE WHEN x > 0 THEN 'pos' ELSE 'neg'
        END``, ``IF(a IS NULL, 1, 0)``, ``count_if(c)``) maps the tested values onto constants:
        the output is derived from the tested columns and from nothing else, which is DIRECT
        (TRANSFORMATION, or AGGREGATION under an aggregate) by OpenLineage's definition. Where
        a result carries a column or a subquery, the tests only choose which value flows:
        INDIRECT CONDITIONAL (unless ``conditions_as_direct``).
        """
        if any(_carries_value(r) for r in results):
            return self._cond
        return _as_direct

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

    # ---------------------------------------------------------------- queries
    def query(self, node: exp.Expr, outer: list[dict[str, _Source]]) -> _Source:
        """Outputs of a query (SELECT, set operation, VALUES, parenthesized query)."""
        while isinstance(node, exp.Subquery) and isinstance(node.this, exp.Query):
            node = node.this
        if isinstance(node, exp.SetOperation):
            return self._set_operation(node, outer)
        if isinstance(node, exp.Select):
            return self._select(node, outer)
        return _Source(outputs=[])

    def _set_operation(self, node: exp.SetOperation, outer: list[dict[str, _Source]]) -> _Source:
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
        stars: list[_Source] = []
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
        return _Source(outputs=[(n, frozenset(d)) for n, d in merged], star=stars, is_union=True)

    def cte_source(self, cte: exp.CTE, outer: list[dict[str, _Source]]) -> _Source:
        key = id(cte)
        if key not in self._cte_memo:
            self._cte_memo[key] = _Source(outputs=[])  # recursion guard
            src = self.query(cte.this, outer)
            self._cte_memo[key] = _rename(src, cte.args.get("alias"), self)
        return self._cte_memo[key]

    def _relation(
        self,
        node: exp.Expr,
        outer: list[dict[str, _Source]],
        current: dict[str, _Source],
    ) -> tuple[str, _Source] | None:
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
        self, pivot: exp.Pivot, key: str, src: _Source, outer: list[dict[str, _Source]]
    ) -> _Source:
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
            return _Source(outputs=new, star=[src])
        outputs = [(c, src.lookup(c) or frozenset()) for c in cols if c.lower() not in used_lower]
        outputs.extend(new)
        if renames:
            outputs = [
                (renames[i] if i < len(renames) else n, d) for i, (n, d) in enumerate(outputs)
            ]
        return _Source(outputs=outputs)

    def _plain_relation(
        self,
        node: exp.Expr,
        outer: list[dict[str, _Source]],
        current: dict[str, _Source],
    ) -> tuple[str, _Source] | None:
        if type(node).__name__ in ("Final", "Stream") and isinstance(node.this, exp.Expr):
            # ClickHouse FROM t FINAL, Databricks FROM STREAM(t) / STREAM t: the table's rows
            inner = _innermost(node.this)
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
                    src = _Source(table=inner_name, known=self.catalog.columns(inner_name))
                    return alias or wrapped.this.name.lower(), src
            if name is None:
                if is_file_path(node):  # a file location: columns unknown, never resolved
                    return alias or "_file", _Source()
                if isinstance(node.this, exp.Func):  # table function: TABLE(f(x)), read_csv(...)
                    return alias or "_udtf", _Source(udtf=frozenset())
                return None
            src = _Source(table=name, known=self.catalog.columns(name))
            return alias or node.name.lower(), src
        if isinstance(node, exp.Subquery) and isinstance(_innermost(node), exp.Table):
            inner = _innermost(node)
            for rel in [inner, *(j.this for j in inner.args.get("joins") or [])]:
                found = self._relation(rel, outer, current)
                if found is not None and found[0] not in current:
                    current[found[0]] = found[1]
            for j in inner.args.get("joins") or []:
                if j.args.get("on") is not None:
                    self._indirect(j.args["on"], [current, *outer], Sub.JOIN)
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
            src = _Source(udtf=frozenset(deps))
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

    def _select(self, select: exp.Select, outer: list[dict[str, _Source]]) -> _Source:
        sources: dict[str, _Source] = {}
        relations: list[exp.Expr] = []
        from_ = select.args.get("from_")
        if from_ is not None:
            relations.append(from_.this)
        joins = select.args.get("joins") or []
        relations.extend(j.this for j in joins)
        relations.extend(select.args.get("laterals") or [])
        for rel in relations:
            found = self._relation(rel, outer, sources)
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
                        sources[f"\x01col:{self.col_name(item.args.get('alias'))}"] = _Source(
                            udtf=deps
                        )
        # statement-wide INDIRECT uses
        using_cols: set[str] = set()
        for join in joins:
            on = join.args.get("on")
            if on is not None:
                self._indirect(on, env, Sub.JOIN)
            for u in join.args.get("using") or []:
                using_cols.add(self.col_name(u if isinstance(u, exp.Identifier) else u.this))
                self._indirect_name(
                    self.col_name(u if isinstance(u, exp.Identifier) else u.this), sources, Sub.JOIN
                )
        outputs: list[Output] = []
        stars: list[_Source] = []
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
                self._indirect(part, env, subtype, aliases=None if key == "where" else aliases)
        connect = select.args.get("connect")
        if isinstance(connect, exp.Connect):
            # hierarchical query: START WITH picks the root rows, CONNECT BY joins a row to
            # its parent
            for key, subtype in (("start", Sub.FILTER), ("connect", Sub.JOIN)):
                if connect.args.get(key) is not None:
                    self._indirect(connect.args[key], env, subtype)
        return _Source(outputs=outputs, star=stars)

    def _expand_star(
        self,
        projection: exp.Expr,
        sources: dict[str, _Source],
        outputs: list[Output],
        stars: list[_Source],
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

    # ---------------------------------------------------------------- expressions
    def _indirect(
        self,
        node: exp.Expr,
        env: list[dict[str, _Source]],
        subtype: Sub,
        aliases: dict[str, frozenset[Dep]] | None = None,
    ) -> None:
        for t, c, s in self.expr_deps(node, env, subtype, aliases=aliases, prefer_alias=True):
            self.indirect.add((t, c, compose(subtype, s)))

    def _indirect_name(self, name: str, sources: dict[str, _Source], subtype: Sub) -> None:
        for src in sources.values():
            cols = src.columns()
            if cols is None or name in cols:
                for t, c, _ in src.lookup(name) or ():
                    self.indirect.add((t, c, subtype))

    def expr_deps(
        self,
        node: exp.Expr,
        env: list[dict[str, _Source]],
        ctx: Sub,
        *,
        aliases: dict[str, frozenset[Dep]] | None = None,
        using: set[str] | None = None,
        prefer_alias: bool = False,
    ) -> set[Dep]:
        out: set[Dep] = set()
        stack: list[tuple[exp.Expr, Sub]] = [(node, ctx)]
        while stack:
            item, sub = stack.pop()
            plain = _PLAIN_KINDS.get(type(item), _UNKNOWN)
            if plain is _UNKNOWN:
                plain = _plain_kind(type(item))
            if plain is not None:  # the common case: a node whose class alone says what to do
                if plain is _LEAF:
                    continue
                child_sub = _step(sub, plain) if isinstance(plain, Sub) else sub
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
                        stack.append((branch.args["true"], _step(sub, Sub.TRANSFORMATION)))
                if item.args.get("default") is not None:
                    stack.append((item.args["default"], _step(sub, Sub.TRANSFORMATION)))
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
                            cond(sub, Sub.CONDITIONAL) if key else (_step(sub, Sub.TRANSFORMATION)),
                        )
                    )
                continue
            if isinstance(item, exp.If):
                cond = self._test_fn([item.args.get("true"), item.args.get("false")])
                stack.append((item.this, cond(sub, Sub.CONDITIONAL)))
                for branch in ("true", "false"):
                    if item.args.get(branch) is not None:
                        stack.append((item.args[branch], _step(sub, Sub.TRANSFORMATION)))
                continue
            if isinstance(item, exp.Window):
                stack.append((item.this, _step(sub, Sub.AGGREGATION)))
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
                        _step(sub, Sub.AGGREGATION)
                        if _is_ordered_set(item.this)
                        else (self._sort(sub, Sub.SORT))
                    )
                    for ordered in order.expressions:
                        stack.append((ordered, key_sub))
                continue
            selector = _selector_args(item)
            if selector is not None:
                # max_by(v, key) / argMax: key picks the row; count_if(cond), sumIf(v, cond):
                # cond picks the rows; NVL2(test, a, b): test picks the branch
                values, keys, key_kind = selector
                value_sub = _step(
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
                    stack.append((item.expression, _filter(sub)))
                continue
            if isinstance(item, exp.Alias | exp.Paren | exp.Distinct | exp.Ordered):
                child_sub = sub
            elif isinstance(item, exp.AggFunc):
                child_sub = _step(sub, Sub.AGGREGATION)
            elif _is_masking(item):
                child_sub = _step(sub, Sub.MASKED)
            elif isinstance(item, exp.Literal | exp.Null | exp.Boolean | exp.Placeholder):
                continue
            else:
                child_sub = _step(sub, Sub.TRANSFORMATION)
            for child in item.iter_expressions():
                if isinstance(child, exp.DataType | exp.Identifier | exp.Var):
                    continue
                stack.append((child, child_sub))
        return out

    def resolve_column(
        self,
        column: exp.Column,
        env: list[dict[str, _Source]],
        aliases: dict[str, frozenset[Dep]] | None,
        using: set[str] | None,
        prefer_alias: bool,
    ) -> frozenset[Dep]:
        name = self.col_name(column.this)
        parts = [self.col_name(p) for p in column.parts]
        qualifier_parts = parts[:-1]
        if qualifier_parts:
            for level in env:
                src = _qualified_source(level, qualifier_parts)
                if src is not None:
                    deps = src.lookup(name)
                    return deps if deps is not None else frozenset()
            # a struct field: the first part names a column (BigQuery a.b.c, Spark s.f)
            root = parts[0]
            for level in env:
                if len(qualifier_parts) >= 2:
                    src = _qualified_source(level, [qualifier_parts[0]])
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
        self, name: str, level: dict[str, _Source], using: set[str] | None
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


_FILTERING_SET_OPS: tuple[type[exp.SetOperation], ...] = (exp.Except,)
"""Set operations whose right branch only filters the left one's rows (EXCEPT / MINUS)."""
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


def _innermost(node: exp.Expr) -> exp.Expr:
    """Strip parentheses: ``((t JOIN u ON …))`` is a Subquery of a Subquery of a Table."""
    while isinstance(node, exp.Subquery | exp.Paren) and isinstance(node.this, exp.Expr):
        node = node.this
    return node


def _qualified_source(level: dict[str, _Source], qualifier: list[str]) -> _Source | None:
    # relation keys are lower case (an alias is matched case-insensitively, whatever the
    # dialect's rule for quoted identifiers: ``"Custom SQL Query".x`` finds its subquery)
    key = qualifier[-1].lower()
    src = level.get(key)
    if src is not None:
        return src
    dotted = ".".join(qualifier)
    for k, s in level.items():
        if s.table is not None and (s.table == dotted or s.table.endswith("." + dotted)):
            return s
        if "\x00" in k and k.split("\x00")[0] == key:
            return s
    return None


def _rename(src: _Source, alias: exp.Expr | None, resolver: _Resolver) -> _Source:
    if not isinstance(alias, exp.TableAlias) or not alias.columns or src.outputs is None:
        return src
    names = [resolver.col_name(c) for c in alias.columns]
    outputs = [(names[i] if i < len(names) else n, deps) for i, (n, deps) in enumerate(src.outputs)]
    return _Source(outputs=outputs, star=src.star, is_union=src.is_union)


def _step(ctx: Sub, sub: Sub) -> Sub:
    return compose(ctx, sub)


def _as_direct(ctx: Sub, _: Sub) -> Sub:
    return compose(ctx, Sub.TRANSFORMATION)


_SubFn = Callable[[Sub, Sub], Sub]


def _carries_value(node: exp.Expr | None) -> bool:
    """True when an expression reads a column or a subquery (not only constants)."""
    return node is not None and node.find(exp.Column, exp.Query) is not None


def _cond_ctx(ctx: Sub, _: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.CONDITIONAL


def _window_ctx(ctx: Sub, _: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.WINDOW


def _sort_ctx(ctx: Sub, _: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.SORT


_ORDERED_SET_AGGREGATES = frozenset(
    {
        "percentile_cont",
        "percentile_disc",
        "mode",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "median",
    }
)
"""Aggregates whose ``WITHIN GROUP (ORDER BY x)`` names the aggregated value x."""
_ARG_BY_FUNCTIONS = frozenset({"max_by", "min_by", "arg_max", "arg_min", "argmax", "argmin"})
"""``f(value, key)``: the value of the row with the largest/smallest key (key is a selector)."""


def _func_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return node.name.lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else ""


def _is_ordered_set(node: exp.Expr) -> bool:
    return isinstance(node, exp.Func) and _func_name(node) in _ORDERED_SET_AGGREGATES


def _selector_args(
    node: exp.Expr,
) -> tuple[list[exp.Expr], list[exp.Expr], Sub] | None:
    """Split a call into value arguments and selector arguments (None: not such a call).

    ``max_by(v, k)`` / ``argMax(v, k)`` → ([v], [k], SORT); ``count_if(c)`` → ([], [c],
    CONDITIONAL); ``sum_if(v, c)`` / ClickHouse ``sumIf(v, c)`` (the ``-If`` combinator: the
    last argument is the condition) → ([v], [c], CONDITIONAL); ``NVL2(t, a, b)`` → ([a, b], [t],
    CONDITIONAL).
    """
    if isinstance(node, exp.ArgMax | exp.ArgMin):
        return [node.this], [node.expression] if node.expression is not None else [], Sub.SORT
    if isinstance(node, exp.CountIf):
        return [], [node.this], Sub.CONDITIONAL
    if isinstance(node, exp.Nvl2):
        values = [v for v in (node.args.get("true"), node.args.get("false")) if v is not None]
        return values, [node.this], Sub.CONDITIONAL
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        name = _func_name(node)
        args = list(node.expressions)
        if name in _ARG_BY_FUNCTIONS and len(args) >= 2:
            return [args[0]], args[1:2], Sub.SORT
        combinator = isinstance(node, exp.CombinedAggFunc) and name.endswith("if")
        if (combinator or name.endswith("_if")) and len(args) >= 1:
            return args[:-1], args[-1:], Sub.CONDITIONAL
    return None


def _filter(ctx: Sub) -> Sub:
    return ctx if ctx in INDIRECT_SUBTYPES else Sub.FILTER


_SAME = "same"
_LEAF = "leaf"
_UNKNOWN = "unknown"
_PlainKind = Sub | str | None
_PLAIN_KINDS: dict[type, _PlainKind] = {}
"""Per expression class, what ``expr_deps`` does with a node of it when the class alone
decides: None for the classes it handles case by case (columns, queries, CASE, windows,
selector and anonymous functions …), ``_LEAF`` to skip (literals), ``_SAME`` to pass the
subtype on (aliases, parentheses), else the subtype its children get."""


def _plain_kind(cls: type) -> _PlainKind:
    """``_PLAIN_KINDS[cls]``, computed on first sight of the class: the same tests, in the same
    order, as ``expr_deps`` makes on a node."""
    kind: _PlainKind
    if issubclass(cls, _CASE_BY_CASE) or cls.__name__ == "DecodeCase":
        kind = None
    elif issubclass(cls, exp.Alias | exp.Paren | exp.Distinct | exp.Ordered):
        kind = _SAME
    elif issubclass(cls, exp.AggFunc):
        kind = Sub.AGGREGATION
    elif _MASK_TYPES and issubclass(cls, _MASK_TYPES):
        kind = Sub.MASKED
    elif issubclass(cls, exp.Func) and _sql_name(cls) is None:
        kind = None  # (a function's SQL name is its class's; if not, the node decides)
    elif issubclass(cls, exp.Func) and _sql_name(cls) in MASKING_FUNCTIONS:
        kind = Sub.MASKED
    elif issubclass(cls, exp.Literal | exp.Null | exp.Boolean | exp.Placeholder):
        kind = _LEAF
    else:
        kind = Sub.TRANSFORMATION
    _PLAIN_KINDS[cls] = kind
    return kind


def _sql_name(cls: type) -> str | None:
    try:
        return str(cls.sql_name()).lower()  # type: ignore[attr-defined]
    except Exception:
        return None


_CASE_BY_CASE = (
    exp.Column,
    exp.Query,
    exp.Case,
    exp.If,
    exp.Window,
    exp.Order,
    exp.WithinGroup,
    exp.Filter,
    exp.ArgMax,
    exp.ArgMin,
    exp.CountIf,
    exp.Nvl2,
    exp.Anonymous,
    exp.AnonymousAggFunc,
)
"""Classes ``expr_deps`` handles by the node, not by its class (see ``_selector_args``)."""


def _is_masking(node: exp.Expr) -> bool:
    if _MASK_TYPES and isinstance(node, _MASK_TYPES):
        return True
    if isinstance(node, exp.Func):
        name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
        return name.lower() in MASKING_FUNCTIONS
    return False


# ------------------------------------------------------------------------------------ statements
@dataclass(frozen=True, slots=True)
class ColumnLineage:
    """Column tier output for one statement."""

    edges: tuple[ColumnEdge, ...] = ()
    result_columns: tuple[ResultColumn, ...] = ()
    target_columns: tuple[str, ...] = ()
    """The target's columns in output order (lets later statements of a script expand ``*``)."""
    star_sources: tuple[str, ...] = ()
    """Tables whose columns reach the target through a ``*`` that could not be expanded (no
    schema): the target's column ``c`` is their column ``c``. A later statement of the script
    that reads ``c`` by name makes it known (:func:`lineage_udfs.core.script.collapse_script`)."""
    star_indirect: tuple[Dep, ...] = ()
    """The statement's INDIRECT dependencies (filters, joins), which also apply to the columns
    that pass through ``star_sources``."""


def extract_column_edges(
    statement: exp.Expr,
    tables: StatementTables,
    ctx: NameContext,
    catalog: CatalogIndex | None = None,
    *,
    conditions_as_direct: bool = False,
) -> ColumnLineage:
    """Column lineage of one statement, given its table tier result.

    Args:
        statement: the parsed statement.
        tables: what :func:`extract_tables` found for it.
        ctx: the naming context.
        catalog: known table columns (``*`` expansion, unqualified columns in joins).
        conditions_as_direct: count CASE/IF conditions, window PARTITION/ORDER BY columns
            and selector arguments (aggregate ORDER BY, ``max_by`` keys, ``count_if``
            conditions) as DIRECT (the peers' convention) instead of INDIRECT.

    Returns:
        Column edges into the target (DIRECT and INDIRECT), or result columns for a SELECT.

    Examples:
        >>> import sqlglot
        >>> from lineage_udfs.core.tables import extract_tables
        >>> stmt = sqlglot.parse_one("INSERT INTO t (a) SELECT upper(x) FROM s WHERE y > 0")
        >>> lin = extract_column_edges(stmt, extract_tables(stmt, NameContext()), NameContext())
        >>> sorted((e.source_column, e.target_column, e.transformation_subtype.value)
        ...        for e in lin.edges)
        [('x', 'a', 'TRANSFORMATION'), ('y', 'a', 'FILTER')]
    """
    resolver = _Resolver(ctx, catalog or CatalogIndex(), conditions_as_direct)
    target = tables.targets[0] if tables.targets else None
    pairs: list[tuple[str, frozenset[Dep]]] = []
    star_sources: tuple[str, ...] = ()
    if isinstance(statement, exp.Update):
        pairs = _update_pairs(statement, resolver)
    elif isinstance(statement, exp.Merge):
        pairs = _merge_pairs(statement, resolver, target)
    elif tables.query is not None:
        src = resolver.query(tables.query, [])
        outputs = src.outputs or []
        if target is None:
            return ColumnLineage(result_columns=_result_columns(outputs, resolver.indirect))
        known = (
            resolver.catalog.columns(target)
            if statement.find_ancestor(exp.Insert) is not None or isinstance(statement, exp.Insert)
            else None
        )
        if isinstance(statement, exp.Insert) and statement.args.get("by_name"):
            # INSERT … BY NAME (Databricks, DuckDB): each query column fills the target column
            # of its name, whatever the order
            spelled = {c.lower(): c for c in known or ()}
            outputs = [(spelled.get(n.lower(), n), deps) for n, deps in outputs]
            known = None
        elif not tables.target_columns:
            static, dynamic = _partition_spec(statement, resolver)
            if known and (static or dynamic):
                known = _insert_column_order(known, static, dynamic)
            elif dynamic and len(outputs) > len(dynamic) and not src.star:
                # no schema: the last columns of the query fill the dynamic partitions
                outputs = outputs[: -len(dynamic)] + [
                    (name, deps)
                    for name, (_, deps) in zip(dynamic, outputs[-len(dynamic) :], strict=True)
                ]
        pairs = _map_to_target(outputs, tables.target_columns, known)
        if not tables.target_columns and not known:
            star_sources = tuple(_star_tables(src))
    else:
        return ColumnLineage()
    if target is None:
        return ColumnLineage()
    edges: dict[tuple[str, str, str, Sub], None] = {}
    target_cols = list(dict.fromkeys(name for name, _ in pairs))
    for name, deps in pairs:
        for t, c, s in deps:
            edges[(t, c, name, s)] = None
    for t, c, s in resolver.indirect:
        for name in target_cols:
            edges[(t, c, name, s)] = None
    return ColumnLineage(
        edges=tuple(
            ColumnEdge(t, c, target, name, transformation_type(s), s)
            for t, c, name, s in sorted(edges, key=lambda k: (k[2], k[0], k[1], k[3].value))
        ),
        target_columns=tuple(target_cols),
        star_sources=star_sources,
        star_indirect=tuple(sorted(resolver.indirect)) if star_sources else (),
    )


def _star_tables(src: _Source, depth: int = 0) -> list[str]:
    """Base tables whose unknown columns pass through ``src``'s unexpanded ``*``."""
    out: list[str] = []
    for inner in src.star:
        if inner.table is not None:
            if inner.known is None and inner.table not in out:
                out.append(inner.table)
        elif inner.udtf is None and depth < 20:
            out.extend(t for t in _star_tables(inner, depth + 1) if t not in out)
    return out


def _result_columns(outputs: list[Output], indirect: Iterable[Dep]) -> tuple[ResultColumn, ...]:
    rows: dict[tuple[str, str, str, Sub], None] = {}
    for name, deps in outputs:
        for t, c, s in deps:
            rows[(t, c, name, s)] = None
    names = list(dict.fromkeys(n for n, _ in outputs))
    for t, c, s in indirect:
        for name in names:
            rows[(t, c, name, s)] = None
    return tuple(
        ResultColumn(t, c, name, transformation_type(s), s)
        for t, c, name, s in sorted(rows, key=lambda k: (k[2], k[0], k[1], k[3].value))
    )


def _partition_spec(statement: exp.Expr, resolver: _Resolver) -> tuple[set[str], list[str]]:
    """An INSERT's ``PARTITION (…)`` clause: its static and dynamic column names (lower case).

    ``PARTITION (dt='x', h)`` → ({'dt'}, ['h']); no clause → (set(), []).
    """
    table = statement.this if isinstance(statement, exp.Insert) else None
    if isinstance(table, exp.Schema):
        table = table.this
    partition = table.args.get("partition") if isinstance(table, exp.Table) else None
    static: set[str] = set()
    dynamic: list[str] = []
    for item in partition.expressions if isinstance(partition, exp.Partition) else []:
        if isinstance(item, exp.EQ) and isinstance(item.this, exp.Column):
            static.add(resolver.col_name(item.this.this).lower())
        elif isinstance(item, exp.Column):
            dynamic.append(resolver.col_name(item.this).lower())
    return static, dynamic


def _insert_column_order(
    known: tuple[str, ...], static: set[str], dynamic: list[str]
) -> tuple[str, ...]:
    """The target columns a positional INSERT … PARTITION (…) SELECT fills, in order.

    Hive / Spark: the query gives the columns outside the PARTITION clause in table order,
    then the dynamic partition columns (``PARTITION (dt)``) in the clause's order; a static
    one (``PARTITION (dt='x')``) gets its value from the clause.

    Examples:
        >>> _insert_column_order(("dt", "a", "b"), {"dt"}, [])
        ('a', 'b')
        >>> _insert_column_order(("a", "dt", "b"), set(), ["dt"])
        ('a', 'b', 'dt')
    """
    by_lower = {c.lower(): c for c in known}
    named = static | set(dynamic)
    return tuple(c for c in known if c.lower() not in named) + tuple(
        by_lower.get(d, d) for d in dynamic
    )


def _map_to_target(
    outputs: list[Output], explicit: list[str], known: tuple[str, ...] | None
) -> list[tuple[str, frozenset[Dep]]]:
    if explicit:
        return [(explicit[i], deps) for i, (_, deps) in enumerate(outputs[: len(explicit)])]
    if known and len(known) == len(outputs):
        return [(known[i], deps) for i, (_, deps) in enumerate(outputs)]
    return list(outputs)


def _dml_sources(
    statement: exp.Expr, resolver: _Resolver, target_node: exp.Expr | None
) -> dict[str, _Source]:
    sources: dict[str, _Source] = {}
    relations: list[exp.Expr] = []
    if target_node is not None:
        relations.append(target_node)
    from_ = statement.args.get("from_")
    if isinstance(from_, exp.From):
        relations.append(from_.this)
        relations.extend(j.this for j in from_.this.args.get("joins") or [])
    relations.extend(j.this for j in statement.args.get("joins") or [])
    if isinstance(target_node, exp.Expr):
        relations.extend(j.this for j in target_node.args.get("joins") or [])
    using = statement.args.get("using")
    if isinstance(using, exp.Expr):
        relations.append(using)
    outer: list[dict[str, _Source]] = []
    for rel in relations:
        found = resolver._relation(rel, outer, sources)
        if found is not None:
            key, src = found
            if key in sources and sources[key].table == src.table:
                continue
            sources[key] = src
    # T-SQL: UPDATE alias … FROM t alias — the target node names the alias
    return sources


def _update_pairs(statement: exp.Update, resolver: _Resolver) -> list[tuple[str, frozenset[Dep]]]:
    target_node = statement.this
    sources = _dml_sources(statement, resolver, target_node)
    env = [sources]
    pairs = []
    for eq in statement.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            continue
        name = resolver.col_name(eq.this.this)
        deps = resolver.expr_deps(eq.expression, env, Sub.IDENTITY)
        if type(eq).__name__ != "EQ":
            deps = {(t, c, compose(Sub.TRANSFORMATION, s)) for t, c, s in deps}
        pairs.append((name, frozenset(deps)))
    where = statement.args.get("where")
    if where is not None:
        resolver._indirect(where, env, Sub.FILTER)
    for join in _dml_joins(statement):
        if join.args.get("on") is not None:
            resolver._indirect(join.args["on"], env, Sub.JOIN)
    return pairs


def _dml_joins(statement: exp.Expr) -> list[exp.Join]:
    joins = list(statement.args.get("joins") or [])
    from_ = statement.args.get("from_")
    if isinstance(from_, exp.From):
        joins.extend(from_.this.args.get("joins") or [])
    if isinstance(statement.this, exp.Expr):
        joins.extend(statement.this.args.get("joins") or [])
    return joins


def _merge_pairs(
    statement: exp.Merge, resolver: _Resolver, target: str | None = None
) -> list[tuple[str, frozenset[Dep]]]:
    """Target columns of a MERGE and what feeds them, branch by branch.

    ``UPDATE SET *`` / ``INSERT *`` (Databricks) set every target column from the source
    column of the same name: the target's columns come from the catalog (else the source's).
    ``INSERT VALUES (…)`` without a column list fills the target's columns in order when the
    catalog knows them, else the columns named like the values (``s.id`` → ``id``). The
    values of ``WHEN NOT MATCHED THEN INSERT`` are read from the USING source only (there is
    no target row), so an unqualified ``"A"`` is the source's column (dbt snapshots).
    BigQuery ``INSERT ROW`` inserts every source column, like ``INSERT *``.
    """
    sources = _dml_sources(statement, resolver, statement.this)
    env = [sources]
    on = statement.args.get("on")
    if on is not None:
        resolver._indirect(on, env, Sub.JOIN)
    known = resolver.catalog.columns(target) if target else None
    using = _merge_source(statement, sources)
    # WHEN NOT MATCHED … INSERT has no target row: its values read the source only, so an
    # unqualified name there is the source's column even when both sides might have it
    insert_env = [{k: s for k, s in sources.items() if s is using}] if using is not None else env
    pairs: list[tuple[str, frozenset[Dep]]] = []
    whens = statement.args.get("whens")
    for when in whens.expressions if whens is not None else []:
        cond = when.args.get("condition")
        if cond is not None:
            resolver._indirect(cond, env, Sub.FILTER)
        then = when.args.get("then")
        where = then.args.get("where") if isinstance(then, exp.Update | exp.Insert) else None
        if isinstance(where, exp.Where):  # Oracle UPDATE SET … WHERE c / INSERT … WHERE c
            resolver._indirect(where.this, env, Sub.FILTER)
        if isinstance(then, exp.Update):
            if any(isinstance(e, exp.Star) for e in then.expressions):
                pairs.extend(_star_pairs(using, known))
            for eq in then.expressions:
                if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column):
                    name = resolver.col_name(eq.this.this)
                    pairs.append(
                        (name, frozenset(resolver.expr_deps(eq.expression, env, Sub.IDENTITY)))
                    )
        elif isinstance(then, exp.Insert):
            if isinstance(then.this, exp.Star) or (
                isinstance(then.this, exp.Var) and then.this.name.upper() == "ROW"
            ):  # INSERT * (Databricks) / INSERT ROW (BigQuery): every source column
                pairs.extend(_star_pairs(using, known))
                continue
            cols = then.this.expressions if isinstance(then.this, exp.Tuple) else []
            vals = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
            if (
                len(cols) == 1
                and isinstance(cols[0], exp.Anonymous)
                and (cols[0].name.upper() == "VALUES")
                and not vals
            ):
                # INSERT VALUES (…) without a column list (sqlglot reads the values as a call)
                vals = cols[0].expressions
                names = (
                    list(known)
                    if known and len(known) == len(vals)
                    else [resolver.output_name(v, i) for i, v in enumerate(vals)]
                )
                for name, val in zip(names, vals, strict=True):
                    if not name.startswith("_col_"):
                        pairs.append(
                            (name, frozenset(resolver.expr_deps(val, insert_env, Sub.IDENTITY)))
                        )
                continue
            for col, val in zip(cols, vals, strict=False):
                name = resolver.col_name(col.this if isinstance(col, exp.Column) else col)
                deps = resolver.expr_deps(val, insert_env, Sub.IDENTITY)
                pairs.append((name, frozenset(deps)))
    return pairs


def _merge_source(statement: exp.Merge, sources: dict[str, _Source]) -> _Source | None:
    """The relation a MERGE reads (its USING clause), as resolved in ``sources``."""
    using = statement.args.get("using")
    if not isinstance(using, exp.Expr):
        return None
    key = (
        using.alias.lower()
        if using.alias
        else (using.name.lower() if isinstance(using, exp.Table) else "")
    )
    return sources.get(key)


def _star_pairs(
    using: _Source | None, known: tuple[str, ...] | None
) -> list[tuple[str, frozenset[Dep]]]:
    """``SET *`` / ``INSERT *``: each target column from the source column of its name."""
    if using is None:
        return []
    names = known if known is not None else using.columns()
    pairs = []
    for name in names or ():
        if using.has(name) is False:
            continue
        deps = using.lookup(name)
        if deps:
            pairs.append((name, deps))
    return pairs
