"""How a Delta table of the job is declared: :class:`TableSpec` (schema, merge key, properties
and column comments together), the Spark types of the core's records, and what a column of a
given name means in every table (:data:`COLUMN_MEANINGS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from lineage_udfs.core.records import FieldSpec, Kind, fields_of

_SCALAR_TYPES: dict[Kind, DataType] = {
    Kind.STRING: StringType(),
    Kind.DOUBLE: DoubleType(),
    Kind.INT: IntegerType(),
    Kind.BOOLEAN: BooleanType(),
    Kind.TIMESTAMP: TimestampType(),
    Kind.STRINGS: ArrayType(StringType()),
}


def spark_type(spec: FieldSpec) -> DataType:
    """The Spark type of a record field (a list of records: an array of their structs)."""
    if spec.kind is Kind.RECORDS:
        assert spec.element is not None
        return ArrayType(record_schema(spec.element))
    return _SCALAR_TYPES[spec.kind]


def record_schema(record: type, *, exclude: Sequence[str] = ()) -> StructType:
    """The struct of a record of ``lineage_udfs.core.records`` (every field nullable)."""
    return StructType(
        [
            StructField(spec.name, spark_type(spec), True)
            for spec in fields_of(record)
            if spec.name not in exclude
        ]
    )


COLUMN_MEANINGS: dict[str, str] = {
    "fingerprint": "sha256 hex prefix of dialect, session db/schema and the masked normalized "
    "statement",
    "dialect": "sqlglot dialect name",
    "masked_sql": "the statement with every literal masked to ? and comments removed",
    "statement_type": "CTAS, INSERT, MERGE, UPDATE, CREATE_VIEW, SELECT_INTO, SCRIPT, ...",
    "parser": "cascade tier that produced the result: sqlglot / sqlfluff / sqlparse / none",
    "parser_version": "lineage-warehouse version + sqlglot version that parsed the statement",
    "status": "ok / partial / failed / timeout / skipped (runs: succeeded / failed)",
    "error_kind": "SYNTAX, UNSUPPORTED, TIMEOUT, TOO_LARGE, EMPTY, COLUMN_LINEAGE, INTERNAL",
    "error": "failure message (literals masked)",
    "parse_ms": "parse time in milliseconds",
    "sources": "tables read",
    "targets": "tables written",
    "intermediates": "temporary tables traced through inside a script",
    "table_edges": "table edges of the statement (source_table, target_table)",
    "column_edges": "column edges of the statement",
    "statements": "per-statement lineage of a script",
    "first_seen": "earliest log start_time of the rows behind this row",
    "last_seen": "latest log start_time of the rows behind this row",
    "occurrences": "number of distinct log query_ids behind this row",
    "query_id": "query id from the source system, or a sha256 of the log row",
    "default_database": "session database/catalog when the query ran",
    "default_schema": "session schema when the query ran",
    "user_name": "who ran the query",
    "start_time": "when the query started (UTC)",
    "end_time": "when the query ended (UTC)",
    "source_system": "OpenLineage namespace of the system that ran the query",
    "object_kind": "query (log row), view or procedure (definitions)",
    "object_name": "view or procedure name for definitions",
    "source_table": "upstream table (canonical lower-case qualified name)",
    "target_table": "downstream table (canonical lower-case qualified name)",
    "source_column": "upstream column",
    "target_column": "downstream column",
    "transformation_type": "DIRECT or INDIRECT (OpenLineage)",
    "transformation_subtype": "IDENTITY, TRANSFORMATION, AGGREGATION, FILTER, JOIN, ... "
    "(OpenLineage)",
    "edge_kind": "query / view / procedure",
    "quarantine_id": "sha256 of the stage and the identity of the quarantined row",
    "stage": "load or parse",
    "reason": "why the row was quarantined",
    "source_file": "source name and file the row came from",
    "masked_record": "the row's text with literals masked",
    "run_id": "extraction run id",
    "node": "table, view or external dataset (canonical name)",
    "kind": "table / view / external",
    "in_degree": "number of distinct upstream tables (self-loops excluded)",
    "out_degree": "number of distinct downstream tables (self-loops excluded)",
    "is_root": "no upstream table",
    "is_leaf": "no downstream table",
    "on_cycle": "the node lies on a directed cycle (its strongly connected component has 2+ "
    "nodes, or it has a self-loop)",
    "component_id": "connected component (its smallest node name)",
    "component_size": "number of nodes in the component",
    "root": "first node of the path (a root)",
    "leaf": "last node of the path (a leaf, or where a cycle or the depth limit stopped it)",
    "path": "node names from root to leaf",
    "depth": "number of edges on the path",
    "truncated": "lineage_paths: the path was cut at max_depth, or its root had more paths than "
    "the cap; closures: the ancestor had more descendants than graph.max_closure_per_node (only "
    "the nearest are stored)",
    "ancestor": "upstream table",
    "descendant": "downstream table",
    "min_distance": "fewest hops from ancestor to descendant (any edge)",
    "ancestor_table": "upstream column's table",
    "ancestor_column": "upstream column",
    "descendant_table": "downstream column's table",
    "descendant_column": "downstream column",
    "direct_min_distance": "fewest hops through DIRECT edges only (null: only via INDIRECT)",
    "signature": "sha256 of the component's sorted (source, target, edge_kind) edges",
    "edge_count": "distinct table edges in the component",
    "node_count": "nodes in the component",
    "emission_id": "OpenLineage emission id",
    "scope": "incremental (changes since the watermark) or full (every row)",
    "emit_mode": "openlineage.emit_mode of the emission: per_run / per_statement_day",
    "options_digest": "digest of the event-shaping openlineage options; a change forces a full "
    "emission",
    "queries_from_version": "queries version of the previous watermark (exclusive start of the "
    "range); null for a full emission",
    "queries_version": "queries version covered: every change up to it was emitted (null: "
    "rows without a parse were found, the next emission is full)",
    "parsed_statements_from_version": "parsed_statements version of the previous watermark; "
    "null for a full emission",
    "parsed_statements_version": "parsed_statements version covered",
    "changed_queries": "queries rows new or updated since the watermark",
    "reparsed_statements": "fingerprints whose parse changed since the watermark",
    "rows": "runs (log rows or statement-days) looked at",
    "skipped": "runs that produce no event",
    "emitted": "events the transport accepted",
    "spooled": "events spooled for a later replay",
    "overflowed": "events dropped because the spool was full",
    "failed": "events rejected by the transport (or undeliverable without a spool)",
    "replayed": "spooled events delivered before this emission",
}
"""What a column of a given name means, in whichever table it stands (a table may say otherwise
for its own column: ``TableSpec.column_comments``)."""


@dataclass(frozen=True)
class TableSpec:
    """One Delta table: its schema, natural (MERGE) key, table properties and comments.

    Attributes:
        name: the table's plain name (also its default path under ``sink.base_path``).
        comment: the table comment.
        schema: the declared columns, in order.
        keys: the natural key, unique per row (MERGE condition).
        properties: Delta table properties, set on creation and on existing tables.
        column_comments: a comment per column (its meaning from COLUMN_MEANINGS unless the
            table says otherwise).
    """

    name: str
    comment: str
    schema: StructType
    keys: tuple[str, ...]
    properties: Mapping[str, str] = field(default_factory=dict)
    column_comments: Mapping[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        """The column names, in declared order."""
        return list(self.schema.fieldNames())


def declare_table(
    name: str,
    comment: str,
    keys: tuple[str, ...],
    columns: Sequence[tuple[str, DataType]],
    *,
    properties: Mapping[str, str] | None = None,
    comments: Mapping[str, str] | None = None,
) -> TableSpec:
    schema = StructType([StructField(column, dtype, True) for column, dtype in columns])
    own = comments or {}
    return TableSpec(
        name=name,
        comment=comment,
        schema=schema,
        keys=keys,
        properties={**MAINTENANCE, **(properties or {})},
        column_comments={
            f.name: own.get(f.name) or COLUMN_MEANINGS.get(f.name, f.name.replace("_", " "))
            for f in schema
        },
    )


MAINTENANCE: Mapping[str, str] = {"delta.enableDeletionVectors": "true"}
"""Properties of every table, so that many small runs stay as fast as one: with deletion
vectors a MERGE that updates or deletes a few rows marks them in a small side file instead of
rewriting every data file they sit in, and a MERGE whose update conditions hold for no row (a
rerun with nothing new) commits nothing at all. Small files are compacted by
``LineageTables.compact`` (Delta's auto compaction compacts after nearly every small commit:
a second commit per table and run)."""
