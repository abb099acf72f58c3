"""Parser options: a frozen dataclass handed from settings to every executor."""

from __future__ import annotations

import hashlib
from dataclasses import astuple, dataclass

PARSER_REVISION = 6
"""Revision of the parser's rules. Bump it in the commit that changes any rule's output: results
stored under another revision are parsed again by an incremental run (see ``digest``)."""


@dataclass(frozen=True, slots=True)
class ParserOptions:
    """Knobs of the cascade parser.

    Attributes:
        default_dialect: sqlglot dialect used when a log row names none.
        default_catalog: catalog/database that qualifies names when the row gives none.
        default_schema: schema/db that qualifies names when the row gives none.
        column_lineage: compute column lineage (table lineage is always computed).
        timeout_seconds: time limit per statement and parser tier, in CPU time of the parsing
            process (see :mod:`~lineage_udfs.core.timeout`): the load of other processes does
            not change a statement's answer.
        max_sql_chars: statements longer than this are skipped with status ``skipped``.
        use_sqlfluff: try sqlfluff when sqlglot fails.
        sqlfluff_timeout_seconds: time limit of the sqlfluff tier (at most ``timeout_seconds``;
            CPU time too).
            sqlfluff (with its Rust parser, sqlfluffrs) costs ~0.02 s per 1,000 characters and
            seldom reads what sqlglot could not (mostly broken text that the log's engine
            rejected too), so it gets a small budget of its own; past it the sqlparse tier
            takes over and the statement keeps its sqlglot syntax error as the reason.
        sqlfluff_max_chars: longer statements skip the sqlfluff tier (sqlparse reads them).
            sqlfluff's own limit for large files, and a bound on the time limit's lateness:
            the Rust parser runs as one call that the limit cannot interrupt (~0.3 s at
            20,000 characters, over 1 s past 100,000).
        use_sqlparse: try sqlparse (table lineage only) when the others fail.
        fallback_dialect: second sqlglot dialect tried when the row's dialect fails to parse
            (None: no retry).
        destructive_statements_as_targets: DROP / TRUNCATE / DELETE name their table as a
            target (OpenLineage, DataHub). False gives sqllineage's "no lineage".
        ddl_as_target: ALTER TABLE … (ADD COLUMN, …) names its table as a target; so does
            ``REFRESH MATERIALIZED VIEW mv`` (mv's rows are rewritten; its inputs are named
            only by its definition, so it has no sources).
        rename_as_lineage: ALTER TABLE a RENAME TO b / RENAME TABLE gives source a, target b.
        update_target_as_source: UPDATE / MERGE also list their target as a source (DataHub).
        merge_unchanged_columns_as_identity: a MERGE with a ``WHEN MATCHED THEN UPDATE``
            clause lists each target column that such a clause leaves unchanged as its own
            source, ``t.c → t.c`` DIRECT/IDENTITY: the matched rows keep ``t.c``. These are the
            columns its ON condition names on the target side (the key: ``t.a ← t.a``) and
            those its ``INSERT (…)`` list names; with the target's schema in the catalog, every
            target column the clause does not set. The OpenLineage Spark listener reports
            MERGE this way (its rewrite reads the target's files); ``UPDATE SET *`` sets every
            column, and a MERGE that updates nothing gets no such edge.
        include_unused_cte_sources: tables read only by CTEs that nothing uses count as
            sources (sqllineage, DataHub). Default False (OpenLineage): lineage is data flow,
            and no row of an unused CTE reaches the output. Set True to also catch the
            statements that would break (not change) when such a table is dropped.
        file_datasets: report file locations (COPY/LOAD/UNLOAD paths and URIs, INSERT …
            DIRECTORY, ``INTO OUTFILE``, BigQuery ``FROM FILES`` / ``EXPORT DATA`` URIs,
            ``parquet.`path```, ``read_parquet('…')``, ClickHouse ``s3('…')`` / ``url('…')`` /
            ``file('…')``, DuckDB ``FROM 'x.csv'``) as
            external datasets, named by :func:`~lineage_udfs.core.tables.location_dataset`
            (credentials, query strings and ``key=value`` partition segments removed). False:
            never output them.
        collapse_persistent_intermediates: in scripts, also collapse persistent tables that
            are written and then read later by the same script (sqllineage). By default only
            temporary objects and tables created and dropped within the script are collapsed;
            a persistent table written then read is both a target and a source, with table
            and column edges on both sides (see :mod:`~lineage_udfs.core.script`).
        conditions_as_direct: report CASE/IF condition columns, window PARTITION BY /
            ORDER BY columns and selector arguments (ORDER BY inside an aggregate, the key of
            ``max_by``, the condition of ``sumIf``, the test of ``NVL2``) as DIRECT, as
            sqllineage, DataHub and openlineage-sql do. Default False: they are INDIRECT
            (CONDITIONAL / WINDOW / SORT), as the OpenLineage column-lineage spec defines them,
            except the conditions of a conditional whose results are all constants (a value
            mapping such as ``CASE WHEN age < 18 THEN 'minor' ELSE 'adult' END``), which the
            output is derived from: DIRECT either way.
        masking_functions: more function names (masking UDFs, e.g. ``mask_email``) whose
            output masks their input, besides the built-in list
            (:data:`~lineage_udfs.core.subtypes.MASKING_FUNCTIONS`: ``sha2``, ``md5``,
            ``hash``, ``mask`` …): a DIRECT use through one is subtype MASKED, where tag
            propagation stops. Matched case-insensitively on the function's name as sqlglot
            reads it (a UDF by its own name).
    """

    default_dialect: str = "spark"
    default_catalog: str | None = None
    default_schema: str | None = None
    column_lineage: bool = True
    timeout_seconds: float = 30.0
    max_sql_chars: int = 1_000_000
    use_sqlfluff: bool = True
    sqlfluff_timeout_seconds: float = 1.0
    sqlfluff_max_chars: int = 20_000
    use_sqlparse: bool = True
    fallback_dialect: str | None = None
    destructive_statements_as_targets: bool = True
    ddl_as_target: bool = True
    rename_as_lineage: bool = True
    update_target_as_source: bool = False
    merge_unchanged_columns_as_identity: bool = False
    include_unused_cte_sources: bool = False
    collapse_persistent_intermediates: bool = False
    conditions_as_direct: bool = False
    file_datasets: bool = True
    masking_functions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # lower-cased and sorted: the same names in another order or case are the same options
        names = tuple(sorted({str(n).strip().lower() for n in self.masking_functions} - {""}))
        object.__setattr__(self, "masking_functions", names)

    def digest(self) -> str:
        """Eight hex characters that change with any option value.

        Examples:
            >>> ParserOptions().digest() == ParserOptions().digest()
            True
            >>> ParserOptions().digest() != ParserOptions(conditions_as_direct=True).digest()
            True
        """
        return hashlib.sha256(repr(astuple(self)).encode()).hexdigest()[:8]


ENGINE_CONVENTIONS: dict[str, dict[str, bool]] = {
    "openlineage_spark": {
        "update_target_as_source": True,
        "merge_unchanged_columns_as_identity": True,
        "destructive_statements_as_targets": False,
    },
}
"""Option presets under which the parser's conventions are an engine's (``parser.conventions``).

``openlineage_spark``: the OpenLineage Spark listener lists a MERGE / UPDATE target among the
inputs and a MERGE target's unchanged columns (its ON key) as their own sources, and names no
dataset for DROP TABLE (docs/engine_diff.md). The defaults stay the OpenLineage column-lineage
specification's conventions."""
